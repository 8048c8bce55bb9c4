"""kjbod's own records: data a real cluster keeps outside its metadata log.

Kafka's controller knows directories only by id, has no partition sizes and runs on wall-clock
time. kjbod needs all three to show paths, plan by bytes and simulate copies, so it records them
in records of its own, named `Kjbod...` and given api keys from 1000 up so they can never be
mistaken for Kafka's.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from kjbod.records.base import Int32, Int64, Record, UuidText
from kjbod.records.metadata import _Struct


class KjbodLogDir(_Struct):
    directory_id: UuidText = Field(description="The directory id from the directory's meta.properties.")
    path: str = Field(description="The absolute path of the log directory on the broker host.")
    capacity_bytes: Int64 | None = Field(None, description="The size of the disk, if known.")


class KjbodBrokerLogDirsRecord(Record):
    """Every directory a broker was configured with, online or not, with its path."""

    API_KEY = 1000
    VERSIONS = range(0, 1)
    type: Literal["KjbodBrokerLogDirsRecord"] = "KjbodBrokerLogDirsRecord"
    broker_id: Int32 = Field(description="The broker id.")
    log_dirs: tuple[KjbodLogDir, ...] = Field(description="The broker's directories; replaces the previous list.")


class KjbodPartitionSizeRecord(Record):
    """The size of a partition's log (what every replica holds once caught up)."""

    API_KEY = 1001
    VERSIONS = range(0, 1)
    type: Literal["KjbodPartitionSizeRecord"] = "KjbodPartitionSizeRecord"
    topic_id: UuidText = Field(description="The topic id.")
    partition_id: Int32 = Field(description="The partition id.")
    size_bytes: Int64 = Field(ge=0, description="The size of the partition's log in bytes.")


class KjbodClockRecord(Record):
    """The simulated clock of the cluster state moved to a new time."""

    API_KEY = 1002
    VERSIONS = range(0, 1)
    type: Literal["KjbodClockRecord"] = "KjbodClockRecord"
    time_ms: Int64 = Field(ge=0, description="The new simulated time, in milliseconds since the epoch.")
