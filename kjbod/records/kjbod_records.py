"""kjbod's own records: data a real cluster keeps outside its metadata log.

Kafka's controller knows directories only by id, has no partition sizes and runs on wall-clock
time. kjbod needs all three to show paths, plan by bytes and simulate copies, so it records them
in records of its own, named `Kjbod...` and given api keys from 1000 up so they can never be
mistaken for Kafka's.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from kjbod.records.base import Int32, Int64, Record, UuidText
from kjbod.records.metadata import _Struct

# kjbod's own records take api keys from here up, clear of Kafka's.
KJBOD_API_KEYS_FROM = 1000


class KjbodLogDir(_Struct):
    directory_id: UuidText = Field(description="The directory id from the directory's meta.properties.")
    path: str = Field(description="The absolute path of the log directory on the broker host.")
    capacity_bytes: Int64 | None = Field(None, description="The size of the disk, if known.")


class KjbodBrokerLogDirsRecord(Record):
    """Every directory a broker was configured with, online or not, with its path."""

    API_KEY = 1000
    VERSIONS = range(0, 1)
    type: Literal["KjbodBrokerLogDirsRecord"] = "KjbodBrokerLogDirsRecord"
    broker_id: Int32 = Field(description="The broker id.")
    log_dirs: tuple[KjbodLogDir, ...] = Field(description="The broker's directories; replaces the previous list.")


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
