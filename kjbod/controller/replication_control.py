"""Topics and partitions: creation, leader and ISR changes, directory assignment and elections
(ReplicationControlManager, controller reference §5-§6).

Every operation builds its records in a WorkingImage over the image it was given, each against
the state the records before it leave, and returns them with a response; replaying them is what
changes the cluster state.
"""

from __future__ import annotations

import os
import random
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum

from kjbod.common.java import JavaRandom
from kjbod.common.kafka_configs import MIN_INSYNC_REPLICAS
from kjbod.common.kafka_uuid import DirectoryId, Uuid
from kjbod.common.versions import MetadataVersion
from kjbod.controller.cluster_control import ClusterControl
from kjbod.controller.errors import ApiError, ControllerApiError, Errors
from kjbod.controller.partition_change import Election, PartitionChangeBuilder
from kjbod.controller.placer import PlacementError, place
from kjbod.controller.result import MAX_RECORDS_PER_USER_OP, ControllerResult, refuse_excessive_records
from kjbod.controller.topic_configs import validate_topic_configs
from kjbod.common.kafka_release import NEWEST, KafkaRelease
from kjbod.controller.working import WorkingImage, working_image
from kjbod.errors import UserError
from kjbod.image import Image, PartitionRegistration
from kjbod.image.elr import elr_enabled, min_isr_config
from kjbod.records import (
    CONFIG_RESOURCE_BROKER,
    CONFIG_RESOURCE_TOPIC,
    ENTER_CONTROLLED_SHUTDOWN,
    FENCE,
    LEADER_RECOVERY_RECOVERED,
    UNFENCE,
    BrokerRegistrationChangeRecord,
    ClearElrRecord,
    ConfigRecord,
    KjbodPartitionSizeRecord,
    KjbodReplicaLogRecord,
    PartitionChangeRecord,
    PartitionRecord,
    Record,
    RemoveTopicRecord,
    TopicRecord,
    UnregisterBrokerRecord,
)

PartitionKey = tuple[str, int]
MAX_TOPIC_NAME_LENGTH = 249
_LEGAL_TOPIC_NAME = re.compile(r"[a-zA-Z0-9._-]+")
UNCLEAN_LEADER_ELECTION_ENABLE = "unclean.leader.election.enable"


# Requests and responses --------------------------------------------------------------------


@dataclass(frozen=True)
class CreateTopicRequest:
    name: str
    partitions: int | None = None
    replication_factor: int | None = None
    assignment: tuple[tuple[int, ...], ...] | None = None
    configs: Mapping[str, str] = field(default_factory=dict)
    seed: int | None = None


@dataclass(frozen=True)
class CreateTopicResponse:
    name: str
    topic_id: str
    assignment: tuple[tuple[int, ...], ...]


@dataclass(frozen=True)
class PartitionImpact:
    """How one partition changed: what an operator reads after a broker or disk event."""

    topic: str
    partition: int
    leader_before: int
    leader_after: int
    isr_before: tuple[int, ...]
    isr_after: tuple[int, ...]
    directories_before: tuple[str, ...]
    directories_after: tuple[str, ...]
    # Eligible leader replicas (KIP-966), with ELR on.
    elr_before: tuple[int, ...] = ()
    elr_after: tuple[int, ...] = ()

    @property
    def went_offline(self) -> bool:
        return self.leader_before != -1 and self.leader_after == -1


class BrokerState(Enum):
    FENCED = "FENCED"
    UNFENCED = "UNFENCED"
    CONTROLLED_SHUTDOWN = "CONTROLLED_SHUTDOWN"
    SHUTDOWN_NOW = "SHUTDOWN_NOW"

    @property
    def fenced(self) -> bool:
        return self in (BrokerState.FENCED, BrokerState.SHUTDOWN_NOW)


@dataclass(frozen=True)
class HeartbeatRequest:
    broker_id: int
    broker_epoch: int | None = None  # None: the broker's current epoch
    want_fence: bool = False
    want_shut_down: bool = False
    offline_log_dirs: tuple[str, ...] = ()
    # KIP-1066 (BrokerHeartbeatRequest v2 CordonedLogDirs): the ids of the directories the broker
    # holds cordoned; None before it caught up or below 4.3-IV0 (it sends nothing then).
    cordoned_log_dirs: tuple[str, ...] | None = None


@dataclass(frozen=True)
class HeartbeatReply:
    broker_id: int
    previous_state: BrokerState
    state: BrokerState
    is_caught_up: bool
    should_shut_down: bool
    # KIP-858: replicas of a multi-directory broker that have no directory keep it fenced.
    unassigned_replicas: int
    newly_offline_dirs: tuple[str, ...]
    impact: tuple[PartitionImpact, ...]
    # The cordoned directories the heartbeat wrote into the registration; None when unchanged.
    cordoned_change: tuple[str, ...] | None = None

    @property
    def is_fenced(self) -> bool:
        return self.state.fenced

    @property
    def in_controlled_shutdown(self) -> bool:
        return self.state is BrokerState.CONTROLLED_SHUTDOWN


@dataclass(frozen=True)
class BrokerChange:
    """The outcome of fence / shutdown / unregister: the broker's new state and the partitions moved."""

    broker_id: int
    state: str
    impact: tuple[PartitionImpact, ...]


@dataclass(frozen=True)
class DirectoryAssignment:
    topic: str  # a topic name or id, as the operator gave it
    partition: int
    directory: str  # a directory id (reserved ids allowed)


@dataclass(frozen=True)
class AssignmentResult:
    topic: str
    partition: int
    directory: str
    error: Errors

    @property
    def succeeded(self) -> bool:
        return self.error is Errors.NONE


@dataclass(frozen=True)
class AssignReplicasReply:
    broker_id: int
    results: tuple[AssignmentResult, ...]
    impact: tuple[PartitionImpact, ...]
    skipped: tuple[str, ...] = ()  # --auto: why some replicas were left alone


@dataclass(frozen=True)
class AlterPartitionRequest:
    """What a partition leader sends to change the ISR (and recovery state) of its partition."""

    broker_id: int
    topic_id: str
    partition: int
    leader_epoch: int
    partition_epoch: int
    new_isr: tuple[int, ...]
    leader_recovery_state: int = LEADER_RECOVERY_RECOVERED
    broker_epoch: int | None = None


@dataclass(frozen=True)
class ElectionResult:
    topic: str
    partition: int
    error: ApiError


@dataclass(frozen=True)
class ElectLeadersReply:
    election: Election
    results: tuple[ElectionResult, ...]
    impact: tuple[PartitionImpact, ...]


# Helpers -----------------------------------------------------------------------------------


def all_cordoned_text(broker_id: int) -> str:
    """4.4.0's InvalidReplicaAssignmentException for a broker whose directories are all cordoned."""
    return f"The manual partition assignment includes broker {broker_id}, but all its log directories are cordoned."


def validate_topic_name(name: str) -> None:
    """Kafka's Topic.validate, as ReplicationControlManager reports it (INVALID_TOPIC_EXCEPTION)."""
    problem = None
    if not name:
        problem = "Topic name is invalid: the empty string is not allowed"
    elif name in (".", ".."):
        problem = f"Topic name is invalid: '{name}' is not allowed"
    elif len(name) > MAX_TOPIC_NAME_LENGTH:
        problem = f"Topic name is invalid: the length of '{name}' is longer than the max allowed length {MAX_TOPIC_NAME_LENGTH}"
    elif not _LEGAL_TOPIC_NAME.fullmatch(name):
        problem = (
            f"Topic name is invalid: '{name}' contains one or more characters other than ASCII alphanumerics, "
            "'.', '_' and '-'"
        )
    if problem:
        raise ControllerApiError(Errors.INVALID_TOPIC_EXCEPTION, problem)


def has_collision_chars(name: str) -> bool:
    return "." in name or "_" in name


def summarize_changes(before: Image, work: WorkingImage, since: int = 0) -> tuple[PartitionImpact, ...]:
    """Every partition the records of `work` after the first `since` touched, as it was in
    `before` (the image they were built on) and as they leave it."""
    touched: dict[PartitionKey, None] = {}
    for record in work.records_since(since):
        if isinstance(record, PartitionChangeRecord):
            touched[(record.topic_id, record.partition_id)] = None
    if not touched:
        return ()
    after = work.image
    impact = []
    for topic_id, partition_id in touched:
        old = before.topics.partition(topic_id, partition_id)
        new = after.topics.partition(topic_id, partition_id)
        assert old is not None and new is not None
        impact.append(
            PartitionImpact(
                before.topics.name_of(topic_id), partition_id, old.leader, new.leader, old.isr, new.isr,
                old.directories, new.directories, old.elr, new.elr,
            )
        )
    return tuple(sorted(impact, key=lambda i: (i.topic, i.partition)))


def broker_state(image: Image, broker_id: int) -> BrokerState:
    broker = image.cluster.brokers[broker_id]
    if broker.fenced:
        return BrokerState.FENCED
    return BrokerState.CONTROLLED_SHUTDOWN if broker.in_controlled_shutdown else BrokerState.UNFENCED


def next_broker_state(current: BrokerState, want_fence: bool, want_shut_down: bool, has_leaderships: bool) -> BrokerState:
    """`calculateNextBrokerState` (BHM:535-612) for a broker that is caught up, as kjbod's are."""
    if current is BrokerState.FENCED:
        if want_shut_down:
            return BrokerState.SHUTDOWN_NOW
        return BrokerState.FENCED if want_fence else BrokerState.UNFENCED
    if current is BrokerState.UNFENCED:
        if want_fence:
            return BrokerState.SHUTDOWN_NOW if want_shut_down else BrokerState.FENCED
        if want_shut_down:
            return BrokerState.CONTROLLED_SHUTDOWN if has_leaderships else BrokerState.SHUTDOWN_NOW
        return BrokerState.UNFENCED
    # Controlled shutdown ignores the request's flags; it ends once the leaderships are gone.
    return BrokerState.CONTROLLED_SHUTDOWN if has_leaderships else BrokerState.SHUTDOWN_NOW


class ReplicationControl:
    def __init__(self, image: Image, cluster: ClusterControl | None = None, release: KafkaRelease = NEWEST) -> None:
        self._image = image
        self._cluster = cluster or ClusterControl(image)
        # The Kafka release the controller runs: which topic configs exist.
        self._release = release

    @property
    def _mv(self) -> MetadataVersion:
        return self._cluster.metadata_version

    def refuses_all_cordoned(self, broker_id: int) -> bool:
        """Whether a manual assignment naming this (registered) broker is refused because all its
        directories are cordoned: only by 4.4.0's controller (RCM 4.4.0 :2049-2050)."""
        broker = self._cluster.broker(broker_id)
        return (
            self._release.refuses_all_cordoned_brokers_in_manual_assignments and broker is not None and not broker.has_uncordoned_dirs()
        )

    # Leader and ISR updates (RCM:1888-1969) -----------------------------------------------

    def unclean_election_enabled(self, topic_id: str) -> bool:
        """The topic's unclean.leader.election.enable, else the cluster default, else false."""
        configs = self._image.configs
        topic = self._image.topics.get(topic_id)
        for value in (
            configs.get(CONFIG_RESOURCE_TOPIC, topic.name if topic else "").get(UNCLEAN_LEADER_ELECTION_ENABLE),
            configs.get(CONFIG_RESOURCE_BROKER, "").get(UNCLEAN_LEADER_ELECTION_ENABLE),
        ):
            if value is not None:
                return value.strip().lower() == "true"
        return False

    def leader_acceptor(self, partition: PartitionRegistration, remove: int = -1, add: int = -1):  # noqa: ANN201
        """Kafka's LeaderAcceptor: active (or the broker being unfenced) with an online directory."""
        cluster = self._cluster

        def accept(replica: int) -> bool:
            if replica == remove or not (replica == add or cluster.is_active(replica)):
                return False
            return cluster.has_online_dir(replica, partition.directory(replica))

        return accept

    @property
    def elr_enabled(self) -> bool:
        """eligible.leader.replicas.version >= 1 (FeatureControlManager.isElrFeatureEnabled)."""
        return elr_enabled(self._image.features)

    def effective_min_isr(self, work: WorkingImage, topic_id: str) -> int:
        """RCM.getTopicEffectiveMinIsr (4.4.0 :2463-2467): the topic's min.insync.replicas as the
        active controller resolves it, at most the replication factor of its partition 0."""
        topic = self._image.topics.get(topic_id)
        name = topic.name if topic is not None else ""
        quorum = self._image.quorum
        controller = quorum.leader_id if quorum.is_modelled else None
        first = work.partition(topic_id, 0)
        factor = len(first.replicas) if first is not None else 0
        return min(min_isr_config(self._image.configs, name, controller), factor)

    def change_builder(self, work: WorkingImage, key: PartitionKey, *, remove: int = -1, add: int = -1) -> PartitionChangeBuilder:
        """A PartitionChangeBuilder for the partition as the operation's records so far leave it
        (`work.build` appends its record), with the leader acceptor of that state, the topic's
        effective min ISR and the ELR switch (as every builder of Kafka's RCM is made)."""
        partition = work.partition(*key)
        if partition is None:
            raise RuntimeError(f"partition {key[0]}:{key[1]} does not exist")
        acceptor = self.leader_acceptor(partition, remove, add)
        return PartitionChangeBuilder(
            partition, key[0], key[1], acceptor, self._mv, self._cluster.default_dir,
            min_isr=self.effective_min_isr(work, key[0]), elr_enabled=self.elr_enabled,
        )

    def leader_and_isr_updates(
        self, work: WorkingImage, partitions: Iterable[PartitionKey], *, remove: int = -1, add: int = -1, unclean_shutdown: int = -1
    ) -> None:
        """Take `remove` out of each ISR (electing a new leader where needed), or let `add` lead;
        `unclean_shutdown` leaves the ISR and the ELR and may not lead
        (generateLeaderAndIsrUpdates, 4.4.0 RCM:2091-2147).

        Partitions are taken in (topic id, partition) order, so the records do not depend on how
        the caller's set was built."""
        gone = {remove, unclean_shutdown} - {-1}
        for key in sorted(partitions):
            builder = self.change_builder(work, key, remove=remove if remove != -1 else unclean_shutdown, add=add)
            builder.set_election(Election.UNCLEAN if self.unclean_election_enabled(key[0]) else Election.ONLINE)
            if unclean_shutdown != -1:
                builder.set_unclean_shutdown_replicas([unclean_shutdown])
            builder.set_target_isr([r for r in builder.partition.isr if r not in gone])
            work.build(builder)

    def partitions_with_elr_member(self, image: Image, broker_id: int) -> list[PartitionKey]:
        """The partitions whose ELR lists the broker (Kafka's BrokersToElrs index): ELR members
        are replicas, so they are among the broker's replicas."""
        topics = image.topics
        return [key for key in topics.index.on_broker.get(broker_id, ()) if broker_id in topics.partition(*key).elr]  # type: ignore[union-attr]

    # Broker lifecycle (RCM:1287-1426, 1533-1612) ---------------------------------------------

    # Each of these appends to `work` and reads the state as the records before leave it: a
    # heartbeat that unfences a broker and reports one of its directories offline takes the
    # leaderships it was just given in that directory away again. Kafka builds both from the
    # state before the heartbeat (4.3.1 ReplicationControlManager.java:1669-1709) and leaves
    # such a leader in an offline directory; kjbod implements the intended behaviour.

    def _fenced_records(self, work: WorkingImage, broker_id: int) -> None:
        image = work.image
        self.leader_and_isr_updates(work, image.topics.index.in_isr.get(broker_id, []), remove=broker_id)
        work.append(BrokerRegistrationChangeRecord(version=0, broker_id=broker_id, broker_epoch=image.cluster.brokers[broker_id].epoch, fenced=FENCE))

    def _unfenced_records(self, work: WorkingImage, broker_id: int) -> None:
        image = work.image
        work.append(BrokerRegistrationChangeRecord(version=0, broker_id=broker_id, broker_epoch=image.cluster.brokers[broker_id].epoch, fenced=UNFENCE))
        self.leader_and_isr_updates(work, image.topics.index.leaderless, add=broker_id)

    def _controlled_shutdown_records(self, work: WorkingImage, broker_id: int) -> None:
        image = work.image
        broker = image.cluster.brokers[broker_id]
        if not broker.in_controlled_shutdown:
            work.append(
                BrokerRegistrationChangeRecord(
                    version=1, broker_id=broker_id, broker_epoch=broker.epoch, in_controlled_shutdown=ENTER_CONTROLLED_SHUTDOWN
                )
            )
        self.leader_and_isr_updates(work, image.topics.index.in_isr.get(broker_id, []), remove=broker_id)

    def shutdown_records(self, work: WorkingImage, broker_id: int, clean: bool) -> None:
        """A registered broker's new incarnation: its previous one shut down
        (handleBrokerShutdown, 4.4.0 RCM:1512-1521). After an unclean shutdown with ELR on it
        leaves the ISRs and the ELRs and is eligible nowhere until it is back in an ISR;
        otherwise it is handled as fenced."""
        image = work.image
        in_isr = list(image.topics.index.in_isr.get(broker_id, []))
        if self.elr_enabled and not clean:
            in_elr = self.partitions_with_elr_member(image, broker_id)
            self.leader_and_isr_updates(work, in_isr, unclean_shutdown=broker_id)
            self.leader_and_isr_updates(work, in_elr, unclean_shutdown=broker_id)
        else:
            self.leader_and_isr_updates(work, in_isr, remove=broker_id)

    def _directories_offline_records(self, work: WorkingImage, broker_id: int, offline: Iterable[str]) -> tuple[str, ...]:
        image = work.image
        broker = image.cluster.brokers[broker_id]
        newly_offline = broker.directory_intersection(set(offline))
        if not newly_offline:
            return ()
        index = image.topics.index.in_directory
        for directory in newly_offline:
            self.leader_and_isr_updates(work, index.get(directory, []), remove=broker_id)
        work.extend(self._futures_lost(image, broker_id, set(newly_offline)))
        work.append(
            BrokerRegistrationChangeRecord(
                version=2, broker_id=broker_id, broker_epoch=broker.epoch,
                log_dirs=broker.directory_difference(set(offline)),
            )
        )
        return newly_offline

    @staticmethod
    def _futures_lost(image: Image, broker_id: int, failed: set[str]) -> list[Record]:
        """Future replicas (KIP-113) the broker was building in a directory that failed: their
        logs are gone and the moves end there; the replicas stay where they are (KIP-858: the
        broker cancels a promotion it can no longer make)."""
        return [
            KjbodReplicaLogRecord(topic_id=topic_id, partition_id=pid, broker_id=broker_id, future=True, size_bytes=None)
            for topic_id, pid in image.topics.future_replicas(broker_id, failed)
        ]

    def replicas_needing_directory(self, broker_id: int) -> tuple[list[PartitionKey], list[str]]:
        """The broker-side rule of KIP-858: which of its replicas it must place in a directory
        (and report with AssignReplicasToDirs), and notes on the ones it must leave alone.

        UNASSIGNED and MIGRATING replicas were never placed. A replica whose directory is LOST or
        not one of the broker's (a replaced disk) is recreated, unless one of the broker's own
        directories is offline: it might be on that disk.
        """
        broker = self._image.cluster.brokers[broker_id]
        if not self._mv.directory_assignment_supported:
            return [], []
        configured = {d.directory_id for d in self._image.cluster.log_dirs.get(broker_id, ())} | set(broker.directories)
        some_offline = bool(configured - set(broker.directories))
        needing: list[PartitionKey] = []
        notes: list[str] = []
        for key in sorted(self._image.topics.index.on_broker.get(broker_id, ())):
            current = self._image.topics.partition(*key).directory(broker_id)  # type: ignore[union-attr]
            if current in broker.directories:
                continue
            if current not in (DirectoryId.UNASSIGNED, DirectoryId.MIGRATING) and some_offline:
                notes.append(f"{self._image.topics.name_of(key[0])}-{key[1]}: its directory is unknown while a directory is offline")
                continue
            needing.append(key)
        return needing, notes

    def unassigned_replicas(self, broker_id: int) -> list[PartitionKey]:
        """Replicas that keep a multi-directory broker from asking to be unfenced (KIP-858)."""
        if len(self._image.cluster.brokers[broker_id].directories) <= 1:
            return []
        return self.replicas_needing_directory(broker_id)[0]

    def heartbeat(self, request: HeartbeatRequest, *, work: WorkingImage | None = None) -> ControllerResult[HeartbeatReply]:
        """A broker's heartbeat (with `work`, the next request of a larger operation: see working_image)."""
        broker = self._cluster.broker(request.broker_id)
        if broker is None:
            raise ControllerApiError(
                Errors.STALE_BROKER_EPOCH, f"Receive a heartbeat from broker {request.broker_id} before registration"
            )
        self._cluster.check_broker_epoch(request.broker_id, broker.epoch if request.broker_epoch is None else request.broker_epoch)
        unassigned = self.unassigned_replicas(request.broker_id)
        # A fenced multi-directory broker does not ask to be unfenced while replicas lack a directory.
        want_fence = request.want_fence or (broker.fenced and bool(unassigned))
        current = broker_state(self._image, request.broker_id)
        has_leaderships = bool(self._image.topics.index.led_by.get(request.broker_id))
        state = next_broker_state(current, want_fence, request.want_shut_down, has_leaderships)
        work = working_image(self._image, work)
        mark = len(work)
        if state is not current:
            if state.fenced:
                self._fenced_records(work, request.broker_id)
            elif state is BrokerState.UNFENCED:
                self._unfenced_records(work, request.broker_id)
            else:
                self._controlled_shutdown_records(work, request.broker_id)
        newly_offline: tuple[str, ...] = ()
        if self._mv.directory_assignment_supported and request.offline_log_dirs:
            newly_offline = self._directories_offline_records(work, request.broker_id, request.offline_log_dirs)
        # After fencing and offline directories, against the registration the heartbeat started
        # from (RCM 4.4.0 :1729-1730, handleDirectoriesCordoned :1579-1588).
        cordoned = self._cluster.cordoned_change(broker, request.cordoned_log_dirs)
        work.extend(cordoned)
        reply = HeartbeatReply(
            request.broker_id, current, state, True, state is BrokerState.SHUTDOWN_NOW, len(unassigned),
            newly_offline, summarize_changes(self._image, work, mark),
            request.cordoned_log_dirs if cordoned else None,
        )
        return ControllerResult.of(work.records_since(mark), reply)

    def fence_broker(self, broker_id: int) -> ControllerResult[BrokerChange]:
        """The broker's session expired (maybeFenceOneStaleBroker)."""
        broker = self._require_broker(broker_id)
        work = WorkingImage(self._image)
        if not broker.fenced:
            self._fenced_records(work, broker_id)
        return ControllerResult.of(work.records, BrokerChange(broker_id, "FENCED", summarize_changes(self._image, work)))

    def controlled_shutdown(self, broker_id: int) -> ControllerResult[BrokerChange]:
        """The broker asks to shut down and keeps heartbeating until the controller says go:
        leadership moves away first, then the broker is fenced."""
        self._require_broker(broker_id)
        work = WorkingImage(self._image)
        for _ in range(2):  # at most: into controlled shutdown, then out of it
            step = ReplicationControl(work.image).heartbeat(HeartbeatRequest(broker_id, want_shut_down=True), work=work)
            if step.response.should_shut_down:
                break
        state = broker_state(work.image, broker_id)
        return ControllerResult.of(work.records, BrokerChange(broker_id, state.value, summarize_changes(self._image, work)))

    def unregister_broker(self, broker_id: int) -> ControllerResult[BrokerChange]:
        broker = self._cluster.broker(broker_id)
        if broker is None:
            raise ControllerApiError(Errors.BROKER_ID_NOT_REGISTERED, f"Broker ID {broker_id} is not currently registered")
        work = WorkingImage(self._image)
        # handleBrokerUnregistered (4.4.0 RCM:1453-1460): the partitions with the broker in the
        # ISR, then those with it in the ELR (where it stays, but can no longer lead).
        self.leader_and_isr_updates(work, self._image.topics.index.in_isr.get(broker_id, []), remove=broker_id)
        self.leader_and_isr_updates(work, self.partitions_with_elr_member(self._image, broker_id), remove=broker_id)
        work.append(UnregisterBrokerRecord(broker_id=broker_id, broker_epoch=broker.epoch))
        return ControllerResult.of(work.records, BrokerChange(broker_id, "UNREGISTERED", summarize_changes(self._image, work)))

    def _require_broker(self, broker_id: int):  # noqa: ANN202
        broker = self._cluster.broker(broker_id)
        if broker is None:
            raise ControllerApiError(Errors.BROKER_ID_NOT_REGISTERED, f"Broker ID {broker_id} is not currently registered")
        return broker

    # Topics (RCM:587-830, 939-970) --------------------------------------------------------

    def _topic_by_name(self, name: str):  # noqa: ANN202
        return self._image.topics.by_name.get(name)

    def create_topic(self, request: CreateTopicRequest) -> ControllerResult[CreateTopicResponse]:
        mv = self._mv
        validate_topic_name(request.name)
        if self._topic_by_name(request.name) is not None:
            raise ControllerApiError(Errors.TOPIC_ALREADY_EXISTS, f"Topic '{request.name}' already exists.")
        colliding = request.name.replace(".", "_")
        for existing in self._image.topics.by_name:
            if existing.replace(".", "_") == colliding:
                raise ControllerApiError(
                    Errors.INVALID_TOPIC_EXCEPTION, f"Topic '{request.name}' collides with existing topic: {existing}"
                )
        validate_topic_configs(request.configs, self._release)
        self._check_topic_record_count(request)
        if request.assignment is not None:
            assignment, isrs = self._manual_assignment(request.assignment)
        else:
            assignment, isrs = self._placed_assignment(request)
        # A seeded run gets repeatable ids; the name keeps topics created with one seed apart.
        rng = random.Random(f"{request.seed}:{request.name}") if request.seed is not None else None
        topic_id = str(Uuid.random(rng))
        while self._image.topics.get(topic_id) is not None:
            topic_id = str(Uuid.random(rng))
        records: list[Record] = [TopicRecord(name=request.name, topic_id=topic_id)]
        records.extend(
            ConfigRecord(resource_type=CONFIG_RESOURCE_TOPIC, resource_name=request.name, name=key, value=value)
            for key, value in sorted(request.configs.items())
        )
        if self.elr_enabled and MIN_INSYNC_REPLICAS in request.configs:
            # The topic's configs go through incrementalAlterConfig, which follows a
            # min.insync.replicas ConfigRecord with a ClearElrRecord for its resource
            # (ConfigurationControlManager.createClearElrRecordsAsNeeded, 4.3.1 :235-255; RCM :845-849).
            records.append(ClearElrRecord(topic_name=request.name))
        for partition_id, (replicas, isr) in enumerate(zip(assignment, isrs)):
            directories = tuple(self._cluster.default_dir(r) for r in replicas)
            records.append(
                PartitionRecord(
                    version=mv.partition_record_version,
                    partition_id=partition_id,
                    topic_id=topic_id,
                    replicas=replicas,
                    isr=isr,
                    leader=isr[0],  # the first in-sync replica, not necessarily replicas[0]
                    leader_recovery_state=LEADER_RECOVERY_RECOVERED,
                    leader_epoch=0,
                    partition_epoch=0,
                    directories=directories if mv.directory_assignment_supported else (),
                )
            )
        return ControllerResult.atomic_of(records, CreateTopicResponse(request.name, topic_id, tuple(assignment)))

    @staticmethod
    def _check_topic_record_count(request: CreateTopicRequest) -> None:
        """A TopicRecord, a ConfigRecord per config and a PartitionRecord per partition: refused
        before placing the partitions when that is more than one operation may write."""
        partitions = len(request.assignment) if request.assignment is not None else request.partitions
        if partitions is None or partitions <= 0:
            return  # the default (1), or invalid: said below
        needed = 1 + len(request.configs) + partitions
        if needed > MAX_RECORDS_PER_USER_OP:
            refuse_excessive_records(
                f"Creating topic {request.name} with {partitions} partitions needs {needed} records",
                f"create it with at most {MAX_RECORDS_PER_USER_OP - 1 - len(request.configs)} partitions",
            )

    def _manual_assignment(self, assignment: Sequence[Sequence[int]]) -> tuple[list[tuple[int, ...]], list[tuple[int, ...]]]:
        replicas_per_partition = None
        isrs = []
        for partition_id, replicas in enumerate(assignment):
            prefix = "The manual partition assignment"
            if not replicas:
                raise ControllerApiError(Errors.INVALID_REPLICA_ASSIGNMENT, f"{prefix} includes an empty replica list.")
            seen: set[int] = set()
            for broker in replicas:
                if self._cluster.broker(broker) is None:
                    raise ControllerApiError(
                        Errors.INVALID_REPLICA_ASSIGNMENT, f"{prefix} includes broker {broker}, but no such broker is registered."
                    )
                if self.refuses_all_cordoned(broker):
                    raise ControllerApiError(Errors.INVALID_REPLICA_ASSIGNMENT, all_cordoned_text(broker))
                if broker in seen:
                    raise ControllerApiError(
                        Errors.INVALID_REPLICA_ASSIGNMENT, f"{prefix} includes the broker {broker} more than once."
                    )
                seen.add(broker)
            if replicas_per_partition is not None and len(replicas) != replicas_per_partition:
                raise ControllerApiError(
                    Errors.INVALID_REPLICA_ASSIGNMENT,
                    f"{prefix} includes a partition with {len(replicas)} replica(s), but this is not consistent with "
                    f"previous partitions, which have {replicas_per_partition} replica(s).",
                )
            replicas_per_partition = len(replicas)
            isr = tuple(r for r in replicas if self._cluster.is_active(r))
            if not isr:
                raise ControllerApiError(
                    Errors.INVALID_REPLICA_ASSIGNMENT,
                    f"All brokers specified in the manual partition assignment for partition {partition_id} are fenced "
                    "or in controlled shutdown.",
                )
            isrs.append(isr)
        return [tuple(r) for r in assignment], isrs

    def _placed_assignment(self, request: CreateTopicRequest) -> tuple[list[tuple[int, ...]], list[tuple[int, ...]]]:
        partitions = 1 if request.partitions in (None, -1) else request.partitions
        factor = 3 if request.replication_factor in (None, -1) else request.replication_factor
        if factor is not None and factor <= 0:
            raise ControllerApiError(
                Errors.INVALID_REPLICATION_FACTOR, "Replication factor must be larger than 0, or -1 to use the default value."
            )
        if partitions is not None and partitions <= 0:
            raise ControllerApiError(Errors.INVALID_PARTITIONS, "Number of partitions was set to an invalid non-positive value.")
        seed = request.seed if request.seed is not None else int.from_bytes(os.urandom(8), "big", signed=True)
        try:
            placed = place(self._cluster.usable_brokers(), partitions, factor, JavaRandom(seed))
        except PlacementError as exc:
            raise ControllerApiError(
                Errors.INVALID_REPLICATION_FACTOR, f"Unable to replicate the partition {factor} time(s): {exc}"
            ) from None
        assignment = [tuple(replicas) for replicas in placed]
        isrs = [tuple(r for r in replicas if self._cluster.is_active(r)) for replicas in assignment]
        if any(not isr for isr in isrs):
            raise ControllerApiError(
                Errors.INVALID_REPLICATION_FACTOR,
                f"Unable to replicate the partition {factor} time(s): All brokers are currently fenced or in controlled shutdown.",
            )
        return assignment, isrs

    def delete_topic(self, name: str) -> ControllerResult[str]:
        topic = self._topic_by_name(name)
        if topic is None:
            raise UserError(f"Topic '{name}' does not exist as expected")
        return ControllerResult.atomic_of([RemoveTopicRecord(topic_id=topic.topic_id)], topic.topic_id)

    def set_partition_sizes(self, name: str, partition: int | None, size_bytes: int) -> ControllerResult[int]:
        """kjbod's own: the size of one partition's log, or of every partition of the topic."""
        topic = self._topic_by_name(name)
        if topic is None:
            raise UserError(f"Topic '{name}' does not exist as expected")
        if size_bytes < 0:
            raise UserError(f"A partition size cannot be negative: {size_bytes}")
        if partition is not None and partition not in topic.partitions:
            raise UserError(f"Topic '{name}' has no partition {partition} (it has {len(topic.partitions)})")
        ids = sorted(topic.partitions) if partition is None else [partition]
        records = [KjbodPartitionSizeRecord(topic_id=topic.topic_id, partition_id=i, size_bytes=size_bytes) for i in ids]
        return ControllerResult.atomic_of(records, len(records))

    # AssignReplicasToDirs (RCM:2151-2224) ---------------------------------------------------

    def _topic_id_for(self, topic: str) -> str | None:
        by_name = self._image.topics.by_name.get(topic)
        if by_name is not None:
            return by_name.topic_id
        return topic if self._image.topics.get(topic) is not None else None

    def assign_replicas_to_dirs(
        self, broker_id: int, assignments: Sequence[DirectoryAssignment], broker_epoch: int | None = None, *, work: WorkingImage | None = None
    ) -> ControllerResult[AssignReplicasReply]:
        """A broker's AssignReplicasToDirs (with `work`, the next request of a larger operation:
        see working_image; a refused request raises before appending anything)."""
        if not self._mv.directory_assignment_supported:
            raise ControllerApiError(Errors.UNSUPPORTED_VERSION, "Directory assignment is not supported yet.")
        broker = self._cluster.broker(broker_id)
        epoch = broker.epoch if broker is not None and broker_epoch is None else broker_epoch
        broker = self._cluster.check_broker_epoch(broker_id, -1 if epoch is None else epoch)
        work = working_image(self._image, work)
        mark = len(work)
        results: list[AssignmentResult] = []
        offline_partitions: dict[PartitionKey, None] = {}
        for item in assignments:
            topic_id = self._topic_id_for(item.topic)
            partition = work.partition(topic_id, item.partition) if topic_id else None
            if topic_id is None:
                error = Errors.UNKNOWN_TOPIC_ID
            elif partition is None:
                error = Errors.UNKNOWN_TOPIC_OR_PARTITION
            elif broker_id not in partition.replicas:
                error = Errors.NOT_LEADER_OR_FOLLOWER
            else:
                error = Errors.NONE
                record = work.build(self.change_builder(work, (topic_id, item.partition)).set_directory(broker_id, item.directory))
                if record is not None and self._data_lost(broker, partition.directory(broker_id), item.directory):
                    # The replica's data stayed on a dead or unknown disk: it refills from the leader.
                    work.append(KjbodReplicaLogRecord(topic_id=topic_id, partition_id=item.partition, broker_id=broker_id, size_bytes=0))
                if not broker.has_online_dir(item.directory):
                    offline_partitions[(topic_id, item.partition)] = None
            results.append(AssignmentResult(item.topic, item.partition, item.directory, error))
        # Kafka builds these from the state before the request (4.3.1
        # ReplicationControlManager.java:2391-2393), where only the directories differ: the
        # same ISR and leader changes.
        self.leader_and_isr_updates(work, offline_partitions, remove=broker_id)
        reply = AssignReplicasReply(broker_id, tuple(results), summarize_changes(self._image, work, mark))
        return ControllerResult.of(work.records_since(mark), reply)

    @staticmethod
    def _data_lost(broker, old: str, new: str) -> bool:  # noqa: ANN001
        """A replica moved from a directory that is not online (LOST, failed, replaced) to one
        that is: its log is empty there. UNASSIGNED/MIGRATING replicas were never placed."""
        placed_nowhere = old in (DirectoryId.UNASSIGNED, DirectoryId.MIGRATING)
        return not placed_nowhere and not broker.has_online_dir(old) and broker.has_online_dir(new)

    def auto_assign_dirs(self, broker_id: int, *, work: WorkingImage | None = None) -> ControllerResult[AssignReplicasReply]:
        """What the broker itself does under KIP-858: give every replica without a usable
        directory the least-loaded online, uncordoned directory (with `work`, as the next
        request of a larger operation: see working_image)."""
        broker = self._require_broker(broker_id)
        if not self._mv.directory_assignment_supported:
            raise ControllerApiError(Errors.UNSUPPORTED_VERSION, "Directory assignment is not supported yet.")
        needing, skipped = self.replicas_needing_directory(broker_id)
        # LogManager.nextLogDirs (4.4.0 storage LogManager.java:1672-1694; 4.3.1
        # kafka/log/LogManager.scala:1386-1404): the live directories in log.dirs order, fewest
        # logs first (a stable sort: ties keep log.dirs order), cordoned ones left out; when all
        # are cordoned, the first live directory.
        configured = [d.directory_id for d in self._image.cluster.log_dirs.get(broker_id, ())]
        live = [d for d in configured if d in broker.directories] + [d for d in broker.directories if d not in configured]
        candidates = [d for d in live if d not in broker.cordoned_directories] if len(live) > 1 else live
        load = {d: len(self._image.topics.index.in_directory.get(d, [])) for d in live}
        assignments: list[DirectoryAssignment] = []
        for topic_id, partition_id in needing:
            if not live:
                skipped.append(f"{self._image.topics.name_of(topic_id)}-{partition_id}: the broker has no online directory")
                continue
            target = min(candidates, key=lambda d: load[d]) if candidates else live[0]
            load[target] += 1
            assignments.append(DirectoryAssignment(topic_id, partition_id, target))
        result = self.assign_replicas_to_dirs(broker_id, assignments, work=work)
        named = tuple(
            AssignmentResult(self._image.topics.name_of(r.topic), r.partition, r.directory, r.error) for r in result.response.results
        )
        reply = AssignReplicasReply(broker_id, named, result.response.impact, tuple(skipped))
        return ControllerResult.of(result.records, reply)

    # AlterPartition (RCM:1008-1276) ----------------------------------------------------------

    def alter_partition(self, request: AlterPartitionRequest) -> ControllerResult[ApiError]:
        """The leader's ISR change; the first failing check wins (RCM:1150-1254). A change that
        completes a reassignment may move leadership away from the sender: the reply is then
        NEW_LEADER_ELECTED and the record is still written."""
        broker = self._cluster.broker(request.broker_id)
        epoch = broker.epoch if broker is not None and request.broker_epoch is None else request.broker_epoch
        self._cluster.check_broker_epoch(request.broker_id, -1 if epoch is None else epoch)
        partition = self._image.topics.partition(request.topic_id, request.partition)
        if partition is None:
            return ControllerResult.of([], ApiError(Errors.UNKNOWN_TOPIC_OR_PARTITION))
        if request.leader_epoch > partition.leader_epoch or request.partition_epoch > partition.partition_epoch:
            return ControllerResult.of([], ApiError(Errors.NOT_CONTROLLER))
        if request.leader_epoch < partition.leader_epoch:
            return ControllerResult.of([], ApiError(Errors.FENCED_LEADER_EPOCH))
        if request.broker_id != partition.leader:
            return ControllerResult.of([], ApiError(Errors.INVALID_REQUEST))
        if request.partition_epoch < partition.partition_epoch:
            return ControllerResult.of([], ApiError(Errors.INVALID_UPDATE_VERSION))
        isr = request.new_isr
        if (
            len(set(isr)) != len(isr)
            or any(r < 0 or r not in partition.replicas for r in isr)
            or partition.leader not in isr
        ):
            return ControllerResult.of([], ApiError(Errors.INVALID_REQUEST))
        if request.leader_recovery_state == LEADER_RECOVERY_RECOVERED + 1 and (
            len(isr) > 1 or partition.leader_recovery_state == LEADER_RECOVERY_RECOVERED
        ):
            return ControllerResult.of([], ApiError(Errors.INVALID_REQUEST))
        for replica in isr:
            if not self._cluster.is_active(replica):
                return ControllerResult.of([], ApiError(Errors.INELIGIBLE_REPLICA))
        work = WorkingImage(self._image)
        builder = self.change_builder(work, (request.topic_id, request.partition))
        builder.set_election(Election.UNCLEAN if self.unclean_election_enabled(request.topic_id) else Election.ONLINE)
        builder.set_target_isr(isr).set_target_leader_recovery_state(request.leader_recovery_state)
        record = work.build(builder)
        if record is not None and record.leader not in (-2, request.broker_id):
            return ControllerResult.of(work.records, ApiError(Errors.NEW_LEADER_ELECTED))
        return ControllerResult.of(work.records, ApiError(Errors.NONE))

    # Elections (RCM:1428-1531) -------------------------------------------------------------

    def elect_leaders(self, election: Election, partitions: Sequence[tuple[str, int]] | None) -> ControllerResult[ElectLeadersReply]:
        if election not in (Election.PREFERRED, Election.UNCLEAN):
            raise ControllerApiError(Errors.INVALID_REQUEST, f"Unknown election type {election}")
        all_partitions = partitions is None
        if partitions is None:
            partitions = [(topic.name, pid) for topic, pid, _ in self._image.topics.partitions()]
        work = WorkingImage(self._image)
        results: list[ElectionResult] = []
        for name, partition_id in partitions:
            error = self._elect_one(work, election, name, partition_id)
            if len(work) > MAX_RECORDS_PER_USER_OP:
                refuse_excessive_records(
                    f"Electing leaders for {len(partitions)} partitions needs more than {MAX_RECORDS_PER_USER_OP} records",
                    f"elect at most {MAX_RECORDS_PER_USER_OP} partitions at a time (--topic/--partition or --path-to-json-file)",
                )
            if all_partitions and error.error is Errors.ELECTION_NOT_NEEDED:
                continue
            results.append(ElectionResult(name, partition_id, error))
        reply = ElectLeadersReply(election, tuple(results), summarize_changes(self._image, work))
        return ControllerResult.atomic_of(work.records, reply)

    def _elect_one(self, work: WorkingImage, election: Election, name: str, partition_id: int) -> ApiError:
        topic = self._topic_by_name(name)
        if topic is None:
            return ApiError(Errors.UNKNOWN_TOPIC_OR_PARTITION, f"No such topic as {name}")
        partition = work.partition(topic.topic_id, partition_id)
        if partition is None:
            return ApiError(Errors.UNKNOWN_TOPIC_OR_PARTITION, f"No such partition as {name}-{partition_id}")
        if (election is Election.PREFERRED and partition.has_preferred_leader) or (
            election is Election.UNCLEAN and partition.has_leader
        ):
            return ApiError(Errors.ELECTION_NOT_NEEDED)
        record = work.build(self.change_builder(work, (topic.topic_id, partition_id)).set_election(election))
        if record is None:
            return ApiError(
                Errors.PREFERRED_LEADER_NOT_AVAILABLE if election is Election.PREFERRED else Errors.ELIGIBLE_LEADERS_NOT_AVAILABLE
            )
        return ApiError(Errors.NONE)
