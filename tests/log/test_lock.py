"""The state directory's lock names its holder: the writer, or readers (kjbod/log/lock.py)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from kjbod.errors import StateLockedError
from kjbod.log.lock import StateLock


def locked_message(directory: Path, *, exclusive: bool) -> str:
    with pytest.raises(StateLockedError) as raised:
        StateLock(directory, exclusive=exclusive, timeout=0.05).acquire()
    return str(raised.value)


def test_a_writer_is_named_by_its_pid_to_writers_and_readers(tmp_path: Path) -> None:
    with StateLock(tmp_path, exclusive=True, timeout=0):
        expected = f"the cluster state {tmp_path} is locked by process {os.getpid()} (a writer); waited 0.05 s (raise --lock-timeout to wait longer)"
        assert locked_message(tmp_path, exclusive=True) == expected
        assert locked_message(tmp_path, exclusive=False) == expected


def test_readers_are_named_as_readers_not_as_the_last_writer(tmp_path: Path) -> None:
    # The last writer's pid stays in the file after it finished; this one is even alive (us).
    with StateLock(tmp_path, exclusive=True, timeout=0):
        pass
    assert (tmp_path / ".lock").read_text() == f"{os.getpid()}\n"
    with StateLock(tmp_path, exclusive=False, timeout=0), StateLock(tmp_path, exclusive=False, timeout=0):
        assert locked_message(tmp_path, exclusive=True) == (
            f"the cluster state {tmp_path} is locked by one or more readers (a shared lock: a command reading the state); "
            "waited 0.05 s (raise --lock-timeout to wait longer)"
        )
    # The probe took nothing away: with the readers gone, a writer gets the lock at once.
    with StateLock(tmp_path, exclusive=True, timeout=0):
        pass
