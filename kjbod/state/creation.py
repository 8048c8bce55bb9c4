"""Creating a cluster-state directory: whole, or not at all.

A new state is built in a directory of its own, `.kjbod-creating-*`, which holds the marker from
the start, so that the state is written by the ordinary write path (records, snapshot). Only
when every file is written and fsynced is it put in place:

- when the target does not exist, the build directory is a hidden sibling of it and one rename
  makes it the target: a crash leaves either the whole state or no target at all;
- when the target is an existing directory (it may be a mount point, or carry permissions the
  operator chose, so it is never replaced), the build directory is inside it and its files are
  moved up one rename each, the marker last: until the marker arrives the target is not a state,
  and the build directory still in it lists the files it was moving (`.moving-up`), which says
  whose files those are.

The creator holds an flock on its build directory for as long as it runs, so a build directory
nobody holds was left by a creator that died, and the next creation removes it. What an
interrupted creation leaves never blocks the next one and is never taken for an operator's data:
an existing directory is accepted only when everything in it is kjbod's (`.lock`; an earlier
version's `kjbod-state.json.tmp`; build directories nobody holds, with the files they list as
moving up; a state that holds no record and no snapshot), and only those are removed.
"""

from __future__ import annotations

import errno
import fcntl
import os
import secrets
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from kjbod.common.durable import fsync_directory
from kjbod.errors import KjbodError, UserError, WriteFailed
from kjbod.log.acknowledged import ACKNOWLEDGED_FILE
from kjbod.log.lock import LOCK_FILE, StateLock
from kjbod.log.name_index import NAME_INDEX
from kjbod.log.record_log import RecordLog, is_segment_name
from kjbod.state.snapshots.records import list_snapshots
from kjbod.state.marker import BUILD_PREFIX, MARKER, read_marker_version, write_marker

# In a build directory inside the target: the names of the files it moves up, one a line.
MOVING_UP = ".moving-up"
# What kjbod versions before this one left when killed while writing the marker.
_OLD_MARKER_TEMP = MARKER + ".tmp"


@dataclass
class Target:
    """What is at the target path before a creation, and which of it kjbod left there."""

    path: Path
    exists: bool
    leftovers: list[Path] = field(default_factory=list)  # removed before the new state moves in


def inspect_target(path: Path, refusal: str, hint: str = "") -> Target:
    """Accept a missing directory, an empty one, or one holding only what an interrupted
    creation left; refuse anything else with `refusal` (the message's start, e.g. "Cannot
    import into X"), what is in the way, and `hint`."""
    if not path.exists():
        if path.is_symlink():
            raise UserError(f"{refusal}: it is a symbolic link to a missing directory")
        return Target(path, exists=False)
    if not path.is_dir():
        raise UserError(f"{refusal}: it is not a directory")
    try:
        entries = sorted(path.iterdir())
    except OSError as exc:
        raise UserError(f"{refusal}: {exc.strerror or exc} (reading the directory)") from None
    names = {entry.name for entry in entries}
    builds = [entry for entry in entries if entry.name.startswith(BUILD_PREFIX) and entry.is_dir()]
    if any(_held_by_a_live_creator(build) for build in builds):
        raise UserError(f"{refusal}: another kjbod process is creating a cluster state there")
    if MARKER in names:
        # The marker moves in last, so this is a finished state (or an earlier version's
        # interrupted one): only a state that holds nothing may be replaced.
        if not _holds_no_record(path):
            # A creator killed between moving its marker up and removing its build directory
            # left that directory (empty but for its lock) in a finished state: tidy it away.
            remove_stale_builds(path)
            raise UserError(f"{refusal}: the directory already holds a cluster state{hint}")
        ours = {name for name in names if _is_empty_state_file_name(name)}
    else:
        # Files a dead creator moved up before its marker: its build directory lists them.
        ours = set().union(*(_moving_up(build) for build in builds)) | {_OLD_MARKER_TEMP}
    leftovers: list[Path] = []
    foreign: list[Path] = []
    for entry in entries:
        if entry.name == LOCK_FILE:
            continue  # the lock stays: the creation takes it
        if entry in builds or (entry.name in ours and entry.is_file() and _written_by_kjbod(entry)):
            leftovers.append(entry)
        else:
            foreign.append(entry)
    if foreign:
        shown = ", ".join(entry.name for entry in foreign[:3]) + (", ..." if len(foreign) > 3 else "")
        raise UserError(f"{refusal}: the directory is not empty (it holds {shown}){hint}")
    return Target(path, exists=True, leftovers=leftovers)


def _is_empty_state_file_name(name: str) -> bool:
    """A file that a state holding no record can have (a snapshot means records)."""
    return is_segment_name(name) or name.endswith(".snapshot.tmp") or name in (
        MARKER, ACKNOWLEDGED_FILE, ACKNOWLEDGED_FILE + ".tmp", NAME_INDEX, NAME_INDEX + ".tmp", _OLD_MARKER_TEMP
    )  # fmt: skip


def _moving_up(build: Path) -> set[str]:
    try:
        return set((build / MOVING_UP).read_text().split())
    except OSError:
        return set()  # its creator died before moving anything


def _written_by_kjbod(entry: Path) -> bool:
    """An earlier version's marker temp is kjbod's when it holds (the start of) a marker."""
    if entry.name != _OLD_MARKER_TEMP:
        return True
    try:
        start = entry.read_bytes()[:9]
    except OSError:
        return False
    return b'{"format"'.startswith(start) or start.startswith(b'{"format"')


def _holds_no_record(path: Path) -> bool:
    """A state with no record in its log and no snapshot: what an earlier kjbod left when it
    was killed after writing the marker. It holds nothing of the operator's."""
    try:
        read_marker_version(path)
        if list_snapshots(path):
            return False
        log = RecordLog(path)
        for _ in log.batches():
            return False
        return log.next_offset == 0
    except (KjbodError, OSError):
        return False  # unreadable or damaged: not kjbod's to judge, so not kjbod's to remove


def _held_by_a_live_creator(build: Path) -> bool:
    """True while the creator that made `build` runs (it holds an flock on the directory)."""
    try:
        fd = os.open(build, os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
    return False


def remove_stale_builds(directory: Path, prefix: str = BUILD_PREFIX) -> None:
    """Remove the build directories named `prefix*` in `directory` that no live creator holds.
    A writer calls this on its state: a creator that died after its marker moved up leaves its
    (by then empty) build directory behind."""
    try:
        entries = list(directory.iterdir())
    except OSError:
        return
    for entry in entries:
        if entry.name.startswith(prefix) and entry.is_dir() and not _held_by_a_live_creator(entry):
            shutil.rmtree(entry, ignore_errors=True)


@dataclass
class _Undo:
    """What a creation made, to remove again if it fails."""

    made_directories: list[Path] = field(default_factory=list)  # outermost first
    moved_up: list[Path] = field(default_factory=list)
    lock_file: Path | None = None

    def run(self, build: Path | None) -> list[Path]:
        """Remove it all; returns what could not be removed."""
        left: list[Path] = []
        for path in reversed(self.moved_up):
            try:
                path.unlink(missing_ok=True)
            except OSError:
                left.append(path)
        if build is not None and build.exists():
            shutil.rmtree(build, ignore_errors=True)
            if build.exists():
                left.append(build)
        if self.lock_file is not None:
            try:
                self.lock_file.unlink(missing_ok=True)
            except OSError:
                left.append(self.lock_file)
        for directory in reversed(self.made_directories):
            try:
                directory.rmdir()
            except FileNotFoundError:
                pass
            except OSError:
                left.append(directory)
        self.moved_up, self.lock_file, self.made_directories = [], None, []
        return left


def _make_directories(path: Path, undo: _Undo) -> None:
    """mkdir -p, remembering what it made."""
    missing = []
    for directory in (path, *path.parents):
        if directory.exists():
            break
        missing.append(directory)
    for directory in reversed(missing):
        directory.mkdir()
        undo.made_directories.append(directory)


@contextmanager
def creating(path: Path, *, refusal: str, hint: str = "", lock_timeout: float) -> Iterator[Path]:
    """A new state directory to fill (it holds the marker); when the block ends it is put at
    `path` in one step. On any failure everything made is removed, and the error says what
    failed, doing what, and what was left behind."""
    target = inspect_target(path, refusal, hint)
    undo = _Undo()
    lock: StateLock | None = None
    build: Path | None = None
    guard: int | None = None
    try:
        try:
            if target.exists:
                had_lock = (path / LOCK_FILE).exists()
                lock = StateLock(path, exclusive=True, timeout=lock_timeout)
                lock.acquire()
                if not had_lock:
                    undo.lock_file = path / LOCK_FILE
                target = inspect_target(path, refusal, hint)  # again, now that nobody else writes there
                parent, prefix = path, BUILD_PREFIX
            else:
                _make_directories(path.parent, undo)
                parent, prefix = path.parent, f".{path.name}{BUILD_PREFIX}"
                remove_stale_builds(parent, prefix)
            build = parent / f"{prefix}{secrets.token_hex(6)}"
            build.mkdir()
            guard = os.open(build, os.O_RDONLY | os.O_DIRECTORY)
            fcntl.flock(guard, fcntl.LOCK_EX)
        except OSError as exc:
            raise _failed(exc, "preparing {}", refusal, undo, build, path) from None
        except WriteFailed as exc:  # the target's lock file could not be made
            raise _failure(exc.reason, exc.doing, refusal, undo, build) from None
        try:
            write_marker(build)
        except OSError as exc:
            raise _failure(exc.strerror or str(exc), f"writing {MARKER}", refusal, undo, build) from None
        try:
            yield build
        except WriteFailed as exc:
            raise _failure(exc.reason, exc.doing, refusal, undo, build) from None
        try:
            fsync_directory(build)
            if target.exists:
                _install_inside(target, build, undo)
            else:
                _install_by_rename(path, build, refusal)
                build = None  # it is the state now
                fsync_directory(path.parent)
        except OSError as exc:
            raise _failed(exc, "moving {} into place", refusal, undo, build, path) from None
    except BaseException:
        # A KjbodError raised above has undone everything already; anything else (Ctrl-C, a
        # kjbod bug) must not leave a half-made state behind either.
        undo.run(build)
        raise
    finally:
        if guard is not None:
            os.close(guard)
        if lock is not None:
            lock.release()


def _install_by_rename(path: Path, build: Path, refusal: str) -> None:
    try:
        os.rename(build, path)
    except OSError as exc:
        if exc.errno in (errno.ENOTEMPTY, errno.EEXIST):
            raise UserError(f"{refusal}: another process created a cluster state there meanwhile") from None
        raise


def _install_inside(target: Target, build: Path, undo: _Undo) -> None:
    moving = _move_up_order(build)
    # Listed before the first move, so that a creator dying half-way leaves a build directory
    # that says which files in the target are its own.
    with (build / MOVING_UP).open("w") as listing:
        listing.write("".join(f"{source.name}\n" for source in moving))
        listing.flush()
        os.fsync(listing.fileno())
    fsync_directory(build)
    # Files first, build directories last: a dead creator's list of the files it moved up
    # must outlive them, in case this creator dies here too.
    for leftover in sorted(target.leftovers, key=lambda entry: entry.is_dir()):
        if leftover.is_dir():
            shutil.rmtree(leftover)
        else:
            leftover.unlink(missing_ok=True)
    for source in moving:
        destination = target.path / source.name
        os.rename(source, destination)
        undo.moved_up.append(destination)
    fsync_directory(target.path)
    undo.moved_up.clear()  # the marker is in place: the state exists
    shutil.rmtree(build, ignore_errors=True)


def _move_up_order(build: Path) -> list[Path]:
    """The build's files in the order they move into the target: the marker last, so that the
    target becomes a state only when everything else is there."""
    files = [entry for entry in build.iterdir() if entry.name not in (LOCK_FILE, MARKER, MOVING_UP)]
    return sorted(files) + [build / MARKER]


def _failed(exc: OSError, doing: str, refusal: str, undo: _Undo, build: Path | None, path: Path) -> UserError:
    """A failure of creation's own file operations, naming the file in the target's terms."""
    name = Path(exc.filename) if exc.filename else None
    if name is None or name in (build, path, path.parent):
        what = "the new state's directory"
    elif build is not None and name.parent == build:
        what = name.name.removesuffix(".tmp")
    else:
        what = str(name)
    return _failure(exc.strerror or str(exc), doing.format(what), refusal, undo, build)


def _failure(reason: str, doing: str, refusal: str, undo: _Undo, build: Path | None) -> UserError:
    left = undo.run(build)
    shown = "nothing was left behind" if not left else f"left behind (remove by hand): {', '.join(map(str, left))}"
    return UserError(f"{refusal}: {reason} ({doing}); {shown}")
