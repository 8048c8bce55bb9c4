"""`kjbod` assign-dirs (AssignReplicasToDirs)."""

from __future__ import annotations

import typer

def register(root: typer.Typer) -> None:
    """Adds `assign-dirs`."""
