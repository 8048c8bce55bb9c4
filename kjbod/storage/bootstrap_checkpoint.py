"""`bootstrap.checkpoint`: the controller's bootstrap records in Kafka's binary format (§1.5).

Kafka's BatchFileWriter writes a stream of record batches (magic v2, uncompressed, leader epoch
0, offsets from 0), exactly three of them:

1. a control batch holding a SnapshotHeaderRecord (version 0, lastContainedLogTimestamp 0);
2. a data batch holding the bootstrap records (FeatureLevelRecord v0), each encoded with
   MetadataRecordSerde: unsigned varints frame version 1, api key, record version, then the
   record in Kafka's flexible-version wire format;
3. a control batch holding a SnapshotFooterRecord (version 0).

A controller reads every non-control batch and needs a metadata.version record in them. The
batch timestamps are the time of writing, so the file is byte-deterministic only for a given
time (which is injectable here).

Written by hand (about a hundred lines) because no maintained Python library writes Kafka's
*metadata* record serde; the batch layout is the client-side record batch v2
(DefaultRecordBatch/DefaultRecord), and the checksum is CRC32C from the `crc32c` package.
"""

from __future__ import annotations

import struct
import time
from collections.abc import Sequence
from pathlib import Path

import crc32c

from kjbod.common.durable import atomic_write
from kjbod.records import FeatureLevelRecord

BOOTSTRAP_CHECKPOINT = "bootstrap.checkpoint"

MAGIC_V2 = 2
CONTROL_BATCH_ATTRIBUTE = 0x20
NO_PRODUCER_ID = -1
NO_PRODUCER_EPOCH = -1
NO_SEQUENCE = -1
# ControlRecordType ids (clients/.../record/ControlRecordType.java).
SNAPSHOT_HEADER = 3
SNAPSHOT_FOOTER = 4
CONTROL_RECORD_KEY_VERSION = 0
# MetadataRecordSerde frame version and FeatureLevelRecord's api key.
METADATA_FRAME_VERSION = 1
FEATURE_LEVEL_RECORD_API_KEY = FeatureLevelRecord.API_KEY
# DefaultRecordBatch: everything from the attributes field on is covered by the CRC.
_HEADER = struct.Struct(">qiibIhiqqqhii")
_CRC_START = 21


def unsigned_varint(value: int) -> bytes:
    out = bytearray()
    while value > 0x7F:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def varint(value: int) -> bytes:
    """Zig-zag encoded signed varint/varlong (ByteUtils.writeVarint/writeVarlong)."""
    return unsigned_varint((value << 1) ^ (value >> 63))


def _compact_string(text: str) -> bytes:
    raw = text.encode("utf-8")
    return unsigned_varint(len(raw) + 1) + raw


def feature_level_record_bytes(record: FeatureLevelRecord) -> bytes:
    """MetadataRecordSerde.write of a FeatureLevelRecord v0 (flexible: compact string, tags)."""
    return (
        unsigned_varint(METADATA_FRAME_VERSION)
        + unsigned_varint(FEATURE_LEVEL_RECORD_API_KEY)
        + unsigned_varint(record.version)
        + _compact_string(record.name)
        + struct.pack(">h", record.feature_level)
        + unsigned_varint(0)  # no tagged fields
    )


def _record(offset_delta: int, key: bytes | None, value: bytes) -> bytes:
    """DefaultRecord.writeTo with timestamp delta 0 and no headers."""
    body = (
        b"\x00"  # attributes
        + varint(0)  # timestamp delta
        + varint(offset_delta)
        + (varint(-1) if key is None else varint(len(key)) + key)
        + varint(len(value))
        + value
        + varint(0)  # header count
    )
    return varint(len(body)) + body


def record_batch(base_offset: int, timestamp_ms: int, records: Sequence[tuple[bytes | None, bytes]], *, control: bool) -> bytes:
    """One uncompressed magic-v2 record batch, leader epoch 0, CREATE_TIME timestamps."""
    body = b"".join(_record(delta, key, value) for delta, (key, value) in enumerate(records))
    attributes = CONTROL_BATCH_ATTRIBUTE if control else 0
    header = bytearray(
        _HEADER.pack(
            base_offset,
            _HEADER.size - 12 + len(body),  # the batch length excludes base offset and length
            0,  # partition leader epoch
            MAGIC_V2,
            0,  # crc, filled in below
            attributes,
            len(records) - 1,  # last offset delta
            timestamp_ms,
            timestamp_ms,
            NO_PRODUCER_ID,
            NO_PRODUCER_EPOCH,
            NO_SEQUENCE,
            len(records),
        )
    )
    checksum = crc32c.crc32c(bytes(header[_CRC_START:]) + body)
    struct.pack_into(">I", header, 17, checksum)
    return bytes(header) + body


def _control_key(control_type: int) -> bytes:
    return struct.pack(">hh", CONTROL_RECORD_KEY_VERSION, control_type)


def bootstrap_checkpoint_bytes(records: Sequence[FeatureLevelRecord], timestamp_ms: int | None = None) -> bytes:
    """The whole file: header batch, the records, footer batch (offsets 0, 1.., n+1)."""
    now = time.time_ns() // 1_000_000 if timestamp_ms is None else timestamp_ms
    # SnapshotHeaderRecord v0: Version int16, LastContainedLogTimestamp int64, tags.
    header = struct.pack(">hq", 0, 0) + unsigned_varint(0)
    # SnapshotFooterRecord v0: Version int16, tags.
    footer = struct.pack(">h", 0) + unsigned_varint(0)
    return (
        record_batch(0, now, [(_control_key(SNAPSHOT_HEADER), header)], control=True)
        + record_batch(1, now, [(None, feature_level_record_bytes(r)) for r in records], control=False)
        + record_batch(1 + len(records), now, [(_control_key(SNAPSHOT_FOOTER), footer)], control=True)
    )


def write_bootstrap_checkpoint(
    directory: Path, records: Sequence[FeatureLevelRecord], timestamp_ms: int | None = None
) -> Path:
    """Write `<directory>/bootstrap.checkpoint` via `bootstrap.checkpoint.tmp`, as Kafka does."""
    path = directory / BOOTSTRAP_CHECKPOINT
    atomic_write(path, bootstrap_checkpoint_bytes(records, timestamp_ms))
    return path
