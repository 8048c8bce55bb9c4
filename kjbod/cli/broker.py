"""`kjbod` broker lifecycle."""

from __future__ import annotations

import typer

app = typer.Typer(help="Broker lifecycle in the cluster state (not available yet).", no_args_is_help=True)


def register(root: typer.Typer) -> None:
    root.add_typer(app, name="broker")
