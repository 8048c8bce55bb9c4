"""kafka-reassign-partitions' formats, validation messages and AdminUtils (reference §1.4-§1.6,
§1.11, §2, §8), without a cluster state."""

from __future__ import annotations


import pytest
from hypothesis import given
from hypothesis import strategies as st

from kjbod.common.java import JavaRandom
from kjbod.tools.reassign.assignment import (
    assign_replicas_to_brokers,
    AssignmentError,
    BrokerMetadata,
    rack_alternated_brokers,
)

LOCATION = " at [Source: REDACTED (`StreamReadFeature.INCLUDE_SOURCE_IN_LOCATION` disabled); line: {}, column: {}]"


KIP36_RACKS = {0: "rack1", 1: "rack3", 2: "rack3", 3: "rack2", 4: "rack2", 5: "rack1"}


KIP36_BROKERS = [BrokerMetadata(b, r) for b, r in KIP36_RACKS.items()]


def test_rack_alternated_list() -> None:
    # AU:73-80, ART:34-38
    assert rack_alternated_brokers(KIP36_RACKS) == [0, 3, 1, 5, 4, 2]
    assert rack_alternated_brokers({b: r for b, r in KIP36_RACKS.items() if b != 5}) == [0, 3, 1, 4, 2]


def test_kip36_worked_example_six_partitions() -> None:
    assert assign_replicas_to_brokers(KIP36_BROKERS, 6, 3, fixed_start_index=0) == {
        0: [0, 3, 1], 1: [3, 1, 5], 2: [1, 5, 4], 3: [5, 4, 2], 4: [4, 2, 0], 5: [2, 0, 3],
    }


def test_kip36_worked_example_twelve_partitions_shifts_the_second_round() -> None:
    assignment = assign_replicas_to_brokers(KIP36_BROKERS, 12, 3, fixed_start_index=0)
    assert {p: assignment[p] for p in range(6, 12)} == {
        6: [0, 4, 2], 7: [3, 2, 0], 8: [1, 0, 3], 9: [5, 3, 1], 10: [4, 1, 5], 11: [2, 5, 4],
    }


def test_kip36_uneven_racks_skip_a_used_rack() -> None:
    brokers = [BrokerMetadata(0, "rack1"), BrokerMetadata(1, "rack2"), BrokerMetadata(2, "rack2")]
    assert assign_replicas_to_brokers(brokers, 3, 2, fixed_start_index=0) == {0: [0, 1], 1: [1, 0], 2: [2, 0]}


def test_rack_unaware_assignment() -> None:
    # The classic AdminTest vector: 5 brokers, 10 partitions, RF 3, start 0.
    assert assign_replicas_to_brokers([BrokerMetadata(b) for b in range(5)], 10, 3, fixed_start_index=0) == {
        0: [0, 1, 2], 1: [1, 2, 3], 2: [2, 3, 4], 3: [3, 4, 0], 4: [4, 0, 1],
        5: [0, 2, 3], 6: [1, 3, 4], 7: [2, 4, 0], 8: [3, 0, 1], 9: [4, 1, 2],
    }
    # A start partition that is a multiple of the broker count shifts at once.
    assert assign_replicas_to_brokers([BrokerMetadata(b) for b in range(3)], 1, 2, fixed_start_index=0, start_partition_id=3) == {3: [0, 2]}


def test_random_start_draws_start_then_shift() -> None:
    brokers = [BrokerMetadata(b) for b in range(7)]
    rng = JavaRandom(42)
    start, shift = JavaRandom(42).next_int(7), JavaRandom(42)
    shift.next_int(7)
    expected = assign_replicas_to_brokers(brokers, 9, 3, fixed_start_index=start, fixed_shift=shift.next_int(7))
    assert assign_replicas_to_brokers(brokers, 9, 3, rng=rng) == expected


@pytest.mark.parametrize(
    ("brokers", "partitions", "rf", "message"),
    [
        ([BrokerMetadata(1)], 0, 1, "Number of partitions must be larger than 0."),
        ([BrokerMetadata(1)], 1, 0, "Replication factor must be larger than 0."),
        ([BrokerMetadata(1), BrokerMetadata(2)], 1, 3, "Replication factor: 3 larger than available brokers: 2."),
        ([BrokerMetadata(1, "r"), BrokerMetadata(2)], 1, 1, "Not all brokers have rack information for replica rack aware assignment."),
    ],
)
def test_assignment_errors(brokers: list, partitions: int, rf: int, message: str) -> None:
    with pytest.raises(AssignmentError) as caught:
        assign_replicas_to_brokers(brokers, partitions, rf, fixed_start_index=0)
    assert caught.value.message == f"Error: {message}"


@given(
    st.integers(1, 12).flatmap(lambda n: st.tuples(st.just(n), st.integers(1, n), st.integers(1, 40), st.integers(1, 4), st.integers(0, n - 1)))
)
def test_rack_aware_assignment_properties(case: tuple) -> None:
    brokers_count, rf, partitions, racks, start = case
    brokers = [BrokerMetadata(b, f"r{b % racks}") for b in range(brokers_count)]
    rack_of = {b.id: b.rack for b in brokers}
    for replicas in assign_replicas_to_brokers(brokers, partitions, rf, fixed_start_index=start).values():
        assert len(replicas) == rf == len(set(replicas))
        # As many racks as possible: min(rf, number of racks) distinct racks.
        assert len({rack_of[b] for b in replicas}) == min(rf, len(set(rack_of.values())))
