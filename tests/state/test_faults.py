"""A state on a read-only mount, and a full disk under a commit or a snapshot: reads work, and
a failed write names the file, the operation and what was left behind."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from kjbod.errors import WriteFailed
from kjbod.records import KjbodClockRecord
from kjbod.state.cluster_state import ClusterState, read_image

from ..conftest import Cli


def ticks(path: Path, *times: int) -> None:
    with ClusterState.open(path, write=True, create=True) as state:
        for t in times:
            state.commit([KjbodClockRecord(time_ms=t)])


@pytest.mark.parametrize(("code", "reason"), [(errno.EROFS, "Read-only file system"), (errno.EACCES, "Permission denied")])
def test_a_read_only_state_without_a_lock_file_can_be_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, code: int, reason: str
) -> None:
    """A state copied onto a read-only mount (a CI artifact) has no .lock, and none can be made."""
    path = tmp_path / "s"
    ticks(path, 1, 2)
    (path / ".lock").unlink()
    real_open = os.open

    def read_only(file: str | os.PathLike[str], flags: int, mode: int = 0o777, **kwargs: object) -> int:
        if Path(file).name == ".lock" or flags & (os.O_WRONLY | os.O_RDWR):
            raise OSError(code, reason, str(file))
        return real_open(file, flags, mode, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "open", read_only)
    assert read_image(path).time_ms == 2
    with pytest.raises(WriteFailed) as raised:
        ClusterState.open(path, write=True)
    assert str(raised.value) == (
        f"Cannot write to the cluster state {path}: {reason} (opening its lock file .lock); nothing was written"
    )


class FullDisk:
    """os.write fails with ENOSPC once `free` bytes are written (a part that fits is written)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, free: int) -> None:
        self.free, self.real_write = free, os.write
        monkeypatch.setattr(os, "write", self.write)

    def write(self, fd: int, data: bytes) -> int:
        if self.free <= 0:
            raise OSError(errno.ENOSPC, "No space left on device")
        taken = min(len(data), self.free)
        self.free -= taken
        return self.real_write(fd, memoryview(data)[:taken])


def test_a_full_disk_under_a_commit_names_the_segment_and_writes_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "s"
    ticks(path, 1)
    segment = path / "00000000000000000000.log"
    size = segment.stat().st_size
    with ClusterState.open(path, write=True) as state:
        with monkeypatch.context() as patch:
            FullDisk(patch, 10)
            with pytest.raises(WriteFailed) as raised:
                state.commit([KjbodClockRecord(time_ms=2)])
    assert str(raised.value) == (
        f"Cannot write to the cluster state {path}: No space left on device "
        "(appending a commit to 00000000000000000000.log); nothing was written"
    )
    assert segment.stat().st_size == size and read_image(path).time_ms == 1


def test_a_full_disk_under_a_snapshot_names_it_and_leaves_nothing(cli: Cli, state_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for step in ("1s", "2s"):
        assert cli("clock", "advance", step).exit_code == 0
    before = sorted(p.name for p in state_dir.iterdir())
    FullDisk(monkeypatch, 40)
    result = cli("metadata", "snapshot")
    monkeypatch.undo()
    assert (result.exit_code, result.stdout) == (1, "")
    assert result.stderr == (
        f"Cannot write a snapshot of the cluster state {state_dir}: No space left on device "
        "(writing the snapshot 00000000000000000002.snapshot); no snapshot file was left and the state is unchanged\n"
    )
    assert sorted(p.name for p in state_dir.iterdir()) == before
    assert cli("metadata", "verify").stdout.endswith("The cluster state is intact.\n")
