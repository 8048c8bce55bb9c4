"""Kafka's metadata records that the controller needs (reference: kafka-controller-jbod.md §2).

Field names, defaults and versions follow Kafka's schemas; the api key and valid versions are
class attributes. Sentinels keep Kafka's meaning: Leader -2 and LeaderRecoveryState -1 mean
"unchanged" in a PartitionChangeRecord, and a null list means "unchanged".

Cordoned directories (KIP-1066, metadata.version 4.3-IV0) are modelled as Kafka 4.3 ships them:
a nullable `CordonedLogDirs` list on RegisterBrokerRecord v4 (null until the broker's heartbeats
report its cordoned directories, an empty list once it has reported none) and on
BrokerRegistrationChangeRecord v3 (null for no change).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

from kjbod.records.base import Int8, Int16, Int32, Int64, KafkaBytes, Record, UInt16, UuidText, since

NO_LEADER = -1
NO_LEADER_CHANGE = -2
LEADER_RECOVERY_RECOVERED = 0
LEADER_RECOVERY_RECOVERING = 1
LEADER_RECOVERY_NO_CHANGE = -1

# ConfigResource.Type ids (clients/.../config/ConfigResource.java).
CONFIG_RESOURCE_TOPIC = 2
CONFIG_RESOURCE_BROKER = 4


class _Struct(BaseModel):
    """A nested structure inside a record (no type or version of its own)."""

    model_config = ConfigDict(frozen=True, extra="forbid", alias_generator=to_camel, populate_by_name=True)


class BrokerEndpoint(_Struct):
    name: str = Field(description="The name of the endpoint (the listener).")
    host: str = Field(description="The hostname.")
    port: UInt16 = Field(description="The port.")
    security_protocol: Int16 = Field(description="The security protocol.")


class BrokerFeature(_Struct):
    name: str = Field(description="The feature name.")
    min_supported_version: Int16 = Field(description="The minimum supported feature level.")
    max_supported_version: Int16 = Field(description="The maximum supported feature level.")


class RegisterBrokerRecord(Record):
    API_KEY = 0
    VERSIONS = range(0, 5)
    type: Literal["RegisterBrokerRecord"] = "RegisterBrokerRecord"
    broker_id: Int32 = Field(description="The broker id.")
    is_migrating_zk_broker: bool = since(2, default=False, description="True if the broker is a ZK broker in migration mode.")
    incarnation_id: UuidText = Field(description="The incarnation id of the broker process.")
    broker_epoch: Int64 = Field(description="The broker epoch assigned by the controller.")
    end_points: tuple[BrokerEndpoint, ...] = Field((), description="The endpoints that can be used to communicate with this broker.")
    features: tuple[BrokerFeature, ...] = Field((), description="The features on this broker.")
    rack: str | None = Field(None, description="The broker rack.")
    fenced: bool = Field(True, description="True if the broker is fenced.")
    in_controlled_shutdown: bool = since(1, default=False, description="True if the broker is in controlled shutdown.")
    log_dirs: tuple[UuidText, ...] = since(3, default=(), description="Log directories configured in this broker which are available.")
    cordoned_log_dirs: tuple[UuidText, ...] | None = since(4, default=None, description="Log directories that are cordoned; null until the broker's heartbeats report them (KIP-1066).")


class UnregisterBrokerRecord(Record):
    API_KEY = 1
    VERSIONS = range(0, 1)
    type: Literal["UnregisterBrokerRecord"] = "UnregisterBrokerRecord"
    broker_id: Int32 = Field(description="The broker id.")
    broker_epoch: Int64 = Field(description="The broker epoch.")


class TopicRecord(Record):
    API_KEY = 2
    VERSIONS = range(0, 1)
    type: Literal["TopicRecord"] = "TopicRecord"
    name: str = Field(description="The topic name.")
    topic_id: UuidText = Field(description="The unique ID of this topic.")


class PartitionRecord(Record):
    API_KEY = 3
    VERSIONS = range(0, 3)
    type: Literal["PartitionRecord"] = "PartitionRecord"
    partition_id: Int32 = Field(-1, description="The partition id.")
    topic_id: UuidText = Field(description="The unique ID of this topic.")
    replicas: tuple[Int32, ...] = Field(description="The replicas of this partition, sorted by preferred order.")
    isr: tuple[Int32, ...] = Field(description="The in-sync replicas of this partition.")
    removing_replicas: tuple[Int32, ...] = Field((), description="The replicas that we are in the process of removing.")
    adding_replicas: tuple[Int32, ...] = Field((), description="The replicas that we are in the process of adding.")
    leader: Int32 = Field(NO_LEADER, description="The lead replica, or -1 if there is no leader.")
    leader_recovery_state: Int8 = Field(LEADER_RECOVERY_RECOVERED, description="1 if the partition is recovering from an unclean leader election; 0 otherwise.")
    leader_epoch: Int32 = Field(-1, description="The epoch of the partition leader.")
    partition_epoch: Int32 = Field(-1, description="An epoch that gets incremented each time we change anything in the partition.")
    directories: tuple[UuidText, ...] = since(1, default=(), description="The log directory hosting each replica, sorted in the same exact order as the Replicas field.")
    eligible_leader_replicas: tuple[Int32, ...] | None = since(2, default=None, description="The eligible leader replicas of this partition.")
    last_known_elr: tuple[Int32, ...] | None = since(2, default=None, description="The last known eligible leader replicas of this partition.")


class ConfigRecord(Record):
    API_KEY = 4
    VERSIONS = range(0, 1)
    type: Literal["ConfigRecord"] = "ConfigRecord"
    resource_type: Int8 = Field(description="The type of resource this configuration applies to.")
    resource_name: str = Field(description="The name of the resource this configuration applies to.")
    name: str = Field(description="The name of the configuration key.")
    value: str | None = Field(description="The value of the configuration, or null if it should be deleted.")


class PartitionChangeRecord(Record):
    API_KEY = 5
    VERSIONS = range(0, 3)
    type: Literal["PartitionChangeRecord"] = "PartitionChangeRecord"
    partition_id: Int32 = Field(-1, description="The partition id.")
    topic_id: UuidText = Field(description="The unique ID of this topic.")
    isr: tuple[Int32, ...] | None = Field(None, description="null if the ISR didn't change; the new in-sync replicas otherwise.")
    leader: Int32 = Field(NO_LEADER_CHANGE, description="-1 if there is now no leader; -2 if the leader didn't change; the new leader otherwise.")
    replicas: tuple[Int32, ...] | None = Field(None, description="null if the replicas didn't change; the new replicas otherwise.")
    removing_replicas: tuple[Int32, ...] | None = Field(None, description="null if the removing replicas didn't change; the new removing replicas otherwise.")
    adding_replicas: tuple[Int32, ...] | None = Field(None, description="null if the adding replicas didn't change; the new adding replicas otherwise.")
    leader_recovery_state: Int8 = Field(LEADER_RECOVERY_NO_CHANGE, description="-1 if it didn't change; 0 if the leader was elected from the ISR or recovered from an unclean election; 1 if the leader that was elected using unclean leader election and it is still recovering.")
    directories: tuple[UuidText, ...] | None = since(1, default=None, description="null if the log dirs didn't change; the new log directory for each replica otherwise.")
    eligible_leader_replicas: tuple[Int32, ...] | None = since(2, default=None, description="null if the ELR didn't change; the new eligible leader replicas otherwise.")
    last_known_elr: tuple[Int32, ...] | None = since(2, default=None, description="null if the LastKnownElr didn't change; the last known eligible leader replicas otherwise.")

    def is_no_op(self) -> bool:
        """True when nothing changes (PartitionChangeBuilder never emits such a record)."""
        return (
            self.isr is None
            and self.leader == NO_LEADER_CHANGE
            and self.replicas is None
            and self.removing_replicas is None
            and self.adding_replicas is None
            and self.leader_recovery_state == LEADER_RECOVERY_NO_CHANGE
            and self.directories is None
            and self.eligible_leader_replicas is None
            and self.last_known_elr is None
        )


class FenceBrokerRecord(Record):
    API_KEY = 7
    VERSIONS = range(0, 1)
    type: Literal["FenceBrokerRecord"] = "FenceBrokerRecord"
    id: Int32 = Field(description="The broker ID to fence. It will be removed from all ISRs.")
    epoch: Int64 = Field(description="The epoch of the broker to fence.")


class UnfenceBrokerRecord(Record):
    API_KEY = 8
    VERSIONS = range(0, 1)
    type: Literal["UnfenceBrokerRecord"] = "UnfenceBrokerRecord"
    id: Int32 = Field(description="The broker ID to unfence.")
    epoch: Int64 = Field(description="The epoch of the broker to unfence.")


class RemoveTopicRecord(Record):
    API_KEY = 9
    VERSIONS = range(0, 1)
    type: Literal["RemoveTopicRecord"] = "RemoveTopicRecord"
    topic_id: UuidText = Field(description="The topic to remove. All associated partitions will be removed as well.")


class FeatureLevelRecord(Record):
    API_KEY = 12
    VERSIONS = range(0, 1)
    type: Literal["FeatureLevelRecord"] = "FeatureLevelRecord"
    name: str = Field(description="The feature name.")
    feature_level: Int16 = Field(description="The current finalized feature level of this feature for the cluster, a value of 0 means feature not supported.")


# BrokerRegistrationChangeRecord.Fenced / InControlledShutdown values.
FENCE = 1
UNFENCE = -1
NO_CHANGE = 0
ENTER_CONTROLLED_SHUTDOWN = 1


class BrokerRegistrationChangeRecord(Record):
    API_KEY = 17
    VERSIONS = range(0, 4)
    type: Literal["BrokerRegistrationChangeRecord"] = "BrokerRegistrationChangeRecord"
    broker_id: Int32 = Field(description="The broker id.")
    broker_epoch: Int64 = Field(description="The broker epoch assigned by the controller.")
    fenced: Int8 = Field(NO_CHANGE, description="-1 if the broker has been unfenced, 0 if no change, 1 if the broker has been fenced.")
    in_controlled_shutdown: Int8 = since(1, default=NO_CHANGE, description="0 if no change, 1 if the broker is in controlled shutdown.")
    log_dirs: tuple[UuidText, ...] = since(2, default=(), description="Log directories configured in this broker which are available; an empty list means no change.")
    cordoned_log_dirs: tuple[UuidText, ...] | None = since(3, default=None, description="null if no change; the directories that take no new replicas otherwise (KIP-1066).")


class NoOpRecord(Record):
    API_KEY = 20
    VERSIONS = range(0, 1)
    type: Literal["NoOpRecord"] = "NoOpRecord"


class ControllerEndpoint(_Struct):
    name: str = Field(description="The name of the endpoint.")
    host: str = Field(description="The hostname.")
    port: UInt16 = Field(description="The port.")
    security_protocol: Int16 = Field(description="The security protocol.")


class ControllerFeature(_Struct):
    name: str = Field(description="The feature name.")
    min_supported_version: Int16 = Field(description="The minimum supported feature level.")
    max_supported_version: Int16 = Field(description="The maximum supported feature level.")


class RegisterControllerRecord(Record):
    """A controller's registration (KIP-919), written once its metadata has loaded
    (`core/src/main/scala/kafka/server/ControllerRegistrationManager.scala:200-235`)."""

    API_KEY = 27
    VERSIONS = range(0, 1)
    type: Literal["RegisterControllerRecord"] = "RegisterControllerRecord"
    controller_id: Int32 = Field(description="The controller id.")
    incarnation_id: UuidText = Field(description="The incarnation ID of the controller process")
    zk_migration_ready: bool = Field(False, description="Set if the required configurations for ZK migration are present.")
    end_points: tuple[ControllerEndpoint, ...] = Field((), description="The endpoints that can be used to communicate with this controller.")
    features: tuple[ControllerFeature, ...] = Field((), description="The features on this controller")


class ClearElrRecord(Record):
    """Clears the ELR and last known ELR of every partition of a topic, or of every topic when
    the name is empty (KIP-966; replayed without a partition or leader epoch change)."""

    API_KEY = 28
    VERSIONS = range(0, 1)
    type: Literal["ClearElrRecord"] = "ClearElrRecord"
    topic_name: str = Field(description="The name of the topic to clear ELRs for, or empty if all ELRs should be cleared.")


class UnregisterControllerRecord(Record):
    """Removes a controller's registration (KIP-1312, metadata.version 4.4-IV2)."""

    API_KEY = 29
    VERSIONS = range(0, 1)
    type: Literal["UnregisterControllerRecord"] = "UnregisterControllerRecord"
    controller_id: Int32 = Field(description="The controller id.")


class UserScramCredentialRecord(Record):
    """A user's SCRAM credential for one mechanism (1 SCRAM-SHA-256, 2 SCRAM-SHA-512): what
    `format --add-scram` bootstraps and `kafka-configs --alter --add-config SCRAM-...` writes.
    kjbod keeps it (the state, export) and does nothing else with it."""

    API_KEY = 11
    VERSIONS = range(0, 1)
    BYTES_FIELDS = ("salt", "stored_key", "server_key")
    type: Literal["UserScramCredentialRecord"] = "UserScramCredentialRecord"
    name: str = Field(description="The user name.")
    mechanism: Int8 = Field(description="The SCRAM mechanism.")
    salt: KafkaBytes = Field(description="A random salt generated by the client.")
    stored_key: KafkaBytes = Field(description="The key the Server uses to authenticate the Client.")
    server_key: KafkaBytes = Field(description="The key the Client uses to validate the Servers identity.")
    iterations: Int32 = Field(description="The number of iterations used in the SCRAM credential.")


class RemoveUserScramCredentialRecord(Record):
    """Removes a user's SCRAM credential for one mechanism."""

    API_KEY = 22
    VERSIONS = range(0, 1)
    type: Literal["RemoveUserScramCredentialRecord"] = "RemoveUserScramCredentialRecord"
    name: str = Field(description="The user name.")
    mechanism: Int8 = Field(description="The SCRAM mechanism.")
