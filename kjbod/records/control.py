"""KRaft's control records for the controller quorum (KIP-853): the kraft.version and the voter set.

In Kafka these are control records of the `__cluster_metadata` log and of its snapshots' header
batch, not metadata records: they have no metadata api key but a control record type
(`clients/src/main/java/org/apache/kafka/common/record/ControlRecordType.java:48-49`), and the
raft layer reads them, not the metadata image. Their schemas are
`clients/src/main/resources/common/message/KRaftVersionRecord.json` and `VotersRecord.json`.

Both schemas have a data field named `Version` (the control record's own version, always 0:
`ControlRecordUtils.KRAFT_VOTERS_CURRENT_VERSION`, `KRaftVersion.java:122-135`). It is the same
value as the record's schema version (valid versions: 0), so here the two are one field,
`version`, and the JSON shape is the one Kafka's converters print (`{"version": 0, ...}`).
"""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field

from kjbod.records.base import Int16, Int32, Record, UInt16, UuidText
from kjbod.records.metadata import _Struct

# ControlRecordType (ControlRecordType.java:48-49).
CONTROL_KRAFT_VERSION = 5
CONTROL_KRAFT_VOTERS = 6
# A control record has no metadata api key; this marks it (Kafka's keys are never negative).
NO_METADATA_API_KEY = -1


class VoterEndpoint(_Struct):
    name: str = Field(description="The name of the endpoint (the listener).")
    host: str = Field(description="The hostname.")
    port: UInt16 = Field(description="The port.")


class KRaftVersionFeature(_Struct):
    min_supported_version: Int16 = Field(description="The minimum supported KRaft protocol version.")
    max_supported_version: Int16 = Field(description="The maximum supported KRaft protocol version.")


class Voter(_Struct):
    voter_id: Int32 = Field(description="The replica id of the voter in the topic partition.")
    voter_directory_id: UuidText = Field(description="The directory id of the voter in the topic partition.")
    endpoints: tuple[VoterEndpoint, ...] = Field(description="The endpoints that can be used to communicate with the voter.")
    k_raft_version_feature: KRaftVersionFeature = Field(description="The range of versions of the protocol that the replica supports.")


class KRaftVersionRecord(Record):
    """The finalized kraft.version; 1 enables KIP-853 reconfiguration (KRaftVersion.java:26-27)."""

    API_KEY = NO_METADATA_API_KEY
    CONTROL_TYPE: ClassVar[int] = CONTROL_KRAFT_VERSION
    VERSIONS = range(0, 1)
    type: Literal["KRaftVersionRecord"] = "KRaftVersionRecord"
    k_raft_version: Int16 = Field(description="The kraft protocol version.")


class VotersRecord(Record):
    """The whole voter set; each VotersRecord replaces the previous one (VoterSet.java:419-436)."""

    API_KEY = NO_METADATA_API_KEY
    CONTROL_TYPE: ClassVar[int] = CONTROL_KRAFT_VOTERS
    VERSIONS = range(0, 1)
    type: Literal["VotersRecord"] = "VotersRecord"
    voters: tuple[Voter, ...] = Field(description="The voters.")
