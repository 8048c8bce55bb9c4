"""kafka-log-dirs' JSON from the cluster state, byte for byte as Kafka prints it: offline
directories, future replicas, lags, the broker list (reference §5, KIP-113)."""

from __future__ import annotations

import json

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from kjbod.errors import UserError
from kjbod.image import EMPTY_IMAGE, Image, replay_all
from kjbod.tools.log_dirs.report import (
    KAFKA_STORAGE_EXCEPTION,
    BrokerEntry,
    describe_from_image,
    LogDirEntry,
    LogDirsReport,
    PartitionEntry,
)
from kjbod.records import (
    FeatureLevelRecord,
    KjbodBrokerLogDirsRecord,
    KjbodLogDir,
    KjbodPartitionSizeRecord,
    PartitionRecord,
    RegisterBrokerRecord,
    TopicRecord,
)

from .support import D0, D11, FOO, INC, broker, image_of, partition







def test_the_json_is_byte_identical_to_kafkas_for_kafkas_own_example() -> None:
    # reference §5.3, the key order confirmed on a JVM.
    image = image_of(
        *broker(0, {D0: "/tmp/kafka-logs"}),
        TopicRecord(name="foo", topic_id=FOO),
        partition(FOO, 0, (0,), (D0,)),
        KjbodPartitionSizeRecord(topic_id=FOO, partition_id=0, size_bytes=123),
    )
    report = describe_from_image(image)
    assert report.lines() == [
        "Querying brokers for log directories information",
        "Received log directory information from brokers 0",
        '{"brokers":[{"broker":0,"logDirs":[{"partitions":[{"partition":"foo-0","size":123,"offsetLag":0,"isFuture":false}],'
        '"error":null,"logDir":"/tmp/kafka-logs"}]}],"version":1}',
    ]


def test_offline_directories_future_replicas_lags_and_unplaced_replicas(two_brokers: Image) -> None:
    report = describe_from_image(two_brokers)
    assert report.to_kafka_json() == (
        '{"brokers":['
        '{"broker":1,"logDirs":['
        '{"partitions":[{"partition":"bar-0","size":42,"offsetLag":0,"isFuture":false},'
        '{"partition":"foo-0","size":5000,"offsetLag":0,"isFuture":false}],"error":null,"logDir":"/data/b1/d1"},'
        '{"partitions":[],"error":"org.apache.kafka.common.errors.KafkaStorageException","logDir":"/data/b1/d2"}]},'
        '{"broker":2,"logDirs":['
        '{"partitions":[{"partition":"foo-0","size":300,"offsetLag":9,"isFuture":true},'
        '{"partition":"foo-1","size":700,"offsetLag":0,"isFuture":false}],"error":null,"logDir":"/data/b2/d1"},'
        '{"partitions":[{"partition":"bar-0","size":42,"offsetLag":0,"isFuture":false},'
        '{"partition":"foo-0","size":1200,"offsetLag":40,"isFuture":false}],"error":null,"logDir":"/data/b2/d2"}]}'
        '],"version":1}'
    )


def test_topic_filter_keeps_directories_whose_partitions_are_all_filtered_out(two_brokers: Image) -> None:
    data = describe_from_image(two_brokers, "2", "bar").to_kafka_data()
    assert data == {
        "brokers": [
            {
                "broker": 2,
                "logDirs": [
                    {"partitions": [], "error": None, "logDir": "/data/b2/d1"},
                    {"partitions": [{"partition": "bar-0", "size": 42, "offsetLag": 0, "isFuture": False}], "error": None, "logDir": "/data/b2/d2"},
                ],
            }
        ],
        "version": 1,
    }


def test_unknown_brokers_give_kafkas_message() -> None:
    # LogDirsCommandTest:147-155: cluster {1}, --broker-list 0,1,2.
    image = image_of(*broker(1, {D11: "/d"}))
    with pytest.raises(UserError) as raised:
        describe_from_image(image, "0,1,2")
    assert raised.value.message == "ERROR: The given brokers do not exist from --broker-list: 0,2. Current existent brokers: 1"


@pytest.mark.parametrize(("text", "brokers"), [("1,1", [1]), ("2,,1,", [1, 2]), ("", [1, 2]), ("+1", [1])])
def test_broker_lists_split_as_kafka_does(two_brokers: Image, text: str, brokers: list[int]) -> None:
    assert describe_from_image(two_brokers, text).broker_ids == brokers


@pytest.mark.parametrize("text", ["1, 2", "x", "99999999999"])
def test_a_broker_list_that_is_not_numbers_names_the_piece(two_brokers: Image, text: str) -> None:
    piece = next(p for p in text.split(",") if not p.isdigit() or len(p) > 10)
    with pytest.raises(UserError, match=f'^For input string: "{piece}" \\(in --broker-list\\)$'):
        describe_from_image(two_brokers, text)


def test_a_cluster_before_jbod_places_each_replica_in_the_single_directory() -> None:
    # metadata.version 3.6 records no directories: every replica is MIGRATING.
    image = replay_all(
        EMPTY_IMAGE,
        [
            FeatureLevelRecord(name="metadata.version", feature_level=14),
            RegisterBrokerRecord(version=2, broker_id=1, incarnation_id=INC, broker_epoch=1, fenced=False),
            KjbodBrokerLogDirsRecord(broker_id=1, log_dirs=(KjbodLogDir(directory_id=D11, path="/var/kafka"),)),
            TopicRecord(name="foo", topic_id=FOO),
            PartitionRecord(version=0, topic_id=FOO, partition_id=0, replicas=(1,), isr=(1,), leader=1, leader_epoch=0, partition_epoch=0),
        ],
    )
    (log_dir,) = describe_from_image(image).brokers[0].log_dirs
    assert (log_dir.path, log_dir.error, [p.name for p in log_dir.partitions]) == ("/var/kafka", None, ["foo-0"])


_names = st.text(min_size=1, max_size=12)


_log_dirs = st.builds(
    LogDirEntry,
    path=st.text(max_size=20),
    error=st.none() | st.just(KAFKA_STORAGE_EXCEPTION),
    partitions=st.lists(
        st.builds(PartitionEntry, _names, st.integers(0, 2**31 - 1), st.integers(0, 2**63 - 1), st.integers(0, 2**63 - 1), st.booleans()),
        max_size=4,
    ),
    directory_id=st.none() | st.just(D11),
    pending_deletion=st.lists(_names, max_size=2),
)


@given(
    brokers=st.lists(st.builds(BrokerEntry, st.integers(0, 2**31 - 1), st.lists(_log_dirs, max_size=3)), max_size=3),
    disk=st.booleans(),
)
def test_the_json_text_is_exactly_the_document_serialized(brokers: list[BrokerEntry], disk: bool) -> None:
    # Folder names on a disk may hold quotes, backslashes or control characters: escaped as JSON.
    report = LogDirsReport(brokers, disk)
    assert report.to_kafka_json() == orjson.dumps(report.to_kafka_data()).decode()
    assert json.loads(report.to_kafka_json()) == report.to_kafka_data()
