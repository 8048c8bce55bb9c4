"""kafka-reassign-partitions against the cluster state (reference: kafka-reassign-and-log-dirs.md
§1, §2, §6, §8).

The tool side of `kjbod reassign generate|execute|verify|cancel|list`: Kafka's JSON formats read
with Jackson's strictness, AdminUtils' replica assignment, the throttle values, and Kafka's
exact output lines. Controller work (reassignments, directory moves, configs) goes through
ReassignmentControl; each action returns its records and a ToolReport (stdout lines, one JSON
document, and the error that ends the command, if any).

Where Kafka prints an exception that is not a TerseException, it prints `Error: <message>` and
a stack trace; kjbod keeps that first line (on stderr) and never prints the trace.
"""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, TypeVar

from kjbod.common.java import JavaRandom, hashmap_order, string_hash
from kjbod.common.kafka_uuid import DirectoryId
from kjbod.controller import Controller, ControllerResult
from kjbod.controller.clock_control import format_duration
from kjbod.controller.reassignment_control import (
    ConfigChange,
    OngoingReassignment,
    ReassignmentTarget,
    ReplicaDirMove,
    exception_message,
)
from kjbod.copy_simulation import (
    FOLLOWER_THROTTLED_RATE,
    FOLLOWER_THROTTLED_REPLICAS,
    HORIZON_MS,
    LEADER_THROTTLED_RATE,
    LEADER_THROTTLED_REPLICAS,
    LOG_DIRS_THROTTLED_RATE,
    copies,
    simulate,
)
from kjbod.common.units import human_bytes
from kjbod.errors import UserError
from kjbod.image import Image, replay_all
from kjbod.records import CONFIG_RESOURCE_BROKER, CONFIG_RESOURCE_TOPIC, Record

T = TypeVar("T", bound=Hashable)
TopicPartition = tuple[str, int]
Replica = tuple[str, int, int]  # (topic, partition, broker): Kafka's TopicPartitionReplica

ANY_LOG_DIR = "any"
INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1
CANNOT_EXECUTE = (
    "Cannot execute because there is an existing partition assignment.  Use --additional to override this and "
    "create a new partition assignment in addition to the existing one. The --additional flag can also be used "
    "to change the throttle by resubmitting the current reassignment."
)
VERIFY_WARNING = "Warning: You must run --verify periodically, until the reassignment completes, to ensure the throttle is removed."
BROKER_THROTTLES = (LEADER_THROTTLED_RATE, FOLLOWER_THROTTLED_RATE, LOG_DIRS_THROTTLED_RATE)
TOPIC_THROTTLES = (LEADER_THROTTLED_REPLICAS, FOLLOWER_THROTTLED_REPLICAS)
UNKNOWN_TOPIC_EXCEPTION = "org.apache.kafka.common.errors.UnknownTopicOrPartitionException"


def kafka_error(message: str) -> UserError:
    """A failure Kafka reports as `Error: <message>` (followed by a stack trace kjbod leaves out)."""
    return UserError(f"Error: {message}")


@dataclass(frozen=True)
class ToolReport:
    """What an action prints: Kafka's stdout lines, the JSON document, and an error that ends
    the command (exit 1) after the lines are printed and the records are committed."""

    lines: tuple[str, ...]
    data: dict[str, Any]
    error: str | None = None


# Java behaviours ----------------------------------------------------------------------------------


def java_string_key(text: str) -> bytes:
    """`String.compareTo` order (UTF-16 code units)."""
    return text.encode("utf-16-be", "surrogatepass")


def tp_key(tp: TopicPartition) -> tuple[bytes, int]:
    return java_string_key(tp[0]), tp[1]


def tp_text(tp: TopicPartition) -> str:
    return f"{tp[0]}-{tp[1]}"


def _int32(value: int) -> int:
    value &= 0xFFFFFFFF
    return value - (1 << 32) if value >= 1 << 31 else value


def tp_hash(tp: TopicPartition) -> int:
    """TopicPartition.hashCode: 31 * (31 + partition) + topic.hashCode()."""
    return _int32(31 * (31 + tp[1]) + string_hash(tp[0]))


def int_hash(value: int) -> int:
    return value


def presized_capacity(count: int) -> int:
    """The table size of `new HashSet<>(collection)`: max(n / .75 + 1, 16), a power of two."""
    wanted = max(int(count / 0.75) + 1, 16)
    return 1 << (wanted - 1).bit_length()


def java_set_order(inserted: Iterable[T], hash_of: Callable[[T], int], capacity: int = 16) -> list[T]:
    """Iteration order of a java.util.HashSet that starts with `capacity` buckets and gets
    `inserted` added in order (duplicates ignored). kjbod.common.java.hashmap_order is the
    case `capacity=16`; a set copied from another collection starts pre-sized."""
    keys = list(dict.fromkeys(inserted))
    while len(keys) > capacity * 0.75:
        capacity *= 2

    def bucket(key: T) -> int:
        h = hash_of(key) & 0xFFFFFFFF
        return (h ^ (h >> 16)) & (capacity - 1)

    return sorted(keys, key=bucket)  # stable: insertion order within a bucket


def java_duplicates(items: Sequence[T], hash_of: Callable[[T], int]) -> list[T]:
    """ToolsUtils.duplicates: each repeated element once, in HashSet order."""
    seen: set[T] = set()
    repeated: list[T] = []
    for item in items:
        if item in seen:
            repeated.append(item)
        seen.add(item)
    return hashmap_order(repeated, hash_of)


def java_list(items: Iterable[object]) -> str:
    """`List.toString` / `Set.toString`: `[1, 2]`."""
    return "[" + ", ".join(str(i) for i in items) + "]"


def csv(items: Iterable[object]) -> str:
    return ",".join(str(i) for i in items)


def java_double(value: float) -> str:
    """`Double.toString`: plain between 1e-3 and 1e7, else `d.dddE<exp>`."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    if value == 0:
        return "-0.0" if math.copysign(1.0, value) < 0 else "0.0"
    if 1e-3 <= abs(value) < 1e7:
        text = repr(value)
        return text if "." in text or "e" in text else text + ".0"
    sign, digits, exponent = Decimal(repr(value)).as_tuple()
    text = "".join(map(str, digits)).rstrip("0") or "0"
    mantissa = text[0] + "." + (text[1:] or "0")
    return f"{'-' if sign else ''}{mantissa}E{exponent + len(digits) - 1}"  # type: ignore[operator]


def parse_java_int(text: str) -> int:
    """`Integer.parseInt`: an optional sign and ASCII digits, within int32; Kafka prints
    NumberFormatException's message."""
    if re.fullmatch(r"[+-]?[0-9]+", text) is None or not INT32_MIN <= int(text) <= INT32_MAX:
        raise kafka_error(f'For input string: "{text}"')
    return int(text)


def java_split(text: str, separator: str = ",") -> list[str]:
    """`String.split`: trailing empty strings are dropped (but "" alone stays [""])."""
    if separator not in text:
        return [text]
    pieces = text.split(separator)
    while pieces and pieces[-1] == "":
        pieces.pop()
    return pieces


def parse_long_option(text: str, option: str) -> int:
    """A joptsimple `Long` option such as --throttle."""
    if re.fullmatch(r"[+-]?[0-9]+", text.strip()) is None or not -(2**63) <= int(text) < 2**63:
        raise UserError(f"Cannot parse argument '{text}' of option {option}")
    return int(text)


# JSON as Jackson and Kafka's DecodeJson read it -----------------------------------------------------


class _Missing:
    """Jackson's MissingNode (what readTree gives for blank input); it prints as nothing."""


MISSING = _Missing()
_WHITESPACE = " \t\n\r"
_LOCATION = " at [Source: REDACTED (`StreamReadFeature.INCLUDE_SOURCE_IN_LOCATION` disabled); line: {line}, column: {column}]"
_VALUE_EXPECTED = "(JSON String, Number, Array, Object or token 'null', 'true' or 'false')"


class _NonStandardToken(ValueError):
    def __init__(self, token: str) -> None:
        super().__init__(token)
        self.token = token


def _reject_constant(token: str) -> Any:
    raise _NonStandardToken(token)


_DECODER = json.JSONDecoder(parse_constant=_reject_constant)


def jackson_text(value: Any) -> str:
    """`JsonNode.toString()`: compact JSON, doubles as Java prints them."""
    if value is MISSING:
        return ""
    if isinstance(value, dict):
        return "{" + ",".join(json.dumps(k, ensure_ascii=False) + ":" + jackson_text(v) for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ",".join(jackson_text(v) for v in value) + "]"
    if isinstance(value, float):
        return java_double(value)
    return json.dumps(value, ensure_ascii=False)


def _container_at(text: str, position: int) -> str | None:
    """The innermost JSON container open at `position` ("Object" or "Array")."""
    stack: list[str] = []
    in_string = escaped = False
    for char in text[:position]:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "{[":
            stack.append("Object" if char == "{" else "Array")
        elif char in "}]" and stack:
            stack.pop()
    return stack[-1] if stack else None


def _char_text(char: str) -> str:
    if ord(char) < 32:
        return f"(CTRL-CHAR, code {ord(char)})"
    return f"('{char}' (code {ord(char)}))"


def _syntax_error(text: str, exc: json.JSONDecodeError) -> UserError:
    """Jackson's message for the common syntax errors (the first line and its location)."""
    position, message = exc.pos, exc.msg
    if message.startswith("Unterminated string") or position >= len(text):
        container = _container_at(text, len(text))
        if message.startswith("Unterminated string"):
            detail = "Unexpected end-of-input: was expecting closing quote for a string value"
        elif container:
            detail = f"Unexpected end-of-input: expected close marker for {container}"
        else:
            detail = "Unexpected end-of-input"
        lines = text.split("\n")
        return kafka_error(detail + _LOCATION.format(line=len(lines), column=len(lines[-1]) + 1))
    char = text[position]
    column = exc.colno + 1
    if message.startswith("Expecting property name"):
        detail = f"Unexpected character {_char_text(char)}: was expecting double-quote to start field name"
    elif message.startswith("Expecting ':'"):
        detail = f"Unexpected character {_char_text(char)}: was expecting a colon to separate field name and value"
    elif message.startswith("Expecting ','"):
        detail = f"Unexpected character {_char_text(char)}: was expecting comma to separate {_container_at(text, position) or 'Object'} entries"
    elif message.startswith("Invalid control character"):
        detail = f"Illegal unquoted character {_char_text(char)}: has to be escaped using backslash to be included in string value"
    elif message.startswith(("Invalid \\escape", "Invalid \\uXXXX")):
        escape = text[position + 1 : position + 2] or "\\"
        detail = f"Unrecognized character escape {_char_text(escape)[1:-1]}"
        column += 1
    elif char.isalpha():
        token = re.match(r"[^\s,:\[\]{}\"]+", text[position:]).group(0)  # type: ignore[union-attr]
        detail = f"Unrecognized token '{token}': was expecting {_VALUE_EXPECTED}"
        column = exc.colno + len(token)
    else:
        detail = f"Unexpected character {_char_text(char)}: expected a valid value {_VALUE_EXPECTED}"
    return kafka_error(detail + _LOCATION.format(line=exc.lineno, column=column))


def read_json_tree(text: str) -> Any:
    """`Json.tryParseFull`: Jackson's readTree. Empty input fails; blank input is a
    MissingNode; anything after the first value is ignored (FAIL_ON_TRAILING_TOKENS is off)."""
    if text == "":
        raise kafka_error("The input string shouldn't be empty")
    start = 0
    while start < len(text) and text[start] in _WHITESPACE:
        start += 1
    if start == len(text):
        return MISSING
    try:
        value, _ = _DECODER.raw_decode(text, start)
    except _NonStandardToken as exc:
        raise kafka_error(f"Non-standard token '{exc.token}': enable `JsonReadFeature.ALLOW_NON_NUMERIC_NUMBERS` to allow") from None
    except json.JSONDecodeError as exc:
        raise _syntax_error(text, exc) from None
    return value


def _as_object(value: Any) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise kafka_error(f"Expected JSON object, received {jackson_text(value)}")
    return value


def _as_array(value: Any) -> list[Any]:
    if not isinstance(value, list):
        raise kafka_error(f"Expected JSON array, received {jackson_text(value)}")
    return value


def _field(obj: dict[str, Any], name: str) -> Any:
    if name not in obj:
        raise kafka_error(f"No such field exists: `{name}`")
    return obj[name]


def _decode_int(value: Any) -> int:
    """DecodeJson.DecodeInteger: Jackson's isInt (a JSON integer within int32)."""
    if type(value) is not int or not INT32_MIN <= value <= INT32_MAX:
        raise kafka_error(f"Expected `Integer` value, received {jackson_text(value)}")
    return value


def _decode_string(value: Any) -> str:
    if not isinstance(value, str):
        raise kafka_error(f"Expected `String` value, received {jackson_text(value)}")
    return value


def _decode_list(value: Any, decode: Callable[[Any], T]) -> list[T]:
    if not isinstance(value, list):
        raise kafka_error(f"Expected `JSON array` value, received {jackson_text(value)}")
    return [decode(item) for item in value]


def _version(obj: dict[str, Any]) -> int:
    version = _decode_int(obj["version"]) if "version" in obj else 1
    if version != 1:
        raise kafka_error(f"Not supported version field value {version}")
    return version


# The files -----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PlanEntry:
    topic: str
    partition: int
    replicas: tuple[int, ...]
    log_dirs: tuple[str, ...]

    @property
    def tp(self) -> TopicPartition:
        return (self.topic, self.partition)


@dataclass(frozen=True)
class ReassignmentPlan:
    """A reassignment file: its partitions in file order (duplicates kept, so they can be
    reported) and the explicit log directories (the last entry for a replica wins)."""

    entries: tuple[PlanEntry, ...]
    replica_dirs: Mapping[Replica, str] = field(default_factory=dict)

    def targets(self) -> dict[TopicPartition, tuple[int, ...]]:
        """Partition -> target replicas, the last entry for a partition winning (a HashMap)."""
        return {entry.tp: entry.replicas for entry in self.entries}


def parse_reassignment_json(text: str) -> ReassignmentPlan:
    """A reassignment file (§1.4), with Kafka's message for each malformed case."""
    obj = _as_object(read_json_tree(text))
    _version(obj)
    entries: list[PlanEntry] = []
    replica_dirs: dict[Replica, str] = {}
    if "partitions" in obj:
        for item in _as_array(obj["partitions"]):
            fields = _as_object(item)
            topic = _decode_string(_field(fields, "topic"))
            partition = _decode_int(_field(fields, "partition"))
            replicas = _decode_list(_field(fields, "replicas"), _decode_int)
            log_dirs = _decode_list(fields["log_dirs"], _decode_string) if "log_dirs" in fields else [ANY_LOG_DIR] * len(replicas)
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
    obj = _as_object(tree)
    _version(obj)
    if "topics" not in obj:
        return []
    return [_decode_string(_field(_as_object(item), "topic")) for item in _as_array(obj["topics"])]


def parse_broker_list(text: str) -> list[int]:
    """`--broker-list 1,2,3`: String.split and Integer.parseInt, as Kafka does."""
    return [parse_java_int(piece) for piece in java_split(text)]


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


# AdminUtils.assignReplicasToBrokers (§2) ---------------------------------------------------------------


@dataclass(frozen=True)
class BrokerMetadata:
    id: int
    rack: str | None = None


class AssignmentError(UserError):
    """AdminUtils' InvalidPartitions/InvalidReplicationFactor/AdminOperation exceptions."""

    def __init__(self, message: str) -> None:
        super().__init__(f"Error: {message}")
        self.kafka_message = message


def _replica_index(first: int, shift: int, j: int, n: int) -> int:
    return (first + 1 + (shift + j) % (n - 1)) % n


def rack_alternated_brokers(racks: Mapping[int, str]) -> list[int]:
    """getRackAlternatedBrokerList: round-robin over the racks (sorted), ids sorted within each."""
    by_rack: dict[str, list[int]] = {}
    for broker, rack in racks.items():
        by_rack.setdefault(rack, []).append(broker)
    names = sorted(by_rack, key=java_string_key)
    queues = {rack: sorted(by_rack[rack]) for rack in names}
    result: list[int] = []
    index = 0
    while len(result) < len(racks):
        queue = queues[names[index]]
        if queue:
            result.append(queue.pop(0))
        index = (index + 1) % len(names)
    return result


def assign_replicas_to_brokers(
    brokers: Sequence[BrokerMetadata],
    partitions: int,
    replication_factor: int,
    *,
    fixed_start_index: int = -1,
    start_partition_id: int = -1,
    rng: JavaRandom | None = None,
    fixed_shift: int | None = None,
) -> dict[int, list[int]]:
    """AdminUtils.assignReplicasToBrokers. A negative `fixed_start_index` draws the start
    index and then the shift from `rng` (Kafka's static Random); otherwise both are
    `fixed_start_index`, unless `fixed_shift` gives the shift (for tests)."""
    if partitions <= 0:
        raise AssignmentError("Number of partitions must be larger than 0.")
    if replication_factor <= 0:
        raise AssignmentError("Replication factor must be larger than 0.")
    if replication_factor > len(brokers):
        raise AssignmentError(f"Replication factor: {replication_factor} larger than available brokers: {len(brokers)}.")
    if all(b.rack is None for b in brokers):
        ordered = [b.id for b in brokers]
        racks: dict[int, str] = {}
    else:
        if any(b.rack is None for b in brokers):
            raise AssignmentError("Not all brokers have rack information for replica rack aware assignment.")
        racks = {b.id: b.rack for b in brokers}  # type: ignore[misc]
        ordered = rack_alternated_brokers(racks)
    n = len(ordered)

    def draw() -> int:
        if fixed_start_index >= 0:
            return fixed_start_index
        if rng is None:
            raise ValueError("a random start needs rng")
        return rng.next_int(n)

    start_index = draw()
    shift = draw() if fixed_shift is None else fixed_shift
    rack_count = len(set(racks.values()))
    result: dict[int, list[int]] = {}
    partition_id = max(0, start_partition_id)
    for _ in range(partitions):
        if partition_id > 0 and partition_id % n == 0:
            shift += 1
        first = (partition_id + start_index) % n
        replicas = [ordered[first]]
        if not racks:
            replicas.extend(ordered[_replica_index(first, shift, j, n)] for j in range(replication_factor - 1))
        else:
            used_racks = {racks[ordered[first]]}
            used_brokers = {ordered[first]}
            k = 0
            for _ in range(replication_factor - 1):
                while True:
                    broker = ordered[_replica_index(first, shift * rack_count, k, n)]
                    rack = racks[broker]
                    k += 1
                    if (rack not in used_racks or len(used_racks) == rack_count) and (
                        broker not in used_brokers or len(used_brokers) == n
                    ):
                        replicas.append(broker)
                        used_racks.add(rack)
                        used_brokers.add(broker)
                        break
        result[partition_id] = replicas
        partition_id += 1
    return result


# Reading the cluster as the admin client sees it ----------------------------------------------------------


def live_brokers(image: Image) -> list[int]:
    """describeCluster().nodes(): the unfenced brokers, in the cluster's order (ascending id)."""
    return [b for b in sorted(image.cluster.brokers) if not image.cluster.brokers[b].fenced]


def _unknown_topic(topic: str) -> UserError:
    return kafka_error(f"{UNKNOWN_TOPIC_EXCEPTION}: Topic {topic} not found.")


def _replica_assignment_for_topics(image: Image, topics: Iterable[str]) -> dict[TopicPartition, list[int]]:
    """getReplicaAssignmentForTopics: every partition of the topics (the first unknown topic,
    in HashMap order, fails the whole call)."""
    result: dict[TopicPartition, list[int]] = {}
    for name in hashmap_order(list(dict.fromkeys(topics)), string_hash):
        topic = image.topics.by_name.get(name)
        if topic is None:
            raise _unknown_topic(name)
        for partition_id in sorted(topic.partitions):
            result[(name, partition_id)] = list(topic.partitions[partition_id].replicas)
    return result


def _replica_assignment_for_partitions(image: Image, partitions: Sequence[TopicPartition]) -> dict[TopicPartition, list[int]]:
    """getReplicaAssignmentForPartitions: unknown topics, then missing partitions (all named)."""
    topics = hashmap_order(list(dict.fromkeys(tp[0] for tp in partitions)), string_hash)
    for name in topics:
        if name not in image.topics.by_name:
            raise _unknown_topic(name)
    found: dict[TopicPartition, list[int]] = {}
    for tp in partitions:
        p = image.topics.by_name[tp[0]].partitions.get(tp[1])
        if p is not None:
            found[tp] = list(p.replicas)
    missing = [tp for tp in java_set_order(partitions, tp_hash, presized_capacity(len(partitions))) if tp not in found]
    if missing:
        raise kafka_error(f"{UNKNOWN_TOPIC_EXCEPTION}: Unable to find partition: {', '.join(tp_text(tp) for tp in missing)}")
    return found


def _directory_of_path(image: Image, broker: int, path: str) -> str | None:
    for log_dir in image.cluster.log_dirs.get(broker, ()):
        if log_dir.path == path or log_dir.path.rstrip("/") == path.rstrip("/"):
            return log_dir.directory_id
    return None


def _path_of(image: Image, broker: int, directory_id: str) -> str:
    return image.cluster.path_of(broker, directory_id) or DirectoryId.describe(directory_id) or directory_id


# generate (§1.6) ---------------------------------------------------------------------------------------


def calculate_assignment(
    current: Mapping[TopicPartition, Sequence[int]],
    brokers: Sequence[BrokerMetadata],
    rng: JavaRandom | None,
    fixed_start_index: int = -1,
) -> dict[TopicPartition, list[int]]:
    """calculateAssignment: per topic (in HashMap order, which decides who draws first), the
    topic's partition count and the RF of its first entry in HashMap order."""
    grouped: dict[str, list[TopicPartition]] = {}
    for tp in hashmap_order(list(current), tp_hash):
        grouped.setdefault(tp[0], []).append(tp)
    proposed: dict[TopicPartition, list[int]] = {}
    for topic in hashmap_order(list(grouped), string_hash):
        entries = grouped[topic]
        assigned = assign_replicas_to_brokers(
            brokers, len(entries), len(current[entries[0]]), fixed_start_index=fixed_start_index, rng=rng
        )
        for partition_id, replicas in assigned.items():
            proposed[(topic, partition_id)] = replicas
    return proposed


def generate(
    image: Image,
    topics_json: str,
    broker_list: str,
    *,
    disable_rack_aware: bool = False,
    seed: int | None = None,
    fixed_start_index: int = -1,
) -> ToolReport:
    """Propose an assignment of the topics' partitions over the listed brokers."""
    brokers_to_use = parse_broker_list(broker_list)
    duplicated = java_duplicates(brokers_to_use, int_hash)
    if duplicated:
        raise kafka_error(f"Broker list contains duplicate entries: {java_list(duplicated)}")
    topics = parse_topics_json(topics_json)
    duplicated_topics = java_duplicates(topics, string_hash)
    if duplicated_topics:
        raise kafka_error(f"List of topics to reassign contains duplicate entries: {java_list(duplicated_topics)}")
    current = _replica_assignment_for_topics(image, topics)
    # Brokers the cluster does not know are dropped without a word, as Kafka does.
    wanted = set(brokers_to_use)
    rack_aware = not disable_rack_aware
    usable = [
        BrokerMetadata(b, image.cluster.brokers[b].rack if rack_aware else None) for b in live_brokers(image) if b in wanted
    ]
    rackless = sum(1 for b in usable if b.rack is None)
    if rack_aware and rackless not in (0, len(usable)):
        raise kafka_error(
            "Not all brokers have rack information. Add --disable-rack-aware in command line to make replica "
            "assignment without rack information."
        )
    if seed is None:
        seed = int.from_bytes(os.urandom(8), "big", signed=True)
    proposed = calculate_assignment(current, usable, JavaRandom(seed), fixed_start_index)
    current_json, proposed_json = format_reassignment_json(current), format_reassignment_json(proposed)
    lines = ("Current partition replica assignment", current_json, "", "Proposed partition reassignment configuration", proposed_json)
    data = {"current": reassignment_document(current), "proposed": reassignment_document(proposed), "seed": seed}
    return ToolReport(lines, data)


# Throttles (§1.11) ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PartitionMove:
    sources: frozenset[int]
    destinations: frozenset[int]


def proposed_move_map(
    ongoing: Iterable[OngoingReassignment],
    proposed: Mapping[TopicPartition, Sequence[int]],
    current: Mapping[TopicPartition, Sequence[int]],
) -> dict[str, dict[int, PartitionMove]]:
    """calculateProposedMoveMap: the running reassignments, then each proposal's sources
    (the running move's, else the current replicas) and destinations."""
    moves: dict[str, dict[int, PartitionMove]] = {}
    for r in ongoing:
        moves.setdefault(r.topic, {})[r.partition] = PartitionMove(
            frozenset(r.replicas) - frozenset(r.adding), frozenset(r.adding)
        )
    for tp, replicas in proposed.items():
        partition_moves = moves.setdefault(tp[0], {})
        if tp[1] in partition_moves:
            sources = partition_moves[tp[1]].sources
        elif tp in current:
            sources = frozenset(current[tp])
        else:
            raise kafka_error(f"Trying to reassign a topic partition {tp_text(tp)} with 0 replicas")
        partition_moves[tp[1]] = PartitionMove(sources, frozenset(replicas) - sources)
    return moves


def leader_throttles(moves: Mapping[str, Mapping[int, PartitionMove]]) -> dict[str, str]:
    """`<partition>:<source>` for every source, sorted as strings (a TreeSet<String>)."""
    return {
        topic: csv(sorted({f"{p}:{s}" for p, move in parts.items() for s in move.sources}, key=java_string_key))
        for topic, parts in moves.items()
    }


def follower_throttles(moves: Mapping[str, Mapping[int, PartitionMove]]) -> dict[str, str]:
    """`<partition>:<destination>` for destinations that are not sources (may be empty)."""
    return {
        topic: csv(
            sorted({f"{p}:{d}" for p, move in parts.items() for d in move.destinations if d not in move.sources}, key=java_string_key)
        )
        for topic, parts in moves.items()
    }


def reassigning_brokers(moves: Mapping[str, Mapping[int, PartitionMove]]) -> list[int]:
    return sorted({b for parts in moves.values() for move in parts.values() for b in move.sources | move.destinations})


def inter_broker_throttle_changes(moves: Mapping[str, Mapping[int, PartitionMove]], throttle: int) -> list[ConfigChange]:
    leaders, followers = leader_throttles(moves), follower_throttles(moves)
    changes = []
    for topic in sorted(moves, key=java_string_key):
        changes.append(ConfigChange(CONFIG_RESOURCE_TOPIC, topic, LEADER_THROTTLED_REPLICAS, leaders[topic]))
        changes.append(ConfigChange(CONFIG_RESOURCE_TOPIC, topic, FOLLOWER_THROTTLED_REPLICAS, followers[topic]))
    for broker in reassigning_brokers(moves):
        for name in (LEADER_THROTTLED_RATE, FOLLOWER_THROTTLED_RATE):
            changes.append(ConfigChange(CONFIG_RESOURCE_BROKER, str(broker), name, str(throttle)))
    return changes


def _clear_throttles(image: Image, entries: Sequence[PlanEntry]) -> tuple[list[str], list[ConfigChange]]:
    """clearAllThrottles: every cluster broker and every broker of the file; the file's topics."""
    active = hashmap_order(live_brokers(image), int_hash)
    brokers = java_set_order(active + [r for entry in entries for r in entry.replicas], int_hash, presized_capacity(len(active)))
    topics = hashmap_order([entry.topic for entry in entries], string_hash)
    lines = [
        f"Clearing broker-level throttles on broker{'' if len(brokers) == 1 else 's'} {csv(brokers)}",
        f"Clearing topic-level throttles on topic{'' if len(topics) == 1 else 's'} {csv(topics)}",
    ]
    changes = [ConfigChange(CONFIG_RESOURCE_BROKER, str(b), name, None) for b in brokers for name in BROKER_THROTTLES]
    # Deleting a config of a topic that does not exist is not an error here: there is nothing to clear.
    changes += [
        ConfigChange(CONFIG_RESOURCE_TOPIC, t, name, None) for t in topics if t in image.topics.by_name for name in TOPIC_THROTTLES
    ]
    return lines, changes


def _throttle_json(changes: Sequence[ConfigChange]) -> dict[str, Any]:
    return {
        "brokers": sorted({int(c.resource_name) for c in changes if c.resource_type == CONFIG_RESOURCE_BROKER}),
        "topics": sorted({c.resource_name for c in changes if c.resource_type == CONFIG_RESOURCE_TOPIC}),
    }


# execute (§1.7) ------------------------------------------------------------------------------------------


def _moved_line(path: str, replica: Replica) -> str:
    # Kafka's line ends with a space.
    return f"Successfully started moving log directory to {path} for replica {replica[0]}-{replica[1]} with broker {replica[2]} "


def _replica_key(replica: Replica) -> tuple[int, bytes, int]:
    return replica[2], java_string_key(replica[0]), replica[1]


def _resolve_dirs(image: Image, replica_dirs: Mapping[Replica, str]) -> dict[Replica, str]:
    """kjbod knows every broker's directories: a path that is not one of them is refused up
    front (Kafka would fail later, at alterReplicaLogDirs)."""
    resolved = {}
    for replica in sorted(replica_dirs, key=_replica_key):
        path = replica_dirs[replica]
        directory = _directory_of_path(image, replica[2], path)
        if directory is None:
            known = [d.path for d in image.cluster.log_dirs.get(replica[2], ())]
            raise UserError(
                f"Log directory {path} (for replica {replica[0]}-{replica[1]}-{replica[2]}) is not a log directory of broker "
                f"{replica[2]}; its directories are: {', '.join(known) or 'none known'}"
            )
        resolved[replica] = directory
    return resolved


def execute(
    controller: Controller,
    plan: ReassignmentPlan,
    *,
    throttle: int = -1,
    log_dir_throttle: int = -1,
    additional: bool = False,
) -> ControllerResult[ToolReport]:
    """Start the reassignment of `plan` (executeAssignment), as one commit: the throttles, the
    reassignments and the log-directory moves."""
    validate_execute_plan(plan)
    image = controller.image
    proposed = plan.targets()
    ongoing = controller.reassignment.list_partition_reassignments()
    if ongoing and not additional:
        raise UserError(CANNOT_EXECUTE)
    live = set(live_brokers(image))
    for broker in hashmap_order([r for replicas in proposed.values() for r in replicas], int_hash):
        if broker not in live:
            raise kafka_error(f"Unknown broker id {broker}")
    current = _replica_assignment_for_partitions(image, hashmap_order(list(proposed), tp_hash))
    directories = _resolve_dirs(image, plan.replica_dirs)

    rollback = {tp: current[tp] for tp in proposed}
    lines = [
        "Current partition replica assignment",
        "",
        format_reassignment_json(rollback),
        "",
        "Save this to use as the --reassignment-json-file option during rollback",
    ]
    records: list[Record] = []
    changes: list[ConfigChange] = []
    if throttle >= 0 or log_dir_throttle >= 0:
        lines.append(VERIFY_WARNING)
        if throttle >= 0:
            changes += inter_broker_throttle_changes(proposed_move_map(ongoing, proposed, current), throttle)
            lines.append(f"The inter-broker throttle limit was set to {throttle} B/s")
        if log_dir_throttle >= 0:
            moving = sorted({replica[2] for replica in plan.replica_dirs})
            changes += [ConfigChange(CONFIG_RESOURCE_BROKER, str(b), LOG_DIRS_THROTTLED_RATE, str(log_dir_throttle)) for b in moving]
            lines.append(f"The replica-alter-dir throttle limit was set to {log_dir_throttle} B/s")
        records += controller.reassignment.alter_configs(changes).records

    altered = controller.reassignment.alter_partition_reassignments(
        [ReassignmentTarget(tp[0], tp[1], tuple(replicas)) for tp, replicas in proposed.items()]
    )
    records += altered.records
    failed = sorted((r for r in altered.response if not r.succeeded), key=lambda r: tp_key((r.topic, r.partition)))
    data: dict[str, Any] = {
        "currentAssignment": reassignment_document(rollback),
        "interBrokerThrottle": throttle if throttle >= 0 else None,
        "replicaAlterLogDirsThrottle": log_dir_throttle if log_dir_throttle >= 0 else None,
        "errors": [
            {"topic": r.topic, "partition": r.partition, "error": r.error.error.name, "message": exception_message(r.error)} for r in failed
        ],
        "started": [],
        "logDirMoves": [],
    }
    if failed:
        error = "Error reassigning partition(s):\n" + "\n".join(f"{r.topic}-{r.partition}: {exception_message(r.error)}" for r in failed)
        return ControllerResult.atomic_of(records, ToolReport(tuple(lines), data, error))
    started = sorted(proposed, key=tp_key)
    lines.append(f"Successfully started partition reassignment{'s' if len(started) > 1 else ''} for {csv(tp_text(tp) for tp in started)}")
    data["started"] = [tp_text(tp) for tp in started]

    if directories:
        after = replay_all(image, records)
        moves = [ReplicaDirMove(r[0], r[1], r[2], directories[r]) for r in directories]
        moved = Controller(after).reassignment.alter_replica_log_dirs(moves)
        for result in moved.response:
            if not result.succeeded:
                m = result.move
                raise kafka_error(f"Failed to alter dir for {m.topic}-{m.partition}-{m.broker}: {exception_message(result.error)}")
        records += moved.records
        for result in moved.response:
            m = result.move
            path = plan.replica_dirs[(m.topic, m.partition, m.broker)]
            lines.append(_moved_line(path, (m.topic, m.partition, m.broker)))
            data["logDirMoves"].append({"topic": m.topic, "partition": m.partition, "broker": m.broker, "logDir": path, "action": result.action})
    return ControllerResult.atomic_of(records, ToolReport(tuple(lines), data))


# verify (§1.8) -------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PartitionState:
    current: tuple[int, ...]
    target: tuple[int, ...]
    done: bool

    def line(self, tp: TopicPartition) -> str:
        if not self.done:
            return f"Reassignment of partition {tp_text(tp)} is still in progress."
        if self.current == self.target:
            return f"Reassignment of partition {tp_text(tp)} is completed."
        return (
            f"There is no active reassignment of partition {tp_text(tp)}, but replica set is "
            f"{csv(self.current)} rather than {csv(self.target)}."
        )

    @property
    def name(self) -> str:
        if not self.done:
            return "inProgress"
        return "completed" if self.current == self.target else "notReassigning"


@dataclass(frozen=True)
class LogDirState:
    """A replica's LogDirMoveState: completed, cancelled, active, missingLogDir, missingReplica."""

    kind: str
    target: str
    current: str | None = None
    future: str | None = None

    @property
    def done(self) -> bool:
        return self.kind in ("completed", "cancelled")

    def line(self, replica: Replica) -> str:
        topic, partition, broker = replica
        tp = f"{topic}-{partition}"
        if self.kind == "missingLogDir":
            return f"Partition {tp} is not found in any live log dir on broker {broker}. There is likely an offline log directory on the broker."
        if self.kind == "missingReplica":
            return f"Partition {tp} cannot be found in any live log directory on broker {broker}."
        if self.kind == "active":
            if self.future == self.target:
                return f"Reassignment of replica {tp}-{broker} is still in progress."
            return f"Partition {tp} on broker {broker} is being moved to log dir {self.future} instead of {self.target}."
        if self.kind == "cancelled":
            return f"Partition {tp} on broker {broker} is not being moved from log dir {self.current} to {self.target}."
        return f"Reassignment of replica {tp}-{broker} completed successfully."


def partition_states(image: Image, ongoing: Mapping[TopicPartition, OngoingReassignment], targets: Mapping[TopicPartition, tuple[int, ...]]) -> dict[TopicPartition, PartitionState]:
    """findPartitionReassignmentStates. A partition the topic does not have (including
    partition == count, which Kafka's `size < partition` check lets through to an index error)
    is reported like an unknown topic: no replicas."""
    states = {}
    for tp, target in targets.items():
        if tp in ongoing:
            states[tp] = PartitionState(ongoing[tp].replicas, target, False)
            continue
        topic = image.topics.by_name.get(tp[0])
        p = topic.partitions.get(tp[1]) if topic else None
        states[tp] = PartitionState(p.replicas if p else (), target, True)
    return states


def log_dir_state(image: Image, replica: Replica, target_path: str) -> LogDirState:
    """What describeReplicaLogDirs tells the tool about one replica. kjbod reads directories by
    id: a replica whose directory is offline, LOST or not yet known is in no live directory."""
    topic_name, partition_id, broker_id = replica
    broker = image.cluster.brokers.get(broker_id)
    if broker is None:
        return LogDirState("missingReplica", target_path)
    topic = image.topics.by_name.get(topic_name)
    p = topic.partitions.get(partition_id) if topic else None
    if topic is None or p is None or broker_id not in p.replicas:
        return LogDirState("missingLogDir", target_path)
    current = p.directory(broker_id)
    if DirectoryId.reserved(current) or not broker.has_online_dir(current):
        return LogDirState("missingLogDir", target_path)
    current_path = _path_of(image, broker_id, current)
    target = _directory_of_path(image, broker_id, target_path)
    future = topic.future_replica(partition_id, broker_id)
    if future is None:
        same = current == target if target is not None else current_path == target_path
        return LogDirState("completed" if same else "cancelled", target_path, current_path)
    future_dir = future.directory_id or DirectoryId.UNASSIGNED
    future_path = target_path if future_dir == target else _path_of(image, broker_id, future_dir)
    return LogDirState("active", target_path, current_path, future_path)


def _percent(copied: int, total: int) -> str:
    return f"{100.0 if total == 0 else copied * 100 / total:.1f}%"


def _progress(image: Image, in_progress: Sequence[TopicPartition], moving: Sequence[Replica]) -> tuple[list[str], dict[str, Any]]:
    """kjbod's own lines after Kafka's: bytes copied per partition and overall, and the time
    left, from the copy model run forward on this state (what `clock advance --until-idle`
    will do), nothing written."""
    if not in_progress and not moving:
        return [], {"partitions": [], "copiedBytes": 0, "totalBytes": 0, "estimatedTimeLeftMs": None, "blocked": []}
    wanted_partitions = set(in_progress)
    wanted_moves = set(moving)
    now = copies(image)
    per_partition: dict[TopicPartition, list] = {tp: [] for tp in sorted(set(in_progress) | {(m[0], m[1]) for m in moving}, key=tp_key)}
    for c in now:
        tp = (c.topic, c.partition)
        if (not c.future and tp in wanted_partitions) or (c.future and (c.topic, c.partition, c.broker) in wanted_moves):
            per_partition[tp].append(c)
    run = simulate(image, horizon_ms=HORIZON_MS)
    finished: dict[tuple, int] = {}
    for event in run.completions:
        if event.reassignment_completed:
            finished[(event.topic, event.partition)] = event.time_ms
        if event.future:
            finished[(event.topic, event.partition, event.broker)] = event.time_ms
    pending = [*in_progress, *moving]
    times = [finished.get(item) for item in pending]
    lines = []
    partitions_json = []
    copied_all = total_all = 0
    blocked_all = []
    for tp, cs in per_partition.items():
        copied, total = sum(c.copied for c in cs), sum(c.total for c in cs)
        copied_all, total_all = copied_all + copied, total_all + total
        blocked = [c for c in cs if c.blocked]
        blocked_all += blocked
        line = f"Progress of partition {tp_text(tp)}: {human_bytes(copied)} of {human_bytes(total)} copied ({_percent(copied, total)})."
        if blocked:
            line += " Waiting: " + "; ".join(_copy_label(image, c) + f": {c.blocked}" for c in blocked) + "."
        lines.append(line)
        partitions_json.append(
            {
                "topic": tp[0],
                "partition": tp[1],
                "copiedBytes": copied,
                "totalBytes": total,
                "copies": [copy_json(image, c) for c in cs],
            }
        )
    if all(t is not None for t in times):
        left: int | None = max(times) - image.time_ms  # type: ignore[type-var, operator]
        eta = f"Estimated time left: {format_duration(left)}."  # type: ignore[arg-type]
    else:
        left = None
        if run.idle:
            eta = "Estimated time left: unknown, until the waiting copies can progress."
        else:
            eta = f"Estimated time left: more than {format_duration(HORIZON_MS)} at the current rates."
    lines.append(f"Total: {human_bytes(copied_all)} of {human_bytes(total_all)} copied ({_percent(copied_all, total_all)}). {eta}")
    data = {
        "partitions": partitions_json,
        "copiedBytes": copied_all,
        "totalBytes": total_all,
        "estimatedTimeLeftMs": left,
        "blocked": [copy_json(image, c) for c in blocked_all],
    }
    return lines, data


def _copy_label(image: Image, c) -> str:
    if c.future:
        return f"the move on broker {c.broker} to {_path_of(image, c.broker, c.directory)}"
    return f"the copy to broker {c.broker}"


def copy_json(image: Image, c) -> dict[str, Any]:
    return {
        "topic": c.topic,
        "partition": c.partition,
        "broker": c.broker,
        "kind": "future" if c.future else "follower",
        "source": c.source,
        "directory": _path_of(image, c.broker, c.directory),
        "copiedBytes": c.copied,
        "totalBytes": c.total,
        "bytesPerSecond": float(c.rate),
        "blocked": c.blocked,
    }


def verify(controller: Controller, plan: ReassignmentPlan, *, preserve_throttles: bool = False) -> ControllerResult[ToolReport]:
    """Report the plan's status (Kafka's lines, then kjbod's progress and estimate); once
    nothing is in progress anywhere, clear the throttles unless `preserve_throttles`."""
    image = controller.image
    ongoing = {(r.topic, r.partition): r for r in controller.reassignment.list_partition_reassignments()}
    targets = plan.targets()
    states = partition_states(image, ongoing, targets)
    lines = ["Status of partition reassignment:"]
    lines += [states[tp].line(tp) for tp in sorted(states, key=tp_key)]
    dir_states = {replica: log_dir_state(image, replica, path) for replica, path in plan.replica_dirs.items()}
    replicas = sorted(dir_states, key=_replica_key)
    # Kafka prints the (possibly empty) log-dir block with println: an empty line when there is none.
    lines += [dir_states[r].line(r) for r in replicas] or [""]
    # Moves kjbod knows are under way: active ones, and future replicas left waiting (for
    # example on a failed source directory, which Kafka reports as "not found").
    moving = [
        r for r in replicas
        if not dir_states[r].done and r[0] in image.topics.by_name
        and image.topics.by_name[r[0]].future_replica(r[1], r[2]) is not None
    ]
    progress_lines, progress = _progress(image, [tp for tp in sorted(states, key=tp_key) if not states[tp].done], moving)
    lines += progress_lines
    records: list[Record] = []
    cleared = None
    if not ongoing and all(s.done for s in dir_states.values()) and not preserve_throttles:
        clear_lines, changes = _clear_throttles(image, plan.entries)
        lines += clear_lines
        records += controller.reassignment.alter_configs(changes).records
        cleared = _throttle_json(changes)
    data = {
        "partitions": [
            {"topic": tp[0], "partition": tp[1], "state": states[tp].name, "currentReplicas": list(states[tp].current), "targetReplicas": list(states[tp].target)}
            for tp in sorted(states, key=tp_key)
        ],
        "replicaLogDirs": [
            {
                "topic": r[0], "partition": r[1], "broker": r[2], "state": dir_states[r].kind,
                "targetLogDir": dir_states[r].target, "currentLogDir": dir_states[r].current, "futureLogDir": dir_states[r].future,
            }
            for r in replicas
        ],
        "progress": progress,
        "clearedThrottles": cleared,
    }
    return ControllerResult.atomic_of(records, ToolReport(tuple(lines), data))


# cancel (§1.9) --------------------------------------------------------------------------------------------


def cancel(controller: Controller, plan: ReassignmentPlan, *, preserve_throttles: bool = False) -> ControllerResult[ToolReport]:
    """Cancel the plan's running reassignments and log-directory moves, then clear the
    throttles (unless `preserve_throttles`)."""
    image = controller.image
    listed = controller.reassignment.list_partition_reassignments([entry.tp for entry in plan.entries])
    # The intended rule (the Scala tool's): cancel every partition with replicas being added or
    # removed. Kafka's Java port selects `adding empty OR removing non-empty` instead, so it
    # skips reassignments that only add replicas (an RF increase); kjbod does not.
    chosen = [r for r in listed if r.adding or r.removing]
    lines: list[str] = []
    records: list[Record] = []
    data: dict[str, Any] = {"cancelled": [], "errors": [], "logDirMovesCancelled": [], "clearedThrottles": None}
    if chosen:
        result = controller.reassignment.alter_partition_reassignments([ReassignmentTarget(r.topic, r.partition, None) for r in chosen])
        records += result.records
        failed = sorted((r for r in result.response if not r.succeeded), key=lambda r: tp_key((r.topic, r.partition)))
        if failed:
            data["errors"] = [
                {"topic": r.topic, "partition": r.partition, "error": r.error.error.name, "message": exception_message(r.error)} for r in failed
            ]
            error = f"Error cancelling partition reassignment{'' if len(failed) == 1 else 's'} for:\n" + "\n".join(
                f"{r.topic}-{r.partition}: {exception_message(r.error)}" for r in failed
            )
            return ControllerResult.atomic_of(records, ToolReport((), data, error))
        names = [tp_text((r.topic, r.partition)) for r in chosen]
        lines.append(f"Successfully cancelled partition reassignment{'' if len(chosen) == 1 else 's'} for: {csv(names)}")
        data["cancelled"] = names
    else:
        lines.append("None of the specified partition reassignments are active.")
    after = replay_all(image, records)
    back: list[ReplicaDirMove] = []
    for replica in sorted(plan.replica_dirs, key=_replica_key):
        state = log_dir_state(after, replica, plan.replica_dirs[replica])
        if state.kind == "active":
            p = after.topics.by_name[replica[0]].partitions[replica[1]]
            back.append(ReplicaDirMove(replica[0], replica[1], replica[2], p.directory(replica[2])))
    if back:
        moved = Controller(after).reassignment.alter_replica_log_dirs(back)
        records += moved.records
        for result in moved.response:
            m = result.move
            if not result.succeeded:
                raise kafka_error(f"Failed to alter dir for {m.topic}-{m.partition}-{m.broker}: {exception_message(result.error)}")
            path = _path_of(after, m.broker, m.directory_id)
            lines.append(_moved_line(path, (m.topic, m.partition, m.broker)))
            data["logDirMovesCancelled"].append({"topic": m.topic, "partition": m.partition, "broker": m.broker, "logDir": path})
        after = replay_all(after, moved.records)
    else:
        # Kafka prints this without a line break, so its next line runs onto it; kjbod ends the line.
        lines.append("None of the specified partition moves are active.")
    if not preserve_throttles:
        clear_lines, changes = _clear_throttles(after, plan.entries)
        lines += clear_lines
        records += Controller(after).reassignment.alter_configs(changes).records
        data["clearedThrottles"] = _throttle_json(changes)
    return ControllerResult.atomic_of(records, ToolReport(tuple(lines), data))


# list (§1.10) ---------------------------------------------------------------------------------------------


def list_reassignments(image: Image) -> ToolReport:
    ongoing = Controller(image).reassignment.list_partition_reassignments()
    if not ongoing:
        return ToolReport(("No partition reassignments found.",), {"reassignments": []})
    lines = ["Current partition reassignments:"]
    for r in sorted(ongoing, key=lambda r: tp_key((r.topic, r.partition))):
        line = f"{r.topic}-{r.partition}: replicas: {csv(r.replicas)}."
        if r.adding:
            line += f" adding: {csv(r.adding)}."
        if r.removing:
            line += f" removing: {csv(r.removing)}."
        lines.append(line)
    data = {
        "reassignments": [
            {"topic": r.topic, "partition": r.partition, "replicas": list(r.replicas), "adding": list(r.adding), "removing": list(r.removing)}
            for r in ongoing
        ]
    }
    return ToolReport(tuple(lines), data)
