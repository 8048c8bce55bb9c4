"""The state directory: creation, the write path's atomicity, and the writer lock."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from kjbod.errors import StateLockedError, UserError
from kjbod.records import KjbodClockRecord, PartitionChangeRecord
from kjbod.state.cluster_state import ClusterState, read_image


def test_opening_a_missing_state_names_the_way_to_create_one(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="No cluster state at .*kjbod format.*kjbod import cluster"):
        read_image(tmp_path / "nope")


def test_a_directory_without_the_marker_is_not_taken_for_a_state(tmp_path: Path) -> None:
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "x").write_text("x")
    with pytest.raises(UserError, match="is not a kjbod cluster state"):
        read_image(tmp_path / "data")
    with pytest.raises(UserError, match="the directory is not empty"):
        ClusterState.open(tmp_path / "data", write=True, create=True)


def test_a_batch_that_does_not_replay_writes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "s"
    with ClusterState.open(path, write=True, create=True) as state:
        state.commit([KjbodClockRecord(time_ms=5)])
        size = sorted(path.glob("*.log"))[0].stat().st_size
        bad = [KjbodClockRecord(time_ms=6), PartitionChangeRecord(topic_id="AAAAAAAAAAAAAAAAAAAAZA", partition_id=0, leader=1)]
        with pytest.raises(RuntimeError, match="does not apply at offset 2 .*nothing was written"):
            state.commit(bad)
        assert state.image.time_ms == 5
    assert sorted(path.glob("*.log"))[0].stat().st_size == size
    assert read_image(path).time_ms == 5


HOLD_LOCK = """
import sys, time
from kjbod.state.cluster_state import ClusterState
with ClusterState.open(sys.argv[1], write=True):
    print("locked", flush=True)
    time.sleep(30)
"""


def test_a_writer_waits_for_the_lock_then_names_the_holder(tmp_path: Path) -> None:
    path = tmp_path / "s"
    ClusterState.open(path, write=True, create=True).close()
    holder = subprocess.Popen([sys.executable, "-c", HOLD_LOCK, str(path)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "locked"
        started = time.monotonic()
        with pytest.raises(StateLockedError) as raised:
            ClusterState.open(path, write=True, lock_timeout=0.5)
        assert time.monotonic() - started >= 0.5
        assert str(raised.value) == (
            f"the cluster state {path} is locked by process {holder.pid} (a writer); waited 0.5 s (raise --lock-timeout to wait longer)"
        )
        assert raised.value.exit_code == 3
        with pytest.raises(StateLockedError):
            read_image(path, lock_timeout=0.2)  # readers wait for writers too
    finally:
        holder.kill()
        holder.wait()
    assert read_image(path, lock_timeout=1).offset == -1


def test_readers_share_the_lock(tmp_path: Path) -> None:
    path = tmp_path / "s"
    ClusterState.open(path, write=True, create=True).close()
    with ClusterState.open(path) as first, ClusterState.open(path, lock_timeout=0) as second:
        assert first.image == second.image
