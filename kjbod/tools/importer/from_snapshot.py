"""`kjbod import cluster --metadata-snapshot FILE [--metadata-log DIR] [--log-dirs FILE]...`: a new
cluster state built from a real KRaft controller's own metadata.

A controller's snapshot (`__cluster_metadata-0/<offset>-<epoch>.checkpoint`) and, with
`--metadata-log`, the log segments after it hold the exact state: every broker with its
directory ids (KIP-858), fenced, controlled-shutdown and cordoned state, every partition with
its replicas, ISR, leader, epochs, directories and reassignment, the features and configs. They
are read as kjbod records (kjbod.kafka_formats.controller_metadata) and replayed as they are.

Kafka knows directories only by id. Saved `kafka-log-dirs --describe` output knows them only by
path. The two are joined through the replicas both list: a path is the directory the snapshot
places most of the replicas the output lists under it (disagreements are warnings, as in
`log-dirs import`). An output that names a directory's id (`kjbod log-dirs describe --from-disk`
reads it from the directory's meta.properties) joins it outright: the way to name the empty
directories of a broker just added. A directory no path joins (an empty or failed disk, or no
output at all) keeps its id as its name, and the summary says which. The output then adds partition sizes,
lagging replicas and future replicas, exactly as `log-dirs import` does.

Everything is read, replayed and checked before anything is written; the state is created as
one commit and a snapshot, as `import cluster` does from files.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterator, Mapping
import dataclasses
from dataclasses import dataclass, field, replace
from itertools import chain, repeat
from operator import itemgetter
from pathlib import Path
from typing import Any

import numpy as np
import orjson

from kjbod.common.callbacks import Progress, gc_paused, ignore
from kjbod.common.kafka_release import NEWEST, KafkaRelease
from kjbod.common.kafka_uuid import DirectoryId, uuid_sort_key
from kjbod.common.problems import Problems
from kjbod.errors import ReplayError, UserError
from kjbod.controller.quorum_control import imported_quorum_records
from kjbod.image import EMPTY_IMAGE, Delta, Image, VoterNode, replay_all
from kjbod.image.columns import NO_DIRECTORY, UNKNOWN_SIZE, PartitionTable, Ragged, gather_index
from kjbod.image.topics import TopicsImage
from kjbod.records import (
    ClearElrRecord,
    KjbodBrokerLogDirsRecord,
    KjbodClusterRecord,
    KjbodLogDir,
    KjbodPartitionSizeRecord,
    KjbodReplicaLogRecord,
    PartitionChangeRecord,
    PartitionRecord,
    Record,
    RemoveTopicRecord,
    TopicRecord,
    Voter,
)
from kjbod.records.codec import RecordRun, entry_count
from kjbod.kafka_formats.controller_metadata import ControllerMetadata, read_controller_metadata
from kjbod.kafka_formats.kraft_snapshot import SnapshotError, SnapshotId
from kjbod.tools.importer.columnar import Codes
from kjbod.tools.importer.new_state import NewState, write_new_state
from kjbod.tools.log_dirs.importer import (
    LogDirsImport,
    finished_import,
    plan_log_dirs_import,
    plan_observations_import,
    replica_log_changes,
    state_shape,
)
from kjbod.tools.log_dirs.saved_columns import ObservedColumns, PartitionRows, first_entries, read_observed_columns, replica_entries
from kjbod.tools.log_dirs.saved_output import (
    Observation,
    Observations,
    json_start,
    partition_sizes,
    read_log_dirs_outputs,
    split_partition_name,
)

# The summary names the unjoined directories of up to this many brokers, else of the first few.
_NAMED_BROKERS = 5
_NAMED_WHEN_MANY = 3
_RESERVED = frozenset((DirectoryId.MIGRATING, DirectoryId.UNASSIGNED, DirectoryId.LOST))
_OBSERVED_DIRECTORY = itemgetter(0)  # Observation.directory_id


@dataclass
class SnapshotImportRequest:
    snapshot: Path
    metadata_log: Path | None = None
    log_dirs_files: list[Path] = field(default_factory=list)
    # The cluster.id of the controller's meta.properties (a snapshot does not hold it).
    cluster_id: str | None = None
    # What a voter that did not register (RegisterControllerRecord) is taken to run.
    release: KafkaRelease = NEWEST


@dataclass(frozen=True)
class UnjoinedDirectory:
    broker: int
    directory_id: str
    offline: bool

    def to_json(self) -> dict[str, Any]:
        return {"broker": self.broker, "directoryId": self.directory_id, "offline": self.offline}


@dataclass
class SnapshotImportSummary:
    state: str
    cluster_id: str | None
    source_snapshot: str
    snapshot_id: SnapshotId | None  # from the file name
    metadata_version: str
    brokers: int
    directories: int
    offline_directories: int
    joined_directories: int
    unjoined_directories: list[UnjoinedDirectory]
    unjoined_paths: list[str]  # paths in the log-dirs output no directory id was found for
    topics: int
    partitions: int
    replicas: int
    reassigning_partitions: int
    snapshot_records: int
    log_records: int
    log_segments: int
    torn_batch: str | None
    not_modelled: dict[str, int]
    dropped_in_transactions: int
    open_transaction: bool
    sized_partitions: int
    replica_logs: int
    future_replicas: int
    warnings: list[str]
    # The controller quorum as the snapshot and log record it, and the voter kjbod takes as its
    # leader (a snapshot does not say which voter leads); None when no voter set was found.
    kraft_version: int | None = None
    voters: list[dict[str, Any]] = field(default_factory=list)
    quorum_leader: int | None = None
    records: int = 0
    snapshot: str | None = None  # the new state's snapshot
    # What the import read besides the snapshot: the log after it, kafka-log-dirs output.
    from_log: bool = False
    with_log_dirs: bool = False

    def lines(self) -> list[str]:
        """The summary an operator reads (the warnings go before it, on stderr)."""
        offline = f" ({self.offline_directories} offline)" if self.offline_directories else ""
        reassigning = f", {self.reassigning_partitions} being reassigned" if self.reassigning_partitions else ""
        source = f"Read {self.snapshot_records} records from the snapshot {self.source_snapshot}"
        if self.from_log:
            source += f" and {self.log_records} from {self.log_segments} log segment(s) after it"
        lines = [
            f"Imported {self.brokers} broker(s) with {self.directories} log directories{offline}, {self.topics} topic(s) "
            f"and {self.partitions} partition(s) ({self.replicas} replicas{reassigning}) into {self.state} "
            f"at metadata.version {self.metadata_version}.",
            source + ".",
        ]
        if self.torn_batch:
            lines.append(f"Ignored a torn last batch of the log (an interrupted write): {self.torn_batch}.")
        if self.dropped_in_transactions or self.open_transaction:
            still_open = " (a transaction still open at the end of the log)" if self.open_transaction else ""
            lines.append(f"Left out {self.dropped_in_transactions} record(s) of aborted metadata transactions{still_open}.")
        if self.not_modelled:
            counted = ", ".join(f"{name} {count}" for name, count in self.not_modelled.items())
            lines.append(f"Records kjbod does not model, counted and left out: {counted}.")
        if self.with_log_dirs:
            lines.append(
                f"Joined {self.joined_directories} of {self.directories} log directories to their paths through the kafka-log-dirs output."
            )
        unjoined = sorted(directories_by_broker(self).items())
        if unjoined:
            # A cluster's new brokers are all unjoined (nothing on them yet): the first few are
            # named, the rest counted (-o json lists every one).
            shown = unjoined if len(unjoined) <= _NAMED_BROKERS else unjoined[:_NAMED_WHEN_MANY]
            named = "; ".join(f"broker {broker}: {', '.join(ids)}" for broker, ids in shown)
            rest = unjoined[len(shown) :]
            if rest:
                each = sorted({len(ids) for _, ids in rest})
                per = f"{each[0]}" if len(each) == 1 else f"{each[0]} to {each[-1]}"
                named += f"; and {sum(len(ids) for _, ids in rest)} more on {len(rest)} other brokers ({per} each; -o json lists every id)"
            kept = "y keeps its id as its path" if len(self.unjoined_directories) == 1 else "ies keep their id as their path"
            lines.append(f"{len(self.unjoined_directories)} log director{kept}: {named}.")
        if self.unjoined_paths:
            lines.append(f"Paths in the kafka-log-dirs output no directory id was found for (empty or failed): {'; '.join(self.unjoined_paths)}.")
        if self.with_log_dirs:
            lines.append(
                f"Sizes known for {self.sized_partitions} partition(s); {self.replica_logs} replica(s) lagging or partial; "
                f"{self.future_replicas} future replica(s)."
            )
        if self.quorum_leader is not None:
            voters = ", ".join(str(v["voterId"]) for v in sorted(self.voters, key=lambda v: v["voterId"]))
            lines.append(
                f"Controller quorum: voters {voters} (kraft.version {self.kraft_version}); the snapshot does not say which "
                f"leads, so controller {self.quorum_leader} does here."
            )
        lines.append(f"Wrote {self.records} records and a snapshot.")
        return lines

    def to_json(self) -> dict[str, Any]:
        return {
            "state": self.state,
            "source": {
                "snapshot": self.source_snapshot,
                "snapshotId": {"endOffset": self.snapshot_id.end_offset, "epoch": self.snapshot_id.epoch} if self.snapshot_id else None,
                "snapshotRecords": self.snapshot_records,
                "logRecords": self.log_records,
                "logSegments": self.log_segments,
                "tornBatch": self.torn_batch,
                "notModelled": self.not_modelled,
                "droppedInTransactions": self.dropped_in_transactions,
                "openTransaction": self.open_transaction,
                "kraftVersion": self.kraft_version,
                "voters": self.voters,
            },
            "quorumLeader": self.quorum_leader,
            "clusterId": self.cluster_id,
            "metadataVersion": self.metadata_version,
            "brokers": self.brokers,
            "directories": self.directories,
            "offlineDirectories": self.offline_directories,
            "joinedDirectories": self.joined_directories,
            "unjoinedDirectories": [d.to_json() for d in self.unjoined_directories],
            "unjoinedPaths": self.unjoined_paths,
            "topics": self.topics,
            "partitions": self.partitions,
            "replicas": self.replicas,
            "reassigningPartitions": self.reassigning_partitions,
            "sizedPartitions": self.sized_partitions,
            "replicaLogs": self.replica_logs,
            "futureReplicas": self.future_replicas,
            "warnings": self.warnings,
            "records": self.records,
            "snapshot": self.snapshot,
        }


@dataclass
class SnapshotImportPlan:
    entries: list[Record | RecordRun]
    summary: SnapshotImportSummary
    # The image the entries make (replayed once, as the plan was made), which the state writes
    # without replaying them again.
    image: Image | None = None


# Joining paths to directory ids --------------------------------------------------------------------


@dataclass
class PathJoin:
    paths: dict[tuple[int, str], str]  # (broker, directory id) -> path
    unjoined_paths: dict[int, set[str]]  # broker -> paths no directory id was found for
    warnings: list[str]


@dataclass
class _Census:
    known: dict[int, set[str]]  # broker -> every directory id it is known to have
    replicas: int
    reassigning: int


def _census(image: Image) -> _Census:
    """One pass over the partitions: every directory id each broker is known to have (its
    registration's online directories and those its replicas are placed in: a failed directory
    is only in the latter), the replicas and the partitions being reassigned."""
    known: dict[int, set[str]] = {broker_id: set(b.directories) for broker_id, b in image.cluster.brokers.items()}
    replicas = reassigning = 0
    for topic in image.topics.by_id.values():
        for partition in topic.partitions.values():
            replicas += len(partition.replicas)
            reassigning += partition.is_reassigning
            for broker, directory in zip(partition.replicas, partition.directories):
                if directory not in _RESERVED and broker in known:
                    known[broker].add(directory)
    return _Census(known, replicas, reassigning)


def join_paths(files: list[Path], image: Image) -> PathJoin:
    """Which path each directory id is, from the replicas the log-dirs outputs list under each
    path. Malformed output is passed over here; reading it for sizes reports every problem."""
    by_name = image.topics.by_name
    votes: dict[tuple[int, str], Counter[str]] = defaultdict(Counter)
    reported: dict[int, set[str]] = defaultdict(set)
    declared: dict[tuple[int, str], str] = {}
    for path in files:
        try:
            data = path.read_bytes()
            document = orjson.loads(memoryview(data)[json_start(data):])
        except (OSError, orjson.JSONDecodeError):
            continue
        for broker_entry in _list(document.get("brokers")) if isinstance(document, dict) else ():
            broker = broker_entry.get("broker") if isinstance(broker_entry, dict) else None
            if type(broker) is not int or broker not in image.cluster.brokers:
                continue
            for log_dir in _list(broker_entry.get("logDirs")):
                where = log_dir.get("logDir") if isinstance(log_dir, dict) else None
                if type(where) is not str:
                    continue
                reported[broker].add(where)
                if log_dir.get("directoryId") in image.cluster.brokers[broker].directories:
                    declared[(broker, where)] = log_dir["directoryId"]
                counter = votes[(broker, where)]
                for item in _list(log_dir.get("partitions")):
                    if not isinstance(item, dict) or item.get("isFuture") is not False or type(item.get("partition")) is not str:
                        continue
                    parts = split_partition_name(item["partition"])
                    topic = by_name.get(parts[0]) if parts else None
                    partition = topic.partitions.get(parts[1]) if topic and parts else None
                    if partition is not None and broker in partition.replicas:
                        directory = partition.directories[partition.replicas.index(broker)]
                        if directory not in _RESERVED:
                            counter[directory] += 1
    return _joined(votes, reported, declared)


def _list(value: object) -> list[Any]:
    """A JSON array, or nothing for any other value (reading the output for sizes names it)."""
    return value if isinstance(value, list) else []


def _joined(
    votes: Mapping[tuple[int, str], Counter[str]], reported: Mapping[int, set[str]], declared: Mapping[tuple[int, str], str]
) -> PathJoin:
    """The join from the votes: (broker, path) -> how many of the replicas listed there the
    snapshot places in each directory id; `reported` has every path of each broker; `declared`
    the ids an output names, which join first."""
    paths: dict[tuple[int, str], str] = {}
    warnings: list[str] = []
    unjoined: dict[int, set[str]] = {broker: set(found) for broker, found in reported.items()}
    for (broker, where), directory in declared.items():
        if (broker, directory) not in paths:
            paths[(broker, directory)] = where
            unjoined.setdefault(broker, set()).discard(where)
    votes = {key: counter for key, counter in votes.items() if key not in declared}
    # The paths with the most agreeing replicas are joined first; a directory id takes one path.
    ranked = sorted(((c.most_common(1)[0][1], b, p, c) for (b, p), c in votes.items() if c), key=lambda t: (-t[0], t[1], t[2]))
    for count, broker, where, counter in ranked:
        directory = counter.most_common(1)[0][0]
        if (broker, directory) in paths:
            warnings.append(
                f"Warning: log directory {where} of broker {broker} holds {count} replica(s) the snapshot places in directory "
                f"{directory}, which is already {paths[(broker, directory)]}; {where} keeps no directory id"
            )
            continue
        paths[(broker, directory)] = where
        unjoined[broker].discard(where)
        others = sum(counter.values()) - count
        if others:
            warnings.append(
                f"Warning: log directory {where} of broker {broker} is directory {directory} by {count} replica(s), "
                f"but {others} other replica(s) listed there are elsewhere in the snapshot; were the two taken at different times?"
            )
    return PathJoin(paths, {b: p for b, p in unjoined.items() if p}, warnings)


class _EveryPathItsOwnId(Mapping[str, str]):
    """A broker's log directories while the paths are not joined to ids yet: the output is
    read once, each replica's observation labelled with its directory's path."""

    def get(self, path: str, default: str | None = None) -> str:  # type: ignore[override]
        return path

    def __getitem__(self, path: str) -> str:
        return path

    def __iter__(self) -> Iterator[str]:
        return iter(())

    def __len__(self) -> int:
        return 0


_PATHS_AS_IDS = _EveryPathItsOwnId()


@dataclass
class _ReadOnce:
    join: PathJoin
    seen: Observations  # current replicas labelled by path (seen.directory_names), the rest by id


def _read_once(files: list[Path], image: Image) -> _ReadOnce | None:
    """The log-dirs outputs read and walked once: every replica observed under its path, then
    the join from those observations. None when the output has a problem, or when a path the
    join leaves without a directory id holds replicas: the two-pass reading (join_paths, then
    the output read against the joined paths) then decides, and names every problem."""
    problems = Problems()
    shape = replace(state_shape(image), directories={broker: _PATHS_AS_IDS for broker in image.cluster.brokers})
    seen = read_log_dirs_outputs(files, shape, problems)
    if problems:
        return None
    by_name = image.topics.by_name
    # (broker, path, directory id the snapshot places the replica in) for every replica observed,
    # counted at C speed: millions of them. One Python step per partition, not per replica; the
    # placement map is built back to front so that a broker's first place wins, as in
    # replicas.index.
    placed: Counter[tuple[int, str, str]] = Counter(
        chain.from_iterable(
            zip(brokers, map(_OBSERVED_DIRECTORY, brokers.values()), map(dict(zip(replicas[::-1], directories[::-1])).__getitem__, brokers))
            for topic, partitions in seen.current.items()
            for registrations in (by_name[topic].partitions,)
            for partition_id, brokers in partitions.items()
            for replicas, directories in (registrations[partition_id][:2],)
        )
    )
    votes: dict[tuple[int, str], Counter[str]] = defaultdict(Counter)
    for (broker, where, directory), count in placed.items():
        counter = votes[(broker, where)]  # a path holding only replicas of reserved directories has no votes
        if directory not in _RESERVED:
            counter[directory] = count
    reported: dict[int, set[str]] = defaultdict(set)
    for broker, where in seen.log_dirs:
        reported[broker].add(where)
    declared = {
        (broker, where): directory for (broker, where), directory in seen.declared_ids.items()
        if broker in image.cluster.brokers and directory in image.cluster.brokers[broker].directories
    }
    join = _joined(votes, reported, declared)
    names = {(broker, where): directory for (broker, directory), where in join.paths.items()}
    if any(key not in names for key in votes) or any(
        (broker, observation.directory_id) not in names for _, _, broker, observation in seen.items(future=True)
    ):
        return None
    # Future replicas, failed directories and capacities are few: their paths become ids here.
    future: dict[str, dict[int, dict[int, Observation]]] = {}
    for topic, partition_id, broker, observation in seen.items(future=True):
        named = observation._replace(directory_id=names[(broker, observation.directory_id)])
        future.setdefault(topic, {}).setdefault(partition_id, {})[broker] = named
    joined = Observations(
        current=seen.current,
        future=future,
        offline={(b, names[(b, p)]): where for (b, p), where in seen.offline.items() if (b, p) in names},
        capacities={(b, names[(b, p)]): size for (b, p), size in seen.capacities.items() if (b, p) in names},
        brokers=seen.brokers,
        files=seen.files,
        log_dirs={(b, names[(b, p)]): where for (b, p), where in seen.log_dirs.items() if (b, p) in names},
        directory_names=names,
        # Every replica listed under a path the snapshot places in the directory joined to it:
        # the usual case, and the log-dirs import need not look at each replica again.
        directories_as_recorded=all(names[(broker, where)] == directory for broker, where, directory in placed),
    )
    return _ReadOnce(join, joined)


# The usual input at a million partitions, as columns ------------------------------------------------
#
# _read_once keeps an Observation per replica and looks each one up among the partitions'
# registrations: at a million partitions (three million replicas) that is most of the import's
# time. For the usual input (a snapshot whose records only create topics and partitions, every
# topic numbered 0..n-1, the output in Kafka's layout with every replica where the snapshot
# places it), the same join and the same records are made from numpy columns here. Anything
# else makes _read_columns return None, and _read_once (then the two-pass reading) decides and
# names every problem; tests compare the two.

# Records that change partitions a snapshot's records created: none of them in the usual input.
_CHANGES_PARTITIONS = (PartitionChangeRecord, RemoveTopicRecord, ClearElrRecord, KjbodPartitionSizeRecord, KjbodReplicaLogRecord)


@dataclass
class _PartitionColumns:
    """Every partition the records create: topics in the order of their TopicRecords, the rows
    of topic t start[t]:start[t + 1] holding its partitions 0..n-1 in order."""

    topic_ids: list[str]
    topic_names: list[str]
    start: np.ndarray  # int64
    replica_start: np.ndarray  # int64: the replicas of row r are replicas[replica_start[r]:replica_start[r + 1]]
    replicas: np.ndarray  # int64
    directories: np.ndarray  # int64 per replica: a code into dir_ids
    dir_ids: list[str]
    leader: np.ndarray  # int64 per row
    reassigning: int
    # The other columns of the image's table (kjbod.image.columns), rows as above.
    part_id: np.ndarray
    leader_epoch: np.ndarray
    partition_epoch: np.ndarray
    leader_recovery_state: np.ndarray
    isr: Ragged
    removing: Ragged
    adding: Ragged
    elr: Ragged
    last_known_elr: Ragged
    dir_codes: dict[str, int]

    def table(self, size: np.ndarray, logs: list[tuple[int, int, bool, str | None, int, int]]) -> PartitionTable:
        """The image's table: these partitions with their sizes (UNKNOWN_SIZE for none) and
        replica logs (row, broker, future, directory id or None, size, lag)."""
        codes = Codes(self.dir_codes)
        logs = sorted(logs, key=lambda log: log[:3])
        log_dir = np.array([NO_DIRECTORY if log[3] is None else codes[log[3]] for log in logs], np.int64)
        # Directory codes in the order PartitionTable.from_topics gives them for the image that
        # replaying the records makes, so that the snapshot written is that one, byte for byte:
        # its topics iterate in TopicRecord order, those the sizes and replica logs touched moved
        # last in name order (TopicsDelta.apply); the replica logs' directories get codes first,
        # then the replicas', each as first met.
        topic_count = len(self.topic_ids)
        topic_of_row = np.repeat(np.arange(topic_count, dtype=np.int64), np.diff(self.start))
        log_rows = np.array([log[0] for log in logs], np.int64)
        touched = np.zeros(topic_count, np.bool_)
        touched[topic_of_row[size != UNKNOWN_SIZE]] = True
        touched[topic_of_row[log_rows]] = True
        topic_order = [*np.flatnonzero(~touched).tolist(), *sorted(np.flatnonzero(touched).tolist(), key=self.topic_names.__getitem__)]
        rank = np.empty(topic_count, np.int64)
        rank[topic_order] = np.arange(topic_count)
        named = log_dir != NO_DIRECTORY
        log_seen = log_dir[named][np.argsort(rank[topic_of_row[log_rows[named]]], kind="stable")]
        rows = np.concatenate([np.arange(self.start[t], self.start[t + 1]) for t in topic_order]) if topic_count else np.zeros(0, np.int64)
        seen = np.concatenate([log_seen, self.directories[gather_index(self.replica_start, rows)]])
        distinct, first = np.unique(seen, return_index=True)
        order = distinct[np.argsort(first, kind="stable")]
        renumber = np.full(len(codes) + 1, NO_DIRECTORY, np.int64)  # the last entry: NO_DIRECTORY stays
        renumber[order] = np.arange(len(order))
        ids = list(codes)
        return PartitionTable(
            topic_ids=self.topic_ids, topic_names=self.topic_names, topic_start=self.start, part_id=self.part_id.astype(np.int32),
            leader=self.leader.astype(np.int32), leader_epoch=self.leader_epoch, partition_epoch=self.partition_epoch,
            leader_recovery_state=self.leader_recovery_state, size=size,
            replicas=Ragged(self.replica_start, self.replicas.astype(np.int32)), directories=renumber[self.directories].astype(np.int32),
            isr=self.isr, removing=self.removing, adding=self.adding, elr=self.elr, last_known_elr=self.last_known_elr,
            dir_ids=[ids[code] for code in order.tolist()],
            log_row=np.array([log[0] for log in logs], np.int32), log_broker=np.array([log[1] for log in logs], np.int32),
            log_future=np.array([log[2] for log in logs], np.bool_), log_dir=renumber[log_dir].astype(np.int32),
            log_size=np.array([log[4] for log in logs], np.int64), log_lag=np.array([log[5] for log in logs], np.int64),
        )


def _sparse(column: chain[Any], new_row: np.ndarray) -> Ragged:
    """A rare list column (empty or None for most rows) as the table's sparse Ragged, its rows
    renumbered."""
    found = [(row, values) for row, values in enumerate(column) if values]
    rows = new_row[[row for row, _ in found]].tolist() if found else []
    return Ragged.sparse(sorted(zip(rows, (tuple(values) for _, values in found))))


def _partition_columns(entries: list[Record | RecordRun]) -> _PartitionColumns | None:
    """The partitions of entries that replayed without error, or None when they are not the
    usual ones (a partition changed, created twice, or without directories; gaps in a topic's
    partition ids; a broker twice in a replica list)."""
    topic_ids: list[str] = []
    names: list[str] = []
    runs: list[RecordRun] = []
    for entry in entries:
        kind = entry.record_type if isinstance(entry, RecordRun) else type(entry)
        if kind is TopicRecord:
            if isinstance(entry, RecordRun):
                topic_ids.extend(entry.columns["topic_id"])
                names.extend(entry.columns["name"])
            else:
                topic_ids.append(entry.topic_id)  # type: ignore[union-attr]
                names.append(entry.name)  # type: ignore[union-attr]
        elif kind is PartitionRecord:
            run = entry.plain() if isinstance(entry, RecordRun) else RecordRun.of([entry])
            if run.version < 1:
                return None  # no directories: replay makes them MIGRATING
            runs.append(run)
        elif issubclass(kind, _CHANGES_PARTITIONS):
            return None
    index = {topic_id: t for t, topic_id in enumerate(topic_ids)}
    count = sum(run.count for run in runs)

    def column(name: str) -> chain[Any]:
        """A field of every PartitionRecord (None where a version has no such field)."""
        return chain.from_iterable(run.columns[name] if name in run.columns else repeat(None, run.count) for run in runs)

    topic = np.fromiter(map(index.__getitem__, column("topic_id")), np.int64, count)
    number = np.fromiter(column("partition_id"), np.int64, count)
    replica_lists = list(column("replicas"))
    directory_lists = list(column("directories"))
    lengths = np.fromiter(map(len, replica_lists), np.int64, count)
    if not np.array_equal(lengths, np.fromiter(map(len, directory_lists), np.int64, count)):
        return None
    total = int(lengths.sum())
    replicas = np.fromiter(chain.from_iterable(replica_lists), np.int64, total)
    codes = Codes()
    directories = np.fromiter(map(codes.__getitem__, chain.from_iterable(directory_lists)), np.int64, total)
    leader = np.fromiter(column("leader"), np.int64, count)
    reassigning = sum(1 for removing, adding in zip(column("removing_replicas"), column("adding_replicas")) if removing or adding)
    isr_lists = list(column("isr"))
    isr_lengths = np.fromiter(map(len, isr_lists), np.int64, count)
    isr = np.fromiter(chain.from_iterable(isr_lists), np.int32, int(isr_lengths.sum()))
    del replica_lists, directory_lists, isr_lists
    if count and number.min() < 0:
        return None
    key = (topic << 32) | number
    order = np.argsort(key, kind="stable")
    key = key[order]
    start = np.zeros(len(topic_ids) + 1, np.int64)
    np.cumsum(np.bincount(topic, minlength=len(topic_ids)), out=start[1:])
    if count and (np.any(key[1:] <= key[:-1]) or np.any((key & 0xFFFFFFFF) != np.arange(count) - start[key >> 32])):
        return None  # a partition created twice, or a gap in a topic's partition ids
    replica_start = np.zeros(count + 1, np.int64)
    np.cumsum(lengths, out=replica_start[1:])
    taken = gather_index(replica_start, order)
    np.cumsum(lengths[order], out=replica_start[1:])
    replicas, directories = replicas[taken], directories[taken]
    row_of = np.repeat(np.arange(count, dtype=np.int64), lengths[order])
    for shift in range(1, int(lengths.max()) if count else 0):
        if np.any((replicas[shift:] == replicas[:-shift]) & (row_of[shift:] == row_of[:-shift])):
            return None  # a broker twice in a list: its first place counts (see _read_once)
    isr_start = np.zeros(count + 1, np.int64)
    np.cumsum(isr_lengths, out=isr_start[1:])
    isr = Ragged(*_reordered(isr_start, isr, order))
    new_row = np.empty(count, np.int64)
    new_row[order] = np.arange(count, dtype=np.int64)

    def ints(name: str, dtype: type) -> np.ndarray:
        return np.fromiter(column(name), dtype, count)[order]

    return _PartitionColumns(
        topic_ids, names, start, replica_start, replicas, directories, list(codes), leader[order], reassigning,
        part_id=number[order], leader_epoch=ints("leader_epoch", np.int32), partition_epoch=ints("partition_epoch", np.int32),
        leader_recovery_state=ints("leader_recovery_state", np.int8), isr=isr,
        removing=_sparse(column("removing_replicas"), new_row), adding=_sparse(column("adding_replicas"), new_row),
        elr=_sparse(column("eligible_leader_replicas"), new_row), last_known_elr=_sparse(column("last_known_elr"), new_row),
        dir_codes=dict(codes),
    )


def _reordered(start: np.ndarray, values: np.ndarray, order: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A ragged column's rows taken in `order`."""
    taken = gather_index(start, order)
    new_start = np.zeros(len(order) + 1, np.int64)
    np.cumsum(np.diff(start)[order], out=new_start[1:])
    return new_start, values[taken]


@dataclass
class _ColumnsRead:
    """What _read_columns found: the join, the census, and what the sizes need."""

    join: PathJoin
    census: _Census
    partitions: _PartitionColumns
    observed: ObservedColumns
    current_entry: np.ndarray  # per current observation: its replica's index in partitions.replicas
    paths: list[str]  # path code -> path
    names: dict[tuple[int, str], str]  # (broker, path) -> directory id
    elsewhere: np.ndarray  # the current observations whose replica the snapshot places in another directory
    # What _sizes_from_columns records, for the image's table: each row's size (UNKNOWN_SIZE
    # for none) and the replica logs (row, broker, future, directory id or None, size, lag).
    size: np.ndarray | None = None
    logs: list[tuple[int, int, bool, str | None, int, int]] = field(default_factory=list)


def _read_columns(files: list[Path], image: Image, entries: list[Record | RecordRun]) -> _ColumnsRead | None:
    """_read_once's join from columns, or None when the input is not the usual one."""
    partitions = _partition_columns(entries)
    if partitions is None:
        return None
    brokers = image.cluster.brokers
    path_codes: Codes = Codes()
    rows = PartitionRows({name: t for t, name in enumerate(partitions.topic_names)}, partitions.start)
    observed = read_observed_columns(files, {broker: _PATHS_AS_IDS for broker in brokers}, path_codes, rows)
    if observed is None:
        return None
    size = len(partitions.replicas)
    broker = observed.broker.astype(np.int64)
    current_entry = replica_entries(observed.row, broker, partitions.replica_start, partitions.replicas)
    if current_entry is None or first_entries(current_entry, size) is None:
        return None
    future_broker = observed.dir_broker[observed.future_dir].astype(np.int64)
    future_entry = replica_entries(observed.future_row, future_broker, partitions.replica_start, partitions.replicas)
    if future_entry is None or first_entries(future_entry, size) is None:
        return None
    paths = list(path_codes)
    dir_ids = partitions.dir_ids
    reserved = np.array([d in _RESERVED for d in dir_ids] or [False], np.bool_)

    # The votes: (broker, path) -> how many replicas listed there the snapshot places in each
    # directory id; every (broker, path) listing a current replica has its counter.
    pair, pair_of = np.unique((broker << 32) | observed.directory.astype(np.int64), return_inverse=True)
    recorded = partitions.directories[current_entry]
    counted = ~reserved[recorded] if len(recorded) else np.zeros(0, np.bool_)
    triple, tally = np.unique(pair_of[counted] * max(len(dir_ids), 1) + recorded[counted], return_counts=True)
    keys = [(int(b), paths[p]) for b, p in zip((pair >> 32).tolist(), (pair & 0xFFFFFFFF).tolist())]
    votes: dict[tuple[int, str], Counter[str]] = {key: Counter() for key in keys}
    width = max(len(dir_ids), 1)
    for code, count in zip(triple.tolist(), tally.tolist()):
        votes[keys[code // width]][dir_ids[code % width]] = count
    if any(list(counter.values()).count(max(counter.values())) > 1 for counter in votes.values() if counter):
        return None  # a tie: which id wins depends on the order _read_once meets the replicas
    reported: dict[int, set[str]] = defaultdict(set)
    for broker_id, where in observed.log_dirs:
        reported[broker_id].add(where)
    declared = {
        (broker_id, where): directory for (broker_id, where), directory in observed.declared_ids.items()
        if broker_id in brokers and directory in brokers[broker_id].directories
    }
    join = _joined(votes, reported, declared)
    names = {(broker_id, where): directory for (broker_id, directory), where in join.paths.items()}
    if any(key not in names for key in keys):
        return None
    future_paths = observed.dir_code[observed.future_dir].tolist()
    if any((b, paths[p]) not in names for b, p in zip(future_broker.tolist(), future_paths)):
        return None
    # The replicas listed under a path the snapshot places elsewhere than the directory joined to
    # it (usually none): the warnings name each.
    code_of = {directory: code for code, directory in enumerate(dir_ids)}
    joined_code = np.array([code_of.get(names[key], -1) for key in keys] or [-1], np.int64)
    elsewhere = np.flatnonzero(joined_code[pair_of] != recorded) if len(recorded) else np.zeros(0, np.int64)

    # The census (_census) from the columns: each registered broker's directories, with those its
    # replicas are placed in.
    known: dict[int, set[str]] = {broker_id: set(b.directories) for broker_id, b in brokers.items()}
    registered = np.fromiter(brokers, np.int64, len(brokers))
    placed = ~reserved[partitions.directories] & np.isin(partitions.replicas, registered) if size else np.zeros(0, np.bool_)
    for value in np.unique((partitions.replicas[placed] << 32) | partitions.directories[placed]).tolist():
        known[value >> 32].add(dir_ids[value & 0xFFFFFFFF])
    census = _Census(known, size, partitions.reassigning)
    return _ColumnsRead(join, census, partitions, observed, current_entry, paths, names, elsewhere)


def _observations(read: _ColumnsRead, chosen: np.ndarray) -> dict[str, dict[int, dict[int, Observation]]]:
    """The Observations (labelled by path, as _read_once labels them) of some current replicas."""
    partitions, observed = read.partitions, read.observed
    topic_of_row = np.searchsorted(partitions.start, observed.row[chosen], side="right") - 1
    found: dict[str, dict[int, dict[int, Observation]]] = {}
    for t, r, d, s, lag, position in zip(
        topic_of_row.tolist(), observed.row[chosen].tolist(), observed.dir[chosen].tolist(), observed.size[chosen].tolist(),
        observed.lag[chosen].tolist(), observed.position[chosen].tolist(),
    ):
        source, _, json_path = observed.dir_where[d].rpartition(" $.brokers[")
        partition = r - int(partitions.start[t])
        found.setdefault(partitions.topic_names[t], {}).setdefault(partition, {})[int(observed.dir_broker[d])] = Observation(
            read.paths[int(observed.dir_code[d])], s, lag, source, "$.brokers[" + json_path, position - observed.dir_first[d]
        )
    return found


def _sizes_from_columns(read: _ColumnsRead, image: Image) -> LogDirsImport:
    """plan_observations_import's records and counts, from the columns. The snapshot holds no
    sizes or replica logs (they are kjbod's records), so every partition reported gets its size
    and every replica that is not a complete copy its log; the few partitions with a future
    replica are decided by the same code as there, from Observations made for them alone."""
    partitions, observed, names, paths = read.partitions, read.observed, read.names, read.paths
    rows = len(partitions.leader)
    row = observed.row
    broker = observed.broker.astype(np.int64)
    # Partitions with a future replica: partition_sizes and replica_log_changes decide them.
    slow = np.zeros(rows, np.bool_)
    slow[observed.future_row] = True
    fast = ~slow[row]
    largest = np.full(rows, -1, np.int64)
    np.maximum.at(largest, row[fast], observed.size[fast])
    size = largest.copy()
    leads = fast & (broker == partitions.leader[row])
    size[row[leads]] = observed.size[leads]
    partial = np.flatnonzero(fast & ((observed.size != size[row]) | (observed.lag != 0)))
    partial = partial[np.lexsort((read.current_entry[partial], row[partial]))]
    logs: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for r, b, s, lag in zip(row[partial].tolist(), broker[partial].tolist(), observed.size[partial].tolist(), observed.lag[partial].tolist()):
        logs[r].append({"partition_id": r, "broker_id": b, "size_bytes": s, "offset_lag": lag})
    counts = {"sizes": 0, "logs": len(partial), "futures": 0, "removed": 0}

    topic_of_row = np.repeat(np.arange(len(partitions.topic_ids), dtype=np.int64), np.diff(partitions.start))
    by_id = image.topics.by_id
    slow_rows = np.flatnonzero(slow).tolist()
    if slow_rows:
        wanted = slow[row]
        current: dict[int, dict[int, Observation]] = defaultdict(dict)
        for r, b, p, s, lag in zip(row[wanted].tolist(), broker[wanted].tolist(), observed.directory[wanted].tolist(),
                                   observed.size[wanted].tolist(), observed.lag[wanted].tolist()):
            current[r][b] = Observation(names[(b, paths[p])], s, lag, "", "", 0)
        future: dict[int, dict[int, Observation]] = defaultdict(dict)
        for r, d, s, lag in zip(observed.future_row.tolist(), observed.future_dir.tolist(), observed.future_size.tolist(), observed.future_lag.tolist()):
            b = int(observed.dir_broker[d])
            future[r][b] = Observation(names[(b, paths[int(observed.dir_code[d])])], s, lag, "", "", 0)
        start = partitions.start.tolist()
        replica_start = partitions.replica_start.tolist()
        for r in slow_rows:
            t = int(topic_of_row[r])
            replicas = tuple(partitions.replicas[replica_start[r] : replica_start[r + 1]].tolist())
            sizes = partition_sizes(replicas, int(partitions.leader[r]), current.get(r) or None, future[r])
            assert sizes is not None  # it has a future replica
            size[r] = -1 if sizes.size is None else sizes.size
            changes = replica_log_changes(by_id[partitions.topic_ids[t]], r - start[t], replicas, sizes.size, current.get(r) or {}, sizes, counts)
            logs[r] = [{**change, "partition_id": r} for change in changes]

    read.size = np.where(size >= 0, size, UNKNOWN_SIZE)
    read.logs = [
        (r, log["broker_id"], log.get("future", False), log.get("directory_id"), log["size_bytes"], log["offset_lag"]) for r in logs for log in logs[r]
    ]
    entries: list = []
    sized = np.flatnonzero(size >= 0)
    bounds = np.searchsorted(sized, partitions.start).tolist()
    log_rows = sorted(logs)
    log_bounds = np.searchsorted(np.array(log_rows, np.int64), partitions.start).tolist() if log_rows else [0] * len(bounds)
    first = partitions.start.tolist()
    for t in sorted(range(len(partitions.topic_ids)), key=partitions.topic_names.__getitem__):
        topic_id, lo = partitions.topic_ids[t], first[t]
        chosen = sized[bounds[t] : bounds[t + 1]]
        if len(chosen):
            entries.append(RecordRun(
                KjbodPartitionSizeRecord, 0, len(chosen),
                {"topic_id": [topic_id] * len(chosen), "partition_id": (chosen - lo).tolist(), "size_bytes": size[chosen].tolist()},
            ))
            counts["sizes"] += len(chosen)
        for r in log_rows[log_bounds[t] : log_bounds[t + 1]]:
            entries.extend(KjbodReplicaLogRecord(topic_id=topic_id, **{**log, "partition_id": r - lo}) for log in logs[r])
    seen = Observations(
        current=_observations(read, read.elsewhere),
        offline={(b, names[(b, p)]): where for (b, p), where in observed.offline.items() if (b, p) in names},
        capacities={(b, names[(b, p)]): total for (b, p), total in observed.capacities.items() if (b, p) in names},
        brokers=observed.brokers,
        files=observed.files,
        log_dirs={(b, names[(b, p)]): where for (b, p), where in observed.log_dirs.items() if (b, p) in names},
        directory_names=names,
        directories_as_recorded=not len(read.elsewhere),
    )
    return finished_import(image, seen, entries, counts)


# The import ------------------------------------------------------------------------------------------


def _replayed(base: Image, entries: list[Record | RecordRun], source: Path) -> Image:
    try:
        return replay_all(base, entries)
    except ReplayError as exc:
        raise UserError(f"{source}: kjbod cannot replay the controller's records: {exc}") from None


def _read(request: SnapshotImportRequest) -> ControllerMetadata:
    if request.metadata_log is not None and not request.metadata_log.is_dir():
        raise UserError(f"--metadata-log {request.metadata_log} is not a directory (give the controller's __cluster_metadata-0 directory)")
    try:
        return read_controller_metadata(request.snapshot, request.metadata_log)
    except SnapshotError as exc:
        raise UserError(str(exc)) from None


def plan_snapshot_import(request: SnapshotImportRequest, *, progress: Progress = ignore) -> SnapshotImportPlan:
    """Read, replay and check everything; the records of the new state and what they hold.
    Raises UserError for an unreadable snapshot or log, ValidationFailed for problems in the
    log-dirs output; nothing is written either way."""
    progress(f"Reading {request.snapshot}" + (f" and the log in {request.metadata_log}" if request.metadata_log else ""))
    metadata = _read(request)
    progress("Replaying the controller's records")
    # The state names its cluster, as after `format` on a controller or `import cluster --cluster-id`:
    # its record comes first, so that every record replays here at the offset it is written at.
    cluster = [KjbodClusterRecord(cluster_id=request.cluster_id)] if request.cluster_id is not None else []
    image = _replayed(EMPTY_IMAGE, [*cluster, *metadata.entries], request.snapshot)
    mv = image.features.metadata_version
    if mv is None:
        raise UserError(f"{request.snapshot} holds no metadata.version record; it is not a controller's snapshot of a cluster")

    progress(f"Joining directories to paths through {', '.join(map(str, request.log_dirs_files)) or 'no log-dirs output'}")
    columns = _read_columns(request.log_dirs_files, image, metadata.entries) if request.log_dirs_files else None
    read_once = _read_once(request.log_dirs_files, image) if request.log_dirs_files and columns is None else None
    if columns is not None:
        join = columns.join
    else:
        join = read_once.join if read_once is not None else join_paths(request.log_dirs_files, image)
    census = columns.census if columns is not None else _census(image)
    known = census.known
    directory_records: list[Record | RecordRun] = []
    unjoined: list[UnjoinedDirectory] = []
    offline = 0
    for broker_id in sorted(known):
        online = set(image.cluster.brokers[broker_id].directories)
        dirs = []
        for directory in sorted(known[broker_id], key=uuid_sort_key):
            path = join.paths.get((broker_id, directory))
            if path is None:
                unjoined.append(UnjoinedDirectory(broker_id, directory, directory not in online))
            offline += directory not in online
            dirs.append(KjbodLogDir(directory_id=directory, path=path or directory))
        if dirs:
            directory_records.append(KjbodBrokerLogDirsRecord(broker_id=broker_id, log_dirs=tuple(dirs)))
    image = _replayed(image, directory_records, request.snapshot)

    sizes_entries: list = []
    warnings = list(join.warnings)
    sized = logs = futures = 0
    if request.log_dirs_files:
        progress("Reading partition sizes from the log-dirs output")
        if columns is not None:
            loaded = _sizes_from_columns(columns, image)
        elif read_once is not None:
            loaded = plan_observations_import(image, read_once.seen)
        else:
            ignored = {broker: frozenset(paths) for broker, paths in join.unjoined_paths.items()}
            loaded = plan_log_dirs_import(image, request.log_dirs_files, ignored=ignored)
        sizes_entries = loaded.entries
        warnings.extend(loaded.warnings)
        sized, logs, futures = loaded.partition_sizes, loaded.replica_logs, loaded.future_replicas

    topics = image.topics
    summary = SnapshotImportSummary(
        state="",
        cluster_id=request.cluster_id,
        source_snapshot=str(request.snapshot),
        snapshot_id=metadata.snapshot.snapshot_id,
        metadata_version=str(mv),
        brokers=len(image.cluster.brokers),
        directories=sum(len(d) for d in known.values()),
        offline_directories=offline,
        joined_directories=len(join.paths),
        unjoined_directories=unjoined,
        unjoined_paths=[f"broker {b} {p}" for b in sorted(join.unjoined_paths) for p in sorted(join.unjoined_paths[b])],
        topics=len(topics),
        partitions=topics.partition_count,
        replicas=census.replicas,
        reassigning_partitions=census.reassigning,
        snapshot_records=metadata.snapshot_records,
        log_records=metadata.log_records,
        log_segments=metadata.log_segments,
        torn_batch=metadata.torn,
        not_modelled=dict(sorted(metadata.unmodelled.items())),
        dropped_in_transactions=metadata.dropped_in_transactions,
        open_transaction=metadata.open_transaction,
        sized_partitions=sized,
        replica_logs=logs,
        future_replicas=futures,
        warnings=warnings,
        kraft_version=metadata.kraft_version,
        voters=[v.to_json() for v in metadata.voters or ()],
        from_log=request.metadata_log is not None,
        with_log_dirs=bool(request.log_dirs_files),
    )
    entries = [*cluster, *metadata.entries, *directory_records, *sizes_entries]
    quorum = _quorum_entries(image, metadata, sum(entry_count(e) for e in entries), summary, request.release)
    entries += quorum
    if columns is not None and columns.size is not None:
        final = _columnar_image(image, [*sizes_entries, *quorum], columns, request.snapshot)
    else:
        final = _replayed(_replayed(image, sizes_entries, request.snapshot), quorum, request.snapshot)
    return SnapshotImportPlan(entries, summary, final)


def _columnar_image(image: Image, entries: list[Record | RecordRun], columns: _ColumnsRead, source: Path) -> Image:
    """The image `entries` make of `image`, its topics made from the columns (with the sizes and
    replica logs of the entries) rather than by replaying a million sizes and building the
    snapshot's table from a million partition objects again."""
    assert columns.size is not None
    delta = Delta(image)
    offset = image.next_offset
    try:
        for entry in entries:
            kind = entry.record_type if isinstance(entry, RecordRun) else type(entry)
            if kind is KjbodPartitionSizeRecord or kind is KjbodReplicaLogRecord:
                offset += entry_count(entry)  # in the table
            else:
                offset = delta.replay_entry(entry, offset)
    except ReplayError as exc:
        raise UserError(f"{source}: kjbod cannot replay the controller's records: {exc}") from None
    table = columns.partitions.table(columns.size, columns.logs)
    return dataclasses.replace(delta.apply(), offset=offset - 1, topics=TopicsImage.from_table(table))


def _quorum_entries(
    image: Image, metadata: ControllerMetadata, first_offset: int, summary: SnapshotImportSummary, release: KafkaRelease
) -> list[Record]:
    """The controller quorum of the snapshot's header (and the log's control records): with
    kraft.version 1 its voter set, so that `kjbod quorum` works on the imported state. With
    kraft.version 0 the voters are in controller.quorum.voters, which no snapshot holds."""
    if not metadata.voters or not metadata.kraft_version:
        return []
    voters = tuple(sorted((VoterNode.from_voter(Voter.model_validate(v.to_json())) for v in metadata.voters), key=lambda v: v.key.id))
    epoch = metadata.snapshot.snapshot_id.epoch if metadata.snapshot.snapshot_id else 1
    records = imported_quorum_records(image, voters, metadata.kraft_version, epoch, first_offset, release=release)
    summary.quorum_leader = min(v.key.id for v in voters)
    return records


def import_from_snapshot(request: SnapshotImportRequest, target: NewState, *, progress: Progress = ignore) -> SnapshotImportSummary:
    """Check everything, then create the state with one commit and a snapshot."""
    target.check_new()
    # keep: the plan's millions of objects live until the state is written; frozen, the
    # collector does not scan them all once more while it is written.
    with gc_paused(keep=True):
        plan = plan_snapshot_import(request, progress=progress)
    write_new_state(target, plan.entries, plan.summary, progress=progress, image=plan.image)
    return plan.summary


def directories_by_broker(summary: SnapshotImportSummary) -> Mapping[int, list[str]]:
    """The unjoined directory ids per broker (for the summary's lines)."""
    by_broker: dict[int, list[str]] = defaultdict(list)
    for item in summary.unjoined_directories:
        by_broker[item.broker].append(item.directory_id + (" (offline)" if item.offline else ""))
    return by_broker
