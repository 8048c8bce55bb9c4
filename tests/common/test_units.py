"""Byte counts and throttle rates as operators write them (kjbod/common/units.py)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kjbod.common.units import parse_bytes, parse_rate
from kjbod.errors import UserError

LONG = st.integers(min_value=-(2**63), max_value=2**63 - 1)


def message(function, *args: str) -> str:  # type: ignore[no-untyped-def]
    with pytest.raises(UserError) as caught:
        function(*args)
    return caught.value.message


def test_byte_counts_take_decimal_and_binary_units_exactly() -> None:
    assert parse_bytes("500GB", "--bytes") == 500 * 10**9
    assert parse_bytes("1.5TiB", "--bytes") == 3 << 39
    assert parse_bytes("0.1KB", "--bytes") == 100
    # A plain count comes back as written, even where a float would round it.
    assert parse_bytes("9007199254740993", "--bytes") == 9007199254740993
    assert parse_bytes(str(2**63 - 1), "--bytes") == 2**63 - 1
    assert message(parse_bytes, "10000PB", "--bytes") == "Invalid --bytes '10000PB': at most 9223372036854775807 bytes (8 EiB)"
    assert message(parse_bytes, "-5", "--bytes") == "Invalid --bytes '-5': give bytes, optionally with a unit (500GB, 1.5TiB)"


def test_throttles_take_units_and_keep_kafkas_plain_longs() -> None:
    assert parse_rate("50MiB", "throttle") == 50 * 2**20
    assert parse_rate("50MB", "throttle") == 50_000_000
    assert parse_rate("50mb/s", "throttle") == 50_000_000
    # Kafka's own values: a plain long, a negative one meaning no throttle.
    assert parse_rate("-1", "throttle") == -1
    assert parse_rate(" 52428800 ", "throttle") == 52428800
    # Anything else gets joptsimple's message for a Long option, as kafka-reassign-partitions prints it.
    for bad in ("lots", "50XB", "-5MB", "9223372036854775808", "50MB/s/s"):
        assert message(parse_rate, bad, "throttle") == f"Cannot parse argument '{bad}' of option throttle"


@given(LONG)
def test_every_java_long_is_taken_as_it_is(value: int) -> None:
    assert parse_rate(str(value), "throttle") == value


@given(st.integers(min_value=0, max_value=2**20), st.sampled_from(["KB", "MB", "GB", "KiB", "MiB", "GiB"]))
def test_a_whole_number_with_a_unit_is_that_many_units(count: int, unit: str) -> None:
    scale = {"KB": 10**3, "MB": 10**6, "GB": 10**9, "KiB": 2**10, "MiB": 2**20, "GiB": 2**30}[unit]
    assert parse_rate(f"{count}{unit}", "throttle") == parse_bytes(f"{count}{unit}", "--bytes") == count * scale
