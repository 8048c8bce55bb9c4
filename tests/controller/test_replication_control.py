"""ReplicationControlManager behaviour (§5-§6): operation -> records -> replay -> state."""

from __future__ import annotations

import pytest

from kjbod.common.kafka_uuid import DirectoryId
from kjbod.controller import Controller, ControllerApiError, Errors
from kjbod.controller.partition_change import Election
from kjbod.controller.replication_control import (
    AlterPartitionRequest,
    BrokerState,
    CreateTopicRequest,
    DirectoryAssignment,
    HeartbeatRequest,
)
from kjbod.image import replay_all
from kjbod.records import (
    BrokerRegistrationChangeRecord,
    ConfigRecord,
    PartitionChangeRecord,
    PartitionRecord,
    TopicRecord,
    UnregisterBrokerRecord,
)

from .support import apply, bootstrap, registration, topic_partitions, with_brokers, with_topic


def heartbeat(image, broker_id: int, **kwargs):  # noqa: ANN001, ANN201
    return Controller(image).replication.heartbeat(HeartbeatRequest(broker_id, **kwargs))


# Topics ---------------------------------------------------------------------------------------


def test_create_topic_writes_topic_configs_and_partitions() -> None:
    image, dirs = with_brokers(bootstrap(), 3, dirs_each=1)
    request = CreateTopicRequest("orders", 2, 3, configs={"retention.ms": "1000"}, seed=5)
    result = Controller(image).replication.create_topic(request)
    kinds = [type(r) for r in result.records]
    assert kinds == [TopicRecord, ConfigRecord, PartitionRecord, PartitionRecord]
    partition = result.records[2]
    assert partition.version == 2 and partition.leader == partition.replicas[0] == partition.isr[0]
    # A broker with a single directory gets it; the directory travels with the replica.
    assert partition.directories == tuple(dirs[b][0] for b in partition.replicas)
    # Seeded placement is repeatable, ids included.
    assert Controller(image).replication.create_topic(request).records == result.records


def test_jbod_replicas_start_unassigned_and_old_versions_write_no_directories() -> None:
    image, _ = with_brokers(bootstrap(), 3, dirs_each=3)
    _, partitions = topic_partitions(with_topic(image, "t"), "t")
    assert all(p.directories == (DirectoryId.UNASSIGNED,) * 3 for p in partitions.values())
    old, _ = with_brokers(bootstrap(16), 3)
    record = Controller(old).replication.create_topic(CreateTopicRequest("t", 1, 3, seed=1)).records[1]
    assert record.version == 0 and record.directories == ()
    assert replay_all(old, Controller(old).replication.create_topic(CreateTopicRequest("t", 1, 3, seed=1)).records).topics.by_name["t"].partitions[0].directories == (DirectoryId.MIGRATING,) * 3


def test_placement_uses_racks_and_never_repeats_a_broker() -> None:
    image, _ = with_brokers(bootstrap(), 6, racks=3)
    _, partitions = topic_partitions(with_topic(image, "t", partitions=12, rf=3, seed=99), "t")
    racks = {b: image.cluster.brokers[b].rack for b in range(1, 7)}
    for p in partitions.values():
        assert len(set(p.replicas)) == 3 and len({racks[b] for b in p.replicas}) == 3
    leaders = [p.leader for p in partitions.values()]
    assert max(leaders.count(b) for b in range(1, 7)) == 2  # striped: every broker leads twice


@pytest.mark.parametrize(
    ("request_", "message"),
    [
        (CreateTopicRequest("", 1, 1), "INVALID_TOPIC_EXCEPTION: Topic name is invalid: the empty string is not allowed"),
        (CreateTopicRequest(".", 1, 1), "INVALID_TOPIC_EXCEPTION: Topic name is invalid: '.' is not allowed"),
        (CreateTopicRequest("a b", 1, 1), "INVALID_TOPIC_EXCEPTION: Topic name is invalid: 'a b' contains one or more characters other than ASCII alphanumerics, '.', '_' and '-'"),
        (CreateTopicRequest("t", 1, 4), "INVALID_REPLICATION_FACTOR: Unable to replicate the partition 4 time(s): The target replication factor of 4 cannot be reached because only 3 broker(s) are registered or some brokers have all their log directories cordoned."),
        (CreateTopicRequest("t", 0, 1), "INVALID_PARTITIONS: Number of partitions was set to an invalid non-positive value."),
        (CreateTopicRequest("t", 1, 0), "INVALID_REPLICATION_FACTOR: Replication factor must be larger than 0, or -1 to use the default value."),
        (CreateTopicRequest("t", assignment=((1, 9),)), "INVALID_REPLICA_ASSIGNMENT: The manual partition assignment includes broker 9, but no such broker is registered."),
        (CreateTopicRequest("t", assignment=((1, 1),)), "INVALID_REPLICA_ASSIGNMENT: The manual partition assignment includes the broker 1 more than once."),
        (CreateTopicRequest("t", assignment=((1, 2), (3,))), "INVALID_REPLICA_ASSIGNMENT: The manual partition assignment includes a partition with 1 replica(s), but this is not consistent with previous partitions, which have 2 replica(s)."),
        (CreateTopicRequest("t", assignment=((),)), "INVALID_REPLICA_ASSIGNMENT: The manual partition assignment includes an empty replica list."),
        (CreateTopicRequest("t", 1, 1, configs={"retention.mss": "1"}), "INVALID_CONFIG: Unknown topic config name: retention.mss"),
        (CreateTopicRequest("orders", 1, 1), "TOPIC_ALREADY_EXISTS: Topic 'orders' already exists."),
        (CreateTopicRequest("orders_x", 1, 1), None),
        (CreateTopicRequest("foo.bar", 1, 1), "INVALID_TOPIC_EXCEPTION: Topic 'foo.bar' collides with existing topic: foo_bar"),
    ],
)
def test_create_topic_validation(request_: CreateTopicRequest, message: str | None) -> None:
    image, _ = with_brokers(bootstrap(), 3)
    image = with_topic(with_topic(image, "orders", 1, 1), "foo_bar", 1, 1)
    if message is None:
        Controller(image).replication.create_topic(request_)
        return
    with pytest.raises(ControllerApiError) as raised:
        Controller(image).replication.create_topic(request_)
    assert str(raised.value) == message


def test_manual_assignment_isr_is_the_active_replicas_and_leader_the_first_of_them() -> None:
    image, _ = with_brokers(bootstrap(), 3)
    image = apply(image, Controller(image).replication.fence_broker(1))
    record = Controller(image).replication.create_topic(CreateTopicRequest("t", assignment=((1, 2, 3),))).records[1]
    assert (record.isr, record.leader) == ((2, 3), 2)
    with pytest.raises(ControllerApiError, match="All brokers specified in the manual partition assignment for partition 0 are fenced"):
        Controller(image).replication.create_topic(CreateTopicRequest("u", assignment=((1,),)))


# Heartbeats, fencing, shutdown ------------------------------------------------------------------


def test_heartbeat_unfences_and_elects_leaders_for_leaderless_partitions() -> None:
    image, _ = with_brokers(bootstrap(), 2)
    image = with_topic(image, "t", partitions=1, rf=2, assignment=None)
    topic_id, partitions = topic_partitions(image, "t")
    leader = partitions[0].leader
    other = 3 - leader
    image = apply(image, Controller(image).replication.fence_broker(other))
    image = apply(image, Controller(image).replication.fence_broker(leader))
    assert image.topics.partition(topic_id, 0).leader == -1
    result = heartbeat(image, leader)
    assert isinstance(result.records[0], BrokerRegistrationChangeRecord) and result.records[0].fenced == -1
    assert result.response.previous_state is BrokerState.FENCED and result.response.state is BrokerState.UNFENCED
    after = apply(image, result)
    assert after.topics.partition(topic_id, 0).leader == leader
    assert heartbeat(image, leader, want_fence=True).records == ()  # --no-unfence


def test_fencing_the_sole_isr_member_leaves_it_in_the_isr_without_a_leader() -> None:
    image, _ = with_brokers(bootstrap(), 1)
    image = with_topic(image, "t", partitions=1, rf=1)
    topic_id, _ = topic_partitions(image, "t")
    after = apply(image, Controller(image).replication.fence_broker(1))
    p = after.topics.partition(topic_id, 0)
    assert (p.leader, p.isr, p.leader_epoch) == (-1, (1,), 1)


def test_controlled_shutdown_moves_leadership_then_fences() -> None:
    image, _ = with_brokers(bootstrap(), 3)
    image = with_topic(image, "t", partitions=6, rf=3)
    result = Controller(image).replication.controlled_shutdown(2)
    change = [r for r in result.records if isinstance(r, BrokerRegistrationChangeRecord)]
    assert [(c.version, c.in_controlled_shutdown, c.fenced) for c in change] == [(1, 1, 0), (0, 0, 1)]
    after = apply(image, result)
    assert after.cluster.brokers[2].fenced and after.cluster.brokers[2].in_controlled_shutdown
    topic_id, partitions = topic_partitions(after, "t")
    assert all(p.leader != 2 and 2 not in p.isr for p in partitions.values())
    assert result.response.state == "FENCED"
    moved = [i for i in result.response.impact if i.leader_before == 2]
    assert moved and all(i.leader_after not in (2, -1) for i in moved)


def test_unregister() -> None:
    image, _ = with_brokers(bootstrap(), 3)
    image = with_topic(image, "t", partitions=3, rf=3)
    result = Controller(image).replication.unregister_broker(3)
    assert isinstance(result.records[-1], UnregisterBrokerRecord)
    after = apply(image, result)
    assert 3 not in after.cluster.brokers and 3 not in after.cluster.log_dirs
    with pytest.raises(ControllerApiError, match="BROKER_ID_NOT_REGISTERED: Broker ID 3 is not currently registered"):
        Controller(after).replication.unregister_broker(3)


def test_a_heartbeat_with_a_stale_epoch_is_refused() -> None:
    image, _ = with_brokers(bootstrap(), 1)
    with pytest.raises(ControllerApiError, match="STALE_BROKER_EPOCH: Expected broker epoch 1, but got broker epoch 7"):
        heartbeat(image, 1, broker_epoch=7)
    with pytest.raises(ControllerApiError, match="STALE_BROKER_EPOCH: Receive a heartbeat from broker 9 before registration"):
        heartbeat(image, 9)


# JBOD (KIP-858) -----------------------------------------------------------------------------


def restarted_jbod_cluster():  # noqa: ANN201
    """Three brokers with three directories each, a topic, and broker 1 restarted (new incarnation)."""
    image, dirs = with_brokers(bootstrap(), 3, dirs_each=3)
    image = with_topic(image, "orders", partitions=6, rf=3)
    for broker in (1, 2, 3):
        image = apply(image, Controller(image).replication.auto_assign_dirs(broker))
    image = apply(image, Controller(image).replication.controlled_shutdown(1))
    image = apply(image, Controller(image).cluster.register_broker(registration(1, dirs[1], incarnation="O7xvrxGUTwyKxRtVqYj9qA")))
    return image, dirs


def test_a_jbod_broker_stays_fenced_until_every_replica_has_a_directory_then_unfences() -> None:
    image, dirs = with_brokers(bootstrap(), 3, dirs_each=3, unfence=False)
    image = apply(image, heartbeat(image, 2))
    image = apply(image, heartbeat(image, 3))
    image = apply(image, Controller(image).replication.create_topic(CreateTopicRequest("orders", assignment=((1, 2, 3), (2, 3, 1)))))
    result = heartbeat(image, 1)
    assert result.records == () and result.response.state is BrokerState.FENCED
    assert result.response.unassigned_replicas == 2
    assigned = Controller(image).replication.auto_assign_dirs(1)
    assert [r.error for r in assigned.response.results] == [Errors.NONE, Errors.NONE]
    chosen = {r.directory for r in assigned.response.results}
    assert len(chosen) == 2 and chosen <= set(dirs[1])  # least loaded: two different disks
    image = apply(image, assigned)
    result = heartbeat(image, 1)
    assert result.response.state is BrokerState.UNFENCED
    assert apply(image, result).cluster.brokers[1].fenced is False


def test_failing_a_directory_moves_exactly_its_partitions() -> None:
    image, dirs = restarted_jbod_cluster()
    image = apply(image, heartbeat(image, 1))
    topic_id, partitions = topic_partitions(image, "orders")
    failed = dirs[2][0]
    on_failed = {pid for pid, p in partitions.items() if p.directory(2) == failed}
    assert on_failed and len(on_failed) < len(partitions)
    result = heartbeat(image, 2, offline_log_dirs=(failed,))
    last = result.records[-1]
    assert isinstance(last, BrokerRegistrationChangeRecord) and last.version == 2
    assert set(last.log_dirs) == set(dirs[2]) - {failed}
    changed = {r.partition_id for r in result.records if isinstance(r, PartitionChangeRecord)}
    assert changed == {pid for pid in on_failed if 2 in partitions[pid].isr}
    after = apply(image, result)
    for pid, p in after.topics.by_id[topic_id].partitions.items():
        if pid in on_failed:
            assert 2 not in p.isr and p.leader != 2
        else:
            assert p == partitions[pid]
    assert result.response.newly_offline_dirs == (failed,)
    # Reporting the same directory again changes nothing.
    assert heartbeat(after, 2, offline_log_dirs=(failed,)).records == ()


def test_a_failed_leader_directory_with_no_other_isr_member_leaves_the_partition_leaderless() -> None:
    image, dirs = with_brokers(bootstrap(), 2, dirs_each=2)
    image = apply(image, Controller(image).replication.create_topic(CreateTopicRequest("solo", assignment=((1,),))))
    image = apply(image, Controller(image).replication.auto_assign_dirs(1))
    topic_id, partitions = topic_partitions(image, "solo")
    result = heartbeat(image, 1, offline_log_dirs=(partitions[0].directory(1),))
    after = apply(image, result)
    p = after.topics.partition(topic_id, 0)
    assert (p.leader, p.isr) == (-1, (1,))
    assert result.response.impact[0].went_offline


def test_a_directory_reported_offline_by_a_broker_being_unfenced_leads_nothing() -> None:
    """Issue 26's audit: `broker fail-dir` on a fenced broker unfences it and reports the
    directory offline in one heartbeat. Unfencing makes it the leader of its leaderless
    partitions; the offline directory must take those in it away again, so the directory
    change is built against the state the unfencing leaves (built from the state before the
    heartbeat, as Kafka does, it changed nothing: a leader in an offline directory)."""
    image, dirs = with_brokers(bootstrap(), 2, dirs_each=2)
    image = with_topic(image, "t", partitions=2, rf=1, assignment=((1,), (1,)))
    image = apply(image, Controller(image).replication.assign_replicas_to_dirs(1, [DirectoryAssignment("t", 0, dirs[1][0]), DirectoryAssignment("t", 1, dirs[1][1])]))
    image = apply(image, Controller(image).replication.fence_broker(1))
    topic_id, partitions = topic_partitions(image, "t")
    assert all((p.leader, p.isr) == (-1, (1,)) for p in partitions.values())
    result = heartbeat(image, 1, offline_log_dirs=(dirs[1][0],))
    assert (result.response.previous_state, result.response.state) == (BrokerState.FENCED, BrokerState.UNFENCED)
    after = apply(image, result)
    assert after.cluster.brokers[1].directories == (dirs[1][1],)
    assert after.topics.partition(topic_id, 0).leader == -1  # in the failed directory: no leader
    assert after.topics.partition(topic_id, 1).leader == 1  # in the directory still online: leads
    assert [(i.partition, i.leader_after) for i in result.response.impact] == [(0, -1), (1, 1)]


def test_a_broker_fenced_and_failing_a_directory_in_one_heartbeat_changes_each_partition_once() -> None:
    """Issue 26's audit: the offline directory's ISR changes are built against the state the
    fencing leaves, so a partition the fencing already took the broker out of is not changed
    (and its leader epoch bumped) a second time. Kafka builds both from the state before the
    heartbeat and writes the same change twice."""
    image, dirs = with_brokers(bootstrap(), 3, dirs_each=2)
    image = with_topic(image, "t", partitions=4, rf=3)
    for broker in (1, 2, 3):
        image = apply(image, Controller(image).replication.auto_assign_dirs(broker))
    result = heartbeat(image, 1, want_fence=True, offline_log_dirs=(dirs[1][0],))
    changed = [(r.topic_id, r.partition_id) for r in result.records if isinstance(r, PartitionChangeRecord)]
    assert len(changed) == 4 and len(set(changed)) == 4
    after = apply(image, result)
    topic_id, partitions = topic_partitions(after, "t")
    assert all(1 not in p.isr and p.leader != 1 for p in partitions.values())
    assert after.cluster.brokers[1].fenced and after.cluster.brokers[1].directories == (dirs[1][1],)


def test_when_every_directory_fails_the_registration_keeps_listing_them() -> None:
    image, dirs = with_brokers(bootstrap(), 1, dirs_each=2)
    image = with_topic(image, "t", partitions=2, rf=1)
    image = apply(image, Controller(image).replication.auto_assign_dirs(1))
    result = heartbeat(image, 1, offline_log_dirs=tuple(dirs[1]))
    assert result.records[-1].log_dirs == ()  # empty means "no change" on replay
    after = apply(image, result)
    assert set(after.cluster.brokers[1].directories) == set(dirs[1])
    topic_id, partitions = topic_partitions(after, "t")
    assert all(p.leader == -1 for p in partitions.values())


def test_assign_replicas_to_dirs_error_codes() -> None:
    image, dirs = with_brokers(bootstrap(), 3, dirs_each=2)
    image = apply(image, Controller(image).replication.create_topic(CreateTopicRequest("t", assignment=((1, 2),))))
    d = dirs[1][0]
    result = Controller(image).replication.assign_replicas_to_dirs(
        1,
        [DirectoryAssignment("t", 0, d), DirectoryAssignment("t", 7, d), DirectoryAssignment("nope", 0, d)],
    )
    assert [r.error for r in result.response.results] == [Errors.NONE, Errors.UNKNOWN_TOPIC_OR_PARTITION, Errors.UNKNOWN_TOPIC_ID]
    other = Controller(image).replication.assign_replicas_to_dirs(3, [DirectoryAssignment("t", 0, dirs[3][0])])
    assert other.response.results[0].error is Errors.NOT_LEADER_OR_FOLLOWER
    with pytest.raises(ControllerApiError, match="STALE_BROKER_EPOCH"):
        Controller(image).replication.assign_replicas_to_dirs(1, [], broker_epoch=999)
    old, _ = with_brokers(bootstrap(16), 1)
    with pytest.raises(ControllerApiError, match="UNSUPPORTED_VERSION: Directory assignment is not supported yet."):
        Controller(old).replication.assign_replicas_to_dirs(1, [])


def test_assigning_to_an_offline_or_unknown_directory_takes_the_replica_offline() -> None:
    image, dirs = with_brokers(bootstrap(), 2, dirs_each=2)
    image = apply(image, Controller(image).replication.create_topic(CreateTopicRequest("t", assignment=((1, 2),))))
    topic_id, _ = topic_partitions(image, "t")
    result = Controller(image).replication.assign_replicas_to_dirs(1, [DirectoryAssignment("t", 0, DirectoryId.LOST)])
    assert result.response.results[0].error is Errors.NONE
    after = apply(image, result)
    p = after.topics.partition(topic_id, 0)
    assert p.directory(1) == DirectoryId.LOST and 1 not in p.isr and p.leader == 2


def test_auto_assignment_leaves_unknown_directories_alone_while_a_disk_is_offline_and_skips_cordoned_ones() -> None:
    image, dirs = with_brokers(bootstrap(), 1, dirs_each=3)
    image = with_topic(image, "t", partitions=2, rf=1)
    image = apply(image, Controller(image).replication.assign_replicas_to_dirs(1, [DirectoryAssignment("t", 0, DirectoryId.LOST)]))
    image = apply(image, heartbeat(image, 1, offline_log_dirs=(dirs[1][2],)))
    image = apply(image, Controller(image).cluster.set_cordoned(1, dirs[1][0], True))
    result = Controller(image).replication.auto_assign_dirs(1)
    assert [(r.partition, r.directory) for r in result.response.results] == [(1, dirs[1][1])]
    assert result.response.skipped == ("t-0: its directory is unknown while a directory is offline",)


# Elections --------------------------------------------------------------------------------


def test_preferred_election_after_a_restart() -> None:
    image, dirs = with_brokers(bootstrap(), 3)
    image = apply(image, Controller(image).replication.create_topic(CreateTopicRequest("t", assignment=((1, 2, 3), (2, 3, 1)))))
    image = apply(image, Controller(image).replication.controlled_shutdown(1))
    image = apply(image, Controller(image).cluster.register_broker(registration(1, dirs[1], incarnation="O7xvrxGUTwyKxRtVqYj9qA")))
    image = apply(image, Controller(image).replication.heartbeat(HeartbeatRequest(1)))
    topic_id, _ = topic_partitions(image, "t")
    assert image.topics.partition(topic_id, 0).leader == 2
    # Broker 1 is back but not in the ISR: the preferred leader is not available yet.
    result = Controller(image).replication.elect_leaders(Election.PREFERRED, [("t", 0), ("t", 1), ("t", 5), ("x", 0)])
    assert [r.error.error for r in result.response.results] == [
        Errors.PREFERRED_LEADER_NOT_AVAILABLE, Errors.ELECTION_NOT_NEEDED, Errors.UNKNOWN_TOPIC_OR_PARTITION, Errors.UNKNOWN_TOPIC_OR_PARTITION,
    ]
    assert [r.error.message for r in result.response.results[2:]] == ["No such partition as t-5", "No such topic as x"]
    # Once it has caught up, the leader puts it back into the ISR, and the preferred election moves leadership.
    p = image.topics.partition(topic_id, 0)
    rejoin = Controller(image).replication.alter_partition(
        AlterPartitionRequest(2, topic_id, 0, p.leader_epoch, p.partition_epoch, (*p.isr, 1))
    )
    assert rejoin.response.error is Errors.NONE
    image = apply(image, rejoin)
    result = Controller(image).replication.elect_leaders(Election.PREFERRED, [("t", 0)])
    assert result.response.results[0].error.error is Errors.NONE
    assert apply(image, result).topics.partition(topic_id, 0).leader == 1


@pytest.mark.parametrize(
    ("change", "error"),
    [
        (dict(leader_epoch=+1), Errors.NOT_CONTROLLER),
        (dict(leader_epoch=-1), Errors.FENCED_LEADER_EPOCH),
        (dict(sender=3), Errors.INVALID_REQUEST),
        (dict(new_isr=(2, 2)), Errors.INVALID_REQUEST),
        (dict(new_isr=(3,)), Errors.INVALID_REQUEST),  # without the leader
        (dict(new_isr=(1, 2)), Errors.INELIGIBLE_REPLICA),  # 1 is fenced
    ],
)
def test_alter_partition_checks(change: dict, error: Errors) -> None:
    image, _ = with_brokers(bootstrap(), 3)
    image = apply(image, Controller(image).replication.create_topic(CreateTopicRequest("t", assignment=((2, 3, 1),))))
    image = apply(image, Controller(image).replication.fence_broker(1))
    topic_id, _ = topic_partitions(image, "t")
    p = image.topics.partition(topic_id, 0)
    request = AlterPartitionRequest(
        change.get("sender", 2), topic_id, 0, p.leader_epoch + change.get("leader_epoch", 0), p.partition_epoch,
        change.get("new_isr", (2, 3)),
    )
    result = Controller(image).replication.alter_partition(request)
    assert result.response.error is error and result.records == ()


def test_unclean_election_resets_the_isr_and_marks_recovery() -> None:
    image, _ = with_brokers(bootstrap(), 2)
    image = apply(image, Controller(image).replication.create_topic(CreateTopicRequest("t", assignment=((1, 2),))))
    image = apply(image, Controller(image).replication.fence_broker(2))  # ISR shrinks to 1
    image = apply(image, Controller(image).replication.fence_broker(1))  # no leader, ISR (1)
    image = apply(image, Controller(image).replication.heartbeat(HeartbeatRequest(2)))  # 2 is back, not in sync
    topic_id, _ = topic_partitions(image, "t")
    assert image.topics.partition(topic_id, 0).leader == -1
    result = Controller(image).replication.elect_leaders(Election.UNCLEAN, None)
    assert [(r.topic, r.partition, r.error.error) for r in result.response.results] == [("t", 0, Errors.NONE)]
    p = apply(image, result).topics.partition(topic_id, 0)
    assert (p.leader, p.isr, p.leader_recovery_state) == (2, (2,), 1)
    again = Controller(apply(image, result)).replication.elect_leaders(Election.UNCLEAN, [("t", 0)])
    assert again.response.results[0].error.error is Errors.ELECTION_NOT_NEEDED


def test_an_unclean_election_with_nobody_alive_reports_eligible_leaders_not_available() -> None:
    image, _ = with_brokers(bootstrap(), 1)
    image = with_topic(image, "t", partitions=1, rf=1)
    image = apply(image, Controller(image).replication.fence_broker(1))
    result = Controller(image).replication.elect_leaders(Election.UNCLEAN, [("t", 0)])
    assert result.response.results[0].error.error is Errors.ELIGIBLE_LEADERS_NOT_AVAILABLE and result.records == ()


def test_a_replica_moved_off_a_dead_disk_starts_empty() -> None:
    from kjbod.records import KjbodReplicaLogRecord

    image, dirs = with_brokers(bootstrap(), 2, dirs_each=2)
    image = apply(image, Controller(image).replication.create_topic(CreateTopicRequest("t", assignment=((1, 2),))))
    image = apply(image, Controller(image).replication.assign_replicas_to_dirs(1, [DirectoryAssignment("t", 0, dirs[1][0])]))
    topic_id, _ = topic_partitions(image, "t")
    assert image.topics.by_id[topic_id].replica_logs == {}  # placed from UNASSIGNED: nothing lost
    image = apply(image, heartbeat(image, 1, offline_log_dirs=(dirs[1][0],)))
    result = Controller(image).replication.assign_replicas_to_dirs(1, [DirectoryAssignment("t", 0, dirs[1][1])])
    assert any(isinstance(r, KjbodReplicaLogRecord) and r.size_bytes == 0 for r in result.records)
    after = apply(image, result)
    assert after.topics.by_id[topic_id].replica_size(0, 1) == 0


@pytest.mark.parametrize("name", ["errors.deadletterqueue.group.enable", "max.decompressed.message.bytes", "remote.copy.lag.bytes", "remote.copy.lag.ms"])
def test_the_topic_configs_kafka_4_4_adds_are_refused_by_a_4_3_controller(name: str) -> None:
    """4.4.0's LogConfig defines them (storage LogConfig.java:48-54); 4.3.1's does not."""
    from kjbod.common.kafka_release import KAFKA_4_3, KAFKA_4_4

    image, _ = with_brokers(bootstrap(), 1)
    value = "false" if name.startswith("errors.") else "100"
    created = Controller(image, KAFKA_4_4).replication.create_topic(CreateTopicRequest("t", 1, 1, configs={name: value}))
    assert ConfigRecord(resource_type=2, resource_name="t", name=name, value=value) in created.records
    with pytest.raises(ControllerApiError, match=f"INVALID_CONFIG: Unknown topic config name: {name}"):
        Controller(image, KAFKA_4_3).replication.create_topic(CreateTopicRequest("t", 1, 1, configs={name: value}))


def test_message_downconversion_enable_is_no_4_x_topic_config() -> None:
    image, _ = with_brokers(bootstrap(), 1)
    with pytest.raises(ControllerApiError, match="Unknown topic config name: message.downconversion.enable"):
        Controller(image).replication.create_topic(CreateTopicRequest("t", 1, 1, configs={"message.downconversion.enable": "true"}))
