"""Keeping the state directory's name index (kjbod.log.name_index) in step with the image: the
broker ids, topic names and metadata.version that shell completion offers."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from kjbod.image import Image
from kjbod.log.name_index import NameIndex, name_index, read_name_index, write_name_index
from kjbod.records import FeatureLevelRecord, Record, RegisterBrokerRecord, RemoveTopicRecord, TopicRecord, UnregisterBrokerRecord
from kjbod.records.codec import RecordRun

# The only records that change what the index holds.
_NAMING = (TopicRecord, RemoveTopicRecord, RegisterBrokerRecord, UnregisterBrokerRecord, FeatureLevelRecord)


def names_of(image: Image) -> NameIndex:
    mv = image.features.metadata_version
    return name_index(image.cluster.brokers, image.topics.by_name, mv.level if mv is not None else None)


def may_rename(entries: Sequence[Record | RecordRun]) -> bool:
    """Whether a commit of `entries` can change the index (cheap: record types only)."""
    return any(issubclass(e.record_type, _NAMING) if isinstance(e, RecordRun) else isinstance(e, _NAMING) for e in entries)


def sync_name_index(directory: Path, image: Image, *, check: bool = False) -> None:
    """Write the index of `image`; with `check`, only if the file does not already hold it.

    Best effort: the index is a hint for completion, so a write that fails (a full disk) does
    not fail the command that committed; the next writer tries again."""
    names = names_of(image)
    if check and read_name_index(directory) == names:
        return
    try:
        write_name_index(directory, names)
    except OSError:
        pass
