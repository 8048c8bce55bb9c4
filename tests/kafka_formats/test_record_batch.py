"""Record batch v2: writing, reading, and how damage is reported."""

from __future__ import annotations

import gzip
import struct
from pathlib import Path

import crc32c
import pytest
from hypothesis import given
from hypothesis import strategies as st

from kjbod.kafka_formats.record_batch import (
    CONTROL_SNAPSHOT_HEADER,
    HEADER_SIZE,
    BatchError,
    RecordBatch,
    TornBatch,
    UnsupportedCompression,
    batch_bytes,
    control_batch,
    control_type_of,
    data_records,
    iter_batches,
    read_batch_at,
    record_size,
    write_batch,
)

FIXTURES = Path(__file__).parents[1] / "fixtures" / "kafka"
KAFKA_SNAPSHOT = FIXTURES / "all-records" / "00000000000000000044-0000000001.checkpoint"
T = 1_700_000_000_000


def batches(data: bytes) -> list[RecordBatch]:
    found = list(iter_batches(data))
    assert not any(isinstance(b, TornBatch) for b in found)
    return found  # type: ignore[return-value]


def with_attributes(batch: bytes, attributes: int, records: bytes | None = None) -> bytes:
    """The batch with other attributes (and records), its length and CRC recomputed."""
    body = bytearray(batch[:HEADER_SIZE] + (batch[HEADER_SIZE:] if records is None else records))
    struct.pack_into(">i", body, 8, len(body) - 12)
    struct.pack_into(">h", body, 21, attributes)
    struct.pack_into(">I", body, 17, crc32c.crc32c(bytes(body[21:])))
    return bytes(body)


def test_kafka_written_batches_read_with_their_header_fields() -> None:
    found = batches(KAFKA_SNAPSHOT.read_bytes())
    assert [(b.base_offset, b.records_count, b.is_control, b.partition_leader_epoch) for b in found] == [
        (0, 3, True, 1), (3, 44, False, 1), (47, 1, True, 1),
    ]
    assert all(b.base_timestamp == b.max_timestamp == T and b.producer_id == -1 and b.compression == "none" for b in found)
    assert [control_type_of(r.key) for r in found[0].records()] == [3, 5, 6]


@given(st.lists(st.binary(max_size=300), min_size=1, max_size=40), st.integers(0, 2**40), st.integers(0, 2**31 - 1))
def test_any_values_round_trip(values: list[bytes], base: int, epoch: int) -> None:
    data = batch_bytes(base, data_records(values), len(values), timestamp_ms=T, leader_epoch=epoch)
    (batch,) = batches(data)
    assert (batch.base_offset, batch.last_offset, batch.partition_leader_epoch) == (base, base + len(values) - 1, epoch)
    assert [r.value for r in batch.records()] == values
    assert [r.offset for r in batch.records()] == list(range(base, base + len(values)))
    buf, spans = batch.value_spans()
    assert [(offset, buf[start:end]) for offset, start, end in spans] == [(r.offset, r.value) for r in batch.records()]
    assert len(data_records(values)) == sum(record_size(i, len(v)) for i, v in enumerate(values))


def test_the_general_writer_and_the_data_writer_agree() -> None:
    values = [b"a", b"b" * 200, b""]
    assert write_batch(5, [(None, v) for v in values], timestamp_ms=T, leader_epoch=2) == batch_bytes(
        5, data_records(values), 3, timestamp_ms=T, leader_epoch=2
    )


def test_keys_and_headers_take_the_careful_path() -> None:
    data = write_batch(0, [(b"k", b"v1"), (None, None), (None, b"v3")], timestamp_ms=T)
    (batch,) = batches(data)
    buf, spans = batch.value_spans()
    assert [(o, None if s < 0 else buf[s:e]) for o, s, e in spans] == [(0, b"v1"), (1, None), (2, b"v3")]


def test_control_batches_carry_the_control_attribute_and_keys() -> None:
    (batch,) = batches(control_batch(7, [(CONTROL_SNAPSHOT_HEADER, b"\x00")], timestamp_ms=T, leader_epoch=1))
    assert batch.is_control and batch.attributes == 0x20
    (record,) = batch.records()
    assert (record.offset, record.key, record.value, control_type_of(record.key)) == (7, b"\x00\x00\x00\x03", b"\x00", 3)


def test_a_crc_mismatch_is_reported_with_its_byte_position() -> None:
    first = write_batch(0, [(None, b"one")], timestamp_ms=T)
    second = bytearray(write_batch(1, [(None, b"two")], timestamp_ms=T))
    second[-2] ^= 0xFF
    with pytest.raises(BatchError, match=f"at byte {len(first)}: CRC mismatch in the batch at offset 1") as caught:
        list(iter_batches(first + bytes(second)))
    assert caught.value.position == len(first)


@pytest.mark.parametrize("cut", [1, 11, 12, 60, 70])
def test_a_batch_cut_short_at_the_end_is_torn(cut: int) -> None:
    whole = write_batch(0, [(None, b"x" * 20)], timestamp_ms=T)
    tail = write_batch(1, [(None, b"y" * 20)], timestamp_ms=T)
    found = list(iter_batches(whole + tail[:cut]))
    assert isinstance(found[0], RecordBatch)
    torn = found[1]
    assert isinstance(torn, TornBatch) and torn.position == len(whole) and torn.available == cut
    assert torn.needed == (None if cut < 12 else len(tail))
    assert "incomplete batch" in torn.describe()


def test_an_impossible_length_is_damage_not_a_torn_write() -> None:
    data = bytearray(write_batch(0, [(None, b"x")], timestamp_ms=T))
    struct.pack_into(">i", data, 8, 3)
    with pytest.raises(BatchError, match="at byte 0: invalid batch length 3"):
        list(iter_batches(bytes(data)))


def test_an_old_magic_is_refused() -> None:
    data = bytearray(write_batch(0, [(None, b"x")], timestamp_ms=T))
    data[16] = 1
    with pytest.raises(BatchError, match="unsupported record batch magic 1"):
        read_batch_at(bytes(data), 0)


def test_gzip_batches_are_read() -> None:
    plain = batch_bytes(0, data_records([b"one", b"two"]), 2, timestamp_ms=T, leader_epoch=0)
    compressed = with_attributes(plain, 1, gzip.compress(plain[HEADER_SIZE:]))
    (batch,) = batches(compressed)
    assert batch.compression == "gzip" and [r.value for r in batch.records()] == [b"one", b"two"]


@pytest.mark.parametrize(("codec", "name"), [(2, "snappy"), (3, "lz4"), (4, "zstd")])
def test_other_codecs_are_refused_naming_the_codec(codec: int, name: str) -> None:
    data = with_attributes(write_batch(9, [(None, b"x")], timestamp_ms=T), codec)
    (batch,) = batches(data)
    with pytest.raises(UnsupportedCompression, match=f"the batch at offset 9 is compressed with {name}, which kjbod cannot read"):
        list(batch.records())


def test_a_record_with_a_wrong_length_is_damage() -> None:
    data = bytearray(write_batch(0, [(None, b"abc")], timestamp_ms=T))
    data[HEADER_SIZE] += 2  # the record's length varint
    fixed = with_attributes(bytes(data), 0)
    (batch,) = batches(fixed)
    with pytest.raises(BatchError, match="record 0 of the batch at offset 0"):
        list(batch.records())
