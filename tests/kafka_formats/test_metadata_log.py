"""`__cluster_metadata-0` log segments: read in offset order from an offset, a torn last batch
reported, damage named by segment and byte."""

from __future__ import annotations

from pathlib import Path

import pytest

from kjbod.kafka_formats.kraft_snapshot import SnapshotError
from kjbod.kafka_formats.metadata_log import read_metadata_log
from kjbod.kafka_formats.record_batch import CONTROL_LEADER_CHANGE, batch_bytes, control_batch, data_records
from kjbod.records import TopicRecord
from kjbod.records.wire import encode_record

T = 1_700_000_000_000
TOPIC = "cJ3rE4bvQc2w5Y0kT1q9Zg"


def _segment(directory: Path, base: int, count: int, *, epoch: int = 3) -> bytes:
    leader_change = control_batch(base, [(CONTROL_LEADER_CHANGE, b"\x00\x00\x00\x00\x00\x01\x01\x01\x00")], timestamp_ms=T, leader_epoch=epoch)
    values = [encode_record(TopicRecord(name=f"t{base + 1 + i}", topic_id=TOPIC)) for i in range(count)]
    data = batch_bytes(base + 1, data_records(values), count, timestamp_ms=T, leader_epoch=epoch)
    (directory / f"{base:020d}.log").write_bytes(leader_change + data)
    return leader_change + data


def test_segments_are_read_in_offset_order_from_an_offset(tmp_path: Path) -> None:
    _segment(tmp_path, 0, 4)
    _segment(tmp_path, 5, 4)
    (tmp_path / "00000000000000000005.index").write_bytes(b"\x00" * 8)
    log = read_metadata_log(tmp_path, from_offset=3)
    assert [p.name for p in log.segments] == ["00000000000000000000.log", "00000000000000000005.log"]
    assert [(b.batch.base_offset, b.batch.records_count) for b in log.batches] == [(1, 4), (5, 1), (6, 4)]
    assert log.torn is None


def test_a_torn_last_batch_is_reported_not_fatal(tmp_path: Path) -> None:
    _segment(tmp_path, 0, 2)
    last = _segment(tmp_path, 3, 2)
    (tmp_path / "00000000000000000003.log").write_bytes(last[:-5])
    log = read_metadata_log(tmp_path)
    assert [b.batch.base_offset for b in log.batches] == [0, 1, 3]
    assert log.describe_torn() is not None and log.describe_torn().startswith("00000000000000000003.log: an incomplete batch at byte")


def test_a_torn_batch_before_the_last_segment_is_damage(tmp_path: Path) -> None:
    first = _segment(tmp_path, 0, 2)
    _segment(tmp_path, 3, 2)
    (tmp_path / "00000000000000000000.log").write_bytes(first[:-5])
    with pytest.raises(SnapshotError, match="00000000000000000000.log: an incomplete batch at byte .* is followed by later segments"):
        read_metadata_log(tmp_path)


def test_damage_in_a_segment_names_the_segment_and_byte(tmp_path: Path) -> None:
    data = bytearray(_segment(tmp_path, 0, 2))
    data[-3] ^= 1
    (tmp_path / "00000000000000000000.log").write_bytes(bytes(data))
    with pytest.raises(SnapshotError, match=r"00000000000000000000.log: at byte \d+: CRC mismatch in the batch at offset 1"):
        read_metadata_log(tmp_path)


def test_a_directory_without_segments_is_named(tmp_path: Path) -> None:
    with pytest.raises(SnapshotError, match="holds no log segments"):
        read_metadata_log(tmp_path)
