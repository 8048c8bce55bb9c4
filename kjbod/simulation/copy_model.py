"""The copy model: how replicas fill up while the simulated clock runs.

Two kinds of copy exist (kjbod's model of what brokers do; Kafka runs on wall-clock time):

* a follower copy: replica r of partition P that is not in the ISR fetches from the leader L
  over the network until it holds the whole partition; then L sends AlterPartition with r added
  to the ISR (which completes a reassignment once every target replica is in sync);
* a future replica (KIP-113): broker b copies its replica into another of its directories;
  once caught up, b sends AssignReplicasToDirs (KIP-858: the controller learns the new
  directory first) and promotes the future replica.

Rates: every broker has an inbound and an outbound link of `kjbod.replication.bytes.per.second`
shared equally by the copies into / out of it; Kafka's replication throttle, where it applies
(the replica is listed in the topic's throttled-replicas config and the broker has a throttled
rate), is shared by the throttled copies on that broker. A copy moves at the minimum of its
shares. Future replicas copy at `replica.alter.log.dirs.io.max.bytes.per.second` (else
`kjbod.alter.log.dirs.bytes.per.second`), shared by the future replicas of the broker.

`simulate` is event-driven and deterministic: it steps from one completion to the next, so
`clock advance`, `clock advance --until-idle`, `clock show` and `reassign verify`'s estimate all
come from the same computation. Time is in milliseconds; rates are exact fractions, and bytes
are whole numbers (a copy's progress is rounded down until the step that completes it).
"""

from __future__ import annotations

import heapq
import itertools
import math
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from kjbod.common.kafka_configs import (
    FOLLOWER_THROTTLED_RATE,
    FOLLOWER_THROTTLED_REPLICAS,
    LEADER_THROTTLED_RATE,
    LEADER_THROTTLED_REPLICAS,
    LOG_DIRS_THROTTLED_RATE,
)
from kjbod.common.kafka_uuid import DirectoryId
from kjbod.controller.working import WorkingImage
from kjbod.image import Image, PartitionRegistration, TopicImage
from kjbod.records import (
    CONFIG_RESOURCE_BROKER,
    CONFIG_RESOURCE_TOPIC,
    KjbodClockRecord,
    KjbodReplicaLogRecord,
    Record,
)

MIB = 1024 * 1024
REPLICATION_RATE = "kjbod.replication.bytes.per.second"
ALTER_LOG_DIRS_RATE = "kjbod.alter.log.dirs.bytes.per.second"
DEFAULT_REPLICATION_RATE = 100 * MIB
DEFAULT_ALTER_LOG_DIRS_RATE = 200 * MIB
# `--until-idle` never simulates further than this.
HORIZON_MS = 365 * 86_400_000

CopyKey = tuple[str, int, int, bool]  # (topic id, partition, broker, future)
PartitionKey = tuple[str, int]


@dataclass(frozen=True)
class Copy:
    """One copy as it stands: how far it is, how fast it goes, or why it cannot go."""

    topic_id: str
    topic: str
    partition: int
    broker: int
    future: bool
    # Follower copies: the leader they fetch from. Future replicas: the broker itself.
    source: int
    # Follower copies: the replica's directory. Future replicas: the target directory.
    directory: str
    copied: int
    total: int
    rate: Fraction  # bytes per second; 0 when blocked
    blocked: str | None = None  # why it cannot progress now

    @property
    def key(self) -> CopyKey:
        return (self.topic_id, self.partition, self.broker, self.future)

    @property
    def remaining(self) -> int:
        return max(0, self.total - self.copied)

    @property
    def name(self) -> str:
        return f"{self.topic}-{self.partition}"

    def completion_ms(self) -> int | None:
        """Milliseconds until it completes at its current rate (None when blocked)."""
        if self.blocked is not None:
            return None
        if self.remaining == 0:
            return 0
        return math.ceil(Fraction(self.remaining * 1000) / self.rate)

    def to_json(self, directory: str) -> dict[str, Any]:
        """The copy in `clock show|advance` and `reassign verify` JSON; `directory` is the
        copy's directory as the command names it."""
        return {
            "topic": self.topic,
            "partition": self.partition,
            "broker": self.broker,
            "kind": "future" if self.future else "follower",
            "source": self.source,
            "directory": directory,
            "copiedBytes": self.copied,
            "totalBytes": self.total,
            "bytesPerSecond": float(self.rate),
            "blocked": self.blocked,
        }


@dataclass(frozen=True)
class CopyCompletion:
    """A copy that completed during a simulation, and what it completed."""

    time_ms: int
    topic_id: str
    topic: str
    partition: int
    broker: int
    future: bool
    directory: str
    # The AlterPartition that put the replica in sync also completed the reassignment.
    reassignment_completed: bool = False


@dataclass(frozen=True)
class Simulation:
    start_ms: int
    end_ms: int
    # Everything that happened: completions (AlterPartition, AssignReplicasToDirs and replica
    # log removals), then the progress of unfinished copies, then the clock.
    records: tuple[Record, ...]
    completions: tuple[CopyCompletion, ...]
    # The copies that remain at the end (progressing or blocked).
    remaining: tuple[Copy, ...]
    # True when nothing could progress any more (a bounded run can end with copies moving).
    idle: bool
    # Replicas their broker placed in a directory first: (topic, partition, broker, directory id).
    placed: tuple[tuple[str, int, int, str], ...] = ()

    @property
    def elapsed_ms(self) -> int:
        return self.end_ms - self.start_ms

    @property
    def blocked(self) -> tuple[Copy, ...]:
        return tuple(c for c in self.remaining if c.blocked is not None)

    @property
    def in_progress(self) -> tuple[Copy, ...]:
        return tuple(c for c in self.remaining if c.blocked is None)

    @property
    def reassignments_completed(self) -> tuple[PartitionKey, ...]:
        return tuple((c.topic_id, c.partition) for c in self.completions if c.reassignment_completed)

    def finish_times(self) -> dict[tuple[str, int] | tuple[str, int, int], int]:
        """When the run completed each reassignment, (topic name, partition) -> time, and each
        move between directories, (topic name, partition, broker) -> time."""
        done: dict[tuple[str, int] | tuple[str, int, int], int] = {}
        for event in self.completions:
            if event.reassignment_completed:
                done[(event.topic, event.partition)] = event.time_ms
            if event.future:
                done[(event.topic, event.partition, event.broker)] = event.time_ms
        return done


# Configs ---------------------------------------------------------------------------------------


def _rate_config(image: Image, broker: int, name: str) -> int | None:
    """A broker's rate config: its own value, else the cluster default (resource "")."""
    for resource in (str(broker), ""):
        value = image.configs.get(CONFIG_RESOURCE_BROKER, resource).get(name)
        if value is not None:
            try:
                rate = int(value.strip())
            except ValueError:
                continue  # not a number: Kafka would have refused it; ignore it here
            if rate >= 0:
                return rate
    return None


def link_rate(image: Image, broker: int) -> int:
    rate = _rate_config(image, broker, REPLICATION_RATE)
    return DEFAULT_REPLICATION_RATE if rate is None else rate


def alter_log_dirs_rate(image: Image, broker: int) -> int:
    """Kafka's replica.alter.log.dirs throttle when set, else kjbod's local copy rate."""
    for name in (LOG_DIRS_THROTTLED_RATE, ALTER_LOG_DIRS_RATE):
        rate = _rate_config(image, broker, name)
        if rate is not None:
            return rate
    return DEFAULT_ALTER_LOG_DIRS_RATE


def throttled_replicas(image: Image, topic: str, name: str) -> tuple[bool, frozenset[tuple[int, int]]]:
    """A topic's throttled-replicas list: (True, _) for `*`, else the (partition, broker) pairs."""
    value = image.configs.get(CONFIG_RESOURCE_TOPIC, topic).get(name)
    if not value:
        return False, frozenset()
    items = [item.strip() for item in value.split(",") if item.strip()]
    if "*" in items:
        return True, frozenset()
    pairs = set()
    for item in items:
        partition, _, broker = item.partition(":")
        try:
            pairs.add((int(partition), int(broker)))
        except ValueError:
            continue
    return False, frozenset(pairs)


class CopySettings:
    """The rates and throttle lists a run needs. Nothing a run writes changes them (it writes
    no configs and changes no broker), so they are read once per run."""

    def __init__(self, image: Image) -> None:
        self._image = image
        self._lists: dict[tuple[str, str], tuple[bool, frozenset[tuple[int, int]]]] = {}
        self._rates: dict[tuple[int, str], int | None] = {}
        self._links: dict[int, int] = {}
        self._local: dict[int, int] = {}

    def listed(self, topic: str, name: str, partition: int, broker: int) -> bool:
        key = (topic, name)
        if key not in self._lists:
            self._lists[key] = throttled_replicas(self._image, topic, name)
        everything, pairs = self._lists[key]
        return everything or (partition, broker) in pairs

    def rate(self, broker: int, name: str) -> int | None:
        key = (broker, name)
        if key not in self._rates:
            self._rates[key] = _rate_config(self._image, broker, name)
        return self._rates[key]

    def link(self, broker: int) -> int:
        if broker not in self._links:
            self._links[broker] = link_rate(self._image, broker)
        return self._links[broker]

    def local(self, broker: int) -> int:
        if broker not in self._local:
            self._local[broker] = alter_log_dirs_rate(self._image, broker)
        return self._local[broker]


# The copies of an image -------------------------------------------------------------------------


def candidate_partitions(image: Image) -> list[PartitionKey]:
    """Partitions with a replica outside the ISR or a future replica: the only ones that copy."""
    return image.topics.copying()


def _follower_block(image: Image, p: PartitionRegistration, replica: int) -> str | None:
    if p.leader == -1:
        return "the partition has no leader"
    broker = image.cluster.brokers.get(replica)
    if broker is None:
        return f"broker {replica} is not registered"
    if broker.fenced:
        return f"broker {replica} is fenced"
    if broker.in_controlled_shutdown:
        return f"broker {replica} is shutting down"
    if not broker.has_online_dir(p.directory(replica)):
        return f"its directory on broker {replica} is offline"
    return None


def _future_block(image: Image, topic: TopicImage, partition_id: int, p: PartitionRegistration, broker_id: int, target: str) -> str | None:
    broker = image.cluster.brokers.get(broker_id)
    if broker is None:
        return f"broker {broker_id} is not registered"
    if broker.fenced:
        return f"broker {broker_id} is fenced"
    if not broker.has_online_dir(p.directory(broker_id)):
        return "its source directory is offline"
    if DirectoryId.reserved(target) or not broker.has_online_dir(target):
        return "its target directory is offline"
    # A follower out of the ISR is still copying from its leader (its copy completes first). One
    # in the ISR has caught up, whatever size kafka-log-dirs reported for it (an in-sync follower
    # is often a few offsets behind, or keeps fewer segments): nothing is left to wait for.
    if broker_id not in p.isr and topic.replica_size(partition_id, broker_id) < topic.size(partition_id):
        return f"the replica on broker {broker_id} is still catching up"
    return None


ClassKey = tuple  # copies with the same key move at the same rate (see _Engine)
ZERO_RATE = "its rate is 0 B/s (a throttle or link rate of 0)"


@dataclass(frozen=True)
class _CopyInfo:
    """A copy as the image (and the run's progress) describes it, before rates."""

    topic_id: str
    topic: str
    partition: int
    broker: int
    future: bool
    source: int
    directory: str
    copied: int
    total: int
    blocked: str | None
    rate_class: ClassKey

    @property
    def key(self) -> CopyKey:
        return (self.topic_id, self.partition, self.broker, self.future)


def _partition_copies(
    image: Image, key: PartitionKey, settings: CopySettings, progress: Mapping[CopyKey, int], failed: Mapping[CopyKey, str]
) -> list[_CopyInfo]:
    topic_id, partition_id = key
    topic = image.topics.get(topic_id)
    p = topic.partitions.get(partition_id) if topic is not None else None
    if topic is None or p is None:
        return []
    total = topic.size(partition_id)
    found = []
    for replica in p.replicas:
        if replica in p.isr:
            continue
        copy_key = (topic_id, partition_id, replica, False)
        copied = min(total, progress.get(copy_key, topic.replica_size(partition_id, replica)))
        blocked = failed.get(copy_key) or _follower_block(image, p, replica)
        follower_throttled = settings.listed(topic.name, FOLLOWER_THROTTLED_REPLICAS, partition_id, replica) and settings.rate(replica, FOLLOWER_THROTTLED_RATE) is not None
        leader_throttled = settings.listed(topic.name, LEADER_THROTTLED_REPLICAS, partition_id, p.leader) and settings.rate(p.leader, LEADER_THROTTLED_RATE) is not None
        found.append(
            _CopyInfo(topic_id, topic.name, partition_id, replica, False, p.leader, p.directory(replica), copied, total, blocked,
                      ("follower", replica, p.leader, follower_throttled, leader_throttled))
        )
    for broker_id in sorted(p.replicas) if topic.replica_logs else ():
        log = topic.replica_logs.get((partition_id, broker_id, True))  # only a replica can have one
        if log is None:
            continue
        copy_key = (topic_id, partition_id, broker_id, True)
        target = log.directory_id or DirectoryId.UNASSIGNED
        copied = min(total, progress.get(copy_key, log.size_bytes))
        blocked = failed.get(copy_key) or _future_block(image, topic, partition_id, p, broker_id, target)
        found.append(_CopyInfo(topic_id, topic.name, partition_id, broker_id, True, broker_id, target, copied, total, blocked, ("future", broker_id)))
    return found


@dataclass(eq=False)
class _Group:
    """The classes that move at one rate (num/den bytes per second, reduced).

    Progress is floored per step, exactly as per-copy bytes would be, and floor(r*a) + floor(r*b)
    is not floor(r*(a+b)): what a class gains depends on every step the run takes, not only on
    how long it moved. But the same steps give every class at the same rate the same bytes, so
    the group counts them once (`gained`), and a step costs one update per distinct rate (a
    handful) instead of one per class (one per copy, in a batch of thousands).

    The heap holds, for each class, the `gained` at which its next member completes, so the
    next completion is the smallest entry of some group. Entries are invalidated lazily: one
    is live while its version is the class's and the class is still in this group.
    """

    num: int
    den: int
    gained: int = 0
    heap: list[tuple[int, int, int, _Class]] = field(default_factory=list)  # (gained, order, version, class)


@dataclass(eq=False)
class _Class:
    """Copies that share every rate input (the same links, throttles or local disk) move at
    the same rate, so they share one progress counter: a member completes when the counter
    reaches its target. The rate is kept as an exact fraction, numerator over denominator
    (bytes per second). While it moves, the counter is `base` plus what its group gained since
    the class joined it."""

    key: ClassKey
    base: int = 0
    members: int = 0
    rate_num: int = 0
    rate_den: int = 1
    group: _Group | None = None
    joined_at: int = 0
    version: int = 0
    heap: list[tuple[int, CopyKey]] = field(default_factory=list)

    @property
    def progress(self) -> int:
        group = self.group
        return self.base if group is None else self.base + group.gained - self.joined_at

    @property
    def rate(self) -> Fraction:
        return Fraction(self.rate_num, self.rate_den)


def _min_share(shares: list[tuple[int, int]]) -> tuple[int, int]:
    best = shares[0]
    for num, den in shares[1:]:
        if num * best[1] < best[0] * den:
            best = (num, den)
    return best


class _Engine:
    """The copies of a run, kept up to date incrementally: a completion re-reads only its
    partition; rates are recomputed only for the classes on the brokers whose copies came or
    went; a step costs one update per distinct rate (see _Group)."""

    def __init__(self, image: Image, partitions: Iterable[PartitionKey], progress: dict[CopyKey, int], failed: dict[CopyKey, str]) -> None:
        self.image = image
        self.settings = CopySettings(image)
        self.progress = progress
        self.failed = failed
        self.infos: dict[CopyKey, _CopyInfo] = {}
        self.by_partition: dict[PartitionKey, list[CopyKey]] = {}
        self.classes: dict[ClassKey, _Class] = {}
        self.targets: dict[CopyKey, int] = {}
        self.groups: dict[tuple[int, int], _Group] = {}
        self._order = itertools.count()  # ties in a group's heap go by entry order, never by class
        # How many copies use each link, throttle and disk (§ module doc), and which follower
        # classes each broker's counts decide the rate of.
        self.inbound: Counter = Counter()
        self.outbound: Counter = Counter()
        self.throttled_in: Counter = Counter()
        self.throttled_out: Counter = Counter()
        self.local: Counter = Counter()
        self.by_replica: dict[int, list[_Class]] = {}
        self.by_leader: dict[int, list[_Class]] = {}
        # What changed since the rates were last computed.
        self.changed: dict[_Class, None] = {}  # classes whose members came or went
        self.dirty_in: set[int] = set()
        self.dirty_out: set[int] = set()
        self.dirty_local: set[int] = set()
        for key in partitions:
            self.load(key)

    # Membership ----------------------------------------------------------------------------

    def load(self, key: PartitionKey) -> None:
        """(Re)read one partition's copies from the image, keeping their progress."""
        for copy_key in self.by_partition.pop(key, []):
            self._drop(copy_key)
        infos = _partition_copies(self.image, key, self.settings, self.progress, self.failed)
        self.by_partition[key] = [info.key for info in infos]
        for info in infos:
            self.infos[info.key] = info
            if info.blocked is None:
                cls = self.classes.get(info.rate_class) or self._new_class(info.rate_class)
                target = cls.progress + info.total - info.copied
                heapq.heappush(cls.heap, (target, info.key))
                self._count(cls, 1)
                self.targets[info.key] = target

    def _new_class(self, key: ClassKey) -> _Class:
        cls = self.classes[key] = _Class(key)
        if key[0] != "future":
            self.by_replica.setdefault(key[1], []).append(cls)
            self.by_leader.setdefault(key[2], []).append(cls)
        return cls

    def _count(self, cls: _Class, delta: int) -> None:
        """A member joins (+1) or leaves (-1) a class: the shares on its brokers change."""
        cls.members += delta
        self.changed[cls] = None
        key = cls.key
        if key[0] == "future":
            self.local[key[1]] += delta
            self.dirty_local.add(key[1])
            return
        _, replica, leader, follower_throttled, leader_throttled = key
        self.inbound[replica] += delta
        self.outbound[leader] += delta
        if follower_throttled:
            self.throttled_in[replica] += delta
        if leader_throttled:
            self.throttled_out[leader] += delta
        self.dirty_in.add(replica)
        self.dirty_out.add(leader)

    def _drop(self, copy_key: CopyKey) -> None:
        info = self.infos.pop(copy_key)
        if copy_key in self.targets:
            self.progress[copy_key] = self.copied(info, self.targets.pop(copy_key))
            self._count(self.classes[info.rate_class], -1)  # its heap entry goes stale

    def copied(self, info: _CopyInfo, target: int | None = None) -> int:
        if target is None:
            target = self.targets.get(info.key)
        if target is None:
            return info.copied
        return info.total - max(0, target - self.classes[info.rate_class].progress)

    # Time ------------------------------------------------------------------------------------

    def due(self) -> list[_CopyInfo]:
        """Copies that have caught up (their class reached their target); they leave the run.
        Only classes whose group reached their entry, and classes whose members changed (a
        copy may arrive complete), can have any."""
        found: list[_CopyInfo] = []
        for group in self.groups.values():
            heap = group.heap
            while heap and heap[0][0] <= group.gained:
                _, _, version, cls = heapq.heappop(heap)
                if version == cls.version and cls.group is group:
                    self._pop_due(cls, found)
        for cls in list(self.changed):
            self._pop_due(cls, found)
        return sorted(found, key=lambda i: (i.topic, i.partition, i.broker, i.future))

    def _pop_due(self, cls: _Class, found: list[_CopyInfo]) -> None:
        heap = cls.heap
        progress = cls.progress
        while heap and heap[0][0] <= progress:
            target, copy_key = heapq.heappop(heap)
            if self.targets.get(copy_key) != target:
                continue  # stale: dropped or re-added
            del self.targets[copy_key]
            self._count(cls, -1)
            info = self.infos[copy_key]
            self.progress[copy_key] = info.total
            found.append(info)

    def update_rates(self) -> None:
        """Each link, throttle and disk is shared equally by the copies using it (§ module doc).
        Only the classes on a broker whose counts changed can get a new rate."""
        todo = self.changed
        for broker in self.dirty_in:
            todo.update(dict.fromkeys(self.by_replica.get(broker, ())))
        for broker in self.dirty_out:
            todo.update(dict.fromkeys(self.by_leader.get(broker, ())))
        for broker in self.dirty_local:
            cls = self.classes.get(("future", broker))
            if cls is not None:
                todo[cls] = None
        changed = self.changed
        self.changed = {}
        self.dirty_in, self.dirty_out, self.dirty_local = set(), set(), set()
        settings = self.settings
        for cls in todo:
            key = cls.key
            if not cls.members:
                num, den = 0, 1
            elif key[0] == "future":
                num, den = settings.local(key[1]), self.local[key[1]]
            else:
                _, replica, leader, follower_throttled, leader_throttled = key
                shares = [(settings.link(replica), self.inbound[replica]), (settings.link(leader), self.outbound[leader])]
                if follower_throttled:
                    shares.append((settings.rate(replica, FOLLOWER_THROTTLED_RATE), self.throttled_in[replica]))  # type: ignore[arg-type]
                if leader_throttled:
                    shares.append((settings.rate(leader, LEADER_THROTTLED_RATE), self.throttled_out[leader]))  # type: ignore[arg-type]
                num, den = _min_share(shares)
            if cls in changed or num * cls.rate_den != cls.rate_num * den:
                self._regroup(cls, num, den)
            cls.rate_num, cls.rate_den = num, den

    def _regroup(self, cls: _Class, num: int, den: int) -> None:
        """Settle the class's progress and give it its (new) group and next completion."""
        cls.base = cls.progress
        cls.version += 1  # whatever entry it had is stale now
        if not cls.members or num == 0:
            cls.group = None
            return
        divisor = math.gcd(num, den)
        rate = (num // divisor, den // divisor)
        group = self.groups.get(rate)
        if group is None:
            group = self.groups[rate] = _Group(*rate)
        cls.group, cls.joined_at = group, group.gained
        heap = cls.heap
        while self.targets.get(heap[0][1]) != heap[0][0]:
            heapq.heappop(heap)  # stale: dropped or re-added
        threshold = heap[0][0] - cls.base + cls.joined_at
        heapq.heappush(group.heap, (threshold, next(self._order), cls.version, cls))

    def next_completion_ms(self) -> int | None:
        """Milliseconds until the next copy completes at the current rates (None: nothing moves)."""
        best = None
        for rate, group in list(self.groups.items()):
            heap = group.heap
            while heap and (heap[0][2] != heap[0][3].version or heap[0][3].group is not group):
                heapq.heappop(heap)
            if not heap:
                del self.groups[rate]  # no class moves at this rate any more
                continue
            remaining = heap[0][0] - group.gained
            wait = -(-(remaining * 1000 * group.den) // group.num)  # ceil
            best = wait if best is None else min(best, wait)
        return best

    def advance(self, step_ms: int) -> None:
        for group in self.groups.values():
            group.gained += (group.num * step_ms) // (group.den * 1000)

    # Views -----------------------------------------------------------------------------------

    def sync(self) -> None:
        """Write every moving copy's bytes into `progress` (for the records a run ends with)."""
        for copy_key, target in self.targets.items():
            self.progress[copy_key] = self.copied(self.infos[copy_key], target)

    def copies(self) -> list[Copy]:
        result = []
        for key in sorted(self.by_partition, key=lambda k: (self.image.topics.name_of(k[0]), k[1])):
            for copy_key in self.by_partition[key]:
                info = self.infos[copy_key]
                rate = self.classes[info.rate_class].rate if copy_key in self.targets else Fraction(0)
                blocked = info.blocked or (ZERO_RATE if rate == 0 and info.copied < info.total else None)
                result.append(
                    Copy(info.topic_id, info.topic, info.partition, info.broker, info.future, info.source, info.directory,
                         self.copied(info), info.total, Fraction(0) if blocked else rate, blocked)
                )
        return result


def copies(
    image: Image,
    progress: Mapping[CopyKey, int] | None = None,
    partitions: Iterable[PartitionKey] | None = None,
    failed: Mapping[CopyKey, str] | None = None,
) -> list[Copy]:
    """Every copy of `partitions` (default: all that copy), with its rate or why it is blocked.

    `progress` overrides the bytes the image records (a simulation's running totals);
    `failed` blocks copies whose completion the controller refused.
    """
    engine = _Engine(
        image, candidate_partitions(image) if partitions is None else partitions, dict(progress or {}), dict(failed or {})
    )
    engine.update_rates()
    return engine.copies()


# Simulation --------------------------------------------------------------------------------------


@dataclass
class _Run:
    # The run's records so far: every request the run makes (a leader's AlterPartition, a
    # broker's AssignReplicasToDirs) is handled against the state the ones before it leave.
    work: WorkingImage
    now_ms: int
    completions: list[CopyCompletion] = field(default_factory=list)
    progress: dict[CopyKey, int] = field(default_factory=dict)
    failed: dict[CopyKey, str] = field(default_factory=dict)
    placed: list[tuple[str, int, int, str]] = field(default_factory=list)

    @property
    def image(self) -> Image:
        return self.work.image


def simulate(image: Image, duration_ms: int | None = None, *, horizon_ms: int = HORIZON_MS) -> Simulation:
    """Run the copies forward for `duration_ms`, or until nothing can progress (at most
    `horizon_ms`). Nothing is written: the records returned are what the run produced, ending
    with the clock when time moved."""
    if duration_ms is not None and duration_ms < 0:
        raise ValueError("duration_ms must not be negative")
    start = image.time_ms
    end = start + (horizon_ms if duration_ms is None else duration_ms)
    run = _Run(WorkingImage(image), start)
    partitions = candidate_partitions(image)
    _place_new_replicas(run, partitions)
    engine = _Engine(run.image, partitions, run.progress, run.failed)
    idle = False
    while True:
        due = engine.due()
        if due:
            touched = _complete(run, due)
            engine.image = run.image
            for key in touched:
                engine.load(key)
            continue
        engine.update_rates()
        wait = engine.next_completion_ms()
        if wait is None:
            idle = True
            break
        step = min(wait, end - run.now_ms)
        if step <= 0:
            break
        engine.advance(step)
        run.now_ms += step
    if duration_ms is not None:
        run.now_ms = end  # the clock moves the whole way even when the copies stopped early
    engine.update_rates()
    remaining = engine.copies()
    engine.sync()
    records = [*run.work.records, *_progress_records(run)]
    if run.now_ms != start:
        records.append(KjbodClockRecord(time_ms=run.now_ms))
    return Simulation(start, run.now_ms, tuple(records), tuple(run.completions), tuple(remaining), idle, tuple(run.placed))


def _place_new_replicas(run: _Run, partitions: list[PartitionKey]) -> None:
    """KIP-858: a broker with several directories chooses one for a replica it is given
    (UNASSIGNED) and tells the controller (AssignReplicasToDirs) before it fetches. kjbod lets
    each such broker make the `assign-dirs --auto` choice when the clock starts running."""
    from kjbod.controller.replication_control import ReplicationControl

    brokers = set()
    settings = CopySettings(run.image)
    infos = (info for key in partitions for info in _partition_copies(run.image, key, settings, {}, {}))
    for c in infos:
        if c.future or c.blocked is not None or c.directory != DirectoryId.UNASSIGNED:
            continue
        configured = {d.directory_id for d in run.image.cluster.log_dirs.get(c.broker, ())}
        if len(configured | set(run.image.cluster.brokers[c.broker].directories)) > 1:
            brokers.add(c.broker)
    mv = run.image.features.metadata_version
    if not brokers or mv is None or not mv.directory_assignment_supported:
        return
    for broker_id in sorted(brokers):
        result = ReplicationControl(run.image).auto_assign_dirs(broker_id, work=run.work)
        run.placed.extend(
            (r.topic, r.partition, broker_id, r.directory) for r in result.response.results if r.succeeded
        )


def _complete(run: _Run, due: list[_CopyInfo]) -> set[PartitionKey]:
    """Complete every copy that caught up at `run.now_ms`: followers first (one AlterPartition
    per partition, from its leader), then future replicas (AssignReplicasToDirs, then promotion).
    Returns the partitions to read again."""
    touched = {(c.topic_id, c.partition) for c in due}
    # Imported here: the controller package imports this module's users.
    from kjbod.controller.errors import ControllerApiError, Errors
    from kjbod.controller.replication_control import (
        AlterPartitionRequest,
        DirectoryAssignment,
        ReplicationControl,
    )

    followers: dict[PartitionKey, list[_CopyInfo]] = {}
    for c in due:
        if not c.future:
            followers.setdefault((c.topic_id, c.partition), []).append(c)
    work = run.work
    # Each leader's AlterPartition changes its own partition only: all of them are built against
    # the image as this step found it, and `built_at` checks that none changed what another did.
    image, built_at = work.image, len(work)
    for (topic_id, partition_id), caught_up in followers.items():
        topic = image.topics.get(topic_id)
        p = topic.partitions[partition_id]  # type: ignore[union-attr]
        joining = {c.broker for c in caught_up}
        request = AlterPartitionRequest(
            broker_id=p.leader, topic_id=topic_id, partition=partition_id, leader_epoch=p.leader_epoch,
            partition_epoch=p.partition_epoch, new_isr=p.isr + tuple(r for r in p.replicas if r in joining),
        )
        try:
            result = ReplicationControl(image).alter_partition(request)
            error = result.response.error
        except ControllerApiError as exc:
            result, error = None, exc.api_error.error
        if result is None or error not in (Errors.NONE, Errors.NEW_LEADER_ELECTED):
            for c in caught_up:
                run.failed[c.key] = f"the leader's AlterPartition failed with {error.name}"
            continue
        logs_gone = [
            KjbodReplicaLogRecord(topic_id=topic_id, partition_id=partition_id, broker_id=c.broker, size_bytes=None)
            for c in caught_up
            if (partition_id, c.broker, False) in topic.replica_logs  # type: ignore[union-attr]
        ]
        work.extend([*logs_gone, *result.records], built_at=built_at)
        for c in caught_up:
            run.progress.pop(c.key, None)
        now = work.partition(topic_id, partition_id)
        # One copy of a partition is credited with completing its reassignment.
        completed = p.is_reassigning and now is not None and not now.is_reassigning
        for c in caught_up:
            run.completions.append(CopyCompletion(run.now_ms, c.topic_id, c.topic, c.partition, c.broker, False, c.directory, completed))
            completed = False

    by_broker: dict[int, list[_CopyInfo]] = {}
    for c in due:
        topic = run.image.topics.get(c.topic_id)
        # A completed reassignment may have taken the replica, and its future replica, away.
        if c.future and topic is not None and topic.future_replica(c.partition, c.broker) is not None:
            by_broker.setdefault(c.broker, []).append(c)
    # A broker's AssignReplicasToDirs changes partitions another broker's may change too: each is
    # handled against the state the ones before it leave.
    for broker_id, caught_up in sorted(by_broker.items()):
        image = work.image
        assignments = [DirectoryAssignment(c.topic_id, c.partition, c.directory) for c in caught_up]
        try:
            result = ReplicationControl(image).assign_replicas_to_dirs(broker_id, assignments, work=work)
        except ControllerApiError as exc:
            for c in caught_up:
                run.failed[c.key] = f"AssignReplicasToDirs failed with {exc.api_error.error.name}"
            continue
        for c, item in zip(caught_up, result.response.results):
            if not item.succeeded:
                run.failed[c.key] = f"AssignReplicasToDirs failed with {item.error.name}"
                continue
            # Promotion: the future replica becomes the replica; its entry goes, and so does what
            # was recorded of the log it replaces (the promoted log is a complete copy).
            work.append(KjbodReplicaLogRecord(topic_id=c.topic_id, partition_id=c.partition, broker_id=broker_id, future=True, size_bytes=None))
            if (c.partition, broker_id, False) in image.topics.get(c.topic_id).replica_logs:  # type: ignore[union-attr]
                work.append(KjbodReplicaLogRecord(topic_id=c.topic_id, partition_id=c.partition, broker_id=broker_id, size_bytes=None))
            run.progress.pop(c.key, None)
            run.completions.append(CopyCompletion(run.now_ms, c.topic_id, c.topic, c.partition, broker_id, True, c.directory))
    return touched


def _progress_records(run: _Run) -> list[Record]:
    """The bytes each unfinished copy holds at the end, where that changed."""
    records: list[Record] = []
    for (topic_id, partition_id, broker_id, future), copied in sorted(run.progress.items()):
        topic = run.image.topics.get(topic_id)
        p = topic.partitions.get(partition_id) if topic else None
        if topic is None or p is None or broker_id not in p.replicas:
            continue
        log = topic.replica_logs.get((partition_id, broker_id, future))
        if future and log is None:
            continue  # the move was promoted or dropped
        if log is not None and log.size_bytes == copied:
            continue
        if log is None and copied == topic.size(partition_id):
            continue
        records.append(
            KjbodReplicaLogRecord(
                topic_id=topic_id, partition_id=partition_id, broker_id=broker_id, future=future,
                directory_id=log.directory_id if log else None, size_bytes=copied, offset_lag=log.offset_lag if log else 0,
            )
        )
    return records


# For people -------------------------------------------------------------------------------------


def outlook(image: Image) -> list[tuple[Copy, int | None]]:
    """Every copy now, with the milliseconds until it completes as `clock advance --until-idle`
    would run it (None when it never does within the horizon)."""
    run = simulate(image, horizon_ms=HORIZON_MS)
    done = {(c.topic_id, c.partition, c.broker, c.future): c.time_ms - image.time_ms for c in run.completions}
    return [(c, done.get(c.key)) for c in copies(image)]
