"""PartitionChangeBuilder (controller reference §7), step by step."""

from __future__ import annotations

from kjbod.common.kafka_uuid import DirectoryId
from kjbod.common.versions import metadata_version_for_level
from kjbod.controller.partition_change import Election, PartitionChangeBuilder
from kjbod.image import PartitionRegistration

T = "cJ3rE4bvQc2w5Y0kT1q9Zg"
D = {1: "ZNJ-ywU0nnQwRv5eRRU9ow", 2: "XcZZOzUqS4yHOjhMQB6JLQ", 3: "AAAAAAAAAAAAAAAAAAAAZA", 4: "AAAAAAAAAAAAAAAAAAAAZQ"}
MV = metadata_version_for_level(30)


def partition(replicas=(1, 2, 3), isr=(1, 2, 3), leader=1, removing=(), adding=(), lrs=0) -> PartitionRegistration:  # noqa: ANN001
    return PartitionRegistration(
        tuple(replicas), tuple(D[r] for r in replicas), tuple(isr), tuple(removing), tuple(adding), (), (), leader, lrs, 5, 9
    )


def builder(p: PartitionRegistration, accept=lambda r: True, mv=MV) -> PartitionChangeBuilder:  # noqa: ANN001
    return PartitionChangeBuilder(p, T, 0, accept, mv, default_dir=lambda b: DirectoryId.UNASSIGNED)


def test_nothing_to_change_is_no_record() -> None:
    assert builder(partition()).build() is None


def test_online_election_keeps_a_valid_leader_and_replaces_an_invalid_one() -> None:
    assert builder(partition()).set_target_isr([1, 2]).build().leader == -2
    record = builder(partition(), accept=lambda r: r != 1).set_target_isr([2, 3]).build()
    assert (record.leader, record.isr) == (2, (2, 3))


def test_preferred_election_prefers_the_first_replica() -> None:
    record = builder(partition(leader=2)).set_election(Election.PREFERRED).build()
    assert record.leader == 1
    # The first replica out of the ISR: keep the current leader.
    assert builder(partition(isr=(2, 3), leader=2)).set_election(Election.PREFERRED).build() is None


def test_a_reassignment_completes_once_the_new_replicas_are_in_sync() -> None:
    p = partition(replicas=(4, 2, 3, 1), isr=(1, 2, 3), leader=1, removing=(1,), adding=(4,))
    assert builder(p).build() is None  # 4 is not in the ISR yet
    record = builder(p).set_target_isr([1, 2, 3, 4]).build()
    assert record.replicas == (4, 2, 3) and record.isr == (2, 3, 4)
    assert record.removing_replicas == () and record.adding_replicas == ()
    assert record.leader == 4  # the old leader was removed; the new first in-sync replica leads
    assert record.directories == (D[4], D[2], D[3])  # directories travel with their brokers


def test_removing_a_replica_bumps_the_leader_epoch_even_with_the_same_leader() -> None:
    record = builder(partition()).set_target_replicas([1, 2]).set_target_isr([1, 2]).build()
    assert record.leader == 1 and record.replicas == (1, 2)


def test_new_replicas_get_the_default_directory() -> None:
    record = builder(partition()).set_target_replicas([1, 2, 3, 4]).build()
    assert record.directories == (D[1], D[2], D[3], DirectoryId.UNASSIGNED)


def test_before_3_6_an_isr_shrink_bumps_the_leader_epoch() -> None:
    old = metadata_version_for_level(11)
    record = builder(partition(), mv=old).set_target_isr([1, 2]).build()
    assert (record.leader, record.version) == (1, 0)
    assert builder(partition()).set_target_isr([1, 2]).build().leader == -2


def test_unclean_election_resets_the_isr_and_starts_recovering() -> None:
    p = partition(isr=(1,), leader=-1)
    record = builder(p, accept=lambda r: r == 3).set_election(Election.UNCLEAN).build()
    assert (record.leader, record.isr, record.leader_recovery_state) == (3, (3,), 1)
    assert builder(p, accept=lambda r: r == 3).build() is None  # an online election stays leaderless


def test_the_isr_never_becomes_empty_without_elr() -> None:
    record = builder(partition(isr=(1,)), accept=lambda r: False).set_target_isr([]).build()
    assert record.leader == -1 and record.isr is None


def test_directory_change_alone() -> None:
    record = builder(partition()).set_directory(2, D[4]).build()
    assert record.directories == (D[1], D[4], D[3]) and record.leader == -2 and record.isr is None
