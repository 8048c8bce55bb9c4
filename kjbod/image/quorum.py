"""The controller quorum (KIP-853): the voter set, kraft.version, the leader, and how far each
controller's copy of the metadata log has caught up.

In Kafka the voter set and kraft.version are control records of the `__cluster_metadata` log
(`raft/src/main/java/org/apache/kafka/raft/internals/KRaftControlRecordStateMachine.java`) and
the leader keeps each replica's fetch progress in memory
(`raft/src/main/java/org/apache/kafka/raft/LeaderState.java:695-832`). kjbod replays the same
control records (KRaftVersionRecord, VotersRecord) and keeps the rest in its own
KjbodQuorumRecord and KjbodControllerReplicaRecord.

Time is the simulated clock, and offsets are the cluster state's record offsets. The leader's
log end offset is the state's next offset. A follower fetches only while simulated time passes:
a running controller that has caught up holds everything up to the last clock advance
(`fetched_offset`), so records appended since then count as its lag and sit above the high
watermark until the clock moves again. That is what makes a voter change commit "when the
clock lets the new majority catch up".
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace
from types import MappingProxyType

from kjbod.common.java import hashmap_order
from kjbod.common.kafka_uuid import Uuid, uuid_hash
from kjbod.errors import ReplayError
from kjbod.records import (
    ControllerEndpoint,
    ControllerFeature,
    KjbodControllerReplicaRecord,
    KjbodQuorumRecord,
    KjbodStaticVoter,
    KRaftVersionFeature,
    KRaftVersionRecord,
    Record,
    Voter,
    VoterEndpoint,
    VotersRecord,
)

ZERO_UUID_TEXT = "AAAAAAAAAAAAAAAAAAAAAA"
# LeaderState.OBSERVER_SESSION_TIMEOUT_MS (LeaderState.java:58): an observer that has not
# fetched for this long is dropped from the leader's view.
OBSERVER_SESSION_TIMEOUT_MS = 300_000
# controller.quorum.request.timeout.ms's default (QuorumConfig.java:95): how long the leader
# holds an add or remove request before it times out (AddVoterHandlerState/RemoveVoterHandlerState).
REQUEST_TIMEOUT_MS = 2_000
# LeaderState.isReplicaCaughtUp: caught up once, and fetched within the last hour (LeaderState.java:386-397).
CAUGHT_UP_FETCH_WINDOW_MS = 3_600_000


@dataclass(frozen=True)
class ReplicaKey:
    """Kafka's ReplicaKey (`raft/src/main/java/org/apache/kafka/raft/ReplicaKey.java`): a node id
    and, for a dynamic voter set, the directory id of its metadata log directory."""

    id: int
    directory_id: str | None = None

    def __str__(self) -> str:
        """`ReplicaKey.toString`: the directory id itself, or `<undefined>` (4.3.1 kafka-raft
        ReplicaKey.java:72-74, the same in 4.4.0 :73; Kafka 4.0 printed the Optional, which a live
        4.4.0 remove-controller showed kjbod still did)."""
        return f"ReplicaKey(id={self.id}, directoryId={self.directory_id or '<undefined>'})"

    def java_hash(self) -> int:
        """`Objects.hash(id, directoryId)`: 31 * (31 + id) + Optional.hashCode()."""
        value = 31 * (31 + self.id) + (uuid_hash(self.directory_id) if self.directory_id else 0)
        value &= 0xFFFFFFFF
        return value - (1 << 32) if value >= 1 << 31 else value

    def sort_key(self) -> tuple[int, int, int]:
        """`ReplicaKey.compareTo`: id, then the directory id (none counts as the zero uuid)."""
        uuid = Uuid.from_string(self.directory_id or ZERO_UUID_TEXT)
        return (self.id, uuid.msb, uuid.lsb)

    @property
    def directory_text(self) -> str:
        """The directory id as DescribeQuorum reports it: the zero uuid when there is none."""
        return self.directory_id or ZERO_UUID_TEXT

    def matches(self, other: ReplicaKey) -> bool:
        """`VoterNode.isVoter` / `ReplicaState.matchesKey`: a key without a directory id (a
        static voter) matches any directory of that node."""
        return self.id == other.id and (self.directory_id is None or self.directory_id == other.directory_id)


def java_key_set(keys: list[ReplicaKey]) -> str:
    """A `Set<ReplicaKey>` as Java prints it: a HashSet's iteration order (VoterSet.voterKeys)."""
    return "[" + ", ".join(str(k) for k in hashmap_order(keys, ReplicaKey.java_hash)) + "]"


@dataclass(frozen=True)
class VoterNode:
    """One voter: its key, its endpoints, and the kraft.version range its software supports."""

    key: ReplicaKey
    endpoints: tuple[VoterEndpoint, ...]
    kraft_range: tuple[int, int]

    @classmethod
    def from_voter(cls, voter: Voter) -> VoterNode:
        directory = None if voter.voter_directory_id == ZERO_UUID_TEXT else voter.voter_directory_id
        feature = voter.k_raft_version_feature
        return cls(
            ReplicaKey(voter.voter_id, directory), voter.endpoints, (feature.min_supported_version, feature.max_supported_version)
        )

    def to_voter(self) -> Voter:
        return Voter(
            voter_id=self.key.id,
            voter_directory_id=self.key.directory_text,
            endpoints=self.endpoints,
            k_raft_version_feature=KRaftVersionFeature(
                min_supported_version=self.kraft_range[0], max_supported_version=self.kraft_range[1]
            ),
        )

    def endpoint(self, listener: str) -> VoterEndpoint | None:
        return next((e for e in self.endpoints if e.name == listener), None)


@dataclass(frozen=True)
class ControllerReplica:
    """A controller process as the leader sees it (KjbodControllerReplicaRecord)."""

    key: ReplicaKey
    running: bool
    caught_up: bool
    log_end_offset: int
    last_fetch_ms: int
    last_caught_up_ms: int
    catch_up_rate: int
    incarnation_id: str
    end_points: tuple[ControllerEndpoint, ...]
    features: tuple[ControllerFeature, ...]

    @classmethod
    def from_record(cls, record: KjbodControllerReplicaRecord) -> ControllerReplica:
        return cls(
            ReplicaKey(record.replica_id, record.directory_id),
            record.running,
            record.caught_up,
            record.log_end_offset,
            record.last_fetch_ms,
            record.last_caught_up_ms,
            record.catch_up_rate,
            record.incarnation_id,
            record.end_points,
            record.features,
        )

    def to_record(self) -> KjbodControllerReplicaRecord:
        return KjbodControllerReplicaRecord(
            replica_id=self.key.id,
            directory_id=self.key.directory_id,
            running=self.running,
            caught_up=self.caught_up,
            log_end_offset=self.log_end_offset,
            last_fetch_ms=self.last_fetch_ms,
            last_caught_up_ms=self.last_caught_up_ms,
            catch_up_rate=self.catch_up_rate,
            incarnation_id=self.incarnation_id,
            end_points=self.end_points,
            features=self.features,
        )

    def supported(self, name: str) -> tuple[int, int] | None:
        """The range its software supports for a feature, None when it does not list it."""
        found = next((f for f in self.features if f.name == name), None)
        return None if found is None else (found.min_supported_version, found.max_supported_version)


@dataclass(frozen=True)
class FetchState:
    """LeaderState.ReplicaState as DescribeQuorum reports it (RaftUtil.java:630-655): -1 for
    "none" in every field."""

    key: ReplicaKey
    log_end_offset: int
    last_fetch_ms: int
    last_caught_up_ms: int


@dataclass(frozen=True)
class QuorumImage:
    kraft_version: int
    # The latest voter set (committed or not), by node id.
    voters: tuple[VoterNode, ...]
    # True when the voters come from controller.quorum.voters (no VotersRecord).
    static: bool
    voters_offset: int
    leader_id: int
    leader_epoch: int
    epoch_start_offset: int
    fetched_offset: int
    change_requested_ms: int
    replicas: Mapping[ReplicaKey, ControllerReplica]

    @property
    def is_modelled(self) -> bool:
        """True when the state knows its controller quorum (a voter set from format or import)."""
        return bool(self.voters)

    @property
    def has_leader(self) -> bool:
        return self.leader_id >= 0

    def voter(self, node_id: int) -> VoterNode | None:
        return next((v for v in self.voters if v.key.id == node_id), None)

    def voter_for(self, key: ReplicaKey) -> VoterNode | None:
        """The voter this replica is (`VoterSet.isVoter`)."""
        voter = self.voter(key.id)
        return voter if voter is not None and voter.key.matches(key) else None

    @property
    def voter_ids(self) -> tuple[int, ...]:
        return tuple(v.key.id for v in self.voters)

    def replicas_of(self, node_id: int) -> list[ControllerReplica]:
        return [r for k, r in sorted(self.replicas.items(), key=lambda item: item[0].sort_key()) if k.id == node_id]

    def running_replica(self, node_id: int) -> ControllerReplica | None:
        return next((r for r in self.replicas_of(node_id) if r.running), None)

    def replica_of_voter(self, voter: VoterNode) -> ControllerReplica | None:
        """The process that is this voter: the same key, or for a voter without a directory id
        any process of that node (the running one first)."""
        if voter.key.directory_id is not None:
            return self.replicas.get(voter.key)
        candidates = self.replicas_of(voter.key.id)
        return next((r for r in candidates if r.running), candidates[0] if candidates else None)

    @property
    def leader(self) -> ReplicaKey | None:
        """The leader's own key (its process's), None while there is no leader."""
        if not self.has_leader:
            return None
        running = self.running_replica(self.leader_id)
        if running is not None:
            return running.key
        voter = self.voter(self.leader_id)
        return voter.key if voter is not None else ReplicaKey(self.leader_id)

    # Fetch progress ------------------------------------------------------------------------------

    def fetch_state(self, replica: ControllerReplica, now_ms: int, leader_end_offset: int) -> FetchState:
        """How far a (non-leader) replica has fetched, as the leader sees it now."""
        if replica.running and replica.caught_up:
            end = max(replica.log_end_offset, min(self.fetched_offset, leader_end_offset))
            return FetchState(replica.key, end, now_ms, now_ms)
        if replica.running:
            return FetchState(replica.key, replica.log_end_offset, now_ms, replica.last_caught_up_ms)
        return FetchState(replica.key, replica.log_end_offset, replica.last_fetch_ms, replica.last_caught_up_ms)

    def voter_states(self, now_ms: int, leader_end_offset: int) -> list[FetchState]:
        """Every voter's fetch state (the leader's own: its log end, fetched now)."""
        states = []
        for voter in self.voters:
            if voter.key.id == self.leader_id:
                states.append(FetchState(voter.key, leader_end_offset, now_ms, now_ms))
                continue
            replica = self.replica_of_voter(voter)
            states.append(
                FetchState(voter.key, -1, -1, -1) if replica is None else replace(self.fetch_state(replica, now_ms, leader_end_offset), key=voter.key)
            )
        return states

    def high_watermark(self, now_ms: int, leader_end_offset: int) -> int | None:
        """`LeaderState.maybeUpdateHighWatermark` (LeaderState.java:447-506): the offset a majority
        of the voters has (the leader counts only while it is a voter), once it is past the
        start of the leader's epoch; None while unknown."""
        if not self.has_leader or not self.voters:
            return None
        ends = sorted((s.log_end_offset for s in self.voter_states(now_ms, leader_end_offset)), reverse=True)
        candidate = ends[len(ends) // 2]
        return candidate if candidate > self.epoch_start_offset and candidate >= 0 else None

    def change_committed(self, now_ms: int, leader_end_offset: int) -> bool:
        """True when the latest VotersRecord is below the high watermark (or there is none)."""
        if self.voters_offset < 0:
            return True
        hwm = self.high_watermark(now_ms, leader_end_offset)
        return hwm is not None and self.voters_offset < hwm

    def change_pending(self, now_ms: int, leader_end_offset: int) -> bool:
        """`LeaderState.isOperationPending`: an add or remove request still held by the leader
        (its VotersRecord not committed and the request not yet timed out)."""
        return (
            self.change_requested_ms >= 0
            and now_ms < self.change_requested_ms + REQUEST_TIMEOUT_MS
            and not self.change_committed(now_ms, leader_end_offset)
        )

    def is_observer(self, replica: ControllerReplica, now_ms: int) -> bool:
        """A process that is not a voter and fetched within the observer session timeout
        (`LeaderState.clearInactiveObservers`, LeaderState.java:654-659)."""
        if self.voter_for(replica.key) is not None:
            return False
        return replica.running or (replica.last_fetch_ms >= 0 and now_ms - replica.last_fetch_ms < OBSERVER_SESSION_TIMEOUT_MS)

    # Records -------------------------------------------------------------------------------------

    def state_record(self, **changes: object) -> KjbodQuorumRecord:
        """This image's KjbodQuorumRecord, with some fields changed."""
        fields: dict[str, object] = {
            "leader_id": self.leader_id,
            "leader_epoch": self.leader_epoch,
            "epoch_start_offset": self.epoch_start_offset,
            "fetched_offset": self.fetched_offset,
            "voters_offset": self.voters_offset,
            "change_requested_ms": self.change_requested_ms,
            "static_voters": self.static_voter_records() if self.static else (),
        }
        fields.update(changes)
        return KjbodQuorumRecord(**fields)  # type: ignore[arg-type]

    def static_voter_records(self) -> tuple[KjbodStaticVoter, ...]:
        return tuple(
            KjbodStaticVoter(voter_id=v.key.id, listener=e.name, host=e.host, port=e.port) for v in self.voters for e in v.endpoints[:1]
        )

    def voters_record(self, voters: tuple[VoterNode, ...] | None = None) -> VotersRecord:
        return VotersRecord(voters=tuple(v.to_voter() for v in (self.voters if voters is None else voters)))

    def write(self) -> Iterator[Record]:
        """The records that rebuild this quorum. They come after the clock record in a snapshot:
        the KjbodQuorumRecord restores the offsets that replaying at one offset would lose."""
        if not self.is_modelled and not self.replicas:
            return
        if self.kraft_version:
            yield KRaftVersionRecord(k_raft_version=self.kraft_version)
        if not self.static and self.voters:
            yield self.voters_record()
        for key in sorted(self.replicas, key=ReplicaKey.sort_key):
            yield self.replicas[key].to_record()
        yield self.state_record()


EMPTY_QUORUM = QuorumImage(
    kraft_version=0,
    voters=(),
    static=False,
    voters_offset=-1,
    leader_id=-1,
    leader_epoch=0,
    epoch_start_offset=-1,
    fetched_offset=0,
    change_requested_ms=-1,
    replicas=MappingProxyType({}),
)


def static_voter_node(voter: KjbodStaticVoter) -> VoterNode:
    """A voter from controller.quorum.voters: no directory id, supports kraft.version 0 only
    (`VoterSet.fromInetSocketAddresses`, VoterSet.java:445-460)."""
    return VoterNode(ReplicaKey(voter.voter_id), (VoterEndpoint(name=voter.listener, host=voter.host, port=voter.port),), (0, 0))


class QuorumDelta:
    def __init__(self, base: QuorumImage) -> None:
        self._base = base
        self._fields: dict[str, object] = {}
        self._replicas: dict[ReplicaKey, ControllerReplica] | None = None

    def _get(self, name: str) -> object:
        return self._fields.get(name, getattr(self._base, name))

    def replay_kraft_version(self, record: KRaftVersionRecord) -> None:
        if record.k_raft_version not in (0, 1):
            raise ReplayError(f"Unable to replay {record}: unknown kraft.version {record.k_raft_version}")
        self._fields["kraft_version"] = record.k_raft_version

    def replay_voters(self, record: VotersRecord, offset: int) -> None:
        ids = [v.voter_id for v in record.voters]
        if not ids or len(set(ids)) != len(ids):
            raise ReplayError(f"Unable to replay {record}: a voter set needs distinct voters")
        self._fields["voters"] = tuple(sorted((VoterNode.from_voter(v) for v in record.voters), key=lambda v: v.key.id))
        self._fields["static"] = False
        self._fields["voters_offset"] = offset

    def replay_state(self, record: KjbodQuorumRecord) -> None:
        if record.static_voters:
            self._fields["voters"] = tuple(sorted((static_voter_node(v) for v in record.static_voters), key=lambda v: v.key.id))
            self._fields["static"] = True
        elif self._get("static"):
            raise ReplayError(f"Unable to replay {record}: a static quorum needs its voters (or a VotersRecord before it)")
        self._fields.update(
            leader_id=record.leader_id,
            leader_epoch=record.leader_epoch,
            epoch_start_offset=record.epoch_start_offset,
            fetched_offset=record.fetched_offset,
            voters_offset=record.voters_offset,
            change_requested_ms=record.change_requested_ms,
        )

    def replay_replica(self, record: KjbodControllerReplicaRecord) -> None:
        if self._replicas is None:
            self._replicas = dict(self._base.replicas)
        replica = ControllerReplica.from_record(record)
        if replica.key.directory_id is not None:
            # Its directory id is known now: the entry that did not know it is this process.
            self._replicas.pop(ReplicaKey(replica.key.id), None)
        self._replicas[replica.key] = replica

    def replay_clock(self, offset: int) -> None:
        """Time passed: every running, caught-up replica has fetched up to this clock record."""
        if self._get("voters"):
            self._fields["fetched_offset"] = offset + 1

    def apply(self) -> QuorumImage:
        base = replace(self._base, **self._fields)  # type: ignore[arg-type]
        if self._replicas is not None:
            base = replace(base, replicas=MappingProxyType(self._replicas))
        return base

