"""The planner's hard rules, checked independently of the planner's code (replica by replica,
in plain Python), so a planner bug cannot hide behind the same arithmetic."""

from __future__ import annotations

import math
import re

from kjbod.planner.core import Goal, Plan, PlanRequest
from kjbod.planner.tables import ClusterTables


def _rows(t: ClusterTables, partition: int) -> range:
    return range(int(t.part_offsets[partition]), int(t.part_offsets[partition + 1]))


def hard_rule_violations(t: ClusterTables, plan: Plan) -> list[str]:
    request: PlanRequest = plan.request
    problems: list[str] = []
    broker_ids = [int(b) for b in t.broker_ids]
    named = set(request.brokers)
    excluded_brokers = set(request.exclude_brokers)
    pattern = re.compile(request.exclude_topics) if request.exclude_topics else None
    draining = {
        d
        for d in range(len(t.dir_ids))
        for broker_id, text in request.dirs
        if broker_ids[t.dir_broker[d]] == broker_id and text.rstrip("/") in (t.dir_labels[d].rstrip("/"), t.dir_ids[d])
    }
    size = [int(s) for s in t.rep_size]
    moves = 0
    moved_bytes = 0
    usage_before = [0] * len(t.dir_ids)
    usage_after = [0] * len(t.dir_ids)
    for r in range(t.replica_count):
        if t.rep_dir[r] >= 0:
            usage_before[t.rep_dir[r]] += size[r]
        if plan.new_dir[r] >= 0:
            usage_after[plan.new_dir[r]] += size[r]
    offline_dir = [not t.dir_online[d] for d in range(len(t.dir_ids))]
    brokers_with_offline_dir = {int(t.dir_broker[d]) for d in range(len(t.dir_ids)) if offline_dir[d]}
    for p in range(len(t.part_id)):
        rows = _rows(t, p)
        name = f"{t.topics[t.part_topic[p]]}-{t.part_id[p]}"
        # What `reassign check` refuses: a partition whose replica set changes keeping a replica
        # in an offline directory; a replica changing directory on a broker with an offline one.
        set_changes = any(int(plan.new_broker[r]) != int(t.rep_broker[r]) for r in rows)
        for r in rows:
            in_offline_dir = t.rep_dir[r] >= 0 and offline_dir[t.rep_dir[r]] and t.broker_registered[t.rep_broker[r]]
            if set_changes and in_offline_dir and int(plan.new_broker[r]) == int(t.rep_broker[r]):
                problems.append(f"{name}: its replica set changes but keeps a replica in an offline directory")
            changes_dir = plan.new_dir[r] >= 0 and plan.new_dir[r] != t.rep_dir[r]
            if int(plan.new_broker[r]) == int(t.rep_broker[r]) and changes_dir and int(t.rep_broker[r]) in brokers_with_offline_dir:
                problems.append(f"{name}: a replica changes directory on a broker with an offline directory")
        new_brokers = [int(plan.new_broker[r]) for r in rows]
        if len(set(new_brokers)) != len(new_brokers):
            problems.append(f"{name}: a broker holds two replicas")
        if sorted(int(plan.new_pos[r]) for r in rows) != list(range(len(rows))):
            problems.append(f"{name}: replica positions are not a permutation")
        topic_excluded = pattern is not None and pattern.fullmatch(t.topics[t.part_topic[p]]) is not None
        in_sync_leaving = 0
        forced_leaving = False
        for r in rows:
            source, target = int(t.rep_broker[r]), int(plan.new_broker[r])
            inter = source != target
            intra = not inter and t.rep_dir[r] >= 0 and plan.new_dir[r] >= 0 and plan.new_dir[r] != t.rep_dir[r]
            if (inter or intra or plan.new_pos[r] != t.rep_pos[r]) and topic_excluded:
                problems.append(f"{name}: excluded topic changed")
            if inter or intra:
                moves += 1
                moved_bytes += size[r]
            if inter:
                if not t.broker_active[target]:
                    problems.append(f"{name}: replica moved to inactive broker {broker_ids[target]}")
                if broker_ids[target] in excluded_brokers or broker_ids[source] in excluded_brokers:
                    problems.append(f"{name}: replica moved to or from an excluded broker")
                if request.goal is Goal.REMOVE_BROKERS and broker_ids[target] in named:
                    problems.append(f"{name}: replica moved to a broker being removed")
                if request.goal is Goal.ADD_BROKERS and broker_ids[target] not in named:
                    problems.append(f"{name}: add-brokers moved a replica to {broker_ids[target]}, not a new broker")
                if request.goal is Goal.REBALANCE_DISKS:
                    problems.append(f"{name}: rebalance-disks moved a replica between brokers")
                if t.rep_in_sync[r]:
                    in_sync_leaving += 1
                    forced_leaving |= bool(plan.forced[r])
                if t.rep_is_leader[r] and request.goal not in (Goal.BALANCE, Goal.REBALANCE_DISKS) and not plan.forced[r]:
                    problems.append(f"{name}: a leader moved although the goal does not move leaders")
            if inter or intra:
                d = int(plan.new_dir[r])
                if d >= 0:
                    if int(t.dir_broker[d]) != target:
                        problems.append(f"{name}: target directory is not on the target broker")
                    if not t.dir_online[d] or t.dir_cordoned[d] or d in draining:
                        problems.append(f"{name}: replica placed in a directory that may not receive ({t.dir_labels[d]})")
        # kafka-reassign-partitions refuses a plan naming a broker that is not live ("Unknown broker id").
        changed = any(int(plan.new_broker[r]) != int(t.rep_broker[r]) or plan.new_pos[r] != t.rep_pos[r]
                      or (t.rep_dir[r] >= 0 and plan.new_dir[r] >= 0 and plan.new_dir[r] != t.rep_dir[r]) for r in rows)
        if changed and not all(t.broker_active[int(plan.new_broker[r])] for r in rows):
            problems.append(f"{name}: planned although a replica stays on a fenced or unregistered broker")
        isr = sum(1 for r in rows if t.rep_in_sync[r])
        if in_sync_leaving > max(isr - int(t.part_min_isr[p]), 0) and not forced_leaving:
            problems.append(f"{name}: {in_sync_leaving} in-sync replicas leave at once (min.insync.replicas {t.part_min_isr[p]})")
        problems += _rack_problems(t, plan, p, name, rows)
    for d in range(len(t.dir_ids)):
        capacity = int(t.dir_capacity[d])
        if capacity > 0 and usage_after[d] > usage_before[d] and usage_after[d] > capacity * request.capacity_threshold:
            problems.append(f"directory {t.dir_labels[d]} of broker {broker_ids[t.dir_broker[d]]} filled past the threshold")
    if request.max_moves is not None and moves > request.max_moves:
        problems.append(f"{moves} moves, more than --max-moves {request.max_moves}")
    if request.max_bytes is not None and moved_bytes > request.max_bytes:
        problems.append(f"{moved_bytes} bytes moved, more than --max-bytes {request.max_bytes}")
    return problems


def _rack_problems(t: ClusterTables, plan: Plan, p: int, name: str, rows: range) -> list[str]:
    """A partition the plan moves either meets the rack rule over all racks or is listed."""
    if not t.racks or all(plan.new_broker[r] == t.rep_broker[r] for r in rows):
        return []
    racks = [int(t.broker_rack[plan.new_broker[r]]) for r in rows if t.broker_rack[plan.new_broker[r]] >= 0]
    rf = len(rows)
    limit = 1 if plan.request.rack_mode.value == "strict" and len(t.racks) >= rf else math.ceil(rf / len(t.racks))
    worst = max((racks.count(x) for x in set(racks)), default=0)
    if worst > limit and p not in plan.unsatisfiable:
        return [f"{name}: breaks the rack rule ({worst} replicas in one rack) and is not listed"]
    return []
