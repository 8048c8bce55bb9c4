"""Columnar snapshots: the image's bulk as arrays a command maps into memory and reads in place.

A snapshot of records (kjbod/state/snapshots/records.py) must be decoded and replayed whole before a command
can answer anything: seconds for a million partitions. A columnar snapshot holds the same image
as named numpy arrays (one row per partition, one entry per replica; kjbod/image/columns.py says
what they are) and the small rest (features, brokers, configs, the clock) as records. Opening it
checks every checksum and maps the file: no array is copied or decoded, and a command reads only
the rows it needs.

The file is framed like the log and like a snapshot of records, batch by batch, each with its
CRC32C, and has the same name (`<end offset>.snapshot`) and the same header:

    control batch  header: {"endOffset", "timestampMs", "layout": "columns", "layoutVersion": 1,
                   "logPosition": [segment base offset, byte] where the log after the snapshot
                   starts, or null}
    data batch     the records of the small rest (a batch payload as in the log)
    control batch  one per array: zero padding, then the array's bytes (little-endian), so that
                   each array of 4 KiB or more starts on a 64-byte boundary of the file
    control batch  footer: {"recordCount", "columns": [{"name", "dtype", "length", "offset"}],
                   "strings": {...}}

An older kjbod reading this file finds control batches where it expects records, reports the
snapshot as damaged and replays the log instead. numpy's own .npy format would do for one array
but has no checksum and no place for the rest; Arrow IPC would map as well, but importing pyarrow
costs more than a whole read command may take, and numpy is imported anyway.
"""

from __future__ import annotations

import json
import mmap
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import orjson

from kjbod.common.durable import atomic_file, write_all
from kjbod.log.framing import ATTR_CONTROL, HEADER_SIZE, ScanStop, encode_batch, encode_batch_header, read_batch
from kjbod.state.snapshots.records import damaged_snapshot, snapshot_name
from kjbod.records import Record
from kjbod.records.codec import RecordDecodeError, RecordRun, decode_entries, encode_entries, entry_count

LAYOUT = "columns"
LAYOUT_VERSION = 1
ALIGNMENT = 64
ALIGN_FROM_BYTES = 4096


@dataclass(frozen=True)
class ColumnarSnapshot:
    path: Path
    end_offset: int
    # Where the log after the snapshot starts: (segment base offset, byte), if known.
    log_position: tuple[int, int] | None
    # The image's small rest, as records.
    entries: list[Record | RecordRun]
    # The arrays, by name: read-only views of the mapped file.
    arrays: Mapping[str, np.ndarray]
    strings: Mapping[str, list[str]]
    # How many records the snapshot stands for (what a snapshot of records would hold).
    record_count: int


def write_columnar_snapshot(
    directory: Path,
    end_offset: int,
    entries: Iterable[Record | RecordRun],
    arrays: Mapping[str, np.ndarray],
    strings: Mapping[str, list[str]],
    *,
    record_count: int,
    timestamp_ms: int,
    log_position: tuple[int, int] | None,
) -> Path:
    """Write the snapshot beside its place, fsync it, rename it into place, fsync the directory:
    it exists whole or not at all."""
    path = directory / snapshot_name(end_offset)
    with atomic_file(path) as fd:
        header = {
            "endOffset": end_offset,
            "timestampMs": timestamp_ms,
            "layout": LAYOUT,
            "layoutVersion": LAYOUT_VERSION,
            "logPosition": list(log_position) if log_position is not None else None,
        }
        position = _write(fd, encode_batch(0, 0, json.dumps(header).encode(), timestamp_ms, ATTR_CONTROL), 0)
        payload, records = encode_entries(list(entries))
        position = _write(fd, encode_batch(0, records, payload, timestamp_ms), position)
        columns = []
        for name, array in arrays.items():
            data = np.ascontiguousarray(array, dtype=array.dtype.newbyteorder("<"))
            aligned = data.nbytes >= ALIGN_FROM_BYTES  # small arrays are read in a moment, aligned or not
            padding = b"\0" * ((-(position + HEADER_SIZE)) % ALIGNMENT) if aligned else b""
            raw = memoryview(data).cast("B") if data.nbytes else b""
            columns.append({"name": name, "dtype": data.dtype.str, "length": len(data), "offset": position + HEADER_SIZE + len(padding)})
            header_bytes = encode_batch_header(records, 0, [padding, raw], timestamp_ms, ATTR_CONTROL)
            write_all(fd, header_bytes)
            write_all(fd, padding)
            write_all(fd, raw)
            position += len(header_bytes) + len(padding) + data.nbytes
        footer = {"recordCount": record_count, "columns": columns, "strings": {k: list(v) for k, v in strings.items()}}
        _write(fd, encode_batch(records, 0, json.dumps(footer, separators=(",", ":")).encode(), timestamp_ms, ATTR_CONTROL), position)
    return path


def _write(fd: int, data: bytes, position: int) -> int:
    write_all(fd, data)
    return position + len(data)


def _release(mapped: mmap.mmap, start: int, length: int) -> None:
    """Drop a checked batch's whole pages from this process: checking the checksums reads every
    page of the file, but a command should hold only the pages it reads. The mapping is of a file
    opened read-only, so the pages stay in the page cache and come back when a column is read."""
    if not hasattr(mmap, "MADV_DONTNEED"):
        return
    first = -(-start // mmap.PAGESIZE) * mmap.PAGESIZE
    end = (start + length) // mmap.PAGESIZE * mmap.PAGESIZE
    if end > first:
        mapped.madvise(mmap.MADV_DONTNEED, first, end - first)


def is_columnar(header: Mapping[str, Any]) -> bool:
    return header.get("layout") == LAYOUT


def read_columnar_snapshot(path: Path, end_offset: int) -> ColumnarSnapshot:
    """The snapshot, every checksum and the framing verified; the arrays map the file."""
    with path.open("rb") as handle:
        if os.fstat(handle.fileno()).st_size == 0:
            raise damaged_snapshot(path, "the file is empty")
        mapped = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
    view = memoryview(mapped)
    batches = []
    position = 0
    while position < len(view):  # each batch's pages are dropped once checked (_release)
        found = read_batch(view, position, copy=False)
        if isinstance(found, ScanStop):
            raise damaged_snapshot(path, f"{found.reason} at byte {found.position}")
        batches.append(found)
        position += found.size
        _release(mapped, found.position, found.size)
    if len(batches) < 3 or not batches[0].is_control or not batches[-1].is_control or batches[1].is_control:
        raise damaged_snapshot(path, "its header, records or footer are missing")
    try:
        header = orjson.loads(bytes(batches[0].payload))
        footer = orjson.loads(bytes(batches[-1].payload))
    except orjson.JSONDecodeError as exc:
        raise damaged_snapshot(path, f"unreadable header or footer ({exc})") from None
    if header.get("endOffset") != end_offset:
        raise damaged_snapshot(path, f"its header says end offset {header.get('endOffset')}, its name {end_offset}")
    if header.get("layoutVersion") != LAYOUT_VERSION:
        raise damaged_snapshot(path, f"its layout version {header.get('layoutVersion')} is not one this kjbod reads ({LAYOUT_VERSION})")
    try:
        entries = decode_entries(bytes(batches[1].payload))
    except RecordDecodeError as exc:
        raise damaged_snapshot(path, f"batch at byte {batches[1].position}: {exc}") from None
    if sum(entry_count(entry) for entry in entries) != batches[1].record_count:
        raise damaged_snapshot(path, f"batch at byte {batches[1].position} holds a different number of records than it says")
    columns = footer.get("columns")
    strings = footer.get("strings")
    if not isinstance(columns, list) or not isinstance(strings, dict) or len(columns) != len(batches) - 3:
        raise damaged_snapshot(path, "its footer does not describe its columns")
    arrays: dict[str, np.ndarray] = {}
    for column, batch in zip(columns, batches[2:-1]):
        try:
            dtype = np.dtype(column["dtype"])
            length, offset = int(column["length"]), int(column["offset"])
            start = batch.position + HEADER_SIZE
            if not (start <= offset and offset + length * dtype.itemsize == batch.position + batch.size) or not batch.is_control:
                raise ValueError("it does not fill its batch")
            arrays[str(column["name"])] = np.frombuffer(view, dtype=dtype, count=length, offset=offset)
        except (KeyError, TypeError, ValueError) as exc:
            raise damaged_snapshot(path, f"column {column.get('name') if isinstance(column, dict) else column!r} at byte {batch.position}: {exc}") from None
    log_position = header.get("logPosition")
    return ColumnarSnapshot(
        path=path,
        end_offset=end_offset,
        log_position=tuple(log_position) if isinstance(log_position, list) and len(log_position) == 2 else None,  # type: ignore[arg-type]
        entries=entries,
        arrays=arrays,
        strings=strings,
        record_count=int(footer.get("recordCount", 0)),
    )
