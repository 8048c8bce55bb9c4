"""What a controller operation returns: records to append and a response, never a mutation."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Generic, TypeVar

from kjbod.controller.errors import ControllerApiError, Errors
from kjbod.records import Record
from kjbod.records.kjbod_records import KJBOD_API_KEYS_FROM

T = TypeVar("T")

# Kafka caps each user operation's records (QuorumController MAX_RECORDS_PER_USER_OP).
MAX_RECORDS_PER_USER_OP = 10_000


def refuse_excessive_records(needed: str, advice: str) -> None:
    """Refuse an operation that would write more than MAX_RECORDS_PER_USER_OP records, before
    it builds them. Kafka's BoundedList throws BoundedListTooLongException, which the controller
    turns into POLICY_VIOLATION "Unable to perform excessively large batch operation."
    (EventHandlerExceptionInfo:83-88); kjbod adds what was too large and what to do."""
    raise ControllerApiError(
        Errors.POLICY_VIOLATION,
        f"Unable to perform excessively large batch operation. {needed}, but one operation writes at most "
        f"{MAX_RECORDS_PER_USER_OP} (Kafka's MAX_RECORDS_PER_USER_OP): {advice}.",
    )


def kafka_record_count(records: list[Record] | tuple[Record, ...]) -> int:
    """The records Kafka's controller would write (kjbod's own records are not Kafka's)."""
    return sum(1 for record in records if record.API_KEY < KJBOD_API_KEYS_FROM)


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
