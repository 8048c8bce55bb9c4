"""`kjbod reassign plan`: the Spark placement planner (issue 8)."""

from __future__ import annotations

import typer


def add_commands(app: typer.Typer) -> None:
    """Adds `reassign plan` to the reassign group."""
