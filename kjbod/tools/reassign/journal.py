"""The journal of `kjbod reassign run`: which waves of a plan Kafka has carried out, kept beside the
plan (`plan.json` -> `plan.journal.json`) and rewritten atomically at every step, so that a run
that was interrupted (Ctrl-C, a lost ssh session, a crash) resumes in the wave it was in and never
executes a completed wave again.

A wave goes pending -> executing (`--execute` is about to run or running: its pid and output file
are recorded) -> executed (Kafka started it; the rollback file is written) -> completed (`--verify`
found every partition and replica where the wave says, and cleared the throttles). The journal
names each wave file with its SHA-256: a plan rewritten since (`reassign plan --overwrite`) is
not taken for the one the journal speaks of.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, fields
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import orjson

from kjbod.common.durable import atomic_write
from kjbod.common.json_text import camel_json, camel_name
from kjbod.errors import UserError

JOURNAL_VERSION = 1
PENDING, EXECUTING, EXECUTED, COMPLETED = "pending", "executing", "executed", "completed"


def journal_path(plan: Path) -> Path:
    return plan.with_name(f"{plan.name.removesuffix('.json')}.journal.json")


def now() -> str:
    """The wall clock, as the journal records it (ISO 8601, UTC, milliseconds)."""
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds")


def seconds_between(start: str | None, end: str | None) -> float | None:
    if start is None or end is None:
        return None
    return (datetime.fromisoformat(end) - datetime.fromisoformat(start)).total_seconds()


def file_digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@dataclass
class WaveRecord:
    """One wave's progress. Times are the wall clock: `started` when the wave's first `--execute`
    began (Kafka sets the throttles then), `executed` when Kafka had started it, `completed` when
    `--verify` found it done and cleared the throttles."""

    file: str
    sha256: str
    state: str = PENDING
    executions: int = 0
    execute_pid: int | None = None
    started: str | None = None
    executed: str | None = None
    completed: str | None = None
    bytes_moved: int | None = None
    error: str | None = None

    def to_json(self) -> dict[str, Any]:
        return camel_json(self)

    @classmethod
    def of_json(cls, data: dict[str, Any]) -> WaveRecord:
        names = {camel_name(f.name): f.name for f in fields(cls)}
        return cls(**{names[key]: value for key, value in data.items() if key in names})


@dataclass
class Journal:
    path: Path
    plan: str
    waves: list[WaveRecord] = field(default_factory=list)

    def save(self) -> None:
        document = {"version": JOURNAL_VERSION, "plan": self.plan, "waves": [wave.to_json() for wave in self.waves]}
        try:
            atomic_write(self.path, orjson.dumps(document, option=orjson.OPT_INDENT_2) + b"\n", temp_suffix=".kjbod-tmp")
        except OSError as exc:
            raise UserError(f"Cannot write the journal {self.path}: {exc.strerror or exc}; the run stops here (Kafka carries on with what it started)") from None

    def update(self, index: int, **changes: Any) -> WaveRecord:
        for name, value in changes.items():
            setattr(self.waves[index], name, value)
        self.save()
        return self.waves[index]

    @classmethod
    def open(cls, plan: Path, wave_files: Sequence[Path]) -> Journal:
        """The plan's journal, or a new one (not written until the first wave starts). A journal
        of another plan, or of waves that have changed since, is refused: its record would be
        wrong for these files."""
        path = journal_path(plan)
        digests = [file_digest(wave) for wave in wave_files]
        if not path.exists():
            return cls(path, plan.name, [WaveRecord(wave.name, digest) for wave, digest in zip(wave_files, digests)])
        try:
            data = orjson.loads(path.read_bytes())
            if data.get("version") != JOURNAL_VERSION:
                raise ValueError(f"version {data.get('version')}")
            waves = [WaveRecord.of_json(item) for item in data["waves"]]
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise UserError(f"Cannot read the journal {path} ({exc}): move it away to run {plan.name} from its first wave") from None
        done = [wave.file for wave in waves if wave.state != PENDING]
        recorded = [(wave.file, wave.sha256) for wave in waves]
        current = [(wave.name, digest) for wave, digest in zip(wave_files, digests)]
        if recorded != current:
            changed = next((name for (name, digest), (_, old) in zip(current, [(w.file, w.sha256) for w in waves]) if digest != old), None)
            what = f"{changed} has changed" if changed else f"the plan now has {len(current)} wave(s), the journal {len(recorded)}"
            started = f"; it records waves {', '.join(done)} as started" if done else ""
            raise UserError(
                f"{path} records a run of another version of {plan.name} ({what}{started}): "
                f"restore the plan that ran, or move the journal away to run this plan from its first wave"
            )
        return cls(path, plan.name, waves)


@contextmanager
def plan_lock(plan: Path) -> Iterator[None]:
    """One run of a plan at a time: an exclusive lock on the plan file for the run's duration."""
    try:
        fd = os.open(plan, os.O_RDONLY)
    except OSError as exc:
        raise UserError(f"Cannot open {plan}: {exc.strerror or exc}") from None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise UserError(f"Another kjbod reassign run is carrying out {plan} (it holds the plan's lock): let it finish, or stop it first") from None
        yield
    finally:
        os.close(fd)
