"""How close kjbod's plans come to the least data any plan could move: the true optimum of small
clusters, found by exact solvers from PyPI (HiGHS through highspy, a MILP; OR-Tools' CP-SAT), for
the plan's own targets and hard rules (issue 30).

    pip install -e '.[bench]'                       # ortools, scipy (highspy is the planner's own)
    flock /work/notes/heavy.lock python bench/bench_optimum.py [--cases 50] [--first-seed 1 | --seeds 3,48]
        [--baseline DIR] [--time-limit 60] [--work /tmp/kjbod-bench-optimum] [--show-optimum]

Each case is a cluster from bench/synthetic.py, drawn from its seed: 6-10 brokers of which 1-2
start empty (bench/bench_planner.py's way of making `balance` work: its `_add_empty_brokers` and
`_resize_disks`, so disks are half full once even and 1-2 directories are 95% full), 2-3 log
directories each, 50-200 partitions at RF 3 with skewed sizes and a hot topic, 2-4 racks of
unequal size. Followers do not lag and no future replica is in flight, so every replica of a
partition weighs what its partition does, as the planner counts it. kjbod plans it
(`import cluster`, then `reassign plan --goal balance --engine local -o json`, as an operator
runs them); the solvers then find the least data that has to move to meet the same targets
under the same rules. Each case's line gives kjbod's data moved over that optimum, and kjbod's
own lower bound (the report's lowerBoundBytes) over the optimum of its bands; the end gives the
median and the worst. `--baseline DIR` plans every case with another checkout's kjbod too (e.g.
`git archive COMMIT | tar -x -C DIR`), so the table shows the ratios before and after a change,
from the same run. Each case also shows this tree's planner with `--refine off` (`heuristic`):
on these small cases the planner itself runs a solver (planner/refine.py, the model below with
deterministic limits), and that column is the heuristic alone; the end also gives the planner's
time per case and the refinement's part of it.

The model: a binary w[p, d] for each partition p and each directory d of the cluster (p keeps or
gets a replica in d; its replicas weigh the same, so which one goes where does not change the
data moved). The targets are the planner's own for `balance` (kjbod/planner/core.py), read from
the plan's report (perBroker replicasTarget and bytesTarget) and the planner's constants:

- data moved, minimised: the size of every replica that ends outside its current directory
  (moved to another broker, or to another directory of its broker), as the report's bytesMoved;
- the replication factor stays, no two replicas of a partition on one broker;
- the rack rule (strict, KIP-36): at most core.rack_limit(RF, strict, racks) replicas of a
  partition per rack (1 with at least RF racks, else ceil(RF / racks));
- replica count per broker within its band: replicasTarget +- floor(target x
  PlanRequest.count_tolerance) (rack-bounded, equal shares; a band of one value below 200);
- bytes per broker within bytesTarget x (1 +- core.BYTE_TOLERANCE) (capacity-weighted,
  rack-bounded);
- each directory under floor(capacity x capacity threshold) (0.8), and its usage (a share of its
  capacity) within PlanRequest.disk_band (5 points) of its broker's mean usage after the plan
  (the broker's bytes over its capacity: linear in w, since capacities are constants);
- min.insync.replicas kept while the moves run: at most (in-sync replicas - min.insync.replicas)
  of a partition's replicas leave their broker (Kafka's default of 1: one current broker keeps
  its replica).

Not modelled, because they move no data: preferred leaders (balance reorders replica lists for
them) and the order of replicas. Every broker is registered and unfenced, every directory online.

kjbod's plan is read back from its plan file and checked against the same bands. Where it misses
one (`misses`), the optimum it is compared with is that of plans at least as balanced as kjbod's:
each band it misses widened, for every broker or directory alike, to the furthest kjbod's plan
is (kjbod's plan is then one such plan: the ratio is at least 1); the line also says whether
some plan meets the planner's bands (`reachable`).

The solvers: HiGHS for half of --time-limit, started from kjbod's plan; where it has not proven
its best plan within 0.1% of the optimum by then, CP-SAT for the other half, started from the
best plan so far (each proves cases quickly that the other does not). CP-SAT needs whole
numbers: its sizes are MiB, and its plans meet the bands to within half a MiB per replica. A
case not proven within 0.1% says `time limit`: its ratio is against the best plan found, and the
optimum lies between the bound printed and it. CP-SAT's rounding lets its plans miss a byte band by
up to half a MiB per replica of the case (about 0.5 GiB at 160 partitions): a lower bound can come
out up to about 0.1% above an optimum CP-SAT proved (case 48).

`--show-optimum` prints, after each case, kjbod's moves against the optimum's plan (bytes moved
between brokers and within them, per broker what leaves it and its directories after each plan):
where kjbod's plan wastes bytes.

The solvers' results are kept in WORK/optima.json, keyed by the case's input files, the bands and
--time-limit (not by the plan they start from): a rerun solves only bands it has not seen, so
splitting the 50 cases into chunks (--first-seed/--cases, or --seeds), or planning again after a
change, costs the solver time of the new bands alone. Delete the file to solve everything again.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT))

from bench_planner import _add_empty_brokers, _resize_disks  # noqa: E402
from synthetic import GIB, SyntheticSpec, generate, write_files  # noqa: E402

from kjbod.planner.core import BYTE_TOLERANCE, PlanRequest, RackMode, directory_band, rack_limit  # noqa: E402
from kjbod.planner.refine import ConstraintRows  # noqa: E402

MIB = 1 << 20
DEFAULTS = PlanRequest(goal=None)  # type: ignore[arg-type]  # only its band defaults are read


@dataclass(frozen=True)
class Shape:
    seed: int
    brokers: int
    empty: int
    dirs: int
    partitions: int
    racks: int
    full_dirs: int

    def __str__(self) -> str:
        return f"{self.brokers}b({self.empty} new)x{self.dirs}d {self.partitions}p {self.racks}r"


def shape_of(seed: int) -> Shape:
    rng = random.Random(seed * 7919)
    return Shape(
        seed=seed, brokers=rng.randint(6, 10), empty=rng.randint(1, 2), dirs=rng.randint(2, 3), partitions=rng.randint(50, 200),
        racks=rng.randint(2, 4), full_dirs=rng.randint(1, 2),
    )


def write_case(shape: Shape, inputs: Path) -> None:
    spec = SyntheticSpec(
        brokers=shape.brokers - shape.empty, dirs_per_broker=shape.dirs, partitions=shape.partitions, racks=shape.racks,
        hot_topics=1, full_dirs=shape.full_dirs, lagging_fraction=0.0, future_fraction=0.0, seed=shape.seed,
    )
    cluster = generate(spec)
    _add_empty_brokers(cluster.brokers, shape.empty, shape.dirs)
    _resize_disks(cluster, set(cluster.full))
    write_files(cluster, inputs)


# The cluster as arrays, from the import files ------------------------------------------------------


@dataclass
class Cluster:
    broker_ids: list[int]
    broker_rack: np.ndarray  # rack index per broker
    dir_broker: np.ndarray  # broker index per directory
    dir_path: list[str]
    dir_capacity: np.ndarray  # bytes
    part_name: list[str]
    rep_part: np.ndarray
    rep_broker: np.ndarray
    rep_dir: np.ndarray
    rep_size: np.ndarray  # bytes (the partition's)
    racks: int

    @property
    def part_size(self) -> np.ndarray:
        size = np.zeros(len(self.part_name))
        size[self.rep_part] = self.rep_size
        return size


def read_cluster(inputs: Path) -> Cluster:
    brokers = json.loads((inputs / "brokers.json").read_bytes())["brokers"]
    assignment = json.loads((inputs / "assignment.json").read_bytes())["partitions"]
    text = (inputs / "log-dirs.txt").read_text()
    log_dirs = json.loads(text[text.index("{") :])
    sizes = {p["partition"]: p["size"] for b in log_dirs["brokers"] for d in b["logDirs"] for p in d["partitions"] if not p["isFuture"]}
    brokers.sort(key=lambda b: b["id"])
    rack_names = sorted({b["rack"] for b in brokers})
    index = {b["id"]: i for i, b in enumerate(brokers)}
    dir_index: dict[tuple[int, str], int] = {}
    dir_broker, dir_path, dir_capacity = [], [], []
    for b in brokers:
        for d in b["log_dirs"]:
            dir_index[(b["id"], d["path"])] = len(dir_path)
            dir_broker.append(index[b["id"]])
            dir_path.append(d["path"])
            dir_capacity.append(d["capacity_bytes"])
    part_name, rep_part, rep_broker, rep_dir, rep_size = [], [], [], [], []
    for p, entry in enumerate(sorted(assignment, key=lambda e: (e["topic"], e["partition"]))):
        name = f"{entry['topic']}-{entry['partition']}"
        part_name.append(name)
        for broker, path in zip(entry["replicas"], entry["log_dirs"]):
            rep_part.append(p)
            rep_broker.append(index[broker])
            rep_dir.append(dir_index[(broker, path)])
            rep_size.append(sizes[name])
    return Cluster(
        broker_ids=[b["id"] for b in brokers],
        broker_rack=np.array([rack_names.index(b["rack"]) for b in brokers]),
        dir_broker=np.array(dir_broker), dir_path=dir_path, dir_capacity=np.array(dir_capacity, dtype=np.float64),
        part_name=part_name, rep_part=np.array(rep_part), rep_broker=np.array(rep_broker), rep_dir=np.array(rep_dir),
        rep_size=np.array(rep_size, dtype=np.float64), racks=len(rack_names),
    )


@dataclass(frozen=True)
class Bands:
    """Per broker, the replica count and byte bands, and per directory the most its usage may be
    from its broker's mean (a share of capacity) and the most bytes it may hold."""

    count_low: tuple[int, ...]
    count_high: tuple[int, ...]
    bytes_low: tuple[float, ...]
    bytes_high: tuple[float, ...]
    dir_band: float
    dir_limit: tuple[float, ...]


@dataclass
class Placement:
    """Where kjbod's plan leaves things: per broker its replicas and bytes, per directory its bytes."""

    count: np.ndarray
    load: np.ndarray
    usage: np.ndarray
    unplaced: int  # moved replicas left to the broker ("any")
    rep_dir: np.ndarray  # each replica's directory (-1: left to the broker)


def planner_bands(cluster: Cluster, report: dict[str, Any]) -> Bands:
    """The plan's own targets (its report's) with the planner's bands around them."""
    by_id = {row["broker"]: row for row in report["perBroker"]}
    count = np.array([by_id[b]["replicasTarget"] for b in cluster.broker_ids], dtype=np.int64)
    slack = np.floor(count * DEFAULTS.count_tolerance).astype(np.int64)
    byte_target = np.array([by_id[b]["bytesTarget"] for b in cluster.broker_ids], dtype=np.float64)
    return Bands(
        tuple((count - slack).tolist()), tuple((count + slack).tolist()),
        tuple((byte_target * (1 - BYTE_TOLERANCE)).tolist()), tuple((byte_target * (1 + BYTE_TOLERANCE)).tolist()),
        DEFAULTS.disk_band, tuple(np.floor(cluster.dir_capacity * DEFAULTS.capacity_threshold).tolist()),
    )


def misses(cluster: Cluster, bands: Bands, placed: Placement) -> list[str]:
    """The bands a placement misses."""
    missed = []
    if ((placed.count < np.array(bands.count_low)) | (placed.count > np.array(bands.count_high))).any():
        missed.append("count")
    if ((placed.load < np.array(bands.bytes_low) * (1 - 1e-9)) | (placed.load > np.array(bands.bytes_high) * (1 + 1e-9))).any():
        missed.append("bytes")
    if (_points_from_mean(cluster, placed.usage) > bands.dir_band + 1e-9).any():
        missed.append("dir band")
    if (placed.usage > np.array(bands.dir_limit)).any():
        missed.append("threshold")
    if placed.unplaced:
        missed.append("broker chooses a directory")
    return missed


def _points_from_mean(cluster: Cluster, usage: np.ndarray) -> np.ndarray:
    """Each directory's distance from its broker's mean usage (shares of capacity), as the
    planner's directory band measures it (core.directory_band; every directory is online)."""
    counted = np.ones(len(cluster.dir_path), dtype=bool)
    band = directory_band(cluster.dir_broker, cluster.dir_capacity, counted, usage, 0.0, 1.0, len(cluster.broker_ids))
    return np.abs(usage / cluster.dir_capacity - band.mean)


def at_least_as_balanced(cluster: Cluster, bands: Bands, placed: Placement) -> Bands:
    """The planner's bands, widened where kjbod's plan misses them to what it reaches, the same
    for every broker (as the report measures: the furthest any broker or directory is): the
    optimum of these is the least data a plan at least as balanced as kjbod's moves."""
    low, high = np.array(bands.count_low), np.array(bands.count_high)
    target = (low + high) / 2
    off = int(np.max(np.abs(placed.count - target) - (high - low) / 2, initial=0))
    byte_low, byte_high = np.array(bands.bytes_low), np.array(bands.bytes_high)
    byte_target = (byte_low + byte_high) / 2
    tolerance = max(BYTE_TOLERANCE, float(np.max(np.abs(placed.load - byte_target) / byte_target)) * (1 + 1e-9))
    return Bands(
        tuple(np.minimum(low, np.ceil(target - (high - low) / 2 - off)).astype(np.int64).tolist()),
        tuple(np.maximum(high, np.floor(target + (high - low) / 2 + off)).astype(np.int64).tolist()),
        tuple((byte_target * (1 - tolerance)).tolist()), tuple((byte_target * (1 + tolerance)).tolist()),
        max(bands.dir_band, float(_points_from_mean(cluster, placed.usage).max()) + 1e-9),
        tuple(np.maximum(np.array(bands.dir_limit), placed.usage).tolist()),
    )


# The optimum -----------------------------------------------------------------------------------------


@dataclass
class Optimum:
    status: str  # "optimal" (within the gap), or why not
    moved: float | None  # bytes, the best plan found
    bound: float | None  # bytes, the proven lower bound
    seconds: float
    placement: np.ndarray | None = None  # the best plan, per partition and directory


def solve(cluster: Cluster, bands: Bands, time_limit: float, start: np.ndarray | None = None, gap: float = 1e-3) -> Optimum:
    """The least bytes moved within `bands` under the hard rules, proven to within `gap`
    (relative): HiGHS first, for half the time; where it has not proven its plan optimal by
    then, OR-Tools' CP-SAT from the best plan known, for the rest (each finds quickly some cases
    the other does not). The result is the better plan and the higher bound of the two."""
    highs = _highs(cluster, bands, time_limit / 2, start, gap)
    if highs.status in ("optimal", "infeasible"):
        return highs
    best = highs.placement if highs.placement is not None else start
    cp = _cp_sat(cluster, bands, time_limit / 2, best, gap)
    if cp.status == "infeasible":
        return cp
    moved = min((o.moved for o in (highs, cp) if o.moved is not None), default=None)
    bound = max((o.bound for o in (highs, cp) if o.bound is not None), default=None)
    seconds = highs.seconds + cp.seconds
    if moved is None:
        return Optimum("no plan found in the time limit", None, bound, seconds)
    bound = min(bound if bound is not None else 0.0, moved)
    proven = moved - bound <= gap * moved + 1
    best_plan = next(o.placement for o in (highs, cp) if o.moved == moved)
    return Optimum("optimal" if proven else "time limit", moved, bound, seconds, best_plan)


def _highs(cluster: Cluster, bands: Bands, time_limit: float, start: np.ndarray | None, gap: float) -> Optimum:
    """The model with HiGHS (highspy), started from `start` (a placement per partition and
    directory) when given.

    The variables are per partition and directory, w[p, d] = 1 when the partition has a replica in
    d after the plan: replicas of a partition weigh the same, so which of them goes where does not
    change the data moved (the size of each current directory the partition leaves), and one
    variable per partition and directory, rather than per replica, spares the solver the
    replicas' symmetric copies of every solution."""
    import highspy

    D, B, K = len(cluster.dir_path), len(cluster.broker_ids), cluster.racks
    P = len(cluster.part_name)
    size = cluster.part_size / GIB  # GiB: well-scaled coefficients for the solver
    cap = cluster.dir_capacity / GIB
    p_of, d_of = np.divmod(np.arange(P * D), D)
    b_of = cluster.dir_broker[d_of]
    every = np.arange(P * D)
    ones = np.ones(P * D)
    model_rows = ConstraintRows(P * D)
    add = model_rows.add

    rf = np.bincount(cluster.rep_part, minlength=P)
    # The replication factor stays, on as many brokers.
    add(p_of, every, ones, P, rf, rf)
    add(p_of * B + b_of, every, ones, P * B, -np.inf, 1.0)
    # The rack rule.
    limit = np.array([rack_limit(int(f), RackMode.STRICT, K) for f in rf], dtype=np.float64)
    add(p_of * K + cluster.broker_rack[b_of], every, ones, P * K, -np.inf, np.repeat(limit, K))
    # Replica counts and bytes per broker.
    add(b_of, every, ones, B, np.array(bands.count_low, dtype=np.float64), np.array(bands.count_high, dtype=np.float64))
    add(b_of, every, size[p_of], B, np.array(bands.bytes_low) / GIB, np.array(bands.bytes_high) / GIB)
    # Directories: under their limit, and within the band of their broker's mean usage:
    # usage_d - cap_d / C_b * U_b within +-band * cap_d.
    add(d_of, every, size[p_of], D, -np.inf, np.array(bands.dir_limit) / GIB)
    broker_cap = np.bincount(cluster.dir_broker, weights=cap, minlength=B)
    for d in range(D):
        b = cluster.dir_broker[d]
        on_broker = np.flatnonzero(b_of == b)
        coefficient = size[p_of[on_broker]] * ((d_of[on_broker] == d) - cap[d] / broker_cap[b])
        add(np.zeros(len(on_broker), dtype=np.int64), on_broker, coefficient, 1, -bands.dir_band * cap[d], bands.dir_band * cap[d])
    # min.insync.replicas while the moves run (Kafka's default of 1; every replica is in sync): at
    # most RF - 1 replicas leave their broker, so one of the current brokers keeps its replica.
    current_broker = np.zeros((P, B), dtype=bool)
    current_broker[cluster.rep_part, cluster.rep_broker] = True
    keeps = np.flatnonzero(current_broker[p_of, b_of])
    add(p_of[keeps], keeps, np.ones(len(keeps)), P, 1.0, np.inf)
    # Data moved = the replicas' bytes (an offset, so that the solver's gap is on data moved) - the
    # bytes of every current directory the partition keeps.
    cost = np.zeros(P * D)
    cost[cluster.rep_part * D + cluster.rep_dir] = -size[cluster.rep_part]
    model = highspy.HighsLp()
    model.num_col_, model.num_row_ = P * D, model_rows.count
    model.offset_ = float(size[cluster.rep_part].sum())
    model.col_cost_, model.col_lower_, model.col_upper_ = cost, np.zeros(P * D), np.ones(P * D)
    model.row_lower_, model.row_upper_ = model_rows.lower, model_rows.upper
    model.a_matrix_.format_ = highspy.MatrixFormat.kColwise
    model.a_matrix_.start_, model.a_matrix_.index_, model.a_matrix_.value_ = model_rows.column_wise()
    model.integrality_ = [highspy.HighsVarType.kInteger] * (P * D)
    solver = highspy.Highs()
    solver.setOptionValue("output_flag", False)
    solver.setOptionValue("time_limit", float(time_limit))
    solver.setOptionValue("mip_rel_gap", gap)
    solver.setOptionValue("random_seed", 1)
    solver.passModel(model)
    if start is not None:
        solver.setSolution(P * D, np.arange(P * D, dtype=np.int32), start.reshape(-1).astype(np.float64))
    started = time.perf_counter()
    solver.run()
    seconds = time.perf_counter() - started
    status = solver.getModelStatus()
    info = solver.getInfo()
    if status == highspy.HighsModelStatus.kInfeasible:
        return Optimum("infeasible", None, None, seconds)
    if info.primal_solution_status != 2:  # no feasible solution
        return Optimum("no plan found in the time limit", None, None, seconds)
    moved = max(float(info.objective_function_value), 0.0) * GIB
    bound = max(float(info.mip_dual_bound), 0.0) * GIB
    placement = np.rint(np.array(solver.getSolution().col_value)).reshape(P, D)
    return Optimum("optimal" if status == highspy.HighsModelStatus.kOptimal else "time limit", moved, min(bound, moved), seconds, placement)


def _cp_sat(cluster: Cluster, bands: Bands, time_limit: float, start: np.ndarray | None, gap: float) -> Optimum:
    """The same model with CP-SAT, which needs whole numbers: sizes in MiB, each band widened
    by half a MiB per replica, so that no plan within the exact bands is cut off; its bound is
    lowered by the rounding's most. A plan it finds meets the bands to within that rounding (a
    few hundred MiB on bands of hundreds of GiB), which this benchmark accepts."""
    from ortools.sat.python import cp_model

    D, B, K = len(cluster.dir_path), len(cluster.broker_ids), cluster.racks
    P = len(cluster.part_name)
    size = np.rint(cluster.part_size / MIB).astype(np.int64).tolist()
    cap = np.floor(cluster.dir_capacity / MIB).astype(np.int64)
    rf = np.bincount(cluster.rep_part, minlength=P)
    slack = int(rf.sum())  # half a MiB per replica, twice over
    model = cp_model.CpModel()
    w = [[model.new_bool_var(f"w{p}.{d}") for d in range(D)] for p in range(P)]
    dirs_of = [np.flatnonzero(cluster.dir_broker == b).tolist() for b in range(B)]
    racks_of = [np.flatnonzero(cluster.broker_rack[cluster.dir_broker] == k).tolist() for k in range(K)]
    current: dict[int, list[tuple[int, int]]] = {}
    for part, broker, directory in zip(cluster.rep_part.tolist(), cluster.rep_broker.tolist(), cluster.rep_dir.tolist()):
        current.setdefault(part, []).append((broker, directory))
    for p in range(P):
        model.add(sum(w[p]) == int(rf[p]))
        for b in range(B):
            model.add(sum(w[p][d] for d in dirs_of[b]) <= 1)
        limit = rack_limit(int(rf[p]), RackMode.STRICT, K)
        for k in range(K):
            model.add(sum(w[p][d] for d in racks_of[k]) <= limit)
        model.add(sum(w[p][d] for b, _ in current.get(p, []) for d in dirs_of[b]) >= 1)
    for b in range(B):
        on_broker = [w[p][d] for p in range(P) for d in dirs_of[b]]
        model.add_linear_constraint(sum(on_broker), bands.count_low[b], bands.count_high[b])
        load = sum(size[p] * w[p][d] for p in range(P) for d in dirs_of[b])
        model.add_linear_constraint(load, int(np.floor(bands.bytes_low[b] / MIB)) - slack, int(np.ceil(bands.bytes_high[b] / MIB)) + slack)
        total_cap = int(cap[dirs_of[b]].sum())
        for d in dirs_of[b]:
            model.add(sum(size[p] * w[p][d] for p in range(P)) <= int(np.ceil(bands.dir_limit[d] / MIB)) + slack)
            # C_b * usage_d - cap_d * U_b within +-band * cap_d * C_b
            spread = sum(size[p] * (total_cap * (e == d) - int(cap[d])) * w[p][e] for p in range(P) for e in dirs_of[b])
            room = int(np.ceil(bands.dir_band * int(cap[d]) * total_cap)) + slack * total_cap
            model.add_linear_constraint(spread, -room, room)
    total = sum(size[p] * int(rf[p]) for p in range(P))
    model.minimize(total - sum(size[p] * w[p][d] for p, held in current.items() for _, d in held))
    if start is not None:
        for p in range(P):
            for d in range(D):
                model.add_hint(w[p][d], bool(start[p, d]))
    solver = cp_model.CpSolver()
    solver.parameters.max_time_in_seconds = float(time_limit)
    solver.parameters.num_workers = max(os.cpu_count() or 1, 1)
    solver.parameters.relative_gap_limit = gap
    solver.parameters.random_seed = 1
    started = time.perf_counter()
    status = solver.solve(model)
    seconds = time.perf_counter() - started
    if status == cp_model.INFEASIBLE:
        return Optimum("infeasible", None, None, seconds)
    bound = max(solver.best_objective_bound - slack, 0) * MIB if status in (cp_model.OPTIMAL, cp_model.FEASIBLE) else None
    if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        return Optimum("no plan found in the time limit", None, None, seconds)
    placement = np.array([[solver.value(w[p][d]) for d in range(D)] for p in range(P)], dtype=np.float64)
    moved = exact_moved(cluster, bands, placement, tolerance=slack * MIB)
    if moved is None:
        return Optimum("time limit", None, bound, seconds)
    return Optimum("optimal" if status == cp_model.OPTIMAL else "time limit", moved, min(bound or 0.0, moved), seconds, placement)


def exact_moved(cluster: Cluster, bands: Bands, placement: np.ndarray, tolerance: float = 0.0) -> float | None:
    """The bytes a placement (per partition and directory) moves, or None when it misses a band
    by more than `tolerance` bytes."""
    size = cluster.part_size
    usage = (placement * size[:, None]).sum(axis=0)
    broker_count = np.bincount(cluster.dir_broker, weights=placement.sum(axis=0), minlength=len(cluster.broker_ids))
    broker_load = np.bincount(cluster.dir_broker, weights=usage, minlength=len(cluster.broker_ids))
    ok = (
        (broker_count >= np.array(bands.count_low)).all() and (broker_count <= np.array(bands.count_high)).all()
        and (broker_load >= np.array(bands.bytes_low) - tolerance - 1).all() and (broker_load <= np.array(bands.bytes_high) + tolerance + 1).all()
        and (usage <= np.array(bands.dir_limit) + tolerance + 1).all()
        and (_points_from_mean(cluster, usage) <= bands.dir_band + (tolerance + 1) / cluster.dir_capacity).all()
    )
    if not ok:
        return None
    kept = placement[cluster.rep_part, cluster.rep_dir] > 0.5
    return float(cluster.rep_size[~kept].sum())


def as_start(cluster: Cluster, placed: Placement) -> np.ndarray:
    """A placement as the solver's variables (per partition and directory)."""
    start = np.zeros((len(cluster.part_name), len(cluster.dir_path)))
    on_dir = placed.rep_dir >= 0
    start[cluster.rep_part[on_dir], placed.rep_dir[on_dir]] = 1.0
    return start


def compare_moves(cluster: Cluster, name: str, placed: Placement, optimum: np.ndarray) -> str:
    """kjbod's moves against the optimum's: bytes moved between brokers and within them, the
    replicas both move, and per broker what leaves it, what moves between its directories, and
    its directories' usage after each plan (where kjbod wastes bytes)."""
    size = cluster.part_size
    brokers, dirs = len(cluster.broker_ids), len(cluster.dir_path)
    ends = optimum > 0.5
    on_broker = np.zeros((len(cluster.part_name), brokers), dtype=bool)
    for d in range(dirs):
        on_broker[:, cluster.dir_broker[d]] |= ends[:, d]
    k_dir = placed.rep_dir
    k_ends = np.zeros_like(ends)
    k_on_broker = np.zeros_like(on_broker)
    held = k_dir >= 0
    k_ends[cluster.rep_part[held], k_dir[held]] = True
    k_on_broker[cluster.rep_part[held], cluster.dir_broker[k_dir[held]]] = True
    sides = {}
    for side, broker_kept, dir_kept in (("kjbod", k_on_broker, k_ends), ("optimum", on_broker, ends)):
        inter = ~broker_kept[cluster.rep_part, cluster.rep_broker]
        intra = ~inter & ~dir_kept[cluster.rep_part, cluster.rep_dir]
        sides[side] = (inter, intra, (dir_kept * size[:, None]).sum(axis=0))
    (k_inter, k_intra, k_usage), (o_inter, o_intra, o_usage) = sides["kjbod"], sides["optimum"]
    gib = lambda mask: cluster.rep_size[mask].sum() / GIB  # noqa: E731
    lines = [
        f"  {name}: between brokers kjbod {gib(k_inter):,.1f} GiB ({int(k_inter.sum())} replicas), optimum {gib(o_inter):,.1f} ({int(o_inter.sum())}); "
        f"within brokers kjbod {gib(k_intra):,.1f} ({int(k_intra.sum())}), optimum {gib(o_intra):,.1f} ({int(o_intra.sum())}); "
        f"moved by both {gib(k_inter & o_inter):,.1f}, by kjbod alone {gib(k_inter & ~o_inter):,.1f}, by the optimum alone {gib(o_inter & ~k_inter):,.1f}"
    ]
    for b in range(brokers):
        mine = cluster.rep_broker == b
        usage = ", ".join(
            f"{k_usage[d] / cluster.dir_capacity[d]:.0%}/{o_usage[d] / cluster.dir_capacity[d]:.0%}" for d in np.flatnonzero(cluster.dir_broker == b)
        )
        lines.append(
            f"    broker {cluster.broker_ids[b]}: leaving kjbod {gib(mine & k_inter):,.1f} GiB / optimum {gib(mine & o_inter):,.1f}; "
            f"within kjbod {gib(mine & k_intra):,.1f} / optimum {gib(mine & o_intra):,.1f}; directories after (kjbod/optimum) {usage}"
        )
    return "\n".join(lines)


# kjbod's plan, read back -------------------------------------------------------------------------------


def apply_plan(cluster: Cluster, plan_file: Path) -> tuple[float, Placement]:
    """The bytes kjbod's plan moves and where it leaves things, from its plan file."""
    index = {b: i for i, b in enumerate(cluster.broker_ids)}
    dir_index = {(int(cluster.dir_broker[d]), cluster.dir_path[d]): d for d in range(len(cluster.dir_path))}
    part_index = {name: p for p, name in enumerate(cluster.part_name)}
    broker = cluster.rep_broker.copy()
    directory = cluster.rep_dir.copy()
    starts = np.searchsorted(cluster.rep_part, np.arange(len(cluster.part_name)))
    moved = 0.0
    for entry in json.loads(plan_file.read_bytes())["partitions"]:
        p = part_index[f"{entry['topic']}-{entry['partition']}"]
        rows = range(starts[p], starts[p] + len(entry["replicas"]))
        old = {int(broker[r]): r for r in rows}
        new = [index[b] for b in entry["replicas"]]
        leaving = [old[b] for b in old if b not in new]
        for b, path in zip(new, entry["log_dirs"]):
            r = old.get(b)
            if r is None:
                r = leaving.pop()
                moved += cluster.rep_size[r]
                broker[r] = b
                directory[r] = dir_index[(b, path)] if path != "any" else -1
            elif path != "any" and dir_index[(b, path)] != directory[r]:
                moved += cluster.rep_size[r]
                directory[r] = dir_index[(b, path)]
    B = len(cluster.broker_ids)
    placed = directory >= 0
    return moved, Placement(
        count=np.bincount(broker, minlength=B),
        load=np.bincount(broker, weights=cluster.rep_size, minlength=B),
        usage=np.bincount(directory[placed], weights=cluster.rep_size[placed], minlength=len(cluster.dir_path)),
        unplaced=int((~placed).sum()),
        rep_dir=directory,
    )


# Running the sides -------------------------------------------------------------------------------------


def kjbod(tree: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """A kjbod command of `tree` (first on the path; run away from any checkout, since `-m` puts the
    working directory before PYTHONPATH)."""
    env = {**os.environ, "PYTHONPATH": str(tree), "PYTHONHASHSEED": "0"}
    return subprocess.run([sys.executable, "-m", "kjbod", *args], capture_output=True, text=True, env=env, cwd=tempfile.gettempdir())


def plan_case(tree: Path, inputs: Path, work: Path, extra: tuple[str, ...] = ()) -> tuple[dict[str, Any], Path]:
    state = work / "state"
    shutil.rmtree(state, ignore_errors=True)
    imported = kjbod(tree, "--state", str(state), "import", "cluster", "--brokers", str(inputs / "brokers.json"),
                     "--assignment", str(inputs / "assignment.json"), "--log-dirs", str(inputs / "log-dirs.txt"))
    if imported.returncode != 0:
        raise SystemExit(f"import failed with {tree}: {imported.stderr.strip()[-2000:]}")
    plan_file = work / "plan.json"
    planned = kjbod(tree, "--state", str(state), "-o", "json", "reassign", "plan", "--goal", "balance", "--engine", "local",
                    "--output-file", str(plan_file), "--overwrite", *extra)
    if planned.returncode != 0:
        raise SystemExit(f"reassign plan failed with {tree}: {planned.stderr.strip()[-2000:]}")
    return json.loads(planned.stdout), plan_file


def ratio(value: float, optimum: Optimum) -> float | None:
    if optimum.moved is None:
        return None
    if optimum.moved <= 0:
        return 1.0 if value <= 0 else float("inf")
    return value / optimum.moved


@dataclass
class Side:
    name: str
    tree: Path
    ratios: list[float]
    bounds: list[float]
    missed: int = 0
    reachable: int = 0  # of the cases that miss a band, those whose bands a plan could meet
    proven: int = 0  # cases whose optimum the solvers proved (within 0.1%)
    extra: tuple[str, ...] = ()  # options added to `reassign plan` (the heuristic alone: --refine off)
    seconds: list[float] = field(default_factory=list)  # the planner's time per case (the report's)
    refine_seconds: list[float] = field(default_factory=list)  # the exact refinement's part of it


class OptimumCache:
    """The solvers' results kept between runs (the solvers are the expensive part), in one JSON
    file, keyed by the case's input files, the bands and the time limit: a rerun with a changed
    planner solves only the bands it has not seen (a plan that misses a band differently)."""

    def __init__(self, path: Path, inputs: Path, time_limit: float) -> None:
        digest = hashlib.sha256()
        for name in ("brokers.json", "assignment.json", "log-dirs.txt"):
            digest.update((inputs / name).read_bytes())
        self.path, self.case, self.time_limit = path, digest.hexdigest(), time_limit

    def _key(self, bands: Bands) -> str:
        return hashlib.sha256(repr((self.case, self.time_limit, bands)).encode()).hexdigest()

    def _entries(self) -> dict[str, Any]:
        return json.loads(self.path.read_text()) if self.path.exists() else {}

    def get(self, bands: Bands) -> Optimum | None:
        entry = self._entries().get(self._key(bands))
        return Optimum(entry["status"], entry["moved"], entry["bound"], entry["seconds"]) if entry else None

    def put(self, bands: Bands, optimum: Optimum) -> Optimum:
        entries = self._entries()
        entries[self._key(bands)] = {"status": optimum.status, "moved": optimum.moved, "bound": optimum.bound, "seconds": optimum.seconds}
        partial = self.path.with_suffix(".partial")
        partial.write_text(json.dumps(entries))
        partial.replace(self.path)
        return optimum


def run_case(seed: int, sides: list[Side], args: argparse.Namespace) -> None:
    shape = shape_of(seed)
    case = args.work / f"case-{seed:03d}"
    inputs = case / "input"
    if not (inputs / "ready").exists():
        write_case(shape, inputs)
        (inputs / "ready").write_text("")
    cluster = read_cluster(inputs)
    solved: dict[Bands, Optimum] = {}
    cache = OptimumCache(args.work / "optima.json", inputs, args.time_limit)

    def optimum_of(bands: Bands, start: Placement) -> Optimum:
        if bands not in solved:
            # The cache keeps no plans: --show-optimum solves again to have the optimum's.
            cached = None if args.show_optimum else cache.get(bands)
            solved[bands] = cached or cache.put(bands, solve(cluster, bands, args.time_limit, as_start(cluster, start)))
        return solved[bands]

    cells = []
    shown: list[str] = []
    optimum_text = ""
    for side in sides:
        work = case / side.name
        work.mkdir(parents=True, exist_ok=True)
        report, plan_file = plan_case(side.tree, inputs, work, side.extra)
        side.seconds.append(float(report["seconds"]))
        refined = ""
        if report.get("refinement") and report["refinement"]["status"] not in ("off", "not-applicable"):
            side.refine_seconds.append(float(report["refinement"]["seconds"]))
            # What the planner's own solver did (planner/refine.py), and in how long.
            refined = f" [refinement: {report['refinement']['status']}{', its time cap' if report['refinement']['stoppedByClock'] else ''}, {report['refinement']['seconds']:.1f} s]"
        strict = planner_bands(cluster, report)
        moved, placed = apply_plan(cluster, plan_file)
        missed = misses(cluster, strict, placed)
        bands = at_least_as_balanced(cluster, strict, placed) if missed else strict
        optimum = optimum_of(bands, placed)
        text = f"{optimum.moved / GIB:,.0f} GiB ({optimum.status}, {optimum.seconds:.1f} s)" if optimum.moved is not None else f"- ({optimum.status})"
        optimum_text += ("; " if optimum_text else "") + (f"{side.name}: " if len(sides) > 1 else "") + text
        # kjbod's lower bound is one for its own bands: it is compared with their optimum.
        strict_optimum = optimum_of(strict, placed)
        r, b = ratio(moved, optimum), ratio(report["lowerBoundBytes"], strict_optimum)
        note = ""
        if missed:
            side.missed += 1
            reachable = strict_optimum.moved is not None
            side.reachable += reachable
            verdict = "reachable" if reachable else "unreachable" if strict_optimum.status == "infeasible" else "reachable or not: unknown"
            note = f" (misses {', '.join(missed)}: {verdict})"
        if abs(moved - report["bytesMoved"]) > 1e-3 * max(moved, 1):
            note += f" (the report says {report['bytesMoved'] / GIB:,.0f} GiB moved, the plan file {moved / GIB:,.0f})"
        if r is None:
            cells.append(f"- ({moved / GIB:,.0f} GiB){note}{refined} | -")
            continue
        side.ratios.append(r)
        side.proven += optimum.status == "optimal"
        ratio_text = f"{r:.3f}"
        if optimum.status != "optimal" and optimum.bound:
            # The optimum lies between the solvers' bound and their best plan: so does the ratio.
            ratio_text += f" to {moved / optimum.bound:.3f}"
        bound_text = "-"
        if b is not None and strict_optimum.status == "optimal":
            side.bounds.append(b)
            bound_text = f"{b:.3f}"
        elif b is not None and strict_optimum.bound:
            bound_text = f"{b:.3f} to {report['lowerBoundBytes'] / strict_optimum.bound:.3f} (not proven)"
        cells.append(f"{ratio_text}{note}{refined} | {bound_text}")
        if args.show_optimum and optimum.placement is not None:
            shown.append(compare_moves(cluster, side.name, placed, optimum.placement))
    print(f"| {seed} | {shape} | {optimum_text} | " + " | ".join(cells) + " |", flush=True)
    for text in shown:
        print(text, flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cases", type=int, default=50)
    parser.add_argument("--first-seed", type=int, default=1)
    parser.add_argument("--seeds", help="comma-separated seeds to run instead of --cases from --first-seed (e.g. 48,3,10)")
    parser.add_argument("--baseline", type=Path, help="also plan every case with this checkout's kjbod (the code before a change)")
    parser.add_argument("--time-limit", type=float, default=60.0, help="seconds the solvers may spend on one problem")
    parser.add_argument("--work", type=Path, default=Path("/tmp/kjbod-bench-optimum"))
    parser.add_argument("--show-optimum", action="store_true",
                        help="after each case, kjbod's moves against the optimum's, per broker (solves again: the cache keeps no plans)")
    args = parser.parse_args()
    sides = ([Side("before", args.baseline.resolve(), [], [])] if args.baseline else []) + [
        # This tree's planner twice: its heuristic alone, and as it plans by default (refined by a solver).
        Side("heuristic", ROOT, [], [], extra=("--refine", "off")),
        Side("after" if args.baseline else "kjbod", ROOT, [], []),
    ]
    for side in sides:
        where = subprocess.run(
            [sys.executable, "-c", "import kjbod; print(kjbod.__file__)"], capture_output=True, text=True,
            env={**os.environ, "PYTHONPATH": str(side.tree)}, cwd=tempfile.gettempdir(),
        )
        if not where.stdout.startswith(str(side.tree)):
            raise SystemExit(f"{side.name}: kjbod is imported from {where.stdout.strip()}, not from {side.tree}")
    print(f"kjbod bench_optimum: {f'seeds {args.seeds}' if args.seeds else f'{args.cases} cases from seed {args.first_seed}'}; {', '.join(f'{s.name} = {s.tree}' for s in sides)}; "
          f"load {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    header = "| case | shape | optimum | " + " | ".join(f"{s.name}: moved / optimum | {s.name}: lower bound / optimum" for s in sides) + " |"
    print(header)
    print("|" + "---|" * (header.count("|") - 1))
    seeds = [int(s) for s in args.seeds.split(",")] if args.seeds else range(args.first_seed, args.first_seed + args.cases)
    for seed in seeds:
        run_case(seed, sides, args)
    print()
    for side in sides:
        if side.ratios:
            print(f"{side.name}: data moved over the optimum in {len(side.ratios)} cases: median {statistics.median(side.ratios):.3f}x, "
                  f"mean {statistics.mean(side.ratios):.3f}x, worst {max(side.ratios):.3f}x (targets: median <= 1.02x, worst <= 1.10x); "
                  f"{side.proven} optimum(s) proven, the others' ratios are against the best plan the solvers found (at most the true ratio); "
                  f"cases <= 1.02x: {sum(r <= 1.02 for r in side.ratios)}, <= 1.10x: {sum(r <= 1.10 for r in side.ratios)}; "
                  f"plans meeting every band: {len(side.ratios) - side.missed}")
        if side.seconds:
            print(f"{side.name}: planner time per case (the report's seconds): median {statistics.median(side.seconds):.2f} s, worst {max(side.seconds):.2f} s"
                  + (f"; the exact refinement's part: median {statistics.median(side.refine_seconds):.2f} s, worst {max(side.refine_seconds):.2f} s"
                     if side.refine_seconds else ""))
        if side.bounds:
            print(f"{side.name}: kjbod's lower bound over the optimum of its own bands: median {statistics.median(side.bounds):.3f}, "
                  f"lowest {min(side.bounds):.3f}, highest {max(side.bounds):.3f}, over the {len(side.bounds)} cases where that optimum is "
                  "proven (1.0 is exact; above 1 is not a bound)")
        if side.missed:
            print(f"{side.name}: {side.missed} plan(s) miss a band ({side.reachable} of them reachable by some plan); their optimum is that "
                  "of plans at least as balanced as kjbod's")
    print(f"load {os.getloadavg()[0]:.1f} at the end")
    return 0


if __name__ == "__main__":
    sys.exit(main())
