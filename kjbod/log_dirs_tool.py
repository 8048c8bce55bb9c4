"""`kafka-log-dirs` in kjbod: what is on which log directory, from the cluster state or from a
broker's real disks; Kafka's JSON written and read back; and loading it into the cluster state.

Reference: kafka-reassign-and-log-dirs.md §5 (LogDirsCommand) and KIP-113 (directory names of
replicas being moved or deleted).

Kafka's JSON arrays come out in Java hash order, which its own docs say consumers must not rely
on; kjbod sorts them instead (brokers by id, log dirs by path, partitions by topic then
partition), so output is stable. For broker ids and paths that Java's HashMap happens to keep in
ascending order (ids below the table size, the usual case) the two are identical.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

import orjson

from kjbod.common.callbacks import gc_paused, ignore
from kjbod.common.kafka_uuid import DirectoryId
from kjbod.errors import UserError
from kjbod.image import Image, TopicImage

KAFKA_STORAGE_EXCEPTION = "org.apache.kafka.common.errors.KafkaStorageException"
QUERYING_LINE = "Querying brokers for log directories information"
RECEIVED_PREFIX = "Received log directory information from brokers "
# The metadata log (KRaft) is not a partition the LogManager serves (LogManager.loadLogs).
METADATA_TOPIC = "__cluster_metadata"
INT32_MAX = 2**31 - 1
INT64_MAX = 2**63 - 1
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
                entries = []
                append = entries.append
                for topic, partition, size, lag, future in log_dir.partitions:
                    prefix = quoted.get(topic)
                    if prefix is None:
                        # Kafka's topic names need no escaping; folder names on a disk might.
                        name = topic if _PLAIN_NAME.fullmatch(topic) else dumps(topic).decode()[1:-1]
                        prefix = quoted[topic] = '{"partition":"' + name + "-"
                    append(f'{prefix}{partition}","size":{size},"offsetLag":{lag},"isFuture":{"true" if future else "false"}}}')
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


def _java_integer(text: str) -> int | None:
    """`Integer.valueOf`: an optional sign and digits, no whitespace, within int32."""
    if not re.fullmatch(r"[+-]?[0-9]+", text):
        return None
    value = int(text)
    return value if -(2**31) <= value <= INT32_MAX else None


def parse_broker_list(text: str | None) -> set[int] | None:
    """`--broker-list 1,2`: split at commas, empty pieces dropped, duplicates collapse.
    None (or nothing left) means every broker."""
    if text is None:
        return None
    ids = set()
    for piece in text.split(","):
        if not piece:
            continue
        value = _java_integer(piece)
        if value is None:
            # Kafka dies with NumberFormatException's message (and a stack trace).
            raise UserError(f'For input string: "{piece}" (in --broker-list)')
        ids.add(value)
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
    placed = {b: {d: [] for d in dirs} for b, dirs in configured.items()}
    single_dir = {b: dirs[0] for b, dirs in configured.items() if len(dirs) == 1}
    new = tuple.__new__  # builds the NamedTuple at C speed
    for topic in image.topics.by_id.values():
        if topics is not None and topic.name not in topics:
            continue
        name, sizes, logs = topic.name, topic.sizes, topic.replica_logs
        for partition_id, partition in topic.partitions.items():
            size = sizes.get(partition_id, 0)
            for broker, directory in zip(partition.replicas, partition.directories):
                by_directory = placed.get(broker)
                if by_directory is None:
                    continue
                replicas = by_directory.get(directory)
                if replicas is None:
                    if directory != DirectoryId.MIGRATING or broker not in single_dir:
                        continue  # UNASSIGNED, LOST, or another broker's directory
                    replicas = by_directory[single_dir[broker]]
                log = logs.get((partition_id, broker, False)) if logs else None
                if log is None:
                    replicas.append(new(PartitionEntry, (name, partition_id, size, 0, False)))
                else:
                    replicas.append(new(PartitionEntry, (name, partition_id, log.size_bytes, log.offset_lag, False)))
        for (partition_id, broker, future), log in logs.items():
            if future and broker in placed and log.directory_id in placed[broker]:
                placed[broker][log.directory_id].append(new(PartitionEntry, (name, partition_id, log.size_bytes, log.offset_lag, True)))
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


# Describe from the disks (--from-disk) ------------------------------------------------------------

# UnifiedLog's directory names: `<topic>-<partition>` for a live log, and
# `<topic>-<partition>.<uuid without dashes>-<suffix>` for one being built in another directory
# (future), scheduled for asynchronous deletion (delete), or found not to belong here (stray,
# KIP-858). KIP-113 first named the future directory `<topic>-<partition>.move`.
_SUFFIXED = re.compile(r"^(?P<tp>.+)\.[0-9a-f]{32}-(?P<kind>future|delete|stray)$")
_TOPIC_PARTITION = re.compile(r"^(?P<topic>.+)-(?P<partition>[0-9]+)$")


class DirectoryName(NamedTuple):
    topic: str
    partition: int
    kind: str  # "log", "future", "delete" or "stray"


def parse_directory_name(name: str) -> DirectoryName | None:
    """A partition directory's topic, partition and kind; None for anything else."""
    kind = "log"
    base = name
    match = _SUFFIXED.match(name)
    if match:
        base, kind = match["tp"], match["kind"]
    elif name.endswith(".move"):
        base, kind = name[: -len(".move")], "future"
    match = _TOPIC_PARTITION.match(base)
    if match is None:
        return None
    partition = int(match["partition"])
    if partition > INT32_MAX:
        return None
    return DirectoryName(match["topic"], partition, kind)


def segment_bytes(partition_dir: str) -> int:
    """A log's size as Kafka counts it: the sum of its segment (`*.log`) files."""
    total = 0
    with os.scandir(partition_dir) as entries:
        for entry in entries:
            if entry.name.endswith(".log") and entry.is_file(follow_symlinks=False):
                total += entry.stat(follow_symlinks=False).st_size
    return total


def _displayable(name: str) -> str:
    """A file name that is not valid UTF-8 (Python keeps its bytes as lone surrogates) as Java
    decodes it: each bad byte becomes U+FFFD."""
    try:
        name.encode()
    except UnicodeEncodeError:
        return name.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    return name


def _os_error_line(path: str, exc: OSError) -> str:
    return f"{exc.filename or path}: {exc.strerror or exc}"


def scan_directory(path: str) -> tuple[LogDirEntry, list[str]]:
    """One log directory as a broker would report it, and the lines to tell the operator.

    A directory that cannot be listed, or holding a partition directory that cannot be, is
    offline (Kafka takes a whole log directory offline on an I/O error inside it).
    """
    from kjbod.storage.meta_properties import MetaPropertiesError, read_meta_properties
    from kjbod.storage.properties import PropertiesError

    partitions: list[PartitionEntry] = []
    deleting: list[str] = []
    try:
        with os.scandir(path) as entries:
            found = [(entry, parse_directory_name(_displayable(entry.name))) for entry in entries]
        for entry, parsed in found:
            # Whether an unreadable entry is a directory is not always knowable without
            # opening it, so names are trusted and opening it decides.
            if parsed is None or parsed.topic == METADATA_TOPIC:
                continue
            if parsed.kind == "delete":
                deleting.append(f"{parsed.topic}-{parsed.partition}")
            elif parsed.kind in ("log", "future"):
                # Stray logs (KIP-858) are not served by the broker, so it does not report them.
                try:
                    size = segment_bytes(entry.path)
                except NotADirectoryError:
                    continue  # a file that happens to have a partition's name
                partitions.append(PartitionEntry(parsed.topic, parsed.partition, size, 0, parsed.kind == "future"))
    except OSError as exc:
        return LogDirEntry(path, KAFKA_STORAGE_EXCEPTION, []), [_os_error_line(path, exc)]
    notes = []
    directory_id = None
    try:
        directory_id = read_meta_properties(path)[1].directory_id
    except PropertiesError as exc:
        if not exc.missing:
            return LogDirEntry(path, KAFKA_STORAGE_EXCEPTION, []), [str(exc)]
    except MetaPropertiesError as exc:
        notes.append(f"{os.path.join(path, 'meta.properties')}: {exc}")
    return LogDirEntry(path, None, sorted(partitions), directory_id, sorted(set(deleting))), notes


@dataclass
class DiskScan:
    report: LogDirsReport
    # One line per directory that could not be read ("<dir>: <strerror>") or whose
    # meta.properties is malformed.
    problems: list[str]


def _absolute(path: str) -> str:
    """As Java's `new File(dir).getAbsolutePath()`: relative to the working directory,
    duplicate and trailing separators removed."""
    joined = path if path.startswith("/") else os.path.join(os.getcwd(), path)
    return re.sub(r"/+", "/", joined).rstrip("/") or "/"


def scan_log_dirs(config_path: Path) -> DiskScan:
    """`log-dirs describe --from-disk`: the broker's log.dirs (or log.dir) and metadata.log.dir
    from its server.properties, each scanned with os.scandir."""
    from kjbod.storage.config import load_node_config

    config = load_node_config(config_path)
    log_dirs = []
    problems = []
    for directory in dict.fromkeys(_absolute(d) for d in config.directories):
        entry, notes = scan_directory(directory)
        log_dirs.append(entry)
        problems.extend(notes)
    node_id = config.node_id
    if node_id < 0:
        # A broker-id-less config: take the node id its formatted directories carry.
        found = (_node_id_of(d.path) for d in log_dirs if d.error is None)
        node_id = next((i for i in found if i is not None), -1)
    log_dirs.sort(key=lambda d: d.path)
    return DiskScan(LogDirsReport([BrokerEntry(node_id, log_dirs)], disk=True), problems)


def _node_id_of(path: str) -> int | None:
    from kjbod.storage.meta_properties import read_meta_properties

    try:
        return read_meta_properties(path)[1].node_id
    except UserError:
        return None


def describe_from_disk(config_path: Path, broker_list: str | None = None, topic_list: str | None = None) -> DiskScan:
    requested = parse_broker_list(broker_list)
    topics = parse_topic_list(topic_list)
    scan = scan_log_dirs(config_path)
    targets = select_brokers(scan.report.broker_ids, requested)
    return DiskScan(scan.report.filtered(set(targets), topics), scan.problems)


# Checking input files: problems with their file and JSON path ------------------------------------


class Problems:
    """Every problem found in one pass, each as `<file> <JSON path>: <what is wrong>`."""

    def __init__(self) -> None:
        self.items: list[str] = []

    def add(self, source: str, path: str, message: str) -> None:
        self.items.append(f"{source} {path}: {message}")

    def __bool__(self) -> bool:
        return bool(self.items)

    def __len__(self) -> int:
        return len(self.items)


class ValidationFailed(UserError):
    """Input files with problems; nothing was written. `problems` lists every one."""

    def __init__(self, problems: list[str], what: str) -> None:
        super().__init__(f"{len(problems)} problem(s) found; {what}")
        self.problems = problems


def type_name(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a number with a fraction"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return "an object"


def load_json(path: Path, problems: Problems, *, header: bool = False) -> Any:
    """Parse a JSON file strictly (no NaN or Infinity, integers within 64 bits); a problem and
    None when it cannot be read or parsed. With `header`, lines before the JSON (kafka-log-dirs'
    two header lines, log lines) are skipped."""
    source = str(path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        problems.add(source, "$", f"cannot read the file: {exc.strerror or exc}")
        return None
    start = _json_start(data) if header else 0
    try:
        return orjson.loads(memoryview(data)[start:])
    except orjson.JSONDecodeError as exc:
        line = exc.lineno + data.count(b"\n", 0, start)
        problems.add(source, "$", f"not valid JSON: {exc.msg} (line {line}, column {exc.colno})")
        return None


def _json_start(data: bytes) -> int:
    """Where the JSON starts after kafka-log-dirs' header lines (and any log lines)."""
    start = 0
    while start < len(data):
        end = data.find(b"\n", start)
        line = data[start : end if end >= 0 else len(data)].strip()
        if line.startswith((b"{", b"[")) or (line and not _is_preamble(line)):
            return start
        if end < 0:
            return len(data)
        start = end + 1
    return start


def _is_preamble(line: bytes) -> bool:
    text = line.decode("utf-8", "replace")
    return text == QUERYING_LINE or text.startswith(RECEIVED_PREFIX) or bool(
        re.match(r"^(\[\d{4}-|\d{4}-\d\d-\d\d |SLF4J|WARN |INFO |ERROR |log4j)", text)
    )


def _is_int(value: Any, low: int, high: int) -> bool:
    return type(value) is int and low <= value <= high


def split_partition_name(text: str) -> tuple[str, int] | None:
    """`topic-partition` (TopicPartition.toString) back into its parts."""
    topic, dash, number = text.rpartition("-")
    if not dash or not topic or not number.isascii() or not number.isdigit():
        return None
    value = int(number)
    return (topic, value) if value <= INT32_MAX else None


# Matching kafka-log-dirs output against a cluster -------------------------------------------------


class Observation(NamedTuple):
    """Where a broker reported a replica's log, how big it is, and where the report says so."""

    directory_id: str
    size: int
    offset_lag: int
    source: str
    log_dir_where: str
    index: int

    @property
    def path(self) -> str:
        """The JSON path of the report's entry."""
        return f"{self.log_dir_where}.partitions[{self.index}]"

    @property
    def where(self) -> str:
        return f"{self.source} {self.path}"


# topic -> partition -> broker -> what a report shows (nested, so that a million-partition
# import looks a partition up once rather than once per replica). A partition the reports name
# may have an empty map (all its entries were problems, or it has only a future replica).
ObservationMap = dict[str, dict[int, dict[int, Observation]]]


@dataclass
class Observations:
    current: ObservationMap = field(default_factory=dict)
    future: ObservationMap = field(default_factory=dict)
    # (broker, directory id) -> where the report says it is offline.
    offline: dict[tuple[int, str], str] = field(default_factory=dict)
    brokers: set[int] = field(default_factory=set)
    files: int = 0

    def get(self, topic: str, partition: int, broker: int, future: bool = False) -> Observation | None:
        by_partition = (self.future if future else self.current).get(topic)
        by_broker = by_partition.get(partition) if by_partition else None
        return by_broker.get(broker) if by_broker else None

    def items(self, future: bool) -> Iterator[tuple[str, int, int, Observation]]:
        for topic, partitions in (self.future if future else self.current).items():
            for partition, brokers in partitions.items():
                for broker, observation in brokers.items():
                    yield topic, partition, broker, observation


@dataclass(frozen=True)
class ClusterShape:
    """What kafka-log-dirs output is matched against: each broker's directories by path, and
    each topic's partitions. Descriptions name the source in problem messages."""

    directories: Mapping[int, Mapping[str, str]]  # broker -> path -> directory id
    # A topic's partitions and their replicas, or None if there is no such topic. A partition
    # whose replica list is unusable (already a problem) has ().
    topic: Callable[[str], Mapping[int, tuple[int, ...]] | None]
    brokers_source: str  # e.g. "in the brokers file brokers.json"
    partitions_source: str  # e.g. "in the assignment assignment.json"


def _normalized(path: str) -> str:
    return re.sub(r"/+", "/", path).rstrip("/") or "/"


class _Slot(NamedTuple):
    """One partition as the reports see it: its replicas and the map of its current replicas'
    observations (shared with Observations.current, made when the slot is)."""

    topic: str
    partition: int
    replicas: tuple[int, ...] | None
    current: dict[int, Observation] | None
    # Why a report cannot hold this partition (unknown topic or partition), if so.
    problem: str | None


_MALFORMED = _Slot("", -1, None, None, None)  # a partition name that is not <topic>-<partition>
_INT = {int}
_BOOL = {bool}
_STR = {str}


def _well_formed(names: list[Any], sizes: list[Any], lags: list[Any], futures: list[Any]) -> bool:
    """Every entry has a string name, sizes and lags that are longs >= 0, and a boolean."""
    if not names:
        return True
    return (
        set(map(type, names)) == _STR
        and set(map(type, sizes)) == _INT
        and set(map(type, lags)) == _INT
        and set(map(type, futures)) == _BOOL
        and min(sizes) >= 0 and max(sizes) <= INT64_MAX
        and min(lags) >= 0 and max(lags) <= INT64_MAX
    )


class LogDirsReader:
    """Reads saved `kafka-log-dirs --describe` output and matches it to a cluster in one pass.

    Every field is checked (problems name the file and JSON path); brokers match by id,
    directories by path, partitions by name. The output is read without building an object per
    partition entry: a million-partition cluster's output has three million of them.
    """

    def __init__(self, shape: ClusterShape, problems: Problems) -> None:
        self.shape = shape
        self.problems = problems
        self.seen = Observations()
        self._slots: dict[str, _Slot] = {}  # "topic-partition" -> its slot (or _MALFORMED)
        self._topics: dict[str, Mapping[int, tuple[int, ...]] | None] = {}
        self._dirs: dict[tuple[int, str], str] = {}

    def read(self, path: Path) -> None:
        source = str(path)
        problems = self.problems
        self.seen.files += 1
        document = load_json(path, problems, header=True)
        if document is None:
            return
        if type(document) is not dict:
            problems.add(source, "$", f"expected a JSON object (kafka-log-dirs output), found {type_name(document)}")
            return
        version = document.get("version", 1)
        if version != 1 or type(version) is not int:
            problems.add(source, "$.version", f"Not supported version field value {orjson.dumps(version).decode()}")
        raw_brokers = document.get("brokers")
        if type(raw_brokers) is not list:
            problems.add(source, "$.brokers", f"expected an array of brokers, found {type_name(raw_brokers)}")
            return
        for i, raw_broker in enumerate(raw_brokers):
            self._read_broker(raw_broker, source, f"$.brokers[{i}]")

    def finish(self) -> Observations:
        seen = self.seen
        for topic, partition, broker, observation in seen.items(future=True):
            current = seen.get(topic, partition, broker)
            if current is not None and current.directory_id == observation.directory_id:
                self.problems.add(
                    observation.source, observation.path,
                    f"the future replica of {topic}-{partition} on broker {broker} is in the same log directory as its current replica",
                )
        return seen

    def _read_broker(self, raw: Any, source: str, where: str) -> None:
        problems = self.problems
        if type(raw) is not dict:
            problems.add(source, where, f"expected an object, found {type_name(raw)}")
            return
        broker = raw.get("broker")
        paths = None
        if not _is_int(broker, 0, INT32_MAX):
            found = str(broker) if type(broker) is int else type_name(broker)
            problems.add(source, f"{where}.broker", f"expected a broker id (an integer from 0 to {INT32_MAX}), found {found}")
        else:
            paths = self.shape.directories.get(broker)
            if paths is None:
                problems.add(source, f"{where}.broker", f"broker {broker} is not {self.shape.brokers_source}")
            else:
                self.seen.brokers.add(broker)
        raw_dirs = raw.get("logDirs")
        if type(raw_dirs) is not list:
            problems.add(source, f"{where}.logDirs", f"expected an array of log directories, found {type_name(raw_dirs)}")
            return
        for j, raw_dir in enumerate(raw_dirs):
            self._read_log_dir(raw_dir, source, f"{where}.logDirs[{j}]", broker if paths is not None else None, paths)

    def _read_log_dir(self, raw: Any, source: str, where: str, broker: int | None, paths: Mapping[str, str] | None) -> None:
        problems = self.problems
        if type(raw) is not dict:
            problems.add(source, where, f"expected an object, found {type_name(raw)}")
            return
        path = raw.get("logDir")
        directory = None
        if type(path) is not str or not path.startswith("/"):
            found = repr(path) if type(path) is str else type_name(path)
            problems.add(source, f"{where}.logDir", f"expected an absolute path, found {found}")
        elif broker is not None and paths is not None:
            directory = paths.get(path) or paths.get(_normalized(path))
            if directory is None:
                problems.add(
                    source, f"{where}.logDir",
                    f"broker {broker} has no log directory {path} {self.shape.brokers_source} (it has {', '.join(sorted(paths)) or 'none'})",
                )
            elif (broker, directory) in self._dirs:
                problems.add(source, f"{where}.logDir", f"log directory {path} of broker {broker} is reported again (first at {self._dirs[(broker, directory)]})")
                directory = None
            else:
                self._dirs[(broker, directory)] = f"{source} {where}"
        error = raw.get("error")
        if error is not None and type(error) is not str:
            problems.add(source, f"{where}.error", f"expected null or an exception class name, found {type_name(error)}")
        elif error is not None and directory is not None:
            self.seen.offline[(broker, directory)] = f"{source} {where}"  # type: ignore[index]
        raw_partitions = raw.get("partitions")
        if type(raw_partitions) is not list:
            problems.add(source, f"{where}.partitions", f"expected an array of partitions, found {type_name(raw_partitions)}")
            return
        if error is not None and raw_partitions:
            problems.add(source, f"{where}.partitions", f"a log directory reported with an error ({error}) cannot hold partitions")
            return
        self._read_partitions(raw_partitions, source, where, broker if directory is not None else None, directory)

    def _slot(self, name: str) -> _Slot | None:
        parts = split_partition_name(name)
        if parts is None:
            return None
        topic, partition = parts
        if topic not in self._topics:
            self._topics[topic] = self.shape.topic(topic)
        partitions = self._topics[topic]
        if partitions is None:
            return _Slot(topic, partition, None, None, f"topic {topic} is not {self.shape.partitions_source}")
        replicas = partitions.get(partition)
        if replicas is None:
            return _Slot(topic, partition, None, None, f"partition {topic}-{partition} is not {self.shape.partitions_source}")
        by_topic = self.seen.current.get(topic)
        if by_topic is None:
            by_topic = self.seen.current[topic] = {}
        current = by_topic[partition] = {}
        return tuple.__new__(_Slot, (topic, partition, replicas, current, None))

    def _read_partitions(self, raw_partitions: list[Any], source: str, where: str, broker: int | None, directory: str | None) -> None:
        # The hot path of a million-partition import (three million entries): take the log
        # directory's entries apart column by column, check each column at C speed, and only
        # if something is off go through them one by one to name every problem.
        try:
            names = [item["partition"] for item in raw_partitions]
            sizes = [item["size"] for item in raw_partitions]
            lags = [item["offsetLag"] for item in raw_partitions]
            futures = [item["isFuture"] for item in raw_partitions]
        except (KeyError, TypeError):
            names = sizes = lags = futures = []
        if len(names) != len(raw_partitions) or not _well_formed(names, sizes, lags, futures):
            names, sizes, lags, futures = self._checked_columns(raw_partitions, source, where)
        slots = self._slots
        new = tuple.__new__  # builds the NamedTuple at C speed (its own __new__ is Python code)
        for k, slot in enumerate(map(slots.get, names)):
            name = names[k]
            if slot is None:
                if name is None:
                    continue  # an entry with a problem
                slot = slots[name] = self._slot(name) or _MALFORMED
            if slot is _MALFORMED:
                self.problems.add(source, f"{where}.partitions[{k}].partition", f"expected \"<topic>-<partition>\", found {name!r}")
                continue
            if broker is None:
                continue  # its broker or directory is already a problem
            replicas = slot.replicas
            future = futures[k]
            if replicas and broker in replicas:
                observations = self._future(slot) if future else slot.current
                if broker not in observations:  # type: ignore[operator]
                    observations[broker] = new(Observation, (directory, sizes[k], lags[k], source, where, k))  # type: ignore[index]
                    continue
            self._mismatch(slot, broker, future, source, f"{where}.partitions[{k}]")

    def _checked_columns(self, raw_partitions: list[Any], source: str, where: str) -> tuple[list[Any], list[Any], list[Any], list[Any]]:
        """The columns with every problem reported; an entry with a problem gets name None."""
        names: list[Any] = []
        sizes: list[Any] = []
        lags: list[Any] = []
        futures: list[Any] = []
        for k, item in enumerate(raw_partitions):
            fields = (item.get("partition"), item.get("size"), item.get("offsetLag"), item.get("isFuture")) if type(item) is dict else None
            if fields is not None and _well_formed([fields[0]], [fields[1]], [fields[2]], [fields[3]]):
                name, size, lag, future = fields
            else:
                _partition_problems(item, source, f"{where}.partitions[{k}]", self.problems)
                name, size, lag, future = None, 0, 0, False
            names.append(name)
            sizes.append(size)
            lags.append(lag)
            futures.append(future)
        return names, sizes, lags, futures

    def _future(self, slot: _Slot) -> dict[int, Observation]:
        """The map of a partition's future replicas (few: made when one shows up)."""
        return self.seen.future.setdefault(slot.topic, {}).setdefault(slot.partition, {})

    def _mismatch(self, slot: _Slot, broker: int, future: bool, source: str, where: str) -> None:
        if slot.problem is not None:
            self.problems.add(source, f"{where}.partition", slot.problem)
        elif slot.replicas == ():
            pass  # the partition's replica list is already a problem
        elif broker not in slot.replicas:  # type: ignore[operator]
            self.problems.add(
                source, f"{where}.partition",
                f"broker {broker} is not a replica of {slot.topic}-{slot.partition} (replicas {','.join(map(str, slot.replicas))})",  # type: ignore[arg-type]
            )
        else:
            first = (self._future(slot) if future else slot.current)[broker]  # type: ignore[index]
            kind = "future replica" if future else "replica"
            self.problems.add(
                source, where, f"the {kind} of {slot.topic}-{slot.partition} on broker {broker} is reported again (first at {first.where})"
            )


def read_log_dirs_outputs(paths: Iterable[Path], shape: ClusterShape, problems: Problems) -> Observations:
    """Every replica the saved kafka-log-dirs outputs show, matched against `shape`."""
    reader = LogDirsReader(shape, problems)
    for path in paths:
        reader.read(path)
    return reader.finish()


def _partition_problems(item: Any, source: str, where: str, problems: Problems) -> None:
    if type(item) is not dict:
        problems.add(source, where, f"expected an object, found {type_name(item)}")
        return
    name = item.get("partition")
    if type(name) is not str or split_partition_name(name) is None:
        found = repr(name) if type(name) is str else type_name(name)
        problems.add(source, f"{where}.partition", f"expected \"<topic>-<partition>\", found {found}")
    for key in ("size", "offsetLag"):
        value = item.get(key)
        if not _is_int(value, 0, INT64_MAX):
            found = str(value) if type(value) is int else type_name(value)
            problems.add(source, f"{where}.{key}", f"expected an integer >= 0, found {found}")
    if type(item.get("isFuture")) is not bool:
        problems.add(source, f"{where}.isFuture", f"expected true or false, found {type_name(item.get('isFuture'))}")


# Replica sizes from observations ---------------------------------------------------------------


@dataclass(slots=True)
class PartitionSizes:
    """What a partition's observed replicas say about sizes: the partition's size (its leader's
    log, or the largest reported copy when the leader was not reported), and the replicas that
    differ from a complete, caught-up copy."""

    size: int | None
    leader_reported: bool
    # broker -> (size, offset lag) for replicas that are not a complete, caught-up copy.
    partial: dict[int, tuple[int, int]]
    # broker -> (directory id, size, offset lag) of future replicas.
    futures: dict[int, tuple[str, int, int]]


def partition_sizes(
    replicas: tuple[int, ...], leader: int, current: Mapping[int, Observation] | None, future: Mapping[int, Observation] | None
) -> PartitionSizes | None:
    """From one partition's observations (broker -> observation, only of its replicas, as
    LogDirsReader keeps them) of current and future replicas."""
    futures = {b: (o.directory_id, o.size, o.offset_lag) for b, o in future.items()} if future else {}
    if not current:
        return PartitionSizes(None, False, {}, futures) if futures else None
    leader_log = current.get(leader)
    size = leader_log.size if leader_log is not None else max(o.size for o in current.values())
    partial = {}
    for broker, observation in current.items():
        if observation.size != size or observation.offset_lag > 0:
            partial[broker] = (observation.size, observation.offset_lag)
    return PartitionSizes(size, leader_log is not None, partial, futures)


# log-dirs import into an existing state ----------------------------------------------------------


@dataclass
class LogDirsImport:
    entries: list  # records and runs to commit
    warnings: list[str]
    files: int
    brokers: int
    partition_sizes: int
    replica_logs: int
    future_replicas: int
    removed_entries: int


def _state_shape(image: Image) -> ClusterShape:
    by_name = image.topics.by_name
    directories = {
        broker_id: {d.path: d.directory_id for d in image.cluster.log_dirs.get(broker_id, ())}
        for broker_id in image.cluster.brokers
    }

    def topic(name: str) -> Mapping[int, tuple[int, ...]] | None:
        found = by_name.get(name)
        return None if found is None else {p: r.replicas for p, r in found.partitions.items()}

    return ClusterShape(directories, topic, "registered in the cluster state", "in the cluster state")


def plan_log_dirs_import(image: Image, paths: list[Path]) -> LogDirsImport:
    """Records that load saved kafka-log-dirs output into the cluster state.

    Brokers match by id and directories by path. For every partition a report shows, the
    partition's size becomes its leader's log size (without the leader's log, a size the state
    knows stays); replicas that are not a complete copy (a different size, or behind) and
    future replicas get replica-log entries, and entries the reports no longer support are
    removed. A replica found in another directory than the state records is a warning only:
    directory assignments change through `kjbod assign-dirs`.
    Raises ValidationFailed with every problem, writing nothing.
    """
    from kjbod.records import KjbodPartitionSizeRecord, KjbodReplicaLogRecord
    from kjbod.records.codec import RecordRun

    problems = Problems()
    seen = read_log_dirs_outputs(paths, _state_shape(image), problems)
    if problems:
        raise ValidationFailed(problems.items, "nothing was written")

    by_name = image.topics.by_name
    entries: list = []
    counts = {"sizes": 0, "logs": 0, "futures": 0, "removed": 0}
    for name in sorted(set(seen.current) | set(seen.future)):
        topic = by_name[name]
        current, future = seen.current.get(name, {}), seen.future.get(name, {})
        size_ids, size_values, logs = [], [], []
        for partition_id in sorted(set(current) | set(future)):
            registration = topic.partitions[partition_id]
            sizes = partition_sizes(registration.replicas, registration.leader, current.get(partition_id), future.get(partition_id))
            if sizes is None:
                continue  # nothing usable was reported
            size = sizes.size
            if not sizes.leader_reported and partition_id in topic.sizes:
                size = topic.sizes[partition_id]
            if size is not None and topic.sizes.get(partition_id) != size:
                size_ids.append(partition_id)
                size_values.append(size)
            logs.extend(_replica_log_changes(topic, partition_id, registration.replicas, size, current.get(partition_id) or {}, sizes, counts))
        if size_ids:
            entries.append(
                RecordRun(KjbodPartitionSizeRecord, 0, len(size_ids), {"topic_id": [topic.topic_id] * len(size_ids), "partition_id": size_ids, "size_bytes": size_values})
            )
            counts["sizes"] += len(size_ids)
        entries.extend(KjbodReplicaLogRecord(topic_id=topic.topic_id, **log) for log in logs)
    # A broker a report covers holds no future replica the report does not show: a finished or
    # cancelled move leaves no entry behind.
    for topic in image.topics.by_id.values():
        for partition_id, broker, future_ in topic.replica_logs:
            if future_ and broker in seen.brokers and seen.get(topic.name, partition_id, broker, True) is None:
                entries.append(
                    KjbodReplicaLogRecord(topic_id=topic.topic_id, partition_id=partition_id, broker_id=broker, future=True, size_bytes=None)
                )
                counts["removed"] += 1
    return LogDirsImport(
        entries, _directory_warnings(image, seen), seen.files, len(seen.brokers),
        counts["sizes"], counts["logs"], counts["futures"], counts["removed"],
    )


def _replica_log_changes(
    topic: TopicImage, partition_id: int, replicas: tuple[int, ...], size: int | None, current: Mapping[int, Observation],
    sizes: PartitionSizes, counts: dict[str, int],
) -> list[dict[str, Any]]:
    changes = []
    for broker in replicas:
        observation = current.get(broker)
        existing = topic.replica_logs.get((partition_id, broker, False))
        if observation is not None:
            complete = size is not None and observation.size == size and observation.offset_lag == 0
            if complete and existing is not None:
                changes.append({"partition_id": partition_id, "broker_id": broker, "size_bytes": None})
                counts["removed"] += 1
            elif not complete and (existing is None or (existing.size_bytes, existing.offset_lag) != (observation.size, observation.offset_lag)):
                changes.append({"partition_id": partition_id, "broker_id": broker, "size_bytes": observation.size, "offset_lag": observation.offset_lag})
                counts["logs"] += 1
        future = sizes.futures.get(broker)
        if future is not None:
            directory, future_size, lag = future
            old = topic.replica_logs.get((partition_id, broker, True))
            if old is None or (old.directory_id, old.size_bytes, old.offset_lag) != future:
                changes.append(
                    {"partition_id": partition_id, "broker_id": broker, "future": True, "directory_id": directory, "size_bytes": future_size, "offset_lag": lag}
                )
                counts["futures"] += 1
    return changes


def _directory_warnings(image: Image, seen: Observations) -> list[str]:
    from kjbod.cluster_tool import directory_label

    warnings = []
    by_name = image.topics.by_name
    for topic, partition, broker, observation in sorted(seen.items(future=False)):
        recorded = by_name[topic].partitions[partition].directory(broker)
        if recorded == observation.directory_id:
            continue
        if recorded == DirectoryId.MIGRATING and len(image.cluster.log_dirs.get(broker, ())) == 1:
            continue  # before 3.7-IV2 no directory is recorded, and there is only one
        reported = image.cluster.path_of(broker, observation.directory_id)
        warnings.append(
            f"Warning: {topic}-{partition} on broker {broker} is in {reported} ({observation.where}), "
            f"but the cluster state has it in {directory_label(image, broker, recorded)}; "
            f"to record where it is: kjbod assign-dirs --broker {broker} --assign {topic}:{partition}={reported}"
        )
    for (broker, directory), where in sorted(seen.offline.items()):
        registration = image.cluster.brokers[broker]
        if registration.has_online_dir(directory):
            path = image.cluster.path_of(broker, directory)
            warnings.append(
                f"Warning: log directory {path} of broker {broker} is offline ({where}), but online in the cluster state; "
                f"if it failed: kjbod broker fail-dir --id {broker} --dir {path}"
            )
    return warnings


# Entry points that open the cluster state --------------------------------------------------------


def describe_from_state(
    state_path: Path, broker_list: str | None = None, topic_list: str | None = None, *, lock_timeout: float = 30.0,
    notify: Callable[[str], None] | None = None,
) -> LogDirsReport:
    from kjbod.state import read_image

    # Kafka checks the lists before asking the cluster: a bad number fails first.
    parse_broker_list(broker_list)
    image = read_image(state_path, lock_timeout=lock_timeout, notify=notify or ignore)
    with gc_paused():
        return describe_from_image(image, broker_list, topic_list)


def import_log_dirs(
    state_path: Path, paths: list[Path], *, lock_timeout: float = 30.0, notify: Callable[[str], None] | None = None
) -> LogDirsImport:
    """`log-dirs import`: check the files against the state, then commit (all or nothing)."""
    from kjbod.state import ClusterState

    with ClusterState.open(state_path, write=True, lock_timeout=lock_timeout, notify=notify or ignore) as state, gc_paused():
        result = plan_log_dirs_import(state.image, paths)
        state.commit(result.entries)
    return result
