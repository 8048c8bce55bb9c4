"""The placement planner: chooses a broker and a log directory for every replica it moves.

Phase 1, brokers: every broker gets a target replica count and byte load proportional to its
capacity. Replicas that must move (a removed or dead broker, a drained or failed directory, a
rack-rule violation) go first; then over-loaded brokers shed the right number of replicas, with
bytes matching their byte excess, taken first from over-full directories (`shed_kernel`, per
broker). The driver hands each shed replica, largest first, to the under-loaded broker with the
largest byte deficit that the rack rule and directory room allow (per-rack heaps).

Phase 2, directories: for every broker a replica ends on, `directory_kernel` places the new and
displaced replicas in the least-used directories and moves replicas between directories until
each one is within the band around the broker's mean usage and under the capacity threshold.

Leaders never move unless they must (their broker or directory is going away). For `balance`,
leaders are evened out to the floor or ceiling of the mean by choosing each partition's preferred
(first) replica among its brokers, which moves no data: a preferred-leader election after the
reassignment applies it. Partitions that move anyway are reordered first (leaders.py).
"""

from __future__ import annotations

import heapq
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from kjbod.common.callbacks import ignore
from kjbod.errors import UserError
from kjbod.planner.engine import Engine
from kjbod.planner.kernels import DIRECTORY, SHED
from kjbod.planner.leaders import balance_leaders
from kjbod.planner.repair import Repair
from kjbod.planner.request import Goal, PlanRequest, RackMode
from kjbod.planner.tables import BROKER_CHOOSES, NO_RACK, UNKNOWN_DIR, ClusterTables

if TYPE_CHECKING:
    from kjbod.planner.refine import Refinement

# A broker's bytes are balanced within this fraction of its target.
BYTE_TOLERANCE = 0.05


@dataclass
class Plan:
    tables: ClusterTables
    request: PlanRequest
    new_broker: np.ndarray  # per replica
    # Per replica: BROKER_CHOOSES for one moving to a broker that picks its directory (the plan
    # found none with room), UNKNOWN_DIR for one that stays in no known directory.
    new_dir: np.ndarray
    new_pos: np.ndarray  # per replica: its position in the new replica list
    # Partitions whose rack rule cannot be met, with the reason.
    unsatisfiable: dict[int, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    unmatched: int = 0  # replicas the last broker round could not place
    # What the plan had to work with, for the report: replicas that had to move (or change
    # directory), replicas breaking the rack rule, replicas it could move, the brokers that
    # hold load, and their targets.
    forced: np.ndarray | None = None
    rack_fixes: np.ndarray | None = None  # replicas beyond the rack limit (balance moves them)
    movable: np.ndarray | None = None
    open_dirs: np.ndarray | None = None  # directories that may receive replicas
    draining_dirs: np.ndarray | None = None  # directories drain-dirs empties
    holders: np.ndarray | None = None
    count_target: np.ndarray | None = None
    count_high: np.ndarray | None = None
    byte_target: np.ndarray | None = None
    leader_holders: np.ndarray | None = None  # brokers the preferred leaders are spread over (balance)
    leaders_reordered_only: int = 0  # partitions reordered for leadership that nothing else changes
    # The rest of what the planner decided with, as it decided it, for `--explain` (explain.py).
    count_low: np.ndarray | None = None  # per broker: the bottom of its replica count band
    receivable: np.ndarray | None = None  # per broker: it may receive replicas
    excluded: np.ndarray | None = None  # per replica: an excluded topic or broker (never moves)
    offline: np.ndarray | None = None  # per replica: in an offline directory (see _Setup.offline)
    broker_has_offline_dir: np.ndarray | None = None  # per broker: moves none of its replicas between directories
    racks_available: int = 0  # racks the rack rule counts (see _Setup.racks_available)
    budget_exhausted: bool = False  # --max-moves or --max-bytes stopped the plan
    refinement: Refinement | None = None  # what the exact refinement did (refine.py)
    refined: np.ndarray | None = None  # per partition: placed by the exact refinement (when it was taken)

    @property
    def inter_moved(self) -> np.ndarray:
        return self.new_broker != self.tables.rep_broker

    @property
    def intra_moved(self) -> np.ndarray:
        t = self.tables
        return (~self.inter_moved) & (t.rep_dir >= 0) & (self.new_dir >= 0) & (self.new_dir != t.rep_dir)

    @property
    def changed_partitions(self) -> np.ndarray:
        t = self.tables
        changed_rep = self.inter_moved | self.intra_moved | (self.new_pos != t.rep_pos)
        return np.unique(t.rep_part[changed_rep])


# Eligibility -----------------------------------------------------------------------------------


def _resolve_dirs(t: ClusterTables, specs: tuple[tuple[int, str], ...]) -> np.ndarray:
    draining = np.zeros(len(t.dir_ids), dtype=bool)
    for broker_id, text in specs:
        b = t.broker_index.get(broker_id)
        if b is None:
            raise UserError(f"Broker {broker_id} in --dir {broker_id}:{text} is not in the cluster state")
        matches = [
            d for d in np.flatnonzero(t.dir_broker == b)
            if t.dir_labels[d].rstrip("/") == text.rstrip("/") or t.dir_ids[d] == text
        ]
        if not matches:
            raise UserError(f"Broker {broker_id} has no log directory {text} (give its path or directory id)")
        draining[matches] = True
    return draining


@dataclass
class _Setup:
    receivable: np.ndarray  # brokers that may receive replicas
    draining_dirs: np.ndarray
    open_dirs: np.ndarray  # directories that may receive replicas
    movable: np.ndarray  # per replica: the plan may move it
    forced: np.ndarray  # per replica: it must leave its broker (or its directory)
    forced_intra_ok: np.ndarray  # per replica: a forced replica may stay on its broker
    excluded: np.ndarray  # per replica: an excluded topic or broker: never moves
    # Per replica: its rank in a permutation drawn from --seed, which breaks every tie between
    # otherwise equal choices. The same seed gives the same plan.
    tiebreak: np.ndarray
    # Racks with a broker that can take replicas or keeps some: the rack rule counts only these
    # (when brokers of a whole rack leave, the rule is met as well as the rest allows, and the
    # partitions it cannot be met for are listed).
    racks_available: int
    # Per replica: it is in an offline directory (of a registered broker). Such a replica never
    # moves to another directory of its broker (the broker cannot read it), and a partition
    # whose replica set changes must move it to another broker: a reassignment completes only
    # when every target replica is in sync, and it cannot be. Per broker: it has an offline
    # directory, so it creates no future replica: none of its replicas changes directory.
    offline: np.ndarray
    broker_has_offline_dir: np.ndarray
    left_alone: int  # partitions with an offline replica the plan does not touch
    held: int = 0  # partitions keeping a replica on a fenced or unregistered broker: not in the plan


def _setup(t: ClusterTables, request: PlanRequest) -> _Setup:
    goal = request.goal
    n_brokers = t.broker_count
    excluded_brokers = np.isin(t.broker_ids, np.array(request.exclude_brokers, dtype=np.int32))
    named = np.isin(t.broker_ids, np.array(request.brokers, dtype=np.int32))
    for broker_id in request.brokers:
        if broker_id not in t.broker_index:
            raise UserError(f"Broker {broker_id} is not in the cluster state")
    if goal is Goal.ADD_BROKERS:
        missing = [int(b) for b in t.broker_ids[named & ~t.broker_active]]
        if missing:
            raise UserError(f"Broker(s) {', '.join(map(str, missing))} to add must be registered and unfenced first")
    removing = named if goal is Goal.REMOVE_BROKERS else np.zeros(n_brokers, dtype=bool)
    draining = _resolve_dirs(t, request.dirs) if goal is Goal.DRAIN_DIRS else np.zeros(len(t.dir_ids), dtype=bool)
    open_dirs = t.dir_online & ~t.dir_cordoned & ~draining & ~excluded_brokers[t.dir_broker]
    has_open_dir = np.bincount(t.dir_broker[open_dirs], minlength=n_brokers) > 0
    receivable = t.broker_active & ~excluded_brokers & ~removing & has_open_dir
    if goal is Goal.ADD_BROKERS:
        receivable &= named
    excluded_topic = np.zeros(len(t.topics), dtype=bool)
    if request.exclude_topics:
        try:
            pattern = re.compile(request.exclude_topics)
        except re.error as exc:
            raise UserError(f"Invalid --exclude-topics regular expression {request.exclude_topics!r}: {exc}") from None
        excluded_topic = np.array([pattern.fullmatch(name) is not None for name in t.topics], dtype=bool)
    rep_excluded = excluded_topic[t.part_topic[t.rep_part]] | excluded_brokers[t.rep_broker]
    dead = ~t.broker_registered[t.rep_broker]
    forced = np.zeros(t.replica_count, dtype=bool)
    forced_intra_ok = np.zeros(t.replica_count, dtype=bool)
    on_dir = t.rep_dir >= 0
    if goal is Goal.REMOVE_BROKERS:
        forced |= removing[t.rep_broker]
    if goal is Goal.DRAIN_DIRS:
        hit = on_dir & draining[np.maximum(t.rep_dir, 0)]
        forced |= hit
        forced_intra_ok |= hit
    offline = on_dir & ~t.dir_online[np.maximum(t.rep_dir, 0)] & t.broker_registered[t.rep_broker]
    broker_has_offline_dir = np.bincount(t.dir_broker[~t.dir_online], minlength=n_brokers) > 0
    if goal is Goal.FIX_OFFLINE:
        fenced = t.broker_registered[t.rep_broker] & ~t.broker_active[t.rep_broker]
        forced |= dead | fenced | offline  # offline ones to another broker: see _Setup.offline
    # A broker with an offline directory moves none of its replicas between its directories.
    forced_intra_ok &= ~broker_has_offline_dir[t.rep_broker]
    if goal in (Goal.BALANCE, Goal.FIX_OFFLINE):
        forced |= dead
    forced &= ~rep_excluded  # excluded topics and brokers never move, whatever else holds
    # kafka-reassign-partitions refuses a whole plan that names a broker the cluster does not list
    # as live, fenced or unregistered ("Unknown broker id", ReassignPartitionsCommand.verifyBrokerIds
    # over describeCluster, 4.4.0 :786-789, :923-928): a partition keeping a replica on one stays
    # out of the plan, as an excluded one (its other replicas do not move either).
    held = t.partitions_with(~t.broker_active[t.rep_broker] & ~forced)
    rep_excluded = rep_excluded | held[t.rep_part]
    forced &= ~rep_excluded
    # Leaders stay where they are unless the goal is to balance (leaders are part of the load
    # then; the shed kernel still prefers followers) or their broker or directory goes away.
    movable = ~rep_excluded & ~t.rep_is_leader
    if goal in (Goal.BALANCE, Goal.REBALANCE_DISKS):
        movable = ~rep_excluded
    # A partition with an offline replica is left alone unless the goal makes one of its
    # replicas leave (then its offline ones leave their broker too: _phase_brokers).
    with_offline = t.partitions_with(offline)
    has_forced = t.partitions_with(forced)
    movable &= ~with_offline[t.rep_part]
    left_alone = int(np.count_nonzero(with_offline & ~has_forced))
    tiebreak = np.random.default_rng(request.seed).permutation(t.replica_count)
    keeping = np.bincount(t.rep_broker[~forced], minlength=n_brokers) > 0
    usable = (receivable | (keeping & t.broker_registered)) & (t.broker_rack >= 0)
    racks_available = len(np.unique(t.broker_rack[usable]))
    return _Setup(
        receivable, draining, open_dirs, movable | forced, forced, forced_intra_ok, rep_excluded, tiebreak, racks_available,
        offline, broker_has_offline_dir, left_alone, int(np.count_nonzero(held)),
    )


# Racks -------------------------------------------------------------------------------------


def rack_limit(rf: int, mode: RackMode, racks_available: int) -> int:
    """The most replicas of one partition a rack may hold, with `racks_available` racks."""
    if racks_available == 0:
        return rf
    if mode is RackMode.STRICT and racks_available >= rf:
        return 1
    return -(-rf // racks_available)  # even: ceil(rf / racks)


@dataclass(frozen=True)
class DirectoryBand:
    """Per directory: its broker's mean usage (a share of capacity; NaN where the band does not
    apply) and the band around it, `low` to `high` (shares of the directory's capacity; `high`
    never past the capacity threshold). Every place that needs the planner's directory band
    (the directory kernel's target, explain, refine, bench_optimum) reads it from here."""

    mean: np.ndarray
    low: np.ndarray
    high: np.ndarray
    broker_mean: np.ndarray  # per broker (NaN: no band)


def directory_band(
    dir_broker: np.ndarray, dir_capacity: np.ndarray, counted: np.ndarray, dir_bytes: np.ndarray, band: float, threshold: float, brokers: int
) -> DirectoryBand:
    """The directory band for a placement whose directories hold `dir_bytes`: around each
    broker's mean usage over its `counted` directories (online and staying), `band` wide, and
    never past `threshold`. A broker with a counted directory of unknown capacity has no band."""
    capacity = dir_capacity.astype(np.float64)
    known = counted & (capacity > 0)
    used = np.bincount(dir_broker[known], weights=dir_bytes[known], minlength=brokers)
    total = np.bincount(dir_broker[known], weights=capacity[known], minlength=brokers)
    all_known = np.bincount(dir_broker[counted & (capacity <= 0)], minlength=brokers) == 0
    broker_mean = np.divide(used, total, out=np.full(brokers, np.nan), where=(total > 0) & all_known)
    mean = broker_mean[dir_broker]
    return DirectoryBand(mean, mean - band, np.minimum(mean + band, threshold), broker_mean)


def rack_violations(t: ClusterTables, broker: np.ndarray, mode: RackMode, racks_available: int | None = None) -> tuple[np.ndarray, int]:
    """Per replica: True where its rack holds more replicas of its partition than allowed
    (the later replicas in list order are the violators), counting every rack of the cluster
    unless `racks_available` says how many can be used."""
    racks_available = len(t.racks) if racks_available is None else racks_available
    rack = t.broker_rack[broker]
    violating = np.zeros(t.replica_count, dtype=bool)
    if racks_available == 0:
        return violating, 0
    rf = np.diff(t.part_offsets)
    limit = np.array([rack_limit(int(r), mode, racks_available) for r in range(int(rf.max(initial=0)) + 1)])
    key = t.rep_part.astype(np.int64) * (len(t.racks) + 1) + (rack + 1)
    order = np.argsort(key, kind="stable")
    sorted_key = key[order]
    starts = np.r_[True, sorted_key[1:] != sorted_key[:-1]]
    run_start = np.maximum.accumulate(np.where(starts, np.arange(len(order)), 0))
    rank = np.arange(len(order)) - run_start
    allowed = limit[rf[t.rep_part[order]]]
    violating[order] = (rank >= allowed) & (rack[order] != NO_RACK)
    return violating, int(violating.sum())


# Targets -------------------------------------------------------------------------------------


def _integer_targets(total: int, weights: np.ndarray) -> np.ndarray:
    """Integer shares of `total` proportional to `weights` (largest remainder)."""
    if weights.sum() <= 0:
        return np.zeros(len(weights), dtype=np.int64)
    exact = total * weights / weights.sum()
    base = np.floor(exact).astype(np.int64)
    remainder = total - int(base.sum())
    if remainder > 0:
        base[np.argsort(-(exact - base), kind="stable")[:remainder]] += 1
    return base


def capacity_weights(t: ClusterTables, brokers: np.ndarray) -> np.ndarray:
    """Each broker's share of the bytes: its capacity, when every one of them has a known
    capacity; an equal share otherwise. Replica and leader counts are always shared equally
    (as Cruise Control's distribution goals do): capacity is about bytes."""
    capacity = t.broker_capacity.astype(np.float64)
    weights = np.where(brokers, 1.0, 0.0)
    if (capacity[brokers] > 0).all():
        weights = np.where(brokers, capacity, 0.0)
    return weights


# The plan ------------------------------------------------------------------------------------


class _Placement:
    """Where each replica ends, and the loads that follow, while phase 1 decides.

    The loads are plain Python lists: the matching loop reads and updates them a few million
    times, where numpy scalars would cost several times more. `count`, `bytes` and `dir_usage`
    give numpy copies for the vectorized steps between rounds."""

    def __init__(self, t: ClusterTables, setup: _Setup, threshold: float) -> None:
        self.t = t
        self.broker = t.rep_broker.copy()
        self.counts: list[int] = np.bincount(self.broker, minlength=t.broker_count).tolist()
        self.loads: list[float] = np.bincount(self.broker, weights=t.rep_size, minlength=t.broker_count).tolist()
        on_dir = t.rep_dir >= 0
        self.dir_loads: list[float] = np.bincount(t.rep_dir[on_dir], weights=t.rep_size[on_dir], minlength=len(t.dir_ids)).tolist()
        capacity = t.dir_capacity.astype(np.float64)
        self.dir_limit = np.where(capacity > 0, np.floor(capacity * threshold), np.inf).tolist()
        # Each broker's open directories, for room checks.
        order = np.argsort(t.dir_broker, kind="stable")
        open_sorted = order[setup.open_dirs[order]]
        bounds = np.searchsorted(t.dir_broker[open_sorted], np.arange(t.broker_count + 1))
        self.dirs_of = [open_sorted[bounds[b] : bounds[b + 1]].tolist() for b in range(t.broker_count)]
        self.rack_of = t.broker_rack.tolist()
        # Per partition: how many more of its in-sync replicas may leave it at once and keep
        # min.insync.replicas in sync while the move runs (what `reassign check` enforces).
        in_sync_count = np.bincount(t.rep_part[t.rep_in_sync], minlength=len(t.part_id))
        self.isr_budget: list[int] = np.maximum(in_sync_count - t.part_min_isr, 0).tolist()
        self._in_sync = t.rep_in_sync
        # Racks of each partition's replicas, kept up to date as replicas move.
        self.racks_of: dict[int, list[int]] = {}
        # The directory each replica's bytes are counted in, and each broker's roomiest open
        # directory and the room left in it under the limit (-inf without one), kept up to date.
        self.counted_dir = t.rep_dir.copy()
        self._best_dir = [-1] * t.broker_count
        self.best_room = [-np.inf] * t.broker_count
        for b in range(t.broker_count):
            self._refresh(b)

    @property
    def count(self) -> np.ndarray:
        return np.array(self.counts, dtype=np.int64)

    @property
    def bytes(self) -> np.ndarray:
        return np.array(self.loads, dtype=np.float64)

    @property
    def dir_usage(self) -> np.ndarray:
        return np.array(self.dir_loads, dtype=np.float64)

    def rack_counts(self, partition: int) -> list[int]:
        racks = self.racks_of.get(partition)
        if racks is None:
            t = self.t
            racks = [self.rack_of[b] for b in self.broker[t.part_offsets[partition] : t.part_offsets[partition + 1]].tolist()]
            self.racks_of[partition] = racks
        return racks

    def _refresh(self, broker: int) -> None:
        best, room = -1, -np.inf
        for d in self.dirs_of[broker]:
            left = self.dir_limit[d] - self.dir_loads[d]
            if left > room:
                best, room = d, left
        self._best_dir[broker] = best
        self.best_room[broker] = room

    def move(self, rep: int, target: int, size: float) -> None:
        t = self.t
        source = int(self.broker[rep])
        if self._in_sync[rep]:
            home = int(t.rep_broker[rep])
            if source == home:
                self.isr_budget[int(t.rep_part[rep])] -= 1
            elif target == home:
                self.isr_budget[int(t.rep_part[rep])] += 1
        self.counts[source] -= 1
        self.loads[source] -= size
        self.counts[target] += 1
        self.loads[target] += size
        partition = int(t.rep_part[rep])
        racks = self.rack_counts(partition)
        racks[rep - int(t.part_offsets[partition])] = self.rack_of[target]
        self.broker[rep] = target
        # Room accounting only (the directory kernel decides the directory): the replica leaves
        # the directory it is counted in, and is counted in the target's roomiest one.
        here = int(self.counted_dir[rep])
        if here >= 0:
            self.dir_loads[here] -= size
            self._refresh(source)
        there = self._best_dir[target]
        if target == int(t.rep_broker[rep]) and t.rep_dir[rep] >= 0:
            # Back on its own broker, it is back in its own directory: the directory kernel
            # moves only replicas that arrive from another broker (or must leave their directory).
            there = int(t.rep_dir[rep])
        if there >= 0:
            self.dir_loads[there] += size
            self._refresh(target)
        self.counted_dir[rep] = there

def plan(t: ClusterTables, request: PlanRequest, engine: Engine, progress: Callable[[str], None] = ignore) -> Plan:
    progress(f"Planning {request.goal.value}: {t.broker_count} brokers, {len(t.dir_ids)} log directories, {t.replica_count} replicas")
    setup = _setup(t, request)
    placement = _Placement(t, setup, request.capacity_threshold)
    result = Plan(t, request, t.rep_broker.copy(), t.rep_dir.copy(), t.rep_pos.copy().astype(np.int16))
    targets = _targets(t, setup, request, placement)
    result.movable, result.holders, result.count_high, result.byte_target = setup.movable, targets.holders, targets.high, targets.bytes
    result.count_target = targets.count
    result.count_low, result.receivable, result.excluded = targets.low, setup.receivable, setup.excluded
    result.offline, result.broker_has_offline_dir, result.racks_available = setup.offline, setup.broker_has_offline_dir, setup.racks_available
    result.forced = setup.forced.copy()
    result.open_dirs = setup.open_dirs
    result.draining_dirs = setup.draining_dirs
    result.rack_fixes = np.zeros(t.replica_count, dtype=bool)
    budget = _Budget(request)
    goal = request.goal
    if goal is not Goal.REBALANCE_DISKS:
        _phase_brokers(t, request, setup, placement, engine, result, budget, targets, progress)
    placement.broker = cancel_swaps(t, placement.broker, leave=t.partitions_with(setup.offline))
    result.new_broker = placement.broker
    progress("Placing replicas in log directories")
    finish_directories = _phase_directories(t, request, setup, placement, engine, result, budget)
    from kjbod.planner import refine  # here: refine imports this module

    if refine.applies(result):
        # The exact refinement changes replica sets: leaders are evened out after it.
        finish_directories()
        result.refinement = refine.refine(result, progress)
    # Leaders do not depend on directories: they are evened out while the directory kernel runs
    # (on Spark, at the same time; in this process, after it).
    leader_notes: list[str] = []
    touched = None
    if goal is Goal.BALANCE and t.replica_count:
        progress("Evening out preferred leaders")
        leader_notes, touched = _balance_leaders(t, result, setup)
    if result.refinement is None:
        finish_directories()
        result.refinement = refine.refine(result, progress)  # says why it does not run
    put_back = _leave_partitions_on_inactive_brokers(t, result)
    returning = _leave_partitions_returning_to_a_broker(t, result)
    if returning.any():
        result.notes.append(
            f"{int(np.count_nonzero(returning))} partition(s) whose replica in an offline log directory would leave a broker "
            "another of their replicas moves to are left as they are (a reassignment names a broker once)"
        )
    if touched is not None:
        changed = t.partitions_with(result.inter_moved | result.intra_moved)
        result.leaders_reordered_only = int(np.count_nonzero(touched & ~changed & ~put_back & ~returning))
    result.notes.extend(leader_notes)
    if setup.left_alone and goal is not Goal.FIX_OFFLINE:
        result.notes.append(
            f"{setup.left_alone} partition(s) with a replica in an offline log directory are left as they are "
            "(--goal fix-offline moves those replicas to other brokers)"
        )
    held = setup.held + int(np.count_nonzero(put_back))
    if held:
        result.notes.append(
            f"{held} partition(s) keeping a replica on a fenced or unregistered broker are left as they are "
            "(kafka-reassign-partitions refuses a plan that names such a broker; --goal fix-offline moves those replicas)"
        )
    _explain_rack_violations(t, request, setup, result)
    result.budget_exhausted = budget.exhausted
    return result


def cancel_swaps(t: ClusterTables, broker: np.ndarray, leave: np.ndarray) -> np.ndarray:
    """Where each replica ends, with no replica leaving a broker its partition still ends on.

    The rounds can move a replica of a partition off broker A and later another replica of the
    same partition onto A: the partition keeps A, and the plan (a list of brokers per partition)
    shows one move where the replicas made two. Each partition's final brokers are kept; the
    replica that was on a broker the partition keeps stays there (in its directory), and the
    replicas that leave take the brokers the partition gains, a replica keeping its own target
    where that is one of them. Counts, bytes and racks per broker are those of the rounds; fewer
    replicas move, and fewer leave their in-sync set at once. Partitions `leave` marks (those
    with a replica in an offline directory, whose moves follow their own rules) are left as
    they are."""
    # Only the rows of partitions with a moved replica (a few percent of a balanced cluster's).
    touched = np.flatnonzero(t.partitions_with(broker != t.rep_broker) & ~leave)
    if touched.size == 0:
        return broker
    # Each touched partition's home and final brokers as a row of a small matrix (replication
    # factors are small): membership is then a comparison of every slot with every other.
    rf = np.diff(t.part_offsets)[touched]
    local = np.repeat(np.arange(touched.size), rf)
    slot = np.arange(int(rf.sum())) - np.repeat(np.cumsum(rf) - rf, rf)
    rows = t.part_offsets[touched][local] + slot
    home = np.full((touched.size, int(rf.max())), -1, dtype=np.int64)
    final = np.full((touched.size, int(rf.max())), -2, dtype=np.int64)
    home[local, slot] = t.rep_broker[rows]
    final[local, slot] = broker[rows]
    stays = (home[local, slot][:, None] == final[local]).any(axis=1)  # its broker is one the partition keeps
    gained = ~(final[local, slot][:, None] == home[local]).any(axis=1)  # a broker the partition did not have
    if not (stays & (broker[rows] != t.rep_broker[rows])).any():
        return broker
    result = broker.copy()
    result[rows[stays]] = t.rep_broker[rows[stays]]
    # Replicas leaving whose own target is not a gained broker (they moved onto a broker the
    # partition keeps) take the gained brokers no leaving replica targets, partition by partition.
    # (A gained broker held in the row of a replica that stays is free; per partition there are
    # as many as leaving replicas without a gained target.) Rows are sorted by partition: pair in order.
    unpaired = rows[~stays & ~gained]
    free = rows[stays & gained]
    assert np.array_equal(t.rep_part[unpaired], t.rep_part[free])
    result[unpaired] = broker[free]
    return result


def _explain_rack_violations(t: ClusterTables, request: PlanRequest, setup: _Setup, result: Plan) -> None:
    """List every partition the plan moves that still breaks the rack rule, with the reason."""
    if not t.racks:
        return
    violating, _ = rack_violations(t, result.new_broker, request.rack_mode)
    violated_before, _ = rack_violations(t, t.rep_broker, request.rack_mode)
    moved = t.partitions_with(result.new_broker != t.rep_broker)
    before = t.partitions_with(violated_before)
    partitions = np.unique(t.rep_part[violating])
    partitions = partitions[moved[partitions]]
    racks_short = setup.racks_available < len(t.racks)
    if racks_short:
        reason = f"only {setup.racks_available} of {len(t.racks)} racks have brokers that can hold its replicas"
    else:
        reason = "no broker with room satisfies the rack rule"
    for partition in partitions.tolist():
        if before[partition] and request.goal is not Goal.BALANCE and not racks_short:
            result.unsatisfiable.setdefault(partition, f"broke the rack rule before; {request.goal.value} moves only what it must (balance fixes it)")
        else:
            result.unsatisfiable.setdefault(partition, reason)


class _Budget:
    def __init__(self, request: PlanRequest) -> None:
        self.moves_left = request.max_moves if request.max_moves is not None else np.inf
        self.bytes_left = request.max_bytes if request.max_bytes is not None else np.inf
        self.exhausted = False

    @property
    def unlimited(self) -> bool:
        return not np.isfinite(self.moves_left) and not np.isfinite(self.bytes_left)

    def take(self, size: float) -> bool:
        if self.moves_left < 1 or self.bytes_left < size:
            self.exhausted = True
            return False
        self.moves_left -= 1
        self.bytes_left -= size
        return True


@dataclass
class _Targets:
    """Per broker: whether it holds load, its replica count target and band [low, high], and
    its byte target. Brokers that hold no load keep what they have."""

    holders: np.ndarray
    count: np.ndarray
    low: np.ndarray
    high: np.ndarray
    bytes: np.ndarray


def _targets(t: ClusterTables, setup: _Setup, request: PlanRequest, placement: _Placement) -> _Targets:
    holders = setup.receivable.copy()
    if request.goal is Goal.ADD_BROKERS:
        holders = t.broker_active.copy()  # the new brokers join everyone's balance
    staying = np.bincount(t.rep_broker[~setup.forced], minlength=t.broker_count)
    fixed = ~holders & (staying > 0)  # brokers that keep what they have (excluded, fenced, ...)
    total = t.replica_count - int(placement.count[fixed].sum())
    total_bytes = float(t.rep_size.sum() - placement.bytes[fixed].sum())
    counts = _rack_bounded(t, setup, request, holders, holders.astype(np.float64), np.ones(len(t.part_id)), total)
    target = np.where(holders, _integer_shares(total, counts, t.broker_rack, holders), placement.count)
    slack = np.floor(target * request.count_tolerance).astype(np.int64)
    low = np.where(holders, target - slack, 0)
    high = np.where(holders, target + slack, placement.count)
    byte_shares = _rack_bounded(t, setup, request, holders, capacity_weights(t, holders), t.part_size.astype(np.float64), total_bytes)
    byte_target = np.where(holders, byte_shares, placement.bytes)
    return _Targets(holders, target, low, high, byte_target)


def _rack_bounded(
    t: ClusterTables, setup: _Setup, request: PlanRequest, holders: np.ndarray, weights: np.ndarray, amount: np.ndarray, total: float
) -> np.ndarray:
    """Each holder's share of `total` (replicas, or bytes: `amount` is what one replica of each
    partition weighs), in proportion to `weights`, except that no rack gets more than the rack
    rule lets one rack hold, or less than it makes one rack hold (with racks of unequal size,
    a big rack cannot take its brokers' share when it may hold one replica per partition).
    Racks are filled like water: the ones at a bound keep it, the others share the rest."""
    share = np.where(holders, total * weights / max(float(weights[holders].sum()), 1e-9), 0.0)
    rack = t.broker_rack
    if setup.racks_available < 2 or (rack[holders] < 0).any() or not holders.any():
        return share
    rf = np.diff(t.part_offsets)
    limits = np.array([rack_limit(int(r), request.rack_mode, setup.racks_available) for r in range(int(rf.max(initial=0)) + 1)])
    limit = limits[rf]
    most = float((np.minimum(rf, limit) * amount).sum())
    least = float((np.maximum(rf - limit * (setup.racks_available - 1), 0) * amount).sum())
    rack_weight = np.bincount(rack[holders], weights=weights[holders], minlength=len(t.racks))
    free = rack_weight > 0
    rack_total = np.zeros(len(t.racks))
    left = float(total)
    while free.any():
        wanted = left * rack_weight / rack_weight[free].sum()
        over = free & (wanted > most)
        under = free & (wanted < least)
        bound = over if over.any() else under
        if not bound.any():
            rack_total[free] = wanted[free]
            break
        rack_total[bound] = most if over.any() else least
        left -= float(rack_total[bound].sum())
        free &= ~bound
    per_rack_weight = rack_weight[np.maximum(rack, 0)]
    return np.where(holders, rack_total[np.maximum(rack, 0)] * weights / np.maximum(per_rack_weight, 1e-9), 0.0)


def _integer_shares(total: int, shares: np.ndarray, rack: np.ndarray, holders: np.ndarray) -> np.ndarray:
    """Whole replica counts adding up to `total`, close to `shares`: racks first, then the
    brokers of each rack (so rounding never moves a replica from one rack to another)."""
    if (rack[holders] < 0).any() or not holders.any():
        return _integer_targets(total, shares)
    racks = int(rack.max()) + 1
    rack_shares = np.bincount(rack[holders], weights=shares[holders], minlength=racks)
    rack_totals = _integer_targets(total, rack_shares)
    result = np.zeros(len(shares), dtype=np.int64)
    for r in np.flatnonzero(rack_totals > 0):
        members = holders & (rack == r)
        result[members] = _integer_targets(int(rack_totals[r]), shares[members])
    return result


# How far past its count band a broker may go in a byte round (a fraction of its target): a
# heavy broker gives away large replicas, a light one takes them, and the next count round
# evens the counts out again with small replicas going the other way.
BYTE_ROUND_COUNT_ALLOWANCE = 0.05
ROUNDS = 9  # count, bytes, count, ..., count


def _phase_brokers(
    t: ClusterTables,
    request: PlanRequest,
    setup: _Setup,
    placement: _Placement,
    engine: Engine,
    result: Plan,
    budget: _Budget,
    targets: _Targets,
    progress: Callable[[str], None],
) -> None:
    goal = request.goal
    mode = request.rack_mode
    forced = setup.forced.copy()
    # Forced replicas that can stay on their broker (a drained or failed directory of a live
    # broker) do, when the broker's other directories have the room: the directory kernel moves them.
    if setup.forced_intra_ok.any():
        stay = _fits_on_own_broker(t, setup, placement, request)
        forced &= ~stay
    # A partition that loses a replica to another broker loses its offline replicas too.
    leaving = t.partitions_with(forced)
    companions = setup.offline & leaving[t.rep_part] & ~setup.excluded
    forced |= companions
    assert result.forced is not None
    result.forced |= companions
    # Replicas beyond the rack limit move first too (balance only: the other goals move only
    # what they must), but unlike forced ones they keep min.insync.replicas and the rack rule.
    urgent = forced.copy()
    if goal is Goal.BALANCE:
        rack_bad, _ = rack_violations(t, placement.broker, mode, setup.racks_available)
        result.rack_fixes = rack_bad & setup.movable & ~forced
        urgent |= result.rack_fixes
    balancing = goal in (Goal.BALANCE, Goal.ADD_BROKERS)
    allowance = np.ceil(targets.count * BYTE_ROUND_COUNT_ALLOWANCE).astype(np.int64)
    # Rounds alternate. A count round sheds what is over the count band, choosing replicas whose
    # bytes match the broker's byte excess, to the brokers furthest under their count target.
    # A byte round sheds the largest replicas that fit a heavy broker's byte excess to the
    # brokers furthest under their byte target. The last round counts.
    idle_rounds = 0
    for round_ in range(ROUNDS if balancing else 1):
        by_bytes = round_ % 2 == 1
        forced_here = np.bincount(placement.broker[urgent], minlength=t.broker_count)
        over_bytes = placement.bytes - targets.bytes
        quota_count = np.zeros(t.broker_count, dtype=np.int64)
        quota_bytes = np.zeros(t.broker_count, dtype=np.float64)
        if balancing and not by_bytes:
            quota_count = _count_quotas(placement.count - forced_here, targets, setup.receivable)
            quota_bytes = np.maximum(over_bytes, 0)
            if goal is Goal.ADD_BROKERS:
                # Fill the new brokers only: shed what they can take, from the most loaded.
                room = int(np.maximum(targets.low - placement.count, 0)[setup.receivable].sum())
                quota_count = _limit_total(quota_count, placement.count - targets.low, room)
        elif balancing:
            # Brokers outside the byte band are brought inside it, halfway to their target: all
            # the way costs moves for evenness the band does not ask for.
            margin = targets.bytes * BYTE_TOLERANCE
            heavy = targets.holders & (over_bytes > margin)
            quota_bytes = np.where(heavy, over_bytes - margin / 2, 0)
            light = setup.receivable & targets.holders & (-over_bytes > margin)
            if light.any():
                # Light brokers also take from brokers above target but within the band: as
                # much as the heavy ones do not give, shared in proportion to what is above target.
                short = float((-over_bytes - margin / 2)[light].sum()) - float(quota_bytes.sum())
                above = targets.holders & ~heavy & (over_bytes > 0)
                if short > 0 and above.any():
                    share = min(short / float(over_bytes[above].sum()), 1.0)
                    quota_bytes = np.where(above, over_bytes * share, quota_bytes)
                    heavy |= above
            if goal is Goal.ADD_BROKERS:
                heavy &= ~setup.receivable
                quota_bytes = np.where(heavy, quota_bytes, 0)
            # As many as fit the excess (largest first); receivers' count caps limit the round.
            quota_count = np.where(heavy, placement.count, 0)
        source_rows = np.flatnonzero(urgent | (setup.movable & (quota_count[placement.broker] > 0)))
        if source_rows.size == 0:
            idle_rounds += 1
            if idle_rounds >= 2:
                break
            continue
        dir_excess = _dir_excess(t, placement, request, targets)
        counted_dir = placement.counted_dir[source_rows]
        frame = pd.DataFrame(
            {
                "rep": source_rows.astype(np.int64),
                "group": placement.broker[source_rows].astype(np.int32),
                "tiebreak": setup.tiebreak[source_rows],
                "size": t.rep_size[source_rows],
                "forced": urgent[source_rows],
                "leader": t.rep_is_leader[source_rows],
                "dir": counted_dir,
                "dir_excess": np.where(counted_dir >= 0, dir_excess[np.maximum(counted_dir, 0)], 0.0),
                "fits_needy_rack": _fits_needy_rack(t, placement, targets, setup, source_rows, by_bytes),
                "locked": _isr_locked(t, placement, source_rows),
            }
        )
        kind = "bytes" if by_bytes else "replica counts"
        progress(f"Brokers, round {round_ + 1}: {kind}, {source_rows.size} candidate replicas on {np.unique(frame['group']).size} brokers")
        shed = engine.map_groups(SHED, frame, {"quota_count": quota_count, "quota_bytes": quota_bytes, "by_bytes": by_bytes})
        moved = _match(t, request, setup, placement, shed, targets, by_bytes, urgent, forced, result, budget, allowance)
        unmoved = placement.broker == t.rep_broker
        forced &= unmoved  # what moved is no longer forced
        urgent &= unmoved
        idle_rounds = idle_rounds + 1 if moved == 0 else 0
        if idle_rounds >= 2 or budget.exhausted:
            break
    if balancing and budget.unlimited:
        limit_of = lambda rf: rack_limit(rf, mode, setup.racks_available)  # noqa: E731
        repaired = Repair(t, request, setup, placement, targets, BYTE_TOLERANCE, limit_of).run()
        if repaired:
            progress(f"Brokers, repair: {repaired} move(s) bringing counts and bytes into their bands or giving moves back")
    outside = targets.holders & ((placement.count < targets.low) | (placement.count > targets.high))
    if balancing and outside.any() and result.unmatched:
        result.notes.append(
            f"{int(outside.sum())} broker(s) end outside their replica count band: the last {result.unmatched} replica(s) "
            "that would even them out found no broker the rules allow (rack rule, room, min.insync.replicas)"
        )
    _keep_partitions_holding_offline_replicas(t, setup, placement)
    stuck = forced & (placement.broker == t.rep_broker)
    if stuck.any():
        result.notes.append(f"{int(stuck.sum())} replica(s) that should move have nowhere to go under the rules")
        for rep in np.flatnonzero(stuck)[:1000]:
            result.unsatisfiable.setdefault(int(t.rep_part[rep]), "no broker with room satisfies the rack rule")
    short = int((np.array(placement.isr_budget) < 0).sum())
    if short:
        result.notes.append(
            f"{short} partition(s) must move more in-sync replicas at once than min.insync.replicas allows "
            "(replicas that have to leave); run those moves in two batches (`reassign check` lists them)"
        )


def _leave_partitions_on_inactive_brokers(t: ClusterTables, result: Plan) -> np.ndarray:
    """A partition the plan changes that still ends with a replica on a fenced or unregistered
    broker (one the goal wanted gone found no other broker) is put back as it was: Kafka's tool
    would refuse the whole plan for it (see _setup). Returns the partitions put back."""
    ends_inactive = t.partitions_with(~t.broker_active[result.new_broker])
    put_back = ends_inactive & t.partitions_with(result.inter_moved | result.intra_moved | (result.new_pos != t.rep_pos))
    undo = put_back[t.rep_part]
    result.new_broker[undo] = t.rep_broker[undo]
    result.new_dir[undo] = t.rep_dir[undo]
    result.new_pos[undo] = t.rep_pos[undo]
    return put_back


def _leave_partitions_returning_to_a_broker(t: ClusterTables, result: Plan) -> np.ndarray:
    """A partition one of whose replicas leaves a broker that another of its replicas moves to is
    put back as it was. cancel_swaps turns such moves into a replica that stays, except in
    partitions with a replica in an offline directory (that replica cannot stay: its broker
    cannot read it); a reassignment names each broker once, so Kafka would keep the offline
    replica where it is and the plan could never complete. Returns the partitions put back."""
    moved = np.flatnonzero(result.inter_moved)
    if moved.size == 0:
        return np.zeros(len(t.part_offsets) - 1, dtype=bool)
    width = np.int64(t.broker_count)
    part = t.rep_part[moved].astype(np.int64)
    left = part * width + t.rep_broker[moved]
    reached = part * width + result.new_broker[moved]
    both = np.intersect1d(left, reached)
    returning = np.zeros(len(t.part_offsets) - 1, dtype=bool)
    returning[both // width] = True
    undo = returning[t.rep_part]
    result.new_broker[undo] = t.rep_broker[undo]
    result.new_dir[undo] = t.rep_dir[undo]
    result.new_pos[undo] = t.rep_pos[undo]
    return returning


def _keep_partitions_holding_offline_replicas(t: ClusterTables, setup: _Setup, placement: _Placement) -> None:
    """A partition whose replica set changes must not keep a replica in an offline directory
    (`reassign check` refuses it: the reassignment could never complete). Where such a replica
    found no other broker, its partition's other moves are undone. The loads are not updated:
    only the directory phase follows, and it reads the brokers alone."""
    moved = placement.broker != t.rep_broker
    kept_offline = setup.offline & ~moved
    if not kept_offline.any():
        return
    changed = t.partitions_with(moved)
    holding = t.partitions_with(kept_offline)
    undo = (changed & holding)[t.rep_part] & moved
    placement.broker[undo] = t.rep_broker[undo]


def _fits_needy_rack(
    t: ClusterTables, placement: _Placement, targets: _Targets, setup: _Setup, rows: np.ndarray, by_bytes: bool
) -> np.ndarray:
    """Per row: the replica's partition has no other replica in some rack whose brokers still
    need replicas (below their count band), so the replica could go there. Shedding such
    replicas first keeps the last brokers to fill (often all in one big rack) from being left
    with only replicas the rack rule keeps out."""
    racks = len(t.racks)
    if by_bytes or racks == 0 or racks > 62:
        return np.ones(len(rows), dtype=bool)
    needy = setup.receivable & (placement.count < targets.low) & (t.broker_rack >= 0)
    needy_mask = np.bitwise_or.reduce(np.left_shift(1, t.broker_rack[needy].astype(np.int64)), initial=0)
    if needy_mask == 0:
        return np.ones(len(rows), dtype=bool)
    rack = t.broker_rack[placement.broker]
    bits = np.where(rack >= 0, np.left_shift(1, np.maximum(rack, 0).astype(np.int64)), 0)
    present = np.bitwise_or.reduceat(bits, t.part_offsets[:-1])[t.rep_part[rows]]
    others = present & ~bits[rows]  # a rack the replica shares with another replica is rare under the rack rule
    return (needy_mask & ~others) != 0


def _isr_locked(t: ClusterTables, placement: _Placement, rows: np.ndarray) -> np.ndarray:
    """Per row: an in-sync replica still on its broker whose partition may not lose another
    in-sync replica now (see `_Placement.isr_budget`)."""
    budget = np.array(placement.isr_budget, dtype=np.int64)
    return t.rep_in_sync[rows] & (placement.broker[rows] == t.rep_broker[rows]) & (budget[t.rep_part[rows]] <= 0)


def _count_quotas(count: np.ndarray, targets: _Targets, receivable: np.ndarray) -> np.ndarray:
    """Replicas each broker sheds in a count round: what is over its band; and when that is not
    enough to lift every receiving broker to the bottom of its band, also what is over its
    target, from the brokers furthest over first."""
    quota = np.where(targets.holders | ~receivable, np.maximum(count - targets.high, 0), 0)
    need = int(np.maximum(targets.low - count, 0)[receivable].sum())
    short = need - int(quota.sum())
    if short > 0:
        spare = np.where(targets.holders, np.maximum(np.minimum(count, targets.high) - targets.count, 0), 0)
        quota += _limit_total(spare, spare, short)
    return quota


def _limit_total(quota: np.ndarray, spare: np.ndarray, total: int) -> np.ndarray:
    """Cut quotas so they add up to at most `total`, taking from the most loaded first."""
    quota = np.minimum(quota, np.maximum(spare, 0))
    if quota.sum() <= total:
        return quota
    scaled = np.floor(quota * (total / max(quota.sum(), 1))).astype(np.int64)
    left = total - int(scaled.sum())
    if left > 0:
        scaled[np.argsort(-(quota - scaled), kind="stable")[:left]] += 1
    return scaled


def _dir_excess(t: ClusterTables, placement: _Placement, request: PlanRequest, targets: _Targets) -> np.ndarray:
    """Bytes each directory holds above its broker's band (0 when capacities are unknown). The
    band is around the broker's mean usage once it holds its byte target, when that is lower
    than now: a broker that sheds bytes should shed them from its fullest directories."""
    capacity = t.dir_capacity.astype(np.float64)
    known = (capacity > 0) & t.dir_online
    dir_usage = placement.dir_usage
    broker_used = np.bincount(t.dir_broker[known], weights=dir_usage[known], minlength=t.broker_count)
    broker_cap = np.bincount(t.dir_broker[known], weights=capacity[known], minlength=t.broker_count)
    final = np.minimum(broker_used, np.where(targets.holders, targets.bytes, broker_used))
    mean = np.divide(final, broker_cap, out=np.zeros(t.broker_count), where=broker_cap > 0)
    high = np.minimum((mean[t.dir_broker] + request.disk_band) * capacity, capacity * request.capacity_threshold)
    return np.where(known, np.maximum(dir_usage - high, 0), 0)


def _fits_on_own_broker(t: ClusterTables, setup: _Setup, placement: _Placement, request: PlanRequest) -> np.ndarray:
    """Per replica: a forced replica whose broker's other open directories have room for it."""
    stay = np.zeros(t.replica_count, dtype=bool)
    capacity = t.dir_capacity.astype(np.float64)
    limit = np.where(capacity > 0, capacity * request.capacity_threshold, np.inf)
    room = np.where(setup.open_dirs, limit - placement.dir_usage, 0)
    broker_room = np.bincount(t.dir_broker, weights=np.where(np.isfinite(room), room, 1e30), minlength=t.broker_count)
    candidates = np.flatnonzero(setup.forced_intra_ok)
    # Smallest first, so the most replicas stay local.
    for rep in candidates[np.argsort(t.rep_size[candidates], kind="stable")]:
        b = placement.broker[rep]
        if broker_room[b] >= t.rep_size[rep]:
            broker_room[b] -= t.rep_size[rep]
            stay[rep] = True
    return stay


def _match(
    t: ClusterTables,
    request: PlanRequest,
    setup: _Setup,
    placement: _Placement,
    shed: pd.DataFrame,
    targets: _Targets,
    by_bytes: bool,
    urgent: np.ndarray,
    must: np.ndarray,
    result: Plan,
    budget: _Budget,
    allowance: np.ndarray,
) -> int:
    """Give each shed replica, largest first (urgent ones, `must` move or break the rack rule,
    before all), to the receiving broker
    with the largest byte deficit that the rules allow: under its count cap, not holding the
    partition, the rack rule met, a directory with room. A count round first fills every broker
    to the bottom of its count band, then up to its top; a byte round lets a broker go past its
    band by `allowance` (the next count round evens counts out). Largest-first into the largest
    deficit balances bytes while the caps balance counts. Returns the number of replicas moved."""
    if shed.empty:
        return 0
    reps = shed["rep"].to_numpy()
    sizes = t.rep_size[reps]
    order = np.lexsort((setup.tiebreak[reps], -sizes, shed["priority"].to_numpy() > 0))
    passes = [targets.high + allowance] if by_bytes else [targets.low, targets.high]
    moved = 0
    for cap in passes:
        matched, order = _match_pass(t, request, setup, placement, reps, sizes, order, targets, cap, by_bytes, urgent, must, budget)
        moved += matched
        if order.size == 0 or budget.exhausted:
            break
    # Replicas that must move go even where it overfills a broker's count, and then, where no
    # rack the rule allows has a broker that can take them, where the rule breaks (listed).
    must_rows = order[must[reps[order]]] if order.size and not budget.exhausted else order[:0]
    if must_rows.size:
        unlimited = np.full(t.broker_count, np.iinfo(np.int64).max)
        matched, must_left = _match_pass(t, request, setup, placement, reps, sizes, must_rows, targets, unlimited, by_bytes, urgent, must, budget)
        moved += matched
        if must_left.size and not budget.exhausted:
            matched, still_left = _match_pass(
                t, request, setup, placement, reps, sizes, must_left, targets, unlimited, by_bytes, urgent, must, budget, rack_rule=False
            )
            moved += matched
            for rep in reps[np.setdiff1d(must_left, still_left)].tolist():
                result.unsatisfiable.setdefault(int(t.rep_part[rep]), "no broker in a rack the rule allows could take a replica that had to move")
            must_left = still_left
        order = np.concatenate([order[~must[reps[order]]], must_left])
    result.unmatched = int(order.size)
    return moved


def _match_pass(
    t: ClusterTables,
    request: PlanRequest,
    setup: _Setup,
    placement: _Placement,
    reps: np.ndarray,
    sizes: np.ndarray,
    order: np.ndarray,
    targets: _Targets,
    cap: np.ndarray,
    by_bytes: bool,
    urgent: np.ndarray,
    must: np.ndarray,
    budget: _Budget,
    rack_rule: bool = True,
) -> tuple[int, np.ndarray]:
    """One pass of `_match` with one count cap; returns the number moved and the rows left."""
    receivable = setup.receivable.tolist()
    n_racks = len(t.racks)
    racks_for = np.where(t.broker_rack >= 0, t.broker_rack, n_racks).tolist()  # brokers without a rack share a pseudo-rack
    counts, loads = placement.counts, placement.loads
    count_target, byte_target, caps = targets.count.tolist(), targets.bytes.tolist(), cap.tolist()
    offsets = t.part_offsets
    best_room = placement.best_room
    isr_budget = placement.isr_budget
    rows_locking = (t.rep_in_sync[reps] & (placement.broker[reps] == t.rep_broker[reps])).tolist()
    # One heap per rack of (-need, version, broker): need is the broker's byte deficit relative
    # to its target, plus (in a count round) its relative count deficit, so that a broker short
    # of replicas but not of bytes still gets replicas early, while many are still to place. A
    # broker's entry is current only while its version matches; every change pushes a fresh one.
    heaps: list[list[tuple[float, int, int]]] = [[] for _ in range(n_racks + 1)]
    version = [0] * t.broker_count

    def push(b: int) -> None:
        version[b] += 1
        if not receivable[b] or counts[b] >= caps[b]:
            return
        if by_bytes and loads[b] >= byte_target[b]:
            return
        need = (byte_target[b] - loads[b]) / max(byte_target[b], 1.0)
        if not by_bytes:
            need += (count_target[b] - counts[b]) / max(count_target[b], 1)
        heapq.heappush(heaps[racks_for[b]], (-need, version[b], b))

    for b in np.flatnonzero(receivable):
        push(int(b))
    moved = 0
    left = []
    rows_urgent = urgent[reps].tolist()
    rows_must = must[reps].tolist()
    rows_partition = t.rep_part[reps].tolist()
    rows_source = placement.broker[reps].tolist()
    reps_list, sizes_list = reps.tolist(), sizes.tolist()
    limits = {}
    for i in order.tolist():
        rep = reps_list[i]
        size = sizes_list[i]
        is_urgent = rows_urgent[i]
        partition = rows_partition[i]
        source = rows_source[i]
        if rows_locking[i] and not rows_must[i] and isr_budget[partition] <= 0:
            continue  # the partition keeps min.insync.replicas in sync while it moves
        rack_counts = placement.rack_counts(partition)
        rf = len(rack_counts)
        limit = limits.get(rf)
        if limit is None:
            limit = limits[rf] = rack_limit(rf, request.rack_mode, setup.racks_available)
        start = int(offsets[partition])
        position = rep - start
        others = rack_counts[:position] + rack_counts[position + 1 :]
        holders = placement.broker[start : start + rf].tolist()
        best: tuple[float, int, int] | None = None  # (key, version, broker)
        for rack in range(n_racks + 1):
            heap = heaps[rack]
            if rack_rule and rack < n_racks and others.count(rack) >= limit:
                continue
            aside = []
            while heap:
                k, v, b = heap[0]
                if v != version[b]:
                    heapq.heappop(heap)  # stale
                    continue
                if b in holders or best_room[b] < size:
                    aside.append(heapq.heappop(heap))
                    continue
                if best is None or k < best[0]:
                    best = (k, v, b)
                break
            for entry in aside:
                heapq.heappush(heap, entry)
        if best is None:
            left.append(i)
            continue
        target = best[2]
        if not is_urgent:
            if by_bytes:
                # Only if it evens bytes out: the receiver stays within its band.
                if loads[target] + size > byte_target[target] * (1 + BYTE_TOLERANCE):
                    continue
            elif counts[target] + 1 >= counts[source] and loads[target] + size >= loads[source]:
                continue  # no better than where it is
        if not budget.take(size):
            break
        placement.move(rep, target, size)
        push(target)
        push(source)
        moved += 1
    return moved, np.array(left, dtype=np.int64)


def _phase_directories(
    t: ClusterTables, request: PlanRequest, setup: _Setup, placement: _Placement, engine: Engine, result: Plan, budget: _Budget
) -> Callable[[], None]:
    """Submits the directory kernel; the function returned applies its result to `result`."""
    new_broker = placement.broker
    arrived = new_broker != t.rep_broker
    # Forced off their directory (drained or failed), and still on their broker.
    must_leave_dir = setup.forced & setup.forced_intra_ok & ~arrived
    rep_dir = np.where(arrived, UNKNOWN_DIR, t.rep_dir)
    on_dir = rep_dir >= 0
    dir_has_room = ~setup.draining_dirs & t.dir_online
    place = arrived | must_leave_dir | (on_dir & ~dir_has_room[np.maximum(rep_dir, 0)] & setup.movable)
    # Only live brokers move replicas between their directories, and only those with no
    # offline directory; a replica in an offline directory leaves its broker or stays.
    kept_frozen = ~arrived & (setup.broker_has_offline_dir[new_broker] | setup.offline)
    place &= (setup.movable | arrived) & t.broker_active[new_broker] & ~kept_frozen
    # Only brokers something happens to, unless every broker's disks are to be balanced.
    rebalance = request.goal in (Goal.BALANCE, Goal.REBALANCE_DISKS)
    groups = np.unique(new_broker[place]) if not rebalance else np.flatnonzero(t.broker_active & ~np.isin(t.broker_ids, request.exclude_brokers))
    rows = np.flatnonzero(np.isin(new_broker, groups) & (on_dir | place))
    frame = pd.DataFrame(
        {
            "rep": rows.astype(np.int64),
            "group": new_broker[rows].astype(np.int32),
            "size": t.rep_size[rows],
            "dir": np.where(place[rows], UNKNOWN_DIR, rep_dir[rows]).astype(np.int32),
            # Any replica may change directory: a leader stays the leader on its broker.
            "movable": ~setup.excluded[rows] & ~kept_frozen[rows],
            "place": place[rows],
        }
    )
    counted = t.dir_online & ~setup.draining_dirs
    params = {
        "dir_broker": t.dir_broker,
        "dir_capacity": t.dir_capacity,
        "dir_open": setup.open_dirs,
        "dir_counted": counted,
        "threshold": request.capacity_threshold,
        "band": request.disk_band,
        "rebalance": rebalance,
    }
    pending = engine.submit(DIRECTORY, frame, params)

    def finish() -> None:
        changes = pending.result()
        new_dir = np.where(arrived, UNKNOWN_DIR, t.rep_dir).astype(np.int32)
        if not changes.empty:
            _apply_directory_events(t, changes, arrived, new_dir, budget)
        unplaced = arrived & (new_dir == UNKNOWN_DIR)
        if unplaced.any():
            result.notes.append(f"{int(unplaced.sum())} moved replica(s) have no directory with room; the broker will choose")
            new_dir[unplaced] = BROKER_CHOOSES
        result.new_dir = new_dir

    return finish


def _apply_directory_events(t: ClusterTables, events: pd.DataFrame, arrived: np.ndarray, new_dir: np.ndarray, budget: _Budget) -> None:
    """Apply the directory kernel's events (sorted by group, then order made); a replica's last
    event wins. The budget counts a replica that stays on its broker and changes directory
    once; placing one that arrives from another broker is part of that move and costs nothing
    more. When the budget runs out in a broker's events, the rest of that broker's are dropped:
    each event assumes the ones before it (room freed in a directory, for instance)."""
    reps = events["rep"].to_numpy()
    dirs = events["dir"].to_numpy()
    if budget.unlimited:
        last = len(reps) - 1 - np.unique(reps[::-1], return_index=True)[1]
        new_dir[reps[last]] = dirs[last]
        return
    groups = events["group"].to_numpy()
    charged: set[int] = set()
    stopped = -1
    for rep, directory, group in zip(reps.tolist(), dirs.tolist(), groups.tolist()):
        if group == stopped:
            continue
        if not arrived[rep] and rep not in charged:
            if not budget.take(float(t.rep_size[rep])):
                stopped = group
                continue
            charged.add(rep)
        new_dir[rep] = directory


def _balance_leaders(t: ClusterTables, result: Plan, setup: _Setup) -> tuple[list[str], np.ndarray]:
    """Even out preferred leaders over the brokers that hold load by reordering replica lists
    (no data moves), partitions that move between brokers anyway first (see leaders.py).
    Returns the notes and the partitions reordered."""
    moving = t.partitions_with(result.inter_moved)
    # Left alone: excluded, and partitions keeping an offline replica (see _Setup.offline).
    fixed = t.partitions_with(setup.excluded | (setup.offline & ~result.inter_moved))
    eligible = result.holders & t.broker_active
    balance = balance_leaders(t.part_offsets, result.new_broker, result.new_pos, eligible, fixed, moving, setup.tiebreak)
    result.leader_holders = balance.eligible
    return balance.notes, balance.touched
