"""Brokers: registration, broker epochs, directories and cordons (ClusterControlManager, §4).

Operations read the image and return records; nothing here mutates state. Heartbeats, fencing
and controlled shutdown change partitions too, so they live in ReplicationControl, as in Kafka.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from kjbod.common.kafka_release import NEWEST
from kjbod.common.kafka_configs import CORDONED_LOG_DIRS
from kjbod.common.kafka_uuid import DirectoryId, canonical
from kjbod.common.versions import METADATA_VERSION, MINIMUM_KRAFT_LEVEL, MetadataVersion
from kjbod.controller import cordoned_dirs
from kjbod.controller.errors import NONE, ApiError, ControllerApiError, Errors
from kjbod.controller.placer import UsableBroker
from kjbod.controller.working import WorkingImage
from kjbod.controller.result import ControllerResult
from kjbod.errors import UserError
from kjbod.image import BrokerRegistration, Image
from kjbod.records import (
    CONFIG_RESOURCE_BROKER,
    BrokerFeature,
    BrokerRegistrationChangeRecord,
    ConfigRecord,
    KjbodBrokerLogDirsRecord,
    KjbodLogDir,
    Record,
    RegisterBrokerRecord,
    UnregisterControllerRecord,
)


@dataclass(frozen=True)
class BrokerRegistrationRequest:
    broker_id: int
    incarnation_id: str
    # Every configured directory (id, path, capacity); `offline` names those that could not be read.
    log_dirs: tuple[KjbodLogDir, ...]
    offline_directory_ids: frozenset[str] = frozenset()
    rack: str | None = None
    # What the broker supports (a broker of the newest release unless its caller says).
    supported_features: Mapping[str, tuple[int, int]] = field(default_factory=NEWEST.supported_ranges)
    # The cluster id of the broker's meta.properties; None when the request does not say
    # (`register --id`), and then it is not checked.
    cluster_id: str | None = None
    # Whether the previous incarnation shut down cleanly: Kafka's broker sends the epoch it had
    # when it last shut down cleanly as previousBrokerEpoch (-1 after a crash), and the
    # controller compares it with the stored one (CCM 4.3.1 :437-438).
    clean_shutdown: bool = True
    # The raw cordoned.log.dirs of the broker's server.properties (KIP-1066); None when it sets
    # none or the request does not come from one. Kafka's controller never sees it: the broker
    # reports the directories with its heartbeats, so kjbod keeps it for them.
    cordoned_log_dirs: str | None = None

    @property
    def online_directory_ids(self) -> tuple[str, ...]:
        return tuple(d.directory_id for d in self.log_dirs if d.directory_id not in self.offline_directory_ids)


@dataclass(frozen=True)
class CordonReply:
    broker_id: int
    directory_id: str
    # The broker's new dynamic cordoned.log.dirs, and the directory ids its heartbeat reports.
    config_value: str
    cordoned_directories: tuple[str, ...]


@dataclass(frozen=True)
class BrokerRegistrationReply:
    broker_id: int
    epoch: int
    fenced: bool
    # True when the same incarnation registered again (Kafka's "amend": epoch and state kept).
    amended: bool
    directories: tuple[str, ...]


def require_metadata_version(image: Image) -> MetadataVersion:
    mv = image.features.metadata_version
    if mv is None:
        raise UserError(
            "The cluster state has no metadata.version yet: initialise it with `kjbod format` on a "
            "controller node, or `kjbod import cluster`"
        )
    return mv


# Kafka's BrokerShutdownHandler (CCM 4.3.1 :878): the records that take a broker's previous
# incarnation out of ISRs (and, after an unclean shutdown with ELR on, ELRs), appended to `work`.
ShutdownHandler = Callable[[WorkingImage, int, bool], None]


class ClusterControl:
    def __init__(self, image: Image) -> None:
        self._image = image
        self.shutdown_handler: ShutdownHandler | None = None  # set by the Controller facade

    @property
    def metadata_version(self) -> MetadataVersion:
        return require_metadata_version(self._image)

    # Queries (CCM §4.5) -------------------------------------------------------------------

    def broker(self, broker_id: int) -> BrokerRegistration | None:
        return self._image.cluster.brokers.get(broker_id)

    def is_active(self, broker_id: int) -> bool:
        broker = self.broker(broker_id)
        return broker is not None and broker.is_active

    def is_unfenced(self, broker_id: int) -> bool:
        broker = self.broker(broker_id)
        return broker is not None and not broker.fenced

    def has_online_dir(self, broker_id: int, directory_id: str) -> bool:
        broker = self.broker(broker_id)
        return broker is not None and broker.has_online_dir(directory_id)

    def default_dir(self, broker_id: int) -> str:
        """Where a new replica on this broker goes (CCM:756-772, RCM:249-256)."""
        if not self.metadata_version.directory_assignment_supported:
            return DirectoryId.MIGRATING
        broker = self.broker(broker_id)
        if broker is None:
            return DirectoryId.UNASSIGNED
        if not broker.directories:
            return DirectoryId.MIGRATING
        if len(broker.directories) == 1:
            return broker.directories[0]
        return DirectoryId.UNASSIGNED

    def usable_brokers(self) -> list[UsableBroker]:
        """Brokers the placer may use: registered, not in controlled shutdown, and with a
        directory that is not cordoned (BrokerHeartbeatManager.UsableBrokerIterator, 4.4.0 :363;
        CCM 4.4.0 :744 passes BrokerRegistration.hasUncordonedDirs)."""
        return [
            UsableBroker(b.id, b.rack, b.fenced)
            for b in sorted(self._image.cluster.brokers.values(), key=lambda b: b.id)
            if not b.in_controlled_shutdown and b.has_uncordoned_dirs()
        ]

    def check_broker_epoch(self, broker_id: int, epoch: int) -> BrokerRegistration:
        broker = self.broker(broker_id)
        if broker is None:
            raise ControllerApiError(Errors.STALE_BROKER_EPOCH, f"No broker registration found for broker id {broker_id}")
        if broker.epoch != epoch:
            raise ControllerApiError(
                Errors.STALE_BROKER_EPOCH, f"Expected broker epoch {broker.epoch}, but got broker epoch {epoch}"
            )
        return broker

    def resolve_directory(self, broker_id: int, text: str) -> str:
        """A directory id, given as an id or as a path of that broker."""
        for log_dir in self._image.cluster.log_dirs.get(broker_id, ()):
            if log_dir.path == text or log_dir.path.rstrip("/") == text.rstrip("/"):
                return log_dir.directory_id
        try:
            return canonical(text)
        except ValueError:
            raise UserError(
                f"{text} is neither a directory id nor a log directory path of broker {broker_id}"
            ) from None

    # Registration (CCM:341-464) -------------------------------------------------------------

    def _check_features(self, request: BrokerRegistrationRequest) -> tuple[BrokerFeature, ...]:
        finalized = {METADATA_VERSION: self.metadata_version.level, **self._image.features.finalized}
        ranges = dict(request.supported_features)
        # A broker that sends no metadata.version range supports only MINIMUM_KRAFT_VERSION.
        ranges.setdefault(METADATA_VERSION, (MINIMUM_KRAFT_LEVEL, MINIMUM_KRAFT_LEVEL))
        for name, (low, high) in sorted(ranges.items()):
            level = finalized.get(name, 1 if name == METADATA_VERSION else 0)
            if not low <= level <= high:
                self._unsupported(name, level, low, high)
        for name, level in sorted(finalized.items()):
            if name not in ranges and level > 0:
                self._unsupported(name, level, 0, 0)
        return tuple(
            BrokerFeature(name=name, min_supported_version=low, max_supported_version=high)
            for name, (low, high) in sorted(ranges.items())
        )

    @staticmethod
    def _unsupported(name: str, level: int, low: int, high: int) -> None:
        raise ControllerApiError(
            Errors.UNSUPPORTED_VERSION,
            f"Unable to register because the broker does not support finalized version {level} of {name}. "
            f"The broker wants a version between {low} and {high}, inclusive.",
        )

    def register_broker(self, request: BrokerRegistrationRequest) -> ControllerResult[BrokerRegistrationReply]:
        mv = self.metadata_version
        identity = self._image.identity
        # CCM:349-352. A state that does not record its cluster id (imported without one) cannot check.
        if identity is not None and request.cluster_id is not None and request.cluster_id != identity.cluster_id:
            raise ControllerApiError(
                Errors.INCONSISTENT_CLUSTER_ID,
                f"Expected cluster ID {identity.cluster_id}, but got cluster ID {request.cluster_id}",
            )
        existing = self.broker(request.broker_id)
        same_incarnation = existing is not None and existing.incarnation_id == request.incarnation_id
        # kjbod has no sessions: an unfenced broker is the one with a live session.
        if existing is not None and not existing.fenced and not same_incarnation:
            raise ControllerApiError(Errors.DUPLICATE_BROKER_REGISTRATION, "Another broker is registered with that broker id.")
        online = request.online_directory_ids
        if mv.directory_assignment_supported:
            self._check_directories(request.broker_id, online)
        elif len(request.log_dirs) > 1:
            # The broker itself refuses to start (KafkaConfig); kjbod says so at registration.
            raise UserError(
                "requirement failed: Multiple log directories (aka JBOD) are not supported in the current "
                f"MetadataVersion {mv}. Need 3.7-IV2 or higher"
            )
        features = self._check_features(request)
        if same_incarnation:
            assert existing is not None
            epoch, fenced, in_controlled_shutdown = existing.epoch, existing.fenced, existing.in_controlled_shutdown
        else:
            epoch, fenced, in_controlled_shutdown = self._new_broker_epoch(), True, False
        # A new incarnation of a registered broker: its previous one shut down (CCM 4.3.1
        # :435-439), before the registration record.
        work = WorkingImage(self._image)
        if existing is not None and not same_incarnation and self.shutdown_handler is not None:
            self.shutdown_handler(work, request.broker_id, request.clean_shutdown)
        version = mv.register_broker_record_version
        records: list[Record] = [
            *work.records,
            RegisterBrokerRecord(
                version=version,
                broker_id=request.broker_id,
                incarnation_id=request.incarnation_id,
                broker_epoch=epoch,
                features=features,
                rack=request.rack,
                fenced=fenced,
                in_controlled_shutdown=in_controlled_shutdown if version >= 1 else False,
                log_dirs=online if mv.directory_assignment_supported else (),
                # registerBroker never sets CordonedLogDirs (null: not known yet); the broker's
                # first heartbeat after it caught up reports them (KIP-1066, spec §4.2).
                cordoned_log_dirs=None,
            ),
            KjbodBrokerLogDirsRecord(
                version=0 if request.cordoned_log_dirs is None else 1,
                broker_id=request.broker_id, log_dirs=request.log_dirs, cordoned_log_dirs=request.cordoned_log_dirs,
            ),
        ]
        reply = BrokerRegistrationReply(request.broker_id, epoch, fenced, same_incarnation, online)
        return ControllerResult.atomic_of(records, reply)

    def _new_broker_epoch(self) -> int:
        """The epoch of a new incarnation. Kafka's is the offset at which its registration is
        written (newBrokerEpoch, CCM:341-446), so it is above every epoch a broker has had. A
        state imported from a Kafka snapshot keeps Kafka's epochs (Kafka's offsets) while its own
        offsets start again at 0: the epoch is then one above the highest registered one, so
        that a broker's epoch still only grows."""
        highest = max((broker.epoch for broker in self._image.cluster.brokers.values()), default=-1)
        return max(self._image.next_offset, highest + 1)

    def _check_directories(self, broker_id: int, online: tuple[str, ...]) -> None:
        if not online:
            raise ControllerApiError(Errors.INVALID_REGISTRATION, "No directories specified in request")
        if any(DirectoryId.reserved(d) for d in online):
            raise ControllerApiError(Errors.INVALID_REGISTRATION, "Reserved directory ID in request")
        if len(set(online)) != len(online):
            raise ControllerApiError(Errors.INVALID_REGISTRATION, "Duplicate directory ID in request")
        for directory in online:
            owner = self._image.cluster.directory_owner(directory)
            if owner is not None and owner != broker_id:
                raise ControllerApiError(Errors.INVALID_REGISTRATION, f"Broker {owner} is already registered with directory {directory}")

    # Controller registrations (KIP-1312) --------------------------------------------------------

    def unregister_controller(self, controller_id: int) -> ControllerResult[ApiError]:
        """`Admin.unregisterController` (KIP-1312, 4.4.0): NONE and one UnregisterControllerRecord,
        or Kafka's refusal with nothing written, in Kafka's order. QuorumController.unregisterController
        (4.4.0 metadata:controller/QuorumController.java:2165-2172) refuses the active controller
        itself (kjbod knows it when the state models its quorum: the quorum's leader); then
        ClusterControlManager.unregisterController (4.4.0 ClusterControlManager.java:504-516)
        refuses below metadata.version 4.4-IV2 and a controller that has no registration. Kafka does
        not check voter membership: a voter can be unregistered."""
        quorum = self._image.quorum
        if quorum.is_modelled and quorum.has_leader and quorum.leader_id == controller_id:
            return ControllerResult.of([], ApiError(Errors.INVALID_REQUEST, "Controller cannot unregister itself while it is active."))
        if not self.metadata_version.controller_unregistration_supported:
            return ControllerResult.of(
                [], ApiError(Errors.UNSUPPORTED_VERSION, "The current MetadataVersion is too old to support controller unregistration.")
            )
        if controller_id not in self._image.cluster.controllers:
            return ControllerResult.of(
                [], ApiError(Errors.CONTROLLER_ID_NOT_REGISTERED, f"Controller ID {controller_id} is not currently registered.")
            )
        return ControllerResult.atomic_of([UnregisterControllerRecord(controller_id=controller_id)], NONE)

    # Cordoned directories (KIP-1066) ---------------------------------------------------------

    def cordoned_change(self, broker: BrokerRegistration, reported: tuple[str, ...] | None) -> list[Record]:
        """handleDirectoriesCordoned (RCM 4.4.0 :1579-1588): at 4.3-IV0 and later, a heartbeat's
        non-null CordonedLogDirs is written (BrokerRegistrationChangeRecord v3) when the
        registration has none yet or the set changed; the list as the broker sent it."""
        if reported is None or not self.metadata_version.cordoned_log_dirs_supported or not broker.cordoned_changed(reported):
            return []
        return [BrokerRegistrationChangeRecord(version=3, broker_id=broker.id, broker_epoch=broker.epoch, cordoned_log_dirs=reported)]

    def reported_cordoned(self, broker_id: int) -> tuple[str, ...] | None:
        """What the broker's next heartbeat says is cordoned (see cordoned_dirs.reported_cordoned)."""
        return cordoned_dirs.reported_cordoned(self._image, broker_id)

    def set_cordoned(self, broker_id: int, directory: str, cordoned: bool) -> ControllerResult[CordonReply]:
        """Cordon or uncordon one directory (an id or a path of the broker), as an operator does it
        in Kafka: the broker's dynamic cordoned.log.dirs gains or loses the directory's path
        (`kafka-configs --entity-type brokers --entity-name N --alter --add-config
        cordoned.log.dirs=...`, forwarded by a broker, which checks it first), then the broker's
        next heartbeat reports the new set and the controller records it. Both in one commit."""
        mv = self.metadata_version
        broker = self.broker(broker_id)
        if broker is None:
            raise ControllerApiError(Errors.BROKER_ID_NOT_REGISTERED, f"Broker ID {broker_id} is not currently registered")
        directory_id = self.resolve_directory(broker_id, directory)
        if directory_id not in broker.directories:
            raise UserError(f"Directory {directory_id} is not an online directory of broker {broker_id}")
        path = self._image.cluster.path_of(broker_id, directory_id)
        if path is None:
            raise UserError(
                f"kjbod does not know the path of directory {directory_id} of broker {broker_id}, and {CORDONED_LOG_DIRS} "
                "names paths: import the cluster with --log-dirs, or register the broker with its paths"
            )
        log_dirs = cordoned_dirs.broker_paths(self._image, broker_id)
        current = cordoned_dirs.cordoned_paths(self._image, broker_id)
        if cordoned:
            target = current if path in current else [*current, path]
        else:
            target = [p for p in current if p != path]
        value = ",".join(target)
        before = cordoned_dirs.dynamic_value(self._image, broker_id)
        work = WorkingImage(self._image)
        if value != before:
            cordoned_dirs.check_dynamic(value, log_dirs)
            cordoned_dirs.check_controller(mv, before, value, forwarded=True)
            work.append(ConfigRecord(resource_type=CONFIG_RESOURCE_BROKER, resource_name=str(broker_id), name=CORDONED_LOG_DIRS, value=value))
        reported = cordoned_dirs.reported_cordoned(work.image, broker_id)
        work.extend(ClusterControl(work.image).cordoned_change(broker, reported))
        return ControllerResult.atomic_of(work.records, CordonReply(broker_id, directory_id, value, reported or ()))
