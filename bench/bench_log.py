"""Record log benchmark: append throughput and replay time, from the log and from a snapshot.

    python bench/bench_log.py [--partitions 1000000] [--append-records 100000]

Prints each figure, and the replay times as ratios to the time needed just to read and
checksum the same bytes (measured in the same run), so the figures travel between machines.
"""

from __future__ import annotations

import argparse
import random
import resource
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from kjbod.common.kafka_uuid import DirectoryId, Uuid  # noqa: E402
from kjbod.log.framing import read_batch  # noqa: E402
from kjbod.records import (  # noqa: E402
    FeatureLevelRecord,
    KjbodClockRecord,
    PartitionRecord,
    RegisterBrokerRecord,
    TopicRecord,
)
from kjbod.state.cluster_state import ClusterState, read_image  # noqa: E402


def cluster_records(partitions: int, brokers: int = 300, dirs_per_broker: int = 4, per_topic: int = 1000, seed: int = 1):
    rng = random.Random(seed)
    yield FeatureLevelRecord(name="metadata.version", feature_level=30)
    broker_dirs = {}
    for broker in range(brokers):
        dirs = tuple(DirectoryId.random(rng) for _ in range(dirs_per_broker))
        broker_dirs[broker] = dirs
        yield RegisterBrokerRecord(
            version=3, broker_id=broker, incarnation_id=str(Uuid.random(rng)), broker_epoch=broker,
            fenced=False, log_dirs=dirs,
        )
    topic_id = None
    for index in range(partitions):
        partition_id = index % per_topic
        if partition_id == 0:
            topic_id = str(Uuid.random(rng))
            yield TopicRecord(name=f"topic-{index // per_topic:05d}", topic_id=topic_id)
        replicas = tuple(rng.sample(range(brokers), 3))
        yield PartitionRecord(
            version=1, partition_id=partition_id, topic_id=topic_id, replicas=replicas, isr=replicas,
            leader=replicas[0], leader_epoch=0, partition_epoch=0,
            directories=tuple(rng.choice(broker_dirs[b]) for b in replicas),
        )


def timed(label: str, action):
    started = time.perf_counter()
    value = action()
    elapsed = time.perf_counter() - started
    print(f"{label}: {elapsed:.2f} s")
    return elapsed, value


def read_and_checksum(path: Path) -> int:
    """The floor for any replay: read every segment and verify every batch checksum."""
    batches = 0
    for segment in sorted(path.glob("*.log")):
        data = segment.read_bytes()
        position = 0
        while position < len(data):
            batch = read_batch(data, position)
            position += batch.size
            batches += 1
    return batches


def bench_append(root: Path, total: int, per_commit: int) -> None:
    path = root / "append"
    records = [KjbodClockRecord(time_ms=i + 1) for i in range(total)]
    with ClusterState.open(path, write=True, create=True) as state:
        started = time.perf_counter()
        for start in range(0, total, per_commit):
            state.commit(records[start : start + per_commit])
        elapsed = time.perf_counter() - started
    commits = total // per_commit
    print(
        f"append: {total} records in {commits} fsynced commits of {per_commit}: {elapsed:.2f} s "
        f"({total / elapsed:,.0f} records/s, {elapsed / commits * 1000:.2f} ms per commit)"
    )


def build_log(path: Path, partitions: int) -> None:
    records = list(cluster_records(partitions))
    with ClusterState.open(path, write=True, create=True) as state:
        timed(f"build: commit {len(records):,} records ({partitions:,} PartitionRecords, RF 3)",
              lambda: state.commit(records))


def bench_replay(root: Path, partitions: int) -> None:
    path = root / "replay"
    build_log(path, partitions)
    floor, batches = timed("floor: read and checksum every batch", lambda: read_and_checksum(path))
    from_log, image = timed("replay from the log (open for reading)", lambda: read_image(path))
    assert image.topics.partition_count == partitions
    del image
    with ClusterState.open(path, write=True) as state:
        timed("write a snapshot", state.write_snapshot)
    from_snapshot, image = timed("replay from the snapshot (open for reading)", lambda: read_image(path))
    assert image.topics.partition_count == partitions
    print(f"replay from the log: {from_log / floor:.1f}x the read+checksum floor; "
          f"from the snapshot: {from_snapshot / floor:.1f}x")
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak memory (RSS): {peak:,.0f} MiB")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--partitions", type=int, default=1_000_000)
    parser.add_argument("--append-records", type=int, default=100_000)
    parser.add_argument("--append-batch", type=int, default=100)
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="kjbod-bench-"))
    try:
        bench_append(root, args.append_records, args.append_batch)
        bench_replay(root, args.partitions)
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
