"""Why each replica of a plan moves, and what keeps the plan from the goals it does not reach
(`reassign plan --explain FILE`).

The reasons are read from the cluster before and after the plan (the report's `Balance` of
each) and from the targets, bands and masks the planner decided with (`Plan`), column by column
over all the moves at once: nothing here runs inside the planner or changes what it decides.

Every moved replica gets one JSON line: the goal it serves (`goal.kind`, and the broker,
directory or rack that was over or under its target, by its measure before and after the plan,
its target and band), why its target broker was chosen (`broker.why`: the broker was under its
replica or byte target, it was a broker being added, or it was the best the rules left) and why
its directory (`dir.why`). Then one line per goal the plan could not reach (`"kind":
"unreached"`), with the obstacle: the rack rule, full directories, an excluded broker, replicas
too large for a band, a budget, an offline directory...

Kinds of goal served by a move (GOALS), and of obstacle (OBSTACLES), are fixed words; the lines
carry numbers, the report carries the sentences.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import orjson

from kjbod.planner.core import BYTE_TOLERANCE, DirectoryBand, Goal, Plan, directory_band, rack_limit, rack_violations
from kjbod.planner.tables import BROKER_CHOOSES, NO_RACK

if TYPE_CHECKING:
    from kjbod.planner.report import Balance

# What a move serves, in the order the first that applies is taken.
GOALS = (
    "remove-brokers",  # its broker is being removed
    "drain-dirs",  # its directory is being drained
    "dead-broker",  # its broker is not registered
    "fenced-broker",  # its broker is fenced (fix-offline)
    "offline-dir",  # its directory is offline (or its partition leaves one that is)
    "rack-rule",  # its rack held more replicas of its partition than the rule allows
    "add-brokers",  # it fills a broker being added
    "replica-count",  # a broker over (or under) its replica count band or target
    "bytes",  # a broker over (or under) its byte band or target
    "capacity-threshold",  # a directory past --capacity-threshold
    "directory-band",  # a directory outside the band around its broker's mean usage
    "evenness",  # none of the above alone: replicas traded to even out counts and bytes together
)
GOAL_WORDS = {
    "remove-brokers": "removing brokers",
    "drain-dirs": "draining directories",
    "dead-broker": "leaving unregistered brokers",
    "fenced-broker": "leaving fenced brokers",
    "offline-dir": "leaving offline directories",
    "rack-rule": "the rack rule",
    "add-brokers": "filling added brokers",
    "replica-count": "replica counts",
    "bytes": "bytes per broker",
    "capacity-threshold": "the capacity threshold",
    "directory-band": "directory usage bands",
    "evenness": "evening out counts and bytes together",
}
_G = {name: code for code, name in enumerate(GOALS)}

OBSTACLES = {
    "budget": "--max-moves or --max-bytes ran out",
    "rack-rule": "the rack rule: every replica it could take has a replica of its partition in its rack already",
    "full-directories": "its directories have no room under the capacity threshold",
    "cannot-receive": "it may not receive replicas (excluded, fenced, removed, or no open directory)",
    "nothing-movable": "nothing on it may move (excluded topics, leaders the goal keeps, partitions with an offline replica or a replica on a fenced broker)",
    "min-insync": "each replica that could still move would leave its partition short of min.insync.replicas while it moves",
    "no-allowed-replica": "no replica the rules allow (rack rule, room, min.insync.replicas) evens it out without pushing another broker out of its band",
    "excluded-broker": "the broker is excluded (--exclude-brokers): nothing on it moves",
    "offline-directory": "the broker has an offline directory, so none of its replicas changes directory",
    "cordoned": "the directory is cordoned: it receives nothing",
    "replicas-too-large": "every replica that could move is larger than the gap to the far side of the band (the band is narrower than the replicas)",
    "band-out-of-reach": "no move between its broker's directories brings it closer to the mean without pushing another past its band",
    "too-few-racks": "fewer racks can hold its replicas than the rule needs",
    "goal-moves-only-what-it-must": "this goal moves only what it must; --goal balance fixes the rack rule",
    "no-allowed-broker": "no broker the rules allow could take it (one that may receive, does not hold the partition, keeps the rack rule and has room)",
}

# Moved replicas are written in chunks of this many lines (the file is streamed, not built whole).
CHUNK = 20_000


@dataclass(frozen=True)
class Unreached:
    """A goal the plan does not reach, and what stands in the way."""

    goal: str
    obstacle: str
    subject: dict[str, Any]  # broker / dir / topic+partition / rack
    measure: str | None = None
    before: float | None = None
    after: float | None = None
    target: float | None = None
    band: tuple[float, float] | None = None

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"kind": "unreached", "goal": self.goal, **self.subject}
        if self.measure is not None:
            data.update(measure=self.measure, before=self.before, after=self.after, target=self.target)
            if self.band is not None:
                data["band"] = list(self.band)
        data["obstacle"] = self.obstacle
        data["why"] = OBSTACLES[self.obstacle]
        return data


@dataclass
class Explanation:
    """The reasons of a plan: one row per moved replica (columns), the goals not reached, and
    how long it took to work them out."""

    rows: np.ndarray  # replica rows that move, in table order (partition, then position)
    columns: dict[str, np.ndarray]
    unreached: list[Unreached]
    seconds: float
    _plan: Plan

    @property
    def moves(self) -> int:
        return len(self.rows)

    def moves_by_goal(self) -> dict[str, int]:
        counts = np.bincount(self.columns["goal"], minlength=len(GOALS))
        return {GOALS[code]: int(n) for code, n in enumerate(counts.tolist()) if n}

    def unreached_by_goal(self) -> dict[str, dict[str, int]]:
        summary: dict[str, dict[str, int]] = {}
        for item in self.unreached:
            by_obstacle = summary.setdefault(item.goal, {})
            by_obstacle[item.obstacle] = by_obstacle.get(item.obstacle, 0) + 1
        return summary

    def summary_json(self) -> dict[str, Any]:
        return {
            "moves": self.moves,
            "movesByGoal": self.moves_by_goal(),
            "unreached": len(self.unreached),
            "unreachedByGoal": self.unreached_by_goal(),
            "seconds": round(self.seconds, 3),
        }

    def summary_lines(self) -> list[str]:
        """The human summary: what the moves serve, and the goals not reached with what stands in the way."""
        by_goal = sorted(self.moves_by_goal().items(), key=lambda item: (-item[1], GOALS.index(item[0])))
        served = ", ".join(f"{n} {GOAL_WORDS[goal]}" for goal, n in by_goal) or "nothing moves"
        lines = [f"Why they move: {served}."]
        refined = int(np.count_nonzero(self.columns["dir_why"] == DIR_WHY.index("exact-refinement"))) if self.moves else 0
        if refined:
            lines.append(f"Where they go: {refined} of {self.moves} chosen by the exact refinement (the solver's plan: closest to the bands, then the least data moved).")
        if not self.unreached:
            lines.append("Every goal of the plan is reached.")
            return lines
        lines.append(f"Not reached ({len(self.unreached)}):")
        for goal, obstacles in sorted(self.unreached_by_goal().items(), key=lambda item: GOALS.index(item[0]) if item[0] in GOALS else 99):
            parts = "; ".join(f"{n} because {OBSTACLES[obstacle]}" for obstacle, n in sorted(obstacles.items(), key=lambda item: -item[1]))
            lines.append(f"  {GOAL_WORDS.get(goal, goal)}: {parts}")
        return lines

    def chunks(self) -> Iterator[bytes]:
        """The JSON lines: every moved replica (in the plan's order), then every goal not reached.
        The time spent making them is added to `seconds` (not the time the caller spends writing them)."""
        cache: dict[str, dict[int, bytes]] = {}
        for start in range(0, self.moves, CHUNK):
            started = time.perf_counter()
            chunk = _move_lines(self._plan, self.rows[start : start + CHUNK], {k: v[start : start + CHUNK] for k, v in self.columns.items()}, cache)
            self.seconds += time.perf_counter() - started
            yield chunk
        if self.unreached:
            yield b"".join(orjson.dumps(item.to_json()) + b"\n" for item in self.unreached)


# The moves ------------------------------------------------------------------------------------


def explain(plan: Plan, before: Balance, after: Balance) -> Explanation:
    """The reasons of `plan`, from the cluster `before` and `after` it (report.balance_of)."""
    started = time.perf_counter()
    moves = _Moves(plan, before, after)
    usage = _DirectoryUsage.of(plan, before, after)
    goal, subject_kind = _goals_served(moves, usage)
    subject_broker, subject_dir = _subject_places(moves, subject_kind)
    measures = _Measures.of(moves, usage, goal, subject_broker, subject_dir)
    refined = _refined_by_solver(moves)
    columns = {
        "goal": goal,
        "measure": measures.measure,
        "subject_broker": subject_broker,
        "subject_dir": _subject_dir_column(moves, subject_kind, subject_dir),
        "subject_rack": np.where(goal == _G["rack-rule"], moves.t.broker_rack[moves.src], NO_RACK),
        "before": measures.before,
        "after": measures.after,
        "target": measures.target,
        "low": measures.low,
        "high": measures.high,
        "broker_why": _broker_why(moves, refined),
        "dir_why": _dir_why(moves, refined),
        **_target_figures(moves, usage),
    }
    unreached = _unreached(plan, before, after, usage)
    return Explanation(moves.rows, columns, unreached, time.perf_counter() - started, plan)


class _Moves:
    """The replicas `plan` moves, as columns in table order (partition, then position): where
    each was and where it goes, with the cluster before and after the plan and the planner's
    targets. Every other step of `explain` reads the moves from here."""

    def __init__(self, plan: Plan, before: Balance, after: Balance) -> None:
        assert plan.holders is not None and plan.count_target is not None and plan.count_low is not None and plan.count_high is not None
        assert plan.byte_target is not None and plan.forced is not None and plan.rack_fixes is not None and plan.draining_dirs is not None
        t = plan.tables
        self.plan, self.t, self.request, self.before, self.after = plan, t, plan.request, before, after
        # The planner's targets, narrowed once (the asserts above) for the steps that read them.
        self.holders, self.byte_target = plan.holders, plan.byte_target.astype(np.float64)
        self.count_target, self.count_low, self.count_high = plan.count_target, plan.count_low, plan.count_high
        self.rack_fixes, self.draining_dirs = plan.rack_fixes, plan.draining_dirs
        self.rows = rows = np.flatnonzero(plan.inter_moved | plan.intra_moved)
        self.n = len(rows)
        self.src, self.dst = t.rep_broker[rows].astype(np.int64), plan.new_broker[rows].astype(np.int64)
        self.src_dir, self.dst_dir = t.rep_dir[rows].astype(np.int64), plan.new_dir[rows].astype(np.int64)
        self.inter = plan.inter_moved[rows]
        self.intra = ~self.inter
        self.forced = plan.forced[rows]
        self.src_dir_known = self.src_dir >= 0
        # Directory indexes that are safe to index with (an unknown or broker-chosen directory
        # reads directory 0; the steps mask those rows where it matters).
        self.sd = np.maximum(self.src_dir, 0)
        self.dd = np.maximum(self.dst_dir, 0)
        # Per broker: named by the request (the brokers being added or removed).
        self.named = np.isin(t.broker_ids, np.array(plan.request.brokers, dtype=np.int64))


@dataclass(frozen=True)
class _DirectoryUsage:
    """Per directory: its capacity, its usage (a share of capacity; NaN without one) before and
    after the plan, and the directory kernel's band: around each broker's mean usage once the
    plan is done (the bytes on its online directories that stay, over their capacity),
    `disk_band` wide and never past the capacity threshold (kernels._rebalance)."""

    capacity: np.ndarray
    before: np.ndarray
    after: np.ndarray
    band: DirectoryBand

    @classmethod
    def of(cls, plan: Plan, before: Balance, after: Balance) -> _DirectoryUsage:
        assert plan.draining_dirs is not None
        t = plan.tables
        request = plan.request
        capacity = t.dir_capacity.astype(np.float64)
        counted = t.dir_online & ~plan.draining_dirs
        band = directory_band(t.dir_broker, t.dir_capacity, counted, after.dir_bytes, request.disk_band, request.capacity_threshold, t.broker_count)
        return cls(capacity, _usage(before.dir_bytes, capacity), _usage(after.dir_bytes, capacity), band)


def _usage(dir_bytes: np.ndarray, capacity: np.ndarray) -> np.ndarray:
    return np.divide(dir_bytes, capacity, out=np.full(len(capacity), np.nan), where=capacity > 0)


def _goals_served(m: _Moves, usage: _DirectoryUsage) -> tuple[np.ndarray, np.ndarray]:
    """Per move: the goal it serves (a code of GOALS) and whose measure shows it (a subject kind
    of `_goal_conditions`), from the first of `_goal_conditions` that holds."""
    conditions = _goal_conditions(m, usage)
    # Written from the last condition to the first, so that the first that holds is the one left
    # (a move none holds for takes the last).
    choice = np.full(m.n, len(conditions) - 1, dtype=np.int64)
    for index in range(len(conditions) - 1, -1, -1):
        choice[conditions[index][0]] = index
    goal = np.array([_G[c[1]] for c in conditions], dtype=np.int8)[choice]
    subject_kind = np.array([c[2] for c in conditions])[choice]
    return goal, subject_kind


def _goal_conditions(m: _Moves, usage: _DirectoryUsage) -> list[tuple[np.ndarray, str, str]]:
    """The conditions a move may serve a goal by, in order (the first that holds is its goal):
    per move whether it holds, the goal, and the subject whose measure shows it (its source
    broker "src" or target broker "dst", its source "src-dir" or target directory "dst-dir", or
    its source's "rack")."""
    t, before = m.t, m.before
    src, dst, sd, dd = m.src, m.dst, m.sd, m.dd
    forced, inter, intra, holders, byte_target = m.forced, m.inter, m.intra, m.holders, m.byte_target
    capacity, threshold = usage.capacity, m.request.capacity_threshold
    registered, active = t.broker_registered[src], t.broker_active[src]
    draining = m.src_dir_known & m.draining_dirs[sd]
    goal_is = m.request.goal
    count_before_src, count_before_dst = before.replicas[src], before.replicas[dst]
    bytes_before_src, bytes_before_dst = before.bytes[src], before.bytes[dst]
    tolerance = BYTE_TOLERANCE
    return [
        (forced & (goal_is is Goal.REMOVE_BROKERS) & m.named[src], "remove-brokers", "src"),
        (forced & draining, "drain-dirs", "src-dir"),
        (forced & ~registered, "dead-broker", "src"),
        (forced & registered & ~active, "fenced-broker", "src"),
        (forced, "offline-dir", "src-dir"),  # the rest: replicas in offline directories (and those leaving with them)
        # A replica beyond its rack's limit serves the rack rule when it leaves the rack (the
        # exact refinement may move one within its rack, for another goal).
        (inter & m.rack_fixes[m.rows] & (t.broker_rack[src] != t.broker_rack[dst]), "rack-rule", "rack"),
        (inter & (goal_is is Goal.ADD_BROKERS) & m.named[dst], "add-brokers", "dst"),
        (inter & holders[src] & (count_before_src > m.count_high[src]), "replica-count", "src"),
        (inter & holders[src] & (bytes_before_src > byte_target[src] * (1 + tolerance)), "bytes", "src"),
        (inter & holders[dst] & (count_before_dst < m.count_low[dst]), "replica-count", "dst"),
        (inter & holders[dst] & (bytes_before_dst < byte_target[dst] * (1 - tolerance)), "bytes", "dst"),
        (inter & holders[src] & (count_before_src > m.count_target[src]), "replica-count", "src"),
        (inter & holders[src] & (bytes_before_src > byte_target[src]), "bytes", "src"),
        (inter, "evenness", "src"),
        (intra & m.src_dir_known & (before.dir_bytes[sd] > np.floor(capacity[sd] * threshold)) & (capacity[sd] > 0), "capacity-threshold", "src-dir"),
        (intra & (usage.before[sd] > usage.band.high[sd]), "directory-band", "src-dir"),
        (intra & (usage.before[dd] < usage.band.low[dd]), "directory-band", "dst-dir"),
        (intra, "directory-band", "src-dir"),
    ]


def _subject_places(m: _Moves, subject_kind: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per move: the broker and the directory its goal's measure is read at (the target's where
    the subject is the target, else the source's)."""
    return np.where(subject_kind == "dst", m.dst, m.src), np.where(subject_kind == "dst-dir", m.dd, m.sd)


def _subject_dir_column(m: _Moves, subject_kind: np.ndarray, subject_dir: np.ndarray) -> np.ndarray:
    """The directory a line's goal names: only for a directory's goal, and none (-1) where the
    source directory is not known."""
    names_dir = np.isin(subject_kind, ["src-dir", "dst-dir"]) & ((subject_kind == "dst-dir") | m.src_dir_known)
    return np.where(names_dir, subject_dir, -1)


@dataclass
class _Measures:
    """Per move: the measure its goal is read by (a code of MEASURES), the subject's value of it
    before and after the plan, its target and band (NaN where the goal has none). Made by `of`,
    one kind of goal at a time."""

    measure: np.ndarray
    before: np.ndarray
    after: np.ndarray
    target: np.ndarray
    low: np.ndarray
    high: np.ndarray

    @classmethod
    def of(cls, m: _Moves, usage: _DirectoryUsage, goal: np.ndarray, broker: np.ndarray, directory: np.ndarray) -> _Measures:
        nan = np.full(m.n, np.nan)
        measures = cls(np.zeros(m.n, dtype=np.int8), nan.copy(), nan.copy(), nan.copy(), nan.copy(), nan.copy())
        measures._replica_counts(m, goal, broker)
        measures._broker_bytes(m, goal, broker)
        measures._directories(m, usage, goal, directory)
        measures._rack_rule(m, goal)
        return measures

    def _replica_counts(self, m: _Moves, goal: np.ndarray, b: np.ndarray) -> None:
        """Goals read by the subject broker's replica count: the band where the broker has one,
        0 where the goal empties it."""
        by_count = np.isin(goal, [_G["replica-count"], _G["add-brokers"], _G["remove-brokers"], _G["dead-broker"], _G["fenced-broker"], _G["evenness"]])
        self.measure[by_count] = MEASURES.index("replicas")
        self.before[by_count], self.after[by_count] = m.before.replicas[b[by_count]], m.after.replicas[b[by_count]]
        banded = by_count & np.isin(goal, [_G["replica-count"], _G["add-brokers"], _G["evenness"]]) & m.holders[b]
        self.target[banded], self.low[banded], self.high[banded] = m.count_target[b[banded]], m.count_low[b[banded]], m.count_high[b[banded]]
        emptied = by_count & np.isin(goal, [_G["remove-brokers"], _G["dead-broker"], _G["fenced-broker"]])
        self.target[emptied] = 0

    def _broker_bytes(self, m: _Moves, goal: np.ndarray, b: np.ndarray) -> None:
        """The byte goal: the subject broker's bytes, its target and band in whole bytes."""
        by_bytes = goal == _G["bytes"]
        self.measure[by_bytes] = MEASURES.index("bytes")
        self.before[by_bytes], self.after[by_bytes] = m.before.bytes[b[by_bytes]], m.after.bytes[b[by_bytes]]
        target_bytes = m.byte_target[b[by_bytes]]
        self.target[by_bytes] = np.floor(target_bytes)  # whole bytes, as the report's perBroker bytesTarget
        self.low[by_bytes], self.high[by_bytes] = np.round(target_bytes * (1 - BYTE_TOLERANCE)), np.round(target_bytes * (1 + BYTE_TOLERANCE))

    def _directories(self, m: _Moves, usage: _DirectoryUsage, goal: np.ndarray, d: np.ndarray) -> None:
        """Goals of a directory: the bytes of one being left (to 0), or the usage of one past the
        capacity threshold (up to it) or outside its band (around its broker's mean)."""
        leaving_dir = np.isin(goal, [_G["drain-dirs"], _G["offline-dir"]])
        self.measure[leaving_dir] = MEASURES.index("bytes")
        self.before[leaving_dir], self.after[leaving_dir] = m.before.dir_bytes[d[leaving_dir]], m.after.dir_bytes[d[leaving_dir]]
        self.target[leaving_dir] = 0
        by_usage = np.isin(goal, [_G["capacity-threshold"], _G["directory-band"]])
        self.measure[by_usage] = MEASURES.index("usagePercent")
        self.before[by_usage], self.after[by_usage] = usage.before[d[by_usage]] * 100, usage.after[d[by_usage]] * 100
        self.target[by_usage] = usage.band.mean[d[by_usage]] * 100
        self.low[by_usage], self.high[by_usage] = usage.band.low[d[by_usage]] * 100, usage.band.high[d[by_usage]] * 100
        # The capacity threshold has no target, only a ceiling (written over the band just set).
        over_threshold = goal == _G["capacity-threshold"]
        self.target[over_threshold], self.low[over_threshold] = np.nan, np.nan
        self.high[over_threshold] = m.request.capacity_threshold * 100

    def _rack_rule(self, m: _Moves, goal: np.ndarray) -> None:
        """The rack rule: how many replicas of the partition the source's rack held, before and
        after, and the most one rack may hold."""
        t = m.t
        by_rack = goal == _G["rack-rule"]
        self.measure[by_rack] = MEASURES.index("replicasInRack")
        rack_rows = m.rows[by_rack]
        rack = t.broker_rack[m.src[by_rack]]
        self.before[by_rack] = _in_rack(t, t.rep_broker, rack_rows, rack)
        self.after[by_rack] = _in_rack(t, m.plan.new_broker, rack_rows, rack)
        rf = np.diff(t.part_offsets)[t.rep_part[rack_rows]]
        limits = _rack_limits(m.plan, rf)
        self.target[by_rack] = limits[rf] if len(rf) else np.zeros(0)


def _refined_by_solver(m: _Moves) -> np.ndarray:
    """Per move: its partition was placed by the exact refinement (refine.py): the solver chose
    its brokers and directories (closest to the bands, then the least data moved), not the
    heuristic's rules that `_broker_why` and `_dir_why` name otherwise."""
    plan = m.plan
    return plan.refined[m.t.rep_part[m.rows]] if plan.refined is not None else np.zeros(m.n, dtype=bool)


def _broker_why(m: _Moves, refined: np.ndarray) -> np.ndarray:
    """Per move, why its target broker (a code of BROKER_WHY): it was under its target (count or
    bytes), a broker being added, or the best the rules left (the rack rule kept and room
    found), or the rack rule had to break; none for a move between directories."""
    t, plan, inter, dst = m.t, m.plan, m.inter, m.dst
    violating_after, _ = rack_violations(t, plan.new_broker, m.request.rack_mode)
    broke_rule = t.partitions_with(violating_after)[t.rep_part[m.rows]] & np.isin(t.rep_part[m.rows], list(plan.unsatisfiable))
    return np.select(
        [
            m.intra,
            inter & refined,
            inter & broke_rule,
            inter & (m.request.goal is Goal.ADD_BROKERS) & m.named[dst],
            inter & m.holders[dst] & (m.before.replicas[dst] < m.count_target[dst]),
            inter & m.holders[dst] & (m.before.bytes[dst] < m.byte_target[dst]),
        ],
        [0, 6, 1, 2, 3, 4],
        5,
    ).astype(np.int8)


def _dir_why(m: _Moves, refined: np.ndarray) -> np.ndarray:
    """Per move, why its target directory (a code of DIR_WHY): the one that ends least used among
    those with room (a new or displaced replica, kernels._place), the one furthest below its
    broker's mean with room (a move between directories, kernels._rebalance), or none had room
    (the broker chooses)."""
    return np.where(m.dst_dir == BROKER_CHOOSES, 2, np.where(refined, 3, np.where(m.inter | m.forced, 0, 1))).astype(np.int8)


def _target_figures(m: _Moves, usage: _DirectoryUsage) -> dict[str, np.ndarray]:
    """Per move, the figures its line gives for where it goes: the target broker's replicas and
    bytes (before, after, target) and its directory's usage in percent (before, after)."""
    before, after, dst = m.before, m.after, m.dst
    return {
        "dst_replicas": np.stack([before.replicas[dst], after.replicas[dst], m.count_target[dst]], axis=1),
        "dst_bytes": np.stack([before.bytes[dst], after.bytes[dst], np.floor(m.byte_target[dst])], axis=1),
        "dst_usage": np.stack([usage.before[m.dd] * 100, usage.after[m.dd] * 100], axis=1),
    }


MEASURES = ("replicas", "bytes", "usagePercent", "replicasInRack")
# "exact-refinement": the exact refinement's solver chose it (closest to the bands, then the least data moved).
BROKER_WHY = ("same-broker", "rack-rule-broken", "added-broker", "under-replica-target", "under-byte-target", "best-allowed", "exact-refinement")
DIR_WHY = ("least-used-with-room", "most-under-mean-with-room", "broker-chooses", "exact-refinement")


def _in_rack(t: Any, broker: np.ndarray, rows: np.ndarray, rack: np.ndarray) -> np.ndarray:
    """Per row: how many replicas of its partition sit in `rack` where `broker` places them."""
    partition = t.rep_part[rows]
    start = t.part_offsets[partition]
    rf = t.part_offsets[partition + 1] - start
    count = np.zeros(len(rows), dtype=np.int64)
    for k in range(int(rf.max(initial=0))):
        present = k < rf
        index = np.where(present, start + k, 0)
        count += present & (t.broker_rack[broker[index]] == rack)
    return count


def _number(value: float) -> float | int | None:
    if value != value:  # NaN
        return None
    if float(value).is_integer():
        return int(value)
    return round(float(value), 2)


def _move_lines(plan: Plan, rows: np.ndarray, c: dict[str, np.ndarray], cache: dict[str, dict[int, bytes]]) -> bytes:
    """The JSON lines of these moved replicas. A line is made of pieces that depend on few
    values (a broker and directory; a goal's subject; a target broker's figures), each dumped
    once into `cache` (by an integer key made for all rows at once) and joined: what one dump of
    the whole line would give, several times faster."""
    t = plan.tables
    topics, labels, racks = t.topics, t.dir_labels, t.racks
    broker_ids = t.broker_ids.tolist()
    dirs = len(labels) + 2  # directory codes from -2 (BROKER_CHOOSES) up
    partition = t.rep_part[rows]
    topic = t.part_topic[partition].tolist()
    pid = t.part_id[partition].tolist()
    size = t.rep_size[rows].tolist()
    src, dst = t.rep_broker[rows].astype(np.int64), plan.new_broker[rows].astype(np.int64)
    src_dir, dst_dir = t.rep_dir[rows].astype(np.int64), plan.new_dir[rows].astype(np.int64)
    from_keys = (src * dirs + src_dir + 2).tolist()
    to_keys = (dst * dirs + dst_dir + 2).tolist()
    subject_rack = c["subject_rack"].tolist()
    goal_keys = ((c["goal"].astype(np.int64) * t.broker_count + c["subject_broker"]) * dirs + c["subject_dir"] + 2).tolist()
    broker_keys = (c["broker_why"].astype(np.int64) * t.broker_count + dst).tolist()
    dir_keys = (c["dir_why"].astype(np.int64) * dirs + dst_dir + 2).tolist()
    places, goals, brokers, directories, topic_texts = (cache.setdefault(name, {}) for name in ("place", "goal", "broker", "dir", "topic"))

    def place(key: int) -> bytes:
        broker, directory = divmod(key, dirs)
        directory -= 2
        text = places[key] = orjson.dumps({"broker": broker_ids[broker], "dir": labels[directory] if directory >= 0 else None})
        return text

    def goal(i: int) -> bytes:
        g, srack, sb, sdir = int(c["goal"][i]), subject_rack[i], int(c["subject_broker"][i]), int(c["subject_dir"][i])
        data: dict[str, Any] = {"kind": GOALS[g]}
        if srack != NO_RACK:
            data["topic"], data["partition"], data["rack"] = topics[topic[i]], pid[i], racks[srack]
        else:
            data["broker"] = broker_ids[sb]
            if sdir >= 0:
                data["dir"] = labels[sdir]
        data["measure"] = MEASURES[int(c["measure"][i])]
        data["before"], data["after"] = _number(c["before"][i]), _number(c["after"][i])
        target, low, high = c["target"][i], c["low"][i], c["high"][i]
        if target == target:
            data["target"] = _number(target)
        if low == low or high == high:
            data["band"] = [_number(low), _number(high)]
        text = orjson.dumps(data)
        if srack == NO_RACK:  # a rack rule's goal names its partition: not shared
            goals[goal_keys[i]] = text
        return text

    def broker(i: int) -> bytes:
        why = int(c["broker_why"][i])
        if why == 0:  # the same broker: no choice was made
            text = b"null"
        else:
            figures = {"replicas": [_number(x) for x in c["dst_replicas"][i]], "bytes": [_number(x) for x in c["dst_bytes"][i]]}
            text = orjson.dumps({"why": BROKER_WHY[why], **figures})
        brokers[broker_keys[i]] = text
        return text

    def directory(i: int) -> bytes:
        why = int(c["dir_why"][i])
        data: dict[str, Any] = {"why": DIR_WHY[why]}
        if why != 2:
            data["usagePercent"] = [_number(x) for x in c["dst_usage"][i]]
        text = directories[dir_keys[i]] = orjson.dumps(data)
        return text

    out = bytearray()
    line = b'{"topic":%b,"partition":%d,"bytes":%b,"from":%b,"to":%b,"goal":%b,"broker":%b,"dir":%b}\n'
    for i in range(len(rows)):
        topic_text = topic_texts.get(topic[i]) or topic_texts.setdefault(topic[i], orjson.dumps(topics[topic[i]]))
        out += line % (
            topic_text,
            pid[i],
            b"%d" % size[i],
            places.get(from_keys[i]) or place(from_keys[i]),
            places.get(to_keys[i]) or place(to_keys[i]),
            (goals.get(goal_keys[i]) if subject_rack[i] == NO_RACK else None) or goal(i),
            brokers.get(broker_keys[i]) or broker(i),
            directories.get(dir_keys[i]) or directory(i),
        )
    return bytes(out)


def _rack_limits(plan: Plan, rf: np.ndarray) -> np.ndarray:
    """The most replicas of a partition one rack may hold, indexed by replication factor (up to
    the largest in `rf`), as the planner's rack rule has it."""
    request = plan.request
    return np.array([rack_limit(r, request.rack_mode, plan.racks_available) for r in range(int(rf.max(initial=0)) + 1)])


# The goals not reached -----------------------------------------------------------------------


def _unreached(plan: Plan, before: Balance, after: Balance, usage: _DirectoryUsage) -> list[Unreached]:
    """The goals the plan does not reach, one kind at a time (the order of their lines): the
    replica count and byte bands of brokers (balance, add-brokers), directory bands (balance,
    rebalance-disks), then, whatever the goal, the capacity threshold, replicas that had to move,
    the rack rule and excluded brokers."""
    goal = plan.request.goal
    moved = plan.inter_moved | plan.intra_moved
    limit = _threshold_limit(plan)
    obstacles = _BrokerObstacles(plan, after, moved, limit)
    items: list[Unreached] = []
    if goal in (Goal.BALANCE, Goal.ADD_BROKERS):
        items += _replica_counts_unreached(plan, before, after, obstacles)
        items += _broker_bytes_unreached(plan, before, after, obstacles)
    if goal in (Goal.BALANCE, Goal.REBALANCE_DISKS):
        items += _directories_unreached(plan, before, after, usage.after, usage.band.low, usage.band.high, usage.band.broker_mean, obstacles.broker_room)
    items += _capacity_unreached(plan, before, after, usage, limit)
    items += _forced_unreached(plan, moved)
    items += _rack_rule_unreached(plan)
    items += _excluded_brokers_unreached(plan, before, after)
    return items


def _threshold_limit(plan: Plan) -> np.ndarray:
    """Per directory: the most bytes it may hold under the capacity threshold (no limit without a
    known capacity)."""
    capacity = plan.tables.dir_capacity.astype(np.float64)
    return np.where(capacity > 0, np.floor(capacity * plan.request.capacity_threshold), np.inf)


class _BrokerObstacles:
    """What keeps a broker outside its replica count or byte band after the plan (`obstacle`),
    read from what the plan left: the replicas that could still have moved, those the
    min.insync.replicas budget holds, and the room left in each broker's open directories."""

    def __init__(self, plan: Plan, after: Balance, moved: np.ndarray, limit: np.ndarray) -> None:
        assert plan.movable is not None and plan.open_dirs is not None and plan.receivable is not None
        t = plan.tables
        self.plan, self.receivable = plan, plan.receivable
        room = np.where(plan.open_dirs, np.maximum(limit - after.dir_bytes, 0), 0)
        # A directory of unknown capacity has room for anything.
        self.broker_room = np.bincount(t.dir_broker, weights=np.where(np.isfinite(room), room, 1e30), minlength=t.broker_count)
        sizes = t.rep_size
        self.left = left = plan.movable & ~moved  # replicas that could still have moved
        free = left & ~_held_by_min_insync(plan)  # of those, the ones min.insync.replicas lets leave
        # Per broker (where the replicas are after the plan), and over the cluster.
        self.movable_left = np.bincount(plan.new_broker[left], minlength=t.broker_count)
        self.unlocked_left = np.bincount(plan.new_broker[free], minlength=t.broker_count)
        self.smallest_left = np.full(t.broker_count, np.inf)
        np.minimum.at(self.smallest_left, plan.new_broker[free], sizes[free].astype(np.float64))
        self.smallest_anywhere = float(sizes[free].min()) if free.any() else np.inf
        self.smallest_unmoved = float(sizes[left].min()) if left.any() else np.inf
        self.rack_keeps_out = _rack_keeps_out(plan)

    def obstacle(self, b: int, over: bool, gap: float | None = None) -> str:
        """What keeps broker `b` outside its band: over it (`gap`: bytes above the band's bottom)
        or under it (`gap`: bytes below its top); no `gap` for replica counts."""
        if self.plan.budget_exhausted:
            return "budget"
        if over:
            return self._over(b, gap)
        return self._under(b, gap)

    def bytes_obstacle(self, b: int, after: float, low: float, high: float) -> str:
        """What keeps broker `b`'s bytes (`after` the plan) outside its band `low` to `high`."""
        over = after > high
        return self.obstacle(b, over, after - low if over else high - after)

    def _over(self, b: int, gap: float | None) -> str:
        # Why nothing more left it: nothing may move, min.insync.replicas holds what may, what
        # may is larger than the band, or no broker the rules allow took it.
        if self.movable_left[b] == 0:
            return "nothing-movable"
        if self.unlocked_left[b] == 0:
            return "min-insync"
        if gap is not None and self.smallest_left[b] > gap:
            return "replicas-too-large"
        return "no-allowed-replica"

    def _under(self, b: int, gap: float | None) -> str:
        # Why nothing more came to it: from what it may take to what could come.
        if not self.receivable[b]:
            return "cannot-receive"
        if not self.left.any():
            return "nothing-movable"
        if self.broker_room[b] < self.smallest_unmoved:
            return "full-directories"
        if not np.isfinite(self.smallest_anywhere):
            # Every replica that could come to it is held by min.insync.replicas (its directories have room).
            return "min-insync"
        if self.broker_room[b] < self.smallest_anywhere:
            return "full-directories"
        if self.rack_keeps_out(b):
            return "rack-rule"
        if gap is not None and self.smallest_anywhere > gap:
            return "replicas-too-large"
        return "no-allowed-replica"


def _held_by_min_insync(plan: Plan) -> np.ndarray:
    """Per replica: in sync, and its partition may lose no more in-sync replicas. What the
    planner's min.insync.replicas budget leaves once the plan is made: an in-sync replica may
    leave only while its partition keeps min.insync.replicas in sync (core._Placement)."""
    t = plan.tables
    in_sync_count = np.bincount(t.rep_part[t.rep_in_sync], minlength=len(t.part_id))
    in_sync_leaving = np.bincount(t.rep_part[t.rep_in_sync & plan.inter_moved], minlength=len(t.part_id))
    isr_budget = in_sync_count - t.part_min_isr - in_sync_leaving
    return t.rep_in_sync & (isr_budget[t.rep_part] <= 0)


def _replica_counts_unreached(plan: Plan, before: Balance, after: Balance, obstacles: _BrokerObstacles) -> list[Unreached]:
    """Brokers that hold replicas in the plan and end outside their replica count band."""
    assert plan.holders is not None and plan.count_low is not None and plan.count_high is not None and plan.count_target is not None
    ids = plan.tables.broker_ids.tolist()
    outside = plan.holders & ((after.replicas < plan.count_low) | (after.replicas > plan.count_high))
    return [
        Unreached(
            "replica-count", obstacles.obstacle(b, bool(after.replicas[b] > plan.count_high[b])), {"broker": ids[b]}, "replicas",
            int(before.replicas[b]), int(after.replicas[b]), int(plan.count_target[b]), (int(plan.count_low[b]), int(plan.count_high[b])),
        )
        for b in np.flatnonzero(outside).tolist()
    ]


def _broker_bytes_unreached(plan: Plan, before: Balance, after: Balance, obstacles: _BrokerObstacles) -> list[Unreached]:
    """Brokers that hold replicas in the plan and end outside their byte band (the byte target
    give or take BYTE_TOLERANCE, in whole bytes)."""
    assert plan.holders is not None and plan.byte_target is not None
    ids = plan.tables.broker_ids.tolist()
    target = plan.byte_target.astype(np.float64)
    low, high = np.round(target * (1 - BYTE_TOLERANCE)), np.round(target * (1 + BYTE_TOLERANCE))
    outside = plan.holders & ((after.bytes < low) | (after.bytes > high))
    return [
        Unreached(
            "bytes", obstacles.bytes_obstacle(b, float(after.bytes[b]), float(low[b]), float(high[b])), {"broker": ids[b]}, "bytes",
            int(before.bytes[b]), int(after.bytes[b]), int(target[b]), (int(low[b]), int(high[b])),
        )
        for b in np.flatnonzero(outside).tolist()
    ]


def _capacity_unreached(plan: Plan, before: Balance, after: Balance, usage: _DirectoryUsage, limit: np.ndarray) -> list[Unreached]:
    """Every online directory past the capacity threshold after the plan, whatever the goal."""
    assert plan.open_dirs is not None and plan.broker_has_offline_dir is not None
    t = plan.tables
    ids = t.broker_ids.tolist()
    labels = t.dir_labels  # a list made on each read: read once
    capacity = usage.capacity
    full = t.dir_online & (capacity > 0) & (after.dir_bytes > limit)
    items = []
    for d in np.flatnonzero(full).tolist():
        b = int(t.dir_broker[d])
        obstacle = (
            "budget" if plan.budget_exhausted else "excluded-broker" if not plan.open_dirs[d] and _excluded_broker(plan, b)
            else "offline-directory" if plan.broker_has_offline_dir[b] else "full-directories"
        )
        items.append(
            Unreached(
                "capacity-threshold", obstacle, {"broker": ids[b], "dir": labels[d]}, "usagePercent",
                _number(before.dir_bytes[d] / capacity[d] * 100), _number(usage.after[d] * 100), None,
                (0, _number(plan.request.capacity_threshold * 100)),
            )
        )
    return items


def _forced_unreached(plan: Plan, moved: np.ndarray) -> list[Unreached]:
    """Replicas that had to move and did not (the first 10,000), under the goal that made them
    move: the request's, or leaving a dead or fenced broker or an offline directory."""
    assert plan.forced is not None
    t = plan.tables
    goal = plan.request.goal
    ids = t.broker_ids.tolist()
    labels = t.dir_labels
    stuck = plan.forced & ~moved
    items = []
    for rep in np.flatnonzero(stuck)[:10_000].tolist():
        p = int(t.rep_part[rep])
        b = int(t.rep_broker[rep])
        d = int(t.rep_dir[rep])
        cause = (
            "remove-brokers" if goal is Goal.REMOVE_BROKERS else "drain-dirs" if goal is Goal.DRAIN_DIRS
            else "dead-broker" if not t.broker_registered[b] else "fenced-broker" if not t.broker_active[b] else "offline-dir"
        )
        obstacle = "budget" if plan.budget_exhausted else "no-allowed-broker"
        subject = {"topic": t.topics[t.part_topic[p]], "partition": int(t.part_id[p]), "broker": ids[b]}
        if d >= 0:
            subject["dir"] = labels[d]
        items.append(Unreached(cause, obstacle, subject))
    return items


def _rack_rule_unreached(plan: Plan) -> list[Unreached]:
    """Partitions that break the rack rule after the plan, one line each."""
    t = plan.tables
    violating, _ = rack_violations(t, plan.new_broker, plan.request.rack_mode)
    if not violating.any():
        return []
    racks_short = plan.racks_available < len(t.racks)
    return [
        Unreached("rack-rule", _rack_rule_obstacle(plan, p, racks_short), {"topic": t.topics[t.part_topic[p]], "partition": int(t.part_id[p])})
        for p in np.unique(t.rep_part[violating]).tolist()
    ]


def _rack_rule_obstacle(plan: Plan, p: int, racks_short: bool) -> str:
    """What keeps partition `p` breaking the rack rule (`racks_short`: fewer racks can be used
    than the cluster has), from the first that applies: the racks, the planner's own reason, the
    goal, the budget, an excluded broker or what may not move."""
    assert plan.excluded is not None
    t = plan.tables
    reason = plan.unsatisfiable.get(p, "")
    if racks_short:
        return "too-few-racks"
    if reason and "moves only what it must" not in reason:
        return "no-allowed-broker"
    if plan.request.goal is not Goal.BALANCE:
        return "goal-moves-only-what-it-must"
    if plan.budget_exhausted:
        return "budget"
    if plan.excluded[t.part_offsets[p] : t.part_offsets[p + 1]].any():
        return "excluded-broker" if _partition_on_excluded_broker(plan, p) else "nothing-movable"
    return "no-allowed-broker"


def _excluded_brokers_unreached(plan: Plan, before: Balance, after: Balance) -> list[Unreached]:
    """Excluded brokers keep what they hold, balanced or not: one line for each that holds replicas."""
    t = plan.tables
    items = []
    for broker_id in plan.request.exclude_brokers:
        b = t.broker_index.get(broker_id)
        if b is not None and before.replicas[b]:
            items.append(
                Unreached("replica-count", "excluded-broker", {"broker": broker_id}, "replicas", int(before.replicas[b]), int(after.replicas[b]))
            )
    return items


def _excluded_broker(plan: Plan, b: int) -> bool:
    return int(plan.tables.broker_ids[b]) in plan.request.exclude_brokers


def _partition_on_excluded_broker(plan: Plan, p: int) -> bool:
    t = plan.tables
    brokers = t.broker_ids[plan.new_broker[t.part_offsets[p] : t.part_offsets[p + 1]]]
    return bool(np.isin(brokers, np.array(plan.request.exclude_brokers, dtype=np.int64)).any())


def _rack_keeps_out(plan: Plan) -> Callable[[int], bool]:
    """Whether broker `b` (under its band) could take no replica that may move from a broker
    over its target, because each one's partition already holds as many replicas in `b`'s rack
    as the rule allows. The same for every broker of a rack (a broker under its band is not
    over its target): worked out once per rack."""
    t = plan.tables
    assert plan.movable is not None and plan.count_target is not None
    counts = np.bincount(plan.new_broker, minlength=t.broker_count)
    candidates = np.flatnonzero(plan.movable & (counts > plan.count_target)[plan.new_broker])
    rf = np.diff(t.part_offsets)[t.rep_part[candidates]]
    limits = _rack_limits(plan, rf)
    by_rack: dict[int, bool] = {}

    def keeps_out(b: int) -> bool:
        rack = int(t.broker_rack[b])
        if rack < 0 or not t.racks or candidates.size == 0:
            return False
        if rack not in by_rack:
            # Its partition's replicas in the rack, not counting itself (moving within a rack keeps the count).
            in_rack = _in_rack(t, plan.new_broker, candidates, np.full(candidates.size, rack))
            in_rack -= t.broker_rack[plan.new_broker[candidates]] == rack
            by_rack[rack] = bool((in_rack >= limits[rf]).all())
        return by_rack[rack]

    return keeps_out


def _directories_unreached(
    plan: Plan, before: Balance, after: Balance, usage_after: np.ndarray, dir_low: np.ndarray, dir_high: np.ndarray, mean: np.ndarray,
    broker_room: np.ndarray,
) -> list[Unreached]:
    """Directories outside the band around their broker's mean usage after the plan (brokers
    whose directories all have a known capacity, as the directory kernel balances only those)."""
    t = plan.tables
    assert plan.open_dirs is not None and plan.draining_dirs is not None and plan.movable is not None and plan.broker_has_offline_dir is not None
    capacity = t.dir_capacity.astype(np.float64)
    counted = t.dir_online & ~plan.draining_dirs & (capacity > 0) & ~np.isnan(mean[t.dir_broker]) & t.broker_registered[t.dir_broker]
    several = np.bincount(t.dir_broker[counted], minlength=t.broker_count) >= 2
    counted &= several[t.dir_broker]
    outside = counted & ((usage_after < dir_low - 1e-9) | (usage_after > dir_high + 1e-9))
    if not outside.any():
        return []
    ids = t.broker_ids.tolist()
    labels = t.dir_labels
    receiving = counted & plan.open_dirs
    room_under_band = np.maximum(dir_high * capacity - after.dir_bytes, 0)
    placed = (plan.new_dir >= 0)
    movable_rows = np.flatnonzero(placed & ~plan.excluded)
    smallest = np.full(len(capacity), np.inf)
    np.minimum.at(smallest, plan.new_dir[movable_rows], t.rep_size[movable_rows].astype(np.float64))
    items = []
    for d in np.flatnonzero(outside).tolist():
        b = int(t.dir_broker[d])
        over = bool(usage_after[d] > dir_high[d])
        if plan.budget_exhausted:
            obstacle = "budget"
        elif _excluded_broker(plan, b):
            obstacle = "excluded-broker"
        elif plan.broker_has_offline_dir[b] or not t.broker_active[b]:
            obstacle = "offline-directory" if plan.broker_has_offline_dir[b] else "cannot-receive"
        elif not over and not plan.open_dirs[d]:
            obstacle = "cordoned"
        else:
            others = [o for o in t.broker_dirs(b).tolist() if o != d and receiving[o]]
            if over and (not others or smallest[d] > room_under_band[others].max()):
                obstacle = "replicas-too-large"
            else:
                obstacle = "band-out-of-reach"
        items.append(
            Unreached(
                "directory-band", obstacle, {"broker": ids[b], "dir": labels[d]}, "usagePercent",
                _number(before.dir_bytes[d] / capacity[d] * 100), _number(usage_after[d] * 100), _number(mean[b] * 100),
                (_number(dir_low[d] * 100), _number(dir_high[d] * 100)),
            )
        )
    return items
