"""kjbod's image in the shape the kafka-oracle prints Kafka's MetadataImage (`ReadSnapshot
--print-json`), so a test can compare what kjbod reads with what Kafka's own loader built."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from kjbod.image import Image
from kjbod.records import CONFIG_RESOURCE_BROKER, CONFIG_RESOURCE_TOPIC

SECURITY_PROTOCOLS = {0: "PLAINTEXT", 1: "SSL", 2: "SASL_PLAINTEXT", 3: "SASL_SSL"}
RESOURCE_TYPES = {CONFIG_RESOURCE_TOPIC: "TOPIC", CONFIG_RESOURCE_BROKER: "BROKER"}


def kafka_image(path: Path) -> dict[str, Any]:
    """The image line of a frozen `ReadSnapshot --print-json` output."""
    for line in path.read_text().splitlines():
        if line.startswith('{"image"'):
            return json.loads(line)["image"]
    raise AssertionError(f"no image in {path}")


def oracle_shape(image: Image) -> dict[str, Any]:
    """The parts of the oracle's image JSON kjbod models: features, brokers, topics, configs."""
    mv = image.features.metadata_version
    assert mv is not None
    return {
        "metadataVersion": mv.name,
        "metadataVersionLevel": mv.level,
        "finalizedFeatures": dict(sorted(image.features.finalized.items())),
        "brokers": [
            {
                "id": b.id,
                "epoch": b.epoch,
                "incarnationId": b.incarnation_id,
                "rack": b.rack,
                "fenced": b.fenced,
                "inControlledShutdown": b.in_controlled_shutdown,
                "isMigratingZkBroker": b.is_migrating_zk_broker,
                "directories": list(b.directories),
                "listeners": [
                    {"name": e.name, "securityProtocol": SECURITY_PROTOCOLS[e.security_protocol], "host": e.host, "port": e.port}
                    for e in sorted(b.listeners, key=lambda e: e.name)
                ],
                "supportedFeatures": {name: {"min": lo, "max": hi} for name, (lo, hi) in sorted(b.supported_features.items())},
            }
            for b in sorted(image.cluster.brokers.values(), key=lambda b: b.id)
        ],
        "topics": [
            {
                "name": topic.name,
                "id": topic.topic_id,
                "partitions": [
                    {
                        "partition": pid,
                        "replicas": list(p.replicas),
                        "directories": list(p.directories),
                        "isr": list(p.isr),
                        "leader": p.leader,
                        "leaderEpoch": p.leader_epoch,
                        "partitionEpoch": p.partition_epoch,
                        "elr": list(p.elr),
                        "lastKnownElr": list(p.last_known_elr),
                        "addingReplicas": list(p.adding_replicas),
                        "removingReplicas": list(p.removing_replicas),
                        "leaderRecoveryState": "RECOVERED" if p.leader_recovery_state == 0 else "RECOVERING",
                    }
                    for pid, p in sorted(topic.partitions.items())
                ],
            }
            for topic in sorted(image.topics.by_id.values(), key=lambda t: t.name)
        ],
        "configs": {
            f"{RESOURCE_TYPES[kind]}:{name}": dict(sorted(values.items()))
            for (kind, name), values in sorted(image.configs.resources.items())
        },
    }


def project(kafka: dict[str, Any]) -> dict[str, Any]:
    """Kafka's image JSON on the keys `oracle_shape` gives (listeners in name order)."""
    shaped = {key: kafka[key] for key in ("metadataVersion", "metadataVersionLevel", "finalizedFeatures", "brokers", "topics", "configs")}
    shaped["finalizedFeatures"] = dict(sorted(shaped["finalizedFeatures"].items()))
    for broker in shaped["brokers"]:
        broker["listeners"] = sorted(broker["listeners"], key=lambda e: e["name"])
        broker["supportedFeatures"] = dict(sorted(broker["supportedFeatures"].items()))
    shaped["configs"] = {key: dict(sorted(values.items())) for key, values in sorted(shaped["configs"].items())}
    return shaped
