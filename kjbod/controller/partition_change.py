"""Kafka's PartitionChangeBuilder (controller reference §7): the one place that decides a
partition's next leader, ISR, replicas and directories, and emits the PartitionChangeRecord.

kjbod does not model eligible leader replicas (the contract): the builder follows Kafka with
ELR disabled, so the ISR never becomes empty and no last-known-leader election happens.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from enum import Enum

from kjbod.common.versions import MetadataVersion
from kjbod.image import PartitionRegistration
from kjbod.records import (
    LEADER_RECOVERY_NO_CHANGE,
    LEADER_RECOVERY_RECOVERING,
    NO_LEADER,
    NO_LEADER_CHANGE,
    PartitionChangeRecord,
)


class Election(Enum):
    PREFERRED = "PREFERRED"
    ONLINE = "ONLINE"
    UNCLEAN = "UNCLEAN"


Acceptor = Callable[[int], bool]
DefaultDirectory = Callable[[int], str]


def _missing_default_dir(broker: int) -> str:
    raise RuntimeError("DefaultDirProvider is not set")


class PartitionChangeBuilder:
    def __init__(
        self,
        partition: PartitionRegistration,
        topic_id: str,
        partition_id: int,
        acceptor: Acceptor,
        metadata_version: MetadataVersion,
        default_dir: DefaultDirectory = _missing_default_dir,
    ) -> None:
        self.partition = partition
        self.topic_id = topic_id
        self.partition_id = partition_id
        self.acceptor = acceptor
        self.mv = metadata_version
        self.default_dir = default_dir
        self.election = Election.ONLINE
        self.target_isr: list[int] = list(partition.isr)
        self.target_replicas: list[int] = list(partition.replicas)
        self.target_removing: list[int] = list(partition.removing_replicas)
        self.target_adding: list[int] = list(partition.adding_replicas)
        self.target_lrs = partition.leader_recovery_state
        self.target_directories: dict[int, str] = dict(zip(partition.replicas, partition.directories))

    # Setters return self so a change reads as one expression.
    def set_election(self, election: Election) -> PartitionChangeBuilder:
        self.election = election
        return self

    def set_target_isr(self, isr: Sequence[int]) -> PartitionChangeBuilder:
        self.target_isr = list(isr)
        return self

    def set_target_replicas(self, replicas: Sequence[int]) -> PartitionChangeBuilder:
        self.target_replicas = list(replicas)
        return self

    def set_target_removing(self, removing: Sequence[int]) -> PartitionChangeBuilder:
        self.target_removing = list(removing)
        return self

    def set_target_adding(self, adding: Sequence[int]) -> PartitionChangeBuilder:
        self.target_adding = list(adding)
        return self

    def set_target_leader_recovery_state(self, state: int) -> PartitionChangeBuilder:
        self.target_lrs = state
        return self

    def set_directory(self, broker: int, directory: str) -> PartitionChangeBuilder:
        self.target_directories[broker] = directory
        return self

    # ---------------------------------------------------------------------------------------

    def _valid(self, replica: int) -> bool:
        return replica in self.target_isr and self.acceptor(replica)

    def _complete_reassignment(self) -> None:
        """Step 1: finish a reassignment once every new replica is in the ISR (PRR:97-130)."""
        if not self.target_removing and not self.target_adding:
            return
        new_isr, new_replicas = self.target_isr, self.target_replicas
        if self.target_removing:
            new_isr = [r for r in self.target_isr if r not in self.target_removing]
            if not new_isr:
                return
            new_replicas = [r for r in self.target_replicas if r not in self.target_removing]
        if not new_replicas or not all(r in new_isr for r in new_replicas):
            return
        self.target_isr, self.target_replicas = new_isr, new_replicas
        self.target_removing, self.target_adding = [], []

    def _elect(self) -> tuple[int, bool]:
        """Step 3: the new leader, and whether electing it was unclean."""
        current = self.partition.leader
        if self.election is Election.PREFERRED:
            if self.target_replicas and self._valid(self.target_replicas[0]):
                return self.target_replicas[0], False
            if self._valid(current):
                return current, False
            for replica in self.target_replicas[1:]:
                if self._valid(replica):
                    return replica, False
            return NO_LEADER, False
        if self._valid(current):
            return current, False
        for replica in self.target_replicas:
            if self._valid(replica):
                return replica, False
        if self.election is Election.UNCLEAN:
            for replica in self.target_replicas:
                if self.acceptor(replica):
                    return replica, True
        return NO_LEADER, False

    def build(self) -> PartitionChangeRecord | None:
        """The change record, or None when nothing changes."""
        p = self.partition
        self._complete_reassignment()
        fields: dict[str, object] = {}
        leader, unclean = self._elect()
        if leader != p.leader:
            fields["leader"] = leader
            if unclean:
                fields["isr"] = (leader,)
                if p.leader_recovery_state != LEADER_RECOVERY_RECOVERING:
                    fields["leader_recovery_state"] = LEADER_RECOVERY_RECOVERING
        # Step 4: removing a replica bumps the leader epoch even with the same leader.
        if "leader" not in fields and not all(r in self.target_replicas for r in p.replicas):
            fields["leader"] = p.leader
        # Step 5, ELR disabled: a partition that somehow has ELR members loses them.
        if p.elr and self.mv.elr_supported:
            fields["eligible_leader_replicas"] = ()
        # Step 6: with ELR disabled the ISR never becomes empty.
        if "isr" not in fields and tuple(self.target_isr) != p.isr and self.target_isr:
            fields["isr"] = tuple(self.target_isr)
        # Step 7: before 3.6-IV0 an ISR shrink bumps the leader epoch.
        if (
            self.mv.leader_epoch_bump_required_on_isr_shrink
            and "leader" not in fields
            and "isr" in fields
            and not all(r in fields["isr"] for r in p.isr)  # type: ignore[operator]
        ):
            fields["leader"] = p.leader
        # Step 9: directories travel with their brokers; new replicas get the default.
        if self.target_replicas:
            if self.mv.directory_assignment_supported:
                directories = tuple(
                    self.target_directories[r] if r in self.target_directories else self.default_dir(r)
                    for r in self.target_replicas
                )
                if directories != p.directories:
                    fields["directories"] = directories
            if tuple(self.target_replicas) != p.replicas:
                fields["replicas"] = tuple(self.target_replicas)
        if tuple(self.target_removing) != p.removing_replicas:
            fields["removing_replicas"] = tuple(self.target_removing)
        if tuple(self.target_adding) != p.adding_replicas:
            fields["adding_replicas"] = tuple(self.target_adding)
        # Step 10: AlterPartition moves RECOVERING back to RECOVERED this way.
        if self.target_lrs != p.leader_recovery_state:
            fields["leader_recovery_state"] = self.target_lrs
        record = PartitionChangeRecord(
            version=self.mv.partition_record_version,
            topic_id=self.topic_id,
            partition_id=self.partition_id,
            **fields,  # type: ignore[arg-type]
        )
        return None if record.is_no_op() else record


__all__ = ["Election", "PartitionChangeBuilder", "NO_LEADER", "NO_LEADER_CHANGE", "LEADER_RECOVERY_NO_CHANGE"]
