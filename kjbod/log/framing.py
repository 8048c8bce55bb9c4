"""Framed, checksummed batches: the unit of the record log and of snapshots.

Layout of a batch (big-endian), after Kafka's record batch:

    length       u32  bytes that follow this field
    crc          u32  CRC32C of everything after this field
    base_offset  i64  offset of the first record
    magic        u8   batch format version (1)
    attributes   u8   CONTINUES: more batches of the same commit follow; CONTROL: snapshot framing
    count        u32  number of records
    timestamp_ms i64  wall-clock time of the write
    payload           JSON array of records

A commit too large for one batch is written as several: every batch but the last carries
CONTINUES, so a crash in the middle leaves batches that recovery drops as one torn commit.
"""

from __future__ import annotations

import re
import struct
from collections.abc import Sequence
from dataclasses import dataclass

import crc32c

MAGIC = 1
ATTR_CONTINUES = 0x01
ATTR_CONTROL = 0x02
_KNOWN_ATTRIBUTES = ATTR_CONTINUES | ATTR_CONTROL

_HEADER = struct.Struct(">IIqBBIq")
HEADER_SIZE = _HEADER.size  # 30
_AFTER_LENGTH = HEADER_SIZE - 4  # the bytes of header counted by `length`
_AFTER_CRC = HEADER_SIZE - 8
MAX_BATCH_BYTES = 512 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class Batch:
    base_offset: int
    record_count: int
    timestamp_ms: int
    attributes: int
    payload: bytes | memoryview
    position: int  # byte position of the batch in its file
    size: int  # total bytes of the batch, header included

    @property
    def next_offset(self) -> int:
        return self.base_offset + self.record_count

    @property
    def continues(self) -> bool:
        return bool(self.attributes & ATTR_CONTINUES)

    @property
    def is_control(self) -> bool:
        return bool(self.attributes & ATTR_CONTROL)


def encode_batch(base_offset: int, record_count: int, payload: bytes, timestamp_ms: int, attributes: int = 0) -> bytes:
    body = _HEADER.pack(0, 0, base_offset, MAGIC, attributes, record_count, timestamp_ms)[8:] + payload
    return struct.pack(">II", len(body) + 4, crc32c.crc32c(body)) + body


def encode_batch_header(
    base_offset: int, record_count: int, payload: Sequence[bytes | memoryview], timestamp_ms: int, attributes: int = 0
) -> bytes:
    """The header of the batch whose payload is the concatenation of `payload`'s parts, which are
    written after it as they are: a large payload (a snapshot's column) is never copied."""
    rest = _HEADER.pack(0, 0, base_offset, MAGIC, attributes, record_count, timestamp_ms)[8:]
    crc = crc32c.crc32c(rest)
    length = len(rest) + 4
    for part in payload:
        crc = crc32c.crc32c(part, crc)
        length += memoryview(part).nbytes
    return struct.pack(">II", length, crc) + rest


@dataclass(frozen=True)
class ScanStop:
    """Why scanning stopped before the end of the buffer."""

    position: int
    reason: str
    # True when the bytes from `position` on are an interrupted write: an incomplete batch at
    # the very end, or zero fill, with no valid batch anywhere after it.
    torn: bool


def _all_zero(buf: bytes | memoryview, start: int) -> bool:
    return not any(buf[start:])


# Candidate batch starts: a magic byte 16 bytes in, followed by a known attribute byte.
_CANDIDATE = re.compile(rb"(?s)(?=.{16}\x01[\x00-\x03])")


def _valid_batch_after(buf: bytes | memoryview, start: int) -> bool:
    """True if some complete batch with a correct checksum begins after `start`."""
    data = bytes(buf)
    for match in _CANDIDATE.finditer(data, start + 1):
        position = match.start()
        if position + HEADER_SIZE > len(data):
            break
        length, crc = struct.unpack_from(">II", data, position)
        end = position + 4 + length
        if _AFTER_LENGTH <= length <= MAX_BATCH_BYTES and end <= len(data):
            if crc32c.crc32c(data[position + 8 : end]) == crc:
                return True
    return False


def read_batch(buf: bytes | memoryview, position: int, *, copy: bool = True) -> Batch | ScanStop:
    """The batch at `position`, or why there is no valid batch there. With `copy` False the
    payload is a view into `buf` (pass a memoryview: nothing is copied, the checksum included)."""
    size = len(buf)
    if size - position < 8:
        return ScanStop(position, "an incomplete batch header", torn=True)
    length, crc = struct.unpack_from(">II", buf, position)
    if length < _AFTER_LENGTH or length > MAX_BATCH_BYTES:
        if _all_zero(buf, position):
            return ScanStop(position, "zero fill", torn=True)
        return ScanStop(position, f"an invalid batch length {length}", torn=False)
    end = position + 4 + length
    if end > size:
        if _valid_batch_after(buf, position):
            return ScanStop(position, f"a batch length {length} that overruns valid batches", torn=False)
        return ScanStop(position, f"an incomplete batch ({size - position} of {length + 4} bytes)", torn=True)
    body = buf[position + 8 : end]
    if crc32c.crc32c(body) != crc:
        if _all_zero(buf, position + 8):
            return ScanStop(position, "zero fill", torn=True)
        return ScanStop(position, "a checksum mismatch", torn=False)
    _, _, base_offset, magic, attributes, count, timestamp_ms = _HEADER.unpack_from(buf, position)
    if magic != MAGIC:
        return ScanStop(position, f"an unknown batch format {magic}", torn=False)
    if attributes & ~_KNOWN_ATTRIBUTES:
        return ScanStop(position, f"unknown batch attributes {attributes:#x}", torn=False)
    payload = bytes(buf[position + HEADER_SIZE : end]) if copy else buf[position + HEADER_SIZE : end]
    return Batch(base_offset, count, timestamp_ms, attributes, payload, position, end - position)
