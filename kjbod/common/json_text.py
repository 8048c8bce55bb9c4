"""JSON documents for people and scripts: `json.dumps(value, indent=2, ensure_ascii=False)`,
written by orjson when that gives the same text.

A check report of a large plan lists hundreds of thousands of partitions, and the standard
library's indenting encoder is pure Python (0.4 s for such a report). orjson's OPT_INDENT_2 text
equals the standard library's for dicts with string keys, lists, tuples, strings, ints, bools
and None (same separators, same escapes, non-ASCII kept); floats are written differently
(`1e+16` against `1e16`), so a document holding anything else, or anything orjson refuses (an
int past 64 bits, a lone surrogate), is written by the standard library.
"""

from __future__ import annotations

import json
from dataclasses import fields
from typing import Any

import orjson

_PLAIN = frozenset({str, int, bool, type(None)})


def indented_json(value: Any) -> str:
    """json.dumps(value, indent=2, ensure_ascii=False), byte for byte."""
    if _plain(value):
        try:
            return orjson.dumps(value, option=orjson.OPT_INDENT_2).decode()
        except orjson.JSONEncodeError:
            pass
    return json.dumps(value, indent=2, ensure_ascii=False)


def _plain(value: Any) -> bool:
    kind = type(value)
    if kind is dict:
        return all(type(key) is str for key in value) and all(map(_plain, value.values()))
    if kind is list or kind is tuple:
        # Long lists (partition names) hold one plain type: checked in one C loop.
        return set(map(type, value)) <= _PLAIN or all(map(_plain, value))
    return kind in _PLAIN


def camel_json(value: Any) -> dict[str, Any]:
    """A dataclass of plain values as a JSON object: its fields in order, named in camelCase
    (`bytes_moved` -> `bytesMoved`)."""
    return {camel_name(f.name): getattr(value, f.name) for f in fields(value)}


def camel_name(name: str) -> str:
    """A Python field name in camelCase, as kjbod's JSON names it."""
    first, *rest = name.split("_")
    return first + "".join(part.capitalize() for part in rest)
