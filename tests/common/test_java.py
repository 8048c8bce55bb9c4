"""Java behaviours kjbod reproduces: HashMap iteration order, String.hashCode, Random."""

from __future__ import annotations

from hypothesis import assume, given
from hypothesis import strategies as st

from kjbod.common.java import JavaRandom, hashmap_order, shuffle, string_hash


def test_string_hash_matches_java() -> None:
    assert string_hash("hello") == 99162322
    assert string_hash("") == 0
    assert string_hash("polygenelubricants") == -2147483648  # a well-known Integer.MIN_VALUE hash


def test_java_random_sequences() -> None:
    rng = JavaRandom(42)
    assert [rng.next_int(10) for _ in range(5)] == [0, 3, 8, 4, 0]


def test_shuffle_is_collections_shuffle() -> None:
    items = list(range(6))
    shuffle(items, JavaRandom(7))
    assert sorted(items) == list(range(6)) and items != list(range(6))


# Java HashMap order --------------------------------------------------------------------------


def test_kafkas_feature_names_fall_in_the_buckets_the_reference_lists() -> None:
    names = ["test.feature.version", "transaction.version", "metadata.version", "kraft.version", "group.version"]
    assert hashmap_order(names, string_hash) == [
        "group.version", "kraft.version", "metadata.version", "transaction.version", "test.feature.version",
    ]


def _java_string_hash_reference(text: str) -> int:
    value = 0
    for unit in (int.from_bytes(text.encode("utf-16-be", "surrogatepass")[i:i + 2], "big")
                 for i in range(0, len(text.encode("utf-16-be", "surrogatepass")), 2)):
        value = (value * 31 + unit) % 2**32
    return value


def _simulated_java_hash_map(names: list[str]) -> tuple[list[str], int]:
    """java.util.HashMap.putVal/resize, literally: buckets of lists, split on resize.

    Also returns the largest bucket seen: Java turns a bucket of more than 8 into a tree (or
    resizes early), which kjbod does not model; feature requests hold a handful of names.
    """
    table: list[list[tuple[int, str]]] = [[] for _ in range(16)]
    size = largest = 0
    for name in names:
        h = _java_string_hash_reference(name)
        h ^= h >> 16
        bucket = table[h & (len(table) - 1)]
        if any(existing == name for _, existing in bucket):
            continue
        bucket.append((h, name))
        largest = max(largest, len(bucket))
        size += 1
        if size > len(table) * 0.75:
            old, table = table, [[] for _ in range(len(table) * 2)]
            for entries in old:
                for entry in entries:
                    table[entry[0] & (len(table) - 1)].append(entry)
    return [name for bucket in table for _, name in bucket], largest


@given(st.lists(st.text(max_size=12), max_size=40))
def test_hash_map_order_matches_a_simulated_java_hash_map(names: list[str]) -> None:
    expected, largest_bucket = _simulated_java_hash_map(names)
    assume(largest_bucket <= 8)
    assert hashmap_order(names, string_hash) == expected
