"""The snapshots of a cluster state, all in this package: loading the newest valid one (of either
layout), writing a columnar one, when to write one without being asked, and which to keep.

The record log is the source of truth; a snapshot is the image at a commit boundary, kept so
that opening the state does not replay the whole log. kjbod writes columnar snapshots
(`columnar`), which open in milliseconds; snapshots of records (`records`), written by kjbod
before them, still load (slowly, as before) until the next write replaces them. Both files are
framed like the log (kjbod.log.framing) and share their name and header. Kafka's own snapshot
format is another thing: kjbod.kafka_formats.kraft_snapshot.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from kjbod.common.callbacks import Progress, ignore
from kjbod.errors import CorruptStateError, ReplayError
from kjbod.image import EMPTY_IMAGE, Delta, Image
from kjbod.image.columns import UNKNOWN_SIZE, PartitionTable
from kjbod.image.topics import TopicsImage
from kjbod.state.snapshots.columnar import ColumnarSnapshot, is_columnar, read_columnar_snapshot, write_columnar_snapshot
from kjbod.state.snapshots.records import list_snapshots, read_header, read_snapshot
from kjbod.records.codec import RecordDecodeError, entry_count

# A write that leaves this many records or more after the newest columnar snapshot writes a new
# one, so that no state opens slowly because nobody ran `metadata snapshot`. On a million
# partitions, reading this many records on top of a snapshot (and patching the columns with them)
# adds a few tenths of a second to a read command, and writing a snapshot about a second to the
# write that takes it (bench/bench_open.py measures both).
AUTO_SNAPSHOT_RECORDS = 5_000
# Snapshots kept: the newest, and one before it in case the newest is found damaged (the one the
# image was loaded from where there is one, so that a damaged snapshot does not outlive a good one).
KEEP_SNAPSHOTS = 2

Notify = Callable[[str], None]


@dataclass(frozen=True)
class LoadedSnapshot:
    image: Image  # at offset end_offset - 1
    path: Path
    end_offset: int
    columnar: bool
    # Where the log after the snapshot begins (segment base offset, byte), when it says.
    log_position: tuple[int, int] | None


def load_snapshot(path: Path, end_offset: int, progress: Progress = ignore) -> LoadedSnapshot:
    """The image a snapshot holds. Raises CorruptStateError (or ReplayError, RecordDecodeError)
    for a damaged one."""
    progress(f"Reading the snapshot {path.name}")
    header = read_header(path)
    if is_columnar(header):
        snapshot = read_columnar_snapshot(path, end_offset)
        progress(f"Loading the snapshot: {snapshot.record_count:,} records")
        progress("Building the image from the snapshot")
        return LoadedSnapshot(image_of(snapshot), path, end_offset, True, snapshot.log_position)
    delta = Delta(EMPTY_IMAGE)
    loaded = 0
    for entries in read_snapshot(path, end_offset):
        for entry in entries:
            delta.replay_entry(entry, end_offset - 1)
        if progress is not ignore:  # counting costs a pass over the batch
            loaded += sum(entry_count(entry) for entry in entries)
            progress(f"Loading the snapshot: {loaded:,} records")
    progress("Building the image from the snapshot")
    # The snapshot's offset is its end, whatever its last record replayed as.
    image = dataclasses.replace(delta.apply(), offset=end_offset - 1)
    return LoadedSnapshot(image, path, end_offset, False, None)


def image_of(snapshot: ColumnarSnapshot) -> Image:
    """The image of a columnar snapshot: its records replayed, its topics read from its columns."""
    delta = Delta(EMPTY_IMAGE)
    for entry in snapshot.entries:
        delta.replay_entry(entry, snapshot.end_offset - 1)
    rest = delta.apply()
    try:
        table = PartitionTable.from_arrays(snapshot.arrays, snapshot.strings)
    except ValueError as exc:
        raise CorruptStateError(f"snapshot {snapshot.path.name} is damaged: {exc}") from None
    return dataclasses.replace(rest, offset=snapshot.end_offset - 1, topics=TopicsImage.from_table(table))


def load_newest(directory: Path, *, notify: Notify = ignore, progress: Progress = ignore) -> LoadedSnapshot | None:
    """The newest snapshot that loads; damaged ones are passed over, saying so."""
    for end_offset, path in list_snapshots(directory):
        try:
            return load_snapshot(path, end_offset, progress)
        except (CorruptStateError, ReplayError, RecordDecodeError) as exc:
            notify(f"Skipping {path.name}: {exc}; using an older snapshot or the log.")
        except FileNotFoundError:
            continue  # removed between listing and opening
    return None


def record_count(image: Image, table: PartitionTable) -> int:
    """How many records the image is, as a snapshot of records would hold it."""
    rest = sum(1 for _ in image.write_without_topics())
    sizes = int((table.size != UNKNOWN_SIZE).sum())
    return rest + table.topic_count + table.partition_count + sizes + len(table.log_row)


def write_snapshot(directory: Path, image: Image, log_position: tuple[int, int] | None, *, keep: Path | None = None) -> Path:
    """Write a columnar snapshot of the image (which ends a commit), then drop the older ones
    but `keep` (a snapshot known to load: the one the image came from) or, without it, all but
    the newest KEEP_SNAPSHOTS."""
    table = image.topics.table.by_topic_id()
    path = write_columnar_snapshot(
        directory,
        image.next_offset,
        image.write_without_topics(),
        table.arrays(),
        table.strings(),
        record_count=record_count(image, table),
        timestamp_ms=time.time_ns() // 1_000_000,
        log_position=log_position,
    )
    older = [other for _, other in list_snapshots(directory) if other != path]
    kept = {keep} if keep is not None and keep in older else set(older[: KEEP_SNAPSHOTS - 1])
    for other in older:
        if other not in kept:
            other.unlink(missing_ok=True)
    return path


def snapshot_due(records_since: int) -> bool:
    return records_since >= AUTO_SNAPSHOT_RECORDS
