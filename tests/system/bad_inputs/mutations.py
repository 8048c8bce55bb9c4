"""Hypothesis strategies that break valid input files in the ways real files break.

Every strategy starts from valid examples and mutates them, so most inputs get past the first
parser and reach the deeper checks:

- bytes: truncated, a byte flipped, junk inserted, a slice deleted or repeated, a BOM or a
  UTF-16 re-encoding, emptied, or replaced by random bytes;
- JSON and TOML: a value replaced by one of the wrong type (null, booleans, huge or negative
  numbers, NaN and infinities, unicode text, arrays and objects), a key dropped or repeated
  (duplicate keys in one object), an unknown key added, an element dropped or repeated, the
  document wrapped or emptied; then, sometimes, a bytes mutation on top;
- Java properties: lines dropped or repeated (a key given twice), values and keys replaced by
  junk (bad numbers, bad \\u escapes, unicode, separators, duplicate paths), junk lines and
  continuation backslashes inserted; then, sometimes, a bytes mutation.
"""

from __future__ import annotations

import json
import tomllib
from dataclasses import dataclass
from typing import Any

import tomli_w
from hypothesis import strategies as st

# Numbers at the edges of Java's int and long, and beyond.
EDGE_INTS = [0, -1, 1, 2**31 - 1, 2**31, -(2**31) - 1, 2**63 - 1, 2**63, -(2**63) - 1, 10**30]
EDGE_TEXT = [
    "", " ", "any", "-1", "NaN", "1e999", "0x10", "\u0000", "\t", "\n", "é", "💥", "\ud7ff", "orders", "orders-0",
    "..", ".", "/", "\\", "null", "true", "[]", "{}", "9" * 40, "a" * 300,
]
text_values = st.one_of(st.sampled_from(EDGE_TEXT), st.text(max_size=30))
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.sampled_from(EDGE_INTS),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    text_values,
)
json_values = st.recursive(
    scalars,
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=10), children, max_size=3),
    max_leaves=6,
)


# Bytes ---------------------------------------------------------------------------------------


@st.composite
def mutated_bytes(draw: st.DrawFn, data: bytes) -> bytes:
    """One corruption of `data` at the byte level."""
    size = len(data)
    at = draw(st.integers(min_value=0, max_value=size))
    operation = draw(
        st.sampled_from(["truncate", "flip", "insert", "delete", "repeat", "bom", "utf16", "empty", "random", "latin1"])
    )
    if operation == "truncate":
        return data[:at]
    if operation == "flip" and size:
        index = min(at, size - 1)
        return data[:index] + bytes([data[index] ^ draw(st.integers(min_value=1, max_value=255))]) + data[index + 1 :]
    if operation == "insert":
        junk = draw(st.one_of(st.binary(min_size=1, max_size=12), st.sampled_from([b"\x00", b"\xff\xfe", b"\\", b"\"", b"{", b"]", b",", b"\n", b"=", b"#"])))
        return data[:at] + junk + data[at:]
    if operation == "delete":
        end = draw(st.integers(min_value=at, max_value=size))
        return data[:at] + data[end:]
    if operation == "repeat":
        end = draw(st.integers(min_value=at, max_value=size))
        return data[:end] + data[at:end] + data[end:]
    if operation == "bom":
        return b"\xef\xbb\xbf" + data
    if operation == "utf16":
        return data.decode("utf-8", "replace").encode("utf-16")
    if operation == "empty":
        return b""
    if operation == "latin1":
        return data.decode("utf-8", "replace").replace("a", "\u00e4").encode("latin-1", "replace")
    return draw(st.binary(max_size=200))


# JSON ----------------------------------------------------------------------------------------


@dataclass
class Pairs:
    """A JSON object written from a list of pairs, so that a key can appear twice."""

    items: list[tuple[str, Any]]


def dump_json(value: Any) -> str:
    """JSON text; NaN and the infinities come out as Python writes them (not valid JSON)."""
    if isinstance(value, Pairs):
        return "{" + ", ".join(f"{json.dumps(k)}: {dump_json(v)}" for k, v in value.items) + "}"
    if isinstance(value, dict):
        return dump_json(Pairs(list(value.items())))
    if isinstance(value, list):
        return "[" + ", ".join(dump_json(v) for v in value) + "]"
    return json.dumps(value)


def _paths(value: Any, prefix: tuple = ()) -> list[tuple]:
    """Every location in a JSON document (the root is the empty path)."""
    found = [prefix]
    if isinstance(value, dict):
        for key, child in value.items():
            found += _paths(child, (*prefix, key))
    elif isinstance(value, list):
        for index, child in enumerate(value):
            found += _paths(child, (*prefix, index))
    return found


def _get(value: Any, path: tuple) -> Any:
    for step in path:
        value = value[step]
    return value


def _set(document: Any, path: tuple, new: Any) -> Any:
    if not path:
        return new
    _get(document, path[:-1])[path[-1]] = new
    return document


@st.composite
def mutated_document(draw: st.DrawFn, document: Any, values: st.SearchStrategy[Any] = json_values) -> Any:
    """1-3 structural changes to a copy of a JSON-like document."""
    document = json.loads(json.dumps(document))
    for _ in range(draw(st.integers(min_value=1, max_value=3))):
        paths = _paths(document)
        path = draw(st.sampled_from(paths))
        target = _get(document, path)
        operations = ["replace", "replace"]
        if path:
            operations += ["drop"]
        if isinstance(target, dict):
            operations += ["add-key", "duplicate-key", "empty"]
        if isinstance(target, list):
            operations += ["repeat-item", "empty", "add-item"]
        operation = draw(st.sampled_from(operations))
        if operation == "replace":
            document = _set(document, path, draw(values))
        elif operation == "drop":
            parent = _get(document, path[:-1])
            del parent[path[-1]]
        elif operation == "add-key":
            target[draw(st.text(max_size=12))] = draw(values)
        elif operation == "duplicate-key" and target:
            key = draw(st.sampled_from(sorted(target)))
            items = list(target.items()) + [(key, draw(st.one_of(st.just(target[key]), values)))]
            return Pairs(items) if not path else _set(document, path, Pairs(items))
        elif operation == "empty":
            document = _set(document, path, type(target)())
        elif operation == "repeat-item" and target:
            target.append(json.loads(json.dumps(draw(st.sampled_from(target)))))
        elif operation == "add-item":
            target.append(draw(values))
    return document


def json_files(documents: list[Any]) -> st.SearchStrategy[bytes]:
    """Mutated JSON files made from the valid `documents`."""
    bases = st.sampled_from(documents)
    structural = bases.flatmap(mutated_document).map(lambda d: dump_json(d).encode("utf-8", "surrogatepass"))
    return st.one_of(
        structural,
        structural.flatmap(mutated_bytes),
        bases.map(lambda d: json.dumps(d).encode()).flatmap(mutated_bytes),
    )


def text_with_json_files(documents: list[Any], prefix: str) -> st.SearchStrategy[bytes]:
    """A JSON document after some text lines (kafka-log-dirs output), mutated."""
    bases = st.sampled_from(documents)
    structural = bases.flatmap(mutated_document).map(lambda d: (prefix + dump_json(d) + "\n").encode("utf-8", "surrogatepass"))
    lines = prefix.splitlines(keepends=True)

    @st.composite
    def header_changed(draw: st.DrawFn) -> bytes:
        document = draw(bases)
        kept = [line for line in lines if draw(st.booleans())]
        junk = draw(st.lists(st.text(max_size=30).map(lambda t: t.replace("\n", " ") + "\n"), max_size=2))
        return ("".join(kept + junk) + json.dumps(document, separators=(",", ":")) + "\n").encode("utf-8", "surrogatepass")

    return st.one_of(structural, structural.flatmap(mutated_bytes), header_changed(), header_changed().flatmap(mutated_bytes))


# TOML ----------------------------------------------------------------------------------------

# TOML has no null and tomli-w writes integers only within 64 bits.
toml_scalars = st.one_of(
    st.booleans(),
    st.sampled_from([v for v in EDGE_INTS if -(2**63) <= v < 2**63]),
    st.integers(min_value=-(2**63), max_value=2**63 - 1),
    st.floats(allow_nan=True, allow_infinity=True),
    text_values,
)
toml_values = st.recursive(
    toml_scalars,
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(min_size=1, max_size=10), children, max_size=3),
    max_leaves=5,
)


def _toml_text(document: Any) -> bytes | None:
    if isinstance(document, Pairs) or not isinstance(document, dict):
        return None
    try:
        return tomli_w.dumps(document).encode("utf-8", "surrogatepass")
    except (TypeError, ValueError):
        return None


def toml_files(texts: list[str]) -> st.SearchStrategy[bytes]:
    """Mutated TOML files made from the valid `texts`."""
    documents = [tomllib.loads(text) for text in texts]
    structural = st.sampled_from(documents).flatmap(lambda d: mutated_document(d, toml_values)).map(_toml_text).filter(lambda b: b is not None)
    raw = st.sampled_from([t.encode() for t in texts])
    # Line-level edits keep the comments and layout of the real file.
    return st.one_of(structural, structural.flatmap(mutated_bytes), raw.flatmap(mutated_bytes), raw.flatmap(mutated_lines))


# Java properties -----------------------------------------------------------------------------

PROPERTY_JUNK = [
    "", " ", "-1", "0", "2147483648", "-2147483649", "99999999999999999999", "1.5", "abc", "true", "\\u00zz", "\\u12",
    "\\", "é", "💥", "broker", "controller", "broker,controller", "broker,broker", "controller,broker,foo", ",,,",
    "relative/dir", "d1,d1", "1@localhost:9093", "1@:9093", "CONTROLLER", "PLAINTEXT://:9092", "=", ":", "#", "!",
    "XcZZOzUqS4yHOjhMQB6JLQ", "AAAAAAAAAAAAAAAAAAAAAA", "AAAAAAAAAAAAAAAAAAAAAQ", "not-a-uuid", "1", "2",
    # Issue 20: a NUL in a path (C strings end there), a \\uXXXX escape that makes a lone UTF-16
    # surrogate, and (in TOML files edited line by line) numbers past a Java long in a list.
    "/x/d\x00x", "d\x00", "r\\ud800", "/x/\\udc00d", "[9223372036854775808]", "9223372036854775808", "[-1]",
]
property_values = st.one_of(st.sampled_from(PROPERTY_JUNK), st.text(max_size=20).filter(lambda t: "/" not in t))


@st.composite
def mutated_lines(draw: st.DrawFn, data: bytes) -> bytes:
    """1-3 line-level edits of a properties (or any line-based) file."""
    lines = data.decode("utf-8", "replace").split("\n")
    for _ in range(draw(st.integers(min_value=1, max_value=3))):
        at = draw(st.integers(min_value=0, max_value=max(len(lines) - 1, 0)))
        line = lines[at] if lines else ""
        key, sep, value = line.partition("=")
        operation = draw(st.sampled_from(["drop", "repeat", "value", "value", "key", "junk-line", "continuation"]))
        if operation == "drop" and lines:
            del lines[at]
        elif operation == "repeat":
            lines.insert(at, f"{key}={draw(property_values)}" if sep else line)
        elif operation == "value" and sep:
            lines[at] = f"{key}={draw(property_values)}"
        elif operation == "key" and sep:
            lines[at] = f"{draw(property_values)}={value}"
        elif operation == "junk-line":
            lines.insert(at, draw(st.one_of(st.sampled_from(["\\uZZZZ", "key", "=value", "key\\", "\\", "a=b\\", " \\u0041=x"]), st.text(max_size=20))))
        elif operation == "continuation":
            lines[at] = line + "\\"
    return "\n".join(lines).encode("utf-8", "surrogatepass")


def properties_files(texts: list[str]) -> st.SearchStrategy[bytes]:
    """Mutated Java properties files made from the valid `texts`."""
    raw = st.sampled_from([t.encode() for t in texts])
    edited = raw.flatmap(mutated_lines)
    return st.one_of(edited, edited, edited.flatmap(mutated_bytes), raw.flatmap(mutated_bytes))
