"""`log-dirs import`: saved kafka-log-dirs output loaded into an existing cluster state
(partition sizes, replicas that are behind, future replicas), all or nothing."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kjbod.common.callbacks import gc_paused
from kjbod.common.kafka_uuid import DirectoryId
from kjbod.common.problems import Problems, ValidationFailed
from kjbod.controller import Controller, ControllerResult
from kjbod.image import Image, TopicImage
from kjbod.records import KjbodBrokerLogDirsRecord, KjbodPartitionSizeRecord, KjbodReplicaLogRecord
from kjbod.records.codec import RecordRun
from kjbod.tools.log_dirs.saved_output import ClusterShape, Observation, Observations, PartitionSizes, partition_sizes, read_log_dirs_outputs


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
    # Log directories whose capacity the output's totalBytes set or changed.
    capacities: int = 0

    def lines(self) -> list[str]:
        """The summary an operator reads (the warnings go before it, on stderr)."""
        lines = [
            f"Loaded {self.files} file(s) covering {self.brokers} broker(s): {self.partition_sizes} partition size(s), "
            f"{self.replica_logs} lagging or partial replica(s), {self.future_replicas} future replica(s) recorded; "
            f"{self.removed_entries} outdated entr{'y' if self.removed_entries == 1 else 'ies'} removed."
        ]
        if self.capacities:
            lines.append(
                f"Recorded the disk size (totalBytes) of {self.capacities} log director{'y' if self.capacities == 1 else 'ies'} as its capacity."
            )
        return lines

    def to_json(self) -> dict[str, Any]:
        return {
            "files": self.files,
            "brokers": self.brokers,
            "partitionSizes": self.partition_sizes,
            "replicaLogs": self.replica_logs,
            "futureReplicas": self.future_replicas,
            "removedEntries": self.removed_entries,
            "capacities": self.capacities,
            "warnings": self.warnings,
        }


def state_shape(image: Image, ignored: Mapping[int, frozenset[str]] | None = None) -> ClusterShape:
    """The cluster state as kafka-log-dirs output is matched against it."""
    by_name = image.topics.by_name
    directories = {
        broker_id: {d.path: d.directory_id for d in image.cluster.log_dirs.get(broker_id, ())}
        for broker_id in image.cluster.brokers
    }

    def topic(name: str) -> Mapping[int, tuple[int, ...]] | None:
        found = by_name.get(name)
        return None if found is None else {p: r.replicas for p, r in found.partitions.items()}

    return ClusterShape(directories, topic, "registered in the cluster state", "in the cluster state", ignored or {})


def plan_log_dirs_import(image: Image, paths: list[Path], *, ignored: Mapping[int, frozenset[str]] | None = None) -> LogDirsImport:
    """Records that load saved kafka-log-dirs output into the cluster state.

    Brokers match by id and directories by path. For every partition a report shows, the
    partition's size becomes its leader's log size (without the leader's log, a size the state
    knows stays); replicas that are not a complete copy (a different size, or behind) and
    future replicas get replica-log entries, and entries the reports no longer support are
    removed. A replica found in another directory than the state records is a warning only:
    directory assignments change through `kjbod assign-dirs`.
    `ignored` names paths per broker to pass over (see ClusterShape.ignored).
    Raises ValidationFailed with every problem, writing nothing.
    """
    problems = Problems()
    seen = read_log_dirs_outputs(paths, state_shape(image, ignored), problems)
    if problems:
        raise ValidationFailed(problems.items, "nothing was written")
    return plan_observations_import(image, seen)


def plan_observations_import(image: Image, seen: Observations) -> LogDirsImport:
    """plan_log_dirs_import's records, from output already read (without problems)."""
    by_name = image.topics.by_name
    entries: list = []
    counts = {"sizes": 0, "logs": 0, "futures": 0, "removed": 0}
    for name in sorted(set(seen.current) | set(seen.future)):
        topic = by_name[name]
        current, future = seen.current.get(name, {}), seen.future.get(name, {})
        size_ids, size_values, logs = [], [], []
        fresh = not topic.replica_logs  # as after an import: no replica-log entries to compare with
        for partition_id in sorted(set(current) | set(future)):
            registration = topic.partitions[partition_id]
            observed = current.get(partition_id)
            if fresh and observed and partition_id not in future:
                # The usual partition, at C speed where it can be (a million of them): what
                # partition_sizes and replica_log_changes decide when there are no replica logs.
                leader_log = observed.get(registration.leader)
                if leader_log is not None:
                    size = leader_log.size
                else:
                    size = topic.sizes[partition_id] if partition_id in topic.sizes else max(o.size for o in observed.values())
                if topic.sizes.get(partition_id) != size:
                    size_ids.append(partition_id)
                    size_values.append(size)
                for broker in registration.replicas:
                    observation = observed.get(broker)
                    if observation is not None and (observation.size != size or observation.offset_lag != 0):
                        logs.append({"partition_id": partition_id, "broker_id": broker, "size_bytes": observation.size, "offset_lag": observation.offset_lag})
                        counts["logs"] += 1
                continue
            sizes = partition_sizes(registration.replicas, registration.leader, current.get(partition_id), future.get(partition_id))
            if sizes is None:
                continue  # nothing usable was reported
            size = sizes.size
            if not sizes.leader_reported and partition_id in topic.sizes:
                size = topic.sizes[partition_id]
            if size is not None and topic.sizes.get(partition_id) != size:
                size_ids.append(partition_id)
                size_values.append(size)
            logs.extend(replica_log_changes(topic, partition_id, registration.replicas, size, current.get(partition_id) or {}, sizes, counts))
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
    return finished_import(image, seen, entries, counts)


def finished_import(image: Image, seen: Observations, entries: list, counts: Mapping[str, int]) -> LogDirsImport:
    """The import of `seen` once its size and replica-log records are in `entries` (counted in
    `counts`): the directories' capacities added, the warnings about directories."""
    capacity_records, capacities = _capacity_changes(image, seen)
    entries.extend(capacity_records)
    return LogDirsImport(
        entries, _directory_warnings(image, seen), seen.files, len(seen.brokers),
        counts["sizes"], counts["logs"], counts["futures"], counts["removed"], capacities,
    )


def _capacity_changes(image: Image, seen: Observations) -> tuple[list[KjbodBrokerLogDirsRecord], int]:
    """A broker's directory list again, where the output's totalBytes gives a directory a
    capacity the state does not have: the disk as Kafka measured it."""
    records, changed = [], 0
    for broker_id in sorted({b for b, _ in seen.capacities}):
        log_dirs = image.cluster.log_dirs.get(broker_id, ())
        updated = tuple(
            d.model_copy(update={"capacity_bytes": seen.capacities.get((broker_id, d.directory_id), d.capacity_bytes)}) for d in log_dirs
        )
        differ = sum(1 for old, new in zip(log_dirs, updated) if old.capacity_bytes != new.capacity_bytes)
        if differ:
            records.append(KjbodBrokerLogDirsRecord(broker_id=broker_id, log_dirs=updated))
            changed += differ
    return records, changed


def replica_log_changes(
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
    warnings = []
    by_name = image.topics.by_name
    # One look at each of the (up to millions of) replicas; only those in another directory
    # than the state records are sorted, for the order of the warnings.
    elsewhere = []
    names = seen.directory_names
    for topic, partitions in () if seen.directories_as_recorded else seen.current.items():
        registrations = by_name[topic].partitions
        for partition, brokers in partitions.items():
            if not brokers:
                continue
            registration = registrations[partition]
            for broker, observation in brokers.items():
                observed = observation.directory_id if names is None else names[(broker, observation.directory_id)]
                recorded = registration.directory(broker)
                if recorded != observed:
                    elsewhere.append((topic, partition, broker, recorded, observed, observation))
    for topic, partition, broker, recorded, observed, observation in sorted(elsewhere, key=lambda item: item[:3]):
        if recorded == DirectoryId.MIGRATING and len(image.cluster.log_dirs.get(broker, ())) == 1:
            continue  # before 3.7-IV2 no directory is recorded, and there is only one
        reported = image.cluster.path_of(broker, observed)
        warnings.append(
            f"Warning: {topic}-{partition} on broker {broker} is in {reported} ({observation.where}), "
            f"but the cluster state has it in {image.cluster.directory_label(broker, recorded)}; "
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


def import_log_dirs(controller: Controller, paths: list[Path]) -> ControllerResult[LogDirsImport]:
    """`log-dirs import`: the records that load the files into the state (all or nothing)."""
    with gc_paused():
        result = plan_log_dirs_import(controller.image, paths)
    return ControllerResult(tuple(result.entries), result)
