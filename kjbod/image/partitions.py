"""A partition's registration, a replica's partial log, and a topic: the objects of a topics image.

Follows Kafka's PartitionRegistration (reference §8). A registration is a NamedTuple: immutable
and cheap to create, which matters when a million partitions are read.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from kjbod.common.kafka_uuid import DirectoryId
from kjbod.common.versions import MetadataVersion
from kjbod.errors import ReplayError
from kjbod.image.maps import EMPTY_MAP
from kjbod.records import (
    LEADER_RECOVERY_NO_CHANGE,
    NO_LEADER,
    NO_LEADER_CHANGE,
    PartitionChangeRecord,
    PartitionRecord,
)

EMPTY: tuple[int, ...] = ()

def migrating(count: int) -> tuple[str, ...]:
    return (DirectoryId.MIGRATING,) * count


def normalize_directories(directories: tuple[str, ...], replica_count: int) -> tuple[str, ...]:
    """Missing or all-MIGRATING directories mean "placed somewhere unknown" (PR:186-203)."""
    if not directories or all(d == DirectoryId.MIGRATING for d in directories):
        return migrating(replica_count)
    return directories


class PartitionRegistration(NamedTuple):
    replicas: tuple[int, ...]
    directories: tuple[str, ...]
    isr: tuple[int, ...]
    removing_replicas: tuple[int, ...]
    adding_replicas: tuple[int, ...]
    elr: tuple[int, ...]
    last_known_elr: tuple[int, ...]
    leader: int
    leader_recovery_state: int
    leader_epoch: int
    partition_epoch: int

    @classmethod
    def from_record(cls, record: PartitionRecord) -> PartitionRegistration:
        replicas = record.replicas
        directories = record.directories
        if directories and len(directories) != len(replicas):
            raise ReplayError(f"The lengths for replicas and directories do not match: {record}")
        return cls(
            replicas,
            normalize_directories(directories, len(replicas)),
            record.isr,
            record.removing_replicas,
            record.adding_replicas,
            record.eligible_leader_replicas or EMPTY,
            record.last_known_elr or EMPTY,
            record.leader,
            record.leader_recovery_state,
            record.leader_epoch,
            record.partition_epoch,
        )

    def merge(self, change: PartitionChangeRecord) -> PartitionRegistration:
        """Apply a change record (PR:241-280): the partition epoch always moves by one, and the
        leader epoch moves by one whenever Leader is not -2 (even to the same leader)."""
        replicas = self.replicas if change.replicas is None else change.replicas
        if change.directories is not None:
            if change.replicas is not None and len(change.directories) != len(change.replicas):
                raise ReplayError(f"The lengths for replicas and directories do not match: {change}")
            directories = change.directories
        else:
            directories = self.directories
        directories = normalize_directories(directories, len(replicas))
        if len(directories) != len(replicas):
            raise ReplayError(
                f"The lengths for replicas and directories do not match: {len(replicas)} replicas "
                f"and {len(directories)} directories after {change}"
            )
        if change.leader == NO_LEADER_CHANGE:
            leader, leader_epoch = self.leader, self.leader_epoch
        else:
            leader, leader_epoch = change.leader, self.leader_epoch + 1
        return PartitionRegistration(
            replicas,
            directories,
            self.isr if change.isr is None else change.isr,
            self.removing_replicas if change.removing_replicas is None else change.removing_replicas,
            self.adding_replicas if change.adding_replicas is None else change.adding_replicas,
            self.elr if change.eligible_leader_replicas is None else change.eligible_leader_replicas,
            self.last_known_elr if change.last_known_elr is None else change.last_known_elr,
            leader,
            self.leader_recovery_state
            if change.leader_recovery_state == LEADER_RECOVERY_NO_CHANGE
            else change.leader_recovery_state,
            leader_epoch,
            self.partition_epoch + 1,
        )

    def directory(self, replica: int) -> str:
        try:
            return self.directories[self.replicas.index(replica)]
        except ValueError:
            raise ValueError(f"Replica {replica} is not assigned to this partition.") from None

    @property
    def has_leader(self) -> bool:
        return self.leader != NO_LEADER

    @property
    def has_preferred_leader(self) -> bool:
        return bool(self.replicas) and self.leader == self.replicas[0]

    @property
    def is_reassigning(self) -> bool:
        return bool(self.removing_replicas or self.adding_replicas)

    def to_record(self, topic_id: str, partition_id: int, mv: MetadataVersion) -> PartitionRecord:
        """The PartitionRecord that recreates this partition (for snapshots)."""
        version = mv.partition_record_version
        elr_written = mv.elr_supported
        return PartitionRecord(
            version=version,
            partition_id=partition_id,
            topic_id=topic_id,
            replicas=self.replicas,
            isr=self.isr,
            removing_replicas=self.removing_replicas,
            adding_replicas=self.adding_replicas,
            leader=self.leader,
            leader_recovery_state=self.leader_recovery_state,
            leader_epoch=self.leader_epoch,
            partition_epoch=self.partition_epoch,
            directories=self.directories if mv.directory_assignment_supported else (),
            eligible_leader_replicas=(self.elr or None) if elr_written else None,
            last_known_elr=(self.last_known_elr or None) if elr_written else None,
        )


PartitionKey = tuple[str, int]  # (topic id, partition id)


RESERVED_DIRECTORIES = frozenset((DirectoryId.MIGRATING, DirectoryId.UNASSIGNED, DirectoryId.LOST))


Members = dict[PartitionKey, None]  # an insertion-ordered set of partitions


def members_of(view: str, partition: PartitionRegistration) -> tuple[Any, ...]:
    """Which keys of `view` a partition is listed under."""
    if view == "in_isr":
        return partition.isr
    if view == "on_broker":
        return partition.replicas
    if view == "in_directory":
        return tuple(d for d in partition.directories if d not in RESERVED_DIRECTORIES)
    return (partition.leader,)  # "by_leader": NO_LEADER collects the leaderless partitions


class ReplicaLog(NamedTuple):
    """A replica's log where it differs from a complete copy (see KjbodReplicaLogRecord)."""

    directory_id: str | None
    size_bytes: int
    offset_lag: int


ReplicaLogKey = tuple[int, int, bool]  # (partition id, broker id, future)


@dataclass(frozen=True)
class TopicImage:
    name: str
    topic_id: str
    partitions: Mapping[int, PartitionRegistration]
    # kjbod's own: the size of each partition's log in bytes (absent = unknown, treated as 0).
    sizes: Mapping[int, int] = field(default_factory=lambda: EMPTY_MAP)
    # kjbod's own: replicas whose log is not a complete copy, and future replicas.
    replica_logs: Mapping[ReplicaLogKey, ReplicaLog] = field(default_factory=lambda: EMPTY_MAP)

    def size(self, partition_id: int) -> int:
        return self.sizes.get(partition_id, 0)

    def replica_size(self, partition_id: int, broker_id: int) -> int:
        """The bytes a replica's log holds: the whole partition unless it is still copying."""
        log = self.replica_logs.get((partition_id, broker_id, False))
        return self.size(partition_id) if log is None else log.size_bytes

    def future_replica(self, partition_id: int, broker_id: int) -> ReplicaLog | None:
        return self.replica_logs.get((partition_id, broker_id, True))
