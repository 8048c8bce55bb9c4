"""Kafka's record batch v2 (DefaultRecordBatch / DefaultRecord): writing and reading.

The unit of every KRaft file: `bootstrap.checkpoint`, the snapshots
(`__cluster_metadata-0/<offset>-<epoch>.checkpoint`) and the `__cluster_metadata` log segments.
A batch is a 61-byte header (big-endian)

    baseOffset int64, batchLength int32 (bytes after this field), partitionLeaderEpoch int32,
    magic int8 (2), crc uint32 (CRC32C of everything after it), attributes int16,
    lastOffsetDelta int32, baseTimestamp int64, maxTimestamp int64, producerId int64,
    producerEpoch int16, baseSequence int32, recordsCount int32

followed by the records, each a varint length and then: attributes int8, timestampDelta varlong,
offsetDelta varint, key and value (varint length, -1 for null, then the bytes) and headers
(varint count). Attributes: bits 0-2 the compression codec, bit 3 the timestamp type, bit 4
transactional, bit 5 control.

Kafka's KRaft writers (BatchAccumulator, BatchFileWriter, RecordsSnapshotWriter) always write
uncompressed batches (Compression.NONE). Reading accepts gzip too (the standard library has it);
snappy, lz4 and zstd are refused with a one-line error naming the codec.

Reading reports damage precisely: a batch whose CRC, magic or lengths are wrong is a
`CorruptBatch` with its byte position; an incomplete batch at the very end of the bytes (a write
that was interrupted, as Kafka's FileLogInputStream sees it) is a `TornBatch`.
"""

from __future__ import annotations

import gzip
import struct
import zlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import crc32c

from kjbod.records.wire import UVARINT_TABLE, read_uvarint, read_varint, varint

MAGIC_V2 = 2
HEADER_SIZE = 61  # DefaultRecordBatch.RECORD_BATCH_OVERHEAD
LOG_OVERHEAD = 12  # baseOffset + batchLength
_CRC_OFFSET = 17
_ATTRIBUTES_OFFSET = 21
_HEADER = struct.Struct(">qiibIhiqqqhii")

NO_PRODUCER_ID = -1
NO_PRODUCER_EPOCH = -1
NO_SEQUENCE = -1

COMPRESSION_MASK = 0x07
TIMESTAMP_TYPE_LOG_APPEND = 0x08
TRANSACTIONAL = 0x10
CONTROL = 0x20
COMPRESSION_CODECS = {0: "none", 1: "gzip", 2: "snappy", 3: "lz4", 4: "zstd"}

# ControlRecordType ids (clients/.../record/ControlRecordType.java).
CONTROL_ABORT = 0
CONTROL_COMMIT = 1
CONTROL_LEADER_CHANGE = 2
CONTROL_SNAPSHOT_HEADER = 3
CONTROL_SNAPSHOT_FOOTER = 4
CONTROL_KRAFT_VERSION = 5
CONTROL_KRAFT_VOTERS = 6
CONTROL_TYPE_NAMES = {
    CONTROL_ABORT: "ABORT",
    CONTROL_COMMIT: "COMMIT",
    CONTROL_LEADER_CHANGE: "LEADER_CHANGE",
    CONTROL_SNAPSHOT_HEADER: "SNAPSHOT_HEADER",
    CONTROL_SNAPSHOT_FOOTER: "SNAPSHOT_FOOTER",
    CONTROL_KRAFT_VERSION: "KRAFT_VERSION",
    CONTROL_KRAFT_VOTERS: "KRAFT_VOTERS",
}
CONTROL_KEY_VERSION = 0


def control_key(control_type: int) -> bytes:
    """ControlRecordType.recordKey: int16 version 0, int16 type."""
    return struct.pack(">hh", CONTROL_KEY_VERSION, control_type)


def control_type_of(key: bytes | None) -> int:
    """ControlRecordType.parseTypeId (-1 for a key Kafka could not parse either)."""
    if key is None or len(key) < 4:
        return -1
    version, control_type = struct.unpack_from(">hh", key)
    return -1 if version < 0 else control_type


class BatchError(ValueError):
    """Damaged or unsupported record batch bytes."""

    def __init__(self, position: int, reason: str) -> None:
        super().__init__(f"at byte {position}: {reason}")
        self.position = position
        self.reason = reason


class UnsupportedCompression(BatchError):
    """A batch compressed with a codec kjbod cannot read."""


# Writing ---------------------------------------------------------------------------------------


def _record_bytes(offset_delta: int, key: bytes | None, value: bytes | None) -> bytes:
    """DefaultRecord.writeTo with timestamp delta 0 and no headers."""
    body = b"".join(
        (
            b"\x00\x00",  # attributes, timestamp delta 0
            varint(offset_delta),
            b"\x01" if key is None else varint(len(key)) + key,  # varint(-1) is 0x01
            b"\x01" if value is None else varint(len(value)) + value,
            b"\x00",  # no headers
        )
    )
    return varint(len(body)) + body


def _varint_size(value: int) -> int:
    """ByteUtils.sizeOfVarint for a value >= 0 (zig-zag doubles it)."""
    zigzag = value << 1
    if zigzag < 0x80:
        return 1
    if zigzag < 0x4000:
        return 2
    if zigzag < 0x200000:
        return 3
    return 4 if zigzag < 0x10000000 else 5


def record_size(offset_delta: int, value_size: int) -> int:
    """The bytes of a null-key, header-less record (DefaultRecord.sizeInBytes)."""
    body = 4 + _varint_size(offset_delta) + _varint_size(value_size) + value_size
    return _varint_size(body) + body


def records_size(first_delta: int, values: Sequence[bytes]) -> int:
    """The bytes `data_records(values, first_delta)` takes (BatchBuilder.bytesNeeded)."""
    total = 0
    delta = first_delta
    for value in values:
        size = len(value)
        body = 4 + (1 if delta < 64 else _varint_size(delta)) + (1 if size < 64 else 2 if size < 8192 else _varint_size(size)) + size
        total += body + (1 if body < 64 else 2 if body < 8192 else _varint_size(body))
        delta += 1
    return total


def data_records(values: Sequence[bytes], first_delta: int = 0) -> bytes:
    """The records section of a data batch: null keys, the given values, offset deltas from
    `first_delta` (the shape BatchBuilder.writeRecord gives every KRaft data record)."""
    parts = []
    append = parts.append
    small = UVARINT_TABLE  # zig-zag varints of 0..8191 are the unsigned varints of 0..16382
    delta = first_delta
    for value in values:
        size = len(value)
        # attributes 0, timestamp delta 0, offset delta, null key, value, no headers
        prefix = b"\x00\x00" + (small[delta << 1] if delta < 8192 else varint(delta)) + b"\x01" + (
            small[size << 1] if size < 8192 else varint(size)
        )
        body = len(prefix) + size + 1
        append(small[body << 1] if body < 8192 else varint(body))
        append(prefix)
        append(value)
        append(b"\x00")
        delta += 1
    return b"".join(parts)


def batch_bytes(
    base_offset: int,
    records: bytes,
    count: int,
    *,
    timestamp_ms: int,
    leader_epoch: int,
    control: bool = False,
) -> bytes:
    """One uncompressed v2 batch around an already encoded records section (CREATE_TIME)."""
    if count < 1:
        raise ValueError("a record batch holds at least one record")
    header = bytearray(
        _HEADER.pack(
            base_offset,
            HEADER_SIZE - LOG_OVERHEAD + len(records),
            leader_epoch,
            MAGIC_V2,
            0,  # crc, filled in below
            CONTROL if control else 0,
            count - 1,
            timestamp_ms,
            timestamp_ms,
            NO_PRODUCER_ID,
            NO_PRODUCER_EPOCH,
            NO_SEQUENCE,
            count,
        )
    )
    crc = crc32c.crc32c(records, crc32c.crc32c(bytes(header[_ATTRIBUTES_OFFSET:])))
    struct.pack_into(">I", header, _CRC_OFFSET, crc)
    return bytes(header) + records


def write_batch(
    base_offset: int,
    records: Sequence[tuple[bytes | None, bytes | None]],
    *,
    timestamp_ms: int,
    leader_epoch: int = 0,
    control: bool = False,
) -> bytes:
    """A batch of (key, value) records, offsets from `base_offset`."""
    body = b"".join(_record_bytes(delta, key, value) for delta, (key, value) in enumerate(records))
    return batch_bytes(base_offset, body, len(records), timestamp_ms=timestamp_ms, leader_epoch=leader_epoch, control=control)


def control_batch(
    base_offset: int, messages: Sequence[tuple[int, bytes]], *, timestamp_ms: int, leader_epoch: int
) -> bytes:
    """A control batch of (ControlRecordType id, message bytes) records."""
    return write_batch(
        base_offset,
        [(control_key(control_type), value) for control_type, value in messages],
        timestamp_ms=timestamp_ms,
        leader_epoch=leader_epoch,
        control=True,
    )


# Reading ---------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class BatchRecord:
    offset: int
    timestamp_ms: int
    key: bytes | None
    value: bytes | None
    headers: tuple[tuple[str, bytes | None], ...] = ()


@dataclass(frozen=True)
class RecordBatch:
    """A batch as read from a file: its header fields, where it is, and its raw records."""

    position: int  # byte position of the batch in its file
    base_offset: int
    length: int  # batchLength: the bytes after the length field
    partition_leader_epoch: int
    magic: int
    crc: int
    attributes: int
    last_offset_delta: int
    base_timestamp: int
    max_timestamp: int
    producer_id: int
    producer_epoch: int
    base_sequence: int
    records_count: int
    data: bytes  # the whole batch, header included

    @property
    def size(self) -> int:
        return self.length + LOG_OVERHEAD

    @property
    def last_offset(self) -> int:
        return self.base_offset + self.last_offset_delta

    @property
    def next_offset(self) -> int:
        return self.last_offset + 1

    @property
    def is_control(self) -> bool:
        return bool(self.attributes & CONTROL)

    @property
    def crc_valid(self) -> bool:
        """The stored CRC32C matches the bytes from the attributes on."""
        return crc32c.crc32c(self.data[_ATTRIBUTES_OFFSET:]) == self.crc

    @property
    def is_transactional(self) -> bool:
        return bool(self.attributes & TRANSACTIONAL)

    @property
    def compression(self) -> str:
        return COMPRESSION_CODECS.get(self.attributes & COMPRESSION_MASK, f"unknown({self.attributes & COMPRESSION_MASK})")

    @property
    def timestamp_type(self) -> str:
        return "LogAppendTime" if self.attributes & TIMESTAMP_TYPE_LOG_APPEND else "CreateTime"

    def records_section(self) -> bytes:
        """The records bytes, decompressed."""
        raw = self.data[HEADER_SIZE:]
        codec = self.attributes & COMPRESSION_MASK
        if codec == 0:
            return raw
        if codec == 1:
            try:
                return gzip.decompress(raw)
            except (OSError, EOFError, zlib.error) as exc:
                raise BatchError(self.position, f"the gzip-compressed records do not decompress ({exc})") from None
        raise UnsupportedCompression(
            self.position,
            f"the batch at offset {self.base_offset} is compressed with {self.compression}, which kjbod cannot read "
            "(Kafka's KRaft writers never compress; only uncompressed and gzip batches are supported)",
        )

    def records(self) -> Iterator[BatchRecord]:
        """Every record, with absolute offsets and timestamps (DefaultRecord.readFrom)."""
        buf = self.records_section()
        pos = 0
        end = len(buf)
        for index in range(self.records_count):
            try:
                size, pos = read_varint(buf, pos)
                start = pos
                pos += 1  # attributes
                timestamp_delta, pos = read_varint(buf, pos)
                offset_delta, pos = read_varint(buf, pos)
                key_size, pos = read_varint(buf, pos)
                key = None if key_size < 0 else buf[pos : pos + key_size]
                pos += max(key_size, 0)
                value_size, pos = read_varint(buf, pos)
                value = None if value_size < 0 else buf[pos : pos + value_size]
                pos += max(value_size, 0)
                header_count, pos = read_varint(buf, pos)
                headers = []
                for _ in range(header_count):
                    name_size, pos = read_varint(buf, pos)
                    name = buf[pos : pos + name_size].decode("utf-8")
                    pos += name_size
                    header_size, pos = read_varint(buf, pos)
                    headers.append((name, None if header_size < 0 else buf[pos : pos + header_size]))
                    pos += max(header_size, 0)
            except (IndexError, UnicodeDecodeError, ValueError):
                raise BatchError(self.position, f"record {index} of the batch at offset {self.base_offset} is truncated") from None
            if pos - start != size or pos > end:
                raise BatchError(
                    self.position, f"record {index} of the batch at offset {self.base_offset} has an invalid size {size}"
                )
            yield BatchRecord(self.base_offset + offset_delta, self.base_timestamp + timestamp_delta, key, value, tuple(headers))
        if pos != end:
            raise BatchError(self.position, f"the batch at offset {self.base_offset} has {end - pos} byte(s) after its last record")

    def value_spans(self) -> tuple[bytes, list[tuple[int, int, int]]]:
        """The fast path for data batches: a buffer and, per record, (offset, value start, value
        end) in it; start -1 for a null value. Records with keys, headers or a timestamp delta
        (never written by Kafka's KRaft writers) take the careful path through `records`.

        The varints are decoded inline (one or two bytes, else the general reader): this loop
        runs once per record of a million-partition snapshot."""
        buf = self.records_section()
        spans = []
        append = spans.append
        pos = 0
        base = self.base_offset
        try:
            for _ in range(self.records_count):
                b = buf[pos]  # the record's length
                if b < 128:
                    raw = b
                    pos += 1
                elif buf[pos + 1] < 128:
                    raw = (b & 127) | (buf[pos + 1] << 7)
                    pos += 2
                else:
                    raw, pos = read_uvarint(buf, pos)
                record_end = pos + ((raw >> 1) ^ -(raw & 1))
                if buf[pos + 1] != 0:  # attributes at pos, then a timestamp delta of 0
                    return self._careful_spans()
                pos += 2
                b = buf[pos]  # the offset delta (three bytes from the 8,192nd record of a batch)
                if b < 128:
                    raw = b
                    pos += 1
                elif buf[pos + 1] < 128:
                    raw = (b & 127) | (buf[pos + 1] << 7)
                    pos += 2
                elif buf[pos + 2] < 128:
                    raw = (b & 127) | ((buf[pos + 1] & 127) << 7) | (buf[pos + 2] << 14)
                    pos += 3
                else:
                    raw, pos = read_uvarint(buf, pos)
                delta = (raw >> 1) ^ -(raw & 1)
                if buf[pos] != 1:  # a key (varint -1 is 0x01 for none)
                    return self._careful_spans()
                b = buf[pos + 1]  # the value's length
                if b < 128:
                    raw = b
                    pos += 2
                elif buf[pos + 2] < 128:
                    raw = (b & 127) | (buf[pos + 2] << 7)
                    pos += 3
                else:
                    raw, pos = read_uvarint(buf, pos + 1)
                if raw & 1:  # a null value
                    return self._careful_spans()
                value_end = pos + (raw >> 1)
                if value_end + 1 != record_end or buf[value_end] != 0:  # no headers
                    return self._careful_spans()
                append((base + delta, pos, value_end))
                pos = record_end
        except IndexError:
            raise BatchError(self.position, f"a record of the batch at offset {self.base_offset} is truncated") from None
        if pos != len(buf):
            raise BatchError(self.position, f"the batch at offset {self.base_offset} has {len(buf) - pos} byte(s) after its last record")
        return buf, spans

    def _careful_spans(self) -> tuple[bytes, list[tuple[int, int, int]]]:
        parts: list[bytes] = []
        spans = []
        position = 0
        for record in self.records():
            if record.value is None:
                spans.append((record.offset, -1, -1))
                continue
            parts.append(record.value)
            spans.append((record.offset, position, position + len(record.value)))
            position += len(record.value)
        return b"".join(parts), spans


@dataclass(frozen=True)
class TornBatch:
    """An incomplete batch at the end of the bytes: a write that was interrupted."""

    position: int
    available: int  # bytes present from `position` on
    needed: int | None  # the batch's full size, when its length field is there

    def describe(self) -> str:
        if self.needed is None:
            return f"an incomplete batch header at byte {self.position} ({self.available} byte(s))"
        return f"an incomplete batch at byte {self.position} ({self.available} of {self.needed} bytes)"


def read_batch_at(buf: bytes, position: int, *, verify_crc: bool = True) -> RecordBatch | TornBatch:
    """The batch at `position`; TornBatch if the bytes end inside it; BatchError if damaged."""
    available = len(buf) - position
    if available < LOG_OVERHEAD:
        return TornBatch(position, available, None)
    base_offset, length = struct.unpack_from(">qi", buf, position)
    if length < HEADER_SIZE - LOG_OVERHEAD:
        raise BatchError(position, f"invalid batch length {length} (the header alone is {HEADER_SIZE - LOG_OVERHEAD})")
    size = length + LOG_OVERHEAD
    if available < size:
        return TornBatch(position, available, size)
    (
        base_offset, length, leader_epoch, magic, crc, attributes, last_offset_delta,
        base_timestamp, max_timestamp, producer_id, producer_epoch, base_sequence, count,
    ) = _HEADER.unpack_from(buf, position)
    if magic != MAGIC_V2:
        raise BatchError(position, f"unsupported record batch magic {magic} (KRaft files use magic 2)")
    batch = RecordBatch(
        position, base_offset, length, leader_epoch, magic, crc, attributes, last_offset_delta,
        base_timestamp, max_timestamp, producer_id, producer_epoch, base_sequence, count, bytes(buf[position : position + size]),
    )
    if verify_crc and not batch.crc_valid:
        actual = crc32c.crc32c(batch.data[_ATTRIBUTES_OFFSET:])
        raise BatchError(position, f"CRC mismatch in the batch at offset {base_offset}: stored {crc:#010x}, computed {actual:#010x}")
    if count < 0 or last_offset_delta < 0:
        raise BatchError(position, f"invalid record count {count} in the batch at offset {base_offset}")
    return batch


def iter_batches(buf: bytes, *, verify_crc: bool = True) -> Iterator[RecordBatch | TornBatch]:
    """Every batch in order; a TornBatch, if any, comes last. Raises BatchError on damage."""
    position = 0
    end = len(buf)
    while position < end:
        batch = read_batch_at(buf, position, verify_crc=verify_crc)
        yield batch
        if isinstance(batch, TornBatch):
            return
        position += batch.size
