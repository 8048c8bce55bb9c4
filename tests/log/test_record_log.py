"""The record log: torn tails are recovered, any other damage is reported with its offset."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from kjbod.errors import CorruptStateError, UserError
from kjbod.log.acknowledged import ACKNOWLEDGED_FILE
from kjbod.log.framing import HEADER_SIZE
from kjbod.log.record_log import RecordLog
from kjbod.records import KjbodClockRecord
from kjbod.records.codec import encode_records
from kjbod.state.cluster_state import ClusterState, read_image


def ticks(start: int, count: int) -> list[KjbodClockRecord]:
    return [KjbodClockRecord(time_ms=t) for t in range(start, start + count)]


def new_state(path: Path, commits: list[int], *, last_acknowledged: bool = True) -> list[tuple[int, int]]:
    """Write commits of the given sizes; returns the byte span of each commit's batches.

    With `last_acknowledged` False the last commit is left as a kill between its fsync and its
    acknowledgement leaves it: in the log, beyond the acknowledged end."""
    spans = []
    acknowledged = path / ACKNOWLEDGED_FILE
    with ClusterState.open(path, write=True, create=True) as state:
        clock = 1
        for size in commits:
            before = _segment(path).stat().st_size if list(path.glob("*.log")) else 0
            previous = acknowledged.read_bytes() if acknowledged.exists() else None
            state.commit(ticks(clock, size))
            clock += size
            spans.append((before, _segment(path).stat().st_size))
    if not last_acknowledged:
        if previous is None:
            acknowledged.unlink()
        else:
            acknowledged.write_bytes(previous)
    return spans


def _segment(path: Path) -> Path:
    return sorted(path.glob("*.log"))[-1]


def notices_of(path: Path, *, write: bool) -> tuple[list[str], int]:
    notices: list[str] = []
    with ClusterState.open(path, write=write, notify=notices.append) as state:
        return notices, state.image.time_ms


def test_commits_read_back_in_order(tmp_path: Path) -> None:
    new_state(tmp_path / "s", [1, 3, 2])
    image = read_image(tmp_path / "s")
    assert (image.offset, image.time_ms) == (5, 6)


def test_a_truncated_unacknowledged_last_batch_is_ignored_by_readers_and_removed_by_writers(tmp_path: Path) -> None:
    path = tmp_path / "s"
    spans = new_state(path, [1, 1, 1], last_acknowledged=False)
    segment = _segment(path)
    with segment.open("r+b") as handle:
        handle.truncate(spans[-1][1] - 5)
    notices, time_ms = notices_of(path, write=False)
    assert time_ms == 2
    assert notices == [
        f"Ignoring an interrupted write left {spans[-1][1] - 5 - spans[-1][0]} byte(s) at the end of {segment.name} "
        f"(from byte {spans[-1][0]}: an incomplete batch ({spans[-1][1] - 5 - spans[-1][0]} of "
        f"{spans[-1][1] - spans[-1][0]} bytes)); the next write will remove it."
    ]
    assert segment.stat().st_size == spans[-1][1] - 5  # a reader changes nothing
    notices, time_ms = notices_of(path, write=True)
    assert time_ms == 2 and notices[0].startswith("Recovered the cluster state: removed an interrupted write")
    assert segment.stat().st_size == spans[-1][0]
    assert notices_of(path, write=True) == ([], 2)


def test_zero_fill_after_the_last_commit_is_a_torn_tail(tmp_path: Path) -> None:
    path = tmp_path / "s"
    spans = new_state(path, [2])
    with _segment(path).open("ab") as handle:
        handle.write(bytes(4096))
    notices, time_ms = notices_of(path, write=True)
    assert time_ms == 2 and "zero fill" in notices[0]
    assert _segment(path).stat().st_size == spans[-1][1]


def test_an_unfinished_multi_batch_commit_is_dropped_whole(tmp_path: Path) -> None:
    path = tmp_path / "s"
    spans = new_state(path, [3, 12_000], last_acknowledged=False)  # the second commit spans three batches
    segment = _segment(path)
    data = segment.read_bytes()
    # Cut inside the commit's last batch: its first two batches are complete but unfinished.
    with segment.open("r+b") as handle:
        handle.truncate(len(data) - 10)
    notices, time_ms = notices_of(path, write=True)
    assert time_ms == 3
    assert "an unfinished commit" in notices[0]
    assert segment.stat().st_size == spans[0][1]


def test_a_flipped_byte_in_the_middle_is_corruption_with_its_offset(tmp_path: Path) -> None:
    path = tmp_path / "s"
    spans = new_state(path, [1, 1, 1, 1])
    segment = _segment(path)
    data = bytearray(segment.read_bytes())
    data[spans[1][0] + HEADER_SIZE + 3] ^= 0xFF  # inside the second commit's payload
    segment.write_bytes(bytes(data))
    for write in (False, True):
        with pytest.raises(CorruptStateError) as raised:
            ClusterState.open(path, write=write)
        assert str(raised.value) == (
            f"the record log in {path} is damaged at offset 1 ({segment.name}, byte {spans[1][0]}): "
            "a checksum mismatch; kjbod does not skip damaged data, so restore the state directory from a backup"
        )
    assert segment.read_bytes() == bytes(data)  # nothing was truncated


def test_a_corrupt_complete_last_batch_is_not_silently_dropped(tmp_path: Path) -> None:
    path = tmp_path / "s"
    spans = new_state(path, [1, 1])
    segment = _segment(path)
    data = bytearray(segment.read_bytes())
    data[spans[1][0] + HEADER_SIZE + 2] ^= 0x01
    segment.write_bytes(bytes(data))
    with pytest.raises(CorruptStateError, match="damaged at offset 1 .*a checksum mismatch"):
        ClusterState.open(path, write=True)


def test_a_corrupt_length_that_hides_later_batches_is_corruption(tmp_path: Path) -> None:
    path = tmp_path / "s"
    spans = new_state(path, [1, 1, 1])
    segment = _segment(path)
    data = bytearray(segment.read_bytes())
    data[spans[1][0] : spans[1][0] + 4] = (10_000_000).to_bytes(4, "big")
    segment.write_bytes(bytes(data))
    with pytest.raises(CorruptStateError, match="overruns valid batches"):
        ClusterState.open(path, write=True)


def test_segments_roll_between_commits_and_read_across(tmp_path: Path) -> None:
    path = tmp_path / "s"
    with ClusterState.open(path, write=True, create=True) as state:
        state.log.segment_bytes = 200
        for start in range(1, 40, 3):
            state.commit(ticks(start, 3))
    segments = sorted(p.name for p in path.glob("*.log"))
    assert len(segments) > 3 and segments[0] == "00000000000000000000.log"
    assert read_image(path).time_ms == 39


def test_a_missing_segment_is_corruption(tmp_path: Path) -> None:
    path = tmp_path / "s"
    with ClusterState.open(path, write=True, create=True) as state:
        state.log.segment_bytes = 100
        for start in range(1, 20, 2):
            state.commit(ticks(start, 2))
    sorted(path.glob("*.log"))[1].unlink()
    with pytest.raises(CorruptStateError, match="the segment starts at offset"):
        read_image(path)


def test_a_commit_is_fsynced_before_it_returns(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "s"
    new_state(path, [1])
    events: list[str] = []
    real_write, real_fsync = os.write, os.fsync
    monkeypatch.setattr(os, "write", lambda fd, data: (events.append("write"), real_write(fd, data))[1])
    monkeypatch.setattr(os, "fsync", lambda fd: (events.append("fsync"), real_fsync(fd))[1])
    with ClusterState.open(path, write=True) as state:
        events.clear()
        state.commit(ticks(2, 1))
        assert events[-2:] == ["write", "fsync"]


def test_a_full_disk_mid_append_fails_cleanly_and_is_taken_back(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "s"
    new_state(path, [1])
    real_write = os.write

    def short_then_full(fd: int, data: bytes) -> int:
        if len(data) > 20:
            real_write(fd, bytes(data)[:20])  # part of the batch reaches the file
            raise OSError(errno.ENOSPC, "No space left on device")
        return real_write(fd, data)

    with ClusterState.open(path, write=True) as state:
        monkeypatch.setattr(os, "write", short_then_full)
        with pytest.raises(UserError, match=f"Cannot write to the cluster state {path}: No space left on device"):
            state.commit(ticks(2, 5))
        monkeypatch.setattr(os, "write", real_write)
        assert state.image.time_ms == 1  # the new image was not published
        state.commit(ticks(2, 1))  # the same process can go on writing
    assert notices_of(path, write=True) == ([], 2)


def test_a_partial_write_that_cannot_be_taken_back_stops_further_writes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "s"
    new_state(path, [1])
    real_write = os.write

    def short_then_full(fd: int, data: bytes) -> int:
        real_write(fd, bytes(data)[:20])
        raise OSError(errno.ENOSPC, "No space left on device")

    def refuse(fd: int, size: int) -> None:
        raise OSError(errno.EIO, "Input/output error")

    with ClusterState.open(path, write=True) as state:
        monkeypatch.setattr(os, "write", short_then_full)
        monkeypatch.setattr(os, "ftruncate", refuse)
        with pytest.raises(UserError, match="No space left on device"):
            state.commit(ticks(2, 5))
        monkeypatch.undo()
        with pytest.raises(UserError, match="an earlier write failed and could not be undone"):
            state.commit(ticks(2, 1))
    # The next open recovers the partial batch as a torn tail.
    notices, time_ms = notices_of(path, write=True)
    assert time_ms == 1 and notices[0].startswith("Recovered the cluster state")


def test_reading_from_a_recorded_position_gives_what_a_full_read_gives(tmp_path: Path) -> None:
    log = RecordLog(tmp_path, segment_bytes=400)  # a new segment every few commits
    list(log.batches())
    positions = {}
    for t in range(1, 30):
        positions[log.next_offset] = log.end_position()
        log.append([(encode_records(ticks(t * 10, 3)), 3)], t)
    assert len(log.segments) > 3
    for offset, position in positions.items():
        full = [(b.base_offset, b.payload) for b in RecordLog(tmp_path).batches(from_offset=offset)]
        reader = RecordLog(tmp_path)
        from_position = [(b.base_offset, b.payload) for b in reader.batches(from_offset=offset, start=position)]
        assert from_position == full and reader.next_offset == log.next_offset
    # A position that does not hold the batch is ignored: the log is read from its segment's start.
    for wrong in ((0, 5), (0, 10_000), (999, 0), (positions[12][0], positions[12][1] + 1)):
        reader = RecordLog(tmp_path)
        assert [b.base_offset for b in reader.batches(from_offset=12, start=wrong)] == [b.base_offset for b in RecordLog(tmp_path).batches(from_offset=12)]
