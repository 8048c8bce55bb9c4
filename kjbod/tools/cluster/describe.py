"""Read-side views of the cluster state: brokers, their directories, and topics as
`kafka-topics --describe` prints them (plus where each replica lives and which are offline)."""

from __future__ import annotations

from typing import Any

import numpy as np

from kjbod.common.kafka_uuid import DirectoryId
from kjbod.errors import UserError
from kjbod.image import Image, PartitionRegistration, TopicImage
from kjbod.image.columns import PartitionTable, sum_by
from kjbod.records import CONFIG_RESOURCE_TOPIC


def replica_offline(image: Image, partition: PartitionRegistration, replica: int) -> bool:
    """The KIP-858 rule (KRaftMetadataCache): unregistered, fenced, or its directory not online."""
    broker = image.cluster.brokers.get(replica)
    if broker is None or broker.fenced:
        return True
    return not broker.has_online_dir(partition.directory(replica))


def offline_replicas(image: Image, partition: PartitionRegistration) -> list[int]:
    return [r for r in partition.replicas if replica_offline(image, partition, r)]


def broker_state_name(image: Image, broker_id: int) -> str:
    broker = image.cluster.brokers[broker_id]
    if broker.fenced:
        return "FENCED"
    return "CONTROLLED_SHUTDOWN" if broker.in_controlled_shutdown else "UNFENCED"


def broker_rows(image: Image) -> list[dict[str, Any]]:
    table = image.topics.table
    replicas = table.partitions_per_broker()
    leaders = table.leaders_per_broker()
    rows = []
    for broker_id in sorted(image.cluster.brokers):
        broker = image.cluster.brokers[broker_id]
        configured = image.cluster.log_dirs.get(broker_id, ())
        rows.append(
            {
                "id": broker_id,
                "rack": broker.rack,
                "state": broker_state_name(image, broker_id),
                "epoch": broker.epoch,
                "onlineDirs": len(broker.directories),
                "configuredDirs": max(len(configured), len(broker.directories)),
                "cordonedDirs": len(broker.cordoned_directories),
                "replicas": replicas.get(broker_id, 0),
                "leaders": leaders.get(broker_id, 0),
            }
        )
    return rows


def _broker_replicas(image: Image, broker_id: int) -> tuple[np.ndarray, np.ndarray, PartitionTable]:
    """(rows, directory codes) of every replica listed on the broker, from the image's table."""
    table = image.topics.table
    on_broker = np.flatnonzero(table.replicas.values == broker_id)
    return table.replica_row[on_broker], table.directories[on_broker], table


def broker_details(image: Image, broker_id: int) -> dict[str, Any]:
    broker = image.cluster.brokers.get(broker_id)
    if broker is None:
        raise UserError(f"Broker {broker_id} is not registered")
    rows, codes, table = _broker_replicas(image, broker_id)
    # Replicas, leaders and bytes per directory (a partition of unknown size counts 0 bytes).
    dir_count = len(table.dir_ids)
    replicas = np.bincount(codes, minlength=dir_count)
    leaders = np.bincount(codes[table.leader[rows] == broker_id], minlength=dir_count)
    size = sum_by(codes, np.maximum(table.size[rows], 0), dir_count)
    code_of = table.dir_index
    known = {d.directory_id: d for d in image.cluster.log_dirs.get(broker_id, ())}
    ids = list(dict.fromkeys([*broker.directories, *known]))
    directories = []
    for directory in ids:
        log_dir = known.get(directory)
        online = directory in broker.directories
        code = code_of.get(directory)
        used = int(size[code]) if code is not None else 0
        directories.append(
            {
                "directoryId": directory,
                "path": log_dir.path if log_dir else None,
                "state": ("cordoned" if directory in broker.cordoned_directories else "online") if online else "offline",
                "replicas": int(replicas[code]) if code is not None else 0,
                "leaders": int(leaders[code]) if code is not None else 0,
                "sizeBytes": used,
                "capacityBytes": log_dir.capacity_bytes if log_dir else None,
                "usedPercent": round(100 * used / log_dir.capacity_bytes, 1) if log_dir and log_dir.capacity_bytes else None,
            }
        )
    listed = set(ids)
    elsewhere = sorted(
        (table.dir_ids[code], int(replicas[code])) for code in np.flatnonzero(replicas).tolist() if table.dir_ids[code] not in listed
    )
    # Offline replicas (the KIP-858 rule of replica_offline), in topic name then partition order.
    first = table.first_listing[np.flatnonzero(table.replicas.values == broker_id)]  # a replica's directory is its first listing's
    offline_codes = [c for c in np.unique(codes).tolist() if broker.fenced or not broker.has_online_dir(table.dir_ids[c])]
    offline_rows = np.unique(rows[first & np.isin(codes, offline_codes)])
    names = table.topic_names
    offline = [
        f"{names[t]}-{pid}"
        for t, pid in sorted(zip(table.part_topic[offline_rows].tolist(), table.part_id[offline_rows].tolist()), key=lambda k: (names[k[0]], k[1]))
    ]
    return {
        "id": broker_id,
        "state": broker_state_name(image, broker_id),
        "epoch": broker.epoch,
        "incarnationId": broker.incarnation_id,
        "rack": broker.rack,
        "supportedFeatures": {name: {"min": lo, "max": hi} for name, (lo, hi) in sorted(broker.supported_features.items())},
        "directories": directories,
        # Replicas recorded in a directory that is not one of this broker's (UNASSIGNED, LOST, old disks).
        "replicasWithoutADirectory": [
            {"directory": DirectoryId.describe(d) or d, "replicas": count} for d, count in elsewhere
        ],
        "offlineReplicas": offline,
    }


def _topic_configs(image: Image, topic: TopicImage) -> str:
    configs = image.configs.get(CONFIG_RESOURCE_TOPIC, topic.name)
    return ",".join(f"{k}={v}" for k, v in sorted(configs.items()))


def _partition_line(image: Image, topic: TopicImage, partition_id: int, p: PartitionRegistration) -> str:
    ids = lambda values: ",".join(map(str, values))  # noqa: E731
    line = (
        f"\tTopic: {topic.name}\tPartition: {partition_id}\tLeader: {'none' if p.leader == -1 else p.leader}"
        f"\tReplicas: {ids(p.replicas)}\tIsr: {ids(p.isr)}"
    )
    if p.is_reassigning:
        line += f"\tAdding Replicas: {ids(p.adding_replicas)}\tRemoving Replicas: {ids(p.removing_replicas)}"
    line += f"\tElr: {ids(p.elr)}\tLastKnownElr: {ids(p.last_known_elr)}"
    directories = ",".join(image.cluster.directory_label(b, d) for b, d in zip(p.replicas, p.directories))
    return line + f"\tDirectories: {directories}\tOffline: {ids(offline_replicas(image, p))}"


def describe_topics(image: Image, name: str | None) -> tuple[list[str], list[dict[str, Any]]]:
    """kafka-topics --describe lines (with kjbod's Directories and Offline), and the same as data."""
    if name is not None and name not in image.topics.by_name:
        raise UserError(f"Topic '{name}' does not exist as expected")
    names = [name] if name is not None else sorted(image.topics.by_name)
    lines: list[str] = []
    data = []
    for topic_name in names:
        topic = image.topics.by_name[topic_name]
        first = topic.partitions.get(min(topic.partitions)) if topic.partitions else None
        factor = len(first.replicas) - len(first.removing_replicas) if first else 0
        lines.append(
            f"Topic: {topic.name}\tTopicId: {topic.topic_id}\tPartitionCount: {len(topic.partitions)}"
            f"\tReplicationFactor: {factor}\tConfigs: {_topic_configs(image, topic)}"
        )
        partitions = []
        for partition_id, p in sorted(topic.partitions.items()):
            lines.append(_partition_line(image, topic, partition_id, p))
            partitions.append(
                {
                    "partition": partition_id,
                    "leader": p.leader,
                    "replicas": list(p.replicas),
                    "isr": list(p.isr),
                    "addingReplicas": list(p.adding_replicas),
                    "removingReplicas": list(p.removing_replicas),
                    "directories": [
                        {"broker": b, "directoryId": d, "label": image.cluster.directory_label(b, d)} for b, d in zip(p.replicas, p.directories)
                    ],
                    "offline": offline_replicas(image, p),
                    "leaderEpoch": p.leader_epoch,
                    "partitionEpoch": p.partition_epoch,
                    "leaderRecoveryState": "RECOVERING" if p.leader_recovery_state == 1 else "RECOVERED",
                    "sizeBytes": topic.size(partition_id),
                }
            )
        data.append(
            {
                "topic": topic.name,
                "topicId": topic.topic_id,
                "partitionCount": len(topic.partitions),
                "replicationFactor": factor,
                "configs": dict(sorted(image.configs.get(CONFIG_RESOURCE_TOPIC, topic.name).items())),
                "partitions": partitions,
            }
        )
    return lines, data
