"""`kjbod reassign check`: the CI gate for reassignment plans (issue 9)."""

from __future__ import annotations

import typer


def add_commands(app: typer.Typer) -> None:
    """Adds `reassign check` to the reassign group."""
