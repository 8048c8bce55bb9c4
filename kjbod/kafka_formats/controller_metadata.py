"""A KRaft controller's metadata, read as kjbod records: its snapshot and the log after it.

What `import cluster --metadata-snapshot FILE [--metadata-log DIR]` starts from. Every data
record of the snapshot, then every data record of the `__cluster_metadata-0` log segments at or
past the snapshot's end offset, in offset order, becomes a kjbod record model (PartitionRecords
and TopicRecords column-wise, as RecordRuns, so a million partitions cost no object each).
Records kjbod does not model (ACLs, quotas, SCRAM, producer ids, delegation tokens...) are
counted by name, not errors.

As Kafka's own reader would:
- a torn last batch of the log (an interrupted write) is reported and ignored;
- metadata transactions (KIP-868) apply only when they end: records between a
  BeginTransactionRecord and an AbortTransactionRecord are dropped, and so are those of a
  transaction still open when the log ends (they are past the last stable offset);
- the voter set and kraft.version follow the KRaftVersion and Voters control records.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from kjbod.records.base import Record
from kjbod.records.codec import RecordRun
from kjbod.records.wire import (
    MODELLED_RECORDS,
    RunCollector,
    WireError,
    metadata_schemas_by_api_key,
    model_from_value,
    decode_metadata_value,
    read_frame,
)
from kjbod.kafka_formats.kraft_snapshot import (
    KraftSnapshot,
    SnapshotError,
    Voter,
    decode_control,
    read_kraft_snapshot,
)
from kjbod.kafka_formats.metadata_log import read_metadata_log
from kjbod.kafka_formats.partition_columns import PARTITION_FRAMES, decode_partition_records
from kjbod.kafka_formats.record_batch import CONTROL_KRAFT_VERSION, CONTROL_KRAFT_VOTERS, BatchError, RecordBatch

# Decoded column-wise into runs: the records a snapshot holds by the million.
RUN_RECORDS = frozenset({"PartitionRecord", "TopicRecord"})
PARTITION_API_KEY = 3
# Batches of fewer records are read record by record (the columns' fixed cost is not worth it).
_COLUMNS_FROM = 64
_BEGIN, _END, _ABORT = "BeginTransactionRecord", "EndTransactionRecord", "AbortTransactionRecord"


@dataclass
class ControllerMetadata:
    snapshot: KraftSnapshot
    entries: list[Record | RecordRun]
    records: int = 0  # modelled records in `entries`
    snapshot_records: int = 0  # data records in the snapshot
    log_records: int = 0  # data records read from the log past the snapshot
    end_offset: int = 0  # the offset after the last record read
    unmodelled: Counter[str] = field(default_factory=Counter)
    dropped_in_transactions: int = 0
    open_transaction: bool = False
    torn: str | None = None
    log_segments: int = 0
    kraft_version: int | None = None
    voters: tuple[Voter, ...] | None = None


class _Reader:
    """Turns data record values into entries, in order."""

    def __init__(self, result: ControllerMetadata) -> None:
        self.result = result
        self.target = result.entries
        self.pending: list[Record | RecordRun] | None = None  # an open metadata transaction
        self.pending_count = 0
        self.run: RunCollector | None = None
        self.schemas = metadata_schemas_by_api_key()
        self.uuid_texts: dict[bytes, str] = {}  # the uuids of PartitionRecords, as text

    def flush(self) -> None:
        if self.run is not None and self.run.count:
            self.target.append(self.run.run())
        self.run = None

    def add_batch(self, buf: bytes, spans: list[tuple[int, int, int]], where: str, from_offset: int) -> int:
        """Every record of a data batch at or after `from_offset`; returns how many.

        A snapshot's batch is mostly PartitionRecords: those are decoded for the whole batch at
        once (partition_columns), then every record is taken in order, the PartitionRecords
        from those columns and the rest one by one."""
        if len(spans) < _COLUMNS_FROM or spans[0][0] < from_offset:
            return self._add_each(buf, spans, where, from_offset)
        table = np.array(spans, np.int64)
        starts, ends = table[:, 1], table[:, 2]
        data = np.frombuffer(buf, np.uint8)
        framed = (starts >= 0) & (ends - starts >= 3)
        at = np.where(framed, starts, 0)
        last = len(data) - 1
        frame = (data[np.minimum(at, last)].astype(np.int64) << 16) | (data[np.minimum(at + 1, last)].astype(np.int64) << 8) | data[np.minimum(at + 2, last)]
        version = np.full(len(spans), -1, np.int64)
        for value, partition_version in PARTITION_FRAMES.items():
            version[framed & (frame == value)] = partition_version
        decoded = {}
        for partition_version in np.unique(version[version >= 0]).tolist():
            rows = np.flatnonzero(version == partition_version)
            decoded[partition_version] = (rows, *decode_partition_records(buf, starts[rows] + 3, ends[rows], partition_version, self.uuid_texts))
        bounds = [0, *(np.flatnonzero(np.diff(version)) + 1).tolist(), len(spans)]
        spec = self.schemas[PARTITION_API_KEY]
        for lo, hi in zip(bounds, bounds[1:]):
            segment_version = int(version[lo])
            if segment_version < 0:
                self._add_each(buf, spans[lo:hi], where, from_offset)
                continue
            rows, columns, odd = decoded[segment_version]
            first = int(np.searchsorted(rows, lo))
            run = self.run
            if run is None or run.spec is not spec or run.version != segment_version:
                self.flush()
                run = self.run = RunCollector(spec, segment_version)
            part = {name: column[first : first + hi - lo] for name, column in columns.items()}
            for index in (np.flatnonzero(odd[first : first + hi - lo])).tolist():
                # An unusual record: the generated decoder reads it, and names what is wrong.
                offset, start, end = spans[lo + index]
                single = RunCollector(spec, segment_version)
                try:
                    single.collect(buf, start + 3, end)
                except WireError as exc:
                    raise SnapshotError(f"{where}: the record at offset {offset} cannot be read: {exc}") from None
                for name, values in single.run().columns.items():
                    part[name][index] = values[0]
            run.extend(part, hi - lo)
            if self.pending is not None:
                self.pending_count += hi - lo
            else:
                self.result.records += hi - lo
        return len(spans)

    def _add_each(self, buf: bytes, spans: list[tuple[int, int, int]], where: str, from_offset: int) -> int:
        """add_batch one record at a time: a record continuing the open run (same frame:
        version 1, api key, record version) is decoded straight into its columns."""
        count = 0
        run = self.run
        prefix = run.frame if run is not None else None
        for offset, start, end in spans:
            if offset < from_offset:
                continue
            if start < 0:
                raise SnapshotError(f"{where}: the record at offset {offset} has no value")
            count += 1
            if prefix is not None and buf[start : start + 3] == prefix:
                try:
                    run.collect(buf, start + 3, end)  # type: ignore[union-attr]
                except WireError as exc:
                    raise SnapshotError(f"{where}: the record at offset {offset} cannot be read: {exc}") from None
                if self.pending is not None:
                    self.pending_count += 1
                else:
                    self.result.records += 1
                continue
            self.add(offset, buf, start, end, where)
            run = self.run
            prefix = run.frame if run is not None else None
        return count

    def add(self, offset: int, buf: bytes, start: int, end: int, where: str) -> None:
        try:
            api_key, version, body = read_frame(buf, start, end)
            spec = self.schemas.get(api_key)
            name = spec.name if spec else f"UnknownRecord(apiKey={api_key})"
            if spec is not None and spec.valid_versions.high is not None and version > spec.valid_versions.high:
                # A newer Kafka's version of a record (fields kjbod cannot know): counted under
                # its version and left out, as an unknown record type is; the import goes on.
                name = f"{name} v{version}"
            if spec is None or name not in MODELLED_RECORDS:
                self._unmodelled(name, offset, where)
                return
            if name in RUN_RECORDS:
                run = self.run
                if run is None or run.spec is not spec or run.version != version:
                    self.flush()
                    if version not in spec.valid_versions:
                        raise WireError(f"{name} version {version} is not one this schema knows")
                    run = self.run = RunCollector(spec, version)
                run.collect(buf, body, end)
            else:
                self.flush()
                record = model_from_value(decode_metadata_value(buf, start, end))
                assert record is not None
                self.target.append(record)
        except (WireError, ValueError) as exc:
            raise SnapshotError(f"{where}: the record at offset {offset} cannot be read: {exc}") from None
        if self.pending is not None:
            self.pending_count += 1
        else:
            self.result.records += 1

    def _unmodelled(self, name: str, offset: int, where: str) -> None:
        """Metadata transactions are followed as OffsetControlManager replays them; any other
        record kjbod does not model is counted."""
        if name == _BEGIN:
            if self.pending is not None:
                raise SnapshotError(f"{where}: a BeginTransactionRecord at offset {offset} inside an open transaction")
            self.flush()
            self.pending, self.pending_count = [], 0
            self.target = self.pending
        elif name in (_END, _ABORT):
            if self.pending is None:
                raise SnapshotError(f"{where}: an {name} at offset {offset} without an open transaction")
            self.flush()
            self._close_transaction(commit=name == _END)
        else:
            self.result.unmodelled[name] += 1

    def _close_transaction(self, *, commit: bool) -> None:
        assert self.pending is not None
        if commit:
            self.result.entries.extend(self.pending)
            self.result.records += self.pending_count
        else:
            self.result.dropped_in_transactions += self.pending_count
        self.pending, self.pending_count = None, 0
        self.target = self.result.entries

    def finish(self) -> None:
        self.flush()
        if self.pending is not None:
            self.result.open_transaction = True
            self._close_transaction(commit=False)


def _read_batch(reader: _Reader, batch: RecordBatch, where: str, result: ControllerMetadata, *, from_offset: int) -> int:
    count = 0
    try:
        if batch.is_control:
            for record in batch.records():
                if record.offset < from_offset:
                    continue
                control = decode_control(record.offset, record.key, record.value, batch.position)
                if control.control_type == CONTROL_KRAFT_VERSION and control.data is not None:
                    result.kraft_version = control.data["kRaftVersion"]
                elif control.control_type == CONTROL_KRAFT_VOTERS and control.data is not None:
                    result.voters = tuple(Voter.from_json(v) for v in control.data["voters"])
            return 0
        buf, spans = batch.value_spans()
        count = reader.add_batch(buf, spans, where, from_offset)
    except BatchError as exc:
        raise SnapshotError(f"{where}: {exc}") from None
    return count


def read_controller_metadata(snapshot_path: Path, log_dir: Path | None = None) -> ControllerMetadata:
    """Read a snapshot and, optionally, the log segments after it. Raises SnapshotError (one
    line naming the file and where) for anything that is not what Kafka would have written."""
    snapshot = read_kraft_snapshot(snapshot_path)
    result = ControllerMetadata(snapshot, [], kraft_version=snapshot.kraft_version, voters=snapshot.voters)
    reader = _Reader(result)
    for batch in snapshot.batches:
        if not batch.is_control:
            result.snapshot_records += _read_batch(reader, batch, str(snapshot_path), result, from_offset=0)
    reader.flush()
    if reader.pending is not None:
        raise SnapshotError(f"{snapshot_path}: a metadata transaction is open inside the snapshot; Kafka never writes one")
    if log_dir is None:
        result.end_offset = snapshot.snapshot_id.end_offset if snapshot.snapshot_id else result.snapshot_records
        return result
    if snapshot.snapshot_id is None:
        raise SnapshotError(
            f"{snapshot_path.name} is not named <end offset>-<epoch>.checkpoint, so the log offset it ends at is unknown; "
            "keep the snapshot's name as the controller wrote it"
        )
    start = snapshot.snapshot_id.end_offset
    log = read_metadata_log(log_dir, from_offset=start)
    result.log_segments = len(log.segments)
    result.torn = log.describe_torn()
    expected = start
    for item in log.batches:
        batch = item.batch
        if batch.base_offset > expected:
            raise SnapshotError(
                f"{item.segment}: the log continues at offset {batch.base_offset}, but the records from offset {expected} "
                "are missing (the log must reach back to the snapshot's end offset)"
            )
        if batch.next_offset > expected:
            result.log_records += _read_batch(reader, batch, str(item.segment), result, from_offset=expected)
            expected = batch.next_offset
    reader.finish()
    result.end_offset = max(expected, start)
    return result
