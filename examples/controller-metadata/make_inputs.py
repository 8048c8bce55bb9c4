"""The inputs the kafka-oracle turned into this folder's Kafka-written files (see README.md).

    python examples/controller-metadata/make_inputs.py OUT_DIR

writes OUT_DIR/older.jsonl and OUT_DIR/latest.jsonl (a controller's state at two snapshots, as
Kafka's JSON converters print records), OUT_DIR/log.jsonl (records committed after the latest
snapshot) and examples/controller-metadata/log-dirs.txt (what `kafka-log-dirs --describe`
printed at the time). Seeded: the same files every run.

The cluster: six JBOD brokers in three racks, three disks each; brokers 5 and 6 joined
recently and hold little, so the cluster needs a rebalance.
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

from kjbod.common.kafka_uuid import DirectoryId, Uuid

rng = random.Random(853)
BROKERS = [1, 2, 3, 4, 5, 6]
RACKS = {1: "r1", 2: "r2", 3: "r3", 4: "r1", 5: "r2", 6: "r3"}
DIRS = {b: [DirectoryId.random(rng) for _ in range(3)] for b in BROKERS}
PATHS = ["/var/lib/kafka/data-1", "/var/lib/kafka/data-2", "/var/lib/kafka/data-3"]
FAILED = None  # (broker, directory index) of a failed disk, if any
MV = 21  # 3.9-IV0
HERE = Path(__file__).resolve().parent


def record(kind: str, data: dict, version: int = 0) -> dict:
    return {"type": kind, "version": version, "data": data}


def broker(broker_id: int, epoch: int) -> dict:
    online = [d for i, d in enumerate(DIRS[broker_id]) if (broker_id, i) != FAILED]
    return record(
        "RegisterBrokerRecord",
        {
            "brokerId": broker_id, "isMigratingZkBroker": False, "incarnationId": str(Uuid.random(rng)), "brokerEpoch": epoch,
            "endPoints": [{"name": "PLAINTEXT", "host": f"b{broker_id}.prod.example", "port": 9092, "securityProtocol": 0}],
            "features": [{"name": "metadata.version", "minSupportedVersion": 1, "maxSupportedVersion": MV},
                         {"name": "kraft.version", "minSupportedVersion": 0, "maxSupportedVersion": 1}],
            "rack": RACKS[broker_id], "fenced": False, "inControlledShutdown": False, "logDirs": online,
        },
        3,
    )


def partitions(topic_id: str, count: int, rf: int, candidates: list[int]) -> tuple[list[dict], dict]:
    """PartitionRecords over `candidates`, each replica in one of its broker's directories."""
    records, placement = [], {}
    for p in range(count):
        replicas = rng.sample(candidates, rf)
        slots = [rng.randrange(3) for _ in replicas]
        directories = [DIRS[b][s] for b, s in zip(replicas, slots)]
        isr = [b for b, s in zip(replicas, slots) if (b, s) != FAILED]
        leader = isr[0] if isr else -1
        placement[p] = list(zip(replicas, slots))
        records.append(record("PartitionRecord", {
            "partitionId": p, "topicId": topic_id, "replicas": replicas, "isr": isr or replicas[:1], "removingReplicas": [],
            "addingReplicas": [], "leader": leader, "leaderRecoveryState": 0, "leaderEpoch": rng.randrange(20),
            "partitionEpoch": rng.randrange(40), "directories": directories,
        }, 1))
    return records, placement


def main(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    topics = {name: str(Uuid.random(rng)) for name in ("orders", "payments", "clicks", "logs", "audit")}
    shape = {"orders": (12, 3, [1, 2, 3, 4]), "payments": (6, 3, [1, 2, 3, 4]), "clicks": (24, 2, [1, 2, 3, 4, 5]),
             "logs": (8, 3, [1, 2, 3, 4, 6]), "audit": (3, 3, [4, 5, 6])}
    generated = {name: partitions(topics[name], *shape[name]) for name in shape}
    head = [record("FeatureLevelRecord", {"name": "metadata.version", "featureLevel": MV})]
    brokers = [broker(b, 100 + 17 * b) for b in BROKERS]
    configs = [record("ConfigRecord", {"resourceType": 2, "resourceName": "orders", "name": "retention.ms", "value": "604800000"})]

    def state(names: list[str]) -> list[dict]:
        body = []
        for name in names:
            body.append(record("TopicRecord", {"name": name, "topicId": topics[name]}))
            body.extend(generated[name][0])
        return head + brokers + body + configs

    write(out / "older.jsonl", state(["orders", "payments", "clicks"]))
    write(out / "latest.jsonl", state(["orders", "payments", "clicks", "logs"]))
    # Committed after the latest snapshot: a new topic, a config, an ISR change, a no-op.
    clicks3 = generated["clicks"][0][3]["data"]
    log = [record("TopicRecord", {"name": "audit", "topicId": topics["audit"]}), *generated["audit"][0],
           record("ConfigRecord", {"resourceType": 2, "resourceName": "audit", "name": "cleanup.policy", "value": "compact"}),
           record("PartitionChangeRecord", {"partitionId": 3, "topicId": topics["clicks"], "isr": clicks3["replicas"], "leader": clicks3["replicas"][0]}, 1),
           record("NoOpRecord", {})]
    write(out / "log.jsonl", log)

    # kafka-log-dirs --describe, taken after the log's last record.
    size = {name: [int(rng.lognormvariate(21, 1.2)) for _ in range(shape[name][0])] for name in shape}
    described = []
    for b in BROKERS:
        log_dirs = []
        for slot, path in enumerate(PATHS):
            if (b, slot) == FAILED:
                log_dirs.append({"logDir": path, "error": "org.apache.kafka.common.errors.KafkaStorageException", "partitions": []})
                continue
            held = [{"partition": f"{name}-{p}", "size": size[name][p], "offsetLag": 0, "isFuture": False}
                    for name in shape for p, places in generated[name][1].items() if (b, slot) in places]
            log_dirs.append({"logDir": path, "error": None, "partitions": held})
        described.append({"broker": b, "logDirs": log_dirs})
    text = ("Querying brokers for log directories information\nReceived log directory information from brokers 1,2,3,4,5,6\n"
            + json.dumps({"brokers": described, "version": 1}) + "\n")
    (HERE / "log-dirs.txt").write_text(text)


def write(path: Path, records: list[dict]) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))


if __name__ == "__main__":
    main(Path(sys.argv[1]))
