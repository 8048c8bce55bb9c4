"""Property test: on any small cluster (racks or none, fenced and unregistered brokers, offline
and cordoned directories, unknown capacities, nearly full disks, partitions already breaking
the rack rule, out-of-sync replicas) and any goal, the planner keeps every hard rule."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kjbod.errors import UserError
from kjbod.planner.core import Goal, PlanRequest, RackMode, plan
from kjbod.planner.engine import LocalEngine
from kjbod.image.cluster_columns import ClusterColumns
from kjbod.image.columns import PartitionTable
from kjbod.planner.tables import UNKNOWN_DIR, ClusterTables
from kjbod.planner.tables import build_tables
from tests.planner.clusters import skewed_cluster
from tests.planner.rules import hard_rule_violations

GB = 10**9


@st.composite
def clusters(draw: st.DrawFn) -> ClusterTables:
    brokers = draw(st.integers(2, 7))
    racks = draw(st.integers(0, 4))
    dirs_per_broker = draw(st.integers(1, 3))
    broker_rack = np.array([draw(st.integers(0, racks - 1)) if racks else -1 for _ in range(brokers)], dtype=np.int32)
    used_racks = sorted({int(r) for r in broker_rack if r >= 0})
    broker_rack = np.array([used_racks.index(int(r)) if r >= 0 else -1 for r in broker_rack], dtype=np.int32)
    registered = np.array([draw(st.booleans()) or b < 2 for b in range(brokers)])
    active = registered & np.array([draw(st.integers(0, 5)) > 0 for _ in range(brokers)])
    dir_broker = np.repeat(np.arange(brokers, dtype=np.int32), dirs_per_broker)
    n_dirs = len(dir_broker)
    known_capacity = draw(st.booleans())
    capacity = np.array([draw(st.integers(20, 200)) * GB if known_capacity else 0 for _ in range(n_dirs)], dtype=np.int64)
    online = np.array([draw(st.integers(0, 6)) > 0 for _ in range(n_dirs)])
    cordoned = np.array([draw(st.integers(0, 8)) == 0 for _ in range(n_dirs)])
    partitions = draw(st.integers(1, 24))
    part_size, offsets, rep_broker, rep_dir, in_sync, min_isr, topics = [], [0], [], [], [], [], []
    for p in range(partitions):
        rf = draw(st.integers(1, min(3, brokers)))
        replicas = draw(st.permutations(list(range(brokers))))[:rf]
        for b in replicas:
            choices = [int(d) for d in np.flatnonzero(dir_broker == b)]
            rep_broker.append(b)
            rep_dir.append(draw(st.sampled_from([*choices, UNKNOWN_DIR])))
            in_sync.append(draw(st.integers(0, 4)) > 0)
        offsets.append(len(rep_broker))
        part_size.append(draw(st.integers(0, 30)) * GB)
        min_isr.append(draw(st.integers(1, 2)))
        topics.append(p % 3)
    offsets_array = np.array(offsets, dtype=np.int64)
    counts = np.diff(offsets_array)
    rep_broker_array = np.array(rep_broker, dtype=np.int32)
    cluster = ClusterColumns(
        broker_ids=np.arange(1, brokers + 1, dtype=np.int32),
        broker_registered=registered,
        broker_fenced=registered & ~active,
        broker_shutting_down=np.zeros(brokers, dtype=bool),
        broker_rack=broker_rack,
        racks=[f"r{i}" for i in range(len(used_racks))],
        dir_broker=dir_broker,
        dir_ids=[f"dir{d}" for d in range(n_dirs)],
        dir_paths=[f"/data/{d % dirs_per_broker}" for d in range(n_dirs)],
        dir_capacity=capacity,
        dir_online=online,
        dir_cordoned=cordoned,
        table=PartitionTable.from_topics([]),
    )
    return ClusterTables(
        cluster=cluster,
        topics=["a", "b", "c"],
        topic_ids=["ta", "tb", "tc"],
        part_topic=np.array(topics, dtype=np.int32),
        part_id=np.arange(partitions, dtype=np.int32),
        part_size=np.array(part_size, dtype=np.int64),
        part_leader=rep_broker_array[offsets_array[:-1]],
        part_offsets=offsets_array,
        rep_part=np.repeat(np.arange(partitions, dtype=np.int32), counts),
        rep_broker=rep_broker_array,
        rep_dir=np.array(rep_dir, dtype=np.int32),
        rep_pos=(np.arange(len(rep_broker)) - np.repeat(offsets_array[:-1], counts)).astype(np.int16),
        rep_in_sync=np.array(in_sync, dtype=bool),
        part_min_isr=np.array(min_isr, dtype=np.int16),
    )


@st.composite
def requests(draw: st.DrawFn, t: ClusterTables) -> PlanRequest:
    goal = draw(st.sampled_from(list(Goal)))
    ids = [int(b) for b in t.broker_ids]
    brokers: tuple[int, ...] = ()
    dirs: tuple[tuple[int, str], ...] = ()
    if goal is Goal.ADD_BROKERS:
        brokers = tuple(draw(st.lists(st.sampled_from(ids), min_size=1, max_size=2, unique=True)))
    if goal is Goal.REMOVE_BROKERS:
        brokers = tuple(draw(st.lists(st.sampled_from(ids), min_size=1, max_size=2, unique=True)))
    if goal is Goal.DRAIN_DIRS:
        picks = draw(st.lists(st.integers(0, len(t.dir_ids) - 1), min_size=1, max_size=3, unique=True))
        dirs = tuple((ids[t.dir_broker[d]], t.dir_labels[d] if draw(st.booleans()) else t.dir_ids[d]) for d in picks)
    return PlanRequest(
        goal=goal,
        brokers=brokers,
        dirs=dirs,
        rack_mode=draw(st.sampled_from(list(RackMode))),
        max_moves=draw(st.none() | st.integers(0, 10)),
        max_bytes=draw(st.none() | st.integers(0, 60).map(lambda g: g * GB)),
        exclude_topics=draw(st.none() | st.sampled_from(["a", "b|c", "z.*"])),
        exclude_brokers=tuple(draw(st.lists(st.sampled_from(ids), max_size=1))),
        capacity_threshold=draw(st.sampled_from([0.5, 0.8, 1.0])),
        seed=draw(st.integers(0, 3)),
    )


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=st.data())
def test_every_plan_keeps_the_hard_rules(data: st.DataObject) -> None:
    t = data.draw(clusters())
    request = data.draw(requests(t))
    try:
        result = plan(t, request, LocalEngine())
    except UserError as error:
        # Only for requests the cluster cannot take: adding a broker that is not active.
        assert request.goal is Goal.ADD_BROKERS and "must be registered and unfenced" in str(error)
        return
    assert hard_rule_violations(t, result) == []


@pytest.mark.parametrize("seed", [0, 1])
def test_the_same_seed_gives_the_same_plan(seed: int) -> None:
    tables = build_tables(skewed_cluster(brokers=8, crowded=4, seed=seed))
    request = PlanRequest(Goal.BALANCE, seed=seed)
    first = plan(tables, request, LocalEngine())
    second = plan(build_tables(skewed_cluster(brokers=8, crowded=4, seed=seed)), request, LocalEngine())
    assert np.array_equal(first.new_broker, second.new_broker)
    assert np.array_equal(first.new_dir, second.new_dir)
    assert np.array_equal(first.new_pos, second.new_pos)
