"""kafka-reassign-partitions' formats, validation messages and AdminUtils (reference §1.4-§1.6,
§1.11, §2, §8), without a cluster state."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kjbod.common.java import JavaRandom
from kjbod.controller.reassignment_control import OngoingReassignment
from kjbod.errors import UserError
from kjbod.reassign_tool import (
    AssignmentError,
    BrokerMetadata,
    PlanEntry,
    ReassignmentPlan,
    assign_replicas_to_brokers,
    calculate_assignment,
    follower_throttles,
    format_reassignment_json,
    java_double,
    java_set_order,
    leader_throttles,
    parse_broker_list,
    parse_long_option,
    parse_reassignment_json,
    parse_topics_json,
    presized_capacity,
    proposed_move_map,
    rack_alternated_brokers,
    tp_hash,
    validate_execute_plan,
)

LOCATION = " at [Source: REDACTED (`StreamReadFeature.INCLUDE_SOURCE_IN_LOCATION` disabled); line: {}, column: {}]"


def error_of(call, *args) -> str:
    with pytest.raises(UserError) as caught:
        call(*args)
    return caught.value.message


# The reassignment file (§1.4) -----------------------------------------------------------------


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


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{x}", "Unexpected character ('x' (code 120)): was expecting double-quote to start field name" + LOCATION.format(1, 3)),
        ('{"a" 1}', "Unexpected character ('1' (code 49)): was expecting a colon to separate field name and value" + LOCATION.format(1, 7)),
        ('[1 2]', "Unexpected character ('2' (code 50)): was expecting comma to separate Array entries" + LOCATION.format(1, 5)),
        (
            "[1,]",
            "Unexpected character (']' (code 93)): expected a valid value (JSON String, Number, Array, Object or token "
            "'null', 'true' or 'false')" + LOCATION.format(1, 5),
        ),
        (
            "nope",
            "Unrecognized token 'nope': was expecting (JSON String, Number, Array, Object or token 'null', 'true' or 'false')"
            + LOCATION.format(1, 5),
        ),
        ('{"version":1', "Unexpected end-of-input: expected close marker for Object" + LOCATION.format(1, 13)),
    ],
)
def test_syntax_errors_read_like_jacksons(text: str, message: str) -> None:
    assert error_of(parse_reassignment_json, text) == f"Error: {message}"


def test_jackson_ignores_what_follows_the_first_value() -> None:
    # readTree stops after the first value (FAIL_ON_TRAILING_TOKENS is off); Python's json would refuse.
    assert parse_reassignment_json('{"partitions":[]} {"and":"more"') == ReassignmentPlan((), {})


@given(st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
                    lambda inner: st.lists(inner) | st.dictionaries(st.text(), inner), max_leaves=10))
def test_any_json_value_is_read_or_refused_with_one_line(value: object) -> None:
    try:
        parse_reassignment_json(json.dumps(value))
    except UserError as exc:
        assert exc.message.startswith("Error: ") and "\n" not in exc.message


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


# --execute's own checks ------------------------------------------------------------------------


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


def test_java_hash_set_orders() -> None:
    # Checked on a JVM (reference §8).
    assert java_set_order([17, 3, 100, 16, 0], int) == [16, 0, 17, 3, 100]
    # `new HashSet<>(collection)` starts pre-sized: 12 elements get 32 buckets, so 17 no longer shares 1's.
    assert presized_capacity(12) == 32 and presized_capacity(3) == 16
    assert java_set_order([17, 1], int, 32) == [1, 17] and java_set_order([17, 1], int) == [17, 1]
    assert tp_hash(("foo", 0)) == 31 * 31 + 101574


# The topics file and the broker list (§1.4) -------------------------------------------------------


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


def test_long_options() -> None:
    assert parse_long_option("50000000", "throttle") == 50_000_000 and parse_long_option("-1", "throttle") == -1
    assert error_of(parse_long_option, "50MB", "throttle") == "Cannot parse argument '50MB' of option throttle"


def test_java_double_text() -> None:
    assert [java_double(v) for v in (1.0, 0.5, 1e10, 1.5e-5, 1234567.0, 12345678.0, -2e7)] == [
        "1.0", "0.5", "1.0E10", "1.5E-5", "1234567.0", "1.2345678E7", "-2.0E7",
    ]


# AdminUtils (§2) --------------------------------------------------------------------------------

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


def test_calculate_assignment_gives_each_topic_its_own_draws_in_hashmap_order() -> None:
    current = {("foo", 0): [1, 2], ("foo", 1): [2, 1], ("bar", 0): [1, 2, 3]}
    brokers = [BrokerMetadata(b) for b in (1, 2, 3)]
    proposed = calculate_assignment(current, brokers, JavaRandom(5))
    # A HashMap<String> iterates "bar" before "foo": bar draws first from the shared Random.
    rng = JavaRandom(5)
    bar = assign_replicas_to_brokers(brokers, 1, 3, rng=rng)
    foo = assign_replicas_to_brokers(brokers, 2, 2, rng=rng)
    assert proposed == {("bar", 0): bar[0], ("foo", 0): foo[0], ("foo", 1): foo[1]}


# Throttle values (§1.11) ---------------------------------------------------------------------------


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
    from kjbod.reassign_tool import generate

    from .controller.support import apply, bootstrap, new_dir, registration

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
