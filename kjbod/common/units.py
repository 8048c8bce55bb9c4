"""Byte counts as operators write and read them."""

from __future__ import annotations

import re
from fractions import Fraction

from kjbod.errors import UserError

_UNITS = {
    "": 1, "b": 1,
    "kb": 10**3, "mb": 10**6, "gb": 10**9, "tb": 10**12, "pb": 10**15,
    "kib": 1 << 10, "mib": 1 << 20, "gib": 1 << 30, "tib": 1 << 40, "pib": 1 << 50,
}
_SIZE = re.compile(r"\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]*)\s*")


def human_bytes(count: float) -> str:
    """Binary units with one decimal: `512 B`, `1.5 KiB`, `100.0 GiB`."""
    if count < 1024:
        return f"{int(count)} B"
    value = float(count)
    for unit in ("KiB", "MiB", "GiB", "TiB"):
        value /= 1024
        if value < 1024:
            return f"{value:.1f} {unit}"
    return f"{value / 1024:.1f} PiB"


def human_rate(bytes_per_second: float | Fraction) -> str:
    """A copy or throttle rate: `50.0 MiB/s`."""
    return f"{human_bytes(float(bytes_per_second))}/s"


def parse_bytes(text: str, option: str) -> int:
    """`1000000`, `500GB`, `1.5TiB` -> bytes; a bad value names the option and the forms it takes."""
    match = _SIZE.fullmatch(text)
    unit = match.group(2).lower() if match else ""
    if not match or unit not in _UNITS:
        raise UserError(f"Invalid {option} {text!r}: give bytes, optionally with a unit (500GB, 1.5TiB)")
    return int(float(match.group(1)) * _UNITS[unit])
