"""`kjbod` elect (mirrors kafka-leader-election)."""

from __future__ import annotations

import typer

def register(root: typer.Typer) -> None:
    """Adds `elect`."""
