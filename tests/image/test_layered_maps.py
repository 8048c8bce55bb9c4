"""An image's maps layered over their base's behave exactly as the dicts they replace: the same
reads, the same keys in the same order, however many images were derived one from another."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kjbod.controller import Controller, ControllerApiError
from kjbod.image import replay_all
from kjbod.image.maps import FrozenDict, LayeredMap, MapChanges, SharedMap
from kjbod.image.topics import TopicsImage
from kjbod.records import RemoveTopicRecord, TopicRecord

from ..controller.support import bootstrap, with_brokers, with_topic
from .support import operation

KEYS = st.integers(0, 40)
# One derived map: a list of operations (set key to value, or delete key).
DERIVATION = st.lists(st.tuples(st.sampled_from(["set", "del", "pop"]), KEYS, st.integers()), max_size=30)


def check_reads(mapping, expected: dict) -> None:  # noqa: ANN001
    assert list(mapping) == list(expected)
    assert list(mapping.items()) == list(expected.items())
    assert list(mapping.keys()) == list(expected.keys()) and list(mapping.values()) == list(expected.values())
    assert len(mapping) == len(expected) and bool(mapping) == bool(expected)
    assert mapping == expected and expected == mapping
    for key in range(-1, 42):
        assert (key in mapping) == (key in expected)
        assert mapping.get(key) == expected.get(key)
        assert mapping.get(key, "none") == expected.get(key, "none")
        if key in expected:
            assert mapping[key] == expected[key]
        else:
            with pytest.raises(KeyError):
                mapping[key]


class Shared(SharedMap):
    """A map held some other way than a dict (as the lazy maps over a snapshot's columns)."""

    def __init__(self, values: dict) -> None:
        self._values = values

    def __getitem__(self, key: object) -> object:
        return self._values[key]

    def __iter__(self):  # noqa: ANN204
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(KEYS, st.integers(), max_size=30), st.lists(DERIVATION, max_size=12), st.booleans())
def test_a_chain_of_derived_maps_reads_as_dicts_would(start: dict, derivations: list, shared: bool) -> None:
    current = Shared(dict(start)) if shared else FrozenDict(start)
    expected = dict(start)
    seen = [(current, dict(expected))]
    for ops in derivations:
        changes = MapChanges(current)
        for op, key, value in ops:
            if op == "set":
                changes[key] = value
                expected[key] = value
            elif op == "pop":
                assert changes.pop(key, "absent") == expected.pop(key, "absent")
            elif key in expected:
                del changes[key]
                del expected[key]
            else:
                with pytest.raises(KeyError):
                    del changes[key]
            assert len(changes) == len(expected) and list(changes) == list(expected)
            assert all(changes.get(k) == expected.get(k) and (k in changes) == (k in expected) for k in range(-1, 42))
        current = changes.freeze()
        assert isinstance(current, (FrozenDict, LayeredMap, Shared))
        check_reads(current, expected)
        seen.append((current, dict(expected)))
    # Deriving never changed a map an earlier image holds.
    for mapping, then in seen:
        check_reads(mapping, then)


def test_a_layer_is_flattened_before_it_grows_large() -> None:
    current = FrozenDict({k: k for k in range(10_000)})
    for round_ in range(400):
        changes = MapChanges(current)
        changes[round_] = -round_
        current = changes.freeze()
        if isinstance(current, LayeredMap):
            assert len(current._top) + len(current._gone) <= 2 * 100 + 16
    assert dict(current) == {k: (-k if k < 400 else k) for k in range(10_000)}


def test_frozen_maps_refuse_changes() -> None:
    frozen = FrozenDict({1: 2})
    for change in (lambda: frozen.__setitem__(1, 3), lambda: frozen.pop(1), lambda: frozen.update({2: 3}), frozen.clear):
        with pytest.raises(TypeError):
            change()
    assert frozen == {1: 2}


def touch_order(base_ids: list[str], records) -> list[str]:  # noqa: ANN001
    """The topic order a dict rebuilt per delta gives: untouched topics, then the ones the
    records touched, in the order they were first touched (removed ones leave)."""
    touched: dict[str, None] = {}
    removed = set()
    for record in records:
        topic_id = getattr(record, "topic_id", None)
        if topic_id is None:
            continue
        if isinstance(record, RemoveTopicRecord):
            touched.pop(topic_id, None)
            removed.add(topic_id)
        elif topic_id not in touched and (isinstance(record, TopicRecord) or topic_id not in removed):
            touched[topic_id] = None
    return [t for t in base_ids if t not in touched and t not in removed] + list(touched)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["fence", "unfence", "fail", "assign", "create", "delete"]), st.integers(1, 4), st.integers(0, 5)), max_size=14))
def test_topics_keep_the_order_and_names_a_rebuilt_map_would(steps: list) -> None:
    image, dirs = with_brokers(bootstrap(), 4, dirs_each=2)
    for name in ("a", "b", "c"):
        image = with_topic(image, name, partitions=3, rf=2)
    created = 0
    for kind, broker, n in steps:
        _ = image.topics.by_name  # built, so the next image derives its own
        try:
            result = operation(Controller(image), image, dirs, kind, broker, n, created)
        except ControllerApiError:
            continue
        if result is None:
            continue
        created += kind == "create"
        expected_order = touch_order(list(image.topics.by_id), result.records)
        image = replay_all(image, result.records)
        assert list(image.topics.by_id) == expected_order
        fresh = TopicsImage(dict(image.topics.by_id))
        assert list(image.topics.by_name.items()) == list(fresh.by_name.items())
        for topic in image.topics.by_id.values():
            for name in ("partitions", "sizes", "replica_logs"):
                mapping = getattr(topic, name)
                assert list(mapping.items()) == list(dict(mapping.items()).items())
