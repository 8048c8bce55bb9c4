"""Record schemas: declared versions, golden encodings, and the codec's round trips."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kjbod.records import PartitionChangeRecord, PartitionRecord, Record
from kjbod.records.codec import (
    RECORD_TYPES,
    RecordDecodeError,
    RecordRun,
    decode_entries,
    decode_records,
    encode_records,
    record_type,
)

from .examples import DIR_A, TOPIC, examples

GOLDEN = Path(__file__).parent / "golden" / "records.jsonl"


def test_every_record_type_has_an_example_at_every_version() -> None:
    covered = {(type(r), r.version) for r in examples()}
    assert covered == {(cls, v) for cls in RECORD_TYPES for v in cls.VERSIONS}


def test_encodings_match_the_golden_file() -> None:
    """A schema change must bump a version and update tests/records/golden/records.jsonl."""
    encoded = [encode_records([record]).decode()[1:-1] for record in examples()]
    assert encoded == GOLDEN.read_text().splitlines()


def test_golden_file_decodes_to_the_examples() -> None:
    payload = ("[" + ",".join(GOLDEN.read_text().splitlines()) + "]").encode()
    assert decode_records(payload) == examples()


def test_fields_outside_the_version_are_not_written() -> None:
    record = PartitionRecord(version=0, topic_id=TOPIC, replicas=(1,), isr=(1,))
    assert b"directories" not in encode_records([record])


def test_a_value_in_a_field_the_version_lacks_is_refused() -> None:
    record = PartitionRecord(version=0, topic_id=TOPIC, replicas=(1,), isr=(1,), directories=(DIR_A,))
    with pytest.raises(ValueError, match="PartitionRecord field directories needs version 1\\+, but the record is version 0"):
        encode_records([record])


def test_an_unknown_version_is_refused() -> None:
    with pytest.raises(ValueError, match="PartitionRecord version 3 is not in 0-2"):
        encode_records([PartitionRecord(version=3, topic_id=TOPIC, replicas=(1,), isr=(1,))])


def test_records_are_frozen_and_reject_unknown_fields() -> None:
    record = PartitionRecord(topic_id=TOPIC, replicas=(1,), isr=(1,))
    with pytest.raises(ValueError):
        record.leader = 3  # type: ignore[misc]
    with pytest.raises(ValueError):
        PartitionRecord(topic_id=TOPIC, replicas=(1,), isr=(1,), bogus=1)  # type: ignore[call-arg]


@pytest.mark.parametrize(
    "payload",
    [b"not json", b"{}", b'[{"type":"Nope"}]', b'[{"type":"TopicRecord","name":"x"}]', b'[{"run":"TopicRecord","count":2,"version":0,"columns":{"name":["a"]}}]'],
)
def test_malformed_payloads_raise_a_decode_error(payload: bytes) -> None:
    with pytest.raises(RecordDecodeError):
        decode_records(payload)


def test_record_type_lookup_accepts_kafkas_enum_names() -> None:
    assert record_type("PARTITION_CHANGE_RECORD") is PartitionChangeRecord
    assert record_type("PartitionRecord") is PartitionRecord
    with pytest.raises(ValueError, match="Unknown record type Bogus"):
        record_type("Bogus")


int32 = st.integers(min_value=-(2**31), max_value=2**31 - 1)
replica_lists = st.lists(st.integers(min_value=0, max_value=10_000), max_size=5).map(tuple)
uuid_texts = st.sampled_from([TOPIC, DIR_A, "AAAAAAAAAAAAAAAAAAAAAQ", "AAAAAAAAAAAAAAAAAAAAAA"])


@st.composite
def partition_records(draw: st.DrawFn) -> PartitionRecord:
    replicas = draw(replica_lists)
    return PartitionRecord(
        version=1,
        partition_id=draw(st.integers(min_value=0, max_value=10_000)),
        topic_id=draw(uuid_texts),
        replicas=replicas,
        isr=draw(replica_lists),
        removing_replicas=draw(replica_lists),
        adding_replicas=draw(replica_lists),
        leader=draw(int32),
        leader_recovery_state=draw(st.sampled_from([0, 1])),
        leader_epoch=draw(int32),
        partition_epoch=draw(int32),
        directories=tuple(draw(uuid_texts) for _ in replicas),
    )


@st.composite
def change_records(draw: st.DrawFn) -> PartitionChangeRecord:
    return PartitionChangeRecord(
        version=1,
        partition_id=draw(st.integers(min_value=0, max_value=100)),
        topic_id=draw(uuid_texts),
        isr=draw(st.none() | replica_lists),
        leader=draw(st.sampled_from([-2, -1, 0, 5])),
        replicas=draw(st.none() | replica_lists),
        directories=draw(st.none() | st.lists(uuid_texts, max_size=3).map(tuple)),
    )


@given(st.lists(partition_records() | change_records(), max_size=40))
def test_any_records_round_trip_whether_stored_as_rows_or_runs(records: list[Record]) -> None:
    payload = encode_records(records)
    assert decode_records(payload) == records
    expanded = []
    for entry in decode_entries(payload):
        expanded.extend(entry.records() if isinstance(entry, RecordRun) else [entry])
    assert expanded == records
