"""An image's topics read straight from a PartitionTable (kjbod/image/columns.py): the maps of
an image loaded from a columnar snapshot, and its partition index.

Nothing here copies the table or walks it object by object: a topic, a partition registration or
a member's partitions are made from the columns when a command first asks for them, and kept.
A command that touches ten partitions of a million-partition state creates ten registrations.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

import numpy as np

from kjbod.image.columns import UNKNOWN_SIZE, PartitionTable
from kjbod.image.maps import EMPTY_MAP, SharedMap
from kjbod.image.partitions import (
    RESERVED_DIRECTORIES,
    Members,
    PartitionKey,
    PartitionRegistration,
    ReplicaLog,
    TopicImage,
    members_of,
)
from kjbod.records import NO_LEADER

_MISSING: Any = object()


class ColumnarPartitions(SharedMap):
    """A topic's partitions (partition id -> registration), rows lo:hi of the table."""

    __slots__ = ("_table", "_lo", "_hi", "_made", "_complete")

    def __init__(self, table: PartitionTable, lo: int, hi: int) -> None:
        self._table = table
        self._lo = lo
        self._hi = hi
        self._made: dict[int, PartitionRegistration] = {}
        self._complete = False

    def _row(self, partition_id: Any) -> int:
        return self._table.row_in(self._lo, self._hi, partition_id)

    def get(self, partition_id: Any, default: Any = None) -> Any:
        made = self._made.get(partition_id)
        if made is not None:
            return made
        if self._complete:
            return default
        row = self._row(partition_id)
        if row < 0:
            return default
        made = self._made[partition_id] = self._table.registration(row)
        return made

    def __getitem__(self, partition_id: int) -> PartitionRegistration:
        found = self.get(partition_id, _MISSING)
        if found is _MISSING:
            raise KeyError(partition_id)
        return found

    def __contains__(self, partition_id: object) -> bool:
        return partition_id in self._made or (not self._complete and self._row(partition_id) >= 0)

    def __iter__(self) -> Iterator[int]:
        return iter(self._table.part_id[self._lo : self._hi].tolist())

    def __len__(self) -> int:
        return self._hi - self._lo

    def _all(self) -> dict[int, PartitionRegistration]:
        """Every registration, made in bulk; one made earlier stays the same object."""
        if not self._complete:
            made = self._made
            ids = self._table.part_id[self._lo : self._hi].tolist()
            registrations = self._table.registrations(self._lo, self._hi)
            self._made = {pid: made.get(pid, registration) for pid, registration in zip(ids, registrations)}
            self._complete = True
        return self._made

    def keys(self):  # noqa: ANN201 (a KeysView)
        return self._all().keys()

    def items(self):  # noqa: ANN201
        return self._all().items()

    def values(self):  # noqa: ANN201
        return self._all().values()

    def __repr__(self) -> str:
        return f"ColumnarPartitions(rows {self._lo}:{self._hi})"


class ColumnarSizes(SharedMap):
    """A topic's partition sizes (partition id -> bytes), only the partitions with a size."""

    __slots__ = ("_table", "_lo", "_hi", "_len")

    def __init__(self, table: PartitionTable, lo: int, hi: int) -> None:
        self._table = table
        self._lo = lo
        self._hi = hi
        self._len: int | None = None

    def _row(self, partition_id: Any) -> int:
        return self._table.row_in(self._lo, self._hi, partition_id)

    def get(self, partition_id: Any, default: Any = None) -> Any:
        row = self._row(partition_id)
        if row < 0:
            return default
        size = int(self._table.size[row])
        return default if size == UNKNOWN_SIZE else size

    def __getitem__(self, partition_id: int) -> int:
        found = self.get(partition_id, _MISSING)
        if found is _MISSING:
            raise KeyError(partition_id)
        return found

    def __contains__(self, partition_id: object) -> bool:
        return self.get(partition_id, _MISSING) is not _MISSING

    def __iter__(self) -> Iterator[int]:
        sizes = self._table.size[self._lo : self._hi]
        return iter(self._table.part_id[self._lo : self._hi][sizes != UNKNOWN_SIZE].tolist())

    def __len__(self) -> int:
        if self._len is None:
            self._len = int(np.count_nonzero(self._table.size[self._lo : self._hi] != UNKNOWN_SIZE))
        return self._len

    def items(self):  # noqa: ANN201
        sizes = self._table.size[self._lo : self._hi]
        known = sizes != UNKNOWN_SIZE
        return dict(zip(self._table.part_id[self._lo : self._hi][known].tolist(), sizes[known].tolist())).items()


class ColumnarLogs(SharedMap):
    """A topic's replica logs ((partition id, broker, future) -> ReplicaLog), read on first use."""

    __slots__ = ("_table", "_topic", "_logs")

    def __init__(self, table: PartitionTable, topic: int) -> None:
        self._table = table
        self._topic = topic
        self._logs: dict[tuple[int, int, bool], ReplicaLog] | None = None

    def _all(self) -> dict[tuple[int, int, bool], ReplicaLog]:
        if self._logs is None:
            self._logs = self._table.replica_logs(self._topic)
        return self._logs

    def get(self, key: Any, default: Any = None) -> Any:
        return self._all().get(key, default)

    def __getitem__(self, key: tuple[int, int, bool]) -> ReplicaLog:
        return self._all()[key]

    def __contains__(self, key: object) -> bool:
        return key in self._all()

    def __iter__(self) -> Iterator[tuple[int, int, bool]]:
        return iter(self._all())

    def __len__(self) -> int:
        return self._table.topic_logs[self._topic + 1] - self._table.topic_logs[self._topic]

    def items(self):  # noqa: ANN201
        return self._all().items()


class ColumnarTopics(SharedMap):
    """Topic id -> TopicImage, each made on first use (and kept, so it stays the same object)."""

    __slots__ = ("table", "_made")

    def __init__(self, table: PartitionTable) -> None:
        self.table = table
        self._made: dict[int, TopicImage] = {}

    def topic(self, t: int) -> TopicImage:
        made = self._made.get(t)
        if made is None:
            table = self.table
            lo, hi = table.rows(t)
            logs = ColumnarLogs(table, t) if table.topic_logs[t] != table.topic_logs[t + 1] else EMPTY_MAP
            made = self._made[t] = TopicImage(
                table.topic_names[t], table.topic_ids[t], ColumnarPartitions(table, lo, hi), ColumnarSizes(table, lo, hi), logs
            )
        return made

    def get(self, topic_id: Any, default: Any = None) -> Any:
        t = self.table.topic_index.get(topic_id)
        return default if t is None else self.topic(t)

    def __getitem__(self, topic_id: str) -> TopicImage:
        return self.topic(self.table.topic_index[topic_id])

    def __contains__(self, topic_id: object) -> bool:
        return topic_id in self.table.topic_index

    def __iter__(self) -> Iterator[str]:
        return iter(self.table.topic_ids)

    def __len__(self) -> int:
        return self.table.topic_count


class ColumnarTopicsByName(SharedMap):
    """Topic name -> TopicImage, over the same topics as a ColumnarTopics."""

    __slots__ = ("_topics",)

    def __init__(self, topics: ColumnarTopics) -> None:
        self._topics = topics

    def get(self, name: Any, default: Any = None) -> Any:
        t = self._topics.table.name_index.get(name)
        return default if t is None else self._topics.topic(t)

    def __getitem__(self, name: str) -> TopicImage:
        return self._topics.topic(self._topics.table.name_index[name])

    def __contains__(self, name: object) -> bool:
        return name in self._topics.table.name_index

    def __iter__(self) -> Iterator[str]:
        return iter(self._topics.table.topic_names)

    def __len__(self) -> int:
        return self._topics.table.topic_count


class ColumnarIndex:
    """Who holds what, answered from the columns one member at a time (and kept)."""

    def __init__(self, table: PartitionTable) -> None:
        self._table = table
        self._found: dict[str, dict[Any, Members]] = {}

    def members(self, view: str, member: Any) -> Members:
        found = self._found.setdefault(view, {})
        members = found.get(member)
        if members is None:
            rows = self._rows(view, member)
            members = found[member] = dict.fromkeys(self._table.keys(rows)) if len(rows) else {}
        return members

    def _rows(self, view: str, member: Any) -> np.ndarray:
        table = self._table
        if view == "by_leader":
            return np.flatnonzero(table.leader == member) if isinstance(member, int) else np.zeros(0, np.int64)
        if view == "in_isr":
            if not isinstance(member, int):
                return np.zeros(0, np.int64)
            rows = self._isr_rows()[np.flatnonzero(table.isr.values == member)]
        elif view == "on_broker":
            if not isinstance(member, int):
                return np.zeros(0, np.int64)
            rows = table.replica_row[np.flatnonzero(table.replicas.values == member)]
        else:  # in_directory: real directories only
            code = table.dir_index.get(member) if member not in RESERVED_DIRECTORIES else None
            if code is None:
                return np.zeros(0, np.int64)
            rows = table.replica_row[np.flatnonzero(table.directories == code)]
        return np.unique(rows)  # ascending; a row listed twice (a broker twice in a list) once

    def _isr_rows(self) -> np.ndarray:
        rows = self._found.get("_isr_rows")
        if rows is None:
            rows = self._table.isr.value_rows()
            self._found["_isr_rows"] = rows  # type: ignore[assignment]
        return rows  # type: ignore[return-value]

    def all_members(self, view: str) -> list[Any]:
        table = self._table
        if view == "by_leader":
            return np.unique(table.leader).tolist()
        if view == "in_isr":
            return np.unique(table.isr.values).tolist()
        if view == "on_broker":
            return np.unique(table.replicas.values).tolist()
        return [table.dir_ids[c] for c in np.unique(table.directories).tolist() if table.dir_ids[c] not in RESERVED_DIRECTORIES]


class ColumnarRoot:
    """The table an image was loaded from, with the maps and the index read from it. Every image
    derived from that one by deltas shares it."""

    def __init__(self, table: PartitionTable) -> None:
        self.table = table
        self.topics = ColumnarTopics(table)
        self.by_name = ColumnarTopicsByName(self.topics)
        self.index = ColumnarIndex(table)

    def partition(self, key: PartitionKey) -> PartitionRegistration | None:
        topic = self.topics.get(key[0])
        return None if topic is None else topic.partitions.get(key[1])


Lookup = Callable[[PartitionKey], "PartitionRegistration | None"]


class RootedIndex:
    """The partition index (see PartitionIndex) of an image whose partitions come from a
    ColumnarRoot, changed since by deltas.

    A member's partitions are the root's, patched with the partitions changed since the root;
    or, when the image this one was derived from had already found them, those patched with
    the last delta's changes only (so a long run of small commits in one process stays cheap).
    """

    def __init__(
        self,
        root: ColumnarRoot,
        current: Lookup,
        changed: Mapping[tuple[str, int], None],
        base_found: dict[str, dict[Any, Members]] | None = None,
        touched: Mapping[PartitionKey, PartitionRegistration | None] | None = None,
    ) -> None:
        self._root = root
        self._current = current
        self._changed = changed
        self._base_found = base_found
        self._touched = touched
        self.found: dict[str, dict[Any, Members]] = {"in_isr": {}, "on_broker": {}, "by_leader": {}, "in_directory": {}}

    def members(self, view: str, member: Any) -> Members:
        found = self.found[view]
        members = found.get(member)
        if members is not None:
            return members
        base = self._base_found.get(view, {}).get(member) if self._base_found is not None else None
        if base is not None and self._touched is not None:
            members = _patch(base, view, member, self._touched.items(), self._current)
        else:
            root = self._root
            since_root = ((key, root.partition(key)) for key in self._changed if key[1] >= 0)
            members = _patch(root.index.members(view, member), view, member, since_root, self._current)
        found[member] = members
        return members

    def all_members(self, view: str) -> list[Any]:
        candidates = dict.fromkeys(self._root.index.all_members(view))
        for key in self._changed:
            if key[1] >= 0:
                partition = self._current(key)
                if partition is not None:
                    candidates.update(dict.fromkeys(members_of(view, partition)))
        return [m for m in candidates if self.members(view, m)]

    @property
    def in_isr(self) -> _View:
        return _View(self, "in_isr")

    @property
    def on_broker(self) -> _View:
        return _View(self, "on_broker")

    @property
    def led_by(self) -> _View:
        return _View(self, "by_leader")

    @property
    def leaderless(self) -> Members:
        return self.members("by_leader", NO_LEADER)

    @property
    def in_directory(self) -> _View:
        return _View(self, "in_directory")


def _patch(
    members: Members,
    view: str,
    member: Any,
    changes: Iterable[tuple[PartitionKey, PartitionRegistration | None]],
    current: Lookup,
) -> Members:
    """`members` (a member's partitions before the changes) after them; the same dict when
    nothing changed for this member."""
    patched: Members | None = None
    for key, old in changes:
        new = current(key)
        was = old is not None and member in members_of(view, old)
        now = new is not None and member in members_of(view, new)
        if was == now:
            continue
        if patched is None:
            patched = dict(members)
        if was:
            patched.pop(key, None)
        else:
            patched[key] = None
    return members if patched is None else patched


class _View(Mapping):
    """One view of a RootedIndex, as a read-only map member -> its partitions (members without
    any are absent)."""

    __slots__ = ("_index", "_view")

    def __init__(self, index: RootedIndex, view: str) -> None:
        self._index = index
        self._view = view

    def get(self, member: Any, default: Any = None) -> Any:
        members = self._index.members(self._view, member)
        return members if members else default

    def __getitem__(self, member: Any) -> Members:
        members = self._index.members(self._view, member)
        if not members:
            raise KeyError(member)
        return members

    def __contains__(self, member: object) -> bool:
        return bool(self._index.members(self._view, member))

    def __iter__(self) -> Iterator[Any]:
        return iter(self._index.all_members(self._view))

    def __len__(self) -> int:
        return len(self._index.all_members(self._view))
