"""Building cluster states for controller tests: operation -> records -> replay -> state; and
controller quorums, from `format` to voters added one at a time."""

from __future__ import annotations

import random

from kjbod.common.kafka_uuid import DirectoryId, Uuid
from kjbod.controller import Controller, ControllerResult
from kjbod.controller.cluster_control import BrokerRegistrationRequest
from kjbod.controller.quorum_control import ControllerProcess, VoterChange, quorum_bootstrap_records
from kjbod.controller.replication_control import CreateTopicRequest, HeartbeatRequest
from kjbod.image import EMPTY_IMAGE, Image, ReplicaKey, VoterNode, replay_all
from kjbod.records import ControllerEndpoint, FeatureLevelRecord, KjbodClusterRecord, KjbodLogDir, KjbodStaticVoter
from kjbod.simulation.clock import ClockControl

_IDS_SEED = 1234
_ids = random.Random(_IDS_SEED)


def new_dir() -> str:
    return DirectoryId.random(_ids)


def reset_ids() -> None:
    """Start the directory ids over (tests/conftest.py, before every test): a test draws the same
    ids whichever tests ran before it."""
    _ids.seed(_IDS_SEED)


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


# The controller quorum (KIP-853) ---------------------------------------------------------------

CLUSTER = "XcZZOzUqS4yHOjhMQB6JLQ"
DIRS = {
    1: "rhRdHdO-SNyn7mn0dViBvg",
    2: "xw8HCNDVSDO3mzcT0P3kCA",
    3: "teWvR0l3R0-KunAu5y6-OA",
    4: "ZNJ-ywU0nnQwRv5eRRU9ow",
}


def process(node_id: int, directory: str | None = None, listener: str = "CONTROLLER", **kwargs: object) -> ControllerProcess:
    endpoint = ControllerEndpoint(name=listener, host=f"c{node_id}", port=9093, security_protocol=0)
    return ControllerProcess(
        node_id, directory or DIRS[node_id], (endpoint,), cluster_id=CLUSTER, incarnation_id=str(Uuid(node_id, 77)), **kwargs  # type: ignore[arg-type]
    )


def standalone(level: int = 30) -> Image:
    """`format --standalone` on controller 1: kraft.version 1, the voter set {1}, 1 leads epoch 1."""
    features = [FeatureLevelRecord(name="metadata.version", feature_level=level), KjbodClusterRecord(cluster_id=CLUSTER, controller_id=1)]
    local = process(1)
    voters = (VoterNode(local.key, local.voter_endpoints, (0, 1)),)
    quorum = quorum_bootstrap_records(
        local=local, kraft_version=1, first_offset=len(features), dynamic_voters=voters, rng=random.Random(1)
    )
    return replay_all(EMPTY_IMAGE, [*features, *quorum])


def static(ids: tuple[int, ...] = (1, 2, 3)) -> Image:
    """`format` on controller 1 with controller.quorum.voters: kraft.version 0."""
    features = [FeatureLevelRecord(name="metadata.version", feature_level=30), KjbodClusterRecord(cluster_id=CLUSTER, controller_id=1)]
    voters = tuple(KjbodStaticVoter(voter_id=i, listener="CONTROLLER", host=f"c{i}", port=9093) for i in ids)
    quorum = quorum_bootstrap_records(
        local=process(1), kraft_version=0, first_offset=len(features), static_voters=voters, rng=random.Random(1)
    )
    return replay_all(EMPTY_IMAGE, [*features, *quorum])


def advance(image: Image, ms: int = 1000) -> Image:
    return apply(image, ClockControl(image).advance(ms))


def start(image: Image, node_id: int, **kwargs: object) -> Image:
    return apply(image, Controller(image).quorum.start_controller(process(node_id, **kwargs)))  # type: ignore[arg-type]


def add(image: Image, node_id: int, **kwargs: object) -> ControllerResult[VoterChange]:
    proc = process(node_id, **kwargs)  # type: ignore[arg-type]
    return Controller(image).quorum.add_voter(proc.key, proc.voter_endpoints)


def remove(image: Image, node_id: int, directory: str | None = None) -> ControllerResult[VoterChange]:
    return Controller(image).quorum.remove_voter(ReplicaKey(node_id, directory or DIRS[node_id]))


def grown(count: int, level: int = 30) -> Image:
    """Voters 1..count, each started, caught up, added and committed one at a time."""
    image = standalone(level)
    for node_id in range(2, count + 1):
        image = advance(start(image, node_id))
        image = advance(apply(image, add(image, node_id)))
    return image
