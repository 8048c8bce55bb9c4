"""`kjbod metadata export --kafka-snapshot FILE`: the cluster state as a KRaft snapshot.

The records are those that rebuild the image, as a controller's SnapshotEmitter writes them
(MetadataImage.write): the feature levels first (metadata.version decides every later
record's version, as Kafka's MetadataVersion methods do: registerBrokerRecordVersion,
partitionRecordVersion), then the brokers with their log directories and fenced, controlled
shutdown and cordoned state, the topics and their partitions (replicas, ISR, leader, epochs,
directories, reassignments in flight as adding/removing replicas), then the topic and broker
configs. kjbod's own records (directory paths and capacities, partition sizes, replica logs,
the simulated clock, the quorum's leader and replication progress) are not Kafka records and are
left out. kraft.version and the voter set are not metadata records in Kafka: they go into the
header's control batch as KRaftVersionRecord and VotersRecord; the controllers' registrations
(RegisterControllerRecord) are metadata records.

The file is written as Kafka's FileRawSnapshotWriter writes one (see
kjbod.kafka_formats.kraft_snapshot), so Kafka's own MetadataLoader loads it.
"""

from __future__ import annotations

import os
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kjbod.common.versions import KRAFT_VERSION
from kjbod.errors import UserError
from kjbod.image import Image
from kjbod.image.elr import elr_enabled
from kjbod.records import FeatureLevelRecord, PartitionRecord
from kjbod.records.codec import RecordRun
from kjbod.common.java import hashmap_capacity, hashmap_order
from kjbod.records.wire import CONTROL_MODELS, MODELLED_RECORDS, encode_record, encode_run
from kjbod.kafka_formats.kraft_snapshot import SnapshotId, Voter, snapshot_batches, write_snapshot_file

# kjbod's snapshot files carry no leader epoch; an exported snapshot is of epoch 1.
EXPORT_EPOCH = 1


@dataclass
class KafkaExport:
    path: Path
    snapshot_id: SnapshotId
    metadata_version: str
    kraft_version: int
    voters: list[int] = field(default_factory=list)  # the header's voter set, by node id
    records: Counter[str] = field(default_factory=Counter)  # written, by record type
    left_out: Counter[str] = field(default_factory=Counter)  # kjbod's own, by record type
    size: int = 0

    @property
    def record_count(self) -> int:
        return sum(self.records.values())

    def to_json(self) -> dict[str, Any]:
        return {
            "file": str(self.path),
            "snapshotId": {"endOffset": self.snapshot_id.end_offset, "epoch": self.snapshot_id.epoch},
            "metadataVersion": self.metadata_version,
            "kraftVersion": self.kraft_version,
            "voters": self.voters,
            "records": self.record_count,
            "recordsByType": dict(sorted(self.records.items())),
            "leftOut": dict(sorted(self.left_out.items())),
            "bytes": self.size,
        }


def _without_elr(run: RecordRun) -> RecordRun:
    """PartitionRecords without their ELR fields (null: the tags are not written)."""
    columns = dict(run.columns)
    for name in ("eligible_leader_replicas", "last_known_elr"):
        if name in columns:
            columns[name] = [None] * run.count
    return RecordRun(run.record_type, run.version, run.count, columns)


def _values(image: Image, result: KafkaExport) -> Iterator[bytes]:
    """The framed values of the image's Kafka records, in MetadataImage.write's order. A
    partition's ELR and last known ELR are written only while ELR is enabled
    (PartitionRegistration.toRecord, 4.4.0 metadata/PartitionRegistration.java:376-408, with
    ImageWriterOptions.isEligibleLeaderReplicasEnabled = the image's eligible.leader.replicas.version
    >= 1): a cluster that disabled ELR keeps stale lists until each partition's next change, and
    its snapshot drops them."""
    elr = elr_enabled(image.features)
    for entry in image.write():
        if isinstance(entry, RecordRun) and entry.record_type is PartitionRecord and not elr:
            entry = _without_elr(entry)
        if isinstance(entry, RecordRun):
            name = entry.record_type.__name__
            if name in MODELLED_RECORDS:
                result.records[name] += entry.count
                yield from encode_run(entry)
            else:
                result.left_out[name] += entry.count
            continue
        name = type(entry).__name__
        if name in CONTROL_MODELS:
            continue  # KRaftVersionRecord and VotersRecord go into the header's control batch
        if name not in MODELLED_RECORDS:
            result.left_out[name] += 1
        elif isinstance(entry, FeatureLevelRecord) and entry.name == KRAFT_VERSION:
            continue  # a control record in Kafka's snapshots (KRaftVersionRecord)
        else:
            result.records[name] += 1
            yield encode_record(entry)


def _quorum(image: Image) -> tuple[int, list[Voter] | None]:
    """The kraft.version and the voter set of the header's control batch, as a controller's
    snapshot writer puts them there (RecordsSnapshotWriter): the voter set only with
    kraft.version 1, in VoterSet's HashMap order (VoterSet.java:245-271). A state that does not
    model its quorum has no voter set to write."""
    quorum = image.quorum
    if not quorum.is_modelled:
        return image.features.level(KRAFT_VERSION), None
    if quorum.kraft_version < 1 or quorum.static:
        return quorum.kraft_version, None
    by_id = {v.key.id: v for v in quorum.voters}
    order = hashmap_order(sorted(by_id), lambda i: i, hashmap_capacity(len(by_id)))
    return quorum.kraft_version, [Voter.from_json(by_id[i].to_voter().model_dump(mode="json", by_alias=True)) for i in order]


def export_target(path: str | Path, snapshot_id: SnapshotId) -> Path:
    """Where FILE leads: FILE itself, or for an existing directory the snapshot's Kafka name in
    it. A name that ends with a path separator means a directory, which must exist (rather than
    a file named like the directory). An existing file is refused: export never replaces what it
    did not write."""
    if isinstance(path, str) and path.endswith(("/", os.sep)) and not Path(path).is_dir():
        raise UserError(f"Cannot write into {path}: no such directory; create it first, or name a file")
    path = Path(path)
    target = path / snapshot_id.file_name if path.is_dir() else path
    if target.exists() or target.is_symlink():
        raise UserError(f"{target} already exists; export does not replace a file: name a new file or a directory")
    if not target.parent.is_dir():
        raise UserError(f"Cannot write {target}: no such directory {target.parent}")
    return target


def export_kafka_snapshot(image: Image, path: str | Path, *, timestamp_ms: int | None = None) -> KafkaExport:
    """Write the image as a KRaft snapshot at `path` (see `export_target`). The snapshot id is
    the state's next offset and epoch 1; the header's lastContainedLogTimestamp is the state's
    simulated clock when it has one."""
    if image.features.metadata_version is None:
        raise UserError("The cluster state holds no metadata.version yet; there is nothing a Kafka controller could load")
    snapshot_id = SnapshotId(image.next_offset, EXPORT_EPOCH)
    target = export_target(path, snapshot_id)
    now = time.time_ns() // 1_000_000 if timestamp_ms is None else timestamp_ms
    kraft_version, voters = _quorum(image)
    result = KafkaExport(target, snapshot_id, str(image.features.metadata_version), kraft_version, [v.voter_id for v in voters or ()])
    batches = snapshot_batches(
        _values(image, result),
        epoch=snapshot_id.epoch,
        timestamp_ms=now,
        last_contained_log_timestamp=image.time_ms or now,
        kraft_version=kraft_version,
        voters=voters,
    )
    try:
        write_snapshot_file(target, batches)
    except OSError as exc:
        raise UserError(f"Cannot write {target}: {exc.strerror or exc}") from None
    result.size = target.stat().st_size
    return result
