"""WorkingImage: an operation's records, each built against the state the ones before leave."""

from __future__ import annotations

import pytest

from kjbod.controller import Controller
from kjbod.controller.replication_control import DirectoryAssignment
from kjbod.controller.working import WorkingImage
from kjbod.errors import ReplayError
from kjbod.records import KjbodReplicaLogRecord, PartitionChangeRecord

from .support import apply, bootstrap, topic_partitions, with_brokers, with_topic


def cluster():  # noqa: ANN201
    image, dirs = with_brokers(bootstrap(), 3, dirs_each=2)
    image = with_topic(image, "t", partitions=2, rf=3, assignment=((1, 2, 3), (2, 3, 1)))
    for broker in (1, 2, 3):
        image = apply(image, Controller(image).replication.auto_assign_dirs(broker))
    topic_id, _ = topic_partitions(image, "t")
    return image, dirs, topic_id


def test_reads_see_every_record_appended_before_them() -> None:
    image, dirs, topic_id = cluster()
    work = WorkingImage(image)
    assert work.image is image and work.start is image and len(work) == 0 and work.next_offset == image.next_offset
    before = work.partition(topic_id, 0)
    moved = (dirs[1][1], *before.directories[1:])
    work.append(PartitionChangeRecord(topic_id=topic_id, partition_id=0, directories=moved))
    assert work.partition(topic_id, 0).directories == moved  # read from the delta, nothing applied
    assert work.partition(topic_id, 1) == image.topics.partition(topic_id, 1)
    work.append(PartitionChangeRecord(topic_id=topic_id, partition_id=0, isr=(1, 2)))
    after = work.image
    assert after.topics.partition(topic_id, 0).directories == moved and after.topics.partition(topic_id, 0).isr == (1, 2)
    assert after.offset == image.offset + 2 and work.next_offset == image.next_offset + 2
    assert work.image is after  # applied once, until more records come
    assert work.start is image and image.topics.partition(topic_id, 0) == before  # the start is untouched
    assert len(work.records) == 2


def test_a_change_built_before_a_later_record_changed_its_partition_is_refused() -> None:
    """The lost update of issue 26, as the working image refuses it: two changes of one
    partition's directories built from the same state, the second putting the first back."""
    image, dirs, topic_id = cluster()
    work = WorkingImage(image)
    replication = Controller(image).replication
    first = replication.change_builder(work, (topic_id, 0)).set_directory(1, dirs[1][1])
    second = replication.change_builder(work, (topic_id, 0)).set_directory(2, dirs[2][1])
    assert work.build(first) is not None
    with pytest.raises(RuntimeError, match=f"The change of partition {topic_id}:0 was built from a state that an earlier record"):
        work.build(second)
    # Built against the state the first leaves, the second keeps the first's move.
    work.build(replication.change_builder(work, (topic_id, 0)).set_directory(2, dirs[2][1]))
    assert work.image.topics.partition(topic_id, 0).directories[:2] == (dirs[1][1], dirs[2][1])


def test_a_record_that_does_not_apply_is_raised_where_it_is_read() -> None:
    image, _, topic_id = cluster()
    work = WorkingImage(image)
    work.append(KjbodReplicaLogRecord(topic_id=topic_id, partition_id=0, broker_id=9, size_bytes=0))
    with pytest.raises(ReplayError, match="which is not a replica"):
        work.partition(topic_id, 0)


def test_records_built_at_an_earlier_point_are_appended_only_if_nothing_since_changed_what_they_change() -> None:
    """How a clock step builds every leader's AlterPartition against one image: each changes its
    own partition, which no other request of the step changed."""
    image, dirs, topic_id = cluster()
    work = WorkingImage(image)
    at = len(work)
    shrink = {p: PartitionChangeRecord(topic_id=topic_id, partition_id=p, isr=tuple(image.topics.partition(topic_id, p).isr[:2])) for p in (0, 1)}
    work.extend([shrink[0]], built_at=at)
    work.extend([shrink[1]], built_at=at)  # another partition: fine
    with pytest.raises(RuntimeError, match=f"PartitionChangeRecord of {topic_id}:0 was built from a state that a later record"):
        work.extend([PartitionChangeRecord(topic_id=topic_id, partition_id=0, directories=(dirs[1][1], *image.topics.partition(topic_id, 0).directories[1:]))], built_at=at)
    at = len(work)
    work.append(Controller(work.image).cluster.set_cordoned(1, dirs[1][0], True).records[0])  # not a partition's record
    with pytest.raises(RuntimeError, match="built from a state that a later record"):
        work.extend([KjbodReplicaLogRecord(topic_id=topic_id, partition_id=1, broker_id=1, size_bytes=0)], built_at=at)
    assert len(work) == 3


def test_partition_changes_are_built_only_from_the_working_state() -> None:
    """The rule that makes the lost update impossible, kept by the code's shape: a
    PartitionChangeBuilder is made only by ReplicationControl.change_builder (from a
    WorkingImage) and built only by WorkingImage.build, which refuses a stale one."""
    import pathlib

    import kjbod

    root = pathlib.Path(kjbod.__file__).parent
    made, built = [], []
    for path in sorted(root.rglob("*.py")):
        text = path.read_text()
        name = path.relative_to(root).as_posix()
        made += [name] * text.count("PartitionChangeBuilder(")
        if "PartitionChangeBuilder" in text or "change_builder" in text:
            built += [name] * (text.count("builder.build()") + text.count(").build()"))
    assert made == ["controller/replication_control.py"]
    assert built == ["controller/working.py"]


def test_a_request_joins_a_larger_operation_only_from_its_state() -> None:
    """A request handled as the next one of a larger operation (a clock step's AssignReplicasToDirs)
    appends to that operation's WorkingImage, and must have been made from its current state."""
    image, dirs, topic_id = cluster()
    work = WorkingImage(image)
    first = Controller(work.image).replication.assign_replicas_to_dirs(1, [DirectoryAssignment("t", 0, dirs[1][1])], work=work)
    assert work.records == first.records and len(first.records) == 1
    with pytest.raises(RuntimeError, match="must be made from that operation's state"):
        Controller(image).replication.assign_replicas_to_dirs(2, [DirectoryAssignment("t", 0, dirs[2][1])], work=work)
    second = Controller(work.image).replication.assign_replicas_to_dirs(2, [DirectoryAssignment("t", 0, dirs[2][1])], work=work)
    assert work.records == first.records + second.records
    assert work.image.topics.partition(topic_id, 0).directories[:2] == (dirs[1][1], dirs[2][1])
    assert [(i.partition, i.directories_after[:2]) for i in second.response.impact] == [(0, (dirs[1][1], dirs[2][1]))]
