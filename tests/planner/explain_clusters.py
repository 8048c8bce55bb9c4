"""Tiny clusters written out by hand for the `--explain` tests: brokers with racks and
directories, partitions with sizes and replicas, as the planner's tables."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from kjbod.image.cluster_columns import ClusterColumns
from kjbod.image.columns import PartitionTable
from kjbod.planner.tables import UNKNOWN_DIR, ClusterTables

GB = 10**9


def tables(
    brokers: dict[int, tuple[str | None, Sequence[int]]],
    partitions: Sequence[tuple[int, Sequence[tuple[int, int]]]],
    *,
    unregistered: Sequence[int] = (),
    fenced: Sequence[int] = (),
    offline: Sequence[tuple[int, int]] = (),
    topic: str = "t",
) -> ClusterTables:
    """`brokers`: id -> (rack, directory capacities in GB: /b{id}/d0, /b{id}/d1, ...).
    `partitions`: (size in GB, replicas as (broker id, directory index; -1 unknown)), all of
    topic `topic`, numbered from 0; the first replica leads. `offline`: (broker id, directory index)."""
    ids = sorted(brokers)
    racks = sorted({rack for rack, _ in brokers.values() if rack is not None})
    dir_broker, dir_paths, capacity, where = [], [], [], {}
    for b, broker_id in enumerate(ids):
        for i, gb in enumerate(brokers[broker_id][1]):
            where[(broker_id, i)] = len(dir_broker)
            dir_broker.append(b)
            dir_paths.append(f"/b{broker_id}/d{i}")
            capacity.append(gb * GB)
    registered = np.array([b not in unregistered for b in ids])
    offsets, rep_broker, rep_dir, sizes = [0], [], [], []
    for size, replicas in partitions:
        for broker_id, d in replicas:
            rep_broker.append(ids.index(broker_id))
            rep_dir.append(where[(broker_id, d)] if d >= 0 else UNKNOWN_DIR)
        offsets.append(len(rep_broker))
        sizes.append(size * GB)
    offline_dirs = {where[key] for key in offline}
    offsets_array = np.array(offsets, dtype=np.int64)
    counts = np.diff(offsets_array)
    rep_broker_array = np.array(rep_broker, dtype=np.int32)
    cluster = ClusterColumns(
        broker_ids=np.array(ids, dtype=np.int32),
        broker_registered=registered,
        broker_fenced=registered & np.isin(ids, list(fenced)),
        broker_shutting_down=np.zeros(len(ids), dtype=bool),
        broker_rack=np.array([racks.index(brokers[b][0]) if brokers[b][0] is not None else -1 for b in ids], dtype=np.int32),
        racks=racks,
        dir_broker=np.array(dir_broker, dtype=np.int32),
        dir_ids=[f"id{d}" for d in range(len(dir_broker))],
        dir_paths=dir_paths,
        dir_capacity=np.array(capacity, dtype=np.int64),
        dir_online=np.array([d not in offline_dirs for d in range(len(dir_broker))]),
        dir_cordoned=np.zeros(len(dir_broker), dtype=bool),
        table=PartitionTable.from_topics([]),
    )
    n = len(partitions)
    return ClusterTables(
        cluster=cluster,
        topics=[topic],
        topic_ids=["tid"],
        part_topic=np.zeros(n, dtype=np.int32),
        part_id=np.arange(n, dtype=np.int32),
        part_size=np.array(sizes, dtype=np.int64),
        part_leader=rep_broker_array[offsets_array[:-1]] if n else np.zeros(0, np.int32),
        part_offsets=offsets_array,
        rep_part=np.repeat(np.arange(n, dtype=np.int32), counts),
        rep_broker=rep_broker_array,
        rep_dir=np.array(rep_dir, dtype=np.int32),
        rep_pos=(np.arange(len(rep_broker)) - np.repeat(offsets_array[:-1], counts)).astype(np.int16),
        rep_in_sync=np.ones(len(rep_broker), dtype=bool),
        part_min_isr=np.ones(n, dtype=np.int16),
    )
