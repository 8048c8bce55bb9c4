"""`kjbod metadata dump --kafka-file FILE`: any Kafka metadata file as JSON-ready rows, like
`kafka-dump-log --cluster-metadata-decoder`.

A KRaft snapshot, a `bootstrap.checkpoint` and a `__cluster_metadata` log segment are all
streams of record batches v2, so one reader serves them all. For each batch it gives a row

    {"batch": {"baseOffset", "lastOffset", "count", "position", "size", "partitionLeaderEpoch",
               "isControl", "isTransactional", "compression", "createTime", "crc", "crcValid", ...}}

then one row per record: `{"offset", "type", "version", "data"}` as `kjbod metadata dump` prints
kjbod's own log (type is Kafka's record name, data what Kafka's JSON converters print), with
`"control": "SNAPSHOT_HEADER"` and the like on control records.

A batch whose CRC does not match is still decoded (its lengths are intact) with `crcValid`
false, and reading goes on; a batch whose length is impossible ends the dump. Either is a
problem the caller reports with its byte position; an incomplete last batch (an interrupted
write) is a `{"torn": ...}` row, not a problem.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kjbod.errors import UserError
from kjbod.records.wire import WireError, decode_metadata_value, schemas
from kjbod.kafka_formats.kraft_snapshot import CONTROL_SCHEMAS, SnapshotError, decode_control
from kjbod.kafka_formats.record_batch import BatchError, RecordBatch, TornBatch, read_batch_at


@dataclass
class DumpReport:
    """What the rows could not show: damage, by byte position."""

    path: Path
    problems: list[str] = field(default_factory=list)
    batches: int = 0
    records: int = 0


def _batch_row(batch: RecordBatch, crc_valid: bool) -> dict[str, Any]:
    return {
        "batch": {
            "baseOffset": batch.base_offset,
            "lastOffset": batch.last_offset,
            "count": batch.records_count,
            "position": batch.position,
            "size": batch.size,
            "magic": batch.magic,
            "partitionLeaderEpoch": batch.partition_leader_epoch,
            "isControl": batch.is_control,
            "isTransactional": batch.is_transactional,
            "compression": batch.compression,
            "timestampType": batch.timestamp_type,
            "createTime": batch.max_timestamp,
            "producerId": batch.producer_id,
            "producerEpoch": batch.producer_epoch,
            "baseSequence": batch.base_sequence,
            "crc": batch.crc,
            "crcValid": crc_valid,
        }
    }


def _record_rows(batch: RecordBatch, report: DumpReport) -> Iterator[dict[str, Any]]:
    for record in batch.records():
        report.records += 1
        if batch.is_control:
            try:
                control = decode_control(record.offset, record.key, record.value, batch.position)
            except SnapshotError as exc:
                report.problems.append(str(exc))
                yield {"offset": record.offset, "control": "UNKNOWN", "error": str(exc)}
                continue
            yield {
                "offset": record.offset,
                "type": CONTROL_SCHEMAS.get(control.control_type, control.type_name),
                "version": (control.data or {}).get("version"),
                "data": control.data,
                "control": control.type_name,
            }
            continue
        if record.value is None:
            problem = f"at byte {batch.position}: the record at offset {record.offset} has no value"
            report.problems.append(problem)
            yield {"offset": record.offset, "error": problem}
            continue
        try:
            value = decode_metadata_value(record.value)
        except WireError as exc:
            problem = f"at byte {batch.position}: the record at offset {record.offset} cannot be decoded: {exc}"
            report.problems.append(problem)
            yield {"offset": record.offset, "error": problem}
            continue
        yield {
            "offset": record.offset,
            "type": value.name,
            "version": value.version,
            "data": value.kafka_json() if value.spec is not None else None,
        }


def dump_rows(data: bytes, report: DumpReport) -> Iterator[dict[str, Any]]:
    """The rows of a batch stream; problems go into `report` as they are found."""
    position = 0
    while position < len(data):
        try:
            batch = read_batch_at(data, position, verify_crc=False)
        except BatchError as exc:
            report.problems.append(f"{exc}; the rest of the file ({len(data) - position} bytes) cannot be read")
            return
        if isinstance(batch, TornBatch):
            yield {"torn": {"position": batch.position, "bytes": batch.available, "batchSize": batch.needed, "description": batch.describe()}}
            return
        report.batches += 1
        crc_valid = batch.crc_valid
        if not crc_valid:
            report.problems.append(f"at byte {batch.position}: CRC mismatch in the batch at offset {batch.base_offset}")
        yield _batch_row(batch, crc_valid)
        try:
            yield from _record_rows(batch, report)
        except BatchError as exc:
            report.problems.append(str(exc))
        position += batch.size


def dump_kafka_file(path: Path) -> tuple[Iterator[dict[str, Any]], DumpReport]:
    """Rows for `path` (read lazily) and the report they fill in. Raises OSError if unreadable."""
    data = path.read_bytes()
    report = DumpReport(path)
    return dump_rows(data, report), report


# The command -----------------------------------------------------------------------------------


def kafka_type_names(names: Sequence[str]) -> set[str]:
    """Kafka record names from --type: PartitionRecord or PARTITION_RECORD, any Kafka record."""
    known = {name: name for name in schemas()}
    known.update({re.sub(r"(?<!^)(?=[A-Z])", "_", name).upper(): name for name in schemas()})
    wanted = set()
    for name in names:
        if name not in known:
            raise UserError(f"Unknown record type {name}. Known types: {', '.join(sorted(schemas()))}")
        wanted.add(known[name])
    return wanted


@dataclass
class KafkaFileDump:
    """`metadata dump --kafka-file`: the rows asked for (read lazily, once), and the report they
    fill in as they are read."""

    path: Path
    rows: Iterator[dict[str, Any]]
    report: DumpReport

    def to_json(self) -> dict[str, Any]:
        """The whole dump as one document (reads every row)."""
        listed = list(self.rows)
        report = self.report
        return {"file": str(self.path), "batches": report.batches, "records": report.records, "rows": listed, "problems": report.problems}

    def check(self) -> None:
        """Once the rows are read: damage is an error naming the first problem's byte."""
        problems = self.report.problems
        if problems:
            more = f" (and {len(problems) - 1} more problem(s))" if len(problems) > 1 else ""
            raise UserError(f"{self.path} is damaged {problems[0]}{more}")


def dump_file(path: Path, *, from_offset: int = 0, types: Sequence[str] = ()) -> KafkaFileDump:
    """The rows of `path` at or after `from_offset`: with `types`, only records of those types
    (and no batch rows); a torn end is always shown."""
    wanted = kafka_type_names(types)
    try:
        rows, report = dump_kafka_file(path)
    except OSError as exc:
        raise UserError(f"Cannot read {path}: {exc.strerror or exc}") from None

    def selected(row: dict) -> bool:
        batch = row.get("batch")
        if batch is not None:
            return not wanted and batch["lastOffset"] >= from_offset
        if "torn" in row:
            return True
        return row["offset"] >= from_offset and (not wanted or row.get("type") in wanted)

    return KafkaFileDump(path, (row for row in rows if selected(row)), report)
