"""The state directory's name index: its broker ids, topic names and metadata.version in one small
file, so that shell completion answers at a TAB without loading the state.

A million-partition state takes seconds to load; the names in it are a few kilobytes. The state
package rewrites the index whenever a commit changes them (and on opening the state for writing,
if the file is missing or out of date), atomically. It is derived data and only ever a hint: a
reader that finds no index, or one it cannot read, offers nothing.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import orjson

from kjbod.common.durable import atomic_write

NAME_INDEX = "names.json"


@dataclass(frozen=True)
class NameIndex:
    brokers: tuple[int, ...]
    topics: tuple[str, ...]
    # The finalized metadata.version level; None before one is set.
    metadata_version: int | None

    def to_bytes(self) -> bytes:
        return orjson.dumps({"brokers": self.brokers, "topics": self.topics, "metadataVersion": self.metadata_version}) + b"\n"


def name_index(brokers: Iterable[int], topics: Iterable[str], metadata_version: int | None) -> NameIndex:
    return NameIndex(tuple(sorted(brokers)), tuple(sorted(topics)), metadata_version)


def read_name_index(directory: Path) -> NameIndex | None:
    """The index of the state in `directory`; None if there is none or it cannot be read."""
    try:
        data = orjson.loads((directory / NAME_INDEX).read_bytes())
        brokers, topics, level = data["brokers"], data["topics"], data["metadataVersion"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if not (
        isinstance(brokers, list) and all(type(b) is int for b in brokers)
        and isinstance(topics, list) and all(type(t) is str for t in topics)
        and (level is None or type(level) is int)
    ):
        return None
    return NameIndex(tuple(brokers), tuple(topics), level)


def write_name_index(directory: Path, index: NameIndex) -> None:
    """Replace the index, whole or not at all. Raises OSError."""
    atomic_write(directory / NAME_INDEX, index.to_bytes())
