"""`kjbod` log-dirs (mirrors kafka-log-dirs)."""

from __future__ import annotations

import typer

app = typer.Typer(help="Log directories and their contents, as kafka-log-dirs (not available yet).", no_args_is_help=True)


def register(root: typer.Typer) -> None:
    root.add_typer(app, name="log-dirs")
