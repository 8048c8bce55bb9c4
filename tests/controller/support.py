"""Building cluster states for controller tests: operation -> records -> replay -> state."""

from __future__ import annotations

import random

from kjbod.common.kafka_uuid import DirectoryId, Uuid
from kjbod.controller import Controller, ControllerResult
from kjbod.controller.cluster_control import BrokerRegistrationRequest
from kjbod.controller.replication_control import CreateTopicRequest, HeartbeatRequest
from kjbod.image import EMPTY_IMAGE, Image, replay_all
from kjbod.records import FeatureLevelRecord, KjbodLogDir

_ids = random.Random(1234)


def new_dir() -> str:
    return DirectoryId.random(_ids)


def bootstrap(level: int = 30) -> Image:
    return replay_all(EMPTY_IMAGE, [FeatureLevelRecord(name="metadata.version", feature_level=level)])


def apply(image: Image, result: ControllerResult) -> Image:
    return replay_all(image, result.records)


def registration(broker_id: int, dirs: list[str], rack: str | None = None, incarnation: str | None = None, **kwargs) -> BrokerRegistrationRequest:
    return BrokerRegistrationRequest(
        broker_id=broker_id,
        incarnation_id=incarnation or str(Uuid(broker_id, 1000 + broker_id)),
        log_dirs=tuple(KjbodLogDir(directory_id=d, path=f"/data/b{broker_id}/d{i}") for i, d in enumerate(dirs, 1)),
        rack=rack,
        **kwargs,
    )


def with_brokers(image: Image, count: int, dirs_each: int = 1, racks: int | None = None, unfence: bool = True) -> tuple[Image, dict[int, list[str]]]:
    dirs: dict[int, list[str]] = {}
    for broker_id in range(1, count + 1):
        dirs[broker_id] = [new_dir() for _ in range(dirs_each)]
        rack = f"r{broker_id % racks}" if racks else None
        image = apply(image, Controller(image).cluster.register_broker(registration(broker_id, dirs[broker_id], rack)))
        if unfence:
            image = apply(image, Controller(image).replication.heartbeat(HeartbeatRequest(broker_id)))
    return image, dirs


def with_topic(image: Image, name: str, partitions: int = 3, rf: int = 3, seed: int = 1, **kwargs) -> Image:
    return apply(image, Controller(image).replication.create_topic(CreateTopicRequest(name, partitions, rf, seed=seed, **kwargs)))


def topic_partitions(image: Image, name: str):  # noqa: ANN201
    topic = image.topics.by_name[name]
    return topic.topic_id, topic.partitions
