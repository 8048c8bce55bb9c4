"""The few Java behaviours kjbod must reproduce to give Kafka's exact, seeded results.

`java.util.Random` (the 48-bit LCG and `nextInt(bound)`), `Collections.shuffle`, `String.hashCode`
and the iteration order of a `java.util.HashMap` (storage reference §0.2). Kafka's placer and
its tests draw from these, so a seeded kjbod placement equals Kafka's for the same seed. Kafka's
tools print collections, doubles and TopicPartitions as Java does, parse integers as
`Integer.parseInt` and split as `String.split`; those behaviours live here too.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Hashable, Iterable, MutableSequence, Sequence
from decimal import Decimal
from typing import TypeVar

from kjbod.errors import UserError

T = TypeVar("T")
H = TypeVar("H", bound=Hashable)
INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
_JAVA_INT = re.compile(r"[+-]?\d+")
TopicPartition = tuple[str, int]
Replica = tuple[str, int, int]  # (topic, partition, broker): Kafka's TopicPartitionReplica
_MASK48 = (1 << 48) - 1
_MULTIPLIER = 0x5DEECE66D


def _int32(value: int) -> int:
    value &= 0xFFFFFFFF
    return value - (1 << 32) if value >= 1 << 31 else value


class JavaRandom:
    """`java.util.Random` with a seed."""

    def __init__(self, seed: int) -> None:
        self._seed = (seed ^ _MULTIPLIER) & _MASK48

    def next(self, bits: int) -> int:
        self._seed = (self._seed * _MULTIPLIER + 0xB) & _MASK48
        return _int32(self._seed >> (48 - bits))

    def next_int(self, bound: int) -> int:
        if bound <= 0:
            raise ValueError("bound must be positive")
        r = self.next(31)
        m = bound - 1
        if bound & m == 0:  # a power of two
            return (bound * r) >> 31
        u = r
        while True:
            r = u % bound
            if u - r + m < 1 << 31:  # Java's int arithmetic would not overflow
                return r
            u = self.next(31)


class MockRandom(JavaRandom):
    """Kafka's test RNG (server-common MockRandom): a 64-bit LCG from seed 17."""

    def __init__(self, seed: int = 17) -> None:
        self._state = seed

    def next(self, bits: int) -> int:
        self._state = (self._state * 2862933555777941757 + 3037000493) & ((1 << 64) - 1)
        return _int32(self._state >> (64 - bits))


def shuffle(items: MutableSequence[T], rng: JavaRandom) -> None:
    """`Collections.shuffle(list, rnd)`."""
    for i in range(len(items), 1, -1):
        j = rng.next_int(i)
        items[i - 1], items[j] = items[j], items[i - 1]


def string_hash(text: str) -> int:
    """`String.hashCode` (over UTF-16 code units, int32 arithmetic)."""
    data = text.encode("utf-16-be", "surrogatepass")
    h = 0
    for i in range(0, len(data), 2):
        h = (31 * h + (data[i] << 8 | data[i + 1])) & 0xFFFFFFFF
    return _int32(h)


def hashmap_order(keys: Iterable[H], hash_of: Callable[[H], int], capacity: int = 16) -> list[H]:
    """The order a `java.util.HashMap` (or HashSet) iterates keys inserted in this order, with no
    removals (duplicates ignored). It starts with `capacity` buckets: 16 for `new HashMap<>()`,
    `presized_capacity(n)` for a collection copied from another one."""
    inserted = list(dict.fromkeys(keys))
    while len(inserted) > capacity * 0.75:
        capacity *= 2

    def bucket(key: H) -> int:
        h = hash_of(key) & 0xFFFFFFFF
        return (h ^ (h >> 16)) & (capacity - 1)

    return sorted(inserted, key=bucket)  # a stable sort keeps insertion order within a bucket


def timeline_hash_set_order(keys: Iterable[int]) -> list[int]:
    """The order Kafka's `TimelineHashSet<Integer>` iterates ints added in this order to a set made
    with expected size 0, with no removals (duplicates ignored): BaseHashTable
    (4.3.1 server-common org/apache/kafka/timeline/BaseHashTable.java:45-70, 111-145, 209-216)
    starts at 2 slots, doubles before an add would pass three quarters of them, and puts a key in
    the slot given by the top bits of hashCode * -7046029254386353131 (Fibonacci hashing); a slot
    keeps its keys in insertion order, and a rehash keeps it (a new slot's keys all come from one
    old slot, walked in order). The iterator walks the slots in order and each slot's keys from
    the last (SnapshottableHashTable.CurrentIterator, :141-173: `ready.remove(ready.size() - 1)`).
    Checked against 4.4.0's own TimelineHashSet."""
    inserted = list(dict.fromkeys(keys))
    capacity = 2
    for size in range(len(inserted)):
        if (size + 1) * 0.75 > capacity and capacity < 1 << 30:
            capacity *= 2
    shift = 65 - capacity.bit_length()

    def slot(key: int) -> int:
        return ((_int32(key) * -7046029254386353131) & 0xFFFFFFFFFFFFFFFF) >> shift

    position = {key: index for index, key in enumerate(inserted)}
    return sorted(inserted, key=lambda key: (slot(key), -position[key]))


def presized_capacity(count: int) -> int:
    """The table size of `new HashSet<>(collection)`: max(n / .75 + 1, 16), a power of two."""
    wanted = max(int(count / 0.75) + 1, 16)
    return 1 << (wanted - 1).bit_length()


def hashmap_capacity(count: int) -> int:
    """The table size of `new HashMap<>(count)` after `count` puts: tableSizeFor(count), doubled
    while the entries pass three quarters of it."""
    capacity = 1
    while capacity < count:
        capacity *= 2
    while count > int(capacity * 0.75):
        capacity *= 2
    return capacity


def int_hash(value: int) -> int:
    """`Integer.hashCode`."""
    return value


def java_duplicates(items: Sequence[H], hash_of: Callable[[H], int]) -> list[H]:
    """ToolsUtils.duplicates: each repeated element once, in HashSet order."""
    seen: set[H] = set()
    repeated: list[H] = []
    for item in items:
        if item in seen:
            repeated.append(item)
        seen.add(item)
    return hashmap_order(repeated, hash_of)


def java_string_key(text: str) -> bytes:
    """`String.compareTo` order (UTF-16 code units)."""
    return text.encode("utf-16-be", "surrogatepass")


# Kafka's TopicPartition ---------------------------------------------------------------------------


def tp_key(tp: TopicPartition) -> tuple[bytes, int]:
    """TopicPartition order as Kafka's tools sort it: topic (String.compareTo), then partition."""
    return java_string_key(tp[0]), tp[1]


def tp_text(tp: TopicPartition) -> str:
    """TopicPartition.toString: `topic-partition`."""
    return f"{tp[0]}-{tp[1]}"


def tp_hash(tp: TopicPartition) -> int:
    """TopicPartition.hashCode: 31 * (31 + partition) + topic.hashCode()."""
    return _int32(31 * (31 + tp[1]) + string_hash(tp[0]))


def tpr_hash(replica: Replica) -> int:
    """TopicPartitionReplica.hashCode (4.3.1 clients TopicPartitionReplica.java:52-63)."""
    return _int32(31 * (31 * (31 + string_hash(replica[0])) + replica[1]) + replica[2])


# Printing and parsing as Java does ----------------------------------------------------------------


def kafka_error(message: str) -> UserError:
    """A failure Kafka's tools report as `Error: <message>` (followed by a stack trace kjbod leaves out)."""
    return UserError(f"Error: {message}")


def java_list(items: Iterable[object]) -> str:
    """`List.toString` / `Set.toString`: `[1, 2]`."""
    return "[" + ", ".join(str(i) for i in items) + "]"


def csv(items: Iterable[object]) -> str:
    return ",".join(str(i) for i in items)


def java_double(value: float) -> str:
    """`Double.toString`: plain between 1e-3 and 1e7, else `d.dddE<exp>`."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    if value == 0:
        return "-0.0" if math.copysign(1.0, value) < 0 else "0.0"
    if 1e-3 <= abs(value) < 1e7:
        text = repr(value)
        return text if "." in text or "e" in text else text + ".0"
    sign, digits, exponent = Decimal(repr(value)).as_tuple()
    text = "".join(map(str, digits)).rstrip("0") or "0"
    mantissa = text[0] + "." + (text[1:] or "0")
    return f"{'-' if sign else ''}{mantissa}E{exponent + len(digits) - 1}"  # type: ignore[operator]


class NumberFormatError(ValueError):
    """Java's NumberFormatException; its text is Java's message (`For input string: "x"`)."""


def parse_java_int(text: str, *, bits: int = 32) -> int:
    """`Integer.parseInt` / `Short.parseShort` / `Long.parseLong`: no trimming, an optional sign,
    decimal digits (Java's Character.digit accepts any Unicode digit, as Python's int does),
    range-checked. Raises NumberFormatError with Java's message."""
    if _JAVA_INT.fullmatch(text) is None or not -(1 << (bits - 1)) <= int(text) < 1 << (bits - 1):
        raise NumberFormatError(f'For input string: "{text}"')
    return int(text)


def java_split(text: str, separator: str = ",") -> list[str]:
    """`String.split`: trailing empty strings are dropped (but "" alone stays [""])."""
    if separator not in text:
        return [text]
    pieces = text.split(separator)
    while pieces and pieces[-1] == "":
        pieces.pop()
    return pieces


def parse_long_option(text: str, option: str) -> int:
    """A joptsimple `Long` option such as --throttle."""
    try:
        return parse_java_int(text.strip(), bits=64)
    except NumberFormatError:
        raise UserError(f"Cannot parse argument '{text}' of option {option}") from None
