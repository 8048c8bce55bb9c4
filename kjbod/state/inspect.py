"""Looking inside a cluster state: dumping its records and verifying it end to end."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from kjbod.errors import CorruptStateError, ReplayError
from kjbod.image import EMPTY_IMAGE, Delta, Image
from kjbod.log.lock import DEFAULT_LOCK_TIMEOUT, StateLock
from kjbod.log.record_log import RecordLog, TornTail
from kjbod.log.snapshot import list_snapshots, read_snapshot
from kjbod.records import Record
from kjbod.records.codec import RecordDecodeError, RecordRun, decode_records
from kjbod.state.marker import check_state_directory

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
        for end_offset, snapshot in snapshots:
            report.problems.append(
                f"snapshot {snapshot.name} covers offsets up to {end_offset - 1}, beyond the log's end"
            )
    return report


def _check_snapshot(snapshot: Path, end_offset: int, expected: Image, report: VerifyReport) -> None:
    delta = Delta(EMPTY_IMAGE)
    try:
        for entries in read_snapshot(snapshot, end_offset):
            for entry in entries:
                delta.replay_entry(entry, end_offset - 1)
    except (CorruptStateError, ReplayError, RecordDecodeError) as exc:
        report.problems.append(str(exc))
        return
    if _materialized(delta.apply()) != _materialized(expected):
        report.problems.append(
            f"snapshot {snapshot.name} does not match the state the log gives at offset {end_offset - 1}"
        )
        return
    report.snapshots_verified.append(snapshot.name)
