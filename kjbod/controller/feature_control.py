"""Finalized features: kafka-features' upgrade, downgrade and disable, validated as FeatureControlManager does.

Reference: kafka-storage-and-features.md §6. A request is all or nothing: the updates are
checked one by one in the order Kafka's controller iterates them (a Java HashMap of the names),
the first error aborts the whole request with no records, and otherwise every update becomes
one FeatureLevelRecord (v0), appended atomically. A dry run (validate_only) returns no records.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import IntEnum
from types import MappingProxyType

from kjbod.common.kafka_release import NEWEST, KafkaRelease
from kjbod.common.kafka_configs import MIN_INSYNC_REPLICAS
from kjbod.common.versions import (
    DISABLED_RANGE,
    ELIGIBLE_LEADER_REPLICAS_VERSION,
    KRAFT_VERSION,
    METADATA_VERSION,
    MetadataVersion,
    metadata_changed_between,
    validate_dependencies,
    version_range_text,
)
from kjbod.common.java import hashmap_order, string_hash, timeline_hash_set_order
from kjbod.controller.errors import NONE, ApiError, Errors
from kjbod.controller.quorum_control import CONTROLLER_REGISTRATION_LEVEL, QuorumControl
from kjbod.controller.result import ControllerResult
from kjbod.errors import UserError
from kjbod.image import Image
from kjbod.image.elr import MIN_INSYNC_REPLICAS_DEFAULT
from kjbod.records import CONFIG_RESOURCE_BROKER, ConfigRecord, FeatureLevelRecord, NoOpRecord, Record

# QuorumController prefixes the first error with this; the admin client then fails every
# feature of the request with the same message.
UPDATE_FAILED_PREFIX = "The update failed for all features since the following feature had an error: "
# QuorumFeatures.reasonNotLocallySupported (QuorumFeatures.java:109) names the local controller
# by its node id: the controller that formatted the cluster state. A state that does not know it
# (imported, or made before kjbod recorded it) says just "Local controller".
LOCAL_CONTROLLER = "Local controller"


class UpgradeType(IntEnum):
    """`FeatureUpdate.UpgradeType` wire codes. Kafka also has UNKNOWN (0) for codes it cannot
    read, refused with "The controller does not support the given upgrade type."; kjbod builds
    its requests from this enum, so that case cannot arise."""

    UPGRADE = 1
    SAFE_DOWNGRADE = 2
    UNSAFE_DOWNGRADE = 3


@dataclass(frozen=True)
class FeatureUpdate:
    level: int
    upgrade_type: UpgradeType = UpgradeType.UPGRADE


@dataclass(frozen=True)
class UpdateFeaturesResponse:
    """The controller's answer: NONE, or the error of the first feature that failed."""

    error: ApiError
    features: tuple[str, ...]

    def result(self, name: str) -> ApiError:
        """What the admin client reports for one feature: every feature shares the top-level error."""
        if self.error.is_success:
            return NONE
        return ApiError(self.error.error, UPDATE_FAILED_PREFIX + (self.error.message or self.error.error.name))


@dataclass(frozen=True)
class FinalizedFeatures:
    """Finalized levels (metadata.version included when set) and their epoch, for describe."""

    levels: Mapping[str, int]
    # kjbod's finalized-features epoch is the offset of the last committed record.
    epoch: int | None


def _reason_not_supported(level: int, who: str, supported: tuple[int, int]) -> str | None:
    """`QuorumFeatures.reasonNotSupported`."""
    low, high = supported
    if low <= level <= high:
        return None
    if high == 0:
        return f"{who} does not support this feature."
    return f"{who} only supports versions {version_range_text(low, high)}"


def _invalid_update_version(name: str, level: int, reason: str) -> ApiError:
    return ApiError(Errors.INVALID_UPDATE_VERSION, f"Invalid update version {level} for feature {name}. {reason}")


def _invalid_metadata_version(level: int, reason: str) -> ApiError:
    return ApiError(Errors.INVALID_UPDATE_VERSION, f"Invalid metadata.version {level}. {reason}")


def _unsupported_metadata_downgrade(current: MetadataVersion, target: MetadataVersion, reason: str) -> ApiError:
    """`unsupportedMetadataDowngrade` (FeatureControlManager.java:431-435 of 4.3.1)."""
    return ApiError(Errors.INVALID_UPDATE_VERSION, f"Unsupported metadata.version downgrade from {current.level} to {target.level}. {reason}")


def elr_safety_records(image: Image) -> list[ConfigRecord]:
    """ConfigurationControlManager.maybeGenerateElrSafetyRecords (4.4.0 :705-738): the cluster-level
    min.insync.replicas if there is none, set to the active controller's static
    min.insync.replicas (kjbod does not know the controller's server.properties at this point:
    Kafka's default, 1, is taken); then the deletion of every node-level min.insync.replicas, in
    the order Kafka iterates brokersWithConfigs (a TimelineHashSet of the brokers with any
    node-level config; kjbod takes them as added in ascending id order)."""
    configs = image.configs
    records: list[ConfigRecord] = []
    if MIN_INSYNC_REPLICAS not in configs.get(CONFIG_RESOURCE_BROKER, ""):
        records.append(
            ConfigRecord(resource_type=CONFIG_RESOURCE_BROKER, resource_name="", name=MIN_INSYNC_REPLICAS, value=str(MIN_INSYNC_REPLICAS_DEFAULT))
        )
    brokers = sorted(
        int(name) for (kind, name), values in configs.resources.items() if kind == CONFIG_RESOURCE_BROKER and name != "" and values
    )
    for broker in timeline_hash_set_order(brokers):
        if MIN_INSYNC_REPLICAS in configs.get(CONFIG_RESOURCE_BROKER, str(broker)):
            records.append(ConfigRecord(resource_type=CONFIG_RESOURCE_BROKER, resource_name=str(broker), name=MIN_INSYNC_REPLICAS, value=None))
    return records


class FeatureControl:
    """Reads the image; returns ControllerResults; never mutates (replay does, in FeaturesDelta).

    The controller runs Kafka `release`: its tables decide which levels exist. The local (active)
    controller supports what its replica in the state registered (a state records the release of
    the node that registered it), or, where the state models no quorum, what a node of `release`
    supports (QuorumFeatures.defaultSupportedFeatureMap, unstable versions disabled).
    """

    def __init__(
        self, image: Image, release: KafkaRelease = NEWEST, *, supported_features: Mapping[str, tuple[int, int]] | None = None
    ) -> None:
        self._image = image
        self.release = release
        # The local controller's supported ranges (Kafka's QuorumFeatures); injectable for tests.
        ranges = self._local_ranges() if supported_features is None else dict(supported_features)
        self.supported_features: Mapping[str, tuple[int, int]] = MappingProxyType(ranges)

    def _local_ranges(self) -> dict[str, tuple[int, int]]:
        quorum = self._image.quorum
        if quorum.is_modelled and quorum.has_leader:
            leader = quorum.running_replica(quorum.leader_id)
            if leader is not None and leader.features:
                return {f.name: (f.min_supported_version, f.max_supported_version) for f in leader.features}
        return self.release.supported_ranges()

    def finalized_features(self) -> FinalizedFeatures:
        """Finalized levels; kraft.version is the quorum's (KRaftVersionRecord) when the state
        models its quorum, as KRaftMetadataCache.features() takes it from the raft client."""
        features = self._image.features
        levels = dict(features.finalized)
        if features.metadata_version is not None:
            levels[METADATA_VERSION] = features.metadata_version.level
        if self._image.quorum.is_modelled:
            levels.pop(KRAFT_VERSION, None)
            if self._image.quorum.kraft_version:
                levels[KRAFT_VERSION] = self._image.quorum.kraft_version
        return FinalizedFeatures(MappingProxyType(levels), self._image.offset if levels else None)

    def _current_level(self, name: str) -> int:
        if name == KRAFT_VERSION and self._image.quorum.is_modelled:
            return self._image.quorum.kraft_version
        return self._image.features.level(name)

    def update_features(
        self, updates: Mapping[str, FeatureUpdate], validate_only: bool = False
    ) -> ControllerResult[UpdateFeaturesResponse]:
        """`FeatureControlManager.updateFeatures` (FCMJ:172-198)."""
        current_mv = self._image.features.metadata_version
        if current_mv is None:
            raise UserError(
                "The cluster state has no finalized metadata.version yet: initialise it with `kjbod format` "
                "on a controller node or `kjbod import cluster` first"
            )
        names = tuple(updates)
        proposed = dict(self._image.features.finalized)
        proposed[METADATA_VERSION] = current_mv.level
        if self._image.quorum.is_modelled:
            proposed[KRAFT_VERSION] = self._image.quorum.kraft_version
        proposed.update({name: update.level for name, update in updates.items()})
        # ConfigurationControlManager.updateFeatures (4.4.0 :758-771): a successful update that
        # sets eligible.leader.replicas.version above 0 writes ELR's safety records first, in the
        # same atomic batch (built first here, so the records after them know their offsets).
        elr = updates.get(ELIGIBLE_LEADER_REPLICAS_VERSION)
        records: list[Record] = [*elr_safety_records(self._image)] if elr is not None and elr.level > 0 and not validate_only else []
        # Kafka iterates a java.util.HashMap of the names; the first error in that order wins.
        for name in hashmap_order(names, string_hash):
            error = self._update_feature(name, updates[name], current_mv, proposed, records, validate_only)
            if not error.is_success:
                return ControllerResult.of([], UpdateFeaturesResponse(error, names))
        response = UpdateFeaturesResponse(NONE, names)
        if validate_only:
            return ControllerResult.of([], response)
        return ControllerResult.atomic_of(records, response)

    def _update_feature(
        self,
        name: str,
        update: FeatureUpdate,
        current_mv: MetadataVersion,
        proposed: Mapping[str, int],
        records: list[Record],
        validate_only: bool = False,
    ) -> ApiError:
        """`FeatureControlManager.updateFeature`: the per-feature checks, in Kafka's order (§6.2)."""
        level = update.level
        current = current_mv.level if name == METADATA_VERSION else self._current_level(name)
        if level < 0:
            return _invalid_update_version(name, level, "A feature version cannot be less than 0.")
        reason = self._reason_not_supported(name, level)
        if reason is not None:
            return _invalid_update_version(name, level, reason)
        if level < current and update.upgrade_type is UpgradeType.UPGRADE:
            return _invalid_update_version(
                name,
                level,
                "Can't downgrade the version of this feature without setting the upgrade type to either safe or "
                "unsafe downgrade.",
            )
        if level > current and update.upgrade_type is not UpgradeType.UPGRADE:
            return _invalid_update_version(name, level, "Can't downgrade to a newer version.")
        if name == METADATA_VERSION:
            return self._update_metadata_version(level, current_mv, update.upgrade_type, records)
        try:
            # Feature.featureFromName(name).fromFeatureLevel(level, true), then validateVersion
            # (4.4.0 FeatureControlManager.java:307-309).
            validate_dependencies(name, self.release.feature(name).level(level), proposed)
        except ValueError as exc:
            return _invalid_update_version(name, level, str(exc))
        if name == KRAFT_VERSION and self._image.quorum.is_modelled:
            return self._update_kraft_version(level, current, update.upgrade_type, records, validate_only)
        records.append(FeatureLevelRecord(name=name, feature_level=level))
        return NONE

    def _local_controller(self) -> str:
        """The controller that answers: the quorum's leader where the state models its quorum,
        else the one that formatted the state."""
        quorum = self._image.quorum
        if quorum.is_modelled and quorum.has_leader:
            return f"{LOCAL_CONTROLLER} {quorum.leader_id}"
        identity = self._image.identity
        if identity is None or identity.controller_id is None:
            return LOCAL_CONTROLLER
        return f"{LOCAL_CONTROLLER} {identity.controller_id}"

    def _update_kraft_version(
        self, level: int, current: int, upgrade_type: UpgradeType, records: list[Record], validate_only: bool
    ) -> ApiError:
        """kraft.version goes to the raft layer, not a FeatureLevelRecord: Kafka 4.1's
        FeatureControlManager.updateFeature calls `upgradeKRaftVersion` and adds a NoOpRecord to
        wait on; a downgrade is refused. (At this source's commit Kafka still wrote a
        FeatureLevelRecord that its raft layer ignored; kjbod implements the fixed behaviour,
        KAFKA-16538.)"""
        if upgrade_type is not UpgradeType.UPGRADE:
            if level != current:
                return _invalid_update_version(KRAFT_VERSION, level, "Can't downgrade the version of this feature.")
            return NONE
        error, upgrade = QuorumControl(self._image).upgrade_kraft_version(level, self._image.next_offset + len(records))
        if not error.is_success:
            return error
        if not validate_only:
            records.extend(upgrade)
        records.append(NoOpRecord())
        return NONE

    def _reason_not_supported(self, name: str, level: int) -> str | None:
        """`FeatureControlManager.reasonNotSupported`: the local controller first, then every
        registered broker in id order (fenced or not), then, from metadata.version 3.7-IV0, every
        other registered controller and any quorum voter that has not registered.

        The local controller is the quorum's leader; a state without a modelled quorum knows no
        controllers, so only the brokers are checked there.
        """
        reason = _reason_not_supported(level, self._local_controller(), self.supported_features.get(name, DISABLED_RANGE))
        if reason is not None:
            return reason
        brokers = self._image.cluster.brokers
        for broker_id in sorted(brokers):
            supported = brokers[broker_id].supported_features.get(name, DISABLED_RANGE)
            reason = _reason_not_supported(level, f"Broker {broker_id}", supported)
            if reason is not None:
                return reason
        quorum = self._image.quorum
        mv = self._image.features.metadata_version
        if not quorum.is_modelled or mv is None or mv.level < CONTROLLER_REGISTRATION_LEVEL:
            return None
        controllers = self._image.cluster.controllers
        found = {quorum.leader_id}
        for controller_id in sorted(controllers):
            if controller_id == quorum.leader_id:
                continue
            supported = controllers[controller_id].supported_features.get(name, DISABLED_RANGE)
            reason = _reason_not_supported(level, f"Controller {controller_id}", supported)
            if reason is not None:
                return reason
            found.add(controller_id)
        for voter_id in quorum.voter_ids:
            if voter_id not in found:
                return f"controller {voter_id} has not registered, and may not support this feature"
        return None

    def _update_metadata_version(
        self, level: int, current: MetadataVersion, upgrade_type: UpgradeType, records: list[Record]
    ) -> ApiError:
        """`FeatureControlManager.updateMetadataVersion` (FCMJ:333-383; texts of 4.3.1, FeatureControlManager.java:385-422).

        Kafka also refuses changes during a ZK migration (kjbod models no ZooKeeper) and levels
        below the minimum bootstrap version (every level in kjbod's table is at or above it).
        """
        try:
            target = self.release.metadata_version_for_level(level)
        except ValueError:
            # FeatureControlManager.java:393-396 (the range is the controller's table: 7 to 31 in
            # 4.3, 7 to 34 in 4.4).
            return _invalid_metadata_version(level, f"Valid versions are from 7 to {self.release.latest_testing.level}.")
        if target.level < current.level and metadata_changed_between(current, target):
            if upgrade_type is UpgradeType.UNSAFE_DOWNGRADE:
                return _unsupported_metadata_downgrade(current, target, "Unsafe metadata downgrade is not supported in this version.")
            return _unsupported_metadata_downgrade(
                current, target, "Refusing to perform the requested downgrade because it might delete metadata information."
            )
        records.append(FeatureLevelRecord(name=METADATA_VERSION, feature_level=level))
        return NONE
