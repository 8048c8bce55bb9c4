"""MAX_RECORDS_PER_USER_OP: topic creation and elections that would write more records than one
operation may are refused with POLICY_VIOLATION before they build them (Kafka's BoundedList,
QuorumController:182-187, EventHandlerExceptionInfo:83-88), whatever the size asked for; a
reassignment fails only its partitions past the limit, as Kafka's does."""

from __future__ import annotations

import time

import pytest

from kjbod.common.kafka_uuid import DirectoryId
from kjbod.controller import Controller, ControllerApiError, Errors
from kjbod.controller.partition_change import Election
from kjbod.controller.reassignment_control import ReassignmentTarget
from kjbod.controller.replication_control import CreateTopicRequest
from kjbod.controller.result import MAX_RECORDS_PER_USER_OP
from kjbod.image import replay_all
from kjbod.records import PartitionRecord, TopicRecord

from .support import bootstrap, with_brokers, with_topic

LIMIT = MAX_RECORDS_PER_USER_OP


def _refused(operation) -> str:  # noqa: ANN001
    with pytest.raises(ControllerApiError) as caught:
        operation()
    assert caught.value.api_error.error is Errors.POLICY_VIOLATION
    return str(caught.value)


@pytest.mark.parametrize("partitions", [2_000_000_000, 2**31 - 1, LIMIT])
def test_a_huge_partition_count_is_refused_at_once(partitions: int) -> None:
    image, _ = with_brokers(bootstrap(), 3)
    started = time.perf_counter()
    message = _refused(lambda: Controller(image).replication.create_topic(CreateTopicRequest("big", partitions, 3, seed=1)))
    assert time.perf_counter() - started < 5  # refused before placing the partitions (it used to run out of memory)
    assert message == (
        f"POLICY_VIOLATION: Unable to perform excessively large batch operation. Creating topic big with {partitions} partitions "
        f"needs {partitions + 1} records, but one operation writes at most {LIMIT} (Kafka's MAX_RECORDS_PER_USER_OP): "
        f"create it with at most {LIMIT - 1} partitions."
    )


def test_the_limit_counts_the_topic_and_config_records() -> None:
    image, _ = with_brokers(bootstrap(), 3)
    configs = {"retention.ms": "1", "cleanup.policy": "compact"}
    most = LIMIT - 1 - len(configs)
    message = _refused(lambda: Controller(image).replication.create_topic(CreateTopicRequest("t", most + 1, 1, seed=1, configs=configs)))
    assert message.endswith(f"create it with at most {most} partitions.")
    created = Controller(image).replication.create_topic(CreateTopicRequest("t", most, 1, seed=1, configs=configs))
    assert len(created.records) == LIMIT
    # A huge manual assignment too.
    assignment = tuple((1,) for _ in range(LIMIT))
    _refused(lambda: Controller(image).replication.create_topic(CreateTopicRequest("m", None, None, assignment=assignment)))


def test_a_huge_replication_factor_is_still_the_placement_error() -> None:
    image, _ = with_brokers(bootstrap(), 3)
    with pytest.raises(ControllerApiError) as caught:
        Controller(image).replication.create_topic(CreateTopicRequest("t", 3, 2_000_000_000, seed=1))
    assert caught.value.api_error.error is Errors.INVALID_REPLICATION_FACTOR


def _two_topics(partitions_each: int):  # noqa: ANN202
    image, _ = with_brokers(bootstrap(), 2)
    for name in ("a", "b"):
        image = with_topic(image, name, assignment=tuple((1, 2) for _ in range(partitions_each)))
    return image


def test_a_reassignment_past_the_limit_starts_the_partitions_before_it_and_fails_the_rest() -> None:
    # Kafka's BoundedList throws inside alterPartitionReassignments' per-partition try
    # (RCM:1971-1996): the partitions whose record no longer fits fail with UNKNOWN_SERVER_ERROR
    # and no message, the ones before them start in the same atomic batch.
    image = _two_topics(LIMIT // 2 + 1)
    targets = [ReassignmentTarget(name, p, (2, 1)) for name in ("a", "b") for p in range(LIMIT // 2 + 1)]
    result = Controller(image).reassignment.alter_partition_reassignments(targets)
    errors = [r.error for r in result.response]
    assert [e.error for e in errors[:LIMIT]] == [Errors.NONE] * LIMIT
    assert [(e.error, e.message) for e in errors[LIMIT:]] == [(Errors.UNKNOWN_SERVER_ERROR, None)] * 2
    assert sum(1 for r in result.records if type(r).__name__ == "PartitionChangeRecord") == LIMIT
    # What counts is the records: targets that change nothing write none (as in Kafka), so
    # they succeed past the limit too.
    unchanged = [ReassignmentTarget(name, p, (1, 2)) for name in ("a", "b") for p in range(LIMIT // 2 + 1)]
    assert Controller(image).reassignment.alter_partition_reassignments(unchanged).records == ()
    mixed = targets[:LIMIT] + unchanged[LIMIT:]
    assert all(r.error.error is Errors.NONE for r in Controller(image).reassignment.alter_partition_reassignments(mixed).response)


def test_a_preferred_election_of_more_partitions_than_the_limit_is_refused() -> None:
    image, _ = with_brokers(bootstrap(), 2)
    # Broker 2 leads every partition whose preferred leader, broker 1, is in sync: every one needs an election.
    topic_id = "cJ3rE4bvQc2w5Y0kT1q9Zg"
    image = replay_all(image, [TopicRecord(name="a", topic_id=topic_id)] + [
        PartitionRecord(partition_id=p, topic_id=topic_id, replicas=(1, 2), isr=(1, 2), leader=2, directories=(DirectoryId.UNASSIGNED,) * 2)
        for p in range(LIMIT + 2)
    ])
    message = _refused(lambda: Controller(image).replication.elect_leaders(Election.PREFERRED, None))
    assert f"Electing leaders for {LIMIT + 2} partitions needs more than {LIMIT} records" in message
    few = [("a", p) for p in range(LIMIT)]
    assert len(Controller(image).replication.elect_leaders(Election.PREFERRED, few).records) == LIMIT
