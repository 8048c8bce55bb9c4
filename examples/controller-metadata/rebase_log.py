"""Turn the data batch of a snapshot Kafka's writer made from log.jsonl into a log segment
starting at offset 812, epoch 3 (see README.md).

    python examples/controller-metadata/rebase_log.py /tmp/logsnap/log.checkpoint \\
        examples/controller-metadata/__cluster_metadata-0/00000000000000000812.log

A log segment holds the same record batches v2 as a snapshot; only the snapshot's header and
footer batches are left out. The base offset and the partition leader epoch lie outside the
batch CRC (which covers the attributes onwards), so Kafka's bytes stay valid.
"""

from __future__ import annotations

import struct
import sys
from pathlib import Path

from kjbod.kafka_formats.record_batch import RecordBatch, iter_batches

BASE_OFFSET = 812
EPOCH = 3


def main(source: Path, target: Path) -> None:
    out = bytearray()
    offset = BASE_OFFSET
    for batch in iter_batches(source.read_bytes()):
        if not isinstance(batch, RecordBatch) or batch.is_control:
            continue
        raw = bytearray(batch.data)
        struct.pack_into(">q", raw, 0, offset)
        struct.pack_into(">i", raw, 12, EPOCH)
        out += raw
        offset += batch.records_count
    target.write_bytes(bytes(out))


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2]))
