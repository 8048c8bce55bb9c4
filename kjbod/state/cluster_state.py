"""The cluster state directory and its write path.

A state directory holds a marker file, the record log's segments, snapshots and a lock file.
Opening it takes the lock (exclusive for writers, shared for readers), loads the newest valid
snapshot and replays the log after it. A write is: validate the records in a delta of the
current image, append them as one commit (framed, checksummed, fsynced), then publish the new
image. Nothing is appended if any record fails to replay.
"""

from __future__ import annotations

import bisect
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, TypeVar

from kjbod.common.callbacks import Progress, gc_paused, ignore
from kjbod.common.kafka_release import NEWEST, KafkaRelease
from kjbod.errors import CorruptStateError, ReplayError, UserError, WriteFailed
from kjbod.image import EMPTY_IMAGE, Delta, Image
from kjbod.log.acknowledged import RecordFailed
from kjbod.log.framing import Batch
from kjbod.log.lock import DEFAULT_LOCK_TIMEOUT, StateLock
from kjbod.log.record_log import RecordLog
from kjbod.state.snapshots.records import snapshot_name
from kjbod.records import Record
from kjbod.records.codec import RecordDecodeError, RecordRun, batch_entries, decode_entries, encode_entries, entry_count
from kjbod.state import snapshots
from kjbod.state.creation import creating, remove_stale_builds
from kjbod.state.marker import check_state_directory, is_state_directory
from kjbod.state.names import may_rename, sync_name_index

if TYPE_CHECKING:  # a command that only reads never loads the controller (run_operation imports it)
    from kjbod.controller import Controller, ControllerResult

RECORDS_PER_BATCH = 5000

T = TypeVar("T")
Notify = Callable[[str], None]


def _now_ms() -> int:
    return time.time_ns() // 1_000_000


@dataclass(frozen=True)
class Commit:
    first_offset: int
    last_offset: int

    @property
    def record_count(self) -> int:
        return self.last_offset - self.first_offset + 1


class ClusterState:
    """An open cluster state: its current image and, when opened for writing, the write path."""

    def __init__(
        self, path: Path, *, write: bool, create: bool, lock_timeout: float, notify: Notify, progress: Progress = ignore
    ) -> None:
        self.path = path
        self.writable = write
        self._notify = notify
        self._progress = progress
        if create and write and not is_state_directory(path):
            _create_empty(path, lock_timeout)
        check_state_directory(path)
        self._lock = StateLock(path, exclusive=write, timeout=lock_timeout)
        self._lock.acquire()
        try:
            if write:
                # A snapshot interrupted by a crash leaves its temporary file; under the
                # writer lock nobody else can be writing one.
                for stale in path.glob("*.snapshot.tmp"):
                    stale.unlink()
                remove_stale_builds(path)
            self.log = RecordLog(path)
            # The newest columnar snapshot's end offset (0: none), for automatic snapshots.
            self._snapshot_end = 0
            # The snapshot the image was built from (known to load), kept when a new one is written.
            self._good_snapshot: Path | None = None
            # The image lives as long as the command: keep the cyclic collector from rescanning
            # its objects while they are made and every time the operation allocates.
            with gc_paused(keep=True):
                self.image = self._load()
            if write:
                sync_name_index(path, self.image, check=True)
        except BaseException:
            self._lock.release()
            raise

    @classmethod
    def open(
        cls,
        path: Path | str,
        *,
        write: bool = False,
        create: bool = False,
        lock_timeout: float = DEFAULT_LOCK_TIMEOUT,
        notify: Notify = ignore,
        progress: Progress = ignore,
    ) -> ClusterState:
        return cls(Path(path), write=write, create=create, lock_timeout=lock_timeout, notify=notify, progress=progress)

    def close(self) -> None:
        self._lock.release()

    def __enter__(self) -> ClusterState:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.close()

    # Loading -----------------------------------------------------------------------------

    def _load(self) -> Image:
        loaded = snapshots.load_newest(self.path, notify=self._notify, progress=self._progress)
        image = loaded.image if loaded is not None else EMPTY_IMAGE
        if loaded is not None and loaded.columnar:
            self._snapshot_end = loaded.end_offset
        self._good_snapshot = loaded.path if loaded is not None else None
        self._records_snapshot = loaded if loaded is not None and not loaded.columnar else None
        delta = Delta(image)
        replayed = False
        position = _LogPosition(self.log.segments)
        start = loaded.log_position if loaded is not None else None
        for batch in self.log.batches(from_offset=image.next_offset, start=start):
            if self._progress is not ignore:
                self._progress(position.describe(batch))
            if batch.base_offset < image.next_offset:
                # Snapshots end at commit boundaries, so a batch is wholly before or after one.
                continue
            try:
                entries = decode_entries(batch.payload)
            except RecordDecodeError as exc:
                raise CorruptStateError(
                    f"the record log in {self.path} holds an unreadable batch at offset {batch.base_offset}: {exc}"
                ) from None
            offset = batch.base_offset
            for entry in entries:
                try:
                    next_offset = delta.replay_entry(entry, offset)
                except (ReplayError, RecordDecodeError) as exc:
                    name = entry.record_type.__name__ if isinstance(entry, RecordRun) else type(entry).__name__
                    raise CorruptStateError(
                        f"the record at offset {offset} ({name}) in {self.path} cannot be applied: {exc}"
                    ) from None
                offset = next_offset
                replayed = True
            if offset != batch.next_offset:
                raise CorruptStateError(
                    f"the batch at offset {batch.base_offset} in {self.path} holds {offset - batch.base_offset} "
                    f"records but claims {batch.record_count}"
                )
        assert self.log.next_offset is not None
        if self.log.next_offset < image.next_offset:
            raise CorruptStateError(
                f"a snapshot in {self.path} covers offsets up to {image.offset}, "
                f"but the record log ends at offset {self.log.next_offset - 1}"
            )
        tail = self.log.torn_tail
        if tail is not None:
            if self.writable:
                self.log.truncate_torn_tail()
                self._notify(f"Recovered the cluster state: removed {tail.describe()}.")
            else:
                self._notify(f"Ignoring {tail.describe()}; the next write will remove it.")
        if replayed:
            self._progress("Building the image")
            return delta.apply()
        return image

    # Writing -----------------------------------------------------------------------------

    def validate(self, entries: Sequence[Record | RecordRun]) -> Image:
        """The image these records would produce; raises if any would not replay (a kjbod bug)."""
        delta = Delta(self.image)
        offset = self.image.next_offset
        for entry in entries:
            try:
                if isinstance(entry, Record):
                    entry.check_version()
                offset = delta.replay_entry(entry, offset)
            except (ReplayError, ValueError) as exc:
                raise RuntimeError(
                    f"kjbod produced a record that does not apply at offset {offset} ({exc}); nothing was written"
                ) from exc
        return delta.apply()

    def commit(self, entries: Sequence[Record | RecordRun], *, image: Image | None = None) -> Commit | None:
        """Append records (and runs) as one commit and publish the new image; None if empty.

        `image` is the image the records produce, when the caller built it from the same data
        as the records (an import builds a million partitions' columns once, and both the
        records and the image from them); otherwise the records are replayed into a delta of
        the current image, which checks that every one applies."""
        if not self.writable:
            raise RuntimeError("the cluster state was opened read-only")
        count = sum(entry_count(e) for e in entries) if entries else 0
        if not count:
            return None
        if image is None:
            with gc_paused():
                new_image = self.validate(entries)
        elif image.next_offset != self.image.next_offset + count:
            raise RuntimeError(f"kjbod built an image at offset {image.offset} for records ending at {self.image.offset + count}; nothing was written")
        else:
            new_image = image
        # Encoded batch by batch as the log writes them: never all at once.
        payloads = (encode_entries(batch) for batch in batch_entries(entries, RECORDS_PER_BATCH))
        if self._progress is not ignore:
            self._progress(f"Writing {count:,} records to {self.path}")
        try:
            first, last = self.log.append(payloads, _now_ms())
        except OSError as exc:
            recording = isinstance(exc, RecordFailed)
            doing = f"{'recording the commit in' if recording else 'appending a commit to'} {_name(exc, self.path)}"
            reason, kept = exc.strerror or str(exc), recording and not exc.restored
            left = "the commit stays in the log; reopen the state to see whether it took effect" if kept else "nothing was written"
            raise WriteFailed(
                f"Cannot write to the cluster state {self.path}: {reason} ({doing}); {left}", reason=reason, doing=doing
            ) from None
        self.image = new_image
        if may_rename(entries):
            sync_name_index(self.path, new_image)
        return Commit(first, last)

    def write_snapshot(self) -> Path:
        """Write a (columnar) snapshot of the current image; of the older ones, the one the image
        was loaded from stays (or, without one, the newest), and the rest go."""
        try:
            path = snapshots.write_snapshot(self.path, self.image, self.log.end_position(), keep=self._good_snapshot)
        except OSError as exc:
            name = snapshot_name(self.image.next_offset)
            reason, doing = exc.strerror or str(exc), f"writing the snapshot {name}"
            left = (
                "the snapshot is in place but may not survive a power failure"
                if (self.path / name).exists()
                else "no snapshot file was left and the state is unchanged"
            )
            raise WriteFailed(
                f"Cannot write a snapshot of the cluster state {self.path}: {reason} ({doing}); {left}",
                reason=reason,
                doing=doing,
            ) from None
        self._snapshot_end = self.image.next_offset
        self._good_snapshot = path
        return path

    @property
    def records_since_snapshot(self) -> int:
        """Records in the log after the newest columnar snapshot (all of them when there is none)."""
        return self.image.next_offset - self._snapshot_end

    def snapshot_if_due(self) -> Path | None:
        """Write a snapshot when enough records follow the newest one (snapshots.AUTO_SNAPSHOT_RECORDS),
        so that the next command opens the state fast. A snapshot that cannot be written is only a
        note: the commit before it stands."""
        if not self.writable or not snapshots.snapshot_due(self.records_since_snapshot):
            return None
        try:
            self._progress("Writing a snapshot")
            path = self.write_snapshot()
        except WriteFailed as exc:
            self._notify(f"Could not write a snapshot of {self.path} ({exc.reason}); the next write tries again.")
            return None
        if self._records_snapshot is not None:
            self._notify(
                f"Wrote {path.name} as columns in place of {self._records_snapshot.path.name} (records, from an earlier kjbod): "
                "the state opens fast from now on."
            )
            self._records_snapshot = None
        return path


def run_operation(
    path: Path | str,
    operation: Callable[[Controller], ControllerResult[T]],
    *,
    lock_timeout: float = DEFAULT_LOCK_TIMEOUT,
    dry_run: bool = False,
    create: bool = False,
    notify: Notify = ignore,
    progress: Progress = ignore,
    release: KafkaRelease = NEWEST,
) -> tuple[ControllerResult[T], Image]:
    """Open the state, run one controller operation, and commit its records (unless a dry run).

    Returns the result and the image after it (what the image would be, for a dry run).
    `progress` hears what loading and writing are doing (see ClusterState.open); the controller
    runs Kafka `release`.
    """
    from kjbod.controller import Controller

    with ClusterState.open(
        path, write=not dry_run, create=create, lock_timeout=lock_timeout, notify=notify, progress=progress
    ) as state:
        result = operation(Controller(state.image, release))
        if dry_run:
            return result, state.validate(result.records)
        state.commit(result.records)
        state.snapshot_if_due()
        return result, state.image


def read_image(
    path: Path | str, *, lock_timeout: float = DEFAULT_LOCK_TIMEOUT, notify: Notify = ignore, progress: Progress = ignore
) -> Image:
    with ClusterState.open(path, lock_timeout=lock_timeout, notify=notify, progress=progress) as state:
        return state.image


class _LogPosition:
    """How far into the record log's bytes a batch ends, for the replay's progress line."""

    def __init__(self, segments: Sequence[tuple[int, Path]]) -> None:
        self.bases = [base for base, _ in segments]
        self.starts = [0]
        for _, segment in segments:
            self.starts.append(self.starts[-1] + _file_size(segment))

    def describe(self, batch: Batch) -> str:
        index = max(bisect.bisect_right(self.bases, batch.base_offset) - 1, 0)
        total = self.starts[-1]
        share = f" ({min(100, 100 * (self.starts[index] + batch.position + batch.size) // total)}%)" if total else ""
        return f"Replaying the record log: offset {batch.base_offset:,}{share}"


def _create_empty(path: Path, lock_timeout: float) -> None:
    """An empty state at `path` (for tests and tools that fill one commit by commit)."""
    try:
        with creating(path, refusal=f"Cannot create a cluster state in {path}", lock_timeout=lock_timeout):
            pass
    except UserError:
        if not is_state_directory(path):  # else another process created it meanwhile: use it
            raise


def _name(exc: OSError, directory: Path) -> str:
    """The file an error is about, relative to the state directory when it lies inside it."""
    if not exc.filename:
        return "the state directory"
    path = Path(exc.filename)
    return path.name if path.parent == directory else str(path)


def _file_size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0  # reading the log reports a missing segment itself

