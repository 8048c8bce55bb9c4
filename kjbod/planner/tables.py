"""The cluster as plain tables (numpy arrays) for the planner.

Brokers and directories are the cluster model's (kjbod.image.cluster_columns: its codes, its
conventions); partitions and replicas are rows indexed from 0, partitions in topic name order,
and replicas refer to their partition, broker and directory by index. Everything is read from
the image's columns: array arithmetic from the start, no object per partition.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from kjbod.image import Image
from kjbod.image.cluster_columns import BROKER_CHOOSES, NO_RACK, UNKNOWN_DIR, ClusterColumns, cluster_columns
from kjbod.image.configs import min_insync, min_insync_default

__all__ = ["BROKER_CHOOSES", "NO_RACK", "UNKNOWN_DIR", "ClusterTables", "build_tables"]


def _of_cluster(name: str, doc: str) -> property:
    return property(lambda self: getattr(self.cluster, name), doc=doc)


@dataclass
class ClusterTables:
    # Brokers and directories (by index, as the model codes them).
    cluster: ClusterColumns
    # Partitions
    topics: list[str]
    topic_ids: list[str]
    part_topic: np.ndarray  # int32
    part_id: np.ndarray  # int32
    part_size: np.ndarray  # int64 bytes
    part_leader: np.ndarray  # int32 broker index, -1 when leaderless or the leader is unknown
    part_offsets: np.ndarray  # int64, replicas of partition i are rows part_offsets[i]:part_offsets[i+1]
    # Replicas
    rep_part: np.ndarray  # int32
    rep_broker: np.ndarray  # int32 broker index
    rep_dir: np.ndarray  # int32 directory index or UNKNOWN_DIR
    rep_pos: np.ndarray  # int16 position in the partition's replica list (0 = preferred leader)
    rep_in_sync: np.ndarray  # bool: the replica is in its partition's ISR
    part_min_isr: np.ndarray  # int16: the topic's min.insync.replicas (else the cluster default, else 1)

    # The model's brokers and directories, read where the planner reads them.
    broker_ids = _of_cluster("broker_ids", "int32, ascending")
    broker_rack = _of_cluster("broker_rack", "int32 rack index, NO_RACK when the broker has no rack")
    racks = _of_cluster("racks", "the rack names, sorted")
    broker_registered = _of_cluster("broker_registered", "bool (replicas may sit on brokers that are not registered)")
    broker_active = _of_cluster("broker_active", "bool: registered, unfenced, not in controlled shutdown")
    broker_count = _of_cluster("broker_count", "the number of brokers")
    broker_index = _of_cluster("broker_index", "broker id -> index")
    broker_capacity = _of_cluster("broker_capacity", "sum of the online directories' capacities (0 when any is unknown)")
    dir_broker = _of_cluster("dir_broker", "int32 broker index")
    dir_ids = _of_cluster("dir_ids", "directory ids")
    dir_labels = _of_cluster("dir_labels", "each directory's path, else its id")
    dir_capacity = _of_cluster("dir_capacity", "int64, 0 when unknown")
    dir_online = _of_cluster("dir_online", "bool")
    dir_cordoned = _of_cluster("dir_cordoned", "bool")

    @property
    def replica_count(self) -> int:
        return len(self.rep_part)

    @cached_property
    def rep_size(self) -> np.ndarray:
        return self.part_size[self.rep_part]

    @cached_property
    def rep_is_leader(self) -> np.ndarray:
        return self.rep_broker == self.part_leader[self.rep_part]

    def broker_dirs(self, broker: int) -> np.ndarray:
        return self.cluster.broker_dirs(broker)

    def partitions_with(self, replicas: np.ndarray) -> np.ndarray:
        """Per partition: whether any of its replicas is among `replicas` (a mask over replicas)."""
        found = np.zeros(len(self.part_id), dtype=bool)
        found[self.rep_part[replicas]] = True
        return found


def build_tables(image: Image) -> ClusterTables:
    """The planner's tables, read from the image's columns (kjbod/image/columns.py) through the
    cluster model: no object per partition or replica is made, whatever the size of the cluster."""
    cluster = cluster_columns(image)
    table = cluster.table

    # Partitions in topic name order, then partition id (the table groups them by topic).
    topics = sorted(table.topic_names)
    by_name = table.name_index
    name_order = np.array([by_name[name] for name in topics], np.int64)
    rank = np.empty(table.topic_count, np.int64)
    rank[name_order] = np.arange(table.topic_count)
    rows = np.argsort(rank[table.part_topic], kind="stable") if table.partition_count else np.zeros(0, np.int64)
    part_topic = rank[table.part_topic[rows]].astype(np.int32)
    default_min_isr = min_insync_default(image.configs)
    topic_min_isr = np.array([min_insync(image.configs, name, default_min_isr) for name in topics], np.int16)

    # Replicas of those partitions, in list order, where the work in flight leaves them. A
    # running reassignment is planned from where it ends, as `reassign check` sees it: the
    # replicas it removes are gone. A partition the plan leaves alone finishes that
    # reassignment; one it moves gets a new target, which replaces it (KIP-455). A replica being
    # moved between its broker's directories (KIP-113) is planned where the move puts it:
    # keeping it there needs no entry; any other directory redirects or cancels the move.
    settled = cluster.settled(rows)
    in_sync = table.in_isr(settled.entry)
    replication = np.bincount(settled.position, minlength=len(rows))
    broker_ids = cluster.broker_ids
    rep_broker = np.searchsorted(broker_ids, settled.broker).astype(np.int32)
    part_offsets = np.zeros(len(rows) + 1, dtype=np.int64)
    np.cumsum(replication, out=part_offsets[1:])
    counts = np.diff(part_offsets)
    leader_id = table.leader[rows].astype(np.int64)
    leader_index = np.searchsorted(broker_ids, leader_id)
    leader_known = (leader_index < len(broker_ids)) & (broker_ids[np.minimum(leader_index, len(broker_ids) - 1)] == leader_id)
    return ClusterTables(
        cluster=cluster,
        topics=topics,
        topic_ids=[table.topic_ids[t] for t in name_order.tolist()],
        part_topic=part_topic,
        part_id=table.part_id[rows].astype(np.int32),
        part_size=np.maximum(table.size[rows], 0).astype(np.int64),
        part_leader=np.where(leader_known & (leader_id >= 0), leader_index, -1).astype(np.int32),
        part_offsets=part_offsets,
        rep_part=np.repeat(np.arange(len(rows), dtype=np.int32), counts),
        rep_broker=rep_broker,
        rep_dir=settled.directory.astype(np.int32),
        rep_pos=(np.arange(len(rep_broker)) - np.repeat(part_offsets[:-1], counts)).astype(np.int16),
        rep_in_sync=in_sync,
        part_min_isr=topic_min_isr[part_topic] if len(part_topic) else np.zeros(0, np.int16),
    )
