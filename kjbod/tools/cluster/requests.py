"""The tool side of the cluster-state commands: reading what the operator typed or wrote in a
file into controller requests, and describing results in words.

Everything here is pure and raises UserError with a message naming the bad value.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from kjbod.common.kafka_uuid import canonical
from kjbod.common.versions import parse_feature_range  # noqa: F401  (re-exported: broker register's --supported-feature)
from kjbod.controller.replication_control import PartitionImpact
from kjbod.errors import UserError


def _int(text: str, what: str) -> int:
    try:
        return int(text.strip())
    except ValueError:
        raise UserError(f"Invalid {what} '{text}': expected an integer") from None


def parse_directory_spec(text: str) -> tuple[str, str]:
    """`PATH=DIRID` -> (path, canonical directory id)."""
    path, sep, directory = text.rpartition("=")
    if not sep or not path or not directory:
        raise UserError(f"Invalid --dir '{text}': expected PATH=DIRECTORY_ID, e.g. /mnt/d1=ZNJ-ywU0nnQwRv5eRRU9ow")
    try:
        return path, canonical(directory)
    except ValueError as exc:
        raise UserError(f"Invalid directory id in --dir '{text}': {exc}") from None


def parse_replica_assignment(text: str) -> tuple[tuple[int, ...], ...]:
    """kafka-topics' `--replica-assignment 1:2:3,2:3:1`, with its messages."""
    partitions = []
    for index, part in enumerate(text.split(",")):
        brokers = []
        for item in part.split(":"):
            try:
                brokers.append(int(item.strip()))
            except ValueError:
                raise UserError(f'For input string: "{item.strip()}" (in --replica-assignment)') from None
        duplicates = sorted({b for b in brokers if brokers.count(b) > 1})
        if duplicates:
            raise UserError(f"Partition replica lists may not contain duplicate entries: {','.join(map(str, duplicates))}")
        if partitions and len(brokers) != len(partitions[0]):
            raise UserError(f"Partition {index} has different replication factor: {','.join(map(str, brokers))}")
        partitions.append(tuple(brokers))
    return tuple(partitions)


def parse_config(text: str) -> tuple[str, str]:
    key, sep, value = text.partition("=")
    if not sep or not key.strip():
        raise UserError(f"Invalid --config '{text}': expected KEY=VALUE, e.g. retention.ms=86400000")
    return key.strip(), value.strip()


def parse_assignment(text: str) -> tuple[str, int, str]:
    """`TOPIC:PARTITION=DIR` (DIR: a directory id or a path of the broker)."""
    target, sep, directory = text.partition("=")
    topic, colon, partition = target.rpartition(":")
    if not sep or not colon or not topic or not directory:
        raise UserError(f"Invalid --assign '{text}': expected TOPIC:PARTITION=DIRECTORY, e.g. orders:0=/mnt/d1")
    return topic, _int(partition, f"partition in --assign '{text}'"), directory


def _load_json(path: Path, what: str) -> Any:
    try:
        return json.loads(path.read_text())
    except OSError as exc:
        raise UserError(f"Cannot read {what} {path}: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise UserError(f"{what.capitalize()} {path} is not valid JSON: {exc}") from None


def read_assignment_file(path: Path) -> list[tuple[str, int, str]]:
    """`{"assignments": [{"topic": "orders", "partition": 0, "directory": "/mnt/d1"}, ...]}`."""
    data = _load_json(path, "assignment file")
    items = data.get("assignments") if isinstance(data, dict) else None
    if not isinstance(items, list):
        raise UserError(f'Assignment file {path} has no "assignments" list')
    out = []
    for index, item in enumerate(items):
        if not (
            isinstance(item, dict)
            and isinstance(item.get("topic"), str)
            and isinstance(item.get("partition"), int)
            and isinstance(item.get("directory"), str)
        ):
            raise UserError(
                f'Assignment file {path}: $.assignments[{index}] needs "topic" (string), "partition" (integer) '
                'and "directory" (string)'
            )
        out.append((item["topic"], item["partition"], item["directory"]))
    return out


def read_election_file(path: Path) -> list[tuple[str, int]]:
    """kafka-leader-election's `{"partitions": [{"topic": "foo", "partition": 1}]}`, its messages."""
    data = _load_json(path, "election file")
    if not data:
        raise UserError("Replica election data is empty")
    if not isinstance(data, dict) or "partitions" not in data:
        raise UserError('Replica election data is missing "partitions" field')
    partitions = []
    for index, item in enumerate(data["partitions"] if isinstance(data["partitions"], list) else [None]):
        if not (isinstance(item, dict) and isinstance(item.get("topic"), str) and isinstance(item.get("partition"), int)):
            raise UserError(f"Election file {path}: $.partitions[{index}] needs \"topic\" (string) and \"partition\" (integer)")
        partitions.append((item["topic"], item["partition"]))
    duplicates = sorted({p for p in partitions if partitions.count(p) > 1})
    if duplicates:
        listed = ", ".join(f"{t}-{p}" for t, p in duplicates)
        raise UserError(f"Replica election data contains duplicate partitions: [{listed}]")
    return partitions


def _brokers(brokers: Iterable[int]) -> str:
    """A broker list; an empty one (an ISR that lost every member) reads `none`, as a leader does."""
    return ",".join(map(str, brokers)) or "none"


def _leader(leader: int) -> str:
    return "none" if leader == -1 else str(leader)


def impact_lines(impacts: Sequence[PartitionImpact]) -> list[str]:
    lines = []
    for item in impacts:
        changes = []
        if item.leader_before != item.leader_after:
            changes.append(f"leader {_leader(item.leader_before)} -> {_leader(item.leader_after)}")
        if item.isr_before != item.isr_after:
            changes.append(f"ISR {_brokers(item.isr_before)} -> {_brokers(item.isr_after)}")
        if item.elr_before != item.elr_after:
            changes.append(f"ELR {_brokers(item.elr_before)} -> {_brokers(item.elr_after)}")
        if item.directories_before != item.directories_after:
            changes.append("directories changed")
        if item.leader_before == item.leader_after and not changes:
            changes.append(f"leader epoch bumped (leader {_leader(item.leader_after)})")
        suffix = " (offline: no leader)" if item.leader_after == -1 else ""
        lines.append(f"  {item.topic}-{item.partition}: {', '.join(changes)}{suffix}")
    return lines


def impact_json(impacts: Sequence[PartitionImpact]) -> list[dict[str, Any]]:
    return [
        {
            "topic": item.topic,
            "partition": item.partition,
            "leaderBefore": item.leader_before,
            "leaderAfter": item.leader_after,
            "isrBefore": list(item.isr_before),
            "isrAfter": list(item.isr_after),
            "directoriesBefore": list(item.directories_before),
            "directoriesAfter": list(item.directories_after),
            "elrBefore": list(item.elr_before),
            "elrAfter": list(item.elr_after),
        }
        for item in impacts
    ]
