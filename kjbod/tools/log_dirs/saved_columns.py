"""Saved `kafka-log-dirs --describe` output read as columns: the usual output, at millions of
replicas, without an object per replica.

`saved_output.LogDirsReader` reads any output and names every problem; it keeps an
Observation per replica (fifteen million of them at five million partitions). This reader takes
the usual output only (every field of the types Kafka writes, every directory and partition one
the cluster has, nothing reported twice) and returns numpy columns, one entry per replica
reported. For anything else it returns None, and the caller reads the output with
LogDirsReader, which then names the problem (or accepts what is merely unusual). Whatever it
accepts, LogDirsReader accepts without a problem and observes the same.

What needs the replicas of each partition (is the broker a replica? reported twice?) is left
to the caller, which has them as columns too: `replica_entries` finds each reported replica
among them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, MutableMapping
from dataclasses import dataclass, field
from itertools import chain, repeat
from operator import attrgetter, itemgetter
from pathlib import Path

import msgspec
import numpy as np

from kjbod.common.java import INT32_MAX, INT64_MAX
from kjbod.common.json_chunks import ArrayChunks
from kjbod.tools.log_dirs.saved_output import _normalized, json_start


# The output's objects as Kafka writes them (LogDirsCommand), and kjbod's own `log-dirs describe
# --from-disk` fields. Every field is typed and an unknown one refuses the document: a value this
# reader passed over unchecked could be one the strict reader rejects.
class _Entry(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    partition: str
    size: int
    offsetLag: int
    isFuture: bool


class _LogDir(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    logDir: str
    partitions: list[_Entry]
    error: str | None = None
    totalBytes: int | None = None
    usableBytes: int | None = None
    pendingDeletion: list[str] | None = None
    directoryId: str | None = None


class _Broker(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    broker: int
    logDirs: list[_LogDir]


class _Document(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    brokers: list[_Broker]
    version: int = 1


_BROKERS = msgspec.json.Decoder(list[_Broker])
_DOCUMENT = msgspec.json.Decoder(_Document)
_UNREADABLE = (msgspec.DecodeError, msgspec.ValidationError, UnicodeDecodeError, ValueError)
_KAFKA_LAYOUT = [(b'{"brokers":[', b'],"version":1}')]
_BROKER_BOUNDARY = b'},{"broker":'

_NAME = attrgetter("partition")
_SIZE = attrgetter("size")
_LAG = attrgetter("offsetLag")
_FUTURE = attrgetter("isFuture")
_TOPIC_PART = itemgetter(0)
_NUMBER_PART = itemgetter(2)


@dataclass(frozen=True)
class PartitionRows:
    """Where a partition named in the output is: the rows of topic t (by name, `topics`) are
    start[t]:start[t + 1], partition p its row start[t] + p (partitions numbered 0..n-1)."""

    topics: Mapping[str, int]
    start: np.ndarray  # int64


@dataclass
class ObservedColumns:
    """Every replica the outputs report, in their order: its partition's row, the log directory
    it is listed under (an index into `dirs`: the n-th directory the outputs list), its size and
    lag. Future replicas likewise, apart. Entries under a path the caller asked to pass over are
    only checked (`checked_*`)."""

    row: np.ndarray  # int64
    dir: np.ndarray  # int32, index into the dir_* lists
    size: np.ndarray  # int64
    lag: np.ndarray  # int64
    future_row: np.ndarray
    future_dir: np.ndarray
    future_size: np.ndarray
    future_lag: np.ndarray
    checked_row: np.ndarray
    checked_dir: np.ndarray
    # Per current replica: its index among all the entries read (minus its directory's
    # dir_first: its index in the directory's `partitions`).
    position: np.ndarray  # int64
    # Per directory listed, in order: its broker, its code (in the caller's `codes`, -1 for a
    # path passed over), where the output lists it, and the index of its first entry among all
    # the entries read.
    dir_broker: np.ndarray  # int32
    dir_code: np.ndarray  # int32
    dir_where: list[str]
    dir_first: list[int]
    # (broker, directory label) -> where it is listed; offline ones; totalBytes where given.
    log_dirs: dict[tuple[int, str], str] = field(default_factory=dict)
    offline: dict[tuple[int, str], str] = field(default_factory=dict)
    capacities: dict[tuple[int, str], int] = field(default_factory=dict)
    brokers: set[int] = field(default_factory=set)
    files: int = 0
    # (broker, path as listed) -> the directory id the output names for it (kjbod's `log-dirs
    # describe --from-disk`; Kafka's output has none), as LogDirsReader's declared_ids.
    declared_ids: dict[tuple[int, str], str] = field(default_factory=dict)

    @property
    def broker(self) -> np.ndarray:
        return self.dir_broker[self.dir]

    @property
    def directory(self) -> np.ndarray:
        return self.dir_code[self.dir]



class _Fail(Exception):
    """Not the usual output: the caller reads it entry by entry."""


def read_observed_columns(
    paths: Iterable[Path],
    directories: Mapping[int, Mapping[str, str]],
    codes: MutableMapping[str, int],
    rows: PartitionRows,
    *,
    ignored: Mapping[int, frozenset[str]] | None = None,
) -> ObservedColumns | None:
    """The outputs as columns, matched to a cluster: `directories` is each broker's log
    directories (path -> label, a directory id), `codes` numbers the labels (a label not in it
    yet is given the next number), `rows` places partitions. None for anything unusual."""
    reader = _Reader(directories, codes, rows, ignored or {})
    try:
        for path in paths:
            reader.read(path)
    except _Fail:
        return None
    return reader.finish()


class _Reader:
    def __init__(
        self, directories: Mapping[int, Mapping[str, str]], codes: MutableMapping[str, int], rows: PartitionRows,
        ignored: Mapping[int, frozenset[str]],
    ) -> None:
        self.directories = directories
        self.codes = codes
        self.rows = rows
        self.ignored = ignored
        self.log_dirs: dict[tuple[int, str], str] = {}
        self.offline: dict[tuple[int, str], str] = {}
        self.capacities: dict[tuple[int, str], int] = {}
        self.declared_ids: dict[tuple[int, str], str] = {}
        self.brokers: set[int] = set()
        self.files = 0
        self.dir_broker: list[int] = []
        self.dir_code: list[int] = []
        self.dir_where: list[str] = []
        self.dir_first: list[int] = []
        self.dir_recorded: list[bool] = []
        self.entries = 0
        # Per chunk of brokers: the entries' columns.
        self.parts: list[tuple[np.ndarray, ...]] = []

    def read(self, path: Path) -> None:
        source = str(path)
        self.files += 1
        chunks = ArrayChunks.open(path, _KAFKA_LAYOUT, _BROKER_BOUNDARY, skip_preamble=json_start)
        index = 0
        if chunks is not None:
            try:
                for chunk in chunks:
                    brokers = _BROKERS.decode(b"[" + chunk + b"]")
                    index = self._brokers(brokers, source, index)
            except (*_UNREADABLE, OSError):
                raise _Fail from None
            return
        try:
            data = path.read_bytes()
            document = _DOCUMENT.decode(memoryview(data)[json_start(data) :])
        except (*_UNREADABLE, OSError):
            raise _Fail from None
        del data
        if document.version != 1:
            raise _Fail
        brokers = document.brokers
        step = 500
        for begin in range(0, len(brokers), step):
            index = self._brokers(brokers[begin : begin + step], source, index)
            brokers[begin : begin + step] = [None] * len(brokers[begin : begin + step])  # read: let them go

    def _brokers(self, brokers: list[_Broker], source: str, index: int) -> int:
        """A run of brokers' objects: their directories checked and listed, their entries as
        columns."""
        lists: list[list[_Entry]] = []
        counts: list[int] = []
        first_dir = len(self.dir_code)
        for raw in brokers:
            broker = raw.broker
            if not 0 <= broker <= INT32_MAX:
                raise _Fail
            paths = self.directories.get(broker)
            if paths is None:
                raise _Fail
            self.brokers.add(broker)
            ignored = self.ignored.get(broker, ())
            for j, log_dir in enumerate(raw.logDirs):
                where = f"{source} $.brokers[{index}].logDirs[{j}]"
                entries = log_dir.partitions
                path = log_dir.logDir
                if path in ignored:
                    code, recorded = -1, False  # checked like any other, but nothing recorded
                else:
                    code, recorded = self._log_dir(broker, paths, log_dir, where), True
                self.dir_broker.append(broker)
                self.dir_code.append(code)
                self.dir_where.append(where)
                self.dir_first.append(self.entries)
                self.dir_recorded.append(recorded)
                self.entries += len(entries)
                counts.append(len(entries))
                lists.append(entries)
            index += 1
        entries = list(chain.from_iterable(lists))
        if entries:
            self.parts.append(
                self._columns(list(map(_NAME, entries)), list(map(_SIZE, entries)), list(map(_LAG, entries)), list(map(_FUTURE, entries)), counts, first_dir)
            )
        return index

    def _log_dir(self, broker: int, paths: Mapping[str, str], log_dir: _LogDir, where: str) -> int:
        """A listed log directory checked as LogDirsReader checks it; its label's code."""
        path = log_dir.logDir
        if not path.startswith("/"):
            raise _Fail
        label = paths.get(path) or paths.get(_normalized(path))
        if label is None or (broker, label) in self.log_dirs:
            raise _Fail
        self.log_dirs[(broker, label)] = where
        if log_dir.directoryId is not None:
            self.declared_ids[(broker, path)] = log_dir.directoryId
        total, usable = log_dir.totalBytes, log_dir.usableBytes
        for value in (total, usable):
            if value is not None and not -1 <= value <= INT64_MAX:
                raise _Fail
        total = -1 if total is None else total
        if total >= 0 and (-1 if usable is None else usable) > total:
            raise _Fail
        if total > 0:
            self.capacities[(broker, label)] = total
        if log_dir.error is not None:
            if log_dir.partitions:
                raise _Fail
            self.offline[(broker, label)] = where
        code = self.codes.get(label)
        if code is None:
            code = self.codes[label] = len(self.codes)
        return code

    def _columns(
        self, names: list[str], sizes: list[int], lags: list[int], futures: list[bool], counts: list[int], first_dir: int
    ) -> tuple[np.ndarray, ...]:
        """One run of entries as arrays: (row, dir, size, lag, future); rows found by name."""
        count = len(names)
        # Most replicas are caught up (lag 0) and current: such columns are made without a pass.
        caught_up = lags.count(0) == count
        if min(sizes) < 0 or max(sizes) > INT64_MAX or (not caught_up and (min(lags) < 0 or max(lags) > INT64_MAX)):
            raise _Fail
        # `topic-partition` (TopicPartition.toString) taken apart at C speed: a known topic, and
        # a number of ASCII digits below the topic's partition count.
        parts = list(map(str.rpartition, names, repeat("-")))
        topics = list(map(self.rows.topics.get, map(_TOPIC_PART, parts)))
        if None in topics:
            raise _Fail
        numbers = list(map(_NUMBER_PART, parts))
        digits = "".join(numbers)
        if not (digits.isascii() and digits.isdigit() and all(numbers)):
            raise _Fail
        try:
            number = np.fromiter(map(int, numbers), np.int64, len(numbers))
        except OverflowError:
            raise _Fail from None
        topic = np.fromiter(topics, np.int64, len(topics))
        start = self.rows.start
        row = start[topic] + number
        if np.any(row >= start[topic + 1]):
            raise _Fail
        dirs = np.repeat(np.arange(first_dir, first_dir + len(counts), dtype=np.int32), counts)
        return (
            row, dirs, np.fromiter(sizes, np.int64, count),
            np.zeros(count, np.int64) if caught_up else np.fromiter(lags, np.int64, count),
            np.fromiter(futures, np.bool_, count) if True in futures else np.zeros(count, np.bool_),
        )

    def finish(self) -> ObservedColumns:
        parts = self.parts
        if parts:
            row, dirs, size, lag, future = (np.concatenate([part[i] for part in parts]) for i in range(5))
        else:
            row, size, lag = (np.zeros(0, np.int64) for _ in range(3))
            dirs, future = np.zeros(0, np.int32), np.zeros(0, np.bool_)
        self.parts = []
        recorded = np.array(self.dir_recorded, np.bool_)[dirs] if len(dirs) else np.zeros(0, np.bool_)
        current = recorded & ~future
        futures = recorded & future
        checked = ~recorded
        return ObservedColumns(
            row=row[current], dir=dirs[current], size=size[current], lag=lag[current],
            future_row=row[futures], future_dir=dirs[futures], future_size=size[futures], future_lag=lag[futures],
            checked_row=row[checked], checked_dir=dirs[checked], position=np.flatnonzero(current),
            dir_broker=np.array(self.dir_broker, np.int32), dir_code=np.array(self.dir_code, np.int32),
            dir_where=self.dir_where, dir_first=self.dir_first,
            log_dirs=self.log_dirs, offline=self.offline, capacities=self.capacities, brokers=self.brokers, files=self.files,
            declared_ids=self.declared_ids,
        )


def replica_entries(rows: np.ndarray, brokers: np.ndarray, start: np.ndarray, replicas: np.ndarray) -> np.ndarray | None:
    """For each (row, broker): the index in `replicas` (the flat replica lists, row r's at
    start[r]:start[r + 1]) of that broker in that row's list; None if some broker is not a
    replica of its row. A row's list holds each broker once."""
    found = np.full(len(rows), -1, np.int64)
    if not len(rows):
        return found
    first = start[rows]
    length = start[rows + 1] - first
    for j in range(int(length.max())):
        entry = first + j
        match = (j < length) & (replicas[np.minimum(entry, len(replicas) - 1)] == brokers)
        found[match] = entry[match]
    return None if np.any(found < 0) else found


def first_entries(entries: np.ndarray, size: int) -> np.ndarray | None:
    """Per replica entry (of `size`): the index of the one observation of it, -1 for none;
    None when one is observed twice."""
    observed = np.full(size, -1, np.int64)
    index = np.arange(len(entries), dtype=np.int64)
    observed[entries] = index
    if np.any(observed[entries] != index):
        return None
    return observed


__all__ = ["ObservedColumns", "PartitionRows", "first_entries", "read_observed_columns", "replica_entries"]
