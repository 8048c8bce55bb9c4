"""The checks (see kjbod.tools.plan_check.model.CHECKS for what each one means).

Each check reads the shared columns of a Context and returns an Outcome: a summary line,
violations, notes, or why it did not apply. Nothing here changes the cluster state.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from kjbod.common.java import TopicPartition, int_hash, java_duplicates, tp_hash, tp_key, tp_text
from kjbod.common.kafka_configs import (
    BROKER_THROTTLES,
    LOG_DIRS_THROTTLED_RATE,
    TOPIC_THROTTLES,
)
from kjbod.common.units import human_bytes, human_rate
from kjbod.controller.result import MAX_RECORDS_PER_USER_OP
from kjbod.errors import UserError
from kjbod.image import Image
from kjbod.image.cluster_columns import NO_RACK, ClusterColumns
from kjbod.image.configs import min_insync
from kjbod.records import CONFIG_RESOURCE_BROKER, CONFIG_RESOURCE_TOPIC
from kjbod.common.kafka_release import NEWEST, KafkaRelease
from kjbod.tools.plan_check.duration import SIMULATION_BUDGET, Estimate, bandwidth_estimate, simulate_plan, simulation_work
from kjbod.tools.plan_check.facts import (
    BROKER_CHOOSES,
    UNKNOWN_DIR,
    WIDEST_SCAN,
    ClusterFacts,
    Completed,
    PlanFacts,
    placement,
    repeated_in_row,
    small_unique,
)
from kjbod.tools.plan_check.model import DirectoryRef, Issue, Outcome, sorted_unique, truncated
from kjbod.tools.plan_check.policy import Policy
from kjbod.tools.reassign.json_format import ReassignmentPlan, validate_execute_plan

# Directories listed one finding each up to this many; beyond it, one finding names them all.
MAX_DIRECTORY_FINDINGS = 20


@dataclass
class Context:
    image: Image
    plan: ReassignmentPlan
    cluster: ClusterFacts
    facts: PlanFacts
    policy: Policy
    throttle: int  # bytes/s; negative: none
    log_dir_throttle: int
    # In a sequence of plans: partitions as the earlier ones leave them, and the estimate's
    # method chosen for the whole sequence (None: the policy's).
    completed: Mapping[TopicPartition, Completed] = field(default_factory=dict)
    estimate_method: str | None = None
    # The Kafka the plan will be executed on (its controller's refusals differ by release).
    release: KafkaRelease = NEWEST

    @cached_property
    def placement(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(bytes, replicas, bytes added, replicas added) per directory once the plan completes."""
        return placement(self.facts, self.cluster)

    @property
    def model(self) -> ClusterColumns:
        return self.cluster.model

    @cached_property
    def target_broker_index(self) -> tuple[np.ndarray, np.ndarray]:
        return self.cluster.registered_index(self.facts.t_broker)

    @cached_property
    def removing(self) -> set[int]:
        return set(self.policy.removing_brokers)

    def directory(self, index: int) -> DirectoryRef:
        model = self.model
        return DirectoryRef(int(model.dir_broker_ids[index]), model.dir_ids[index], model.dir_paths[index])

    def directories(self, indexes: np.ndarray | list[int]) -> tuple[DirectoryRef, ...]:
        refs = {self.directory(int(i)) for i in indexes if int(i) >= 0}
        return tuple(sorted(refs, key=lambda d: (d.broker, d.path or "", d.directory_id)))

    def dir_label(self, index: int) -> str:
        return self.directory(index).label

    @cached_property
    def execute_validation(self) -> str | None:
        """Kafka's message when execute's own validation refuses the plan, else None."""
        if not self._may_fail_execute_validation():
            return None
        try:
            validate_execute_plan(self.plan)
        except UserError as exc:
            return exc.message.removeprefix("Error: ")
        return None

    def _may_fail_execute_validation(self) -> bool:
        """A vectorized look for what validate_execute_plan refuses (an empty list, an empty or
        repeating replica list, a partition twice), so that Kafka's (slower) rules only run to
        word the message when something is there to find."""
        columns = self.plan.columns
        if not columns.count or len(columns.winners) != columns.count:
            return True
        lengths = columns.lengths
        if (lengths == 0).any():
            return True
        rows = np.repeat(np.arange(columns.count, dtype=np.int64), lengths)
        return bool(repeated_in_row(rows, columns.brokers, columns.starts).any())

    @cached_property
    def inter_bytes(self) -> int:
        return int(self.facts.size[self.facts.t_row[self.facts.t_new]].sum())

    @cached_property
    def intra_bytes(self) -> int:
        return int(self.facts.size[self.facts.t_row[self.facts.t_moving]].sum())


def _plural(count: int, word: str, plural: str | None = None) -> str:
    return f"{count} {word if count == 1 else (plural or word + 's')}"


def _examples(facts: PlanFacts, rows: np.ndarray, describe: Callable[[int], str], limit: int = 10) -> str:
    """The first rows (in partition order) described, and how many more there are."""
    rows = np.asarray(rows, np.int64)
    ordered = rows[np.argsort(facts.rank[rows], kind="stable")].tolist()  # every row, repeats kept
    text = ", ".join(describe(r) for r in ordered[:limit])
    return text + (f" (+{len(ordered) - limit} more)" if len(ordered) > limit else "")


def _percent(fraction: float) -> str:
    return f"{fraction * 100:.1f}%"


# plan.format -------------------------------------------------------------------------------------


def check_format(ctx: Context) -> Outcome:
    plan = ctx.plan
    outcome = Outcome(summary=f"{_plural(plan.columns.count, 'partition')} in Kafka's reassignment format")
    refused = ctx.execute_validation
    if refused is not None:
        # What execute stops at (Kafka's message); the partitions behind every such problem.
        involved = [entry.tp for entry in plan.entries if not entry.replicas]
        involved += java_duplicates([entry.tp for entry in plan.entries], tp_hash)
        involved += [entry.tp for entry in plan.entries if java_duplicates(entry.replicas, int_hash)]
        outcome.violations.append(Issue(refused, partitions=tuple(tp_text(tp) for tp in sorted(set(involved), key=tp_key))))
    facts = ctx.facts
    moves_dir = np.bincount(facts.t_row[facts.t_moving], minlength=facts.count) > 0
    idle = np.flatnonzero(facts.unchanged() & ~moves_dir).tolist()
    if idle:
        outcome.notes.append(
            Issue(
                f"{_plural(len(idle), 'partition')} already {'has' if len(idle) == 1 else 'have'} this assignment: nothing to do for "
                f"{'it' if len(idle) == 1 else 'them'}.",
                partitions=facts.names(idle),
            )
        )
    return outcome


# topic.exists ------------------------------------------------------------------------------------


def check_topics(ctx: Context) -> Outcome:
    facts = ctx.facts
    outcome = Outcome(summary=f"{_plural(facts.count, 'partition')} of {_plural(len(small_unique(facts.topic)[0]), 'topic')} found")
    if facts.unknown_topics:
        topics = sorted(facts.unknown_topics)
        partitions = [tp for tp in ctx.plan.targets() if tp[0] in set(topics)]
        message = f"Topic {topics[0]} not found." if len(topics) == 1 else f"{len(topics)} topics not found: {truncated(topics)}."
        outcome.violations.append(Issue(message, partitions=tuple(tp_text(tp) for tp in sorted(partitions, key=tp_key)), topics=tuple(topics)))
    if facts.missing_partitions:
        missing = sorted(facts.missing_partitions, key=tp_key)
        outcome.violations.append(
            Issue(f"Unable to find partition: {truncated([tp_text(tp) for tp in missing])}", partitions=tuple(tp_text(tp) for tp in missing))
        )
    return outcome


# broker.eligible ---------------------------------------------------------------------------------


def check_brokers(ctx: Context) -> Outcome:
    facts, cluster = ctx.facts, ctx.cluster
    index, registered = ctx.target_broker_index
    brokers = facts.t_broker
    outcome = Outcome(summary=f"{_plural(len(small_unique(brokers)[0]), 'target broker')} checked")

    def add(mask: np.ndarray, describe: Callable[[list[int]], str]) -> None:
        if mask.any():
            ids = sorted(set(brokers[mask].tolist()))
            outcome.violations.append(Issue(describe(ids), partitions=facts.names(facts.t_row[mask]), brokers=tuple(ids)))

    add(
        ~registered,
        lambda ids: (
            f"Unknown broker id {ids[0]}: no such broker is registered." if len(ids) == 1 else f"Unknown broker ids {truncated(ids)}: not registered."
        ),
    )
    fenced = registered & ctx.model.broker_fenced[index]
    add(
        fenced,
        lambda ids: (
            f"{'Broker' if len(ids) == 1 else 'Brokers'} {truncated(ids)} {'is' if len(ids) == 1 else 'are'} fenced: "
            "a replica there cannot catch up, so its reassignment would never complete."
        ),
    )
    shutting = registered & ~fenced & ctx.model.broker_shutting_down[index]
    add(
        shutting,
        lambda ids: (
            f"{'Broker' if len(ids) == 1 else 'Brokers'} {truncated(ids)} {'is' if len(ids) == 1 else 'are'} in controlled shutdown: "
            "a replica there cannot catch up, so its reassignment would never complete."
        ),
    )
    if ctx.removing:
        removing = np.isin(brokers, np.array(sorted(ctx.removing), np.int64))
        add(
            removing,
            lambda ids: (
                f"{'Broker' if len(ids) == 1 else 'Brokers'} {truncated(ids)} {'is' if len(ids) == 1 else 'are'} being removed "
                "(policy removing_brokers): no replica may stay on or move onto it."
            ),
        )
        before = cluster.broker_replicas()
        removed = facts.c_broker[facts.removed]
        for broker in sorted(ctx.removing):
            left = before.get(broker, 0) - int((removed == broker).sum()) + int((brokers[facts.t_new] == broker).sum())
            if left > 0:
                outcome.notes.append(
                    Issue(f"Broker {broker} (being removed) still holds {_plural(left, 'replica')} once the plan completes.", brokers=(broker,))
                )
    return outcome


# logdir.valid -------------------------------------------------------------------------------------


def check_log_dirs(ctx: Context) -> Outcome:
    facts, model = ctx.facts, ctx.model
    _, registered = ctx.target_broker_index
    explicit = facts.t_explicit
    moving = facts.t_moving
    arriving = (facts.t_new | moving) & (facts.t_dir >= 0)
    outcome = Outcome(summary=f"{_plural(int(explicit.sum()), 'explicit log_dirs entry', 'explicit log_dirs entries')} checked")

    unknown = explicit & registered & (facts.t_dir == UNKNOWN_DIR)
    if unknown.any():
        pairs = sorted({(int(b), facts.path_names[int(facts.t_path[i])]) for i, b in zip(np.flatnonzero(unknown).tolist(), facts.t_broker[unknown].tolist())})
        outcome.violations.append(
            Issue(
                "log_dirs entries name no log directory of their broker: " + truncated([f"{b}:{p}" for b, p in pairs]),
                partitions=facts.names(facts.t_row[unknown]),
                brokers=sorted_unique(b for b, _ in pairs),
            )
        )
    target = np.where(facts.t_dir >= 0, facts.t_dir, 0)
    for mask, why in (
        (arriving & ~model.dir_online[target], "offline"),
        (arriving & model.dir_online[target] & model.dir_cordoned[target], "cordoned (it takes no new replicas)"),
    ):
        if mask.any():
            dirs = ctx.directories(facts.t_dir[mask])
            outcome.violations.append(
                Issue(
                    f"Replicas would move into {_plural(len(dirs), 'directory', 'directories')} that {'is' if len(dirs) == 1 else 'are'} {why}: "
                    + truncated([d.label for d in dirs]),
                    partitions=facts.names(facts.t_row[mask]),
                    brokers=sorted_unique(d.broker for d in dirs),
                    directories=dirs,
                )
            )
    source = np.where(facts.t_from >= 0, facts.t_from, 0)
    offline_now = (facts.t_from >= 0) & ~model.dir_online[source]
    # Completion needs every target replica in the ISR, and a replica on a dead disk never rejoins it.
    staying = ~facts.t_new & ~moving & offline_now & facts.changes_set[facts.t_row] & registered
    if staying.any():
        outcome.violations.append(
            Issue(
                f"{_plural(len(np.unique(facts.t_row[staying])), 'partition')} would keep a replica in an offline directory: a reassignment "
                "completes only when every target replica is in sync, and that one cannot be; move it to another broker.",
                partitions=facts.names(facts.t_row[staying]),
                brokers=sorted_unique(facts.t_broker[staying].tolist()),
                directories=ctx.directories(facts.t_from[staying]),
            )
        )
    stuck = moving & ((facts.t_from < 0) | offline_now)
    if stuck.any():
        outcome.violations.append(
            Issue(
                "Replicas whose directory is offline cannot move to another directory (re-replicate them instead).",
                partitions=facts.names(facts.t_row[stuck]),
                brokers=sorted_unique(facts.t_broker[stuck].tolist()),
                directories=ctx.directories(facts.t_from[stuck]),
            )
        )
    offline_brokers = set(model.dir_broker_ids[~model.dir_online].tolist())
    blocked = moving & ~stuck & np.isin(facts.t_broker, np.array(sorted(offline_brokers), np.int64))
    if blocked.any():
        ids = sorted(set(facts.t_broker[blocked].tolist()))
        outcome.violations.append(
            Issue(
                f"{'Broker' if len(ids) == 1 else 'Brokers'} {truncated(ids)} {'has' if len(ids) == 1 else 'have'} an offline log directory: "
                "a broker creates no future replica while one of its directories is offline, so these moves between directories fail.",
                partitions=facts.names(facts.t_row[blocked]),
                brokers=tuple(ids),
            )
        )
    usable_count = np.bincount(model.dir_broker[model.usable_dirs()], minlength=model.broker_count)
    known_count = np.bincount(model.dir_broker, minlength=model.broker_count)
    index, _ = ctx.target_broker_index
    homeless = (facts.t_dir == BROKER_CHOOSES) & registered
    if homeless.any():
        # A broker without any known directory (registered before KIP-858) is not judged.
        homeless &= (usable_count[index] == 0) & (known_count[index] > 0)
    if homeless.any():
        ids = sorted(set(facts.t_broker[homeless].tolist()))
        outcome.violations.append(
            Issue(
                f'New replicas with "any" on {"broker" if len(ids) == 1 else "brokers"} {truncated(ids)}, which {"has" if len(ids) == 1 else "have"} '
                "no online, uncordoned directory.",
                partitions=facts.names(facts.t_row[homeless]),
                brokers=tuple(ids),
            )
        )
    return outcome


# rf.unchanged ------------------------------------------------------------------------------------


def check_replication_factor(ctx: Context) -> Outcome:
    facts = ctx.facts
    allowed = set(ctx.policy.replication_factor.allowed_changes)
    outcome = Outcome(summary=f"{_plural(facts.count, 'partition')} compared")
    for change, mask in (("increase", facts.rf_target > facts.rf_current), ("decrease", facts.rf_target < facts.rf_current)):
        rows = np.flatnonzero(mask)
        if not len(rows):
            continue
        names = facts.names(rows)
        examples = _examples(facts, rows, lambda r: f"{tp_text(facts.tp(r))} ({facts.rf_current[r]} -> {facts.rf_target[r]})")
        issue = Issue(
            f"{_plural(len(rows), 'partition')} would {change} {'its' if len(rows) == 1 else 'their'} replication factor: {examples}",
            partitions=names,
        )
        if change in allowed:
            outcome.notes.append(Issue(issue.message + " (allowed by the policy).", partitions=names))
            outcome.summary = "Replication factor changes are within what the policy allows"
        else:
            outcome.violations.append(issue)
    return outcome


# rack.rule ---------------------------------------------------------------------------------------


def _most_per_rack(rows: np.ndarray, racks: np.ndarray, count: int) -> tuple[np.ndarray, np.ndarray]:
    """Per row: the most replicas any one rack holds, and that rack's code (the highest code
    among racks that hold that many). `rows` are grouped, in ascending order."""
    most = np.zeros(count, np.int64)
    where = np.zeros(count, np.int64)
    if not len(rows):
        return most, where
    lengths = np.bincount(rows, minlength=count)
    width = int(lengths.max())
    if width > WIDEST_SCAN:
        keys, counts = np.unique((rows << 32) | (racks & 0xFFFFFFFF), return_counts=True)
        owner = keys >> 32
        order = np.lexsort((counts, owner))  # by row, then count: each row's largest comes last
        last = order[np.r_[owner[order][1:] != owner[order][:-1], True]]
        most[owner[last]] = counts[last]
        where[owner[last]] = keys[last] & 0xFFFFFFFF
        return most, where
    # Lists are a few replicas long: count each replica's rack-mates by comparing positions.
    starts = np.zeros(count + 1, np.int64)
    np.cumsum(lengths, out=starts[1:])
    left = starts[rows + 1] - np.arange(len(rows), dtype=np.int64)  # items from this one to the row's end
    same = np.ones(len(rows), np.int64)
    for distance in range(1, width):
        pair = np.flatnonzero(left > distance)
        equal = pair[racks[pair] == racks[pair + distance]]
        same[equal] += 1
        same[equal + distance] += 1
    score = (same << 32) | (racks & 0xFFFFFFFF)
    filled = np.flatnonzero(lengths)
    best = np.maximum.reduceat(score, starts[filled])
    most[filled] = best >> 32
    where[filled] = best & 0xFFFFFFFF
    return most, where


def check_racks(ctx: Context) -> Outcome:
    facts, model = ctx.facts, ctx.model
    mode = ctx.policy.racks.mode
    if mode == "off":
        return Outcome(skipped='racks.mode is "off"')
    # An empty rack name counts as no rack here.
    if not any(model.racks):
        return Outcome(skipped="no broker has a rack")
    # A broker without a rack is a rack of its own; an unknown broker too.
    named = len(model.racks)
    rackless = np.array([c == NO_RACK or model.racks[c] == "" for c in model.broker_rack.tolist()], bool)
    per_broker = np.where(rackless, named + np.arange(model.broker_count), model.broker_rack)

    def racks_of(brokers: np.ndarray) -> np.ndarray:
        index, registered = ctx.cluster.registered_index(brokers)
        if not model.broker_count:
            return (1 << 31) + brokers
        return np.where(registered, per_broker[index], (1 << 31) + brokers)

    def rack_name(code: int) -> str:
        return model.racks[code] if code < named and model.racks[code] else "no rack"

    eligible = model.broker_registered & ~model.broker_fenced & ~np.isin(model.broker_ids, np.array(sorted(ctx.removing), np.int64))
    available = max(len(set(per_broker[eligible].tolist())), 1)
    most, crowded = _most_per_rack(facts.t_row, racks_of(facts.t_broker), facts.count)
    # As even as the racks allow: one replica per rack while there are enough racks.
    even = -(-facts.rf_target // available)
    if mode == "spread":
        allowed = even
        rule = f"no rack holds more than ceil(replication factor / {available} racks) replicas of a partition"
    else:
        now, _ = _most_per_rack(facts.c_row, racks_of(facts.c_broker), facts.count)
        allowed = np.maximum(now, even)
        rule = "no partition ends with more replicas in one rack than now (or than an even spread)"
    rows = np.flatnonzero(facts.changes_set & (most > allowed))
    outcome = Outcome(summary=f"Rule: {rule}")
    if len(rows):

        def example(r: int) -> str:
            return f"{tp_text(facts.tp(r))} ({most[r]} in {rack_name(int(crowded[r]))}, at most {allowed[r]})"

        outcome.violations.append(
            Issue(
                f"{_plural(len(rows), 'partition')} would put too many replicas in one rack: {_examples(facts, rows, example)}",
                partitions=facts.names(rows),
                brokers=sorted_unique(b for r in rows.tolist() for b in facts.target[r]),
            )
        )
    return outcome


# capacity.threshold ------------------------------------------------------------------------------


def check_capacity(ctx: Context) -> Outcome:
    facts, model = ctx.facts, ctx.model
    threshold = ctx.policy.limits.capacity_threshold
    used, _, added, added_replicas = ctx.placement
    capacity = model.dir_capacity
    known = capacity > 0
    touched = added_replicas > 0
    fraction = np.where(known, used / np.where(known, capacity, 1), 0.0)
    over = known & (used > threshold * capacity)
    outcome = Outcome()
    candidates = np.flatnonzero(touched & known)
    if len(candidates):
        fullest = int(candidates[np.argmax(fraction[candidates])])
        outcome.summary = (
            f"Fullest directory the plan adds to: {ctx.dir_label(fullest)} at {_percent(fraction[fullest])} (threshold {_percent(threshold)})"
        )
    else:
        outcome.summary = "The plan adds to no directory with a known capacity"
    bad = np.flatnonzero(over & touched)
    bad = bad[np.argsort(-fraction[bad], kind="stable")]

    def describe(d: int) -> str:
        return (
            f"{ctx.dir_label(d)} ends at {_percent(fraction[d])} of {human_bytes(int(capacity[d]))} "
            f"(+{human_bytes(int(added[d]))} in {_plural(int(added_replicas[d]), 'replica')})"
        )

    if 0 < len(bad) <= MAX_DIRECTORY_FINDINGS:
        for d in bad.tolist():
            outcome.violations.append(
                Issue(
                    f"Directory {describe(d)}, above the threshold of {_percent(threshold)}.",
                    brokers=(int(model.dir_broker_ids[d]),),
                    directories=(ctx.directory(d),),
                    partitions=_partitions_into(ctx, [d]),
                )
            )
    elif len(bad):
        dirs = ctx.directories(bad)
        outcome.violations.append(
            Issue(
                f"{len(bad)} directories end above the threshold of {_percent(threshold)}; the fullest: "
                + "; ".join(describe(d) for d in bad[:5].tolist()),
                brokers=sorted_unique(d.broker for d in dirs),
                directories=dirs,
                partitions=_partitions_into(ctx, bad.tolist()),
            )
        )
    unknown = np.flatnonzero(touched & ~known)
    if len(unknown):
        dirs = ctx.directories(unknown)
        outcome.notes.append(
            Issue(
                f"No capacity known for {_plural(len(dirs), 'directory', 'directories')} the plan adds to; not checked: "
                + truncated([d.label for d in dirs]),
                brokers=sorted_unique(d.broker for d in dirs),
                directories=dirs,
            )
        )
    stays = np.flatnonzero(over & ~touched)
    if len(stays):
        dirs = ctx.directories(stays)
        outcome.notes.append(
            Issue(
                f"{_plural(len(dirs), 'directory', 'directories')} stay above the threshold; the plan adds nothing to them: "
                + truncated([d.label for d in dirs]),
                brokers=sorted_unique(d.broker for d in dirs),
                directories=dirs,
            )
        )
    usable = np.bincount(model.dir_broker[model.usable_dirs()], minlength=model.broker_count)
    chooses = facts.t_dir == BROKER_CHOOSES
    if chooses.any() and model.broker_count:
        index, registered = ctx.target_broker_index
        chooses &= registered & (usable[index] > 1)
    if chooses.any():
        ids = sorted(set(facts.t_broker[chooses].tolist()))
        outcome.notes.append(
            Issue(
                f'{_plural(int(chooses.sum()), "new replica")} with "any" on brokers with several directories: the broker chooses the directory '
                "(KIP-858); this check assumed its least-used online, uncordoned directory.",
                partitions=facts.names(facts.t_row[chooses]),
                brokers=tuple(ids),
            )
        )
    return outcome


def _partitions_into(ctx: Context, directories: list[int]) -> tuple[str, ...]:
    """Partitions of the plan that add a replica to these directories (explicitly named)."""
    facts = ctx.facts
    into = (facts.t_new | facts.t_moving) & np.isin(facts.t_dir, np.array(directories, np.int64))
    return facts.names(facts.t_row[into])


# isr.min-insync ----------------------------------------------------------------------------------


def check_min_insync(ctx: Context) -> Outcome:
    facts = ctx.facts
    outcome = Outcome(summary=f"{_plural(int(facts.changes_set.sum()), 'moving partition')} checked against min.insync.replicas")
    short = np.flatnonzero(facts.changes_set & (facts.isr_kept < facts.min_isr))
    if len(short):
        examples = _examples(
            facts,
            short,
            lambda r: f"{tp_text(facts.tp(r))} (keeps {facts.isr_kept[r]} of {facts.isr_size[r]} in sync, min.insync.replicas={facts.min_isr[r]})",
        )
        outcome.violations.append(
            Issue(
                f"{_plural(len(short), 'partition')} would keep fewer than min.insync.replicas in-sync replicas while moving: {examples}",
                partitions=facts.names(short),
                brokers=sorted_unique(b for r in short.tolist() for b in facts.current[r] if b not in facts.target[r]),
            )
        )
    small = np.flatnonzero(facts.rf_target < facts.min_isr)
    if len(small):
        examples = _examples(
            facts, small, lambda r: f"{tp_text(facts.tp(r))} ({facts.rf_target[r]} replicas, min.insync.replicas={facts.min_isr[r]})"
        )
        outcome.violations.append(
            Issue(
                f"{_plural(len(small), 'partition')} would have fewer replicas than min.insync.replicas and refuse acks=all writes: {examples}",
                partitions=facts.names(small),
            )
        )
    return outcome


# isr.concurrent-moves ----------------------------------------------------------------------------


def check_concurrent(ctx: Context) -> Outcome:
    facts, cluster = ctx.facts, ctx.cluster
    _, replicas_after, _, _ = ctx.placement
    model = ctx.model
    before = cluster.broker_replicas()
    count = model.broker_count
    leaving, registered_leaving = cluster.registered_index(facts.c_broker[facts.removed])
    removed = np.bincount(leaving[registered_leaving], minlength=count)
    index, registered = ctx.target_broker_index
    added = np.bincount(index[facts.t_new & registered], minlength=count)
    drained_brokers = set(ctx.removing)
    for position, broker in enumerate(model.broker_ids.tolist()):
        if before.get(broker, 0) > 0 and before.get(broker, 0) - removed[position] + added[position] <= 0:
            drained_brokers.add(broker)
    # A directory is being decommissioned when it is cordoned (KIP-858) and the plan empties it.
    drained_dirs = (
        model.dir_cordoned
        & (cluster.replicas > 0)
        & (replicas_after <= 0)
        & ~np.isin(model.dir_broker_ids, np.array(sorted(drained_brokers), np.int64))
    )
    outcome = Outcome(summary="")
    units = len(drained_brokers) + int(drained_dirs.sum())
    outcome.summary = (
        "The plan drains no broker or directory"
        if units == 0
        else f"The plan drains {_plural(units, 'broker or directory', 'brokers or directories')}: "
        + truncated([str(b) for b in sorted(drained_brokers)] + [d.label for d in ctx.directories(np.flatnonzero(drained_dirs))])
    )
    if units < 2:
        return outcome
    on_broker = np.isin(facts.c_broker, np.array(sorted(drained_brokers), np.int64))
    on_dir = np.zeros(len(facts.c_dir), bool)
    known = facts.c_dir >= 0
    on_dir[known] = drained_dirs[facts.c_dir[known]]
    taken = facts.c_in_sync & (on_broker | on_dir)
    together = np.bincount(facts.c_row[taken], minlength=facts.count)
    rows = np.flatnonzero((together >= 2) & (facts.isr_size - together < facts.min_isr))
    drained_of: dict[int, list[int]] = {}
    chosen = taken & np.isin(facts.c_row, rows)
    for row, broker in zip(facts.c_row[chosen].tolist(), facts.c_broker[chosen].tolist()):
        drained_of.setdefault(row, []).append(broker)
    problems = [(facts.tp(r), tuple(sorted(drained_of.get(r, ())))) for r in rows.tolist()]
    # Partitions the plan leaves on two or more brokers being removed go down together too.
    if len(ctx.removing) >= 2:
        in_plan = set(facts.tps)
        min_isr: dict[str, int] = {}
        for name, partition_id, p, on_removing in _partitions_on(ctx.image, ctx.removing, ctx.completed):
            if (name, partition_id) in in_plan:
                continue
            if name not in min_isr:
                min_isr[name] = min_insync(ctx.image.configs, name, cluster.min_isr_default)
            in_sync = [b for b in on_removing if b in p.isr]
            if len(in_sync) >= 2 and len(p.isr) - len(in_sync) < min_isr[name]:
                problems.append(((name, partition_id), tuple(sorted(in_sync))))
    if problems:
        problems.sort(key=lambda item: tp_key(item[0]))
        dirs = ctx.directories(np.flatnonzero(drained_dirs))
        units_text = truncated([str(b) for b in sorted(drained_brokers)] + [d.label for d in dirs])
        outcome.violations.append(
            Issue(
                f"{_plural(len(problems), 'partition')} {'has' if len(problems) == 1 else 'have'} in-sync replicas in two or more of the brokers "
                f"or directories this plan drains ({units_text}); taken down together they would leave fewer than min.insync.replicas: "
                + truncated([f"{tp_text(tp)} ({', '.join(map(str, brokers))})" for tp, brokers in problems]),
                partitions=tuple(tp_text(tp) for tp, _ in problems),
                brokers=sorted_unique(b for _, brokers in problems for b in brokers),
                directories=dirs,
            )
        )
    return outcome


def _partitions_on(image: Image, brokers: set[int], completed: Mapping[TopicPartition, Completed]):  # noqa: ANN202
    """(topic, partition, registration, its replicas on `brokers`) for partitions with two or more."""
    table = image.topics.table
    on = np.isin(table.replicas.values, list(brokers))
    rows = np.flatnonzero(np.bincount(table.replica_row[on], minlength=table.partition_count) >= 2)
    for topic_id, partition_id in table.keys(rows):
        topic = image.topics.by_id[topic_id]
        if completed and (topic.name, partition_id) in completed:
            continue  # as an earlier plan of the sequence leaves it: below
        p = topic.partitions[partition_id]
        yield topic.name, partition_id, p, [b for b in p.replicas if b in brokers]
    for (name, partition_id), done in (completed or {}).items():
        kept = [b for b in done.replicas if b in brokers]
        if len(kept) >= 2:
            yield name, partition_id, done, kept


# limits.moves-per-broker --------------------------------------------------------------------------


def _per_broker(brokers: np.ndarray, weights: np.ndarray | None = None) -> dict[int, int]:
    if not len(brokers):
        return {}
    ids, inverse = small_unique(brokers)
    sums = np.bincount(inverse, weights=weights)
    return {int(b): int(round(s)) for b, s in zip(ids.tolist(), sums.tolist())}


def move_counts(facts: PlanFacts) -> tuple[dict[int, int], dict[int, int], dict[int, int]]:
    """Per broker: replicas added, removed, moved between its directories."""
    return (
        _per_broker(facts.t_broker[facts.t_new]),
        _per_broker(facts.c_broker[facts.removed]),
        _per_broker(facts.t_broker[facts.t_moving]),
    )


def check_moves_per_broker(ctx: Context) -> Outcome:
    limit = ctx.policy.limits.max_moves_per_broker
    if limit is None:
        return Outcome(skipped="the policy sets no limits.max_moves_per_broker")
    incoming, outgoing, local = move_counts(ctx.facts)
    totals = {b: incoming.get(b, 0) + outgoing.get(b, 0) + local.get(b, 0) for b in {*incoming, *outgoing, *local}}
    busiest = max(totals, key=lambda b: (totals[b], -b), default=None)
    outcome = Outcome(
        summary=f"Busiest broker: {busiest} with {_plural(totals[busiest], 'move')} (limit {limit})" if busiest is not None else "No replica moves"
    )
    over = sorted((b for b, count in totals.items() if count > limit), key=lambda b: (-totals[b], b))
    if over:
        details = [
            f"broker {b}: {totals[b]} ({incoming.get(b, 0)} in, {outgoing.get(b, 0)} out, {local.get(b, 0)} between directories)" for b in over
        ]
        facts = ctx.facts
        involved = np.isin(facts.t_broker, np.array(over, np.int64)) & (facts.t_new | facts.t_moving)
        rows = np.concatenate([facts.t_row[involved], facts.c_row[facts.removed & np.isin(facts.c_broker, np.array(over, np.int64))]])
        outcome.violations.append(
            Issue(
                f"{_plural(len(over), 'broker')} over the limit of {limit} moves: {truncated(details)}",
                brokers=tuple(sorted(over)),
                partitions=facts.names(rows),
            )
        )
    return outcome


# limits.bytes ------------------------------------------------------------------------------------


def check_bytes(ctx: Context) -> Outcome:
    limits = ctx.policy.limits
    if limits.max_bytes is None and limits.max_bytes_per_broker is None:
        return Outcome(skipped="the policy sets neither limits.max_bytes nor limits.max_bytes_per_broker")
    facts = ctx.facts
    copying = facts.t_new | facts.t_moving
    total = ctx.inter_bytes + ctx.intra_bytes
    per_broker = _per_broker(facts.t_broker[copying], facts.size[facts.t_row[copying]].astype(np.float64))
    outcome = Outcome(summary=f"{human_bytes(total)} to copy" + (f" (limit {human_bytes(limits.max_bytes)})" if limits.max_bytes is not None else ""))
    if limits.max_bytes is not None and total > limits.max_bytes:
        outcome.violations.append(
            Issue(
                f"The plan copies {human_bytes(total)} ({total} bytes: {human_bytes(ctx.inter_bytes)} between brokers, "
                f"{human_bytes(ctx.intra_bytes)} between directories), over the limit of {human_bytes(limits.max_bytes)}.",
                partitions=facts.names(facts.t_row[copying]),
            )
        )
    if limits.max_bytes_per_broker is not None:
        cap = limits.max_bytes_per_broker
        over = sorted((b for b, size in per_broker.items() if size > cap), key=lambda b: (-per_broker[b], b))
        if over:
            mask = copying & np.isin(facts.t_broker, np.array(over, np.int64))
            outcome.violations.append(
                Issue(
                    f"{_plural(len(over), 'broker')} would receive more than {human_bytes(cap)}: "
                    + truncated([f"broker {b}: {human_bytes(per_broker[b])}" for b in over]),
                    brokers=tuple(sorted(over)),
                    partitions=facts.names(facts.t_row[mask]),
                )
            )
    return outcome


# throttle.required -------------------------------------------------------------------------------


def check_throttle_required(ctx: Context) -> Outcome:
    above = ctx.policy.throttle.required_above_bytes
    if above is None:
        return Outcome(skipped="the policy sets no throttle.required_above_bytes")
    parts = []
    outcome = Outcome()
    for size, rate, option, where in (
        (ctx.inter_bytes, ctx.throttle, "--throttle", "between brokers"),
        (ctx.intra_bytes, ctx.log_dir_throttle, "--replica-alter-log-dirs-throttle", "between directories"),
    ):
        parts.append(f"{human_bytes(size)} {where} " + (f"at {option} {human_rate(rate)}" if rate >= 0 else "unthrottled"))
        if size > above and rate < 0:
            facts = ctx.facts
            mask = facts.t_new if option == "--throttle" else facts.t_moving
            outcome.violations.append(
                Issue(
                    f"The plan copies {human_bytes(size)} {where}, more than {human_bytes(above)}, without {option}: give it to check and to "
                    "execute (or set it in the policy's [throttle] section).",
                    partitions=facts.names(facts.t_row[mask]),
                )
            )
    outcome.summary = "; ".join(parts)
    return outcome


# throttle.orphaned -------------------------------------------------------------------------------


def check_orphaned_throttles(ctx: Context) -> Outcome:
    cluster = ctx.cluster
    reassigning_topics = {tp[0] for tp in cluster.reassigning}
    reassigning_brokers: set[int] = set()
    for name, partition_id in cluster.reassigning:
        p = ctx.image.topics.by_name[name].partitions[partition_id]
        reassigning_brokers.update(p.replicas)
    leftovers: list[str] = []
    topics: list[str] = []
    brokers: list[int] = []
    for (resource_type, name), values in sorted(ctx.image.configs.resources.items()):
        if resource_type == CONFIG_RESOURCE_TOPIC:
            keys = [k for k in TOPIC_THROTTLES if values.get(k)]
            if keys and name not in reassigning_topics:
                topics.append(name)
                leftovers.append(f"topic {name} ({', '.join(keys)})")
        elif resource_type == CONFIG_RESOURCE_BROKER:
            broker = int(name) if name.strip().lstrip("-").isdigit() else None
            keys = []
            for key in BROKER_THROTTLES:
                if values.get(key) is None:
                    continue
                in_use = broker is not None and (
                    broker in cluster.moving_brokers if key == LOG_DIRS_THROTTLED_RATE else broker in reassigning_brokers
                )
                if not in_use:
                    keys.append(f"{key}={values[key]}")
            if keys:
                if broker is not None:
                    brokers.append(broker)
                leftovers.append(f"{'the cluster default' if name == '' else 'broker ' + name} ({', '.join(keys)})")
    if not leftovers:
        return Outcome(summary="No throttle is left over")
    return Outcome(
        summary=f"{_plural(len(leftovers), 'resource')} with leftover throttles",
        violations=[
            Issue(
                "Throttles left over from an earlier reassignment (they cap later replication, recovery included): "
                + truncated(leftovers)
                + ". Run `kjbod reassign verify` with the earlier plan, or remove them.",
                topics=tuple(topics),
                brokers=tuple(sorted(brokers)),
            )
        ],
    )


# reassign.in-progress ----------------------------------------------------------------------------


def check_in_progress(ctx: Context) -> Outcome:
    ongoing = ctx.cluster.reassigning
    if not ongoing:
        return Outcome(summary="No reassignment is in progress")
    in_plan = set(ctx.facts.tps) & set(ongoing)
    message = (
        f"{_plural(len(ongoing), 'partition')} {'is' if len(ongoing) == 1 else 'are'} being reassigned now: "
        f"{truncated([tp_text(tp) for tp in ongoing])}; execute needs --additional to run alongside"
    )
    if in_plan:
        message += f", and {_plural(len(in_plan), 'partition')} of the plan would get a new target mid-flight"
    return Outcome(
        summary=f"{_plural(len(ongoing), 'reassignment')} in progress",
        violations=[Issue(message + ".", partitions=tuple(tp_text(tp) for tp in ongoing))],
    )


# reassign.record-limit ---------------------------------------------------------------------------


def check_record_limit(ctx: Context) -> Outcome:
    """What execute would start and fail, as reassignment_control.alter_partition_reassignments
    counts it: one PartitionChangeRecord per partition whose replica lists change, in the plan's
    order (its rows are), none for a partition already at its target."""
    refusal = execute_refusal(ctx)
    if refusal is not None:
        return Outcome(skipped=f"execute would refuse the plan: {refusal}")
    facts = ctx.facts
    writes = ~facts.unchanged()
    # A partition being reassigned now gets a record even for a target equal to where it ends.
    ongoing = set(ctx.cluster.reassigning).difference(ctx.completed)
    if ongoing:
        writes |= np.fromiter((tp in ongoing for tp in facts.tps), bool, facts.count)
    changing = np.flatnonzero(writes)
    outcome = Outcome(summary=f"{_plural(len(changing), 'partition')} to change in one request (at most {MAX_RECORDS_PER_USER_OP})")
    if len(changing) <= MAX_RECORDS_PER_USER_OP:
        return outcome
    failing = changing[MAX_RECORDS_PER_USER_OP:]
    outcome.violations.append(
        Issue(
            f"{_plural(len(failing), 'partition')} of the {len(changing)} the plan changes would fail with UNKNOWN_SERVER_ERROR, "
            f"from {tp_text(facts.tp(int(failing[0])))} on: Kafka's controller writes at most {MAX_RECORDS_PER_USER_OP} records "
            f"(one per partition that changes) for one request (MAX_RECORDS_PER_USER_OP), so execute starts the first "
            f"{MAX_RECORDS_PER_USER_OP} and fails the rest. Split the plan into waves of at most {MAX_RECORDS_PER_USER_OP} "
            "partitions (`reassign plan --wave-size N`, with --max-concurrent-moves-per-broker K to spread each broker's moves), "
            "check them together and execute them one after another.",
            partitions=facts.names(failing),
        )
    )
    return outcome


CHECK_FUNCTIONS: dict[str, Callable[[Context], Outcome]] = {
    "plan.format": check_format,
    "topic.exists": check_topics,
    "broker.eligible": check_brokers,
    "logdir.valid": check_log_dirs,
    "rf.unchanged": check_replication_factor,
    "rack.rule": check_racks,
    "capacity.threshold": check_capacity,
    "isr.min-insync": check_min_insync,
    "isr.concurrent-moves": check_concurrent,
    "limits.moves-per-broker": check_moves_per_broker,
    "limits.bytes": check_bytes,
    "throttle.required": check_throttle_required,
    "throttle.orphaned": check_orphaned_throttles,
    "reassign.in-progress": check_in_progress,
    "reassign.record-limit": check_record_limit,
}


# duration.estimate --------------------------------------------------------------------------------


def execute_refusal(ctx: Context) -> str | None:
    """Why execute would refuse the plan before starting it (the bandwidth estimate cannot
    ask execute itself): what plan.format and topic.exists report, brokers that are not live
    (Kafka's `Unknown broker id`), log_dirs entries naming no directory of their broker."""
    if ctx.execute_validation is not None:
        return ctx.execute_validation
    facts = ctx.facts
    if facts.unknown_topics or facts.missing_partitions:
        return "some topics or partitions do not exist (see topic.exists)"
    index, registered = ctx.target_broker_index
    live = registered & ~ctx.model.broker_fenced[index] if ctx.model.broker_count else registered
    if not live.all():
        return f"Unknown broker id {int(facts.t_broker[~live][0])} (not registered, or fenced; see broker.eligible)"
    explicit = facts.t_explicit
    if (explicit & (facts.t_dir == UNKNOWN_DIR)).any():
        return "a log_dirs entry names no directory of its broker (see logdir.valid)"
    return None


def check_duration(ctx: Context) -> tuple[Outcome, Estimate | None]:
    from kjbod.simulation.clock import format_duration

    method = ctx.estimate_method or ctx.policy.estimate.method
    if method == "auto":
        method = "simulation" if simulation_work(ctx.image, ctx.facts, ctx.cluster) <= SIMULATION_BUDGET else "bandwidth"
    if method == "simulation":
        found = simulate_plan(ctx.image, ctx.plan, ctx.throttle, ctx.log_dir_throttle, ctx.release)
        if isinstance(found, str):
            return Outcome(skipped=found), None
        estimate = found
    else:
        refusal = execute_refusal(ctx)
        if refusal is not None:
            return Outcome(skipped=f"execute would refuse the plan: {refusal}"), None
        estimate = bandwidth_estimate(ctx.image, ctx.plan, ctx.facts, ctx.cluster, ctx.throttle, ctx.log_dir_throttle)
    rates = []
    if ctx.inter_bytes:
        rates.append(f"--throttle {human_rate(ctx.throttle)}" if ctx.throttle >= 0 else "no --throttle")
    if ctx.intra_bytes:
        rates.append(
            f"--replica-alter-log-dirs-throttle {human_rate(ctx.log_dir_throttle)}"
            if ctx.log_dir_throttle >= 0
            else "no --replica-alter-log-dirs-throttle"
        )
    under = f" under {' and '.join(rates)}" if rates else ""
    limit = ctx.policy.limits.max_duration_ms
    limit_text = f"limit {format_duration(limit)}" if limit is not None else "no limit"
    outcome = Outcome()
    if estimate.duration_ms is None:
        blocked = estimate.blocked
        outcome.summary = f"The plan would never complete{under}"
        outcome.violations.append(
            Issue(
                f"{_plural(len(blocked), 'copy', 'copies')} can never complete ({estimate.method}): {truncated([b.label for b in blocked], 5)}",
                partitions=tuple(sorted({b.partition for b in blocked if b.partition}, key=lambda n: tp_key(_tp_of(n)))),
                brokers=sorted_unique(b.broker for b in blocked if b.broker is not None),
            )
        )
        return outcome, estimate
    took = format_duration(estimate.duration_ms)
    if estimate.method == "simulation":
        outcome.summary = f"About {took}{under} (simulated; {limit_text})"
    else:
        outcome.summary = (
            f"At least {took}{under} (bandwidth estimate, limited by {estimate.bottleneck}; {limit_text})"
            if estimate.bottleneck
            else f"Nothing to copy ({limit_text})"
        )
    if limit is not None and estimate.duration_ms > limit:
        outcome.violations.append(
            Issue(
                f"The plan would take {'about' if estimate.method == 'simulation' else 'at least'} {took}{under}, longer than the policy's "
                f"{format_duration(limit)}: raise the throttle or split the plan into batches.",
                partitions=ctx.facts.names(ctx.facts.t_row[ctx.facts.t_new | ctx.facts.t_moving]),
            )
        )
    if estimate.other_copies:
        counted = "counted in the simulation" if estimate.method == "simulation" else "not counted in the bandwidth estimate"
        outcome.notes.append(
            Issue(f"{_plural(estimate.other_copies, 'other copy', 'other copies')} already in progress share the links ({counted}).")
        )
    return outcome, estimate


def _tp_of(name: str) -> tuple[str, int]:
    topic, _, partition = name.rpartition("-")
    return topic, int(partition)
