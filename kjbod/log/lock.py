"""The state directory's lock: one writer at a time, readers shared.

A writer holds an exclusive `flock` on `<state>/.lock` for its whole command and writes its pid
into the file so that a process that times out can name the holder. Readers hold a shared lock,
so they never see a batch that is still being written. A directory nobody may write to (a
read-only mount, an artifact) needs no lock to be read.
"""

from __future__ import annotations

import errno
import fcntl
import os
import time
from pathlib import Path
from types import TracebackType

from kjbod.errors import StateLockedError, UserError, WriteFailed

LOCK_FILE = ".lock"
# How long a command waits for another process's lock before giving up (exit 3).
DEFAULT_LOCK_TIMEOUT = 30.0
_POLL_SECONDS = 0.02
# Why a lock file cannot be created in a directory nobody may write to.
_READ_ONLY = (errno.EACCES, errno.EPERM, errno.EROFS)


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
        deadline = time.monotonic() + self.timeout
        while True:
            fd = self._open()
            if fd is None:
                return  # a read-only directory: readers need no lock
            self._wait_for(fd, deadline)
            if self._still_in_place(fd):
                break
            # A failed creation removed the lock file while we waited: lock the one there now.
            os.close(fd)
        if self.exclusive:
            try:
                os.ftruncate(fd, 0)
                os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
            except OSError:
                pass  # the pid only helps name the holder; a full disk must not stop the command
        self._fd = fd

    def _open(self) -> int | None:
        flags = os.O_RDWR | os.O_CREAT if self.exclusive else os.O_RDONLY | os.O_CREAT
        try:
            return os.open(self.path, flags, 0o644)
        except OSError as exc:
            if not self.exclusive and exc.errno in _READ_ONLY:
                # A read-only state directory (an artifact copied into CI, a read-only mount)
                # without a lock file: nobody can write there, so readers need no lock.
                return None
            if exc.errno == errno.ENOENT:
                raise UserError(f"No cluster state at {self.path.parent}: the directory is gone") from None
            reason, doing = exc.strerror or str(exc), f"opening its lock file {self.path.name}"
            message = f"Cannot {'write to' if self.exclusive else 'read'} the cluster state {self.path.parent}: {reason} ({doing})"
            if self.exclusive:
                raise WriteFailed(f"{message}; nothing was written", reason=reason, doing=doing) from None
            raise UserError(message) from None

    def _wait_for(self, fd: int, deadline: float) -> None:
        operation = (fcntl.LOCK_EX if self.exclusive else fcntl.LOCK_SH) | fcntl.LOCK_NB
        while True:
            try:
                fcntl.flock(fd, operation)
                return
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    os.close(fd)
                    raise StateLockedError(
                        f"the cluster state {self.path.parent} is locked by {_holder(self.path, self.exclusive)}; "
                        f"waited {self.timeout:g} s (raise --lock-timeout to wait longer)"
                    ) from None
                time.sleep(_POLL_SECONDS)

    def _still_in_place(self, fd: int) -> bool:
        held = os.fstat(fd)
        try:
            current = os.stat(self.path)
        except FileNotFoundError:
            return False
        return (held.st_dev, held.st_ino) == (current.st_dev, current.st_ino)

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)  # closing the descriptor releases the flock
            self._fd = None

    def __enter__(self) -> StateLock:
        self.acquire()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.release()
