"""Turning what an operator gives `broker register` into a registration request: explicit
`--id/--dir` values, or a broker's own server.properties and each directory's meta.properties."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from kjbod.common.kafka_uuid import Uuid, canonical
from kjbod.common.kafka_release import KafkaRelease
from kjbod.controller.cluster_control import BrokerRegistrationRequest
from kjbod.controller.cordoned_dirs import check_static
from kjbod.errors import UserError
from kjbod.records import KjbodLogDir
from kjbod.tools.cluster.requests import parse_directory_spec, parse_feature_range


def _features(specs: Sequence[str], release: KafkaRelease) -> dict[str, tuple[int, int]]:
    if not specs:
        return release.supported_ranges()
    ranges: dict[str, tuple[int, int]] = {}
    for spec in specs:
        name, levels = parse_feature_range(spec)
        ranges[name] = levels
    return ranges


def _incarnation(text: str | None) -> str:
    if text is None:
        return str(Uuid.random())
    try:
        return canonical(text)
    except ValueError as exc:
        raise UserError(f"Invalid --incarnation-id '{text}': {exc}") from None


@dataclass(frozen=True)
class BrokerDirectories:
    node_id: int
    rack: str | None
    directories: tuple[tuple[str, str], ...]  # (path, directory id) of every readable log dir
    notes: tuple[str, ...]
    # The cluster.id the directories carry (what the broker sends in its registration).
    cluster_id: str | None = None
    # cordoned.log.dirs as server.properties writes it (KIP-1066), checked as the broker does at start-up.
    cordoned_log_dirs: str | None = None


def read_broker_directories(config: Path) -> BrokerDirectories:
    """What a broker registers at start-up: node.id, broker.rack and, for each log directory,
    the directory id in its meta.properties, and the cluster id they all carry. An unreadable
    directory is offline (its id cannot be known) and is left out, with a note; an unformatted
    one, one without a directory.id, or one of another cluster than the others stops the broker,
    as in Kafka (MetaPropertiesEnsemble.verify)."""
    from kjbod.storage.config import load_node_config
    from kjbod.storage.ensemble import DirectoryState, load_directory
    from kjbod.storage.meta_properties import meta_properties_path

    node = load_node_config(config)
    rack = node.broker_rack
    if node.cordoned_log_dirs is not None:
        try:
            check_static(node.cordoned_log_dirs, node.log_dirs)
        except UserError as exc:
            raise UserError(f"{exc} (in {config})") from None
    found: list[tuple[str, str]] = []
    notes: list[str] = []
    cluster_id: str | None = None
    for path in node.log_dirs:
        loaded = load_directory(path)
        if loaded.state is DirectoryState.ERROR:
            notes.append(f"Log directory {path} is unreadable, so broker {node.node_id} registers without it: {loaded.error}")
            continue
        if loaded.state is DirectoryState.EMPTY or loaded.meta is None:
            raise UserError(f"Log directory {path} is not formatted: run kjbod format --config {config} first")
        if loaded.meta.node_id != node.node_id:
            raise UserError(
                f"Log directory {path} belongs to node {loaded.meta.node_id}, but {config} says node.id={node.node_id}"
            )
        if loaded.meta.directory_id is None:
            raise UserError(f"Log directory {path} has no directory.id: run kjbod meta ensure-ids --config {config} first")
        if loaded.meta.cluster_id is not None:
            if cluster_id is not None and loaded.meta.cluster_id != cluster_id:
                raise UserError(
                    f"Invalid cluster.id in: {meta_properties_path(path)}. Expected {cluster_id}, but read {loaded.meta.cluster_id}"
                )
            cluster_id = loaded.meta.cluster_id
        found.append((path, loaded.meta.directory_id))
    return BrokerDirectories(node.node_id, rack, tuple(found), tuple(notes), cluster_id, node.cordoned_log_dirs)


def registration_request(
    *,
    config: Path | None,
    broker_id: int | None,
    dirs: Sequence[str],
    rack: str | None,
    incarnation_id: str | None,
    supported_features: Sequence[str],
    release: KafkaRelease,
    capacities: Sequence[str] = (),
    clean_shutdown: bool = True,
) -> tuple[BrokerRegistrationRequest, list[str]]:
    """The request, and notes for the operator (directories that could not be read).
    `capacities` are PATH=BYTES: the size of a log directory's disk (the planner's capacity).
    Without `supported_features` the broker supports what a broker of `release` does."""
    notes: list[str] = []
    cluster_id = None
    cordoned: str | None = None
    if config is not None:
        found = read_broker_directories(config)
        cluster_id = found.cluster_id
        cordoned = found.cordoned_log_dirs
        broker_id = found.node_id
        rack = rack if rack is not None else found.rack
        specs = list(found.directories)
        offline: frozenset[str] = frozenset()
        notes.extend(found.notes)
    else:
        assert broker_id is not None
        specs = [parse_directory_spec(spec) for spec in dirs]
        offline = frozenset()
    sizes = _capacities(capacities, [p for p, _ in specs])
    log_dirs = tuple(KjbodLogDir(directory_id=d, path=p, capacity_bytes=sizes.get(p)) for p, d in specs)
    request = BrokerRegistrationRequest(
        broker_id=broker_id,
        incarnation_id=_incarnation(incarnation_id),
        log_dirs=log_dirs,
        offline_directory_ids=offline,
        rack=rack,
        supported_features=_features(supported_features, release),
        cluster_id=cluster_id,
        clean_shutdown=clean_shutdown,
        cordoned_log_dirs=cordoned,
    )
    return request, notes


def _capacities(specs: Sequence[str], paths: Sequence[str]) -> dict[str, int]:
    """PATH=BYTES (bytes may carry a unit: 4TB, 3.6TiB) for log directories the broker has."""
    from kjbod.common.units import parse_bytes

    sizes: dict[str, int] = {}
    for spec in specs:
        path, sep, size = spec.rpartition("=")
        if not sep or not path:
            raise UserError(f'Invalid --capacity "{spec}": give PATH=BYTES, e.g. /data/01/kafka-logs=4TB')
        if path not in paths:
            raise UserError(f"--capacity {spec}: {path} is not one of the broker's log directories ({', '.join(paths)})")
        sizes[path] = parse_bytes(size, "--capacity")
        if sizes[path] <= 0:
            raise UserError(f'Invalid --capacity "{spec}": a disk size must be above 0')
    return sizes
