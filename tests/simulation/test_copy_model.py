"""The copy model's incremental engine gives exactly the runs of the full recomputation it
replaced (tests/copy_engine_reference.py): the same completions at the same milliseconds, the
same records, the same copies left with the same rates, on random small clusters with links,
throttles, reassignments, directory moves and blocked copies."""

from __future__ import annotations

from unittest import mock

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kjbod.common.kafka_configs import (
    FOLLOWER_THROTTLED_RATE,
    FOLLOWER_THROTTLED_REPLICAS,
    LEADER_THROTTLED_RATE,
    LEADER_THROTTLED_REPLICAS,
    LOG_DIRS_THROTTLED_RATE,
)
from kjbod.controller import Controller
from kjbod.simulation import copy_model
from kjbod.simulation.copy_model import ALTER_LOG_DIRS_RATE, REPLICATION_RATE, copies, outlook, simulate
from kjbod.controller.reassignment_control import ReassignmentTarget, ReplicaDirMove
from kjbod.controller.replication_control import HeartbeatRequest
from kjbod.image import replay_all
from kjbod.records import CONFIG_RESOURCE_BROKER, CONFIG_RESOURCE_TOPIC, ConfigRecord, KjbodReplicaLogRecord

from .copy_engine_reference import ReferenceEngine
from tests.controller.support import apply, bootstrap, with_brokers, with_topic

MIB = 2**20
# Rates that divide badly (floors at every step) and rates that are equal across brokers (so
# classes share a rate group), small sizes (many completions at once) and large ones.
RATES = st.sampled_from([None, 100 * MIB, 100_000_000, 33_333_333, 7_777_777, 1_000_000, 999])
SIZES = st.one_of(st.integers(0, 5000), st.integers(0, 3 * 2**30), st.sampled_from([0, MIB, 10**9]))


@st.composite
def clusters(draw):  # noqa: ANN201
    """A small cluster with copies to run: reassignments, moves between directories, throttles,
    odd link rates, and now and then a fenced broker or a partly copied replica."""
    brokers = draw(st.integers(2, 5))
    image, dirs = with_brokers(bootstrap(), brokers, dirs_each=draw(st.integers(1, 3)))
    names = []
    for t in range(draw(st.integers(1, 3))):
        rf = draw(st.integers(1, min(3, brokers)))
        assignment = tuple(
            tuple(draw(st.permutations(range(1, brokers + 1)))[:rf]) for _ in range(draw(st.integers(1, 4)))
        )
        name = f"t{t}"
        image = with_topic(image, name, assignment=assignment)
        names.append(name)
        for p in range(len(assignment)):
            image = apply(image, Controller(image).replication.set_partition_sizes(name, p, draw(SIZES)))
    # Brokers place their replicas, so moves between directories have a source.
    for broker in range(1, brokers + 1):
        image = apply(image, Controller(image).replication.auto_assign_dirs(broker))
    configs = []
    for broker in [""] + [str(b) for b in range(1, brokers + 1)]:
        for name in (REPLICATION_RATE, ALTER_LOG_DIRS_RATE, LEADER_THROTTLED_RATE, FOLLOWER_THROTTLED_RATE, LOG_DIRS_THROTTLED_RATE):
            if draw(st.integers(0, 5)) == 0:
                rate = draw(RATES)
                configs.append(ConfigRecord(resource_type=CONFIG_RESOURCE_BROKER, resource_name=broker, name=name, value=None if rate is None else str(rate)))
    targets = []
    for name in names:
        topic = image.topics.by_name[name]
        for p in sorted(topic.partitions):
            if draw(st.booleans()):
                rf = draw(st.integers(1, min(3, brokers)))
                targets.append(ReassignmentTarget(name, p, tuple(draw(st.permutations(range(1, brokers + 1)))[:rf])))
        for kind in (LEADER_THROTTLED_REPLICAS, FOLLOWER_THROTTLED_REPLICAS):
            choice = draw(st.integers(0, 3))
            if choice:
                value = "*" if choice == 1 else ",".join(f"{p}:{b}" for p in topic.partitions for b in range(1, brokers + 1) if draw(st.booleans()))
                configs.append(ConfigRecord(resource_type=CONFIG_RESOURCE_TOPIC, resource_name=name, name=kind, value=value))
    image = replay_all(image, configs)
    image = apply(image, Controller(image).reassignment.alter_partition_reassignments(targets))
    moves = []
    for name in names:
        topic = image.topics.by_name[name]
        for p, registration in sorted(topic.partitions.items()):
            for broker in registration.replicas:
                if len(dirs[broker]) > 1 and draw(st.integers(0, 2)) == 0:
                    moves.append(ReplicaDirMove(name, p, broker, draw(st.sampled_from(dirs[broker]))))
    image = apply(image, Controller(image).reassignment.alter_replica_log_dirs(moves))
    # A replica part-way through its copy, and the odd fenced broker or failed directory.
    logs = []
    for name in names:
        topic = image.topics.by_name[name]
        for p, registration in sorted(topic.partitions.items()):
            for broker in registration.replicas:
                if broker not in registration.isr and draw(st.integers(0, 3)) == 0:
                    logs.append(KjbodReplicaLogRecord(topic_id=topic.topic_id, partition_id=p, broker_id=broker,
                                                      size_bytes=draw(st.integers(0, topic.size(p)))))
    image = replay_all(image, logs)
    event = draw(st.integers(0, 5))
    if event == 1:
        image = apply(image, Controller(image).replication.fence_broker(draw(st.integers(1, brokers))))
    elif event == 2:
        broker = draw(st.integers(1, brokers))
        if len(dirs[broker]) > 1:
            image = apply(image, Controller(image).replication.heartbeat(HeartbeatRequest(broker, offline_log_dirs=(dirs[broker][0],))))
    return image


def reference_run(call, *args, **kwargs):  # noqa: ANN001, ANN201
    with mock.patch.object(copy_model, "_Engine", ReferenceEngine):
        return call(*args, **kwargs)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(clusters(), st.one_of(st.none(), st.integers(0, 20_000), st.integers(0, 10**8)))
def test_the_incremental_engine_runs_as_the_full_recomputation(image, duration) -> None:  # noqa: ANN001
    expected = reference_run(simulate, image, duration)
    run = simulate(image, duration)
    assert run.completions == expected.completions
    assert run.records == expected.records
    assert run.remaining == expected.remaining
    assert (run.start_ms, run.end_ms, run.idle, run.placed) == (expected.start_ms, expected.end_ms, expected.idle, expected.placed)
    assert copies(image) == reference_run(copies, image)
    assert outlook(image) == reference_run(outlook, image)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(clusters(), st.lists(st.integers(1, 5_000_000), min_size=1, max_size=6))
def test_runs_split_into_advances_agree_too(image, steps) -> None:  # noqa: ANN001
    expected_image = image
    for step in steps:
        run, expected = simulate(image, step), reference_run(simulate, expected_image, step)
        assert run.records == expected.records and run.completions == expected.completions
        image, expected_image = replay_all(image, run.records), replay_all(expected_image, expected.records)
        assert image.topics == expected_image.topics


def test_the_generated_clusters_exercise_the_model() -> None:
    """The strategy reaches the cases the equivalence is about: throttled and unthrottled
    copies, future replicas, blocked copies, completions at the same instant."""
    seen: set[str] = set()

    @settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    @given(clusters())
    def survey(image) -> None:  # noqa: ANN001
        run = simulate(image)
        now = copies(image)
        if any(c.future for c in now):
            seen.add("future")
        if any(c.blocked for c in now):
            seen.add("blocked")
        if len({c.rate for c in now if not c.blocked}) > 2:
            seen.add("several rates")
        times = [c.time_ms for c in run.completions]
        if len(times) != len(set(times)):
            seen.add("simultaneous")
        if any(c.reassignment_completed for c in run.completions):
            seen.add("reassignment completed")
        if run.placed:
            seen.add("placed")

    survey()
    assert seen == {"future", "blocked", "several rates", "simultaneous", "reassignment completed", "placed"}
