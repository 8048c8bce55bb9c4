"""The columns read of a reassignment file (the fast path `reassign check` reads a large plan
with) gives what the field-by-field reading gives: the same plan, or Kafka's same message."""

from __future__ import annotations

import json

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from kjbod.errors import UserError
from kjbod.tools.reassign.json_format import ANY_LOG_DIR, PlanColumns, _parse, parse_reassignment_json

odd_values = st.none() | st.booleans() | st.floats(allow_nan=False) | st.just([]) | st.just({}) | st.just(["x"])
numbers = st.integers(-5, 5) | st.sampled_from([2**31 - 1, 2**31, -(2**31) - 1, 2**63, 2**64 - 1])
topics = st.sampled_from(["a", "b", "t.x", "1"]) | st.integers(0, 2) | odd_values
paths = st.sampled_from([ANY_LOG_DIR, "/d1", "/d2/"]) | odd_values


@st.composite
def entries(draw: st.DrawFn) -> dict:
    replicas = draw(st.lists(numbers | odd_values, max_size=4) if draw(st.booleans()) else st.lists(st.integers(0, 4), max_size=4))
    entry = {"topic": draw(topics), "partition": draw(numbers | odd_values), "replicas": replicas}
    if draw(st.booleans()):
        entry["log_dirs"] = draw(st.lists(paths, min_size=len(replicas), max_size=len(replicas) + draw(st.sampled_from([0, 0, 1]))))
    if draw(st.integers(0, 9)) == 0:
        del entry[draw(st.sampled_from(["topic", "partition", "replicas"]))]
    return entry


def outcome(read, text: str):  # noqa: ANN001, ANN201
    try:
        plan = read(text)
    except UserError as exc:
        return exc.message
    return plan.entries, dict(plan.replica_dirs)


@settings(max_examples=400)
@given(st.lists(entries(), max_size=6))
def test_the_columns_read_gives_the_plan_or_the_message_of_the_field_by_field_read(items: list) -> None:
    text = json.dumps({"version": 1, "partitions": items})
    assert outcome(parse_reassignment_json, text) == outcome(_parse, text)


@settings(max_examples=200)
@given(st.lists(entries(), max_size=6))
def test_columns_made_from_entries_equal_the_columns_read(items: list) -> None:
    text = json.dumps({"version": 1, "partitions": items})
    try:
        plan = parse_reassignment_json(text)
    except UserError:
        return
    read, made = plan.columns, PlanColumns.of_entries(plan.entries)
    assert read.topics == made.topics and read.log_dirs == made.log_dirs
    assert np.array_equal(read.partitions, made.partitions) and np.array_equal(read.starts, made.starts)
    assert np.array_equal(read.brokers, made.brokers)
    assert read.topic_codes[1] == made.topic_codes[1] and np.array_equal(read.topic_codes[0], made.topic_codes[0])
    assert read.path_codes[1] == made.path_codes[1] and np.array_equal(read.path_codes[0], made.path_codes[0])


def test_the_last_entry_of_a_partition_wins_in_the_order_partitions_first_appear() -> None:
    items = [
        {"topic": "b", "partition": 1, "replicas": [1]},
        {"topic": "a", "partition": 0, "replicas": [2]},
        {"topic": "b", "partition": 1, "replicas": [3], "log_dirs": ["/d"]},
        {"topic": "a", "partition": 1, "replicas": [4]},
        {"topic": "a", "partition": 0, "replicas": [5]},
    ]
    plan = parse_reassignment_json(json.dumps({"partitions": items}))
    assert plan.columns.winners.tolist() == [2, 4, 3]
    assert [entry.replicas for entry in plan.last.values()] == [(3,), (5,), (4,)]
    assert plan.columns.explicit_brokers() == {3} and plan.replica_dirs == {("b", 1, 3): "/d"}


def test_values_the_columns_cannot_hold_get_the_field_by_field_message() -> None:
    for text in [
        '{"partitions":[{"topic":"t","partition":0,"replicas":[18446744073709551615]}]}',
        '{"partitions":[{"topic":"t","partition":9223372036854775808,"replicas":[1]}]}',
        '{"partitions":[{"topic":"t","partition":0,"replicas":[2147483648]}]}',
        '{"partitions":[{"topic":["t"],"partition":0,"replicas":[1]}]}',
        '{"partitions":[{"topic":"t","partition":0,"replicas":[1],"log_dirs":[["a"]]}]}',
        '{"partitions":[{"topic":"t","partition":0,"replicas":[true]}]}',
        '{"partitions":[{"topic":true,"partition":0,"replicas":[1]},{"topic":1,"partition":0,"replicas":[1]}]}',
    ]:
        message = outcome(_parse, text)
        assert isinstance(message, str) and outcome(parse_reassignment_json, text) == message
