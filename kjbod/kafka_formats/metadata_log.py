"""`__cluster_metadata-0` log segments (`<20-digit base offset>.log`), as Kafka's log recovery
reads them: the same record batches as a snapshot, after it. `read_metadata_log` returns the
batches at or after an offset, in offset order, and recognises a torn last batch (an interrupted
write, which Kafka truncates); damage anywhere else is a SnapshotError naming the segment and
the byte.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from kjbod.kafka_formats.kraft_snapshot import SnapshotError
from kjbod.kafka_formats.record_batch import BatchError, RecordBatch, TornBatch, iter_batches


@dataclass(frozen=True)
class LogSegmentBatch:
    segment: Path
    batch: RecordBatch


@dataclass
class MetadataLog:
    """The batches of a `__cluster_metadata-0` directory's segments, in offset order."""

    directory: Path
    segments: list[Path]
    batches: list[LogSegmentBatch]
    torn: tuple[Path, TornBatch] | None  # an interrupted write at the end of the last segment

    def describe_torn(self) -> str | None:
        if self.torn is None:
            return None
        segment, torn = self.torn
        return f"{segment.name}: {torn.describe()}"


def log_segments(directory: Path) -> list[Path]:
    """`<20-digit base offset>.log` files, in offset order."""
    segments = [p for p in directory.iterdir() if re.fullmatch(r"\d{20}\.log", p.name) and p.is_file()]
    return sorted(segments, key=lambda p: int(p.name[:20]))


def read_metadata_log(directory: Path, *, from_offset: int = 0) -> MetadataLog:
    """Every batch holding an offset at or after `from_offset`. A torn batch at the end of the
    last segment is returned separately (Kafka's log recovery truncates it); damage anywhere
    else raises SnapshotError naming the segment and the byte."""
    try:
        segments = log_segments(directory)
    except OSError as exc:
        raise SnapshotError(f"cannot read {directory}: {exc.strerror or exc}") from None
    if not segments:
        raise SnapshotError(f"{directory} holds no log segments (<offset>.log files)")
    batches: list[LogSegmentBatch] = []
    torn: tuple[Path, TornBatch] | None = None
    for index, segment in enumerate(segments):
        try:
            data = segment.read_bytes()
        except OSError as exc:
            raise SnapshotError(f"cannot read {segment}: {exc.strerror or exc}") from None
        try:
            for batch in iter_batches(data):
                if isinstance(batch, TornBatch):
                    if index != len(segments) - 1:
                        raise SnapshotError(f"{segment}: {batch.describe()} is followed by later segments")
                    torn = (segment, batch)
                    break
                if batch.next_offset > from_offset:
                    batches.append(LogSegmentBatch(segment, batch))
        except BatchError as exc:
            raise SnapshotError(f"{segment}: {exc}") from None
    return MetadataLog(directory, segments, batches, torn)
