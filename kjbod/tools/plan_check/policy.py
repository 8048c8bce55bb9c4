"""The policy `kjbod reassign check` applies: a TOML file read with tomllib into a pydantic model.

The model is the single source of truth: the commented default file
(`kjbod reassign check --write-default-policy FILE`) is rendered from its defaults and field
descriptions (tomli-w formats each value; it cannot write comments), and a test reads the
rendered file back into the default policy. Unknown keys are refused with their TOML location,
bad values with a message naming the key.
"""

from __future__ import annotations

import re
import textwrap
import tomllib
from typing import Annotated, Any, Literal

import tomli_w
from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError, field_validator

from kjbod.common.units import parse_bytes
from kjbod.simulation.clock import parse_duration_ms
from kjbod.errors import UserError
from kjbod.tools.plan_check.model import CHECK_IDS, Severity

SeverityName = Literal["info", "warning", "error"]
CheckId = Literal[tuple(CHECK_IDS)]  # type: ignore[valid-type]
GIB = 1 << 30
JAVA_INT_MAX = 2**31 - 1
JAVA_LONG_MAX = 2**63 - 1


def _byte_count(value: Any) -> Any:
    """Byte counts may also be written with a unit: "10GiB", "500GB"."""
    if isinstance(value, str):
        try:
            return parse_bytes(value, "size")
        except UserError as exc:
            detail = exc.message.split(": ", 1)[-1]
            if detail.startswith("at most"):  # well formed, but past a Java long
                raise ValueError(f"'{value}' is too large: {detail}") from None
            raise ValueError(f"'{value}' is not a byte count: give bytes, optionally with a unit (500GB, 1.5TiB)") from None
    return value


# Every number a policy holds has Kafka's range, so that no value reaches the checks' int64
# arrays (or Kafka's own configs) out of range: byte counts and rates are Java longs, broker
# ids are node.ids (Java ints, never negative), counts are Java ints.
Bytes = Annotated[int, BeforeValidator(_byte_count), Field(le=JAVA_LONG_MAX)]
BrokerId = Annotated[int, Field(ge=0, le=JAVA_INT_MAX)]
Count = Annotated[int, Field(le=JAVA_INT_MAX)]


class _Table(BaseModel):
    # Strict: TOML has real types, so `true` is not 1 and "5" is not 5.
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


class Limits(_Table):
    capacity_threshold: float = Field(
        0.8,
        gt=0,
        le=1,
        description="No directory the plan adds to may end above this fraction of its capacity.",
    )
    max_moves_per_broker: Count | None = Field(
        None,
        ge=1,
        json_schema_extra={"example": 500},
        description="Most replica moves per broker: replicas added to it, removed from it and moved between its directories.",
    )
    max_bytes: Bytes | None = Field(
        None,
        ge=0,
        json_schema_extra={"example": 10 * 1024 * GIB},
        description="Most bytes the plan may copy in total (between brokers and between directories).",
    )
    max_bytes_per_broker: Bytes | None = Field(
        None,
        ge=0,
        json_schema_extra={"example": 1024 * GIB},
        description="Most bytes the plan may copy into one broker.",
    )
    max_duration: str | None = Field(
        "1d",
        json_schema_extra={"example": "12h", "unset": "no time limit"},
        description="Longest estimated duration under the throttle: a number with a unit ms, s, m, h or d.",
    )

    @field_validator("max_duration")
    @classmethod
    def _duration(cls, value: str | None) -> str | None:
        if value is not None:
            try:
                parse_duration_ms(value)
            except UserError:
                raise ValueError(f"'{value}' is not a duration: use a number with a unit ms, s, m, h or d, e.g. 12h") from None
        return value

    @property
    def max_duration_ms(self) -> int | None:
        return None if self.max_duration is None else parse_duration_ms(self.max_duration)


class Racks(_Table):
    mode: Literal["off", "no-worse", "spread"] = Field(
        "spread",
        description=(
            '"spread": no rack holds more than ceil(replication factor / racks) replicas of a moving partition (one '
            'each while racks are enough); "no-worse": no partition ends with more replicas in one rack than now; '
            '"off": no rack rule.'
        ),
    )


class ReplicationFactor(_Table):
    allowed_changes: list[Literal["increase", "decrease"]] = Field(
        default_factory=list,
        description='Replication factor changes the plan may make: "increase", "decrease" (none by default).',
    )


class Throttle(_Table):
    rate: Bytes | None = Field(
        None,
        ge=0,
        json_schema_extra={"example": 50 * 1024 * 1024, "unset": "no throttle"},
        description="The --throttle (bytes/s) the team passes to execute; check's --throttle overrides it.",
    )
    replica_alter_log_dirs_rate: Bytes | None = Field(
        None,
        ge=0,
        json_schema_extra={"example": 100 * 1024 * 1024, "unset": "no throttle"},
        description="The --replica-alter-log-dirs-throttle (bytes/s); check's option of that name overrides it.",
    )
    required_above_bytes: Bytes | None = Field(
        10 * GIB,
        ge=0,
        json_schema_extra={"example": 10 * GIB, "unset": "never required"},
        description="A plan copying more than this between brokers (or between directories) needs the matching throttle.",
    )


class Estimate(_Table):
    method: Literal["auto", "simulation", "bandwidth"] = Field(
        "auto",
        description=(
            '"simulation" runs the copy model on the plan as execute would start it; "bandwidth" divides the bytes '
            'each broker moves by its rates; "auto" simulates plans small enough to finish within seconds.'
        ),
    )


class Policy(_Table):
    fail_on: list[SeverityName] = Field(
        default_factory=lambda: ["error"],
        description='The severities that fail the gate (exit 1): any of "info", "warning", "error".',
    )
    removing_brokers: list[BrokerId] = Field(
        default_factory=list,
        description=(
            "Brokers being decommissioned: no replica may stay on or move onto them, and no partition may have more in-sync "
            "replicas on them than its min.insync.replicas margin (they go down together)."
        ),
    )
    limits: Limits = Field(
        default_factory=Limits,
        description='Limits on what one plan may do. Byte counts here and in [throttle] may carry a unit: "500GB", "1.5TiB".',
    )
    racks: Racks = Field(default_factory=Racks, description="The rack rule.")
    replication_factor: ReplicationFactor = Field(default_factory=ReplicationFactor, description="Replication factor changes.")
    throttle: Throttle = Field(default_factory=Throttle, description="Throttles the plan runs under.")
    estimate: Estimate = Field(default_factory=Estimate, description="How the duration is estimated.")
    severities: dict[CheckId, SeverityName] = Field(
        default_factory=dict,
        description='Severity per check id, overriding the default shown, e.g. "rack.rule" = "warning".',
    )

    @field_validator("severities")
    @classmethod
    def _plan_format_stays(cls, value: dict[str, str]) -> dict[str, str]:
        if "plan.format" in value and value["plan.format"] != "error":
            raise ValueError("the severity of plan.format cannot be changed: execute refuses such a plan")
        return value

    def severity_of(self, check_id: str) -> Severity:
        override = self.severities.get(check_id)
        return Severity.parse(override) if override else CHECK_IDS[check_id].severity

    @property
    def failing(self) -> frozenset[Severity]:
        return frozenset(Severity.parse(name) for name in self.fail_on)


# Reading ----------------------------------------------------------------------------------------


def _key_lines(text: str) -> dict[tuple[str, ...], int]:
    """Line numbers of `key = value` lines and `[table]` headers, by dotted location. A plain
    reading of the simple files a policy is (tomllib keeps no positions)."""
    found: dict[tuple[str, ...], int] = {}
    table: tuple[str, ...] = ()
    name = r'(?:"[^"]*"|\'[^\']*\'|[A-Za-z0-9_-]+)'
    for number, line in enumerate(text.splitlines(), 1):
        header = re.match(rf"\s*\[\s*({name}(?:\s*\.\s*{name})*)\s*\]", line)
        if header:
            table = tuple(part.strip().strip("\"'") for part in re.findall(name, header.group(1)))
            found.setdefault(table, number)
            continue
        key = re.match(rf"\s*({name}(?:\s*\.\s*{name})*)\s*=", line)
        if key:
            parts = tuple(part.strip("\"'") for part in re.findall(name, key.group(1)))
            found.setdefault(table + parts, number)
    return found


def _location(loc: tuple[Any, ...], lines: dict[tuple[str, ...], int]) -> str:
    keys = tuple(str(part) for part in loc if not isinstance(part, int) and part != "[key]")
    dotted = ".".join(f'"{k}"' if "." in k else k for k in keys) or "(top level)"
    for size in range(len(keys), 0, -1):
        if keys[:size] in lines:
            return f"{dotted} (line {lines[keys[:size]]})"
    return dotted


def _explain(error: dict[str, Any]) -> str:
    kind = error["type"]
    if kind == "extra_forbidden":
        return "unknown key"
    if kind == "model_type":
        return "should be a table"
    message = error["msg"]
    if kind == "value_error":
        message = message.removeprefix("Value error, ")
    elif kind == "literal_error" and error["loc"][-1] == "[key]":
        message = f"unknown check id; the checks are {', '.join(CHECK_IDS)}"
    else:
        message = message.replace("Input should be", "should be")
    if kind.startswith(("int_", "float_", "string_", "bool_", "list_", "dict_")) and "input" in error:
        message += f", not {error['input']!r}"
    return message


def parse_policy(text: str, source: str = "policy") -> Policy:
    """A policy from TOML text; UserError naming the file, the key and its line otherwise."""
    try:
        document = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise UserError(f"Invalid policy {source}: {exc}") from None
    try:
        return Policy.model_validate(document)
    except ValidationError as exc:
        lines = _key_lines(text)
        problems = [f"{_location(e['loc'], lines)}: {_explain(e)}" for e in exc.errors()]
        raise UserError(f"Invalid policy {source}: " + "; ".join(problems)) from None


# The commented default file ---------------------------------------------------------------------


def _comment(text: str, indent: str = "") -> list[str]:
    return [f"{indent}# {line}" for line in textwrap.wrap(text, 96)]


def _value(key: str, value: Any) -> str:
    """`key = value` as tomli-w writes it, with short arrays on one line."""
    if isinstance(value, list):
        items = [tomli_w.dumps({"v": item}).strip().split(" = ", 1)[1] for item in value]
        return f"{key} = [{', '.join(items)}]"
    return tomli_w.dumps({key: value}).strip()


def _table_lines(model: type[BaseModel], defaults: BaseModel) -> list[str]:
    lines: list[str] = []
    for name, info in model.model_fields.items():
        if isinstance(getattr(defaults, name), BaseModel) or name == "severities":
            continue
        lines += _comment(info.description or "")
        value = getattr(defaults, name)
        if value is None:
            extra = info.json_schema_extra or {}
            lines.append(f"# {_value(name, extra['example'])}   (unset: {extra.get('unset', 'no limit')})")  # type: ignore[index, union-attr]
        else:
            lines.append(_value(name, value))
    return lines


def default_policy_toml() -> str:
    """The default policy as a commented TOML file; it reads back as `Policy()`."""
    defaults = Policy()
    lines = [
        "# kjbod reassign check policy (TOML). Every value shown is the default; a commented key is unset.",
        "# Checks: " + ", ".join(CHECK_IDS) + ".",
        "",
    ]
    lines += _table_lines(Policy, defaults)
    for name, info in Policy.model_fields.items():
        section = getattr(defaults, name)
        if not isinstance(section, BaseModel):
            continue
        lines += ["", f"[{name}]"]
        lines += _comment(info.description or "")
        lines += _table_lines(type(section), section)
    lines += ["", "[severities]"]
    lines += _comment(Policy.model_fields["severities"].description or "")
    lines += [f'# "{spec_id}" = "{spec.severity.label}"' for spec_id, spec in CHECK_IDS.items()]
    return "\n".join(lines) + "\n"
