"""Preferred leaders, evened out by reordering replica lists (no data moves).

A partition's preferred leader is the first broker of its replica list; a preferred-leader
election after the reassignment makes it the leader. Choosing one replica of each partition as
its leader so that every broker leads its share is a flow problem: a broker over its share hands
one leadership to a broker that follows one of its partitions, and when none of those has room,
along a chain (A leads a partition B follows, B one C follows, ... until a broker with room).
Such chains are augmenting paths: when none exists from a broker, no reordering of these replica
sets can bring it into its band, and the plan says so.

Reordering a partition the plan moves anyway costs nothing more; reordering one it leaves alone
adds it to the reassignment (as a reorder only). So the whole balance is first done with the
partitions that move anyway, and only what that cannot reach uses the others.

Two steps each time: direct hand-overs between an over-loaded leader and an under-loaded
follower (most of the work, cheap), then chains found by breadth-first search over a
broker-by-broker matrix: `edges[a, b]` counts the partitions led by `a` that `b` follows.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

# The broker-by-broker matrix is dense (4 bytes per pair); above this many brokers chains are
# not searched (direct hand-overs still run) and the plan says so.
MAX_BROKERS_FOR_CHAINS = 12_000


@dataclass
class LeaderBalance:
    position: np.ndarray  # per replica: its new position (0 = preferred leader)
    eligible: np.ndarray  # per broker: may lead (the brokers the leader spread is measured over)
    low: np.ndarray  # per broker: the band's bounds (floor and ceiling of the mean)
    high: np.ndarray
    touched: np.ndarray | None = None  # per partition: reordered
    reordered_only: int = 0  # partitions reordered that the plan did not move
    notes: list[str] = field(default_factory=list)


def balance_leaders(
    part_offsets: np.ndarray,
    broker: np.ndarray,
    position: np.ndarray,
    eligible: np.ndarray,
    fixed: np.ndarray,
    moving: np.ndarray,
    tiebreak: np.ndarray,
) -> LeaderBalance:
    """Reorder `position` (per replica, modified in place) so that every eligible broker leads
    the floor or the ceiling of the mean number of partitions, where the replica sets allow.

    `broker`: per replica, the broker it ends on. `fixed`: per partition, its order must stay
    (an excluded topic or broker). `moving`: per partition, the plan changes it anyway; those
    are reordered first. `tiebreak`: per replica, a seeded rank breaking ties."""
    balancer = _Balancer(part_offsets, broker, position, eligible, fixed, tiebreak)
    balancer.lead_from_eligible()
    result = LeaderBalance(position, eligible, balancer.low, balancer.high, balancer.touched)
    if not eligible.any():
        return result
    free = ~fixed & balancer.has_choice
    stages = (free & moving, free)
    for number, stage in enumerate(stages, 1):
        if balancer.in_band():
            break
        balancer.use(stage)
        while True:
            balancer.hand_over_directly()
            if balancer.in_band():
                break
            stuck = balancer.chains()
            # In the last stage, brokers no chain reaches or leaves keep what they have, and
            # the others are balanced around their own mean.
            if number < len(stages) or balancer.in_band() or not stuck.any():
                break
            balancer.freeze(stuck)
    result.touched = balancer.touched
    result.reordered_only = int(np.count_nonzero(balancer.touched & ~moving))
    balancer.freeze(np.zeros(balancer.n, dtype=bool))
    outside = eligible & ((balancer.counts > balancer.high) | (balancer.counts < balancer.low))
    if outside.any():
        mean = float(balancer.counts[eligible].sum()) / int(eligible.sum())
        worst = float(np.max(np.abs(balancer.counts[outside] - mean)))
        reason = (
            "the other replicas of the partitions they lead or follow give no order that evens them out (replica sets and racks)"
            if balancer.searched
            else f"chains of hand-overs are not searched above {MAX_BROKERS_FOR_CHAINS} brokers"
        )
        low, high = int(balancer.low[eligible].min()), int(balancer.high[eligible].max())
        band = f"{low}" if low == high else f"{low}-{high}"
        result.notes.append(
            f"{int(outside.sum())} broker(s) lead outside {band} preferred leaders (the mean is {mean:.1f}; "
            f"the furthest is {worst:.1f} from it): {reason}"
        )
    result.low, result.high = balancer.low, balancer.high
    return result


class _Balancer:
    def __init__(
        self, part_offsets: np.ndarray, broker: np.ndarray, position: np.ndarray, eligible: np.ndarray, fixed: np.ndarray, tiebreak: np.ndarray
    ) -> None:
        self.offsets = part_offsets
        self.partitions = len(part_offsets) - 1
        self.broker = broker
        self.position = position
        self.eligible = eligible
        self.fixed = fixed
        self.tiebreak = tiebreak
        self.n = len(eligible)
        rf = np.diff(part_offsets)
        self.rep_part = np.repeat(np.arange(self.partitions), rf)
        self.leader_row = np.empty(self.partitions, dtype=np.int64)
        rows = np.flatnonzero(position == 0)
        self.leader_row[self.rep_part[rows]] = rows
        eligible_replicas = np.bincount(self.rep_part, weights=eligible[broker], minlength=self.partitions)
        self.has_choice = eligible_replicas >= 2  # another eligible broker could lead it
        self.counts = np.bincount(broker[self.leader_row], minlength=self.n).astype(np.int64)
        self.touched = np.zeros(self.partitions, dtype=bool)
        self.low = np.zeros(self.n, dtype=np.int64)
        self.high = np.zeros(self.n, dtype=np.int64)
        self.active = np.zeros(self.partitions, dtype=bool)
        self.searched = True
        self.frozen = np.zeros(self.n, dtype=bool)
        self._led: list[dict[int, None]] | None = None
        self._edges: np.ndarray | None = None

    # Band -------------------------------------------------------------------------------

    def _set_band(self) -> None:
        """Floor and ceiling of the mean over the eligible brokers that are not frozen, of the
        leaderships they hold (partitions led outside them that must stay there do not count).
        A frozen broker's band is what it has."""
        balanced = self.eligible & ~self.frozen
        total = int(self.counts[balanced].sum())
        mean = total / max(int(balanced.sum()), 1)
        self.low = np.where(balanced, int(np.floor(mean)), np.where(self.eligible, self.counts, 0)).astype(np.int64)
        self.high = np.where(balanced, int(np.ceil(mean)), np.where(self.eligible, self.counts, 0)).astype(np.int64)

    def freeze(self, brokers: np.ndarray) -> None:
        """These brokers keep the leaderships they have (no chain can change them); the band is
        the others' mean. An empty mask restores the band over every eligible broker."""
        self.frozen = brokers.copy() if not brokers.any() else self.frozen | brokers
        self._set_band()

    def in_band(self) -> bool:
        e = self.eligible
        return bool(((self.counts[e] >= self.low[e]) & (self.counts[e] <= self.high[e])).all())

    def hand_over_directly(self) -> None:
        for _ in range(3):
            before = self.counts.copy()
            self.shed_from_over()
            self.fill_under()
            if np.array_equal(before, self.counts) or self.in_band():
                break

    def lead_from_eligible(self) -> None:
        """A partition led by a broker that may not lead (fenced, excluded from holding) gets an
        eligible leader where it has one, the one that leads least."""
        leaders = self.broker[self.leader_row]
        stranded = np.flatnonzero(~self.eligible[leaders] & ~self.fixed)
        for p in stranded[np.argsort(self.tiebreak[self.leader_row[stranded]], kind="stable")].tolist():
            rows = [r for r in range(int(self.offsets[p]), int(self.offsets[p + 1])) if self.eligible[self.broker[r]]]
            if rows:
                self._swap(p, min(rows, key=lambda r: (self.counts[self.broker[r]], self.tiebreak[r])))
        self._set_band()

    # Moves ------------------------------------------------------------------------------

    def _swap(self, p: int, to_row: int) -> None:
        row = int(self.leader_row[p])
        a, b = int(self.broker[row]), int(self.broker[to_row])
        self.position[row], self.position[to_row] = self.position[to_row], self.position[row]
        self.counts[a] -= 1
        self.counts[b] += 1
        self.leader_row[p] = to_row
        self.touched[p] = True
        if self._led is not None and self.active[p]:
            del self._led[a][p]
            self._led[b][p] = None
        if self._edges is not None and self.active[p]:
            for r in range(int(self.offsets[p]), int(self.offsets[p + 1])):
                x = int(self.broker[r])
                if self.eligible[x]:
                    if x != a:
                        self._edges[a, x] -= 1
                    if x != b:
                        self._edges[b, x] += 1

    def use(self, partitions: np.ndarray) -> None:
        """From now on, reorder only these partitions."""
        self.active = partitions
        self._led = None
        self._edges = None

    def shed_from_over(self) -> None:
        """Brokers over their band hand leaderships to the follower furthest under its band."""
        counts, broker, eligible = self.counts, self.broker, self.eligible
        over = counts > self.high
        candidates = np.flatnonzero(over[broker[self.leader_row]] & self.active)
        for p in candidates[np.argsort(self.tiebreak[self.leader_row[candidates]], kind="stable")].tolist():
            a = int(broker[self.leader_row[p]])
            if counts[a] <= self.high[a]:
                continue
            best, best_key = -1, None
            for r in range(int(self.offsets[p]), int(self.offsets[p + 1])):
                b = int(broker[r])
                if b == a or not eligible[b] or counts[b] >= self.high[b]:
                    continue
                key = (counts[b] - self.low[b], self.tiebreak[r])
                if best_key is None or key < best_key:
                    best, best_key = r, key
            if best >= 0:
                self._swap(p, best)

    def fill_under(self) -> None:
        """Brokers under their band take leaderships of partitions they follow from leaders
        above theirs."""
        counts, broker = self.counts, self.broker
        under = counts < self.low
        rows = np.flatnonzero(under[broker] & (self.position != 0) & self.active[self.rep_part])
        for r in rows[np.argsort(self.tiebreak[rows], kind="stable")].tolist():
            b = int(broker[r])
            if counts[b] >= self.low[b]:
                continue
            p = int(self.rep_part[r])
            a = int(broker[self.leader_row[p]])
            if counts[a] > self.low[a]:
                self._swap(p, r)

    # Chains -----------------------------------------------------------------------------

    def _build_chains_index(self) -> None:
        """Per broker, the active partitions it leads (in tiebreak order); and the matrix of
        hand-overs: edges[a, b] = active partitions led by `a` with an eligible replica on `b`."""
        self._led = [{} for _ in range(self.n)]
        active = np.flatnonzero(self.active)
        leaders = self.broker[self.leader_row]
        for p in active[np.argsort(self.tiebreak[self.leader_row[active]], kind="stable")].tolist():
            self._led[leaders[p]][p] = None
        rows = np.flatnonzero(self.active[self.rep_part])
        a = leaders[self.rep_part[rows]]
        b = self.broker[rows]
        keep = (a != b) & self.eligible[b]
        self._edges = np.bincount(a[keep].astype(np.int64) * self.n + b[keep], minlength=self.n * self.n).reshape(self.n, self.n).astype(np.int32)

    def chains(self) -> np.ndarray:
        """Augmenting paths: first from every broker over its band to a broker below its
        ceiling, then from brokers above their floor to every broker under its band. Returns
        the brokers still outside their band that no chain leaves (over it) or, when there are
        none, that no chain reaches (under it)."""
        stuck = np.zeros(self.n, dtype=bool)
        if self.n > MAX_BROKERS_FOR_CHAINS:
            self.searched = False
            return stuck
        if self._edges is None:
            self._build_chains_index()
        eligible = self.eligible
        while True:
            sources = eligible & (self.counts > self.high)
            if not sources.any():
                break
            if not self._augment(sources, eligible & (self.counts < self.high), from_over=True):
                # Settle these first: with them out of the mean, the band of the others moves.
                return sources
        while True:
            sinks = eligible & (self.counts < self.low)
            if not sinks.any():
                break
            if not self._augment(eligible & (self.counts > self.low), sinks, from_over=False):
                return sinks
        return stuck

    def _augment(self, sources: np.ndarray, sinks: np.ndarray, from_over: bool) -> bool:
        """One breadth-first search from all sources at once; applies vertex-disjoint paths to
        as many sinks as it reaches. False when it reaches none."""
        assert self._edges is not None
        edges = self._edges
        parent = np.full(self.n, -1, dtype=np.int64)
        seen = sources.copy()
        frontier = np.flatnonzero(sources)
        found: list[int] = []
        while frontier.size and not found:
            reach = (edges[frontier] > 0) & ~seen & self.eligible
            hit = reach.any(axis=0)
            if not hit.any():
                break
            new = np.flatnonzero(hit)
            parent[new] = frontier[np.argmax(reach[:, new], axis=0)]
            seen[new] = True
            found = new[sinks[new]].tolist()
            frontier = new
        if not found:
            return False
        used: set[int] = set()
        applied = False
        for sink in found:
            path = [sink]
            while not sources[path[-1]]:
                path.append(int(parent[path[-1]]))
            if used.intersection(path):
                continue
            root, end = path[-1], path[0]
            # Still a source and a sink (an earlier path of this search may have fixed them).
            if from_over and (self.counts[root] <= self.high[root] or self.counts[end] >= self.high[end]):
                continue
            if not from_over and (self.counts[root] <= self.low[root] or self.counts[end] >= self.low[end]):
                continue
            used.update(path)
            path.reverse()  # root ... sink: each broker hands one leadership to the next
            moves = [self._partition_for(a, b) for a, b in zip(path, path[1:])]
            for p, row in moves:
                self._swap(p, row)
            applied = True
        return applied

    def _partition_for(self, a: int, b: int) -> tuple[int, int]:
        """A partition `a` leads that `b` follows (the first in tiebreak order), and b's row."""
        assert self._led is not None
        broker = self.broker
        for p in self._led[a]:
            for r in range(int(self.offsets[p]), int(self.offsets[p + 1])):
                if broker[r] == b:
                    return p, r
        raise AssertionError(f"no partition led by {a} is followed by {b}, yet the hand-over matrix counts one")
