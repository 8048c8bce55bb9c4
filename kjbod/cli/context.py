"""The application context every command receives: where the state is, how to print, and the one
way a command reaches the cluster state.

Library code takes an image or a controller; only this context (and the state package it calls)
opens a state directory, so every command that loads a large state shows the same progress line.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO, TypeVar

import typer

from kjbod.common.kafka_release import NEWEST, KafkaRelease
from kjbod.log.lock import DEFAULT_LOCK_TIMEOUT

if TYPE_CHECKING:
    from kjbod.controller import Controller, ControllerResult
    from kjbod.image import Image
    from kjbod.state import ClusterState, StateDirectory

T = TypeVar("T")


class OutputFormat(str, Enum):
    text = "text"
    json = "json"


@dataclass
class AppContext:
    state_dir: Path
    output: OutputFormat = OutputFormat.text
    lock_timeout: float = DEFAULT_LOCK_TIMEOUT
    debug: bool = False
    # The Kafka release kjbod speaks (--kafka-version): passed to every tool and controller call.
    kafka: KafkaRelease = NEWEST
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

    # The cluster state ---------------------------------------------------------------------------

    def read_image(self) -> Image:
        """The cluster state's image, with a status line while a large one loads."""
        from kjbod.cli.progress import loading
        from kjbod.state import read_image

        with loading(self) as progress:
            return read_image(self.state_dir, lock_timeout=self.lock_timeout, notify=self.notify, progress=progress)

    def state_bytes(self) -> int:
        """The size of the state's largest file (its newest snapshot or its log), 0 when there is
        none: enough to guess a cluster's size before loading it."""
        import os

        try:
            with os.scandir(self.state_dir) as entries:
                return max((entry.stat().st_size for entry in entries if entry.is_file()), default=0)
        except OSError:
            return 0

    def run(
        self, operation: Callable[[Controller], ControllerResult[T]], *, doing: str | None = None, **options: Any
    ) -> tuple[ControllerResult[T], Image]:
        """Open the state for writing, run one controller operation and commit its records
        (kjbod.state.run_operation), with a status line while a large state loads, while the
        operation runs (`doing` names what it does) and while its records are written."""
        from kjbod.cli.progress import loading
        from kjbod.state import run_operation

        with loading(self) as progress:

            def traced(controller: Controller) -> ControllerResult[T]:
                if doing is not None:
                    progress(doing)
                return operation(controller)

            return run_operation(
                self.state_dir, traced, lock_timeout=self.lock_timeout, notify=self.notify, progress=progress, release=self.kafka,
                **options,
            )

    @contextmanager
    def open_state(self, *, write: bool = False) -> Iterator[tuple[ClusterState, Callable[[str], None]]]:
        """The open state itself (for the record log's own commands), and the progress callback."""
        from kjbod.cli.progress import loading
        from kjbod.state import ClusterState

        with loading(self) as progress, ClusterState.open(
            self.state_dir, write=write, lock_timeout=self.lock_timeout, notify=self.notify, progress=progress
        ) as state:
            yield state, progress

    def state_directory(self, progress: Callable[[str], None] | None = None) -> StateDirectory:
        """The state directory for commands that create a state (format, import)."""
        from kjbod.common.callbacks import ignore
        from kjbod.state import StateDirectory

        return StateDirectory(self.state_dir, lock_timeout=self.lock_timeout, notify=self.notify, progress=progress or ignore)


def app_context(ctx: typer.Context) -> AppContext:
    obj = ctx.find_root().obj
    if not isinstance(obj, AppContext):  # only when a command is invoked without the root callback
        obj = AppContext(state_dir=Path("kjbod-state"))
        ctx.find_root().obj = obj
    return obj
