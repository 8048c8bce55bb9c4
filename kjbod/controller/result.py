"""What a controller operation returns: records to append and a response, never a mutation."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Generic, TypeVar

from kjbod.records import Record

T = TypeVar("T")

# Kafka caps each user operation's records (QuorumController MAX_RECORDS_PER_USER_OP).
MAX_RECORDS_PER_USER_OP = 10_000


@dataclass(frozen=True)
class ControllerResult(Generic[T]):
    """Records to append (all or none when `atomic`) and the operation's response."""

    records: tuple[Record, ...]
    response: T
    # kjbod appends every result as one commit; `atomic` records Kafka's intent.
    atomic: bool = True

    @classmethod
    def of(cls, records: list[Record] | tuple[Record, ...], response: T) -> ControllerResult[T]:
        return cls(tuple(records), response, atomic=False)

    @classmethod
    def atomic_of(cls, records: list[Record] | tuple[Record, ...], response: T) -> ControllerResult[T]:
        return cls(tuple(records), response, atomic=True)
