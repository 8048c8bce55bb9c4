"""Small clusters for planner tests, built through the controller (operation -> replay)."""

from __future__ import annotations

import random

from kjbod.common.kafka_uuid import DirectoryId, Uuid
from kjbod.controller import Controller
from kjbod.controller.cluster_control import BrokerRegistrationRequest
from kjbod.controller.replication_control import CreateTopicRequest, DirectoryAssignment, HeartbeatRequest
from kjbod.image import EMPTY_IMAGE, Image, replay_all
from kjbod.records import FeatureLevelRecord, KjbodLogDir, KjbodPartitionSizeRecord

GB = 10**9


def skewed_cluster(
    brokers: int = 6,
    racks: int = 3,
    dirs: int = 2,
    topics: int = 4,
    partitions: int = 12,
    rf: int = 3,
    crowded: int = 3,
    capacity: int = 1000 * GB,
    seed: int = 1,
    sizes: tuple[int, ...] | None = None,
) -> Image:
    """Every topic starts on the first `crowded` brokers, all on their first directory; each
    partition's size is drawn from 1-20 GB, or given (in GB, per partition of every topic)."""
    rng = random.Random(seed)
    image = replay_all(EMPTY_IMAGE, [FeatureLevelRecord(name="metadata.version", feature_level=30)])
    dir_ids: dict[int, list[str]] = {}
    for b in range(1, brokers + 1):
        dir_ids[b] = [DirectoryId.random(rng) for _ in range(dirs)]
        request = BrokerRegistrationRequest(
            broker_id=b,
            incarnation_id=str(Uuid(b, 1)),
            log_dirs=tuple(KjbodLogDir(directory_id=d, path=f"/data/b{b}/d{i}", capacity_bytes=capacity) for i, d in enumerate(dir_ids[b], 1)),
            rack=f"r{(b - 1) % racks}",
        )
        image = replay_all(image, Controller(image).cluster.register_broker(request).records)
        image = replay_all(image, Controller(image).replication.heartbeat(HeartbeatRequest(b)).records)
    crowded_brokers = list(range(1, crowded + 1))
    for t in range(topics):
        assignment = tuple(tuple(rng.sample(crowded_brokers, rf)) for _ in range(partitions))
        name = f"topic-{t}"
        image = replay_all(image, Controller(image).replication.create_topic(CreateTopicRequest(name, assignment=assignment, seed=t)).records)
        topic = image.topics.by_name[name]
        size_records = [KjbodPartitionSizeRecord(topic_id=topic.topic_id, partition_id=p, size_bytes=(sizes[p] if sizes else rng.randint(1, 20)) * GB) for p in range(partitions)]
        image = replay_all(image, size_records)
        for b in crowded_brokers:
            moves = [DirectoryAssignment(name, p, dir_ids[b][0]) for p, r in enumerate(assignment) if b in r]
            image = replay_all(image, Controller(image).replication.assign_replicas_to_dirs(b, moves).records)
    return image
