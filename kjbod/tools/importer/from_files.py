"""`kjbod import cluster`: a new cluster state built from a real cluster's exported files.

Inputs (formats in cli-contract.md, `import`):
- the brokers file: `{"brokers": [{"id": 1, "rack": "r1", "log_dirs": [{"path": "/mnt/d1",
  "capacity_bytes": 4000000000000}]}]}` (a log dir may also be a bare path string, and may
  carry its real `directory_id` from meta.properties; both are kjbod extensions);
- the current assignment as Kafka's reassignment JSON (§1.4), `log_dirs` optional per
  partition, plus an optional `leader` per partition (a kjbod extension; default: the first
  replica);
- optionally saved `kafka-log-dirs --describe` output (sizes, lags, future replicas, failed
  directories), one file per broker or one for all.

Everything is checked in one pass and every problem is reported with its file and JSON path;
nothing is written unless all input is valid. The state is written as one commit (partitions as
column runs, never one object per partition, so a million partitions import in seconds), then a
snapshot so that the next command opens it fast.

Kafka's clusters keep no ids in these exports, so kjbod derives them: a directory's id from
(broker id, path) and a topic's id from its name, hashed into valid (non-reserved) Kafka Uuids.
Importing the same files again gives the same ids.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

import orjson

from kjbod.common.callbacks import Progress, gc_paused, ignore
from kjbod.common.java import INT32_MAX, INT64_MAX
from kjbod.common.kafka_uuid import DirectoryId, Uuid, canonical, uuid_sort_key
from kjbod.common.problems import Problems, ValidationFailed, load_json, type_name
from kjbod.common.kafka_release import NEWEST, KafkaRelease
from kjbod.common.versions import MetadataVersion
from kjbod.errors import UserError
from kjbod.image import Image
from kjbod.records import (
    NO_LEADER,
    BrokerFeature,
    KjbodBrokerLogDirsRecord,
    KjbodClusterRecord,
    KjbodLogDir,
    KjbodPartitionSizeRecord,
    KjbodReplicaLogRecord,
    PartitionRecord,
    Record,
    RegisterBrokerRecord,
    TopicRecord,
)
from kjbod.records.codec import RecordRun
from kjbod.tools.importer.new_state import NewState, write_new_state
from kjbod.tools.log_dirs.saved_output import (
    ClusterShape,
    Observation,
    Observations,
    partition_sizes,
    read_log_dirs_outputs,
)


def derived_uuid(kind: str, *parts: object) -> str:
    """A stable Kafka Uuid for `parts`: SHA-256, shaped like `Uuid.randomUuid()` (version 4,
    never reserved, never printed with a leading '-')."""
    attempt = 0
    while True:
        text = "\x00".join([f"kjbod-{kind}", str(attempt), *map(str, parts)])
        raw = bytearray(hashlib.sha256(text.encode()).digest()[:16])
        raw[6] = (raw[6] & 0x0F) | 0x40
        raw[8] = (raw[8] & 0x3F) | 0x80
        uuid = Uuid(int.from_bytes(raw[:8], "big"), int.from_bytes(raw[8:], "big"))
        candidate = str(uuid)
        # (Asked of the numbers: parsing the text back costs more than the hash, 31,200 times for
        # 2,600 brokers of 12 directories.)
        if not candidate.startswith("-") and not DirectoryId.reserved_uuid(uuid):
            return candidate
        attempt += 1


def directory_id_for(broker_id: int, path: str) -> str:
    return derived_uuid("directory", broker_id, path)


def topic_id_for(name: str) -> str:
    return derived_uuid("topic", name)


def normalize_path(path: str) -> str:
    """Paths as Java's File prints them: no repeated or trailing separators."""
    return re.sub(r"/+", "/", path).rstrip("/") or "/"


# The brokers file ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class DirSpec:
    path: str
    capacity_bytes: int | None
    directory_id: str


@dataclass(frozen=True)
class BrokerSpec:
    broker_id: int
    rack: str | None
    dirs: tuple[DirSpec, ...]
    where: str

    @property
    def paths(self) -> dict[str, str]:
        return {d.path: d.directory_id for d in self.dirs}


def parse_brokers(path: Path, problems: Problems) -> dict[int, BrokerSpec]:
    source = str(path)
    document = load_json(path, problems)
    if document is None:
        return {}
    if type(document) is not dict:
        problems.add(source, "$", f'expected an object with "brokers", found {type_name(document)}')
        return {}
    raw_brokers = document.get("brokers")
    if type(raw_brokers) is not list:
        problems.add(source, "$.brokers", f"expected an array of brokers, found {type_name(raw_brokers)}")
        return {}
    brokers: dict[int, BrokerSpec] = {}
    explicit_ids: dict[str, str] = {}
    for i, item in enumerate(raw_brokers):
        where = f"$.brokers[{i}]"
        if type(item) is not dict:
            problems.add(source, where, f"expected an object, found {type_name(item)}")
            continue
        broker_id = item.get("id")
        if type(broker_id) is not int or not 0 <= broker_id <= INT32_MAX:
            found = str(broker_id) if type(broker_id) is int else type_name(broker_id)
            problems.add(source, f"{where}.id", f"expected a broker id (an integer from 0 to {INT32_MAX}), found {found}")
            broker_id = None
        elif broker_id in brokers:
            problems.add(source, f"{where}.id", f"duplicate broker id {broker_id} (first at {brokers[broker_id].where})")
            broker_id = None
        rack = item.get("rack")
        if rack is not None and type(rack) is not str:
            problems.add(source, f"{where}.rack", f"expected a rack name or null, found {type_name(rack)}")
            rack = None
        dirs = _parse_broker_dirs(item.get("log_dirs"), broker_id, source, f"{where}.log_dirs", problems, explicit_ids)
        if broker_id is not None:
            brokers[broker_id] = BrokerSpec(broker_id, rack, dirs, where)
    return brokers


def _parse_broker_dirs(
    raw: Any, broker_id: int | None, source: str, where: str, problems: Problems, explicit_ids: dict[str, str]
) -> tuple[DirSpec, ...]:
    if type(raw) is not list or not raw:
        # Kafka refuses a registration without directories (INVALID_REGISTRATION).
        found = "an empty array" if raw == [] else type_name(raw)
        problems.add(source, where, f"expected a non-empty array of log directories, found {found}")
        return ()
    dirs: list[DirSpec] = []
    first_at: dict[str, str] = {}
    for j, item in enumerate(raw):
        at = f"{where}[{j}]"
        if type(item) is str:
            item = {"path": item}
            path_at = at
        else:
            path_at = f"{at}.path"
        if type(item) is not dict:
            problems.add(source, at, f'expected an object with "path" and "capacity_bytes", found {type_name(item)}')
            continue
        path = item.get("path")
        if type(path) is not str:
            problems.add(source, path_at, f"expected a path, found {type_name(path)}")
            continue
        if not path.startswith("/"):
            problems.add(source, path_at, f"{path!r} is not an absolute path")
            continue
        path = normalize_path(path)
        if path in first_at:
            problems.add(source, path_at, f"duplicate log directory {path} (first at {first_at[path]})")
            continue
        first_at[path] = path_at
        capacity = item.get("capacity_bytes")
        if capacity is not None and (type(capacity) is not int or not 0 <= capacity <= INT64_MAX):
            found = str(capacity) if type(capacity) is int else type_name(capacity)
            problems.add(source, f"{at}.capacity_bytes", f"expected a capacity in bytes (an integer >= 0) or null, found {found}")
            capacity = None
        directory_id = _directory_id(item.get("directory_id"), broker_id, path, source, f"{at}.directory_id", problems, explicit_ids)
        dirs.append(DirSpec(path, capacity, directory_id))
    return tuple(dirs)


def _directory_id(
    raw: Any, broker_id: int | None, path: str, source: str, where: str, problems: Problems, explicit_ids: dict[str, str]
) -> str:
    derived = directory_id_for(-1 if broker_id is None else broker_id, path)
    if raw is None:
        return derived
    if type(raw) is not str:
        problems.add(source, where, f"expected a directory id (22-character Kafka Uuid), found {type_name(raw)}")
        return derived
    try:
        directory_id = canonical(raw)
    except ValueError as exc:
        problems.add(source, where, f"{raw!r} is not a directory id: {exc}")
        return derived
    if DirectoryId.reserved(directory_id):
        problems.add(source, where, f"{directory_id} is a reserved directory id (Kafka refuses it: Reserved directory ID in request)")
    elif directory_id in explicit_ids:
        problems.add(source, where, f"directory id {directory_id} is also at {explicit_ids[directory_id]}")
    else:
        explicit_ids[directory_id] = f"{source} {where}"
    return directory_id


# The assignment file (Kafka's reassignment JSON) --------------------------------------------------


class PartitionSpec(NamedTuple):
    # Empty when the file's list could not be read.
    replicas: tuple[int, ...]
    # The directory id of each replica, None for "any"; None when the file gives no log_dirs.
    directories: tuple[str | None, ...] | None
    leader: int | None
    # The partition's index in the file's "partitions" array.
    index: int
    # False when some field had a problem: the partition still counts (for numbering and
    # duplicates) but builds nothing.
    valid: bool = True

    @property
    def where(self) -> str:
        return f"$.partitions[{self.index}]"


def _json_text(value: Any) -> str:
    """A value as DecodeJson's messages show it (Jackson's compact JSON), cut short if long."""
    text = orjson.dumps(value).decode()
    return text if len(text) <= 60 else text[:57] + "..."


def _java_list(values: list[Any] | tuple[Any, ...]) -> str:
    """Java's List.toString: `[1, 2]`, strings unquoted."""
    return "[" + ", ".join(map(str, values)) + "]"


def _topic_name_problem(name: str) -> str | None:
    from kjbod.controller.errors import ControllerApiError
    from kjbod.controller.replication_control import validate_topic_name

    try:
        validate_topic_name(name)
    except ControllerApiError as exc:
        return exc.api_error.message
    return None


_INTS = {int}


def parse_assignment(path: Path, brokers: Mapping[int, BrokerSpec], problems: Problems) -> dict[str, dict[int, PartitionSpec]]:
    """topic -> partition -> its replicas, directories and leader, checked as Kafka checks a
    reassignment (with Kafka's messages), plus what a current assignment must satisfy: known
    brokers, partitions numbered 0..n-1, directories among the broker's."""
    source = str(path)
    document = load_json(path, problems)
    if document is None:
        return {}
    if type(document) is not dict:
        problems.add(source, "$", f"Expected JSON object, received {_json_text(document)}")
        return {}
    version = document.get("version", 1)
    if type(version) is not int:
        problems.add(source, "$.version", f"Expected `Integer` value, received {_json_text(version)}")
    elif version != 1:
        problems.add(source, "$.version", f"Not supported version field value {version}")
    raw_partitions = document.get("partitions", [])
    if type(raw_partitions) is not list:
        problems.add(source, "$.partitions", f"Expected `JSON array` value, received {_json_text(raw_partitions)}")
        return {}
    topics: dict[str, dict[int, PartitionSpec]] = {}
    topic_names: dict[str, str | None] = {}  # name -> its problem (None: valid)
    broker_paths = {b: spec.paths for b, spec in brokers.items()}
    new = tuple.__new__  # builds the NamedTuple at C speed
    for i, item in enumerate(raw_partitions):
        # The usual case, checked directly (a million of these must take about a second);
        # anything unusual goes to _parse_partition, which names every problem.
        if type(item) is dict:
            topic, partition, replicas = item.get("topic"), item.get("partition"), item.get("replicas")
            if (
                type(topic) is str
                and type(partition) is int and 0 <= partition <= INT32_MAX
                and type(replicas) is list and replicas
                and set(map(type, replicas)) == _INTS
                and len(set(replicas)) == len(replicas)
            ):
                if topic not in topic_names:
                    topic_names[topic] = _topic_name_problem(topic)
                leader = item.get("leader")
                directories = _fast_directories(item, replicas, broker_paths)
                partitions = topics.get(topic)
                if partitions is None:
                    partitions = topics[topic] = {}
                if (
                    directories is not False
                    and topic_names[topic] is None
                    and (leader is None or (type(leader) is int and leader in replicas))
                    and partition not in partitions
                ):
                    partitions[partition] = new(PartitionSpec, (tuple(replicas), directories, leader, i, True))
                    continue
        parsed = _parse_partition(item, i, source, broker_paths, topic_names, problems)
        if parsed is None:
            continue
        topic, partition, spec = parsed
        partitions = topics.setdefault(topic, {})
        first = partitions.get(partition)
        if first is not None:
            problems.add(
                source, spec.where,
                f"Partition reassignment contains duplicate topic partitions: {topic}-{partition} (first at {first.where})",
            )
            continue
        partitions[partition] = spec
    _check_numbering(topics, source, problems)
    _check_collisions(topics, source, problems)
    return topics


def _fast_directories(
    item: dict[str, Any], replicas: list[int], broker_paths: Mapping[int, Mapping[str, str]]
) -> tuple[str | None, ...] | None | bool:
    """The replicas' directory ids when everything is in order; False otherwise."""
    raw = item.get("log_dirs")
    if raw is None:
        if "log_dirs" in item:
            return False
        for broker in replicas:
            if broker not in broker_paths:
                return False
        return None
    if type(raw) is not list or len(raw) != len(replicas):
        return False
    resolved = []
    for broker, path in zip(replicas, raw):
        paths = broker_paths.get(broker)
        if paths is None or type(path) is not str:  # _parse_partition names the problem
            return False
        if path == "any":
            resolved.append(None)
            continue
        directory = paths.get(path)
        if directory is None:
            return False
        resolved.append(directory)
    return tuple(resolved)


def _parse_partition(
    item: Any,
    index: int,
    source: str,
    broker_paths: Mapping[int, Mapping[str, str]],
    topic_names: dict[str, str | None],
    problems: Problems,
) -> tuple[str, int, PartitionSpec] | None:
    where = f"$.partitions[{index}]"
    if type(item) is not dict:
        problems.add(source, where, f"Expected JSON object, received {_json_text(item)}")
        return None
    ok = True
    topic = item.get("topic")
    if type(topic) is not str:
        problems.add(source, f"{where}.topic", "No such field exists: `topic`" if topic is None else f"Expected `String` value, received {_json_text(topic)}")
    else:
        if topic not in topic_names:
            topic_names[topic] = _topic_name_problem(topic)
        if topic_names[topic] is not None:
            problems.add(source, f"{where}.topic", topic_names[topic])  # type: ignore[arg-type]
            ok = False
    partition = item.get("partition")
    if type(partition) is not int or not 0 <= partition <= INT32_MAX:
        if partition is None:
            message = "No such field exists: `partition`"
        elif type(partition) is int:
            message = f"The given partition index {partition} is not valid."
        else:
            message = f"Expected `Int` value, received {_json_text(partition)}"
        problems.add(source, f"{where}.partition", message)
    name = f"{topic}-{partition}"
    replicas = item.get("replicas")
    if type(replicas) is not list:
        message = "No such field exists: `replicas`" if replicas is None else f"Expected `JSON array` value, received {_json_text(replicas)}"
        problems.add(source, f"{where}.replicas", message)
        replicas = []
        ok = False
    elif any(type(r) is not int for r in replicas):
        j = next(j for j, r in enumerate(replicas) if type(r) is not int)
        problems.add(source, f"{where}.replicas[{j}]", f"Expected `Int` value, received {_json_text(replicas[j])}")
        replicas = []
        ok = False
    elif not replicas:
        problems.add(source, f"{where}.replicas", "Partition replica list cannot be empty")
        ok = False
    duplicates = sorted({r for r in replicas if replicas.count(r) > 1})
    if duplicates:
        problems.add(
            source, f"{where}.replicas",
            f"Partition replica lists may not contain duplicate entries: {name} contains multiple entries for {','.join(map(str, duplicates))}",
        )
        ok = False
    for j, broker in enumerate(replicas):
        if broker not in broker_paths:
            problems.add(
                source, f"{where}.replicas[{j}]",
                f"The manual partition assignment includes broker {broker}, but no such broker is registered (it is not in the brokers file).",
            )
            ok = False
    directories = _parse_partition_dirs(item, replicas, name, where, source, broker_paths, problems)
    if directories is False:
        ok = False
    leader = item.get("leader")
    if leader is not None and (type(leader) is not int or leader not in replicas):
        found = str(leader) if type(leader) is int else type_name(leader)
        problems.add(source, f"{where}.leader", f"the leader must be one of the replicas {','.join(map(str, replicas))}, found {found}")
        ok = False
    if type(topic) is not str or type(partition) is not int or not 0 <= partition <= INT32_MAX:
        return None
    spec = PartitionSpec(tuple(replicas), directories if ok else None, leader, index, ok)  # type: ignore[arg-type]
    return topic, partition, spec


def _parse_partition_dirs(
    item: dict[str, Any], replicas: list[int], name: str, where: str, source: str,
    broker_paths: Mapping[int, Mapping[str, str]], problems: Problems,
) -> tuple[str | None, ...] | None | bool:
    """The replicas' directory ids (None for "any"; None when absent); False after a problem."""
    if "log_dirs" not in item:
        return None  # Kafka: every replica "any"
    raw = item["log_dirs"]
    if type(raw) is not list:
        problems.add(source, f"{where}.log_dirs", f"Expected `JSON array` value, received {_json_text(raw)}")
        return False
    if any(type(d) is not str for d in raw):
        j = next(j for j, d in enumerate(raw) if type(d) is not str)
        problems.add(source, f"{where}.log_dirs[{j}]", f"Expected `String` value, received {_json_text(raw[j])}")
        return False
    if len(raw) != len(replicas):
        problems.add(
            source, f"{where}.log_dirs",
            f"Size of replicas list {_java_list(replicas)} is different from size of log dirs list {_java_list(raw)} for partition {name}",
        )
        return False
    ok = True
    resolved: list[str | None] = []
    for j, (broker, path) in enumerate(zip(replicas, raw)):
        if path == "any":
            resolved.append(None)
            continue
        paths = broker_paths.get(broker)
        if paths is None:
            ok = False  # an unknown broker, already a problem
            continue
        directory = paths.get(path) or (paths.get(normalize_path(path)) if path.startswith("/") else None)
        if directory is None:
            problems.add(
                source, f"{where}.log_dirs[{j}]",
                f"broker {broker} has no log directory {path} in the brokers file (it has {', '.join(sorted(paths))})",
            )
            ok = False
        resolved.append(directory)
    return tuple(resolved) if ok else False


def _check_numbering(topics: Mapping[str, Mapping[int, PartitionSpec]], source: str, problems: Problems) -> None:
    """A topic's partitions are 0..n-1: Kafka never leaves a gap."""
    for topic in sorted(topics):
        partitions = topics[topic]
        count = len(partitions)
        if not partitions or max(partitions) == count - 1:
            continue
        missing, missing_count = _first_gaps(partitions, 20)
        shown = ",".join(map(str, missing)) + (f" and {missing_count - len(missing)} more" if missing_count > len(missing) else "")
        first = partitions[min(partitions)].where
        problems.add(
            source, "$.partitions",
            f"topic {topic} has {count} partition(s) numbered up to {max(partitions)}; missing {shown} "
            f"(partitions are numbered 0 to n-1; the topic starts at {first})",
        )


def _first_gaps(present: Collection[int], limit: int) -> tuple[list[int], int]:
    """The first `limit` numbers of 0..max(present) that are not in `present`, and how many are
    missing in all, in time and memory proportional to len(present): a partition numbered
    2147483647 must not make the check walk (or hold) two billion numbers."""
    gaps: list[int] = []
    expected = 0
    for number in sorted(present):
        while expected < number and len(gaps) < limit:
            gaps.append(expected)
            expected += 1
        expected = number + 1
    return gaps, max(present) + 1 - len(present)


def _check_collisions(topics: Mapping[str, Mapping[int, PartitionSpec]], source: str, problems: Problems) -> None:
    """Kafka refuses a topic whose name differs from another's only by '.' versus '_'."""
    seen: dict[str, str] = {}
    for topic in sorted(topics):
        key = topic.replace(".", "_")
        other = seen.get(key)
        if other is not None:
            where = topics[topic][min(topics[topic])].where
            problems.add(source, f"{where}.topic", f"Topic '{topic}' collides with existing topic: {other}")
        else:
            seen[key] = topic


# The import ---------------------------------------------------------------------------------------


@dataclass
class ImportRequest:
    brokers_file: Path
    assignment_file: Path
    log_dirs_files: list[Path] = field(default_factory=list)
    metadata_version: str | None = None
    # The cluster.id of the brokers' meta.properties; `broker register --config` then checks it.
    cluster_id: str | None = None
    # The Kafka release the cluster runs: its metadata.versions, defaults and brokers' supported ranges.
    release: KafkaRelease = NEWEST


@dataclass
class ImportSummary:
    state: str
    metadata_version: str
    brokers: int
    directories: int
    offline_directories: int
    topics: int
    partitions: int
    replicas: int
    unassigned_replicas: int
    offline_replicas: int
    sized_partitions: int
    replica_logs: int
    future_replicas: int
    records: int = 0
    snapshot: str | None = None
    cluster_id: str | None = None

    def lines(self) -> list[str]:
        """The summary an operator reads."""
        offline = f" ({self.offline_directories} offline)" if self.offline_directories else ""
        lines = [
            f"Imported {self.brokers} broker(s) with {self.directories} log directories{offline}, {self.topics} topic(s) "
            f"and {self.partitions} partition(s) ({self.replicas} replicas) into {self.state} at metadata.version {self.metadata_version}.",
            f"Sizes known for {self.sized_partitions} partition(s); {self.replica_logs} replica(s) lagging or partial; "
            f"{self.future_replicas} future replica(s).",
        ]
        if self.offline_replicas:
            lines.append(f"{self.offline_replicas} replica(s) are in offline directories and out of their ISR.")
        if self.unassigned_replicas:
            lines.append(
                f"{self.unassigned_replicas} replica(s) have no log directory yet (UNASSIGNED): give their paths in the "
                "assignment's log_dirs or in --log-dirs output, or run `kjbod assign-dirs --broker N --auto`."
            )
        lines.append(f"Wrote {self.records} records and a snapshot.")
        return lines

    def to_json(self) -> dict[str, Any]:
        return {
            "state": self.state,
            "clusterId": self.cluster_id,
            "metadataVersion": self.metadata_version,
            "brokers": self.brokers,
            "directories": self.directories,
            "offlineDirectories": self.offline_directories,
            "topics": self.topics,
            "partitions": self.partitions,
            "replicas": self.replicas,
            "unassignedReplicas": self.unassigned_replicas,
            "offlineReplicas": self.offline_replicas,
            "sizedPartitions": self.sized_partitions,
            "replicaLogs": self.replica_logs,
            "futureReplicas": self.future_replicas,
            "records": self.records,
            "snapshot": self.snapshot,
        }


@dataclass
class ImportPlan:
    entries: list[Record | RecordRun]
    summary: ImportSummary
    # The image the entries make, when it was built with them (the columnar path); else the
    # state replays them.
    image: Image | None = None


def resolve_metadata_version(text: str | None, release: KafkaRelease) -> MetadataVersion:
    """--metadata-version: a production version of `release` (its latest production by default)."""
    if text is None:
        return release.latest_production
    try:
        mv = release.parse_metadata_version(text, unstable=True)
    except ValueError as exc:
        raise UserError(str(exc)) from None
    if not release.is_production(mv):
        # Brokers advertise the latest production release's ranges; they could not run it.
        raise UserError(f"metadata.version {mv} is not yet stable.")
    return mv


def bootstrap_feature_records(mv: MetadataVersion, release: KafkaRelease) -> tuple[Record, ...]:
    """The feature levels `kjbod format` bootstraps for a cluster at this metadata.version (a
    static quorum: kraft.version 0)."""
    from kjbod.tools.storage.formatter import effective_feature_levels, feature_level_records

    return feature_level_records(effective_feature_levels(mv, {}, unstable=False, dynamic_quorum=False, release=release))


def plan_import(request: ImportRequest, *, progress: Progress = ignore, base_offset: int = 0, columnar: bool = True) -> ImportPlan:
    """Read and check every input file, then build the records of the new state.

    The usual input is read as columns (kjbod.tools.importer.columnar); anything else, or all
    input with `columnar` False (tests compare the two), partition by partition.
    Raises ValidationFailed listing every problem when any input is wrong.
    """
    mv = resolve_metadata_version(request.metadata_version, request.release)
    problems = Problems()
    progress(f"Reading {request.brokers_file}")
    brokers = parse_brokers(request.brokers_file, problems)
    if columnar and not problems and base_offset == 0:
        planned = _plan_as_columns(request, brokers, mv, progress)
        if planned is not None:
            return planned
    progress(f"Reading {request.assignment_file}")
    topics = parse_assignment(request.assignment_file, brokers, problems)
    progress(f"Reading {', '.join(map(str, request.log_dirs_files)) or 'no log-dirs output'}")
    shape = ClusterShape(
        {b: spec.paths for b, spec in brokers.items()},
        lambda topic: {p: spec.replicas for p, spec in topics[topic].items()} if topic in topics else None,
        f"in the brokers file {request.brokers_file}",
        f"in the assignment {request.assignment_file}",
    )
    seen = read_log_dirs_outputs(request.log_dirs_files, shape, problems)
    _check_brokers(brokers, seen, mv, str(request.brokers_file), problems)
    progress("Building the cluster state")
    builder = _Builder(mv, brokers, seen, str(request.assignment_file), problems, request.release)
    entries = _head_records(request, mv)
    entries.extend(builder.broker_records(base_offset + len(entries)))
    for name in sorted(topics):
        entries.extend(builder.topic_entries(name, topics[name]))
    if problems:
        raise ValidationFailed(problems.items, "nothing was imported")
    summary = ImportSummary(
        state="",
        metadata_version=str(mv),
        brokers=len(brokers),
        directories=sum(len(b.dirs) for b in brokers.values()),
        offline_directories=len(seen.offline),
        topics=len(topics),
        partitions=sum(len(p) for p in topics.values()),
        replicas=builder.replicas,
        unassigned_replicas=builder.unassigned,
        offline_replicas=builder.offline_replicas,
        sized_partitions=builder.sized,
        replica_logs=builder.replica_logs,
        future_replicas=builder.futures,
        cluster_id=request.cluster_id,
    )
    return ImportPlan(entries, summary)


def _head_records(request: ImportRequest, mv: MetadataVersion) -> list[Record | RecordRun]:
    """The records before the brokers': the features `format` would give, the cluster's id."""
    entries: list[Record | RecordRun] = list(bootstrap_feature_records(mv, request.release))
    if request.cluster_id is not None:
        # No controller formatted this state: Kafka's "local controller" id stays unknown.
        entries.append(KjbodClusterRecord(cluster_id=request.cluster_id))
    return entries


def _plan_as_columns(request: ImportRequest, brokers: Mapping[int, BrokerSpec], mv: MetadataVersion, progress: Progress) -> ImportPlan | None:
    """The usual input read, joined and built as columns (kjbod.tools.importer.columnar), or
    None for input that is not the usual one, which the rest of plan_import reads."""
    from kjbod.tools.importer.columnar import plan_columnar

    progress(f"Reading {request.assignment_file} and {', '.join(map(str, request.log_dirs_files)) or 'no log-dirs output'}")
    planned = plan_columnar(
        request.assignment_file, request.log_dirs_files, brokers, _head_records(request, mv), mv,
        topic_problem=_topic_name_problem, topic_id=topic_id_for,
        broker_records=lambda first, seen: broker_records(mv, brokers, seen.offline, seen.capacities, first, request.release),
        progress=progress,
    )
    if planned is None:
        return None
    summary = ImportSummary(
        state="",
        metadata_version=str(mv),
        brokers=len(brokers),
        directories=sum(len(b.dirs) for b in brokers.values()),
        offline_directories=planned.offline_directories,
        topics=planned.topics,
        partitions=planned.partitions,
        replicas=planned.replicas,
        unassigned_replicas=planned.unassigned,
        offline_replicas=planned.offline_replicas,
        sized_partitions=planned.sized,
        replica_logs=planned.replica_logs,
        future_replicas=planned.futures,
        cluster_id=request.cluster_id,
    )
    return ImportPlan(planned.entries, summary, planned.image)


def _check_brokers(brokers: Mapping[int, BrokerSpec], seen: Observations, mv: MetadataVersion, source: str, problems: Problems) -> None:
    for broker_id in sorted(brokers):
        spec = brokers[broker_id]
        if len(spec.dirs) > 1 and not mv.directory_assignment_supported:
            problems.add(
                source, f"{spec.where}.log_dirs",
                f"broker {broker_id} has {len(spec.dirs)} log directories, but metadata.version {mv} does not support "
                "JBOD (it needs 3.7-IV2 or later; see --metadata-version)",
            )
        offline = [d for d in spec.dirs if (broker_id, d.directory_id) in seen.offline]
        if offline and not mv.directory_assignment_supported:
            problems.add(
                source, f"{spec.where}.log_dirs",
                f"log directory {offline[0].path} of broker {broker_id} is offline ({seen.offline[(broker_id, offline[0].directory_id)]}), "
                f"which metadata.version {mv} cannot record (it needs 3.7-IV2 or later)",
            )
        elif spec.dirs and len(offline) == len(spec.dirs):
            problems.add(
                source, f"{spec.where}.log_dirs",
                f"every log directory of broker {broker_id} is reported offline; a Kafka broker stops when all its "
                "log directories fail, so leave it out of the log-dirs output or register it later",
            )


def broker_records(
    mv: MetadataVersion, brokers: Mapping[int, BrokerSpec], offline: Collection[tuple[int, str]],
    capacities: Mapping[tuple[int, str], int], first_offset: int, release: KafkaRelease = NEWEST,
) -> list[Record]:
    """Every broker's registration and log directories, at offsets from `first_offset`:
    `offline` (broker, directory id) pairs are left out of the registration, `capacities` are
    the disk sizes the log-dirs output gives where the brokers file gives none; each broker
    supports what a broker of `release` does."""
    version = mv.register_broker_record_version
    features = tuple(
        BrokerFeature(name=name, min_supported_version=low, max_supported_version=high)
        for name, (low, high) in sorted(release.supported_ranges().items())
    )
    records: list[Record] = []
    for broker_id in sorted(brokers):
        spec = brokers[broker_id]
        online = [d.directory_id for d in spec.dirs if (broker_id, d.directory_id) not in offline]
        records.append(
            RegisterBrokerRecord(
                version=version,
                broker_id=broker_id,
                incarnation_id=derived_uuid("incarnation", broker_id),
                # A broker's epoch is the offset of its registration (CCM:341-464).
                broker_epoch=first_offset + len(records),
                features=features,
                rack=spec.rack,
                fenced=False,
                log_dirs=tuple(sorted(online, key=uuid_sort_key)) if mv.directory_assignment_supported else (),
            )
        )
        records.append(
            KjbodBrokerLogDirsRecord(
                broker_id=broker_id,
                log_dirs=tuple(
                    # The brokers file's capacity_bytes, else the disk size kafka-log-dirs printed.
                    KjbodLogDir(
                        directory_id=d.directory_id, path=d.path,
                        capacity_bytes=d.capacity_bytes if d.capacity_bytes is not None else capacities.get((broker_id, d.directory_id)),
                    )
                    for d in spec.dirs
                ),
            )
        )
    return records


class _Builder:
    """Turns checked input into records: brokers as registration records, every topic's
    partitions, sizes and replica logs as column runs."""

    def __init__(
        self, mv: MetadataVersion, brokers: Mapping[int, BrokerSpec], seen: Observations, source: str, problems: Problems, release: KafkaRelease
    ) -> None:
        self.mv = mv
        self.release = release
        self.brokers = brokers
        self.seen = seen
        self.source = source
        self.problems = problems
        self.single_dir = {b: spec.dirs[0].directory_id for b, spec in brokers.items() if len(spec.dirs) == 1}
        self.offline = {(b, d) for (b, d) in seen.offline}
        self.path_of = {(b, d.directory_id): d.path for b, spec in brokers.items() for d in spec.dirs}
        self.replicas = self.unassigned = self.offline_replicas = self.sized = self.replica_logs = self.futures = 0

    def broker_records(self, first_offset: int) -> list[Record]:
        return broker_records(self.mv, self.brokers, self.offline, self.seen.capacities, first_offset, self.release)

    def topic_entries(self, name: str, partitions: Mapping[int, PartitionSpec]) -> list[Record | RecordRun]:
        count = len(partitions)
        if not count or max(partitions) != count - 1 or not all(spec.valid for spec in partitions.values()):
            return []  # already a problem
        topic_id = topic_id_for(name)
        ids = list(range(count))
        replicas_column: list[tuple[int, ...]] = []
        isr_column: list[tuple[int, ...]] = []
        leader_column: list[int] = []
        directories_column: list[tuple[str, ...]] = []
        current = self.seen.current.get(name, {})
        future = self.seen.future.get(name, {})
        offline = self.offline
        offline_brokers = {b for b, _ in offline}
        unassigned = DirectoryId.UNASSIGNED
        size_ids: list[int] = []
        size_values: list[int] = []
        logs: dict[str, list[Any]] = {k: [] for k in ("partition_id", "broker_id", "future", "directory_id", "size_bytes", "offset_lag")}
        for partition_id in ids:
            spec = partitions[partition_id]
            replicas = spec.replicas
            observed = current.get(partition_id)
            given = spec.directories
            if given is not None and None not in given:
                directories: tuple[str, ...] = given  # type: ignore[assignment]
                # (checked against the log-dirs output below, with the sizes)
            else:
                directories = tuple(self._directory(spec, j, b, observed) for j, b in enumerate(replicas))
            leader = replicas[0] if spec.leader is None else spec.leader
            isr = replicas
            if offline and not offline_brokers.isdisjoint(replicas):
                # A replica on a failed directory is out of the ISR and cannot lead (KIP-858).
                isr = tuple(b for b, d in zip(replicas, directories) if (b, d) not in offline)
                if len(isr) != len(replicas):
                    self.offline_replicas += len(replicas) - len(isr)
                    if not isr:
                        isr, leader = (leader,), NO_LEADER  # Kafka keeps the last member, leaderless
                    elif leader not in isr:
                        leader = isr[0]
            replicas_column.append(replicas)
            isr_column.append(isr)
            leader_column.append(leader)
            directories_column.append(directories)
            if unassigned in directories:
                self.unassigned += directories.count(unassigned)
            futures = future.get(partition_id) if future else None
            if futures is None and observed is not None and (leader_log := observed.get(leader)) is not None:
                # The usual case, inline: the leader's log gives the size; others may lag;
                # every reported replica must sit where the assignment says.
                size = leader_log.size
                size_ids.append(partition_id)
                size_values.append(size)
                for broker, observation in observed.items():
                    if observation.size != size or observation.offset_lag:
                        self._log(logs, partition_id, broker, False, None, observation.size, observation.offset_lag)
                    if observation.directory_id != directories[replicas.index(broker)]:
                        self._disagreement(name, partition_id, spec, replicas.index(broker), broker, observation)
            elif observed is not None or futures is not None:
                if observed is not None:
                    for broker, observation in observed.items():
                        if observation.directory_id != directories[replicas.index(broker)]:
                            self._disagreement(name, partition_id, spec, replicas.index(broker), broker, observation)
                sizes = partition_sizes(replicas, replicas[0] if leader == NO_LEADER else leader, observed, futures)
                if sizes is not None:
                    if sizes.size is not None:
                        size_ids.append(partition_id)
                        size_values.append(sizes.size)
                    for broker, (size, lag) in sizes.partial.items():
                        self._log(logs, partition_id, broker, False, None, size, lag)
                    for broker, (directory, size, lag) in sizes.futures.items():
                        self._log(logs, partition_id, broker, True, directory, size, lag)
        self.replicas += sum(map(len, replicas_column))
        entries: list[Record | RecordRun] = [TopicRecord(name=name, topic_id=topic_id)]
        entries.append(self._partition_run(topic_id, ids, replicas_column, isr_column, leader_column, directories_column))
        if size_ids:
            self.sized += len(size_ids)
            entries.append(
                RecordRun(KjbodPartitionSizeRecord, 0, len(size_ids), {"topic_id": [topic_id] * len(size_ids), "partition_id": size_ids, "size_bytes": size_values})
            )
        if logs["partition_id"]:
            count = len(logs["partition_id"])
            entries.append(RecordRun(KjbodReplicaLogRecord, 0, count, {"topic_id": [topic_id] * count, **logs}))
        return entries

    def _directory(self, spec: PartitionSpec, index: int, broker: int, observed: Mapping[int, Observation] | None) -> str:
        """The replica's directory: the assignment's; for "any", where the log-dirs output
        shows the replica; else the broker's only directory; else UNASSIGNED."""
        directory = spec.directories[index] if spec.directories is not None else None
        if directory is not None:
            return directory
        seen = observed.get(broker) if observed else None
        if seen is not None:
            return seen.directory_id
        return self.single_dir.get(broker, DirectoryId.UNASSIGNED)

    def _disagreement(self, topic: str, partition: int, spec: PartitionSpec, index: int, broker: int, seen: Observation) -> None:
        directory = spec.directories[index]  # type: ignore[index]
        self.problems.add(
            self.source, f"{spec.where}.log_dirs[{index}]",
            f"{topic}-{partition} on broker {broker} is in {self.path_of[(broker, seen.directory_id)]} "
            f"per {seen.where}, not in {self.path_of[(broker, directory)]}",  # type: ignore[index]
        )

    def _log(self, logs: dict[str, list[Any]], partition_id: int, broker: int, future: bool, directory: str | None, size: int, lag: int) -> None:
        logs["partition_id"].append(partition_id)
        logs["broker_id"].append(broker)
        logs["future"].append(future)
        logs["directory_id"].append(directory)
        logs["size_bytes"].append(size)
        logs["offset_lag"].append(lag)
        if future:
            self.futures += 1
        else:
            self.replica_logs += 1

    def _partition_run(
        self, topic_id: str, ids: list[int], replicas: list[tuple[int, ...]], isr: list[tuple[int, ...]],
        leaders: list[int], directories: list[tuple[str, ...]],
    ) -> RecordRun:
        """PartitionRecords as one run (the columns of kjbod.image.topics.partition_run)."""
        count = len(ids)
        version = self.mv.partition_record_version
        empty: tuple[int, ...] = ()
        columns: dict[str, list[Any]] = {
            "partition_id": ids,
            "topic_id": [topic_id] * count,
            "replicas": replicas,
            "isr": isr,
            "removing_replicas": [empty] * count,
            "adding_replicas": [empty] * count,
            "leader": leaders,
            "leader_recovery_state": [0] * count,
            "leader_epoch": [0] * count,
            "partition_epoch": [0] * count,
        }
        if version >= 1:
            columns["directories"] = directories
        if version >= 2:
            columns["eligible_leader_replicas"] = [None] * count
            columns["last_known_elr"] = [None] * count
        return RecordRun(PartitionRecord, version, count, columns)


def import_cluster(request: ImportRequest, target: NewState, *, progress: Progress = ignore) -> ImportSummary:
    """Check every input, then create the state with one commit and a snapshot."""
    target.check_new()
    with gc_paused():
        plan = plan_import(request, progress=progress)
    write_new_state(target, plan.entries, plan.summary, progress=progress, image=plan.image)
    return plan.summary
