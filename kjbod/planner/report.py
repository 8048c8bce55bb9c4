"""What a plan does: balance before and after, what moves, and how close that is to the least
that had to move. Also the plan itself as Kafka's reassignment JSON."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import numpy as np

from kjbod.common.json_text import camel_json
from kjbod.planner.core import BYTE_TOLERANCE as BYTE_BAND
from kjbod.planner.core import Goal, Plan, rack_violations
from kjbod.planner.tables import ClusterTables

if TYPE_CHECKING:
    from kjbod.planner.explain import Explanation
    from kjbod.planner.refine import Refinement


@dataclass(frozen=True)
class Spreads:
    """How far a placement is from balance (see Balance.spreads)."""

    replicas_max_deviation_percent: float
    leaders_max_deviation_percent: float
    # The same in leaders: the furthest any broker is from the mean.
    leaders_max_deviation: float
    bytes_max_deviation_percent: float
    replicas_min: int
    replicas_max: int
    # None when no directory's capacity is known: usage cannot be told.
    directory_usage_max_points_from_broker_mean: float | None
    directory_usage_max_percent: float | None
    rack_violations: int

    def to_json(self) -> dict[str, Any]:
        return camel_json(self)


@dataclass(frozen=True)
class BrokerFigures:
    broker: int
    rack: str | None
    replicas_before: int
    replicas_after: int
    replicas_target: int | None
    leaders_before: int
    leaders_after: int
    bytes_before: int
    bytes_after: int
    bytes_target: int | None
    usage_percent_before: float | None
    usage_percent_after: float | None


@dataclass(frozen=True)
class DirectoryFigures:
    broker: int
    path: str
    directory_id: str
    state: str  # online, cordoned, draining or offline
    capacity_bytes: int | None
    replicas_before: int
    replicas_after: int
    leaders_before: int
    leaders_after: int
    bytes_before: int
    bytes_after: int
    usage_percent_before: float | None
    usage_percent_after: float | None


@dataclass(frozen=True)
class Unsatisfiable:
    """A partition whose rack rule or capacity threshold cannot be met, and why."""

    topic: str
    partition: int
    reason: str


@dataclass
class Balance:
    """Loads per broker and per directory for one placement."""

    replicas: np.ndarray
    leaders: np.ndarray
    bytes: np.ndarray
    dir_bytes: np.ndarray
    dir_replicas: np.ndarray
    dir_leaders: np.ndarray
    rack_violations: int

    def spreads(
        self, t: ClusterTables, brokers: np.ndarray, kept_dirs: np.ndarray, replica_share: np.ndarray, byte_share: np.ndarray,
        leader_brokers: np.ndarray | None = None,
    ) -> Spreads:
        """Spreads over the brokers that hold load (each broker's deviation from its share of
        the total: the plan's targets, which follow capacity for bytes and the rack rule) and,
        for directories, the online ones that stay (a directory being drained is leaving).
        Leaders are measured over `leader_brokers` (the brokers they were spread over) when given."""

        def deviation(values: np.ndarray, share: np.ndarray | None = None, over: np.ndarray = brokers) -> float:
            if not over.any():
                return 0.0
            expected = values[over].sum() * (share if share is not None else 1.0 / over.sum())
            return float(np.max(np.abs(values[over] - expected) / np.maximum(expected, 1e-9)))

        leaders_over = leader_brokers if leader_brokers is not None and leader_brokers.any() else brokers
        leader_mean = float(self.leaders[leaders_over].sum()) / max(int(leaders_over.sum()), 1)

        dir_capacity = t.dir_capacity.astype(np.float64)
        known = kept_dirs & (dir_capacity > 0) & brokers[t.dir_broker]
        usage = np.divide(self.dir_bytes, dir_capacity, out=np.zeros(len(dir_capacity)), where=dir_capacity > 0)
        broker_used = np.bincount(t.dir_broker[known], weights=self.dir_bytes[known], minlength=t.broker_count)
        broker_cap = np.bincount(t.dir_broker[known], weights=dir_capacity[known], minlength=t.broker_count)
        broker_mean = np.divide(broker_used, broker_cap, out=np.zeros(t.broker_count), where=broker_cap > 0)
        points = np.abs(usage - broker_mean[t.dir_broker])[known] * 100
        return Spreads(
            replicas_max_deviation_percent=round(deviation(self.replicas.astype(np.float64), replica_share) * 100, 3),
            leaders_max_deviation_percent=round(deviation(self.leaders.astype(np.float64), over=leaders_over) * 100, 3),
            leaders_max_deviation=round(float(np.max(np.abs(self.leaders[leaders_over] - leader_mean))), 2) if leaders_over.any() else 0.0,
            bytes_max_deviation_percent=round(deviation(self.bytes, byte_share) * 100, 3),
            replicas_min=int(self.replicas[brokers].min()) if brokers.any() else 0,
            replicas_max=int(self.replicas[brokers].max()) if brokers.any() else 0,
            directory_usage_max_points_from_broker_mean=round(float(points.max()), 3) if known.any() else None,
            directory_usage_max_percent=round(float(usage[known].max()) * 100, 3) if known.any() else None,
            rack_violations=self.rack_violations,
        )


def balance_of(t: ClusterTables, broker: np.ndarray, directory: np.ndarray, position: np.ndarray, plan: Plan) -> Balance:
    size = t.rep_size
    placed = directory >= 0
    leaders = broker[position == 0]
    violating, _ = rack_violations(t, broker, plan.request.rack_mode)
    violating_partitions = len(np.unique(t.rep_part[violating]))
    return Balance(
        replicas=np.bincount(broker, minlength=t.broker_count),
        leaders=np.bincount(leaders, minlength=t.broker_count),
        bytes=np.bincount(broker, weights=size, minlength=t.broker_count),
        dir_bytes=np.bincount(directory[placed], weights=size[placed], minlength=len(t.dir_ids)),
        dir_replicas=np.bincount(directory[placed], minlength=len(t.dir_ids)),
        dir_leaders=np.bincount(directory[placed & (position == 0)], minlength=len(t.dir_ids)),
        rack_violations=violating_partitions,
    )


def lower_bound(plan: Plan, before: Balance) -> int:
    """The least data any plan meeting the same bands must move; the largest of three bounds:

    - at the sources: per broker, what must leave it (a removed or dead broker, a drained or
      failed directory) plus the largest of its smallest replicas beyond its count band, its
      bytes above the byte band and its directories' bytes above their band (each net of what
      must leave);
    - at the destinations: per broker, the larger of what it must receive to reach its byte
      band and what its directories below their band must receive (from other brokers or
      from its own directories);
    - the rack rule: the replicas beyond the rack limit in every partition that breaks it, and
      what must leave.
    """
    t = plan.tables
    request = plan.request
    size = t.rep_size
    forced = plan.forced
    forced_bytes = np.bincount(t.rep_broker[forced], weights=size[forced], minlength=t.broker_count)
    total = forced_bytes.astype(np.float64)
    rack_bound = float(size[forced | plan.rack_fixes].sum())
    incoming_bound = 0.0
    if request.goal in (Goal.BALANCE, Goal.ADD_BROKERS, Goal.REBALANCE_DISKS):
        byte_deficit = np.zeros(t.broker_count)
        holders = plan.holders
        count_excess = np.zeros(t.broker_count, dtype=np.int64)
        byte_excess = np.zeros(t.broker_count)
        if request.goal is not Goal.REBALANCE_DISKS:
            count_excess = np.maximum(before.replicas - np.bincount(t.rep_broker[forced], minlength=t.broker_count) - plan.count_high, 0)
            byte_excess = np.maximum(before.bytes - forced_bytes - plan.byte_target * (1 + BYTE_BAND), 0)
            byte_deficit = np.maximum(plan.byte_target * (1 - BYTE_BAND) - before.bytes, 0)
        smallest = _smallest_sums(t.rep_broker, size, ~forced & plan.movable, count_excess, t.broker_count)
        dir_capacity = t.dir_capacity.astype(np.float64)
        known = t.dir_online & (dir_capacity > 0)
        broker_cap = np.bincount(t.dir_broker[known], weights=dir_capacity[known], minlength=t.broker_count)
        # A broker may end anywhere in its byte band, and its directories' band follows its mean
        # usage: a directory's excess is least when the broker ends at the top of its band, its
        # deficit least at the bottom (the target itself would overstate both: case 48 of
        # bench_optimum, where the bound came out 0.7% above the proven optimum).
        rebalancing = request.goal is Goal.REBALANCE_DISKS
        most_bytes = before.bytes if rebalancing else plan.byte_target * (1 + BYTE_BAND)
        least_bytes = before.bytes if rebalancing else plan.byte_target * (1 - BYTE_BAND)
        mean_high = np.divide(most_bytes, broker_cap, out=np.zeros(t.broker_count), where=broker_cap > 0)
        mean_low = np.divide(least_bytes, broker_cap, out=np.zeros(t.broker_count), where=broker_cap > 0)
        high = (mean_high[t.dir_broker] + request.disk_band) * dir_capacity
        leaving = forced & (t.rep_dir >= 0)
        net = before.dir_bytes - np.bincount(t.rep_dir[leaving], weights=size[leaving], minlength=len(t.dir_ids))
        dir_excess = np.where(known, np.maximum(net - high, 0), 0)
        dir_total = np.bincount(t.dir_broker, weights=dir_excess, minlength=t.broker_count)
        total += np.where(holders, np.maximum.reduce([smallest, byte_excess, dir_total]), 0)
        low = (mean_low[t.dir_broker] - request.disk_band) * dir_capacity
        dir_deficit = np.where(known & plan.open_dirs, np.maximum(low - net, 0), 0)
        deficit_total = np.bincount(t.dir_broker, weights=dir_deficit, minlength=t.broker_count)
        incoming_bound = float(np.where(holders, np.maximum(byte_deficit, deficit_total), 0).sum())
    return int(max(total.sum(), incoming_bound, rack_bound))


def _smallest_sums(broker: np.ndarray, size: np.ndarray, eligible: np.ndarray, k: np.ndarray, brokers: int) -> np.ndarray:
    """Per broker: the sum of its k smallest eligible replica sizes."""
    rows = np.flatnonzero(eligible & (k[broker] > 0))
    order = rows[np.lexsort((size[rows], broker[rows]))]
    owner = broker[order]
    starts = np.searchsorted(owner, owner, side="left")
    rank = np.arange(len(order)) - starts
    taken = rank < k[owner]
    return np.bincount(owner[taken], weights=size[order][taken].astype(np.float64), minlength=brokers)


@dataclass(frozen=True)
class Waves:
    """A plan split into waves (waves.py): each wave's reassignment, and what the split is."""

    reassignments: tuple[dict[str, Any], ...]
    lower_bound: int  # no split under these limits has fewer waves
    max_concurrent_moves_per_broker: int | None
    wave_size: int | None
    partitions: tuple[int, ...]  # per wave
    notes: tuple[str, ...]
    # The files they were written to, once they are.
    files: tuple[str, ...] | None = None

    @property
    def count(self) -> int:
        return len(self.reassignments)

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "count": self.count,
            "lowerBound": self.lower_bound,
            "maxConcurrentMovesPerBroker": self.max_concurrent_moves_per_broker,
            "waveSize": self.wave_size,
            "partitions": list(self.partitions),
            "notes": list(self.notes),
        }
        if self.files is not None:
            data["files"] = list(self.files)
        return data


@dataclass(frozen=True)
class PlanReport:
    """What a plan does (the figures of `reassign plan`'s report), and the plan itself."""

    goal: str
    engine: str  # the engine that ran, as the report names it ("local", "spark (local[*])")
    engine_reason: str  # why it was chosen
    seconds: float
    brokers: int
    directories: int
    partitions: int
    replicas: int
    partitions_changed: int
    replicas_moved_between_brokers: int
    replicas_moved_between_directories: int
    bytes_moved_between_brokers: int
    bytes_moved_between_directories: int
    bytes_moved: int
    lower_bound_bytes: int
    moved_over_lower_bound: float | None
    preferred_leaders_changed: int
    partitions_reordered_only: int
    before: Spreads
    after: Spreads
    notes: tuple[str, ...]
    per_broker: tuple[BrokerFigures, ...]
    per_directory: tuple[DirectoryFigures, ...]
    # Directories that stay, with a known capacity, by usage in 10-point bins (the last is 90%+).
    usage_histogram_before: tuple[int, ...]
    usage_histogram_after: tuple[int, ...]
    unsatisfiable: tuple[Unsatisfiable, ...]
    # The plan as Kafka's reassignment JSON, and as ordered waves when asked for.
    reassignment: dict[str, Any]
    waves: Waves | None = None
    # What the exact refinement did (refine.py).
    refinement: Refinement | None = None
    # Why each replica moves, and the goals not reached (`--explain`), and the file it went to.
    explanation: Explanation | None = None
    explanation_file: str | None = None

    def to_json(self) -> dict[str, Any]:
        """The report's JSON document (the plan itself is not in it)."""
        data: dict[str, Any] = {
            "goal": self.goal,
            "engine": self.engine,
            "engineReason": self.engine_reason,
            "seconds": self.seconds,
            "brokers": self.brokers,
            "directories": self.directories,
            "partitions": self.partitions,
            "replicas": self.replicas,
            "partitionsChanged": self.partitions_changed,
            "replicasMovedBetweenBrokers": self.replicas_moved_between_brokers,
            "replicasMovedBetweenDirectories": self.replicas_moved_between_directories,
            "bytesMovedBetweenBrokers": self.bytes_moved_between_brokers,
            "bytesMovedBetweenDirectories": self.bytes_moved_between_directories,
            "bytesMoved": self.bytes_moved,
            "lowerBoundBytes": self.lower_bound_bytes,
            "movedOverLowerBound": self.moved_over_lower_bound,
            "preferredLeadersChanged": self.preferred_leaders_changed,
            "partitionsReorderedOnly": self.partitions_reordered_only,
            "before": self.before.to_json(),
            "after": self.after.to_json(),
            "notes": list(self.notes),
            "perBroker": [camel_json(row) for row in self.per_broker],
            "perDirectory": [camel_json(row) for row in self.per_directory],
            "directoryUsageHistogram": {"before": list(self.usage_histogram_before), "after": list(self.usage_histogram_after)},
            "unsatisfiable": [camel_json(item) for item in self.unsatisfiable],
        }
        if self.refinement is not None:
            data["refinement"] = self.refinement.to_json()
        if self.waves is not None:
            data["waves"] = self.waves.to_json()
        if self.explanation is not None:
            data["explanation"] = {"file": self.explanation_file, **self.explanation.summary_json()}
        return data

    def with_waves(self, plan: Plan, *, per_broker: int | None, size: int | None) -> PlanReport:
        """This report with the plan split into waves (waves.py)."""
        from kjbod.planner.waves import split_into_waves

        split = split_into_waves(plan, per_broker=per_broker, size=size, threshold=plan.request.capacity_threshold)
        # The whole plan's entries, once; each wave takes its own (partitions of a wave are changed
        # partitions, in table order, as the entries are).
        changed = plan.changed_partitions
        entries = self.reassignment["partitions"]
        waves = Waves(
            reassignments=tuple(
                {"version": 1, "partitions": [entries[i] for i in np.searchsorted(changed, partitions).tolist()]}
                for partitions in split.partitions
            ),
            lower_bound=split.lower_bound,
            max_concurrent_moves_per_broker=per_broker,
            wave_size=size,
            partitions=tuple(len(partitions) for partitions in split.partitions),
            notes=tuple(split.notes),
        )
        return replace(self, waves=waves)

    def with_wave_files(self, files: list[str]) -> PlanReport:
        """This report once its waves are written to `files`."""
        assert self.waves is not None
        return replace(self, waves=replace(self.waves, files=tuple(files)))


def report(plan: Plan, seconds: float, engine: str, engine_reason: str = "", *, explain: bool = False) -> PlanReport:
    """The report of `plan`; with `explain`, also why each replica moves (explain.py)."""
    t = plan.tables
    size = t.rep_size
    before = balance_of(t, t.rep_broker, t.rep_dir, t.rep_pos.astype(np.int64), plan)
    after = balance_of(t, plan.new_broker, plan.new_dir, plan.new_pos.astype(np.int64), plan)
    brokers = plan.holders if plan.holders.any() else t.broker_registered
    kept_dirs = t.dir_online & ~plan.draining_dirs
    replica_share = _shares(plan.count_target, brokers)
    byte_share = _shares(plan.byte_target, brokers)
    inter = plan.inter_moved
    intra = plan.intra_moved
    moved_bytes = int(size[inter].sum() + size[intra].sum())
    bound = lower_bound(plan, before)
    refinement = plan.refinement
    if refinement is not None and refinement.lower_bound is not None:
        bound = max(bound, refinement.lower_bound)
    changed = plan.changed_partitions
    preferred_before = t.rep_broker[t.rep_pos == 0]
    preferred_after = np.empty(len(t.part_id), dtype=np.int64)
    preferred_after[t.rep_part[plan.new_pos == 0]] = plan.new_broker[plan.new_pos == 0]
    preferred_before_by_part = np.empty(len(t.part_id), dtype=np.int64)
    preferred_before_by_part[t.rep_part[t.rep_pos == 0]] = preferred_before
    leaders_changed = int(np.count_nonzero(preferred_after != preferred_before_by_part))
    return PlanReport(
        goal=plan.request.goal.value,
        engine=engine,
        engine_reason=engine_reason,
        seconds=round(seconds, 2),
        brokers=int(brokers.sum()),
        directories=int(t.dir_online.sum()),
        partitions=len(t.part_id),
        replicas=t.replica_count,
        partitions_changed=len(changed),
        replicas_moved_between_brokers=int(inter.sum()),
        replicas_moved_between_directories=int(intra.sum()),
        bytes_moved_between_brokers=int(size[inter].sum()),
        bytes_moved_between_directories=int(size[intra].sum()),
        bytes_moved=moved_bytes,
        lower_bound_bytes=bound,
        moved_over_lower_bound=round(moved_bytes / bound, 3) if bound else (1.0 if moved_bytes == 0 else None),
        preferred_leaders_changed=leaders_changed,
        partitions_reordered_only=int(plan.leaders_reordered_only),
        before=before.spreads(t, brokers, kept_dirs, replica_share, byte_share, plan.leader_holders),
        after=after.spreads(t, brokers, kept_dirs, replica_share, byte_share, plan.leader_holders),
        notes=tuple(plan.notes),
        per_broker=_per_broker(t, before, after, plan),
        per_directory=_per_directory(t, before, after, plan),
        usage_histogram_before=_histogram(t, before, kept_dirs),
        usage_histogram_after=_histogram(t, after, kept_dirs),
        unsatisfiable=tuple(
            Unsatisfiable(t.topics[t.part_topic[p]], int(t.part_id[p]), reason) for p, reason in sorted(plan.unsatisfiable.items())
        ),
        reassignment=reassignment_json(plan),
        refinement=refinement,
        explanation=_explain(plan, before, after) if explain else None,
    )


def _explain(plan: Plan, before: Balance, after: Balance) -> Explanation:
    from kjbod.planner.explain import explain

    return explain(plan, before, after)


def _shares(targets: np.ndarray, brokers: np.ndarray) -> np.ndarray:
    values = targets[brokers].astype(np.float64)
    return values / values.sum() if values.sum() > 0 else np.full(len(values), 1.0 / max(len(values), 1))


def _per_broker(t: ClusterTables, before: Balance, after: Balance, plan: Plan) -> tuple[BrokerFigures, ...]:
    capacity = t.broker_capacity
    holders = plan.holders
    return tuple(
        BrokerFigures(
            broker=int(t.broker_ids[b]),
            rack=t.racks[t.broker_rack[b]] if t.broker_rack[b] >= 0 else None,
            replicas_before=int(before.replicas[b]),
            replicas_after=int(after.replicas[b]),
            replicas_target=int(plan.count_target[b]) if holders[b] else None,
            leaders_before=int(before.leaders[b]),
            leaders_after=int(after.leaders[b]),
            bytes_before=int(before.bytes[b]),
            bytes_after=int(after.bytes[b]),
            bytes_target=int(plan.byte_target[b]) if holders[b] else None,
            usage_percent_before=round(float(before.bytes[b]) / capacity[b] * 100, 2) if capacity[b] else None,
            usage_percent_after=round(float(after.bytes[b]) / capacity[b] * 100, 2) if capacity[b] else None,
        )
        for b in range(t.broker_count)
    )


def _per_directory(t: ClusterTables, before: Balance, after: Balance, plan: Plan) -> tuple[DirectoryFigures, ...]:
    capacity = t.dir_capacity

    def state(d: int) -> str:
        return "offline" if not t.dir_online[d] else "draining" if plan.draining_dirs[d] else "cordoned" if t.dir_cordoned[d] else "online"

    return tuple(
        DirectoryFigures(
            broker=int(t.broker_ids[t.dir_broker[d]]),
            path=t.dir_labels[d],
            directory_id=t.dir_ids[d],
            state=state(d),
            capacity_bytes=int(capacity[d]) or None,
            replicas_before=int(before.dir_replicas[d]),
            replicas_after=int(after.dir_replicas[d]),
            leaders_before=int(before.dir_leaders[d]),
            leaders_after=int(after.dir_leaders[d]),
            bytes_before=int(before.dir_bytes[d]),
            bytes_after=int(after.dir_bytes[d]),
            usage_percent_before=round(float(before.dir_bytes[d]) / capacity[d] * 100, 2) if capacity[d] else None,
            usage_percent_after=round(float(after.dir_bytes[d]) / capacity[d] * 100, 2) if capacity[d] else None,
        )
        for d in range(len(t.dir_ids))
    )


def _histogram(t: ClusterTables, balance: Balance, kept_dirs: np.ndarray) -> tuple[int, ...]:
    """Directories that stay, with a known capacity, by usage in 10-point bins (the last is 90%+)."""
    capacity = t.dir_capacity.astype(np.float64)
    known = kept_dirs & (capacity > 0)
    usage = balance.dir_bytes[known] / capacity[known]
    bins = np.minimum((usage * 10).astype(np.int64), 9)
    return tuple(np.bincount(bins, minlength=10).tolist())


def reassignment_json(plan: Plan, partitions: np.ndarray | None = None) -> dict[str, Any]:
    """Kafka's reassignment JSON for the partitions that change (or those of them given, a
    wave): replicas in their new order, and `log_dirs` with the target directory of every moved
    replica ("any" for the others). Partitions come in topic, then partition order (the
    tables' order)."""
    t = plan.tables
    changed = plan.changed_partitions if partitions is None else np.sort(np.intersect1d(partitions, plan.changed_partitions))
    rows = np.flatnonzero(np.isin(t.rep_part, changed))
    rows = rows[np.lexsort((plan.new_pos[rows], t.rep_part[rows]))]
    moved = (plan.inter_moved | plan.intra_moved)[rows] & (plan.new_dir[rows] >= 0)
    brokers = t.broker_ids[plan.new_broker[rows]].tolist()
    paths = np.array(t.dir_labels, dtype=object)
    dirs = np.where(moved, paths[np.maximum(plan.new_dir[rows], 0)], "any").tolist()
    bounds = np.r_[0, np.cumsum(np.diff(t.part_offsets)[changed])].tolist()
    topics = t.topics
    partitions = [
        {"topic": topics[topic], "partition": pid, "replicas": brokers[start:end], "log_dirs": dirs[start:end]}
        for topic, pid, start, end in zip(t.part_topic[changed].tolist(), t.part_id[changed].tolist(), bounds[:-1], bounds[1:])
    ]
    return {"version": 1, "partitions": partitions}
