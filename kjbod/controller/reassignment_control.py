"""Partition reassignments: Kafka's three-stage protocol and its cancellation
(ReplicationControlManager.alterPartitionReassignments and listPartitionReassignments), the
broker side of AlterReplicaLogDirs (KIP-113 future replicas, KIP-858 directory assignment), and
the throttle configs kafka-reassign-partitions sets (incrementalAlterConfigs).

The three stages (RCM:2067-2086): a PartitionChangeRecord writes the merged replica list with
adding and removing set; the ISR grows as the new replicas catch up (AlterPartition, driven by
the simulated clock); the change that puts every target replica in sync writes the final list
and clears adding and removing (PartitionChangeBuilder completes it). Stages 1-2 are skipped
when the ISR already satisfies the target.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from kjbod.common.kafka_uuid import DirectoryId
from kjbod.controller.cluster_control import ClusterControl
from kjbod.controller.errors import ApiError, Errors
from kjbod.controller.partition_change import Election, PartitionChangeBuilder
from kjbod.controller.replication_control import DirectoryAssignment, ReplicationControl, all_cordoned_text
from kjbod.controller.result import MAX_RECORDS_PER_USER_OP, ControllerResult, kafka_record_count
from kjbod.controller.working import WorkingImage
from kjbod.errors import UserError
from kjbod.image import Image, PartitionRegistration, TopicImage
from kjbod.records import (
    CONFIG_RESOURCE_TOPIC,
    ConfigRecord,
    KjbodReplicaLogRecord,
    Record,
)

# Errors.java default messages: an ApiError carries no message when its message is the default.
DEFAULT_MESSAGES = {
    Errors.UNKNOWN_TOPIC_OR_PARTITION: "This server does not host this topic-partition.",
    Errors.INVALID_REPLICA_ASSIGNMENT: "Replica assignment is invalid.",
    Errors.NO_REASSIGNMENT_IN_PROGRESS: "No partition reassignment is in progress.",
    Errors.KAFKA_STORAGE_ERROR: "Disk error when trying to access log file on the disk.",
    Errors.LOG_DIR_NOT_FOUND: "The user-specified log directory is not found in the broker config.",
    Errors.NOT_LEADER_OR_FOLLOWER: "For requests intended only for the leader, this error indicates that the broker is not the current leader. For requests intended for any replica, this error indicates that the broker is not a replica of the topic partition.",
    Errors.UNSUPPORTED_VERSION: "The version of API is not supported.",
    Errors.UNKNOWN_SERVER_ERROR: "The server experienced an unexpected error when processing the request.",
}


def api_error(error: Errors, message: str | None = None) -> ApiError:
    """ApiError.fromThrowable: no message when it is the error's default one."""
    return ApiError(error, None if message == DEFAULT_MESSAGES.get(error) else message)


def exception_message(error: ApiError) -> str:
    """What `ApiError.exception().getMessage()` gives the admin client."""
    return error.message if error.message is not None else DEFAULT_MESSAGES.get(error.error, error.error.name)


class _PartitionError(Exception):
    def __init__(self, error: Errors, message: str) -> None:
        super().__init__(message)
        self.api_error = api_error(error, message)


@dataclass(frozen=True)
class ReassignmentTarget:
    """One partition of an AlterPartitionReassignments request; `replicas` None cancels."""

    topic: str
    partition: int
    replicas: tuple[int, ...] | None


@dataclass(frozen=True)
class ReassignmentResult:
    topic: str
    partition: int
    error: ApiError

    @property
    def succeeded(self) -> bool:
        return self.error.is_success


@dataclass(frozen=True)
class OngoingReassignment:
    """A ListPartitionReassignments entry: the merged replica list and what moves."""

    topic: str
    partition: int
    replicas: tuple[int, ...]
    adding: tuple[int, ...]
    removing: tuple[int, ...]


@dataclass(frozen=True)
class ReplicaDirMove:
    """One replica of an AlterReplicaLogDirs request (the broker side, §1.7 step 9)."""

    topic: str
    partition: int
    broker: int
    directory_id: str


@dataclass(frozen=True)
class ReplicaDirResult:
    move: ReplicaDirMove
    error: ApiError
    # "none" (already there), "assigned" (created in place: AssignReplicasToDirs right away),
    # "future" (a future replica is being built), "reverted" (a future replica was dropped).
    action: str = "none"

    @property
    def succeeded(self) -> bool:
        return self.error.is_success


@dataclass(frozen=True)
class ConfigChange:
    """One incremental config operation: SET when `value` is a string, DELETE when None."""

    resource_type: int
    resource_name: str
    name: str
    value: str | None


def reassignment_replicas(current: Sequence[int], target: Sequence[int]) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
    """PartitionReassignmentReplicas (PRR:53-63): (replicas, adding, removing)."""
    removing = tuple(sorted(set(current) - set(target)))
    adding = tuple(sorted(set(target) - set(current)))
    return tuple(target) + removing, adding, removing


def _check_replication_factor_unchanged(partition: PartitionRegistration, target: Sequence[int]) -> None:
    """validatePartitionReplicationFactorUnchanged (4.4.0 RCM :2529-2548): the current replication
    factor is the replica count, or during a reassignment |replicas ∪ adding − removing| (the
    set the running reassignment ends with)."""
    if partition.is_reassigning:
        current = len((set(partition.replicas) | set(partition.adding_replicas)) - set(partition.removing_replicas))
    else:
        current = len(partition.replicas)
    if current != len(target):
        raise _PartitionError(Errors.INVALID_REPLICATION_FACTOR, f"The replication factor is changed from {current} to {len(target)}")


class ReassignmentControl:
    def __init__(self, image: Image, cluster: ClusterControl, replication: ReplicationControl) -> None:
        self._image = image
        self._cluster = cluster
        self._replication = replication

    # AlterPartitionReassignments (RCM:1971-2065) ----------------------------------------------

    def alter_partition_reassignments(
        self, targets: Sequence[ReassignmentTarget], *, allow_replication_factor_change: bool = True
    ) -> ControllerResult[tuple[ReassignmentResult, ...]]:
        """Start, change or cancel reassignments; one result per partition, and the records of
        the partitions that succeeded, committed together.

        `allow_replication_factor_change=False` is the request's AllowReplicationFactorChange
        (KIP-860, since 4.1; kafka-reassign-partitions --disallow-replication-factor-change): a
        target whose size differs from the partition's replication factor fails (4.4.0 RCM
        :2171, :2304-2305).

        A partition appears once (the admin client keys its request by partition; the last
        entry wins). Replicas that join a partition start with an empty log (kjbod's
        KjbodReplicaLogRecord), so the clock copies the whole partition to them.
        """
        unique: dict[tuple[str, int], ReassignmentTarget] = {}
        for target in targets:
            unique[(target.topic, target.partition)] = target
        work = WorkingImage(self._image)
        results: list[ReassignmentResult] = []
        kafka_records = 0
        for target in unique.values():
            try:
                built = self._alter_one(work, target, allow_replication_factor_change)
            except _PartitionError as exc:
                results.append(ReassignmentResult(target.topic, target.partition, exc.api_error))
                continue
            # Kafka adds the records to a BoundedList of MAX_RECORDS_PER_USER_OP inside the
            # per-partition try (RCM:1971-1996), so a partition past the limit fails with
            # UNKNOWN_SERVER_ERROR (no message: ApiError.fromThrowable) while the ones before it
            # start. Only Kafka's records count: kjbod's own (the new replicas' empty logs) are not.
            needed = kafka_record_count(built)
            if kafka_records + needed > MAX_RECORDS_PER_USER_OP:
                results.append(ReassignmentResult(target.topic, target.partition, ApiError(Errors.UNKNOWN_SERVER_ERROR)))
                continue
            kafka_records += needed
            work.extend(built)
            results.append(ReassignmentResult(target.topic, target.partition, ApiError(Errors.NONE)))
        return ControllerResult.atomic_of(work.records, tuple(results))

    def _alter_one(self, work: WorkingImage, target: ReassignmentTarget, allow_replication_factor_change: bool = True) -> list[Record]:
        """The partition's records, built against `work` (the caller appends them, or not when
        the request is past Kafka's record limit)."""
        topic = self._image.topics.by_name.get(target.topic)
        if topic is None:
            raise _PartitionError(Errors.UNKNOWN_TOPIC_OR_PARTITION, f"Unable to find a topic named {target.topic}.")
        if work.partition(topic.topic_id, target.partition) is None:
            raise _PartitionError(Errors.UNKNOWN_TOPIC_OR_PARTITION, f"Unable to find partition {target.topic}:{target.partition}.")
        builder = self._replication.change_builder(work, (topic.topic_id, target.partition))
        if target.replicas is None:
            return self._cancel(work, topic, builder)
        return self._change(work, topic, builder, target.replicas, allow_replication_factor_change)

    def _validate_manual_assignment(self, replicas: Sequence[int]) -> None:
        """validateManualPartitionAssignment (RCM:1839-1870; 4.4.0 :2036-2067) without an RF:
        fenced brokers are fine, being registered is enough (with 4.4.0, and a directory that is
        not cordoned)."""
        prefix = "The manual partition assignment includes"
        if not replicas:
            raise _PartitionError(Errors.INVALID_REPLICA_ASSIGNMENT, f"{prefix} an empty replica list.")
        previous = None
        for replica in sorted(replicas):
            if self._cluster.broker(replica) is None:
                raise _PartitionError(Errors.INVALID_REPLICA_ASSIGNMENT, f"{prefix} broker {replica}, but no such broker is registered.")
            if self._replication.refuses_all_cordoned(replica):
                raise _PartitionError(Errors.INVALID_REPLICA_ASSIGNMENT, all_cordoned_text(replica))
            if replica == previous:
                raise _PartitionError(Errors.INVALID_REPLICA_ASSIGNMENT, f"{prefix} the broker {replica} more than once.")
            previous = replica

    def _change(
        self, work: WorkingImage, topic: TopicImage, builder: PartitionChangeBuilder, target: Sequence[int], allow_replication_factor_change: bool
    ) -> list[Record]:
        """changePartitionReassignment (RCM:2067-2126; 4.4.0 :2298-2340)."""
        self._validate_manual_assignment(target)
        partition, partition_id = builder.partition, builder.partition_id
        if not allow_replication_factor_change:
            _check_replication_factor_unchanged(partition, target)
        replicas, adding, removing = reassignment_replicas(partition.replicas, target)
        if replicas != partition.replicas:
            builder.set_target_replicas(replicas)
        # An empty computed list leaves the running reassignment's list in place (PCB:123-126).
        if removing:
            builder.set_target_removing(removing)
        if adding:
            builder.set_target_adding(adding)
        record = work.build(builder, append=False)
        if record is None:
            return []
        records: list[Record] = [record]
        for replica in target:
            if replica not in partition.replicas:
                records.append(KjbodReplicaLogRecord(topic_id=topic.topic_id, partition_id=partition_id, broker_id=replica, size_bytes=0))
        return records

    def _cancel(self, work: WorkingImage, topic: TopicImage, builder: PartitionChangeBuilder) -> list[Record]:
        """cancelPartitionReassignment and PartitionReassignmentRevert (RCM:2032-2065). The
        replicas being added leave the partition, and their logs with them."""
        partition, partition_id = builder.partition, builder.partition_id
        if not partition.is_reassigning:
            raise _PartitionError(Errors.NO_REASSIGNMENT_IN_PROGRESS, DEFAULT_MESSAGES[Errors.NO_REASSIGNMENT_IN_PROGRESS])
        adding = set(partition.adding_replicas)
        isr = [r for r in partition.isr if r not in adding]
        replicas = [r for r in partition.replicas if r not in adding]
        unclean = False
        if not isr:
            if not replicas:
                raise _PartitionError(Errors.INVALID_REPLICA_ASSIGNMENT, "Invalid replica assignment: addingReplicas contains all replicas.")
            isr, unclean = [replicas[0]], True
        if unclean and not self._replication.unclean_election_enabled(topic.topic_id):
            raise _PartitionError(
                Errors.INVALID_REPLICA_ASSIGNMENT,
                f"Unable to revert partition assignment for {topic.name}:{partition_id} because it would require an unclean leader election.",
            )
        if unclean:
            builder.set_election(Election.UNCLEAN)
        record = work.build(builder.set_target_isr(isr).set_target_replicas(replicas).set_target_removing([]).set_target_adding([]), append=False)
        return [] if record is None else [record]

    # ListPartitionReassignments (RCM:2128-2149) ------------------------------------------------

    def list_partition_reassignments(self, partitions: Iterable[tuple[str, int]] | None = None) -> tuple[OngoingReassignment, ...]:
        """Every reassigning partition, or those of `partitions` that exist and are reassigning
        (unknown topics are skipped), sorted by topic and partition."""
        found: list[OngoingReassignment] = []
        if partitions is None:
            keys: Iterable[tuple[str, int]] = self._image.topics.reassigning()
        else:
            keys = dict.fromkeys(partitions)
        for name, partition_id in keys:
            topic = self._image.topics.by_name.get(name)
            p = topic.partitions.get(partition_id) if topic else None
            if p is not None and p.is_reassigning:
                found.append(OngoingReassignment(name, partition_id, p.replicas, p.adding_replicas, p.removing_replicas))
        return tuple(sorted(found, key=lambda r: (r.topic, r.partition)))

    # AlterReplicaLogDirs (the broker's ReplicaManager.alterReplicaLogDirs) -----------------------

    def alter_replica_log_dirs(self, moves: Sequence[ReplicaDirMove]) -> ControllerResult[tuple[ReplicaDirResult, ...]]:
        """Move replicas between the directories of their broker.

        A replica already in the target directory stays (and a future replica elsewhere is
        dropped: moving back cancels a move). A replica whose directory is not known yet
        (UNASSIGNED, e.g. just added by a reassignment) is created in the target directory:
        AssignReplicasToDirs right away. Otherwise a future replica is built in the target
        directory (KIP-113); the clock copies it and promotes it (KIP-858). Like a broker, kjbod
        creates no future replica while one of the broker's directories is offline.
        """
        work = WorkingImage(self._image)
        results: list[ReplicaDirResult] = []
        assignments: dict[int, list[tuple[int, DirectoryAssignment]]] = {}
        for index, move in enumerate(moves):
            results.append(self._alter_dir(index, move, work, assignments))
        # Each broker's AssignReplicasToDirs is handled against the state the ones before it
        # leave: two new replicas of one partition both keep the directory they were given.
        for broker_id, items in sorted(assignments.items()):
            assigned = ReplicationControl(work.image).assign_replicas_to_dirs(broker_id, [a for _, a in items], work=work)
            for (index, _), item in zip(items, assigned.response.results):
                if not item.succeeded:
                    results[index] = ReplicaDirResult(results[index].move, api_error(item.error), "none")
        return ControllerResult.of(work.records, tuple(results))

    def _alter_dir(
        self, index: int, move: ReplicaDirMove, work: WorkingImage, assignments: dict[int, list[tuple[int, DirectoryAssignment]]]
    ) -> ReplicaDirResult:
        """One replica's move. It reads the replica's own state from the image the request
        started from: only this move's records change it (a broker takes a replica once per
        request, ReplicaManager.alterReplicaLogDirs)."""
        def fail(error: Errors, message: str) -> ReplicaDirResult:
            return ReplicaDirResult(move, api_error(error, message))

        broker = self._cluster.broker(move.broker)
        path = self._image.cluster.path_of(move.broker, move.directory_id) or move.directory_id
        if broker is None:
            return fail(Errors.BROKER_ID_NOT_REGISTERED, f"Broker ID {move.broker} is not currently registered")
        configured = {d.directory_id for d in self._image.cluster.log_dirs.get(move.broker, ())} | set(broker.directories)
        if move.directory_id not in configured:
            return fail(Errors.LOG_DIR_NOT_FOUND, f"Log dir {path} is not found in the config.")
        if not broker.has_online_dir(move.directory_id):
            return fail(Errors.KAFKA_STORAGE_ERROR, f"Log directory {path} is offline")
        # KIP-1066, both releases: a cordoned destination is refused even when the replica is
        # already there (ReplicaManager.alterReplicaLogDirs, 4.3.1 kafka/server/ReplicaManager.scala:
        # 1136-1137). The admin client sees only the error code; the message is the broker's log line.
        if move.directory_id in broker.cordoned_directories:
            return fail(Errors.INVALID_REPLICA_ASSIGNMENT, f"Log directory {path} is cordoned")
        topic = self._image.topics.by_name.get(move.topic)
        partition = topic.partitions.get(move.partition) if topic else None
        if topic is None or partition is None or move.broker not in partition.replicas:
            return fail(Errors.NOT_LEADER_OR_FOLLOWER, f"Broker {move.broker} does not host partition {move.topic}-{move.partition}")
        current = partition.directory(move.broker)
        future = topic.future_replica(move.partition, move.broker)
        log_key = {"topic_id": topic.topic_id, "partition_id": move.partition, "broker_id": move.broker, "future": True}
        if current in (DirectoryId.UNASSIGNED, DirectoryId.MIGRATING):
            if len(configured) <= 1:
                return ReplicaDirResult(move, ApiError(Errors.NONE), "none")  # its only directory
            assignments.setdefault(move.broker, []).append((index, DirectoryAssignment(topic.topic_id, move.partition, move.directory_id)))
            return ReplicaDirResult(move, ApiError(Errors.NONE), "assigned")
        if not broker.has_online_dir(current):
            return fail(Errors.KAFKA_STORAGE_ERROR, f"Partition {move.topic}-{move.partition} is offline")
        # futureReplicaDirChanged: a move to another directory stops the one in progress.
        dropped = future is not None and future.directory_id != move.directory_id
        if dropped:
            work.append(KjbodReplicaLogRecord(**log_key, size_bytes=None))
        if current == move.directory_id:
            return ReplicaDirResult(move, ApiError(Errors.NONE), "reverted" if dropped else "none")
        if future is not None and not dropped:
            return ReplicaDirResult(move, ApiError(Errors.NONE), "future")
        offline = sorted(
            self._image.cluster.path_of(move.broker, d) or d for d in configured if d not in broker.directories
        )
        if offline:
            return fail(
                Errors.KAFKA_STORAGE_ERROR,
                f"Can not create log for {move.topic}-{move.partition} because log directories {','.join(offline)} are offline",
            )
        work.append(KjbodReplicaLogRecord(**log_key, directory_id=move.directory_id, size_bytes=0))
        return ReplicaDirResult(move, ApiError(Errors.NONE), "future")

    # IncrementalAlterConfigs, for the throttles ------------------------------------------------

    def alter_configs(self, changes: Sequence[ConfigChange]) -> ControllerResult[tuple[ConfigChange, ...]]:
        """Set or delete configs (the throttles kafka-reassign-partitions manages). Only real
        changes are written: deleting an unset config or setting the same value is a no-op.
        Topic configs of a topic that does not exist are refused."""
        records: list[Record] = []
        applied: list[ConfigChange] = []
        for change in changes:
            if change.resource_type == CONFIG_RESOURCE_TOPIC and change.resource_name not in self._image.topics.by_name:
                raise UserError(f"The topic '{change.resource_name}' does not exist.")
            current = self._image.configs.get(change.resource_type, change.resource_name).get(change.name)
            if current == change.value:
                continue
            records.append(
                ConfigRecord(resource_type=change.resource_type, resource_name=change.resource_name, name=change.name, value=change.value)
            )
            applied.append(change)
        return ControllerResult.atomic_of(records, tuple(applied))


__all__ = [
    "ConfigChange",
    "OngoingReassignment",
    "ReassignmentControl",
    "ReassignmentResult",
    "ReassignmentTarget",
    "ReplicaDirMove",
    "ReplicaDirResult",
    "exception_message",
    "reassignment_replicas",
]

