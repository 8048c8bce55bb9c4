"""`bootstrap.checkpoint`: the controller's bootstrap records in Kafka's binary format (§1.5).

Kafka's BatchFileWriter (BootstrapDirectory.writeBinaryFile) writes record batches v2
(uncompressed, leader epoch 0, offsets from 0) through a BatchAccumulator:

1. a control batch holding a SnapshotHeaderRecord (version 0, lastContainedLogTimestamp 0);
2. the bootstrap records (FeatureLevelRecords) in one data batch, framed by MetadataRecordSerde;
3. a control batch holding a SnapshotFooterRecord (version 0).

A controller reads every non-control batch and needs a metadata.version record in them. The
batch timestamps are the time of writing, so the file is byte-deterministic only for a given
time (which is injectable here). The file is written to `bootstrap.checkpoint.tmp` and renamed.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path

from kjbod.common.durable import atomic_write
from kjbod.records import FeatureLevelRecord
from kjbod.records.wire import encode_record
from kjbod.kafka_formats.kraft_snapshot import (
    BatchAccumulator,
    footer_message,
    header_message,
)
from kjbod.kafka_formats.record_batch import CONTROL_SNAPSHOT_FOOTER, CONTROL_SNAPSHOT_HEADER

BOOTSTRAP_CHECKPOINT = "bootstrap.checkpoint"


def bootstrap_checkpoint_bytes(records: Sequence[FeatureLevelRecord], timestamp_ms: int | None = None) -> bytes:
    """The whole file: header batch, the records, footer batch (offsets 0, 1.., n+1)."""
    now = time.time_ns() // 1_000_000 if timestamp_ms is None else timestamp_ms
    accumulator = BatchAccumulator(epoch=0, clock=now)
    accumulator.append_control([(CONTROL_SNAPSHOT_HEADER, header_message(0))])
    accumulator.force_drain()
    accumulator.append([encode_record(record) for record in records])
    accumulator.append_control([(CONTROL_SNAPSHOT_FOOTER, footer_message())])
    accumulator.force_drain()
    return b"".join(accumulator.drain())


def write_bootstrap_checkpoint(
    directory: Path, records: Sequence[FeatureLevelRecord], timestamp_ms: int | None = None
) -> Path:
    """Write `<directory>/bootstrap.checkpoint` via `bootstrap.checkpoint.tmp`, as Kafka does."""
    path = directory / BOOTSTRAP_CHECKPOINT
    atomic_write(path, bootstrap_checkpoint_bytes(records, timestamp_ms))
    return path
