"""PartitionRecords decoded column-wise with numpy: a controller's snapshot holds a million of
them, which the generated decoder (kjbod.records.wire) reads one Python call and a dozen
lookups each.

The usual record (every array shorter than 127 entries, no tagged field: Kafka writes the ELR
fields only when they hold brokers, PartitionRegistration.toRecord) is read here for a whole
run of records at once, by gathering its fields at positions computed for every record; each
uuid is turned into kjbod's text once per distinct value. Any other record (a tagged field, a
long array, a null where none may be, one that does not end where its frame says) is marked,
and the caller decodes it with the generated decoder, which names any problem. The values are
those the generated decoder gives, in the same Python types (tuples of ints and of uuid
texts), so the records built from them cannot tell the two apart; tests compare them.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from kjbod.records.wire import uuid_text

# MetadataRecordSerde frames (frame version 1, api key 3, versions 0-2) as 24-bit numbers.
PARTITION_FRAMES = {0x010300: 0, 0x010301: 1, 0x010302: 2}
# Up to this many entries a compact array's length is one byte (length + 1 below 128).
_ONE_BYTE = 127


class _Reader:
    """Reads fields at a position per record; `odd` marks the records that cannot be read here."""

    def __init__(self, buf: bytes, pos: np.ndarray, end: np.ndarray, texts: dict[bytes, str]) -> None:
        self.texts = texts
        self.data = np.frombuffer(buf, np.uint8)
        self.last = len(self.data) - 1
        self.pos = pos
        self.end = end
        self.odd = np.zeros(len(pos), np.bool_)

    def _bytes(self, at: np.ndarray, width: int) -> np.ndarray:
        """(records, width) bytes from `at` (clipped to the buffer; a record that reads past its
        end is odd anyway)."""
        index = np.minimum(at[:, None] + np.arange(width, dtype=np.int64), self.last)
        return self.data[index]

    def int32s(self, count: int) -> list[np.ndarray]:
        """`count` consecutive big-endian int32 fields."""
        raw = self._bytes(self.pos, 4 * count).astype(np.int64)
        self.pos = self.pos + 4 * count
        values = []
        for i in range(count):
            b = raw[:, 4 * i : 4 * i + 4]
            value = (b[:, 0] << 24) | (b[:, 1] << 16) | (b[:, 2] << 8) | b[:, 3]
            values.append(np.where(value >= 1 << 31, value - (1 << 32), value))
        return values

    def uuid(self) -> list[str]:
        """A uuid field of every record, as text; consecutive records often share it (a topic's
        partitions), so a text is made per change of value."""
        raw = self._bytes(self.pos, 16)
        self.pos = self.pos + 16
        if not len(raw):
            return []
        changes = np.flatnonzero(np.any(raw[1:] != raw[:-1], axis=1)) + 1
        firsts = np.concatenate([[0], changes])
        texts = np.array([self.text(raw, i) for i in firsts.tolist()], dtype=object)
        return texts[np.repeat(np.arange(len(firsts)), np.diff(np.append(firsts, len(raw))))].tolist()

    def length(self) -> np.ndarray:
        """A compact array's length (one byte); a null, or a longer array, makes the record odd."""
        raw = self.data[np.minimum(self.pos, self.last)].astype(np.int64)
        self.odd |= (raw == 0) | (raw > _ONE_BYTE)
        self.pos = self.pos + 1
        return np.where(self.odd, 0, raw - 1)

    def int32_lists(self) -> list[tuple[int, ...]]:
        lengths = self.length()
        start = np.zeros(len(lengths) + 1, np.int64)
        np.cumsum(lengths, out=start[1:])
        at = np.repeat(self.pos - start[:-1] * 4, lengths) + 4 * np.arange(int(start[-1]), dtype=np.int64)
        b = self.data[np.minimum(at[:, None] + np.arange(4, dtype=np.int64), self.last)].astype(np.int64)
        value = (b[:, 0] << 24) | (b[:, 1] << 16) | (b[:, 2] << 8) | b[:, 3]
        values = np.where(value >= 1 << 31, value - (1 << 32), value)
        self.pos = self.pos + 4 * lengths
        return _tuples(start, values)

    def uuid_lists(self) -> list[tuple[str, ...]]:
        lengths = self.length()
        start = np.zeros(len(lengths) + 1, np.int64)
        np.cumsum(lengths, out=start[1:])
        at = np.repeat(self.pos - start[:-1] * 16, lengths) + 16 * np.arange(int(start[-1]), dtype=np.int64)
        raw = self.data[np.minimum(at[:, None] + np.arange(16, dtype=np.int64), self.last)]
        self.pos = self.pos + 16 * lengths
        if not len(raw):
            return _tuples(start, np.zeros(0, object))
        # Few distinct directories: each made text once. Found by their first eight bytes (a
        # sort of integers), checked against the other eight.
        halves = np.ascontiguousarray(raw).view(np.uint64)
        distinct, first, inverse = np.unique(halves[:, 0], return_index=True, return_inverse=True)
        inverse = inverse.ravel()
        if np.any(halves[first[inverse], 1] != halves[:, 1]):
            keys = np.ascontiguousarray(raw).view(np.dtype((np.void, 16))).ravel()
            _, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
            inverse = inverse.ravel()
        texts = np.array([self.text(raw, i) for i in first.tolist()], dtype=object)
        return _tuples(start, texts[inverse])

    def text(self, raw: np.ndarray, i: int) -> str:
        """uuid_text of raw[i], through the texts of the batches before (a broker's directories
        are in every batch)."""
        key = raw[i].tobytes()
        found = self.texts.get(key)
        if found is None:
            found = self.texts[key] = uuid_text(key)
        return found

    def no_tagged_fields(self) -> None:
        raw = self.data[np.minimum(self.pos, self.last)]
        self.odd |= raw != 0
        self.pos = self.pos + 1


def _tuples(start: np.ndarray, values: np.ndarray) -> list[tuple[Any, ...]]:
    """Each row's values as a tuple (what struct.unpack and the generated decoder give)."""
    rows = len(start) - 1
    if not rows:
        return []
    if not len(values):
        return [()] * rows
    lengths = np.diff(start)
    if lengths.min() == lengths.max():
        return list(map(tuple, values.reshape(rows, int(lengths[0])).tolist()))
    flat = values.tolist()
    bounds = start.tolist()
    return [tuple(flat[bounds[r] : bounds[r + 1]]) for r in range(rows)]


def decode_partition_records(
    buf: bytes, starts: np.ndarray, ends: np.ndarray, version: int, texts: dict[bytes, str] | None = None
) -> tuple[dict[str, list[Any]], np.ndarray]:
    """The PartitionRecords (of `version`) whose messages are buf[starts[i]:ends[i]] (after the
    frame): their columns by field name (kjbod's record model's), and which records are odd
    (their values in the columns are meaningless: decode them with the generated decoder).
    `texts`: uuid bytes -> text, kept from one call to the next by the caller."""
    reader = _Reader(buf, np.asarray(starts, np.int64), np.asarray(ends, np.int64), {} if texts is None else texts)
    (partition_id,) = reader.int32s(1)
    columns: dict[str, list[Any]] = {"partition_id": partition_id.tolist(), "topic_id": reader.uuid()}
    for name in ("replicas", "isr", "removing_replicas", "adding_replicas"):
        columns[name] = reader.int32_lists()
    leader, leader_epoch, partition_epoch = reader.int32s(3)
    columns["leader"] = leader.tolist()
    columns["leader_recovery_state"] = [0] * len(leader)
    columns["leader_epoch"] = leader_epoch.tolist()
    columns["partition_epoch"] = partition_epoch.tolist()
    if version >= 1:
        columns["directories"] = reader.uuid_lists()
    if version >= 2:
        columns["eligible_leader_replicas"] = [None] * len(leader)
        columns["last_known_elr"] = [None] * len(leader)
    reader.no_tagged_fields()
    return columns, reader.odd | (reader.pos != reader.end)
