"""Durable file writes: a file is either entirely new or untouched, never half-written."""

from __future__ import annotations

import os
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


def atomic_write(path: Path, data: bytes, *, temp_suffix: str = ".tmp") -> None:
    """Write `data` to a temporary file beside `path`, fsync it, rename it over `path`, fsync
    the directory. On any error the temporary file is removed and `path` is left as it was."""
    temp = path.with_name(path.name + temp_suffix)
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        try:
            write_all(fd, data)
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(temp, path)
    except BaseException:
        temp.unlink(missing_ok=True)
        raise
    fsync_directory(path.parent)
