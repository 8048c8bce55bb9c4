"""`kjbod reassign` (mirrors kafka-reassign-partitions, plus plan and check)."""

from __future__ import annotations

import typer

from kjbod.cli import reassign_check, reassign_plan

app = typer.Typer(help="Partition reassignment, as kafka-reassign-partitions (not available yet).", no_args_is_help=True)


def register(root: typer.Typer) -> None:
    # The planner and the CI gate live in their own modules and add their commands here.
    reassign_plan.add_commands(app)
    reassign_check.add_commands(app)
    root.add_typer(app, name="reassign")
