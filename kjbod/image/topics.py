"""Topics and partitions: TopicsImage, its delta, and the partition index.

Follows Kafka's ReplicationControlManager replay (§6.2); the registration and topic objects are
in kjbod/image/partitions.py. An image is either built from objects (replayed records) or read
from the columns of a snapshot (kjbod/image/columnar.py), in which case its topics and
partitions are made from the columns as they are used, and `table()` gives all of them as
columns without an object per partition.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping
from functools import cached_property
from typing import Any

import numpy as np

from kjbod.common.kafka_uuid import DirectoryId
from kjbod.common.versions import MetadataVersion
from kjbod.errors import ReplayError
from kjbod.image.columnar import ColumnarRoot, RootedIndex
from kjbod.image.columns import PartitionTable
from kjbod.image.maps import EMPTY_MAP, FrozenDict, MapChanges, frozen, frozen_changes
from kjbod.image.partitions import (
    EMPTY,
    Members,
    PartitionKey,
    PartitionRegistration,
    ReplicaLog,
    ReplicaLogKey,
    TopicImage,
    members_of,
    migrating,
)
from kjbod.records import (
    NO_LEADER,
    ClearElrRecord,
    KjbodPartitionSizeRecord,
    KjbodReplicaLogRecord,
    PartitionChangeRecord,
    PartitionRecord,
    Record,
    RemoveTopicRecord,
    TopicRecord,
)
from kjbod.records.codec import RecordRun

__all__ = [
    "PartitionIndex",
    "PartitionKey",
    "PartitionRegistration",
    "ReplicaLog",
    "ReplicaLogKey",
    "TopicImage",
    "TopicsDelta",
    "TopicsImage",
    "partition_run",
]

TOPIC = -1  # (topic id, TOPIC) in the changes since a columnar root: the topic was created or removed


class PartitionIndex:
    """Who holds what (Kafka keeps these as BrokersToIsrs and directoriesToPartitions), for
    operations that touch one broker's or one directory's partitions.

    Each view maps a member (a broker, a directory) to the set of its partitions and is built
    on first use. An image made by a delta derives a view from its base's, patching only the
    partitions the delta touched, so a long run of small commits in one process never rescans
    the whole cluster. Sets iterate in the order partitions were added: callers that emit
    records sort them.
    """

    def __init__(
        self,
        topics: Mapping[str, TopicImage],
        base_views: Mapping[str, dict[Any, Members]] | None = None,
        touched: Mapping[PartitionKey, PartitionRegistration | None] | None = None,
    ) -> None:
        self._topics = topics
        self._base_views = base_views or {}
        self._touched = touched or {}
        self._views: dict[str, dict[Any, Members]] = {}

    def _view(self, name: str) -> dict[Any, Members]:
        view = self._views.get(name)
        if view is None:
            base = self._base_views.get(name)
            view = self._build(name) if base is None else self._patch(name, base)
            self._views[name] = view
        return view

    def _build(self, name: str) -> dict[Any, Members]:
        view: defaultdict[Any, Members] = defaultdict(dict)
        for topic_id, topic in self._topics.items():
            for partition_id, partition in topic.partitions.items():
                key = (topic_id, partition_id)
                for member in members_of(name, partition):
                    view[member][key] = None
        return dict(view)

    def _patch(self, name: str, base: dict[Any, Members]) -> dict[Any, Members]:
        view = dict(base)
        copied: set[Any] = set()

        def own(member: Any) -> Members:
            if member not in copied:
                view[member] = dict(view.get(member, {}))
                copied.add(member)
            return view[member]

        for key, old in self._touched.items():
            topic = self._topics.get(key[0])
            new = topic.partitions.get(key[1]) if topic is not None else None
            old_members = members_of(name, old) if old is not None else ()
            new_members = members_of(name, new) if new is not None else ()
            if old_members == new_members:
                continue
            for member in old_members:
                own(member).pop(key, None)
            for member in new_members:
                own(member)[key] = None
        for member in copied:
            if not view[member]:
                del view[member]
        return view

    @property
    def views(self) -> Mapping[str, dict[Any, Members]]:
        """The views built so far (a derived index starts from these)."""
        return self._views

    @property
    def in_isr(self) -> Mapping[int, Members]:
        return self._view("in_isr")

    @property
    def on_broker(self) -> Mapping[int, Members]:
        return self._view("on_broker")

    @property
    def led_by(self) -> Mapping[int, Members]:
        return self._view("by_leader")

    @property
    def leaderless(self) -> Members:
        return self._view("by_leader").get(NO_LEADER, {})

    @property
    def in_directory(self) -> Mapping[str, Members]:
        """Only real (non-reserved) directory ids, as Kafka's index."""
        return self._view("in_directory")




class TopicsImage:
    """Every topic, by id and by name. Read-only; indexes are computed on first use.

    An image loaded from a columnar snapshot has a `root` (the snapshot's table and the maps read
    from it); each image derived from it by deltas shares that root and knows which partitions
    changed since (`_since_root`), so its index and table patch the root's instead of walking
    every partition.
    """

    __slots__ = ("_by_id", "_base_views", "_touched", "_root", "_since_root", "__dict__")

    def __init__(
        self,
        by_id: Mapping[str, TopicImage],
        base_views: Mapping[str, dict[Any, Members]] | None = None,
        touched: Mapping[PartitionKey, PartitionRegistration | None] | None = None,
        *,
        root: ColumnarRoot | None = None,
        since_root: Mapping[tuple[str, int], None] = EMPTY_MAP,
    ) -> None:
        self._by_id = frozen(by_id)
        self._base_views = base_views
        self._touched = touched
        self._root = root
        self._since_root = since_root

    @classmethod
    def from_table(cls, table: PartitionTable) -> TopicsImage:
        """The topics of a columnar snapshot, read from its table as they are used."""
        root = ColumnarRoot(table)
        image = cls(root.topics, root=root)
        image.__dict__["by_name"] = root.by_name
        image.__dict__["table"] = table
        return image

    @property
    def root(self) -> ColumnarRoot | None:
        return self._root

    @property
    def by_id(self) -> Mapping[str, TopicImage]:
        return self._by_id

    @cached_property
    def by_name(self) -> Mapping[str, TopicImage]:
        # An image made by a delta gets this from its base's, when that was built (see apply).
        return FrozenDict({topic.name: topic for topic in self._by_id.values()})

    def get(self, topic_id: str) -> TopicImage | None:
        return self._by_id.get(topic_id)

    def partition(self, topic_id: str, partition_id: int) -> PartitionRegistration | None:
        topic = self._by_id.get(topic_id)
        return None if topic is None else topic.partitions.get(partition_id)

    def _partition_of(self, key: PartitionKey) -> PartitionRegistration | None:
        return self.partition(*key)

    def partitions(self) -> Iterator[tuple[TopicImage, int, PartitionRegistration]]:
        """Every partition, topics in name order, partitions in id order."""
        for name in sorted(self.by_name):
            topic = self.by_name[name]
            for partition_id in sorted(topic.partitions):
                yield topic, partition_id, topic.partitions[partition_id]

    @cached_property
    def index(self) -> PartitionIndex | RootedIndex:
        if self._root is not None:
            index: PartitionIndex | RootedIndex = RootedIndex(
                self._root, self._partition_of, self._since_root, self._base_views, self._touched  # type: ignore[arg-type]
            )
        else:
            index = PartitionIndex(self._by_id, self._base_views, self._touched)
        self._base_views = self._touched = None  # keep no chain of earlier images alive
        return index

    @cached_property
    def table(self) -> PartitionTable:
        """Every partition as columns (kjbod/image/columns.py): the root's, patched with the
        changes since, or built from the objects of an image that has no root."""
        if self._root is None:
            return PartitionTable.from_topics(self._by_id.values())
        return self._root.table.patched(self._since_root, self._by_id.get)

    def name_of(self, topic_id: str) -> str:
        topic = self._by_id.get(topic_id)
        return topic.name if topic else topic_id

    # Questions about every partition, answered from the table (no object per partition).

    def reassigning(self) -> list[tuple[str, int]]:
        """(topic name, partition) of every partition being reassigned (adding or removing
        replicas), in name then partition order."""
        table = self.table
        rows = np.union1d(table.removing.stored_rows(table.partition_count), table.adding.stored_rows(table.partition_count))
        names = table.topic_names
        return sorted((names[t], p) for t, p in zip(table.part_topic[rows].tolist(), table.part_id[rows].tolist()))

    def copying(self) -> list[PartitionKey]:
        """Partitions with a replica outside the ISR or a future replica (KIP-113): the only
        ones that copy data. In topic name then partition order."""
        table = self.table
        rows = np.flatnonzero(np.diff(table.isr.start) != table.replica_count)
        rows = np.union1d(rows, table.log_row[table.log_future])
        names, ids = table.topic_names, table.topic_ids
        found = sorted(zip(table.part_topic[rows].tolist(), table.part_id[rows].tolist()), key=lambda k: (names[k[0]], k[1]))
        return [(ids[t], p) for t, p in found]

    def future_replicas(self, broker_id: int, directories: set[str]) -> list[PartitionKey]:
        """The future replicas (KIP-113) the broker is building in one of `directories`, in
        (topic id, partition) order."""
        table = self.table
        codes = [table.dir_index[d] for d in directories if d in table.dir_index]
        logs = np.flatnonzero(table.log_future & (table.log_broker == broker_id) & np.isin(table.log_dir, codes))
        return sorted(table.keys(table.log_row[logs]))

    @property
    def partition_count(self) -> int:
        if self._root is not None:
            return self.table.partition_count
        return sum(len(topic.partitions) for topic in self._by_id.values())

    def __len__(self) -> int:
        return len(self._by_id)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, TopicsImage) and self._by_id == other._by_id

    __hash__ = None  # type: ignore[assignment]

    def write(self, mv: MetadataVersion) -> Iterator[Record | RecordRun]:
        """Each topic's TopicRecord, then its partitions and sizes as runs (see records.codec)."""
        for topic_id in sorted(self._by_id):
            topic = self._by_id[topic_id]
            yield TopicRecord(name=topic.name, topic_id=topic_id)
            if topic.partitions:
                yield partition_run(topic_id, topic.partitions, mv)
            if topic.sizes:
                sizes = sorted(topic.sizes.items())
                yield RecordRun(
                    KjbodPartitionSizeRecord,
                    0,
                    len(sizes),
                    {"topic_id": [topic_id] * len(sizes), "partition_id": [i for i, _ in sizes], "size_bytes": [b for _, b in sizes]},
                )
            for (partition_id, broker_id, future) in sorted(topic.replica_logs):
                log = topic.replica_logs[(partition_id, broker_id, future)]
                yield KjbodReplicaLogRecord(
                    topic_id=topic_id, partition_id=partition_id, broker_id=broker_id, future=future,
                    directory_id=log.directory_id, size_bytes=log.size_bytes, offset_lag=log.offset_lag,
                )


def partition_run(topic_id: str, partitions: Mapping[int, PartitionRegistration], mv: MetadataVersion) -> RecordRun:
    """The PartitionRecords that recreate `partitions`, as one run (what `to_record` gives
    one by one, without building a record object per partition)."""
    ordered = sorted(partitions.items())  # items(): a topic read from columns makes them in bulk
    ids = [pid for pid, _ in ordered]
    regs = [registration for _, registration in ordered]
    version = mv.partition_record_version
    columns: dict[str, list] = {
        "partition_id": ids,
        "topic_id": [topic_id] * len(ids),
        "replicas": [r.replicas for r in regs],
        "isr": [r.isr for r in regs],
        "removing_replicas": [r.removing_replicas for r in regs],
        "adding_replicas": [r.adding_replicas for r in regs],
        "leader": [r.leader for r in regs],
        "leader_recovery_state": [r.leader_recovery_state for r in regs],
        "leader_epoch": [r.leader_epoch for r in regs],
        "partition_epoch": [r.partition_epoch for r in regs],
    }
    if version >= 1:
        columns["directories"] = [r.directories for r in regs]
    if version >= 2:
        columns["eligible_leader_replicas"] = [r.elr or None for r in regs]
        columns["last_known_elr"] = [r.last_known_elr or None for r in regs]
    return RecordRun(PartitionRecord, version, len(ids), columns)


class _TopicChanges:
    """A topic as a delta changes it: plain dicts for a topic the delta creates, MapChanges
    over the base's maps for one it changes."""

    __slots__ = ("name", "partitions", "sizes", "replica_logs")

    def __init__(
        self,
        name: str,
        partitions: dict[int, PartitionRegistration] | MapChanges,
        sizes: dict[int, int] | MapChanges,
        replica_logs: dict[ReplicaLogKey, ReplicaLog] | MapChanges,
    ) -> None:
        self.name = name
        self.partitions = partitions
        self.sizes = sizes
        self.replica_logs = replica_logs


class TopicsDelta:
    """Changes to the topics since a base image; `apply` shares every unchanged topic."""

    def __init__(self, base: TopicsImage) -> None:
        self._base = base
        self._changed: dict[str, _TopicChanges] = {}
        self._removed: set[str] = set()
        # Every partition changed so far, with its registration in the base (None if new), so
        # the new image can patch the base's partition index instead of rebuilding it. Only
        # when the base has built its index already (or reads its index from columns):
        # replaying a snapshot of records into an empty image (a million partitions) then costs
        # nothing extra, and the index is built once, on use.
        self._patch_index = "index" in base.__dict__ or base.root is not None
        self._touched: dict[PartitionKey, PartitionRegistration | None] = {}
        # On a base read from columns: every partition (and topic, as (id, TOPIC)) whose
        # registration, size or replica logs this delta changes.
        self._since_root: dict[tuple[str, int], None] | None = {} if base.root is not None else None
        self._names: _TopicNames | None = None  # name -> id, made on the first TopicRecord

    def _topic(self, topic_id: str) -> _TopicChanges | None:
        changes = self._changed.get(topic_id)
        if changes is None:
            if topic_id in self._removed:
                return None
            base = self._base.get(topic_id)
            if base is None:
                return None
            changes = _TopicChanges(base.name, MapChanges(base.partitions), MapChanges(base.sizes), MapChanges(base.replica_logs))
            self._changed[topic_id] = changes
        return changes

    def partition(self, topic_id: str, partition_id: int) -> PartitionRegistration | None:
        """The partition as the records replayed so far leave it (read without applying)."""
        changes = self._changed.get(topic_id)
        if changes is not None:
            return changes.partitions.get(partition_id)
        if topic_id in self._removed:
            return None
        return self._base.partition(topic_id, partition_id)

    def _name_index(self) -> _TopicNames:
        if self._names is None:
            self._names = _TopicNames(self._base.by_name)
            for topic_id in self._removed:
                self._names.pop(self._base.by_id[topic_id].name, None)
            for topic_id, changes in self._changed.items():
                self._names[changes.name] = topic_id
        return self._names

    def replay_topic(self, record: TopicRecord) -> None:
        names = self._name_index()
        existing = names.get(record.name)
        if existing is not None:
            if existing == record.topic_id:
                raise ReplayError(f"Found duplicate TopicRecord for {record.name} with topic ID {record.topic_id}")
            raise ReplayError(
                f"Found duplicate TopicRecord for {record.name} with a different ID than before. "
                f"Previous ID was {existing} and new ID is {record.topic_id}"
            )
        if self._topic(record.topic_id) is not None:
            raise ReplayError(f"Found duplicate TopicRecord for topic ID {record.topic_id}")
        self._removed.discard(record.topic_id)
        self._changed[record.topic_id] = _TopicChanges(record.name, {}, {}, {})
        names[record.name] = record.topic_id
        if self._since_root is not None:
            self._since_root[(record.topic_id, TOPIC)] = None

    def _touch(self, topic: _TopicChanges, key: PartitionKey) -> None:
        if self._patch_index and key not in self._touched:
            self._touched[key] = self._base.partition(*key)
            if self._since_root is not None:
                self._since_root[key] = None

    def replay_partition(self, record: PartitionRecord) -> None:
        topic = self._topic(record.topic_id)
        if topic is None:
            raise ReplayError(
                f"Tried to create partition {record.topic_id}:{record.partition_id}, "
                "but no topic with that ID was found."
            )
        self._touch(topic, (record.topic_id, record.partition_id))
        topic.partitions[record.partition_id] = PartitionRegistration.from_record(record)

    def replay_partition_change(self, record: PartitionChangeRecord) -> None:
        topic = self._topic(record.topic_id)
        where = f"{record.topic_id}:{record.partition_id}"
        if topic is None:
            raise ReplayError(f"Tried to change partition {where}, but no topic with that ID was found.")
        current = topic.partitions.get(record.partition_id)
        if current is None:
            raise ReplayError(f"Tried to change partition {where}, but no partition with that id was found.")
        merged = current.merge(record)
        self._touch(topic, (record.topic_id, record.partition_id))
        topic.partitions[record.partition_id] = merged
        if record.replicas is not None and topic.replica_logs:
            # A replica that left the partition takes its log with it. Logs are only ever kept for
            # a partition's replicas (replay_replica_log refuses others, and this removes them as
            # they leave), so only the replicas it had can have one to remove: no scan of the
            # topic's logs, which a hot topic under reassignment has thousands of.
            for broker_id in current.replicas:
                if broker_id not in merged.replicas:
                    topic.replica_logs.pop((record.partition_id, broker_id, False), None)
                    topic.replica_logs.pop((record.partition_id, broker_id, True), None)

    def replay_clear_elr(self, record: ClearElrRecord) -> None:
        """ClearElrRecord (KIP-966): the ELR and last known ELR of every partition of the named
        topic, or of every topic when the name is empty, become empty (4.4.0
        image/TopicsDelta.java:111-132, ReplicationControlManager.replay(ClearElrRecord)). Kafka
        merges a PartitionChangeRecord that sets only those two fields into each partition that
        has either (TopicDelta.maybeClearElr, :127-133; RCM.removeTopicElrs): the partition
        epoch moves by one, as every merge moves it (PartitionRegistration.merge), and the
        leader epoch stays."""
        if record.topic_name:
            topic_id = self._name_index().get(record.topic_name)
            if topic_id is None:
                raise ReplayError(f"Unable to clear elr for topic with name {record.topic_name}: no such topic found.")
            topic_ids: Iterable[str] = (topic_id,)
        else:
            topic_ids = [*(t for t in self._base.by_id if t not in self._removed and t not in self._changed), *self._changed]
        for topic_id in topic_ids:
            changed = self._changed.get(topic_id)
            partitions = changed.partitions if changed is not None else self._base.by_id[topic_id].partitions
            with_elr = [(p, r) for p, r in partitions.items() if r.elr or r.last_known_elr]
            if not with_elr:
                continue  # a topic without ELR is not touched (a new image shares it)
            topic = self._topic(topic_id)
            assert topic is not None
            for partition_id, registration in with_elr:
                self._touch(topic, (topic_id, partition_id))
                topic.partitions[partition_id] = registration._replace(
                    elr=EMPTY, last_known_elr=EMPTY, partition_epoch=registration.partition_epoch + 1
                )

    def replay_remove_topic(self, record: RemoveTopicRecord) -> str:
        """Remove the topic; returns its name so its configs can go too."""
        topic = self._topic(record.topic_id)
        if topic is None:
            raise ReplayError(f"Can't find topic with ID {record.topic_id} to remove.")
        for partition_id in topic.partitions:
            self._touch(topic, (record.topic_id, partition_id))
        del self._changed[record.topic_id]
        if record.topic_id in self._base.by_id:
            self._removed.add(record.topic_id)
        if self._names is not None:
            self._names.pop(topic.name, None)
        if self._since_root is not None:
            self._since_root[(record.topic_id, TOPIC)] = None
        return topic.name

    def replay_partition_run(self, run: RecordRun) -> None:
        """Replay a run of PartitionRecords in bulk; the same rules as `replay_partition`."""
        columns = run.columns
        replicas_column = columns["replicas"]
        directories_column = columns.get("directories")
        elr_column = columns.get("eligible_leader_replicas")
        lke_column = columns.get("last_known_elr")
        topic_id = None
        topic: _TopicChanges | None = None
        patch_index = self._patch_index
        rows = zip(
            columns["topic_id"], columns["partition_id"], replicas_column, columns["isr"],
            columns["removing_replicas"], columns["adding_replicas"], columns["leader"],
            columns["leader_recovery_state"], columns["leader_epoch"], columns["partition_epoch"],
        )
        for index, (tid, pid, replicas, isr, removing, adding, leader, lrs, leader_epoch, partition_epoch) in enumerate(rows):
            if tid != topic_id:
                topic_id, topic = tid, self._topic(tid)
                if topic is None:
                    raise ReplayError(f"Tried to create partition {tid}:{pid}, but no topic with that ID was found.")
            replicas = tuple(replicas)
            directories = tuple(directories_column[index]) if directories_column is not None else ()
            if len(directories) != len(replicas):
                if directories and any(d != DirectoryId.MIGRATING for d in directories):
                    raise ReplayError(
                        f"The lengths for replicas and directories do not match in partition {tid}:{pid}"
                    )
                directories = migrating(len(replicas))
            if patch_index:
                self._touch(topic, (tid, pid))  # type: ignore[arg-type]
            topic.partitions[pid] = PartitionRegistration(  # type: ignore[union-attr]
                replicas,
                directories,
                tuple(isr),
                tuple(removing) if removing else EMPTY,
                tuple(adding) if adding else EMPTY,
                tuple(elr_column[index] or EMPTY) if elr_column is not None else EMPTY,
                tuple(lke_column[index] or EMPTY) if lke_column is not None else EMPTY,
                leader,
                lrs,
                leader_epoch,
                partition_epoch,
            )

    def replay_partition_size(self, record: KjbodPartitionSizeRecord) -> None:
        topic = self._topic(record.topic_id)
        if topic is None or record.partition_id not in topic.partitions:
            raise ReplayError(
                f"Tried to set the size of partition {record.topic_id}:{record.partition_id}, "
                "but no partition with that id was found."
            )
        topic.sizes[record.partition_id] = record.size_bytes
        if self._since_root is not None:
            self._since_root[(record.topic_id, record.partition_id)] = None

    def replay_replica_log(self, record: KjbodReplicaLogRecord) -> None:
        topic = self._topic(record.topic_id)
        partition = topic.partitions.get(record.partition_id) if topic else None
        where = f"{record.topic_id}:{record.partition_id}"
        if partition is None:
            raise ReplayError(f"Tried to record a replica log of partition {where}, but no partition with that id was found.")
        if record.broker_id not in partition.replicas:
            raise ReplayError(f"Tried to record a replica log of partition {where} on broker {record.broker_id}, which is not a replica.")
        key = (record.partition_id, record.broker_id, record.future)
        if self._since_root is not None:
            self._since_root[(record.topic_id, record.partition_id)] = None
        if record.size_bytes is None:
            topic.replica_logs.pop(key, None)  # type: ignore[union-attr]
        else:
            topic.replica_logs[key] = ReplicaLog(record.directory_id, record.size_bytes, record.offset_lag)  # type: ignore[union-attr]

    def replay_size_run(self, run: RecordRun) -> None:
        columns = run.columns
        topic_id = None
        topic: _TopicChanges | None = None
        since_root = self._since_root
        for tid, pid, size in zip(columns["topic_id"], columns["partition_id"], columns["size_bytes"]):
            if tid != topic_id:
                topic_id, topic = tid, self._topic(tid)
            if topic is None or pid not in topic.partitions:
                raise ReplayError(
                    f"Tried to set the size of partition {tid}:{pid}, but no partition with that id was found."
                )
            topic.sizes[pid] = size
            if since_root is not None:
                since_root[(tid, pid)] = None

    def apply(self) -> TopicsImage:
        """The new image: the base's maps with the changed topics layered over them (O(changed
        topics), not a copy of every topic). As a rebuilt dict would, a removed topic goes and a
        changed or new one comes last, in the order the delta first touched it."""
        if not self._changed and not self._removed:
            return self._base
        base = self._base
        by_id = MapChanges(base.by_id)
        # The names follow along when the base has built them (an image read from columns always
        # has them); otherwise they are built on use.
        by_name = MapChanges(base.__dict__["by_name"]) if "by_name" in base.__dict__ else None
        for topic_id in self._removed:
            name = base.name_of(topic_id)
            del by_id[topic_id]
            if by_name is not None:
                by_name.pop(name, None)
        for topic_id, changes in self._changed.items():
            topic = TopicImage(changes.name, topic_id, frozen_changes(changes.partitions), frozen_changes(changes.sizes),
                               frozen_changes(changes.replica_logs))
            old = base.get(topic_id)
            if topic_id in by_id:
                del by_id[topic_id]
            by_id[topic_id] = topic
            if by_name is not None:
                if old is not None and by_name.get(old.name) is old:
                    del by_name[old.name]
                if changes.name in by_name:
                    del by_name[changes.name]
                by_name[changes.name] = topic
        if base.root is not None:
            assert self._since_root is not None
            since_root = MapChanges(base._since_root)
            for key in self._since_root:
                since_root[key] = None
            image = TopicsImage(
                by_id.freeze(), base.index.found, self._touched, root=base.root, since_root=since_root.freeze()  # type: ignore[union-attr]
            )
        else:
            base_views = base.index.views if self._patch_index else None  # type: ignore[union-attr]
            image = TopicsImage(by_id.freeze(), base_views, self._touched)
        if by_name is not None:
            image.__dict__["by_name"] = by_name.freeze()
        return image


class _TopicNames:
    """Topic name -> id as a delta changes it: the base's names (read through its by_name map,
    never copied) with the delta's changes over them."""

    __slots__ = ("_base", "_set", "_gone")

    def __init__(self, base: Mapping[str, TopicImage]) -> None:
        self._base = base
        self._set: dict[str, str] = {}
        self._gone: set[str] = set()

    def get(self, name: str) -> str | None:
        found = self._set.get(name)
        if found is not None:
            return found
        if name in self._gone:
            return None
        topic = self._base.get(name)
        return None if topic is None else topic.topic_id

    def __setitem__(self, name: str, topic_id: str) -> None:
        self._set[name] = topic_id

    def pop(self, name: str, default: None = None) -> None:
        self._set.pop(name, None)
        self._gone.add(name)
