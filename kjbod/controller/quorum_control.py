"""The controller quorum (KIP-853): describe it, add and remove voters, start and stop controller
processes, and what the simulated clock does to them.

Operations read the image and return records and a result; only replay changes state. Each
refusal carries Kafka's error code and message, checked in Kafka's order:
`raft/src/main/java/org/apache/kafka/raft/KafkaRaftClient.java:2073-2197` (the request checks),
`raft/src/main/java/org/apache/kafka/raft/internals/AddVoterHandler.java:86-326` and
`raft/src/main/java/org/apache/kafka/raft/internals/RemoveVoterHandler.java:77-187`.

The model (see kjbod.image.quorum): the leader's log end is the state's next offset; a follower
fetches only while the simulated clock moves. A voter change is appended at once, becomes the
voter set the leader uses, and commits at the clock advance at which a majority of the *new*
voter set has fetched it; a leader that removed itself resigns then, and the remaining voter
that has fetched the most takes over in the next epoch. A controller started with
`start-controller` begins with an empty log and catches up at its catch-up rate (records per
second of simulated time); once caught up it registers (RegisterControllerRecord) and keeps up.

Where kjbod differs from Kafka, for the operator's benefit (each noted where it happens):
- A change whose new voter set could never reach a majority (too few of its voters running) is
  refused before anything is appended. Kafka appends the VotersRecord, the request times out,
  and every further change is blocked until a majority returns.
- kjbod's record log has one history: records appended before a failover survive it.
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping
from dataclasses import dataclass, field, replace

from kjbod.common.java import hashmap_capacity, hashmap_order, string_hash
from kjbod.common.kafka_uuid import Uuid
from kjbod.common.kafka_release import NEWEST, KafkaRelease
from kjbod.common.versions import KRAFT_VERSION
from kjbod.controller.cluster_control import ClusterControl
from kjbod.controller.errors import NONE, ApiError, Errors, java_exception_text
from kjbod.controller.result import ControllerResult
from kjbod.controller.working import WorkingImage
from kjbod.errors import UserError
from kjbod.image import Image
from kjbod.image.quorum import (
    CAUGHT_UP_FETCH_WINDOW_MS,
    ZERO_UUID_TEXT,
    ControllerReplica,
    FetchState,
    QuorumDelta,
    QuorumImage,
    ReplicaKey,
    VoterNode,
    java_key_set,
)
from kjbod.records import (
    ControllerEndpoint,
    ControllerFeature,
    KjbodControllerReplicaRecord,
    KjbodQuorumRecord,
    KjbodStaticVoter,
    KRaftVersionRecord,
    Record,
    RegisterControllerRecord,
    VoterEndpoint,
    VotersRecord,
)

# How many records per second of simulated time a controller fetches and replays while it
# catches up: a fetch returns up to 8 MiB (KafkaRaftClient's MAX_FETCH_SIZE_BYTES), about 50k
# metadata records, and a fetch round trip plus replay takes on the order of a second.
DEFAULT_CATCH_UP_RATE = 50_000
# MetadataVersion.isControllerRegistrationSupported: 3.7-IV0.
CONTROLLER_REGISTRATION_LEVEL = 15
SECURITY_PROTOCOLS = {"PLAINTEXT": 0, "SSL": 1, "SASL_PLAINTEXT": 2, "SASL_SSL": 3}


class QuorumError(UserError):
    """A quorum request Kafka answers with an error: the message is the exception the admin
    client raises (`org.apache.kafka.common.errors.TimeoutException: ...`); `note` is kjbod's
    explanation for the operator, if it has one."""

    def __init__(self, error: ApiError, note: str | None = None) -> None:
        super().__init__(java_exception_text(error))
        self.api_error = error
        self.note = note


def no_leader_error(call: str) -> ApiError:
    """What the admin client reports when no controller leads: it cannot find a node to send
    the call to (`KafkaAdminClient.java:1072`)."""
    return ApiError(Errors.REQUEST_TIMED_OUT, f"Timed out waiting for a node assignment. Call: {call}")


def endpoint_text(endpoint: VoterEndpoint | ControllerEndpoint) -> str:
    """`RaftVoterEndpoint.toString`: NAME://host:port, an IPv6 host in brackets."""
    host = f"[{endpoint.host}]" if ":" in endpoint.host else endpoint.host
    return f"{endpoint.name}://{host}:{endpoint.port}"


def endpoints_text(endpoints: tuple[VoterEndpoint, ...]) -> str:
    """`Endpoints.toString` of an AddRaftVoter request's listeners (Endpoints.java:88-90, 280-290):
    a HashMap of ListenerName to an unresolved InetSocketAddress."""
    names = hashmap_order([e.name for e in endpoints], string_hash, hashmap_capacity(len(endpoints)))
    by_name = {e.name: e for e in endpoints}
    items = ", ".join(f"ListenerName({n})={by_name[n].host}/<unresolved>:{by_name[n].port}" for n in names)
    return f"Endpoints(endpoints={{{items}}})"


@dataclass(frozen=True)
class ControllerProcess:
    """A controller as its server.properties and metadata directory describe it."""

    node_id: int
    directory_id: str
    # Its controller listeners' advertised endpoints, in controller.listener.names order.
    end_points: tuple[ControllerEndpoint, ...]
    cluster_id: str | None = None
    # What the process supports (a controller of the newest release unless its caller says).
    supported_features: Mapping[str, tuple[int, int]] = field(default_factory=NEWEST.supported_ranges)
    catch_up_rate: int = DEFAULT_CATCH_UP_RATE
    incarnation_id: str = ""

    @property
    def key(self) -> ReplicaKey:
        return ReplicaKey(self.node_id, self.directory_id)

    @property
    def voter_endpoints(self) -> tuple[VoterEndpoint, ...]:
        return tuple(VoterEndpoint(name=e.name, host=e.host, port=e.port) for e in self.end_points)

    def features(self) -> tuple[ControllerFeature, ...]:
        return feature_list(self.supported_features)


def feature_list(ranges: Mapping[str, tuple[int, int]]) -> tuple[ControllerFeature, ...]:
    return tuple(
        ControllerFeature(name=name, min_supported_version=lo, max_supported_version=hi) for name, (lo, hi) in sorted(ranges.items())
    )


@dataclass(frozen=True)
class ReplicaRow:
    """One replica as DescribeQuorum reports it (QuorumInfo.ReplicaState), with its lag."""

    key: ReplicaKey
    log_end_offset: int
    lag: int
    last_fetch_ms: int
    last_caught_up_ms: int


@dataclass(frozen=True)
class QuorumInfo:
    """`Admin.describeMetadataQuorum` (with the cluster id of `describeCluster`)."""

    cluster_id: str | None
    leader_id: int
    leader_epoch: int
    high_watermark: int
    voters: tuple[ReplicaRow, ...]
    observers: tuple[ReplicaRow, ...]
    # Node id -> the listeners DescribeQuorum v2 returns for each voter.
    nodes: Mapping[int, tuple[VoterEndpoint, ...]]
    now_ms: int
    # kjbod's own: what the leader's log holds and whether the last voter change committed.
    log_end_offset: int
    kraft_version: int
    static: bool
    voters_offset: int
    change_committed: bool

    @property
    def leader(self) -> ReplicaRow:
        """The leader's row: among the voters, or among the observers while it removes itself
        (Kafka's tool fails with NoSuchElementException then; kjbod shows it)."""
        return next(r for r in (*self.voters, *self.observers) if r.key.id == self.leader_id)


@dataclass(frozen=True)
class VoterChange:
    """The answer to an add or remove request: NONE with the new voter set, or Kafka's error."""

    error: ApiError
    key: ReplicaKey
    voters: tuple[VoterNode, ...] = ()
    voters_offset: int = -1
    endpoints: tuple[VoterEndpoint, ...] = ()
    # kjbod's explanation of a refusal, for the operator.
    note: str | None = None
    # The voters of the new set that must still fetch the change before it commits.
    waiting_for: tuple[int, ...] = ()
    leader_resigns: bool = False
    # remove-controller --unregister (KIP-1312): None when not asked (or the removal was
    # refused); NONE when the UnregisterControllerRecord follows the removal; else Kafka's
    # refusal of the unregistration, which leaves the removal standing, as Kafka's tool does.
    unregistration: ApiError | None = None

    @property
    def majority(self) -> int:
        return len(self.voters) // 2 + 1


@dataclass(frozen=True)
class LeaderChange:
    previous: int
    leader: int  # -1: no majority of the voters runs
    epoch: int


@dataclass(frozen=True)
class ControllerStart:
    key: ReplicaKey
    restarted: bool
    # A running voter known only from controller.quorum.voters whose directory id is now known.
    identified: bool = False
    leader_change: LeaderChange | None = None


@dataclass(frozen=True)
class ControllerStop:
    key: ReplicaKey
    log_end_offset: int
    was_voter: bool
    leader_change: LeaderChange | None = None
    running_voters: int = 0
    voters: int = 0


@dataclass(frozen=True)
class QuorumTick:
    """What a clock advance did to the quorum."""

    caught_up: tuple[tuple[ReplicaKey, int], ...] = ()
    catching_up: tuple[tuple[ReplicaKey, int, int], ...] = ()  # key, log end offset, target
    registered: tuple[int, ...] = ()
    committed: tuple[int, tuple[int, ...]] | None = None  # (VotersRecord offset, voter ids)
    leader_change: LeaderChange | None = None

    @property
    def is_empty(self) -> bool:
        return not (self.caught_up or self.catching_up or self.registered or self.committed or self.leader_change)


@dataclass(frozen=True)
class TickRecords:
    """A tick's records: those that go before the clock record and those after it."""

    before_clock: tuple[Record, ...]
    after_clock: tuple[Record, ...]
    tick: QuorumTick


def require_quorum(image: Image) -> QuorumImage:
    quorum = image.quorum
    if quorum.is_modelled:
        return quorum
    if image.is_empty:
        raise UserError(
            "The cluster state is empty: initialise it with `kjbod format` on a controller "
            "(with --standalone, --initial-controllers or controller.quorum.voters)"
        )
    raise UserError(
        "The cluster state has no controller quorum: it was not initialised by `kjbod format` on a controller with "
        "--standalone, --initial-controllers or controller.quorum.voters (an imported state does not know its quorum)"
    )


def _elect(quorum: QuorumImage, states: Mapping[ReplicaKey, FetchState], exclude: ReplicaKey | None, voters: tuple[VoterNode, ...]) -> int:
    """The voter a new election makes leader: among the running voters (a majority of the voter
    set must run), the one whose log reaches furthest, then the lowest replica key, as the
    resigning leader's preferred successors are ordered (`LeaderState.java:602-614, 808-818`).
    -1 when too few voters run."""
    candidates = []
    for voter in voters:
        replica = quorum.replica_of_voter(voter)
        if replica is None or not replica.running or (exclude is not None and replica.key == exclude):
            continue
        state = states.get(replica.key)
        candidates.append((-(state.log_end_offset if state else replica.log_end_offset), voter.key.sort_key(), voter.key.id))
    if len(candidates) < len(voters) // 2 + 1:
        return -1
    return min(candidates)[2]


class QuorumControl:
    """Reads the image; returns ControllerResults; never mutates (replay does, in QuorumDelta)."""

    def __init__(self, image: Image) -> None:
        self._image = image
        self._quorum = image.quorum

    @property
    def now_ms(self) -> int:
        return self._image.time_ms

    @property
    def log_end_offset(self) -> int:
        """The leader's log end offset: the cluster state's next offset."""
        return self._image.next_offset

    def _state(self, replica: ControllerReplica) -> FetchState:
        quorum = self._quorum
        if quorum.has_leader and quorum.leader == replica.key:
            return FetchState(replica.key, self.log_end_offset, self.now_ms, self.now_ms)
        return quorum.fetch_state(replica, self.now_ms, self.log_end_offset)

    def _states(self) -> dict[ReplicaKey, FetchState]:
        return {key: self._state(replica) for key, replica in self._quorum.replicas.items()}

    # describe ------------------------------------------------------------------------------------

    def describe(self) -> QuorumInfo:
        """DescribeQuorum as the leader answers it (`KafkaRaftClient.java:1728-1758`,
        `RaftUtil.java:489-655`): voters in the leader's HashMap order of node ids, observers
        in its HashMap order of replica keys, the leader's own timestamps "now"."""
        quorum = require_quorum(self._image)
        if not quorum.has_leader:
            raise QuorumError(no_leader_error("describeMetadataQuorum"), self._leaderless_note())
        now, end = self.now_ms, self.log_end_offset
        by_id = {s.key.id: s for s in quorum.voter_states(now, end)}
        voters = [by_id[i] for i in hashmap_order(sorted(by_id), lambda i: i)]
        observers: dict[ReplicaKey, FetchState] = {}
        for key in sorted(quorum.replicas, key=ReplicaKey.sort_key):
            replica = quorum.replicas[key]
            if quorum.is_observer(replica, now):
                observers[key] = self._state(replica)
        controller_ids = {key.id for key in quorum.replicas} | set(quorum.voter_ids)
        for broker_id in sorted(self._image.cluster.brokers):
            if broker_id in controller_ids:
                continue  # a combined broker and controller fetches once, as the controller
            key = ReplicaKey(broker_id, self._broker_metadata_directory(broker_id))
            fetched = min(quorum.fetched_offset, end)
            observers[key] = FetchState(key, fetched, now, now)
        ordered = [observers[k] for k in hashmap_order(list(observers), ReplicaKey.java_hash)]
        hwm = quorum.high_watermark(now, end)
        return QuorumInfo(
            cluster_id=self._image.identity.cluster_id if self._image.identity else None,
            leader_id=quorum.leader_id,
            leader_epoch=quorum.leader_epoch,
            high_watermark=-1 if hwm is None else hwm,
            voters=tuple(self._row(s, end) for s in voters),
            observers=tuple(self._row(s, end) for s in ordered),
            nodes={v.key.id: v.endpoints for v in quorum.voters},
            now_ms=now,
            log_end_offset=end,
            kraft_version=quorum.kraft_version,
            static=quorum.static,
            voters_offset=quorum.voters_offset,
            change_committed=quorum.change_committed(now, end),
        )

    @staticmethod
    def _row(state: FetchState, leader_end: int) -> ReplicaRow:
        return ReplicaRow(state.key, state.log_end_offset, leader_end - state.log_end_offset, state.last_fetch_ms, state.last_caught_up_ms)

    def _broker_metadata_directory(self, broker_id: int) -> str | None:
        """The directory id a broker fetches with: its metadata log directory's, which is its
        first configured log directory unless metadata.log.dir says otherwise."""
        configured = self._image.cluster.log_dirs.get(broker_id)
        if configured:
            return configured[0].directory_id
        directories = self._image.cluster.brokers[broker_id].directories
        return directories[0] if directories else None

    def _leaderless_note(self) -> str:
        quorum = self._quorum
        running = sum(1 for v in quorum.voters if (r := quorum.replica_of_voter(v)) is not None and r.running)
        return (
            f"The quorum has no leader: {running} of its {len(quorum.voters)} voters run and "
            f"{len(quorum.voters) // 2 + 1} are needed; start one with kjbod quorum start-controller --config FILE"
        )

    # add and remove ------------------------------------------------------------------------------

    def _leader_listener(self) -> str:
        """The leader's default listener (its first controller listener): the one a new voter
        must have an endpoint for."""
        quorum = self._quorum
        leader = quorum.running_replica(quorum.leader_id)
        if leader is not None and leader.end_points:
            return leader.end_points[0].name
        voter = quorum.voter(quorum.leader_id)
        return voter.endpoints[0].name if voter is not None and voter.endpoints else "CONTROLLER"

    def _reconfiguration_refusal(self, operation: str) -> ApiError | None:
        """The checks AddVoterHandler and RemoveVoterHandler share, in their order
        (AddVoterHandler.java:92-141, RemoveVoterHandler.java:82-131)."""
        quorum = self._quorum
        now, end = self.now_ms, self.log_end_offset
        if quorum.change_pending(now, end):
            return ApiError(Errors.REQUEST_TIMED_OUT, "Request timed out waiting for leader to handle previous voter change request")
        hwm = quorum.high_watermark(now, end)
        if hwm is None:
            return ApiError(
                Errors.REQUEST_TIMED_OUT, "Request timed out waiting for leader to establish HWM and fence previous voter changes"
            )
        if quorum.kraft_version < 1:
            return ApiError(
                Errors.UNSUPPORTED_VERSION,
                f"Cluster doesn't support {operation} voter because the {KRAFT_VERSION} feature is {quorum.kraft_version}",
            )
        if quorum.voters_offset < 0 or quorum.voters_offset >= hwm:
            entry = "Optional.empty" if quorum.voters_offset < 0 else f"Optional[{quorum.voters_offset}]"
            return ApiError(
                Errors.REQUEST_TIMED_OUT,
                f"Request timed out waiting for voters to commit the latest voter change at {entry} with HWM {hwm}",
            )
        return None

    def _waiting_for(self, voters: tuple[VoterNode, ...]) -> tuple[tuple[int, ...], int]:
        """The voters of a new set that must still fetch a change, and how many of the set run."""
        quorum = self._quorum
        waiting, running = [], 0
        for voter in voters:
            if voter.key.id == quorum.leader_id:
                running += 1
                continue
            replica = quorum.replica_of_voter(voter)
            if replica is not None and replica.running:
                running += 1
            waiting.append(voter.key.id)
        return tuple(waiting), running

    def _append_change(self, key: ReplicaKey, voters: tuple[VoterNode, ...], endpoints: tuple[VoterEndpoint, ...], operation: str) -> ControllerResult[VoterChange]:
        quorum = self._quorum
        waiting, running = self._waiting_for(voters)
        majority = len(voters) // 2 + 1
        if running < majority:
            # kjbod refuses here; Kafka appends the VotersRecord and the request times out.
            note = (
                f"kjbod refused the change before appending it: only {running} of the {len(voters)} voters of the new set "
                f"({', '.join(str(v.key.id) for v in voters)}) run and {majority} must fetch it to commit it. Kafka would "
                "append the VotersRecord, time out, and refuse every further voter change until a majority returns; "
                "start the stopped controllers first (kjbod quorum start-controller)"
            )
            return ControllerResult.of([], VoterChange(ApiError(Errors.REQUEST_TIMED_OUT), key, note=note))
        offset = self.log_end_offset
        records: list[Record] = [
            quorum.voters_record(voters),
            quorum.state_record(voters_offset=offset, change_requested_ms=self.now_ms),
        ]
        change = VoterChange(
            NONE, key, voters, offset, endpoints, waiting_for=waiting,
            leader_resigns=operation == "removing" and key.id == quorum.leader_id,
        )
        return ControllerResult.atomic_of(records, change)

    def add_voter(self, key: ReplicaKey, endpoints: tuple[VoterEndpoint, ...]) -> ControllerResult[VoterChange]:
        """`Admin.addRaftVoter`: KafkaRaftClient.handleAddVoterRequest (KafkaRaftClient.java:2073-2129),
        then AddVoterHandler (AddVoterHandler.java:86-326). The new voter must run (the leader
        asks it for its API versions), support the finalized kraft.version, and have caught up."""
        quorum = require_quorum(self._image)

        def refuse(error: Errors, message: str | None = None, note: str | None = None) -> ControllerResult[VoterChange]:
            return ControllerResult.of([], VoterChange(ApiError(error, message), key, endpoints=endpoints, note=note))

        if not quorum.has_leader:
            return refuse(Errors.REQUEST_TIMED_OUT, no_leader_error("addRaftVoter").message, self._leaderless_note())
        if key.directory_id is None or key.directory_id == ZERO_UUID_TEXT:
            return refuse(Errors.INVALID_REQUEST, "Add voter request didn't include a valid voter")
        listener = self._leader_listener()
        if not any(e.name == listener for e in endpoints):
            return refuse(
                Errors.INVALID_REQUEST,
                f"Add voter request didn't include the endpoint ({endpoints_text(endpoints)}) for the default listener "
                f"ListenerName({listener})",
            )
        refusal = self._reconfiguration_refusal("adding")
        if refusal is not None:
            return refuse(refusal.error, refusal.message, self._refusal_note(refusal))
        if key.id in quorum.voter_ids:
            return refuse(
                Errors.DUPLICATE_VOTER,
                f"The voter id for {key} is already part of the set of voters {java_key_set([v.key for v in quorum.voters])}.",
                f"Controller {key.id} is a voter already; to replace it with a new directory, remove it first "
                f"(kjbod quorum remove-controller --controller-id {key.id} --controller-directory-id "
                f"{quorum.voter(key.id).key.directory_text})",  # type: ignore[union-attr]
            )
        # The leader sends API_VERSIONS to the new voter's default listener (AddVoterHandler.java:158-182).
        process = quorum.running_replica(key.id)
        if process is None:
            return refuse(
                Errors.REQUEST_TIMED_OUT,
                "Aborted add voter operation for since API_VERSIONS returned an error BROKER_NOT_AVAILABLE",
                f"Controller {key.id} is not running: start it (kjbod quorum start-controller --config FILE), let it catch "
                "up (kjbod clock advance), then add it",
            )
        supported = process.supported(KRAFT_VERSION)
        # ApiVersions leaves out a feature whose highest supported level is 0.
        advertised = supported if supported is not None and supported[1] > 0 else None
        if advertised is None or not advertised[0] <= quorum.kraft_version <= advertised[1]:
            # Kafka's message lacks the closing parenthesis of a present range (AddVoterHandler.java:256-274).
            text = f"(min: {advertised[0]}, max: {advertised[1]}" if advertised else "(min: 0, max: 0)"
            return refuse(
                Errors.INVALID_REQUEST,
                f"Aborted add voter operation for {key} since the {KRAFT_VERSION} range {text} doesn't support the "
                f"finalized version {quorum.kraft_version}",
            )
        if not self._is_caught_up(key):
            return refuse(
                Errors.REQUEST_TIMED_OUT,
                f"Aborted add voter operation for {key} since it is lagging behind",
                self._lagging_note(key),
            )
        new_voters = tuple(sorted((*quorum.voters, VoterNode(key, endpoints, advertised)), key=lambda v: v.key.id))
        return self._append_change(key, new_voters, endpoints, "adding")

    def _is_caught_up(self, key: ReplicaKey) -> bool:
        """`LeaderState.isReplicaCaughtUp` (LeaderState.java:386-397): an observer with this exact
        key that has been caught up and has fetched within the last hour."""
        replica = self._quorum.replicas.get(key)
        if replica is None or not self._quorum.is_observer(replica, self.now_ms):
            return False
        state = self._state(replica)
        return state.last_caught_up_ms > 0 and state.last_fetch_ms > 0 and state.last_fetch_ms > self.now_ms - CAUGHT_UP_FETCH_WINDOW_MS

    def _lagging_note(self, key: ReplicaKey) -> str:
        quorum = self._quorum
        replica = quorum.replicas.get(key)
        if replica is None:
            running = quorum.running_replica(key.id)
            found = f" (it runs with directory id {running.key.directory_text})" if running is not None else ""
            return (
                f"The leader has no fetch from controller {key.id} with directory id {key.directory_text}{found}: "
                "check that --config names the running controller's configuration"
            )
        state = self._state(replica)
        remaining = max(self.log_end_offset - state.log_end_offset, 0)
        seconds = math.ceil(remaining / replica.catch_up_rate) if replica.catch_up_rate else 0
        return (
            f"Controller {key.id} has fetched {max(state.log_end_offset, 0)} of {self.log_end_offset} records; at "
            f"{replica.catch_up_rate} records/s it needs about {seconds}s more: kjbod clock advance {max(seconds, 1)}s"
        )

    def _refusal_note(self, refusal: ApiError) -> str | None:
        message = refusal.message or ""
        if message.startswith("Request timed out waiting for leader to handle previous"):
            return "Only one voter change at a time: the previous one commits once a majority of its voter set has fetched it (kjbod clock advance 1s)"
        if message.startswith("Request timed out waiting for voters to commit"):
            return "The previous voter change has not committed: a majority of its voter set must run and fetch it (kjbod quorum describe --replication)"
        if message.startswith("Request timed out waiting for leader to establish HWM"):
            return "A new leader commits nothing until a majority has fetched from it: kjbod clock advance 1s"
        if refusal.error is Errors.UNSUPPORTED_VERSION:
            return "Enable KIP-853 reconfiguration first: kjbod features upgrade --feature kraft.version=1"
        return None

    def remove_voter(self, key: ReplicaKey, *, unregister: bool = False) -> ControllerResult[VoterChange]:
        """`Admin.removeRaftVoter`: KafkaRaftClient.handleRemoveVoterRequest (KafkaRaftClient.java:2156-2197),
        then RemoveVoterHandler (RemoveVoterHandler.java:77-156). A leader that removes itself
        keeps leading until the change commits, then resigns (RemoveVoterHandler.java:158-187).

        With `unregister` (remove-controller --unregister, KIP-1312, 4.4.0
        MetadataQuorumCommand.java:505-518): once the removal is made, `Admin.unregisterController`
        against the state it leaves (ClusterControl.unregister_controller); its refusal leaves the
        removal made, as Kafka's tool sends the two requests one after the other. A leader
        removing itself still leads then, so Kafka refuses to unregister it."""
        result = self._remove_voter(key)
        if not unregister or not result.response.error.is_success:
            return result
        work = WorkingImage(self._image)
        work.extend(result.records)
        unregistration = ClusterControl(work.image).unregister_controller(key.id)
        work.extend(unregistration.records)
        return ControllerResult.of(work.records, replace(result.response, unregistration=unregistration.response))

    def unregister_controller(self, controller_id: int) -> ControllerResult[ApiError]:
        """`Admin.unregisterController` on its own (kafka-cluster unregister-controller, 4.4.0
        tools:ClusterTool.java:200-211): the quorum must have a leader to answer."""
        quorum = self._quorum
        if quorum.is_modelled and not quorum.has_leader:
            return ControllerResult.of([], ApiError(Errors.REQUEST_TIMED_OUT, no_leader_error("unregisterController").message))
        return ClusterControl(self._image).unregister_controller(controller_id)

    def _remove_voter(self, key: ReplicaKey) -> ControllerResult[VoterChange]:
        quorum = require_quorum(self._image)

        def refuse(error: Errors, message: str | None = None, note: str | None = None) -> ControllerResult[VoterChange]:
            return ControllerResult.of([], VoterChange(ApiError(error, message), key, note=note))

        if not quorum.has_leader:
            return refuse(Errors.REQUEST_TIMED_OUT, no_leader_error("removeRaftVoter").message, self._leaderless_note())
        if key.directory_id is None or key.directory_id == ZERO_UUID_TEXT:
            return refuse(Errors.INVALID_REQUEST, "Remove voter request didn't include a valid voter")
        refusal = self._reconfiguration_refusal("removing")
        if refusal is not None:
            return refuse(refusal.error, refusal.message, self._refusal_note(refusal))
        current = quorum.voter(key.id)
        # VoterSet.removeVoter: the exact key, and never the last voter (VoterSet.java:207-220).
        if current is None or current.key != key or len(quorum.voters) == 1:
            note = None
            if current is not None and current.key != key:
                note = f"Voter {key.id} has directory id {current.key.directory_text}"
            elif current is not None:
                note = "The last voter cannot be removed"
            return refuse(
                Errors.VOTER_NOT_FOUND,
                f"Cannot remove voter {key} from the set of voters {java_key_set([v.key for v in quorum.voters])}",
                note,
            )
        new_voters = tuple(v for v in quorum.voters if v.key != key)
        return self._append_change(key, new_voters, (), "removing")

    # controller processes ------------------------------------------------------------------------

    def start_controller(self, process: ControllerProcess) -> ControllerResult[ControllerStart]:
        """A controller process starts and fetches from the leader as an observer (or as the
        voter it is). kjbod's own operation: Kafka's controller simply starts. A restarted
        process keeps its log; a new one (formatted with --no-initial-controllers) starts empty."""
        quorum = require_quorum(self._image)
        key = process.key
        cluster_id = self._image.identity.cluster_id if self._image.identity else None
        if cluster_id and process.cluster_id and cluster_id != process.cluster_id:
            raise UserError(
                f"Controller {key.id}'s metadata directory belongs to cluster {process.cluster_id}, but this cluster's id is "
                f"{cluster_id} (the leader answers its fetches with INCONSISTENT_CLUSTER_ID): format it with "
                f"--cluster-id {cluster_id}"
            )
        running = quorum.running_replica(key.id)
        records: list[Record] = []
        identified = False
        if running is not None:
            if running.key.directory_id is not None:
                same = running.key == key
                raise UserError(
                    f"Controller {key.id} is already running"
                    + ("" if same else f" with directory id {running.key.directory_id}")
                    + f"; stop it first (kjbod quorum stop-controller --controller-id {key.id})"
                )
            # A voter known only from controller.quorum.voters: this is that process.
            identified = True
            replica = replace(
                running, key=key, end_points=process.end_points, features=process.features(), catch_up_rate=process.catch_up_rate
            )
            records.append(replica.to_record())
            return ControllerResult.atomic_of(records, ControllerStart(key, restarted=False, identified=identified))
        previous = quorum.replicas.get(key)
        replica = ControllerReplica(
            key=key,
            running=True,
            caught_up=False,
            log_end_offset=max(previous.log_end_offset, 0) if previous is not None else 0,
            last_fetch_ms=self.now_ms,
            last_caught_up_ms=previous.last_caught_up_ms if previous is not None else -1,
            catch_up_rate=process.catch_up_rate,
            incarnation_id=process.incarnation_id,
            end_points=process.end_points,
            features=process.features(),
        )
        work = WorkingImage(self._image)
        work.append(replica.to_record())
        change = self._election(work, None) if not quorum.has_leader else None
        return ControllerResult.atomic_of(work.records, ControllerStart(key, restarted=previous is not None, leader_change=change))

    def stop_controller(self, node_id: int, directory_id: str | None = None) -> ControllerResult[ControllerStop]:
        """A controller process stops (or fails): it fetches no more. When it led, the running
        voters elect a new leader in the next epoch if a majority of them runs."""
        quorum = require_quorum(self._image)
        candidates = [r for r in quorum.replicas_of(node_id) if r.running and (directory_id is None or r.key.directory_id == directory_id)]
        if not candidates:
            known = ", ".join(
                f"{k.id} ({k.directory_text}{'' if r.running else ', stopped'})" for k, r in sorted(quorum.replicas.items(), key=lambda i: i[0].sort_key())
            )
            raise UserError(f"Controller {node_id}{f' with directory id {directory_id}' if directory_id else ''} is not running (controllers: {known or 'none'})")
        replica = candidates[0]
        state = self._state(replica)
        stopped = replace(
            replica, running=False, caught_up=False, log_end_offset=state.log_end_offset,
            last_fetch_ms=state.last_fetch_ms, last_caught_up_ms=state.last_caught_up_ms,
        )
        work = WorkingImage(self._image)
        work.append(stopped.to_record())
        change = self._election(work, replica.key) if quorum.leader == replica.key else None
        after = work.image.quorum
        running_voters = sum(1 for v in quorum.voters if (r := after.replica_of_voter(v)) is not None and r.running)
        return ControllerResult.atomic_of(
            work.records,
            ControllerStop(replica.key, state.log_end_offset, quorum.voter_for(replica.key) is not None, change, running_voters, len(quorum.voters)),
        )

    def _election(self, work: WorkingImage, resigning: ReplicaKey | None) -> LeaderChange:
        """A new epoch, appended to `work` and decided on the quorum its records leave: the
        elected voter (or -1), its replica caught up with the log, and the KjbodQuorumRecord that
        starts the epoch at its own offset. Fetches are measured against the log as the
        operation found it."""
        quorum = work.image.quorum
        states = {key: quorum.fetch_state(r, self.now_ms, self.log_end_offset) for key, r in quorum.replicas.items()}
        leader = _elect(quorum, states, resigning, quorum.voters)
        if leader >= 0:
            winner = quorum.running_replica(leader)
            if winner is not None:
                work.append(replace(winner, caught_up=True, log_end_offset=work.next_offset, last_fetch_ms=self.now_ms, last_caught_up_ms=self.now_ms).to_record())
        epoch = quorum.leader_epoch + 1
        work.append(quorum.state_record(leader_id=leader, leader_epoch=epoch, epoch_start_offset=work.next_offset, change_requested_ms=-1))
        return LeaderChange(quorum.leader_id, leader, epoch)

    # the clock -----------------------------------------------------------------------------------

    def catch_up_done_ms(self) -> int | None:
        """When the last running controller that is catching up will have caught up (for
        `clock advance --until-idle`); None when none is catching up."""
        quorum = self._quorum
        if not quorum.is_modelled:
            return None
        done = [
            replica.last_fetch_ms + math.ceil(max(self.log_end_offset - replica.log_end_offset, 0) * 1000 / replica.catch_up_rate)
            for replica in quorum.replicas.values()
            if replica.running and not replica.caught_up and quorum.leader != replica.key
        ]
        return max((max(t, self.now_ms) for t in done), default=None)

    def advance(self, end_ms: int, first_offset: int) -> TickRecords:
        """What the controllers do while the clock moves to `end_ms`; the records start at
        `first_offset` (after the copies' records) and the clock record follows `before_clock`.

        A catching-up controller fetches `catch_up_rate` records per second toward the leader's
        log end as it was when the clock started; once there it also takes the records of this
        advance, is caught up, and registers (RegisterControllerRecord, from metadata.version
        3.7-IV0, as ControllerRegistrationManager does once its metadata has loaded). The latest
        voter change commits when a majority of its voter set has fetched it; a leader outside
        the committed set resigns (RemoveVoterHandler.java:158-187)."""
        quorum = self._quorum
        if not quorum.is_modelled or end_ms <= self.now_ms:
            return TickRecords((), (), QuorumTick())
        start_ms, target = self.now_ms, self.log_end_offset
        leader_key = quorum.leader
        progress: list[ControllerReplica] = []
        caught_up: list[tuple[ReplicaKey, int]] = []
        catching_up: list[tuple[ReplicaKey, int, int]] = []
        for key in sorted(quorum.replicas, key=ReplicaKey.sort_key):
            replica = quorum.replicas[key]
            if not replica.running or replica.caught_up or key == leader_key:
                continue
            needed_ms = math.ceil(max(target - replica.log_end_offset, 0) * 1000 / replica.catch_up_rate)
            if start_ms + needed_ms <= end_ms:
                done_ms = max(start_ms + needed_ms, 1)
                progress.append(replace(replica, caught_up=True, log_end_offset=target, last_fetch_ms=end_ms, last_caught_up_ms=done_ms))
                caught_up.append((key, done_ms))
            else:
                reached = replica.log_end_offset + (end_ms - start_ms) * replica.catch_up_rate // 1000
                progress.append(replace(replica, log_end_offset=min(reached, target), last_fetch_ms=end_ms))
                catching_up.append((key, min(reached, target), target))
        registrations = self._registrations({r.key: r for r in progress})
        before: list[Record] = [*registrations, *(r.to_record() for r in progress)]
        clock_offset = first_offset + len(before)
        delta = QuorumDelta(quorum)
        for record in before:
            if isinstance(record, KjbodControllerReplicaRecord):
                delta.replay_replica(record)
        delta.replay_clock(clock_offset)
        after_tick = delta.apply()
        end = clock_offset + 1
        committed = None
        leader_change = None
        after: list[Record] = []
        # Not fetched by the caught-up followers before this advance, so not committed before it.
        unfetched = quorum.voters_offset >= quorum.fetched_offset
        if quorum.voters_offset >= 0 and unfetched and after_tick.change_committed(end_ms, end):
            committed = (quorum.voters_offset, after_tick.voter_ids)
            if leader_key is not None and after_tick.voter_for(leader_key) is None:
                leader_change, after = self._resign(after_tick, leader_key, end_ms, end)
        tick = QuorumTick(tuple(caught_up), tuple(catching_up), tuple(r.controller_id for r in registrations), committed, leader_change)
        return TickRecords(tuple(before), tuple(after), tick)

    def _registrations(self, updated: Mapping[ReplicaKey, ControllerReplica]) -> list[RegisterControllerRecord]:
        mv = self._image.features.metadata_version
        if mv is None or mv.level < CONTROLLER_REGISTRATION_LEVEL:
            return []
        records = []
        for key in sorted(self._quorum.replicas, key=ReplicaKey.sort_key):
            replica = updated.get(key, self._quorum.replicas[key])
            if not replica.running or not replica.caught_up:
                continue
            current = self._image.cluster.controllers.get(key.id)
            if current is not None and current.incarnation_id == replica.incarnation_id:
                continue
            records.append(
                RegisterControllerRecord(
                    controller_id=key.id, incarnation_id=replica.incarnation_id, end_points=replica.end_points, features=replica.features
                )
            )
        return records

    def _resign(self, quorum: QuorumImage, leader_key: ReplicaKey, now_ms: int, end: int) -> tuple[LeaderChange, list[Record]]:
        """The leader is not in the committed voter set: it resigns and the voters elect the one
        that has fetched the most; the old leader stays on as an observer."""
        states = {key: quorum.fetch_state(r, now_ms, end) for key, r in quorum.replicas.items()}
        leader = _elect(quorum, states, leader_key, quorum.voters)
        records: list[Record] = []
        old = quorum.replicas.get(leader_key)
        if old is not None:
            records.append(replace(old, caught_up=True, log_end_offset=end, last_fetch_ms=now_ms, last_caught_up_ms=now_ms).to_record())
        winner = quorum.running_replica(leader) if leader >= 0 else None
        if winner is not None:
            records.append(replace(winner, caught_up=True, log_end_offset=end, last_fetch_ms=now_ms, last_caught_up_ms=now_ms).to_record())
        epoch = quorum.leader_epoch + 1
        records.append(
            quorum.state_record(
                leader_id=leader, leader_epoch=epoch, epoch_start_offset=end + len(records), fetched_offset=end, change_requested_ms=-1
            )
        )
        return LeaderChange(leader_key.id, leader, epoch), records

    # kraft.version -------------------------------------------------------------------------------

    def upgrade_kraft_version(self, level: int, first_offset: int) -> tuple[ApiError, list[Record]]:
        """Finalize kraft.version `level` (an upgrade): KRaftVersionRecord and the voter set as a
        VotersRecord, as Kafka 4.1's `LeaderState.maybeAppendUpgradedKRaftVersion` does (after
        this source's commit, KAFKA-16538). Every voter must support the level and have a known
        directory id; kjbod knows a static voter's directory and software once it has been
        started with `quorum start-controller` (the local controller of `format` is known)."""
        quorum = self._quorum
        if level <= quorum.kraft_version:
            return NONE, []
        voters = []
        for voter in quorum.voters:
            replica = quorum.replica_of_voter(voter)
            known = replica is not None and replica.key.directory_id is not None
            supported = replica.supported(KRAFT_VERSION) if known else None  # type: ignore[union-attr]
            kraft_range = supported if supported is not None else voter.kraft_range
            endpoints = voter.endpoints
            if known and replica.end_points:  # type: ignore[union-attr]
                endpoints = tuple(VoterEndpoint(name=e.name, host=e.host, port=e.port) for e in replica.end_points)  # type: ignore[union-attr]
            voters.append(VoterNode(ReplicaKey(voter.key.id, replica.key.directory_id if known else None), endpoints, kraft_range))  # type: ignore[union-attr]
        if not all(v.kraft_range[0] <= level <= v.kraft_range[1] for v in voters):
            return ApiError(Errors.INVALID_UPDATE_VERSION, f"Invalid upgrade of {KRAFT_VERSION} to {level} because not all of the voters support it"), []
        if any(v.key.directory_id is None for v in voters):
            # Kafka throws an IllegalStateException here (the controller answers UNKNOWN_SERVER_ERROR).
            return ApiError(Errors.INVALID_UPDATE_VERSION, f"Directory id must be known for all of the voters: {voter_set_text(tuple(voters))}"), []
        voters_offset = first_offset + 1
        records: list[Record] = [
            KRaftVersionRecord(k_raft_version=level),
            VotersRecord(voters=tuple(v.to_voter() for v in voters)),
            quorum.state_record(static_voters=(), voters_offset=voters_offset),
        ]
        return NONE, records


def voter_set_text(voters: tuple[VoterNode, ...]) -> str:
    """`VoterSet.toString` (VoterSet.java:308-311, 389-397)."""

    def node(v: VoterNode) -> str:
        endpoints = endpoints_text(v.endpoints)
        return (
            f"{v.key.id}=VoterNode(voterKey={v.key}, listeners={endpoints}, "
            f"supportedKRaftVersion=SupportedVersionRange[min_version:{v.kraft_range[0]}, max_version:{v.kraft_range[1]}])"
        )

    ordered = hashmap_order([v.key.id for v in voters], lambda i: i, hashmap_capacity(len(voters)))
    by_id = {v.key.id: v for v in voters}
    return "VoterSet(voters={" + ", ".join(node(by_id[i]) for i in ordered) + "})"


# format: where the quorum starts -------------------------------------------------------------


def quorum_bootstrap_records(
    *,
    local: ControllerProcess,
    kraft_version: int,
    first_offset: int,
    dynamic_voters: tuple[VoterNode, ...] = (),
    static_voters: tuple[KjbodStaticVoter, ...] = (),
    rng: random.Random | None = None,
) -> list[Record]:
    """The quorum records `format` adds to a controller's bootstrap: the KIP-853 voter set of
    --standalone / --initial-controllers with kraft.version 1 (what the bootstrap snapshot
    holds: KRaftVersionRecord, VotersRecord), or the static controller.quorum.voters with
    kraft.version 0; then each voter's controller process and the quorum's state.

    The voters are taken as started with the cluster and caught up. The formatting controller
    leads epoch 1 if it is a voter, else the lowest voter id does. Only the formatting
    controller's directory id is known for a static voter set.
    """
    if bool(dynamic_voters) == bool(static_voters):
        raise ValueError("give either the dynamic or the static voters")
    records: list[Record] = []
    voters_offset = -1
    if dynamic_voters:
        if kraft_version:
            records.append(KRaftVersionRecord(k_raft_version=kraft_version))
        voters_offset = first_offset + len(records)
        records.append(VotersRecord(voters=tuple(v.to_voter() for v in sorted(dynamic_voters, key=lambda v: v.key.id))))
        keys = [v.key for v in dynamic_voters]
        endpoints = {v.key.id: v.endpoints for v in dynamic_voters}
    else:
        keys = [ReplicaKey(v.voter_id, local.directory_id if v.voter_id == local.node_id else None) for v in static_voters]
        endpoints = {v.voter_id: (VoterEndpoint(name=v.listener, host=v.host, port=v.port),) for v in static_voters}
    # The other controllers of a new cluster run the formatting controller's release.
    default_features = local.features()
    for key in sorted(keys, key=ReplicaKey.sort_key):
        is_local = key.id == local.node_id
        records.append(
            KjbodControllerReplicaRecord(
                replica_id=key.id,
                directory_id=key.directory_id,
                running=True,
                caught_up=True,
                log_end_offset=0,
                last_fetch_ms=0,
                last_caught_up_ms=0,
                catch_up_rate=local.catch_up_rate,
                incarnation_id=local.incarnation_id if is_local else str(Uuid.random(rng)),
                end_points=local.end_points if is_local else tuple(
                    ControllerEndpoint(name=e.name, host=e.host, port=e.port, security_protocol=SECURITY_PROTOCOLS.get(e.name, 0))
                    for e in endpoints[key.id]
                ),
                features=local.features() if is_local else default_features,
            )
        )
    ids = sorted(k.id for k in keys)
    leader = local.node_id if local.node_id in ids else ids[0]
    state_offset = first_offset + len(records)
    records.append(
        KjbodQuorumRecord(
            leader_id=leader,
            leader_epoch=1,
            epoch_start_offset=state_offset,
            fetched_offset=state_offset + 1,
            voters_offset=voters_offset,
            static_voters=static_voters,
        )
    )
    return records


# import cluster --metadata-snapshot: a quorum read from a controller's files ------------------


def imported_quorum_records(
    image: Image,
    voters: tuple[VoterNode, ...],
    kraft_version: int,
    epoch: int,
    first_offset: int,
    rng: random.Random | None = None,
    release: KafkaRelease = NEWEST,
) -> list[Record]:
    """The quorum of a real controller's snapshot (and log): its kraft.version and voter set as
    its KRaftVersionRecord and VotersRecord hold them. Which voter leads is in Kafka's
    quorum-state file, not in the snapshot: the lowest voter id leads the snapshot's epoch here.
    Every voter is taken as running and caught up; a controller that registered
    (RegisterControllerRecord) keeps its incarnation, listeners and features, one that did not
    supports what a controller of `release` does."""
    if not voters:
        raise ValueError("a quorum needs voters")
    records: list[Record] = []
    if kraft_version:
        records.append(KRaftVersionRecord(k_raft_version=kraft_version))
    voters_offset = first_offset + len(records)
    records.append(VotersRecord(voters=tuple(v.to_voter() for v in voters)))
    for voter in sorted(voters, key=lambda v: v.key.sort_key()):
        registration = image.cluster.controllers.get(voter.key.id)
        end_points = registration.listeners if registration is not None else tuple(
            ControllerEndpoint(name=e.name, host=e.host, port=e.port, security_protocol=SECURITY_PROTOCOLS.get(e.name, 0)) for e in voter.endpoints
        )
        features = feature_list(registration.supported_features if registration is not None else release.supported_ranges())
        records.append(
            KjbodControllerReplicaRecord(
                replica_id=voter.key.id,
                directory_id=voter.key.directory_id,
                running=True,
                caught_up=True,
                log_end_offset=0,
                last_fetch_ms=image.time_ms,
                last_caught_up_ms=image.time_ms,
                catch_up_rate=DEFAULT_CATCH_UP_RATE,
                incarnation_id=registration.incarnation_id if registration is not None else str(Uuid.random(rng)),
                end_points=end_points,
                features=features,
            )
        )
    state_offset = first_offset + len(records)
    records.append(
        KjbodQuorumRecord(
            leader_id=min(v.key.id for v in voters),
            leader_epoch=max(epoch, 1),
            epoch_start_offset=state_offset,
            fetched_offset=state_offset + 1,
            voters_offset=voters_offset,
        )
    )
    return records
