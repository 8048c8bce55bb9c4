"""Cluster-state benchmark: a large JBOD cluster built and broken through the real write path.

    python bench/bench_cluster.py [--brokers 300] [--dirs 4] [--partitions 100000] [--failures 10]

Registers the brokers (each a durable commit), creates the topics with Kafka's striped placement,
lets every broker assign its replicas to its directories, then fails one directory on each of
`--failures` brokers. Prints the time and the records written for each step, and each step's
time per record relative to the plain append rate measured in the same run.
"""

from __future__ import annotations

import argparse
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from kjbod.common.kafka_uuid import DirectoryId  # noqa: E402
from kjbod.controller import Controller  # noqa: E402
from kjbod.controller.cluster_control import BrokerRegistrationRequest  # noqa: E402
from kjbod.controller.replication_control import CreateTopicRequest, HeartbeatRequest  # noqa: E402
from kjbod.records import FeatureLevelRecord, KjbodClockRecord, KjbodLogDir  # noqa: E402
from kjbod.state.cluster_state import ClusterState, read_image  # noqa: E402


class Step:
    def __init__(self, state: ClusterState, name: str) -> None:
        self.state, self.name, self.records, self.commits = state, name, 0, 0

    def __enter__(self) -> "Step":
        self.started = time.perf_counter()
        return self

    def run(self, operation) -> object:  # noqa: ANN001
        result = operation(Controller(self.state.image))
        self.state.commit(result.records)
        self.records += len(result.records)
        self.commits += 1
        return result.response

    def __exit__(self, *exc: object) -> None:
        self.elapsed = time.perf_counter() - self.started
        print(f"{self.name}: {self.elapsed:.2f} s, {self.commits} commits, {self.records:,} records")


def baseline_append(root: Path, commits: int = 200) -> float:
    """Seconds per commit for a one-record commit, the floor of every step."""
    with ClusterState.open(root / "baseline", write=True, create=True) as state:
        started = time.perf_counter()
        for t in range(1, commits + 1):
            state.commit([KjbodClockRecord(time_ms=t)])
        return (time.perf_counter() - started) / commits


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--brokers", type=int, default=300)
    parser.add_argument("--dirs", type=int, default=4)
    parser.add_argument("--partitions", type=int, default=100_000)
    parser.add_argument("--per-topic", type=int, default=1000)
    parser.add_argument("--failures", type=int, default=10)
    args = parser.parse_args()
    rng = random.Random(7)
    root = Path(tempfile.mkdtemp(prefix="kjbod-bench-"))
    try:
        per_commit = baseline_append(root)
        print(f"baseline: {per_commit * 1000:.2f} ms per one-record commit (fsync included)")
        with ClusterState.open(root / "state", write=True, create=True) as state:
            state.commit([FeatureLevelRecord(name="metadata.version", feature_level=30)])
            dirs: dict[int, list[str]] = {}
            with Step(state, f"register + unfence {args.brokers} brokers x {args.dirs} directories") as step:
                for broker in range(args.brokers):
                    dirs[broker] = [DirectoryId.random(rng) for _ in range(args.dirs)]
                    request = BrokerRegistrationRequest(
                        broker_id=broker,
                        incarnation_id="O7xvrxGUTwyKxRtVqYj9qA",
                        log_dirs=tuple(KjbodLogDir(directory_id=d, path=f"/data/{i}") for i, d in enumerate(dirs[broker])),
                        rack=f"r{broker % 10}",
                    )
                    step.run(lambda c, r=request: c.cluster.register_broker(r))
                    step.run(lambda c, b=broker: c.replication.heartbeat(HeartbeatRequest(b)))
            topics = args.partitions // args.per_topic
            with Step(state, f"create {topics} topics x {args.per_topic} partitions (RF 3)") as step:
                for topic in range(topics):
                    request = CreateTopicRequest(f"topic-{topic:04d}", args.per_topic, 3, seed=topic)
                    step.run(lambda c, r=request: c.replication.create_topic(r))
            create_time = step.elapsed
            with Step(state, f"assign-dirs --auto on {args.brokers} brokers") as step:
                for broker in range(args.brokers):
                    step.run(lambda c, b=broker: c.replication.auto_assign_dirs(b))
            failures = []
            with Step(state, f"fail one directory on each of {args.failures} brokers") as step:
                for broker in rng.sample(range(args.brokers), args.failures):
                    started = time.perf_counter()
                    reply = step.run(
                        lambda c, b=broker: c.replication.heartbeat(HeartbeatRequest(b, offline_log_dirs=(dirs[b][0],)))
                    )
                    failures.append((broker, time.perf_counter() - started, len(reply.impact), sum(i.went_offline for i in reply.impact)))
            for broker, seconds, changed, offline in failures:
                print(f"  broker {broker}: {seconds * 1000:.0f} ms, {changed} partitions changed, {offline} left leaderless")
        started = time.perf_counter()
        image = read_image(root / "state")
        print(f"reopen (replay the whole log): {time.perf_counter() - started:.2f} s, offset {image.offset:,}")
        print(f"create: {create_time / args.partitions * 1e6:.1f} us per partition "
              f"({create_time / topics / per_commit:.0f}x a one-record commit per topic)")
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
