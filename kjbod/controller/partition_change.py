"""Kafka's PartitionChangeBuilder (controller reference §7): the one place that decides a
partition's next leader, ISR, ELR, replicas and directories, and emits the PartitionChangeRecord.

Eligible leader replicas (KIP-966) follow Kafka 4.4.0's builder (metadata:
org/apache/kafka/controller/PartitionChangeBuilder.java, the same code and lines in 4.3.1; line
numbers below are 4.3.1's source): with ELR enabled, replicas that leave the ISR while it is below
min.insync.replicas stay eligible to lead (the ELR), the ISR may become empty, and a partition
whose ISR and ELR are both empty remembers its last leader (LastKnownElr) and elects it back,
uncleanly, when it returns. With ELR disabled the ISR never becomes empty and ELR is cleared.
`useLastKnownLeaderInBalancedRecovery` is always true in Kafka's controller (no caller changes
it), so LastKnownElr only ever holds the last leader.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from enum import Enum

from kjbod.common.java import hashmap_order, int_hash, presized_capacity
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
        *,
        min_isr: int = 1,
        elr_enabled: bool = False,
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
        # The topic's effective min.insync.replicas (RCM.getTopicEffectiveMinIsr) and whether
        # eligible.leader.replicas.version >= 1 is finalized.
        self.min_isr = min_isr
        self.elr_enabled = elr_enabled
        self.target_elr: list[int] = list(partition.elr)
        self.unclean_shutdown_replicas: frozenset[int] = frozenset()

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

    def set_unclean_shutdown_replicas(self, replicas: Sequence[int]) -> PartitionChangeBuilder:
        """Replicas that shut down uncleanly: never kept in the ELR (PCB:543-546)."""
        self.unclean_shutdown_replicas = frozenset(replicas)
        return self

    # ---------------------------------------------------------------------------------------

    def _valid(self, replica: int) -> bool:
        """isValidNewLeader (PCB:318-322): in the ISR, or in the ELR when the ISR is empty."""
        in_sync = replica in self.target_isr or (not self.target_isr and replica in self.target_elr)
        return in_sync and self.acceptor(replica)

    def _populate_target_elr(self) -> None:
        """maybePopulateTargetElr (PCB:533-563): with the ISR below min ISR, the replicas that
        were in the ISR (or already in the ELR) and are not in the target ISR stay eligible,
        unless they shut down uncleanly. The list is in java.util.HashSet order (Kafka streams a
        HashSet made of the ELR then the ISR). The last known ELR Kafka computes here is unused
        while useLastKnownLeaderInBalancedRecovery is true (PCB:518-522), as it always is."""
        if not self.elr_enabled:
            return
        if len(self.target_isr) >= self.min_isr:
            self.target_elr = []
            return
        candidates = [*self.target_elr, *self.partition.isr]
        ordered = hashmap_order(candidates, int_hash, presized_capacity(len(self.target_elr)))
        target_isr = set(self.target_isr)
        self.target_elr = [r for r in ordered if r not in target_isr and r not in self.unclean_shutdown_replicas]

    def _can_elect_last_known_leader(self) -> bool:
        """canElectLastKnownLeader (PCB:265-300): ISR and ELR empty, and the one last known
        leader acceptable."""
        if not self.elr_enabled or self.target_elr or self.target_isr:
            return False
        last_known = self.partition.last_known_elr
        return len(last_known) == 1 and self.acceptor(last_known[0])

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
        """Step 3 (electLeader, PCB:214-263): the new leader, and whether electing it was unclean."""
        current = self.partition.leader
        if self.election is Election.PREFERRED:
            if self.target_replicas and self._valid(self.target_replicas[0]):
                return self.target_replicas[0], False
            if self._valid(current):
                return current, False
            for replica in self.target_replicas[1:]:
                if self._valid(replica):
                    return replica, False
            if self._can_elect_last_known_leader():
                return self.partition.last_known_elr[0], True
            return NO_LEADER, False
        if self._valid(current):
            return current, False
        for replica in self.target_replicas:
            if self._valid(replica):
                return replica, False
        if self._can_elect_last_known_leader():
            return self.partition.last_known_elr[0], True
        if self.election is Election.UNCLEAN:
            for replica in self.target_replicas:
                if self.acceptor(replica):
                    return replica, True
        return NO_LEADER, False

    def build(self) -> PartitionChangeRecord | None:
        """The change record, or None when nothing changes (build, PCB:427-464)."""
        p = self.partition
        self._complete_reassignment()
        self._populate_target_elr()
        fields: dict[str, object] = {}
        leader, unclean = self._elect()
        if leader != p.leader:
            if leader in self.target_elr:
                # A clean election from the ELR: the new leader is the whole ISR (PCB:330-333).
                self.target_isr = [leader]
                self.target_elr = [r for r in self.target_elr if r != leader]
            fields["leader"] = leader
            if unclean:
                fields["isr"] = (leader,)
                if p.leader_recovery_state != LEADER_RECOVERY_RECOVERING:
                    fields["leader_recovery_state"] = LEADER_RECOVERY_RECOVERING
        # Step 4: removing a replica bumps the leader epoch even with the same leader.
        if "leader" not in fields and not all(r in self.target_replicas for r in p.replicas):
            fields["leader"] = p.leader
        # Step 5 (maybeUpdateRecordElr, PCB:504-530): an unclean election, or ELR disabled, clears the ELR.
        if "isr" in fields or not self.elr_enabled:
            self.target_elr = []
        if tuple(self.target_elr) != p.elr:
            fields["eligible_leader_replicas"] = tuple(self.target_elr)
        # Step 6 (PCB:442-448): the ISR may become empty only with ELR enabled.
        if "isr" not in fields and (self.target_isr or self.elr_enabled) and tuple(self.target_isr) != p.isr:
            fields["isr"] = tuple(self.target_isr)
        # Step 7: before 3.6-IV0 an ISR shrink bumps the leader epoch.
        if (
            self.mv.leader_epoch_bump_required_on_isr_shrink
            and "leader" not in fields
            and "isr" in fields
            and not all(r in fields["isr"] for r in p.isr)  # type: ignore[operator]
        ):
            fields["leader"] = p.leader
        # Step 8 (maybeUpdateLastKnownLeader, PCB:492-500): a partition that becomes leaderless
        # remembers its leader; one that gets a leader forgets it.
        if self.elr_enabled:
            new_leader = fields.get("leader", NO_LEADER_CHANGE)
            if new_leader == NO_LEADER and not p.last_known_elr:
                fields["last_known_elr"] = (p.leader,)
            elif isinstance(new_leader, int) and new_leader >= 0 and p.last_known_elr:
                fields["last_known_elr"] = ()
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
