"""Byte counts as operators write and read them."""

from __future__ import annotations

import re
from fractions import Fraction

from kjbod.common.java import INT64_MAX, NumberFormatError, parse_java_int
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
    """`1000000`, `500GB`, `1.5TiB` -> bytes; a bad value names the option and the forms it takes.

    Exact (no float rounding: a plain byte count comes back as written), and at most a Java
    long, as every byte count kjbod stores is one."""
    match = _SIZE.fullmatch(text)
    unit = match.group(2).lower() if match else ""
    if not match or unit not in _UNITS:
        raise UserError(f"Invalid {option} {text!r}: give bytes, optionally with a unit (500GB, 1.5TiB)")
    count = int(Fraction(match.group(1)) * _UNITS[unit])
    if count > INT64_MAX:
        raise UserError(f"Invalid {option} {text!r}: at most {INT64_MAX} bytes (8 EiB)")
    return count


def parse_rate(text: str, option: str) -> int:
    """A throttle in bytes/s, as Kafka's tools take it (a Java long; a negative value means no
    throttle), or as a byte count with a unit like --capacity's: `50MiB`, `50MB`, `50MB/s`.
    A value that is neither gets Kafka's message (joptsimple's, for a `Long` option)."""
    try:
        return parse_java_int(text.strip(), bits=64)
    except NumberFormatError:
        pass
    bare = text.strip()
    bare = bare[:-2] if bare.lower().endswith("/s") else bare
    match = _SIZE.fullmatch(bare)
    if match is None or not match.group(2) or match.group(2).lower() not in _UNITS:
        raise UserError(f"Cannot parse argument '{text}' of option {option}")
    return parse_bytes(bare, f"--{option}")
