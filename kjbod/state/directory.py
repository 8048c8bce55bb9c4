"""A state directory as the CLI hands it to the tools: creating a cluster state (a controller's
bootstrap in `format`, a new state built from a real cluster's files in `import cluster`), and
the record log's own commands (`metadata dump`, `metadata verify`).

Tools that create a state are handed a `StateDirectory`; they never open a state directory
themselves.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from kjbod.common.callbacks import Progress, gc_paused, ignore
from kjbod.errors import UserError
from kjbod.image import Image
from kjbod.log.lock import DEFAULT_LOCK_TIMEOUT
from kjbod.records import Record
from kjbod.records.codec import RecordRun
from kjbod.state.cluster_state import ClusterState, Notify
from kjbod.state.creation import creating, inspect_target
from kjbod.state.inspect import VerifyReport, iter_records, verify_state
from kjbod.state.marker import is_state_directory

_NEW_STATE_HINT = (
    ". `kjbod import cluster` creates a new cluster state and never overwrites one; point --state at a new or empty directory"
)


@dataclass(frozen=True)
class CreatedState:
    path: Path
    records: int
    snapshot: Path | None


class StateDirectory:
    """Where a cluster state is, or is to be created, with how to open it."""

    def __init__(
        self, path: Path, *, lock_timeout: float = DEFAULT_LOCK_TIMEOUT, notify: Notify = ignore, progress: Progress = ignore
    ) -> None:
        self.path = path
        self.lock_timeout = lock_timeout
        self.notify = notify
        self.progress = progress

    def check_new(self) -> None:
        """Refuse, before any work is done, a target that cannot take a new state (what an
        interrupted creation left is no obstacle: see kjbod.state.creation)."""
        inspect_target(self.path, f"Cannot import into {self.path}", _NEW_STATE_HINT)

    def create(self, entries: Sequence[Record | RecordRun], *, image: Image | None = None) -> CreatedState:
        """A new state holding `entries` as one commit, then a snapshot so that the next command
        opens it fast; it appears whole or not at all (kjbod.state.creation). `image`: the image
        the entries make, when the caller built it from the same data (see ClusterState.commit)."""
        return self._create(entries, refusal=f"Cannot import into {self.path}", hint=_NEW_STATE_HINT, snapshot=True, image=image)

    def bootstrap(self, records: Sequence[Record]) -> bool:
        """A controller initialises the cluster state with its bootstrap records, once: True if
        it did, False if the state already held records."""
        for _ in range(2):
            if is_state_directory(self.path):
                with ClusterState.open(self.path, write=True, lock_timeout=self.lock_timeout, notify=self.notify) as state:
                    if not state.image.is_empty:
                        return False
                    state.commit(records)  # one commit into a state that holds nothing: atomic
                return True
            try:
                self._create(records, refusal=f"Cannot create a cluster state in {self.path}", snapshot=False)
                return True
            except UserError:
                if not is_state_directory(self.path):
                    raise
                # Another controller's format created it meanwhile: look again.
        return False

    def _create(
        self, entries: Sequence[Record | RecordRun], *, refusal: str, hint: str = "", snapshot: bool, image: Image | None = None
    ) -> CreatedState:
        with creating(self.path, refusal=refusal, hint=hint, lock_timeout=self.lock_timeout) as build:
            with ClusterState.open(build, write=True, lock_timeout=self.lock_timeout, notify=self.notify) as state:
                with gc_paused():
                    commit = state.commit(entries, image=image)
                    written = None
                    if snapshot:
                        self.progress("Writing a snapshot")
                        written = state.write_snapshot()
        return CreatedState(
            self.path, commit.record_count if commit else 0, self.path / written.name if written else None
        )

    def records(self, *, from_offset: int = 0) -> Iterator[tuple[int, Record]]:
        """Every committed record at or after `from_offset`, with its offset (`metadata dump`)."""
        return iter_records(self.path, from_offset=from_offset, lock_timeout=self.lock_timeout)

    def verify(self) -> VerifyReport:
        """Every checksum, every record replayed, every snapshot against the log (`metadata verify`)."""
        return verify_state(self.path, lock_timeout=self.lock_timeout)
