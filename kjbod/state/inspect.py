"""Looking inside a cluster state: dumping its records and verifying it end to end."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from kjbod.errors import CorruptStateError, ReplayError
from kjbod.image import EMPTY_IMAGE, Delta, Image
from kjbod.log.lock import DEFAULT_LOCK_TIMEOUT, StateLock
from kjbod.log.record_log import RecordLog, TornTail
from kjbod.image.columns import PartitionTable
from kjbod.state.snapshots.records import list_snapshots
from kjbod.records import Record
from kjbod.records.codec import RecordDecodeError, RecordRun, decode_records
from kjbod.state.marker import check_state_directory
from kjbod.state.snapshots import AUTO_SNAPSHOT_RECORDS, load_snapshot

Notify = Callable[[str], None]


def iter_records(
    path: Path, *, from_offset: int = 0, lock_timeout: float = DEFAULT_LOCK_TIMEOUT
) -> Iterator[tuple[int, Record]]:
    """Every committed record at or after `from_offset`, with its offset (no image is built)."""
    check_state_directory(path)
    with StateLock(path, exclusive=False, timeout=lock_timeout):
        log = RecordLog(path)
        for batch in log.batches(from_offset=from_offset):
            try:
                records = decode_records(batch.payload)
            except RecordDecodeError as exc:
                raise CorruptStateError(
                    f"the record log in {path} holds an unreadable batch at offset {batch.base_offset}: {exc}"
                ) from None
            for index, record in enumerate(records):
                offset = batch.base_offset + index
                if offset >= from_offset:
                    yield offset, record


def _materialized(image: Image) -> list[Record]:
    records: list[Record] = []
    for entry in image.write():
        records.extend(entry.records() if isinstance(entry, RecordRun) else [entry])
    return records


@dataclass
class VerifyReport:
    segments: int = 0
    records: int = 0
    next_offset: int = 0
    snapshots_verified: list[str] = field(default_factory=list)
    torn_tail: TornTail | None = None
    problems: list[str] = field(default_factory=list)
    # Records after the newest columnar snapshot that verified (all records when none did): the
    # next write takes a snapshot once this reaches `auto_snapshot_records`.
    records_since_snapshot: int = 0
    auto_snapshot_records: int = AUTO_SNAPSHOT_RECORDS
    # Snapshots of records, written by kjbod before columnar snapshots (the next write replaces them).
    record_snapshots: list[str] = field(default_factory=list)
    newest_columnar_end: int = 0


def verify_state(path: Path, *, lock_timeout: float = DEFAULT_LOCK_TIMEOUT) -> VerifyReport:
    """Read every batch, validate every record, replay the whole log from empty, and check that
    every snapshot rebuilds exactly the image the log gives at its offset."""
    check_state_directory(path)
    report = VerifyReport()
    with StateLock(path, exclusive=False, timeout=lock_timeout):
        log = RecordLog(path)
        report.segments = len(log.segments)
        snapshots = sorted(list_snapshots(path))
        image = EMPTY_IMAGE
        delta = Delta(image)
        try:
            for batch in log.batches():
                for index, record in enumerate(decode_records(batch.payload)):
                    delta.replay(record, batch.base_offset + index)
                report.records += batch.record_count
                while snapshots and snapshots[0][0] <= batch.next_offset:
                    end_offset, snapshot = snapshots.pop(0)
                    if end_offset == batch.next_offset:
                        image = delta.apply()
                        delta = Delta(image)
                        _check_snapshot(snapshot, end_offset, image, report)
                    else:
                        report.problems.append(f"snapshot {snapshot.name} does not end at a commit boundary")
        except RecordDecodeError as exc:
            raise CorruptStateError(f"the record log in {path} holds an unreadable batch: {exc}") from None
        except ReplayError as exc:
            raise CorruptStateError(f"the record log in {path} does not replay: {exc}") from None
        report.next_offset = log.next_offset or 0
        report.torn_tail = log.torn_tail
        report.records_since_snapshot = report.next_offset - report.newest_columnar_end
        for end_offset, snapshot in snapshots:
            report.problems.append(
                f"snapshot {snapshot.name} covers offsets up to {end_offset - 1}, beyond the log's end"
            )
    return report


def _check_snapshot(snapshot: Path, end_offset: int, expected: Image, report: VerifyReport) -> None:
    try:
        loaded = load_snapshot(snapshot, end_offset)
    except (CorruptStateError, ReplayError, RecordDecodeError) as exc:
        report.problems.append(str(exc))
        return
    if loaded.columnar:
        same = list(loaded.image.write_without_topics()) == list(expected.write_without_topics()) and (
            loaded.image.topics.table.by_topic_id().same_as(PartitionTable.from_topics(expected.topics.by_id.values()).by_topic_id())
        )
    else:
        same = _materialized(loaded.image) == _materialized(expected)
    if not same:
        report.problems.append(
            f"snapshot {snapshot.name} does not match the state the log gives at offset {end_offset - 1}"
        )
        return
    report.snapshots_verified.append(snapshot.name)
    if loaded.columnar:
        report.newest_columnar_end = end_offset
    else:
        report.record_snapshots.append(snapshot.name)
