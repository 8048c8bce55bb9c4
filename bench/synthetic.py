"""Seeded synthetic Kafka clusters in the formats `kjbod import cluster` reads.

    python bench/synthetic.py --out DIR [--brokers 1000 --dirs-per-broker 12 --partitions 1000000
                              --replication-factor 3 --racks 5 --hot-topics 4 --full-dirs 6
                              --failed-dirs 2 --seed 1 --per-broker]

writes DIR/brokers.json, DIR/assignment.json and DIR/log-dirs.txt (or one log-dirs file per
broker with --per-broker), ready for

    kjbod --state S import cluster --brokers DIR/brokers.json --assignment DIR/assignment.json \\
          --log-dirs DIR/log-dirs.txt

The clusters look like production ones, because the planner is benchmarked on them:
- racks of unequal size, brokers placed rack-alternating as Kafka's rack-aware assignment does;
- partition sizes skewed (log-normal per topic and per partition), a few hot topics with many
  large partitions;
- directories chosen per broker by fewest partitions (what a broker does), so partition
  *counts* are even but *bytes* are not;
- every disk the same size except a few that are nearly full;
- some followers lagging, a few future replicas (intra-broker moves in flight), and optionally
  failed directories (reported offline; their replicas fall out of the ISR on import).

The same seed gives the same cluster, byte for byte. Python API: `generate(SyntheticSpec(...))`
returns the three documents; `write_files(cluster, directory)` writes them.
"""

from __future__ import annotations

import argparse
import math
import random
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

KAFKA_STORAGE_EXCEPTION = "org.apache.kafka.common.errors.KafkaStorageException"
HEADER = "Querying brokers for log directories information\nReceived log directory information from brokers {}\n"
GIB = 1 << 30
TIB = 1 << 40


@dataclass(frozen=True)
class SyntheticSpec:
    brokers: int = 12
    dirs_per_broker: int = 4
    partitions: int = 1000
    replication_factor: int = 3
    racks: int = 3
    # Topics with many, large partitions (together about a tenth of all partitions).
    hot_topics: int = 2
    # Directories whose disk is nearly full (93-99%).
    full_dirs: int = 2
    # Directories reported offline (a failed disk).
    failed_dirs: int = 0
    # Share of follower replicas that are behind their leader.
    lagging_fraction: float = 0.01
    # Share of replicas with a future replica being built in another directory (KIP-113).
    future_fraction: float = 0.001
    # Typical partition size of an ordinary topic, in bytes (log-normal around it).
    median_partition_bytes: int = 2 * GIB
    seed: int = 1

    def __post_init__(self) -> None:
        if self.brokers < self.replication_factor:
            raise ValueError(f"need at least {self.replication_factor} brokers for replication factor {self.replication_factor}")
        if not 1 <= self.racks <= self.brokers:
            raise ValueError("racks must be between 1 and the number of brokers")
        if self.failed_dirs + self.full_dirs > self.brokers * self.dirs_per_broker:
            raise ValueError("more failed and full directories than directories")
        if self.failed_dirs > self.brokers * (self.dirs_per_broker - 1):
            raise ValueError("every broker needs at least one working directory")


@dataclass
class SyntheticCluster:
    spec: SyntheticSpec
    # The three import documents (see cli-contract.md, `import`).
    brokers: dict[str, Any]
    assignment: dict[str, Any]
    log_dirs: dict[str, Any]
    # Facts for benchmarks and tests: (broker, path) of failed and nearly full directories,
    # and the topics made hot.
    failed: list[tuple[int, str]] = field(default_factory=list)
    full: list[tuple[int, str]] = field(default_factory=list)
    hot_topics: list[str] = field(default_factory=list)


def _rack_sizes(rng: random.Random, brokers: int, racks: int) -> list[int]:
    """Unequal racks: sizes proportional to random weights, each at least one broker."""
    weights = [rng.uniform(0.5, 1.5) for _ in range(racks)]
    total = sum(weights)
    sizes = [max(1, int(brokers * w / total)) for w in weights]
    while sum(sizes) > brokers:
        sizes[sizes.index(max(sizes))] -= 1
    while sum(sizes) < brokers:
        sizes[rng.randrange(racks)] += 1
    return sizes


def _rack_alternated(racks: dict[str, list[int]]) -> list[int]:
    """Kafka's getRackAlternatedBrokerList: one broker from each rack in turn."""
    ordered = []
    columns = [list(brokers) for _, brokers in sorted(racks.items())]
    for index in range(max(len(c) for c in columns)):
        for column in columns:
            if index < len(column):
                ordered.append(column[index])
    return ordered


def _topic_sizes(rng: random.Random, spec: SyntheticSpec) -> list[tuple[str, int, bool]]:
    """(name, partition count, hot) adding up to exactly `spec.partitions`."""
    topics: list[tuple[str, int, bool]] = []
    hot_total = spec.partitions // 10 if spec.hot_topics else 0
    for index in range(spec.hot_topics):
        count = hot_total // spec.hot_topics + (1 if index < hot_total % spec.hot_topics else 0)
        if count:
            topics.append((f"hot.events-{index:02d}", count, True))
    left = spec.partitions - sum(c for _, c, _ in topics)
    choices = [1, 3, 6, 12, 12, 24, 24, 32, 50, 64, 100, 128, 200]
    index = 0
    while left > 0:
        count = min(left, rng.choice(choices))
        topics.append((f"service-{index:05d}.events", count, False))
        left -= count
        index += 1
    return topics


def generate(spec: SyntheticSpec) -> SyntheticCluster:
    rng = random.Random(spec.seed)
    rf = spec.replication_factor
    broker_ids = list(range(1, spec.brokers + 1))
    rack_of: dict[int, str] = {}
    racks: dict[str, list[int]] = {}
    position = 0
    for r, size in enumerate(_rack_sizes(rng, spec.brokers, spec.racks)):
        name = f"rack-{chr(ord('a') + r % 26)}{r // 26 or ''}"
        racks[name] = broker_ids[position : position + size]
        for broker in racks[name]:
            rack_of[broker] = name
        position += size
    alternated = _rack_alternated(racks)
    paths = [f"/data/{d:02d}/kafka-logs" for d in range(1, spec.dirs_per_broker + 1)]

    all_dirs = [(b, p) for b in broker_ids for p in paths]
    special = rng.sample(all_dirs, spec.failed_dirs + spec.full_dirs)
    failed: list[tuple[int, str]] = []
    for candidate in special:
        # Keep one working directory per broker.
        if len(failed) < spec.failed_dirs and sum(1 for b, _ in failed if b == candidate[0]) < spec.dirs_per_broker - 1:
            failed.append(candidate)
    full = [d for d in special if d not in failed][: spec.full_dirs]
    failed_set = set(failed)

    # Placement: rack-alternating leaders with a random start per topic, followers on other
    # racks where possible, each replica in its broker's directory with the fewest partitions.
    dir_counts = {b: [0] * spec.dirs_per_broker for b in broker_ids}
    dir_bytes: dict[tuple[int, str], int] = {}
    # broker -> path -> [(partition name, size, lag, future)]
    contents: dict[int, dict[str, list[tuple[str, int, int, bool]]]] = {b: {p: [] for p in paths} for b in broker_ids}
    partitions_out: list[dict[str, Any]] = []
    hot_topics = []
    n = len(alternated)
    median_log = math.log(spec.median_partition_bytes)
    for topic, count, hot in sorted(_topic_sizes(rng, spec)):
        if hot:
            hot_topics.append(topic)
        topic_median = median_log + rng.gauss(0, 1.2) + (math.log(20) if hot else 0.0)
        start = rng.randrange(n)
        shift = rng.randrange(1, n) if n > 1 else 0
        for partition in range(count):
            leader_index = (start + partition) % n
            replicas = [alternated[leader_index]]
            used_racks = {rack_of[replicas[0]]}
            step = 0
            while len(replicas) < rf:
                step += 1
                candidate = alternated[(leader_index + shift + step) % n]
                if candidate in replicas:
                    continue
                if rack_of[candidate] in used_racks and len(used_racks) < len(racks) and step < 4 * n:
                    continue
                replicas.append(candidate)
                used_racks.add(rack_of[candidate])
            size = int(min(math.exp(topic_median + rng.gauss(0, 0.35)), 2 * TIB))
            name = f"{topic}-{partition}"
            log_dirs = []
            for position_in_list, broker in enumerate(replicas):
                counts = dir_counts[broker]
                d = counts.index(min(counts))
                counts[d] += 1
                path = paths[d]
                log_dirs.append(path)
                replica_size, lag = size, 0
                if position_in_list > 0 and rng.random() < spec.lagging_fraction:
                    replica_size, lag = int(size * rng.uniform(0.5, 0.999)), rng.randint(1, 200_000)
                dir_bytes[(broker, path)] = dir_bytes.get((broker, path), 0) + replica_size
                contents[broker][path].append((name, replica_size, lag, False))
                if rng.random() < spec.future_fraction and spec.dirs_per_broker > 1:
                    target = paths[(d + 1 + rng.randrange(spec.dirs_per_broker - 1)) % spec.dirs_per_broker]
                    if (broker, target) not in failed_set and (broker, path) not in failed_set:
                        future_size = int(replica_size * rng.uniform(0.05, 0.95))
                        contents[broker][target].append((name, future_size, rng.randint(1, 500_000), True))
                        dir_bytes[(broker, target)] = dir_bytes.get((broker, target), 0) + future_size
            partitions_out.append({"topic": topic, "partition": partition, "replicas": replicas, "log_dirs": log_dirs})

    # Disks: one standard size that leaves every directory under 85% full, except the few
    # nearly full ones.
    heaviest = max(dir_bytes.values(), default=0)
    average = sum(dir_bytes.values()) / max(1, len(all_dirs))
    standard = max(int(average / 0.55), int(heaviest / 0.85), TIB)
    standard = -(-standard // (500 * GIB)) * (500 * GIB)
    capacity = {d: standard for d in all_dirs}
    for d in full:
        used = dir_bytes.get(d, 0)
        capacity[d] = max(int(used / rng.uniform(0.93, 0.99)), 1)

    brokers_doc = {
        "brokers": [
            {
                "id": b,
                "rack": rack_of[b],
                "log_dirs": [{"path": p, "capacity_bytes": capacity[(b, p)]} for p in paths],
            }
            for b in broker_ids
        ]
    }
    log_dirs_doc = {
        "brokers": [
            {
                "broker": b,
                "logDirs": [
                    {
                        "partitions": []
                        if (b, p) in failed_set
                        else [{"partition": name, "size": s, "offsetLag": lag, "isFuture": fut} for name, s, lag, fut in contents[b][p]],
                        "error": KAFKA_STORAGE_EXCEPTION if (b, p) in failed_set else None,
                        "logDir": p,
                    }
                    for p in paths
                ],
            }
            for b in broker_ids
        ],
        "version": 1,
    }
    return SyntheticCluster(
        spec,
        brokers_doc,
        {"version": 1, "partitions": partitions_out},
        log_dirs_doc,
        failed=sorted(failed),
        full=sorted(full),
        hot_topics=hot_topics,
    )


def write_files(cluster: SyntheticCluster, directory: Path, *, per_broker: bool = False) -> dict[str, Any]:
    """Write brokers.json, assignment.json and the kafka-log-dirs output (with its two header
    lines, as the tool prints it); returns the paths by role."""
    directory.mkdir(parents=True, exist_ok=True)
    brokers = directory / "brokers.json"
    assignment = directory / "assignment.json"
    brokers.write_bytes(orjson.dumps(cluster.brokers, option=orjson.OPT_INDENT_2))
    assignment.write_bytes(orjson.dumps(cluster.assignment))
    log_dirs: list[Path] = []
    if per_broker:
        for entry in cluster.log_dirs["brokers"]:
            path = directory / f"log-dirs-{entry['broker']}.txt"
            path.write_bytes(HEADER.format(entry["broker"]).encode() + orjson.dumps({"brokers": [entry], "version": 1}) + b"\n")
            log_dirs.append(path)
    else:
        path = directory / "log-dirs.txt"
        ids = ",".join(str(b["broker"]) for b in cluster.log_dirs["brokers"])
        path.write_bytes(HEADER.format(ids).encode() + orjson.dumps(cluster.log_dirs) + b"\n")
        log_dirs.append(path)
    return {"brokers": brokers, "assignment": assignment, "log_dirs": log_dirs}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    defaults = SyntheticSpec()
    parser.add_argument("--out", type=Path, required=True, help="directory to write the files into")
    parser.add_argument("--brokers", type=int, default=defaults.brokers)
    parser.add_argument("--dirs-per-broker", type=int, default=defaults.dirs_per_broker)
    parser.add_argument("--partitions", type=int, default=defaults.partitions)
    parser.add_argument("--replication-factor", type=int, default=defaults.replication_factor)
    parser.add_argument("--racks", type=int, default=defaults.racks)
    parser.add_argument("--hot-topics", type=int, default=defaults.hot_topics)
    parser.add_argument("--full-dirs", type=int, default=defaults.full_dirs)
    parser.add_argument("--failed-dirs", type=int, default=defaults.failed_dirs)
    parser.add_argument("--lagging-fraction", type=float, default=defaults.lagging_fraction)
    parser.add_argument("--future-fraction", type=float, default=defaults.future_fraction)
    parser.add_argument("--seed", type=int, default=defaults.seed)
    parser.add_argument("--per-broker", action="store_true", help="one log-dirs file per broker")
    args = parser.parse_args(argv)
    spec = SyntheticSpec(
        brokers=args.brokers, dirs_per_broker=args.dirs_per_broker, partitions=args.partitions,
        replication_factor=args.replication_factor, racks=args.racks, hot_topics=args.hot_topics,
        full_dirs=args.full_dirs, failed_dirs=args.failed_dirs, lagging_fraction=args.lagging_fraction,
        future_fraction=args.future_fraction, seed=args.seed,
    )
    files = write_files(generate(spec), args.out, per_broker=args.per_broker)
    print(f"--brokers {files['brokers']} --assignment {files['assignment']} " + " ".join(f"--log-dirs {p}" for p in files["log_dirs"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
