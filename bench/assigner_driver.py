"""Runs LinkedIn's kafka-assigner (kafka-tools 0.1.9) planning in-process, for bench_planner.py.

Runs under the kafka-tools virtual environment's Python, never kjbod's (kafka-tools' top-level
package `kafka` would collide with kafka-python, and it needs six and kazoo):

    <venv>/bin/python bench/assigner_driver.py INPUT_DIR shipped|fixed SEED OUT.json

INPUT_DIR holds the synthetic cluster in the import formats (brokers.json, assignment.json,
log-dirs.txt). Builds a kafka-tools Cluster from plain data (no ZooKeeper), runs `balance -t count
rackaware` on a clone, as `kafka-assigner` would, and writes the time taken and the partitions it
changes. `fixed` first applies the one-character Python 3 fix to the count module (`/` -> `//` in
its per-broker target, balancer-anchors.md §5 item 3) in memory; `shipped` runs it as released.
"""

from __future__ import annotations

import inspect
import logging
import json
import random
import sys
import time
from argparse import Namespace


def load(input_dir: str):  # noqa: ANN201
    from kafka.tools.models.broker import Broker
    from kafka.tools.models.cluster import Cluster, add_topic_with_replicas

    brokers = json.load(open(f"{input_dir}/brokers.json"))["brokers"]
    assignment = json.load(open(f"{input_dir}/assignment.json"))["partitions"]
    with open(f"{input_dir}/log-dirs.txt") as f:
        f.readline()
        f.readline()
        log_dirs = json.loads(f.read())
    sizes: dict[str, int] = {}
    for broker in log_dirs["brokers"]:
        for log_dir in broker["logDirs"]:
            for p in log_dir["partitions"]:
                if not p["isFuture"]:
                    sizes[p["partition"]] = max(sizes.get(p["partition"], 0), p["size"])
    cluster = Cluster(retention=1)
    for b in brokers:
        broker = Broker("localhost", id=b["id"])
        broker.rack = b.get("rack")
        cluster.add_broker(broker)
    topics: dict[str, dict[str, list[int]]] = {}
    for entry in assignment:
        topics.setdefault(entry["topic"], {})[str(entry["partition"])] = entry["replicas"]
    for name, partitions in topics.items():
        add_topic_with_replicas(cluster, name, {"partitions": partitions})
        for number, partition in enumerate(cluster.topics[name].partitions):
            # The ssh sizer reports KiB (du -sk).
            partition.set_size(sizes.get(f"{name}-{number}", 0) // 1024)
    return cluster


def patch_count_module() -> None:
    """The per-broker target in `count` divides with `/` (Python 2 floor division)."""
    import kafka.tools.assigner.actions.balancemodules.count as count

    source = inspect.getsource(count)
    fixed = source.replace("pcount / len(self.cluster.brokers)", "pcount // len(self.cluster.brokers)")
    assert fixed != source, "the count module's division was not found"
    exec(compile(fixed, count.__file__, "exec"), count.__dict__)  # noqa: S102


def main() -> int:
    input_dir, mode, seed, out = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
    logging.getLogger("kafka-tools").setLevel(logging.WARNING)
    if mode == "fixed":
        patch_count_module()
    from kafka.tools.assigner.actions.balance import ActionBalance

    cluster = load(input_dir)
    after = cluster.clone()
    random.seed(seed)  # rackaware shuffles with the global random
    started = time.perf_counter()
    ActionBalance(Namespace(types=["count", "rackaware"], exclude_topics=[]), after).process_cluster()
    elapsed = time.perf_counter() - started
    changed = cluster.changed_partitions(after)
    result = {
        "seconds": elapsed,
        "partitions": [
            {"topic": p.topic.name, "partition": p.num, "replicas": [b.id for b in p.replicas]}
            for p in changed
        ],
    }
    json.dump(result, open(out, "w"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
