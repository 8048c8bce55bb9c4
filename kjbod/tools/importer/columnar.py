"""`import cluster` from files, the usual input at millions of partitions: read, checked, joined
and written as columns.

`from_files` reads its input partition by partition and names every problem; at five million
partitions (fifteen million replicas) the objects that takes (a PartitionSpec per partition, an
Observation per replica, a registration per partition replayed to check the records) cost
minutes and gigabytes. This path takes the usual input only: the assignment and the
kafka-log-dirs output in the compact layouts Kafka writes, every field of the type Kafka writes,
every partition, replica and directory one the other files know, nothing twice. It keeps every
partition and replica as numpy columns, joins the log-dirs output to the assignment by sorting
and gathering, and builds from the same columns both the records of the new state (in the order
and with the values `from_files` gives them) and the image those records make, which the
state then writes without replaying them.

Anything else (any problem, or an input this path does not expect) makes `plan_columnar`
return None and `from_files` reads the input the ordinary way, which names every problem. So
the records, the summary and the problems are the same either way; tests compare the two.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any, Literal
from dataclasses import dataclass
from functools import cached_property
from itertools import chain, compress, repeat
from operator import attrgetter, is_not
from pathlib import Path

import msgspec
import numpy as np

from kjbod.common.callbacks import Progress, ignore
from kjbod.common.java import INT32_MAX
from kjbod.common.kafka_uuid import DirectoryId
from kjbod.common.json_chunks import ArrayChunks
from kjbod.common.versions import MetadataVersion
from kjbod.image import EMPTY_IMAGE, Image, replay_all
from kjbod.image.columns import NO_DIRECTORY, UNKNOWN_SIZE, PartitionTable, Ragged
from kjbod.image.topics import TopicsImage
from kjbod.records import (
    NO_LEADER,
    KjbodPartitionSizeRecord,
    KjbodReplicaLogRecord,
    PartitionRecord,
    Record,
    TopicRecord,
)
from kjbod.records.codec import RecordRun
from kjbod.tools.log_dirs.saved_columns import (
    ObservedColumns,
    PartitionRows,
    first_entries,
    read_observed_columns,
    replica_entries,
)


def _decoders(paths: Sequence[str]) -> tuple[msgspec.json.Decoder, msgspec.json.Decoder]:
    """Decoders of a run of partitions and of the whole document: a partition of Kafka's
    reassignment JSON (§1.4) with kjbod's optional leader, every field typed (an unknown field
    refuses the file, see saved_columns). A log_dirs entry is "any" or one of `paths` (as the
    brokers file has them): msgspec then gives the same string object for each, whose code is
    found without hashing millions of new strings; any other refuses the file here."""
    where = Literal[(*paths, "any")] if paths else Literal["any"]  # type: ignore[valid-type]
    options = {"forbid_unknown_fields": True, "gc": False}
    partition = msgspec.defstruct(
        "Partition",
        [
            ("topic", str),
            ("partition", int),
            ("replicas", list[int]),
            ("log_dirs", list[where] | msgspec.UnsetType, msgspec.UNSET),  # type: ignore[valid-type]
            ("leader", int | None | msgspec.UnsetType, msgspec.UNSET),
        ],
        **options,
    )
    document = msgspec.defstruct("Assignment", [("partitions", list[partition], []), ("version", int, 1)], **options)  # type: ignore[valid-type]
    return msgspec.json.Decoder(list[partition]), msgspec.json.Decoder(document)

_UNREADABLE = (msgspec.DecodeError, msgspec.ValidationError, UnicodeDecodeError, ValueError, OverflowError, OSError)
# Kafka's layout (ReassignPartitionsCommand), and the same with `version` last or left out.
_LAYOUTS = [
    (b'{"version":1,"partitions":[', b"]}"),
    (b'{"partitions":[', b'],"version":1}'),
    (b'{"partitions":[', b"]}"),
]
_BOUNDARY = b'},{"topic":'
_WHOLE_STEP = 50_000

_TOPIC = attrgetter("topic")
_NUMBER = attrgetter("partition")
_REPLICAS = attrgetter("replicas")
_LOG_DIRS = attrgetter("log_dirs")
_LEADER = attrgetter("leader")
_UNSET = msgspec.UNSET
_ANY = -1  # a replica's directory left to the broker ("any", or no log_dirs)
_NO_LEADER_GIVEN = -(1 << 40)
# Up to this many broker ids (or brokers x paths), lookups go through a table indexed by them.
_DENSE_LIMIT = 1 << 24


class _NotUsual(Exception):
    """The input is not the usual one: from_files reads it the ordinary way."""


class Codes(dict):
    """str -> a small integer, a new one the first time a string is seen."""

    def __missing__(self, key: str) -> int:
        code = self[key] = len(self)
        return code


@dataclass
class Directories:
    """Every broker's log directories as codes: the brokers file's, in broker then file order."""

    broker_ids: np.ndarray  # sorted
    ids: list[str]  # code -> directory id
    broker_of: np.ndarray  # code -> broker id
    single: np.ndarray  # broker index -> the code of its only directory, -1 when it has several
    path_codes: dict[str, int]  # normalized path -> path code
    keys: np.ndarray  # sorted (broker index * paths + path code)
    key_codes: np.ndarray  # the directory code of each key

    @classmethod
    def of(cls, brokers: Mapping[int, object]) -> Directories:
        broker_ids = sorted(brokers)
        ids: list[str] = []
        owner: list[int] = []
        single: list[int] = []
        path_codes: Codes = Codes()
        pairs: list[tuple[int, int, int]] = []
        for index, broker_id in enumerate(broker_ids):
            dirs = brokers[broker_id].dirs  # type: ignore[attr-defined]
            single.append(len(ids) if len(dirs) == 1 else -1)
            for spec in dirs:
                pairs.append((index, path_codes[spec.path], len(ids)))
                ids.append(spec.directory_id)
                owner.append(broker_id)
        paths = max(len(path_codes), 1)
        keys = np.array([index * paths + path for index, path, _ in pairs], np.int64)
        order = np.argsort(keys, kind="stable")
        return cls(
            np.array(broker_ids, np.int64), ids, np.array(owner, np.int64), np.array(single, np.int64), dict(path_codes),
            keys[order], np.array([code for _, _, code in pairs], np.int64)[order],
        )

    def broker_index(self, brokers: np.ndarray) -> np.ndarray:
        """The index of each broker id among the brokers; raises _NotUsual for an unknown one."""
        ids = self.broker_ids
        if not len(ids) or not len(brokers):
            if len(brokers):
                raise _NotUsual
            return np.zeros(0, np.int64)
        if int(ids[-1]) < _DENSE_LIMIT:
            # Broker ids are small numbers: one lookup in a table indexed by id.
            if int(brokers.min()) < 0 or int(brokers.max()) > int(ids[-1]):
                raise _NotUsual
            index = self._by_id[brokers]
            if np.any(index < 0):
                raise _NotUsual
            return index
        index = np.minimum(np.searchsorted(ids, brokers), len(ids) - 1)
        if np.any(ids[index] != brokers):
            raise _NotUsual
        return index

    @cached_property
    def _by_id(self) -> np.ndarray:
        table = np.full(int(self.broker_ids[-1]) + 1, -1, np.int64)
        table[self.broker_ids] = np.arange(len(self.broker_ids))
        return table

    def code(self, broker_index: np.ndarray, path_code: np.ndarray) -> np.ndarray:
        """The directory codes of (broker, path) pairs; raises _NotUsual for a path the broker
        does not have."""
        paths = max(len(self.path_codes), 1)
        keys = broker_index * paths + path_code
        if not len(self.keys):
            raise _NotUsual
        if len(self.broker_ids) * paths < _DENSE_LIMIT:
            table = self._code_table
            found = table[keys]
            if np.any(found < 0):
                raise _NotUsual
            return found
        position = np.minimum(np.searchsorted(self.keys, keys), len(self.keys) - 1)
        if np.any(self.keys[position] != keys):
            raise _NotUsual
        return self.key_codes[position]

    @cached_property
    def _code_table(self) -> np.ndarray:
        table = np.full(len(self.broker_ids) * max(len(self.path_codes), 1), -1, np.int64)
        table[self.keys] = self.key_codes
        return table


@dataclass
class AssignmentColumns:
    """Every partition of the assignment, topics in name order, partitions 0..n-1."""

    topic_names: list[str]
    start: np.ndarray  # int64: the rows of topic t are start[t]:start[t + 1]
    replica_start: np.ndarray  # int64: the replicas of row r are replicas[replica_start[r]:replica_start[r + 1]]
    replicas: np.ndarray  # int32
    given: np.ndarray  # int32 per replica: the directory code the file gives, _ANY for none
    leader: np.ndarray  # int32 per row: the file's leader, -1 for none

    @property
    def rows(self) -> int:
        return len(self.leader)


def read_assignment_columns(path: Path, directories: Directories, topic_problem: Any) -> AssignmentColumns:
    """The assignment as columns, checked as from_files checks it; raises _NotUsual otherwise.
    `topic_problem(name)` says what is wrong with a topic name (None: nothing)."""
    paths = list(directories.path_codes)
    partitions, whole = _decoders(paths)
    reader = _AssignmentReader(directories, {**{path: code for path, code in zip(paths, directories.path_codes.values())}, "any": _ANY})
    chunks = ArrayChunks.open(path, _LAYOUTS, _BOUNDARY)
    try:
        if chunks is not None:
            for chunk in chunks:
                reader.add(partitions.decode(b"[" + chunk + b"]"))
        else:
            document = whole.decode(path.read_bytes())
            if document.version != 1:
                raise _NotUsual
            items = document.partitions
            del document
            for begin in range(0, len(items), _WHOLE_STEP):
                reader.add(items[begin : begin + _WHOLE_STEP])
    except _UNREADABLE:
        raise _NotUsual from None
    return reader.finish(topic_problem)


class _AssignmentReader:
    def __init__(self, directories: Directories, path_codes: dict[str, int]) -> None:
        self.directories = directories
        self.path_codes = path_codes
        self.topics = Codes()
        self.parts: list[tuple[np.ndarray, ...]] = []

    def add(self, items: Sequence[Any]) -> None:
        """A run of partitions: their columns, each checked at C speed."""
        count = len(items)
        if not count:
            return
        topic = np.fromiter(map(self.topics.__getitem__, map(_TOPIC, items)), np.int64, count)
        number = np.fromiter(map(_NUMBER, items), np.int64, count)
        if number.min() < 0 or number.max() > INT32_MAX:
            raise _NotUsual
        lists = list(map(_REPLICAS, items))
        lengths = np.fromiter(map(len, lists), np.int64, count)
        if lengths.min() < 1:
            raise _NotUsual  # an empty replica list
        replicas = np.fromiter(chain.from_iterable(lists), np.int64, int(lengths.sum()))
        broker_index = self.directories.broker_index(replicas)  # every replica on a known broker
        given = np.full(len(replicas), _ANY, np.int64)
        log_dirs = list(map(_LOG_DIRS, items))
        has = list(map(is_not, log_dirs, repeat(_UNSET)))
        if any(has):
            given_lists = list(compress(log_dirs, has))
            mask = np.fromiter(has, np.bool_, count)
            if not np.array_equal(np.fromiter(map(len, given_lists), np.int64, len(given_lists)), lengths[mask]):
                raise _NotUsual  # a log_dirs list of another length than its replicas
            path_code = np.fromiter(map(self.path_codes.__getitem__, chain.from_iterable(given_lists)), np.int64)
            where = np.flatnonzero(np.repeat(mask, lengths))
            chosen = path_code != _ANY
            given[where[chosen]] = self.directories.code(broker_index[where[chosen]], path_code[chosen])
        leaders = list(map(_LEADER, items))
        if leaders.count(_UNSET) + leaders.count(None) == count:
            leader = np.full(count, -1, np.int64)
        else:
            leader = np.fromiter((_NO_LEADER_GIVEN if value is _UNSET or value is None else value for value in leaders), np.int64, count)
            if np.any((leader < 0) & (leader != _NO_LEADER_GIVEN)):
                raise _NotUsual  # a negative leader is not one of the replicas
            leader[leader == _NO_LEADER_GIVEN] = -1
        self.parts.append((topic, number, lengths, replicas, given, leader))

    def finish(self, topic_problem: object) -> AssignmentColumns:
        names = list(self.topics)
        if any(topic_problem(name) is not None for name in names):  # type: ignore[operator]
            raise _NotUsual
        if len({name.replace(".", "_") for name in names}) != len(names):
            raise _NotUsual  # names that collide
        if self.parts:
            topic, number, lengths, replicas, given, leader = (np.concatenate([part[i] for part in self.parts]) for i in range(6))
        else:
            topic = number = lengths = replicas = given = leader = np.zeros(0, np.int64)
        self.parts = []
        ranks = np.empty(len(names), np.int64)
        ranks[sorted(range(len(names)), key=names.__getitem__)] = np.arange(len(names))
        key = (ranks[topic] << 32) | number
        order = np.argsort(key, kind="stable")
        key = key[order]
        if len(key) and np.any(key[1:] <= key[:-1]):
            raise _NotUsual  # a partition listed twice
        counts = np.bincount(ranks[topic], minlength=len(names))
        start = np.zeros(len(names) + 1, np.int64)
        np.cumsum(counts, out=start[1:])
        rank_of_row = key >> 32
        if np.any((key & 0xFFFFFFFF) != np.arange(len(key)) - start[rank_of_row]):
            raise _NotUsual  # partitions not numbered 0..n-1
        replica_start = np.zeros(len(lengths) + 1, np.int64)
        np.cumsum(lengths, out=replica_start[1:])
        taken = _gather_index(replica_start, order)
        sorted_lengths = lengths[order]
        new_start = np.zeros(len(lengths) + 1, np.int64)
        np.cumsum(sorted_lengths, out=new_start[1:])
        replicas, given, leader = replicas[taken], given[taken], leader[order]
        _check_replica_lists(new_start, replicas, leader)
        return AssignmentColumns(
            sorted(names), start, new_start, replicas.astype(np.int32), given.astype(np.int32), leader.astype(np.int32)
        )


def _gather_index(start: np.ndarray, rows: np.ndarray) -> np.ndarray:
    first = start[rows]
    lengths = start[rows + 1] - first
    new_start = np.zeros(len(rows) + 1, np.int64)
    np.cumsum(lengths, out=new_start[1:])
    return np.repeat(first - new_start[:-1], lengths) + np.arange(int(new_start[-1]), dtype=np.int64)


def _check_replica_lists(start: np.ndarray, replicas: np.ndarray, leader: np.ndarray) -> None:
    """No broker twice in a list; a given leader is one of the replicas."""
    rows = len(leader)
    if not rows:
        return
    lengths = np.diff(start)
    longest = int(lengths.max())
    row_of = np.repeat(np.arange(rows), lengths)
    for shift in range(1, longest):
        same = (replicas[shift:] == replicas[:-shift]) & (row_of[shift:] == row_of[:-shift])
        if same.any():
            raise _NotUsual
    given = leader >= 0
    if given.any():
        found = np.zeros(rows, np.bool_)
        for j in range(longest):
            entry = np.minimum(start[:-1] + j, len(replicas) - 1)
            found |= (j < lengths) & (replicas[entry] == leader)
        if np.any(given & ~found):
            raise _NotUsual


# The join and the records -----------------------------------------------------------------------


@dataclass
class ColumnarImport:
    """What plan_import needs from this path: the records, the image they make, and the counts
    of the summary."""

    entries: list[Record | RecordRun]
    image: Image
    replicas: int
    unassigned: int
    offline_replicas: int
    sized: int
    replica_logs: int
    futures: int
    offline_directories: int
    topics: int
    partitions: int


def plan_columnar(
    request_assignment: Path,
    log_dirs_files: Sequence[Path],
    brokers: Mapping[int, object],
    head: Sequence[Record],
    mv: MetadataVersion,
    *,
    topic_problem: object,
    topic_id: object,
    broker_records: object,
    progress: Progress = ignore,
) -> ColumnarImport | None:
    """The import's records and image, or None when the input is not the usual one.

    `head` is the records before the brokers' (features, cluster id); `broker_records(first
    offset, offline)` makes the brokers' records given the offline directories; `topic_id(name)`
    derives a topic's id. (from_files hands these over, so that both paths make them the same way.)
    """
    directories = Directories.of(brokers)
    if len(set(directories.ids)) != len(directories.ids):
        return None  # two directories with one id: from_files decides
    try:
        assignment = read_assignment_columns(request_assignment, directories, topic_problem)
    except _NotUsual:
        return None
    codes = {directory: code for code, directory in enumerate(directories.ids)}
    paths = {int(b): {spec.path: spec.directory_id for spec in brokers[b].dirs} for b in brokers}  # type: ignore[attr-defined]
    rows = PartitionRows({name: t for t, name in enumerate(assignment.topic_names)}, assignment.start)
    observed = read_observed_columns(log_dirs_files, paths, codes, rows)
    if observed is None or len(codes) != len(directories.ids):
        return None
    progress("Building the cluster state")
    try:
        joined = _Joined.of(assignment, observed, directories, mv)
    except _NotUsual:
        return None
    offline = set(observed.offline)
    if not _brokers_usual(brokers, offline, mv):
        return None
    entries: list[Record | RecordRun] = list(head)
    entries.extend(broker_records(len(entries), observed))  # type: ignore[operator]
    rest = replay_all(EMPTY_IMAGE, entries)
    topic_ids = [topic_id(name) for name in assignment.topic_names]  # type: ignore[operator]
    table = joined.table(assignment, topic_ids, directories, mv)
    topic_entries = joined.topic_entries(assignment, topic_ids, directories, mv)
    count = len(entries) + sum(entry.count if isinstance(entry, RecordRun) else 1 for entry in topic_entries)
    entries.extend(topic_entries)
    image = dataclasses.replace(rest, offset=count - 1, topics=TopicsImage.from_table(table))
    return ColumnarImport(
        entries, image, int(len(assignment.replicas)), joined.unassigned, joined.offline_replicas, joined.sized,
        joined.replica_logs, joined.futures, len(offline), len(assignment.topic_names), assignment.rows,
    )


def _brokers_usual(brokers: Mapping[int, object], offline: set[tuple[int, str]], mv: MetadataVersion) -> bool:
    """What from_files' _check_brokers would find nothing wrong with."""
    for broker_id, spec in brokers.items():
        dirs = spec.dirs  # type: ignore[attr-defined]
        if len(dirs) > 1 and not mv.directory_assignment_supported:
            return False
        down = sum(1 for d in dirs if (broker_id, d.directory_id) in offline)
        if down and (not mv.directory_assignment_supported or down == len(dirs)):
            return False
    return True


@dataclass
class _Joined:
    """The assignment and the log-dirs output joined: each replica's directory, each partition's
    ISR, leader and size, the replica logs."""

    directories: np.ndarray  # int64 per replica: directory code (unassigned_code for UNASSIGNED)
    unassigned_code: int
    isr_start: np.ndarray
    isr: np.ndarray
    leader: np.ndarray  # int64 per row
    size: np.ndarray  # int64 per row, UNKNOWN_SIZE for none
    # Replica logs in record order (row, then current before future, each in the output's order).
    log_row: np.ndarray
    log_broker: np.ndarray
    log_future: np.ndarray
    log_dir: np.ndarray  # directory code, NO_DIRECTORY for a current replica's log
    log_size: np.ndarray
    log_lag: np.ndarray
    unassigned: int
    offline_replicas: int
    sized: int
    replica_logs: int
    futures: int

    @classmethod
    def of(cls, assignment: AssignmentColumns, observed: ObservedColumns, directories: Directories, mv: MetadataVersion) -> _Joined:
        replicas, start = assignment.replicas, assignment.replica_start
        rows = assignment.rows
        length = np.diff(start)
        row_of_replica = np.repeat(np.arange(rows, dtype=np.int64), length)
        obs_broker = observed.broker.astype(np.int64)
        obs_dir = observed.directory.astype(np.int64)
        entry = replica_entries(observed.row, obs_broker, start, replicas)
        if entry is None:
            raise _NotUsual  # a broker reports a replica it does not have
        if len(observed.checked_row) and replica_entries(observed.checked_row, observed.dir_broker[observed.checked_dir].astype(np.int64), start, replicas) is None:
            raise _NotUsual
        seen = first_entries(entry, len(replicas))
        if seen is None:
            raise _NotUsual  # a replica reported twice
        # The directory the file gives must be the one the output shows.
        given = assignment.given.astype(np.int64)
        shown = given[entry]
        if np.any((shown != _ANY) & (shown != obs_dir)):
            raise _NotUsual
        unassigned_code = len(directories.ids)
        # Each replica's directory: the file's; for "any", where the output shows it, else the
        # broker's only directory, else UNASSIGNED (from_files' _Builder._directory).
        final = given.copy()
        observed_at = seen >= 0
        pick = (final == _ANY) & observed_at
        final[pick] = obs_dir[seen[pick]]
        pick = final == _ANY
        if pick.any():
            single = directories.single[directories.broker_index(replicas[pick].astype(np.int64))]
            final[pick] = np.where(single >= 0, single, unassigned_code)
        unassigned = int(np.count_nonzero(final == unassigned_code))

        # Future replicas (few): each of a replica, once, not in its current replica's directory.
        future_broker = observed.dir_broker[observed.future_dir].astype(np.int64)
        future_entry = replica_entries(observed.future_row, future_broker, start, replicas)
        if future_entry is None or first_entries(future_entry, len(replicas)) is None:
            raise _NotUsual
        future_dir = observed.dir_code[observed.future_dir].astype(np.int64)
        current = seen[future_entry]
        if np.any((current >= 0) & (obs_dir[np.maximum(current, 0)] == future_dir)):
            raise _NotUsual

        leader = assignment.leader.astype(np.int64)
        first = replicas[start[:-1]].astype(np.int64) if rows else np.zeros(0, np.int64)
        leader = np.where(leader < 0, first, leader)
        in_isr = np.ones(len(replicas), np.bool_)
        offline_replicas = 0
        if observed.offline:
            down = np.array(sorted((broker << 32) | directories.ids.index(d) for broker, d in observed.offline), np.int64)
            keys = (replicas.astype(np.int64) << 32) | final
            position = np.minimum(np.searchsorted(down, keys), len(down) - 1)
            in_isr = down[position] != keys
            offline_replicas = int(np.count_nonzero(~in_isr))
            # A replica on a failed directory is out of the ISR and cannot lead (KIP-858); a
            # partition with no replica left keeps its last member, leaderless.
            for row in np.unique(row_of_replica[~in_isr]).tolist():
                s, e = int(start[row]), int(start[row + 1])
                members = replicas[s:e][in_isr[s:e]]
                if not len(members):
                    in_isr[s:e] = replicas[s:e] == leader[row]
                    leader[row] = NO_LEADER
                elif leader[row] not in members:
                    leader[row] = int(members[0])
        isr_start = np.zeros(rows + 1, np.int64)
        np.cumsum(np.bincount(row_of_replica[in_isr], minlength=rows) if rows else np.zeros(0, np.int64), out=isr_start[1:])
        isr = replicas[in_isr]

        # Sizes: the leader's log (the first replica's for a leaderless partition), else the
        # largest copy reported (saved_output.partition_sizes).
        size_leader = np.where(leader == NO_LEADER, first, leader)
        leader_entry = np.full(rows, -1, np.int64)
        for j in range(int(length.max()) if rows else 0):
            at = np.minimum(start[:-1] + j, len(replicas) - 1)
            leader_entry = np.where((leader_entry < 0) & (j < length) & (replicas[at] == size_leader), at, leader_entry)
        size = np.full(rows, UNKNOWN_SIZE, np.int64)
        leader_seen = seen[leader_entry]
        has_leader = leader_seen >= 0
        size[has_leader] = observed.size[leader_seen[has_leader]]
        others = ~has_leader[observed.row]
        if others.any():
            np.maximum.at(size, observed.row[others], observed.size[others])
        sized = int(np.count_nonzero(size != UNKNOWN_SIZE))

        # Replica logs: current replicas that are not a complete, caught-up copy, then future ones.
        partial = np.flatnonzero((observed.size != size[observed.row]) | (observed.lag > 0))
        log_row = np.concatenate([observed.row[partial], observed.future_row])
        order = np.argsort(log_row * 2 + np.concatenate([np.zeros(len(partial), np.int64), np.ones(len(future_dir), np.int64)]), kind="stable")
        log_broker = np.concatenate([obs_broker[partial], future_broker])
        log_dir = np.concatenate([np.full(len(partial), NO_DIRECTORY, np.int64), future_dir])
        return cls(
            directories=final, unassigned_code=unassigned_code, isr_start=isr_start, isr=isr, leader=leader, size=size,
            log_row=log_row[order], log_broker=log_broker[order],
            log_future=np.concatenate([np.zeros(len(partial), np.bool_), np.ones(len(future_dir), np.bool_)])[order],
            log_dir=log_dir[order],
            log_size=np.concatenate([observed.size[partial], observed.future_size])[order],
            log_lag=np.concatenate([observed.lag[partial], observed.future_lag])[order],
            unassigned=unassigned, offline_replicas=offline_replicas, sized=sized,
            replica_logs=len(partial), futures=len(future_dir),
        )

    def dir_ids(self, directories: Directories) -> list[str]:
        return [*directories.ids, DirectoryId.UNASSIGNED] if self.unassigned else list(directories.ids)

    def table(self, assignment: AssignmentColumns, topic_ids: list[str], directories: Directories, mv: MetadataVersion) -> PartitionTable:
        """The partitions as the image holds them (what replaying the records would build)."""
        rows = assignment.rows
        start = assignment.start
        part_id = (np.arange(rows, dtype=np.int64) - np.repeat(start[:-1], np.diff(start))).astype(np.int32)
        zeros = np.zeros(rows, np.int32)
        empty = Ragged(np.zeros(1, np.int64), np.zeros(0, np.int32), np.zeros(0, np.int32))
        dir_ids = self.dir_ids(directories)
        codes = self.directories
        if mv.partition_record_version < 1:
            # Records without directories replay as MIGRATING (PartitionRegistration.from_record).
            dir_ids = [*dir_ids, DirectoryId.MIGRATING]
            codes = np.full(len(codes), len(dir_ids) - 1, np.int64)
        # The table's replica logs go by (row, broker, future).
        order = np.lexsort((self.log_future, self.log_broker, self.log_row))
        return PartitionTable(
            topic_ids=topic_ids,
            topic_names=list(assignment.topic_names),
            topic_start=start.astype(np.int64),
            part_id=part_id,
            leader=self.leader.astype(np.int32),
            leader_epoch=zeros,
            partition_epoch=zeros,
            leader_recovery_state=np.zeros(rows, np.int8),
            size=self.size,
            replicas=Ragged(assignment.replica_start, assignment.replicas),
            directories=codes.astype(np.int32),
            isr=Ragged(self.isr_start, self.isr.astype(np.int32)),
            removing=empty,
            adding=empty,
            elr=empty,
            last_known_elr=empty,
            dir_ids=dir_ids,
            log_row=self.log_row[order].astype(np.int32),
            log_broker=self.log_broker[order].astype(np.int32),
            log_future=self.log_future[order],
            log_dir=self.log_dir[order].astype(np.int32),
            log_size=self.log_size[order],
            log_lag=self.log_lag[order],
        )

    def topic_entries(
        self, assignment: AssignmentColumns, topic_ids: list[str], directories: Directories, mv: MetadataVersion
    ) -> list[Record | RecordRun]:
        """Each topic's TopicRecord, its PartitionRecords as one run, its sizes as one run and its
        replica logs as one run: what from_files' _Builder.topic_entries gives. The runs' columns
        are slices of the arrays (made lists only as each batch is encoded)."""
        version = mv.partition_record_version
        rows = assignment.rows
        start = assignment.start
        dir_text = np.array(self.dir_ids(directories), dtype=object)
        row_in_topic = (np.arange(rows, dtype=np.int64) - np.repeat(start[:-1], np.diff(start))).astype(np.int32)
        replica_rows = _rows(assignment.replica_start, assignment.replicas)
        same_isr = np.array_equal(self.isr_start, assignment.replica_start) and np.array_equal(self.isr, assignment.replicas)
        isr_rows = replica_rows if same_isr else _rows(self.isr_start, self.isr.astype(np.int32))
        directory_rows = _rows(assignment.replica_start, self.directories.astype(np.int32)) if version >= 1 else None
        leaders = self.leader.astype(np.int32)
        zeros = np.zeros(rows, np.int32)
        size_rows = np.flatnonzero(self.size != UNKNOWN_SIZE)
        size_ids, size_values = row_in_topic[size_rows], self.size[size_rows]
        size_at = np.searchsorted(size_rows, start).tolist()
        log_at = np.searchsorted(self.log_row, start).tolist()
        log_ids = row_in_topic[self.log_row]
        log_dirs = np.array([None, *self.dir_ids(directories)], dtype=object)[self.log_dir + 1]  # NO_DIRECTORY: None
        bounds = start.tolist()
        entries: list[Record | RecordRun] = []
        empty: tuple[int, ...] = ()
        for t, name in enumerate(assignment.topic_names):
            lo, hi = bounds[t], bounds[t + 1]
            count = hi - lo
            topic_id = topic_ids[t]
            entries.append(TopicRecord(name=name, topic_id=topic_id))
            if not count:
                continue
            columns: dict[str, Any] = {
                "partition_id": row_in_topic[lo:hi],
                "topic_id": [topic_id] * count,
                "replicas": replica_rows[lo:hi],
                "isr": isr_rows[lo:hi],
                "removing_replicas": [empty] * count,
                "adding_replicas": [empty] * count,
                "leader": leaders[lo:hi],
                "leader_recovery_state": zeros[lo:hi],
                "leader_epoch": zeros[lo:hi],
                "partition_epoch": zeros[lo:hi],
            }
            if directory_rows is not None:
                codes = directory_rows[lo:hi]
                columns["directories"] = dir_text[codes] if isinstance(codes, np.ndarray) else [list(dir_text[row]) for row in codes]
            if version >= 2:
                columns["eligible_leader_replicas"] = [None] * count
                columns["last_known_elr"] = [None] * count
            entries.append(RecordRun(PartitionRecord, version, count, columns))
            s, e = size_at[t], size_at[t + 1]
            if e > s:
                entries.append(
                    RecordRun(KjbodPartitionSizeRecord, 0, e - s, {"topic_id": [topic_id] * (e - s), "partition_id": size_ids[s:e], "size_bytes": size_values[s:e]})
                )
            s, e = log_at[t], log_at[t + 1]
            if e > s:
                entries.append(
                    RecordRun(
                        KjbodReplicaLogRecord, 0, e - s,
                        {
                            "topic_id": [topic_id] * (e - s), "partition_id": log_ids[s:e], "broker_id": self.log_broker[s:e],
                            "future": self.log_future[s:e], "directory_id": log_dirs[s:e], "size_bytes": self.log_size[s:e],
                            "offset_lag": self.log_lag[s:e],
                        },
                    )
                )
        return entries


def _rows(start: np.ndarray, values: np.ndarray) -> np.ndarray | list[list[int]]:
    """A ragged column's rows: a 2-D array when every row has the same length (one replication
    factor), else a list of lists."""
    rows = len(start) - 1
    lengths = np.diff(start)
    if rows and lengths.min() == lengths.max():
        return values.reshape(rows, int(lengths[0]))
    flat = values.tolist()
    bounds = start.tolist()
    return [flat[bounds[r] : bounds[r + 1]] for r in range(rows)]
