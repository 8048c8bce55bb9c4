"""What a plan does: balance before and after, what moves, and how close that is to the least
that had to move. Also the plan itself as Kafka's reassignment JSON."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from kjbod.planner.core import BYTE_TOLERANCE as BYTE_BAND
from kjbod.planner.core import Goal, Plan, rack_violations
from kjbod.planner.tables import UNKNOWN_DIR, ClusterTables


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
    ) -> dict[str, Any]:
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
        return {
            "replicasMaxDeviationPercent": round(deviation(self.replicas.astype(np.float64), replica_share) * 100, 3),
            "leadersMaxDeviationPercent": round(deviation(self.leaders.astype(np.float64), over=leaders_over) * 100, 3),
            # The same in leaders: the furthest any broker is from the mean.
            "leadersMaxDeviation": round(float(np.max(np.abs(self.leaders[leaders_over] - leader_mean))), 2) if leaders_over.any() else 0.0,
            "bytesMaxDeviationPercent": round(deviation(self.bytes, byte_share) * 100, 3),
            "replicasMin": int(self.replicas[brokers].min()) if brokers.any() else 0,
            "replicasMax": int(self.replicas[brokers].max()) if brokers.any() else 0,
            # None when no directory's capacity is known: usage cannot be told.
            "directoryUsageMaxPointsFromBrokerMean": round(float(points.max()), 3) if known.any() else None,
            "directoryUsageMaxPercent": round(float(usage[known].max()) * 100, 3) if known.any() else None,
            "rackViolations": self.rack_violations,
        }


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
        final_bytes = plan.byte_target if request.goal is not Goal.REBALANCE_DISKS else before.bytes
        mean = np.divide(final_bytes, broker_cap, out=np.zeros(t.broker_count), where=broker_cap > 0)
        high = (mean[t.dir_broker] + request.disk_band) * dir_capacity
        leaving = forced & (t.rep_dir >= 0)
        net = before.dir_bytes - np.bincount(t.rep_dir[leaving], weights=size[leaving], minlength=len(t.dir_ids))
        dir_excess = np.where(known, np.maximum(net - high, 0), 0)
        dir_total = np.bincount(t.dir_broker, weights=dir_excess, minlength=t.broker_count)
        total += np.where(holders, np.maximum.reduce([smallest, byte_excess, dir_total]), 0)
        low = (mean[t.dir_broker] - request.disk_band) * dir_capacity
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


@dataclass
class PlanReport:
    data: dict[str, Any]
    reassignment: dict[str, Any]
    unsatisfiable: list[dict[str, Any]] = field(default_factory=list)
    # The plan as ordered waves (each a reassignment), when asked for.
    waves: list[dict[str, Any]] | None = None


def add_waves(plan_report: PlanReport, plan: Plan, *, per_broker: int | None, size: int | None) -> None:
    """Split the plan into waves (waves.py) and add them, and what they are, to the report."""
    from kjbod.planner.waves import split_into_waves

    split = split_into_waves(plan, per_broker=per_broker, size=size, threshold=plan.request.capacity_threshold)
    # The whole plan's entries, once; each wave takes its own (partitions of a wave are changed
    # partitions, in table order, as the entries are).
    changed = plan.changed_partitions
    entries = plan_report.reassignment["partitions"]
    plan_report.waves = [
        {"version": 1, "partitions": [entries[i] for i in np.searchsorted(changed, partitions).tolist()]} for partitions in split.partitions
    ]
    plan_report.data["waves"] = {
        "count": len(split.partitions),
        "lowerBound": split.lower_bound,
        "maxConcurrentMovesPerBroker": per_broker,
        "waveSize": size,
        "partitions": [len(partitions) for partitions in split.partitions],
        "notes": split.notes,
    }


def report(plan: Plan, seconds: float, engine: str, engine_reason: str = "") -> PlanReport:
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
    changed = plan.changed_partitions
    preferred_before = t.rep_broker[t.rep_pos == 0]
    preferred_after = np.empty(len(t.part_id), dtype=np.int64)
    preferred_after[t.rep_part[plan.new_pos == 0]] = plan.new_broker[plan.new_pos == 0]
    preferred_before_by_part = np.empty(len(t.part_id), dtype=np.int64)
    preferred_before_by_part[t.rep_part[t.rep_pos == 0]] = preferred_before
    leaders_changed = int(np.count_nonzero(preferred_after != preferred_before_by_part))
    data: dict[str, Any] = {
        "goal": plan.request.goal.value,
        "engine": engine,
        "engineReason": engine_reason,
        "seconds": round(seconds, 2),
        "brokers": int(brokers.sum()),
        "directories": int(t.dir_online.sum()),
        "partitions": len(t.part_id),
        "replicas": t.replica_count,
        "partitionsChanged": len(changed),
        "replicasMovedBetweenBrokers": int(inter.sum()),
        "replicasMovedBetweenDirectories": int(intra.sum()),
        "bytesMovedBetweenBrokers": int(size[inter].sum()),
        "bytesMovedBetweenDirectories": int(size[intra].sum()),
        "bytesMoved": moved_bytes,
        "lowerBoundBytes": bound,
        "movedOverLowerBound": round(moved_bytes / bound, 3) if bound else (1.0 if moved_bytes == 0 else None),
        "preferredLeadersChanged": leaders_changed,
        "partitionsReorderedOnly": int(plan.leaders_reordered_only),
        "before": before.spreads(t, brokers, kept_dirs, replica_share, byte_share, plan.leader_holders),
        "after": after.spreads(t, brokers, kept_dirs, replica_share, byte_share, plan.leader_holders),
        "notes": list(plan.notes),
        "perBroker": _per_broker(t, before, after, plan),
        "perDirectory": _per_directory(t, before, after, plan),
        "directoryUsageHistogram": {"before": _histogram(t, before, kept_dirs), "after": _histogram(t, after, kept_dirs)},
    }
    unsatisfiable = [
        {"topic": t.topics[t.part_topic[p]], "partition": int(t.part_id[p]), "reason": reason}
        for p, reason in sorted(plan.unsatisfiable.items())
    ]
    data["unsatisfiable"] = unsatisfiable
    return PlanReport(data, reassignment_json(plan), unsatisfiable)


def _shares(targets: np.ndarray, brokers: np.ndarray) -> np.ndarray:
    values = targets[brokers].astype(np.float64)
    return values / values.sum() if values.sum() > 0 else np.full(len(values), 1.0 / max(len(values), 1))


def _per_broker(t: ClusterTables, before: Balance, after: Balance, plan: Plan) -> list[dict[str, Any]]:
    capacity = t.broker_capacity
    holders = plan.holders
    rows = []
    for b in range(t.broker_count):
        rows.append(
            {
                "broker": int(t.broker_ids[b]),
                "rack": t.racks[t.broker_rack[b]] if t.broker_rack[b] >= 0 else None,
                "replicasBefore": int(before.replicas[b]),
                "replicasAfter": int(after.replicas[b]),
                "replicasTarget": int(plan.count_target[b]) if holders[b] else None,
                "leadersBefore": int(before.leaders[b]),
                "leadersAfter": int(after.leaders[b]),
                "bytesBefore": int(before.bytes[b]),
                "bytesAfter": int(after.bytes[b]),
                "bytesTarget": int(plan.byte_target[b]) if holders[b] else None,
                "usagePercentBefore": round(float(before.bytes[b]) / capacity[b] * 100, 2) if capacity[b] else None,
                "usagePercentAfter": round(float(after.bytes[b]) / capacity[b] * 100, 2) if capacity[b] else None,
            }
        )
    return rows


def _per_directory(t: ClusterTables, before: Balance, after: Balance, plan: Plan) -> list[dict[str, Any]]:
    capacity = t.dir_capacity
    rows = []
    for d in range(len(t.dir_ids)):
        state = "offline" if not t.dir_online[d] else "draining" if plan.draining_dirs[d] else "cordoned" if t.dir_cordoned[d] else "online"
        rows.append(
            {
                "broker": int(t.broker_ids[t.dir_broker[d]]),
                "path": t.dir_labels[d],
                "directoryId": t.dir_ids[d],
                "state": state,
                "capacityBytes": int(capacity[d]) or None,
                "replicasBefore": int(before.dir_replicas[d]),
                "replicasAfter": int(after.dir_replicas[d]),
                "leadersBefore": int(before.dir_leaders[d]),
                "leadersAfter": int(after.dir_leaders[d]),
                "bytesBefore": int(before.dir_bytes[d]),
                "bytesAfter": int(after.dir_bytes[d]),
                "usagePercentBefore": round(float(before.dir_bytes[d]) / capacity[d] * 100, 2) if capacity[d] else None,
                "usagePercentAfter": round(float(after.dir_bytes[d]) / capacity[d] * 100, 2) if capacity[d] else None,
            }
        )
    return rows


def _histogram(t: ClusterTables, balance: Balance, kept_dirs: np.ndarray) -> list[int]:
    """Directories that stay, with a known capacity, by usage in 10-point bins (the last is 90%+)."""
    capacity = t.dir_capacity.astype(np.float64)
    known = kept_dirs & (capacity > 0)
    usage = balance.dir_bytes[known] / capacity[known]
    bins = np.minimum((usage * 10).astype(np.int64), 9)
    return np.bincount(bins, minlength=10).tolist()


def reassignment_json(plan: Plan, partitions: np.ndarray | None = None) -> dict[str, Any]:
    """Kafka's reassignment JSON for the partitions that change (or those of them given, a
    wave): replicas in their new order, and `log_dirs` with the target directory of every moved
    replica ("any" for the others). Partitions come in topic, then partition order (the
    tables' order)."""
    t = plan.tables
    changed = plan.changed_partitions if partitions is None else np.sort(np.intersect1d(partitions, plan.changed_partitions))
    rows = np.flatnonzero(np.isin(t.rep_part, changed))
    rows = rows[np.lexsort((plan.new_pos[rows], t.rep_part[rows]))]
    moved = (plan.inter_moved | plan.intra_moved)[rows] & (plan.new_dir[rows] != UNKNOWN_DIR)
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
