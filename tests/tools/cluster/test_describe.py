"""`topic describe`'s lines made column by column from the image's table are the lines made
partition by partition, whatever the state: reassignments, failed directories, fenced brokers,
directory moves."""

from __future__ import annotations

from hypothesis import given, settings

from kjbod.controller import Controller, ControllerApiError
from kjbod.controller.replication_control import CreateTopicRequest
from kjbod.image import Image, replay_all
from kjbod.tools.cluster.describe import _partition_line, describe_topics

from ...controller.support import bootstrap, with_brokers
from ...image.test_columnar import from_columns, operation, operations


def one_by_one(image: Image) -> list[str]:
    lines = []
    for name in sorted(image.topics.by_name):
        topic = image.topics.by_name[name]
        lines += [_partition_line(image, topic, pid, p) for pid, p in sorted(topic.partitions.items())]
    return lines


def without_topic_lines(lines: list[str]) -> list[str]:
    return [line for line in lines if line.startswith("\t")]


@settings(max_examples=60, deadline=None)
@given(operations)
def test_the_lines_from_columns_are_the_lines_of_each_partition(steps: list[tuple[str, int, int]]) -> None:
    image, dirs = with_brokers(bootstrap(), 4, dirs_each=2)
    for name, count in (("t0", 6), ("t1", 3)):
        image = replay_all(image, Controller(image).replication.create_topic(CreateTopicRequest(name, count, 3, seed=1)).records)
    created = 2
    for kind, broker, n in steps:
        if kind == "index":
            continue
        try:
            result = operation(Controller(image), image, dirs, kind, broker, n, created)
        except ControllerApiError:
            continue
        if result is None:
            continue
        created += kind == "create"
        image = replay_all(image, result.records)
        for shown in (image, from_columns(image)):
            lines, data = describe_topics(shown, None, data=False)
            assert data == []
            assert without_topic_lines(lines) == one_by_one(image)
    lines, _ = describe_topics(image, None)
    assert describe_topics(image, None, lines=False)[0] == []
