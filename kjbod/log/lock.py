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


def _holder(lock_path: Path) -> str:
    try:
        text = lock_path.read_text().strip()
    except OSError:
        return "another process"
    if text.isdigit():
        pid = int(text)
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return "another process (a reader)"
        except PermissionError:
            pass
        return f"process {pid}"
    return "another process"


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
                        f"the cluster state {self.path.parent} is locked by {_holder(self.path)}; "
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
