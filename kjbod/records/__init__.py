"""Typed, versioned metadata records: Kafka's, and kjbod's own."""

from kjbod.records.base import Record
from kjbod.records.kjbod_records import (
    KjbodBrokerLogDirsRecord,
    KjbodClockRecord,
    KjbodLogDir,
    KjbodPartitionSizeRecord,
)
from kjbod.records.metadata import (
    CONFIG_RESOURCE_BROKER,
    CONFIG_RESOURCE_TOPIC,
    ENTER_CONTROLLED_SHUTDOWN,
    FENCE,
    LEADER_RECOVERY_NO_CHANGE,
    LEADER_RECOVERY_RECOVERED,
    LEADER_RECOVERY_RECOVERING,
    NO_CHANGE,
    NO_LEADER,
    NO_LEADER_CHANGE,
    UNFENCE,
    BrokerEndpoint,
    BrokerFeature,
    BrokerRegistrationChangeRecord,
    ConfigRecord,
    FeatureLevelRecord,
    FenceBrokerRecord,
    NoOpRecord,
    PartitionChangeRecord,
    PartitionRecord,
    RegisterBrokerRecord,
    RemoveTopicRecord,
    TopicRecord,
    UnfenceBrokerRecord,
    UnregisterBrokerRecord,
)

__all__ = [name for name in dir() if not name.startswith("_")]
