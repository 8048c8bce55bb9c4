"""The record base class: frozen, versioned, declared schemas.

Records mirror Kafka's metadata records (`metadata/src/main/resources/common/metadata/*.json`):
each has an api key, a range of valid versions, and fields that exist from some version on.
They are stored as JSON objects (`type`, `version`, then the fields under Kafka's camelCase
JSON names), the same shape Kafka's JSON converters print.

Kafka's serde refuses to write a non-default value into a field the chosen version lacks;
`check_version` does the same, and the log calls it for every record it writes.
"""

from __future__ import annotations

import base64
import binascii
from typing import Annotated, Any, ClassVar

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, PlainSerializer, StringConstraints
from pydantic.alias_generators import to_camel

Int8 = Annotated[int, Field(ge=-(2**7), le=2**7 - 1)]
Int16 = Annotated[int, Field(ge=-(2**15), le=2**15 - 1)]
Int32 = Annotated[int, Field(ge=-(2**31), le=2**31 - 1)]
Int64 = Annotated[int, Field(ge=-(2**63), le=2**63 - 1)]
UInt16 = Annotated[int, Field(ge=0, le=2**16 - 1)]
# The canonical 22-character text of a Kafka Uuid (see kjbod.common.kafka_uuid).
UuidText = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9_-]{21}[AQgw]$")]


def _bytes_from_json(value: Any) -> Any:
    if isinstance(value, str):
        try:
            return base64.b64decode(value, validate=True)
        except binascii.Error:
            raise ValueError("not standard base64") from None
    return value


# A `bytes` field: the bytes themselves in Python (what the wire codec reads and writes), standard
# base64 in JSON, as Kafka's JSON converters print it (and so in kjbod's record log).
KafkaBytes = Annotated[
    bytes, BeforeValidator(_bytes_from_json), PlainSerializer(lambda raw: base64.b64encode(raw).decode("ascii"), when_used="json")
]


def since(version: int, *, default: Any, description: str) -> Any:
    """A field that exists from `version` on (Kafka's `"versions": "N+"`)."""
    return Field(default, description=description, json_schema_extra={"since": version})


class Record(BaseModel):
    """A metadata record. Subclasses set `type` (a Literal), `API_KEY` and `VERSIONS`."""

    model_config = ConfigDict(
        frozen=True, extra="forbid", alias_generator=to_camel, populate_by_name=True
    )

    API_KEY: ClassVar[int]
    VERSIONS: ClassVar[range]
    # field name -> first version that has it; filled in for each subclass.
    FIELD_SINCE: ClassVar[dict[str, int]] = {}
    # The fields of Kafka type `bytes` (KafkaBytes); declared by the subclasses that have some.
    BYTES_FIELDS: ClassVar[tuple[str, ...]] = ()

    type: str = Field(description="The record type: Kafka's record name, or Kjbod... for kjbod's own.")
    version: int = Field(0, description="The record schema version.")

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        super().__pydantic_init_subclass__(**kwargs)
        cls.FIELD_SINCE = {
            name: (info.json_schema_extra or {}).get("since", 0)  # type: ignore[union-attr]
            for name, info in cls.model_fields.items()
            if name not in ("type", "version")
        }

    def fields_outside_version(self) -> frozenset[str]:
        """Fields that the record's version does not have (and so are not written)."""
        return _outside_version(type(self), self.version)

    def check_version(self) -> None:
        """Raise ValueError if the version is invalid or a field it lacks holds a value."""
        cls = type(self)
        if self.version not in cls.VERSIONS:
            raise ValueError(
                f"{cls.__name__} version {self.version} is not in {cls.VERSIONS.start}-{cls.VERSIONS.stop - 1}"
            )
        for name in self.fields_outside_version():
            if getattr(self, name) != cls.model_fields[name].default:
                raise ValueError(
                    f"{cls.__name__} field {name} needs version {cls.FIELD_SINCE[name]}+, "
                    f"but the record is version {self.version}"
                )

    def data(self) -> dict[str, Any]:
        """The fields of this version as JSON-ready data under Kafka's names (no type/version)."""
        return self.model_dump(
            mode="json", by_alias=True, exclude={"type", "version", *self.fields_outside_version()}
        )

    def wire_data(self) -> dict[str, Any]:
        """`data()` as the wire codec takes it: the same but for `bytes` fields, kept as bytes."""
        data = self.data()
        for name in type(self).BYTES_FIELDS:
            data[type(self).model_fields[name].alias or name] = getattr(self, name)
        return data


_OUTSIDE_CACHE: dict[tuple[type[Record], int], frozenset[str]] = {}


def _outside_version(cls: type[Record], version: int) -> frozenset[str]:
    key = (cls, version)
    found = _OUTSIDE_CACHE.get(key)
    if found is None:
        found = frozenset(name for name, first in cls.FIELD_SINCE.items() if first > version)
        _OUTSIDE_CACHE[key] = found
    return found
