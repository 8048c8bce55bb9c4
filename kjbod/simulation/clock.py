"""The simulated clock of the cluster state (kjbod's own; Kafka runs on wall-clock time).

Advancing it runs the copy model (kjbod.simulation.copy_model): replicas being added fill up at the
effective rates, join the ISR when caught up (completing reassignments), and future replicas
are promoted. The controller quorum moves too (kjbod.controller.quorum_control): controllers
catch up and register, a voter change commits, a leader that removed itself resigns. The whole
advance is one commit, with the KjbodClockRecord after everything but a new leader's epoch.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from kjbod.simulation.copy_model import (
    ALTER_LOG_DIRS_RATE,
    HORIZON_MS,
    REPLICATION_RATE,
    Copy,
    CopyCompletion,
    Simulation,
    simulate,
)
from kjbod.controller.quorum_control import QuorumControl, QuorumTick
from kjbod.controller.result import ControllerResult
from kjbod.errors import UserError
from kjbod.image import Image
from kjbod.records import CONFIG_RESOURCE_BROKER, ConfigRecord, KjbodClockRecord

_UNITS_MS = {"": 1000, "ms": 1, "s": 1000, "m": 60_000, "h": 3_600_000, "d": 86_400_000}
# The clock counts milliseconds in a Java long, as Kafka's timestamps do.
_LONGEST_MS = 2**63 - 1
_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)?\s*$")


def parse_duration_ms(text: str) -> int:
    """`1500` (seconds), `1500s`, `250ms`, `25m`, `2h`, `1d` -> milliseconds."""
    match = _DURATION.match(text)
    if not match:
        raise UserError(f"Invalid duration '{text}': use a number with an optional unit ms, s, m, h or d, e.g. 25m")
    value = float(match.group(1)) * _UNITS_MS[match.group(2) or ""]
    if not value < _LONGEST_MS:  # also infinity, from a number too long for a float
        raise UserError(f"Invalid duration '{text}': longer than the clock can count ({format_duration(_LONGEST_MS)} at most)")
    return round(value)


def format_duration(ms: int) -> str:
    """`1d 2h 5m 3s`, leaving out units that are zero; `0s` for nothing."""
    seconds, millis = divmod(ms, 1000)
    parts = []
    for unit, size in (("d", 86_400), ("h", 3_600), ("m", 60)):
        count, seconds = divmod(seconds, size)
        if count:
            parts.append(f"{count}{unit}")
    if seconds or millis or not parts:
        parts.append(f"{seconds}.{millis:03d}s" if millis else f"{seconds}s")
    return " ".join(parts)


@dataclass(frozen=True)
class ClockAdvance:
    previous_ms: int
    now_ms: int
    # What the copies did meanwhile (see kjbod.simulation.copy_model).
    completed: tuple[CopyCompletion, ...] = ()
    in_progress: tuple[Copy, ...] = ()
    blocked: tuple[Copy, ...] = ()
    # Replicas a broker placed in a directory before copying: (topic, partition, broker, directory).
    placed: tuple[tuple[str, int, int, str], ...] = ()
    # What the controller quorum did meanwhile.
    quorum: QuorumTick = QuorumTick()

    @property
    def reassignments_completed(self) -> int:
        return sum(1 for c in self.completed if c.reassignment_completed)

    @property
    def moves_completed(self) -> int:
        """Future replicas promoted in their new directory."""
        return sum(1 for c in self.completed if c.future)


@dataclass(frozen=True)
class RateSettings:
    """kjbod's simulation rates on one resource ("" is the cluster default) after a change."""

    broker: int | None
    replication_rate: int | None
    alter_log_dirs_rate: int | None


class ClockControl:
    def __init__(self, image: Image) -> None:
        self._image = image

    def advance(self, duration_ms: int) -> ControllerResult[ClockAdvance]:
        """Move the clock forward; copies progress and complete on the way."""
        if duration_ms < 0:
            raise UserError("The clock cannot go back: give a positive duration")
        if duration_ms > _LONGEST_MS - self._image.time_ms:
            raise UserError(
                f"The clock cannot pass {format_duration(_LONGEST_MS)} (the largest time a Java long holds): "
                f"it is at {format_duration(self._image.time_ms)}; give a shorter duration"
            )
        return self._result(simulate(self._image, duration_ms))

    def advance_until_idle(self, horizon_ms: int = HORIZON_MS) -> ControllerResult[ClockAdvance]:
        """Move the clock to the moment the last copy that can progress completes."""
        run = simulate(self._image, horizon_ms=horizon_ms)
        if not run.idle:
            raise UserError(
                f"The copies in progress would take longer than {format_duration(horizon_ms)} at the current rates; "
                "nothing was changed. Advance by a duration instead, or raise the throttles or rates"
            )
        # Controllers catching up count as work in progress too.
        caught_up_ms = QuorumControl(self._image).catch_up_done_ms()
        if caught_up_ms is not None and caught_up_ms > run.end_ms:
            run = simulate(self._image, caught_up_ms - self._image.time_ms)
        return self._result(run)

    def _result(self, run: Simulation) -> ControllerResult[ClockAdvance]:
        records = list(run.records)
        tick = QuorumTick()
        if run.end_ms > run.start_ms and self._image.quorum.is_modelled:
            clock = records.pop()
            assert isinstance(clock, KjbodClockRecord)
            moved = QuorumControl(self._image).advance(run.end_ms, self._image.next_offset + len(records))
            records += [*moved.before_clock, clock, *moved.after_clock]
            tick = moved.tick
        response = ClockAdvance(run.start_ms, run.end_ms, run.completions, run.in_progress, run.blocked, run.placed, tick)
        return ControllerResult.atomic_of(records, response)

    def set_rates(
        self, broker: int | None, *, replication_rate: int | None = None, alter_log_dirs_rate: int | None = None, reset: bool = False
    ) -> ControllerResult[RateSettings]:
        """Set (or with `reset`, remove) kjbod's simulated link and local copy rates, for one
        broker or as the cluster default. Kafka's throttles still apply on top of them."""
        if broker is not None and broker not in self._image.cluster.brokers:
            raise UserError(f"Broker {broker} is not registered: set its rates after `kjbod broker register`, or leave out --broker for the cluster default")
        for name, value in (("replication", replication_rate), ("alter-log-dirs", alter_log_dirs_rate)):
            if value is not None and value <= 0:
                raise UserError(f"The {name} rate must be a positive number of bytes per second, not {value}")
        resource = "" if broker is None else str(broker)
        current = self._image.configs.get(CONFIG_RESOURCE_BROKER, resource)
        wanted: dict[str, str | None] = {}
        if reset:
            wanted = {REPLICATION_RATE: None, ALTER_LOG_DIRS_RATE: None}
        if replication_rate is not None:
            wanted[REPLICATION_RATE] = str(replication_rate)
        if alter_log_dirs_rate is not None:
            wanted[ALTER_LOG_DIRS_RATE] = str(alter_log_dirs_rate)
        if not wanted:
            raise UserError("Give --replication, --alter-log-dirs or --reset")
        records = [
            ConfigRecord(resource_type=CONFIG_RESOURCE_BROKER, resource_name=resource, name=name, value=value)
            for name, value in wanted.items()
            if current.get(name) != value
        ]
        after = {**current, **wanted}
        settings = RateSettings(
            broker,
            int(after[REPLICATION_RATE]) if after.get(REPLICATION_RATE) else None,  # type: ignore[arg-type]
            int(after[ALTER_LOG_DIRS_RATE]) if after.get(ALTER_LOG_DIRS_RATE) else None,  # type: ignore[arg-type]
        )
        return ControllerResult.atomic_of(records, settings)
