"""Kafka's reassignment JSON (reference: kafka-reassign-and-log-dirs.md §1.4-§1.5): the files
`kafka-reassign-partitions` reads and writes, parsed with Kafka's strictness and messages.

    {"version": 1, "partitions": [{"topic": "t", "partition": 0, "replicas": [1, 2],
                                   "log_dirs": ["/data/1", "any"]}]}

`reassign generate|execute|verify|cancel`, `reassign plan` (which writes it) and `reassign check`
(which checks it) share this module.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from functools import cached_property
from itertools import chain
from operator import itemgetter
from typing import Any, NamedTuple

import numpy as np

from kjbod.common.jackson import as_array, as_object, decode_int, decode_list, decode_string, read_json_fast, read_json_tree
from kjbod.common.jackson import field as json_field
from kjbod.common.java import (
    INT32_MAX,
    INT32_MIN,
    Replica,
    TopicPartition,
    csv,
    int_hash,
    java_duplicates,
    java_list,
    java_split,
    kafka_error,
    NumberFormatError,
    parse_java_int,
    tp_hash,
    tp_key,
    tp_text,
)
from kjbod.errors import UserError

ANY_LOG_DIR = "any"


def _version(obj: dict[str, Any]) -> int:
    version = decode_int(obj["version"]) if "version" in obj else 1
    if version != 1:
        raise kafka_error(f"Not supported version field value {version}")
    return version


class PlanEntry(NamedTuple):
    """One partition of a reassignment file (a NamedTuple: plans hold hundreds of thousands)."""

    topic: str
    partition: int
    replicas: tuple[int, ...]
    log_dirs: tuple[str, ...]

    # (topic, partition), read by a C function: hundreds of thousands are asked for at a time.
    tp = property(itemgetter(0, 1), doc="(topic, partition)")


class FirstSeenCodes(dict):
    """str -> a new small integer the first time it is seen."""

    def __missing__(self, key: str) -> int:
        code = self[key] = len(self)
        return code


class PlanColumns:
    """A reassignment file as columns, one row per entry in file order (duplicates kept): what
    `reassign check` reads of a plan of hundreds of thousands of partitions, without a Python
    object per entry. The replicas of entry e are brokers[starts[e]:starts[e + 1]], their
    log_dirs entries log_dirs[starts[e]:starts[e + 1]] ("any" where the file has none)."""

    def __init__(self, topics: list[str], partitions: np.ndarray, starts: np.ndarray, brokers: np.ndarray, log_dirs: list[str]) -> None:
        self.topics = topics
        self.partitions = partitions
        self.starts = starts
        self.brokers = brokers
        self.log_dirs = log_dirs

    @classmethod
    def of_entries(cls, entries: Sequence[PlanEntry]) -> PlanColumns:
        lengths = np.fromiter(map(len, (e.replicas for e in entries)), np.int64, len(entries))
        starts = np.zeros(len(entries) + 1, np.int64)
        np.cumsum(lengths, out=starts[1:])
        return cls(
            [e.topic for e in entries],
            np.fromiter((e.partition for e in entries), np.int64, len(entries)),
            starts,
            np.fromiter(chain.from_iterable(e.replicas for e in entries), np.int64, int(starts[-1])),
            list(chain.from_iterable(e.log_dirs for e in entries)),
        )

    @property
    def count(self) -> int:
        return len(self.topics)

    @cached_property
    def lengths(self) -> np.ndarray:
        return np.diff(self.starts)

    @cached_property
    def topic_codes(self) -> tuple[np.ndarray, list[str]]:
        """(each entry's topic code, the topic of each code): codes in order of first appearance."""
        codes = FirstSeenCodes()
        per_entry = np.fromiter(map(codes.__getitem__, self.topics), np.int64, len(self.topics))
        return per_entry, list(codes)

    @cached_property
    def path_codes(self) -> tuple[np.ndarray, list[str]]:
        """(each replica's log_dirs code, the entry of each code); "any" is code 0."""
        codes = FirstSeenCodes({ANY_LOG_DIR: 0})
        return np.fromiter(map(codes.__getitem__, self.log_dirs), np.int64, len(self.log_dirs)), list(codes)

    @cached_property
    def winners(self) -> np.ndarray:
        """The entry of each distinct partition that Kafka keeps (the last one: a HashMap), in
        the order the partitions first appear (the order of ReassignmentPlan.last)."""
        per_entry, _ = self.topic_codes
        keys = (per_entry << 32) | (self.partitions & 0xFFFFFFFF)
        order = np.argsort(keys, kind="stable")
        ordered = keys[order]
        repeats = ordered[1:] == ordered[:-1]
        if not repeats.any():
            return np.arange(self.count, dtype=np.int64)
        first = order[np.concatenate([[True], ~repeats])]
        last = order[np.concatenate([~repeats, [True]])]
        return last[np.argsort(first, kind="stable")]

    def explicit_brokers(self) -> set[int]:
        """Brokers that some entry gives a log directory (not "any")."""
        codes, _ = self.path_codes
        return set(np.unique(self.brokers[codes != 0]).tolist())


class ReassignmentPlan:
    """A reassignment file: its partitions in file order (duplicates kept, so they can be
    reported) and the explicit log directories (the last entry for a replica wins). Made from
    entries, or from columns (a large file): each form is derived from the other when asked."""

    def __init__(
        self,
        entries: tuple[PlanEntry, ...] | None = None,
        replica_dirs: Mapping[Replica, str] | None = None,
        *,
        columns: PlanColumns | None = None,
    ) -> None:
        if entries is not None:
            self.entries = entries
            self.replica_dirs = replica_dirs if replica_dirs is not None else {}
        if columns is not None:
            self.columns = columns

    @cached_property
    def columns(self) -> PlanColumns:
        return PlanColumns.of_entries(self.entries)

    @cached_property
    def entries(self) -> tuple[PlanEntry, ...]:
        c = self.columns
        starts, brokers, log_dirs = c.starts.tolist(), c.brokers.tolist(), c.log_dirs
        return tuple(
            PlanEntry(topic, partition, tuple(brokers[starts[e] : starts[e + 1]]), tuple(log_dirs[starts[e] : starts[e + 1]]))
            for e, (topic, partition) in enumerate(zip(c.topics, c.partitions.tolist()))
        )

    @cached_property
    def replica_dirs(self) -> Mapping[Replica, str]:
        c = self.columns
        codes, _ = c.path_codes
        explicit = np.flatnonzero(codes != 0)
        entry = (np.searchsorted(c.starts, explicit, side="right") - 1).tolist()
        topics, partitions, brokers, log_dirs = c.topics, c.partitions.tolist(), c.brokers.tolist(), c.log_dirs
        return {(topics[e], partitions[e], brokers[i]): log_dirs[i] for e, i in zip(entry, explicit.tolist())}

    @cached_property
    def last(self) -> dict[TopicPartition, PlanEntry]:
        """Partition -> its entry, the last entry for a partition winning (a HashMap)."""
        return {entry.tp: entry for entry in self.entries}

    def targets(self) -> dict[TopicPartition, tuple[int, ...]]:
        """Partition -> target replicas, the last entry for a partition winning (a HashMap)."""
        return {tp: entry.replicas for tp, entry in self.last.items()}

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ReassignmentPlan):
            return NotImplemented
        return self.entries == other.entries and dict(self.replica_dirs) == dict(other.replica_dirs)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"ReassignmentPlan(entries={self.entries!r}, replica_dirs={dict(self.replica_dirs)!r})"


def parse_reassignment_json(text: str) -> ReassignmentPlan:
    """A reassignment file (§1.4), with Kafka's message for each malformed case."""
    plan = _parse_well_formed(read_json_fast(text))
    return plan if plan is not None else _parse(text)


def _parse_well_formed(tree: Any) -> ReassignmentPlan | None:
    """The plan of a file whose every field has the type Kafka's accessors expect (nearly every
    file, checked field by field over all partitions at once); None for anything else, which
    _parse reads with their messages."""
    if type(tree) is not dict or type(tree.get("version", 1)) is not int:
        return None
    _version(tree)
    items = tree.get("partitions", [])
    if type(items) is not list or (items and set(map(type, items)) != {dict}):
        return None
    topics = [item.get("topic") for item in items]
    partitions = [item.get("partition") for item in items]
    replicas = [item.get("replicas") for item in items]
    log_dirs = [item.get("log_dirs", _ABSENT) for item in items]
    if items and (set(map(type, partitions)) != {int} or set(map(type, replicas)) != {list}):
        return None
    # Topics and log_dirs entries are few distinct strings: numbered once here (what the checks
    # compare), and their types checked on the distinct values. A list or object among them is
    # unhashable; any other value that is not a string shows among the distinct ones.
    topic_codes, path_codes = FirstSeenCodes(), FirstSeenCodes({ANY_LOG_DIR: 0})
    try:
        entry_topic = np.fromiter(map(topic_codes.__getitem__, topics), np.int64, len(topics))
    except TypeError:
        return None
    if set(map(type, topic_codes)) - {str}:
        return None
    brokers = list(chain.from_iterable(replicas))
    if brokers and set(map(type, brokers)) != {int}:
        return None
    try:  # orjson reads integers up to 2**64 - 1: past int64, numpy refuses them
        partition_ids, broker_ids = np.array(partitions, np.int64), np.array(brokers, np.int64)
    except OverflowError:
        return None
    if items and (partition_ids.min() < INT32_MIN or partition_ids.max() > INT32_MAX):
        return None
    if brokers and (broker_ids.min() < INT32_MIN or broker_ids.max() > INT32_MAX):
        return None
    log_dirs = [[ANY_LOG_DIR] * len(r) if d is _ABSENT else d for r, d in zip(replicas, log_dirs)]
    if items and set(map(type, log_dirs)) != {list}:
        return None
    lengths = np.fromiter(map(len, replicas), np.int64, len(replicas))
    if not np.array_equal(np.fromiter(map(len, log_dirs), np.int64, len(log_dirs)), lengths):
        return None
    directories = list(chain.from_iterable(log_dirs))
    try:
        directory_codes = np.fromiter(map(path_codes.__getitem__, directories), np.int64, len(directories))
    except TypeError:
        return None
    if set(map(type, path_codes)) - {str}:
        return None
    starts = np.zeros(len(replicas) + 1, np.int64)
    np.cumsum(lengths, out=starts[1:])
    columns = PlanColumns(topics, partition_ids, starts, broker_ids, directories)
    columns.topic_codes = (entry_topic, list(topic_codes))
    columns.path_codes = (directory_codes, list(path_codes))
    return ReassignmentPlan(columns=columns)


def _parse(text: str) -> ReassignmentPlan:
    obj = as_object(read_json_tree(text))
    _version(obj)
    entries: list[PlanEntry] = []
    replica_dirs: dict[Replica, str] = {}
    if "partitions" in obj:
        for item in as_array(obj["partitions"]):
            fields = as_object(item)
            topic = decode_string(json_field(fields, "topic"))
            partition = decode_int(json_field(fields, "partition"))
            replicas = decode_list(json_field(fields, "replicas"), decode_int)
            log_dirs = decode_list(fields["log_dirs"], decode_string) if "log_dirs" in fields else [ANY_LOG_DIR] * len(replicas)
            if len(replicas) != len(log_dirs):
                raise kafka_error(
                    f"Size of replicas list {java_list(replicas)} is different from size of log dirs list "
                    f"{java_list(log_dirs)} for partition {topic}-{partition}"
                )
            entries.append(PlanEntry(topic, partition, tuple(replicas), tuple(log_dirs)))
            for replica, log_dir in zip(replicas, log_dirs):
                if log_dir != ANY_LOG_DIR:
                    replica_dirs[(topic, partition, replica)] = log_dir
    return ReassignmentPlan(tuple(entries), replica_dirs)


_ABSENT: Any = object()


def validate_execute_plan(plan: ReassignmentPlan) -> None:
    """The checks `--execute` adds (parseExecuteAssignmentArgs), in Kafka's order."""
    if not plan.entries:
        raise kafka_error("Partition reassignment list cannot be empty")
    if any(not entry.replicas for entry in plan.entries):
        raise kafka_error("Partition replica list cannot be empty")
    duplicated = java_duplicates([entry.tp for entry in plan.entries], tp_hash)
    if duplicated:
        raise kafka_error(f"Partition reassignment contains duplicate topic partitions: {csv(tp_text(tp) for tp in duplicated)}")
    repeated = [(entry.tp, java_duplicates(entry.replicas, int_hash)) for entry in plan.entries]
    problems = [f"{tp_text(tp)} contains multiple entries for {csv(brokers)}" for tp, brokers in repeated if brokers]
    if problems:
        raise kafka_error(f"Partition replica lists may not contain duplicate entries: {'. '.join(problems)}")


def parse_topics_json(text: str) -> list[str]:
    """A topics-to-move file (`Json.parseFull`: any parse failure is one message)."""
    try:
        tree = read_json_tree(text)
    except UserError:
        raise kafka_error("The input string is not a valid JSON") from None
    obj = as_object(tree)
    _version(obj)
    if "topics" not in obj:
        return []
    return [decode_string(json_field(as_object(item), "topic")) for item in as_array(obj["topics"])]


def parse_broker_list(text: str) -> list[int]:
    """`--broker-list 1,2,3`: String.split and Integer.parseInt, as Kafka does."""
    try:
        return [parse_java_int(piece) for piece in java_split(text)]
    except NumberFormatError as exc:
        raise kafka_error(str(exc)) from None


def format_reassignment_json(assignment: Mapping[TopicPartition, Sequence[int]], log_dirs: Mapping[Replica, str] | None = None) -> str:
    """formatAsReassignmentJson: compact, sorted by topic then partition, `log_dirs` always present."""
    return json.dumps(reassignment_document(assignment, log_dirs), separators=(",", ":"), ensure_ascii=False)


def reassignment_document(assignment: Mapping[TopicPartition, Sequence[int]], log_dirs: Mapping[Replica, str] | None = None) -> dict[str, Any]:
    log_dirs = log_dirs or {}
    partitions = []
    for tp in sorted(assignment, key=tp_key):
        replicas = list(assignment[tp])
        partitions.append(
            {
                "topic": tp[0],
                "partition": tp[1],
                "replicas": replicas,
                "log_dirs": [log_dirs.get((tp[0], tp[1], r), ANY_LOG_DIR) for r in replicas],
            }
        )
    return {"version": 1, "partitions": partitions}
