"""An image read from columns (a columnar snapshot's table) behaves as the image of objects it
was taken from, and stays so as deltas change it: the same topics, partitions, sizes and replica
logs, the same partition index, and a table equal to one built from the objects."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from kjbod.controller import Controller, ControllerApiError
from kjbod.controller.reassignment_control import ReassignmentTarget, ReplicaDirMove
from kjbod.controller.replication_control import CreateTopicRequest
from kjbod.image import Image, replay_all
from kjbod.image.columns import PartitionTable
from kjbod.image.topics import TopicsImage

from ..controller.support import bootstrap, with_brokers
from .support import operation as index_operation

VIEWS = ("in_isr", "on_broker", "led_by", "in_directory")


def as_sets(index) -> dict:  # noqa: ANN001
    return {view: {k: set(v) for k, v in getattr(index, view).items()} for view in VIEWS} | {"leaderless": set(index.leaderless)}


def from_columns(image: Image) -> Image:
    """The image as a columnar snapshot would load it."""
    table = PartitionTable.from_topics(image.topics.by_id[t] for t in sorted(image.topics.by_id))
    return Image(image.offset, image.features, image.cluster, TopicsImage.from_table(table), image.configs, image.time_ms)


def assert_same(columnar: Image, objects: Image) -> None:
    assert columnar.topics == objects.topics
    assert dict(columnar.topics.by_name) == dict(objects.topics.by_name)
    for topic in objects.topics.by_id.values():
        other = columnar.topics.by_id[topic.topic_id]
        assert dict(other.sizes.items()) == dict(topic.sizes.items())
        assert dict(other.replica_logs.items()) == dict(topic.replica_logs.items())
        assert sorted(other.partitions) == sorted(topic.partitions)
    assert as_sets(columnar.topics.index) == as_sets(TopicsImage(dict(objects.topics.by_id)).index)
    expected = PartitionTable.from_topics(objects.topics.by_id[t] for t in sorted(objects.topics.by_id))
    table = columnar.topics.table
    assert sorted(table.topic_ids) == expected.topic_ids
    # The same rows, whatever the topic order.
    by_topic = {t: i for i, t in enumerate(table.topic_ids)}
    reordered = table.take(
        [r for t in expected.topic_ids for r in range(*table.rows(by_topic[t]))],
        topic_of_row=[i for i, t in enumerate(expected.topic_ids) for _ in range(*table.rows(by_topic[t]))],
        topics=(expected.topic_ids, expected.topic_names),
    )
    assert reordered.same_as(expected)
    assert columnar.topics.partition_count == objects.topics.partition_count


operations = st.lists(
    st.tuples(
        st.sampled_from(["fence", "unfence", "fail", "assign", "create", "delete", "size", "reassign", "move", "index"]),
        st.integers(1, 4),
        st.integers(0, 5),
    ),
    max_size=12,
)


@settings(max_examples=80, deadline=None)
@given(operations, st.integers(0, 12))
def test_a_columnar_image_behaves_as_the_objects_it_was_taken_from(steps: list[tuple[str, int, int]], snapshot_at: int) -> None:
    image, dirs = with_brokers(bootstrap(), 4, dirs_each=2)
    for name, count in (("t0", 6), ("t1", 3)):
        image = replay_all(image, Controller(image).replication.create_topic(CreateTopicRequest(name, count, 3, seed=1)).records)
    columnar = from_columns(image)
    assert_same(columnar, image)
    created = 2
    for step, (kind, broker, n) in enumerate(steps):
        if step == snapshot_at:
            columnar = from_columns(image)
        if kind == "index":
            as_sets(columnar.topics.index)  # built now, so the next image derives its index from it
            continue
        try:
            result = operation(Controller(image), image, dirs, kind, broker, n, created)
        except ControllerApiError:
            continue
        if result is None:
            continue
        # The controller sees the same state through either image.
        try:
            again = operation(Controller(columnar), columnar, dirs, kind, broker, n, created)
        except ControllerApiError:
            raise AssertionError("the columnar image refused what the image of objects accepted") from None
        assert again.records == result.records
        created += kind == "create"
        image = replay_all(image, result.records)
        columnar = replay_all(columnar, result.records)
        assert_same(columnar, image)


def operation(c, image, dirs, kind, broker, n, created):  # noqa: ANN001, ANN201
    """test_partition_index's operations, and changes of sizes, reassignments and directory moves."""
    if kind not in ("size", "reassign", "move"):
        return index_operation(c, image, dirs, kind, broker, n, created)
    names = sorted(image.topics.by_name)
    if not names:
        return None
    topic = names[n % len(names)]
    partitions = image.topics.by_name[topic].partitions
    if kind == "size":
        return c.replication.set_partition_sizes(topic, None if n == 5 else n % len(partitions), 1000 * n + broker)
    if kind == "reassign":
        replicas = tuple(sorted({broker, (broker % 4) + 1, ((broker + n) % 4) + 1}))
        return c.reassignment.alter_partition_reassignments([ReassignmentTarget(topic, n % len(partitions), replicas)])
    p = partitions.get(n % len(partitions))
    if p is None or not p.replicas:
        return None
    replica = p.replicas[0]
    return c.reassignment.alter_replica_log_dirs([ReplicaDirMove(topic, n % len(partitions), replica, dirs[replica][n % 2])])
