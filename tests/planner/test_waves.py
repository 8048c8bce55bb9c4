"""A plan split into waves: every changed partition in exactly one wave, no broker in more than
K moves of a wave, no directory past its threshold once a wave completes (checked by replaying
the waves, replica by replica), and a disk that must send before it receives does."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kjbod.errors import UserError
from kjbod.planner.core import Goal, Plan, PlanRequest, plan
from kjbod.planner.engine import LocalEngine
from kjbod.planner.report import reassignment_json
from kjbod.image.cluster_columns import NO_RACK, ClusterColumns
from kjbod.image.columns import PartitionTable
from kjbod.planner.tables import ClusterTables, build_tables
from kjbod.planner.waves import split_into_waves
from tests.planner.clusters import skewed_cluster
from tests.planner.test_hard_rules import clusters, requests


def replay(t: ClusterTables, result: Plan, waves: list[np.ndarray], per_broker: int | None, threshold: float) -> list[str]:
    """What breaks the wave rules, found by applying the waves one after another."""
    problems = []
    seen: list[int] = []
    usage = [0.0] * len(t.dir_ids)
    for r in range(t.replica_count):
        if t.rep_dir[r] >= 0:
            usage[t.rep_dir[r]] += float(t.rep_size[r])
    for number, wave in enumerate(waves, 1):
        moves: dict[int, int] = {}
        added: set[int] = set()
        for p in wave.tolist():
            seen.append(p)
            for r in range(int(t.part_offsets[p]), int(t.part_offsets[p + 1])):
                source, target = int(t.rep_broker[r]), int(result.new_broker[r])
                old_dir, new_dir = int(t.rep_dir[r]), int(result.new_dir[r])
                if source != target:
                    moves[source] = moves.get(source, 0) + 1
                    moves[target] = moves.get(target, 0) + 1
                elif old_dir >= 0 and new_dir >= 0 and new_dir != old_dir:
                    moves[source] = moves.get(source, 0) + 1
                else:
                    continue
                if old_dir >= 0:
                    usage[old_dir] -= float(t.rep_size[r])
                if new_dir >= 0:
                    usage[new_dir] += float(t.rep_size[r])
                    added.add(new_dir)
        if per_broker is not None and len(wave) > 1:
            problems += [f"wave {number}: broker {b} in {m} moves" for b, m in moves.items() if m > per_broker]
        for d in added:
            if t.dir_capacity[d] > 0 and usage[d] > t.dir_capacity[d] * threshold + 1e-6 and len(wave) > 1:
                problems.append(f"wave {number}: directory {d} ends at {usage[d] / t.dir_capacity[d]:.0%}")
    if sorted(seen) != sorted(result.changed_partitions.tolist()):
        problems.append("the waves do not hold every changed partition exactly once")
    return problems


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=st.data())
def test_waves_keep_their_limits_on_any_plan(data: st.DataObject) -> None:
    t = data.draw(clusters())
    request = data.draw(requests(t))
    try:
        result = plan(t, request, LocalEngine())
    except UserError:
        return
    per_broker = data.draw(st.none() | st.integers(1, 3))
    size = data.draw(st.none() | st.integers(1, 4))
    waves = split_into_waves(result, per_broker=per_broker, size=size, threshold=request.capacity_threshold)
    assert replay(t, result, waves.partitions, per_broker, request.capacity_threshold) == []
    assert len(waves.partitions) >= waves.lower_bound
    if size is not None:
        assert all(len(w) <= size for w in waves.partitions)
    assert all(len(w) for w in waves.partitions)


def test_a_balance_plan_in_waves_of_at_most_two_moves_per_broker() -> None:
    t = build_tables(skewed_cluster(brokers=9, racks=3, dirs=3, topics=6, partitions=30, crowded=5))
    result = plan(t, PlanRequest(Goal.BALANCE), LocalEngine())
    waves = split_into_waves(result, per_broker=2, size=None, threshold=0.8)
    assert replay(t, result, waves.partitions, 2, 0.8) == []
    assert waves.notes == []
    # The busiest broker sets the pace: the greedy split is within a few waves of the bound.
    assert waves.lower_bound <= len(waves.partitions) <= waves.lower_bound + 3
    # Each wave is a reassignment of its partitions, as the whole plan has them.
    whole = {(e["topic"], e["partition"]): e for e in reassignment_json(result)["partitions"]}
    for wave in waves.partitions:
        for entry in reassignment_json(result, wave)["partitions"]:
            assert whole[(entry["topic"], entry["partition"])] == entry


def hand_made(sizes: list[int], replicas: list[tuple[int, int]], capacity: int) -> ClusterTables:
    """Two brokers with one directory each; partition p has one replica, on (broker, dir) = replicas[p]."""
    partitions = len(sizes)
    offsets = np.arange(partitions + 1, dtype=np.int64)
    broker = np.array([b for b, _ in replicas], dtype=np.int32)
    cluster = ClusterColumns(
        broker_ids=np.array([1, 2], dtype=np.int32),
        broker_registered=np.ones(2, dtype=bool),
        broker_fenced=np.zeros(2, dtype=bool),
        broker_shutting_down=np.zeros(2, dtype=bool),
        broker_rack=np.array([NO_RACK, NO_RACK], dtype=np.int32),
        racks=[],
        dir_broker=np.array([0, 1], dtype=np.int32),
        dir_ids=["d1", "d2"],
        dir_paths=["/data", "/data"],
        dir_capacity=np.array([capacity, capacity], dtype=np.int64),
        dir_online=np.ones(2, dtype=bool),
        dir_cordoned=np.zeros(2, dtype=bool),
        table=PartitionTable.from_topics([]),
    )
    return ClusterTables(
        cluster=cluster,
        topics=["t"],
        topic_ids=["tid"],
        part_topic=np.zeros(partitions, dtype=np.int32),
        part_id=np.arange(partitions, dtype=np.int32),
        part_size=np.array(sizes, dtype=np.int64),
        part_leader=broker.copy(),
        part_offsets=offsets,
        rep_part=np.arange(partitions, dtype=np.int32),
        rep_broker=broker,
        rep_dir=np.array([d for _, d in replicas], dtype=np.int32),
        rep_pos=np.zeros(partitions, dtype=np.int16),
        rep_in_sync=np.ones(partitions, dtype=bool),
        part_min_isr=np.ones(partitions, dtype=np.int16),
    )


def test_a_full_disk_sends_before_it_receives() -> None:
    # Broker 1's disk holds 30 + 48 of 100 (78%); the plan swaps: t-0 (20) comes from broker 2,
    # t-1 (30) leaves. Ending at 68% is fine, but taking t-0 first would reach 98%.
    t = hand_made([20, 30, 48], [(1, 1), (0, 0), (0, 0)], capacity=100)
    new_broker = np.array([0, 1, 0], dtype=np.int32)
    new_dir = np.array([0, 1, 0], dtype=np.int32)
    result = Plan(t, PlanRequest(Goal.BALANCE), new_broker, new_dir, t.rep_pos.copy())
    waves = split_into_waves(result, per_broker=1, size=None, threshold=0.8)
    assert [w.tolist() for w in waves.partitions] == [[1], [0]]
    assert replay(t, result, waves.partitions, 1, 0.8) == []
    # With room for both at once, both go in one wave (each broker takes part in two moves).
    together = split_into_waves(result, per_broker=2, size=None, threshold=0.8)
    assert [w.tolist() for w in together.partitions] == [[0, 1]]
