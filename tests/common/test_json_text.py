"""indented_json writes what json.dumps(indent=2, ensure_ascii=False) writes, whatever the value."""

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from kjbod.common.json_text import _plain, indented_json

scalars = st.none() | st.booleans() | st.integers() | st.text() | st.floats(allow_nan=True, allow_infinity=True)
documents = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=5) | st.tuples(inner, inner) | st.dictionaries(st.text(max_size=8), inner, max_size=5),
    max_leaves=30,
)


@settings(max_examples=300)
@given(documents)
def test_same_text_as_the_standard_library(value: object) -> None:
    assert indented_json(value) == json.dumps(value, indent=2, ensure_ascii=False)


def test_control_characters_surrogates_and_big_ints_come_out_as_json_writes_them() -> None:
    for value in [{"a": "\x00\x1f\x7f\u2028"}, ["\ud800"], {"n": 2**70}, {"n": -(2**63) - 1}, [1.0, 1e16], {"e": [], "d": {}}]:
        assert indented_json(value) == json.dumps(value, indent=2, ensure_ascii=False)


def test_a_document_with_a_float_or_a_non_string_key_is_not_plain() -> None:
    assert _plain({"a": ["x", 1, True, None], "b": {"c": ()}})
    assert not _plain({"a": [1, 2.5]})
    assert not _plain({1: "a"})


def test_a_dataclass_becomes_its_fields_in_order_named_in_camel_case() -> None:
    from dataclasses import dataclass

    from kjbod.common.json_text import camel_json

    @dataclass
    class Row:
        broker: int
        bytes_moved_between_brokers: int
        usage_percent: float | None

    assert list(camel_json(Row(1, 2, None)).items()) == [("broker", 1), ("bytesMovedBetweenBrokers", 2), ("usagePercent", None)]
