"""Durable file writes: a file is either entirely new or untouched, never half-written."""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path


def fsync_directory(directory: Path) -> None:
    """Make a rename or a new file in `directory` survive a crash."""
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_all(fd: int, data: bytes | memoryview) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


@contextmanager
def atomic_file(path: Path, *, temp_suffix: str = ".tmp") -> Iterator[int]:
    """A file descriptor to write `path`'s new content to: a temporary file beside it, which is
    fsynced, renamed over `path` and the directory fsynced when the block ends. On any error the
    temporary file is removed and `path` is left as it was."""
    temp = path.with_name(path.name + temp_suffix)
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        try:
            yield fd
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(temp, path)
    except BaseException:
        temp.unlink(missing_ok=True)
        raise
    fsync_directory(path.parent)


def atomic_write(path: Path, data: bytes, *, temp_suffix: str = ".tmp") -> None:
    """Write `data` to `path` durably, whole or not at all (see atomic_file)."""
    with atomic_file(path, temp_suffix=temp_suffix) as fd:
        write_all(fd, data)


def atomic_write_all(
    files: Mapping[Path, bytes | Iterable[bytes]], *, temp_suffix: str = ".tmp", remove: Iterable[Path] = ()
) -> None:
    """Write several files durably, all of them or none: each goes to a temporary file beside it
    first (fsynced); only then are they all renamed into place, the `remove` files deleted and
    each directory fsynced once. An error while writing removes the temporary files and leaves
    every file as it was. A file's content is bytes, or chunks of bytes written as they come
    (a large file streamed, never held whole)."""
    temps: list[Path] = []
    try:
        for path, data in files.items():
            temp = path.with_name(path.name + temp_suffix)
            temps.append(temp)
            fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
            try:
                for chunk in [data] if isinstance(data, (bytes, bytearray, memoryview)) else data:
                    write_all(fd, chunk)
                os.fsync(fd)
            finally:
                os.close(fd)
    except BaseException:
        for temp in temps:
            temp.unlink(missing_ok=True)
        raise
    for temp, path in zip(temps, files):
        os.replace(temp, path)
    for path in remove:
        path.unlink(missing_ok=True)
    for directory in dict.fromkeys(path.parent for path in files):
        fsync_directory(directory)
