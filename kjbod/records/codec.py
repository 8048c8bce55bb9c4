"""Encoding records as the payload of a log or snapshot batch, and decoding them back.

A payload is a JSON array of entries. An entry is either one record, as Kafka's JSON converters
print it (`{"type": ..., "version": ..., <fields under Kafka's names>}`), or a *run*: consecutive
records of one type and version stored column by column,

    {"run": "PartitionRecord", "version": 1, "count": 1000, "columns": {"partitionId": [...], ...}}

Runs are a batch encoding, like Kafka's compression: they hold the same records. They exist
because creating one pydantic object per record costs several microseconds, which a million
partitions (an import, a snapshot) cannot afford: the delta replays a run of PartitionRecords
straight into partition registrations. `decode_records` always yields typed records, fully
validated, for readers that want them (dump, verify, tests).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Annotated, Any, Union

import orjson
from pydantic import Field, TypeAdapter, ValidationError

from kjbod.records.base import Record
from kjbod.records.control import KRaftVersionRecord, VotersRecord
from kjbod.records.kjbod_records import (
    KjbodBrokerLogDirsRecord,
    KjbodClockRecord,
    KjbodClusterRecord,
    KjbodControllerReplicaRecord,
    KjbodPartitionSizeRecord,
    KjbodQuorumRecord,
    KjbodReplicaLogRecord,
)
from kjbod.records.metadata import (
    BrokerRegistrationChangeRecord,
    ClearElrRecord,
    ConfigRecord,
    FeatureLevelRecord,
    FenceBrokerRecord,
    NoOpRecord,
    PartitionChangeRecord,
    PartitionRecord,
    RegisterBrokerRecord,
    RegisterControllerRecord,
    RemoveTopicRecord,
    RemoveUserScramCredentialRecord,
    TopicRecord,
    UnfenceBrokerRecord,
    UnregisterBrokerRecord,
    UnregisterControllerRecord,
    UserScramCredentialRecord,
)

RECORD_TYPES: tuple[type[Record], ...] = (
    RegisterBrokerRecord,
    UnregisterBrokerRecord,
    TopicRecord,
    PartitionRecord,
    ConfigRecord,
    PartitionChangeRecord,
    FenceBrokerRecord,
    UnfenceBrokerRecord,
    RemoveTopicRecord,
    FeatureLevelRecord,
    BrokerRegistrationChangeRecord,
    NoOpRecord,
    RegisterControllerRecord,
    ClearElrRecord,
    UnregisterControllerRecord,
    UserScramCredentialRecord,
    RemoveUserScramCredentialRecord,
    KRaftVersionRecord,
    VotersRecord,
    KjbodBrokerLogDirsRecord,
    KjbodPartitionSizeRecord,
    KjbodClockRecord,
    KjbodReplicaLogRecord,
    KjbodClusterRecord,
    KjbodQuorumRecord,
    KjbodControllerReplicaRecord,
)
RECORD_TYPES_BY_NAME = {cls.__name__: cls for cls in RECORD_TYPES}
# Types whose fields are all scalars or lists of scalars, and so can be stored as runs.
RUN_TYPES = frozenset(
    {
        PartitionRecord,
        PartitionChangeRecord,
        KjbodPartitionSizeRecord,
        KjbodReplicaLogRecord,
        KjbodClockRecord,
        TopicRecord,
        ConfigRecord,
    }
)
MIN_RUN = 8

AnyRecord = Annotated[Union[RECORD_TYPES], Field(discriminator="type")]  # type: ignore[valid-type]
_RECORD = TypeAdapter(AnyRecord)
_RECORDS = TypeAdapter(list[AnyRecord])


class RecordDecodeError(ValueError):
    """A payload that is not a valid list of records."""


def _aliases(cls: type[Record]) -> dict[str, str]:
    """field name -> Kafka's JSON name."""
    return {name: info.alias or name for name, info in cls.model_fields.items()}


_ALIASES = {cls: _aliases(cls) for cls in RECORD_TYPES}


@dataclass(frozen=True)
class RecordRun:
    """`count` consecutive records of one type and version, as columns keyed by field name.

    A column is a list, or a numpy array (one row per record, or a 2-D one whose rows are the
    records' lists), which slices without copying and encodes as the list it holds: an import
    keeps millions of partitions as arrays and never builds their Python lists all at once."""

    record_type: type[Record]
    version: int
    count: int
    columns: dict[str, list[Any]]

    @classmethod
    def of(cls, records: Sequence[Record]) -> RecordRun:
        first = records[0]
        fields = [n for n in type(first).FIELD_SINCE if n not in first.fields_outside_version()]
        return cls(type(first), first.version, len(records), {n: [getattr(r, n) for r in records] for n in fields})

    def slice(self, start: int, stop: int) -> RecordRun:
        stop = min(stop, self.count)
        return RecordRun(self.record_type, self.version, stop - start, {n: v[start:stop] for n, v in self.columns.items()})

    def plain(self) -> RecordRun:
        """The same run with every column a list (what replay reads)."""
        if not any(hasattr(values, "tolist") for values in self.columns.values()):
            return self
        return RecordRun(self.record_type, self.version, self.count, {n: _as_list(v) for n, v in self.columns.items()})

    def records(self) -> list[Record]:
        """The run's records, each validated by pydantic."""
        names = list(self.columns)
        rows = [
            {"type": self.record_type.__name__, "version": self.version, **dict(zip(names, values))}
            for values in zip(*map(_as_list, self.columns.values()))
        ] if names else [{"type": self.record_type.__name__, "version": self.version}] * self.count
        try:
            return _RECORDS.validate_python(rows)
        except ValidationError as exc:
            raise RecordDecodeError(_first_error(exc)) from None

    def to_json(self) -> dict[str, Any]:
        aliases = _ALIASES[self.record_type]
        return {
            "run": self.record_type.__name__,
            "version": self.version,
            "count": self.count,
            "columns": {aliases[name]: _encodable(values) for name, values in self.columns.items()},
        }


def _as_list(values: Any) -> Any:
    """A column as a list (a numpy array's `tolist`)."""
    return values.tolist() if hasattr(values, "tolist") else values


def _encodable(values: Any) -> Any:
    """A column as orjson encodes it: a list, or a numpy array of numbers or booleans (an array
    of strings, dtype object, it cannot)."""
    return values.tolist() if getattr(getattr(values, "dtype", None), "kind", None) == "O" else values


Entry = Union[Record, RecordRun]


def _first_error(exc: ValidationError) -> str:
    first = exc.errors()[0]
    where = ".".join(str(part) for part in first["loc"])
    return f"{first['msg']} at {where or 'payload'}"


def _group(items: Iterable[Record | RecordRun]) -> list[Record | RecordRun]:
    """Fold consecutive records of one run-capable type and version into runs."""
    entries: list[Record | RecordRun] = []
    pending: list[Record] = []

    def flush() -> None:
        if len(pending) >= MIN_RUN:
            entries.append(RecordRun.of(pending))
        else:
            entries.extend(pending)
        pending.clear()

    for item in items:
        if isinstance(item, Record) and type(item) in RUN_TYPES:
            item.check_version()
            if pending and (type(pending[0]) is not type(item) or pending[0].version != item.version):
                flush()
            pending.append(item)
        else:
            flush()
            entries.append(item)
    flush()
    return entries


def encode_entries(items: Iterable[Record | RecordRun]) -> tuple[bytes, int]:
    """The payload for a batch and the number of records (offsets) it holds.

    Every record is checked against its declared version first.
    """
    parts = []
    count = 0
    for entry in _group(items):
        if isinstance(entry, RecordRun):
            parts.append(orjson.dumps(entry.to_json(), option=orjson.OPT_SERIALIZE_NUMPY))
            count += entry.count
        else:
            entry.check_version()
            parts.append(entry.model_dump_json(by_alias=True, exclude=entry.fields_outside_version()).encode())
            count += 1
    return b"[" + b",".join(parts) + b"]", count


def batch_entries(items: Iterable[Record | RecordRun], max_records: int) -> Iterable[list[Record | RecordRun]]:
    """Split records and runs into batches of at most `max_records` records (runs are sliced)."""
    batch: list[Record | RecordRun] = []
    size = 0
    for item in items:
        if isinstance(item, RecordRun):
            start = 0
            while start < item.count:
                take = min(item.count - start, max_records - size)
                batch.append(item if take == item.count else item.slice(start, start + take))
                size += take
                start += take
                if size >= max_records:
                    yield batch
                    batch, size = [], 0
        else:
            batch.append(item)
            size += 1
            if size >= max_records:
                yield batch
                batch, size = [], 0
    if batch:
        yield batch


def encode_records(records: Iterable[Record]) -> bytes:
    return encode_entries(records)[0]


def _run_from_json(entry: dict[str, Any]) -> RecordRun:
    cls = RECORD_TYPES_BY_NAME.get(entry.get("run"))  # type: ignore[arg-type]
    if cls is None or cls not in RUN_TYPES:
        raise RecordDecodeError(f"unknown run type {entry.get('run')!r}")
    count, version, columns = entry.get("count"), entry.get("version"), entry.get("columns")
    if not isinstance(count, int) or count < 0 or not isinstance(version, int) or not isinstance(columns, dict):
        raise RecordDecodeError(f"malformed {cls.__name__} run")
    by_alias = {alias: name for name, alias in _ALIASES[cls].items()}
    fields: dict[str, list[Any]] = {}
    for alias, values in columns.items():
        name = by_alias.get(alias)
        if name is None or name in ("type", "version"):
            raise RecordDecodeError(f"unknown column {alias!r} in a {cls.__name__} run")
        if not isinstance(values, list) or len(values) != count:
            raise RecordDecodeError(f"column {alias!r} of a {cls.__name__} run does not hold {count} values")
        fields[name] = values
    return RecordRun(cls, version, count, fields)


def decode_entries(payload: bytes) -> list[Record | RecordRun]:
    """Records and runs, in order. Single records are validated; runs are checked for shape
    only and validated when materialized (`RecordRun.records`)."""
    try:
        raw = orjson.loads(payload)
    except orjson.JSONDecodeError as exc:
        raise RecordDecodeError(f"invalid JSON ({exc})") from None
    if not isinstance(raw, list):
        raise RecordDecodeError("the payload is not a JSON array")
    entries: list[Record | RecordRun] = []
    for index, item in enumerate(raw):
        if isinstance(item, dict) and "run" in item:
            entries.append(_run_from_json(item))
            continue
        try:
            entries.append(_RECORD.validate_python(item))
        except ValidationError as exc:
            raise RecordDecodeError(f"entry {index}: {_first_error(exc)}") from None
    return entries


def decode_records(payload: bytes) -> list[Record]:
    """Every record of a payload, typed and validated (runs materialized)."""
    records: list[Record] = []
    for entry in decode_entries(payload):
        if isinstance(entry, RecordRun):
            records.extend(entry.records())
        else:
            records.append(entry)
    return records


def entry_count(entry: Record | RecordRun) -> int:
    return entry.count if isinstance(entry, RecordRun) else 1


def _screaming(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).upper()


_BY_ANY_NAME = {**RECORD_TYPES_BY_NAME, **{_screaming(n): c for n, c in RECORD_TYPES_BY_NAME.items()}}


def record_type(name: str) -> type[Record]:
    """A record class by its name (`PartitionRecord`) or Kafka's enum name (`PARTITION_RECORD`)."""
    try:
        return _BY_ANY_NAME[name]
    except KeyError:
        raise ValueError(
            f"Unknown record type {name}. Known types: {', '.join(sorted(RECORD_TYPES_BY_NAME))}"
        ) from None
