"""Replay: the only mutator. Kafka's rules for partitions (§8), brokers (§4.4) and topics (§6.2)."""

from __future__ import annotations

import pytest

from kjbod.common.kafka_uuid import DirectoryId, uuid_sort_key
from kjbod.errors import ReplayError
from kjbod.image import EMPTY_IMAGE, Delta, replay_all
from kjbod.records import (
    CONFIG_RESOURCE_TOPIC,
    BrokerRegistrationChangeRecord,
    ClearElrRecord,
    ConfigRecord,
    FeatureLevelRecord,
    KjbodClockRecord,
    KjbodClusterRecord,
    PartitionChangeRecord,
    PartitionRecord,
    ControllerFeature,
    RegisterBrokerRecord,
    RegisterControllerRecord,
    RemoveTopicRecord,
    TopicRecord,
    UnregisterBrokerRecord,
    UnregisterControllerRecord,
)
from kjbod.common.versions import metadata_version_for_level

T = "cJ3rE4bvQc2w5Y0kT1q9Zg"
D1, D2, D3 = "ZNJ-ywU0nnQwRv5eRRU9ow", "XcZZOzUqS4yHOjhMQB6JLQ", "AAAAAAAAAAAAAAAAAAAAZA"
INC = "O7xvrxGUTwyKxRtVqYj9qA"


def topic_with_partition(**partition: object) -> list:
    fields = dict(version=1, partition_id=0, topic_id=T, replicas=(1, 2, 3), isr=(1, 2, 3), leader=1,
                  leader_epoch=0, partition_epoch=0, directories=(D1, D2, D3))
    fields.update(partition)
    return [TopicRecord(name="orders", topic_id=T), PartitionRecord(**fields)]


def partition_after(*changes: PartitionChangeRecord, **partition: object):
    image = replay_all(EMPTY_IMAGE, [*topic_with_partition(**partition), *changes])
    return image.topics.partition(T, 0)


def test_a_v0_partition_record_means_every_replica_is_migrating() -> None:
    p = partition_after(version=0, directories=())
    assert p.directories == (DirectoryId.MIGRATING,) * 3


def test_mismatched_directory_count_is_refused() -> None:
    with pytest.raises(ReplayError, match="The lengths for replicas and directories do not match"):
        partition_after(directories=(D1, D2))


def test_a_leader_change_bumps_both_epochs_and_an_isr_change_only_the_partition_epoch() -> None:
    p = partition_after(PartitionChangeRecord(topic_id=T, partition_id=0, isr=(1, 2)))
    assert (p.leader, p.leader_epoch, p.partition_epoch, p.isr) == (1, 0, 1, (1, 2))
    p = partition_after(PartitionChangeRecord(topic_id=T, partition_id=0, leader=2))
    assert (p.leader, p.leader_epoch, p.partition_epoch) == (2, 1, 1)


def test_setting_the_same_leader_still_bumps_the_leader_epoch() -> None:
    p = partition_after(PartitionChangeRecord(topic_id=T, partition_id=0, leader=1))
    assert (p.leader, p.leader_epoch) == (1, 1)


def test_no_leader_is_a_change_too() -> None:
    p = partition_after(PartitionChangeRecord(topic_id=T, partition_id=0, leader=-1))
    assert (p.leader, p.leader_epoch, p.has_leader) == (-1, 1, False)


def test_directories_change_on_their_own_and_with_replicas() -> None:
    p = partition_after(PartitionChangeRecord(version=1, topic_id=T, partition_id=0, directories=(D3, D2, D1)))
    assert p.directories == (D3, D2, D1) and p.leader_epoch == 0
    p = partition_after(
        PartitionChangeRecord(version=1, topic_id=T, partition_id=0, replicas=(3, 1), directories=(D3, D1))
    )
    assert (p.replicas, p.directories, p.directory(3)) == ((3, 1), (D3, D1), D3)


def test_a_replica_change_without_directories_must_keep_the_count() -> None:
    with pytest.raises(ReplayError, match="do not match"):
        partition_after(PartitionChangeRecord(topic_id=T, partition_id=0, replicas=(1, 2)))


def test_leader_recovery_state_minus_one_keeps_the_state() -> None:
    p = partition_after(PartitionChangeRecord(topic_id=T, partition_id=0, leader=2, isr=(2,), leader_recovery_state=1))
    assert p.leader_recovery_state == 1
    p2 = replay_all(
        EMPTY_IMAGE,
        [*topic_with_partition(), PartitionChangeRecord(topic_id=T, partition_id=0, leader_recovery_state=1),
         PartitionChangeRecord(topic_id=T, partition_id=0, isr=(1,))],
    ).topics.partition(T, 0)
    assert p2.leader_recovery_state == 1


@pytest.mark.parametrize(
    ("records", "message"),
    [
        ([TopicRecord(name="a", topic_id=T), TopicRecord(name="a", topic_id=T)], f"Found duplicate TopicRecord for a with topic ID {T}"),
        ([TopicRecord(name="a", topic_id=T), TopicRecord(name="a", topic_id=D1)],
         f"Found duplicate TopicRecord for a with a different ID than before. Previous ID was {T} and new ID is {D1}"),
        ([PartitionRecord(topic_id=T, partition_id=3, replicas=(1,), isr=(1,))],
         f"Tried to create partition {T}:3, but no topic with that ID was found."),
        ([TopicRecord(name="a", topic_id=T), PartitionChangeRecord(topic_id=T, partition_id=0, leader=1)],
         f"Tried to change partition {T}:0, but no partition with that id was found."),
        ([RemoveTopicRecord(topic_id=T)], f"Can't find topic with ID {T} to remove."),
    ],
)
def test_topic_replay_errors(records: list, message: str) -> None:
    with pytest.raises(ReplayError) as raised:
        replay_all(EMPTY_IMAGE, records)
    assert str(raised.value) == message


def test_removing_a_topic_removes_its_configs_without_config_records() -> None:
    image = replay_all(
        EMPTY_IMAGE,
        [*topic_with_partition(), ConfigRecord(resource_type=CONFIG_RESOURCE_TOPIC, resource_name="orders", name="retention.ms", value="1")],
    )
    assert image.configs.get(CONFIG_RESOURCE_TOPIC, "orders") == {"retention.ms": "1"}
    image = replay_all(image, [RemoveTopicRecord(topic_id=T)])
    assert image.topics.get(T) is None and not image.configs.resources
    # The name is free again.
    assert replay_all(image, [TopicRecord(name="orders", topic_id=D1)]).topics.by_name["orders"].topic_id == D1


def register(broker_id: int, dirs: tuple[str, ...], epoch: int = 10) -> RegisterBrokerRecord:
    return RegisterBrokerRecord(version=3, broker_id=broker_id, incarnation_id=INC, broker_epoch=epoch, log_dirs=dirs)


def test_broker_directories_are_kept_in_signed_uuid_order() -> None:
    image = replay_all(EMPTY_IMAGE, [register(1, ("AAAAAAAAAAAAAAAAAAAAZA", "3AAAAAAAAAAAAAAAAAAAAA"))])
    assert image.cluster.brokers[1].directories == ("3AAAAAAAAAAAAAAAAAAAAA", "AAAAAAAAAAAAAAAAAAAAZA")


def test_a_directory_cannot_belong_to_two_brokers() -> None:
    with pytest.raises(ReplayError, match=f"BUG: directory {D1} already assigned to broker 1"):
        replay_all(EMPTY_IMAGE, [register(1, (D1,)), register(2, (D1, D2))])


def test_re_registering_the_same_broker_with_the_same_directories_is_fine() -> None:
    image = replay_all(EMPTY_IMAGE, [register(1, (D1, D2)), register(1, (D1, D2), epoch=20)])
    assert image.cluster.brokers[1].epoch == 20 and image.cluster.registration_offsets[1] == 1


def test_an_empty_directory_list_in_a_change_means_no_change() -> None:
    image = replay_all(EMPTY_IMAGE, [register(1, (D1, D2)), BrokerRegistrationChangeRecord(version=2, broker_id=1, broker_epoch=10, log_dirs=())])
    assert set(image.cluster.brokers[1].directories) == {D1, D2}
    image = replay_all(image, [BrokerRegistrationChangeRecord(version=2, broker_id=1, broker_epoch=10, log_dirs=(D2,))])
    assert image.cluster.brokers[1].directories == (D2,)
    # D1 is free again.
    assert replay_all(image, [register(2, (D1,))]).cluster.brokers[2].directories == (D1,)


def test_registration_changes_need_the_current_epoch() -> None:
    base = replay_all(EMPTY_IMAGE, [register(1, (D1,))])
    with pytest.raises(ReplayError, match="no broker registration with that epoch found"):
        replay_all(base, [BrokerRegistrationChangeRecord(broker_id=1, broker_epoch=11, fenced=1)])
    with pytest.raises(ReplayError, match="no broker registration found for that id"):
        replay_all(base, [UnregisterBrokerRecord(broker_id=2, broker_epoch=10)])
    with pytest.raises(ReplayError, match="invalid fencing change 5"):
        replay_all(base, [BrokerRegistrationChangeRecord(broker_id=1, broker_epoch=10, fenced=5)])


def test_fencing_and_controlled_shutdown_changes() -> None:
    image = replay_all(EMPTY_IMAGE, [register(1, (D1,)), BrokerRegistrationChangeRecord(broker_id=1, broker_epoch=10, fenced=-1)])
    assert not image.cluster.brokers[1].fenced and image.cluster.brokers[1].is_active
    image = replay_all(image, [BrokerRegistrationChangeRecord(version=1, broker_id=1, broker_epoch=10, in_controlled_shutdown=1)])
    assert image.cluster.brokers[1].in_controlled_shutdown and not image.cluster.brokers[1].is_active


def test_feature_levels_and_an_unknown_level() -> None:
    image = replay_all(EMPTY_IMAGE, [FeatureLevelRecord(name="metadata.version", feature_level=30),
                                     FeatureLevelRecord(name="group.version", feature_level=1)])
    assert (image.features.metadata_version.name, image.features.level("group.version")) == ("4.3-IV0", 1)
    image = replay_all(image, [FeatureLevelRecord(name="group.version", feature_level=0)])
    assert image.features.level("group.version") == 0 and "group.version" not in image.features.finalized
    # A newer release's metadata.version is kept as its level; one below the minimum is refused.
    assert replay_all(image, [FeatureLevelRecord(name="metadata.version", feature_level=99)]).features.metadata_version.name == "UNKNOWN 99"
    with pytest.raises(ReplayError, match="No MetadataVersion with feature level 6"):
        replay_all(image, [FeatureLevelRecord(name="metadata.version", feature_level=6)])



def test_a_feature_kjbod_does_not_know_is_kept_as_its_level() -> None:
    """A newer release's feature (or level) is kept as the cluster finalized it, so export writes it back."""
    image = replay_all(EMPTY_IMAGE, [FeatureLevelRecord(name="metadata.version", feature_level=30),
                                     FeatureLevelRecord(name="future.version", feature_level=3),
                                     FeatureLevelRecord(name="share.version", feature_level=1)])
    assert dict(image.features.finalized) == {"future.version": 3, "share.version": 1}
    assert [(r.name, r.feature_level) for r in image.features.write()] == [
        ("metadata.version", 30), ("future.version", 3), ("share.version", 1)]
    image = replay_all(image, [FeatureLevelRecord(name="future.version", feature_level=0)])
    assert "future.version" not in image.features.finalized
    # As Kafka's image (FeaturesDelta.replay), any level of any other feature is kept: a newer
    # release's level of a feature kjbod knows too.
    assert replay_all(image, [FeatureLevelRecord(name="group.version", feature_level=7)]).features.level("group.version") == 7

def test_a_clear_elr_record_empties_the_elr_of_one_topic_or_of_all_moving_the_partition_epoch() -> None:
    # Kafka merges a PartitionChangeRecord with only the two ELR fields (TopicDelta.maybeClearElr,
    # 4.4.0 :127-133): partition epoch + 1, leader epoch kept; partitions without ELR untouched.
    other = "AAAAAAAAAAAAAAAAAAAAQA"
    elr = dict(version=2, eligible_leader_replicas=(2,), last_known_elr=(3,))
    base = replay_all(EMPTY_IMAGE, [
        *topic_with_partition(**elr),
        TopicRecord(name="audit", topic_id=other),
        PartitionRecord(version=2, partition_id=0, topic_id=other, replicas=(1,), isr=(1,), leader=1, leader_epoch=4, partition_epoch=7,
                        directories=(D1,), last_known_elr=(1,)),
        PartitionRecord(version=2, partition_id=1, topic_id=other, replicas=(1,), isr=(1,), leader=1, directories=(D1,)),
    ])
    one = replay_all(base, [ClearElrRecord(topic_name="orders")])
    assert (one.topics.partition(T, 0).elr, one.topics.partition(T, 0).last_known_elr) == ((), ())
    assert one.topics.partition(other, 0).last_known_elr == (1,)
    assert one.topics.get(other) is base.topics.get(other)  # a topic the record does not touch is shared
    every = replay_all(base, [ClearElrRecord(topic_name="")])
    cleared = every.topics.partition(other, 0)
    assert cleared.last_known_elr == () and (cleared.leader_epoch, cleared.partition_epoch) == (4, 8)
    assert every.topics.partition(other, 1) is base.topics.partition(other, 1)
    assert every.topics.partition(T, 0).elr == ()
    with pytest.raises(ReplayError, match="Unable to clear elr for topic with name gone: no such topic found."):
        replay_all(base, [ClearElrRecord(topic_name="gone")])


def test_unregistering_a_controller_removes_its_registration() -> None:
    registration = RegisterControllerRecord(controller_id=3000, incarnation_id=INC,
                                            features=(ControllerFeature(name="metadata.version", min_supported_version=7, max_supported_version=33),))
    image = replay_all(EMPTY_IMAGE, [registration, UnregisterControllerRecord(controller_id=3000)])
    assert dict(image.cluster.controllers) == {}
    with pytest.raises(ReplayError, match="no controller registration found for that id"):
        replay_all(image, [UnregisterControllerRecord(controller_id=3000)])


def test_cordoned_directories_not_reported_yet_stay_null_and_an_empty_report_stays_empty() -> None:
    """KIP-1066 as released: RegisterBrokerRecord v4's CordonedLogDirs is null until the broker
    reports; the image keeps null apart from [] and writes each back as it was."""
    mv = metadata_version_for_level(30)
    fresh = RegisterBrokerRecord(version=4, broker_id=1, incarnation_id=INC, broker_epoch=10, log_dirs=(D1, D2))
    image = replay_all(EMPTY_IMAGE, [fresh])
    assert not image.cluster.brokers[1].cordoned_reported
    assert image.cluster.brokers[1].to_record(mv).cordoned_log_dirs is None
    reported = replay_all(image, [BrokerRegistrationChangeRecord(version=3, broker_id=1, broker_epoch=10, cordoned_log_dirs=())])
    assert reported.cluster.brokers[1].cordoned_reported
    assert reported.cluster.brokers[1].to_record(mv).cordoned_log_dirs == ()
    again = replay_all(EMPTY_IMAGE, [reported.cluster.brokers[1].to_record(mv)])
    assert again.cluster.brokers[1] == reported.cluster.brokers[1]


def test_cordoned_directories_keep_the_order_the_broker_reported() -> None:
    """Kafka's image keeps the heartbeat's list as sent (BrokerRegistration.cordonedDirectories is
    a List; toRecord writes it back, 4.4.0 :345-348): kjbod no longer sorts it, through replay, the
    image's records (export, kjbod's own snapshots) and replay again."""
    mv = metadata_version_for_level(30)
    high, low = sorted((D1, D2), key=uuid_sort_key, reverse=True)
    image = replay_all(EMPTY_IMAGE, [
        RegisterBrokerRecord(version=4, broker_id=1, incarnation_id=INC, broker_epoch=10, log_dirs=(D1, D2)),
        BrokerRegistrationChangeRecord(version=3, broker_id=1, broker_epoch=10, cordoned_log_dirs=(high, low)),
    ])
    assert image.cluster.brokers[1].cordoned == (high, low)
    written = image.cluster.brokers[1].to_record(mv)
    assert written.cordoned_log_dirs == (high, low)
    assert replay_all(EMPTY_IMAGE, [written]).cluster.brokers[1].cordoned == (high, low)


def test_the_clock_never_goes_back() -> None:
    image = replay_all(EMPTY_IMAGE, [KjbodClockRecord(time_ms=10)])
    with pytest.raises(ReplayError, match="the clock cannot go back from 10"):
        replay_all(image, [KjbodClockRecord(time_ms=5)])


def test_the_cluster_identity_is_recorded_once_and_its_id_never_changes() -> None:
    image = replay_all(EMPTY_IMAGE, [KjbodClusterRecord(cluster_id="MkU3OEVBNTcwNTJENDM2Qk", controller_id=3000)])
    assert (image.identity.cluster_id, image.identity.controller_id) == ("MkU3OEVBNTcwNTJENDM2Qk", 3000)
    unknown = replay_all(EMPTY_IMAGE, [KjbodClusterRecord(cluster_id="any string")])
    assert (unknown.identity.cluster_id, unknown.identity.controller_id) == ("any string", None)
    assert EMPTY_IMAGE.identity is None
    with pytest.raises(ReplayError, match="the state belongs to cluster MkU3OEVBNTcwNTJENDM2Qk, and a cluster id never changes"):
        replay_all(image, [KjbodClusterRecord(cluster_id="XcZZOzUqS4yHOjhMQB6JLQ")])


def test_replay_leaves_the_base_image_untouched_and_a_delta_is_used_once() -> None:
    base = replay_all(EMPTY_IMAGE, topic_with_partition())
    delta = Delta(base)
    delta.replay(PartitionChangeRecord(topic_id=T, partition_id=0, leader=2), base.next_offset)
    after = delta.apply()
    assert base.topics.partition(T, 0).leader == 1 and after.topics.partition(T, 0).leader == 2
    assert after.offset == base.offset + 1
    with pytest.raises(RuntimeError, match="already applied"):
        delta.replay(PartitionChangeRecord(topic_id=T, partition_id=0, leader=3), after.next_offset)


def test_replica_logs_follow_their_partition() -> None:
    from kjbod.records import KjbodReplicaLogRecord

    image = replay_all(EMPTY_IMAGE, [
        *topic_with_partition(),
        KjbodReplicaLogRecord(topic_id=T, partition_id=0, broker_id=3, size_bytes=10, offset_lag=5),
        KjbodReplicaLogRecord(topic_id=T, partition_id=0, broker_id=2, future=True, directory_id=D1, size_bytes=4),
    ])
    topic = image.topics.by_id[T]
    assert topic.replica_size(0, 3) == 10 and topic.replica_size(0, 1) == 0
    assert topic.future_replica(0, 2).directory_id == D1
    # Broker 3 leaves the replicas: its log goes; broker 2's future replica stays.
    after = replay_all(image, [PartitionChangeRecord(version=1, topic_id=T, partition_id=0, replicas=(1, 2), isr=(1, 2), directories=(D1, D2))])
    assert set(after.topics.by_id[T].replica_logs) == {(0, 2, True)}
    gone = replay_all(after, [KjbodReplicaLogRecord(topic_id=T, partition_id=0, broker_id=2, future=True, size_bytes=None)])
    assert not gone.topics.by_id[T].replica_logs
    with pytest.raises(ReplayError, match="on broker 9, which is not a replica"):
        replay_all(image, [KjbodReplicaLogRecord(topic_id=T, partition_id=0, broker_id=9, size_bytes=1)])


def test_a_delta_reads_a_partition_as_its_records_leave_it_before_it_is_applied() -> None:
    base = replay_all(EMPTY_IMAGE, topic_with_partition())
    delta = Delta(base)
    assert delta.partition(T, 0) == base.topics.partition(T, 0)  # nothing replayed: the base's
    delta.replay(PartitionChangeRecord(topic_id=T, partition_id=0, directories=(D2, D2, D3)), base.next_offset)
    assert delta.partition(T, 0).directories == (D2, D2, D3)
    assert delta.partition(T, 1) is None and delta.partition("AAAAAAAAAAAAAAAAAAAAAA", 0) is None
    delta.replay(RemoveTopicRecord(topic_id=T), base.next_offset + 1)
    assert delta.partition(T, 0) is None
    assert base.topics.partition(T, 0).directories == (D1, D2, D3)  # the base is untouched
