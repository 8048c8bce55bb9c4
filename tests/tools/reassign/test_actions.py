"""kafka-reassign-partitions' formats, validation messages and AdminUtils (reference §1.4-§1.6,
§1.11, §2, §8), without a cluster state."""

from __future__ import annotations


import json

import pytest

from kjbod.common.java import JavaRandom
from kjbod.controller.reassignment_control import OngoingReassignment
from kjbod.errors import UserError
from kjbod.tools.reassign.actions import calculate_assignment, follower_throttles, leader_throttles, proposed_move_map
from kjbod.tools.reassign.assignment import (
    assign_replicas_to_brokers,
    BrokerMetadata,
)
from kjbod.tools.reassign.json_format import (
    format_reassignment_json,
)

LOCATION = " at [Source: REDACTED (`StreamReadFeature.INCLUDE_SOURCE_IN_LOCATION` disabled); line: {}, column: {}]"


KIP36_RACKS = {0: "rack1", 1: "rack3", 2: "rack3", 3: "rack2", 4: "rack2", 5: "rack1"}


def test_calculate_assignment_gives_each_topic_its_own_draws_in_hashmap_order() -> None:
    current = {("foo", 0): [1, 2], ("foo", 1): [2, 1], ("bar", 0): [1, 2, 3]}
    brokers = [BrokerMetadata(b) for b in (1, 2, 3)]
    proposed = calculate_assignment(current, brokers, JavaRandom(5))
    # A HashMap<String> iterates "bar" before "foo": bar draws first from the shared Random.
    rng = JavaRandom(5)
    bar = assign_replicas_to_brokers(brokers, 1, 3, rng=rng)
    foo = assign_replicas_to_brokers(brokers, 2, 2, rng=rng)
    assert proposed == {("bar", 0): bar[0], ("foo", 0): foo[0], ("foo", 1): foo[1]}


def test_throttle_values_sort_as_strings_and_skip_sources() -> None:
    current = {("foo", 2): [1, 2], ("foo", 10): [1, 3]}
    proposed = {("foo", 2): [2, 4], ("foo", 10): [3, 4]}
    moves = proposed_move_map([], proposed, current)
    assert leader_throttles(moves) == {"foo": "10:1,10:3,2:1,2:2"}
    assert follower_throttles(moves) == {"foo": "10:4,2:4"}


def test_a_running_reassignment_keeps_its_sources_and_joins_the_throttles() -> None:
    running = [OngoingReassignment("foo", 0, (2, 3, 0, 1), (2, 3), (0, 1)), OngoingReassignment("bar", 0, (5, 4), (5,), (4,))]
    moves = proposed_move_map(running, {("foo", 0): [3, 1]}, {("foo", 0): [2, 3, 0, 1]})
    # foo-0's sources stay 0,1 (the replicas minus adding); destinations are the new target minus them.
    assert leader_throttles(moves) == {"foo": "0:0,0:1", "bar": "0:4"}
    assert follower_throttles(moves) == {"foo": "0:3", "bar": "0:5"}
    # Nothing to fetch gives an empty follower value.
    assert follower_throttles(proposed_move_map([], {("t", 0): [1]}, {("t", 0): [1, 2]})) == {"t": ""}
    with pytest.raises(UserError, match="Trying to reassign a topic partition t-0 with 0 replicas"):
        proposed_move_map([], {("t", 0): [1]}, {})


def test_kip36_worked_example_through_generate_with_a_fixed_start() -> None:
    from kjbod.controller import Controller
    from kjbod.controller.replication_control import (
        CreateTopicRequest,
        HeartbeatRequest,
    )
    from kjbod.tools.reassign.actions import generate

    from tests.controller.support import apply, bootstrap, new_dir, registration

    image = bootstrap()
    for broker, rack in KIP36_RACKS.items():
        image = apply(image, Controller(image).cluster.register_broker(registration(broker, [new_dir()], rack)))
        image = apply(image, Controller(image).replication.heartbeat(HeartbeatRequest(broker)))
    for name, partitions in (("six", 6), ("twelve", 12)):
        image = apply(image, Controller(image).replication.create_topic(CreateTopicRequest(name, partitions, 3, seed=1)))
    report = generate(image, '{"topics":[{"topic":"six"},{"topic":"twelve"}]}', "0,1,2,3,4,5", fixed_start_index=0)
    proposed = {(p["topic"], p["partition"]): p["replicas"] for p in report.data["proposed"]["partitions"]}
    first_round = [[0, 3, 1], [3, 1, 5], [1, 5, 4], [5, 4, 2], [4, 2, 0], [2, 0, 3]]
    second_round = [[0, 4, 2], [3, 2, 0], [1, 0, 3], [5, 3, 1], [4, 1, 5], [2, 5, 4]]
    assert [proposed[("six", p)] for p in range(6)] == first_round
    assert [proposed[("twelve", p)] for p in range(12)] == first_round + second_round
    assert report.lines[3] == "Proposed partition reassignment configuration"
    assert report.lines[4] == format_reassignment_json(proposed)


def test_verify_lists_replica_moves_by_broker_then_topic_then_partition() -> None:
    """ReassignPartitionsCommand.compareTopicPartitionReplicas (:252): broker id, then topic by
    String.compareTo (upper case first), then partition as a number (2 before 10)."""
    from kjbod.controller import Controller
    from kjbod.tools.reassign.actions import verify
    from kjbod.tools.reassign.json_format import parse_reassignment_json

    from tests.controller.support import bootstrap, with_brokers, with_topic

    image, _ = with_brokers(bootstrap(), 3, dirs_each=2)
    for name in ("b", "B", "a"):
        image = with_topic(image, name, partitions=11, rf=3)
    chosen = [("b", 1), ("a", 10), ("B", 0), ("a", 2)]
    entries = []
    for topic, partition in chosen:
        replicas = list(image.topics.by_name[topic].partitions[partition].replicas)
        entries.append({"topic": topic, "partition": partition, "replicas": replicas, "log_dirs": [f"/data/b{r}/d1" for r in replicas]})
    plan = parse_reassignment_json(json.dumps({"version": 1, "partitions": entries}))
    report = verify(Controller(image), plan).response
    # Every replica is still UNASSIGNED (two directories each), so each is "not found".
    moves = [line for line in report.lines if line.startswith("Partition ")]
    expected = [
        (broker, topic, partition)
        for broker in (1, 2, 3)
        for topic, partition in (("B", 0), ("a", 2), ("a", 10), ("b", 1))
    ]
    assert moves == [
        f"Partition {t}-{p} is not found in any live log dir on broker {b}. There is likely an offline log directory on the broker."
        for b, t, p in expected
    ]
    assert [(r["broker"], r["topic"], r["partition"]) for r in report.data["replicaLogDirs"]] == expected
    assert report.data["done"] is False
