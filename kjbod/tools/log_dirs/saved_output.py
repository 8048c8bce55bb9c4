"""Saved `kafka-log-dirs --describe` output, read back: what each broker reported about each
replica (directory, size, lag, future replicas, failed directories), checked against a cluster,
with every problem named by its file and JSON path.

`log-dirs import` and `import cluster --log-dirs` both read it.
"""

from __future__ import annotations

import operator
import re
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from itertools import compress, repeat
from pathlib import Path
from typing import Any, NamedTuple

import orjson

from kjbod.common.java import INT32_MAX, INT64_MAX
from kjbod.common.problems import Problems, parse_json, type_name
from kjbod.tools.log_dirs.report import QUERYING_LINE, RECEIVED_PREFIX


def json_start(data: bytes) -> int:
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
    # (broker, directory id) -> the size of its disk, where the output gives it (totalBytes).
    capacities: dict[tuple[int, str], int] = field(default_factory=dict)
    brokers: set[int] = field(default_factory=set)
    files: int = 0
    # (broker, directory id) -> where the report lists that log directory.
    log_dirs: dict[tuple[int, str], str] = field(default_factory=dict)
    # (broker, path) -> the directory id the output names for it ("directoryId", which
    # `kjbod log-dirs describe --from-disk` reads from meta.properties; Kafka's output has none).
    declared_ids: dict[tuple[int, str], str] = field(default_factory=dict)
    # None when every observation's directory_id is a directory id. Output read before its
    # paths were joined to directory ids (import from a snapshot) labels the current replicas'
    # observations by path instead: (broker, path) -> directory id then names the directory.
    directory_names: Mapping[tuple[int, str], str] | None = None
    # True when whoever labelled the observations knows that every current replica is in the
    # directory the cluster state records for it: there is nothing to warn about.
    directories_as_recorded: bool = False

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
    # Paths of a broker to pass over without a problem: directories the caller accounts for
    # elsewhere (an import from a snapshot could not tell which directory id they are).
    ignored: Mapping[int, frozenset[str]] = field(default_factory=dict)


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
_SLOT_REPLICAS = operator.itemgetter(2)
_SLOT_CURRENT = operator.itemgetter(3)
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

    def __init__(self, shape: ClusterShape, problems: Problems, *, by_broker: bool = True) -> None:
        self.shape = shape
        self.problems = problems
        self.by_broker = by_broker
        self.seen = Observations()
        self._slots: dict[str, _Slot] = {}  # "topic-partition" -> its slot (or _MALFORMED)
        self._topics: dict[str, Mapping[int, tuple[int, ...]] | None] = {}
        self._dirs = self.seen.log_dirs

    def read(self, path: Path) -> None:
        """Read one saved output. Kafka's own layout is parsed one broker at a time, so that the
        whole document (gigabytes of objects at millions of partitions) never exists at once;
        raises _ReadWhole when a broker's piece does not parse on its own (then the caller
        starts over reading every document whole, which names the problem if there is one)."""
        source = str(path)
        problems = self.problems
        self.seen.files += 1
        try:
            data = path.read_bytes()
        except OSError as exc:
            problems.add(source, "$", f"cannot read the file: {exc.strerror or exc}")
            return
        start = json_start(data)
        pieces = _broker_pieces(data, start) if self.by_broker else None
        if pieces is not None:
            view = memoryview(data)
            for i, (begin, end) in enumerate(pieces):
                try:
                    raw_broker = orjson.loads(view[begin:end])
                except orjson.JSONDecodeError:
                    raise _ReadWhole from None
                self._read_broker(raw_broker, source, f"$.brokers[{i}]")
            return
        document = parse_json(data, source, problems, start=start)
        del data
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
            # Read: its entries (a million-partition output's parsed document is gigabytes) go now.
            raw_dirs[j] = None

    def _read_log_dir(self, raw: Any, source: str, where: str, broker: int | None, paths: Mapping[str, str] | None) -> None:
        problems = self.problems
        if type(raw) is not dict:
            problems.add(source, where, f"expected an object, found {type_name(raw)}")
            return
        path = raw.get("logDir")
        directory = None
        if broker is not None and type(path) is str and path in self.shape.ignored.get(broker, ()):
            # Checked like any other, but nothing it holds is recorded.
            raw_partitions = raw.get("partitions")
            if type(raw_partitions) is list:
                self._read_partitions(raw_partitions, source, where, broker, None, record=False)
            return
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
                if type(raw.get("directoryId")) is str:
                    self.seen.declared_ids[(broker, path)] = raw["directoryId"]
        self._read_volume(raw, source, where, broker if directory is not None else None, directory)
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

    def _read_volume(self, raw: dict[str, Any], source: str, where: str, broker: int | None, directory: str | None) -> None:
        """The volume's `totalBytes` and `usableBytes` (DescribeLogDirs v4, KIP-827), which newer
        kafka-log-dirs prints: the disk's size becomes the directory's capacity. Kafka sends -1
        when it does not know them; older output has no such keys."""
        values = {}
        for key in ("totalBytes", "usableBytes"):
            value = raw.get(key)
            if value is None:
                continue
            if not _is_int(value, -1, INT64_MAX):
                found = str(value) if type(value) is int else type_name(value)
                self.problems.add(source, f"{where}.{key}", f"expected a byte count (an integer >= 0, or -1 if unknown), found {found}")
                return
            values[key] = value
        total, usable = values.get("totalBytes", -1), values.get("usableBytes", -1)
        if total >= 0 and usable > total:
            self.problems.add(source, f"{where}.usableBytes", f"usableBytes {usable} is more than totalBytes {total}")
        elif total > 0 and broker is not None and directory is not None:
            self.seen.capacities[(broker, directory)] = total

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

    def _read_partitions(
        self, raw_partitions: list[Any], source: str, where: str, broker: int | None, directory: str | None, *, record: bool = True
    ) -> None:
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
        self._walk(names, sizes, lags, futures, source, where, broker, directory, record)

    def _walk(
        self, names: list[Any], sizes: list[Any], lags: list[Any], futures: list[Any], source: str, where: str,
        broker: int | None, directory: str | None, record: bool,
    ) -> None:
        """One log directory's entries, as columns (a name None for an entry with a problem),
        matched to the cluster and recorded."""
        if broker is not None and record and self._recorded_at_once(names, sizes, lags, futures, source, where, broker, directory):
            return
        slots = self._slots
        new = tuple.__new__  # builds the NamedTuple at C speed (its own __new__ is Python code)
        for k, (name, slot, future) in enumerate(zip(names, map(slots.get, names), futures)):
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
            if replicas and broker in replicas:
                if not record:
                    continue
                observations = self._future(slot) if future else slot.current
                if broker not in observations:  # type: ignore[operator]
                    observations[broker] = new(Observation, (directory, sizes[k], lags[k], source, where, k))  # type: ignore[index]
                    continue
            self._mismatch(slot, broker, future, source, f"{where}.partitions[{k}]")

    def _recorded_at_once(
        self, names: list[Any], sizes: list[Any], lags: list[Any], futures: list[Any], source: str, where: str, broker: int, directory: str | None
    ) -> bool:
        """The usual log directory (each entry a replica of a partition the broker is a replica
        of, no name twice, no current replica reported before), recorded with C-level loops
        (`map`, `compress`) rather than one Python step per entry; its few future replicas one
        by one, as _walk does. False, with nothing recorded, for any other directory, which
        _walk then goes through entry by entry. The slots of new names are made here in the
        order _walk would make them (making one reports nothing)."""
        count = len(names)
        if not count or len(set(names)) != count:
            return False
        slots = self._slots
        found = list(map(slots.get, names))
        for k in compress(range(count), map(operator.is_, found, repeat(None))):
            name = names[k]
            if name is None:
                return False  # an entry with a problem
            found[k] = slots[name] = self._slot(name) or _MALFORMED
        replicas = list(map(_SLOT_REPLICAS, found))
        if None in replicas or not all(map(operator.contains, replicas, repeat(broker))):
            return False
        current = list(map(operator.not_, futures))
        currents = list(map(_SLOT_CURRENT, compress(found, current)))
        if any(map(operator.contains, currents, repeat(broker))):
            return False  # reported again
        observations = map(
            tuple.__new__, repeat(Observation),
            zip(repeat(directory), compress(sizes, current), compress(lags, current), repeat(source), repeat(where), compress(range(count), current)),
        )
        deque(map(dict.__setitem__, currents, repeat(broker), observations), maxlen=0)
        for k in compress(range(count), futures):
            observations_ = self._future(found[k])
            if broker in observations_:
                self._mismatch(found[k], broker, True, source, f"{where}.partitions[{k}]")
            else:
                observations_[broker] = tuple.__new__(Observation, (directory, sizes[k], lags[k], source, where, k))
        return True

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
    paths = list(paths)
    found = len(problems)
    try:
        reader = LogDirsReader(shape, problems)
        for path in paths:
            reader.read(path)
    except _ReadWhole:
        del problems.items[found:]  # what the reading so far found, it finds again
        reader = LogDirsReader(shape, problems, by_broker=False)
        for path in paths:
            reader.read(path)
    return reader.finish()


class _ReadWhole(Exception):
    """A broker's piece of an output did not parse on its own: read every output whole."""


_KAFKA_HEAD = b'{"brokers":['
_KAFKA_TAIL = b'],"version":1}'
_BROKER_START = b'{"broker":'
_BROKER_BOUNDARY = b'},{"broker":'
_SPACE = b" \t\r\n"


def _broker_pieces(data: bytes, start: int) -> list[tuple[int, int]] | None:
    """Where each broker's object starts and ends in output of Kafka's own compact layout,
    `{"brokers":[{"broker":..},{"broker":..}],"version":1}` (LogDirsCommand); None for any other.

    The bytes `},{"broker":` cannot be inside a JSON string (the quote would end the string,
    and a bare word cannot follow one), so every one of them is between two objects; when every
    piece parses on its own, the document is exactly the array of them."""
    end = len(data)
    while end > start and data[end - 1] in _SPACE:
        end -= 1
    if not data.startswith(_KAFKA_HEAD, start) or not data.endswith(_KAFKA_TAIL, start, end):
        return None
    begin, end = start + len(_KAFKA_HEAD), end - len(_KAFKA_TAIL)
    if begin == end:
        return []
    if not data.startswith(_BROKER_START, begin):
        return None
    pieces = []
    while True:
        boundary = data.find(_BROKER_BOUNDARY, begin, end)
        if boundary < 0:
            pieces.append((begin, end))
            return pieces
        pieces.append((begin, boundary + 1))
        begin = boundary + 2


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
