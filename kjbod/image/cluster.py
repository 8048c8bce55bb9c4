"""Brokers and controllers: ClusterImage, its delta, BrokerRegistration (reference §3 and §4.4)
and ControllerRegistration (KIP-919, `metadata/src/main/java/org/apache/kafka/metadata/ControllerRegistration.java`).

Besides Kafka's registration state, the image keeps kjbod's own record of every directory a
broker was configured with (id, path, capacity), so that commands can name paths even for a
directory that has gone offline.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from functools import cached_property
from types import MappingProxyType

from kjbod.common.kafka_uuid import DirectoryId, sorted_uuids
from kjbod.common.versions import MetadataVersion
from kjbod.errors import ReplayError
from kjbod.records import (
    ENTER_CONTROLLED_SHUTDOWN,
    FENCE,
    NO_CHANGE,
    UNFENCE,
    BrokerEndpoint,
    BrokerFeature,
    BrokerRegistrationChangeRecord,
    ControllerEndpoint,
    ControllerFeature,
    FenceBrokerRecord,
    KjbodBrokerLogDirsRecord,
    KjbodLogDir,
    Record,
    RegisterBrokerRecord,
    RegisterControllerRecord,
    UnfenceBrokerRecord,
    UnregisterBrokerRecord,
    UnregisterControllerRecord,
)


def sort_directories(directories: tuple[str, ...] | list[str]) -> tuple[str, ...]:
    """Kafka keeps a broker's directories in signed Uuid order (BR:185-187)."""
    return tuple(sorted_uuids(directories))


@dataclass(frozen=True)
class BrokerRegistration:
    id: int
    epoch: int
    incarnation_id: str
    listeners: tuple[BrokerEndpoint, ...]
    supported_features: Mapping[str, tuple[int, int]]
    rack: str | None
    fenced: bool
    in_controlled_shutdown: bool
    is_migrating_zk_broker: bool
    # The directories that are currently usable, in signed Uuid order.
    directories: tuple[str, ...]
    # KIP-1066 as Kafka ships it (4.3.1 and 4.4.0 BrokerRegistration.cordonedDirectories): the
    # directories the broker's heartbeats reported cordoned, in the broker's order; None until
    # its first report ("not known yet", written back as null), () once it reported none.
    cordoned: tuple[str, ...] | None = None

    @classmethod
    def from_record(cls, record: RegisterBrokerRecord) -> BrokerRegistration:
        return cls(
            id=record.broker_id,
            epoch=record.broker_epoch,
            incarnation_id=record.incarnation_id,
            listeners=record.end_points,
            supported_features=MappingProxyType(
                {f.name: (f.min_supported_version, f.max_supported_version) for f in record.features}
            ),
            rack=record.rack,
            fenced=record.fenced,
            in_controlled_shutdown=record.in_controlled_shutdown,
            is_migrating_zk_broker=record.is_migrating_zk_broker,
            directories=sort_directories(record.log_dirs),
            cordoned=record.cordoned_log_dirs,
        )

    @property
    def cordoned_directories(self) -> frozenset[str]:
        """The cordoned directories as a set (empty while the broker has not reported)."""
        return frozenset(self.cordoned or ())

    @property
    def cordoned_reported(self) -> bool:
        return self.cordoned is not None

    def cordoned_changed(self, reported: tuple[str, ...]) -> bool:
        """`cordonedDirChanged` (4.3.1 metadata/BrokerRegistration.java:313-320): always when
        nothing was reported yet, else when the sets differ (order and repeats do not count)."""
        return self.cordoned is None or set(self.cordoned) != set(reported)

    def has_uncordoned_dirs(self) -> bool:
        """`hasUncordonedDirs` (4.3.1 metadata/BrokerRegistration.java:286-291): no directories,
        nothing reported, or at least one directory not cordoned."""
        if not self.directories or self.cordoned is None:
            return True
        return any(d not in self.cordoned for d in self.directories)

    def has_online_dir(self, directory_id: str) -> bool:
        return DirectoryId.is_online(directory_id, self.directories)

    def directory_intersection(self, others: set[str] | frozenset[str] | tuple[str, ...]) -> tuple[str, ...]:
        """This broker's directories, in order, that are also in `others`."""
        return tuple(d for d in self.directories if d in others)

    def directory_difference(self, others: set[str] | frozenset[str] | tuple[str, ...]) -> tuple[str, ...]:
        """This broker's directories, in order, that are not in `others`."""
        return tuple(d for d in self.directories if d not in others)

    @property
    def is_active(self) -> bool:
        """Registered, unfenced and not in controlled shutdown (CCM:711-715)."""
        return not self.fenced and not self.in_controlled_shutdown

    def to_record(self, mv: MetadataVersion) -> RegisterBrokerRecord:
        version = mv.register_broker_record_version
        return RegisterBrokerRecord(
            version=version,
            broker_id=self.id,
            is_migrating_zk_broker=self.is_migrating_zk_broker if version >= 2 else False,
            incarnation_id=self.incarnation_id,
            broker_epoch=self.epoch,
            end_points=self.listeners,
            features=tuple(
                BrokerFeature(name=name, min_supported_version=lo, max_supported_version=hi)
                for name, (lo, hi) in sorted(self.supported_features.items())
            ),
            rack=self.rack,
            fenced=self.fenced,
            in_controlled_shutdown=self.in_controlled_shutdown if version >= 1 else False,
            log_dirs=self.directories if version >= 3 else (),
            # toRecord (4.4.0 BrokerRegistration.java:345-348): the list as the broker reported it,
            # written only when known (an empty array when nothing is cordoned).
            cordoned_log_dirs=self.cordoned if version >= 4 else None,
        )


@dataclass(frozen=True)
class ControllerRegistration:
    """A controller's registration: its incarnation, listeners and supported feature ranges."""

    id: int
    incarnation_id: str
    zk_migration_ready: bool
    listeners: tuple[ControllerEndpoint, ...]
    supported_features: Mapping[str, tuple[int, int]]

    @classmethod
    def from_record(cls, record: RegisterControllerRecord) -> ControllerRegistration:
        return cls(
            record.controller_id,
            record.incarnation_id,
            record.zk_migration_ready,
            record.end_points,
            MappingProxyType({f.name: (f.min_supported_version, f.max_supported_version) for f in record.features}),
        )

    def to_record(self) -> RegisterControllerRecord:
        return RegisterControllerRecord(
            controller_id=self.id,
            incarnation_id=self.incarnation_id,
            zk_migration_ready=self.zk_migration_ready,
            end_points=self.listeners,
            features=tuple(
                ControllerFeature(name=name, min_supported_version=lo, max_supported_version=hi)
                for name, (lo, hi) in sorted(self.supported_features.items())
            ),
        )


@dataclass(frozen=True)
class ClusterImage:
    brokers: Mapping[int, BrokerRegistration]
    # Offset of each broker's latest RegisterBrokerRecord (a heartbeat is "caught up" past it).
    registration_offsets: Mapping[int, int]
    # kjbod's own: every directory each broker was configured with, with its path.
    log_dirs: Mapping[int, tuple[KjbodLogDir, ...]]
    controllers: Mapping[int, ControllerRegistration] = field(default_factory=lambda: MappingProxyType({}))
    # kjbod's own: the cordoned.log.dirs of a broker's server.properties, where kjbod read it.
    static_cordoned: Mapping[int, str] = field(default_factory=lambda: MappingProxyType({}))

    def broker(self, broker_id: int) -> BrokerRegistration | None:
        return self.brokers.get(broker_id)

    def directory_owner(self, directory_id: str) -> int | None:
        for broker in self.brokers.values():
            if directory_id in broker.directories:
                return broker.id
        return None

    @cached_property
    def _paths(self) -> dict[tuple[int, str], str]:
        paths: dict[tuple[int, str], str] = {}
        for broker_id, log_dirs in self.log_dirs.items():
            for log_dir in log_dirs:
                paths.setdefault((broker_id, log_dir.directory_id), log_dir.path)  # the first, as a scan finds
        return paths

    def path_of(self, broker_id: int, directory_id: str) -> str | None:
        return self._paths.get((broker_id, directory_id))

    def directory_label(self, broker_id: int, directory_id: str) -> str:
        """How a directory is shown: its reserved name (UNASSIGNED, LOST...), else its path where
        kjbod knows one, else its id."""
        return DirectoryId.describe(directory_id) or self.path_of(broker_id, directory_id) or directory_id

    def directory_labels(self, broker_ids: Iterable[int], directory_ids: Iterable[str]) -> list[str]:
        """directory_label of each (broker, directory) pair: in bulk, for a hot topic's 30,000."""
        reserved, paths = DirectoryId.describe, self._paths
        return [reserved(d) or paths.get((b, d)) or d for b, d in zip(broker_ids, directory_ids)]

    def write(self, mv: MetadataVersion) -> Iterator[Record]:
        for broker_id in sorted(self.brokers):
            yield self.brokers[broker_id].to_record(mv)
            if broker_id in self.log_dirs:
                static = self.static_cordoned.get(broker_id)
                yield KjbodBrokerLogDirsRecord(
                    version=0 if static is None else 1, broker_id=broker_id, log_dirs=self.log_dirs[broker_id], cordoned_log_dirs=static,
                )
        for controller_id in sorted(self.controllers):
            yield self.controllers[controller_id].to_record()


EMPTY_CLUSTER = ClusterImage(MappingProxyType({}), MappingProxyType({}), MappingProxyType({}))


class ClusterDelta:
    """Broker changes since a base image. Brokers are few, so the maps are copied up front."""

    def __init__(self, base: ClusterImage) -> None:
        self._base = base
        self._brokers = dict(base.brokers)
        self._offsets = dict(base.registration_offsets)
        self._log_dirs = dict(base.log_dirs)
        self._controllers = dict(base.controllers)
        self._static_cordoned = dict(base.static_cordoned)
        self._directory_to_broker = {d: b.id for b in base.brokers.values() for d in b.directories}

    def _move_directories(self, broker_id: int, old: tuple[str, ...], new: tuple[str, ...]) -> None:
        for directory in old:
            if self._directory_to_broker.get(directory) != broker_id:
                raise ReplayError(f"BUG: directory {directory} not assigned to broker {broker_id}")
            del self._directory_to_broker[directory]
        for directory in new:
            owner = self._directory_to_broker.get(directory)
            if owner is not None:
                raise ReplayError(f"BUG: directory {directory} already assigned to broker {owner}")
            self._directory_to_broker[directory] = broker_id

    def replay_register(self, record: RegisterBrokerRecord, offset: int) -> None:
        previous = self._brokers.get(record.broker_id)
        registration = BrokerRegistration.from_record(record)
        self._move_directories(record.broker_id, previous.directories if previous else (), registration.directories)
        self._brokers[record.broker_id] = registration
        self._offsets[record.broker_id] = offset

    def replay_unregister(self, record: UnregisterBrokerRecord) -> None:
        current = self._brokers.get(record.broker_id)
        if current is None:
            raise ReplayError(f"Unable to replay {record}: no broker registration found for that id")
        if current.epoch != record.broker_epoch:
            raise ReplayError(f"Unable to replay {record}: no broker registration with that epoch found")
        self._move_directories(record.broker_id, current.directories, ())
        del self._brokers[record.broker_id]
        self._offsets.pop(record.broker_id, None)
        self._log_dirs.pop(record.broker_id, None)
        self._static_cordoned.pop(record.broker_id, None)

    def _change(
        self,
        record: Record,
        broker_id: int,
        epoch: int,
        *,
        fenced: bool | None = None,
        in_controlled_shutdown: bool | None = None,
        directories: tuple[str, ...] | None = None,
        cordoned: tuple[str, ...] | None = None,
    ) -> None:
        current = self._brokers.get(broker_id)
        if current is None:
            raise ReplayError(f"Unable to replay {record}: no broker registration found for that id")
        if current.epoch != epoch:
            raise ReplayError(f"Unable to replay {record}: no broker registration with that epoch found")
        changes: dict[str, object] = {}
        if fenced is not None:
            changes["fenced"] = fenced
        if in_controlled_shutdown is not None:
            changes["in_controlled_shutdown"] = in_controlled_shutdown
        if directories is not None:
            changes["directories"] = sort_directories(directories)
        if cordoned is not None:
            changes["cordoned"] = cordoned
        updated = replace(current, **changes)
        self._move_directories(broker_id, current.directories, updated.directories)
        self._brokers[broker_id] = updated

    def replay_fence(self, record: FenceBrokerRecord) -> None:
        self._change(record, record.id, record.epoch, fenced=True)

    def replay_unfence(self, record: UnfenceBrokerRecord) -> None:
        self._change(record, record.id, record.epoch, fenced=False)

    def replay_registration_change(self, record: BrokerRegistrationChangeRecord) -> None:
        if record.fenced not in (FENCE, NO_CHANGE, UNFENCE):
            raise ReplayError(f"Unable to replay {record}: invalid fencing change {record.fenced}")
        if record.in_controlled_shutdown not in (NO_CHANGE, ENTER_CONTROLLED_SHUTDOWN):
            raise ReplayError(
                f"Unable to replay {record}: invalid controlled shutdown change {record.in_controlled_shutdown}"
            )
        self._change(
            record,
            record.broker_id,
            record.broker_epoch,
            fenced={FENCE: True, UNFENCE: False}.get(record.fenced),
            in_controlled_shutdown=True if record.in_controlled_shutdown == ENTER_CONTROLLED_SHUTDOWN else None,
            # An empty list means "no change" (CCM:610), so a broker that lost every
            # directory keeps listing them.
            directories=record.log_dirs or None,
            cordoned=record.cordoned_log_dirs,
        )

    def replay_log_dirs(self, record: KjbodBrokerLogDirsRecord) -> None:
        if record.broker_id not in self._brokers:
            raise ReplayError(f"Unable to replay {record}: no broker registration found for that id")
        self._log_dirs[record.broker_id] = record.log_dirs
        if record.cordoned_log_dirs is None:
            self._static_cordoned.pop(record.broker_id, None)
        else:
            self._static_cordoned[record.broker_id] = record.cordoned_log_dirs

    def replay_register_controller(self, record: RegisterControllerRecord) -> None:
        """ClusterControlManager.replay(RegisterControllerRecord): the registration replaces any
        earlier one of that id."""
        self._controllers[record.controller_id] = ControllerRegistration.from_record(record)

    def replay_unregister_controller(self, record: UnregisterControllerRecord) -> None:
        """ClusterControlManager.replay(UnregisterControllerRecord) (KIP-1312, 4.4.0
        metadata/controller/ClusterControlManager.java:632-640)."""
        if self._controllers.pop(record.controller_id, None) is None:
            raise ReplayError(f"Unable to replay {record}: no controller registration found for that id")

    def apply(self) -> ClusterImage:
        return ClusterImage(
            MappingProxyType(self._brokers),
            MappingProxyType(self._offsets),
            MappingProxyType(self._log_dirs),
            MappingProxyType(self._controllers),
            MappingProxyType(self._static_cordoned),
        )
