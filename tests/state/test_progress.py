"""kjbod.state.cluster_state reports what a long load or write is doing through its optional `progress`
callback (the CLI turns it into a status line on a terminal)."""

from __future__ import annotations

from pathlib import Path

from kjbod.records import KjbodClockRecord
from kjbod.state.cluster_state import RECORDS_PER_BATCH, ClusterState, read_image, run_operation


def clock(ms: int) -> KjbodClockRecord:
    return KjbodClockRecord(time_ms=ms)


def test_loading_reports_the_snapshot_then_the_log(tmp_path: Path) -> None:
    with ClusterState.open(tmp_path, write=True, create=True) as state:
        state.commit([clock(ms) for ms in range(1, RECORDS_PER_BATCH + 2)])  # a commit of two batches
        state.write_snapshot()
        state.commit([clock(ms) for ms in range(RECORDS_PER_BATCH + 2, 2 * RECORDS_PER_BATCH + 3)])
    events: list[str] = []
    image = read_image(tmp_path, progress=events.append)
    assert image.time_ms == 2 * RECORDS_PER_BATCH + 2
    end = RECORDS_PER_BATCH + 1
    # The snapshot holds the image (one clock record), not the history it covers.
    assert events[:3] == [
        f"Reading the snapshot {end:020d}.snapshot",
        "Loading the snapshot: 1 records",
        "Building the image from the snapshot",
    ]
    # Only the commit after the snapshot is replayed: its two batches, the second ends the log.
    replay = events[3:-1]
    assert len(replay) == 2
    assert replay[0].startswith(f"Replaying the record log: offset {end:,} (") and not replay[0].endswith("(100%)")
    assert replay[1] == f"Replaying the record log: offset {end + RECORDS_PER_BATCH:,} (100%)"
    assert events[-1] == "Building the image"


def test_writing_reports_the_records_it_appends(tmp_path: Path) -> None:
    ClusterState.open(tmp_path, write=True, create=True).close()
    events: list[str] = []

    class SetClock:
        def __init__(self, controller: object) -> None:
            self.records = [clock(5), clock(6)]
            self.response = None

    run_operation(tmp_path, SetClock, progress=events.append)
    assert events == [f"Writing 2 records to {tmp_path}"]
    assert read_image(tmp_path).time_ms == 6
