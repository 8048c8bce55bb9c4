"""What an operator types for the cluster-state commands, read into requests (tools/cluster/requests.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kjbod.controller.replication_control import PartitionImpact
from kjbod.errors import UserError
from kjbod.tools.cluster.requests import (
    impact_lines,
    parse_assignment,
    parse_config,
    parse_directory_spec,
    parse_feature_range,
    parse_replica_assignment,
    read_election_file,
)


def message(function, *args: object) -> str:  # type: ignore[no-untyped-def]
    with pytest.raises(UserError) as caught:
        function(*args)
    return caught.value.message


def test_replica_assignment_is_kafka_topics_syntax_with_its_messages() -> None:
    assert parse_replica_assignment("1:2:3, 2:3:1") == ((1, 2, 3), (2, 3, 1))
    assert message(parse_replica_assignment, "1:x") == 'For input string: "x" (in --replica-assignment)'
    assert message(parse_replica_assignment, "1:1:2") == "Partition replica lists may not contain duplicate entries: 1"
    assert message(parse_replica_assignment, "1:2,3") == "Partition 1 has different replication factor: 3"


@given(st.lists(st.lists(st.integers(0, 10_000), min_size=3, max_size=3, unique=True), min_size=1, max_size=20))
def test_any_well_formed_assignment_reads_back(partitions: list[list[int]]) -> None:
    text = ",".join(":".join(map(str, brokers)) for brokers in partitions)
    assert parse_replica_assignment(text) == tuple(tuple(brokers) for brokers in partitions)


def test_directory_specs_and_feature_ranges() -> None:
    assert parse_directory_spec("/mnt/d=1=ZNJ-ywU0nnQwRv5eRRU9ow") == ("/mnt/d=1", "ZNJ-ywU0nnQwRv5eRRU9ow")
    assert message(parse_directory_spec, "/mnt/d1").startswith("Invalid --dir '/mnt/d1': expected PATH=DIRECTORY_ID")
    assert parse_feature_range("metadata.version=7-30") == ("metadata.version", (7, 30))
    assert parse_feature_range("kraft.version=1") == ("kraft.version", (1, 1))
    assert message(parse_feature_range, "group.version=2-1") == "Invalid --supported-feature 'group.version=2-1': need 0 <= MIN <= MAX"


def test_configs_and_directory_assignments() -> None:
    assert parse_config(" retention.ms = 1000 ") == ("retention.ms", "1000")
    assert parse_assignment("orders:3=/mnt/d1") == ("orders", 3, "/mnt/d1")
    assert parse_assignment("a:b:0=/d") == ("a:b", 0, "/d")
    assert message(parse_assignment, "orders:x=/mnt/d1") == "Invalid partition in --assign 'orders:x=/mnt/d1' 'x': expected an integer"


def test_election_files_read_as_kafka_leader_election_does(tmp_path: Path) -> None:
    path = tmp_path / "election.json"
    path.write_text(json.dumps({"partitions": [{"topic": "a", "partition": 1}, {"topic": "b", "partition": 0}]}))
    assert read_election_file(path) == [("a", 1), ("b", 0)]
    path.write_text(json.dumps({"partitions": [{"topic": "a", "partition": 1}, {"topic": "a", "partition": 1}]}))
    assert message(read_election_file, path) == "Replica election data contains duplicate partitions: [a-1]"
    path.write_text("{}")
    assert message(read_election_file, path) == "Replica election data is empty"


def test_impact_lines_say_what_changed() -> None:
    moved = PartitionImpact("orders", 0, 1, 2, (1, 2), (2,), ("d1", "d2"), ("d1", "d2"))
    bumped = PartitionImpact("orders", 1, 3, 3, (3,), (3,), ("d1",), ("d2",))
    assert impact_lines([moved, bumped]) == [
        "  orders-0: leader 1 -> 2, ISR 1,2 -> 2",
        "  orders-1: directories changed",
    ]


def test_an_isr_that_became_empty_reads_none_as_the_leader_does() -> None:
    emptied = PartitionImpact("orders", 2, 1, -1, (1,), (), ("d1",), ("d1",))
    assert impact_lines([emptied]) == ["  orders-2: leader 1 -> none, ISR 1 -> none (offline: no leader)"]
