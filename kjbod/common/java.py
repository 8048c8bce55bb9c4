"""The few Java behaviours kjbod must reproduce to give Kafka's exact, seeded results.

`java.util.Random` (the 48-bit LCG and `nextInt(bound)`), `Collections.shuffle`, `String.hashCode`
and the iteration order of a `java.util.HashMap` (storage reference §0.2). Kafka's placer and
its tests draw from these, so a seeded kjbod placement equals Kafka's for the same seed.
"""

from __future__ import annotations

from collections.abc import Iterable, MutableSequence
from typing import TypeVar

T = TypeVar("T")
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


def hashmap_order(keys: Iterable[T], hash_of: callable) -> list[T]:  # type: ignore[valid-type]
    """The order a `java.util.HashMap` iterates keys inserted in this order (no removals)."""
    inserted = list(dict.fromkeys(keys))
    capacity = 16
    while len(inserted) > capacity * 0.75:
        capacity *= 2

    def bucket(key: T) -> int:
        h = hash_of(key) & 0xFFFFFFFF
        return (h ^ (h >> 16)) & (capacity - 1)

    return sorted(inserted, key=bucket)  # a stable sort keeps insertion order within a bucket
