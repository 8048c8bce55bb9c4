"""The state directory's lock: one writer at a time, readers shared.

A writer holds an exclusive `flock` on `<state>/.lock` for its whole command and writes its pid
into the file so that a process that times out can name the holder. Readers hold a shared lock,
so they never see a batch that is still being written.
"""

from __future__ import annotations

import fcntl
import os
import time
from pathlib import Path
from types import TracebackType

from kjbod.errors import StateLockedError

LOCK_FILE = ".lock"
# How long a command waits for another process's lock before giving up (exit 3).
DEFAULT_LOCK_TIMEOUT = 30.0
_POLL_SECONDS = 0.02


def _readers_hold(lock_path: Path) -> bool:
    """True when the lock is held shared (readers), False when a writer holds it exclusively:
    a shared lock can be taken beside readers, never beside a writer."""
    try:
        fd = os.open(lock_path, os.O_RDONLY)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        return True  # closing the descriptor below gives the probe's shared lock back
    except BlockingIOError:
        return False
    finally:
        os.close(fd)


def _holder(lock_path: Path, exclusive: bool) -> str:
    """Who holds the lock: the writer (its pid is in the lock file), or readers. The file keeps
    the pid of the last writer after it is gone, so it names the holder only when a writer
    holds the lock now; a reader, which only waits for writers, is always blocked by one."""
    if exclusive and _readers_hold(lock_path):
        return "one or more readers (a shared lock: a command reading the state)"
    try:
        text = lock_path.read_text().strip()
    except OSError:
        text = ""
    return f"process {text} (a writer)" if text.isdigit() else "another process (a writer)"


class StateLock:
    def __init__(self, directory: Path, *, exclusive: bool, timeout: float) -> None:
        self.path = directory / LOCK_FILE
        self.exclusive = exclusive
        self.timeout = timeout
        self._fd: int | None = None

    def acquire(self) -> None:
        flags = os.O_RDWR | os.O_CREAT if self.exclusive else os.O_RDONLY | os.O_CREAT
        try:
            fd = os.open(self.path, flags, 0o644)
        except PermissionError:
            if self.exclusive:
                raise
            # A read-only state directory (an artifact copied into CI): readers need no lock.
            return
        operation = (fcntl.LOCK_EX if self.exclusive else fcntl.LOCK_SH) | fcntl.LOCK_NB
        deadline = time.monotonic() + self.timeout
        while True:
            try:
                fcntl.flock(fd, operation)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    os.close(fd)
                    raise StateLockedError(
                        f"the cluster state {self.path.parent} is locked by {_holder(self.path, self.exclusive)}; "
                        f"waited {self.timeout:g} s (raise --lock-timeout to wait longer)"
                    ) from None
                time.sleep(_POLL_SECONDS)
        if self.exclusive:
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        self._fd = fd

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)  # closing the descriptor releases the flock
            self._fd = None

    def __enter__(self) -> StateLock:
        self.acquire()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.release()
