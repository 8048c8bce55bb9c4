"""A state directory as the CLI hands it to the tools: creating a cluster state (a controller's
bootstrap in `format`, a new state built from a real cluster's files in `import cluster`), and
the record log's own commands (`metadata dump`, `metadata verify`).

Tools that create a state are handed a `StateDirectory`; they never open a state directory
themselves.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from kjbod.common.callbacks import Progress, gc_paused, ignore
from kjbod.errors import UserError
from kjbod.log.lock import DEFAULT_LOCK_TIMEOUT
from kjbod.records import Record
from kjbod.records.codec import RecordRun
from kjbod.state.cluster_state import ClusterState, Notify
from kjbod.state.inspect import VerifyReport, iter_records, verify_state
from kjbod.state.marker import check_new_state_directory


@dataclass(frozen=True)
class CreatedState:
    path: Path
    records: int
    snapshot: Path


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
        """Refuse, before any work is done, a target that cannot take a new state."""
        check_new_state_directory(self.path)

    def create(self, entries: Sequence[Record | RecordRun]) -> CreatedState:
        """A new state holding `entries` as one commit, then a snapshot so that the next command
        opens it fast. A failure leaves the directory as it was found (missing or empty)."""
        existed = check_new_state_directory(self.path)
        state = ClusterState.open(self.path, write=True, create=True, lock_timeout=self.lock_timeout, notify=self.notify)
        try:
            if not state.image.is_empty:
                raise UserError(f"Cannot import into {self.path}: another process created a cluster state there")
            with gc_paused():
                commit = state.commit(entries)
                self.progress("Writing a snapshot")
                snapshot = state.write_snapshot()
        except BaseException:
            state.close()
            if state.image.is_empty:
                _remove_partial_state(self.path, existed)
            raise
        state.close()
        return CreatedState(self.path, commit.record_count if commit else 0, snapshot)

    def bootstrap(self, records: Sequence[Record]) -> bool:
        """A controller initialises the cluster state with its bootstrap records, once: True if
        it did, False if the state already held records."""
        with ClusterState.open(self.path, write=True, create=True, lock_timeout=self.lock_timeout, notify=self.notify) as state:
            if not state.image.is_empty:
                return False
            state.commit(records)
        return True


    def records(self, *, from_offset: int = 0) -> Iterator[tuple[int, Record]]:
        """Every committed record at or after `from_offset`, with its offset (`metadata dump`)."""
        return iter_records(self.path, from_offset=from_offset, lock_timeout=self.lock_timeout)

    def verify(self) -> VerifyReport:
        """Every checksum, every record replayed, every snapshot against the log (`metadata verify`)."""
        return verify_state(self.path, lock_timeout=self.lock_timeout)


def _remove_partial_state(path: Path, existed: bool) -> None:
    """A failed creation leaves the directory as it found it (missing or empty), so that the
    next attempt is not refused; it was checked to be empty before anything was written."""
    if not path.is_dir():
        return
    if existed:
        for child in path.iterdir():
            if child.is_dir() and not child.is_symlink():
                shutil.rmtree(child, ignore_errors=True)
            else:
                child.unlink(missing_ok=True)
    else:
        shutil.rmtree(path, ignore_errors=True)
