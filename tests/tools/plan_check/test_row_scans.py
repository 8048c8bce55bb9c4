"""The position-by-position scans of short per-partition lists give what the sorting versions
give (those still run for lists longer than WIDEST_SCAN)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from kjbod.tools.plan_check import checks
from kjbod.tools.plan_check.facts import _find_by_sorting, _find_in_rows, repeated_in_row, small_unique

values = st.sampled_from([0, 1, 2, 3, 7, 2**31 - 1, -(2**31), -1])
ragged = st.lists(st.lists(values, max_size=6), min_size=1, max_size=12)


def columns(lists: list[list[int]]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    lengths = np.array([len(items) for items in lists], np.int64)
    starts = np.zeros(len(lists) + 1, np.int64)
    np.cumsum(lengths, out=starts[1:])
    rows = np.repeat(np.arange(len(lists), dtype=np.int64), lengths)
    return rows, np.array([v for items in lists for v in items], np.int64), starts


@settings(max_examples=300)
@given(ragged, ragged)
def test_finding_in_rows_by_position_is_finding_by_sorting(lists: list, other: list) -> None:
    other = (other * len(lists))[: len(lists)]  # one list of each side per row
    rows, items, _ = columns(lists)
    _, of, of_starts = columns(other)
    found, position = _find_in_rows(rows, items, of_starts, of)
    expected = [v in other[r] for r, v in zip(rows.tolist(), items.tolist())]
    assert found.tolist() == expected
    first = [of_starts[r] + other[r].index(v) if v in other[r] else -1 for r, v in zip(rows.tolist(), items.tolist())]
    assert position.tolist() == first
    if len(of):
        sorted_found, sorted_position = _find_by_sorting(rows, items, of_starts, of)
        assert sorted_found.tolist() == expected and sorted_position.tolist() == first


@settings(max_examples=200)
@given(ragged)
def test_repeats_within_a_row(lists: list) -> None:
    rows, items, starts = columns(lists)
    expected = [v in lists[r][: i - starts[r]] for i, (r, v) in enumerate(zip(rows.tolist(), items.tolist()))]
    assert repeated_in_row(rows, items, starts).tolist() == expected


@settings(max_examples=200)
@given(ragged)
def test_most_replicas_per_rack_by_position_is_by_sorting(lists: list) -> None:
    rows, racks, _ = columns(lists)
    racks = racks & 0xFFFFFFFF
    fast = checks._most_per_rack(rows, racks, len(lists))
    widest, checks.WIDEST_SCAN = checks.WIDEST_SCAN, 0
    try:
        slow = checks._most_per_rack(rows, racks, len(lists))
    finally:
        checks.WIDEST_SCAN = widest
    assert all(np.array_equal(a, b) for a, b in zip(fast, slow))


@given(st.lists(st.integers(-3, 70_000), max_size=30))
def test_small_unique_is_np_unique(items: list) -> None:
    array = np.array(items, np.int64)
    unique, inverse = small_unique(array)
    expected_unique, expected_inverse = np.unique(array, return_inverse=True)
    assert unique.tolist() == expected_unique.tolist() and inverse.tolist() == expected_inverse.reshape(-1).tolist()


def test_directory_usage_counts_replicas_without_a_directory_per_broker() -> None:
    """Broker 1's directories are never assigned: its replicas (of t-0 and t-3) are in no known
    directory, so they count per broker, and every directory holds what was placed in it."""
    from dataclasses import replace

    from kjbod.controller import Controller
    from kjbod.controller.replication_control import CreateTopicRequest, HeartbeatRequest
    from kjbod.image import replay_all
    from kjbod.records import KjbodLogDir, KjbodPartitionSizeRecord
    from kjbod.tools.plan_check.facts import scan_cluster
    from tests.controller.support import apply, bootstrap, new_dir, registration

    image = bootstrap()
    for broker in (1, 2, 3, 4):
        dirs = [new_dir(), new_dir()]
        request = registration(broker, dirs, "r")
        request = replace(request, log_dirs=tuple(KjbodLogDir(directory_id=d, path=f"/b{broker}/d{i}", capacity_bytes=100) for i, d in enumerate(dirs)))
        image = apply(image, Controller(image).cluster.register_broker(request))
        image = apply(image, Controller(image).replication.heartbeat(HeartbeatRequest(broker)))
    image = apply(image, Controller(image).replication.create_topic(CreateTopicRequest("t", assignment=((1, 2), (2, 3), (3, 4), (4, 1)))))
    for broker in (2, 3, 4):
        image = apply(image, Controller(image).replication.auto_assign_dirs(broker))
    topic_id = image.topics.by_name["t"].topic_id
    image = replay_all(image, [KjbodPartitionSizeRecord(topic_id=topic_id, partition_id=p, size_bytes=10 * (p + 1)) for p in range(4)])
    cluster = scan_cluster(image)
    assert cluster.unplaced == {1: 2}
    assert cluster.broker_replicas() == {1: 2, 2: 2, 3: 2, 4: 2}
    per_broker = {b: int(cluster.used[cluster.model.dir_broker_ids == b].sum()) for b in (1, 2, 3, 4)}
    assert per_broker == {1: 0, 2: 10 + 20, 3: 20 + 30, 4: 30 + 40}
    assert int(cluster.replicas.sum()) == 6
