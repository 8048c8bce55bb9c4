"""kafka-reassign-partitions' formats, validation messages and AdminUtils (reference §1.4-§1.6,
§1.11, §2, §8), without a cluster state."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kjbod.errors import UserError
from kjbod.tools.reassign.json_format import (
    format_reassignment_json,
    parse_broker_list,
    parse_reassignment_json,
    parse_topics_json,
    PlanEntry,
    ReassignmentPlan,
    validate_execute_plan,
)

LOCATION = " at [Source: REDACTED (`StreamReadFeature.INCLUDE_SOURCE_IN_LOCATION` disabled); line: {}, column: {}]"


def error_of(call, *args) -> str:
    with pytest.raises(UserError) as caught:
        call(*args)
    return caught.value.message


def test_a_file_with_log_dirs_reads_as_kafka_does() -> None:
    plan = parse_reassignment_json(
        '{"version":1,"partitions":[{"topic":"foo","partition":1,"replicas":[1,2,3],"log_dirs":["/d1","any","/d3"]},'
        '{"topic":"bar","partition":0,"replicas":[4],"log_dirs":["/x"]},'
        '{"topic":"foo","partition":1,"replicas":[3],"log_dirs":["/d9"]}]}'
    )
    assert plan.entries == (
        PlanEntry("foo", 1, (1, 2, 3), ("/d1", "any", "/d3")),
        PlanEntry("bar", 0, (4,), ("/x",)),
        PlanEntry("foo", 1, (3,), ("/d9",)),  # duplicates are kept, so --execute can report them
    )
    # "any" means no move; a later entry for the same replica wins.
    assert plan.replica_dirs == {("foo", 1, 1): "/d1", ("foo", 1, 3): "/d9", ("bar", 0, 4): "/x"}
    assert plan.targets() == {("foo", 1): (3,), ("bar", 0): (4,)}


def test_version_partitions_and_log_dirs_are_optional() -> None:
    assert parse_reassignment_json("{}") == ReassignmentPlan((), {})
    plan = parse_reassignment_json('{"partitions":[{"topic":"t","partition":0,"replicas":[1,2]}]}')
    assert plan.entries == (PlanEntry("t", 0, (1, 2), ("any", "any")),) and plan.replica_dirs == {}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "The input string shouldn't be empty"),
        ("   ", "Expected JSON object, received "),
        ("[1,2]", "Expected JSON object, received [1,2]"),
        ('"x"', 'Expected JSON object, received "x"'),
        ('{"version":2}', "Not supported version field value 2"),
        ('{"version":"1"}', 'Expected `Integer` value, received "1"'),
        ('{"version":1.0}', "Expected `Integer` value, received 1.0"),
        ('{"version":1e10}', "Expected `Integer` value, received 1.0E10"),
        ('{"version":true}', "Expected `Integer` value, received true"),
        ('{"version":null}', "Expected `Integer` value, received null"),
        ('{"partitions":{"a":1}}', 'Expected JSON array, received {"a":1}'),
        ('{"partitions":[7]}', "Expected JSON object, received 7"),
        ('{"partitions":[{"partition":0,"replicas":[1]}]}', "No such field exists: `topic`"),
        ('{"partitions":[{"topic":1,"partition":0,"replicas":[1]}]}', "Expected `String` value, received 1"),
        ('{"partitions":[{"topic":"t","replicas":[1]}]}', "No such field exists: `partition`"),
        ('{"partitions":[{"topic":"t","partition":1.0,"replicas":[1]}]}', "Expected `Integer` value, received 1.0"),
        ('{"partitions":[{"topic":"t","partition":3000000000,"replicas":[1]}]}', "Expected `Integer` value, received 3000000000"),
        ('{"partitions":[{"topic":"t","partition":false,"replicas":[1]}]}', "Expected `Integer` value, received false"),
        ('{"partitions":[{"topic":"t","partition":0}]}', "No such field exists: `replicas`"),
        ('{"partitions":[{"topic":"t","partition":0,"replicas":"1,2"}]}', 'Expected `JSON array` value, received "1,2"'),
        ('{"partitions":[{"topic":"t","partition":0,"replicas":[1,"2"]}]}', 'Expected `Integer` value, received "2"'),
        ('{"partitions":[{"topic":"t","partition":0,"replicas":[1],"log_dirs":null}]}', "Expected `JSON array` value, received null"),
        ('{"partitions":[{"topic":"t","partition":0,"replicas":[1],"log_dirs":[1]}]}', "Expected `String` value, received 1"),
        (
            '{"partitions":[{"topic":"foo","partition":0,"replicas":[1,2],"log_dirs":["any"]}]}',
            "Size of replicas list [1, 2] is different from size of log dirs list [any] for partition foo-0",
        ),
        ('{"a":NaN}', "Non-standard token 'NaN': enable `JsonReadFeature.ALLOW_NON_NUMERIC_NUMBERS` to allow"),
        ('{"a":-Infinity}', "Non-standard token '-Infinity': enable `JsonReadFeature.ALLOW_NON_NUMERIC_NUMBERS` to allow"),
    ],
)
def test_each_malformed_file_gets_kafkas_message(text: str, message: str) -> None:
    assert error_of(parse_reassignment_json, text) == f"Error: {message}"


plans = st.lists(
    st.tuples(
        st.text(alphabet="abcxyz._-", min_size=1, max_size=5),
        st.integers(0, 50),
        st.lists(st.integers(0, 9), min_size=1, max_size=4, unique=True),
    ),
    max_size=8,
    unique_by=lambda e: (e[0], e[1]),
)


@given(plans)
def test_what_kjbod_writes_reads_back(entries: list) -> None:
    assignment = {(topic, partition): replicas for topic, partition, replicas in entries}
    plan = parse_reassignment_json(format_reassignment_json(assignment))
    assert plan.targets() == {tp: tuple(r) for tp, r in assignment.items()} and plan.replica_dirs == {}


def test_output_json_is_compact_sorted_and_always_has_log_dirs() -> None:
    # RUT:451-459
    text = format_reassignment_json({("foo", 1): [4, 5, 6], ("bar", 0): [7, 8]})
    assert text == (
        '{"version":1,"partitions":[{"topic":"bar","partition":0,"replicas":[7,8],"log_dirs":["any","any"]},'
        '{"topic":"foo","partition":1,"replicas":[4,5,6],"log_dirs":["any","any","any"]}]}'
    )
    assert format_reassignment_json({("t", 10): [1], ("t", 2): [1]}).index('"partition":2') < format_reassignment_json({("t", 10): [1], ("t", 2): [1]}).index('"partition":10')


@pytest.mark.parametrize(
    ("partitions", "message"),
    [
        ([], "Partition reassignment list cannot be empty"),
        ([("foo", 0, [1]), ("foo", 1, [])], "Partition replica list cannot be empty"),
        # HashSet<TopicPartition> order: bar-1 hashes to bucket 2, foo-0 to bucket 6.
        ([("foo", 0, [1]), ("bar", 1, [2]), ("foo", 0, [3]), ("bar", 1, [4])], "Partition reassignment contains duplicate topic partitions: bar-1,foo-0"),
        (
            [("foo", 0, [0, 1, 0, 1]), ("baz", 0, [5]), ("bar", 0, [2, 2])],
            "Partition replica lists may not contain duplicate entries: foo-0 contains multiple entries for 0,1. bar-0 contains multiple entries for 2",
        ),
        # A HashSet iterates 17 before 1 (same bucket, inserted first), and 16 before 1.
        ([("foo", 0, [17, 1, 17, 1, 16, 16])], "Partition replica lists may not contain duplicate entries: foo-0 contains multiple entries for 16,17,1"),
    ],
)
def test_execute_checks_in_kafkas_order(partitions: list, message: str) -> None:
    document = {"partitions": [{"topic": t, "partition": p, "replicas": r} for t, p, r in partitions]}
    plan = parse_reassignment_json(json.dumps(document))
    assert error_of(validate_execute_plan, plan) == f"Error: {message}"


@pytest.mark.parametrize(
    ("text", "result"),
    [('{"topics":[{"topic":"foo"},{"topic":"foo1"}],"version":1}', ["foo", "foo1"]), ("{}", []), ('{"partitions":[]}', [])],
)
def test_topics_file(text: str, result: list) -> None:
    assert parse_topics_json(text) == result


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "The input string is not a valid JSON"),
        ("{nope", "The input string is not a valid JSON"),
        ("[]", "Expected JSON object, received []"),
        ('{"version":3,"topics":[]}', "Not supported version field value 3"),
        ('{"topics":[{"name":"foo"}]}', "No such field exists: `topic`"),
        ('{"topics":"foo"}', 'Expected JSON array, received "foo"'),
    ],
)
def test_topics_file_errors(text: str, message: str) -> None:
    assert error_of(parse_topics_json, text) == f"Error: {message}"


@pytest.mark.parametrize(("text", "brokers"), [("1,2,3", [1, 2, 3]), ("1,2,", [1, 2]), ("1,2,,", [1, 2]), ("+4,-1", [4, -1]), (",", [])])
def test_broker_list_splits_as_java(text: str, brokers: list) -> None:
    assert parse_broker_list(text) == brokers


@pytest.mark.parametrize(("text", "piece"), [(",1", ""), ("1, 2", " 2"), ("", ""), ("1,x", "x"), ("2147483648", "2147483648"), ("1_0", "1_0")])
def test_broker_list_number_errors(text: str, piece: str) -> None:
    assert error_of(parse_broker_list, text) == f'Error: For input string: "{piece}"'
