"""Snapshots: loaded as newest valid snapshot plus the log after it; a damaged one is skipped."""

from __future__ import annotations

from pathlib import Path

from kjbod.log.framing import read_batch
from kjbod.records import KjbodClockRecord
from kjbod.state.cluster_state import ClusterState, read_image


def build(path: Path) -> list[Path]:
    snapshots = []
    with ClusterState.open(path, write=True, create=True) as state:
        for t in range(1, 7):
            state.commit([KjbodClockRecord(time_ms=t)])
            if t in (2, 4):
                snapshots.append(state.write_snapshot())
    return snapshots


def test_snapshot_plus_log_gives_the_same_state(tmp_path: Path) -> None:
    snapshots = build(tmp_path / "s")
    assert [p.name for p in snapshots] == ["00000000000000000002.snapshot", "00000000000000000004.snapshot"]
    image = read_image(tmp_path / "s")
    assert (image.offset, image.time_ms) == (5, 6)


def test_a_damaged_newest_snapshot_falls_back_to_an_older_one(tmp_path: Path) -> None:
    path = tmp_path / "s"
    snapshots = build(path)
    data = bytearray(snapshots[-1].read_bytes())
    damaged = len(data) // 2
    batch_start = 0
    while batch_start + read_batch(bytes(data), batch_start).size <= damaged:
        batch_start += read_batch(bytes(data), batch_start).size
    data[damaged] ^= 0xFF
    snapshots[-1].write_bytes(bytes(data))
    notices: list[str] = []
    image = read_image(path, notify=notices.append)
    assert image.time_ms == 6
    assert notices == [
        "Skipping 00000000000000000004.snapshot: snapshot 00000000000000000004.snapshot is damaged: "
        f"a checksum mismatch at byte {batch_start}; using an older snapshot or the log."
    ]


def test_a_truncated_snapshot_is_skipped(tmp_path: Path) -> None:
    path = tmp_path / "s"
    snapshots = build(path)
    for snapshot in snapshots:
        snapshot.write_bytes(snapshot.read_bytes()[:-10])
    notices: list[str] = []
    assert read_image(path, notify=notices.append).time_ms == 6
    assert len(notices) == 2 and all("is damaged" in n for n in notices)


def test_a_snapshot_beyond_the_log_is_corruption(tmp_path: Path) -> None:
    path = tmp_path / "s"
    build(path)
    (path / "00000000000000000004.snapshot").rename(path / "00000000000000000009.snapshot")
    notices: list[str] = []
    assert read_image(path, notify=notices.append).time_ms == 6  # its header disagrees with its name
    assert "its header says end offset 4, its name 9" in notices[0]
