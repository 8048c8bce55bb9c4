"""bench/synthetic.py: seeded, realistic synthetic clusters in the import formats."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import orjson
import pytest

from tests.synthetic import load_synthetic

synthetic = load_synthetic()
SPEC = synthetic.SyntheticSpec(brokers=20, dirs_per_broker=4, partitions=3000, racks=4, hot_topics=2, full_dirs=3, failed_dirs=2, seed=11)


@pytest.fixture(scope="module")
def cluster():  # type: ignore[no-untyped-def]
    return synthetic.generate(SPEC)


def test_the_same_seed_gives_the_same_cluster_and_another_seed_another(cluster) -> None:  # type: ignore[no-untyped-def]
    again = synthetic.generate(SPEC)
    assert (again.brokers, again.assignment, again.log_dirs) == (cluster.brokers, cluster.assignment, cluster.log_dirs)
    other = synthetic.generate(synthetic.SyntheticSpec(**{**SPEC.__dict__, "seed": 12}))
    assert other.assignment != cluster.assignment


def test_shape_partitions_replicas_and_racks(cluster) -> None:  # type: ignore[no-untyped-def]
    partitions = cluster.assignment["partitions"]
    assert len(partitions) == SPEC.partitions
    rack = {b["id"]: b["rack"] for b in cluster.brokers["brokers"]}
    assert all(len(set(p["replicas"])) == SPEC.replication_factor for p in partitions)
    # Four racks: every replica set spans three of them.
    assert all(len({rack[b] for b in p["replicas"]}) == 3 for p in partitions)
    sizes = Counter(rack.values())
    assert len(sizes) == 4 and len(set(sizes.values())) > 1  # racks of unequal size
    per_topic = Counter(p["topic"] for p in partitions)
    assert all(sorted(p["partition"] for p in partitions if p["topic"] == t) == list(range(n)) for t, n in per_topic.items())


def test_hot_topics_are_big_and_sizes_are_skewed(cluster) -> None:  # type: ignore[no-untyped-def]
    size = {}
    for broker in cluster.log_dirs["brokers"]:
        for log_dir in broker["logDirs"]:
            for p in log_dir["partitions"]:
                if not p["isFuture"]:
                    size[p["partition"]] = max(size.get(p["partition"], 0), p["size"])
    hot = [s for name, s in size.items() if name.rsplit("-", 1)[0] in cluster.hot_topics]
    cold = sorted(s for name, s in size.items() if name.rsplit("-", 1)[0] not in cluster.hot_topics)
    assert len(cluster.hot_topics) == 2 and len(hot) >= SPEC.partitions // 10 - 2
    assert sorted(hot)[len(hot) // 2] > cold[len(cold) // 2] * 5
    assert cold[-1] > cold[len(cold) // 2] * 20  # a long tail


def test_full_and_failed_directories(cluster) -> None:  # type: ignore[no-untyped-def]
    capacity = {(b["id"], d["path"]): d["capacity_bytes"] for b in cluster.brokers["brokers"] for d in b["log_dirs"]}
    used: Counter = Counter()
    errors = {}
    for broker in cluster.log_dirs["brokers"]:
        for log_dir in broker["logDirs"]:
            key = (broker["broker"], log_dir["logDir"])
            errors[key] = log_dir["error"]
            used[key] += sum(p["size"] for p in log_dir["partitions"])
    assert sorted(k for k, e in errors.items() if e) == cluster.failed and len(cluster.failed) == 2
    fill = {k: used[k] / capacity[k] for k in capacity if k not in cluster.failed}
    assert all(0.93 <= fill[k] <= 0.99 for k in cluster.full)
    assert all(f <= 0.85 for k, f in fill.items() if k not in cluster.full)


def test_files_and_the_cli(tmp_path: Path) -> None:
    assert synthetic.main(["--out", str(tmp_path), "--brokers", "5", "--partitions", "50", "--per-broker"]) == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["assignment.json", "brokers.json", *[f"log-dirs-{b}.txt" for b in range(1, 6)]]
    lines = (tmp_path / "log-dirs-3.txt").read_text().splitlines()
    assert lines[:2] == ["Querying brokers for log directories information", "Received log directory information from brokers 3"]
    assert [b["broker"] for b in orjson.loads(lines[2])["brokers"]] == [3]
