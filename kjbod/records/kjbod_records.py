"""kjbod's own records: data a real cluster keeps outside its metadata log.

Kafka's controller knows directories only by id, has no partition sizes and runs on wall-clock
time. kjbod needs all three to show paths, plan by bytes and simulate copies, so it records them
in records of its own, named `Kjbod...` and given api keys from 1000 up so they can never be
mistaken for Kafka's. The controller quorum's leader, epoch and replication progress live in
Kafka's raft layer (its quorum-state file and in-memory leader state), not in its metadata log;
kjbod keeps them in the two `KjbodQuorum...`/`KjbodController...` records.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from kjbod.records.base import Int32, Int64, Record, UuidText, since
from kjbod.records.metadata import ControllerEndpoint, ControllerFeature, _Struct

# kjbod's own records take api keys from here up, clear of Kafka's.
KJBOD_API_KEYS_FROM = 1000


class KjbodLogDir(_Struct):
    directory_id: UuidText = Field(description="The directory id from the directory's meta.properties.")
    path: str = Field(description="The absolute path of the log directory on the broker host.")
    capacity_bytes: Int64 | None = Field(None, description="The size of the disk, if known.")


class KjbodBrokerLogDirsRecord(Record):
    """Every directory a broker was configured with, online or not, with its path; from v1, the
    `cordoned.log.dirs` of its server.properties (KIP-1066), which Kafka's controller never sees
    but the broker's heartbeats report."""

    API_KEY = 1000
    VERSIONS = range(0, 2)
    type: Literal["KjbodBrokerLogDirsRecord"] = "KjbodBrokerLogDirsRecord"
    broker_id: Int32 = Field(description="The broker id.")
    log_dirs: tuple[KjbodLogDir, ...] = Field(description="The broker's directories; replaces the previous list.")
    cordoned_log_dirs: str | None = since(
        1, default=None,
        description="The raw cordoned.log.dirs of the broker's server.properties; null when it does not set it or kjbod did not read it.",
    )


class KjbodPartitionSizeRecord(Record):
    """The size of a partition's log (what every replica holds once caught up)."""

    API_KEY = 1001
    VERSIONS = range(0, 1)
    type: Literal["KjbodPartitionSizeRecord"] = "KjbodPartitionSizeRecord"
    topic_id: UuidText = Field(description="The topic id.")
    partition_id: Int32 = Field(description="The partition id.")
    size_bytes: Int64 = Field(ge=0, description="The size of the partition's log in bytes.")


class KjbodReplicaLogRecord(Record):
    """One replica's log on its broker, where it differs from a complete copy of the partition:
    a follower still copying (after a restart, a replaced disk, or as a replica being added) or
    a future replica (KIP-113) being built in another directory of the same broker. A replica
    without an entry holds the whole partition. `size_bytes` null removes the entry."""

    API_KEY = 1003
    VERSIONS = range(0, 1)
    type: Literal["KjbodReplicaLogRecord"] = "KjbodReplicaLogRecord"
    topic_id: UuidText = Field(description="The topic id.")
    partition_id: Int32 = Field(description="The partition id.")
    broker_id: Int32 = Field(description="The broker holding the replica.")
    future: bool = Field(False, description="True for the future replica of an intra-broker move (KIP-113).")
    directory_id: UuidText | None = Field(None, description="For a future replica: the directory it is built in.")
    size_bytes: Int64 | None = Field(ge=0, description="The bytes the replica's log holds; null removes the entry.")
    offset_lag: Int64 = Field(0, ge=0, description="How many offsets the replica is behind the leader's log end.")


class KjbodClusterRecord(Record):
    """Which cluster the state belongs to, and which controller node keeps it.

    Kafka keeps the cluster id in every directory's meta.properties and the controller knows its
    own node id from its config; a cluster state has neither, so `format` on a controller (and
    `import cluster --cluster-id`) records them here, once, before anything else."""

    # 1004 and 1005 are held for the controller-quorum records (KjbodQuorumRecord, KjbodControllerReplicaRecord).
    API_KEY = 1006
    VERSIONS = range(0, 1)
    type: Literal["KjbodClusterRecord"] = "KjbodClusterRecord"
    # Any string, as kafka-storage accepts any --cluster-id.
    cluster_id: str = Field(description="The cluster.id that the cluster's meta.properties files carry.")
    controller_id: Int32 = Field(
        -1, description="The node.id of the controller that formatted the state (Kafka's local controller); -1 if unknown."
    )


class KjbodClockRecord(Record):
    """The simulated clock of the cluster state moved to a new time."""

    API_KEY = 1002
    VERSIONS = range(0, 1)
    type: Literal["KjbodClockRecord"] = "KjbodClockRecord"
    time_ms: Int64 = Field(ge=0, description="The new simulated time, in milliseconds since the epoch.")


class KjbodStaticVoter(_Struct):
    """One entry of `controller.quorum.voters` (`{id}@{host}:{port}`), on the controller listener."""

    voter_id: Int32 = Field(description="The voter's node id.")
    listener: str = Field(description="The controller listener name the address belongs to.")
    host: str = Field(description="The host.")
    port: Int32 = Field(ge=0, le=65535, description="The port.")


class KjbodQuorumRecord(Record):
    """The controller quorum as its leader sees it, beyond Kafka's VotersRecord and
    KRaftVersionRecord; each one replaces the previous one.

    Offsets are the cluster state's own record offsets, which stand for the metadata log's.
    """

    API_KEY = 1004
    VERSIONS = range(0, 1)
    type: Literal["KjbodQuorumRecord"] = "KjbodQuorumRecord"
    leader_id: Int32 = Field(-1, description="The leader of the quorum (the active controller); -1 while there is none.")
    leader_epoch: Int32 = Field(0, ge=0, description="The leader epoch.")
    epoch_start_offset: Int64 = Field(-1, ge=-1, description="The log end offset when the leader took office: its high watermark is unknown until a majority has fetched past it.")
    fetched_offset: Int64 = Field(0, ge=0, description="How far every running, caught-up replica has fetched: the log end offset at the last clock advance.")
    voters_offset: Int64 = Field(-1, ge=-1, description="The offset of the latest VotersRecord; -1 for a static voter set.")
    change_requested_ms: Int64 = Field(-1, ge=-1, description="When the latest voter change was requested (its request times out 2 s later); -1 for none.")
    static_voters: tuple[KjbodStaticVoter, ...] = Field((), description="controller.quorum.voters of a static quorum (kraft.version 0); empty for a dynamic one.")


class KjbodControllerReplicaRecord(Record):
    """A controller process as the quorum leader sees it: whether it runs, how far its copy of
    the metadata log reaches, and what it registers with once it has caught up. Replaces the
    entry of the same node id and directory id; a known directory id replaces an unknown one."""

    API_KEY = 1005
    VERSIONS = range(0, 1)
    type: Literal["KjbodControllerReplicaRecord"] = "KjbodControllerReplicaRecord"
    replica_id: Int32 = Field(ge=0, description="The controller's node id.")
    directory_id: UuidText | None = Field(None, description="The directory id of its metadata log directory; null when unknown (a voter known only from controller.quorum.voters).")
    running: bool = Field(description="True while the process runs and fetches from the leader.")
    caught_up: bool = Field(False, description="True once it reached the leader's log end; while running it then keeps up.")
    log_end_offset: Int64 = Field(-1, ge=-1, description="Its log end offset while catching up or when it stopped; -1 before its first fetch.")
    last_fetch_ms: Int64 = Field(-1, ge=-1, description="The simulated time of its last fetch; -1 for none.")
    last_caught_up_ms: Int64 = Field(-1, ge=-1, description="The simulated time it last caught up with the leader; -1 for never.")
    catch_up_rate: Int64 = Field(gt=0, description="How many records per second it fetches and replays while catching up.")
    incarnation_id: UuidText = Field(description="The incarnation id of the process.")
    end_points: tuple[ControllerEndpoint, ...] = Field((), description="Its controller listeners' advertised endpoints.")
    features: tuple[ControllerFeature, ...] = Field((), description="The feature ranges its software supports.")
