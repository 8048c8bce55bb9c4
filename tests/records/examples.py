"""One example of every record type at every version it has: the golden file's source."""

from __future__ import annotations

from kjbod.common.kafka_uuid import DirectoryId
from kjbod.records import (
    BrokerEndpoint,
    BrokerFeature,
    BrokerRegistrationChangeRecord,
    ClearElrRecord,
    ConfigRecord,
    ControllerEndpoint,
    ControllerFeature,
    FeatureLevelRecord,
    FenceBrokerRecord,
    KjbodBrokerLogDirsRecord,
    KjbodClockRecord,
    KjbodClusterRecord,
    KjbodControllerReplicaRecord,
    KjbodLogDir,
    KjbodPartitionSizeRecord,
    KjbodQuorumRecord,
    KjbodReplicaLogRecord,
    KjbodStaticVoter,
    KRaftVersionFeature,
    KRaftVersionRecord,
    NoOpRecord,
    PartitionChangeRecord,
    PartitionRecord,
    Record,
    RemoveUserScramCredentialRecord,
    UserScramCredentialRecord,
    RegisterBrokerRecord,
    RegisterControllerRecord,
    RemoveTopicRecord,
    TopicRecord,
    UnfenceBrokerRecord,
    UnregisterBrokerRecord,
    UnregisterControllerRecord,
    Voter,
    VoterEndpoint,
    VotersRecord,
)

TOPIC = "cJ3rE4bvQc2w5Y0kT1q9Zg"
DIR_A = "ZNJ-ywU0nnQwRv5eRRU9ow"
DIR_B = "XcZZOzUqS4yHOjhMQB6JLQ"
INCARNATION = "O7xvrxGUTwyKxRtVqYj9qA"


def examples() -> list[Record]:
    endpoint = BrokerEndpoint(name="PLAINTEXT", host="b1.example", port=9092, security_protocol=0)
    feature = BrokerFeature(name="metadata.version", min_supported_version=7, max_supported_version=30)
    register = dict(broker_id=1, incarnation_id=INCARNATION, broker_epoch=42, end_points=(endpoint,), features=(feature,), rack="r1")
    partition = dict(partition_id=0, topic_id=TOPIC, replicas=(1, 2), isr=(1, 2), leader=1, leader_epoch=0, partition_epoch=0)
    return [
        RegisterBrokerRecord(version=0, **register),
        RegisterBrokerRecord(version=1, in_controlled_shutdown=True, **register),
        RegisterBrokerRecord(version=2, is_migrating_zk_broker=False, **register),
        RegisterBrokerRecord(version=3, log_dirs=(DIR_A, DIR_B), **register),
        RegisterBrokerRecord(version=4, log_dirs=(DIR_A, DIR_B), cordoned_log_dirs=(DIR_B,), **register),
        UnregisterBrokerRecord(broker_id=1, broker_epoch=42),
        TopicRecord(name="orders", topic_id=TOPIC),
        PartitionRecord(version=0, **partition),
        PartitionRecord(version=1, directories=(DIR_A, DirectoryId.UNASSIGNED), **partition),
        PartitionRecord(version=2, directories=(DIR_A, DIR_B), eligible_leader_replicas=(2,), last_known_elr=(), **partition),
        ConfigRecord(resource_type=2, resource_name="orders", name="retention.ms", value="3600000"),
        ConfigRecord(resource_type=4, resource_name="1", name="leader.replication.throttled.rate", value=None),
        PartitionChangeRecord(version=0, partition_id=0, topic_id=TOPIC, isr=(1,), leader=1),
        PartitionChangeRecord(version=1, partition_id=0, topic_id=TOPIC, directories=(DIR_B, DIR_A)),
        PartitionChangeRecord(version=2, partition_id=0, topic_id=TOPIC, leader=-1, eligible_leader_replicas=(1,)),
        FenceBrokerRecord(id=1, epoch=42),
        UnfenceBrokerRecord(id=1, epoch=42),
        RemoveTopicRecord(topic_id=TOPIC),
        FeatureLevelRecord(name="metadata.version", feature_level=30),
        BrokerRegistrationChangeRecord(version=0, broker_id=1, broker_epoch=42, fenced=-1),
        BrokerRegistrationChangeRecord(version=1, broker_id=1, broker_epoch=42, in_controlled_shutdown=1),
        BrokerRegistrationChangeRecord(version=2, broker_id=1, broker_epoch=42, log_dirs=(DIR_A,)),
        BrokerRegistrationChangeRecord(version=3, broker_id=1, broker_epoch=42, cordoned_log_dirs=(DIR_B,)),
        NoOpRecord(),
        KjbodBrokerLogDirsRecord(broker_id=1, log_dirs=(KjbodLogDir(directory_id=DIR_A, path="/mnt/d1", capacity_bytes=10**12),)),
        KjbodBrokerLogDirsRecord(
            version=1, broker_id=1, log_dirs=(KjbodLogDir(directory_id=DIR_A, path="/mnt/d1"),), cordoned_log_dirs="/mnt/d1",
        ),
        KjbodPartitionSizeRecord(topic_id=TOPIC, partition_id=0, size_bytes=123456789),
        KjbodClockRecord(time_ms=1_500_000),
        KjbodReplicaLogRecord(topic_id=TOPIC, partition_id=0, broker_id=2, future=True, directory_id=DIR_B, size_bytes=1024, offset_lag=7),
        KjbodClusterRecord(cluster_id="MkU3OEVBNTcwNTJENDM2Qk", controller_id=3000),
        RegisterControllerRecord(
            controller_id=3000, incarnation_id=INCARNATION,
            end_points=(ControllerEndpoint(name="CONTROLLER", host="c1.example", port=9093, security_protocol=0),),
            features=(ControllerFeature(name="kraft.version", min_supported_version=0, max_supported_version=1),),
        ),
        ClearElrRecord(topic_name="orders"),
        UnregisterControllerRecord(controller_id=3001),
        UserScramCredentialRecord(name="alice", mechanism=1, salt=b"salt\x00\xff", stored_key=bytes(range(32)), server_key=b"\x80" * 32,
                                  iterations=4096),
        RemoveUserScramCredentialRecord(name="alice", mechanism=2),
        KRaftVersionRecord(k_raft_version=1),
        VotersRecord(voters=(Voter(
            voter_id=3000, voter_directory_id=DIR_A, endpoints=(VoterEndpoint(name="CONTROLLER", host="c1.example", port=9093),),
            k_raft_version_feature=KRaftVersionFeature(min_supported_version=0, max_supported_version=1),
        ),)),
        KjbodQuorumRecord(
            leader_id=3000, leader_epoch=2, epoch_start_offset=40, fetched_offset=44,
            voters_offset=-1, change_requested_ms=-1,
            static_voters=(KjbodStaticVoter(voter_id=3000, listener="CONTROLLER", host="c1.example", port=9093),),
        ),
        KjbodControllerReplicaRecord(
            replica_id=3001, directory_id=DIR_B, running=True, caught_up=False, log_end_offset=12, last_fetch_ms=1_500_000,
            last_caught_up_ms=-1, catch_up_rate=50_000, incarnation_id=INCARNATION,
            end_points=(ControllerEndpoint(name="CONTROLLER", host="c2.example", port=9093, security_protocol=0),),
            features=(ControllerFeature(name="kraft.version", min_supported_version=0, max_supported_version=1),),
        ),
    ]
