"""The cluster model for analysis: its codes (brokers, racks, directories) and where replicas lie
once the work in flight completes."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from kjbod.controller import Controller
from kjbod.image import Image, replay_all
from kjbod.image.cluster_columns import NO_RACK, UNKNOWN_DIR, ClusterColumns, cluster_columns
from kjbod.image.columns import PartitionTable
from kjbod.records import KjbodBrokerLogDirsRecord, KjbodLogDir, KjbodPartitionSizeRecord, KjbodReplicaLogRecord, PartitionRecord, TopicRecord
from tests.controller.support import apply, bootstrap, new_dir, registration

TOPIC = "AAAAAAAAAAAAAAAAAAAAAQ"


def cluster(racks: dict[int, str | None]) -> tuple[Image, dict[int, list[str]]]:
    """Brokers with two directories each, registered with their paths in reverse order."""
    image = bootstrap()
    dirs: dict[int, list[str]] = {}
    for broker, rack in racks.items():
        dirs[broker] = [new_dir(), new_dir()]
        request = registration(broker, dirs[broker], rack)
        paths = (f"/b{broker}/d2", f"/b{broker}/d1")
        request = replace(
            request, log_dirs=tuple(KjbodLogDir(directory_id=d, path=p, capacity_bytes=100) for d, p in zip(dirs[broker], paths))
        )
        image = apply(image, Controller(image).cluster.register_broker(request))
    return image, dirs


def with_partitions(image: Image, *partitions: PartitionRecord) -> Image:
    return replay_all(image, [TopicRecord(name="t", topic_id=TOPIC), *partitions])


def test_codes_follow_one_convention() -> None:
    image, dirs = cluster({1: "r2", 2: None, 3: "r1"})
    # Broker 9 is not registered but holds a replica: it has a code too.
    image = with_partitions(
        image, PartitionRecord(partition_id=0, topic_id=TOPIC, replicas=(1, 9), isr=(1,), leader=1, directories=(dirs[1][0], dirs[1][0]))
    )
    model = cluster_columns(image)
    assert model.broker_ids.tolist() == [1, 2, 3, 9]
    assert model.broker_registered.tolist() == [True, True, True, False]
    assert model.racks == ["r1", "r2"]
    assert model.broker_rack.tolist() == [1, NO_RACK, 0, NO_RACK]
    # Each broker's directories by path.
    assert model.dir_ids == [dirs[1][1], dirs[1][0], dirs[2][1], dirs[2][0], dirs[3][1], dirs[3][0]]
    assert model.dir_paths[:2] == ["/b1/d1", "/b1/d2"]
    assert model.dir_broker_ids.tolist() == [1, 1, 2, 2, 3, 3]
    assert model.resolve(1, "/b1/d2/") == 1 and model.resolve(2, "/b1/d2") == UNKNOWN_DIR
    # Broker 9's replica names broker 1's directory: it is in no directory of its own broker.
    settled = model.settled(np.arange(1))
    assert settled.broker.tolist() == [1, 9]
    assert settled.directory.tolist() == [1, UNKNOWN_DIR]


def test_settled_replicas_are_where_the_work_in_flight_leaves_them() -> None:
    image, dirs = cluster({1: None, 2: None, 3: None})
    image = with_partitions(
        image,
        # Moving from broker 1 to broker 3: broker 1's replica is leaving.
        PartitionRecord(
            partition_id=0, topic_id=TOPIC, replicas=(1, 2, 3), isr=(1, 2), removing_replicas=(1,), adding_replicas=(3,), leader=2,
            directories=(dirs[1][0], dirs[2][0], dirs[3][1]),
        ),
        PartitionRecord(partition_id=1, topic_id=TOPIC, replicas=(2, 3), isr=(2, 3), leader=2, directories=(dirs[2][0], dirs[3][0])),
    )
    # Broker 2's replica of t-1 is being moved to its other directory (KIP-113).
    image = replay_all(
        image,
        [
            KjbodReplicaLogRecord(topic_id=TOPIC, partition_id=1, broker_id=2, future=True, directory_id=dirs[2][1], size_bytes=5),
            KjbodPartitionSizeRecord(topic_id=TOPIC, partition_id=0, size_bytes=10),
            KjbodPartitionSizeRecord(topic_id=TOPIC, partition_id=1, size_bytes=20),
        ],
    )
    model = cluster_columns(image)
    settled = model.settled(np.array([1, 0]))
    assert settled.position.tolist() == [0, 0, 1, 1]
    assert settled.broker.tolist() == [2, 3, 2, 3]
    index = model.dir_index
    assert settled.directory.tolist() == [index[dirs[2][1]], index[dirs[3][0]], index[dirs[2][0]], index[dirs[3][1]]]
    # As the replicas lie now: broker 1's leaving replica still counts, the future replica not yet.
    used, replicas, unknown = model.placed_now(np.array([10, 20]))
    assert unknown == 0
    assert {model.dir_ids[d]: int(u) for d, u in enumerate(used) if u} == {
        dirs[1][0]: 10, dirs[2][0]: 30, dirs[3][1]: 10, dirs[3][0]: 20,
    }
    assert replicas.sum() == 5


def test_placed_now_agrees_with_replica_dirs_for_a_directory_of_another_broker() -> None:
    image, dirs = cluster({1: None, 2: None})
    image = with_partitions(
        image, PartitionRecord(partition_id=0, topic_id=TOPIC, replicas=(1, 2), isr=(1, 2), leader=1, directories=(dirs[1][0], dirs[1][1]))
    )
    model = cluster_columns(image)
    used, replicas, unknown = model.placed_now(np.array([7]))
    table = model.table
    placed = model.replica_dirs(table.directories, table.replicas.values.astype(np.int64))
    assert placed.tolist() == [model.dir_index[dirs[1][0]], UNKNOWN_DIR]
    assert unknown == 1
    assert replicas.tolist() == np.bincount(placed[placed >= 0], minlength=len(model.dir_ids)).tolist()
    assert used.tolist() == (7 * replicas).tolist()


@given(st.lists(st.integers(0, 50), min_size=1, max_size=8, unique=True), st.lists(st.integers(-5, 60) | st.just(2**31 - 1), max_size=20))
def test_broker_index_by_table_is_by_binary_search(ids: list, asked: list) -> None:
    count = len(ids)
    model = ClusterColumns(
        broker_ids=np.array(sorted(ids), np.int32),
        broker_registered=np.ones(count, bool),
        broker_fenced=np.zeros(count, bool),
        broker_shutting_down=np.zeros(count, bool),
        broker_rack=np.full(count, NO_RACK, np.int32),
        racks=[],
        dir_broker=np.zeros(0, np.int32),
        dir_ids=[],
        dir_paths=[],
        dir_capacity=np.zeros(0, np.int64),
        dir_online=np.zeros(0, bool),
        dir_cordoned=np.zeros(0, bool),
        table=PartitionTable.from_topics([]),
    )
    brokers = np.array(asked, np.int64)
    index, found = model.index_of(brokers)
    expected = np.minimum(np.searchsorted(model.broker_ids, brokers), count - 1)
    assert index.tolist() == expected.tolist()
    assert found.tolist() == [b in ids for b in asked]


def test_a_directory_id_two_brokers_share_is_each_replica_s_own_broker_s() -> None:
    """No two brokers register one directory id, but a broker's configured directories may name
    another's (say, a disk moved between them): each replica is in its own broker's directory."""
    image, dirs = cluster({1: None, 2: None})
    shared = dirs[1][0]
    configured = (KjbodLogDir(directory_id=shared, path="/b2/old"), *image.cluster.log_dirs[2])
    image = with_partitions(
        replay_all(image, [KjbodBrokerLogDirsRecord(broker_id=2, log_dirs=configured)]),
        PartitionRecord(partition_id=0, topic_id=TOPIC, replicas=(1, 2), isr=(1, 2), leader=1, directories=(shared, shared)),
    )
    model = cluster_columns(image)
    on_1, on_2 = (model.dir_ids.index(shared, start) for start in (0, model.dir_ids.index(shared) + 1))
    assert model.dir_broker_ids[[on_1, on_2]].tolist() == [1, 2]
    assert model.settled(np.arange(1)).directory.tolist() == [on_1, on_2]
    assert model.directory_of(2, shared) == on_2 and model.directory_of(1, dirs[2][1]) == UNKNOWN_DIR
    _, replicas, unknown = model.placed_now(np.array([5]))
    assert unknown == 0 and replicas[on_1] == replicas[on_2] == 1
