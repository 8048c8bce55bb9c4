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

import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kjbod.common.java import (
    JavaRandom,
    csv,
    Replica,
    TopicPartition,
    hashmap_order,
    int_hash,
    java_duplicates,
    java_list,
    java_string_key,
    kafka_error,
    presized_capacity,
    string_hash,
    tp_hash,
    tp_key,
    tp_text,
    tpr_hash,
)
from kjbod.common.kafka_uuid import DirectoryId
from kjbod.controller import Controller, ControllerResult
from kjbod.simulation.clock import format_duration
from kjbod.controller.errors import Errors
from kjbod.controller.result import MAX_RECORDS_PER_USER_OP
from kjbod.controller.reassignment_control import (
    ConfigChange,
    OngoingReassignment,
    ReassignmentTarget,
    ReplicaDirMove,
    ReplicaDirResult,
    exception_message,
)
from kjbod.common.kafka_configs import (
    BROKER_THROTTLES,
    TOPIC_THROTTLES,
    FOLLOWER_THROTTLED_RATE,
    FOLLOWER_THROTTLED_REPLICAS,
    LEADER_THROTTLED_RATE,
    LEADER_THROTTLED_REPLICAS,
    LOG_DIRS_THROTTLED_RATE,
)
from kjbod.simulation.copy_model import HORIZON_MS, Copy, copies, simulate
from kjbod.common.units import human_bytes
from kjbod.errors import UserError
from kjbod.image import Image, replay_all
from kjbod.records import CONFIG_RESOURCE_BROKER, CONFIG_RESOURCE_TOPIC, Record
from kjbod.tools.reassign.assignment import BrokerMetadata, assign_replicas_to_brokers
from kjbod.tools.reassign.json_format import (
    PlanEntry,
    ReassignmentPlan,
    format_reassignment_json,
    parse_broker_list,
    parse_topics_json,
    reassignment_document,
    validate_execute_plan,
)

CANNOT_EXECUTE = (
    "Cannot execute because there is an existing partition assignment.  Use --additional to override this and "
    "create a new partition assignment in addition to the existing one. The --additional flag can also be used "
    "to change the throttle by resubmitting the current reassignment."
)
VERIFY_WARNING = "Warning: You must run --verify periodically, until the reassignment completes, to ensure the throttle is removed."
UNKNOWN_TOPIC_EXCEPTION = "org.apache.kafka.common.errors.UnknownTopicOrPartitionException"


@dataclass(frozen=True)
class ToolReport:
    """What an action prints: Kafka's stdout lines, the JSON document, and an error that ends
    the command (exit 1) after the lines are printed and the records are committed."""

    lines: tuple[str, ...]
    data: dict[str, Any]
    error: str | None = None


# Reading the cluster as the admin client sees it ----------------------------------------------------------


def live_brokers(image: Image) -> list[int]:
    """describeCluster().nodes(): the unfenced brokers, in the cluster's order (ascending id)."""
    return [b for b in sorted(image.cluster.brokers) if not image.cluster.brokers[b].fenced]


def current_replica_log_dirs(image: Image, assignment: Mapping[TopicPartition, Sequence[int]]) -> dict[Replica, str]:
    """getReplicaToLogDir (4.3.1 tools ReassignPartitionsCommand.java:1553-1571, printed by
    --generate and --execute since Kafka 4.1): the directory each replica's log is in, as its
    broker answers DescribeReplicaLogDirs; a replica on a broker that is not alive (an empty Node)
    or in no known online directory stays "any"."""
    found: dict[Replica, str] = {}
    for (topic, partition_id), replicas in assignment.items():
        registration = image.topics.by_name.get(topic)
        partition = registration.partitions.get(partition_id) if registration else None
        if partition is None:
            continue
        for broker_id in replicas:
            broker = image.cluster.brokers.get(broker_id)
            if broker is None or broker.fenced or broker_id not in partition.replicas:
                continue
            directory = partition.directory(broker_id)
            path = image.cluster.path_of(broker_id, directory) if broker.has_online_dir(directory) else None
            if path is not None:
                found[(topic, partition_id, broker_id)] = path
    return found


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
    missing = [tp for tp in hashmap_order(partitions, tp_hash, presized_capacity(len(partitions))) if tp not in found]
    if missing:
        raise kafka_error(f"{UNKNOWN_TOPIC_EXCEPTION}: Unable to find partition: {', '.join(tp_text(tp) for tp in missing)}")
    return found


def _directory_of_path(image: Image, broker: int, path: str) -> str | None:
    for log_dir in image.cluster.log_dirs.get(broker, ()):
        if log_dir.path == path or log_dir.path.rstrip("/") == path.rstrip("/"):
            return log_dir.directory_id
    return None


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
    current_dirs = current_replica_log_dirs(image, current)
    current_json, proposed_json = format_reassignment_json(current, current_dirs), format_reassignment_json(proposed)
    lines = ("Current partition replica assignment", current_json, "", "Proposed partition reassignment configuration", proposed_json)
    data = {"current": reassignment_document(current, current_dirs), "proposed": reassignment_document(proposed), "seed": seed}
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
    brokers = hashmap_order(active + [r for entry in entries for r in entry.replicas], int_hash, presized_capacity(len(active)))
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
    disallow_replication_factor_change: bool = False,
) -> ControllerResult[ToolReport]:
    """Start the reassignment of `plan` (executeAssignment), as one commit: the throttles, the
    reassignments and the log-directory moves. `disallow_replication_factor_change` is
    --disallow-replication-factor-change (KIP-860, since 4.1; 4.4.0 ReassignPartitionsCommand
    :810, :975-978): the controller refuses each partition whose replication factor would change,
    and the tool prints those partitions under "Error reassigning partition(s):" as for any refusal."""
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
    rollback_dirs = current_replica_log_dirs(image, rollback)
    lines = [
        "Current partition replica assignment",
        "",
        format_reassignment_json(rollback, rollback_dirs),
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
        [ReassignmentTarget(tp[0], tp[1], tuple(replicas)) for tp, replicas in proposed.items()],
        allow_replication_factor_change=not disallow_replication_factor_change,
    )
    records += altered.records
    failed = sorted((r for r in altered.response if not r.succeeded), key=lambda r: tp_key((r.topic, r.partition)))
    data: dict[str, Any] = {
        "currentAssignment": reassignment_document(rollback, rollback_dirs),
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
        past_the_limit = sum(1 for r in failed if r.error.error is Errors.UNKNOWN_SERVER_ERROR)
        if past_the_limit:
            error += (
                f"\n(kjbod) {past_the_limit} partition(s) failed because Kafka's controller writes at most {MAX_RECORDS_PER_USER_OP} "
                "records for one request (MAX_RECORDS_PER_USER_OP) while the partitions before them started: split the plan into "
                f"files of at most {MAX_RECORDS_PER_USER_OP} partitions and run them one after another"
            )
        return ControllerResult.atomic_of(records, ToolReport(tuple(lines), data, error))
    started = sorted(proposed, key=tp_key)
    lines.append(f"Successfully started partition reassignment{'s' if len(started) > 1 else ''} for {csv(tp_text(tp) for tp in started)}")
    data["started"] = [tp_text(tp) for tp in started]

    if directories:
        after = replay_all(image, records)
        moves = [ReplicaDirMove(r[0], r[1], r[2], directories[r]) for r in directories]
        moved = Controller(after).reassignment.alter_replica_log_dirs(moves)
        refused = [r for r in moved.response if r.error.error is Errors.INVALID_REPLICA_ASSIGNMENT]
        for result in moved.response:
            if not result.succeeded and result not in refused:
                m = result.move
                raise kafka_error(f"Failed to alter dir for {m.topic}-{m.partition}-{m.broker}: {exception_message(result.error)}")
        records += moved.records
        if refused:
            return ControllerResult.atomic_of(records, _cordoned_refusal(lines, data, refused))
        for result in moved.response:
            m = result.move
            path = plan.replica_dirs[(m.topic, m.partition, m.broker)]
            lines.append(_moved_line(path, (m.topic, m.partition, m.broker)))
            data["logDirMoves"].append({"topic": m.topic, "partition": m.partition, "broker": m.broker, "logDir": path, "action": result.action})
    return ControllerResult.atomic_of(records, ToolReport(tuple(lines), data))


def _admin_result_order(replicas: Sequence[Replica]) -> list[Replica]:
    """The order kafka-reassign-partitions reads AlterReplicaLogDirsResult.values(): a HashMap
    built with `new HashMap<>(n)`, then copied (`new HashMap<>(futures)`, Java 17's pre-sizing)
    (4.3.1 clients KafkaAdminClient.java:2930-2935, 2996)."""
    count = len(replicas)
    futures = hashmap_order(replicas, tpr_hash, capacity=1 << max(count - 1, 0).bit_length())
    return hashmap_order(futures, tpr_hash, capacity=1 << (int(count / 0.75 + 1) - 1).bit_length())


def _cordoned_refusal(lines: list[str], data: dict[str, Any], refused: Sequence[ReplicaDirResult]) -> ToolReport:
    """A log_dirs entry naming a cordoned directory: the broker refuses the move
    (ReplicaManager.alterReplicaLogDirs, 4.3.1 kafka/server/ReplicaManager.scala:1136-1137, both
    releases) after the reassignment started, and the tool fails at the first such replica it
    reads: `Error: Failed to alter dir for <topic>-<p>-<broker>` (an AdminCommandFailedException,
    ReassignPartitionsCommand 4.3.1 :1524-1543; verified on a live 4.4.0). As in Kafka, the
    reassignment and the broker's other moves stand."""
    by_replica = {(r.move.topic, r.move.partition, r.move.broker): r for r in refused}
    first = _admin_result_order(list(by_replica))[0]
    data["logDirErrors"] = [
        {"topic": t, "partition": p, "broker": b, "error": r.error.error.name, "message": r.error.message}
        for (t, p, b), r in sorted(by_replica.items(), key=lambda item: _replica_key(item[0]))
    ]
    explanation = "; ".join(
        f"{t}-{p}-{b}: {r.error.message}" for (t, p, b), r in sorted(by_replica.items(), key=lambda item: _replica_key(item[0]))
    )
    error = (
        f"Error: Failed to alter dir for {first[0]}-{first[1]}-{first[2]}\n"
        f"(kjbod) the broker refused to move a replica into a cordoned directory ({explanation}); the reassignment started "
        "as in Kafka and the broker's other directory moves stand: name another directory (or \"any\") for these replicas"
    )
    return ToolReport(tuple(lines), data, error)


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
    current_path = image.cluster.directory_label(broker_id, current)
    target = _directory_of_path(image, broker_id, target_path)
    future = topic.future_replica(partition_id, broker_id)
    if future is None:
        same = current == target if target is not None else current_path == target_path
        return LogDirState("completed" if same else "cancelled", target_path, current_path)
    future_dir = future.directory_id or DirectoryId.UNASSIGNED
    future_path = target_path if future_dir == target else image.cluster.directory_label(broker_id, future_dir)
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
    finished = run.finish_times()
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


def _copy_label(image: Image, c: Copy) -> str:
    if c.future:
        return f"the move on broker {c.broker} to {image.cluster.directory_label(c.broker, c.directory)}"
    return f"the copy to broker {c.broker}"


def copy_json(image: Image, c: Copy) -> dict[str, Any]:
    """A copy as verify shows it: a reserved directory id by its name (`clock show` shows the id)."""
    return c.to_json(image.cluster.directory_label(c.broker, c.directory))


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
        # One answer for scripts: Kafka's verify is done when no partition and no move of the
        # file is still under way (ReassignPartitionsCommand.verifyAssignment).
        "done": all(s.done for s in states.values()) and all(s.done for s in dir_states.values()),
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
            path = after.cluster.directory_label(m.broker, m.directory_id)
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
