"""Controller-side reassignment (§6) and AlterReplicaLogDirs: operation -> result -> replay -> state."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kjbod.common.kafka_uuid import DirectoryId
from kjbod.controller import ApiError, Controller, Errors
from kjbod.controller.reassignment_control import (
    ConfigChange,
    OngoingReassignment,
    ReassignmentResult,
    ReassignmentTarget,
    ReplicaDirMove,
    reassignment_replicas,
)
from kjbod.controller.replication_control import AlterPartitionRequest, HeartbeatRequest
from kjbod.errors import UserError
from kjbod.image import replay_all
from kjbod.records import (
    CONFIG_RESOURCE_BROKER,
    CONFIG_RESOURCE_TOPIC,
    ConfigRecord,
    KjbodReplicaLogRecord,
    PartitionChangeRecord,
)

from .support import apply, bootstrap, with_brokers, with_topic


def cluster(brokers: int = 4, dirs_each: int = 1):
    image, dirs = with_brokers(bootstrap(), brokers, dirs_each=dirs_each)
    image = with_topic(image, "foo", assignment=((1, 2, 3), (2, 3, 1)))
    return image, dirs


def reassign(image, *targets):
    return Controller(image).reassignment.alter_partition_reassignments([ReassignmentTarget(*t) for t in targets])


def partition(image, name: str = "foo", p: int = 0):
    return image.topics.by_name[name].partitions[p]


def join_isr(image, replica: int, name: str = "foo", p: int = 0):
    """The leader adds a caught-up replica to the ISR (what the clock does)."""
    part = partition(image, name, p)
    request = AlterPartitionRequest(part.leader, image.topics.by_name[name].topic_id, p, part.leader_epoch, part.partition_epoch, part.isr + (replica,))
    return Controller(image).replication.alter_partition(request)


# Target validation (§6.3) ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("replicas", "message"),
    [
        ((), "The manual partition assignment includes an empty replica list."),
        ((1, 2, 9), "The manual partition assignment includes broker 9, but no such broker is registered."),
        ((1, 2, 2), "The manual partition assignment includes the broker 2 more than once."),
        # Sorted walk: 1 repeats before 9 is reached.
        ((9, 1, 1), "The manual partition assignment includes the broker 1 more than once."),
    ],
)
def test_invalid_targets_are_invalid_replica_assignment(replicas: tuple, message: str) -> None:
    image, _ = cluster()
    result = reassign(image, ("foo", 0, replicas))
    assert result.records == ()
    assert result.response == (ReassignmentResult("foo", 0, ApiError(Errors.INVALID_REPLICA_ASSIGNMENT, message)),)


def test_unknown_topics_and_partitions() -> None:
    image, _ = cluster()
    result = reassign(image, ("nope", 0, (1,)), ("foo", 7, (1,)), ("foo", 1, None))
    assert [r.error for r in result.response] == [
        ApiError(Errors.UNKNOWN_TOPIC_OR_PARTITION, "Unable to find a topic named nope."),
        ApiError(Errors.UNKNOWN_TOPIC_OR_PARTITION, "Unable to find partition foo:7."),
        # The default message is not repeated (ApiError.fromThrowable).
        ApiError(Errors.NO_REASSIGNMENT_IN_PROGRESS, None),
    ]


def test_fenced_brokers_are_allowed_in_a_reassignment() -> None:
    image, _ = cluster()
    image = apply(image, Controller(image).replication.fence_broker(4))
    result = reassign(image, ("foo", 0, (4, 2, 3)))
    assert result.response[0].succeeded


# The three stages (§6.4) ---------------------------------------------------------------------------


# --disallow-replication-factor-change (KIP-860, since 4.1) ----------------------------------------


def test_disallowing_a_replication_factor_change_refuses_each_partition_that_changes_it() -> None:
    # validatePartitionReplicationFactorUnchanged (4.4.0 RCM :2529-2548), after the manual
    # assignment checks (:2303-2305); the other partitions of the request start.
    image, _ = cluster()
    result = Controller(image).reassignment.alter_partition_reassignments(
        [ReassignmentTarget("foo", 0, (1, 2, 9, 4)), ReassignmentTarget("foo", 1, (4, 3, 1))],
        allow_replication_factor_change=False,
    )
    assert [(r.partition, r.error.error, r.error.message) for r in result.response] == [
        (0, Errors.INVALID_REPLICA_ASSIGNMENT, "The manual partition assignment includes broker 9, but no such broker is registered."),
        (1, Errors.NONE, None),
    ]
    shrink = Controller(image).reassignment.alter_partition_reassignments([ReassignmentTarget("foo", 0, (1, 2))], allow_replication_factor_change=False)
    assert shrink.records == ()
    assert (shrink.response[0].error.error, shrink.response[0].error.message) == (
        Errors.INVALID_REPLICATION_FACTOR, "The replication factor is changed from 3 to 2"
    )
    # Allowed by default (AllowReplicationFactorChange defaults to true).
    assert reassign(image, ("foo", 0, (1, 2))).response[0].error.error is Errors.NONE


def test_during_a_reassignment_the_replication_factor_is_the_set_it_ends_with() -> None:
    # |replicas ∪ adding − removing| (4.4.0 RCM :2530-2541): (4, 2, 3, 1) adding 4 removing 1 is 3.
    image, _ = cluster()
    image = apply(image, reassign(image, ("foo", 0, (4, 2, 3))))
    assert partition(image).replicas == (4, 2, 3, 1)
    refused = Controller(image).reassignment.alter_partition_reassignments([ReassignmentTarget("foo", 0, (4, 2, 3, 1))], allow_replication_factor_change=False)
    assert refused.response[0].error.message == "The replication factor is changed from 3 to 4"
    same = Controller(image).reassignment.alter_partition_reassignments([ReassignmentTarget("foo", 0, (1, 2, 4))], allow_replication_factor_change=False)
    assert same.response[0].error.error is Errors.NONE


def test_reassignment_replicas() -> None:
    assert reassignment_replicas([1, 2, 3], [3, 4, 5]) == ((3, 4, 5, 1, 2), (4, 5), (1, 2))
    assert reassignment_replicas([1, 2, 3], [3, 2, 1]) == ((3, 2, 1), (), ())


def test_stage_one_writes_the_merged_list_and_the_new_replicas_start_empty() -> None:
    image, _ = cluster()
    topic_id = image.topics.by_name["foo"].topic_id
    result = reassign(image, ("foo", 0, (4, 2, 3)))
    change, log = result.records
    assert isinstance(change, PartitionChangeRecord)
    assert (change.replicas, change.adding_replicas, change.removing_replicas, change.leader, change.isr) == ((4, 2, 3, 1), (4,), (1,), -2, None)
    assert log == KjbodReplicaLogRecord(topic_id=topic_id, partition_id=0, broker_id=4, size_bytes=0)
    after = replay_all(image, result.records)
    p = partition(after)
    assert p.replicas == (4, 2, 3, 1) and p.is_reassigning and after.topics.by_name["foo"].replica_size(0, 4) == 0
    assert Controller(after).reassignment.list_partition_reassignments() == (OngoingReassignment("foo", 0, (4, 2, 3, 1), (4,), (1,)),)


def test_stage_three_completes_when_every_target_replica_is_in_sync() -> None:
    image, _ = cluster()
    image = replay_all(image, reassign(image, ("foo", 0, (4, 2, 3))).records)
    completing = join_isr(image, 4)
    # The leader (1) is being removed, so leadership moves and the sender hears NEW_LEADER_ELECTED.
    assert completing.response == ApiError(Errors.NEW_LEADER_ELECTED)
    after = replay_all(image, completing.records)
    p = partition(after)
    assert (p.replicas, p.isr, p.adding_replicas, p.removing_replicas, p.leader) == ((4, 2, 3), (2, 3, 4), (), (), 4)
    assert Controller(after).reassignment.list_partition_reassignments() == ()


def test_a_reorder_or_an_in_sync_shrink_skips_stages_one_and_two() -> None:
    image, _ = cluster()
    result = reassign(image, ("foo", 0, (3, 2, 1)), ("foo", 1, (2, 3)))
    after = replay_all(image, result.records)
    assert (partition(after).replicas, partition(after).is_reassigning) == ((3, 2, 1), False)
    p1 = partition(after, p=1)
    assert (p1.replicas, p1.isr, p1.is_reassigning) == ((2, 3), (2, 3), False)
    # Dropping replica 1 bumps the leader epoch even though the leader stays.
    assert p1.leader_epoch == partition(image, p=1).leader_epoch + 1


def test_resubmitting_a_running_reassignment_is_a_no_op_and_keeps_progress() -> None:
    image, _ = cluster()
    image = replay_all(image, reassign(image, ("foo", 0, (4, 2, 3))).records)
    topic_id = image.topics.by_name["foo"].topic_id
    image = replay_all(image, [KjbodReplicaLogRecord(topic_id=topic_id, partition_id=0, broker_id=4, size_bytes=500)])
    for target in ((4, 2, 3), (4, 2, 3, 1)):
        result = reassign(image, ("foo", 0, target))
        assert result.records == () and result.response[0].succeeded
    assert image.topics.by_name["foo"].replica_size(0, 4) == 500


def test_a_request_names_each_partition_once_the_last_entry_winning() -> None:
    image, _ = cluster()
    result = reassign(image, ("foo", 0, (4, 2, 3)), ("foo", 0, (1, 2, 4)))
    assert len(result.response) == 1
    assert partition(replay_all(image, result.records)).replicas == (1, 2, 4, 3)


# Cancel (§6.5) -------------------------------------------------------------------------------------


def test_cancel_reverts_to_the_old_target_order_and_drops_the_new_replicas_logs() -> None:
    image, _ = cluster()
    image = replay_all(image, reassign(image, ("foo", 0, (4, 3))).records)  # merged [4,3,1,2]
    assert (0, 4, False) in image.topics.by_name["foo"].replica_logs
    result = reassign(image, ("foo", 0, None))
    assert result.response[0].succeeded
    after = replay_all(image, result.records)
    p = partition(after)
    # The old target order, then the removed replicas ascending: not the original [1,2,3].
    assert (p.replicas, p.isr, p.is_reassigning) == ((3, 1, 2), (1, 2, 3), False)
    assert after.topics.by_name["foo"].replica_logs == {}


def test_cancel_refuses_an_unclean_revert_unless_the_topic_allows_it() -> None:
    image, _ = cluster(brokers=5)
    image = replay_all(image, reassign(image, ("foo", 0, (4, 5))).records)  # [4,5,1,2,3], adding [4,5]
    image = replay_all(image, join_isr(image, 4).records)
    for broker in (1, 2, 3):
        image = apply(image, Controller(image).replication.fence_broker(broker))
    p = partition(image)
    assert (p.isr, p.is_reassigning) == ((4,), True)  # only a replica being added is in sync
    result = reassign(image, ("foo", 0, None))
    assert result.records == ()
    assert result.response[0].error == ApiError(
        Errors.INVALID_REPLICA_ASSIGNMENT, "Unable to revert partition assignment for foo:0 because it would require an unclean leader election."
    )
    allowed = replay_all(image, [ConfigRecord(resource_type=CONFIG_RESOURCE_TOPIC, resource_name="foo", name="unclean.leader.election.enable", value="true")])
    result = reassign(allowed, ("foo", 0, None))
    assert result.response[0].succeeded
    reverted = partition(replay_all(allowed, result.records))
    # ISR = the first remaining replica; no leader can be elected while 1-3 are fenced.
    assert (reverted.replicas, reverted.isr, reverted.is_reassigning, reverted.leader) == ((1, 2, 3), (1,), False, -1)


def test_cancel_cannot_revert_when_every_replica_was_being_added() -> None:
    image, _ = cluster()
    topic_id = image.topics.by_name["foo"].topic_id
    p = partition(image)
    # A state only a log can hold (every replica listed as adding); the revert has nothing left.
    image = replay_all(image, [PartitionChangeRecord(version=2, topic_id=topic_id, partition_id=0, adding_replicas=p.replicas)])
    assert reassign(image, ("foo", 0, None)).response[0].error == ApiError(
        Errors.INVALID_REPLICA_ASSIGNMENT, "Invalid replica assignment: addingReplicas contains all replicas."
    )


def test_list_filters_and_skips_unknown_topics() -> None:
    image, _ = cluster()
    image = replay_all(image, reassign(image, ("foo", 0, (4, 2, 3)), ("foo", 1, (4, 3, 1))).records)
    control = Controller(image).reassignment
    assert [(r.topic, r.partition) for r in control.list_partition_reassignments()] == [("foo", 0), ("foo", 1)]
    assert control.list_partition_reassignments([("foo", 1), ("nope", 0), ("foo", 9)]) == (
        OngoingReassignment("foo", 1, (4, 3, 1, 2), (4,), (2,)),
    )


@settings(max_examples=40, deadline=None)
@given(st.lists(st.permutations([1, 2, 3, 4, 5]).map(lambda p: p[:3]), min_size=1, max_size=4))
def test_any_sequence_of_targets_then_catching_up_ends_on_the_last_target(targets: list) -> None:
    image, _ = cluster(brokers=5)
    for target in targets:
        image = replay_all(image, reassign(image, ("foo", 0, tuple(target))).records)
    # Every replica catches up, one at a time, as the clock would make them.
    while partition(image).is_reassigning:
        missing = [r for r in partition(image).replicas if r not in partition(image).isr]
        assert missing, "a reassignment that cannot complete"
        image = replay_all(image, join_isr(image, missing[0]).records)
    assert partition(image).replicas == tuple(targets[-1])
    assert set(partition(image).isr) == set(targets[-1])


# AlterReplicaLogDirs ------------------------------------------------------------------------------


def jbod_cluster(brokers: int = 3):  # noqa: ANN201
    image, dirs = with_brokers(bootstrap(), brokers, dirs_each=2)
    image = with_topic(image, "t", assignment=((1, 2), (2, 3)))
    for broker in range(1, brokers + 1):
        # Each broker places its new replicas: the first directory by path, then the least loaded.
        image = apply(image, Controller(image).replication.auto_assign_dirs(broker))
    return image, dirs


def move(image, *moves):
    return Controller(image).reassignment.alter_replica_log_dirs([ReplicaDirMove(*m) for m in moves])


def test_a_move_to_another_directory_builds_a_future_replica() -> None:
    image, dirs = jbod_cluster()
    topic_id = image.topics.by_name["t"].topic_id
    current = partition(image, "t").directory(1)
    target = next(d for d in dirs[1] if d != current)
    result = move(image, ("t", 0, 1, target), ("t", 0, 2, partition(image, "t").directory(2)))
    assert [(r.action, r.error) for r in result.response] == [("future", ApiError(Errors.NONE)), ("none", ApiError(Errors.NONE))]
    assert result.records == (KjbodReplicaLogRecord(topic_id=topic_id, partition_id=0, broker_id=1, future=True, directory_id=target, size_bytes=0),)
    after = replay_all(image, result.records)
    assert after.topics.by_name["t"].future_replica(0, 1).directory_id == target
    # Moving back to the current directory drops the future replica (a cancel).
    back = move(after, ("t", 0, 1, current))
    assert back.response[0].action == "reverted"
    assert replay_all(after, back.records).topics.by_name["t"].future_replica(0, 1) is None


def test_a_replica_without_a_directory_is_created_in_place() -> None:
    image, dirs = jbod_cluster()
    image = replay_all(image, reassign(image, ("t", 0, (1, 3))).records)
    assert partition(image, "t").directory(3) == DirectoryId.UNASSIGNED
    result = move(image, ("t", 0, 3, dirs[3][1]))
    assert result.response[0].action == "assigned"
    assert partition(replay_all(image, result.records), "t").directory(3) == dirs[3][1]


def test_new_replicas_of_one_partition_on_two_brokers_each_keep_the_directory_they_were_given() -> None:
    """Issue 26's audit: the brokers' AssignReplicasToDirs run one after another, each against
    the state the one before leaves. Built from the same state, broker 4's put broker 3's new
    replica back to UNASSIGNED."""
    image, dirs = jbod_cluster(brokers=4)
    image = replay_all(image, reassign(image, ("t", 0, (3, 4))).records)
    assert partition(image, "t").directory(3) == partition(image, "t").directory(4) == DirectoryId.UNASSIGNED
    result = move(image, ("t", 0, 3, dirs[3][1]), ("t", 0, 4, dirs[4][1]))
    assert [r.action for r in result.response] == ["assigned", "assigned"]
    after = partition(replay_all(image, result.records), "t")
    assert (after.directory(3), after.directory(4)) == (dirs[3][1], dirs[4][1])


def test_refused_moves() -> None:
    image, dirs = jbod_cluster()
    current = partition(image, "t").directory(1)
    other = next(d for d in dirs[1] if d != current)
    assert move(image, ("t", 0, 1, dirs[2][0])).response[0].error.error is Errors.LOG_DIR_NOT_FOUND
    assert move(image, ("t", 0, 3, dirs[3][0])).response[0].error.error is Errors.NOT_LEADER_OR_FOLLOWER
    failed = apply(image, Controller(image).replication.heartbeat(HeartbeatRequest(1, offline_log_dirs=(other,))))
    assert move(failed, ("t", 0, 1, other)).response[0].error == ApiError(
        Errors.KAFKA_STORAGE_ERROR, f"Log directory {image.cluster.path_of(1, other)} is offline"
    )
    # A broker makes no future replica while one of its directories is offline.
    failed_other = apply(image, Controller(image).replication.heartbeat(HeartbeatRequest(1, offline_log_dirs=(current,))))
    result = move(failed_other, ("t", 0, 1, other))
    assert result.records == ()
    assert result.response[0].error == ApiError(Errors.KAFKA_STORAGE_ERROR, "Partition t-0 is offline")


def test_no_future_replica_while_another_directory_of_the_broker_is_offline() -> None:
    image, dirs = with_brokers(bootstrap(), 1, dirs_each=3)
    image = with_topic(image, "t", assignment=((1,),))
    image = replay_all(image, move(image, ("t", 0, 1, dirs[1][0])).records)  # placed in d1
    image = apply(image, Controller(image).replication.heartbeat(HeartbeatRequest(1, offline_log_dirs=(dirs[1][2],))))
    result = move(image, ("t", 0, 1, dirs[1][1]))
    assert result.records == ()
    assert result.response[0].error == ApiError(
        Errors.KAFKA_STORAGE_ERROR, "Can not create log for t-0 because log directories /data/b1/d3 are offline"
    )


# Configs -------------------------------------------------------------------------------------------


def test_alter_configs_writes_only_real_changes() -> None:
    image, _ = cluster()
    control = Controller(image).reassignment
    changes = [
        ConfigChange(CONFIG_RESOURCE_BROKER, "1", "leader.replication.throttled.rate", "100"),
        ConfigChange(CONFIG_RESOURCE_BROKER, "1", "follower.replication.throttled.rate", None),  # not set: nothing to delete
        ConfigChange(CONFIG_RESOURCE_TOPIC, "foo", "leader.replication.throttled.replicas", ""),
    ]
    result = control.alter_configs(changes)
    assert result.records == (
        ConfigRecord(resource_type=CONFIG_RESOURCE_BROKER, resource_name="1", name="leader.replication.throttled.rate", value="100"),
        ConfigRecord(resource_type=CONFIG_RESOURCE_TOPIC, resource_name="foo", name="leader.replication.throttled.replicas", value=""),
    )
    after = replay_all(image, result.records)
    assert Controller(after).reassignment.alter_configs(changes).records == ()
    with pytest.raises(UserError, match="The topic 'nope' does not exist."):
        control.alter_configs([ConfigChange(CONFIG_RESOURCE_TOPIC, "nope", "x", "1")])
