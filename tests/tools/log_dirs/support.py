"""Builders for the log-dirs tool's tests: brokers with their directories, partitions placed in
them, and the images they make."""

from __future__ import annotations

from kjbod.common.kafka_uuid import DirectoryId
from kjbod.image import EMPTY_IMAGE, Image, replay_all
from kjbod.records import (
    FeatureLevelRecord,
    KjbodBrokerLogDirsRecord,
    KjbodLogDir,
    KjbodPartitionSizeRecord,
    KjbodReplicaLogRecord,
    PartitionRecord,
    RegisterBrokerRecord,
    TopicRecord,
)

INC = "O7xvrxGUTwyKxRtVqYj9qA"
FOO, BAR = "cJ3rE4bvQc2w5Y0kT1q9Zg", "AAAAAAAAAAAAAAAAAAAAZA"
# Two directories on each of brokers 1 and 2; broker 0 has Kafka's default /tmp/kafka-logs.
D0 = "ZNJ-ywU0nnQwRv5eRRU9ow"
D11, D12 = "XcZZOzUqS4yHOjhMQB6JLQ", "AAAAAAAAAAAAAAAAAAAAZQ"
D21, D22 = "AAAAAAAAAAAAAAAAAAAAZg", "AAAAAAAAAAAAAAAAAAAAZw"
UNASSIGNED = DirectoryId.UNASSIGNED


def broker(broker_id: int, dirs: dict[str, str], online: tuple[str, ...] | None = None, epoch: int = 1) -> list:
    """Registration records: `dirs` maps directory id -> path; `online` defaults to all."""
    return [
        RegisterBrokerRecord(
            version=4, broker_id=broker_id, incarnation_id=INC, broker_epoch=epoch, fenced=False,
            log_dirs=tuple(dirs) if online is None else online,
        ),
        KjbodBrokerLogDirsRecord(broker_id=broker_id, log_dirs=tuple(KjbodLogDir(directory_id=d, path=p) for d, p in dirs.items())),
    ]


def partition(topic_id: str, partition_id: int, replicas: tuple[int, ...], directories: tuple[str, ...]) -> PartitionRecord:
    return PartitionRecord(
        version=2, topic_id=topic_id, partition_id=partition_id, replicas=replicas, isr=replicas,
        leader=replicas[0], leader_epoch=0, partition_epoch=0, directories=directories,
    )


def image_of(*records: object) -> Image:
    return replay_all(EMPTY_IMAGE, [FeatureLevelRecord(name="metadata.version", feature_level=30), *records])  # type: ignore[list-item]


def two_brokers_image() -> Image:
    """Brokers 1 and 2 with two directories each (D12 offline); foo-0..2 and bar-0."""
    return image_of(
        *broker(1, {D11: "/data/b1/d1", D12: "/data/b1/d2"}, online=(D11,)),
        *broker(2, {D21: "/data/b2/d1", D22: "/data/b2/d2"}, epoch=3),
        TopicRecord(name="foo", topic_id=FOO),
        partition(FOO, 0, (1, 2), (D11, D22)),
        partition(FOO, 1, (2, 1), (D21, D12)),
        partition(FOO, 2, (2,), (UNASSIGNED,)),
        TopicRecord(name="bar", topic_id=BAR),
        partition(BAR, 0, (2, 1), (D22, D11)),
        KjbodPartitionSizeRecord(topic_id=FOO, partition_id=0, size_bytes=5000),
        KjbodPartitionSizeRecord(topic_id=FOO, partition_id=1, size_bytes=700),
        KjbodPartitionSizeRecord(topic_id=BAR, partition_id=0, size_bytes=42),
        KjbodReplicaLogRecord(topic_id=FOO, partition_id=0, broker_id=2, size_bytes=1200, offset_lag=40),
        KjbodReplicaLogRecord(topic_id=FOO, partition_id=0, broker_id=2, future=True, directory_id=D21, size_bytes=300, offset_lag=9),
    )
