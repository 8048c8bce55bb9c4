"""kafka-reassign-partitions' formats, validation messages and AdminUtils (reference §1.4-§1.6,
§1.11, §2, §8), without a cluster state."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kjbod.common.jackson import read_json_fast, read_json_tree
from kjbod.errors import UserError
from kjbod.tools.reassign.json_format import (
    ReassignmentPlan,
    _parse,
    parse_reassignment_json,
)

LOCATION = " at [Source: REDACTED (`StreamReadFeature.INCLUDE_SOURCE_IN_LOCATION` disabled); line: {}, column: {}]"


def error_of(call, *args) -> str:
    with pytest.raises(UserError) as caught:
        call(*args)
    return caught.value.message


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


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=4), children, max_size=4),
    max_leaves=12,
)


@settings(max_examples=300, deadline=None)
@given(json_values)
def test_the_fast_reader_gives_the_standard_tree_up_to_64_bit_integers(value: object) -> None:
    text = json.dumps(value)
    fast = read_json_fast(text)
    if "e" not in text.lower() and not any(len(d) >= 19 for d in text.replace("-", " ").split()):
        assert fast is None or repr(fast) == repr(read_json_tree(text))


entry_values = st.fixed_dictionaries(
    {"topic": st.one_of(st.text(max_size=3), st.integers()), "partition": st.one_of(st.integers(-5, 5), st.integers(), st.text(max_size=2))},
    optional={
        "replicas": st.lists(st.one_of(st.integers(-3, 5), st.integers(), st.booleans(), st.text(max_size=1)), max_size=3),
        "log_dirs": st.lists(st.one_of(st.sampled_from(["any", "/d1"]), st.integers()), max_size=3),
    },
)


@settings(max_examples=400, deadline=None)
@given(st.lists(entry_values, max_size=4), st.sampled_from([None, 1, 2, "1", 10**20]))
def test_a_plan_read_the_fast_way_is_the_plan_kafkas_accessors_read(entries: list, version: object) -> None:
    document: dict = {"partitions": entries}
    if version is not None:
        document["version"] = version
    text = json.dumps(document)
    try:
        expected: object = _parse(text)
    except UserError as exc:
        expected = exc.message
    try:
        found: object = parse_reassignment_json(text)
    except UserError as exc:
        found = exc.message
    assert found == expected
