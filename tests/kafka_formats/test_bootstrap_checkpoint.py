"""bootstrap.checkpoint: decoded with an independent reader of Kafka's record batch v2 format."""

from __future__ import annotations

import struct
from dataclasses import dataclass
from pathlib import Path

import crc32c
import pytest
from hypothesis import given
from hypothesis import strategies as st

from kjbod.records import FeatureLevelRecord
from kjbod.records.wire import varint
from kjbod.kafka_formats.bootstrap_checkpoint import bootstrap_checkpoint_bytes, write_bootstrap_checkpoint

TIMESTAMP = 1_729_827_181_000


class Reader:
    def __init__(self, data: bytes) -> None:
        self.data, self.pos = data, 0

    def take(self, size: int) -> bytes:
        assert self.pos + size <= len(self.data), "read past the end"
        chunk = self.data[self.pos : self.pos + size]
        self.pos += size
        return chunk

    def unpack(self, fmt: str) -> int:
        return struct.unpack(">" + fmt, self.take(struct.calcsize(">" + fmt)))[0]

    def unsigned_varint(self) -> int:
        value = shift = 0
        while True:
            byte = self.take(1)[0]
            value |= (byte & 0x7F) << shift
            shift += 7
            if not byte & 0x80:
                return value

    def varint(self) -> int:
        raw = self.unsigned_varint()
        return (raw >> 1) ^ -(raw & 1)

    @property
    def done(self) -> bool:
        return self.pos == len(self.data)


@dataclass
class Batch:
    base_offset: int
    leader_epoch: int
    control: bool
    timestamps: tuple[int, int]
    producer: tuple[int, int, int]
    records: list[tuple[int, bytes | None, bytes]]  # (offset, key, value)


def decode_batches(data: bytes) -> list[Batch]:
    """DefaultRecordBatch / DefaultRecord, checked field by field (uncompressed only)."""
    reader, batches = Reader(data), []
    while not reader.done:
        start = reader.pos
        base_offset = reader.unpack("q")
        length = reader.unpack("i")
        end = reader.pos + length
        leader_epoch = reader.unpack("i")
        assert reader.unpack("b") == 2, "magic"
        crc = reader.unpack("I")
        assert crc == crc32c.crc32c(data[reader.pos : end]), "CRC32C over attributes..end"
        attributes = reader.unpack("h")
        assert attributes & 0x07 == 0, "uncompressed"
        assert attributes & 0x08 == 0, "CREATE_TIME"
        assert attributes & 0x10 == 0, "not transactional"
        last_offset_delta = reader.unpack("i")
        timestamps = (reader.unpack("q"), reader.unpack("q"))
        producer = (reader.unpack("q"), reader.unpack("h"), reader.unpack("i"))
        count = reader.unpack("i")
        records = []
        for _ in range(count):
            size = reader.varint()
            record_end = reader.pos + size
            assert reader.unpack("b") == 0, "record attributes"
            assert reader.varint() == 0, "timestamp delta"
            offset_delta = reader.varint()
            key_length = reader.varint()
            key = None if key_length < 0 else reader.take(key_length)
            value = reader.take(reader.varint())
            assert reader.varint() == 0, "headers"
            assert reader.pos == record_end, "record length"
            records.append((base_offset + offset_delta, key, value))
        assert reader.pos == end, "batch length"
        assert last_offset_delta == count - 1
        assert end - start == 12 + length
        batches.append(Batch(base_offset, leader_epoch, bool(attributes & 0x20), timestamps, producer, records))
    return batches


def decode_metadata_record(value: bytes) -> tuple[int, int, str, int]:
    """MetadataRecordSerde frame + FeatureLevelRecord v0: (api key, version, name, level)."""
    reader = Reader(value)
    assert reader.unsigned_varint() == 1, "frame version"
    api_key, version = reader.unsigned_varint(), reader.unsigned_varint()
    name = reader.take(reader.unsigned_varint() - 1).decode()
    level = reader.unpack("h")
    assert reader.unsigned_varint() == 0, "tagged fields"
    assert reader.done
    return api_key, version, name, level


def test_crc32c_is_the_castagnoli_checksum() -> None:
    assert crc32c.crc32c(b"123456789") == 0xE3069283


@pytest.mark.parametrize("value", [0, 1, -1, 63, -64, 64, 300, -(2**31), 2**31 - 1, 2**62])
def test_varints_are_zigzag(value: int) -> None:
    assert Reader(varint(value)).varint() == value


def test_the_file_is_a_header_batch_the_records_and_a_footer_batch() -> None:
    records = [
        FeatureLevelRecord(name="metadata.version", feature_level=30),
        FeatureLevelRecord(name="group.version", feature_level=1),
        FeatureLevelRecord(name="transaction.version", feature_level=2),
    ]
    header, data, footer = decode_batches(bootstrap_checkpoint_bytes(records, TIMESTAMP))
    for batch in (header, data, footer):
        assert batch.leader_epoch == 0
        assert batch.timestamps == (TIMESTAMP, TIMESTAMP)
        assert batch.producer == (-1, -1, -1)
    assert (header.control, data.control, footer.control) == (True, False, True)
    # Control key: version 0, type 3 (SNAPSHOT_HEADER); value: version 0, lastContainedLogTimestamp 0, no tags.
    assert header.records == [(0, b"\x00\x00\x00\x03", b"\x00\x00" + b"\x00" * 8 + b"\x00")]
    assert [(offset, key) for offset, key, _ in data.records] == [(1, None), (2, None), (3, None)]
    assert [decode_metadata_record(value) for _, _, value in data.records] == [
        (12, 0, "metadata.version", 30),
        (12, 0, "group.version", 1),
        (12, 0, "transaction.version", 2),
    ]
    # Type 4 (SNAPSHOT_FOOTER); value: version 0, no tags.
    assert footer.records == [(4, b"\x00\x00\x00\x04", b"\x00\x00\x00")]


@given(st.lists(st.tuples(st.text(min_size=1, max_size=40), st.integers(-(2**15), 2**15 - 1)), min_size=1, max_size=20))
def test_any_records_decode_back(pairs: list[tuple[str, int]]) -> None:
    records = [FeatureLevelRecord(name=name, feature_level=level) for name, level in pairs]
    _, data, _ = decode_batches(bootstrap_checkpoint_bytes(records, TIMESTAMP))
    assert [decode_metadata_record(value)[2:] for _, _, value in data.records] == pairs


def test_written_atomically_under_kafkas_name(tmp_path: Path) -> None:
    path = write_bootstrap_checkpoint(tmp_path, [FeatureLevelRecord(name="metadata.version", feature_level=30)], TIMESTAMP)
    assert path == tmp_path / "bootstrap.checkpoint"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bootstrap.checkpoint"]
    assert len(decode_batches(path.read_bytes())) == 3
