"""`kjbod` features (mirrors kafka-features)."""

from __future__ import annotations

import typer

app = typer.Typer(help="Finalized feature levels, as kafka-features (not available yet).", no_args_is_help=True)


def register(root: typer.Typer) -> None:
    root.add_typer(app, name="features")
