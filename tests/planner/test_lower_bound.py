"""The report's lower bound on data moved is a bound: never above the least data that any plan
meeting the planner's own bands moves, found here by trying every plan of clusters small enough
to enumerate (bench/bench_optimum.py does the same at larger sizes with a MILP solver)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from kjbod.planner.core import BYTE_TOLERANCE, Goal, PlanRequest, plan
from kjbod.planner.engine import LocalEngine
from kjbod.planner.report import balance_of, lower_bound
from kjbod.planner.tables import ClusterTables, build_tables
from tests.planner.clusters import GB, skewed_cluster


def least_moved(
    t: ClusterTables, targets: np.ndarray, byte_target: np.ndarray, request: PlanRequest,
    count_reach: float = 0.0, byte_reach: float = 0.0, points_reach: float = 0.0,
) -> float | None:
    """The least bytes any plan moves that keeps every partition's replication factor on as many
    brokers (one rack: no rack rule), keeps one of each partition's brokers (min.insync.replicas
    1 while it moves), and meets the bands: replica counts within the count tolerance of their
    targets, bytes within BYTE_TOLERANCE, directories under the capacity threshold and within
    the disk band of their broker's mean usage; each band widened for every broker (directory)
    alike by its reach (replicas; a share of the byte target; points of capacity). None when no
    plan meets them."""
    n_dirs, n_brokers = len(t.dir_ids), t.broker_count
    capacity = t.dir_capacity.astype(np.float64)
    # Per partition, every way to place it: (bytes per directory, replicas per broker, bytes moved).
    per_partition = []
    for p in range(len(t.part_id)):
        rows = np.arange(t.part_offsets[p], t.part_offsets[p + 1])
        size = float(t.rep_size[rows[0]])
        home_dirs = set(t.rep_dir[rows].tolist())
        home_brokers = set(t.rep_broker[rows].tolist())
        options = []
        for brokers in itertools.combinations(range(n_brokers), len(rows)):
            if not home_brokers & set(brokers):
                continue
            for dirs in itertools.product(*(np.flatnonzero(t.dir_broker == b).tolist() for b in brokers)):
                usage = np.zeros(n_dirs)
                usage[list(dirs)] = size
                count = np.bincount(list(brokers), minlength=n_brokers)
                options.append((usage, count, size * (len(rows) - len(home_dirs & set(dirs)))))
        per_partition.append(options)
    usage, count, moved = np.zeros((1, n_dirs)), np.zeros((1, n_brokers)), np.zeros(1)
    for options in per_partition:
        u = np.array([o[0] for o in options])
        c = np.array([o[1] for o in options])
        m = np.array([o[2] for o in options])
        usage = (usage[:, None, :] + u[None]).reshape(-1, n_dirs)
        count = (count[:, None, :] + c[None]).reshape(-1, n_brokers)
        moved = (moved[:, None] + m[None]).reshape(-1)
    slack = np.floor(targets * request.count_tolerance)
    load = np.stack([usage[:, t.dir_broker == b].sum(axis=1) for b in range(n_brokers)], axis=1)
    broker_capacity = np.bincount(t.dir_broker, weights=capacity, minlength=n_brokers)
    mean = load / broker_capacity
    rounding = 1e-9  # a plan exactly at a band's edge meets it
    ok = (
        (np.abs(count - targets) <= slack + count_reach).all(axis=1)
        & (np.abs(load - byte_target) <= byte_target * (BYTE_TOLERANCE + byte_reach) * (1 + rounding)).all(axis=1)
        & (usage <= np.floor(capacity * request.capacity_threshold)).all(axis=1)
        & (np.abs(usage / capacity - mean[:, t.dir_broker]) <= request.disk_band + points_reach + rounding).all(axis=1)
    )
    return float(moved[ok].min()) if ok.any() else None


def test_the_lower_bound_is_at_most_the_least_any_plan_moves() -> None:
    # Brokers 1 and 2 hold every partition (60 GB), all in their first directory; broker 3 is
    # empty; each broker's target is 40 GB in 240 GB of directories. A broker may end anywhere in
    # its byte band (38-42 GB), and its directories' band (5 points of 120 GB) follows its mean
    # usage: the plan that moves least ends one broker at the top of its band, where its first
    # directory may keep the most. Bounding that directory's excess at the broker's target
    # instead put the bound 1 GB above the optimum (67 GB: 1 and 2 send partitions of 18 and
    # 20 GB to 3, and move 15 and 14 GB to their second directory).
    image = skewed_cluster(brokers=3, racks=1, dirs=2, topics=1, partitions=6, rf=2, crowded=2, capacity=120 * GB, sizes=(8, 10, 9, 11, 6, 16))
    t = build_tables(image)
    request = PlanRequest(Goal.BALANCE)
    result = plan(t, request, LocalEngine())
    assert result.count_target is not None and result.byte_target is not None
    assert result.count_target.tolist() == [4, 4, 4] and result.byte_target.tolist() == pytest.approx([40 * GB] * 3)
    optimum = least_moved(t, result.count_target, result.byte_target, request)
    assert optimum is not None and optimum <= 67 * GB
    before = balance_of(t, t.rep_broker, t.rep_dir, t.rep_pos.astype(np.int64), result)
    assert lower_bound(result, before) <= optimum
