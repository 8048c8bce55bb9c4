"""The cluster as plain tables (numpy arrays) for the planner.

Brokers, directories, partitions and replicas are rows indexed from 0; replicas refer to their
partition, broker and directory by index. The tables are read from the image's columns
(`image.topics.table`): array arithmetic from the start, no object per partition.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from kjbod.image import Image
from kjbod.image.columns import pair
from kjbod.image.configs import min_insync, min_insync_default

NO_RACK = -1
UNPLACED = -1  # a replica's directory is not a known, real directory (UNASSIGNED, LOST, ...)


@dataclass
class ClusterTables:
    # Brokers
    broker_ids: np.ndarray  # int32, sorted
    broker_rack: np.ndarray  # int32 rack index, NO_RACK when the broker has no rack
    racks: list[str]
    broker_registered: np.ndarray  # bool (replicas may sit on brokers that are not registered)
    broker_active: np.ndarray  # bool: registered, unfenced, not in controlled shutdown
    # Directories
    dir_broker: np.ndarray  # int32 broker index
    dir_ids: list[str]
    dir_paths: list[str]
    dir_capacity: np.ndarray  # int64, 0 when unknown
    dir_online: np.ndarray  # bool
    dir_cordoned: np.ndarray  # bool
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
    rep_dir: np.ndarray  # int32 directory index or UNPLACED
    rep_pos: np.ndarray  # int16 position in the partition's replica list (0 = preferred leader)
    rep_in_sync: np.ndarray  # bool: the replica is in its partition's ISR
    part_min_isr: np.ndarray  # int16: the topic's min.insync.replicas (else the cluster default, else 1)

    @property
    def broker_count(self) -> int:
        return len(self.broker_ids)

    @property
    def replica_count(self) -> int:
        return len(self.rep_part)

    @cached_property
    def rep_size(self) -> np.ndarray:
        return self.part_size[self.rep_part]

    @cached_property
    def broker_index(self) -> dict[int, int]:
        return {int(b): i for i, b in enumerate(self.broker_ids)}

    @cached_property
    def rep_is_leader(self) -> np.ndarray:
        return self.rep_broker == self.part_leader[self.rep_part]

    @cached_property
    def broker_capacity(self) -> np.ndarray:
        """Sum of the online directories' capacities (0 when any is unknown)."""
        online = self.dir_online
        capacity = np.bincount(self.dir_broker[online], weights=self.dir_capacity[online], minlength=self.broker_count)
        unknown = np.bincount(self.dir_broker[online & (self.dir_capacity <= 0)], minlength=self.broker_count) > 0
        capacity[unknown] = 0
        return capacity.astype(np.int64)

    def broker_dirs(self, broker: int) -> np.ndarray:
        return np.flatnonzero(self.dir_broker == broker)

    def partitions_with(self, replicas: np.ndarray) -> np.ndarray:
        """Per partition: whether any of its replicas is among `replicas` (a mask over replicas)."""
        found = np.zeros(len(self.part_id), dtype=bool)
        found[self.rep_part[replicas]] = True
        return found


def build_tables(image: Image) -> ClusterTables:
    """The planner's tables, read from the image's columns (kjbod/image/columns.py): no object
    per partition or replica is made, whatever the size of the cluster."""
    cluster = image.cluster
    known_brokers = set(cluster.brokers)
    table = image.topics.table

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

    # Replicas of those partitions, in list order. A running reassignment is planned from where it
    # ends, as `reassign check` sees it: the replicas it removes are gone. A partition the plan
    # leaves alone finishes that reassignment; one it moves gets a new target, which replaces it
    # (KIP-455).
    entry_row, entry = table.remaining_replicas(rows)
    broker_of = table.replicas.values[entry].astype(np.int64)
    codes = table.directories[entry]
    # A replica being moved between its broker's directories (KIP-113) is planned where the move
    # puts it: its future replica's directory will hold its bytes. Keeping it there needs no
    # entry; any other directory redirects or cancels the move.
    futures = np.flatnonzero(table.log_future & (table.log_dir >= 0))
    if len(futures):
        future_keys = pair(table.log_row[futures], table.log_broker[futures])
        order = np.argsort(future_keys, kind="stable")
        keys = pair(table.replica_row[entry], broker_of)
        position = np.minimum(np.searchsorted(future_keys[order], keys), len(order) - 1)
        moving = future_keys[order][position] == keys
        codes = np.where(moving, table.log_dir[futures[order][position]], codes)
    in_sync = table.in_isr(entry)
    replication = np.bincount(entry_row, minlength=len(rows))
    rep_broker_id = broker_of

    broker_ids = np.union1d(np.array(sorted(known_brokers), dtype=np.int64), rep_broker_id).astype(np.int32)
    index = {int(b): i for i, b in enumerate(broker_ids)}
    racks = sorted({b.rack for b in cluster.brokers.values() if b.rack is not None})
    rack_index = {rack: i for i, rack in enumerate(racks)}
    broker_rack = np.full(len(broker_ids), NO_RACK, dtype=np.int32)
    registered = np.zeros(len(broker_ids), dtype=bool)
    active = np.zeros(len(broker_ids), dtype=bool)
    for broker in cluster.brokers.values():
        i = index[broker.id]
        registered[i] = True
        active[i] = broker.is_active
        if broker.rack is not None:
            broker_rack[i] = rack_index[broker.rack]

    dir_broker: list[int] = []
    dir_ids: list[str] = []
    dir_paths: list[str] = []
    dir_capacity: list[int] = []
    dir_online: list[bool] = []
    dir_cordoned: list[bool] = []
    for broker_id in sorted(known_brokers):
        broker = cluster.brokers[broker_id]
        known = {d.directory_id: d for d in cluster.log_dirs.get(broker_id, ())}
        for directory in dict.fromkeys([*sorted(known, key=lambda d: known[d].path), *broker.directories]):
            log_dir = known.get(directory)
            dir_broker.append(index[broker_id])
            dir_ids.append(directory)
            dir_paths.append(log_dir.path if log_dir else directory)
            dir_capacity.append(log_dir.capacity_bytes or 0 if log_dir else 0)
            dir_online.append(directory in broker.directories)
            dir_cordoned.append(directory in broker.cordoned_directories)
    dir_broker_array = np.array(dir_broker, dtype=np.int32)

    rep_broker = np.searchsorted(broker_ids, rep_broker_id).astype(np.int32)
    rep_dir = _replica_directories(codes, table.dir_ids, rep_broker, dir_ids, dir_broker_array)
    part_offsets = np.zeros(len(rows) + 1, dtype=np.int64)
    np.cumsum(replication, out=part_offsets[1:])
    counts = np.diff(part_offsets)
    leader_id = table.leader[rows].astype(np.int64)
    leader_index = np.searchsorted(broker_ids, leader_id)
    leader_known = (leader_index < len(broker_ids)) & (broker_ids[np.minimum(leader_index, len(broker_ids) - 1)] == leader_id)
    return ClusterTables(
        broker_ids=broker_ids,
        broker_rack=broker_rack,
        racks=racks,
        broker_registered=registered,
        broker_active=active,
        dir_broker=dir_broker_array,
        dir_ids=dir_ids,
        dir_paths=dir_paths,
        dir_capacity=np.array(dir_capacity, dtype=np.int64),
        dir_online=np.array(dir_online, dtype=bool),
        dir_cordoned=np.array(dir_cordoned, dtype=bool),
        topics=topics,
        topic_ids=[table.topic_ids[t] for t in name_order.tolist()],
        part_topic=part_topic,
        part_id=table.part_id[rows].astype(np.int32),
        part_size=np.maximum(table.size[rows], 0).astype(np.int64),
        part_leader=np.where(leader_known & (leader_id >= 0), leader_index, -1).astype(np.int32),
        part_offsets=part_offsets,
        rep_part=np.repeat(np.arange(len(rows), dtype=np.int32), counts),
        rep_broker=rep_broker,
        rep_dir=rep_dir,
        rep_pos=(np.arange(len(rep_broker)) - np.repeat(part_offsets[:-1], counts)).astype(np.int16),
        rep_in_sync=in_sync,
        part_min_isr=topic_min_isr[part_topic] if len(part_topic) else np.zeros(0, np.int16),
    )


def _replica_directories(
    codes: np.ndarray, code_ids: list[str], rep_broker: np.ndarray, dir_ids: list[str], dir_broker: np.ndarray
) -> np.ndarray:
    """Each replica's directory index from its directory code (into `code_ids`): its directory
    id among its own broker's directories (UNPLACED for UNASSIGNED, LOST, MIGRATING or an id
    the broker does not have)."""
    by_id: dict[str, int] = {}
    shared: set[str] = set()
    for i, directory in enumerate(dir_ids):
        if directory in by_id:
            shared.add(directory)  # the same id on two brokers: resolved per replica below
        by_id[directory] = i
    of_code = np.array([by_id.get(d, UNPLACED) for d in code_ids], dtype=np.int32)
    rep_dir = of_code[codes] if len(codes) else np.zeros(0, np.int32)
    if shared:
        shared_codes = [c for c, d in enumerate(code_ids) if d in shared]
        by_broker = {(int(dir_broker[i]), d): i for i, d in enumerate(dir_ids) if d in shared}
        for r in np.flatnonzero(np.isin(codes, shared_codes)).tolist():
            rep_dir[r] = by_broker.get((int(rep_broker[r]), code_ids[codes[r]]), UNPLACED)
    mismatched = (rep_dir >= 0) & (dir_broker[np.maximum(rep_dir, 0)] != rep_broker) if len(dir_broker) else rep_dir >= 0
    rep_dir[mismatched] = UNPLACED
    return rep_dir
