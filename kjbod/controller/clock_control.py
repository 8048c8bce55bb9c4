"""The simulated clock of the cluster state (kjbod's own; Kafka runs on wall-clock time)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from kjbod.controller.result import ControllerResult
from kjbod.errors import UserError
from kjbod.image import Image
from kjbod.records import KjbodClockRecord

_UNITS_MS = {"": 1000, "ms": 1, "s": 1000, "m": 60_000, "h": 3_600_000, "d": 86_400_000}
_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)?\s*$")


def parse_duration_ms(text: str) -> int:
    """`1500` (seconds), `1500s`, `250ms`, `25m`, `2h`, `1d` -> milliseconds."""
    match = _DURATION.match(text)
    if not match:
        raise UserError(f"Invalid duration '{text}': use a number with an optional unit ms, s, m, h or d, e.g. 25m")
    return round(float(match.group(1)) * _UNITS_MS[match.group(2) or ""])


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


class ClockControl:
    def __init__(self, image: Image) -> None:
        self._image = image

    def advance(self, duration_ms: int) -> ControllerResult[ClockAdvance]:
        if duration_ms < 0:
            raise UserError("The clock cannot go back: give a positive duration")
        now = self._image.time_ms + duration_ms
        records = [KjbodClockRecord(time_ms=now)] if duration_ms else []
        return ControllerResult.atomic_of(records, ClockAdvance(self._image.time_ms, now))
