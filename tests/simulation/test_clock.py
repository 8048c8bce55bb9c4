"""The simulated clock and the copy model: advance -> records -> replay -> state."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kjbod.controller import Controller
from kjbod.simulation.clock import (
    ClockControl,
    format_duration,
    parse_duration_ms,
)
from kjbod.simulation.copy_model import (
    DEFAULT_ALTER_LOG_DIRS_RATE,
    DEFAULT_REPLICATION_RATE,
    copies,
    outlook,
)
from kjbod.controller.reassignment_control import ReassignmentTarget, ReplicaDirMove
from kjbod.controller.replication_control import HeartbeatRequest
from kjbod.errors import UserError
from kjbod.image import replay_all
from kjbod.records import (
    CONFIG_RESOURCE_BROKER,
    CONFIG_RESOURCE_TOPIC,
    ConfigRecord,
    KjbodClockRecord,
    KjbodReplicaLogRecord,
    PartitionChangeRecord,
)

from tests.controller.support import apply, bootstrap, with_brokers, with_topic

GIB = 2**30
MIB = 2**20


def sized(image, name: str, size: int):
    return apply(image, Controller(image).replication.set_partition_sizes(name, None, size))


def reassigned(image, *targets):
    return apply(image, Controller(image).reassignment.alter_partition_reassignments([ReassignmentTarget(*t) for t in targets]))


def configs(image, *entries):
    """entries: (resource type, name, key, value)."""
    return replay_all(image, [ConfigRecord(resource_type=t, resource_name=n, name=k, value=v) for t, n, k, v in entries])


def moving_cluster(size: int = GIB, brokers: int = 4):
    """foo-0 on 1,2,3 (leader 1), being moved to 4,2,3: one copy, 1 -> 4."""
    image, dirs = with_brokers(bootstrap(), brokers)
    image = with_topic(image, "foo", assignment=((1, 2, 3),))
    return reassigned(sized(image, "foo", size), ("foo", 0, (4, 2, 3))), dirs


def partition(image, name: str = "foo", p: int = 0):
    return image.topics.by_name[name].partitions[p]


def test_durations() -> None:
    assert [parse_duration_ms(t) for t in ("1500", "1500s", "250ms", "25m", "2h", "1d", "1.5s")] == [
        1_500_000, 1_500_000, 250, 1_500_000, 7_200_000, 86_400_000, 1500,
    ]
    assert format_duration(2_048_000) == "34m 8s" and format_duration(0) == "0s" and format_duration(90_061_001) == "1d 1h 1m 1.001s"
    with pytest.raises(UserError):
        parse_duration_ms("soon")
    # Past a Java long of milliseconds (and past a float) is refused, not an overflow.
    assert parse_duration_ms("106751991167d") == 106751991167 * 86_400_000
    for text in ("106751991168d", "9" * 400 + "d"):
        with pytest.raises(UserError, match=f"Invalid duration '{text}': longer than the clock can count"):
            parse_duration_ms(text)


def test_an_idle_advance_writes_only_the_clock() -> None:
    image, _ = with_brokers(bootstrap(), 1)
    result = ClockControl(image).advance(60_000)
    assert result.records == (KjbodClockRecord(time_ms=60_000),)
    assert (result.response.previous_ms, result.response.now_ms, result.response.completed) == (0, 60_000, ())
    assert ClockControl(image).advance(0).records == ()
    with pytest.raises(UserError, match="The clock cannot go back"):
        ClockControl(image).advance(-1)
    later = apply(image, ClockControl(image).advance(60_000))
    with pytest.raises(UserError, match=r"The clock cannot pass 106751991167d 7h 12m 55.807s \(the largest time a Java long holds\): it is at 1m"):
        ClockControl(later).advance(2**63 - 60_000)


def test_a_new_replica_copies_at_the_default_link_rate_and_joins_the_isr() -> None:
    image, _ = moving_cluster()
    topic_id = image.topics.by_name["foo"].topic_id
    (copy,) = copies(image)
    assert (copy.broker, copy.source, copy.copied, copy.total, copy.rate, copy.blocked) == (4, 1, 0, GIB, DEFAULT_REPLICATION_RATE, None)
    # Five seconds at 100 MiB/s: progress is written, nothing completes.
    half = ClockControl(image).advance(5_000)
    assert half.records == (
        KjbodReplicaLogRecord(topic_id=topic_id, partition_id=0, broker_id=4, size_bytes=500 * MIB),
        KjbodClockRecord(time_ms=5_000),
    )
    image = replay_all(image, half.records)
    assert image.topics.by_name["foo"].replica_size(0, 4) == 500 * MIB and 4 not in partition(image).isr
    # The rest: 524 MiB at 100 MiB/s is 5.24 s, exactly.
    rest = ClockControl(image).advance_until_idle()
    assert rest.response.now_ms == 10_240
    (done,) = rest.response.completed
    assert (done.broker, done.future, done.time_ms, done.reassignment_completed) == (4, False, 10_240, True)
    image = replay_all(image, rest.records)
    p = partition(image)
    assert (p.replicas, p.isr, p.is_reassigning) == ((4, 2, 3), (2, 3, 4), False)
    assert image.topics.by_name["foo"].replica_logs == {} and image.time_ms == 10_240


def test_copies_share_links_equally() -> None:
    image, _ = with_brokers(bootstrap(), 5)
    image = with_topic(image, "foo", assignment=((1, 2), (1, 3), (2, 3)))
    image = reassigned(sized(image, "foo", GIB), ("foo", 0, (1, 4)), ("foo", 1, (1, 4)), ("foo", 2, (2, 5)))
    rates = {(c.partition, c.broker): c.rate for c in copies(image)}
    # Two copies into broker 4 (and out of leader 1) share its link; the third has a link of its own.
    assert rates == {(0, 4): DEFAULT_REPLICATION_RATE / 2, (1, 4): DEFAULT_REPLICATION_RATE / 2, (2, 5): DEFAULT_REPLICATION_RATE}
    # When the fast one is done, the others keep their share (they already share broker 4's link).
    run = ClockControl(image).advance_until_idle()
    assert [(c.partition, c.time_ms) for c in run.response.completed] == [(2, 10_240), (0, 20_480), (1, 20_480)]


def test_kafkas_throttles_apply_where_the_replica_is_listed() -> None:
    image, _ = moving_cluster()
    image = configs(
        image,
        (CONFIG_RESOURCE_TOPIC, "foo", "follower.replication.throttled.replicas", "0:4"),
        (CONFIG_RESOURCE_BROKER, "4", "follower.replication.throttled.rate", str(10 * MIB)),
    )
    assert copies(image)[0].rate == 10 * MIB
    # The leader side: "*" lists every replica; the lower of the two wins.
    image = configs(
        image,
        (CONFIG_RESOURCE_TOPIC, "foo", "leader.replication.throttled.replicas", "*"),
        (CONFIG_RESOURCE_BROKER, "1", "leader.replication.throttled.rate", str(4 * MIB)),
    )
    assert copies(image)[0].rate == 4 * MIB
    # Not listed: not throttled, even with a rate on the broker.
    unlisted = configs(image, (CONFIG_RESOURCE_TOPIC, "foo", "leader.replication.throttled.replicas", "0:2"),
                       (CONFIG_RESOURCE_TOPIC, "foo", "follower.replication.throttled.replicas", "1:4"))
    assert copies(unlisted)[0].rate == DEFAULT_REPLICATION_RATE


def test_100_gib_under_a_50_mib_throttle_takes_34m_8s() -> None:
    image, _ = moving_cluster(size=100 * GIB)
    image = configs(
        image,
        (CONFIG_RESOURCE_TOPIC, "foo", "follower.replication.throttled.replicas", "0:4"),
        (CONFIG_RESOURCE_BROKER, "4", "follower.replication.throttled.rate", str(50 * MIB)),
    )
    ((copy, done_in),) = outlook(image)
    assert (copy.rate, done_in) == (50 * MIB, 2_048_000)
    assert ClockControl(image).advance_until_idle().response.now_ms == 2_048_000


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        (lambda image: Controller(image).replication.fence_broker(4), "broker 4 is fenced"),
        (lambda image: Controller(image).replication.unregister_broker(4), "broker 4 is not registered"),
        (lambda image: Controller(image).replication.controlled_shutdown(4), "broker 4 is fenced"),
    ],
)
def test_a_copy_that_cannot_progress_is_reported_not_looped_on(change, reason: str) -> None:
    image, _ = moving_cluster()
    image = apply(image, change(image))
    run = ClockControl(image).advance_until_idle()
    assert run.records == () and run.response.now_ms == image.time_ms
    assert [(c.broker, c.blocked) for c in run.response.blocked] == [(4, reason)]
    # A bounded advance moves the clock and leaves the copy where it was.
    assert ClockControl(image).advance(60_000).records == (KjbodClockRecord(time_ms=60_000),)


def test_no_leader_and_a_zero_rate_block_a_copy() -> None:
    image, _ = moving_cluster()
    topic_id = image.topics.by_name["foo"].topic_id
    leaderless = replay_all(image, [PartitionChangeRecord(version=2, topic_id=topic_id, partition_id=0, leader=-1)])
    assert copies(leaderless)[0].blocked == "the partition has no leader"
    stopped = configs(
        image,
        (CONFIG_RESOURCE_TOPIC, "foo", "follower.replication.throttled.replicas", "*"),
        (CONFIG_RESOURCE_BROKER, "", "follower.replication.throttled.rate", "0"),  # the cluster default
    )
    assert copies(stopped)[0].blocked == "its rate is 0 B/s (a throttle or link rate of 0)"


def test_until_idle_refuses_to_run_past_the_horizon() -> None:
    image, _ = moving_cluster()
    image = configs(
        image,
        (CONFIG_RESOURCE_TOPIC, "foo", "follower.replication.throttled.replicas", "*"),
        (CONFIG_RESOURCE_BROKER, "4", "follower.replication.throttled.rate", "1"),
    )
    with pytest.raises(UserError, match=r"would take longer than 365d at the current rates; nothing was changed"):
        ClockControl(image).advance_until_idle()
    day = ClockControl(image).advance(86_400_000)
    assert day.records[0].size_bytes == 86_400


def test_a_restarted_broker_with_its_data_catches_up_at_once() -> None:
    image, _ = with_brokers(bootstrap(), 3)
    image = sized(with_topic(image, "foo", assignment=((1, 2, 3),)), "foo", GIB)
    image = apply(image, Controller(image).replication.fence_broker(3))
    image = apply(image, Controller(image).replication.heartbeat(HeartbeatRequest(3)))
    assert partition(image).isr == (1, 2)
    run = ClockControl(image).advance(1_000)
    assert [(c.broker, c.time_ms) for c in run.response.completed] == [(3, 0)]
    assert partition(replay_all(image, run.records)).isr == (1, 2, 3)


# Intra-broker moves (KIP-113, KIP-858) ------------------------------------------------------------


def jbod(size: int = GIB):
    """t-0 on broker 1 only, in its first directory; a move to the second is started."""
    image, dirs = with_brokers(bootstrap(), 2, dirs_each=2)
    image = sized(with_topic(image, "t", assignment=((1,), (1,))), "t", size)
    image = apply(image, Controller(image).replication.auto_assign_dirs(1))
    start = Controller(image).reassignment.alter_replica_log_dirs(
        [ReplicaDirMove("t", 0, 1, dirs[1][1]), ReplicaDirMove("t", 1, 1, dirs[1][1])]
    )
    assert [r.action for r in start.response] == ["future", "none"]  # t-1 was placed in d2 already
    return apply(image, start), dirs


def test_a_future_replica_is_assigned_then_promoted() -> None:
    image, dirs = jbod()
    topic_id = image.topics.by_name["t"].topic_id
    assert partition(image, "t").directory(1) == dirs[1][0]
    ((copy, done_in),) = outlook(image)
    assert (copy.future, copy.rate, done_in) == (True, DEFAULT_ALTER_LOG_DIRS_RATE, 5_120)
    run = ClockControl(image).advance_until_idle()
    change, promotion, clock = run.records
    # KIP-858: the controller learns the new directory (AssignReplicasToDirs), then the broker promotes.
    assert isinstance(change, PartitionChangeRecord) and change.directories == (dirs[1][1],)
    assert promotion == KjbodReplicaLogRecord(topic_id=topic_id, partition_id=0, broker_id=1, future=True, size_bytes=None)
    assert clock == KjbodClockRecord(time_ms=5_120)
    image = replay_all(image, run.records)
    assert partition(image, "t").directory(1) == dirs[1][1] and image.topics.by_name["t"].replica_logs == {}
    assert run.response.moves_completed == 1


def test_an_in_sync_replica_with_less_on_disk_moves_between_directories_at_once() -> None:
    """kafka-log-dirs often reports an in-sync follower's log smaller than its leader's (a few
    offsets behind, or fewer segments kept), and import records that size. The follower is in the
    ISR, so nothing is left for it to catch up: its move to another directory starts at once (it
    used to wait for a copy that never runs), and the promoted log is a complete copy."""
    image, dirs = with_brokers(bootstrap(), 2, dirs_each=2)
    image = sized(with_topic(image, "t", assignment=((2, 1),)), "t", GIB)
    image = apply(image, Controller(image).replication.auto_assign_dirs(1))
    topic_id = image.topics.by_name["t"].topic_id
    image = replay_all(image, [KjbodReplicaLogRecord(topic_id=topic_id, partition_id=0, broker_id=1, size_bytes=GIB // 2, offset_lag=12)])
    assert partition(image, "t").isr == (2, 1)
    target = next(d for d in dirs[1] if d != partition(image, "t").directory(1))
    image = apply(image, Controller(image).reassignment.alter_replica_log_dirs([ReplicaDirMove("t", 0, 1, target)]))
    ((copy, done_in),) = outlook(image)
    assert (copy.future, copy.blocked, done_in) == (True, None, 5_120)
    image = replay_all(image, ClockControl(image).advance_until_idle().records)
    assert partition(image, "t").directory(1) == target and image.topics.by_name["t"].replica_logs == {}


def test_the_alter_log_dirs_throttle_then_kjbods_rate_set_the_pace() -> None:
    image, _ = jbod()
    throttled = configs(image, (CONFIG_RESOURCE_BROKER, "1", "replica.alter.log.dirs.io.max.bytes.per.second", str(MIB)))
    assert copies(throttled)[0].rate == MIB
    result = ClockControl(image).set_rates(1, alter_log_dirs_rate=2 * MIB)
    assert result.records == (
        ConfigRecord(resource_type=CONFIG_RESOURCE_BROKER, resource_name="1", name="kjbod.alter.log.dirs.bytes.per.second", value=str(2 * MIB)),
    )
    assert copies(replay_all(image, result.records))[0].rate == 2 * MIB
    assert copies(replay_all(throttled, result.records))[0].rate == MIB  # Kafka's throttle wins


def test_the_source_directory_failing_mid_move() -> None:
    image, dirs = jbod()
    image = replay_all(image, ClockControl(image).advance(1_000).records)
    assert image.topics.by_name["t"].future_replica(0, 1).size_bytes == 200 * MIB
    # The source disk fails: the controller still has the replica in the source directory, so it
    # takes it out of the ISR and leadership (KIP-858 delays the assignment until catch-up).
    image = apply(image, Controller(image).replication.heartbeat(HeartbeatRequest(1, offline_log_dirs=(dirs[1][0],))))
    assert (partition(image, "t").leader, partition(image, "t").directory(1)) == (-1, dirs[1][0])
    run = ClockControl(image).advance_until_idle()
    assert run.records == ()
    assert [(c.future, c.blocked) for c in run.response.blocked] == [(True, "its source directory is offline")]
    assert image.topics.by_name["t"].future_replica(0, 1).size_bytes == 200 * MIB  # kept, not promoted


def test_the_target_directory_failing_mid_move() -> None:
    """The future replica's log was in the failed directory: it is gone and the move ends; the
    replica stays, leader and in sync, in its source directory (nothing waits for a dead disk)."""
    image, dirs = jbod()
    image = replay_all(image, ClockControl(image).advance(1_000).records)
    topic_id = image.topics.by_name["t"].topic_id
    failed = apply(image, Controller(image).replication.heartbeat(HeartbeatRequest(1, offline_log_dirs=(dirs[1][1],))))
    assert failed.topics.by_name["t"].future_replica(0, 1) is None
    assert (partition(failed, "t").leader, partition(failed, "t").directory(1)) == (1, dirs[1][0])
    assert copies(failed) == [] and ClockControl(failed).advance_until_idle().records == ()  # idle: nothing to run
    records = Controller(image).replication.heartbeat(HeartbeatRequest(1, offline_log_dirs=(dirs[1][1],))).records
    assert KjbodReplicaLogRecord(topic_id=topic_id, partition_id=0, broker_id=1, future=True, size_bytes=None) in records


def test_set_rates_validates() -> None:
    image, _ = with_brokers(bootstrap(), 1)
    with pytest.raises(UserError, match="Broker 7 is not registered"):
        ClockControl(image).set_rates(7, replication_rate=1)
    with pytest.raises(UserError, match="must be a positive number"):
        ClockControl(image).set_rates(None, replication_rate=0)
    with pytest.raises(UserError, match="Give --replication, --alter-log-dirs or --reset"):
        ClockControl(image).set_rates(None)
    image = replay_all(image, ClockControl(image).set_rates(None, replication_rate=1000).records)
    reset = ClockControl(image).set_rates(None, reset=True)
    assert reset.records == (ConfigRecord(resource_type=CONFIG_RESOURCE_BROKER, resource_name="", name="kjbod.replication.bytes.per.second", value=None),)
    assert reset.response.replication_rate is None


@settings(max_examples=30, deadline=None)
@given(st.integers(1, 10**10), st.integers(1000, 10**9), st.lists(st.integers(1, 10**7), max_size=5))
def test_splitting_an_advance_never_finishes_earlier_and_at_most_a_ms_later_per_split(size: int, rate: int, chunks: list) -> None:
    image, _ = moving_cluster(size=size)
    # The cluster default: every link (the leader's outbound too) runs at `rate`.
    image = replay_all(image, ClockControl(image).set_rates(None, replication_rate=rate).records)
    ideal = math.ceil(size * 1000 / rate)
    assert ClockControl(image).advance_until_idle().response.now_ms == ideal
    finished = None
    for chunk in chunks:
        run = ClockControl(image).advance(chunk)
        image = replay_all(image, run.records)
        assert all(0 <= c.copied <= size for c in copies(image))
        finished = finished or next((c.time_ms for c in run.response.completed), None)
    if finished is None:
        finished = ClockControl(image).advance_until_idle().response.now_ms
    # Each split rounds the bytes copied down, which can cost at most a millisecond at >= 1000 B/s.
    assert ideal <= finished <= ideal + len(chunks)
