"""What the checks look at: the cluster (one pass over every partition) and the plan (one pass
over its partitions), as numpy columns.

Plans can hold hundreds of thousands of partitions and clusters millions, so each side is read
once into flat arrays (one row per partition, and one per replica of the target, of the current
assignment and of the in-sync set) and every check aggregates those arrays instead of walking
the image again. Brokers and directories are the cluster model's indexes and codes
(kjbod.image.cluster_columns: UNKNOWN_DIR, BROKER_CHOOSES, NO_RACK).

"Current" means the placement once the work already in flight completes (the model's
`settled`): replicas being removed by a running reassignment are gone, and a replica with a
future replica (KIP-113) lives in the future replica's directory. The plan is applied to that.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from functools import cached_property
from itertools import compress

import numpy as np

from kjbod.common.java import TopicPartition, java_string_key, tp_key
from kjbod.image import Image
from kjbod.image.cluster_columns import BROKER_CHOOSES, UNKNOWN_DIR, ClusterColumns, cluster_columns
from kjbod.image.columns import PartitionTable, count_values, gather_index
from kjbod.image.configs import min_insync, min_insync_default
from kjbod.tools.reassign.json_format import ANY_LOG_DIR, ReassignmentPlan, FirstSeenCodes

__all__ = ["BROKER_CHOOSES", "UNKNOWN_DIR", "ClusterFacts", "Completed", "PlanFacts", "scan_cluster", "scan_plan"]


@dataclass
class ClusterFacts:
    """The cluster as the checks see it: the analysis model (brokers, directories and their
    codes) and where the replicas lie once the work in flight completes."""

    model: ClusterColumns
    # Bytes (from partition sizes) and replicas per directory once in-flight work completes.
    used: np.ndarray
    replicas: np.ndarray
    # Replicas not in one of their broker's known directories (UNASSIGNED, MIGRATING, ...), by broker id.
    unplaced: dict[int, int]
    # Partitions being reassigned now.
    reassigning: list[TopicPartition]
    # Replicas copying now (outside the ISR, or future replicas): what a simulation runs too.
    copying: int
    moving_brokers: set[int]
    moving_topics: set[str]
    min_isr_default: int

    def registered_index(self, brokers: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(broker index, registered) for broker ids; the index is only meaningful where registered."""
        index, found = self.model.index_of(brokers)
        return index, found & self.model.broker_registered[index] if self.model.broker_count else found

    def broker_replicas(self) -> dict[int, int]:
        """Replicas per broker id once in-flight work completes."""
        model = self.model
        counts: dict[int, int] = dict(self.unplaced)
        per_broker = np.bincount(model.dir_broker, weights=self.replicas, minlength=model.broker_count)
        for broker, count in zip(model.broker_ids.tolist(), per_broker.tolist()):
            counts[broker] = counts.get(broker, 0) + int(count)
        return counts


def scan_cluster(image: Image) -> ClusterFacts:
    """One pass over every partition: directory usage and counts, and what is in flight."""
    model = cluster_columns(image)
    table = model.table
    codes, values = table.directories, table.replicas.values

    def dirs_of(entries: np.ndarray) -> np.ndarray:
        return model.replica_dirs(codes[entries], values[entries].astype(np.int64))

    def sizes_of(entries: np.ndarray) -> np.ndarray:
        return part_sizes[np.searchsorted(table.replicas.start, entries, side="right") - 1]

    part_sizes = np.maximum(table.size, 0)
    used, replicas, unknown = model.placed_now(part_sizes)
    count = len(model.dir_ids)
    # In-flight work completes: replicas being removed leave their directories.
    reassigning_rows = np.union1d(table.removing.stored_rows(table.partition_count), table.adding.stored_rows(table.partition_count))
    names = table.topic_names
    reassigning: list[TopicPartition] = [
        (names[t], pid) for t, pid in zip(table.part_topic[reassigning_rows].tolist(), table.part_id[reassigning_rows].tolist())
    ]
    _, remaining = table.remaining_replicas(reassigning_rows)
    leaving = np.setdiff1d(gather_index(table.replicas.start, reassigning_rows), remaining)
    leaving_dirs = dirs_of(leaving)
    leaving, leaving_dirs = leaving[leaving_dirs >= 0], leaving_dirs[leaving_dirs >= 0]
    used -= np.rint(np.bincount(leaving_dirs, weights=sizes_of(leaving), minlength=count)).astype(np.int64)
    replicas -= np.bincount(leaving_dirs, minlength=count)
    copying = int(len(table.replicas.values) - len(table.isr.values))
    # Future replicas (KIP-113): their bytes move to the directory they are built in.
    moving_brokers: set[int] = set()
    moving_topics: set[str] = set()
    removing = table.removing
    futures = np.flatnonzero(table.log_future)
    copying += len(futures)
    moves: list[tuple[int, int, int]] = []  # (row, broker, code) of the futures that complete
    for row, broker, code in zip(table.log_row[futures].tolist(), table.log_broker[futures].tolist(), table.log_dir[futures].tolist()):
        moving_brokers.add(broker)
        moving_topics.add(names[int(table.part_topic[row])])
        if broker not in removing.get(row) and code >= 0:
            moves.append((row, broker, code))
    if moves:
        rows, brokers, target_codes = (np.array(column, np.int64) for column in zip(*moves))
        targets = model.replica_dirs(target_codes, brokers)
        sources = dirs_of(np.array([_entry_of(table, row, broker) for row, broker, _ in moves], np.int64))  # where the replica is now
        for source, target, size in zip(sources.tolist(), targets.tolist(), part_sizes[rows].tolist()):
            for index, change in ((source, -1), (target, 1)):
                if index >= 0:
                    used[index] += change * size
                    replicas[index] += change
    unplaced: dict[int, int] = {}
    if unknown:
        # Rare (replicas without a directory yet): counted per broker, unless being removed.
        _, remaining_all = table.remaining_replicas(np.arange(table.partition_count))
        without = remaining_all[dirs_of(remaining_all) < 0]
        unplaced = count_values(table.replicas.values[without])
    reassigning.sort(key=tp_key)
    return ClusterFacts(
        model=model,
        used=used,
        replicas=replicas,
        unplaced=unplaced,
        reassigning=reassigning,
        copying=copying,
        moving_brokers=moving_brokers,
        moving_topics=moving_topics,
        min_isr_default=min_insync_default(image.configs),
    )


def _entry_of(table: PartitionTable, row: int, broker: int) -> int:
    """The entry in the replica columns of broker `broker` in row `row`'s list (its first listing)."""
    start, end = int(table.replicas.start[row]), int(table.replicas.start[row + 1])
    return start + table.replicas.values[start:end].tolist().index(broker)


@dataclass
class PlanFacts:
    """The plan's partitions that exist (the last entry of a partition wins, as in Kafka)."""

    unknown_topics: list[str]
    missing_partitions: list[TopicPartition]
    # Per partition row: its topic (an index into topic_names) and partition id.
    topic: np.ndarray
    partition: np.ndarray
    topic_names: list[str]  # the table's topic names
    table_topic_ids: list[str]  # the table's topic ids
    c_starts: np.ndarray  # the current replicas of row r are c_broker[c_starts[r]:c_starts[r + 1]]
    size: np.ndarray
    leader: np.ndarray
    rf_current: np.ndarray
    rf_target: np.ndarray
    isr_size: np.ndarray
    isr_kept: np.ndarray  # in-sync replicas that stay in the target
    min_isr: np.ndarray
    changes_set: np.ndarray  # the replica set changes (not only the order or directories)
    # Per target replica: row, broker, log_dirs entry (and whether it names a directory), new on that broker,
    # the directory it ends in (index, UNKNOWN_DIR or BROKER_CHOOSES) and the one it is in now
    # (UNKNOWN_DIR for new replicas).
    t_row: np.ndarray
    t_broker: np.ndarray
    t_explicit: np.ndarray  # the entry names a log directory (not "any")
    t_path: np.ndarray  # the log_dirs entry of each target replica, as a code into path_names
    path_names: list[str]
    t_new: np.ndarray
    t_dir: np.ndarray
    t_from: np.ndarray
    # Per current replica: row, broker, directory index, in the target, in the ISR.
    c_row: np.ndarray
    c_broker: np.ndarray
    c_dir: np.ndarray
    c_kept: np.ndarray
    c_in_sync: np.ndarray

    @property
    def count(self) -> int:
        return len(self.topic)

    @cached_property
    def tps(self) -> list[TopicPartition]:
        names = self.topic_names
        return [(names[t], p) for t, p in zip(self.topic.tolist(), self.partition.tolist())]

    def tp(self, row: int) -> TopicPartition:
        return self.topic_names[int(self.topic[row])], int(self.partition[row])

    @cached_property
    def topic_ids(self) -> list[str]:
        ids = self.table_topic_ids
        return [ids[t] for t in self.topic.tolist()]

    @cached_property
    def t_starts(self) -> np.ndarray:
        starts = np.zeros(self.count + 1, np.int64)
        np.cumsum(self.rf_target, out=starts[1:])
        return starts

    @cached_property
    def target(self) -> list[tuple[int, ...]]:
        """The target replicas of each row."""
        brokers, offsets = self.t_broker.tolist(), self.t_starts.tolist()
        return [tuple(brokers[offsets[r] : offsets[r + 1]]) for r in range(self.count)]

    @cached_property
    def current(self) -> list[tuple[int, ...]]:
        """The current replicas of each row (those a running reassignment removes are gone)."""
        brokers, offsets = self.c_broker.tolist(), self.c_starts.tolist()
        return [tuple(brokers[offsets[r] : offsets[r + 1]]) for r in range(self.count)]

    def unchanged(self) -> np.ndarray:
        """Rows whose target lists the current replicas, in the same order."""
        same_length = self.rf_target == self.rf_current
        # Compare position by position the rows whose lists have the same length.
        rows = np.flatnonzero(same_length)
        t_index = gather_index(self.t_starts, rows)
        c_index = gather_index(self.c_starts, rows)
        differs = self.t_broker[t_index] != self.c_broker[c_index]
        bad = np.zeros(self.count, bool)
        bad[self.t_row[t_index][differs]] = True
        return same_length & ~bad

    @property
    def t_moving(self) -> np.ndarray:
        """Kept replicas that move to another directory of their broker."""
        return ~self.t_new & (self.t_dir >= 0) & (self.t_dir != self.t_from)

    @property
    def removed(self) -> np.ndarray:
        return ~self.c_kept

    @cached_property
    def kafka_order(self) -> np.ndarray:
        """The rows in Kafka's partition order (topic, then number)."""
        present, _ = small_unique(self.topic)
        ranked = sorted(present.tolist(), key=lambda t: java_string_key(self.topic_names[t]))
        topic_rank = np.zeros(len(self.topic_names), np.int64)
        topic_rank[np.array(ranked, np.int64)] = np.arange(len(ranked))
        # One key (partition ids are int32): a single stable sort, as the lexsort by topic then id.
        return np.argsort((topic_rank[self.topic] << 32) + (self.partition + (1 << 31)), kind="stable")

    @cached_property
    def rank(self) -> np.ndarray:
        """Each row's place in Kafka's partition order."""
        rank = np.empty(self.count, np.int64)
        rank[self.kafka_order] = np.arange(self.count)
        return rank

    @cached_property
    def _ordered_names(self) -> list[str]:
        return self._names_of(self.kafka_order)

    def _names_of(self, rows: np.ndarray) -> list[str]:
        names = self.topic_names
        return [f"{names[t]}-{p}" for t, p in zip(self.topic[rows].tolist(), self.partition[rows].tolist())]

    def _chosen(self, rows: Iterable[int] | np.ndarray) -> np.ndarray:
        """For each row in Kafka's order: whether it is among `rows`."""
        mask = np.zeros(self.count, bool)
        mask[np.fromiter(rows, np.int64) if not isinstance(rows, np.ndarray) else rows.astype(np.int64)] = True
        return mask[self.kafka_order]

    def in_order(self, rows: Iterable[int] | np.ndarray) -> list[int]:
        """Rows, each once, in Kafka's partition order."""
        return self.kafka_order[self._chosen(rows)].tolist()

    def names(self, rows: Iterable[int] | np.ndarray) -> tuple[str, ...]:
        """ "topic-p" of rows, each once, sorted as Kafka sorts partitions (topic, then number)."""
        chosen = self._chosen(rows)
        if "_ordered_names" in self.__dict__ or chosen.sum() * 4 > self.count:
            # Many rows (or the names are made already): name every row once, for every call.
            return tuple(compress(self._ordered_names, chosen.tolist()))
        return tuple(self._names_of(self.kafka_order[chosen]))


def small_unique(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """np.unique(values, return_inverse=True), by a table instead of a sort when the values are
    small non-negative integers (broker and path pairs, topic indexes)."""
    if not len(values):
        return values[:0].copy(), np.zeros(0, np.int64)
    low, high = int(values.min()), int(values.max())
    if low < 0 or high >= 1 << 24:
        unique, inverse = np.unique(values, return_inverse=True)
        return unique, inverse.reshape(-1)
    present = np.zeros(high + 1, bool)
    present[values] = True
    unique = np.flatnonzero(present)
    code = np.zeros(high + 1, np.int64)
    code[unique] = np.arange(len(unique))
    return unique.astype(values.dtype), code[values]


# Past this many replicas in a partition's list, lists are compared by sorting instead.
WIDEST_SCAN = 16


def _find_in_rows(rows: np.ndarray, values: np.ndarray, starts: np.ndarray, of: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For each (row, value): whether value is in of[starts[row]:starts[row + 1]], and the
    position of its first occurrence there (-1 if none). Row lists are a few items long, so
    comparing them position by position beats a sort of millions of (row, value) keys."""
    found = np.full(len(rows), -1, np.int64)
    counts = np.diff(starts)
    width = int(counts.max()) if len(counts) else 0
    if not len(rows) or not len(of):
        return found >= 0, found
    if width > WIDEST_SCAN:
        return _find_by_sorting(rows, values, starts, of)
    first, count = starts[rows], counts[rows]
    last = len(of) - 1
    # From the last position to the first, so that the first occurrence is the one kept.
    for k in reversed(range(width)):
        position = first + k
        np.minimum(position, last, out=position)  # past a row's end: compared, then masked out
        hit = of[position] == values
        hit &= count > k
        np.copyto(found, position, where=hit)
    return found >= 0, found


def _find_by_sorting(rows: np.ndarray, values: np.ndarray, starts: np.ndarray, of: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """_find_in_rows for long lists: binary search of (row, value) keys in a sorted copy."""
    of_rows = np.repeat(np.arange(len(starts) - 1, dtype=np.int64), np.diff(starts))
    keys, of_keys = (rows << 32) | (values & 0xFFFFFFFF), (of_rows << 32) | (of & 0xFFFFFFFF)
    order = np.argsort(of_keys, kind="stable")
    position = np.minimum(np.searchsorted(of_keys[order], keys), len(order) - 1)
    hit = of_keys[order][position] == keys
    return hit, np.where(hit, order[position], -1)


def repeated_in_row(rows: np.ndarray, values: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """Items equal to an earlier item of their row's list."""
    offset = np.arange(len(rows), dtype=np.int64) - starts[rows]
    width = int(offset.max()) + 1 if len(rows) else 0
    if width > WIDEST_SCAN:
        keys = (rows << 32) | (values & 0xFFFFFFFF)
        order = np.argsort(keys, kind="stable")
        repeated = np.zeros(len(rows), bool)
        repeated[order[1:]] = keys[order][1:] == keys[order][:-1]
        return repeated
    repeated = np.zeros(len(rows), bool)
    for k in range(1, width):
        later = np.flatnonzero(offset >= k)
        repeated[later] |= values[later - k] == values[later]
    return repeated


@dataclass(frozen=True)
class Completed:
    """A partition as an earlier plan of a sequence leaves it once that plan completes: its
    target replicas, all in sync, in the directories the plan chose (an unknown id where it left
    the choice to the broker), led by the same leader if it stays, else the first replica."""

    replicas: tuple[int, ...]
    directories: tuple[str, ...]
    isr: tuple[int, ...]
    leader: int
    removing_replicas: tuple[int, ...] = ()


def scan_plan(image: Image, plan: ReassignmentPlan, cluster: ClusterFacts, completed: Mapping[TopicPartition, Completed] | None = None) -> PlanFacts:
    """The plan's partitions against the cluster; unknown topics and partitions are set aside.
    `completed`: partitions as earlier plans of a sequence leave them (they win over the image)."""
    table = image.topics.table
    columns = plan.columns
    # The last entry of a partition wins (a HashMap in Kafka); its log_dirs line up with its
    # replicas unless a partition appears twice (then Kafka merges the explicit directories).
    winners = columns.winners
    merged_dirs = len(winners) != columns.count
    entry_topic, plan_topics = columns.topic_codes
    name_index = table.name_index
    table_topic = np.array([name_index.get(name, -1) for name in plan_topics], np.int64)
    # Topic codes follow the file's order of first appearance, as Kafka's HashMap walk finds them.
    unknown = [name for name, t in zip(plan_topics, table_topic.tolist()) if t < 0]
    winners = winners[table_topic[entry_topic[winners]] >= 0]
    # The plan's partitions in the table, found all at once.
    found = table.rows_of(table_topic[entry_topic[winners]], columns.partitions[winners])
    missing: list[TopicPartition] = [
        (columns.topics[e], p) for e, p in zip(winners[found < 0].tolist(), columns.partitions[winners[found < 0]].tolist())
    ]
    present = found >= 0
    table_rows = found[present]
    entries = winners[present]  # the plan entry of each row
    topics = table_topic[entry_topic[entries]]
    rows = len(entries)

    # The current replicas (once the work in flight completes), their directories and the ISR.
    current = cluster.model.settled(table_rows)
    c_row, c_broker, c_dir = current.position, current.broker, current.directory
    rf_current = np.bincount(c_row, minlength=rows)
    starts = _starts(rf_current)
    i_row = np.repeat(np.arange(rows, dtype=np.int64), np.diff(table.isr.start)[table_rows])
    i_broker = table.isr.values[gather_index(table.isr.start, table_rows)].astype(np.int64)
    leader = table.leader[table_rows].astype(np.int64)
    isr_size = np.diff(table.isr.start)[table_rows].astype(np.int64)
    if completed:
        names = table.topic_names
        tps = [(names[t], p) for t, p in zip(topics.tolist(), columns.partitions[entries].tolist())]
        c_row, c_broker, c_dir, i_row, i_broker = _overlay_completed(tps, completed, cluster, c_row, c_broker, c_dir, i_row, i_broker, leader, isr_size)
        rf_current = np.bincount(c_row, minlength=rows)
        starts = _starts(rf_current)
    # The in-sync replicas of row r are i_broker[i_starts[r]:i_starts[r + 1]] (i_row is grouped by row).
    i_starts = _starts(np.bincount(i_row, minlength=rows))
    rf_target = columns.lengths[entries]
    t_starts = _starts(rf_target)
    t_index = gather_index(columns.starts, entries)
    t_row = np.repeat(np.arange(rows, dtype=np.int64), rf_target)
    t_broker = columns.brokers[t_index]

    # Each list is a few brokers long: look for a broker in its row's other list position by position.
    t_in_current, t_from_index = _find_in_rows(t_row, t_broker, starts, c_broker)
    t_new = ~t_in_current
    c_kept, _ = _find_in_rows(c_row, c_broker, t_starts, t_broker)
    c_in_sync, _ = _find_in_rows(c_row, c_broker, i_starts, i_broker)
    # In-sync replicas that stay (a target listing a broker twice counts it once).
    t_in_sync, _ = _find_in_rows(t_row, t_broker, i_starts, i_broker)
    isr_kept = np.bincount(t_row[t_in_sync & ~repeated_in_row(t_row, t_broker, t_starts)], minlength=rows)
    changes_set = (np.bincount(t_row[t_new], minlength=rows) + np.bincount(c_row[~c_kept], minlength=rows)) > 0

    # Where each target replica is now (kept ones) and where it ends.
    t_from = np.where(t_new, UNKNOWN_DIR, c_dir[np.maximum(t_from_index, 0)]) if len(c_dir) else np.full(len(t_row), UNKNOWN_DIR, np.int64)
    path_code, names = _target_paths(plan, entries, t_row, t_broker, t_index, merged_dirs)
    t_dir = _resolve_paths(cluster.model, t_broker, path_code, names)
    any_dir = path_code == 0
    t_dir = np.where(any_dir & ~t_new, t_from, t_dir)  # "any" keeps a kept replica where it is

    present_topics, topic_inverse = small_unique(topics)
    min_isr_of = np.array(
        [min_insync(image.configs, table.topic_names[t], cluster.min_isr_default) for t in present_topics.tolist()], np.int64
    )
    return PlanFacts(
        unknown_topics=unknown,
        missing_partitions=missing,
        topic=topics,
        partition=columns.partitions[entries],
        topic_names=table.topic_names,
        table_topic_ids=table.topic_ids,
        c_starts=starts,
        size=np.maximum(table.size[table_rows], 0).astype(np.int64),
        leader=leader,
        rf_current=rf_current.astype(np.int64),
        rf_target=rf_target,
        isr_size=isr_size,
        isr_kept=isr_kept,
        min_isr=min_isr_of[topic_inverse] if rows else np.zeros(0, np.int64),
        changes_set=changes_set,
        t_row=t_row,
        t_broker=t_broker,
        t_explicit=~any_dir,
        t_path=path_code,
        path_names=names,
        t_new=t_new,
        t_dir=t_dir,
        t_from=t_from,
        c_row=c_row,
        c_broker=c_broker,
        c_dir=c_dir,
        c_kept=c_kept,
        c_in_sync=c_in_sync,
    )


def _starts(counts: np.ndarray) -> np.ndarray:
    """Where each row's list starts in a flat column of lists `counts` long (and where the last ends)."""
    starts = np.zeros(len(counts) + 1, np.int64)
    np.cumsum(counts, out=starts[1:])
    return starts


def _target_paths(
    plan: ReassignmentPlan, entries: np.ndarray, t_row: np.ndarray, t_broker: np.ndarray, t_index: np.ndarray, merged_dirs: bool
) -> tuple[np.ndarray, list[str]]:
    """The log_dirs entry of every target replica, as a code into the names returned ("any" is 0)."""
    columns = plan.columns
    if not merged_dirs:
        all_codes, names = columns.path_codes
        return all_codes[t_index], names
    # A partition listed twice: Kafka merges the explicit directories of its entries.
    explicit = plan.replica_dirs
    topics, partitions = columns.topics, columns.partitions
    paths_of = [
        explicit.get((topics[e], p, b), ANY_LOG_DIR) for e, p, b in zip(entries[t_row].tolist(), partitions[entries[t_row]].tolist(), t_broker.tolist())
    ]
    codes = FirstSeenCodes({ANY_LOG_DIR: 0})
    return np.fromiter(map(codes.__getitem__, paths_of), np.int64, len(paths_of)), list(codes)


def _resolve_paths(model: ClusterColumns, brokers: np.ndarray, path_code: np.ndarray, names: list[str]) -> np.ndarray:
    """The directory each (broker, log_dirs entry) names: BROKER_CHOOSES for "any", else the
    broker's directory at that path (UNKNOWN_DIR for none). Paths are few (the same mount points
    on every broker): each (broker, path) is resolved once."""
    pair = brokers * len(names) + path_code if len(names) else path_code
    unique_pairs, inverse = small_unique(pair)
    resolved = np.array(
        [
            BROKER_CHOOSES if code == 0 else model.resolve(int(p // len(names)), names[int(code)])
            for p, code in zip(unique_pairs.tolist(), (unique_pairs % len(names)).tolist())
        ],
        np.int64,
    )
    return resolved[inverse] if len(inverse) else np.zeros(0, np.int64)


def _overlay_completed(
    tps: list[TopicPartition],
    completed: Mapping[TopicPartition, Completed],
    cluster: ClusterFacts,
    c_row: np.ndarray,
    c_broker: np.ndarray,
    c_dir: np.ndarray,
    i_row: np.ndarray,
    i_broker: np.ndarray,
    leader: np.ndarray,
    isr_size: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The plan's partitions that an earlier plan of a sequence completes, as it leaves them:
    their current replicas, directories and ISR replaced (rows stay in order); `leader` and
    `isr_size` are updated in place. A directory move in flight is the earlier plan's business."""
    over = [row for row, tp in enumerate(tps) if tp in completed]
    if not over:
        return c_row, c_broker, c_dir, i_row, i_broker
    replaced = np.zeros(len(tps), bool)
    replaced[over] = True
    rows_c, brokers_c, dirs_c, rows_i, brokers_i = [], [], [], [], []
    for row in over:
        done = completed[tps[row]]
        pairs = [(b, d) for b, d in zip(done.replicas, done.directories) if b not in done.removing_replicas]
        rows_c += [row] * len(pairs)
        brokers_c += [b for b, _ in pairs]
        dirs_c += [cluster.model.directory_of(b, d) for b, d in pairs]
        rows_i += [row] * len(done.isr)
        brokers_i += list(done.isr)
        leader[row] = done.leader
        isr_size[row] = len(done.isr)

    def merged(rows_a: np.ndarray, rows_b: list[int], *columns: tuple[np.ndarray, list[int]]) -> list[np.ndarray]:
        keep = ~replaced[rows_a]
        all_rows = np.concatenate([rows_a[keep], np.array(rows_b, np.int64)])
        order = np.argsort(all_rows, kind="stable")
        return [all_rows[order]] + [np.concatenate([a[keep], np.array(b, np.int64)])[order] for a, b in columns]

    c_row, c_broker, c_dir = merged(c_row, rows_c, (c_broker, brokers_c), (c_dir, dirs_c))
    i_row, i_broker = merged(i_row, rows_i, (i_broker, brokers_i))
    return c_row, c_broker, c_dir, i_row, i_broker


def placement(plan: PlanFacts, cluster: ClusterFacts) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Bytes and replicas per directory once the plan completes, and the bytes and replicas the
    plan adds to each. New replicas left to their broker are placed as `place_unassigned` says."""
    count = len(cluster.model.dir_ids)
    used = cluster.used.astype(np.float64)
    replicas = cluster.replicas.copy()
    # Leaving: removed replicas and the sources of directory moves.
    moving = plan.t_moving
    out_dirs = np.concatenate([plan.c_dir[plan.removed], plan.t_from[moving]])
    out_sizes = np.concatenate([plan.size[plan.c_row[plan.removed]], plan.size[plan.t_row[moving]]])
    known = out_dirs >= 0
    used -= np.bincount(out_dirs[known], weights=out_sizes[known], minlength=count)
    replicas -= np.bincount(out_dirs[known], minlength=count)
    # Arriving: new replicas and the targets of directory moves.
    arriving = (plan.t_new | moving) & (plan.t_dir >= 0)
    in_dirs = plan.t_dir[arriving]
    in_sizes = plan.size[plan.t_row[arriving]]
    added = np.bincount(in_dirs, weights=in_sizes, minlength=count)
    used += added
    replicas += np.bincount(in_dirs, minlength=count)
    added_replicas = np.bincount(in_dirs, minlength=count)
    chosen = place_unassigned(plan, cluster, used, replicas)
    for index, directory in chosen.items():
        size = float(plan.size[plan.t_row[index]])
        added[directory] += size
        added_replicas[directory] += 1
    return np.rint(used).astype(np.int64), replicas, np.rint(added).astype(np.int64), added_replicas


def after_plan(plan: PlanFacts, cluster: ClusterFacts, used: np.ndarray, replicas: np.ndarray) -> tuple[ClusterFacts, dict[TopicPartition, Completed]]:
    """The cluster once `plan` completes (`used` and `replicas` per directory from `placement`),
    and its partitions as it leaves them: what the next plan of a sequence is checked against."""
    unplaced = dict(cluster.unplaced)
    for broker in plan.c_broker[plan.removed & (plan.c_dir < 0)].tolist():
        unplaced[broker] = unplaced.get(broker, 0) - 1
    for broker in plan.t_broker[plan.t_new & (plan.t_dir == UNKNOWN_DIR)].tolist():
        unplaced[broker] = unplaced.get(broker, 0) + 1
    ids = cluster.model.dir_ids
    directory = [ids[d] if d >= 0 else "" for d in plan.t_dir.tolist()]
    starts = np.searchsorted(plan.t_row, np.arange(plan.count + 1)).tolist()
    completed: dict[TopicPartition, Completed] = {}
    for row, (tp, target, leader) in enumerate(zip(plan.tps, plan.target, plan.leader.tolist())):
        completed[tp] = Completed(
            replicas=tuple(target),
            directories=tuple(directory[starts[row] : starts[row + 1]]),
            isr=tuple(target),
            leader=leader if leader in target else (target[0] if target else -1),
        )
    after = replace(cluster, used=used, replicas=replicas, unplaced={b: n for b, n in unplaced.items() if n > 0})
    return after, completed


def place_unassigned(plan: PlanFacts, cluster: ClusterFacts, used: np.ndarray, replicas: np.ndarray) -> dict[int, int]:
    """Where each new replica with "any" ends, updating `used` and `replicas`: its broker's
    only usable directory, or (several) the least used by fraction of capacity (by bytes where
    a capacity is unknown), in plan order. Returns target replica index -> directory index."""
    pending = np.flatnonzero(plan.t_dir == BROKER_CHOOSES)
    if not len(pending):
        return {}
    model = cluster.model
    usable: dict[int, list[int]] = {}
    for index in np.flatnonzero(model.usable_dirs()).tolist():
        usable.setdefault(int(model.dir_broker_ids[index]), []).append(index)
    capacity = model.dir_capacity.tolist()
    paths = model.dir_labels
    chosen: dict[int, int] = {}
    sizes = plan.size[plan.t_row[pending]].tolist()
    for index, broker, size in zip(pending.tolist(), plan.t_broker[pending].tolist(), sizes):
        candidates = usable.get(broker)
        if not candidates:
            continue
        if len(candidates) == 1:
            best = candidates[0]
        else:
            best = min(
                candidates,
                key=lambda d: ((used[d] + size) / capacity[d] if capacity[d] else float("inf"), used[d], paths[d]),
            )
        chosen[index] = best
        used[best] += size
        replicas[best] += 1
    return chosen
