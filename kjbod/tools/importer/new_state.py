"""Where an import writes the cluster state it built: the one step both imports end with
(`import cluster` from exported files, kjbod.tools.importer.from_files, and from a controller's
snapshot, kjbod.tools.importer.from_snapshot).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

from kjbod.common.callbacks import Progress, ignore
from kjbod.image import Image
from kjbod.records import Record
from kjbod.records.codec import RecordRun


class NewState(Protocol):
    """Where the new state goes (kjbod.state.StateDirectory, handed over by the CLI)."""

    path: Path

    def check_new(self) -> None: ...

    def create(self, entries: Sequence[Record | RecordRun], *, image: Image | None = None) -> CreatedState: ...


class CreatedState(Protocol):
    records: int
    snapshot: Path


class Written(Protocol):
    """A summary that says where the new state went (both imports' summaries)."""

    state: str
    records: int
    snapshot: str | None


def write_new_state(
    target: NewState, entries: Sequence[Record | RecordRun], summary: Written, *, progress: Progress = ignore, image: Image | None = None
) -> None:
    """Create the state with one commit and a snapshot; the summary learns where and how much.
    `image`: the image the entries make, built from the same data (see ClusterState.commit)."""
    progress(f"Writing {sum(e.count if isinstance(e, RecordRun) else 1 for e in entries)} records to {target.path}")
    created = target.create(entries, image=image)
    summary.state = str(target.path)
    summary.records = created.records
    summary.snapshot = str(created.snapshot)
