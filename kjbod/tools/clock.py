"""`kjbod clock`: what the simulated clock shows an operator, each result with its text lines and
its JSON: the copies in progress and when each completes (`clock show`), what an advance did
(`clock advance`), and the simulated rates (`clock set-rate`). The clock shows a directory by
its path, else by its id (a reserved id too: UNASSIGNED is shown as its id here).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kjbod.common.units import human_bytes, human_rate
from kjbod.controller.quorum_control import QuorumTick
from kjbod.simulation.clock import ClockAdvance, RateSettings, format_duration
from kjbod.simulation.copy_model import Copy, outlook
from kjbod.image import Image


def _plural(count: int, word: str, plural: str | None = None) -> str:
    return f"{count} {word if count == 1 else plural or word + 's'}"


def _time_json(now_ms: int) -> dict[str, Any]:
    return {"timeMs": now_ms, "elapsed": format_duration(now_ms)}


@dataclass(frozen=True)
class ShownCopy:
    """A copy as the clock shows it: its directory's path (else its id), and when it completes
    if that is known."""

    copy: Copy
    directory: str
    completes_in_ms: int | None = None

    @classmethod
    def of(cls, image: Image, copy: Copy, completes_in_ms: int | None = None) -> ShownCopy:
        return cls(copy, image.cluster.path_of(copy.broker, copy.directory) or copy.directory, completes_in_ms)

    def text(self) -> str:
        """`orders-0 to broker 4` or `orders-0 on broker 2 to /data/b2/d2`."""
        c = self.copy
        if c.future:
            return f"{c.name} on broker {c.broker} to {self.directory}"
        return f"{c.name} to broker {c.broker}"

    def progress_line(self) -> str:
        c = self.copy
        text = f"  {self.text()}: {human_bytes(c.copied)} of {human_bytes(c.total)}"
        if c.blocked:
            return f"{text}; waiting: {c.blocked}"
        when = "beyond the horizon" if self.completes_in_ms is None else f"done in {format_duration(self.completes_in_ms)}"
        return f"{text} at {human_rate(c.rate)}; {when}"

    def to_json(self) -> dict[str, Any]:
        return {**self.copy.to_json(self.directory), "completesInMs": self.completes_in_ms}


@dataclass(frozen=True)
class ClockOutlook:
    """The simulated time, and every copy in progress with its rate and when it completes."""

    time_ms: int
    copies: tuple[ShownCopy, ...]

    def lines(self) -> list[str]:
        lines = [f"Simulated time: {format_duration(self.time_ms)} ({self.time_ms} ms)"]
        if self.copies:
            lines.append(f"Copies in progress ({len(self.copies)}):")
            lines.extend(c.progress_line() for c in self.copies)
        return lines

    def to_json(self) -> dict[str, Any]:
        return {**_time_json(self.time_ms), "copies": [c.to_json() for c in self.copies]}


def clock_outlook(image: Image) -> ClockOutlook:
    """The copies as `clock advance --until-idle` would run them, nothing written."""
    return ClockOutlook(image.time_ms, tuple(ShownCopy.of(image, c, done_in) for c, done_in in outlook(image)))


@dataclass(frozen=True)
class AdvanceReport:
    """What `clock advance` did: the copies that completed, progress or wait, the replicas brokers
    placed, and what the controller quorum did."""

    advance: ClockAdvance
    in_progress: tuple[ShownCopy, ...]
    blocked: tuple[ShownCopy, ...]
    placed: tuple[dict[str, Any], ...]  # topic, partition, broker, directory

    def lines(self) -> list[str]:
        advance = self.advance
        moved = advance.now_ms - advance.previous_ms
        done = []
        if advance.placed:
            count = len(advance.placed)
            done.append(_plural(count, "new replica") + f" placed in a log directory by {'its broker' if count == 1 else 'their brokers'}")
        if advance.completed:
            done.append(_plural(len(advance.completed), "copy", "copies") + " completed")
        if advance.reassignments_completed:
            done.append(_plural(advance.reassignments_completed, "reassignment") + " completed")
        if advance.moves_completed:
            done.append(_plural(advance.moves_completed, "replica") + " promoted in a new log directory")
        summary = (" " + "; ".join(done) + ".") if done else ""
        if moved:
            text = f"Advanced the clock by {format_duration(moved)} to {format_duration(advance.now_ms)}.{summary}"
        elif done:
            text = f"The clock stays at {format_duration(advance.now_ms)}.{summary}"
        elif advance.blocked:
            text = f"Nothing can progress; the clock stays at {format_duration(advance.now_ms)}."
        else:
            text = f"Nothing is in progress; the clock stays at {format_duration(advance.now_ms)}."
        lines = [text]
        if advance.in_progress:
            lines.append(f"Still copying: {_plural(len(advance.in_progress), 'copy', 'copies')} (kjbod clock show).")
        if self.blocked:
            lines.append(f"Cannot progress ({len(self.blocked)}):")
            lines.extend(f"  {c.text()}: {c.copy.blocked}" for c in self.blocked)
        lines.extend(_quorum_lines(advance.quorum))
        return lines

    def to_json(self) -> dict[str, Any]:
        advance = self.advance
        return {
            "previousMs": advance.previous_ms,
            **_time_json(advance.now_ms),
            "completed": [
                {
                    "topic": c.topic, "partition": c.partition, "broker": c.broker, "kind": "future" if c.future else "follower",
                    "timeMs": c.time_ms, "reassignmentCompleted": c.reassignment_completed,
                }
                for c in advance.completed
            ],
            "placed": list(self.placed),
            "inProgress": [c.to_json() for c in self.in_progress],
            "blocked": [c.to_json() for c in self.blocked],
            "quorum": _quorum_json(advance.quorum),
        }


def advance_report(advance: ClockAdvance, image: Image) -> AdvanceReport:
    """The report of an advance, its directories and topics named as `image` (the state after it) names them."""
    placed = tuple(
        {
            "topic": image.topics.name_of(t) if t in image.topics.by_id else t, "partition": p, "broker": b,
            "directory": image.cluster.path_of(b, d) or d,
        }
        for t, p, b, d in advance.placed
    )
    return AdvanceReport(
        advance,
        tuple(ShownCopy.of(image, c) for c in advance.in_progress),
        tuple(ShownCopy.of(image, c) for c in advance.blocked),
        placed,
    )


def _quorum_lines(tick: QuorumTick) -> list[str]:
    """What the controller quorum did while the clock moved."""
    lines = []
    for key, time_ms in tick.caught_up:
        registered = " and registered" if key.id in tick.registered else ""
        lines.append(f"Controller {key.id} caught up with the leader at {format_duration(time_ms)}{registered}.")
    for controller_id in tick.registered:
        if controller_id not in {key.id for key, _ in tick.caught_up}:
            lines.append(f"Controller {controller_id} registered.")
    for key, end, target in tick.catching_up:
        lines.append(f"Controller {key.id} is catching up: {end} of {target} records.")
    if tick.committed is not None:
        offset, voters = tick.committed
        lines.append(f"The voter change at offset {offset} committed: the voters are {', '.join(map(str, voters))}.")
    change = tick.leader_change
    if change is not None:
        if change.leader >= 0:
            lines.append(f"Controller {change.previous} left the voter set and resigned; controller {change.leader} leads epoch {change.epoch}.")
        else:
            lines.append(f"Controller {change.previous} left the voter set and resigned; no voter majority runs to elect a leader.")
    return lines


def _quorum_json(tick: QuorumTick) -> dict[str, Any] | None:
    if tick.is_empty:
        return None
    change = tick.leader_change
    return {
        "caughtUp": [{"controllerId": k.id, "directoryId": k.directory_id, "timeMs": t} for k, t in tick.caught_up],
        "catchingUp": [{"controllerId": k.id, "directoryId": k.directory_id, "logEndOffset": e, "target": t} for k, e, t in tick.catching_up],
        "registered": list(tick.registered),
        "committed": None if tick.committed is None else {"offset": tick.committed[0], "voters": list(tick.committed[1])},
        "leaderChange": None if change is None else {"previousLeader": change.previous, "leader": change.leader, "epoch": change.epoch},
    }


@dataclass(frozen=True)
class RatesReport:
    """The simulated rates of a broker (None: the cluster default) after `clock set-rate`."""

    broker: int | None
    settings: RateSettings

    def lines(self) -> list[str]:
        settings = self.settings
        where = "the cluster default" if self.broker is None else f"broker {self.broker}"
        parts = [
            f"replication {human_rate(settings.replication_rate) if settings.replication_rate else 'default'}",
            f"alter-log-dirs {human_rate(settings.alter_log_dirs_rate) if settings.alter_log_dirs_rate else 'default'}",
        ]
        return [f"Rates of {where}: {', '.join(parts)}."]

    def to_json(self) -> dict[str, Any]:
        return {
            "broker": self.broker,
            "replicationBytesPerSecond": self.settings.replication_rate,
            "alterLogDirsBytesPerSecond": self.settings.alter_log_dirs_rate,
        }
