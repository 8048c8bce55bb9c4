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
from kjbod.tools.cluster.topic_configs_view import described_topic_configs


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
    """(rows, directory codes) of every replica listed on the broker, from the image's table
    (rows found for the broker's entries only: the row of every replica is millions of them)."""
    table = image.topics.table
    on_broker = np.flatnonzero(table.replicas.values == broker_id)
    return table.rows_of_entries(on_broker), table.directories[on_broker], table


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
    # A replica's directory is its first listing's: the broker's entries are in row order, so a
    # second listing in a row follows its first.
    first = np.ones(len(rows), np.bool_)
    first[1:] = rows[1:] != rows[:-1]
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
    return ",".join(f"{k}={v}" for k, v in described_topic_configs(image, topic.name))


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


def describe_topics(
    image: Image, name: str | None, *, lines: bool = True, data: bool = True
) -> tuple[list[str], list[dict[str, Any]]]:
    """kafka-topics --describe lines (with kjbod's Directories and Offline), and the same as data
    (either may be left out: a command prints one or the other)."""
    if name is not None and name not in image.topics.by_name:
        raise UserError(f"Topic '{name}' does not exist as expected")
    names = [name] if name is not None else sorted(image.topics.by_name)
    text: list[str] = []
    documents = []
    table = image.topics.table if lines else None
    for topic_name in names:
        topic = image.topics.by_name[topic_name]
        first = topic.partitions.get(min(topic.partitions)) if topic.partitions else None
        factor = len(first.replicas) - len(first.removing_replicas) if first else 0
        if lines:
            text.append(
                f"Topic: {topic.name}\tTopicId: {topic.topic_id}\tPartitionCount: {len(topic.partitions)}"
                f"\tReplicationFactor: {factor}\tConfigs: {_topic_configs(image, topic)}"
            )
            found = _partition_lines(image, table, topic)  # type: ignore[arg-type]
            text.extend(found if found is not None else (_partition_line(image, topic, pid, p) for pid, p in sorted(topic.partitions.items())))
        if not data:
            continue
        partitions = []
        for partition_id, p in sorted(topic.partitions.items()):
            partitions.append(
                {
                    "partition": partition_id,
                    "leader": p.leader,
                    "replicas": list(p.replicas),
                    "isr": list(p.isr),
                    "addingReplicas": list(p.adding_replicas),
                    "removingReplicas": list(p.removing_replicas),
                    "eligibleLeaderReplicas": list(p.elr),
                    "lastKnownElr": list(p.last_known_elr),
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
        documents.append(
            {
                "topic": topic.name,
                "topicId": topic.topic_id,
                "partitionCount": len(topic.partitions),
                "replicationFactor": factor,
                "configs": dict(sorted(image.configs.get(CONFIG_RESOURCE_TOPIC, topic.name).items())),
                "partitions": partitions,
            }
        )
    return text, documents


def _partition_lines(image: Image, table: PartitionTable, topic: TopicImage) -> list[str] | None:
    """The lines of _partition_line for every partition of a topic, made column by column from
    the image's table (a hot topic has a hundred thousand partitions); None for a topic with a
    replica list that names a broker twice, whose lines _partition_line makes one by one."""
    t = table.name_index.get(topic.name)
    if t is None or table.topic_ids[t] != topic.topic_id:
        return None
    lo, hi = table.rows(t)
    if hi == lo:
        return []
    start = table.replicas.start
    first, last = int(start[lo]), int(start[hi])
    brokers = table.replicas.values[first:last]
    codes = table.directories[first:last]
    lengths = np.diff(start[lo : hi + 1])
    row = np.repeat(np.arange(hi - lo), lengths)
    for shift in range(1, int(lengths.max())):
        if np.any((brokers[shift:] == brokers[:-shift]) & (row[shift:] == row[:-shift])):
            return None
    label, offline = _replica_directories(image, table, brokers, codes)
    text = _id_texts(brokers)
    bounds = (start[lo : hi + 1] - first).tolist()
    replicas = _comma_joined(text, bounds)
    directories = _comma_joined(label, bounds)
    offline_text = [""] * (hi - lo)
    if offline.any():
        for i in np.unique(row[offline]).tolist():
            offline_text[i] = ",".join(b for b, gone in zip(text[bounds[i] : bounds[i + 1]], offline[bounds[i] : bounds[i + 1]].tolist()) if gone)
    isr_start = table.isr.start
    isr_values = table.isr.values[int(isr_start[lo]) : int(isr_start[hi])]
    isr_bounds = isr_start[lo : hi + 1] - isr_start[lo]
    if np.array_equal(isr_bounds, start[lo : hi + 1] - first) and np.array_equal(isr_values, brokers):
        isr = replicas  # every replica in sync: the usual case
    else:
        isr = _comma_joined(_id_texts(isr_values), isr_bounds.tolist())
    leaders = _id_texts(table.leader[lo:hi], minus_one="none")
    ids = lambda values: ",".join(map(str, values))  # noqa: E731
    elr_rows = {column: _rows_in(column, lo, hi) for column in (table.elr, table.last_known_elr)}
    reassigning_rows = sorted(set(_rows_in(table.adding, lo, hi)) | set(_rows_in(table.removing, lo, hi)))
    head = f"\tTopic: {topic.name}\tPartition: "
    part_ids = table.part_id[lo:hi].tolist()
    if not reassigning_rows and not any(elr_rows.values()) and not offline.any():
        # The usual topic: no reassignment, no ELR, nothing offline; fewer fields to format.
        return [
            f"{head}{pid}\tLeader: {leader}\tReplicas: {r}\tIsr: {i}\tElr: \tLastKnownElr: \tDirectories: {d}\tOffline: "
            for pid, leader, r, i, d in zip(part_ids, leaders, replicas, isr, directories)
        ]
    reassigning = [""] * (hi - lo)
    elr = [""] * (hi - lo)
    last_known = [""] * (hi - lo)
    for column, out in ((table.elr, elr), (table.last_known_elr, last_known)):
        for r in elr_rows[column]:
            out[r - lo] = ids(column.get(r))
    for r in reassigning_rows:
        reassigning[r - lo] = f"\tAdding Replicas: {ids(table.adding.get(r))}\tRemoving Replicas: {ids(table.removing.get(r))}"
    return [
        f"{head}{pid}\tLeader: {leader}\tReplicas: {r}\tIsr: {i}{extra}\tElr: {e}\tLastKnownElr: {k}\tDirectories: {d}\tOffline: {o}"
        for pid, leader, r, i, extra, e, k, d, o in zip(part_ids, leaders, replicas, isr, reassigning, elr, last_known, directories, offline_text)
    ]


def _replica_directories(image: Image, table: PartitionTable, brokers: np.ndarray, codes: np.ndarray) -> tuple[list[str], np.ndarray]:
    """Each replica's directory label, and whether the replica is offline (the KIP-858 rule of
    replica_offline), worked out once per (broker, directory) pair."""
    dir_ids = table.dir_ids
    if len(codes) >= len(dir_ids):
        # A topic with more replicas than there are directories (a hot topic): each directory
        # once, with one broker listed in it (its own, as a directory belongs to one broker), and
        # the rare replica in another broker's directory pair by pair (below). No sort.
        holder = np.zeros(len(dir_ids), np.int64)
        holder[codes] = brokers
        present = np.zeros(len(dir_ids), np.bool_)
        present[codes] = True
        used = np.flatnonzero(present)
        label_of = np.empty(len(dir_ids), object)
        down_of = np.zeros(len(dir_ids), np.bool_)
        label_of[used], down_of[used] = _directory_states(image, holder[used].tolist(), [dir_ids[c] for c in used.tolist()])
        labels, offline = label_of[codes], down_of[codes]
        odd = np.flatnonzero(holder[codes] != brokers)
    else:
        labels, offline = np.empty(len(codes), object), np.zeros(len(codes), np.bool_)
        odd = np.arange(len(codes))
    if len(odd):
        pairs, pair_of = np.unique((brokers[odd].astype(np.int64) << 32) | codes[odd].astype(np.int64), return_inverse=True)
        keys = pairs.tolist()
        pair_labels, pair_down = _directory_states(image, [key >> 32 for key in keys], [dir_ids[key & 0xFFFFFFFF] for key in keys])
        labels[odd] = np.array(pair_labels, dtype=object)[pair_of]
        offline[odd] = np.array(pair_down, np.bool_)[pair_of]
    return labels.tolist(), offline


def _directory_states(image: Image, broker_ids: list[int], directories: list[str]) -> tuple[list[str], list[bool]]:
    """The label of each (broker, directory) pair, and whether a replica there is offline:
    replica_offline's rule with has_online_dir written out (a hot topic has 30,000 pairs)."""
    registrations, is_online = image.cluster.brokers, DirectoryId.is_online
    down = [
        (registration := registrations.get(broker_id)) is None or registration.fenced or not is_online(directory, registration.directories)
        for broker_id, directory in zip(broker_ids, directories)
    ]
    return image.cluster.directory_labels(broker_ids, directories), down


def _id_texts(values: np.ndarray, minus_one: str = "-1") -> list[str]:
    """Broker ids as text (-1 as `minus_one`), each distinct id converted once: a hot topic lists
    hundreds of thousands of replicas on a few thousand brokers."""
    if not len(values):
        return []
    high = int(values.max())
    if int(values.min()) < -1 or high >= 1 << 22 or high > 4 * len(values):
        return [minus_one if value == -1 else str(value) for value in values.tolist()]
    texts = np.array([minus_one, *map(str, range(high + 1))], dtype=object)
    return texts[values + 1].tolist()


def _comma_joined(texts: list[str], bounds: list[int]) -> list[str]:
    """Each row's texts (row i's are texts[bounds[i]:bounds[i + 1]]) joined by commas; rows of
    one width (one replication factor) at C speed."""
    rows = len(bounds) - 1
    width = bounds[1] - bounds[0] if rows else 0
    if rows and width and bounds == list(range(bounds[0], bounds[0] + width * rows + 1, width)) and len(texts) == bounds[-1] and not bounds[0]:
        return list(map(",".join, zip(*(texts[j::width] for j in range(width)))))
    return [",".join(texts[bounds[i] : bounds[i + 1]]) for i in range(rows)]


def _rows_in(column: Any, lo: int, hi: int) -> list[int]:
    """The rows lo:hi whose list in a sparse column is not empty."""
    rows = column.rows
    return rows[int(np.searchsorted(rows, lo)) : int(np.searchsorted(rows, hi))].tolist()
