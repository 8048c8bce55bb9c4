"""Turning what an operator gives `broker register` into a registration request: explicit
`--id/--dir` values, or a broker's own server.properties and each directory's meta.properties."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from kjbod.cluster_tool import parse_directory_spec, parse_feature_range
from kjbod.common.kafka_uuid import Uuid, canonical
from kjbod.common.versions import default_supported_ranges
from kjbod.controller.cluster_control import BrokerRegistrationRequest
from kjbod.errors import UserError
from kjbod.records import KjbodLogDir


def _features(specs: Sequence[str]) -> dict[str, tuple[int, int]]:
    if not specs:
        return default_supported_ranges()
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


def registration_request(
    *,
    config: Path | None,
    broker_id: int | None,
    dirs: Sequence[str],
    rack: str | None,
    incarnation_id: str | None,
    supported_features: Sequence[str],
) -> tuple[BrokerRegistrationRequest, list[str]]:
    """The request, and notes for the operator (directories that could not be read)."""
    notes: list[str] = []
    if config is not None:
        from kjbod.storage.broker_dirs import read_broker_directories

        found = read_broker_directories(config)
        broker_id = found.node_id
        rack = rack if rack is not None else found.rack
        log_dirs = tuple(KjbodLogDir(directory_id=d, path=p) for p, d in found.directories)
        offline = frozenset(found.unreadable_ids)
        notes.extend(found.notes)
    else:
        assert broker_id is not None
        specs = [parse_directory_spec(spec) for spec in dirs]
        log_dirs = tuple(KjbodLogDir(directory_id=d, path=p) for p, d in specs)
        offline = frozenset()
    request = BrokerRegistrationRequest(
        broker_id=broker_id,
        incarnation_id=_incarnation(incarnation_id),
        log_dirs=log_dirs,
        offline_directory_ids=offline,
        rack=rack,
        supported_features=_features(supported_features),
    )
    return request, notes
