"""The image (an immutable view of the whole cluster state) and the delta that builds the next one.

`Delta.replay` is the only code that changes state: one `match` on the record type hands each
record to the area that owns it. The same replay serves a live write (validated in a delta
before the batch is appended), start-up from the log, and snapshot loading. `Delta.apply`
builds a new image that shares every area the records did not touch (Kafka's MetadataDelta).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from kjbod.errors import ReplayError
from kjbod.image.cluster import EMPTY_CLUSTER, ClusterDelta, ClusterImage
from kjbod.image.configs import EMPTY_CONFIGS, ConfigsDelta, ConfigsImage
from kjbod.image.features import EMPTY_FEATURES, FeaturesDelta, FeaturesImage
from kjbod.image.quorum import EMPTY_QUORUM, QuorumDelta, QuorumImage
from kjbod.image.scram import EMPTY_SCRAM, ScramDelta, ScramImage
from kjbod.image.topics import PartitionRegistration, TopicsDelta, TopicsImage
from kjbod.records import (
    CONFIG_RESOURCE_TOPIC,
    BrokerRegistrationChangeRecord,
    ClearElrRecord,
    ConfigRecord,
    FeatureLevelRecord,
    FenceBrokerRecord,
    KjbodBrokerLogDirsRecord,
    KjbodClockRecord,
    KjbodClusterRecord,
    KjbodControllerReplicaRecord,
    KjbodPartitionSizeRecord,
    KjbodQuorumRecord,
    KjbodReplicaLogRecord,
    KRaftVersionRecord,
    NoOpRecord,
    PartitionChangeRecord,
    PartitionRecord,
    Record,
    RegisterBrokerRecord,
    RegisterControllerRecord,
    RemoveTopicRecord,
    RemoveUserScramCredentialRecord,
    TopicRecord,
    UnfenceBrokerRecord,
    UnregisterBrokerRecord,
    UnregisterControllerRecord,
    UserScramCredentialRecord,
    VotersRecord,
)
from kjbod.records.codec import RecordRun


@dataclass(frozen=True)
class ClusterIdentity:
    """The cluster a state belongs to (KjbodClusterRecord): its cluster.id, and the node id of
    the controller that formatted the state (Kafka's "local controller"), None if unknown."""

    cluster_id: str
    controller_id: int | None

    def record(self) -> KjbodClusterRecord:
        return KjbodClusterRecord(cluster_id=self.cluster_id, controller_id=-1 if self.controller_id is None else self.controller_id)


@dataclass(frozen=True)
class Image:
    """The cluster state as of `offset` (the last record applied; -1 for an empty state)."""

    offset: int
    features: FeaturesImage
    cluster: ClusterImage
    topics: TopicsImage
    configs: ConfigsImage
    # kjbod's own simulated clock, in milliseconds since the epoch.
    time_ms: int = 0
    # None for a state made before kjbod recorded it, or imported without --cluster-id.
    identity: ClusterIdentity | None = None
    quorum: QuorumImage = EMPTY_QUORUM
    scram: ScramImage = EMPTY_SCRAM

    @property
    def next_offset(self) -> int:
        return self.offset + 1

    @property
    def is_empty(self) -> bool:
        return self.offset < 0

    def write(self) -> Iterator[Record | RecordRun]:
        """Records that rebuild this image from empty: what a snapshot of records holds.

        Features come first so that metadata.version decides every later record's version.
        """
        return self._write(topics=True)

    def write_without_topics(self) -> Iterator[Record | RecordRun]:
        """The records of `write` but the topics': what a columnar snapshot keeps as records
        beside the topics' columns (`topics.table`)."""
        return self._write(topics=False)

    def _write(self, *, topics: bool) -> Iterator[Record | RecordRun]:
        yield from self.features.write()
        if self.identity is not None:
            yield self.identity.record()
        mv = self.features.metadata_version
        if mv is not None:
            yield from self.cluster.write(mv)
            if topics:
                yield from self.topics.write(mv)
        yield from self.configs.write()
        yield from self.scram.write()
        if self.time_ms:
            yield KjbodClockRecord(time_ms=self.time_ms)
        # After the clock: the quorum's own record restores the offsets it keeps.
        yield from self.quorum.write()


EMPTY_IMAGE = Image(-1, EMPTY_FEATURES, EMPTY_CLUSTER, TopicsImage({}), EMPTY_CONFIGS)


class Delta:
    """Records replayed on top of a base image. Use once: replay, then `apply`."""

    def __init__(self, base: Image) -> None:
        self._base = base
        self._offset = base.offset
        self._time_ms = base.time_ms
        self._identity = base.identity
        self._features: FeaturesDelta | None = None
        self._cluster: ClusterDelta | None = None
        self._topics: TopicsDelta | None = None
        self._configs: ConfigsDelta | None = None
        self._quorum: QuorumDelta | None = None
        self._scram: ScramDelta | None = None
        self._applied = False

    @property
    def base(self) -> Image:
        return self._base

    def features(self) -> FeaturesDelta:
        if self._features is None:
            self._features = FeaturesDelta(self._base.features)
        return self._features

    def cluster(self) -> ClusterDelta:
        if self._cluster is None:
            self._cluster = ClusterDelta(self._base.cluster)
        return self._cluster

    def topics(self) -> TopicsDelta:
        if self._topics is None:
            self._topics = TopicsDelta(self._base.topics)
        return self._topics

    def configs(self) -> ConfigsDelta:
        if self._configs is None:
            self._configs = ConfigsDelta(self._base.configs)
        return self._configs

    def quorum(self) -> QuorumDelta:
        if self._quorum is None:
            self._quorum = QuorumDelta(self._base.quorum)
        return self._quorum

    def scram(self) -> ScramDelta:
        if self._scram is None:
            self._scram = ScramDelta(self._base.scram)
        return self._scram

    def partition(self, topic_id: str, partition_id: int) -> PartitionRegistration | None:
        """A partition as the records replayed so far leave it, without applying the delta."""
        if self._topics is None:
            return self._base.topics.partition(topic_id, partition_id)
        return self._topics.partition(topic_id, partition_id)

    def replay(self, record: Record, offset: int) -> None:
        """Apply one record; raises ReplayError if it contradicts the state."""
        if self._applied:
            raise RuntimeError("this delta was already applied; start a new one")
        match record:
            case PartitionChangeRecord():
                self.topics().replay_partition_change(record)
            case PartitionRecord():
                self.topics().replay_partition(record)
            case TopicRecord():
                self.topics().replay_topic(record)
            case RemoveTopicRecord():
                name = self.topics().replay_remove_topic(record)
                self.configs().remove_resource(CONFIG_RESOURCE_TOPIC, name)
            case KjbodPartitionSizeRecord():
                self.topics().replay_partition_size(record)
            case KjbodReplicaLogRecord():
                self.topics().replay_replica_log(record)
            case RegisterBrokerRecord():
                self.cluster().replay_register(record, offset)
            case UnregisterBrokerRecord():
                self.cluster().replay_unregister(record)
            case BrokerRegistrationChangeRecord():
                self.cluster().replay_registration_change(record)
            case FenceBrokerRecord():
                self.cluster().replay_fence(record)
            case UnfenceBrokerRecord():
                self.cluster().replay_unfence(record)
            case KjbodBrokerLogDirsRecord():
                self.cluster().replay_log_dirs(record)
            case FeatureLevelRecord():
                self.features().replay(record)
            case ConfigRecord():
                self.configs().replay(record)
            case KjbodClockRecord():
                self._advance_clock(record.time_ms, offset)
            case KjbodClusterRecord():
                self._set_identity(record)
            case RegisterControllerRecord():
                self.cluster().replay_register_controller(record)
            case UnregisterControllerRecord():
                self.cluster().replay_unregister_controller(record)
            case ClearElrRecord():
                self.topics().replay_clear_elr(record)
            case KRaftVersionRecord():
                self.quorum().replay_kraft_version(record)
            case VotersRecord():
                self.quorum().replay_voters(record, offset)
            case KjbodQuorumRecord():
                self.quorum().replay_state(record)
            case KjbodControllerReplicaRecord():
                self.quorum().replay_replica(record)
            case UserScramCredentialRecord() | RemoveUserScramCredentialRecord():
                self.scram().replay(record)
            case NoOpRecord():
                pass
            case _:
                raise ReplayError(f"Unknown record type {type(record).__name__}")
        self._offset = offset

    def _advance_clock(self, time_ms: int, offset: int) -> None:
        if time_ms < self._time_ms:
            raise ReplayError(f"Unable to replay KjbodClockRecord(time_ms={time_ms}): the clock cannot go back from {self._time_ms}")
        self._time_ms = time_ms
        if self._quorum is not None or self._base.quorum.is_modelled:
            self.quorum().replay_clock(offset)

    def _set_identity(self, record: KjbodClusterRecord) -> None:
        if self._identity is not None and self._identity.cluster_id != record.cluster_id:
            raise ReplayError(
                f"Unable to replay {record}: the state belongs to cluster {self._identity.cluster_id}, and a cluster id never changes"
            )
        self._identity = ClusterIdentity(record.cluster_id, record.controller_id if record.controller_id >= 0 else None)

    def replay_run(self, run: RecordRun, first_offset: int) -> None:
        """Apply a run of records (see records.codec) as if replayed one by one."""
        if self._applied:
            raise RuntimeError("this delta was already applied; start a new one")
        if run.count == 0:
            return
        run = run.plain()
        if run.record_type is PartitionRecord:
            self.topics().replay_partition_run(run)
        elif run.record_type is KjbodPartitionSizeRecord:
            self.topics().replay_size_run(run)
        elif run.record_type is KjbodClockRecord:
            for index, time_ms in enumerate(run.columns["time_ms"]):
                self._advance_clock(time_ms, first_offset + index)
        else:
            for index, record in enumerate(run.records()):
                self.replay(record, first_offset + index)
        self._offset = first_offset + run.count - 1

    def replay_entry(self, entry: Record | RecordRun, offset: int) -> int:
        """Apply a record or a run at `offset`; returns the offset after it."""
        if isinstance(entry, RecordRun):
            self.replay_run(entry, offset)
            return offset + entry.count
        self.replay(entry, offset)
        return offset + 1

    def apply(self) -> Image:
        self._applied = True
        base = self._base
        return Image(
            offset=self._offset,
            features=self._features.apply() if self._features else base.features,
            cluster=self._cluster.apply() if self._cluster else base.cluster,
            topics=self._topics.apply() if self._topics else base.topics,
            configs=self._configs.apply() if self._configs else base.configs,
            time_ms=self._time_ms,
            identity=self._identity,
            quorum=self._quorum.apply() if self._quorum else base.quorum,
            scram=self._scram.apply() if self._scram else base.scram,
        )


def replay_all(base: Image, entries: Iterable[Record | RecordRun]) -> Image:
    """The image after `entries`, written at the offsets that follow `base` (tests use this)."""
    delta = Delta(base)
    offset = base.next_offset
    for entry in entries:
        offset = delta.replay_entry(entry, offset)
    return delta.apply()
