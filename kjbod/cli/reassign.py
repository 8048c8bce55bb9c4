"""`kjbod` reassign (mirrors kafka-reassign-partitions, plus plan and check)."""

from __future__ import annotations

import typer

app = typer.Typer(help="Partition reassignment, as kafka-reassign-partitions (not available yet).", no_args_is_help=True)


def register(root: typer.Typer) -> None:
    root.add_typer(app, name="reassign")
