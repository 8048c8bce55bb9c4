"""The partitions of a topics image as columns: numpy arrays with one row per partition (and one
entry per replica), instead of a Python object per partition.

A columnar snapshot stores exactly these arrays, and an image loaded from one reads them where
they lie (memory-mapped), so opening a state creates no object per partition. Readers that look
at every partition (the planner's tables, `reassign check`'s facts, the broker and log-dirs
views) read an image's table (`TopicsImage.table()`): the snapshot's arrays with the changes
made since patched in, or, for an image that was not loaded from columns, built from its objects.

Rows are grouped by topic, topics in `topic_ids` order (an image loaded from a snapshot: topic
id order, as it iterates its topics), and sorted by partition id within a topic. Directory ids
are small integer codes into `dir_ids`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from itertools import chain
from typing import Any

import numpy as np

from kjbod.image.partitions import EMPTY, PartitionKey, PartitionRegistration, ReplicaLog, TopicImage

NO_DIRECTORY = -1  # a replica log without a directory (log_dir column)
UNKNOWN_SIZE = -1  # a partition whose size was never recorded (size column)

_INT = np.int32
_START = np.int64
# Elements per step where a whole column is scanned a chunk at a time (count_values,
# replication_width): the temporary arrays stay in the processor's cache.
_CHUNK = 1 << 16


class Ragged:
    """A list of ints per row, stored flat: stored row i holds values[start[i]:start[i + 1]].

    A sparse one stores only the rows whose list is not empty (`rows`, ascending); every other
    row's list is empty. Reassignments and ELRs are rare, so their lists are sparse."""

    __slots__ = ("start", "values", "rows", "_where")

    def __init__(self, start: np.ndarray, values: np.ndarray, rows: np.ndarray | None = None) -> None:
        self.start = start
        self.values = values
        self.rows = rows
        self._where: dict[int, int] | None = None  # a sparse one's row -> stored index, made on use

    @classmethod
    def dense(cls, lists: Sequence[Sequence[int]]) -> Ragged:
        lengths = np.fromiter(map(len, lists), _START, len(lists))
        start = np.zeros(len(lists) + 1, _START)
        np.cumsum(lengths, out=start[1:])
        return cls(start, np.fromiter(chain.from_iterable(lists), _INT, int(start[-1])))

    @classmethod
    def sparse(cls, entries: Sequence[tuple[int, Sequence[int]]]) -> Ragged:
        """From (row, list) pairs in ascending row order; empty lists are left out."""
        kept = [(row, values) for row, values in entries if values]
        inner = cls.dense([values for _, values in kept])
        return cls(inner.start, inner.values, np.fromiter((row for row, _ in kept), _INT, len(kept)))

    @property
    def is_sparse(self) -> bool:
        return self.rows is not None

    def get(self, row: int) -> tuple[int, ...]:
        if self.rows is not None:
            if self._where is None:
                self._where = {r: i for i, r in enumerate(self.rows.tolist())}
            found = self._where.get(row)
            if found is None:
                return EMPTY
            row = found
        return tuple(self.values[self.start[row] : self.start[row + 1]].tolist())

    def lengths(self, count: int) -> np.ndarray:
        """The length of every row's list (`count` rows)."""
        lengths = np.diff(self.start)
        if self.rows is None:
            return lengths
        dense = np.zeros(count, _START)
        dense[self.rows] = lengths
        return dense

    def value_rows(self) -> np.ndarray:
        """The row of every value (int64)."""
        per_row = np.diff(self.start)
        stored = np.arange(len(per_row), dtype=np.int64) if self.rows is None else self.rows.astype(np.int64)
        return np.repeat(stored, per_row)

    def stored_rows(self, count: int) -> np.ndarray:
        """The rows whose list is not empty."""
        if self.rows is not None:
            return self.rows
        return np.flatnonzero(np.diff(self.start) > 0)

    def take(self, order: np.ndarray) -> Ragged:
        """The lists of rows `order`, as rows 0, 1, ..."""
        if self.rows is None:
            return Ragged(*_gather(self.start, self.values, order))
        if not len(self.rows):
            return Ragged(np.zeros(1, _START), self.values[:0], self.rows[:0])
        position = np.minimum(np.searchsorted(self.rows, order), len(self.rows) - 1)
        present = self.rows[position] == order
        start, values = _gather(self.start, self.values, position[present])
        return Ragged(start, values, np.flatnonzero(present).astype(_INT))

    def append(self, other: Ragged, count: int) -> Ragged:
        """These rows (`count` of them), then `other`'s."""
        start = np.concatenate([self.start, other.start[1:] + self.start[-1]])
        values = np.concatenate([self.values, other.values])
        if self.rows is None:
            return Ragged(start, values)
        assert other.rows is not None
        return Ragged(start, values, np.concatenate([self.rows, other.rows + count]).astype(_INT))

    def same(self, other: Ragged, count: int) -> bool:
        return bool(np.array_equal(self.lengths(count), other.lengths(count)) and np.array_equal(self.values, other.values))

    def check(self, count: int, name: str) -> None:
        """Raise ValueError unless the arrays describe `count` rows consistently."""
        stored = count if self.rows is None else len(self.rows)
        if len(self.start) != stored + 1 or self.start[0] != 0 or self.start[-1] != len(self.values):
            raise ValueError(f"column {name} does not hold {count} rows")
        if stored and _descends(self.start):
            raise ValueError(f"column {name} has lists of negative length")
        if self.rows is not None and len(self.rows):
            if self.rows[0] < 0 or self.rows[-1] >= count or np.any(self.rows[1:] <= self.rows[:-1]):
                raise ValueError(f"column {name} lists rows out of order")


def _descends(values: np.ndarray) -> bool:
    """Whether some value is below the one before it: compared in place (np.diff would allocate
    an array as long as `values`, millions of entries, on every opening of a state)."""
    return bool(np.any(values[1:] < values[:-1]))


def _gather(start: np.ndarray, values: np.ndarray, order: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    order = np.asarray(order, np.int64)
    new_start = np.zeros(len(order) + 1, _START)
    np.cumsum(start[order + 1] - start[order], out=new_start[1:])
    return new_start, values[gather_index(start, order)]


class _Codes(dict):
    """str -> a small integer, a new one the first time a string is seen."""

    def __missing__(self, key: str) -> int:
        code = self[key] = len(self)
        return code


# The arrays of a table, by name: per partition, per replica, per replica log.
_PARTITION_COLUMNS = ("part_id", "leader", "leader_epoch", "partition_epoch", "leader_recovery_state", "size")
_RAGGED_COLUMNS = ("replicas", "isr", "removing", "adding", "elr", "last_known_elr")
_SPARSE = frozenset(("removing", "adding", "elr", "last_known_elr"))
_LOG_COLUMNS = ("log_row", "log_broker", "log_future", "log_dir", "log_size", "log_lag")
_DTYPES = {
    "topic_start": _START,
    "part_id": _INT,
    "leader": _INT,
    "leader_epoch": _INT,
    "partition_epoch": _INT,
    "leader_recovery_state": np.int8,
    "size": np.int64,
    "directories": _INT,
    "log_row": _INT,
    "log_broker": _INT,
    "log_future": np.bool_,
    "log_dir": _INT,
    "log_size": np.int64,
    "log_lag": np.int64,
}


@dataclass(frozen=True, eq=False)
class PartitionTable:
    """Every partition of a topics image, column by column (see the module docstring)."""

    topic_ids: list[str]
    topic_names: list[str]
    topic_start: np.ndarray  # int64: the rows of topic t are topic_start[t]:topic_start[t + 1]
    part_id: np.ndarray
    leader: np.ndarray
    leader_epoch: np.ndarray
    partition_epoch: np.ndarray
    leader_recovery_state: np.ndarray
    size: np.ndarray  # int64 bytes, UNKNOWN_SIZE where no size was recorded
    replicas: Ragged
    directories: np.ndarray  # int32 codes into dir_ids, one per replica (aligned with replicas.values)
    isr: Ragged
    removing: Ragged
    adding: Ragged
    elr: Ragged
    last_known_elr: Ragged
    dir_ids: list[str]
    # Replica logs (KjbodReplicaLogRecord), ordered by (row, broker, future).
    log_row: np.ndarray
    log_broker: np.ndarray
    log_future: np.ndarray
    log_dir: np.ndarray  # code into dir_ids, NO_DIRECTORY for none
    log_size: np.ndarray
    log_lag: np.ndarray

    # Shape ------------------------------------------------------------------------------------

    @property
    def partition_count(self) -> int:
        return len(self.part_id)

    @property
    def topic_count(self) -> int:
        return len(self.topic_ids)

    @cached_property
    def part_topic(self) -> np.ndarray:
        """The topic index of every row."""
        return np.repeat(np.arange(self.topic_count, dtype=_INT), np.diff(self.topic_start))

    @cached_property
    def replica_row(self) -> np.ndarray:
        """The row of every replica (aligned with replicas.values)."""
        return self.replicas.value_rows()

    def rows_of_entries(self, entries: np.ndarray) -> np.ndarray:
        """The row of each of these replica entries (int64), found by search: for the replicas of
        one broker, far cheaper than replica_row, the row of every replica (millions)."""
        if "replica_row" in self.__dict__:
            return self.replica_row[entries]
        return np.searchsorted(self.replicas.start, entries, side="right") - 1

    @cached_property
    def replica_count(self) -> np.ndarray:
        return np.diff(self.replicas.start)

    @cached_property
    def topic_index(self) -> dict[str, int]:
        return {topic_id: t for t, topic_id in enumerate(self.topic_ids)}

    @cached_property
    def name_index(self) -> dict[str, int]:
        return {name: t for t, name in enumerate(self.topic_names)}

    @cached_property
    def dir_index(self) -> dict[str, int]:
        return {directory: code for code, directory in enumerate(self.dir_ids)}

    @cached_property
    def _keys(self) -> np.ndarray:
        """(topic index, partition id) of every row as one int64, ascending."""
        return (self.part_topic.astype(np.int64) << 32) | (self.part_id.astype(np.int64) & 0xFFFFFFFF)

    @cached_property
    def first_listing(self) -> np.ndarray:
        """For each replica entry: False when the same broker is listed earlier in the same list
        (never in a valid registration), so counts of partitions per broker stay exact."""
        values, rows = self.replicas.values, self.replica_row
        first = np.ones(len(values), bool)
        longest = int(self.replica_count.max()) if len(self.replica_count) else 0
        for shift in range(1, longest):
            first[shift:] &= ~((rows[shift:] == rows[:-shift]) & (values[shift:] == values[:-shift]))
        return first

    @cached_property
    def replication_width(self) -> int | None:
        """The length every replica list has, when they all have one (one replication factor):
        the replica columns are then a rows x width matrix. None otherwise."""
        start, count = self.replicas.start, self.partition_count
        if not count:
            return None
        width = int(start[1] - start[0])
        if width <= 0 or int(start[-1]) != width * count:
            return None
        # A chunk at a time: no array as long as the table (millions of rows) for a yes or no.
        for first in range(0, count, _CHUNK):
            if np.any(np.diff(start[first : first + _CHUNK + 1]) != width):
                return None
        return width

    def partitions_per_broker(self) -> dict[int, int]:
        """Broker id -> the partitions it is a replica of."""
        values, width = self.replicas.values, self.replication_width
        if width is not None:
            matrix = values.reshape(-1, width)
            if not any(np.any(matrix[:, i] == matrix[:, j]) for i in range(width) for j in range(i + 1, width)):
                return count_values(values)  # no broker twice in a list: every listing counts (no row index needed)
        return count_values(values[self.first_listing])

    def leaders_per_broker(self) -> dict[int, int]:
        """Broker id -> the partitions it leads (NO_LEADER, -1, counts the leaderless)."""
        return count_values(self.leader)

    def remaining_replicas(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The replicas of rows `rows` once their running reassignments complete (the ones being
        removed are gone), in list order: (position in `rows` of each, its entry in the replica
        columns)."""
        rows = np.asarray(rows, np.int64)
        entry = gather_index(self.replicas.start, rows)
        position = np.repeat(np.arange(len(rows), dtype=np.int64), self.replica_count[rows])
        if len(self.removing.values):
            removing = pair(self.removing.value_rows(), self.removing.values)
            keep = ~member(pair(self.replica_row[entry], self.replicas.values[entry]), removing)
            entry, position = entry[keep], position[keep]
        return position, entry

    def in_isr(self, entries: np.ndarray) -> np.ndarray:
        """For replica entries: whether the replica is in its partition's ISR."""
        return member(pair(self.replica_row[entries], self.replicas.values[entries]), pair(self.isr.value_rows(), self.isr.values))

    # Finding rows -----------------------------------------------------------------------------

    def rows(self, t: int) -> tuple[int, int]:
        return int(self.topic_start[t]), int(self.topic_start[t + 1])

    def row_of(self, t: int, partition_id: int) -> int:
        """The row of a topic's partition, -1 if it has none with that id."""
        return self.row_in(*self.rows(t), partition_id)

    def row_in(self, lo: int, hi: int, partition_id: object) -> int:
        """The row of a partition id among rows lo:hi (one topic's), -1 if none."""
        if not isinstance(partition_id, int) or hi == lo:
            return -1
        ids = self.part_id
        guess = lo + partition_id  # ids are usually 0..n-1: no search
        if lo <= guess < hi and ids[guess] == partition_id:
            return guess
        i = lo + int(np.searchsorted(ids[lo:hi], partition_id))
        return i if i < hi and ids[i] == partition_id else -1

    def rows_of(self, topics: np.ndarray, partition_ids: np.ndarray) -> np.ndarray:
        """Rows of (topic index, partition id) pairs, -1 where there is no such partition."""
        keys = (np.asarray(topics, np.int64) << 32) | (np.asarray(partition_ids, np.int64) & 0xFFFFFFFF)
        if not len(self._keys):
            return np.full(len(keys), -1, np.int64)
        position = np.minimum(np.searchsorted(self._keys, keys), len(self._keys) - 1)
        return np.where(self._keys[position] == keys, position, -1)

    def keys(self, rows: Iterable[int] | np.ndarray) -> list[PartitionKey]:
        rows = np.asarray(rows, np.int64)
        ids = self.topic_ids
        return [(ids[t], p) for t, p in zip(self.part_topic[rows].tolist(), self.part_id[rows].tolist())]

    @cached_property
    def topic_logs(self) -> list[int]:
        """The replica logs of topic t are log indexes topic_logs[t]:topic_logs[t + 1]."""
        return np.searchsorted(self.log_row, self.topic_start).tolist()

    # Objects ----------------------------------------------------------------------------------

    def registration(self, row: int) -> PartitionRegistration:
        start = self.replicas.start
        s, e = start[row], start[row + 1]
        dir_ids = self.dir_ids
        return PartitionRegistration(
            tuple(self.replicas.values[s:e].tolist()),
            tuple([dir_ids[c] for c in self.directories[s:e].tolist()]),
            tuple(self.isr.values[self.isr.start[row] : self.isr.start[row + 1]].tolist()),
            self.removing.get(row),
            self.adding.get(row),
            self.elr.get(row),
            self.last_known_elr.get(row),
            int(self.leader[row]),
            int(self.leader_recovery_state[row]),
            int(self.leader_epoch[row]),
            int(self.partition_epoch[row]),
        )

    def registrations(self, lo: int, hi: int) -> list[PartitionRegistration]:
        """The registrations of rows lo:hi, converted column by column (much faster in bulk)."""
        if hi <= lo:
            return []
        replicas = _split(self.replicas, lo, hi)
        dir_ids = self.dir_ids
        codes = self.directories[self.replicas.start[lo] : self.replicas.start[hi]].tolist()
        flat_dirs = [dir_ids[c] for c in codes]
        offsets = (self.replicas.start[lo : hi + 1] - self.replicas.start[lo]).tolist()
        directories = [tuple(flat_dirs[offsets[i] : offsets[i + 1]]) for i in range(hi - lo)]
        isr = _split(self.isr, lo, hi)
        rare = [_split_sparse(column, lo, hi) for column in (self.removing, self.adding, self.elr, self.last_known_elr)]
        return [
            PartitionRegistration(*values)
            for values in zip(
                replicas, directories, isr, *rare,
                self.leader[lo:hi].tolist(), self.leader_recovery_state[lo:hi].tolist(),
                self.leader_epoch[lo:hi].tolist(), self.partition_epoch[lo:hi].tolist(),
            )
        ]

    def replica_logs(self, t: int) -> dict[tuple[int, int, bool], ReplicaLog]:
        """A topic's replica logs, keyed (partition id, broker, future) in that order."""
        lo, hi = self.topic_logs[t], self.topic_logs[t + 1]
        if hi == lo:
            return {}
        dir_ids = self.dir_ids
        return {
            (pid, broker, future): ReplicaLog(None if code < 0 else dir_ids[code], size, lag)
            for pid, broker, future, code, size, lag in zip(
                self.part_id[self.log_row[lo:hi]].tolist(), self.log_broker[lo:hi].tolist(), self.log_future[lo:hi].tolist(),
                self.log_dir[lo:hi].tolist(), self.log_size[lo:hi].tolist(), self.log_lag[lo:hi].tolist(),
            )
        }

    # Columns on disk --------------------------------------------------------------------------

    def arrays(self) -> dict[str, np.ndarray]:
        """Every array, by name (what a columnar snapshot stores)."""
        out: dict[str, np.ndarray] = {"topic_start": self.topic_start}
        for name in _PARTITION_COLUMNS:
            out[name] = getattr(self, name)
        for name in _RAGGED_COLUMNS:
            column: Ragged = getattr(self, name)
            out[f"{name}.start"] = column.start
            out[f"{name}.values"] = column.values
            if column.rows is not None:
                out[f"{name}.rows"] = column.rows
        out["directories"] = self.directories
        for name in _LOG_COLUMNS:
            out[name] = getattr(self, name)
        return out

    def strings(self) -> dict[str, list[str]]:
        return {"topicIds": self.topic_ids, "topicNames": self.topic_names, "directoryIds": self.dir_ids}

    @classmethod
    def from_arrays(cls, arrays: Mapping[str, np.ndarray], strings: Mapping[str, list[str]]) -> PartitionTable:
        """A table from stored arrays; ValueError if they do not fit together."""
        try:
            values: dict[str, Any] = {
                "topic_ids": list(strings["topicIds"]),
                "topic_names": list(strings["topicNames"]),
                "dir_ids": list(strings["directoryIds"]),
            }
            for name in ("topic_start", *_PARTITION_COLUMNS, "directories", *_LOG_COLUMNS):
                values[name] = arrays[name]
            for name in _RAGGED_COLUMNS:
                values[name] = Ragged(arrays[f"{name}.start"], arrays[f"{name}.values"], arrays.get(f"{name}.rows"))
                for part, dtype in (("start", _START), ("values", _INT), ("rows", _INT)):
                    array = getattr(values[name], part)
                    if array is not None and array.dtype != dtype:
                        raise ValueError(f"column {name}.{part} holds {array.dtype}, not {np.dtype(dtype)}")
        except KeyError as exc:
            raise ValueError(f"column {exc.args[0]} is missing") from None
        for name, dtype in _DTYPES.items():
            if values[name].dtype != dtype:
                raise ValueError(f"column {name} holds {values[name].dtype}, not {np.dtype(dtype)}")
        table = cls(**values)
        table.check()
        return table

    def check(self) -> None:
        """Raise ValueError unless the columns describe one consistent table."""
        topics, rows = self.topic_count, self.partition_count
        if len(self.topic_names) != topics or len(set(self.topic_ids)) != topics:
            raise ValueError("the topic ids and names do not match")
        start = self.topic_start
        if len(start) != topics + 1 or start[0] != 0 or start[-1] != rows or _descends(start):
            raise ValueError("the topics' rows do not cover the partitions")
        for name in _PARTITION_COLUMNS:
            if len(getattr(self, name)) != rows:
                raise ValueError(f"column {name} does not hold {rows} rows")
        for name in _RAGGED_COLUMNS:
            column: Ragged = getattr(self, name)
            if column.is_sparse != (name in _SPARSE):
                raise ValueError(f"column {name} is stored the wrong way")
            column.check(rows, name)
        if len(self.directories) != len(self.replicas.values):
            raise ValueError("the directories do not match the replicas")
        codes = len(self.dir_ids)
        if len(self.directories) and (self.directories.min() < 0 or self.directories.max() >= codes):
            raise ValueError("a replica's directory code is out of range")
        logs = len(self.log_row)
        if any(len(getattr(self, name)) != logs for name in _LOG_COLUMNS):
            raise ValueError("the replica log columns differ in length")
        if logs:
            if self.log_row.min() < 0 or self.log_row.max() >= rows or _descends(self.log_row):
                raise ValueError("a replica log's row is out of range")
            if self.log_dir.min() < NO_DIRECTORY or self.log_dir.max() >= codes:
                raise ValueError("a replica log's directory code is out of range")

    # Equality -----------------------------------------------------------------------------------

    def same_as(self, other: PartitionTable) -> bool:
        """The same partitions, sizes and replica logs (directory codes compared as ids)."""
        if self.topic_ids != other.topic_ids or self.topic_names != other.topic_names:
            return False
        if not np.array_equal(self.topic_start, other.topic_start):
            return False
        rows = self.partition_count
        if not all(np.array_equal(getattr(self, n), getattr(other, n)) for n in (*_PARTITION_COLUMNS, *_LOG_COLUMNS[:3], "log_size", "log_lag")):
            return False
        if not all(getattr(self, n).same(getattr(other, n), rows) for n in _RAGGED_COLUMNS):
            return False
        return bool(
            np.array_equal(_as_ids(self.directories, self.dir_ids), _as_ids(other.directories, other.dir_ids))
            and np.array_equal(_as_ids(self.log_dir, self.dir_ids), _as_ids(other.log_dir, other.dir_ids))
        )

    def by_topic_id(self) -> PartitionTable:
        """The same table with its topics in topic id order (the order of an image loaded from
        a snapshot, and the one snapshots are written in)."""
        order = sorted(range(self.topic_count), key=self.topic_ids.__getitem__)
        if order == list(range(self.topic_count)):
            return self
        starts = self.topic_start
        rows = np.concatenate([np.arange(starts[t], starts[t + 1]) for t in order]) if order else np.zeros(0, np.int64)
        renumber = np.empty(self.topic_count, np.int64)
        renumber[order] = np.arange(self.topic_count)
        return self.take(
            rows, topic_of_row=renumber[self.part_topic[rows]],
            topics=([self.topic_ids[t] for t in order], [self.topic_names[t] for t in order]),
        )

    # Building -----------------------------------------------------------------------------------

    @classmethod
    def from_topics(cls, topics: Iterable[TopicImage]) -> PartitionTable:
        """The table of topic objects (every partition of each, in partition id order)."""
        builder = _Builder([])
        for topic in topics:
            builder.add_topic(topic.topic_id, topic.name)
            builder.add_partitions(topic, sorted(topic.partitions))
        return builder.build()

    def patched(
        self, changed: Iterable[tuple[str, int]], current: Callable[[str], TopicImage | None]
    ) -> PartitionTable:
        """This table with the changes since it was taken: `changed` names the partitions
        (topic id, partition id) that may differ now, and (topic id, -1) the topics created or
        removed; `current` gives a topic as it is now. Unchanged rows keep their order; a new
        topic comes after the others."""
        by_topic: dict[str, list[int]] = {}
        for topic_id, partition_id in changed:
            by_topic.setdefault(topic_id, []).append(partition_id)
        keep_topic = np.ones(self.topic_count, bool)
        drop = np.zeros(self.partition_count, bool)
        new_topics: list[TopicImage] = []
        updates: list[tuple[int, TopicImage, list[int]]] = []  # (root topic, topic now, its partitions to rewrite)
        for topic_id, partition_ids in by_topic.items():
            t = self.topic_index.get(topic_id)
            topic = current(topic_id)
            if t is not None and (topic is None or topic.name != self.topic_names[t]):
                keep_topic[t] = False
                lo, hi = self.rows(t)
                drop[lo:hi] = True
                t = None
            if topic is None:
                continue
            if t is None:
                new_topics.append(topic)
                continue
            pids = sorted({p for p in partition_ids if p >= 0})
            rows = [r for r in (self.row_of(t, p) for p in pids) if r >= 0]
            drop[rows] = True
            updates.append((t, topic, [p for p in pids if p in topic.partitions]))
        renumber = np.cumsum(keep_topic) - 1  # a kept root topic's index in the result
        builder = _Builder(self.dir_ids)
        topic_ids = [tid for tid, kept in zip(self.topic_ids, keep_topic.tolist()) if kept]
        builder.topic_ids, builder.topic_names = topic_ids, [n for n, kept in zip(self.topic_names, keep_topic.tolist()) if kept]
        for t, topic, pids in updates:
            builder.add_partitions(topic, pids, topic_index=int(renumber[t]))
        for topic in new_topics:
            builder.add_topic(topic.topic_id, topic.name)
            builder.add_partitions(topic, sorted(topic.partitions))
        extra = builder.build(topic_count=len(builder.topic_ids), rows_by_topic=False)
        keep = ~drop
        return self._merge(keep, renumber[self.part_topic[keep]], extra, builder.topic_ids, builder.topic_names, builder.dir_ids)

    def _merge(
        self, keep: np.ndarray, kept_topic: np.ndarray, extra: PartitionTable, topic_ids: list[str], topic_names: list[str], dir_ids: list[str]
    ) -> PartitionTable:
        """The rows this table keeps (`keep`, a mask; their topics renumbered `kept_topic`) and
        every row of `extra`, in (topic, partition id) order: each array is filtered and has the
        few new rows inserted, in one pass each."""
        kept = np.flatnonzero(keep)
        extra_keys = pair(extra.part_topic, extra.part_id)
        extra_order = np.argsort(extra_keys, kind="stable")
        sorted_extra = extra_keys[extra_order]
        kept_keys = pair(kept_topic, self.part_id[kept])
        # Before which kept row each new row goes (keys never coincide: changed rows were dropped).
        insert_at = np.searchsorted(kept_keys, sorted_extra)

        def rows_of(own: np.ndarray, other: np.ndarray) -> np.ndarray:
            return np.insert(own[keep], insert_at, other[extra_order])

        topics = len(topic_ids)
        topic_start = np.zeros(topics + 1, _START)
        np.cumsum(np.bincount(kept_topic, minlength=topics) + np.bincount(extra.part_topic, minlength=topics), out=topic_start[1:])

        def dense(own: Ragged, other: Ragged, aligned: tuple[np.ndarray, np.ndarray] | None = None) -> tuple[Ragged, np.ndarray | None]:
            own_lengths = np.diff(own.start)
            keep_values = np.repeat(keep, own_lengths)
            kept_start = np.zeros(len(kept) + 1, np.int64)
            np.cumsum(own_lengths[keep], out=kept_start[1:])
            other_start, other_values = _gather(other.start, other.values, extra_order)
            other_lengths = np.diff(other_start)
            value_at = np.repeat(kept_start[insert_at], other_lengths)
            lengths = np.insert(own_lengths[keep], insert_at, other_lengths)
            start = np.zeros(len(lengths) + 1, _START)
            np.cumsum(lengths, out=start[1:])
            values = np.insert(own.values[keep_values], value_at, other_values)
            also = None
            if aligned is not None:  # the directories, one per replica
                other_aligned = aligned[1][gather_index(other.start, extra_order)]
                also = np.insert(aligned[0][keep_values], value_at, other_aligned)
            return Ragged(start, values), also

        # Where each row lands, for the row-linked columns (the rare lists, the replica logs).
        new_row = np.full(self.partition_count, -1, np.int64)
        new_row[kept] = np.arange(len(kept), dtype=np.int64) + np.searchsorted(sorted_extra, kept_keys)
        extra_out = np.empty(len(extra_order), np.int64)
        extra_out[extra_order] = insert_at + np.arange(len(extra_order), dtype=np.int64)

        def sparse(own: Ragged, other: Ragged) -> Ragged:
            assert own.rows is not None and other.rows is not None
            mapped = new_row[own.rows]
            stays = np.flatnonzero(mapped >= 0)
            rows = np.concatenate([mapped[stays], extra_out[other.rows]])
            joined = Ragged(*_gather(own.start, own.values, stays)).append(Ragged(other.start, other.values), len(stays))
            order = np.argsort(rows, kind="stable")
            return Ragged(*_gather(joined.start, joined.values, order), rows[order].astype(_INT))

        replicas, directories = dense(self.replicas, extra.replicas, (self.directories, extra.directories))
        isr, _ = dense(self.isr, extra.isr)
        log_rows = new_row[self.log_row] if len(self.log_row) else np.zeros(0, np.int64)
        log_kept = np.flatnonzero(log_rows >= 0)
        all_log_rows = np.concatenate([log_rows[log_kept], extra_out[extra.log_row]])
        log_order = np.argsort(all_log_rows, kind="stable")  # within a row, logs keep their (broker, future) order
        return PartitionTable(
            topic_ids=topic_ids,
            topic_names=topic_names,
            topic_start=topic_start,
            **{name: rows_of(getattr(self, name), getattr(extra, name)) for name in _PARTITION_COLUMNS},
            replicas=replicas,
            directories=directories,  # type: ignore[arg-type]
            isr=isr,
            **{name: sparse(getattr(self, name), getattr(extra, name)) for name in ("removing", "adding", "elr", "last_known_elr")},
            dir_ids=dir_ids,
            log_row=all_log_rows[log_order].astype(_INT),
            **{name: np.concatenate([getattr(self, name)[log_kept], getattr(extra, name)])[log_order] for name in _LOG_COLUMNS[1:]},
        )

    def take(
        self,
        rows: np.ndarray,
        *,
        topic_of_row: np.ndarray | None = None,
        topics: tuple[list[str], list[str]] | None = None,
    ) -> PartitionTable:
        """The table of rows `rows` (in that order; each topic's rows must stay together)."""
        rows = np.asarray(rows, np.int64)
        topic_ids, topic_names = topics if topics is not None else (self.topic_ids, self.topic_names)
        part_topic = self.part_topic[rows] if topic_of_row is None else np.asarray(topic_of_row)
        counts = np.bincount(part_topic, minlength=len(topic_ids)) if len(rows) else np.zeros(len(topic_ids), np.int64)
        topic_start = np.zeros(len(topic_ids) + 1, _START)
        np.cumsum(counts, out=topic_start[1:])
        replicas = self.replicas.take(rows)
        replica_index = gather_index(self.replicas.start, rows)
        # Replica logs follow their rows.
        new_row = np.full(self.partition_count, -1, np.int64)
        new_row[rows] = np.arange(len(rows))
        log_rows = new_row[self.log_row] if len(self.log_row) else np.zeros(0, np.int64)
        kept = np.flatnonzero(log_rows >= 0)
        log_order = kept[np.argsort(log_rows[kept], kind="stable")]
        return PartitionTable(
            topic_ids=list(topic_ids),
            topic_names=list(topic_names),
            topic_start=topic_start,
            **{name: getattr(self, name)[rows] for name in _PARTITION_COLUMNS},
            replicas=replicas,
            directories=self.directories[replica_index],
            isr=self.isr.take(rows),
            **{name: getattr(self, name).take(rows) for name in ("removing", "adding", "elr", "last_known_elr")},
            dir_ids=self.dir_ids,
            log_row=log_rows[log_order].astype(_INT),
            **{name: getattr(self, name)[log_order] for name in _LOG_COLUMNS[1:]},
        )


def pair(rows: np.ndarray, values: np.ndarray) -> np.ndarray:
    """(row, value) pairs as one int64 each, to match pairs by sorted search."""
    return (np.asarray(rows, np.int64) << 32) | (np.asarray(values, np.int64) & 0xFFFFFFFF)


def member(keys: np.ndarray, of: np.ndarray) -> np.ndarray:
    """keys in `of`, by binary search in a sorted copy (numpy's isin is slower on wide keys)."""
    if not len(of):
        return np.zeros(len(keys), bool)
    ordered = np.sort(of, kind="stable")  # keys come nearly sorted (by row): timsort is near linear
    position = np.minimum(np.searchsorted(ordered, keys), len(ordered) - 1)
    return ordered[position] == keys


def gather_index(start: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """The positions in a ragged column's values of the lists of rows `rows`, in that order."""
    rows = np.asarray(rows, np.int64)
    first = start[rows]
    lengths = start[rows + 1] - first
    new_start = np.zeros(len(rows) + 1, np.int64)
    np.cumsum(lengths, out=new_start[1:])
    return np.repeat(first - new_start[:-1], lengths) + np.arange(int(new_start[-1]), dtype=np.int64)


def count_values(values: np.ndarray) -> dict[int, int]:
    """value -> how often it occurs, for small non-negative ints (broker ids) by bincount, a
    chunk at a time (bincount of a whole column copies its millions of entries to int64 first)."""
    if not len(values):
        return {}
    low, high = int(values.min()), int(values.max())
    if low >= -1 and high < 1 << 22:
        counts = np.zeros(high + 2, np.int64)
        for start in range(0, len(values), _CHUNK):
            counts += np.bincount(values[start : start + _CHUNK] + 1, minlength=high + 2)
        present = np.flatnonzero(counts)
        return dict(zip((present - 1).tolist(), counts[present].tolist()))
    found, counts = np.unique(values, return_counts=True)
    return dict(zip(found.tolist(), counts.tolist()))


def sum_by(index: np.ndarray, weights: np.ndarray, length: int) -> np.ndarray:
    """Exact int64 sums of non-negative `weights` per `index` (bincount adds in floating point,
    exact only below 2**53: the weights are summed in two 26-bit halves instead)."""
    weights = np.asarray(weights, np.int64)
    low = np.bincount(index, weights=weights & 0x3FFFFFF, minlength=length)
    high = np.bincount(index, weights=weights >> 26, minlength=length)
    return (np.rint(high).astype(np.int64) << 26) + np.rint(low).astype(np.int64)


def _as_ids(codes: np.ndarray, dir_ids: list[str]) -> np.ndarray:
    lookup = np.array([*dir_ids, None], dtype=object)
    return lookup[codes]  # NO_DIRECTORY (-1) reads the None at the end


def _split(column: Ragged, lo: int, hi: int) -> list[tuple[int, ...]]:
    start = column.start
    values = column.values[start[lo] : start[hi]].tolist()
    offsets = (start[lo : hi + 1] - start[lo]).tolist()
    return [tuple(values[offsets[i] : offsets[i + 1]]) for i in range(hi - lo)]


def _split_sparse(column: Ragged, lo: int, hi: int) -> list[tuple[int, ...]]:
    out: list[tuple[int, ...]] = [EMPTY] * (hi - lo)
    rows = column.rows
    assert rows is not None
    first, last = int(np.searchsorted(rows, lo)), int(np.searchsorted(rows, hi))
    for i in range(first, last):
        out[int(rows[i]) - lo] = tuple(column.values[column.start[i] : column.start[i + 1]].tolist())
    return out


class _Builder:
    """Accumulates rows from partition objects, then makes a table of them."""

    def __init__(self, dir_ids: list[str]) -> None:
        self.codes = _Codes((d, i) for i, d in enumerate(dir_ids))
        self.topic_ids: list[str] = []
        self.topic_names: list[str] = []
        self.count = 0
        self.part_topic: list[int] = []
        self.columns: dict[str, list[int]] = {name: [] for name in _PARTITION_COLUMNS}
        self.replicas: list[tuple[int, ...]] = []
        self.directories: list[tuple[str, ...]] = []
        self.isr: list[tuple[int, ...]] = []
        self.rare: dict[str, list[tuple[int, tuple[int, ...]]]] = {name: [] for name in _SPARSE}
        self.logs: list[tuple[int, int, bool, int, int, int]] = []

    @property
    def dir_ids(self) -> list[str]:
        return list(self.codes)

    def add_topic(self, topic_id: str, name: str) -> None:
        self.topic_ids.append(topic_id)
        self.topic_names.append(name)

    def add_partitions(self, topic: TopicImage, partition_ids: Sequence[int], *, topic_index: int | None = None) -> None:
        t = len(self.topic_ids) - 1 if topic_index is None else topic_index
        first = self.count
        partitions = topic.partitions
        regs = [partitions[pid] for pid in partition_ids]
        sizes = topic.sizes
        columns = self.columns
        self.part_topic.extend([t] * len(regs))
        columns["part_id"].extend(partition_ids)
        columns["leader"].extend([r.leader for r in regs])
        columns["leader_epoch"].extend([r.leader_epoch for r in regs])
        columns["partition_epoch"].extend([r.partition_epoch for r in regs])
        columns["leader_recovery_state"].extend([r.leader_recovery_state for r in regs])
        columns["size"].extend([sizes.get(pid, UNKNOWN_SIZE) for pid in partition_ids] if sizes else [UNKNOWN_SIZE] * len(regs))
        self.replicas.extend([r.replicas for r in regs])
        self.directories.extend([r.directories for r in regs])
        self.isr.extend([r.isr for r in regs])
        for offset, r in enumerate(regs):
            if r.removing_replicas or r.adding_replicas or r.elr or r.last_known_elr:
                row = first + offset
                for name, values in (("removing", r.removing_replicas), ("adding", r.adding_replicas), ("elr", r.elr),
                                     ("last_known_elr", r.last_known_elr)):
                    if values:
                        self.rare[name].append((row, values))
        if topic.replica_logs:
            row_of = {pid: first + offset for offset, pid in enumerate(partition_ids)}
            for (pid, broker, future), log in sorted(topic.replica_logs.items()):
                row = row_of.get(pid)
                if row is not None:
                    code = NO_DIRECTORY if log.directory_id is None else self.codes[log.directory_id]
                    self.logs.append((row, broker, future, code, log.size_bytes, log.offset_lag))
        self.count += len(regs)

    def build(self, *, topic_count: int | None = None, rows_by_topic: bool = True) -> PartitionTable:
        """The table. Rows must be grouped by topic, unless `rows_by_topic` is False (then only
        `append` and `take` may use the result, which regroup them)."""
        count = self.count
        part_topic = np.array(self.part_topic, _INT)
        topics = len(self.topic_ids) if topic_count is None else topic_count
        topic_start = np.zeros(topics + 1, _START)
        np.cumsum(np.bincount(part_topic, minlength=topics) if count else np.zeros(topics, np.int64), out=topic_start[1:])
        if rows_by_topic and count and np.any(np.diff(part_topic) < 0):
            raise ValueError("rows are not grouped by topic")
        codes = self.codes
        directories = np.fromiter(map(codes.__getitem__, chain.from_iterable(self.directories)), _INT)
        logs = self.logs
        table = PartitionTable(
            topic_ids=self.topic_ids,
            topic_names=self.topic_names,
            topic_start=topic_start,
            **{name: np.array(values, _DTYPES[name]) for name, values in self.columns.items()},
            replicas=Ragged.dense(self.replicas),
            directories=directories,
            isr=Ragged.dense(self.isr),
            **{name: Ragged.sparse(self.rare[name]) for name in ("removing", "adding", "elr", "last_known_elr")},
            dir_ids=list(codes),
            **{name: np.array([log[i] for log in logs], _DTYPES[name]) for i, name in enumerate(_LOG_COLUMNS)},
        )
        table.__dict__["part_topic"] = part_topic
        return table

