"""The record log: segment files of framed batches, with torn-tail recovery.

Segments are named after the offset of their first record (`00000000000000000000.log`, as in
Kafka) and a new one starts only between commits, so a commit always lies in one segment.
Reading validates every batch. At the end of the last segment, beyond the acknowledged end (see
kjbod/log/acknowledged.py), an interrupted write (an incomplete batch, zero fill, or the batches
of a commit whose last batch never arrived) is a torn tail: readers ignore it and a writer
truncates it. Any other damage, and any damage before the acknowledged end whatever it looks
like, is corruption, which is reported with its offset and never skipped.
"""

from __future__ import annotations

import errno
import mmap
import os
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from kjbod.common.durable import fsync_directory, write_all
from kjbod.errors import CorruptStateError
from kjbod.log.acknowledged import AcknowledgedEnd, RecordFailed
from kjbod.log.framing import ATTR_CONTINUES, Batch, ScanStop, encode_batch_header, read_batch

SEGMENT_SUFFIX = ".log"
DEFAULT_SEGMENT_BYTES = 256 * 1024 * 1024
_SEGMENT_NAME = re.compile(r"^(\d{20})\.log$")


def segment_name(base_offset: int) -> str:
    return f"{base_offset:020d}{SEGMENT_SUFFIX}"


def is_segment_name(name: str) -> bool:
    return _SEGMENT_NAME.match(name) is not None


@dataclass(frozen=True)
class TornTail:
    """Bytes at the end of the log that no completed write produced."""

    segment: Path
    position: int
    dropped_bytes: int
    reason: str

    def describe(self) -> str:
        return (
            f"an interrupted write left {self.dropped_bytes} byte(s) at the end of {self.segment.name} "
            f"(from byte {self.position}: {self.reason})"
        )


def _read_file(path: Path) -> bytes | mmap.mmap:
    with path.open("rb") as handle:
        size = os.fstat(handle.fileno()).st_size
        if size == 0:
            return b""
        return mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)


class RecordLog:
    def __init__(self, directory: Path, *, segment_bytes: int = DEFAULT_SEGMENT_BYTES) -> None:
        self.directory = directory
        self.segment_bytes = segment_bytes
        self.segments = self._list_segments()
        self.acknowledged = AcknowledgedEnd.read(directory)
        self.next_offset: int | None = None  # known once the log has been read to its end
        self.torn_tail: TornTail | None = None
        self._committed_end = 0  # byte position after the last commit in the last segment
        self._failed: str | None = None  # set when a failed append could not be undone

    def _list_segments(self) -> list[tuple[int, Path]]:
        found = []
        for entry in os.scandir(self.directory):
            match = _SEGMENT_NAME.match(entry.name)
            if match:
                found.append((int(match.group(1)), Path(entry.path)))
        return sorted(found)

    def _corrupt(self, segment: Path, position: int, offset: int, reason: str) -> CorruptStateError:
        return CorruptStateError(
            f"the record log in {self.directory} is damaged at offset {offset} "
            f"({segment.name}, byte {position}): {reason}; kjbod does not skip damaged data, "
            "so restore the state directory from a backup"
        )

    def batches(self, from_offset: int = 0, *, start: tuple[int, int] | None = None) -> Iterator[Batch]:
        """Every committed batch that holds offsets at or after `from_offset`, validated.

        `start` (segment base offset, byte), when given, is where the batch at `from_offset`
        begins, as recorded when it was the log's end (a snapshot keeps it): reading begins
        there, and the batches before it are neither read nor checked (`metadata verify` reads
        everything). A position that does not hold that batch is ignored. Reading to the end
        sets `next_offset` and `torn_tail`.
        """
        segments = self.segments
        start_index = 0
        for index, (base, _) in enumerate(segments):
            if base <= from_offset:
                start_index = index
        expected = segments[start_index][0] if segments else 0
        if segments and start_index == 0 and expected > 0:
            raise self._corrupt(segments[0][1], 0, 0, f"the log starts at offset {expected}, not 0")
        first_byte = 0
        if start is not None and self._starts_there(start, from_offset):
            start_index = next(i for i, (base, _) in enumerate(segments) if base == start[0])
            expected, first_byte = from_offset, start[1]
        self.torn_tail = None
        for index in range(start_index, len(segments)):
            base, path = segments[index]
            last_segment = index == len(segments) - 1
            if base != expected and not first_byte:
                raise self._corrupt(path, 0, expected, f"the segment starts at offset {base}")
            buf = _read_file(path)
            try:
                expected = yield from self._segment_batches(path, buf, expected, from_offset, last_segment, first_byte)
            finally:
                if isinstance(buf, mmap.mmap):
                    buf.close()
            first_byte = 0
        if expected < self.acknowledged.next_offset:
            last = segments[-1][1] if segments else self.directory / segment_name(0)
            raise self._corrupt(
                last, _file_size(last), expected,
                f"the log ends there, but commits up to offset {self.acknowledged.next_offset - 1} were acknowledged "
                f"({self.acknowledged.path.name})",
            )
        self.next_offset = expected

    def _starts_there(self, start: tuple[int, int], offset: int) -> bool:
        """True if the batch at `offset` begins at `start` (segment base, byte), or the segment
        ends exactly there and the next one begins at `offset`."""
        segments = self.segments
        found = [i for i, (base, _) in enumerate(segments) if base == start[0]]
        if not found or start[1] < 0 or (start[0] == offset and start[1] == 0):
            return False
        index = found[0]
        path = segments[index][1]
        buf = _read_file(path)
        try:
            if start[1] == len(buf):  # the log ends there, or the next segment begins with that batch
                return index + 1 == len(segments) or segments[index + 1][0] == offset
            if start[1] > len(buf):
                return False
            batch = read_batch(buf, start[1])
            return not isinstance(batch, ScanStop) and batch.base_offset == offset
        finally:
            if isinstance(buf, mmap.mmap):
                buf.close()

    def end_position(self) -> tuple[int, int] | None:
        """(segment base offset, byte) where the next commit will begin, once the log has been
        read to its end or appended to; None before."""
        if self.next_offset is None or not self.segments or self.torn_tail is not None:
            return None
        return self.segments[-1][0], self._committed_end

    def _segment_batches(
        self, path: Path, buf: bytes | mmap.mmap, expected: int, from_offset: int, last_segment: bool, first_byte: int = 0
    ) -> Iterator[Batch]:
        position = first_byte
        committed_end = first_byte
        pending: list[Batch] = []  # batches of a commit whose last batch is not read yet
        while position < len(buf):
            found = read_batch(buf, position)
            if isinstance(found, ScanStop):
                if found.torn and last_segment:
                    torn_from = expected - sum(b.record_count for b in pending)
                    if torn_from < self.acknowledged.next_offset:
                        # What looks like an interrupted write lies inside an acknowledged commit.
                        raise self._corrupt(path, found.position, expected, self._inside_acknowledged(found.reason))
                    self._torn(path, committed_end, len(buf), found.reason if not pending else "an unfinished commit")
                    return torn_from
                raise self._corrupt(path, found.position, expected, found.reason)
            if found.base_offset != expected:
                raise self._corrupt(path, position, expected, f"the batch claims offset {found.base_offset}")
            expected = found.next_offset
            position += found.size
            pending.append(found)
            if not found.continues:
                for batch in pending:
                    if batch.next_offset > from_offset:
                        yield batch
                pending.clear()
                committed_end = position
        if pending:
            if not last_segment:
                raise self._corrupt(path, committed_end, pending[0].base_offset, "a commit with no final batch")
            if pending[0].base_offset < self.acknowledged.next_offset:
                raise self._corrupt(
                    path, committed_end, pending[0].base_offset, self._inside_acknowledged("a commit with no final batch")
                )
            self._torn(path, committed_end, len(buf), "an unfinished commit")
            return pending[0].base_offset
        if last_segment:
            self._committed_end = committed_end
        return expected

    def _inside_acknowledged(self, reason: str) -> str:
        return (
            f"{reason}, inside what was acknowledged (commits up to offset {self.acknowledged.next_offset - 1}, "
            f"{self.acknowledged.path.name}), so not an interrupted write"
        )

    def _torn(self, path: Path, committed_end: int, size: int, reason: str) -> None:
        self._committed_end = committed_end
        self.torn_tail = TornTail(path, committed_end, size - committed_end, reason)

    def truncate_torn_tail(self) -> TornTail | None:
        """Drop the torn tail found by the last full read (writers only)."""
        tail = self.torn_tail
        if tail is not None:
            with tail.segment.open("r+b") as handle:
                handle.truncate(tail.position)
                os.fsync(handle.fileno())
            self.torn_tail = None
        return tail

    def append(self, payloads: Iterable[tuple[bytes, int]], timestamp_ms: int) -> tuple[int, int]:
        """Append one commit (one batch per payload) durably; returns its first and last offset.

        The payloads may come from a generator: each batch is written as it comes, so that a
        commit of a million-partition import (a gigabyte of payloads) is never held whole, nor
        copied into frames. Until its last batch is written and fsynced the commit is an
        unfinished one, which recovery drops; if anything fails meanwhile (an encoding error
        too), what reached the file is taken back.

        The log must have been read to its end and its torn tail truncated first.
        """
        if self.next_offset is None or self.torn_tail is not None:
            raise RuntimeError("read the log to its end and truncate its torn tail before appending")
        if self._failed is not None:
            raise OSError(errno.EIO, f"an earlier write failed and could not be undone ({self._failed}); reopen the state")
        first = self.next_offset
        offset = first
        path = self._active_segment(first)
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        written = 0
        try:
            committed_size = os.fstat(fd).st_size
            try:
                for (payload, count), last in _marking_last(payloads):
                    header = encode_batch_header(offset, count, (payload,), timestamp_ms, 0 if last else ATTR_CONTINUES)
                    write_all(fd, header)
                    write_all(fd, payload)
                    written += len(header) + len(payload)
                    offset += count
                os.fsync(fd)
                # Only now is the commit durable: record it as acknowledged before returning.
                self.acknowledged.record(offset)
            except OSError as exc:
                if exc.filename is None:
                    exc.filename = str(path)  # os.write and os.fsync name no file
                if isinstance(exc, RecordFailed) and not exc.restored:
                    # The checkpoint may already claim this commit: it must stay in the log.
                    self._failed = str(exc)
                    raise
                # Take back any part of the commit that reached the file, so that a later
                # commit from this process does not land after it.
                self._take_back(fd, committed_size, exc)
                raise
            except BaseException as exc:
                self._take_back(fd, committed_size, exc)
                raise
        finally:
            os.close(fd)
        self.next_offset = offset
        self._committed_end = committed_size + written
        return first, offset - 1

    def _take_back(self, fd: int, committed_size: int, exc: BaseException) -> None:
        try:
            os.ftruncate(fd, committed_size)
        except OSError:
            self._failed = str(exc)

    def _active_segment(self, next_offset: int) -> Path:
        if self.segments:
            _, path = self.segments[-1]
            if path.stat().st_size < self.segment_bytes:
                return path
        path = self.directory / segment_name(next_offset)
        path.touch()
        fsync_directory(self.directory)
        self.segments.append((next_offset, path))
        return path


def _marking_last(items: Iterable[tuple[bytes, int]]) -> Iterator[tuple[tuple[bytes, int], bool]]:
    """Each item, and whether it is the last."""
    iterator = iter(items)
    try:
        previous = next(iterator)
    except StopIteration:
        return
    for item in iterator:
        yield previous, False
        previous = item
    yield previous, True


def _file_size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0
