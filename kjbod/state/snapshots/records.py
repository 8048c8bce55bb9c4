"""Snapshots: the records that rebuild an image, framed like the log.

A snapshot file is named after the first offset it does *not* contain (Kafka's snapshot id),
`00000000000000012345.snapshot`, and holds a control batch with its header, data batches of
records, and a control batch with its footer (the record count). It is written to a temporary
file, fsynced, renamed into place and the directory fsynced, so it exists whole or not at all;
loading still checks every checksum, the header and the footer, and a damaged snapshot is
passed over for an older one.
"""

from __future__ import annotations

import json
import mmap
import os
import re
from collections.abc import Iterable, Iterator
from pathlib import Path

from kjbod.common.durable import atomic_file, write_all
from kjbod.errors import CorruptStateError
from kjbod.log.framing import ATTR_CONTROL, Batch, ScanStop, encode_batch, read_batch
from kjbod.records import Record
from kjbod.records.codec import RecordDecodeError, RecordRun, batch_entries, decode_entries, encode_entries, entry_count

SNAPSHOT_SUFFIX = ".snapshot"
_SNAPSHOT_NAME = re.compile(r"^(\d{20})\.snapshot$")
RECORDS_PER_BATCH = 5000


def snapshot_name(end_offset: int) -> str:
    return f"{end_offset:020d}{SNAPSHOT_SUFFIX}"


def list_snapshots(directory: Path) -> list[tuple[int, Path]]:
    """Snapshots in the directory, newest first."""
    found = []
    for entry in os.scandir(directory):
        match = _SNAPSHOT_NAME.match(entry.name)
        if match:
            found.append((int(match.group(1)), Path(entry.path)))
    return sorted(found, reverse=True)


def write_snapshot(
    directory: Path, end_offset: int, entries: Iterable[Record | RecordRun], timestamp_ms: int
) -> Path:
    path = directory / snapshot_name(end_offset)
    with atomic_file(path) as fd:
        header = json.dumps({"endOffset": end_offset, "timestampMs": timestamp_ms}).encode()
        write_all(fd, encode_batch(0, 0, header, timestamp_ms, ATTR_CONTROL))
        count = 0
        for batch in batch_entries(entries, RECORDS_PER_BATCH):
            payload, records = encode_entries(batch)
            write_all(fd, encode_batch(count, records, payload, timestamp_ms))
            count += records
        footer = json.dumps({"recordCount": count}).encode()
        write_all(fd, encode_batch(count, 0, footer, timestamp_ms, ATTR_CONTROL))
    return path


def damaged_snapshot(path: Path, reason: str) -> CorruptStateError:
    return CorruptStateError(f"snapshot {path.name} is damaged: {reason}")


def read_header(path: Path) -> dict:
    """The snapshot's header (its first batch): the end offset, and for a columnar snapshot
    (kjbod/state/snapshots/columnar.py) its layout. Reads nothing else."""
    with path.open("rb") as handle:
        head = handle.read(64 * 1024)
    if not head:
        raise damaged_snapshot(path, "the file is empty")
    found = read_batch(head, 0)
    if isinstance(found, ScanStop):
        if found.torn and len(head) == 64 * 1024:  # a header larger than what was read
            found = read_batch(path.read_bytes(), 0)
        if isinstance(found, ScanStop):
            raise damaged_snapshot(path, f"{found.reason} at byte {found.position}")
    if not found.is_control:
        raise damaged_snapshot(path, "its header or footer is missing")
    try:
        header = json.loads(found.payload)
    except ValueError as exc:
        raise damaged_snapshot(path, f"unreadable header or footer ({exc})") from None
    if not isinstance(header, dict):
        raise damaged_snapshot(path, "unreadable header or footer (not an object)")
    return header


def _batches(path: Path, buf: bytes | mmap.mmap) -> list[Batch]:
    batches = []
    position = 0
    while position < len(buf):
        found = read_batch(buf, position)
        if isinstance(found, ScanStop):
            raise damaged_snapshot(path, f"{found.reason} at byte {found.position}")
        batches.append(found)
        position += found.size
    return batches


def read_snapshot(path: Path, end_offset: int) -> Iterator[list[Record | RecordRun]]:
    """The snapshot's entries (records and runs), batch by batch. The whole file's structure (checksums, header,
    footer, counts) is verified before the first batch is returned."""
    with path.open("rb") as handle:
        if os.fstat(handle.fileno()).st_size == 0:
            raise damaged_snapshot(path, "the file is empty")
        buf = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
    try:
        batches = _batches(path, buf)
    finally:
        buf.close()
    if len(batches) < 2 or not batches[0].is_control or not batches[-1].is_control:
        raise damaged_snapshot(path, "its header or footer is missing")
    try:
        header = json.loads(batches[0].payload)
        footer = json.loads(batches[-1].payload)
    except ValueError as exc:
        raise damaged_snapshot(path, f"unreadable header or footer ({exc})") from None
    if header.get("endOffset") != end_offset:
        raise damaged_snapshot(path, f"its header says end offset {header.get('endOffset')}, its name {end_offset}")
    data = batches[1:-1]
    expected = 0
    for batch in data:
        if batch.is_control or batch.base_offset != expected:
            raise damaged_snapshot(path, f"unexpected batch at byte {batch.position}")
        expected = batch.next_offset
    if footer.get("recordCount") != expected:
        raise damaged_snapshot(path, f"its footer counts {footer.get('recordCount')} records, the file holds {expected}")
    for batch in data:
        try:
            entries = decode_entries(batch.payload)
        except RecordDecodeError as exc:
            raise damaged_snapshot(path, f"batch at byte {batch.position}: {exc}") from None
        held = sum(entry_count(entry) for entry in entries)
        if held != batch.record_count:
            raise damaged_snapshot(path, f"batch at byte {batch.position} holds {held} records, not {batch.record_count}")
        yield entries
