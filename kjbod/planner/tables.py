"""The cluster as plain tables (numpy arrays) for the planner.

Brokers, directories, partitions and replicas are rows indexed from 0; replicas refer to their
partition, broker and directory by index. Building the tables is the only place that walks the
cluster state object by object; everything after is array arithmetic.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from kjbod.image import Image
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


def build_tables(image: Image) -> ClusterTables:
    cluster = image.cluster
    known_brokers = set(cluster.brokers)

    # Partitions first, as flat lists (one pass over the image; a million partitions take a
    # few seconds in Python, so nothing else is done per replica here).
    topics = sorted(image.topics.by_name)
    topic_ids = [image.topics.by_name[name].topic_id for name in topics]
    part_topic: list[int] = []
    part_id: list[int] = []
    part_size: list[int] = []
    part_leader_id: list[int] = []
    replication: list[int] = []
    replica_ids: list[int] = []
    replica_dirs: list[str] = []
    in_sync: list[bool] = []
    min_isr: list[int] = []
    default_min_isr = min_insync_default(image.configs)
    for t, name in enumerate(topics):
        topic = image.topics.by_name[name]
        sizes = topic.sizes
        pids = sorted(topic.partitions)
        registrations = [topic.partitions[pid] for pid in pids]
        part_topic.extend([t] * len(pids))
        part_id.extend(pids)
        part_size.extend([sizes.get(pid, 0) for pid in pids])
        part_leader_id.extend([p.leader for p in registrations])
        min_isr.extend([min_insync(image.configs, name, default_min_isr)] * len(pids))
        futures = {(pid, broker): log.directory_id for (pid, broker, future), log in topic.replica_logs.items() if future and log.directory_id}
        for pid, p in zip(pids, registrations):
            replicas, directories = p.replicas, p.directories
            if p.removing_replicas:
                # A running reassignment is planned from where it ends, as `reassign check` sees it:
                # the replicas it removes are gone. A partition the plan leaves alone finishes that
                # reassignment; one it moves gets a new target, which replaces it (KIP-455).
                kept = [i for i, r in enumerate(replicas) if r not in p.removing_replicas]
                replicas, directories = tuple(replicas[i] for i in kept), tuple(directories[i] for i in kept)
            replication.append(len(replicas))
            replica_ids.extend(replicas)
            if futures:
                # A replica being moved between its broker's directories (KIP-113) is planned where
                # the move puts it: its future replica's directory will hold its bytes. Keeping it
                # there needs no entry; any other directory redirects or cancels the move.
                replica_dirs.extend([futures.get((pid, r), d) for r, d in zip(replicas, directories)])
            else:
                replica_dirs.extend(directories)
            in_sync.extend([r in p.isr for r in replicas])
    rep_broker_id = np.array(replica_ids, dtype=np.int64)

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
    rep_dir = _replica_directories(replica_dirs, rep_broker, dir_ids, dir_broker_array)
    part_offsets = np.zeros(len(replication) + 1, dtype=np.int64)
    np.cumsum(replication, out=part_offsets[1:])
    counts = np.diff(part_offsets)
    leader_id = np.array(part_leader_id, dtype=np.int64)
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
        topic_ids=topic_ids,
        part_topic=np.array(part_topic, dtype=np.int32),
        part_id=np.array(part_id, dtype=np.int32),
        part_size=np.array(part_size, dtype=np.int64),
        part_leader=np.where(leader_known & (leader_id >= 0), leader_index, -1).astype(np.int32),
        part_offsets=part_offsets,
        rep_part=np.repeat(np.arange(len(part_topic), dtype=np.int32), counts),
        rep_broker=rep_broker,
        rep_dir=rep_dir,
        rep_pos=(np.arange(len(rep_broker)) - np.repeat(part_offsets[:-1], counts)).astype(np.int16),
        rep_in_sync=np.array(in_sync, dtype=bool),
        part_min_isr=np.array(min_isr, dtype=np.int16),
    )


def _replica_directories(replica_dirs: list[str], rep_broker: np.ndarray, dir_ids: list[str], dir_broker: np.ndarray) -> np.ndarray:
    """Each replica's directory index: its directory id among its own broker's directories
    (UNPLACED for UNASSIGNED, LOST, MIGRATING or an id the broker does not have)."""
    by_id: dict[str, int] = {}
    shared: set[str] = set()
    for i, directory in enumerate(dir_ids):
        if directory in by_id:
            shared.add(directory)  # the same id on two brokers: resolved per replica below
        by_id[directory] = i
    rep_dir = np.array([by_id.get(d, UNPLACED) for d in replica_dirs], dtype=np.int32)
    if shared:
        by_broker = {(int(dir_broker[i]), d): i for i, d in enumerate(dir_ids) if d in shared}
        for r in np.flatnonzero(np.isin(np.array(replica_dirs, dtype=object), list(shared))):
            rep_dir[r] = by_broker.get((int(rep_broker[r]), replica_dirs[r]), UNPLACED)
    mismatched = (rep_dir >= 0) & (dir_broker[np.maximum(rep_dir, 0)] != rep_broker)
    rep_dir[mismatched] = UNPLACED
    return rep_dir
