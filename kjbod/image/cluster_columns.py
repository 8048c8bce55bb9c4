"""The cluster for analysis, as columns: its brokers, their log directories, and where each
replica lies once the work in flight completes. The one model the planner (planner/tables.py),
its report and `reassign check` (tools/plan_check/facts.py) read; the partitions themselves are
the image's columns (image/columns.py, `table`).

One convention for codes, whoever reads them:

- a broker is its index in `broker_ids` (ascending): every registered broker, and any broker a
  replica names without being registered (such a replica still has to go somewhere);
- a rack is its index in `racks` (the rack names, sorted); NO_RACK for a broker without one;
- a directory is its index in `dir_ids`: each registered broker's directories (ascending broker
  id), those with a known path by path, then those only its registration lists. A replica whose
  directory is not one of its own broker's (UNASSIGNED, LOST, MIGRATING, or an id the broker does
  not have) is in UNKNOWN_DIR; a new replica whose broker picks the directory ("any" in a
  reassignment's log_dirs, KIP-858) is in BROKER_CHOOSES.

"Once the work in flight completes": replicas a running reassignment removes are gone, and a
replica being moved between its broker's directories (KIP-113) is in the directory its future
replica is built in.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from kjbod.image.columns import PartitionTable, gather_index, pair
from kjbod.image.image import Image

NO_RACK = -1
UNKNOWN_DIR = -1
BROKER_CHOOSES = -2


class DirectoryIndex(dict):
    """Directory id -> directory index, UNKNOWN_DIR for an id no broker has."""

    def __missing__(self, key: object) -> int:
        return UNKNOWN_DIR


@dataclass(frozen=True)
class Settled:
    """Replicas of some partition rows once the work in flight completes, in list order, grouped
    by row: the position of each one's row among the rows asked for, its entry in the table's
    replica columns, its broker id and its directory index (UNKNOWN_DIR when not in one of its
    broker's known directories)."""

    position: np.ndarray
    entry: np.ndarray
    broker: np.ndarray
    directory: np.ndarray


@dataclass(eq=False)
class ClusterColumns:
    """The brokers and directories of a cluster (codes as the module docstring says), and its
    partitions' columns."""

    # Brokers, by index.
    broker_ids: np.ndarray  # int32, ascending
    broker_registered: np.ndarray  # bool
    broker_fenced: np.ndarray  # bool: registered and fenced
    broker_shutting_down: np.ndarray  # bool: registered and in controlled shutdown
    broker_rack: np.ndarray  # int32 index into racks, NO_RACK for none
    racks: list[str]
    # Directories, by index.
    dir_broker: np.ndarray  # int32 broker index
    dir_ids: list[str]
    dir_paths: list[str | None]  # None: no path known (only the broker's registration lists it)
    dir_capacity: np.ndarray  # int64 bytes, 0 when unknown
    dir_online: np.ndarray  # bool
    dir_cordoned: np.ndarray  # bool
    # The partitions.
    table: PartitionTable

    # Brokers -----------------------------------------------------------------------------------

    @property
    def broker_count(self) -> int:
        return len(self.broker_ids)

    @cached_property
    def broker_active(self) -> np.ndarray:
        """Registered, unfenced and not in controlled shutdown."""
        return self.broker_registered & ~self.broker_fenced & ~self.broker_shutting_down

    @cached_property
    def broker_index(self) -> dict[int, int]:
        """Broker id -> broker index."""
        return {int(b): i for i, b in enumerate(self.broker_ids)}

    def index_of(self, brokers: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(index, found) for broker ids; the index of an id not found is where it would be
        inserted (capped at the last broker), so that it can index the broker columns before
        `found` masks it out."""
        brokers = np.asarray(brokers)
        table = self._broker_table
        if table is None or not len(brokers):
            index = np.minimum(np.searchsorted(self.broker_ids, brokers), max(self.broker_count - 1, 0))
            found = self.broker_ids[index] == brokers if self.broker_count else np.zeros(len(brokers), bool)
            return index, found
        # Broker ids are small: a table lookup instead of a binary search per replica.
        inside = (brokers >= 0) & (brokers < len(table))
        index = table[np.where(inside, brokers, 0)]
        found = inside & (index >= 0)
        if not found.all():
            others = ~found
            index[others] = np.minimum(np.searchsorted(self.broker_ids, brokers[others]), self.broker_count - 1)
        return index, found

    @cached_property
    def _broker_table(self) -> np.ndarray | None:
        """broker id -> index (-1: none), when the ids are small enough for a table."""
        if not self.broker_count or self.broker_ids[0] < 0 or self.broker_ids[-1] >= 1 << 22:
            return None
        table = np.full(int(self.broker_ids[-1]) + 1, -1, np.int64)
        table[self.broker_ids] = np.arange(self.broker_count)
        return table

    @cached_property
    def broker_capacity(self) -> np.ndarray:
        """Per broker: the sum of its online directories' capacities (0 when any is unknown)."""
        online = self.dir_online
        capacity = np.bincount(self.dir_broker[online], weights=self.dir_capacity[online], minlength=self.broker_count)
        unknown = np.bincount(self.dir_broker[online & (self.dir_capacity <= 0)], minlength=self.broker_count) > 0
        capacity[unknown] = 0
        return capacity.astype(np.int64)

    # Directories -------------------------------------------------------------------------------

    @cached_property
    def dir_broker_ids(self) -> np.ndarray:
        """The broker id of every directory (int64)."""
        return self.broker_ids[self.dir_broker].astype(np.int64)

    @cached_property
    def dir_labels(self) -> list[str]:
        """Every directory's path, else its id."""
        return [path or directory for path, directory in zip(self.dir_paths, self.dir_ids)]

    @cached_property
    def dir_index(self) -> DirectoryIndex:
        """Directory id -> index (of the last directory with that id, should two brokers share one)."""
        return DirectoryIndex((directory, i) for i, directory in enumerate(self.dir_ids))

    @cached_property
    def _by_path(self) -> dict[tuple[int, str], int]:
        return {(b, p): i for i, (b, p) in enumerate(zip(self.dir_broker_ids.tolist(), self.dir_paths)) if p is not None}

    def resolve(self, broker: int, path: str) -> int:
        """The index of broker `broker`'s directory at `path` (a trailing slash aside), else UNKNOWN_DIR."""
        found = self._by_path.get((broker, path))
        if found is None and path != "/" and path.endswith("/"):
            found = self._by_path.get((broker, path.rstrip("/")))
        return UNKNOWN_DIR if found is None else found

    def broker_dirs(self, broker: int) -> np.ndarray:
        """The directories of broker index `broker`."""
        return np.flatnonzero(self.dir_broker == broker)

    def usable_dirs(self) -> np.ndarray:
        """Directories that may take new replicas: online and not cordoned."""
        return self.dir_online & ~self.dir_cordoned

    @cached_property
    def _code_dir(self) -> np.ndarray:
        """The table's directory codes -> directory index by id (UNKNOWN_DIR for ids no broker has)."""
        index = self.dir_index
        return np.fromiter(map(index.__getitem__, self.table.dir_ids), np.int64, len(self.table.dir_ids))

    @cached_property
    def _shared_ids(self) -> dict[tuple[int, str], int]:
        """(broker id, directory id) -> index, for directory ids that more than one broker has."""
        brokers_of = Counter(self.dir_ids)
        return {(b, d): i for i, (b, d) in enumerate(zip(self.dir_broker_ids.tolist(), self.dir_ids)) if brokers_of[d] > 1}

    def replica_dirs(self, codes: np.ndarray, brokers: np.ndarray) -> np.ndarray:
        """The directory index of replicas, from their directory codes (into the table's dir_ids)
        and their broker ids: the directory with that id among their own broker's, else
        UNKNOWN_DIR."""
        codes = np.asarray(codes, np.int64)
        if not len(codes):
            return np.zeros(0, np.int64)
        directory = self._code_dir[codes]
        if self._shared_ids:
            table_ids = self.table.dir_ids
            shared = {d for _, d in self._shared_ids}
            shared_codes = np.array([c for c, d in enumerate(table_ids) if d in shared], np.int64)
            for r in np.flatnonzero(np.isin(codes, shared_codes)).tolist():
                directory[r] = self._shared_ids.get((int(brokers[r]), table_ids[codes[r]]), UNKNOWN_DIR)
        known = directory >= 0
        mismatched = known & (self.dir_broker_ids[np.maximum(directory, 0)] != brokers) if len(self.dir_ids) else known
        directory[mismatched] = UNKNOWN_DIR
        return directory

    def directory_of(self, broker: int, directory_id: str) -> int:
        """The index of broker `broker`'s directory `directory_id`, else UNKNOWN_DIR."""
        found = self._shared_ids.get((broker, directory_id), self.dir_index[directory_id])
        return found if found >= 0 and int(self.dir_broker_ids[found]) == broker else UNKNOWN_DIR

    # Replicas ----------------------------------------------------------------------------------

    def settled(self, rows: np.ndarray) -> Settled:
        """The replicas of partition rows `rows` once the work in flight completes (see the module
        docstring), in list order."""
        table = self.table
        rows = np.asarray(rows, np.int64)
        position, entry = table.remaining_replicas(rows)
        brokers = table.replicas.values[entry].astype(np.int64)
        codes = table.directories[entry]
        # A replica being moved between its broker's directories is where its future replica is
        # built.
        futures = np.flatnonzero(table.log_future & (table.log_dir >= 0))
        if len(futures) and len(entry):
            future_keys = pair(table.log_row[futures], table.log_broker[futures])
            order = np.argsort(future_keys, kind="stable")
            keys = pair(rows[position], brokers)
            at = np.minimum(np.searchsorted(future_keys[order], keys), len(order) - 1)
            moving = future_keys[order][at] == keys
            codes = np.where(moving, table.log_dir[futures[order][at]], codes)
        return Settled(position, entry, brokers, self.replica_dirs(codes, brokers))

    def placed_now(self, sizes: np.ndarray) -> tuple[np.ndarray, np.ndarray, int]:
        """Per directory: the bytes (each replica counts its partition's `sizes`) and the
        replicas every replica of the table puts there as it lies now (replicas being removed
        included, future replicas not); and how many replicas are in no known directory of
        their broker."""
        table = self.table
        count = len(self.dir_ids)
        codes = table.directories
        code_dir = self._code_dir
        replica_sizes = np.repeat(sizes, table.replica_count)
        # Summed per code of the table, then per directory: no million-row gather of each
        # replica's directory index. Sums stay far below 2**53, so float weights are exact.
        per_code = np.bincount(codes, weights=replica_sizes, minlength=len(code_dir))[: len(code_dir)]
        per_code_replicas = np.bincount(codes, minlength=len(code_dir))[: len(code_dir)]
        mapped = code_dir >= 0
        used = np.bincount(code_dir[mapped], weights=per_code[mapped], minlength=count)
        replicas = np.bincount(code_dir[mapped], weights=per_code_replicas[mapped], minlength=count).astype(np.int64)
        unknown = int(per_code_replicas[~mapped].sum())
        # Replicas whose code names another broker's directory (or a directory id two brokers
        # share): counted again where replica_dirs puts them.
        if len(code_dir) and count:
            code_broker = np.where(mapped, self.dir_broker_ids[np.maximum(code_dir, 0)], -1)
            odd = np.flatnonzero(mapped[codes] & (code_broker[codes] != table.replicas.values))
            if len(odd):
                before, after = code_dir[codes[odd]], self.replica_dirs(codes[odd], table.replicas.values[odd].astype(np.int64))
                odd_sizes = replica_sizes[odd].astype(np.float64)
                used -= np.bincount(before, weights=odd_sizes, minlength=count)
                replicas -= np.bincount(before, minlength=count)
                placed = after >= 0
                used += np.bincount(after[placed], weights=odd_sizes[placed], minlength=count)
                replicas += np.bincount(after[placed], minlength=count)
                unknown += int((~placed).sum())
        return np.rint(used).astype(np.int64), replicas, unknown


def cluster_columns(image: Image) -> ClusterColumns:
    """The model of the image's cluster (the partitions' columns are the image's own)."""
    cluster = image.cluster
    table = image.topics.table
    registered_ids = sorted(cluster.brokers)
    broker_ids = np.union1d(np.array(registered_ids, np.int64), _replica_brokers(table)).astype(np.int32)
    index = {int(b): i for i, b in enumerate(broker_ids.tolist())}
    racks = sorted({b.rack for b in cluster.brokers.values() if b.rack is not None})
    rack_index = {rack: i for i, rack in enumerate(racks)}
    count = len(broker_ids)
    broker_rack = np.full(count, NO_RACK, np.int32)
    registered = np.zeros(count, bool)
    fenced = np.zeros(count, bool)
    shutting_down = np.zeros(count, bool)
    for broker in cluster.brokers.values():
        i = index[broker.id]
        registered[i] = True
        fenced[i] = broker.fenced
        shutting_down[i] = broker.in_controlled_shutdown
        if broker.rack is not None:
            broker_rack[i] = rack_index[broker.rack]

    dir_broker: list[int] = []
    dir_ids: list[str] = []
    dir_paths: list[str | None] = []
    dir_capacity: list[int] = []
    dir_online: list[bool] = []
    dir_cordoned: list[bool] = []
    for broker_id in registered_ids:
        broker = cluster.brokers[broker_id]
        known = {d.directory_id: d for d in cluster.log_dirs.get(broker_id, ())}
        for directory in dict.fromkeys([*sorted(known, key=lambda d: known[d].path), *broker.directories]):
            log_dir = known.get(directory)
            dir_broker.append(index[broker_id])
            dir_ids.append(directory)
            dir_paths.append(log_dir.path if log_dir else None)
            dir_capacity.append((log_dir.capacity_bytes or 0) if log_dir else 0)
            dir_online.append(directory in broker.directories)
            dir_cordoned.append(directory in broker.cordoned_directories)
    return ClusterColumns(
        broker_ids=broker_ids,
        broker_registered=registered,
        broker_fenced=fenced,
        broker_shutting_down=shutting_down,
        broker_rack=broker_rack,
        racks=racks,
        dir_broker=np.array(dir_broker, np.int32),
        dir_ids=dir_ids,
        dir_paths=dir_paths,
        dir_capacity=np.array(dir_capacity, np.int64),
        dir_online=np.array(dir_online, bool),
        dir_cordoned=np.array(dir_cordoned, bool),
        table=table,
    )


def _replica_brokers(table: PartitionTable) -> np.ndarray:
    """The brokers the replicas name once running reassignments complete (a broker only a
    reassignment removes from its partitions holds nothing then), ascending."""
    values = table.replicas.values
    reassigning = table.removing.stored_rows(table.partition_count)
    if not len(reassigning):
        return _present(values)
    # Every replica, less the reassigning partitions' replicas, plus those of them that remain.
    _, remaining = table.remaining_replicas(reassigning)
    listed = gather_index(table.replicas.start, reassigning)
    return np.union1d(_present(values, minus=values[listed]), values[remaining])


def _present(values: np.ndarray, minus: Iterable[int] | np.ndarray = ()) -> np.ndarray:
    """The distinct values (broker ids) of `values`, less those only listed in `minus` (a part of
    `values`, as many times as it is there), ascending."""
    minus = np.asarray(minus if isinstance(minus, np.ndarray) else list(minus), np.int64)
    if not len(values):
        return np.zeros(0, np.int64)
    low, high = int(values.min()), int(values.max())
    if low >= 0 and high < 1 << 22:
        counts = np.bincount(values, minlength=high + 1)
        if len(minus):
            counts -= np.bincount(minus, minlength=high + 1)[: high + 1]
        return np.flatnonzero(counts > 0).astype(np.int64)
    found, counts = np.unique(values, return_counts=True)
    if len(minus):
        gone, gone_counts = np.unique(minus, return_counts=True)
        counts[np.searchsorted(found, gone)] -= gone_counts
    return found[counts > 0].astype(np.int64)
