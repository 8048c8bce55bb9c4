"""`topic describe`'s lines made column by column from the image's table are the lines made
partition by partition, whatever the state: reassignments, failed directories, fenced brokers,
directory moves."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from kjbod.common.kafka_uuid import DirectoryId
from kjbod.controller import Controller, ControllerApiError
from kjbod.controller.replication_control import CreateTopicRequest
from kjbod.image import Image, replay_all
from kjbod.tools.cluster.describe import _partition_line, _replica_directories, describe_topics

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


IMAGE, DIRS = with_brokers(bootstrap(), 4, dirs_each=2)
# Every broker's directories, the reserved ids, and a directory no broker has.
DIR_IDS = [d for dirs in DIRS.values() for d in dirs] + [DirectoryId.UNASSIGNED, DirectoryId.LOST, DirectoryId.MIGRATING, "AAAAAAAAAAAAAAAAAAAA_w"]
OWN = st.sampled_from([(broker, DIR_IDS.index(d)) for broker, dirs in DIRS.items() for d in dirs])
ANY = st.tuples(st.sampled_from([1, 2, 3, 4, 9]), st.integers(0, len(DIR_IDS) - 1))  # 9: not registered


@settings(max_examples=80, deadline=None)
@given(st.lists(st.one_of(OWN, ANY), max_size=3 * len(DIR_IDS)))
def test_replica_directories_are_worked_out_as_for_each_replica(replicas: list[tuple[int, int]]) -> None:
    # Fewer replicas than directories are worked out pair by pair, more (a hot topic) directory
    # by directory with the odd replica in another broker's directory pair by pair: both as
    # the label and the KIP-858 rule say for each replica.
    brokers = np.array([b for b, _ in replicas], np.int32)
    codes = np.array([c for _, c in replicas], np.int32)
    labels, offline = _replica_directories(IMAGE, SimpleNamespace(dir_ids=DIR_IDS), brokers, codes)  # type: ignore[arg-type]
    registrations = IMAGE.cluster.brokers
    assert labels == [IMAGE.cluster.directory_label(b, DIR_IDS[c]) for b, c in replicas]
    assert offline.tolist() == [b not in registrations or not registrations[b].has_online_dir(DIR_IDS[c]) for b, c in replicas]
