"""The application context every command receives: where the state is, how to print."""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import TextIO

import typer


class OutputFormat(str, Enum):
    text = "text"
    json = "json"


@dataclass
class AppContext:
    state_dir: Path
    output: OutputFormat = OutputFormat.text
    lock_timeout: float = 30.0
    debug: bool = False
    stdout: TextIO = field(default_factory=lambda: sys.stdout)
    stderr: TextIO = field(default_factory=lambda: sys.stderr)
    # Set once a JSON document went to stdout, so an error after it adds no second one.
    emitted: bool = False

    @property
    def json(self) -> bool:
        return self.output is OutputFormat.json

    def message(self, text: str) -> None:
        """A line for the operator on stderr (never mixed into stdout's data)."""
        self.stderr.write(text + "\n")
        self.stderr.flush()

    # The library reports recoveries and skipped snapshots through this callback.
    notify = message

    @property
    def interactive(self) -> bool:
        """True when stderr is a terminal and stdout carries text: progress may be shown."""
        return not self.json and self.stderr.isatty()


def app_context(ctx: typer.Context) -> AppContext:
    obj = ctx.find_root().obj
    if not isinstance(obj, AppContext):  # only when a command is invoked without the root callback
        obj = AppContext(state_dir=Path("kjbod-state"))
        ctx.find_root().obj = obj
    return obj
