"""`kafka-log-dirs --describe`: Kafka's report of what is on which log directory, as data, and
that report answered from the cluster state.

Reference: kafka-reassign-and-log-dirs.md §5 (LogDirsCommand).

Kafka's JSON arrays come out in Java hash order, which its own docs say consumers must not rely
on; kjbod sorts them instead (brokers by id, log dirs by path, partitions by topic then
partition), so output is stable. For broker ids and paths that Java's HashMap happens to keep in
ascending order (ids below the table size, the usual case) the two are identical.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import partial
from itertools import repeat
from typing import Any, NamedTuple

import numpy as np
import orjson

from kjbod.common.callbacks import gc_paused
from kjbod.common.java import NumberFormatError, parse_java_int
from kjbod.common.kafka_uuid import DirectoryId
from kjbod.errors import UserError
from kjbod.image import Image

KAFKA_STORAGE_EXCEPTION = "org.apache.kafka.common.errors.KafkaStorageException"
QUERYING_LINE = "Querying brokers for log directories information"
RECEIVED_PREFIX = "Received log directory information from brokers "
# Characters of Kafka's legal topic names, which JSON never escapes.
_PLAIN_NAME = re.compile(r"[A-Za-z0-9._-]*")


# The report: Kafka's JSON, as data ------------------------------------------------------------


class PartitionEntry(NamedTuple):
    """One replica's log in a log directory (a `partitions[]` item of Kafka's JSON)."""

    topic: str
    partition: int
    size: int
    offset_lag: int
    is_future: bool

    @property
    def name(self) -> str:
        return f"{self.topic}-{self.partition}"


@dataclass
class LogDirEntry:
    path: str
    error: str | None
    partitions: list[PartitionEntry]
    # kjbod extensions, written only for a scan of real disks (`LogDirsReport.disk`).
    directory_id: str | None = None
    pending_deletion: list[str] = field(default_factory=list)


@dataclass
class BrokerEntry:
    broker: int
    log_dirs: list[LogDirEntry]


@dataclass
class LogDirsReport:
    """What `kafka-log-dirs --describe` prints, sorted (see the module docstring)."""

    brokers: list[BrokerEntry]
    # True for a scan of real directories: each logDir object also gets two kjbod extensions
    # after Kafka's keys: "pendingDeletion" (the partitions whose
    # `<topic>-<partition>.<id>-delete` directory is waiting to be removed) and, last,
    # "directoryId" (from meta.properties, null when missing).
    disk: bool = False

    @property
    def broker_ids(self) -> list[int]:
        return [b.broker for b in self.brokers]

    def to_kafka_data(self) -> dict[str, Any]:
        """The JSON document with Kafka's key order (§5.3): HashMap order, confirmed on a JVM."""
        brokers = []
        for broker in self.brokers:
            log_dirs = []
            for log_dir in broker.log_dirs:
                item: dict[str, Any] = {
                    "partitions": [
                        {"partition": f"{p.topic}-{p.partition}", "size": p.size, "offsetLag": p.offset_lag, "isFuture": p.is_future}
                        for p in log_dir.partitions
                    ],
                    "error": log_dir.error,
                    "logDir": log_dir.path,
                }
                if self.disk:
                    item["pendingDeletion"] = list(log_dir.pending_deletion)
                    item["directoryId"] = log_dir.directory_id
                log_dirs.append(item)
            brokers.append({"broker": broker.broker, "logDirs": log_dirs})
        return {"brokers": brokers, "version": 1}

    def to_kafka_json(self) -> str:
        """Jackson's compact output: no spaces, '/' and non-ASCII characters unescaped.

        Written as text rather than through dicts: a million-partition cluster has three
        million partition entries, and this is several times faster. It equals
        `orjson.dumps(self.to_kafka_data())`, which a test checks.
        """
        dumps = orjson.dumps
        quoted: dict[str, str] = {}
        brokers = []
        for broker in self.brokers:
            log_dirs = []
            for log_dir in broker.log_dirs:
                for topic in {entry.topic for entry in log_dir.partitions}.difference(quoted):
                    # Kafka's topic names need no escaping; folder names on a disk might.
                    name = topic if _PLAIN_NAME.fullmatch(topic) else dumps(topic).decode()[1:-1]
                    quoted[topic] = '{"partition":"' + name + "-"
                entries = [
                    f'{quoted[topic]}{partition}","size":{size},"offsetLag":{lag},"isFuture":{"true" if future else "false"}}}'
                    for topic, partition, size, lag, future in log_dir.partitions
                ]
                tail = dumps({"error": log_dir.error, "logDir": log_dir.path}).decode()[1:]
                if self.disk:
                    extensions = dumps({"pendingDeletion": list(log_dir.pending_deletion), "directoryId": log_dir.directory_id}).decode()[1:]
                    tail = tail[:-1] + "," + extensions
                log_dirs.append('{"partitions":[' + ",".join(entries) + "]," + tail)
            brokers.append(f'{{"broker":{broker.broker},"logDirs":[' + ",".join(log_dirs) + "]}")
        return '{"brokers":[' + ",".join(brokers) + '],"version":1}'

    def lines(self) -> list[str]:
        """kafka-log-dirs' three stdout lines (LDC:91-98)."""
        return [QUERYING_LINE, RECEIVED_PREFIX + ",".join(map(str, self.broker_ids)), self.to_kafka_json()]

    def filtered(self, brokers: set[int] | None, topics: set[str] | None) -> LogDirsReport:
        """Only the given brokers, and in every log dir only partitions of the given topics; a
        log dir whose partitions are all filtered out stays, with "partitions": [] (LDC:125-128)."""
        kept = []
        for broker in self.brokers:
            if brokers is not None and broker.broker not in brokers:
                continue
            if topics is not None:
                broker = BrokerEntry(
                    broker.broker,
                    [
                        LogDirEntry(d.path, d.error, [p for p in d.partitions if p.topic in topics], d.directory_id, d.pending_deletion)
                        for d in broker.log_dirs
                    ],
                )
            kept.append(broker)
        return LogDirsReport(kept, self.disk)


# Command-line lists (LDC:198-200, 214-219) -------------------------------------------------------


def parse_broker_list(text: str | None) -> set[int] | None:
    """`--broker-list 1,2`: split at commas, empty pieces dropped, duplicates collapse.
    None (or nothing left) means every broker."""
    if text is None:
        return None
    ids = set()
    for piece in text.split(","):
        if not piece:
            continue
        try:
            ids.add(parse_java_int(piece))  # Integer.valueOf
        except NumberFormatError as exc:
            # Kafka dies with NumberFormatException's message (and a stack trace).
            raise UserError(f"{exc} (in --broker-list)") from None
    return ids or None


def parse_topic_list(text: str | None) -> set[str] | None:
    if text is None:
        return None
    topics = {piece for piece in text.split(",") if piece}
    return topics or None


def select_brokers(cluster: Iterable[int], requested: set[int] | None) -> list[int]:
    """The brokers to describe: the requested ones, or all; unknown ones are an error (LDC:75-89)."""
    known = sorted(set(cluster))
    if requested is None:
        return known
    missing = sorted(requested - set(known))
    if missing:
        raise UserError(
            f"ERROR: The given brokers do not exist from --broker-list: {','.join(map(str, missing))}. "
            f"Current existent brokers: {','.join(map(str, known))}"
        )
    return sorted(requested)


# Describe from the cluster state ------------------------------------------------------------------


def _placements(image: Image, brokers: set[int], topics: set[str] | None) -> dict[int, dict[str, list[PartitionEntry]]]:
    """broker -> directory id -> the replicas the state places there.

    A replica sits in the directory its partition records for that broker. Replicas whose
    directory is UNASSIGNED (the broker has not said yet), LOST or MIGRATING are not placed in
    any directory, as a broker reports no such log: with one exception, a MIGRATING replica on a
    broker with a single configured directory (a cluster before metadata.version 3.7-IV2, which
    records no directories) is in that directory, since there is nowhere else it could be.
    Future replicas (KIP-113) sit in the directory they are being built in.
    """
    configured = {b: [d.directory_id for d in image.cluster.log_dirs.get(b, ())] for b in brokers}
    for b in brokers:
        configured[b].extend(d for d in image.cluster.brokers[b].directories if d not in configured[b])
    # broker -> directory id -> its replicas, lists made up front (no key or list per replica).
    placed: dict[int, dict[str, list[PartitionEntry]]] = {b: {d: [] for d in dirs} for b, dirs in configured.items()}
    single_dir = {b: dirs[0] for b, dirs in configured.items() if len(dirs) == 1}
    table = image.topics.table
    # The replicas on the brokers asked about (and of the topics asked about), from the columns:
    # only those become objects.
    values = table.replicas.values
    wanted = values == next(iter(brokers)) if len(brokers) == 1 else np.isin(values, list(brokers))
    chosen_rows = None
    if topics is not None:
        chosen_topics = [t for t, name in enumerate(table.topic_names) if name in topics]
        chosen_rows = np.isin(table.part_topic, chosen_topics)
        wanted &= chosen_rows[table.replica_row]
    entries = np.flatnonzero(wanted)
    rows = table.rows_of_entries(entries)
    names, part_topic, part_id = table.topic_names, table.part_topic, table.part_id
    sizes = np.maximum(table.size[rows], 0)
    # A replica with a log record (not a complete copy) reports that log's size and lag.
    lags = np.zeros(len(rows), np.int64)
    logs = np.flatnonzero(~table.log_future)
    if len(logs) and len(rows):
        log_keys = (table.log_row[logs].astype(np.int64) << 32) | (table.log_broker[logs].astype(np.int64) & 0xFFFFFFFF)
        replica_keys = (rows.astype(np.int64) << 32) | (values[entries].astype(np.int64) & 0xFFFFFFFF)
        order = np.argsort(log_keys, kind="stable")
        position = np.minimum(np.searchsorted(log_keys[order], replica_keys), len(order) - 1)
        found = log_keys[order][position] == replica_keys
        first_log = logs[order][position]  # the first log recorded for the replica, as a lookup finds
        sizes = np.where(found, table.log_size[first_log], sizes)
        lags = np.where(found, table.log_lag[first_log], lags)
    dir_ids = table.dir_ids
    entry = partial(tuple.__new__, PartitionEntry)  # builds the NamedTuple at C speed
    # The replicas grouped by (broker, directory), each group in (topic name, partition) order, so
    # that the report's sort finds them sorted: a group at a time, no dictionary look-up per replica.
    topic_of, pid_of = part_topic[rows], part_id[rows]
    present = np.unique(topic_of)
    name_rank = np.zeros(len(names), np.int64)
    name_rank[present[np.argsort(np.array([names[t] for t in present.tolist()], dtype=object), kind="stable")]] = np.arange(len(present))
    group = (values[entries].astype(np.int64) << 32) | table.directories[entries].astype(np.int64)
    order = np.lexsort((pid_of, name_rank[topic_of], group))
    keys, firsts = np.unique(group[order], return_index=True)
    ends = [*firsts[1:].tolist(), len(order)]
    for key, first, end in zip(keys.tolist(), firsts.tolist(), ends):
        broker, directory = key >> 32, dir_ids[key & 0xFFFFFFFF]
        by_directory = placed[broker]
        replicas = by_directory.get(directory)
        if replicas is None:
            if directory != DirectoryId.MIGRATING or broker not in single_dir:
                continue  # UNASSIGNED, LOST, or another broker's directory
            replicas = by_directory[single_dir[broker]]
        chosen = order[first:end]
        replicas.extend(
            map(entry, zip(map(names.__getitem__, topic_of[chosen].tolist()), pid_of[chosen].tolist(), sizes[chosen].tolist(), lags[chosen].tolist(), repeat(False)))
        )
    # Future replicas (KIP-113) sit in the directory they are being built in.
    futures = np.flatnonzero(table.log_future)
    for i in futures[np.isin(table.log_broker[futures], list(placed))].tolist():
        broker, row = int(table.log_broker[i]), int(table.log_row[i])
        if chosen_rows is not None and not chosen_rows[row]:
            continue
        code = int(table.log_dir[i])
        directory = dir_ids[code] if code >= 0 else None
        if directory in placed[broker]:
            placed[broker][directory].append(
                entry((names[part_topic[row]], int(part_id[row]), int(table.log_size[i]), int(table.log_lag[i]), True))
            )
    return placed


def describe_from_image(image: Image, broker_list: str | None = None, topic_list: str | None = None) -> LogDirsReport:
    """`kafka-log-dirs --describe` answered from the cluster state.

    Every registered broker answers (kjbod knows what a fenced broker holds, though Kafka could
    not ask it), with every directory it was configured with; a directory that is not online is
    reported as Kafka reports a failed one: the KafkaStorageException error and no partitions.
    """
    requested = parse_broker_list(broker_list)
    topics = parse_topic_list(topic_list)
    targets = select_brokers(image.cluster.brokers, requested)
    with gc_paused():  # one small object per replica, none of them cyclic
        placed = _placements(image, set(targets), topics)
    brokers = []
    for broker_id in targets:
        registration = image.cluster.brokers[broker_id]
        configured = {d.directory_id: d.path for d in image.cluster.log_dirs.get(broker_id, ())}
        for directory in registration.directories:
            configured.setdefault(directory, directory)  # online but without a known path
        log_dirs = []
        for directory, path in configured.items():
            if registration.has_online_dir(directory):
                log_dirs.append(LogDirEntry(path, None, sorted(placed[broker_id][directory])))
            else:
                log_dirs.append(LogDirEntry(path, KAFKA_STORAGE_EXCEPTION, []))
        log_dirs.sort(key=lambda d: d.path)
        brokers.append(BrokerEntry(broker_id, log_dirs))
    return LogDirsReport(brokers)


def cordoned_notes(image: Image, broker_ids: Iterable[int]) -> list[str]:
    """What kafka-log-dirs does not print (DescribeLogDirs' IsCordoned reaches the Admin API only,
    LogDirsCommand 4.3.1/4.4.0 tools LogDirsCommand.java:76-144): the cordoned directories of the
    brokers shown, for stderr."""
    notes = []
    for broker_id in broker_ids:
        registration = image.cluster.brokers.get(broker_id)
        if registration is None or not registration.cordoned:
            continue
        labels = ", ".join(image.cluster.directory_label(broker_id, d) for d in registration.cordoned)
        notes.append(f"Broker {broker_id}: cordoned (no new replicas; kafka-log-dirs does not show it): {labels}")
    return notes
