"""Kafka's binary encoding of metadata records, driven by Kafka's own message schemas.

`kjbod/records/schemas/` holds Kafka's JSON message definitions (see its README). From each
(message, version) this module generates one encoder and one decoder as Python source, compiled
once and cached, that implement Kafka's flexible-version wire format:

- int8/16/32/64, uint16/32, float64 and bool big-endian; consecutive fixed-size fields (uuids
  included) are packed by a single `struct` call;
- compact strings, bytes and arrays (unsigned-varint length + 1, 0 for null) in flexible
  versions, int16/int32 lengths (-1 for null) otherwise;
- uuids as 16 bytes; nested structs inline, each with its own tagged-field section;
- tagged fields after the regular ones, in tag order, written only when they differ from their
  default; unknown tags are skipped on reading.

A metadata record is framed as MetadataRecordSerde does: unsigned varints frame version (1), api
key and record version, then the message. Control records (SnapshotHeader, KRaftVersion...) are
bare messages at version 0.

Values move through the codecs positionally, in schema field order (`MessageCodec.fields`):
uuids as kjbod's canonical 22-character text, arrays as tuples, structs as dicts under Kafka's
JSON names. `encode_dict`/`decode_dict` give the dict form Kafka's JSON converters print, and
`encode_record`/`decode_record` map to kjbod's record models, whose `data()` already uses those
names. For the bulk paths (a million PartitionRecords) `encode_run` and `RunCollector` go
column-wise between a `RecordRun` and the wire without building one model object per record.

Written here rather than taken from a library: no maintained Python package implements Kafka's
schema-driven message format (the protocol libraries hand-write their request classes and do
not cover metadata records).
"""

from __future__ import annotations

import base64
import functools
import json
import re
import struct
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kjbod.records.base import Record
from kjbod.records.codec import RECORD_TYPES, RecordRun
from kjbod.records.control import NO_METADATA_API_KEY
from kjbod.records.kjbod_records import KJBOD_API_KEYS_FROM

SCHEMA_DIR = Path(__file__).parent / "schemas"
# MetadataRecordSerde.DEFAULT_FRAME_VERSION; frame version 0 is refused by Kafka's reader.
METADATA_FRAME_VERSION = 1

# Kafka's metadata records that kjbod models, by Kafka's record name (kjbod's own records have
# api keys from 1000 up and no Kafka encoding).
MODELLED_RECORDS: dict[str, type[Record]] = {cls.__name__: cls for cls in RECORD_TYPES if 0 <= cls.API_KEY < KJBOD_API_KEYS_FROM}
# Kafka's KRaft control records that kjbod models (KIP-853: kraft.version and the voter set).
# They are bare messages in a control batch, not metadata records; their data field `Version` is
# the model's `version` (kjbod.records.control).
CONTROL_MODELS: dict[str, type[Record]] = {cls.__name__: cls for cls in RECORD_TYPES if cls.API_KEY == NO_METADATA_API_KEY}


def control_model(name: str, data: Mapping[str, Any]) -> Record:
    """The kjbod model of a decoded control record (KRaftVersionRecord, VotersRecord)."""
    return CONTROL_MODELS[name].model_validate({"type": name, **data})


def control_data(record: Record) -> dict[str, Any]:
    """A control record model's fields under Kafka's JSON names, its `Version` included."""
    return {"version": record.version, **record.data()}


class WireError(ValueError):
    """Bytes that are not a valid message of the schema they claim, or a value a schema cannot hold."""


# Schemas ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Versions:
    """Kafka's `Versions`: an inclusive range, `high` None for "and later"; empty when low > high."""

    low: int
    high: int | None

    @classmethod
    def parse(cls, text: str | None, default: Versions | None = None) -> Versions:
        if text is None or text == "":
            if default is None:
                raise ValueError("missing versions")
            return default
        text = str(text).strip()
        if text == "none":
            return NO_VERSIONS
        if text.endswith("+"):
            return cls(int(text[:-1]), None)
        low, dash, high = text.partition("-")
        return cls(int(low), int(high) if dash else int(low))

    def __contains__(self, version: object) -> bool:
        return isinstance(version, int) and self.low <= version and (self.high is None or version <= self.high)

    def as_range(self) -> range:
        if self.high is None:
            raise ValueError("an open version range has no end")
        return range(self.low, self.high + 1)


NO_VERSIONS = Versions(1, 0)

_FIXED = {"int8": "b", "int16": "h", "uint16": "H", "int32": "i", "uint32": "I", "int64": "q", "float64": "d", "bool": "?"}
_FIXED_SIZE = {"b": 1, "h": 2, "H": 2, "i": 4, "I": 4, "q": 8, "d": 8, "?": 1, "16s": 16}
# Precompiled structs for arrays of up to this many fixed-size elements (replica lists).
_ARRAY_STRUCT_LIMIT = 64
_ARRAY_STRUCTS = {code: tuple(struct.Struct(f">{n}{code}") for n in range(_ARRAY_STRUCT_LIMIT)) for code in _FIXED.values()}
_VARIABLE = {"string", "bytes"}
_PRIMITIVES = set(_FIXED) | _VARIABLE | {"uuid"}


@dataclass(frozen=True)
class FieldSpec:
    name: str
    type: str  # a primitive, "[]<element>", or a struct name
    versions: Versions
    nullable_versions: Versions
    tagged_versions: Versions
    tag: int | None
    default_text: str | None
    fields: tuple[FieldSpec, ...]  # a struct's (or an array of structs') fields
    about: str

    @property
    def json_name(self) -> str:
        """Kafka's camelCaseName: the first letter lower-cased (what the JSON converters print)."""
        return self.name[:1].lower() + self.name[1:]

    @property
    def is_array(self) -> bool:
        return self.type.startswith("[]")

    @property
    def element_type(self) -> str:
        return self.type[2:] if self.is_array else self.type

    @property
    def is_struct(self) -> bool:
        return self.element_type not in _PRIMITIVES

    def default(self) -> Any:
        """The value a reader assumes when the field is absent (Kafka's FieldSpec defaults)."""
        text = self.default_text
        if text == "null":
            return None
        if self.is_array:
            return ()
        kind = self.type
        if kind == "bool":
            return text == "true"
        if kind in ("int8", "int16", "uint16", "int32", "uint32", "int64"):
            return int(text, 0) if text else 0
        if kind == "float64":
            return float(text) if text else 0.0
        if kind == "string":
            return text or ""
        if kind == "bytes":
            return b""
        if kind == "uuid":
            return ZERO_UUID_TEXT
        return {f.json_name: f.default() for f in self.fields if 0 in f.versions}  # a struct

    def present_in(self, version: int) -> bool:
        return version in self.versions

    def tagged_in(self, version: int) -> bool:
        return version in self.tagged_versions

    def nullable_in(self, version: int) -> bool:
        return version in self.nullable_versions


@dataclass(frozen=True)
class MessageSpec:
    name: str
    api_key: int | None  # None for control records (they are keyed by ControlRecordType)
    kind: str  # "metadata" or "data"
    valid_versions: Versions
    flexible_versions: Versions
    fields: tuple[FieldSpec, ...]

    @property
    def versions(self) -> range:
        return self.valid_versions.as_range()

    def codec(self, version: int) -> MessageCodec:
        return _codec(self.name, version)


def _strip_comments(text: str) -> str:
    """Kafka's schema files are JSON with // and /* */ comments (Jackson's ALLOW_COMMENTS)."""
    out: list[str] = []
    i, n, in_string = 0, len(text), False
    while i < n:
        c = text[i]
        if in_string:
            out.append(c)
            if c == "\\":
                out.append(text[i + 1])
                i += 2
                continue
            in_string = c != '"'
            i += 1
        elif c == '"':
            in_string = True
            out.append(c)
            i += 1
        elif text.startswith("//", i):
            end = text.find("\n", i)
            i = n if end < 0 else end
        elif text.startswith("/*", i):
            i = text.index("*/", i) + 2
        else:
            out.append(c)
            i += 1
    return "".join(out)


def _field(raw: dict[str, Any], structs: Mapping[str, list[dict[str, Any]]], message_versions: Versions) -> FieldSpec:
    versions = Versions.parse(raw.get("versions"))
    kind = raw["type"]
    element = kind[2:] if kind.startswith("[]") else kind
    if element not in _PRIMITIVES:
        raw_fields = raw.get("fields", structs.get(element))
        if raw_fields is None:
            raise ValueError(f"field {raw['name']}: unknown type {kind}")
        fields = tuple(_field(f, structs, message_versions) for f in raw_fields)
    else:
        fields = ()
    tag = raw.get("tag")
    return FieldSpec(
        name=raw["name"],
        type=kind,
        versions=versions,
        nullable_versions=Versions.parse(raw.get("nullableVersions"), NO_VERSIONS),
        tagged_versions=Versions.parse(raw.get("taggedVersions"), NO_VERSIONS),
        tag=None if tag is None else int(tag),
        default_text=None if raw.get("default") is None else str(raw["default"]),
        fields=fields,
        about=raw.get("about", ""),
    )


def load_message_spec(path: Path) -> MessageSpec:
    raw = json.loads(_strip_comments(path.read_text(encoding="utf-8")))
    valid = Versions.parse(raw["validVersions"])
    structs = {s["name"]: s["fields"] for s in raw.get("commonStructs", ())}
    return MessageSpec(
        name=raw["name"],
        api_key=raw.get("apiKey"),
        kind=raw["type"],
        valid_versions=valid,
        flexible_versions=Versions.parse(raw["flexibleVersions"]),
        fields=tuple(_field(f, structs, valid) for f in raw["fields"]),
    )


@functools.cache
def schemas() -> Mapping[str, MessageSpec]:
    """Every vendored message, by name."""
    specs = (load_message_spec(path) for path in sorted(SCHEMA_DIR.glob("*.json")))
    return {spec.name: spec for spec in specs}


@functools.cache
def metadata_schemas_by_api_key() -> Mapping[int, MessageSpec]:
    return {spec.api_key: spec for spec in schemas().values() if spec.kind == "metadata" and spec.api_key is not None}


def schema(name: str) -> MessageSpec:
    try:
        return schemas()[name]
    except KeyError:
        raise WireError(f"no Kafka schema named {name}") from None


# Primitive helpers used by the generated code ---------------------------------------------------

ZERO_UUID_TEXT = "AAAAAAAAAAAAAAAAAAAAAA"
_UUID_TEXT = re.compile(r"[A-Za-z0-9_-]{21}[AQgw]")


def _uvarint_bytes(value: int) -> bytes:
    if value < 0:
        raise WireError(f"unsigned varint cannot hold {value}")
    out = bytearray()
    while value > 0x7F:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


# The unsigned varints of 0..16383, precomputed: lengths and zig-zag varints of small values.
UVARINT_TABLE = tuple(_uvarint_bytes(i) for i in range(1 << 14))


def uvarint(value: int) -> bytes:
    """ByteUtils.writeUnsignedVarint."""
    if 0 <= value < 16384:
        return UVARINT_TABLE[value]
    return _uvarint_bytes(value)


def varint(value: int) -> bytes:
    """ByteUtils.writeVarint/writeVarlong: zig-zag, then unsigned varint."""
    return uvarint((value << 1) ^ (value >> 63)) if value < 0 else uvarint(value << 1)


def read_uvarint(buf: bytes, pos: int) -> tuple[int, int]:
    """ByteUtils.readUnsignedVarint (up to 5 bytes) / readUnsignedVarlong (up to 10)."""
    result = shift = 0
    while True:
        byte = buf[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if byte < 0x80:
            return result, pos
        shift += 7
        if shift > 63:
            raise WireError("a varint longer than 10 bytes")


def read_varint(buf: bytes, pos: int) -> tuple[int, int]:
    raw, pos = read_uvarint(buf, pos)
    return (raw >> 1) ^ -(raw & 1), pos


_UUID_TO_BYTES: dict[str, bytes] = {}
_UUID_TO_TEXT: dict[bytes, str] = {}
_UUID_CACHE_LIMIT = 1 << 20


def uuid_bytes(text: str) -> bytes:
    """The 16 bytes of a canonical uuid text (cached: topic and directory ids repeat a lot)."""
    raw = _UUID_TO_BYTES.get(text)
    if raw is None:
        if not isinstance(text, str) or _UUID_TEXT.fullmatch(text) is None:
            raise WireError(f"{text!r} is not a Kafka uuid")
        raw = base64.urlsafe_b64decode(text + "==")
        if len(_UUID_TO_BYTES) < _UUID_CACHE_LIMIT:
            _UUID_TO_BYTES[text] = raw
    return raw


def uuid_text(raw: bytes) -> str:
    text = _UUID_TO_TEXT.get(raw)
    if text is None:
        text = base64.urlsafe_b64encode(raw)[:22].decode("ascii")
        if len(_UUID_TO_TEXT) < _UUID_CACHE_LIMIT:
            _UUID_TO_TEXT[raw] = text
    return text


# Code generation -------------------------------------------------------------------------------


class _Source:
    def __init__(self) -> None:
        self.lines: list[str] = []
        self._indent = 0

    def line(self, text: str) -> None:
        self.lines.append("    " * self._indent + text)

    def indent(self) -> None:
        self._indent += 1

    def dedent(self) -> None:
        self._indent -= 1


class _Generator:
    """Emits the encoder and decoder functions of one message version (and its structs)."""

    def __init__(self, spec: MessageSpec, version: int) -> None:
        self.spec = spec
        self.version = version
        self.flexible = version in spec.flexible_versions
        self.src = _Source()
        self.namespace: dict[str, Any] = {
            "_pack": struct.pack,
            "_unpack_from": struct.unpack_from,
            "_uv": uvarint,
            "_small_uv": UVARINT_TABLE,
            "_read_uv": read_uvarint,
            "_ub": uuid_bytes,
            "_ut": uuid_text,
            "_U2B": _UUID_TO_BYTES,
            "_B2U": _UUID_TO_TEXT,
            "_WireError": WireError,
            "_Struct": struct.Struct,
        }
        self._counter = 0
        self._structs: dict[int, str] = {}
        # Struct element functions, defined before the message's own functions.
        self.prelude: list[str] = []

    def fresh(self, prefix: str) -> str:
        self._counter += 1
        return f"{prefix}{self._counter}"

    def constant(self, value: Any) -> str:
        name = self.fresh("_c")
        self.namespace[name] = value
        return name

    # Encoding ----------------------------------------------------------------------------------

    def _emit_length(self, length_expr: str, nullable_null: bool, out: str, *, array: bool) -> None:
        if self.flexible:
            if nullable_null:
                self.src.line(f"{out}(b'\\x00')")
            else:
                self.src.line(f"{out}(_small_uv[{length_expr} + 1] if {length_expr} < 16383 else _uv({length_expr} + 1))")
        elif array:
            self.src.line(f"{out}(_pack('>i', {length_expr}))" if not nullable_null else f"{out}(b'\\xff\\xff\\xff\\xff')")
        else:
            self.src.line(f"{out}(_pack('>h', {length_expr}))" if not nullable_null else f"{out}(b'\\xff\\xff')")

    def encode_value(self, field: FieldSpec, expr: str, out: str) -> None:
        """Emit code appending the encoding of `expr` (a value of `field`) via `out(bytes)`."""
        src = self.src
        nullable = field.nullable_in(self.version)
        if nullable:
            src.line(f"if {expr} is None:")
            src.indent()
            self._emit_length("0", True, out, array=field.is_array or field.type == "bytes")
            src.dedent()
            src.line("else:")
            src.indent()
        if field.is_array:
            element = field.element_type
            n = self.fresh("_n")
            src.line(f"{n} = len({expr})")
            self._emit_length(n, False, out, array=True)
            if element in _FIXED:
                code = _FIXED[element]
                table = self.constant(_ARRAY_STRUCTS[code])
                src.line(f"{out}(({table}[{n}] if {n} < {_ARRAY_STRUCT_LIMIT} else _Struct('>%d{code}' % {n})).pack(*{expr}))")
            elif element == "uuid":
                item = self.fresh("_x")
                src.line(f"{out}(b''.join([_U2B.get({item}) or _ub({item}) for {item} in {expr}]))")
            elif element in _VARIABLE:
                item = self.fresh("_x")
                src.line(f"for {item} in {expr}:")
                src.indent()
                self.encode_scalar(element, False, item, out)
                src.dedent()
            else:
                encoder = self.struct_encoder(field)
                item = self.fresh("_x")
                src.line(f"for {item} in {expr}:")
                src.indent()
                src.line(f"{encoder}({item}, {out})")
                src.dedent()
        elif field.is_struct:
            src.line(f"{self.struct_encoder(field)}({expr}, {out})")
        else:
            self.encode_scalar(field.type, False, expr, out)
        if nullable:
            src.dedent()

    def encode_scalar(self, kind: str, nullable: bool, expr: str, out: str) -> None:
        src = self.src
        if kind in _FIXED:
            src.line(f"{out}(_pack('>{_FIXED[kind]}', {expr}))")
        elif kind == "uuid":
            src.line(f"{out}(_U2B.get({expr}) or _ub({expr}))")
        else:  # string / bytes
            raw = self.fresh("_s")
            src.line(f"{raw} = {expr}.encode('utf-8')" if kind == "string" else f"{raw} = bytes({expr})")
            if kind == "string":
                src.line(f"if len({raw}) > 32767: raise _WireError('a string of ' + str(len({raw})) + ' bytes is longer than 32767')")
            self._emit_length(f"len({raw})", False, out, array=kind == "bytes")
            src.line(f"{out}({raw})")

    def struct_encoder(self, field: FieldSpec) -> str:
        """The name of a function `(dict, out) -> None` encoding one element of a struct field."""
        key = id(field)
        if key in self._structs:
            return self._structs[key]
        name = self.fresh(f"_enc_{field.element_type}_")
        self._structs[key] = name
        saved = self.src
        self.src = _Source()
        fields = [f for f in field.fields if f.present_in(self.version)]
        self.src.line(f"def {name}(_d, _out):")
        self.src.indent()
        args = []
        for f in fields:
            default = self.constant(f.default())
            local = self.fresh("_v")
            self.src.line(f"{local} = _d.get({f.json_name!r}, {default})")
            args.append(local)
        self.body_encoder(fields, args, "_out")
        self.src.dedent()
        self.prelude.extend(self.src.lines)
        self.src = saved
        return name

    def body_encoder(self, fields: list[FieldSpec], args: list[str], out: str) -> None:
        """Emit the regular fields (fixed-size runs packed together), then the tagged section."""
        src = self.src
        run_codes: list[str] = []
        run_args: list[str] = []

        def flush() -> None:
            if run_codes:
                fmt = self.constant(struct.Struct(">" + "".join(run_codes)))
                src.line(f"{out}({fmt}.pack({', '.join(run_args)}))")
                run_codes.clear()
                run_args.clear()

        tagged: list[tuple[FieldSpec, str]] = []
        for f, arg in zip(fields, args):
            if f.tagged_in(self.version):
                tagged.append((f, arg))
                continue
            nullable = f.nullable_in(self.version)
            if not f.is_array and not nullable and f.type in _FIXED:
                run_codes.append(_FIXED[f.type])
                run_args.append(arg)
            elif not f.is_array and not nullable and f.type == "uuid":
                run_codes.append("16s")
                run_args.append(f"(_U2B.get({arg}) or _ub({arg}))")
            else:
                flush()
                self.encode_value(f, arg, out)
        flush()
        if not self.flexible:
            return
        if not tagged:
            src.line(f"{out}(b'\\x00')")
            return
        tagged.sort(key=lambda item: item[0].tag)  # type: ignore[arg-type, return-value]
        conditions = [self._differs_from_default(f, arg) for f, arg in tagged]
        # Most records carry no tagged field: one test, then a single zero count.
        src.line(f"if not ({' or '.join(conditions)}):")
        src.indent()
        src.line(f"{out}(b'\\x00')")
        src.dedent()
        src.line("else:")
        src.indent()
        parts = self.fresh("_tags")
        src.line(f"{parts} = []")
        for (f, arg), condition in zip(tagged, conditions):
            src.line(f"if {condition}:")
            src.indent()
            sub = self.fresh("_t")
            src.line(f"{sub} = []")
            self.encode_value(f, arg, f"{sub}.append")
            blob = self.fresh("_b")
            src.line(f"{blob} = b''.join({sub})")
            src.line(f"{parts}.append(_uv({f.tag}) + _uv(len({blob})) + {blob})")
            src.dedent()
        src.line(f"{out}(_uv(len({parts})))")
        src.line(f"{out}(b''.join({parts}))")
        src.dedent()

    def _differs_from_default(self, field: FieldSpec, arg: str) -> str:
        """The condition under which Kafka writes a tagged field (its value is not the default)."""
        default = field.default()
        if field.is_array:
            # Lists and tuples compare unequal even when both are empty: compare by length.
            return f"{arg} is not None" if default is None else f"({arg} is None or len({arg}) > 0)"
        if default is None:
            return f"{arg} is not None"
        return f"{arg} != {self.constant(default)}"

    # Decoding ----------------------------------------------------------------------------------

    def read_uv(self, target: str) -> None:
        src = self.src
        src.line(f"{target} = buf[pos]")
        src.line(f"if {target} < 128: pos += 1")
        src.line(f"else: {target}, pos = _read_uv(buf, pos)")

    def read_length(self, target: str, nullable: bool, *, array: bool) -> None:
        """Leaves -1 in target for null."""
        src = self.src
        if self.flexible:
            self.read_uv(target)
            src.line(f"{target} -= 1")
        else:
            size = 4 if array else 2
            src.line(f"{target}, = _unpack_from('>{'i' if array else 'h'}', buf, pos); pos += {size}")
        if not nullable:
            src.line(f"if {target} < 0: raise _WireError('a null value in a non-nullable field')")

    def decode_value(self, field: FieldSpec, target: str) -> None:
        src = self.src
        nullable = field.nullable_in(self.version)
        if field.is_array:
            n = self.fresh("_n")
            self.read_length(n, nullable, array=True)
            if nullable:
                src.line(f"if {n} < 0: {target} = None")
                src.line("else:")
                src.indent()
            element = field.element_type
            if element in _FIXED:
                code = _FIXED[element]
                size = _FIXED_SIZE[code]
                table = self.constant(_ARRAY_STRUCTS[code])
                src.line(
                    f"{target} = ({table}[{n}] if {n} < {_ARRAY_STRUCT_LIMIT} else _Struct('>%d{code}' % {n})).unpack_from(buf, pos); "
                    f"pos += {size} * {n}"
                )
            elif element == "uuid":
                src.line(f"if pos + 16 * {n} > len(buf): raise _WireError('a uuid array runs past the end')")
                src.line(f"{target} = tuple([_B2U.get(_x := buf[_p:_p + 16]) or _ut(_x) for _p in range(pos, pos + 16 * {n}, 16)])")
                src.line(f"pos += 16 * {n}")
            else:
                items = self.fresh("_items")
                src.line(f"{items} = []")
                src.line(f"for _ in range({n}):")
                src.indent()
                item = self.fresh("_e")
                if element in _VARIABLE:
                    self.decode_scalar(element, False, item)
                else:
                    src.line(f"{item}, pos = {self.struct_decoder(field)}(buf, pos)")
                src.line(f"{items}.append({item})")
                src.dedent()
                src.line(f"{target} = tuple({items})")
            if nullable:
                src.dedent()
        elif field.is_struct:
            src.line(f"{target}, pos = {self.struct_decoder(field)}(buf, pos)")
        else:
            self.decode_scalar(field.type, nullable, target)

    def decode_scalar(self, kind: str, nullable: bool, target: str) -> None:
        src = self.src
        if kind in _FIXED:
            code = _FIXED[kind]
            src.line(f"{target}, = _unpack_from('>{code}', buf, pos); pos += {_FIXED_SIZE[code]}")
        elif kind == "uuid":
            raw = self.fresh("_r")
            src.line(f"{raw} = buf[pos:pos + 16]; pos += 16")
            src.line(f"{target} = _B2U.get({raw}) or _ut({raw})")
        else:
            n = self.fresh("_n")
            self.read_length(n, nullable, array=kind == "bytes")
            if nullable:
                src.line(f"if {n} < 0: {target} = None")
                src.line("else:")
                src.indent()
            value = f"buf[pos:pos + {n}].decode('utf-8')" if kind == "string" else f"bytes(buf[pos:pos + {n}])"
            src.line(f"{target} = {value}; pos += {n}")
            if nullable:
                src.dedent()

    def struct_decoder(self, field: FieldSpec) -> str:
        """The name of a function `(buf, pos) -> (dict, pos)` decoding one struct element."""
        key = -id(field)
        if key in self._structs:
            return self._structs[key]
        name = self.fresh(f"_dec_{field.element_type}_")
        self._structs[key] = name
        saved = self.src
        self.src = _Source()
        fields = [f for f in field.fields if f.present_in(self.version)]
        self.src.line(f"def {name}(buf, pos):")
        self.src.indent()
        targets = self.body_decoder(field.fields, fields)
        pairs = ", ".join(f"{f.json_name!r}: {t}" for f, t in zip(field.fields, targets) if f.present_in(self.version))
        self.src.line(f"return {{{pairs}}}, pos")
        self.src.dedent()
        self.prelude.extend(self.src.lines)
        self.src = saved
        return name

    def body_decoder(self, all_fields: Sequence[FieldSpec], fields: list[FieldSpec]) -> list[str]:
        """Emit the decoding of `fields`; returns the local holding each of `all_fields`."""
        src = self.src
        targets = {id(f): self.fresh("_v") for f in all_fields}
        for f in all_fields:
            if not f.present_in(self.version) or f.tagged_in(self.version):
                src.line(f"{targets[id(f)]} = {self.constant(f.default())}")
        run: list[FieldSpec] = []

        def flush() -> None:
            if run:
                fmt = struct.Struct(">" + "".join("16s" if f.type == "uuid" else _FIXED[f.type] for f in run))
                names = [targets[id(f)] for f in run]
                src.line(f"{', '.join(names)}, = {self.constant(fmt)}.unpack_from(buf, pos); pos += {fmt.size}")
                for f in run:
                    if f.type == "uuid":
                        t = targets[id(f)]
                        src.line(f"{t} = _B2U.get({t}) or _ut({t})")
                run.clear()

        tagged = [f for f in fields if f.tagged_in(self.version)]
        for f in fields:
            if f.tagged_in(self.version):
                continue
            if not f.is_array and not f.nullable_in(self.version) and (f.type in _FIXED or f.type == "uuid"):
                run.append(f)
            else:
                flush()
                self.decode_value(f, targets[id(f)])
        flush()
        if self.flexible:
            count = self.fresh("_k")
            self.read_uv(count)
            src.line(f"for _ in range({count}):")
            src.indent()
            self.read_uv("_tag")
            self.read_uv("_size")
            src.line("_end = pos + _size")
            first = True
            for f in sorted(tagged, key=lambda f: f.tag):  # type: ignore[arg-type, return-value]
                src.line(f"{'if' if first else 'elif'} _tag == {f.tag}:")
                first = False
                src.indent()
                self.decode_value(f, targets[id(f)])
                src.line("if pos != _end: raise _WireError('tagged field %d has %d bytes but its value took %d' % (_tag, _size, _size + pos - _end))")
                src.dedent()
            if not first:
                src.line("else: pos = _end")
            else:
                src.line("pos = _end")
            src.dedent()
        return [targets[id(f)] for f in all_fields]

    # The whole message -------------------------------------------------------------------------

    def build(self) -> tuple[Callable[..., bytes], Callable[[bytes, int], tuple[tuple[Any, ...], int]], Callable[..., Any]]:
        spec = self.spec
        fields = list(spec.fields)
        present = [f for f in fields if f.present_in(self.version)]
        args = [f"a{i}" for i in range(len(fields))]
        by_field = dict(zip((id(f) for f in fields), args))
        src = self.src
        src.line(f"def encode({', '.join(args)}):")
        src.indent()
        src.line("_parts = []")
        src.line("_out = _parts.append")
        self.body_encoder(present, [by_field[id(f)] for f in present], "_out")
        src.line("return b''.join(_parts)")
        src.dedent()
        src.line("def decode(buf, pos):")
        src.indent()
        targets = self.body_decoder(fields, present)
        src.line(f"return ({', '.join(targets)}{',' if len(targets) == 1 else ''}), pos")
        src.dedent()
        # The same decoding, appending each present field to a column instead of returning a tuple.
        appenders = [f"_col{i}" for i in range(len(present))]
        src.line(f"def make_collect({', '.join(appenders)}):")
        src.indent()
        src.line("def collect(buf, pos):")
        src.indent()
        targets = self.body_decoder(fields, present)
        by_id = dict(zip((id(f) for f in fields), targets))
        for appender, f in zip(appenders, present):
            src.line(f"{appender}({by_id[id(f)]})")
        src.line("return pos")
        src.dedent()
        src.line("return collect")
        src.dedent()
        code = "\n".join(self.prelude + src.lines)
        exec(compile(code, f"<kafka codec {spec.name} v{self.version}>", "exec"), self.namespace)  # noqa: S102
        return self.namespace["encode"], self.namespace["decode"], self.namespace["make_collect"]


class MessageCodec:
    """The compiled encoder and decoder of one message version."""

    def __init__(self, spec: MessageSpec, version: int) -> None:
        if version not in spec.valid_versions:
            raise WireError(f"{spec.name} has no version {version} (valid: {_versions_text(spec.valid_versions)})")
        self.spec = spec
        self.version = version
        self.fields = spec.fields
        self.json_names = tuple(f.json_name for f in spec.fields)
        self._defaults = tuple(f.default() for f in spec.fields)
        self._encode, self._decode, self._make_collect = _Generator(spec, version).build()
        self.present_fields = tuple(f for f in spec.fields if f.present_in(version))

    def collector(self, columns: Sequence[list[Any]]) -> Callable[[bytes, int], int]:
        """A decoder `(buf, pos) -> pos` that appends each field this version has to the
        matching list of `columns` (in `present_fields` order): the bulk path, no tuple per record."""
        if len(columns) != len(self.present_fields):
            raise ValueError(f"{self.spec.name} v{self.version} has {len(self.present_fields)} fields")
        return self._make_collect(*(column.append for column in columns))

    def encode(self, *values: Any) -> bytes:
        """The message body from its field values, in schema field order."""
        try:
            return self._encode(*values)
        except WireError:
            raise
        except (struct.error, TypeError, AttributeError, UnicodeEncodeError, OverflowError) as exc:
            raise WireError(f"{self.spec.name} v{self.version}: cannot encode ({exc})") from None

    def decode(self, buf: bytes, pos: int = 0, end: int | None = None) -> tuple[tuple[Any, ...], int]:
        """Field values from `buf[pos:]`; with `end`, the message must end exactly there."""
        try:
            values, after = self._decode(buf, pos)
        except WireError as exc:
            raise WireError(f"{self.spec.name} v{self.version}: {exc}") from None
        except (struct.error, IndexError, UnicodeDecodeError, ValueError, OverflowError) as exc:
            raise WireError(f"{self.spec.name} v{self.version}: truncated or malformed ({exc})") from None
        if end is not None and after != end:
            if after > end:
                raise WireError(f"{self.spec.name} v{self.version}: the message runs {after - end} byte(s) past its end")
            raise WireError(f"{self.spec.name} v{self.version}: {end - after} byte(s) of garbage after the message")
        return values, after

    def encode_dict(self, data: Mapping[str, Any]) -> bytes:
        """The message body from Kafka's JSON form (missing fields take their default)."""
        return self.encode(*(data.get(name, default) for name, default in zip(self.json_names, self._defaults)))

    def decode_dict(self, buf: bytes, pos: int = 0, end: int | None = None) -> dict[str, Any]:
        """Kafka's JSON form: the fields this version has, under their JSON names."""
        values, _ = self.decode(buf, pos, end)
        return {f.json_name: v for f, v in zip(self.fields, values) if f.present_in(self.version)}


def _versions_text(versions: Versions) -> str:
    return f"{versions.low}+" if versions.high is None else f"{versions.low}-{versions.high}"


@functools.cache
def _codec(name: str, version: int) -> MessageCodec:
    return MessageCodec(schema(name), version)


def codec(name: str, version: int) -> MessageCodec:
    """The codec of a message version, compiled on first use."""
    return _codec(name, version)


# MetadataRecordSerde ---------------------------------------------------------------------------


def frame_prefix(api_key: int, version: int) -> bytes:
    return uvarint(METADATA_FRAME_VERSION) + uvarint(api_key) + uvarint(version)


@dataclass(frozen=True)
class MetadataValue:
    """A decoded record value: the schema it names, its version, and the field values."""

    spec: MessageSpec | None  # None when the api key is not one this Kafka source knows
    api_key: int
    version: int
    values: tuple[Any, ...] | None

    @property
    def name(self) -> str:
        return self.spec.name if self.spec else f"UnknownRecord(apiKey={self.api_key})"

    def data(self) -> dict[str, Any]:
        """Every field this version has, under Kafka's JSON names."""
        assert self.spec is not None and self.values is not None
        return {f.json_name: v for f, v in zip(self.spec.fields, self.values) if f.present_in(self.version)}

    def kafka_json(self) -> dict[str, Any]:
        """The record as Kafka's generated JSON converter prints it (kafka-dump-log)."""
        assert self.spec is not None and self.values is not None
        return kafka_json(self.spec.fields, self.values, self.version)


def read_frame(buf: bytes, pos: int, end: int) -> tuple[int, int, int]:
    """(api key, version, position of the message) of a MetadataRecordSerde frame."""
    try:
        frame_version, pos = read_uvarint(buf, pos)
        if frame_version != METADATA_FRAME_VERSION:
            raise WireError(f"Could not deserialize metadata record due to unknown frame version {frame_version} (only frame version 1 is supported)")
        api_key, pos = read_uvarint(buf, pos)
        version, pos = read_uvarint(buf, pos)
    except IndexError:
        raise WireError("a metadata record frame runs past the end of the record") from None
    if pos > end:
        raise WireError("a metadata record frame runs past the end of the record")
    return api_key, version, pos


def decode_metadata_value(buf: bytes, pos: int = 0, end: int | None = None) -> MetadataValue:
    """MetadataRecordSerde.read: frame, then the message. An api key this schema set does not
    know gives a MetadataValue without values (its bytes are skipped, not parsed)."""
    end = len(buf) if end is None else end
    api_key, version, pos = read_frame(buf, pos, end)
    spec = metadata_schemas_by_api_key().get(api_key)
    if spec is None:
        return MetadataValue(None, api_key, version, None)
    if version not in spec.valid_versions:
        raise WireError(f"{spec.name} version {version} is not one this schema knows (valid: {_versions_text(spec.valid_versions)})")
    values, _ = _codec(spec.name, version).decode(buf, pos, end)
    return MetadataValue(spec, api_key, version, values)


def encode_metadata_value(name: str, version: int, data: Mapping[str, Any]) -> bytes:
    """MetadataRecordSerde.write of a record given in Kafka's JSON form."""
    spec = schema(name)
    if spec.api_key is None:
        raise WireError(f"{name} is not a metadata record")
    return frame_prefix(spec.api_key, version) + _codec(name, version).encode_dict(data)


# kjbod's record models -------------------------------------------------------------------------


def encode_record(record: Record) -> bytes:
    """A kjbod model of a Kafka record, as MetadataRecordSerde writes it."""
    name = type(record).__name__
    if name not in MODELLED_RECORDS:
        raise WireError(f"{name} is kjbod's own record and has no Kafka encoding")
    record.check_version()
    return frame_prefix(record.API_KEY, record.version) + _codec(name, record.version).encode_dict(record.wire_data())


def model_from_value(value: MetadataValue) -> Record | None:
    """The kjbod model of a decoded value, or None when kjbod does not model that record."""
    model = MODELLED_RECORDS.get(value.name)
    if model is None:
        return None
    return model.model_validate({"type": value.name, "version": value.version, **value.data()})


def decode_record(buf: bytes, pos: int = 0, end: int | None = None) -> Record | None:
    return model_from_value(decode_metadata_value(buf, pos, end))


def _column_names(model: type[Record], spec: MessageSpec) -> list[str]:
    """The model attribute for each schema field (by Kafka's JSON name)."""
    by_alias = {(info.alias or name): name for name, info in model.model_fields.items()}
    return [by_alias[f.json_name] for f in spec.fields]


def encode_run(run: RecordRun) -> Iterator[bytes]:
    """The framed value of every record of a run, column-wise (no model object per record)."""
    name = run.record_type.__name__
    model = MODELLED_RECORDS.get(name)
    if model is None:
        raise WireError(f"{name} is kjbod's own record and has no Kafka encoding")
    spec = schema(name)
    codec_ = _codec(name, run.version)
    prefix = frame_prefix(spec.api_key, run.version)  # type: ignore[arg-type]
    columns: list[Iterable[Any]] = []
    for field_name, f in zip(_column_names(model, spec), spec.fields):
        column = run.columns.get(field_name)
        columns.append([f.default()] * run.count if column is None else column)
    encode = codec_._encode
    try:
        for row in zip(*columns):
            yield prefix + encode(*row)
    except (struct.error, TypeError, AttributeError, UnicodeEncodeError, OverflowError) as exc:
        raise WireError(f"{name} v{run.version}: cannot encode ({exc})") from None


class RunCollector:
    """Decodes records of one modelled type and version straight into columns, then gives
    them as a RecordRun: the bulk path for a million PartitionRecords (no object per record)."""

    def __init__(self, spec: MessageSpec, version: int) -> None:
        model = MODELLED_RECORDS[spec.name]
        message = _codec(spec.name, version)
        self.spec = spec
        self.version = version
        self.model = model
        self._names = _present_column_names(spec.name, version)
        self._columns: list[list[Any]] = [[] for _ in self._names]
        self._collect = message.collector(self._columns)
        self.count = 0
        # The MetadataRecordSerde frame every record of this run starts with.
        self.frame = frame_prefix(spec.api_key, version)  # type: ignore[arg-type]

    def collect(self, buf: bytes, pos: int, end: int) -> None:
        """Decode the message at `buf[pos:end]` (after its frame) into the columns."""
        try:
            after = self._collect(buf, pos)
        except WireError as exc:
            raise WireError(f"{self.spec.name} v{self.version}: {exc}") from None
        except (struct.error, IndexError, UnicodeDecodeError, ValueError, OverflowError) as exc:
            raise WireError(f"{self.spec.name} v{self.version}: truncated or malformed ({exc})") from None
        if after != end:
            for column in self._columns:  # keep the columns aligned: drop this record's values
                del column[self.count :]
            raise WireError(f"{self.spec.name} v{self.version}: the message ends at byte {after - pos} of {end - pos}")
        self.count += 1

    def extend(self, columns: Mapping[str, Sequence[Any]], count: int) -> None:
        """Records decoded elsewhere (kjbod.kafka_formats.partition_columns): `count` values of
        each of this run's columns, by field name."""
        for name, column in zip(self._names, self._columns):
            column.extend(columns[name])
        self.count += count

    def run(self) -> RecordRun:
        return RecordRun(self.model, self.version, self.count, dict(zip(self._names, self._columns)))


@functools.cache
def _present_column_names(name: str, version: int) -> list[str]:
    """The model attribute of each field a message version has, in schema order (a snapshot
    starts a run per topic: tens of thousands of them)."""
    spec = schema(name)
    names = dict(zip((id(f) for f in spec.fields), _column_names(MODELLED_RECORDS[name], spec)))
    return [names[id(f)] for f in _codec(name, version).present_fields]


def _tagged_default(field: FieldSpec, value: Any) -> bool:
    default = field.default()
    if field.is_array and default is not None:
        return value is not None and len(value) == 0
    return value == default


def kafka_json(fields: Sequence[FieldSpec], values: Sequence[Any], version: int) -> dict[str, Any]:
    """Kafka's JSON converter output: the fields of this version, tagged ones only when they
    differ from their default, nested structs the same way, bytes as base64."""
    out: dict[str, Any] = {}
    for f, value in zip(fields, values):
        if not f.present_in(version) or (f.tagged_in(version) and _tagged_default(f, value)):
            continue
        if f.is_struct and value is not None:
            if f.is_array:
                value = [kafka_json(f.fields, [item.get(g.json_name, g.default()) for g in f.fields], version) for item in value]
            else:
                value = kafka_json(f.fields, [value.get(g.json_name, g.default()) for g in f.fields], version)
        out[f.json_name] = to_json_value(value)
    return out


def to_json_value(value: Any) -> Any:
    """A decoded value as Kafka's JSON converters print it (bytes as standard base64)."""
    if isinstance(value, bytes):
        return base64.b64encode(value).decode("ascii")
    if isinstance(value, dict):
        return {k: to_json_value(v) for k, v in value.items()}
    if isinstance(value, (tuple, list)):
        return [to_json_value(v) for v in value]
    return value
