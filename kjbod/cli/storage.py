"""`kjbod` format and meta (mirror kafka-storage): issue 3."""

from __future__ import annotations

import typer

def register(root: typer.Typer) -> None:
    """Adds `format` and the `meta` group (filled in by the storage tools)."""
