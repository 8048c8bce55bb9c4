"""`meta.properties`: Kafka's MetaProperties model, parser messages and file layout (§1.6, §2).

Version 0 is the legacy (ZooKeeper) layout with an optional `broker.id`; version 1 is KRaft's
with mandatory `cluster.id` and `node.id`. Both may carry a KIP-858 `directory.id`. Unknown
keys are ignored when parsing.

The file is written as Java 18+ writes it (the official Kafka image runs Java 21): an empty
comment line, the date line, then the keys in sorted order; atomically (temporary file, fsync,
rename) so a crash or a full disk never leaves a half-written file.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path

from kjbod.common.durable import atomic_write
from kjbod.common.java import parse_java_int
from kjbod.common.kafka_uuid import Uuid
from kjbod.errors import UserError
from kjbod.storage.config import java_trim
from kjbod.storage.properties import format_properties, read_properties

META_PROPERTIES = "meta.properties"
VERSION_KEY = "version"
CLUSTER_ID_KEY = "cluster.id"
NODE_ID_KEY = "node.id"
BROKER_ID_KEY = "broker.id"
DIRECTORY_ID_KEY = "directory.id"


class MetaPropertiesError(UserError):
    """A meta.properties that Kafka would refuse; the message is Kafka's (MetaProperties.java)."""


def _parse_version(props: Mapping[str, str]) -> int:
    raw = props.get(VERSION_KEY)
    if raw is None:
        return 0  # a missing version means v0 (MP:103-105)
    try:
        number = parse_java_int(java_trim(raw))
    except ValueError:
        raise MetaPropertiesError(f"Invalid meta.properties version string '{raw}'") from None
    if number not in (0, 1):
        raise MetaPropertiesError(f"Unknown meta.properties version number {number}")
    return number


def _parse_int(props: Mapping[str, str], key: str) -> int:
    """PropertiesUtils.loadRequiredIntProp: `Integer.parseInt`, no trimming."""
    raw = props.get(key)
    if raw is None:
        raise MetaPropertiesError(f"Failed to find {key}")
    try:
        return parse_java_int(raw)
    except ValueError:
        raise MetaPropertiesError(f"Unable to read {key} as a base-10 number.") from None


@dataclass(frozen=True)
class MetaProperties:
    """The contents of one directory's meta.properties."""

    version: int
    cluster_id: str | None = None
    node_id: int | None = None
    # The canonical 22-character text of the directory's Uuid.
    directory_id: str | None = None

    def __post_init__(self) -> None:
        # MetaProperties.Builder.build(): only v0 may lack the cluster id or the node id.
        if self.version != 0:
            if self.cluster_id is None:
                raise MetaPropertiesError("cluster.id was not found.")
            if self.node_id is None:
                raise MetaPropertiesError("node.id was not found.")

    @classmethod
    def from_properties(cls, props: Mapping[str, str]) -> MetaProperties:
        """Parse, checking in Kafka's order with Kafka's messages (MP:102-187)."""
        version = _parse_version(props)
        if version == 0:
            node_id = _parse_int(props, BROKER_ID_KEY) if BROKER_ID_KEY in props else None
        else:
            node_id = _parse_int(props, NODE_ID_KEY)
        directory_id = props.get(DIRECTORY_ID_KEY)
        if directory_id is not None:
            try:
                directory_id = str(Uuid.from_string(directory_id))
            except ValueError as exc:
                raise MetaPropertiesError(f"Unable to read directory.id as a Uuid: {exc}") from None
        return cls(version, props.get(CLUSTER_ID_KEY), node_id, directory_id)

    def to_properties(self) -> dict[str, str]:
        """MetaProperties.toProperties (MP:254-271)."""
        props = {VERSION_KEY: str(self.version)}
        if self.cluster_id is not None:
            props[CLUSTER_ID_KEY] = self.cluster_id
        if self.node_id is not None:
            props[BROKER_ID_KEY if self.version == 0 else NODE_ID_KEY] = str(self.node_id)
        if self.directory_id is not None:
            props[DIRECTORY_ID_KEY] = self.directory_id
        return props

    def with_directory_id(self, directory_id: str) -> MetaProperties:
        return replace(self, directory_id=directory_id)

    def __str__(self) -> str:
        """Kafka's toString (MP:237-252)."""
        parts = [f"version={self.version}"]
        if self.cluster_id is not None:
            parts.append(f"clusterId={self.cluster_id}")
        if self.node_id is not None:
            parts.append(f"nodeId={self.node_id}")
        if self.directory_id is not None:
            parts.append(f"directoryId={self.directory_id}")
        return f"MetaProperties({', '.join(parts)})"

    def to_json(self) -> dict[str, object]:
        return {
            "version": self.version,
            "clusterId": self.cluster_id,
            "nodeId": self.node_id,
            "directoryId": self.directory_id,
        }


def meta_properties_path(directory: str | Path) -> Path:
    return Path(directory) / META_PROPERTIES


def java_sorted_items(props: Mapping[str, str]) -> list[tuple[str, str]]:
    """Entries in Java's String order (UTF-16 code units), as Java 18+ `Properties.store` writes."""
    return sorted(props.items(), key=lambda item: item[0].encode("utf-16-be"))


def render_meta_properties(props: Mapping[str, str], date: datetime | None = None) -> bytes:
    """The exact bytes of a meta.properties holding `props` (Kafka's layout, sorted keys)."""
    return format_properties(java_sorted_items(props), comment="", date=date)


def write_meta_properties(directory: Path, props: Mapping[str, str], date: datetime | None = None) -> None:
    """Write `<directory>/meta.properties` atomically via `meta.properties.tmp`, as Kafka does.

    On any error the temporary file is gone and an existing meta.properties is unchanged.
    """
    atomic_write(meta_properties_path(directory), render_meta_properties(props, date))


def read_meta_properties(directory: str | Path) -> tuple[dict[str, str], MetaProperties]:
    """The raw properties and the parsed model of `<directory>/meta.properties`.

    Raises PropertiesError (unreadable; `missing` when there is no file) or MetaPropertiesError.
    """
    raw = read_properties(meta_properties_path(directory))
    return raw, MetaProperties.from_properties(raw)
