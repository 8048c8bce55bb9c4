"""A plan split into ordered waves an operator runs one after another (each a reassignment).

Limits per wave: no broker takes part in more than `per_broker` moves (a replica moving between
brokers counts for both, one moving between directories for its broker), at most `size`
partitions, and once a wave completes no directory it added to is past the capacity threshold.
The last limit is why the order matters: a disk that receives before it sends can pass its
threshold halfway through a plan that ends well under it, so a partition waits for the wave
after the one whose moves make room for it.

The waves are built greedily, one at a time: the brokers with the most moves still to do choose
first (they set how many waves there must be: at least their moves divided by `per_broker`),
each taking its partitions in the plan's order while every broker involved has room and every
directory they add to stays under its threshold. A partition is never split: one that alone
exceeds a limit gets a wave of its own, and the plan says so.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from kjbod.planner.core import Plan


# (directory, bytes) a partition's moves add to or free from directories.
Moves = Sequence[tuple[int, float]]


@dataclass
class Waves:
    partitions: list[np.ndarray]  # per wave: partition indexes, in the plan's order
    lower_bound: int  # no split under these limits has fewer waves
    notes: list[str] = field(default_factory=list)


def split_into_waves(plan: Plan, *, per_broker: int | None, size: int | None, threshold: float) -> Waves:
    t = plan.tables
    if per_broker is not None and per_broker < 1:
        raise ValueError("per_broker must be at least 1")
    if size is not None and size < 1:
        raise ValueError("size must be at least 1")
    changed = plan.changed_partitions
    per_broker = per_broker or np.iinfo(np.int32).max
    brokers_of, adds, frees = _moves_of(plan, changed)
    capacity = t.dir_capacity.astype(np.float64)
    limit = np.where(capacity > 0, capacity * threshold, np.inf).tolist()
    on_dir = t.rep_dir >= 0
    usage = np.bincount(t.rep_dir[on_dir], weights=t.rep_size[on_dir], minlength=len(t.dir_ids)).tolist()

    moves = np.bincount(np.fromiter((b for involved in brokers_of.values() for b in involved), dtype=np.int64), minlength=t.broker_count)
    lower_bound = int(np.max(-(-moves // per_broker), initial=0))
    if size is not None:
        lower_bound = max(lower_bound, -(-len(brokers_of) // size))

    # Each broker's partitions still to schedule, in the plan's (table) order.
    queues: list[list[int]] = [[] for _ in range(t.broker_count)]
    for p in sorted(brokers_of):
        for b in dict.fromkeys(brokers_of[p]):
            queues[b].append(p)
    # Brokers ranked by their moves (most first): a partition a broker cannot take because a
    # busier broker of it is full leaves the less busy one's queue for good; the busiest broker
    # of each partition keeps it, and takes it when it can. So a blocked partition is looked at
    # again only by that broker, not by every broker of it in every wave.
    rank = np.empty(t.broker_count, dtype=np.int64)
    rank[np.lexsort((np.arange(t.broker_count), -moves))] = np.arange(t.broker_count)
    rank_of = rank.tolist()
    left = moves.tolist()
    done: set[int] = set()
    waves: list[np.ndarray] = []
    notes: list[str] = []
    forced_waves = 0
    remaining = len(brokers_of)
    active = [b for b in range(t.broker_count) if queues[b]]
    while remaining:
        load = [0] * t.broker_count
        net: dict[int, float] = {}
        wave: list[int] = []
        full = False
        active = [b for b in active if queues[b]]
        active.sort(key=lambda b: (-left[b], rank_of[b]))
        for b in active:
            if full:
                break
            queue = queues[b]
            kept: list[int] = []
            i = 0
            scanned = 0
            while i < len(queue) and load[b] < per_broker and scanned < 8 * per_broker + 8:
                p = queue[i]
                i += 1
                if p in done:
                    continue
                scanned += 1
                involved = brokers_of[p]
                blocker = _full_broker(involved, load, per_broker)
                if blocker >= 0:
                    if rank_of[blocker] > rank_of[b] or blocker == b:
                        kept.append(p)  # this broker is the busier one: it keeps the partition
                    continue
                if _fits(involved, adds.get(p, ()), frees.get(p, ()), load, per_broker, net, usage, limit):
                    _take(involved, adds.get(p, ()), frees.get(p, ()), load, net)
                    done.add(p)
                    wave.append(p)
                    if size is not None and len(wave) >= size:
                        full = True
                        break
                else:
                    kept.append(p)  # a directory needs room first: a later wave
            queues[b] = kept + queue[i:]
        if not wave:
            # Every broker's first partitions were blocked: try every partition left; when none
            # fits on its own, the first one goes alone (it breaks a limit, and the plan says so).
            left_over = [p for p in sorted(brokers_of) if p not in done]
            for p in left_over:
                if _fits(brokers_of[p], adds.get(p, ()), frees.get(p, ()), load, per_broker, net, usage, limit):
                    _take(brokers_of[p], adds.get(p, ()), frees.get(p, ()), load, net)
                    done.add(p)
                    wave.append(p)
                    if size is not None and len(wave) >= size:
                        break
            if not wave:
                p = left_over[0]
                _take(brokers_of[p], adds.get(p, ()), frees.get(p, ()), load, net)
                done.add(p)
                wave.append(p)
                forced_waves += 1
        for p in wave:
            for b in brokers_of[p]:
                left[b] -= 1
        for d, delta in net.items():
            usage[d] += delta
        remaining -= len(wave)
        waves.append(np.array(sorted(wave), dtype=np.int64))
    if forced_waves:
        notes.append(
            f"{forced_waves} wave(s) hold a single partition that breaks a wave's limits on its own "
            "(a broker in more moves than allowed, or a directory it fills past the threshold whatever the order)"
        )
    # Partitions that only change order (preferred leaders) move no data: they go last.
    reordered = np.setdiff1d(changed, np.array(sorted(brokers_of), dtype=np.int64))
    if len(reordered):
        _append_reordered(waves, reordered, size)
        if size is not None:
            lower_bound = max(lower_bound, -(-len(changed) // size))
    return Waves(waves, lower_bound, notes)


def _moves_of(plan: Plan, changed: np.ndarray) -> tuple[dict[int, list[int]], dict[int, list[tuple[int, float]]], dict[int, list[tuple[int, float]]]]:
    """The moves of each changed partition that moves data: the brokers taking part (a replica
    moving between brokers counts for both, one between directories for its broker), and the
    (directory, bytes) its moves add to and free from directories."""
    t = plan.tables
    inter = plan.inter_moved
    rows = np.flatnonzero((inter | plan.intra_moved) & np.isin(t.rep_part, changed))
    brokers_of: dict[int, list[int]] = {}
    adds: dict[int, list[tuple[int, float]]] = {}
    frees: dict[int, list[tuple[int, float]]] = {}
    size_of = t.rep_size
    for r, p in zip(rows.tolist(), t.rep_part[rows].tolist()):
        involved = brokers_of.setdefault(p, [])
        if inter[r]:
            involved += [int(t.rep_broker[r]), int(plan.new_broker[r])]
        else:
            involved.append(int(t.rep_broker[r]))
        target, source = int(plan.new_dir[r]), int(t.rep_dir[r])
        if target >= 0:
            adds.setdefault(p, []).append((target, float(size_of[r])))
        if source >= 0 and (inter[r] or target >= 0):
            frees.setdefault(p, []).append((source, float(size_of[r])))
    return brokers_of, adds, frees


def _append_reordered(waves: list[np.ndarray], reordered: np.ndarray, size: int | None) -> None:
    """Partitions that only change order, after the others: the last wave's room first, then
    waves of their own (of at most `size`)."""
    if not waves:
        waves.append(np.zeros(0, dtype=np.int64))
    room = (size - len(waves[-1])) if size is not None else len(reordered)
    waves[-1] = np.sort(np.concatenate([waves[-1], reordered[:room]]))
    rest = reordered[room:]
    while len(rest):
        assert size is not None
        waves.append(rest[:size])
        rest = rest[size:]


def _full_broker(brokers: list[int], load: list[int], per_broker: int) -> int:
    """A broker of the partition with no room left in this wave for its moves, or -1."""
    for b in brokers:
        if load[b] + brokers.count(b) > per_broker:
            return b
    return -1


def _fits(
    brokers: list[int], adds: Moves, frees: Moves, load: list[int], per_broker: int, net: dict[int, float],
    usage: list[float], limit: list[float],
) -> bool:
    """The partition's moves fit in the wave: its brokers have room, and no directory it adds
    to ends past its threshold."""
    if _full_broker(brokers, load, per_broker) >= 0:
        return False
    change: dict[int, float] = {}
    for d, size in adds:
        change[d] = change.get(d, 0.0) + size
    for d, size in frees:
        change[d] = change.get(d, 0.0) - size
    for d, _size in adds:
        if usage[d] + net.get(d, 0.0) + change[d] > limit[d]:
            return False
    return True


def _take(brokers: list[int], adds: Moves, frees: Moves, load: list[int], net: dict[int, float]) -> None:
    for b in brokers:
        load[b] += 1
    for d, size in adds:
        net[d] = net.get(d, 0.0) + size
    for d, size in frees:
        net[d] = net.get(d, 0.0) - size
