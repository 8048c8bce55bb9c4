"""Creating a state: whole or not at all; what an interrupted creation left never blocks the next
one and is never taken for an operator's data."""

from __future__ import annotations

import errno
import fcntl
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from kjbod.errors import UserError
from kjbod.log.acknowledged import ACKNOWLEDGED_FILE
from kjbod.log.name_index import NAME_INDEX
from kjbod.records import FeatureLevelRecord, KjbodClockRecord
from kjbod.state import StateDirectory
from kjbod.state.cluster_state import ClusterState, read_image
from kjbod.state.creation import MOVING_UP
from kjbod.state.marker import MARKER

RECORDS = [FeatureLevelRecord(name="metadata.version", feature_level=30), *(KjbodClockRecord(time_ms=t) for t in range(1, 200))]
HINT = "`kjbod import cluster` creates a new cluster state and never overwrites one"


def names(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir()) if directory.exists() else []


def created(path: Path) -> bool:
    image = read_image(path)
    return (image.time_ms, image.next_offset) == (199, 200)


def create(path: Path) -> None:
    StateDirectory(path).create(RECORDS)


def test_a_new_state_appears_whole_and_nothing_else_is_left(tmp_path: Path) -> None:
    create(tmp_path / "a" / "b" / "state")
    assert created(tmp_path / "a" / "b" / "state")
    assert names(tmp_path / "a" / "b") == ["state"]  # no build directory beside it
    assert names(tmp_path / "a" / "b" / "state") == [
        ".lock", "00000000000000000000.log", "00000000000000000200.snapshot", ACKNOWLEDGED_FILE, MARKER, NAME_INDEX,
    ]  # fmt: skip


def test_an_existing_empty_directory_is_filled_in_place(tmp_path: Path) -> None:
    """It may be a mount point or carry the operator's permissions: it is never replaced."""
    target = tmp_path / "state"
    target.mkdir(mode=0o750)
    target.chmod(0o750)
    inode = target.stat().st_ino
    create(target)
    assert created(target)
    assert (target.stat().st_ino, target.stat().st_mode & 0o777) == (inode, 0o750)
    assert not [name for name in names(target) if name.startswith(".kjbod-creating-")]


@pytest.mark.parametrize("content", [b"", b'{"format": 1, "crea', b'{"format": 1, "createdBy": "kjbod 0.1.0"}'])
def test_an_earlier_versions_lone_marker_temp_is_no_obstacle(tmp_path: Path, content: bytes) -> None:
    """Issue 20's repro: `mkdir s; printf '{"format": 1, "crea' > s/kjbod-state.json.tmp`."""
    for bootstrap in (False, True):
        target = tmp_path / f"s-{bootstrap}"
        target.mkdir()
        (target / "kjbod-state.json.tmp").write_bytes(content)
        (target / ".lock").write_text("4242\n")
        with pytest.raises(UserError, match="holds an interrupted creation of a cluster state, not a cluster state: run"):
            read_image(target)
        if bootstrap:
            assert StateDirectory(target).bootstrap(RECORDS)
        else:
            create(target)
        assert created(target)
        assert "kjbod-state.json.tmp" not in names(target)


def test_a_marker_temp_that_is_not_kjbods_is_kept(tmp_path: Path) -> None:
    target = tmp_path / "s"
    target.mkdir()
    (target / "kjbod-state.json.tmp").write_text("my notes")
    with pytest.raises(UserError, match=r"the directory is not empty \(it holds kjbod-state.json.tmp\)"):
        create(target)
    assert names(target) == ["kjbod-state.json.tmp"] and (target / "kjbod-state.json.tmp").read_text() == "my notes"


def test_an_earlier_versions_empty_state_is_no_obstacle(tmp_path: Path) -> None:
    """A kill after the marker: a valid state holding nothing (here with a torn first commit)."""
    target = tmp_path / "s"
    target.mkdir()
    (target / MARKER).write_text('{"format": 1, "createdBy": "kjbod 0.1.0"}')
    (target / "00000000000000000000.log").write_bytes(b"\0\0\0\x60\x12\x34")  # a torn first batch
    assert read_image(target).is_empty
    create(target)
    assert created(target)


def test_a_state_with_records_or_foreign_files_is_refused_and_kept(tmp_path: Path) -> None:
    state = tmp_path / "state"
    with ClusterState.open(state, write=True, create=True) as opened:
        opened.commit([KjbodClockRecord(time_ms=5)])
    with pytest.raises(UserError, match=f"^Cannot import into {state}: the directory already holds a cluster state. {HINT}"):
        create(state)
    assert read_image(state).time_ms == 5
    mixed = tmp_path / "mixed"
    mixed.mkdir()
    (mixed / "kjbod-state.json.tmp").write_text('{"format"')
    for name in ("a.txt", "b.txt", "c.txt", "d.txt"):
        (mixed / name).write_text(name)
    with pytest.raises(UserError, match=r"the directory is not empty \(it holds a.txt, b.txt, c.txt, \.\.\.\)"):
        create(mixed)
    assert names(mixed) == ["a.txt", "b.txt", "c.txt", "d.txt", "kjbod-state.json.tmp"]


def interrupted_move_up(target: Path) -> Path:
    """What a creator killed half-way through moving its files up into `target` leaves."""
    create(target)
    build = target / ".kjbod-creating-0123456789ab"
    moving = names(target)
    moving.remove(".lock")
    build.mkdir()
    (build / MOVING_UP).write_text("".join(f"{name}\n" for name in moving))
    shutil.move(target / MARKER, build / MARKER)  # the marker had not moved yet
    shutil.move(target / "00000000000000000200.snapshot", build / "00000000000000000200.snapshot")
    return build


def test_a_creation_killed_while_moving_up_is_cleared_by_the_next(tmp_path: Path) -> None:
    target = tmp_path / "s"
    target.mkdir()
    interrupted_move_up(target)
    with pytest.raises(UserError, match="holds an interrupted creation of a cluster state, not a cluster state"):
        read_image(target)
    create(target)
    assert created(target)
    assert names(target) == [".lock", "00000000000000000000.log", "00000000000000000200.snapshot", ACKNOWLEDGED_FILE, MARKER, NAME_INDEX]


def test_a_creator_killed_while_clearing_a_dead_ones_files_leaves_them_recognisable(tmp_path: Path) -> None:
    """The dead creator's list goes last, so a second death never orphans the files it names."""
    target = tmp_path / "s"
    target.mkdir()
    build = interrupted_move_up(target)
    shutil.move(build / "00000000000000000200.snapshot", target / "00000000000000000200.snapshot")
    pid = os.fork()
    if pid == 0:  # a second creator (whose snapshot has another name) killed half-way through clearing
        real_rmtree = shutil.rmtree

        def killed_at_the_dead_ones_directory(path: Path, *args: object, **kwargs: object) -> None:
            if Path(path) == build:
                os._exit(0)
            real_rmtree(path, *args, **kwargs)  # type: ignore[arg-type]

        shutil.rmtree = killed_at_the_dead_ones_directory  # type: ignore[assignment]
        try:
            StateDirectory(target).create(RECORDS[:100])
        finally:
            os._exit(1)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0  # it died where the test meant it to
    assert "00000000000000000200.snapshot" not in names(target)
    create(target)
    assert created(target)


def test_files_an_interrupted_creation_did_not_list_are_kept(tmp_path: Path) -> None:
    target = tmp_path / "s"
    target.mkdir()
    interrupted_move_up(target)
    (target / "00000000000000000500.log").write_bytes(b"someone else's")
    with pytest.raises(UserError, match=r"the directory is not empty \(it holds 00000000000000000500.log\)"):
        create(target)
    assert (target / "00000000000000000500.log").read_bytes() == b"someone else's"


def test_a_killed_creators_build_directory_beside_the_target_is_removed(tmp_path: Path) -> None:
    stale = tmp_path / ".state.kjbod-creating-0123456789ab"
    stale.mkdir()
    (stale / MARKER).write_text('{"format": 1}')
    (stale / "00000000000000000000.log").write_bytes(b"x" * 100)
    unrelated = tmp_path / ".other.kjbod-creating-0123456789ab"
    unrelated.mkdir()
    create(tmp_path / "state")
    assert names(tmp_path) == [".other.kjbod-creating-0123456789ab", "state"]


@pytest.fixture
def live_creator(tmp_path: Path) -> Iterator[Path]:
    """A build directory another creator is using right now (it holds the flock)."""
    target = tmp_path / "s"
    target.mkdir()
    build = target / ".kjbod-creating-0123456789ab"
    build.mkdir()
    fd = os.open(build, os.O_RDONLY | os.O_DIRECTORY)
    fcntl.flock(fd, fcntl.LOCK_EX)
    yield target
    os.close(fd)


def test_a_creation_under_way_is_not_disturbed(live_creator: Path) -> None:
    with pytest.raises(UserError, match="another kjbod process is creating a cluster state there"):
        create(live_creator)
    assert names(live_creator) == [".kjbod-creating-0123456789ab"]


def test_a_finished_creation_whose_build_directory_remains_is_a_state(tmp_path: Path) -> None:
    """Killed after the marker moved up, before the build directory was removed."""
    target = tmp_path / "s"
    create(target)
    (target / ".kjbod-creating-0123456789ab").mkdir()
    assert created(target)
    with ClusterState.open(target, write=True):  # a writer tidies it away
        pass
    assert ".kjbod-creating-0123456789ab" not in names(target)
    (target / ".kjbod-creating-0123456789ab").mkdir()
    with pytest.raises(UserError, match="already holds a cluster state"):
        create(target)  # so does a creation that finds the state there
    assert ".kjbod-creating-0123456789ab" not in names(target)


class FullDisk:
    """A disk with `free` bytes left: os.write and os.pwrite fail with ENOSPC once they would
    go past it (a part that fits is written, as a real disk does)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, free: int) -> None:
        self.free = free
        self.real_write, self.real_pwrite = os.write, os.pwrite
        monkeypatch.setattr(os, "write", self.write)
        monkeypatch.setattr(os, "pwrite", self.pwrite)

    def _take(self, size: int) -> int:
        if self.free <= 0 and size:
            raise OSError(errno.ENOSPC, "No space left on device")
        taken = min(size, self.free)
        self.free -= taken
        return taken

    def write(self, fd: int, data: bytes) -> int:
        return self.real_write(fd, memoryview(data)[: self._take(len(data))])

    def pwrite(self, fd: int, data: bytes, offset: int) -> int:
        return self.real_pwrite(fd, memoryview(data)[: self._take(len(data))], offset)


def bytes_a_creation_writes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *, existing: bool) -> int:
    target = tmp_path / "measure"
    if existing:
        target.mkdir()
    with monkeypatch.context() as patch:
        disk = FullDisk(patch, 1 << 30)
        create(target)
    return (1 << 30) - disk.free


@pytest.mark.parametrize("existing", [False, True])
def test_a_full_disk_at_any_point_gives_the_whole_state_or_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, existing: bool
) -> None:
    needed = bytes_a_creation_writes(tmp_path, monkeypatch, existing=existing)
    outcomes = {"created": 0, "nothing": 0}
    for free in sorted({*range(0, needed + 1, max(needed // 40, 1)), needed - 1, needed, 2 * needed}):
        target = tmp_path / f"free-{free}" / "state"
        if existing:
            target.mkdir(parents=True)
        with monkeypatch.context() as patch:
            FullDisk(patch, free)
            try:
                create(target)
            except UserError as exc:
                message = str(exc)
            else:
                message = None
        if message is None:
            assert created(target)
            outcomes["created"] += 1
            continue
        assert message.startswith(f"Cannot import into {target}: No space left on device (")
        assert message.endswith("); nothing was left behind"), message
        assert any(f"({doing}" in message for doing in ("writing kjbod-state.json", "appending a commit to 00000000000000000000.log",
                                                       "recording the commit in acknowledged-end.checkpoint", "writing the snapshot 00000000000000000200.snapshot")), message
        assert names(target.parent) == (["state"] if existing else []), message
        assert names(target) == [], message  # nothing, not even the lock file
        outcomes["nothing"] += 1
    assert outcomes["created"] >= 2 and outcomes["nothing"] >= 30


def test_ctrl_c_during_a_creation_leaves_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def interrupted(self: ClusterState) -> Path:
        raise KeyboardInterrupt

    monkeypatch.setattr(ClusterState, "write_snapshot", interrupted)
    for target in (tmp_path / "new", tmp_path / "empty"):
        if target.name == "empty":
            target.mkdir()
        with pytest.raises(KeyboardInterrupt):
            create(target)
    assert names(tmp_path) == ["empty"] and names(tmp_path / "empty") == []


def test_a_read_only_parent_is_reported_with_nothing_left(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real_mkdir = Path.mkdir

    def read_only(self: Path, *args: object, **kwargs: object) -> None:
        if ".kjbod-creating-" in self.name:
            raise OSError(errno.EROFS, "Read-only file system", str(self))
        real_mkdir(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(Path, "mkdir", read_only)
    with pytest.raises(UserError) as raised:
        create(tmp_path / "a" / "state")
    assert str(raised.value) == (
        f"Cannot import into {tmp_path / 'a' / 'state'}: Read-only file system (preparing the new state's directory); "
        "nothing was left behind"
    )
    assert names(tmp_path) == []  # the parent made for it is gone too
