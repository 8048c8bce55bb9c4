"""SCRAM credentials (Kafka's ScramImage): one UserScramCredentialRecord per user and mechanism.

kjbod does not authenticate anyone; it keeps what `format --add-scram` bootstraps and what an
imported cluster holds, so that the state and an export carry them as Kafka would.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from types import MappingProxyType

from kjbod.records import RemoveUserScramCredentialRecord, UserScramCredentialRecord

# (user name, mechanism: 1 SCRAM-SHA-256, 2 SCRAM-SHA-512)
ScramKey = tuple[str, int]


@dataclass(frozen=True)
class ScramImage:
    credentials: Mapping[ScramKey, UserScramCredentialRecord]

    def write(self) -> Iterator[UserScramCredentialRecord]:
        for key in sorted(self.credentials):
            yield self.credentials[key]


EMPTY_SCRAM = ScramImage(MappingProxyType({}))


class ScramDelta:
    def __init__(self, base: ScramImage) -> None:
        self._credentials = dict(base.credentials)

    def replay(self, record: UserScramCredentialRecord | RemoveUserScramCredentialRecord) -> None:
        """A credential replaces the user's one for that mechanism; a removal of one that is not
        there changes nothing (ScramDelta.replay, 4.4.0 image/ScramDelta.java)."""
        key = (record.name, record.mechanism)
        if isinstance(record, UserScramCredentialRecord):
            self._credentials[key] = record
        else:
            self._credentials.pop(key, None)

    def apply(self) -> ScramImage:
        return ScramImage(MappingProxyType(self._credentials))
