"""kafka-reassign-partitions' formats, validation messages and AdminUtils (reference §1.4-§1.6,
§1.11, §2, §8), without a cluster state."""

from __future__ import annotations

import pytest

from kjbod.common.java import hashmap_order, java_double, parse_long_option, presized_capacity, tp_hash
from kjbod.errors import UserError

LOCATION = " at [Source: REDACTED (`StreamReadFeature.INCLUDE_SOURCE_IN_LOCATION` disabled); line: {}, column: {}]"


def error_of(call, *args) -> str:
    with pytest.raises(UserError) as caught:
        call(*args)
    return caught.value.message


def test_java_hash_set_orders() -> None:
    # Checked on a JVM (reference §8).
    assert hashmap_order([17, 3, 100, 16, 0], int) == [16, 0, 17, 3, 100]
    # `new HashSet<>(collection)` starts pre-sized: 12 elements get 32 buckets, so 17 no longer shares 1's.
    assert presized_capacity(12) == 32 and presized_capacity(3) == 16
    assert hashmap_order([17, 1], int, 32) == [1, 17] and hashmap_order([17, 1], int) == [17, 1]
    assert tp_hash(("foo", 0)) == 31 * 31 + 101574


def test_long_options() -> None:
    assert parse_long_option("50000000", "throttle") == 50_000_000 and parse_long_option("-1", "throttle") == -1
    assert error_of(parse_long_option, "50MB", "throttle") == "Cannot parse argument '50MB' of option throttle"


def test_java_double_text() -> None:
    assert [java_double(v) for v in (1.0, 0.5, 1e10, 1.5e-5, 1234567.0, 12345678.0, -2e7)] == [
        "1.0", "0.5", "1.0E10", "1.5E-5", "1234567.0", "1.2345678E7", "-2.0E7",
    ]
