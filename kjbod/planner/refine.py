"""Exact refinement: the heuristic's plan, improved by a MILP solver where the cluster is small.

After the heuristic's broker and directory phases (and before preferred leaders are evened out,
so that they see the final replica sets), `refine` solves, with HiGHS (highspy), the model of
bench/bench_optimum.py for the whole cluster: a binary w[p, d] for each partition p the plan may
move and each directory d that may hold one of its replicas after the plan (1: p has a replica in
d), minimising the bytes moved (the size of every replica that ends outside its current
directory) under the planner's rules and bands, read from the heuristic's Plan:

- the replication factor stays, at most one replica of a partition per broker;
- the rack rule (rack_limit of the partition's replication factor, the plan's rack mode and the
  racks it counts);
- min.insync.replicas while the moves run: at most (in-sync replicas - min.insync.replicas) of a
  partition's in-sync replicas leave their broker;
- replicas arrive only in open directories (online, not cordoned, not draining, not on an
  excluded broker) of brokers that may receive; a replica changes directory on its own broker
  only into an open directory, and never on a broker with an offline directory;
- per broker that holds load: its replica count within count_low..count_high and its bytes within
  byte_target x (1 +- BYTE_TOLERANCE); a broker that holds none keeps at most what it has;
- per directory: under floor(capacity x capacity threshold), and within the directory band
  (core.directory_band) of its broker's mean usage after the plan;
- --max-moves and --max-bytes.

Partitions the plan may not change (an excluded topic or broker, an offline replica left alone, a
replica on a fenced broker) are constants, as are those whose moves the heuristic had to make (a
dead broker's replicas, an unknown directory): they keep the heuristic's placement.

Where the heuristic's plan misses a band, that broker's (or directory's, or partition's rack or
in-sync) band is widened to how far the heuristic's plan is, on both sides of its target. Each
widened count, byte, capacity-threshold or directory band then gets a slack column per widened
side (0 up to the heuristic's own miss), and the objective is lexicographic in one solve: the
bytes outside the planner's own bands (a replica outside a count band weighs the mean replica)
at a price above every byte the model could move, then bytes moved. The rack and in-sync bands
stay hard limits at the heuristic's (they are rarely widened). The heuristic's plan, with its
misses as the slacks, is the solver's start.

That solve keeps every broker and directory within its own miss. When its plan still misses a
band, or it stopped at its node limit, a second solve asks only for the least bytes within the
bands widened for every broker (directory) alike to that plan's furthest misses (replicas; a
share of the byte target; points of capacity; a directory's threshold to its usage), started
from it: as balanced as the report measures it (the furthest broker or directory) and as
bench_optimum compares plans that miss a band. Its plan may leave a broker further from its band
than the first did, never further than the furthest; the first solve's priced objective leaves
little of the node limit to the bytes, which the second solve has alone.

A solve of bytes alone (the second one, or the only one where the heuristic's plan meets every
band) that stops at its node limit with a plan more than PROVEN_WITHIN above the solver's bound
(so possibly further from the least bytes than the planner's worst-case target) is solved again
from that plan with DEEP_NODES nodes.

The solver's plan is taken when it is strictly closer to the planner's bands than the
heuristic's (its furthest misses, at any bytes: `improved` "balance"), or as close with strictly
fewer bytes (`improved` "bytes"), and passes the checks of `_violations` (the hard rules and the
bands it was solved for, recomputed from the replicas' final brokers and directories,
independently of the model); how far each plan is from the bands is recomputed from the
replicas too (`_Bands.miss`). Otherwise the heuristic's plan stays. Replicas that stay keep their list
position; arriving replicas take leaving replicas' positions.

Determinism: one thread, HiGHS's random seed from --seed, and node limits (MAX_NODES,
DEEP_NODES), which do not depend on the clock (per solve); a wall-clock cap (TIME_CAP_SECONDS,
for all solves) is a safety net on top. A solve stopped by the cap may give a different plan on
a more loaded machine: the report says so.

Size: the whole cluster is refined only when the model has at most MAX_BINARIES binaries (a few
seconds at most on a 2-core machine); above it, refinement is skipped and the report says so.

The solver's dual bound is a lower bound on the bytes any plan within the same bands moves: the
report's lowerBoundBytes takes it (in report.report, the larger of it and report.lower_bound)
when the bands are the planner's own (no band widened), no partition was held at the
heuristic's choice and no --max-moves or --max-bytes applies. With widened bands the solver's
objective prices band misses too: its bound is not one on bytes, and solverBoundBytes is null.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from kjbod.planner.core import BYTE_TOLERANCE, Plan, directory_band, rack_limit
from kjbod.planner.request import Goal, Refine
from kjbod.planner.tables import NO_RACK, ClusterTables

# The most binaries (partition x candidate directory) refined as one model. On the project's
# 2-core machine (shared) bench_optimum's models (up to about 6,000) take 8 s at the median and
# up to about 26 s to solve or stop at their node limits.
MAX_BINARIES = 12_000
# Branch-and-bound nodes HiGHS may explore: the limit that stops a hard case, the same on every
# machine (a clock would not be).
MAX_NODES = 200
# A solve of bytes alone (no band miss priced) that stops at MAX_NODES with a plan not proven
# within PROVEN_WITHIN of the least bytes (its objective over the solver's bound) is solved again
# from that plan with DEEP_NODES: PROVEN_WITHIN is the planner's worst-case target over the
# optimum (bench_optimum). Of bench_optimum's 50 cases one solve is that far at 200 nodes (case
# 9, 1,696 binaries, 26% above its bound); from its 1,985 GiB the deeper solve finds 1,701 GiB
# (HiGHS's sub-MIP, past node 1,500), in about 15 s more. The others stop at 200 nodes as before.
DEEP_NODES = 2_000
PROVEN_WITHIN = 1.10
# A safety net only, more than twice the longest refinement seen on bench_optimum's cases: a
# solve this long is stopped whatever its node count (and the report says its plan may differ
# run to run).
TIME_CAP_SECONDS = 60.0
# The relative gap at which the solver calls its plan optimal.
GAP = 1e-3
# HiGHS's other settings.
SOLVER_OPTIONS: dict[str, Any] = {"mip_allow_restart": False}  # restarts cost seconds on these models for little
# Partitions x directories above which the model is not even built (a cheap test first).
_CELLS_BEFORE_BUILDING = 4_000_000


@dataclass(frozen=True)
class Refinement:
    """What the exact refinement did, for the report."""

    status: str  # off, not-applicable (another goal), skipped, optimal, limit, not-better, rejected
    message: str  # one line for the report
    binaries: int = 0
    seconds: float = 0.0
    heuristic_bytes: int | None = None  # bytes the heuristic's plan moves
    refined_bytes: int | None = None  # bytes the solver's best plan moves
    solver_bound_bytes: int | None = None  # the solver's proven lower bound on bytes for its bands (none where misses are priced)
    own_bands: bool = False  # the bands were the planner's own: the bound is the planner's lower bound
    applied: bool = False  # the plan is the solver's
    stopped_by_clock: bool = False
    improved: str | None = None  # where applied: "balance" (closer to the bands, at any bytes) or "bytes" (as balanced, fewer bytes)
    # How far each plan is outside the planner's own bands in bytes (_Bands.miss: its furthest
    # count, byte and directory misses, and bytes over capacity thresholds) and how many bands
    # (brokers' and directories') it misses.
    heuristic_miss: float | None = None
    refined_miss: float | None = None
    heuristic_missed: int | None = None
    refined_missed: int | None = None

    @property
    def lower_bound(self) -> int | None:
        """A lower bound on the bytes any plan meeting the planner's bands moves, if the solver proved one."""
        return self.solver_bound_bytes if self.own_bands else None

    def to_json(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "message": self.message,
            "binaries": self.binaries,
            "seconds": round(self.seconds, 3),
            "heuristicBytesMoved": self.heuristic_bytes,
            "refinedBytesMoved": self.refined_bytes,
            "solverBoundBytes": self.solver_bound_bytes,
            "ownBands": self.own_bands,
            "applied": self.applied,
            "stoppedByClock": self.stopped_by_clock,
            "improved": self.improved,
            "heuristicBandMissBytes": None if self.heuristic_miss is None else int(self.heuristic_miss),
            "refinedBandMissBytes": None if self.refined_miss is None else int(self.refined_miss),
            "heuristicBandsMissed": self.heuristic_missed,
            "refinedBandsMissed": self.refined_missed,
        }


def applies(plan: Plan) -> bool:
    """Refinement may run for this plan: asked for, a goal the model covers, and a cluster small
    enough that the model may be under the cap (a cheap test: `refine` tells the exact size)."""
    t = plan.tables
    small = len(t.part_id) * len(t.dir_ids) <= _CELLS_BEFORE_BUILDING
    return plan.request.refine is Refine.AUTO and plan.request.goal is Goal.BALANCE and small


@dataclass
class _Model:
    """The partitions refined and their candidate directories, with the heuristic's placement."""

    free: np.ndarray  # partition indexes
    var_f: np.ndarray  # per variable: row in `free`
    var_d: np.ndarray  # per variable: directory
    start: np.ndarray  # per variable: the heuristic's value
    current: np.ndarray  # per variable: a directory the partition is in now
    held_by_heuristic: int  # partitions kept at the heuristic's placement though the rules would let them move


def refine(plan: Plan, progress: Any = None) -> Refinement:
    """Refine `plan` in place (its new_broker and new_dir) where the solver finds a better one."""
    t = plan.tables
    request = plan.request
    if request.refine is Refine.OFF:
        return Refinement("off", "off (--refine off)")
    if request.goal is not Goal.BALANCE:
        return Refinement("not-applicable", f"skipped: the exact model covers --goal balance, not {request.goal.value}")
    if (plan.new_dir[plan.inter_moved] < 0).any():
        return Refinement("skipped", "skipped: the heuristic left some replicas' directory to the broker")
    started = time.perf_counter()
    free, rule_fixed = _free_partitions(plan)
    if free.size == 0:
        return Refinement("skipped", "skipped: no partition the plan may move")
    cells = int(free.size) * len(t.dir_ids)
    if cells > _CELLS_BEFORE_BUILDING:
        return Refinement("skipped", f"skipped: model of about {cells:,} binaries > cap {MAX_BINARIES:,}", binaries=cells)
    held = int(np.count_nonzero(~_free_mask(plan, free) & ~rule_fixed))
    model = _candidates(plan, free, held)
    n = len(model.var_f)
    if n > MAX_BINARIES:
        return Refinement("skipped", f"skipped: model of {n:,} binaries > cap {MAX_BINARIES:,}", binaries=n)
    if progress is not None:
        progress(f"Refining the plan with an exact solver: {n:,} binaries")
    heuristic_bytes = int(t.rep_size[plan.inter_moved | plan.intra_moved].sum())
    bands = _Bands.of(plan)
    solved, kept = _solve(plan, model, bands)
    seconds = time.perf_counter() - started
    common = {"binaries": n, "seconds": seconds, "heuristic_bytes": heuristic_bytes, "stopped_by_clock": solved.by_clock}
    holds_no_load = ~plan.holders[t.rep_broker] & _free_mask(plan, free)[t.rep_part]
    # The bound is the planner's lower bound only for its own bands and rules: nothing widened,
    # nothing held where the heuristic put it, and no budget (--max-moves or --max-bytes are not
    # bands: a bound under them may exceed the least any plan within the bands moves).
    budget = request.max_moves is not None or request.max_bytes is not None
    own = not bands.widened and model.held_by_heuristic == 0 and not holds_no_load.any() and not budget
    # Down, and a hair below: the dual bound holds up to the solver's tolerances.
    bound = int(np.floor(solved.bound * (1 - 1e-7))) if solved.bound is not None and not solved.priced_misses else None
    common.update(solver_bound_bytes=bound, own_bands=own and bound is not None)
    if solved.placement is None:
        return Refinement("skipped", f"no plan found by the solver ({solved.status}); the heuristic's plan stays", **common)
    new_broker, new_dir = _replicas_of(plan, model, solved.placement)
    stays = new_broker == t.rep_broker
    refined_moves = ~stays | (stays & (t.rep_dir >= 0) & (new_dir >= 0) & (new_dir != t.rep_dir))  # as Plan.inter_moved | intra_moved
    refined_bytes = int(t.rep_size[refined_moves].sum())
    common["refined_bytes"] = refined_bytes
    reach = _reach(solved, bands)
    # Taken when strictly more balanced (less outside the planner's bands, at any bytes), or as
    # balanced with fewer bytes. The misses are recomputed from the replicas, not the model.
    heuristic_miss, heuristic_missed = bands.miss(plan, plan.new_broker, plan.new_dir)
    refined_miss, refined_missed = bands.miss(plan, new_broker, new_dir)
    common.update(heuristic_miss=heuristic_miss, refined_miss=refined_miss, heuristic_missed=heuristic_missed, refined_missed=refined_missed)
    tolerance = 1e-6 * heuristic_miss + (1 << 20)
    more_balanced = refined_miss < heuristic_miss - tolerance
    as_balanced = not more_balanced and refined_miss <= heuristic_miss + tolerance
    if not more_balanced and not (as_balanced and refined_bytes < heuristic_bytes):
        return Refinement("not-better", f"not better than the heuristic ({reach})", **common)
    problems = _violations(plan, kept, new_broker, new_dir, _free_mask(plan, model.free))
    if problems:
        return Refinement("rejected", f"the solver's plan failed a check ({problems[0]}); the heuristic's plan stays", **common)
    plan.new_broker, plan.new_dir = new_broker, new_dir
    plan.refined = _free_mask(plan, model.free)
    status = "optimal" if solved.status == "optimal" else "limit"
    if more_balanced:
        change = refined_bytes - heuristic_bytes
        cost = f"{_gib(change)} more" if change > 0 else f"{_gib(-change)} less"
        gain = (
            f"closer to the bands than the heuristic's plan (furthest misses worth {_gib(refined_miss)}, {refined_missed} band(s) missed; "
            f"not {_gib(heuristic_miss)}, {heuristic_missed}), moving {cost}"
        )
        return Refinement(status, f"{reach}; {gain}", applied=True, improved="balance", **common)
    return Refinement(status, f"{reach}; {_gib(heuristic_bytes - refined_bytes)} less than the heuristic's plan", applied=True, improved="bytes", **common)


def _free_mask(plan: Plan, free: np.ndarray) -> np.ndarray:
    mask = np.zeros(len(plan.tables.part_id), dtype=bool)
    mask[free] = True
    return mask


def _free_partitions(plan: Plan) -> tuple[np.ndarray, np.ndarray]:
    """The partitions the model decides, and (per partition) those no plan may change."""
    t = plan.tables
    assert plan.movable is not None and plan.forced is not None and plan.excluded is not None and plan.offline is not None
    rule_fixed = t.partitions_with(plan.excluded | (plan.offline & ~plan.forced))
    blocked = (
        ~plan.movable | plan.forced | plan.offline | (t.rep_dir < 0) | ~t.broker_active[t.rep_broker]
        | (plan.new_dir < 0) | ~t.broker_active[plan.new_broker]
    )
    return np.flatnonzero(~t.partitions_with(blocked)), rule_fixed


def _candidates(plan: Plan, free: np.ndarray, held: int) -> _Model:
    t = plan.tables
    assert plan.open_dirs is not None and plan.receivable is not None and plan.broker_has_offline_dir is not None
    D, B = len(t.dir_ids), t.broker_count
    rows = _rows_of(t, free)
    local = np.repeat(np.arange(free.size), np.diff(t.part_offsets)[free])
    arrive = plan.open_dirs & plan.receivable[t.dir_broker]
    holds = np.zeros((free.size, B), dtype=bool)
    holds[local, t.rep_broker[rows]] = True
    intra_ok = t.broker_active & ~plan.broker_has_offline_dir
    candidate = np.where(holds[:, t.dir_broker], (plan.open_dirs & intra_ok[t.dir_broker])[None, :], arrive[None, :])
    candidate[local, t.rep_dir[rows]] = True
    heuristic = np.zeros((free.size, D), dtype=bool)
    heuristic[local, plan.new_dir[rows]] = True
    current = np.zeros((free.size, D), dtype=bool)
    current[local, t.rep_dir[rows]] = True
    candidate |= heuristic  # the heuristic's plan is always one the model can express
    var_f, var_d = np.nonzero(candidate)
    return _Model(free, var_f, var_d, heuristic[var_f, var_d].astype(np.float64), current[var_f, var_d], held)


def _rows_of(t: ClusterTables, partitions: np.ndarray) -> np.ndarray:
    rf = np.diff(t.part_offsets)[partitions]
    starts = np.repeat(t.part_offsets[partitions], rf)
    return starts + (np.arange(int(rf.sum())) - np.repeat(np.cumsum(rf) - rf, rf))


@dataclass
class _Bands:
    """The bands the refined plan must meet: the planner's, each widened to the heuristic's plan
    where that plan misses it (`widened` says whether any was)."""

    count_low: np.ndarray
    count_high: np.ndarray
    bytes_low: np.ndarray
    bytes_high: np.ndarray
    dir_limit: np.ndarray  # bytes (inf where capacity is unknown)
    dir_reach: np.ndarray  # bytes a directory may be from its share of its broker's bytes (nan: no band)
    counted: np.ndarray  # directories the band counts
    band_brokers: np.ndarray  # brokers with a directory band
    rack_limit: np.ndarray  # per partition
    rack_extra: dict[tuple[int, int], int]  # (partition, rack) -> the heuristic's count where above the limit
    isr_need: np.ndarray  # per partition: in-sync replicas that must stay on their broker
    max_moves: float
    max_bytes: float
    widened: bool
    # The planner's own bands (where a band above is widened, the solver pays for each byte or
    # replica outside these: see `_solve`), and what a replica outside a count band weighs.
    own_count_low: np.ndarray
    own_count_high: np.ndarray
    own_bytes_low: np.ndarray
    own_bytes_high: np.ndarray
    own_dir_limit: np.ndarray
    own_dir_reach: np.ndarray
    byte_target: np.ndarray
    capacity: np.ndarray
    # What one unit of each furthest miss weighs in bytes (`miss`): the mean replica, the mean
    # broker's byte target (per share), the mean banded directory's capacity (per point).
    replica_bytes: float
    target_bytes: float
    capacity_bytes: float

    @staticmethod
    def of(plan: Plan) -> _Bands:
        t = plan.tables
        request = plan.request
        assert plan.holders is not None and plan.count_low is not None and plan.count_high is not None and plan.byte_target is not None
        assert plan.draining_dirs is not None and plan.excluded is not None
        size = t.rep_size
        count = np.bincount(plan.new_broker, minlength=t.broker_count)
        load = np.bincount(plan.new_broker, weights=size, minlength=t.broker_count)
        widened = False
        holders = plan.holders
        target = plan.count_target.astype(np.float64) if plan.count_target is not None else count.astype(np.float64)
        slack = np.where(holders, plan.count_high - target, 0)
        reach = np.maximum(slack, np.abs(count - target))
        widened |= bool((holders & (reach > slack)).any())
        # A broker that holds no load keeps what it has (core._targets): its count stays the
        # heuristic's. That is tighter than the planner's band (at most what it has): where such a
        # broker holds a replica, the solver's bound is not the planner's (see `own_bands`).
        count_low = np.where(holders, np.ceil(target - reach), count)
        count_high = np.where(holders, np.floor(target + reach), count)
        own_count_low = np.where(holders, np.ceil(target - slack), count)
        own_count_high = np.where(holders, np.floor(target + slack), count)
        byte_target = plan.byte_target.astype(np.float64)
        byte_slack = byte_target * BYTE_TOLERANCE
        off = np.abs(load - byte_target)
        widened |= bool((holders & (off > byte_slack * (1 + 1e-12))).any())
        byte_reach = np.maximum(byte_slack, off)
        bytes_low = np.where(holders, byte_target - byte_reach, -np.inf)
        bytes_high = np.where(holders, byte_target + byte_reach, np.inf)
        own_bytes_low = np.where(holders, byte_target - byte_slack, -np.inf)
        own_bytes_high = np.where(holders, byte_target + byte_slack, np.inf)
        # Directories.
        capacity = t.dir_capacity.astype(np.float64)
        usage = _Bands._usage(plan, plan.new_dir)
        limit = np.where(capacity > 0, np.floor(capacity * request.capacity_threshold), np.inf)
        widened |= bool((usage > limit).any())
        dir_limit = np.maximum(limit, usage)
        counted = t.dir_online & ~plan.draining_dirs
        band = directory_band(t.dir_broker, t.dir_capacity, counted, usage, request.disk_band, request.capacity_threshold, t.broker_count)
        excluded_broker = np.isin(t.broker_ids, np.array(request.exclude_brokers, dtype=np.int64))
        many = np.bincount(t.dir_broker[counted], minlength=t.broker_count) >= 2
        band_brokers = t.broker_active & ~excluded_broker & many
        has_band = ~np.isnan(band.mean) & counted & band_brokers[t.dir_broker]
        own_reach = request.disk_band * capacity
        heuristic_off = np.abs(usage - np.nan_to_num(band.mean) * capacity)
        widened |= bool((has_band & (heuristic_off > own_reach * (1 + 1e-12))).any())
        dir_reach = np.where(has_band, np.maximum(own_reach, heuristic_off), np.nan)
        band_brokers = band_brokers & (np.bincount(t.dir_broker[has_band], minlength=t.broker_count) > 0)
        # Racks, per partition.
        rf = np.diff(t.part_offsets)
        limits = np.array([rack_limit(int(r), request.rack_mode, plan.racks_available) for r in range(int(rf.max(initial=0)) + 1)])
        part_limit = limits[rf] if len(rf) else np.zeros(0, dtype=np.int64)
        rack = t.broker_rack[plan.new_broker]
        extra: dict[tuple[int, int], int] = {}
        if plan.racks_available and len(t.racks):
            keyed = t.rep_part.astype(np.int64) * (len(t.racks) + 1) + (rack + 1)
            keys, counts = np.unique(keyed[rack != NO_RACK], return_counts=True)
            part = keys // (len(t.racks) + 1)
            over = counts > part_limit[part]
            for key, c in zip(keys[over].tolist(), counts[over].tolist()):
                extra[(key // (len(t.racks) + 1), key % (len(t.racks) + 1) - 1)] = c
        widened |= bool(extra)
        # min.insync.replicas: in-sync replicas staying on their broker.
        in_sync = np.bincount(t.rep_part[t.rep_in_sync], minlength=len(t.part_id))
        need = np.minimum(in_sync, t.part_min_isr.astype(np.int64))
        kept = np.bincount(t.rep_part[t.rep_in_sync & (plan.new_broker == t.rep_broker)], minlength=len(t.part_id))
        widened |= bool((kept < need).any())
        max_moves = float(request.max_moves) if request.max_moves is not None else np.inf
        max_bytes = float(request.max_bytes) if request.max_bytes is not None else np.inf
        return _Bands(
            count_low, count_high, bytes_low, bytes_high, dir_limit, dir_reach, counted & has_band, band_brokers, part_limit, extra,
            np.minimum(need, kept), max_moves, max_bytes, widened,
            own_count_low, own_count_high, own_bytes_low, own_bytes_high, limit, np.where(has_band, own_reach, np.nan), byte_target, capacity,
            _mean_or_one(size), _mean_or_one(byte_target[holders & (byte_target > 0)]), _mean_or_one(capacity[has_band]),
        )

    def miss(self, plan: Plan, new_broker: np.ndarray, new_dir: np.ndarray) -> tuple[float, int]:
        """How far a plan (its replicas' brokers and directories) is outside the planner's own
        bands, as the report measures balance (the furthest broker or directory): (bytes: the
        furthest count miss in mean replicas, the furthest byte miss as a share of the mean
        broker's target, the furthest directory-band miss in points of the mean directory's
        capacity, and each directory's bytes over its capacity threshold; the bands missed).
        A byte or directory miss within rounding (a byte, or a billionth) is none."""
        off = self._off(plan, new_broker, new_dir)
        byte_off = np.where(off.byte_off > 1e-9 * np.maximum(off.load, 1) + 1, off.byte_off, 0)
        over = np.where(off.over > 1e-9 * off.usage + 1, off.over, 0)
        band_off = np.where(off.band_off > 1e-9 * self.capacity + 1, off.band_off, 0)
        share_off, points_off = self._relative(byte_off, band_off)
        bytes_off = float(
            off.count_off.max(initial=0) * self.replica_bytes + share_off.max(initial=0) * self.target_bytes
            + points_off.max(initial=0) * self.capacity_bytes + over.sum()
        )
        missed = int(np.count_nonzero(off.count_off) + np.count_nonzero(byte_off) + np.count_nonzero(over) + np.count_nonzero(band_off))
        return bytes_off, missed

    def furthest(self, plan: Plan, new_broker: np.ndarray, new_dir: np.ndarray) -> tuple[float, float, float]:
        """How far a plan's furthest broker (directory) is outside the planner's own count, byte
        and directory bands, exactly: replicas, a share of the byte target, points of capacity."""
        off = self._off(plan, new_broker, new_dir)
        share_off, points_off = self._relative(off.byte_off, off.band_off)
        return float(off.count_off.max(initial=0)), float(share_off.max(initial=0)), float(points_off.max(initial=0))

    def _relative(self, byte_off: np.ndarray, band_off: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Byte misses as a share of each broker's byte target, directory-band misses in points
        (shares) of each directory's capacity (0 where there is no target or capacity)."""
        share_off = np.divide(byte_off, self.byte_target, out=np.zeros(len(byte_off)), where=self.byte_target > 0)
        points_off = np.divide(band_off, self.capacity, out=np.zeros(len(band_off)), where=self.capacity > 0)
        return share_off, points_off

    def _off(self, plan: Plan, new_broker: np.ndarray, new_dir: np.ndarray) -> _Off:
        t = plan.tables
        assert plan.holders is not None
        holders = plan.holders
        count = np.bincount(new_broker, minlength=t.broker_count).astype(np.float64)
        load = np.bincount(new_broker, weights=t.rep_size, minlength=t.broker_count)
        count_off = np.where(holders, np.maximum(np.maximum(self.own_count_low - count, count - self.own_count_high), 0), 0)
        byte_off = np.where(holders, np.maximum(np.maximum(self.own_bytes_low - load, load - self.own_bytes_high), 0), 0)
        usage = self._usage(plan, new_dir)
        over = np.where(np.isfinite(self.own_dir_limit), np.maximum(usage - self.own_dir_limit, 0), 0)
        band_off = np.where(self.counted, np.maximum(np.abs(usage - self.mean_usage(t, usage) * self.capacity) - np.nan_to_num(self.own_dir_reach), 0), 0)
        return _Off(count_off, byte_off, load, over, usage, band_off)

    def mean_usage(self, t: ClusterTables, usage: np.ndarray) -> np.ndarray:
        """Per directory, its broker's mean usage (a share of capacity) over the directories the
        band counts, as core.directory_band has it (0 where there is none)."""
        return np.nan_to_num(directory_band(t.dir_broker, t.dir_capacity, self.counted, usage, 0.0, 1.0, t.broker_count).mean)

    def uniform(self, plan: Plan, new_broker: np.ndarray, new_dir: np.ndarray) -> _Bands:
        """These bands widened for every broker (directory) alike to where a plan's furthest
        misses are (`furthest`), each directory's capacity threshold to its usage where the plan
        puts more in it, as bench_optimum compares plans; with no slack left to price."""
        assert plan.holders is not None
        count_reach, byte_reach, points_reach = self.furthest(plan, new_broker, new_dir)
        holders = plan.holders
        count_low = np.where(holders, self.own_count_low - count_reach, self.own_count_low)
        count_high = np.where(holders, self.own_count_high + count_reach, self.own_count_high)
        target = self.byte_target
        bytes_low = np.where(holders, target * (1 - BYTE_TOLERANCE - byte_reach), -np.inf)
        bytes_high = np.where(holders, target * (1 + BYTE_TOLERANCE + byte_reach), np.inf)
        dir_reach = self.own_dir_reach + points_reach * self.capacity
        dir_limit = np.maximum(self.own_dir_limit, self._usage(plan, new_dir))
        return dataclasses.replace(
            self, count_low=count_low, count_high=count_high, bytes_low=bytes_low, bytes_high=bytes_high, dir_limit=dir_limit, dir_reach=dir_reach,
            own_count_low=count_low, own_count_high=count_high, own_bytes_low=bytes_low, own_bytes_high=bytes_high, own_dir_limit=dir_limit,
            own_dir_reach=dir_reach,
        )

    @staticmethod
    def _usage(plan: Plan, new_dir: np.ndarray) -> np.ndarray:
        placed = new_dir >= 0
        return np.bincount(new_dir[placed], weights=plan.tables.rep_size[placed], minlength=len(plan.tables.dir_ids))


@dataclass
class _Off:
    """How far a plan is outside the planner's own bands, per broker (replicas, bytes) and per
    directory (bytes over its threshold, bytes outside its band), with its loads and usages."""

    count_off: np.ndarray
    byte_off: np.ndarray
    load: np.ndarray
    over: np.ndarray
    usage: np.ndarray
    band_off: np.ndarray


def _mean_or_one(values: np.ndarray) -> float:
    return max(float(values.mean()) if values.size else 1.0, 1.0)


class ConstraintRows:
    """A MILP's constraints, added in blocks (each a set of rows with sparse coefficients and
    their bounds), then as the column-wise matrix HiGHS takes (bench_optimum builds its model
    with it too)."""

    def __init__(self, columns: int) -> None:
        self.columns = columns
        self.count = 0
        self._rows: list[np.ndarray] = []
        self._cols: list[np.ndarray] = []
        self._vals: list[np.ndarray] = []
        self._lower: list[np.ndarray] = []
        self._upper: list[np.ndarray] = []

    def new_columns(self, number: int) -> np.ndarray:
        """`number` more columns (after those given so far): their indexes."""
        self.columns += number
        return np.arange(self.columns - number, self.columns)

    def add(self, row: np.ndarray, col: np.ndarray, val: np.ndarray, number: int, lo: Any, hi: Any) -> None:
        """`number` rows: coefficient val[i] of column col[i] in row row[i] (0 to number - 1), each
        row between lo and hi (scalars or one per row)."""
        self._rows.append(row + self.count)
        self._cols.append(col)
        self._vals.append(val)
        self._lower.append(np.broadcast_to(np.asarray(lo, dtype=np.float64), (number,)))
        self._upper.append(np.broadcast_to(np.asarray(hi, dtype=np.float64), (number,)))
        self.count += number

    @property
    def lower(self) -> np.ndarray:
        return np.concatenate(self._lower) if self._lower else np.zeros(0)

    @property
    def upper(self) -> np.ndarray:
        return np.concatenate(self._upper) if self._upper else np.zeros(0)

    def column_wise(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(column starts, row indexes, values): the matrix in CSC form."""
        row_index, col_index, value = np.concatenate(self._rows), np.concatenate(self._cols), np.concatenate(self._vals)
        order = np.lexsort((row_index, col_index))
        starts = np.zeros(self.columns + 1, dtype=np.int64)
        np.cumsum(np.bincount(col_index, minlength=self.columns), out=starts[1:])
        return starts, row_index[order], value[order]


@dataclass
class _Solved:
    status: str  # optimal, limit, infeasible, none
    placement: np.ndarray | None  # per variable, 0 or 1
    moved: float | None  # bytes (the solver's objective; with `priced_misses`, bytes + the misses' price)
    bound: float | None  # bytes (the same objective's bound)
    by_clock: bool = False
    node_limit: int = MAX_NODES  # DEEP_NODES: a solve of bytes alone not proven within PROVEN_WITHIN at MAX_NODES went on
    priced_misses: bool = False  # the bound is not one on bytes within the planner's bands (misses priced, or bands widened)
    widened_alike: bool = False  # the plan is the second solve's (bands widened alike to the first's furthest misses)


def _solve(plan: Plan, model: _Model, bands: _Bands) -> tuple[_Solved, _Bands]:
    """The MILP of the module's docstring, solved with HiGHS; then, where the heuristic's plan
    missed a band and the first solve's plan is not proven the best or still misses one, the
    least bytes within the bands widened alike to that plan's furthest misses, started from it;
    a solve of bytes alone goes deeper where its plan is not proven close enough (`_deeper`).
    The solve whose plan is taken, and the bands that plan keeps."""
    started = time.perf_counter()

    def left() -> float:
        return TIME_CAP_SECONDS - (time.perf_counter() - started)

    first = _solve_model(plan, model, bands, None, TIME_CAP_SECONDS, MAX_NODES)
    if not bands.widened:  # bytes alone
        return _deeper(plan, model, bands, first, left), bands
    if first.placement is None:
        return first, bands
    new_broker, new_dir = _replicas_of(plan, model, first.placement)
    if first.status == "optimal" and bands.miss(plan, new_broker, new_dir)[1] == 0:
        return first, bands
    if left() <= 0:  # the cap, not the node limit, decided that the second solve does not run
        return dataclasses.replace(first, by_clock=True), bands
    within = bands.uniform(plan, new_broker, new_dir)
    second = _deeper(plan, model, within, _solve_model(plan, model, within, first.placement, left(), MAX_NODES), left)
    if second.placement is None:
        return first, bands
    return dataclasses.replace(second, by_clock=first.by_clock or second.by_clock, priced_misses=True, widened_alike=True), within


def _deeper(plan: Plan, model: _Model, bands: _Bands, solved: _Solved, left: Callable[[], float]) -> _Solved:
    """`solved` (a solve of bytes alone), or where it stopped at MAX_NODES with a plan not proven
    within PROVEN_WITHIN of the least bytes (its objective over the solver's bound), a solve up
    to DEEP_NODES started from its plan (HiGHS cannot resume a search: its root is solved again)."""
    if solved.status != "limit" or solved.by_clock or solved.priced_misses or solved.moved is None or solved.bound is None:
        return solved
    if solved.moved <= PROVEN_WITHIN * solved.bound:
        return solved
    if left() <= 0:  # the cap, not the node limit, decided that it does not go on
        return dataclasses.replace(solved, by_clock=True)
    deeper = _solve_model(plan, model, bands, solved.placement, left(), DEEP_NODES)
    if deeper.placement is None:
        return dataclasses.replace(solved, by_clock=deeper.by_clock)
    # Both bounds hold for the same model; the deeper solve starts from `solved`'s plan.
    bound = max(solved.bound, deeper.bound or 0.0)
    return dataclasses.replace(deeper, bound=min(bound, deeper.moved or bound))


def _solve_model(plan: Plan, model: _Model, bands: _Bands, start_from: np.ndarray | None, time_limit: float, max_nodes: int) -> _Solved:
    """Build the MILP of the module's docstring for these bands and solve it with HiGHS, started
    from `start_from` (a placement per variable) or the heuristic's plan."""
    return _run_highs(plan, _Milp(plan, model, bands), start_from, time_limit, max_nodes)


class _Milp:
    """The MILP of the module's docstring for one set of bands: its rows (in blocks, one method
    each, in a fixed order: HiGHS's search depends on it), the slack columns of widened bands, and
    the objective, in units of the free partitions' mean size (well-scaled coefficients)."""

    def __init__(self, plan: Plan, model: _Model, bands: _Bands) -> None:
        t = plan.tables
        self.plan, self.model, self.bands, self.t = plan, model, bands, t
        free, var_f, var_d = model.free, model.var_f, model.var_d
        self.n = n = len(var_f)
        self.B, self.D = t.broker_count, len(t.dir_ids)
        self.size_f = size_f = t.part_size.astype(np.float64)[free]
        self.unit = unit = _mean_or_one(size_f)
        self.size_v = size_f[var_f] / unit
        self.var_b = t.dir_broker[var_d]
        self.rf_f = np.diff(t.part_offsets)[free]
        self.every = np.arange(n)
        self.ones = np.ones(n)
        # What the partitions the model does not decide leave on each broker and directory.
        fixed_rows = ~_free_mask(plan, free)[t.rep_part]
        self.fixed_count = np.bincount(plan.new_broker[fixed_rows], minlength=self.B)
        self.fixed_load = np.bincount(plan.new_broker[fixed_rows], weights=t.rep_size[fixed_rows], minlength=self.B) / unit
        placed = fixed_rows & (plan.new_dir >= 0)
        self.fixed_usage = np.bincount(plan.new_dir[placed], weights=t.rep_size[placed], minlength=self.D) / unit
        self.fixed_moved_rows = fixed_rows & (plan.inter_moved | plan.intra_moved)
        self.rows = ConstraintRows(n)
        # Where a band is widened to the heuristic's plan, the row holds the planner's own band
        # with a slack column on each widened side (0 up to the heuristic's own miss: the widened
        # band stays a hard limit and the heuristic's plan stays a start), paid for in the
        # objective far above any bytes moved: the solver first comes as close to the bands as it
        # can, then moves the least bytes (lexicographic: a mean partition's bytes outside a band
        # outweigh every byte the model could move).
        self.offset = float((size_f * self.rf_f).sum()) / unit
        self.miss_price = self.offset + 1.0
        self.slack_cost: list[np.ndarray] = []
        self.slack_upper: list[np.ndarray] = []
        self.slack_start: list[np.ndarray] = []
        self._placement()
        self._rack_rule()
        self._in_sync()
        self._broker_bands()
        self._directory_bands()
        self._budgets()

    @property
    def slacks(self) -> int:
        return self.rows.columns - self.n

    def _band(self, row: np.ndarray, col: np.ndarray, val: np.ndarray, number: int, lo: Any, hi: Any, own_lo: Any, own_hi: Any, weight: float) -> None:
        """Rows within [lo, hi] (the widened band) that pay `weight` per unit outside [own_lo, own_hi]."""
        lo, hi, own_lo, own_hi = (np.broadcast_to(np.asarray(v, dtype=np.float64), (number,)).copy() for v in (lo, hi, own_lo, own_hi))
        at_start = np.bincount(row, weights=val * self.model.start[col], minlength=number)
        rows, cols, vals = [row], [col], [val]
        with np.errstate(invalid="ignore"):  # inf - inf where a side has no band: not widened
            below = np.flatnonzero(np.isfinite(lo) & (own_lo - lo > 1e-9 * np.maximum(np.abs(own_lo), 1)))
            above = np.flatnonzero(np.isfinite(hi) & (hi - own_hi > 1e-9 * np.maximum(np.abs(own_hi), 1)))
        for side, sign in ((below, 1.0), (above, -1.0)):
            if not side.size:
                continue
            columns = self.rows.new_columns(side.size)
            rows.append(side)
            cols.append(columns)
            vals.append(np.full(side.size, sign))
            room = own_lo[side] - lo[side] if sign > 0 else hi[side] - own_hi[side]
            used = own_lo[side] - at_start[side] if sign > 0 else at_start[side] - own_hi[side]
            self.slack_cost.append(np.full(side.size, self.miss_price * weight))
            self.slack_upper.append(room)
            self.slack_start.append(np.clip(used, 0, room))
            if sign > 0:
                lo[side] = own_lo[side]
            else:
                hi[side] = own_hi[side]
        self.rows.add(np.concatenate(rows), np.concatenate(cols), np.concatenate(vals), number, lo, hi)

    def _placement(self) -> None:
        """The replication factor; one replica per broker."""
        var_f, ones = self.model.var_f, self.ones
        self.rows.add(var_f, self.every, ones, self.model.free.size, self.rf_f, self.rf_f)
        row, col, _ = _grouped(var_f.astype(np.int64) * self.B + self.var_b, lambda keys, sizes: sizes > 1)
        self.rows.add(row, col, ones[col], int(row.max(initial=-1)) + 1, -np.inf, 1.0)

    def _rack_rule(self) -> None:
        """The rack rule, only where the candidates could break it."""
        t, bands, free, var_f = self.t, self.bands, self.model.free, self.model.var_f
        if not (self.plan.racks_available and len(t.racks)):
            return
        K = len(t.racks) + 1
        key = var_f.astype(np.int64) * K + (t.broker_rack[self.var_b] + 1)

        def limit_of(keys: np.ndarray) -> np.ndarray:
            return np.array(
                [bands.rack_extra.get((int(free[k // K]), int(k % K) - 1), int(bands.rack_limit[free[k // K]])) for k in keys.tolist()], dtype=np.int64
            )

        row, col, keys = _grouped(key, lambda keys, sizes: (keys % K != 0) & (sizes > limit_of(keys)))
        if keys.size:
            self.rows.add(row, col, self.ones[col], keys.size, -np.inf, limit_of(keys))

    def _in_sync(self) -> None:
        """min.insync.replicas while moving: enough in-sync replicas stay on their broker."""
        t, free, var_f = self.t, self.model.free, self.model.var_f
        in_sync_broker = np.zeros((free.size, self.B), dtype=bool)
        in_sync_rows = _rows_of(t, free)
        in_sync_rows = in_sync_rows[t.rep_in_sync[in_sync_rows]]
        local = np.searchsorted(free, t.rep_part[in_sync_rows])
        in_sync_broker[local, t.rep_broker[in_sync_rows]] = True
        need = self.bands.isr_need[free]
        keep = in_sync_broker[var_f, self.var_b] & (need[var_f] > 0)
        row, col, keys = _grouped(var_f[keep].astype(np.int64), lambda keys, sizes: np.ones(len(keys), dtype=bool))
        if keys.size:
            self.rows.add(row, self.every[keep][col], self.ones[keep][col], keys.size, need[keys], np.inf)

    def _broker_bands(self) -> None:
        """Replica counts and bytes per broker."""
        bands, unit, fixed_count, fixed_load = self.bands, self.unit, self.fixed_count, self.fixed_load
        self._band(
            self.var_b, self.every, self.ones, self.B, bands.count_low - fixed_count, bands.count_high - fixed_count,
            bands.own_count_low - fixed_count, bands.own_count_high - fixed_count, bands.replica_bytes / unit,
        )
        self._band(
            self.var_b, self.every, self.size_v, self.B, bands.bytes_low / unit - fixed_load, bands.bytes_high / unit - fixed_load,
            bands.own_bytes_low / unit - fixed_load, bands.own_bytes_high / unit - fixed_load, 1.0,
        )

    def _directory_bands(self) -> None:
        """Directories under their limit, and within the band: usage_d - cap_d / C_b * U_b within
        +-reach_d (U_b over the counted directories of b)."""
        t, bands, unit, var_d, var_b, size_v, fixed_usage = self.t, self.bands, self.unit, self.model.var_d, self.var_b, self.size_v, self.fixed_usage
        self._band(var_d, self.every, size_v, self.D, -np.inf, bands.dir_limit / unit - fixed_usage, -np.inf, bands.own_dir_limit / unit - fixed_usage, 1.0)
        capacity = t.dir_capacity.astype(np.float64)
        counted = bands.counted
        broker_cap = np.bincount(t.dir_broker[counted], weights=capacity[counted], minlength=self.B)
        fixed_u = np.bincount(t.dir_broker[counted], weights=fixed_usage[counted], minlength=self.B)
        for d in np.flatnonzero(counted).tolist():
            b = int(t.dir_broker[d])
            on = np.flatnonzero((var_b == b) & counted[var_d])
            share = capacity[d] / broker_cap[b]
            coefficient = size_v[on] * ((var_d[on] == d) - share)
            constant = fixed_usage[d] - share * fixed_u[b]
            reach, own = bands.dir_reach[d] / unit, bands.own_dir_reach[d] / unit
            self._band(np.zeros(len(on), dtype=np.int64), on, coefficient, 1, -reach - constant, reach - constant, -own - constant, own - constant, 1.0)

    def _budgets(self) -> None:
        """--max-moves and --max-bytes: replicas (bytes) ending outside their directory."""
        bands, unit = self.bands, self.unit
        stay = np.flatnonzero(self.model.current)
        fixed_moves, fixed_bytes = int(self.fixed_moved_rows.sum()), float(self.t.rep_size[self.fixed_moved_rows].sum()) / unit
        if np.isfinite(bands.max_moves):
            self.rows.add(np.zeros(len(stay), dtype=np.int64), stay, self.ones[stay], 1, float(self.rf_f.sum()) + fixed_moves - bands.max_moves, np.inf)
        if np.isfinite(bands.max_bytes):
            total = float((self.size_f * self.rf_f).sum()) / unit
            self.rows.add(np.zeros(len(stay), dtype=np.int64), stay, self.size_v[stay], 1, total + fixed_bytes - bands.max_bytes / unit, np.inf)

    def cost(self) -> np.ndarray:
        """Bytes moved: every replica's bytes (the offset) less those of each directory a
        partition stays in; then the slack columns' price."""
        return np.concatenate([np.where(self.model.current, -self.size_v, 0.0), *self.slack_cost])

    def start(self, start_from: np.ndarray | None) -> np.ndarray:
        """The solver's start: `start_from` (or the heuristic's placement) and its slacks."""
        return np.concatenate([self.model.start if start_from is None else start_from, *self.slack_start])

    def lp(self) -> Any:
        import highspy

        n, columns = self.n, self.rows.columns
        lp = highspy.HighsLp()
        lp.num_col_, lp.num_row_ = columns, self.rows.count
        lp.offset_ = self.offset
        lp.col_cost_, lp.col_lower_, lp.col_upper_ = self.cost(), np.zeros(columns), np.concatenate([np.ones(n), *self.slack_upper])
        # A hair of room on every row, so that the heuristic's own plan (on a widened band's
        # edge) is never cut off by rounding; `_violations` checks the result exactly.
        lo, hi = self.rows.lower, self.rows.upper
        lp.row_lower_ = np.where(np.isfinite(lo), lo - 1e-9 * np.maximum(np.abs(lo), 1), lo)
        lp.row_upper_ = np.where(np.isfinite(hi), hi + 1e-9 * np.maximum(np.abs(hi), 1), hi)
        lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
        lp.a_matrix_.start_, lp.a_matrix_.index_, lp.a_matrix_.value_ = self.rows.column_wise()
        lp.integrality_ = [highspy.HighsVarType.kInteger] * n + [highspy.HighsVarType.kContinuous] * self.slacks
        return lp


def _grouped(key: np.ndarray, keep: Callable[[np.ndarray, np.ndarray], np.ndarray]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Rows for the groups of `key` that `keep` (of the group keys and sizes) selects: (row per
    variable in them, the variables, the group keys)."""
    keys, inverse = np.unique(key, return_inverse=True)
    chosen = keep(keys, np.bincount(inverse, minlength=len(keys)))
    row_of = np.cumsum(chosen) - 1
    mask = chosen[inverse]
    return row_of[inverse[mask]], np.flatnonzero(mask), keys[chosen]


def _run_highs(plan: Plan, milp: _Milp, start_from: np.ndarray | None, time_limit: float, max_nodes: int) -> _Solved:
    """Solve `milp` with HiGHS from `start_from` (or the heuristic's plan): one thread, the seed
    of --seed, at most `max_nodes` nodes and `time_limit` seconds."""
    import highspy

    n, unit, slacks = milp.n, milp.unit, milp.slacks
    solver = _quiet(highspy.Highs)
    # With band misses in the objective a relative gap would be one of the misses' price, far
    # more than the bytes: the gap is then GAP of the heuristic's bytes, absolute.
    heuristic_moved = float(np.dot(milp.cost()[:n], milp.model.start)) + milp.offset
    gaps = {"mip_rel_gap": 0.0, "mip_abs_gap": GAP * max(heuristic_moved, 1e-6)} if slacks else {"mip_rel_gap": GAP}
    options = {
        "output_flag": False, "threads": 1, "parallel": "off", "random_seed": int(plan.request.seed) % 2_147_483_647,
        "mip_max_nodes": max_nodes, "time_limit": time_limit, **gaps, **SOLVER_OPTIONS,
    }
    for option, value in options.items():
        solver.setOptionValue(option, value)
    solver.passModel(milp.lp())
    start = milp.start(start_from)
    solver.setSolution(len(start), np.arange(len(start), dtype=np.int32), start)
    solver.run()
    status = solver.getModelStatus()
    info = solver.getInfo()
    kinds = highspy.HighsModelStatus
    if status == kinds.kInfeasible:
        return _Solved("infeasible", None, None, None)
    by_clock = status == kinds.kTimeLimit
    bound = max(float(info.mip_dual_bound), 0.0) * unit if np.isfinite(info.mip_dual_bound) else None
    if info.primal_solution_status != 2:  # no feasible solution
        return _Solved("none", None, None, bound, by_clock)
    placement = np.rint(np.array(solver.getSolution().col_value)[:n])
    moved = max(float(info.objective_function_value), 0.0) * unit
    status_name = "optimal" if status == kinds.kOptimal else "limit"
    return _Solved(status_name, placement, moved, None if bound is None else min(bound, moved), by_clock, max_nodes, slacks > 0)


def _quiet(make: Any) -> Any:
    """`make()` with the process's stdout closed: HiGHS's constructor prints its banner there
    before any option can silence it, and stdout carries the command's output (a Kafka tool's
    lines, or JSON)."""
    import ctypes
    import os
    import sys

    sys.stdout.flush()
    libc = ctypes.CDLL(None)
    try:
        saved = os.dup(1)
    except OSError:  # no stdout at all: nothing to keep clean
        return make()
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, 1)
        made = make()
        libc.fflush(None)  # the banner, still in C's buffer, goes to /dev/null too
    finally:
        os.dup2(saved, 1)
        os.close(saved)
        os.close(devnull)
    return made


def _replicas_of(plan: Plan, model: _Model, placement: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The solver's directories per partition as each replica's broker and directory: a replica
    whose broker keeps the partition stays on it (in the chosen directory), and the replicas that
    leave take the new brokers, a replica keeping the heuristic's target broker where it can."""
    t = plan.tables
    new_broker, new_dir = plan.new_broker.copy(), plan.new_dir.copy()
    chosen = placement > 0.5
    order = np.argsort(model.var_f[chosen], kind="stable")
    dirs_f = model.var_d[chosen][order]
    bounds = np.searchsorted(model.var_f[chosen][order], np.arange(len(model.free) + 1))
    for f, p in enumerate(model.free.tolist()):
        dirs = dirs_f[bounds[f] : bounds[f + 1]].tolist()
        by_broker = {int(t.dir_broker[d]): d for d in dirs}
        leaving = []
        for r in range(int(t.part_offsets[p]), int(t.part_offsets[p + 1])):
            b = int(t.rep_broker[r])
            if b in by_broker:
                new_broker[r], new_dir[r] = b, by_broker.pop(b)
            else:
                leaving.append(r)
        for r in list(leaving):
            b = int(plan.new_broker[r])
            if b in by_broker:
                new_broker[r], new_dir[r] = b, by_broker.pop(b)
                leaving.remove(r)
        for r, (b, d) in zip(leaving, sorted(by_broker.items())):
            new_broker[r], new_dir[r] = b, d
    return new_broker, new_dir


def _violations(plan: Plan, bands: _Bands, new_broker: np.ndarray, new_dir: np.ndarray, refined: np.ndarray) -> list[str]:
    """What the refined plan breaks, recomputed from the replicas' brokers and directories alone
    (not from the model): the hard rules, then the bands it was solved for. `refined`: per
    partition, the model placed it."""
    t = plan.tables
    assert plan.open_dirs is not None and plan.receivable is not None and plan.broker_has_offline_dir is not None
    problems: list[str] = []
    size = t.rep_size
    inter = new_broker != t.rep_broker
    placed = new_dir >= 0
    intra = ~inter & placed & (t.rep_dir >= 0) & (new_dir != t.rep_dir)
    if (refined[t.rep_part] & ~placed).any():
        problems.append("a replica has no directory")
    if (placed & (t.dir_broker[np.maximum(new_dir, 0)] != new_broker)).any():
        problems.append("a replica's directory is on another broker")
    if (inter & ~(plan.receivable[new_broker] & plan.open_dirs[np.maximum(new_dir, 0)])).any():
        problems.append("a replica arrives on a broker or directory that may not receive")
    if (intra & ~(plan.open_dirs[np.maximum(new_dir, 0)] & t.broker_active[new_broker] & ~plan.broker_has_offline_dir[new_broker])).any():
        problems.append("a replica changes to a directory it may not")
    assert plan.excluded is not None
    if ((inter | intra) & plan.excluded).any():
        problems.append("an excluded replica moves")
    key = t.rep_part.astype(np.int64) * t.broker_count + new_broker
    if np.unique(key).size != key.size:
        problems.append("a broker holds two replicas of a partition")
    rack = t.broker_rack[new_broker]
    if plan.racks_available and len(t.racks):
        K = len(t.racks) + 1
        keyed = t.rep_part.astype(np.int64) * K + (rack + 1)
        keys, counts = np.unique(keyed[rack != NO_RACK], return_counts=True)
        allowed = np.array([bands.rack_extra.get((int(k // K), int(k % K) - 1), int(bands.rack_limit[k // K])) for k in keys.tolist()])
        if (counts > allowed).any():
            problems.append("the rack rule")
    kept = np.bincount(t.rep_part[t.rep_in_sync & ~inter], minlength=len(t.part_id))
    if (kept < bands.isr_need).any():
        problems.append("min.insync.replicas while moving")
    count = np.bincount(new_broker, minlength=t.broker_count)
    load = np.bincount(new_broker, weights=size, minlength=t.broker_count)
    if ((count < bands.count_low) | (count > bands.count_high)).any():
        problems.append("a broker's replica count band")
    slack = 1e-9 * np.maximum(np.abs(load), 1) + 1
    if ((load < bands.bytes_low - slack) | (load > bands.bytes_high + slack)).any():
        problems.append("a broker's byte band")
    usage = _Bands._usage(plan, new_dir)
    if (usage > bands.dir_limit + 1e-9 * usage + 1).any():
        problems.append("the capacity threshold")
    capacity = bands.capacity
    off = np.abs(usage - bands.mean_usage(t, usage) * capacity)
    if (bands.counted & (off > bands.dir_reach + 1e-9 * capacity + 1)).any():
        problems.append("a directory's band")
    moved = inter | intra
    if moved.sum() > bands.max_moves or size[moved].sum() > bands.max_bytes:
        problems.append("--max-moves or --max-bytes")
    return problems


def _reach(solved: _Solved, bands: _Bands) -> str:
    within = "" if not bands.widened else ", bands widened to the heuristic's where it misses them"
    if solved.widened_alike:
        within += ", then the least bytes within them widened alike to its furthest misses"
    if solved.status == "optimal":
        return f"optimal{within}"
    if solved.bound and solved.moved:
        gap = max(solved.moved - solved.bound, 0) / solved.moved
        how = f"stopped at its time cap ({TIME_CAP_SECONDS:.0f} s; may differ run to run)" if solved.by_clock else _node_limit(solved)
        return f"{how}, within {gap:.1%} of the solver's bound{within}"
    return f"stopped at its limit{within}"


def _node_limit(solved: _Solved) -> str:
    if solved.node_limit > MAX_NODES:
        return f"stopped at its limit ({solved.node_limit:,} nodes: at {MAX_NODES:,} its plan was more than {PROVEN_WITHIN - 1:.0%} above the solver's bound)"
    return f"stopped at its limit ({solved.node_limit:,} nodes)"


def _gib(value: float) -> str:
    from kjbod.common.units import human_bytes

    return human_bytes(int(value))
