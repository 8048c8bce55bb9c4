"""Preferred leaders: every broker leads the floor or the ceiling of the mean where the replica
sets allow (checked against an exhaustive search on small cases), partitions that move anyway
are reordered first, and a fixed partition keeps its order."""

from __future__ import annotations

import itertools

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kjbod.planner.leaders import balance_leaders


def layout(replica_sets: list[list[int]]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    offsets = np.r_[0, np.cumsum([len(r) for r in replica_sets])].astype(np.int64)
    broker = np.array([b for r in replica_sets for b in r], dtype=np.int32)
    position = np.array([i for r in replica_sets for i in range(len(r))], dtype=np.int16)
    return offsets, broker, position


def leaders_of(offsets: np.ndarray, broker: np.ndarray, position: np.ndarray) -> list[int]:
    return [int(broker[offsets[p] + int(np.flatnonzero(position[offsets[p] : offsets[p + 1]] == 0)[0])]) for p in range(len(offsets) - 1)]


def best_possible(replica_sets: list[list[int]], eligible: list[bool], fixed: list[bool]) -> int:
    """The smallest worst distance (in leaders, times the number of eligible brokers, to stay in
    integers) from the mean that any choice of leaders reaches, by trying them all."""
    n = len(eligible)
    # A partition with an eligible replica is led by one (the balancer guarantees it, tested
    # below); the others keep their leader, which counts for no eligible broker.
    choices = [
        [r[0]] if fixed[p] or not any(eligible[b] for b in r) else [b for b in r if eligible[b]]
        for p, r in enumerate(replica_sets)
    ]
    best = None
    count = sum(eligible)
    for leaders in itertools.product(*choices):
        counts = [0] * n
        for b in leaders:
            counts[b] += 1
        total = sum(counts[b] for b in range(n) if eligible[b])
        worst = max(abs(counts[b] * count - total) for b in range(n) if eligible[b])
        best = worst if best is None else min(best, worst)
    assert best is not None
    return best


@st.composite
def cases(draw: st.DrawFn) -> tuple[list[list[int]], list[bool], list[bool]]:
    brokers = draw(st.integers(2, 6))
    partitions = draw(st.integers(1, 8))
    replica_sets = [draw(st.lists(st.integers(0, brokers - 1), min_size=1, max_size=min(3, brokers), unique=True)) for _ in range(partitions)]
    eligible = draw(st.lists(st.booleans(), min_size=brokers, max_size=brokers).filter(any))
    fixed = draw(st.lists(st.booleans(), min_size=partitions, max_size=partitions))
    return replica_sets, eligible, fixed


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases(), st.integers(0, 3))
def test_leaders_reach_their_band_wherever_the_replica_sets_allow(case: tuple[list[list[int]], list[bool], list[bool]], seed: int) -> None:
    replica_sets, eligible_list, fixed_list = case
    offsets, broker, position = layout(replica_sets)
    original = position.copy()
    eligible = np.array(eligible_list)
    fixed = np.array(fixed_list)
    tiebreak = np.random.default_rng(seed).permutation(len(broker))
    result = balance_leaders(offsets, broker, position, eligible, fixed, np.zeros(len(replica_sets), dtype=bool), tiebreak)
    for p in range(len(replica_sets)):
        rows = slice(offsets[p], offsets[p + 1])
        assert sorted(position[rows].tolist()) == list(range(offsets[p + 1] - offsets[p]))
        if fixed[p]:
            assert np.array_equal(position[rows], original[rows])
    leaders = leaders_of(offsets, broker, position)
    # A partition led by a broker that may not lead gets an eligible leader when it has one.
    for p, r in enumerate(replica_sets):
        if not fixed[p] and any(eligible[b] for b in r):
            assert eligible[leaders[p]]
    counts = np.bincount(leaders, minlength=len(eligible))
    mean = counts[eligible].sum() / eligible.sum()
    in_band = bool(((counts[eligible] >= np.floor(mean)) & (counts[eligible] <= np.ceil(mean))).all())
    # An assignment within one leader of the mean for everyone exists exactly when the best
    # worst distance is under one leader (times the number of eligible brokers).
    reachable = best_possible(replica_sets, eligible_list, fixed_list) < int(eligible.sum())
    if reachable:
        assert in_band, (counts.tolist(), result.notes)
    if not in_band:
        assert result.notes and "preferred leaders (the mean is" in result.notes[0]


def test_partitions_that_move_anyway_are_reordered_first() -> None:
    # Broker 0 leads all eight partitions; brokers 1 and 2 follow each of them. Partitions 0-5
    # move anyway: they alone can even the leaders out, so 6 and 7 keep their order.
    replica_sets = [[0, 1, 2]] * 8
    offsets, broker, position = layout(replica_sets)
    moving = np.array([True] * 6 + [False] * 2)
    result = balance_leaders(offsets, broker, position, np.ones(3, dtype=bool), np.zeros(8, dtype=bool), moving, np.arange(len(broker)))
    counts = np.bincount(leaders_of(offsets, broker, position), minlength=3)
    assert sorted(counts.tolist()) == [2, 3, 3]
    assert result.reordered_only == 0
    assert position[offsets[6] :].tolist() == [0, 1, 2] * 2
    assert result.notes == []


def test_partitions_that_do_not_move_are_reordered_when_those_that_move_are_not_enough() -> None:
    replica_sets = [[0, 1, 2]] * 9
    offsets, broker, position = layout(replica_sets)
    moving = np.array([True] * 2 + [False] * 7)
    result = balance_leaders(offsets, broker, position, np.ones(3, dtype=bool), np.zeros(9, dtype=bool), moving, np.arange(len(broker)))
    assert np.bincount(leaders_of(offsets, broker, position), minlength=3).tolist() == [3, 3, 3]
    assert result.reordered_only == 4  # six leaderships leave broker 0: two in the moving partitions


def test_a_chain_of_hand_overs_reaches_a_broker_no_leader_follows() -> None:
    # Broker 0 leads three partitions followed only by broker 1; broker 1 leads two followed by
    # broker 2: the only way to give broker 2 a leadership is 0 -> 1 -> 2.
    replica_sets = [[0, 1]] * 3 + [[1, 2]] * 2 + [[2, 3]] + [[3, 0]] * 2
    offsets, broker, position = layout(replica_sets)
    fixed = np.zeros(len(replica_sets), dtype=bool)
    balance_leaders(offsets, broker, position, np.ones(4, dtype=bool), fixed, ~fixed, np.arange(len(broker)))
    assert np.bincount(leaders_of(offsets, broker, position), minlength=4).tolist() == [2, 2, 2, 2]


def test_what_the_replica_sets_forbid_is_said() -> None:
    # Broker 0 is the only replica of four partitions: it leads them whatever the order.
    replica_sets = [[0]] * 4 + [[1, 2]] * 2
    offsets, broker, position = layout(replica_sets)
    fixed = np.zeros(len(replica_sets), dtype=bool)
    result = balance_leaders(offsets, broker, position, np.ones(3, dtype=bool), fixed, ~fixed, np.arange(len(broker)))
    assert np.bincount(leaders_of(offsets, broker, position), minlength=3).tolist() == [4, 1, 1]
    assert len(result.notes) == 1
    # The others are balanced around their own mean.
    assert result.notes == [
        "3 broker(s) lead outside 2 preferred leaders (the mean is 2.0; the furthest is 2.0 from it): the other replicas of the "
        "partitions they lead or follow give no order that evens them out (replica sets and racks)"
    ]
