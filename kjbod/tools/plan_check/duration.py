"""How long a plan takes under its throttles (check duration.estimate).

Two ways, one model (kjbod.simulation.copy_model):

* simulation: the plan is started on an in-memory copy of the cluster by `reassign execute`'s
  own code (kjbod.tools.reassign.actions.execute with the same throttles, as with --additional),
  and the copy model runs until idle, as `clock advance --until-idle` would. Nothing is written.
  Exact, and it names every copy that can never complete and why.
* bandwidth: for plans too large to simulate within seconds. Every broker's inbound, outbound
  (as leader) and local bytes are divided by the rate each is limited to: the link rate and, for
  throttled replicas, the throttle, read as the copy model reads them (its CopySettings) with
  the throttles execute would set. The largest quotient is a lower bound on the
  simulation, which it matches when one broker's link or throttle is the bottleneck (filling a
  new broker, draining one).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from kjbod.common.java import tp_key, tp_text
from kjbod.common.kafka_configs import (
    FOLLOWER_THROTTLED_RATE,
    FOLLOWER_THROTTLED_REPLICAS,
    LEADER_THROTTLED_RATE,
    LEADER_THROTTLED_REPLICAS,
)
from kjbod.common.units import human_rate
from kjbod.common.kafka_release import NEWEST, KafkaRelease
from kjbod.controller import Controller
from kjbod.simulation.clock import format_duration
from kjbod.simulation.copy_model import HORIZON_MS, ZERO_RATE, CopySettings, copies, simulate
from kjbod.errors import UserError
from kjbod.image import Image, replay_all
from kjbod.records import CONFIG_RESOURCE_TOPIC
from kjbod.tools.plan_check.facts import ClusterFacts, PlanFacts, small_unique
from kjbod.tools.reassign.actions import execute
from kjbod.tools.reassign.json_format import ReassignmentPlan

# Simulating replays the image once per completion; beyond this much work (completions times
# the topics and partitions each replay copies) the bandwidth estimate is used instead.
SIMULATION_BUDGET = 4_000_000


@dataclass(frozen=True)
class Blocked:
    """A copy (or a whole resource) that can never complete, and why."""

    partition: str | None
    broker: int | None
    future: bool
    reason: str

    @property
    def label(self) -> str:
        if self.partition is None:
            return self.reason
        if self.broker is None:
            return f"{self.partition}: {self.reason}"
        where = f"between directories of broker {self.broker}" if self.future else f"to broker {self.broker}"
        return f"{self.partition} {where}: {self.reason}"

    def to_json(self) -> dict[str, Any]:
        return {"partition": self.partition, "broker": self.broker, "kind": "future" if self.future else "follower", "reason": self.reason}


@dataclass(frozen=True)
class Estimate:
    method: str  # "simulation" or "bandwidth"
    duration_ms: int | None  # None: something can never complete
    throttle: int
    log_dir_throttle: int
    blocked: tuple[Blocked, ...] = ()
    # The broker whose link or throttle sets a bandwidth estimate.
    bottleneck: str | None = None
    # Copies already in progress that are not the plan's (they share the links).
    other_copies: int = 0

    def to_json(self) -> dict[str, Any]:
        return {
            "method": self.method,
            "durationMs": self.duration_ms,
            "duration": None if self.duration_ms is None else format_duration(self.duration_ms),
            "lowerBound": self.method == "bandwidth",
            "bottleneck": self.bottleneck,
            "blocked": [b.to_json() for b in self.blocked],
            "otherCopiesInProgress": self.other_copies,
        }


def replay_work(image: Image) -> int:
    """About how much copying of image maps one replay during a simulation costs: the map of
    topics and the partitions of the topic it touches."""
    topics = max(len(image.topics), 1)
    return topics + image.topics.partition_count // topics


def simulation_work(image: Image, facts: PlanFacts, cluster: ClusterFacts) -> int:
    """About how much a simulation of this plan costs: every completion (and every broker
    assigning directories when execute starts) replays the image."""
    events = facts.count + cluster.copying + len(small_unique(facts.t_broker)[0])
    return events * replay_work(image)


def simulate_plan(image: Image, plan: ReassignmentPlan, throttle: int, log_dir_throttle: int, release: KafkaRelease = NEWEST) -> Estimate | str:
    """The copy model run on the plan as execute starts it, by a controller of `release` (whose
    refusals differ: 4.4 refuses a broker whose directories are all cordoned); a string when
    execute refuses."""
    try:
        started = execute(Controller(image, release), plan, throttle=throttle, log_dir_throttle=log_dir_throttle, additional=True)
    except UserError as exc:
        return f"execute would refuse the plan: {exc.message.removeprefix('Error: ')}"
    if started.response.error:
        return "execute would refuse the plan: " + started.response.error.replace("\n", " ")
    after = replay_all(image, started.records)
    by_name = after.topics.by_name
    pending: set[tuple] = set()
    for tp in plan.targets():
        p = by_name[tp[0]].partitions[tp[1]]
        if p.is_reassigning:
            pending.add(tp)
    for replica in plan.replica_dirs:
        if by_name[replica[0]].future_replica(replica[1], replica[2]) is not None:
            pending.add(replica)
    other = sum(1 for c in copies(after) if (c.topic, c.partition) not in pending and (c.topic, c.partition, c.broker) not in pending)
    run = simulate(after, horizon_ms=HORIZON_MS)
    done = run.finish_times()
    missing = pending - set(done)
    blocked: list[Blocked] = []
    for c in run.remaining:
        if (c.topic, c.partition) in missing or (c.future and (c.topic, c.partition, c.broker) in missing):
            reason = c.blocked or f"still copying after {HORIZON_MS // 86_400_000} days at these rates"
            blocked.append(Blocked(tp_text((c.topic, c.partition)), c.broker, c.future, reason))
    covered = {(b.partition, b.broker if b.future else None) for b in blocked}
    for item in sorted(missing, key=lambda i: (tp_key(i[:2]), i[2:])):
        name = tp_text(item[:2])
        if len(item) == 2 and not any(p == name for p, _ in covered):
            blocked.append(Blocked(name, None, False, "its reassignment cannot complete (no copy can put the target replicas in sync)"))
        elif len(item) == 3 and (name, item[2]) not in covered:
            blocked.append(Blocked(name, item[2], True, "the move between directories cannot complete"))
    blocked.sort(key=lambda b: (b.partition or "", b.broker if b.broker is not None else -1, b.future))
    if blocked:
        return Estimate("simulation", None, throttle, log_dir_throttle, tuple(blocked), other_copies=other)
    finish = max(done[item] for item in pending) if pending else after.time_ms
    return Estimate("simulation", finish - after.time_ms, throttle, log_dir_throttle, other_copies=other)


def bandwidth_estimate(
    image: Image, plan: ReassignmentPlan, facts: PlanFacts, cluster: ClusterFacts, throttle: int, log_dir_throttle: int
) -> Estimate:
    """The largest of every broker's inbound, outbound (as leader) and local bytes over the rate
    that limits it. Throttles as execute sets them: with --throttle, kjbod.tools.reassign.actions'
    inter_broker_throttle_changes lists every source of a moved partition (its current
    replicas, the leader among them) as leader-throttled and every destination as
    follower-throttled, and gives each of those brokers the rate, so every copy of the plan is
    throttled at both ends; without it, the throttle configs already set apply (the copy model's
    reading of them). With --replica-alter-log-dirs-throttle, every broker named in log_dirs gets
    that rate for its moves between directories."""
    settings = CopySettings(image)
    new = np.flatnonzero(facts.t_new)
    rows = facts.t_row[new]
    brokers = facts.t_broker[new]
    leaders = facts.leader[rows]
    sizes = facts.size[rows]
    index, registered = cluster.registered_index(brokers)
    has_brokers = cluster.model.broker_count > 0
    fenced = registered & cluster.model.broker_fenced[index] if has_brokers else np.zeros(len(new), bool)
    shutting = registered & ~fenced & cluster.model.broker_shutting_down[index] if has_brokers else np.zeros(len(new), bool)
    leaderless = leaders == -1
    stuck = leaderless | ~registered | fenced | shutting
    blocked: list[Blocked] = []
    for i in np.flatnonzero(stuck).tolist():
        broker = int(brokers[i])
        if leaderless[i]:
            reason = "the partition has no leader"
        elif not registered[i]:
            reason = f"broker {broker} is not registered"
        else:
            reason = f"broker {broker} is fenced" if fenced[i] else f"broker {broker} is shutting down"
        blocked.append(Blocked(tp_text(facts.tp(int(rows[i]))), broker, False, reason))
    go = ~stuck
    rows, brokers, leaders, sizes = rows[go], brokers[go], leaders[go], sizes[go]
    if throttle >= 0:
        follower_listed = leader_listed = np.ones(len(rows), bool)
    else:
        # Only topics with a throttled-replicas config can have listed replicas.
        listed_topics = {
            name
            for (kind, name), values in image.configs.resources.items()
            if kind == CONFIG_RESOURCE_TOPIC and any(values.get(k) for k in (FOLLOWER_THROTTLED_REPLICAS, LEADER_THROTTLED_REPLICAS))
        }
        follower_listed = np.zeros(len(rows), bool)
        leader_listed = np.zeros(len(rows), bool)
        if listed_topics:
            for i, (row, broker, leader) in enumerate(zip(rows.tolist(), brokers.tolist(), leaders.tolist())):
                topic, partition = facts.tp(row)
                if topic in listed_topics:
                    follower_listed[i] = settings.listed(topic, FOLLOWER_THROTTLED_REPLICAS, partition, broker)
                    leader_listed[i] = settings.listed(topic, LEADER_THROTTLED_REPLICAS, partition, leader)

    def rate(broker: int, name: str) -> int | None:
        return throttle if throttle >= 0 else settings.rate(broker, name)

    # (milliseconds, what limits it) for every broker resource the plan uses.
    limits: list[tuple[float, str]] = []

    def add(totals: dict[int, int], rate_of, what: str) -> None:  # noqa: ANN001
        for broker, total in totals.items():
            limit = rate_of(broker)
            if total <= 0 or limit is None:
                continue
            ms = math.inf if limit == 0 else math.ceil(total * 1000 / limit)
            limits.append((ms, f"broker {broker}'s {what} ({_rate(limit)})"))

    add(_sums(brokers, sizes), settings.link, "inbound link")
    add(_sums(brokers[follower_listed], sizes[follower_listed]), lambda b: rate(b, FOLLOWER_THROTTLED_RATE), "follower throttle")
    add(_sums(leaders, sizes), settings.link, "outbound link as leader")
    add(_sums(leaders[leader_listed], sizes[leader_listed]), lambda b: rate(b, LEADER_THROTTLED_RATE), "leader throttle")
    moving = facts.t_moving
    named = plan.columns.explicit_brokers()

    def local_rate(broker: int) -> int:
        return log_dir_throttle if log_dir_throttle >= 0 and broker in named else settings.local(broker)

    add(_sums(facts.t_broker[moving], facts.size[facts.t_row[moving]]), local_rate, "moves between directories")
    for ms, what in limits:
        if ms == math.inf:
            blocked.append(Blocked(None, None, False, f"{what} allows no progress ({ZERO_RATE})"))
    blocked.sort(key=lambda b: (b.partition or "", b.broker if b.broker is not None else -1))
    if blocked:
        return Estimate("bandwidth", None, throttle, log_dir_throttle, tuple(blocked), other_copies=cluster.copying)
    if not limits:
        return Estimate("bandwidth", 0, throttle, log_dir_throttle, other_copies=cluster.copying)
    ms, what = max(limits, key=lambda item: item[0])
    return Estimate("bandwidth", int(ms), throttle, log_dir_throttle, bottleneck=what, other_copies=cluster.copying)


def _sums(brokers: np.ndarray, sizes: np.ndarray) -> dict[int, int]:
    if not len(brokers):
        return {}
    ids, inverse = small_unique(brokers)
    totals = np.bincount(inverse, weights=sizes.astype(np.float64))
    return {int(b): int(round(t)) for b, t in zip(ids.tolist(), totals.tolist())}


def _rate(rate: int | None) -> str:
    return "unlimited" if rate is None else human_rate(rate)
