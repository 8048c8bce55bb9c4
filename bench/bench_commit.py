"""What recording the acknowledged end costs a commit.

    python bench/bench_commit.py [--commits 500] [--records 1,100,6000]

Every commit fsyncs its batches and then records its end in acknowledged-end.checkpoint (one
pwrite and one fdatasync). This runs the same commits with that step and without it (the
baseline, patched out in this process only), interleaved in rounds so that a busy disk hurts
both alike, and prints the time per commit and the ratio.
"""

from __future__ import annotations

import argparse
import contextlib
import shutil
import sys
import tempfile
import time
from pathlib import Path
from unittest import mock

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from kjbod.log.acknowledged import AcknowledgedEnd  # noqa: E402
from kjbod.records import KjbodClockRecord  # noqa: E402
from kjbod.state import ClusterState  # noqa: E402

ROUNDS = 5


def seconds_per_commit(path: Path, commits: int, records: int, *, checkpoint: bool) -> float:
    """Seconds per commit of `records` clock records."""
    with ClusterState.open(path, write=True, create=not path.exists()) as state:
        batch = [KjbodClockRecord(time_ms=state.image.time_ms + 1) for _ in range(records)]
        skipped = mock.patch.object(AcknowledgedEnd, "record", lambda self, next_offset: None)
        with contextlib.nullcontext() if checkpoint else skipped:
            started = time.perf_counter()
            for _ in range(commits):
                state.commit(batch)
            return (time.perf_counter() - started) / commits


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--commits", type=int, default=500, help="commits per measurement (split over rounds)")
    parser.add_argument("--records", default="1,100,6000", help="records per commit, comma-separated")
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="kjbod-bench-commit-"))
    try:
        for records in (int(r) for r in args.records.split(",")):
            with_checkpoint, baseline = [], []
            for _ in range(ROUNDS):
                per_round = max(args.commits // ROUNDS, 1)
                baseline.append(seconds_per_commit(root / f"base-{records}", per_round, records, checkpoint=False))
                with_checkpoint.append(seconds_per_commit(root / f"ack-{records}", per_round, records, checkpoint=True))
            base, ack = sorted(baseline)[ROUNDS // 2], sorted(with_checkpoint)[ROUNDS // 2]
            print(
                f"commit of {records} record(s): {ack * 1000:.2f} ms with the checkpoint, {base * 1000:.2f} ms without "
                f"(median of {ROUNDS} rounds): {ack / base:.2f}x, +{(ack - base) * 1000:.2f} ms per commit"
            )
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
