"""PartitionRecords decoded as columns (kjbod.kafka_formats.partition_columns): the same runs as
the generated decoder gives record by record, and the same error for a damaged record."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kjbod.kafka_formats import controller_metadata
from kjbod.kafka_formats.controller_metadata import read_controller_metadata
from kjbod.kafka_formats.kraft_snapshot import SnapshotError, SnapshotId, write_kraft_snapshot
from kjbod.records import PartitionRecord, TopicRecord
from kjbod.records.wire import encode_record

TOPICS = ["cJ3rE4bvQc2w5Y0kT1q9Zg", "ZNJ-ywU0nnQwRv5eRRU9ow"]
DIRS = ["AAAAAAAAAAAAAAAAAAAAAA", "AAAAAAAAAAAAAAAAAAAAAQ", "AAAAAAAAAAAAAAAAAAAAAg", "3oJ4LLPQFmLNXhGoM4NSnA", "ZHhjBKM7WhTDJjGgrRHWNQ"]
BROKERS = st.lists(st.integers(-1, 2**31 - 1), max_size=4)


@st.composite
def partition_records(draw: st.DrawFn) -> bytes:
    version = draw(st.sampled_from([0, 1, 2, 2, 2]))
    replicas = tuple(draw(st.one_of(BROKERS, BROKERS, st.just(list(range(130))))))
    fields: dict[str, object] = {
        "partition_id": draw(st.integers(0, 2**31 - 1)), "topic_id": draw(st.sampled_from(TOPICS)), "replicas": replicas,
        "isr": tuple(draw(BROKERS)), "removing_replicas": tuple(draw(st.lists(st.integers(0, 9), max_size=2))),
        "adding_replicas": tuple(draw(st.lists(st.integers(0, 9), max_size=2))), "leader": draw(st.integers(-1, 9)),
        "leader_recovery_state": draw(st.sampled_from([0, 0, 0, 1])), "leader_epoch": draw(st.integers(-(2**31), 2**31 - 1)),
        "partition_epoch": draw(st.integers(-1, 9)),
    }
    if version >= 1:
        fields["directories"] = tuple(draw(st.lists(st.sampled_from(DIRS), min_size=len(replicas), max_size=len(replicas)))) if draw(st.booleans()) else tuple(
            draw(st.lists(st.sampled_from(DIRS), max_size=3))
        )
    if version >= 2:
        fields["eligible_leader_replicas"] = draw(st.sampled_from([None, None, (), (1, 2)]))
        fields["last_known_elr"] = draw(st.sampled_from([None, None, (), (3,)]))
    return encode_record(PartitionRecord(version=version, **fields))  # type: ignore[arg-type]


def _read(path: Path, columns: bool) -> object:
    with pytest.MonkeyPatch.context() as patch:
        if not columns:
            patch.setattr(controller_metadata, "_COLUMNS_FROM", 10**12)
        try:
            return read_controller_metadata(path).entries
        except SnapshotError as exc:
            return str(exc)


def _damaged(value: bytes, how: str, at: int) -> bytes:
    at %= len(value)
    if how == "cut":
        return value[: max(at, 3)]
    if how == "extra":
        return value + b"\x00"
    if how == "flip":
        return value[:at] + bytes([value[at] ^ 0x80]) + value[at + 1 :]
    return value[:at] + b"\x00" + value[at + 1 :]


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(
    kinds=st.lists(partition_records(), min_size=1, max_size=6),
    count=st.integers(64, 100),
    topic_every=st.integers(5, 200),
    damage=st.one_of(st.none(), st.tuples(st.integers(0, 10**6), st.sampled_from(["cut", "extra", "flip", "zero"]), st.integers(0, 10**6))),
)
def test_the_columns_give_the_generated_decoders_runs_and_errors(
    tmp_path_factory: pytest.TempPathFactory, kinds: list[bytes], count: int, topic_every: int, damage: tuple[int, str, int] | None
) -> None:
    # A batch of at least 64 records (fewer are read one by one), of a few kinds of record.
    records = [kinds[i % len(kinds)] for i in range(count)]
    values = []
    for index, record in enumerate(records):
        if index % topic_every == 0:
            values.append(encode_record(TopicRecord(name=f"t{index}", topic_id=TOPICS[index % 2])))
        values.append(record)
    if damage is not None:
        which, how, at = damage
        which %= len(values)
        values[which] = _damaged(values[which], how, at)
    path = write_kraft_snapshot(tmp_path_factory.mktemp("columns") / SnapshotId(len(values), 1).file_name, values, epoch=1, timestamp_ms=0)
    assert _read(path, columns=True) == _read(path, columns=False)


def test_a_snapshot_of_usual_records_is_read_as_columns(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    records = [
        encode_record(PartitionRecord(version=2, partition_id=i, topic_id=TOPICS[0], replicas=(1, 2, 3), isr=(1, 2), leader=1,
                                      leader_epoch=4, partition_epoch=5, directories=(DIRS[3], DIRS[4], DIRS[3])))
        for i in range(100)
    ]
    path = write_kraft_snapshot(tmp_path / SnapshotId(101, 1).file_name, [encode_record(TopicRecord(name="t", topic_id=TOPICS[0])), *records], epoch=1, timestamp_ms=0)
    decoded = []
    decode = controller_metadata.decode_partition_records
    monkeypatch.setattr(controller_metadata, "decode_partition_records", lambda *args: decoded.append(decode(*args)) or decoded[-1])
    entries = read_controller_metadata(path).entries
    assert len(decoded) == 1 and not decoded[0][1].any()
    run = entries[1]
    assert run.count == 100 and run.columns["directories"][7] == (DIRS[3], DIRS[4], DIRS[3]) and run.columns["isr"][0] == (1, 2)
    assert entries == _read(path, columns=False)
