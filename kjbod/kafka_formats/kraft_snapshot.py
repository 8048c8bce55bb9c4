"""KRaft snapshot files, as Kafka writes and reads them.

A snapshot (`<20-digit end offset>-<10-digit epoch>.checkpoint`, Snapshots.java) is what
RecordsSnapshotWriter over FileRawSnapshotWriter writes:

1. a control batch at offset 0: SnapshotHeaderRecord, then with kraft.version 1 a
   KRaftVersionRecord and, when the voter set is known, a VotersRecord (KIP-853);
2. data batches of metadata records in MetadataRecordSerde framing. The writer appends records
   1024 at a time (RaftSnapshotWriter, as SnapshotEmitter uses it) into a BatchAccumulator whose
   batches hold at most 8 MiB (KafkaRaftClient.MAX_BATCH_SIZE_BYTES); `BatchAccumulator` below
   follows its batch boundaries exactly, including the short batch it cuts after every drain;
3. a control batch holding the SnapshotFooterRecord.

Every batch carries the snapshot epoch as its partition leader epoch and the writer's clock as
its timestamps. The file is written as `<name>-<random>.checkpoint.part` (mode 0600, as Java's
Files.createTempFile), fsynced, made read-only (File.setReadOnly: 0400) and renamed atomically.

Reading checks every CRC and the header/footer framing (RecordsSnapshotReader) and returns the
control records (header, kraft.version, voters) and the data records' values for the caller to
decode. The log segments beside the snapshots hold the same batches: kjbod.kafka_formats.metadata_log.
"""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from kjbod.common.durable import fsync_directory
from kjbod.common.java import hashmap_order
from kjbod.records.base import Record
from kjbod.records.wire import MetadataValue, WireError, codec, decode_metadata_value, encode_record, kafka_json
from kjbod.kafka_formats.record_batch import (
    CONTROL_KRAFT_VERSION,
    CONTROL_KRAFT_VOTERS,
    CONTROL_LEADER_CHANGE,
    CONTROL_SNAPSHOT_FOOTER,
    CONTROL_SNAPSHOT_HEADER,
    CONTROL_TYPE_NAMES,
    HEADER_SIZE,
    BatchError,
    RecordBatch,
    TornBatch,
    batch_bytes,
    control_batch,
    control_type_of,
    data_records,
    iter_batches,
    records_size,
)

CLUSTER_METADATA_DIR = "__cluster_metadata-0"
SNAPSHOT_SUFFIX = ".checkpoint"
PARTIAL_SUFFIX = ".checkpoint.part"
DELETED_SUFFIX = ".checkpoint.deleted"
LOG_SUFFIX = ".log"
MAX_BATCH_SIZE_BYTES = 8 * 1024 * 1024  # KafkaRaftClient.MAX_BATCH_SIZE_BYTES
RECORDS_PER_APPEND = 1024  # SnapshotEmitter.DEFAULT_BATCH_SIZE, RaftSnapshotWriter's append size
SNAPSHOT_FILE_MODE = 0o400
_SNAPSHOT_NAME = re.compile(r"^(\d{20})-(\d{10})\.checkpoint$")
# The versions Kafka writes control records at (ControlRecordUtils.*_CURRENT_VERSION).
CONTROL_RECORD_VERSION = 0
CONTROL_SCHEMAS = {
    CONTROL_SNAPSHOT_HEADER: "SnapshotHeaderRecord",
    CONTROL_SNAPSHOT_FOOTER: "SnapshotFooterRecord",
    CONTROL_KRAFT_VERSION: "KRaftVersionRecord",
    CONTROL_KRAFT_VOTERS: "VotersRecord",
    CONTROL_LEADER_CHANGE: "LeaderChangeMessage",
}


# A time in milliseconds, or a clock giving one (read when each batch starts, as Kafka's Time).
Clock = int | Callable[[], int]


def _as_clock(clock: Clock) -> Callable[[], int]:
    return clock if callable(clock) else (lambda: clock)  # type: ignore[return-value]


class SnapshotError(ValueError):
    """A file that is not a valid KRaft snapshot or metadata log; the message names where."""


@dataclass(frozen=True, order=True)
class SnapshotId:
    """OffsetAndEpoch of a snapshot: the end offset (last contained offset + 1) and its epoch."""

    end_offset: int
    epoch: int

    @property
    def file_name(self) -> str:
        return f"{self.end_offset:020d}-{self.epoch:010d}{SNAPSHOT_SUFFIX}"

    @classmethod
    def from_file_name(cls, name: str) -> SnapshotId | None:
        """Snapshots.parse for a complete snapshot's name; None for any other name."""
        match = _SNAPSHOT_NAME.match(name)
        if match is None:
            return None
        return cls(int(match.group(1)), int(match.group(2)))

    def __str__(self) -> str:
        return f"OffsetAndEpoch(offset={self.end_offset}, epoch={self.epoch})"


BOOTSTRAP_SNAPSHOT_ID = SnapshotId(0, 0)


@dataclass(frozen=True)
class VoterEndpoint:
    name: str
    host: str
    port: int


@dataclass(frozen=True)
class Voter:
    """One entry of a VotersRecord (KIP-853)."""

    voter_id: int
    directory_id: str
    endpoints: tuple[VoterEndpoint, ...]
    min_kraft_version: int = 0
    max_kraft_version: int = 1

    def to_json(self) -> dict[str, object]:
        return {
            "voterId": self.voter_id,
            "voterDirectoryId": self.directory_id,
            "endpoints": [{"name": e.name, "host": e.host, "port": e.port} for e in self.endpoints],
            "kRaftVersionFeature": {"minSupportedVersion": self.min_kraft_version, "maxSupportedVersion": self.max_kraft_version},
        }

    @classmethod
    def from_json(cls, data: dict) -> Voter:
        feature = data.get("kRaftVersionFeature") or {}
        return cls(
            data["voterId"],
            data["voterDirectoryId"],
            tuple(VoterEndpoint(e["name"], e["host"], e["port"]) for e in data.get("endpoints", ())),
            feature.get("minSupportedVersion", 0),
            feature.get("maxSupportedVersion", 0),
        )


def _java_hashmap_copy_order(ids: Sequence[int]) -> list[int]:
    """The order of `new HashMap<>(m)` where m is a HashMap filled with `ids` in this order:
    VoterSet.fromMap copies DynamicVoters.toVoterSet's map, and its table is sized for the copy."""
    first = hashmap_order(ids, lambda i: i)
    wanted = len(first) / 0.75 + 1.0
    capacity = 1
    while capacity < int(wanted):
        capacity *= 2

    def bucket(key: int) -> int:
        h = key & 0xFFFFFFFF
        return (h ^ (h >> 16)) & (capacity - 1)

    return sorted(first, key=bucket)


def voters_in_record_order(voters: Iterable[Voter]) -> list[Voter]:
    """Voters as VoterSet.toVotersRecord lists them when they come from --initial-controllers
    or --standalone (DynamicVoters keeps them by id; VoterSet iterates a HashMap)."""
    by_id = {v.voter_id: v for v in sorted(voters, key=lambda v: v.voter_id)}
    return [by_id[i] for i in _java_hashmap_copy_order(list(by_id))]


def header_message(last_contained_log_timestamp: int) -> bytes:
    return codec("SnapshotHeaderRecord", 0).encode(CONTROL_RECORD_VERSION, last_contained_log_timestamp)


def footer_message() -> bytes:
    return codec("SnapshotFooterRecord", 0).encode(CONTROL_RECORD_VERSION)


def kraft_version_message(kraft_version: int) -> bytes:
    return codec("KRaftVersionRecord", 0).encode(CONTROL_RECORD_VERSION, kraft_version)


def voters_message(voters: Sequence[Voter]) -> bytes:
    return codec("VotersRecord", 0).encode_dict({"version": CONTROL_RECORD_VERSION, "voters": [v.to_json() for v in voters]})


# Writing ---------------------------------------------------------------------------------------


class BatchAccumulator:
    """BatchAccumulator + BatchBuilder for one snapshot writer, uncompressed: where batches
    start and end. Kafka's drain protocol completes the open batch whenever a drain starts
    after a batch filled up, so a full batch is followed by one holding a single append."""

    _NONE, _STARTED, _FINISHED = range(3)

    def __init__(self, epoch: int, clock: Clock, max_batch_size: int = MAX_BATCH_SIZE_BYTES) -> None:
        self.epoch = epoch
        self.clock = _as_clock(clock)
        self._open_time = 0
        self.max_batch_size = max_batch_size
        self.next_offset = 0
        self.status = self._NONE
        self.completed: list[bytes] = []
        self._open: list[bytes] | None = None  # the open batch's values
        self._open_base = 0
        self._open_bytes = 0  # its records' bytes

    def _complete_open(self) -> None:
        values = self._open
        assert values
        records = data_records(values)
        self.completed.append(
            batch_bytes(self._open_base, records, len(values), timestamp_ms=self._open_time, leader_epoch=self.epoch)
        )
        self._open = None

    def _maybe_complete_drain(self) -> None:
        if self.status == self._STARTED:
            if self._open:
                self._complete_open()
            self.status = self._FINISHED

    def _start_batch(self) -> None:
        self._open, self._open_base, self._open_bytes = [], self.next_offset, 0
        self._open_time = self.clock()

    def _bytes_needed(self, values: Sequence[bytes]) -> int:
        return records_size(self.next_offset - self._open_base, values)

    def append(self, values: Sequence[bytes]) -> None:
        self._maybe_complete_drain()
        if self._open is None:
            self._start_batch()
        needed = self._bytes_needed(values)
        if self.max_batch_size - (HEADER_SIZE + self._open_bytes) < needed:
            if HEADER_SIZE + needed > self.max_batch_size:
                raise SnapshotError(
                    f"The total record(s) size of {HEADER_SIZE + needed} exceeds the maximum allowed batch size of {self.max_batch_size}"
                )
            self._complete_open()
            self._start_batch()
            needed = self._bytes_needed(values)
        self._open.extend(values)
        self._open_bytes += needed
        self.next_offset += len(values)

    def force_drain(self) -> None:
        self.status = self._STARTED
        self._maybe_complete_drain()

    def append_control(self, messages: Sequence[tuple[int, bytes]]) -> None:
        self.force_drain()
        self.completed.append(control_batch(self.next_offset, messages, timestamp_ms=self.clock(), leader_epoch=self.epoch))
        self.next_offset += len(messages)

    def needs_drain(self) -> bool:
        return bool(self.completed)

    def drain(self) -> list[bytes]:
        if self.status == self._NONE:
            self.status = self._STARTED
        self._maybe_complete_drain()
        if self.status != self._FINISHED:
            return []
        self.status = self._NONE
        drained, self.completed = self.completed, []
        return drained


def snapshot_batches(
    values: Iterable[bytes],
    *,
    epoch: int,
    timestamp_ms: Clock,
    last_contained_log_timestamp: int,
    kraft_version: int = 0,
    voters: Sequence[Voter] | None = None,
    max_batch_size: int = MAX_BATCH_SIZE_BYTES,
    records_per_append: int = RECORDS_PER_APPEND,
) -> Iterator[bytes]:
    """The batches of a snapshot holding `values` (framed metadata records), in file order.
    `timestamp_ms` is a time or a clock, read as Kafka's writer reads its clock: once per batch."""
    if kraft_version == 0 and voters is not None:
        raise ValueError("a voter set needs kraft.version 1")
    accumulator = BatchAccumulator(epoch, timestamp_ms, max_batch_size)
    control = [(CONTROL_SNAPSHOT_HEADER, header_message(last_contained_log_timestamp))]
    if kraft_version >= 1:
        control.append((CONTROL_KRAFT_VERSION, kraft_version_message(kraft_version)))
        if voters is not None:
            control.append((CONTROL_KRAFT_VOTERS, voters_message(voters)))
    accumulator.append_control(control)
    chunk: list[bytes] = []
    for value in values:
        chunk.append(value)
        if len(chunk) >= records_per_append:
            accumulator.append(chunk)
            chunk = []
            if accumulator.needs_drain():
                yield from accumulator.drain()
    if chunk:
        accumulator.append(chunk)
        if accumulator.needs_drain():
            yield from accumulator.drain()
    accumulator.append_control([(CONTROL_SNAPSHOT_FOOTER, footer_message())])
    accumulator.force_drain()
    yield from accumulator.drain()


def write_snapshot_file(target: Path, batches: Iterable[bytes]) -> Path:
    """FileRawSnapshotWriter: write `batches` to `<target name>-<random>.checkpoint.part` beside
    `target` (mode 0600), fsync, make it read-only (0400) and rename it onto `target`. On any
    failure the partial file is removed and `target` is untouched."""
    directory = target.parent
    directory.mkdir(parents=True, exist_ok=True)
    stem = target.name[: -len(SNAPSHOT_SUFFIX)] if target.name.endswith(SNAPSHOT_SUFFIX) else target.name
    fd, temp_name = tempfile.mkstemp(prefix=f"{stem}-", suffix=PARTIAL_SUFFIX, dir=directory)
    temp = Path(temp_name)
    try:
        with os.fdopen(fd, "wb") as out:
            for batch in batches:
                out.write(batch)
            out.flush()
            os.fsync(out.fileno())
        os.chmod(temp, os.stat(temp).st_mode & ~0o222 & 0o7777)
        os.replace(temp, target)
    except BaseException:
        temp.unlink(missing_ok=True)
        raise
    fsync_directory(directory)
    return target


def write_kraft_snapshot(
    target: Path,
    values: Iterable[bytes],
    *,
    epoch: int,
    timestamp_ms: Clock,
    last_contained_log_timestamp: int | None = None,
    kraft_version: int = 0,
    voters: Sequence[Voter] | None = None,
) -> Path:
    """Write a snapshot of `values` to `target` (any file name; Kafka finds snapshots by the
    `<offset>-<epoch>.checkpoint` name, see SnapshotId.file_name)."""
    batches = snapshot_batches(
        values,
        epoch=epoch,
        timestamp_ms=timestamp_ms,
        last_contained_log_timestamp=_as_clock(timestamp_ms)() if last_contained_log_timestamp is None else last_contained_log_timestamp,
        kraft_version=kraft_version,
        voters=voters,
    )
    return write_snapshot_file(target, batches)


def write_bootstrap_snapshot(
    metadata_dir: Path,
    voters: Sequence[Voter] | None,
    *,
    kraft_version: int,
    timestamp_ms: Clock,
    records: Sequence[Record] = (),
) -> Path:
    """The bootstrap snapshot (offset 0, epoch 0) in `<metadata dir>/__cluster_metadata-0`: a
    control batch (header, then KRaftVersion when kraft.version >= 1, then the voter set when
    there is one), the records, the footer. Kafka 4.3 writes it with the KIP-853 voter set and no
    records (Formatter.writeDynamicQuorumSnapshot); Kafka 4.4 writes it on every controller, with
    the bootstrap records (Formatter.writeBoostrapSnapshot, 4.4.0 :513-530, KAFKA-19648)."""
    target = metadata_dir / CLUSTER_METADATA_DIR / BOOTSTRAP_SNAPSHOT_ID.file_name
    return write_kraft_snapshot(
        target,
        [encode_record(record) for record in records],
        epoch=BOOTSTRAP_SNAPSHOT_ID.epoch,
        timestamp_ms=timestamp_ms,
        kraft_version=kraft_version,
        voters=None if voters is None else voters_in_record_order(voters),
    )


# Reading ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ControlRecord:
    offset: int
    control_type: int
    data: dict | None  # the decoded message, None for a type kjbod does not know

    @property
    def type_name(self) -> str:
        return CONTROL_TYPE_NAMES.get(self.control_type, f"UNKNOWN({self.control_type})")


def decode_control(offset: int, key: bytes | None, value: bytes | None, position: int) -> ControlRecord:
    """A control record's message, read at the version its first field (Version) names."""
    control_type = control_type_of(key)
    name = CONTROL_SCHEMAS.get(control_type)
    if name is None or value is None:
        return ControlRecord(offset, control_type, None)
    try:
        version = int.from_bytes(value[:2], "big", signed=True) if len(value) >= 2 else 0
        if version not in codec(name, 0).spec.valid_versions:
            version = CONTROL_RECORD_VERSION
        message = codec(name, version)
        values, _ = message.decode(value, 0, len(value))
        return ControlRecord(offset, control_type, kafka_json(message.fields, values, version))
    except WireError as exc:
        raise SnapshotError(f"the {CONTROL_TYPE_NAMES[control_type]} control record at offset {offset} (byte {position}) is malformed: {exc}") from None


@dataclass(frozen=True)
class DataRecord:
    """One metadata record: its offset, and its value as bytes within a batch's records buffer."""

    offset: int
    buffer: bytes
    start: int
    end: int
    batch: RecordBatch

    def decode(self) -> MetadataValue:
        return decode_metadata_value(self.buffer, self.start, self.end)

    @property
    def value(self) -> bytes:
        return self.buffer[self.start : self.end]


def data_record_spans(batch: RecordBatch) -> Iterator[DataRecord]:
    buf, spans = batch.value_spans()
    for offset, start, end in spans:
        if start < 0:
            raise BatchError(batch.position, f"the record at offset {offset} has no value")
        yield DataRecord(offset, buf, start, end, batch)


@dataclass
class KraftSnapshot:
    """A snapshot file's control records and batches (data records are decoded on demand)."""

    path: Path
    snapshot_id: SnapshotId | None  # from the file name; None for a name Kafka would not list
    size: int
    header: dict
    footer: dict | None
    kraft_version: int | None
    voters: tuple[Voter, ...] | None
    control_records: list[ControlRecord] = field(default_factory=list)
    batches: list[RecordBatch] = field(default_factory=list)

    @property
    def last_contained_log_timestamp(self) -> int:
        return self.header.get("lastContainedLogTimestamp", 0)

    @property
    def data_record_count(self) -> int:
        return sum(b.records_count for b in self.batches if not b.is_control)

    def data_records(self) -> Iterator[DataRecord]:
        for batch in self.batches:
            if not batch.is_control:
                yield from data_record_spans(batch)


def read_kraft_snapshot(path: Path) -> KraftSnapshot:
    """Read and check a snapshot file: every CRC, a header first and a footer last
    (RecordsSnapshotReader). Raises SnapshotError naming the byte where the file is damaged."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise SnapshotError(f"cannot read {path}: {exc.strerror or exc}") from None
    return parse_kraft_snapshot(data, path)


def parse_kraft_snapshot(data: bytes, path: Path) -> KraftSnapshot:
    batches: list[RecordBatch] = []
    controls: list[ControlRecord] = []
    try:
        for batch in iter_batches(data):
            if isinstance(batch, TornBatch):
                raise SnapshotError(f"{path}: the snapshot ends with {batch.describe()}; it is not a complete snapshot")
            batches.append(batch)
            if batch.is_control:
                for record in batch.records():
                    controls.append(decode_control(record.offset, record.key, record.value, batch.position))
    except BatchError as exc:
        raise SnapshotError(f"{path}: {exc}") from None
    if not batches or not batches[0].is_control or not controls or controls[0].control_type != CONTROL_SNAPSHOT_HEADER:
        raise SnapshotError(f"{path}: the snapshot does not start with a SnapshotHeaderRecord; it is not a KRaft snapshot")
    last = batches[-1]
    footer = controls[-1].data if last.is_control and controls[-1].control_type == CONTROL_SNAPSHOT_FOOTER else None
    if footer is None:
        raise SnapshotError(f"{path}: the snapshot does not end with a SnapshotFooterRecord; it is not a complete snapshot")
    kraft_version = None
    voters = None
    for control in controls:
        if control.control_type == CONTROL_KRAFT_VERSION and control.data is not None:
            kraft_version = control.data["kRaftVersion"]
        elif control.control_type == CONTROL_KRAFT_VOTERS and control.data is not None:
            voters = tuple(Voter.from_json(v) for v in control.data["voters"])
    return KraftSnapshot(
        path=path,
        snapshot_id=SnapshotId.from_file_name(path.name),
        size=len(data),
        header=controls[0].data or {},
        footer=footer,
        kraft_version=kraft_version,
        voters=voters,
        control_records=controls,
        batches=batches,
    )


def latest_snapshot(directory: Path) -> Path | None:
    """The snapshot with the highest id in a `__cluster_metadata-0` directory (what a controller
    loads at start-up), ignoring partial and deleted ones."""
    found = []
    for entry in directory.iterdir():
        snapshot_id = SnapshotId.from_file_name(entry.name)
        if snapshot_id is not None:
            found.append((snapshot_id, entry))
    return max(found)[1] if found else None
