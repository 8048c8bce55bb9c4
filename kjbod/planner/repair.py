"""The last step of the broker phase: repair what the rounds leave outside the count and byte
bands, and give back moves the bands do not need, moving the fewest bytes (issue 30).

The rounds alternate: a count round evens counts with replicas whose bytes match, a byte round
evens bytes and lets counts go past their band, and each can undo some of what the one before did.
This pass looks at both bands at once. Each broker's distance from its bands is a penalty: a
replica over or under the count band weighs COUNT_WEIGHT, a byte over or under the byte band
BYTE_WEIGHT (in units of the mean byte target, against the bytes a move costs). A move of a
replica r to broker B changes the penalty of r's broker and B, and costs r's size when r leaves
its original broker, nothing when r had already moved (it only changes its target), and gives its
size back when B is r's original broker (the move is undone). A move is taken when it makes no
broker's penalty worse in total and lowers either the penalty or the bytes moved; the best ones
first. Candidates are scored with numpy; each is then checked, in order, against the hard rules
with the loads as they are by then (as `_match_pass` does). Then, while some broker is still
outside a band and no single move helps (both brokers of a needed move are at the edge of their
count band), exchanges: a replica from A to B and one from B to A, counts unchanged.

Last, what the directories will cost (bench_optimum's optima move next to nothing between the
directories of one broker, where the directory step moved 10-25% of kjbod's bytes): leavers are
chosen again so that the brokers they leave need fewer moves between their directories
(`_directory_swaps`), and chains through a broker that both takes and gives are cut short
(`_shortcuts`). Both keep every count, no penalty grows, and each is taken only when it saves
more bytes than it adds, directories included.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from kjbod.planner.core import _Placement, _Setup, _Targets
    from kjbod.planner.request import PlanRequest
    from kjbod.planner.tables import ClusterTables

COUNT_WEIGHT = 1e4  # a replica outside the count band, in mean byte targets
BYTE_WEIGHT = 2.0  # a byte outside the byte band, against a byte moved
# Passes over the candidates, each taking every valid move it finds: while brokers are outside
# a band, then giving moves back. Each pass checks at most CHECKED single moves and REPLACED
# replacements against the rules (one by one, in Python): the pass costs the same at any scale.
FIX_PASSES = 8
GIVE_BACK_PASSES = 2
PARTNERS = 16  # per pass, the brokers furthest over (and under) their targets that are looked at besides those outside a band
REPLACED = 500  # per pass, the largest moves looked at for a cheaper replacement
CHECKED = 5_000  # per pass, the best-scored single moves checked against the rules
EXCHANGE_SIDE = 64  # per replica of A, the replicas of B an exchange scores (nearest in size to what would even the pair out)
EXCHANGES_CHECKED = 512  # per pair of brokers, the best-scored exchanges checked against the rules
SWAP_ROUNDS = 3  # per pass, the directory swaps' batch scorings (each of every broker's candidates)
SWAP_ROUNDS_AGAIN = 1  # the same, in the pass after the shortcuts (it mends what they undo: little)
SWAP_CHECKS = 100_000  # per pass, the most directory swaps checked against the rules, one by one in Python
SWAP_CHUNK = 1 << 16  # candidate swaps whose directory rows are scored at once (bounds the memory)
SHORTCUTS_CHECKED = 1_000  # per pass, the best-scored shortcuts checked against the rules
SWAP_SIDE = 8  # per leaver, the replicas nearest its size a directory swap scores
SHORTCUT_SIDE = 8  # per replica leaving a broker, the replicas arriving there nearest its size a shortcut scores
SWAPS_CHECKED = 64  # per round and broker, the most directory swaps checked (several may be taken)


@dataclass
class _SwapCandidates:
    """Candidate directory swaps, one per index: leaver r goes back to its broker a, stayer q
    goes to b (where r is) instead."""

    r: np.ndarray
    q: np.ndarray
    a: np.ndarray
    b: np.ndarray
    size_r: np.ndarray
    size_q: np.ndarray
    slot_r: np.ndarray  # r's directory: its column in a's row of the grid
    slot_q: np.ndarray
    saved: np.ndarray  # the bytes a would no longer move between its directories
    penalty: np.ndarray  # the change of a's and b's penalties
    outside: np.ndarray  # per broker: its directories' bytes outside their band now


@dataclass
class _SwapPass:
    """What one pass of directory swaps works with. The directories it balances as a matrix, a
    row per broker, padded with -1 (no capacity, no usage: never outside a band)."""

    grid: np.ndarray  # broker x slot: directory index or -1
    slot: np.ndarray  # per directory: its column in its broker's row (-1 if not balanced)
    cap: np.ndarray  # broker x slot: capacity (0 in padding)
    limit: np.ndarray  # broker x slot: the room limit (inf in padding)
    ranked: np.ndarray  # the replicas a swap may move, by original broker, then size (sorted once a pass)
    blocked: np.ndarray  # per replica: a leaver found unable to come back
    budget: int  # checks left against the rules
    dir_limit: np.ndarray  # per directory: the room limit
    refused: set[int] = field(default_factory=set)  # stayer * brokers + target: refused by the rules
    rows: dict[int, tuple[list[int], list[float], list[float], float]] = field(default_factory=dict)


class Repair:
    def __init__(
        self, t: ClusterTables, request: PlanRequest, setup: _Setup, placement: _Placement, targets: _Targets, byte_tolerance: float, rack_limit
    ) -> None:
        self.t, self.request, self.setup, self.placement = t, request, setup, placement
        holders = targets.holders & setup.receivable
        self.holders = holders
        self.low = np.where(holders, targets.low, -(1 << 60)).astype(np.float64)
        self.high = np.where(holders, targets.high, 1 << 60).astype(np.float64)
        self.byte_low = np.where(holders, targets.bytes * (1 - byte_tolerance), -np.inf)
        self.byte_high = np.where(holders, targets.bytes * (1 + byte_tolerance), np.inf)
        self.byte_target = np.where(holders, targets.bytes, 0.0)
        self.unit = max(float(targets.bytes[holders].mean()) if holders.any() else 1.0, 1.0)
        self.limits = [rack_limit(rf) for rf in range(int(np.diff(t.part_offsets).max(initial=0)) + 2)]
        # Replicas this pass may move: movable, not forced to leave (they have), not in an
        # offline directory's partition, on a broker that holds load.
        # Replicas forced off their broker stay where the rounds sent them.
        self.movable = setup.movable & ~setup.excluded & ~setup.forced & ~t.partitions_with(setup.offline)[t.rep_part]
        self.low_l, self.high_l = self.low.tolist(), self.high.tolist()
        self.byte_low_l, self.byte_high_l = self.byte_low.tolist(), self.byte_high.tolist()
        self.receivable_np = setup.receivable & holders
        self.receivable = self.receivable_np.tolist()
        self.limits_np = np.array(self.limits, dtype=np.int64)
        self.racks_for = t.broker_rack.tolist()
        self.moved = 0
        self._dirs_of: dict[int, np.ndarray | None] | None = None

    # The penalty -----------------------------------------------------------------------------

    def _penalty(self, broker: np.ndarray, count: np.ndarray, load: np.ndarray) -> np.ndarray:
        count_off = np.maximum(count - self.high[broker], 0) + np.maximum(self.low[broker] - count, 0)
        byte_off = np.maximum(load - self.byte_high[broker], 0) + np.maximum(self.byte_low[broker] - load, 0)
        return COUNT_WEIGHT * count_off + BYTE_WEIGHT * byte_off / self.unit

    def _penalty_one(self, b: int, count: float, load: float) -> float:
        count_off = max(count - self.high_l[b], 0.0) + max(self.low_l[b] - count, 0.0)
        byte_off = max(load - self.byte_high_l[b], 0.0) + max(self.byte_low_l[b] - load, 0.0)
        return COUNT_WEIGHT * count_off + BYTE_WEIGHT * byte_off / self.unit

    def _cost(self, rep: np.ndarray, source: np.ndarray, target: np.ndarray) -> np.ndarray:
        """Bytes moved, in units, that moving `rep` from `source` to `target` adds (negative: gives back)."""
        home = self.t.rep_broker[rep]
        sign = np.where(source == home, 1.0, np.where(target == home, -1.0, 0.0))
        return sign * self.t.rep_size[rep] / self.unit

    # The rules ---------------------------------------------------------------------------------

    def _allowed(self, rep: int, target: int) -> bool:
        t, placement = self.t, self.placement
        if not self.receivable[target]:
            return False
        partition = int(t.rep_part[rep])
        start = int(t.part_offsets[partition])
        rf = int(t.part_offsets[partition + 1]) - start
        brokers = placement.broker[start : start + rf].tolist()
        if target in brokers:
            return False
        rack = self.racks_for[target]
        if rack >= 0:
            racks = placement.rack_counts(partition)
            others = racks[: rep - start] + racks[rep - start + 1 :]
            if others.count(rack) >= self.limits[rf]:
                return False
        if placement.best_room[target] < float(t.rep_size[rep]):
            return False
        source = brokers[rep - start]
        home = int(t.rep_broker[rep])
        if source == home and t.rep_in_sync[rep] and placement.isr_budget[partition] <= 0:
            return False  # the partition keeps min.insync.replicas in sync while it moves
        return True

    def _gain(self, moves: list[tuple[int, int]]) -> tuple[float, float]:
        """The change of penalty and of cost of these moves (replica, target), with the loads as they are now."""
        counts, loads = self.placement.counts, self.placement.loads
        delta: dict[int, list[float]] = {}
        cost = 0.0
        for rep, target in moves:
            source = int(self.placement.broker[rep])
            size = float(self.t.rep_size[rep])
            for b, dc, dl in ((source, -1, -size), (target, 1, size)):
                entry = delta.setdefault(b, [0.0, 0.0])
                entry[0] += dc
                entry[1] += dl
            home = int(self.t.rep_broker[rep])
            cost += size / self.unit * (1.0 if source == home else -1.0 if target == home else 0.0)
        penalty = 0.0
        for b, (dc, dl) in delta.items():
            penalty += self._penalty_one(b, counts[b] + dc, loads[b] + dl) - self._penalty_one(b, counts[b], loads[b])
        return penalty, cost

    @staticmethod
    def _worth(penalty: float, cost: float) -> bool:
        return penalty <= 1e-9 and (penalty < -1e-9 or cost < -1e-12)

    # The passes --------------------------------------------------------------------------------

    def run(self) -> int:
        for _ in range(FIX_PASSES):
            if not self._outside().any():
                break
            moved = self._single_moves(fixing=True)
            if not self._exchanges() and not moved:
                break
        for _ in range(GIVE_BACK_PASSES):
            returned = self._single_moves(fixing=False)
            if not self._replacements() and not returned:
                break
        for rounds in (SWAP_ROUNDS, SWAP_ROUNDS_AGAIN):
            self._directory_swaps(rounds)
            if not self._shortcuts():
                break
        return self.moved

    def _outside(self) -> np.ndarray:
        """Per broker: outside its count or byte band."""
        b = np.arange(self.t.broker_count)
        return self.holders & (self._penalty(b, self.placement.count.astype(np.float64), self.placement.bytes) > 0)

    def _replacements(self) -> bool:
        """Moves replaced by cheaper ones with the same effect on counts: a replica r that moved
        from A to B goes back to A, and a replica q on A goes to B instead: one still on its
        original broker and smaller than r (it costs its size), one that had moved to A (it
        costs nothing more), or one whose original broker is B (it goes back too). Taken when
        both brokers' bytes stay in their bands (no penalty grows) and the rules allow both
        moves; the largest r first, and per r the cheapest q, then the one nearest r's size."""
        t, placement = self.t, self.placement
        current = placement.broker
        home = t.rep_broker
        away = np.flatnonzero(self.movable & (current != home) & self.holders[home])
        if away.size == 0:
            return False
        away = away[np.argsort(-t.rep_size[away], kind="stable")][:REPLACED]
        candidates = np.flatnonzero(self.movable & np.isin(current, home[away]))  # on the brokers the moves came from
        order = candidates[np.argsort(current[candidates], kind="stable")]
        starts = np.searchsorted(current[order], np.arange(t.broker_count + 1))
        loads = placement.loads
        taken = False
        for r in away.tolist():
            a, b = int(home[r]), int(current[r])
            if int(placement.broker[r]) != b:
                continue  # it moved in this pass
            size = float(t.rep_size[r])
            qs = order[int(starts[a]) : int(starts[a + 1])]
            qs = qs[(current[qs] == a) & (t.rep_part[qs] != t.rep_part[r])]
            if qs.size == 0:
                continue
            q_size = t.rep_size[qs]
            # A takes size - q_size more, B gives as much: both stay in their byte bands.
            least = size - max(min(self.byte_high_l[a] - loads[a], loads[b] - self.byte_low_l[b]), 0.0)
            most = size + max(min(loads[a] - self.byte_low_l[a], self.byte_high_l[b] - loads[b]), 0.0)
            q_cost = np.where(home[qs] == a, q_size, np.where(home[qs] == b, -q_size, 0.0))
            fits = (q_size >= least) & (q_size <= most) & (q_cost < size)
            if not fits.any():
                continue
            qs, q_cost, q_size = qs[fits], q_cost[fits], q_size[fits]
            for q in qs[np.lexsort((np.abs(q_size - size), q_cost))][:8].tolist():
                if not self._allowed(q, b) or not self._allowed(r, a):
                    continue
                penalty, cost = self._gain([(r, a), (q, b)])
                if not self._worth(penalty, cost):
                    continue
                self._move(r, a)
                self._move(q, b)
                taken = True
                break
        return taken

    # Single moves and exchanges --------------------------------------------------------------

    def _brokers_to_look_at(self) -> tuple[np.ndarray, np.ndarray]:
        """Sources and receivers: the brokers outside a band, and the PARTNERS furthest over (under) their targets."""
        count, load = self.placement.count, self.placement.bytes
        b = np.arange(self.t.broker_count)
        off = self._penalty(b, count.astype(np.float64), load) > 0
        relative = np.where(self.holders, (load - self.byte_target) / self.unit, 0.0) + np.where(self.holders, count - (self.low + self.high) / 2, 0.0)
        order = np.argsort(-relative, kind="stable")
        over = order[: PARTNERS][relative[order[:PARTNERS]] > 0]
        under = order[::-1][: PARTNERS]
        under = under[relative[under] < 0]
        sources = np.union1d(np.flatnonzero(off & self.holders), over)
        receivers = np.union1d(np.flatnonzero(off & self.holders), under)
        return sources, receivers

    def _single_moves(self, fixing: bool) -> bool:
        """Single moves: while `fixing`, of replicas from brokers over a band (or furthest over
        their targets) to brokers under one (or furthest under), and back to their original
        brokers; otherwise only the latter."""
        t, placement = self.t, self.placement
        count, load = placement.count.astype(np.float64), placement.bytes
        current = placement.broker
        candidates_rep, candidates_target = [], []
        sources, receivers = self._brokers_to_look_at() if fixing else (np.zeros(0, dtype=np.int64),) * 2
        reps = np.flatnonzero(self.movable & np.isin(current, sources)) if sources.size else sources
        if reps.size and receivers.size:
            pair_rep = np.repeat(reps, receivers.size)
            pair_target = np.tile(receivers, reps.size)
            keep = pair_target != current[pair_rep]
            candidates_rep.append(pair_rep[keep])
            candidates_target.append(pair_target[keep])
        # Moves back to a replica's original broker, wherever it is now.
        away = np.flatnonzero(self.movable & (current != t.rep_broker) & self.holders[t.rep_broker])
        candidates_rep.append(away)
        candidates_target.append(t.rep_broker[away].astype(np.int64))
        rep = np.concatenate(candidates_rep)
        target = np.concatenate(candidates_target)
        if rep.size == 0:
            return False
        source = current[rep]
        size = t.rep_size[rep]
        penalty = (
            self._penalty(source, count[source] - 1, load[source] - size) - self._penalty(source, count[source], load[source])
            + self._penalty(target, count[target] + 1, load[target] + size) - self._penalty(target, count[target], load[target])
        )
        cost = self._cost(rep, source, target)
        good = (penalty <= 1e-9) & ((penalty < -1e-9) | (cost < -1e-12))
        if not good.any():
            return False
        rep, target, score = rep[good], target[good], (penalty + cost)[good]
        order = np.argsort(score, kind="stable")[:CHECKED]
        taken = False
        for r, b in zip(rep[order].tolist(), target[order].tolist()):
            if int(placement.broker[r]) == b or not self._allowed(r, b):
                continue
            if not self._worth(*self._gain([(r, b)])):
                continue
            self._move(r, b)
            taken = True
        return taken

    def _exchanges(self) -> bool:
        """Pairs of moves, A to B and B to A, between a broker outside its byte band and a partner."""
        t, placement = self.t, self.placement
        count, load = placement.count.astype(np.float64), placement.bytes
        b = np.arange(t.broker_count)
        off = np.flatnonzero(self.holders & (self._penalty(b, count, load) > 0))
        if off.size == 0:
            return False
        taken = False
        current = placement.broker
        for a in off.tolist():
            # The partner: the broker whose bytes are furthest the other way from its target.
            excess = (load - self.byte_target) / self.unit
            sign = 1.0 if load[a] > self.byte_target[a] else -1.0
            partners = np.flatnonzero(self.holders & (sign * excess < 0))
            if partners.size == 0:
                continue
            for partner in partners[np.argsort(sign * excess[partners], kind="stable")][:4].tolist():
                if self._exchange(a, partner, current):
                    taken = True
                    count, load = placement.count.astype(np.float64), placement.bytes
                    break
        return taken

    def _exchange(self, a: int, partner: int, current: np.ndarray) -> bool:
        t, placement = self.t, self.placement
        load = placement.bytes
        from_a = np.flatnonzero(self.movable & (current == a))
        from_b = np.flatnonzero(self.movable & (current == partner))
        if from_a.size == 0 or from_b.size == 0:
            return False
        # What would even the pair out: a's excess over its target, less the partner's.
        want = ((load[a] - self.byte_target[a]) - (load[partner] - self.byte_target[partner])) / 2
        size_a, size_b = t.rep_size[from_a], t.rep_size[from_b]
        # Per replica of a, the replicas of the partner nearest to size_a - want.
        order_b = np.argsort(size_b, kind="stable")
        near = np.searchsorted(size_b[order_b], size_a - want)
        window = np.arange(-EXCHANGE_SIDE // 2, EXCHANGE_SIDE // 2)
        pick = np.clip(near[:, None] + window[None, :], 0, from_b.size - 1)
        rep_a = np.repeat(from_a, window.size)
        rep_b = from_b[order_b[pick.reshape(-1)]]
        delta = t.rep_size[rep_a] - t.rep_size[rep_b]
        count, loads = placement.count.astype(np.float64), load
        penalty = (
            self._penalty(np.full(rep_a.size, a), np.full(rep_a.size, count[a]), loads[a] - delta) - self._penalty(np.array([a]), count[[a]], loads[[a]])
            + self._penalty(np.full(rep_a.size, partner), np.full(rep_a.size, count[partner]), loads[partner] + delta)
            - self._penalty(np.array([partner]), count[[partner]], loads[[partner]])
        )
        cost = self._cost(rep_a, np.full(rep_a.size, a), np.full(rep_a.size, partner)) + self._cost(rep_b, np.full(rep_b.size, partner), np.full(rep_b.size, a))
        good = penalty < -1e-9
        if not good.any():
            return False
        order = np.flatnonzero(good)[np.argsort((penalty + cost)[good], kind="stable")]
        for i in order[:EXCHANGES_CHECKED].tolist():
            r1, r2 = int(rep_a[i]), int(rep_b[i])
            if not (self._allowed(r1, partner) and self._allowed(r2, a)):
                continue
            # Both moves at once: each checked against the other's partition too.
            if int(t.rep_part[r1]) == int(t.rep_part[r2]):
                continue
            if not self._worth(*self._gain([(r1, partner), (r2, a)])):
                continue
            self._move(r1, partner)
            self._move(r2, a)
            return True
        return False

    def _shortcuts(self) -> bool:
        """Chains cut short: a replica r that moved onto broker B (from elsewhere) and a replica s
        that left B for C become r going to C directly and s staying on B (in its directory):
        every broker keeps its count, B and C trade the difference of the two sizes, and s's
        move is saved. The rounds make such chains where a broker both takes and gives (a count
        round sends it replicas, a byte round takes larger ones away). Taken when no broker's
        penalty grows, the rules allow both moves, and what is saved is more than what B's
        directories would then have to move between them; per s, the incoming replicas of B
        nearest its size first."""
        t, placement = self.t, self.placement
        current, home = placement.broker, t.rep_broker
        incoming = np.flatnonzero(self.movable & (current != home) & self.holders[current])
        outgoing = np.flatnonzero(self.movable & (current != home) & self.holders[home] & (t.rep_dir >= 0))
        if incoming.size == 0 or outgoing.size == 0:
            return False
        receiving = np.zeros(t.broker_count, dtype=bool)
        receiving[current[incoming]] = True
        outgoing = outgoing[receiving[home[outgoing]]]
        if outgoing.size == 0:
            return False
        span = int(t.rep_size.max(initial=0)) + 1
        key = current[incoming].astype(np.int64) * span + t.rep_size[incoming].astype(np.int64)
        order = np.argsort(key, kind="stable")
        incoming, key = incoming[order], key[order]
        starts = np.searchsorted(current[incoming], np.arange(t.broker_count + 1))
        near = np.searchsorted(key, home[outgoing].astype(np.int64) * span + t.rep_size[outgoing].astype(np.int64))
        window = np.arange(-SHORTCUT_SIDE // 2, SHORTCUT_SIDE // 2)
        first, last = starts[home[outgoing]], starts[home[outgoing] + 1] - 1
        pick = np.clip(near[:, None] + window[None, :], first[:, None], last[:, None])
        s_rep = np.repeat(outgoing, window.size)
        r_rep = incoming[pick.reshape(-1)]
        keep = t.rep_part[s_rep] != t.rep_part[r_rep]
        s_rep, r_rep = s_rep[keep], r_rep[keep]
        if s_rep.size == 0:
            return False
        b, c = home[s_rep], current[s_rep]
        keep = c != home[r_rep]  # r going home is a give-back (the single moves look at those)
        s_rep, r_rep, b, c = s_rep[keep], r_rep[keep], b[keep], c[keep]
        count, load = placement.count.astype(np.float64), placement.bytes
        delta = t.rep_size[s_rep] - t.rep_size[r_rep]  # B gains it, C loses it
        penalty = (
            self._penalty(b, count[b], load[b] + delta) - self._penalty(b, count[b], load[b])
            + self._penalty(c, count[c], load[c] - delta) - self._penalty(c, count[c], load[c])
        )
        saved = t.rep_size[s_rep] / self.unit
        good = penalty <= 1e-9
        if not good.any():
            return False
        taken = False
        for i in np.flatnonzero(good)[np.argsort((penalty - saved)[good], kind="stable")][:SHORTCUTS_CHECKED].tolist():
            s_i, r_i, b_i, c_i = int(s_rep[i]), int(r_rep[i]), int(b[i]), int(c[i])
            if int(current[s_i]) != c_i or int(current[r_i]) != b_i:
                continue  # moved in this pass
            if not self._allowed_back(s_i) or not self._allowed(r_i, c_i):
                continue
            penalty_i, cost_i = self._gain([(r_i, c_i), (s_i, b_i)])
            if penalty_i > 1e-9:
                continue
            directory_cost = self._directory_change(b_i, [(int(t.rep_dir[s_i]), float(t.rep_size[s_i])), (int(placement.counted_dir[r_i]), -float(t.rep_size[r_i]))])
            if cost_i + directory_cost / self.unit >= -1e-12:
                continue
            self._move(r_i, c_i)
            self._move(s_i, b_i)
            taken = True
        return taken

    def _directory_change(self, broker: int, changes: list[tuple[int, float]]) -> float:
        """How many more bytes `broker` would have to move between its directories (half what
        is outside their band) after these (directory, bytes added) changes; 0 where the
        directory kernel does not balance its directories."""
        t, placement = self.t, self.placement
        dirs = self._balanced_dirs(broker)
        if dirs is None:
            return 0.0
        usage = np.array([placement.dir_loads[d] for d in dirs.tolist()])
        after = usage.copy()
        index = {d: i for i, d in enumerate(dirs.tolist())}
        for directory, size in changes:
            if directory in index:
                after[index[directory]] += size
        cap = t.dir_capacity[dirs].astype(np.float64)
        limit = np.array([placement.dir_limit[d] for d in dirs.tolist()])
        both = _outside_band(np.stack([usage, after]), cap, limit, self.request.disk_band, float(cap.sum()))
        return float(both[1] - both[0]) / 2

    def _balanced_dirs(self, broker: int) -> np.ndarray | None:
        """The directories of `broker` the directory kernel balances, or None when it balances none."""
        if self._dirs_of is None:
            t, setup = self.t, self.setup
            capacity = t.dir_capacity
            kept = t.dir_online & ~setup.draining_dirs
            self._dirs_of = {}
            order = np.argsort(t.dir_broker, kind="stable")
            starts = np.searchsorted(t.dir_broker[order], np.arange(t.broker_count + 1))
            self._all_dirs = (order, starts, kept, capacity)
        if broker not in self._dirs_of:
            order, starts, kept, capacity = self._all_dirs
            dirs = order[starts[broker] : starts[broker + 1]]
            dirs = dirs[kept[dirs]]
            fine = dirs.size >= 2 and bool((capacity[dirs] > 0).all()) and not self.setup.broker_has_offline_dir[broker]
            self._dirs_of[broker] = dirs if fine else None
        return self._dirs_of[broker]

    # Directories ----------------------------------------------------------------------------

    def _directory_swaps(self, rounds: int) -> None:
        """Leavers chosen again so that the brokers they leave need fewer moves between their
        own directories. A replica r that left broker A from directory Y comes back (to Y) and
        a replica q of A in a directory X above A's mean usage goes where r went instead: X
        loses what Y keeps. Counts stay; q costs its size, r gives its size back; the bytes A
        would have to move between its directories to bring them into their band (half of what
        is outside it, over and under) drop. Taken when that drop is more than the bytes the
        swap adds, no broker's penalty grows, and the rules allow both moves (bench_optimum: the
        optimum moves next to nothing between directories; the directory step moved 10-25% of
        what kjbod moved).

        Every broker's candidates are scored in one numpy batch per round (`_swap_round`),
        then taken best first in Python, each scored again once its broker has changed: a
        round costs a few array operations over all leavers, not a few per broker, so the pass
        can look at every broker (at 200k partitions, one scoring per broker cost 22 s)."""
        if rounds <= 0:
            return
        t, placement, setup = self.t, self.placement, self.setup
        capacity = t.dir_capacity.astype(np.float64)
        counted = t.dir_online & ~setup.draining_dirs & (capacity > 0)
        n_counted = np.bincount(t.dir_broker[counted], minlength=t.broker_count)
        n_kept = np.bincount(t.dir_broker[t.dir_online & ~setup.draining_dirs], minlength=t.broker_count)
        # The brokers whose directories the directory kernel balances (every kept one has a capacity).
        balanced = self.holders & (n_counted >= 2) & (n_counted == n_kept) & ~setup.broker_has_offline_dir
        if not balanced.any():
            return
        # Each balanced broker's directories as one row of a padded matrix; padding has no
        # capacity and no usage, so it is never outside a band.
        dirs = np.flatnonzero(counted & balanced[t.dir_broker])
        dirs = dirs[np.argsort(t.dir_broker[dirs], kind="stable")]
        first = np.searchsorted(t.dir_broker[dirs], np.arange(t.broker_count + 1))
        slot = np.full(len(capacity), -1, dtype=np.int64)
        slot[dirs] = np.arange(dirs.size) - first[t.dir_broker[dirs]]
        grid = np.full((t.broker_count, int(np.diff(first).max())), -1, dtype=np.int64)
        grid[t.dir_broker[dirs], slot[dirs]] = dirs
        dir_limit = np.array(placement.dir_limit, dtype=np.float64)
        cap = np.where(grid >= 0, capacity[grid], 0.0)
        limit = np.where(grid >= 0, dir_limit[grid], np.inf)
        usage = np.where(grid >= 0, placement.dir_usage[grid], 0.0)
        # Only the brokers whose directories are outside their band now have anything to gain
        # (at 1M partitions, a few of them: the pass then costs little).
        outside = _outside_band(usage, cap, limit, self.request.disk_band, np.maximum(cap.sum(axis=1), 1.0)[:, None])
        home = t.rep_broker
        eligible = self.movable & (balanced & (outside > 0))[home] & (t.rep_dir >= 0) & counted[np.maximum(t.rep_dir, 0)]
        ranked = np.flatnonzero(eligible)
        if ranked.size == 0:
            return
        span = int(t.rep_size.max(initial=0)) + 1
        swaps = _SwapPass(
            grid=grid,
            slot=slot,
            cap=cap,
            limit=limit,
            ranked=ranked[np.argsort(home[ranked].astype(np.int64) * span + t.rep_size[ranked].astype(np.int64), kind="stable")],
            blocked=np.zeros(t.replica_count, dtype=bool),
            budget=SWAP_CHECKS,
            dir_limit=dir_limit,
        )
        for k in range(rounds):
            # The last round also pairs up the swaps the penalty refuses (`_double_swaps`), with
            # the same scoring; a round that takes nothing ends the pass, doubles first.
            last = k == rounds - 1
            if not self._swap_round(swaps, doubles=last) and not last:
                self._swap_round(swaps, doubles=True)
                break
            if swaps.budget <= 0:
                break

    def _swap_candidates(self, swaps: _SwapPass, penalised: bool) -> _SwapCandidates | None:
        """Every broker's candidate swaps (leaver r back home to A, stayer q of A where r went)
        that the rules allow as things are now, scored at once: the directory work each saves
        A, and the change of penalty."""
        t, placement = self.t, self.placement
        band = self.request.disk_band
        current, home = placement.broker, t.rep_broker
        usage_all = placement.dir_usage
        usage = np.where(swaps.grid >= 0, usage_all[swaps.grid], 0.0)
        cap_total = np.maximum(swaps.cap.sum(axis=1), 1.0)
        outside = _outside_band(usage, swaps.cap, swaps.limit, band, cap_total[:, None])
        mean = usage.sum(axis=1) / cap_total
        ranked = swaps.ranked
        moved = current[ranked] != home[ranked]
        leavers = ranked[moved & ~swaps.blocked[ranked]]
        leaver_dir = t.rep_dir[leavers]
        # Only a leaver from a directory below its broker's mean can come back to help it.
        leavers = leavers[(outside[home[leavers]] > 0) & (usage_all[leaver_dir] < mean[home[leavers]] * t.dir_capacity[leaver_dir])]
        stayers = ranked[~moved]  # by broker, then size
        stayer_dir = t.rep_dir[stayers]
        stayers = stayers[(outside[home[stayers]] > 0) & (usage_all[stayer_dir] > mean[home[stayers]] * t.dir_capacity[stayer_dir])]
        if leavers.size == 0 or stayers.size == 0:
            return None
        r, q = self._swap_pairs(leavers, stayers)
        if swaps.refused and r.size:
            fresh = ~np.isin(q * t.broker_count + current[r], np.fromiter(swaps.refused, dtype=np.int64, count=len(swaps.refused)))
            r, q = r[fresh], q[fresh]
        if r.size:
            # What the rules refuse as things are now, in numpy; what a swap taken in this round changes is checked one by one.
            dir_r = t.rep_dir[r]
            fits = (usage_all[dir_r] + t.rep_size[r] <= swaps.dir_limit[dir_r]) & (np.array(placement.best_room)[current[r]] >= t.rep_size[q])
            fits &= self._may_join(r, home[r]) & self._may_join(q, current[r])
            fits &= ~t.rep_in_sync[q] | (np.array(placement.isr_budget)[t.rep_part[q]] > 0)  # min.insync.replicas while q moves
            r, q = r[fits], q[fits]
        if r.size == 0:
            return None
        a, b = home[r], current[r]
        size_r, size_q = t.rep_size[r].astype(np.float64), t.rep_size[q].astype(np.float64)
        count, load = placement.count.astype(np.float64), placement.bytes
        penalty = (
            self._penalty(a, count[a], load[a] + size_r - size_q) - self._penalty(a, count[a], load[a])
            + self._penalty(b, count[b], load[b] - size_r + size_q) - self._penalty(b, count[b], load[b])
        )
        # The directories are scored only where no penalty grows; with `penalised`, only for
        # the pairs of brokers where some swap would grow one (what `_double_swaps` pairs up).
        refused = penalty > 1e-9
        if penalised:
            pair = a.astype(np.int64) * t.broker_count + b
            fine = np.flatnonzero(~refused | np.isin(pair, pair[refused]))
        else:
            fine = np.flatnonzero(~refused)
        r, q, a, b, size_r, size_q, penalty = r[fine], q[fine], a[fine], b[fine], size_r[fine], size_q[fine], penalty[fine]
        slot_r, slot_q = swaps.slot[t.rep_dir[r]], swaps.slot[t.rep_dir[q]]
        saved = np.empty(r.size)
        for lo in range(0, r.size, SWAP_CHUNK):  # the rows of the pairs' directories, a chunk at a time (memory)
            hi = min(lo + SWAP_CHUNK, r.size)
            rows = np.arange(hi - lo)
            after = usage[a[lo:hi]]
            after[rows, slot_r[lo:hi]] += size_r[lo:hi]
            after[rows, slot_q[lo:hi]] -= size_q[lo:hi]
            saved[lo:hi] = (outside[a[lo:hi]] - _outside_band(after, swaps.cap[a[lo:hi]], swaps.limit[a[lo:hi]], band, cap_total[a[lo:hi], None])) / 2
        return _SwapCandidates(r, q, a, b, size_r, size_q, slot_r, slot_q, saved, penalty, outside)

    def _swap_round(self, swaps: _SwapPass, doubles: bool) -> int:
        """One round of directory swaps: all brokers' candidates scored at once, then taken
        best first while the budget of checks lasts; with `doubles`, then pairs of them.
        Returns the swaps taken."""
        c = self._swap_candidates(swaps, penalised=doubles)
        if c is None:
            return 0
        taken = self._single_swaps(swaps, c)
        if doubles and swaps.budget > 0:
            taken += self._double_swaps(swaps, c)
        return taken

    def _single_swaps(self, swaps: _SwapPass, c: _SwapCandidates) -> int:
        t, placement = self.t, self.placement
        band = self.request.disk_band
        current = placement.broker
        r, q, a, b, size_r, size_q, slot_r, slot_q, saved, penalty, outside = (
            c.r, c.q, c.a, c.b, c.size_r, c.size_q, c.slot_r, c.slot_q, c.saved, c.penalty, c.outside
        )
        score = (size_q - size_r - saved) / self.unit
        good = np.flatnonzero((score < -1e-12) & (penalty <= 1e-9))
        if good.size == 0:
            return 0
        taken = 0
        # Brokers a swap of this round changed (bytes, directories): their candidates are scored
        # again, in Python; what is outside the band of those it took replicas back to.
        changed: set[int] = set()
        outside_now: dict[int, float] = {}
        checked = [0] * t.broker_count
        loads, penalty_one = placement.loads, self._penalty_one
        counts = placement.counts
        order = good[np.argsort((score + penalty)[good], kind="stable")]
        columns = (r[order], q[order], a[order], b[order], size_r[order], size_q[order], slot_r[order], slot_q[order], outside[a[order]] - 2 * saved[order])
        for ri, qi, ai, bi, sr, sq, yr, xq, after in zip(*(column.tolist() for column in columns)):
            if swaps.budget <= 0:
                break
            if current[ri] != bi or current[qi] != ai or checked[ai] >= SWAPS_CHECKED:
                continue  # one of them is in a swap taken in this round, or its broker had its share
            checked[ai] += 1
            swaps.budget -= 1
            if ai in changed or bi in changed:
                # The penalty again, with the loads the swaps before it leave (a's and b's counts stay).
                d = sr - sq
                grows = (
                    penalty_one(ai, counts[ai], loads[ai] + d) - penalty_one(ai, counts[ai], loads[ai])
                    + penalty_one(bi, counts[bi], loads[bi] - d) - penalty_one(bi, counts[bi], loads[bi])
                )
                if grows > 1e-9:
                    continue
            if ai in changed:
                # Scored again against the usage the swaps before it leave.
                dirs_l, cap_l, limit_l, total = self._grid_row(swaps, ai)
                usage_l = [placement.dir_loads[d] for d in dirs_l]
                before = outside_now.get(ai)
                if before is None:
                    before = _outside_band_one(usage_l, cap_l, limit_l, band, total)
                usage_l[yr] += sr
                usage_l[xq] -= sq
                after = _outside_band_one(usage_l, cap_l, limit_l, band, total)
                if sq - sr - (before - after) / 2 >= -1e-12 * self.unit:
                    continue
            if not self._allowed_back(ri):
                swaps.blocked[ri] = True  # its partition or its directory has no place for it: not again this pass
                continue
            if not self._allowed(qi, bi):
                swaps.refused.add(qi * t.broker_count + bi)
                continue
            self._move(ri, ai)
            self._move(qi, bi)
            taken += 1
            changed.add(ai)
            changed.add(bi)
            outside_now[ai] = after
            outside_now.pop(bi, None)  # q is counted in one of its directories now
            if after <= 0:
                checked[ai] = SWAPS_CHECKED  # nothing left to save on this broker
        return taken

    def _double_swaps(self, swaps: _SwapPass, c: _SwapCandidates) -> int:
        """Two swaps of one broker A with one broker B at once, when each alone would grow a
        penalty: A and B at the edge of their byte bands allow only a swap whose two replicas
        weigh the same, which seldom exists; two swaps whose size differences cancel out (r1,
        r2 back to A, q1, q2 to B, q1 + q2 near r1 + r2) leave both where they were. Per
        candidate the penalty refuses, the one of the same A and B whose difference is nearest
        the opposite; taken best first, each checked against the rules and scored again
        exactly (four directory changes), the single swaps of the round taken before. Returns
        the pairs taken."""
        t, placement = self.t, self.placement
        diff = c.size_q - c.size_r  # what A loses and B gains
        group = c.a.astype(np.int64) * t.broker_count + c.b
        # Sizes in MiB for the search key (the exact check below uses bytes).
        step = float(1 << 20)
        span = int(np.abs(diff).max(initial=0) / step) + 2
        rank = np.unique(group, return_inverse=True)[1].astype(np.int64)
        key = rank * (2 * span + 1) + (np.round(diff / step).astype(np.int64) + span)
        order = np.argsort(key, kind="stable")
        sorted_key = key[order]
        first = np.searchsorted(rank[order], rank, side="left")
        last = np.searchsorted(rank[order], rank, side="right") - 1
        refused = np.flatnonzero((c.penalty > 1e-9) & (c.saved > 0))
        if refused.size == 0:
            return 0
        near = np.searchsorted(sorted_key, rank[refused] * (2 * span + 1) + (span - np.round(diff[refused] / step).astype(np.int64)))
        i = np.repeat(refused, 2)
        j = order[np.clip(np.stack([near - 1, near], axis=1).reshape(-1), np.repeat(first[refused], 2), np.repeat(last[refused], 2))]
        keep = (i != j) & (c.r[i] != c.r[j]) & (c.q[i] != c.q[j])
        parts = np.stack([t.rep_part[c.r[i]], t.rep_part[c.r[j]], t.rep_part[c.q[i]], t.rep_part[c.q[j]]], axis=1)
        parts.sort(axis=1)
        keep &= (parts[:, 1:] != parts[:, :-1]).all(axis=1)  # four partitions
        i, j = i[keep], j[keep]
        if i.size == 0:
            return 0
        a, b = c.a[i], c.b[i]
        both = diff[i] + diff[j]
        count, load = placement.count.astype(np.float64), placement.bytes
        penalty = (
            self._penalty(a, count[a], load[a] - both) - self._penalty(a, count[a], load[a])
            + self._penalty(b, count[b], load[b] + both) - self._penalty(b, count[b], load[b])
        )
        score = (both - c.saved[i] - c.saved[j]) / self.unit  # the savings add up only roughly: scored again below
        good = np.flatnonzero((penalty <= 1e-9) & (score < -1e-12))
        band = self.request.disk_band
        current = placement.broker
        taken = 0
        for k in good[np.argsort(score[good], kind="stable")].tolist():
            if swaps.budget <= 0:
                break
            ii, jj = int(i[k]), int(j[k])
            r1, r2, q1, q2 = int(c.r[ii]), int(c.r[jj]), int(c.q[ii]), int(c.q[jj])
            ai, bi = int(c.a[ii]), int(c.b[ii])
            if int(current[r1]) != bi or int(current[r2]) != bi or int(current[q1]) != ai or int(current[q2]) != ai:
                continue  # one of them is in a swap taken already
            swaps.budget -= 1
            dirs_l, cap_l, limit_l, total = self._grid_row(swaps, ai)
            usage_l = [placement.dir_loads[d] for d in dirs_l]
            before = _outside_band_one(usage_l, cap_l, limit_l, band, total)
            for index in (ii, jj):
                usage_l[int(c.slot_r[index])] += float(c.size_r[index])
                usage_l[int(c.slot_q[index])] -= float(c.size_q[index])
            saved = (before - _outside_band_one(usage_l, cap_l, limit_l, band, total)) / 2
            if float(both[k]) - saved >= -1e-12 * self.unit:
                continue
            if not (self._allowed_back(r1) and self._allowed_back(r2) and self._allowed(q1, bi) and self._allowed(q2, bi)):
                continue
            if self._gain([(r1, ai), (r2, ai), (q1, bi), (q2, bi)])[0] > 1e-9:
                continue
            for rep, target in ((r1, ai), (r2, ai), (q1, bi), (q2, bi)):
                self._move(rep, target)
            taken += 1
        return taken

    def _may_join(self, rep: np.ndarray, target: np.ndarray) -> np.ndarray:
        """Per replica: `target` holds no other replica of its partition, and the rack rule
        allows one more there (`_allowed`'s checks of the partition, for many at once)."""
        t, current = self.t, self.placement.broker
        part = t.rep_part[rep]
        start = t.part_offsets[part]
        rf = t.part_offsets[part + 1] - start
        rack = t.broker_rack[target]
        clash = np.zeros(rep.size, dtype=bool)
        same_rack = np.zeros(rep.size, dtype=np.int64)
        for k in range(int(rf.max(initial=0))):
            other = np.minimum(start + k, t.replica_count - 1)
            there = (k < rf) & (other != rep)
            broker = current[other]
            clash |= there & (broker == target)
            same_rack += there & (t.broker_rack[broker] == rack)
        return self.receivable_np[target] & ~clash & ((rack < 0) | (same_rack < self.limits_np[rf]))

    def _swap_pairs(self, leavers: np.ndarray, stayers: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Per leaver, the SWAP_SIDE replicas still on its broker nearest its size (`stayers`
        come sorted by broker, then size: one search for all), in different directories and
        partitions: the (leaver, stayer) pairs, distinct."""
        t = self.t
        home = t.rep_broker
        span = int(t.rep_size.max(initial=0)) + 1
        key = home[stayers].astype(np.int64) * span + t.rep_size[stayers].astype(np.int64)
        starts = np.searchsorted(home[stayers], np.arange(t.broker_count + 1))
        lo, hi = starts[home[leavers]], starts[home[leavers] + 1]
        has = hi > lo
        leavers, lo, hi = leavers[has], lo[has], hi[has]
        if leavers.size == 0:
            return leavers, leavers
        near = np.searchsorted(key, home[leavers].astype(np.int64) * span + t.rep_size[leavers].astype(np.int64))
        # A window of SWAP_SIDE around `near`, shifted to stay within the broker's stayers (so
        # the pairs are distinct without a sort); in leaver order, then size.
        first = np.maximum(np.minimum(near - SWAP_SIDE // 2, hi - SWAP_SIDE), lo)
        pick = first[:, None] + np.arange(SWAP_SIDE)[None, :]
        inside = (pick < hi[:, None]).reshape(-1)
        r = np.repeat(leavers, SWAP_SIDE)[inside]
        q = stayers[pick.reshape(-1)[inside]]
        keep = (t.rep_dir[r] != t.rep_dir[q]) & (t.rep_part[r] != t.rep_part[q])
        return r[keep], q[keep]

    def _grid_row(self, swaps: _SwapPass, broker: int) -> tuple[list[int], list[float], list[float], float]:
        """One broker's directories, capacities and limits as Python lists (cached), and its total capacity."""
        row = swaps.rows.get(broker)
        if row is None:
            n = int((swaps.grid[broker] >= 0).sum())
            cap = swaps.cap[broker, :n].tolist()
            row = (swaps.grid[broker, :n].tolist(), cap, swaps.limit[broker, :n].tolist(), max(sum(cap), 1.0))
            swaps.rows[broker] = row
        return row

    def _allowed_back(self, rep: int) -> bool:
        """A replica that left its broker may come back to its own directory: the rules of
        `_allowed`, with room counted in that directory."""
        t, placement = self.t, self.placement
        home = int(t.rep_broker[rep])
        partition = int(t.rep_part[rep])
        start = int(t.part_offsets[partition])
        rf = int(t.part_offsets[partition + 1]) - start
        if home in placement.broker[start : start + rf].tolist():
            return False
        rack = self.racks_for[home]
        if rack >= 0:
            racks = placement.rack_counts(partition)
            if (racks[: rep - start] + racks[rep - start + 1 :]).count(rack) >= self.limits[rf]:
                return False
        directory = int(t.rep_dir[rep])
        return placement.dir_loads[directory] + float(t.rep_size[rep]) <= placement.dir_limit[directory]

    def _move(self, rep: int, target: int) -> None:
        self.placement.move(rep, target, float(self.t.rep_size[rep]))
        self.moved += 1


def _outside_band(usage: np.ndarray, cap: np.ndarray, limit: np.ndarray, band: float, cap_total: float) -> np.ndarray:
    """Per row of directory usages (one broker's directories): the bytes over and under the
    band around the broker's mean usage (over the limit too), as the directory kernel sees them."""
    mean = usage.sum(axis=1, keepdims=True) / cap_total
    high = np.minimum((mean + band) * cap, limit)
    low = (mean - band) * cap
    return np.maximum(usage - high, 0).sum(axis=1) + np.maximum(low - usage, 0).sum(axis=1)


def _outside_band_one(usage: list[float], cap: list[float], limit: list[float], band: float, cap_total: float) -> float:
    """`_outside_band` of one broker's directories, in plain Python (a few directories: cheaper than numpy)."""
    mean = sum(usage) / cap_total
    off = 0.0
    for u, c, top in zip(usage, cap, limit):
        off += max(u - min((mean + band) * c, top), 0.0) + max((mean - band) * c - u, 0.0)
    return off
