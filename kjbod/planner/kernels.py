"""The planner's two per-broker kernels: pure functions over plain tables.

Each takes a pandas DataFrame holding whole groups (all the rows of some brokers, `group` =
broker index) and a dict of small, broker- or directory-indexed numpy arrays, and returns a
DataFrame. The local engine calls them on the whole table; the Spark engine runs them with
`mapInArrow` on files that each hold whole brokers. The same code decides in both cases.

* `shed_kernel`: which replicas an over-loaded broker gives away (the right count, with bytes
  that match its byte excess, taken first from its over-full directories).
* `directory_kernel`: where every replica that ends on a broker lives: new and displaced
  replicas go to the least-used directories, then replicas move between directories until each
  is within the band around the broker's mean usage and under the capacity threshold.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

# In a count round, how much worse a size fit may be (see shed_kernel's score) for a replica that
# relieves an over-full directory to still go before one that does not.
RELIEF_BONUS = 0.25

SHED_COLUMNS = {"rep": "int64", "group": "int32", "priority": "float64"}
DIRECTORY_COLUMNS = {"rep": "int64", "group": "int32", "dir": "int32", "seq": "int32"}


def _groups(frame: pd.DataFrame) -> list[tuple[int, np.ndarray]]:
    """Row positions of each group, groups in ascending order."""
    if frame.empty:
        return []
    groups = frame["group"].to_numpy()
    order = np.argsort(groups, kind="stable")
    sorted_groups = groups[order]
    starts = np.flatnonzero(np.r_[True, sorted_groups[1:] != sorted_groups[:-1]])
    ends = np.r_[starts[1:], len(order)]
    return [(int(sorted_groups[s]), order[s:e]) for s, e in zip(starts, ends)]


def shed_kernel(frame: pd.DataFrame, params: dict[str, Any]) -> pd.DataFrame:
    """Rows: rep, group, tiebreak (a seeded rank), size, forced (bool), leader (bool), dir (the
    directory its bytes are counted in, -1 if none), dir_excess (bytes that directory holds over
    its band), fits_needy_rack (bool: the rack rule lets it go to a rack whose brokers need
    replicas), locked (bool: it may not move now, or its partition would keep too few in-sync
    replicas).

    params: quota_count[group] (replicas to give away beyond the forced ones),
    quota_bytes[group] (bytes those should add up to), by_bytes (bool: a byte round: give away
    the largest replicas that fit the byte excess, at most quota_count of them).
    Returns the chosen rows with a priority (forced first, then the best fit).

    Either way replicas in over-full directories go first, until their directory's excess is
    covered: moving them mends the directory too, so fewer moves between directories follow.
    """
    quota_count = params["quota_count"]
    quota_bytes = params["quota_bytes"]
    by_bytes = params.get("by_bytes", False)
    out: list[pd.DataFrame] = []
    for group, rows in _groups(frame):
        part = frame.iloc[rows]
        forced = part["forced"].to_numpy()
        chosen = [part[forced].assign(priority=0.0)]
        want = int(quota_count[group])
        optional = part[~forced & ~part["locked"].to_numpy()]
        if by_bytes and want > 0 and not optional.empty:
            picked = _largest_that_fit(optional, float(quota_bytes[group]), want)
            chosen.append(picked.assign(priority=1.0))
        elif want > 0 and not optional.empty:
            sizes = optional["size"].to_numpy().astype(np.float64)
            tiebreak = optional["tiebreak"].to_numpy()
            target = max(float(quota_bytes[group]), 0.0) / want
            # Replicas that can go where replicas are needed (the rack rule allows it) first,
            # then followers before leaders (moving a leader moves leadership too), then the
            # best fit for the average size the broker should shed.
            score = np.abs(sizes - target) / (target + sizes.mean() + 1.0)
            score += np.where(optional["fits_needy_rack"].to_numpy(), 0.0, 8.0)
            score += np.where(optional["leader"].to_numpy(), 4.0, 0.0)
            relief = _relieves(optional, np.lexsort((tiebreak, score)))
            order = np.lexsort((tiebreak, score - RELIEF_BONUS * relief))[:want]
            picked = optional.iloc[order]
            chosen.append(picked.assign(priority=1.0 + np.arange(len(picked)) / max(len(picked), 1)))
        out.extend(c for c in chosen if not c.empty)
    if not out:
        return _empty(SHED_COLUMNS)
    result = pd.concat(out, ignore_index=True)
    return result[list(SHED_COLUMNS)].astype(SHED_COLUMNS)


def _relieves(rows: pd.DataFrame, order: np.ndarray) -> np.ndarray:
    """Per row: taking rows in `order`, its directory still has excess left when it comes up."""
    directory = rows["dir"].to_numpy()[order]
    sizes = rows["size"].to_numpy().astype(np.float64)[order]
    excess = rows["dir_excess"].to_numpy().astype(np.float64)[order]
    by_dir = np.argsort(directory, kind="stable")
    sorted_dir = directory[by_dir]
    taken_before = np.cumsum(sizes[by_dir]) - sizes[by_dir]
    starts = np.flatnonzero(np.r_[True, sorted_dir[1:] != sorted_dir[:-1]])
    group_start = starts[np.searchsorted(starts, np.arange(len(by_dir)), side="right") - 1]
    in_dir_before = taken_before - taken_before[group_start]
    relief = np.zeros(len(order), dtype=bool)
    relief[order[by_dir]] = (sorted_dir >= 0) & (in_dir_before < excess[by_dir])
    return relief


def _largest_that_fit(rows: pd.DataFrame, excess: float, most: int) -> pd.DataFrame:
    """Followers before leaders, replicas that relieve an over-full directory first, largest
    first, each no bigger than the excess still left."""
    sizes = rows["size"].to_numpy().astype(np.float64)
    leaders = rows["leader"].to_numpy()
    tiebreak = rows["tiebreak"].to_numpy()
    relief = _relieves(rows, np.lexsort((tiebreak, -sizes, leaders)))
    order = np.lexsort((tiebreak, -sizes, ~relief, leaders))
    taken = []
    left = excess
    for i in order:
        if len(taken) >= most or left <= 0:
            break
        if sizes[i] <= left:
            taken.append(i)
            left -= sizes[i]
    return rows.iloc[np.array(taken, dtype=np.int64)]


def _place(sizes: np.ndarray, usage: np.ndarray, capacity: np.ndarray, limit: np.ndarray, open_dirs: np.ndarray) -> np.ndarray:
    """Largest first, each replica into the open directory that ends least used (relative to
    capacity, or in bytes when capacities are unknown) and stays under its limit."""
    placed = np.full(len(sizes), -1, dtype=np.int64)
    # Plain lists: a dozen directories per broker is far below where numpy pays off.
    weight = np.where(capacity > 0, capacity, 1).astype(np.float64).tolist()
    used = usage.tolist()
    limits = limit.tolist()
    candidates = np.flatnonzero(open_dirs).tolist()
    for i in np.argsort(-sizes, kind="stable").tolist():
        size = float(sizes[i])
        best, best_after = -1, np.inf
        for d in candidates:
            if used[d] + size <= limits[d]:
                after = (used[d] + size) / weight[d]
                if after < best_after:
                    best, best_after = d, after
        if best >= 0:
            placed[i] = best
            used[best] += size
    usage[:] = used
    return placed


def _rebalance(
    sizes: np.ndarray,
    where: np.ndarray,
    movable: np.ndarray,
    usage: np.ndarray,
    capacity: np.ndarray,
    limit: np.ndarray,
    open_dirs: np.ndarray,
    counted: np.ndarray,
    band: float,
) -> list[tuple[int, int]]:
    """Moves (replica position, target directory) that bring every counted directory within
    `band` of the broker's mean usage (a share of capacity) and under its limit, moving as few
    bytes as it can: each move takes the largest replica no bigger than what the source has over
    the band and the target has room for; when none is that small, the smallest replica, if it
    brings the pair closer to the mean."""
    if counted.sum() < 2 or (capacity[counted] <= 0).any():
        return []
    cap = np.where(capacity > 0, capacity, 1).astype(np.float64)
    mean = usage[counted].sum() / cap[counted].sum()
    high = np.minimum((mean + band) * cap, limit)
    low = (mean - band) * cap
    expected = mean * cap
    receiving = counted & open_dirs
    # Each directory's movable replicas as a sorted list of (size, position).
    members: dict[int, list[tuple[float, int]]] = {}
    for d in np.flatnonzero(counted):
        rows = np.flatnonzero((where == d) & movable)
        rows = rows[np.argsort(sizes[rows], kind="stable")]
        members[int(d)] = list(zip(sizes[rows].tolist(), rows.tolist()))
    moves: list[tuple[int, int]] = []
    for _ in range(4 * len(sizes) + 16):
        over = usage - high
        under = low - usage
        if (over[counted] <= 0).all() and (under[receiving] <= 0).all():
            break
        deviation = usage / cap - mean
        sources = sorted(np.flatnonzero(counted & (usage > expected)), key=lambda d: (over[d] <= 0, -deviation[d]))
        targets = sorted(np.flatnonzero(receiving), key=lambda d: deviation[d])
        move = None
        for source in sources:
            for target in targets:
                if deviation[target] >= deviation[source]:
                    break
                room = high[target] - usage[target]
                if room <= 0:
                    continue
                if over[source] > 0:
                    need = min(over[source], room)
                elif under[target] > 0:
                    need = min(under[target], usage[source] - expected[source], room)
                else:
                    continue
                pick = _pick(members[int(source)], need, room, source, target, usage, expected, cap, min(low[source], usage[source] - need))
                if pick is not None:
                    move = (int(source), int(target), pick)
                    break
            if move:
                break
        if move is None:
            break
        source, target, (size, position) = move
        members[source].remove((size, position))
        bisect.insort(members[target], (size, position))
        usage[source] -= size
        usage[target] += size
        where[position] = target
        moves.append((position, target))
    return moves


def _pick(
    candidates: list[tuple[float, int]], need: float, room: float, source: int, target: int,
    usage: np.ndarray, expected: np.ndarray, cap: np.ndarray, floor: float,
) -> tuple[float, int] | None:
    """The replica to move from `source` to `target`: the smallest that covers `need` in one
    move (fitting `room`, leaving the source at least `floor`); else the largest below `need`;
    else the smallest, if it brings the two directories closer to the mean."""
    if not candidates:
        return None
    covering = bisect.bisect_left(candidates, (need, -1))
    if covering < len(candidates):
        size = candidates[covering][0]
        if size <= room and usage[source] - size >= floor:
            return candidates[covering]
    index = bisect.bisect_right(candidates, (need, np.iinfo(np.int64).max))
    if index > 0:
        return candidates[index - 1]
    size = candidates[0][0]
    if size > room:
        return None
    before = max(abs(usage[source] - expected[source]) / cap[source], abs(usage[target] - expected[target]) / cap[target])
    after = max(abs(usage[source] - size - expected[source]) / cap[source], abs(usage[target] + size - expected[target]) / cap[target])
    return candidates[0] if after < before else None


def directory_kernel(frame: pd.DataFrame, params: dict[str, Any]) -> pd.DataFrame:
    """Rows: rep, group, size, dir (current directory index, -1 to be placed), movable (bool:
    may change directory), place (bool: must be placed: new on this broker or on a directory it
    must leave).

    params: dir_broker, dir_capacity, dir_open (may receive), dir_counted (online and kept: its
    usage is balanced), threshold, band, rebalance (bool).
    Returns the changes as events in the order the kernel made them (`seq`, per group): first
    the placements (dir -1: no directory with room; the broker chooses), then the moves between
    directories. Each event assumes the ones before it, so a caller that must stop early (a move
    budget) keeps a prefix of a group's events.
    """
    dir_broker = params["dir_broker"]
    capacity_all = params["dir_capacity"]
    threshold = params["threshold"]
    results = []
    for group, rows in _groups(frame):
        dirs = np.flatnonzero(dir_broker == group)
        if dirs.size == 0:
            continue
        part = frame.iloc[rows]
        sizes = part["size"].to_numpy().astype(np.int64)
        # Directory indexes are global; the kernel works with the broker's own, 0..len(dirs).
        current = part["dir"].to_numpy()
        where = np.searchsorted(dirs, current)
        known = (where < len(dirs)) & (dirs[np.minimum(where, len(dirs) - 1)] == current)
        where = np.where(known, where, -1).astype(np.int64)
        place = part["place"].to_numpy() | (where < 0)
        movable = part["movable"].to_numpy()
        capacity = capacity_all[dirs]
        open_dirs = params["dir_open"][dirs]
        counted = params["dir_counted"][dirs]
        limit = np.where(capacity > 0, np.floor(capacity * threshold), np.iinfo(np.int64).max).astype(np.float64)
        usage = np.bincount(where[~place], weights=sizes[~place], minlength=len(dirs)).astype(np.float64)
        new_where = where.copy()
        to_place = np.flatnonzero(place)
        events: list[tuple[int, int]] = []  # (row, local directory or -1)
        if to_place.size:
            placed = _place(sizes[to_place].astype(np.float64), usage, capacity, limit, open_dirs)
            new_where[to_place] = placed
            events += [(int(r), int(d)) for r, d in zip(to_place, placed) if d != where[r] or d < 0]
        if params["rebalance"]:
            events += _rebalance(
                sizes.astype(np.float64), new_where, movable & (new_where >= 0), usage, capacity, limit, open_dirs, counted,
                params["band"],
            )
        if events:
            positions = np.array([e[0] for e in events], dtype=np.int64)
            local = np.array([e[1] for e in events], dtype=np.int64)
            results.append(
                pd.DataFrame(
                    {
                        "rep": part["rep"].to_numpy()[positions],
                        "group": group,
                        "dir": np.where(local >= 0, dirs[np.maximum(local, 0)], -1),
                        "seq": np.arange(len(events)),
                    }
                )
            )
    if not results:
        return _empty(DIRECTORY_COLUMNS)
    return pd.concat(results, ignore_index=True).astype(DIRECTORY_COLUMNS)


@dataclass(frozen=True)
class Kernel:
    """A kernel and the columns (name -> dtype) of the rows it returns: Spark needs the schema
    before it runs the function, and an empty result still has it. `order`: the columns that
    put its rows in one order whatever the engine."""

    function: Callable[[pd.DataFrame, dict[str, Any]], pd.DataFrame]
    columns: dict[str, str]
    order: tuple[str, ...]

    @property
    def name(self) -> str:
        return self.function.__name__

    def empty(self) -> pd.DataFrame:
        return _empty(self.columns)


def _empty(columns: dict[str, str]) -> pd.DataFrame:
    return pd.DataFrame({name: pd.Series(dtype=kind) for name, kind in columns.items()})


SHED = Kernel(shed_kernel, SHED_COLUMNS, order=("group", "rep"))
DIRECTORY = Kernel(directory_kernel, DIRECTORY_COLUMNS, order=("group", "seq"))
