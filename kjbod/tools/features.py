"""The kafka-features tool side (FeatureCommand): flags become a request, results become Kafka's lines.

Reference: kafka-storage-and-features.md §5. The controller side (validation, records) is
kjbod.controller.feature_control. Kafka's client-side checks (FeatureCommand, FeatureUpdate,
KafkaAdminClient) run here, before the cluster state is opened, in Kafka's order; their
messages are Kafka's. Nothing here prints except through the `print_line` callback, which
carries the one line Kafka prints before it validates anything (the --metadata deprecation).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from kjbod.common.kafka_release import KafkaRelease
from kjbod.common.versions import METADATA_VERSION, MetadataVersion
from kjbod.controller.errors import ApiError
from kjbod.controller.feature_control import FeatureControl, FeatureUpdate, UpdateFeaturesResponse, UpgradeType
from kjbod.controller.result import ControllerResult
from kjbod.errors import UserError
from kjbod.image import Image

if TYPE_CHECKING:  # `features describe` reads the feature control only: the controller loads for updates
    from kjbod.controller import Controller

UPGRADE = "upgrade"
DOWNGRADE = "downgrade"
DISABLE = "disable"
DEPRECATION_NOTICE = " `metadata` flag is deprecated and may be removed in a future release."

_SHORT = re.compile(r"[+-]?\d+")
# Java's String.trim removes every character up to and including the space.
_JAVA_WHITESPACE = "".join(chr(code) for code in range(0x21))


def _parse_short(text: str) -> int | None:
    """`Short.parseShort`: an optional sign and decimal digits, within -32768..32767."""
    if not _SHORT.fullmatch(text):
        return None
    value = int(text)
    return value if -(2**15) <= value < 2**15 else None


def parse_name_and_level(text: str) -> tuple[str, int]:
    """`FeatureCommand.parseNameAndLevel`: `name=level`, split at the first `=`, both sides trimmed."""
    name, equals, level_text = text.partition("=")
    if not equals:
        raise UserError(f"Can't parse feature=level string {text}: equals sign not found.")
    level_text = level_text.strip(_JAVA_WHITESPACE)
    level = _parse_short(level_text)
    if level is None:
        raise UserError(f"Can't parse feature=level string {text}: unable to parse {level_text} as a short.")
    return name.strip(_JAVA_WHITESPACE), level


def _feature_update(level: int, upgrade_type: UpgradeType) -> FeatureUpdate:
    """The admin client's `FeatureUpdate` constructor checks."""
    if level == 0 and upgrade_type is UpgradeType.UPGRADE:
        raise UserError(
            "The upgradeType flag should be set to SAFE_DOWNGRADE or UNSAFE_DOWNGRADE when the provided "
            f"maxVersionLevel:{level} is < 1."
        )
    if level < 0:
        raise UserError("Cannot specify a negative version level.")
    return FeatureUpdate(level, upgrade_type)


def _metadata_version(text: str, release: KafkaRelease) -> MetadataVersion:
    """`MetadataVersion.fromVersionString(text, true)` as FeatureCommand calls it (4.3.1
    FeatureCommand.java:307,328,372): unstable versions allowed, so an unknown one's message
    lists up to the latest testing version."""
    try:
        return release.parse_metadata_version(text, unstable=True)
    except ValueError as exc:
        raise UserError(str(exc)) from None


@dataclass(frozen=True)
class FeatureRequest:
    """One UpdateFeatures request: the updates in command-line order, and whether to only validate."""

    operation: str
    updates: Mapping[str, FeatureUpdate]
    dry_run: bool


def _upgrade_type(operation: str, unsafe: bool) -> UpgradeType:
    if operation == UPGRADE:
        return UpgradeType.UPGRADE
    return UpgradeType.UNSAFE_DOWNGRADE if unsafe else UpgradeType.SAFE_DOWNGRADE


def _put(updates: dict[str, FeatureUpdate], name: str, update: FeatureUpdate) -> None:
    if name in updates:
        raise UserError(f"Feature {name} was specified more than once.")
    updates[name] = update


def build_request(
    operation: str,
    release: KafkaRelease,
    *,
    metadata: str | None = None,
    features: Sequence[str] | None = None,
    release_version: str | None = None,
    unsafe: bool = False,
    dry_run: bool = False,
    print_line: Callable[[str], None] = lambda _: None,
) -> FeatureRequest:
    """FeatureCommand's handleUpgradeOrDowngrade / handleDisable and the admin client's checks.

    `features` are `name=level` strings for upgrade and downgrade, bare names for disable.
    Raises UserError with Kafka's message for anything Kafka refuses before sending.
    """
    upgrade_type = _upgrade_type(operation, unsafe)
    updates: dict[str, FeatureUpdate] = {}
    if operation == DISABLE:
        for name in features or ():
            _put(updates, name, FeatureUpdate(0, upgrade_type))
    elif release_version is not None:
        if metadata is not None or features:
            raise UserError("Can not specify `release-version` with other feature flags.")
        mv = _metadata_version(release_version, release)
        updates[METADATA_VERSION] = FeatureUpdate(mv.level, upgrade_type)
        for item in release.features:
            level = item.default_level(mv)
            # An upgrade does not send features whose default is 0; a downgrade does.
            if upgrade_type is not UpgradeType.UPGRADE or level > 0:
                updates[item.name] = FeatureUpdate(level, upgrade_type)
    else:
        if metadata is not None:
            print_line(DEPRECATION_NOTICE)
            updates[METADATA_VERSION] = _feature_update(_metadata_version(metadata, release).level, upgrade_type)
        for text in features or ():
            name, level = parse_name_and_level(text)
            _put(updates, name, _feature_update(level, upgrade_type))
    if not updates:
        raise UserError(f"You must specify at least one feature to {operation}")
    if any(not name.strip(_JAVA_WHITESPACE) for name in updates):
        raise UserError("Provided feature can not be empty.")
    return FeatureRequest(operation, updates, dry_run)


@dataclass(frozen=True)
class FeatureUpdateResult:
    name: str
    level: int
    error: ApiError


@dataclass(frozen=True)
class UpdateOutcome:
    """Per-feature results, sorted by feature name as kafka-features prints them."""

    request: FeatureRequest
    results: tuple[FeatureUpdateResult, ...]

    @classmethod
    def of(cls, request: FeatureRequest, response: UpdateFeaturesResponse) -> UpdateOutcome:
        results = tuple(
            FeatureUpdateResult(name, request.updates[name].level, response.result(name)) for name in sorted(request.updates)
        )
        return cls(request, results)

    @property
    def failures(self) -> int:
        return sum(1 for result in self.results if not result.error.is_success)

    @property
    def summary(self) -> str:
        return f"{self.failures} out of {len(self.results)} operation(s) failed."

    def line(self, result: FeatureUpdateResult) -> str:
        operation, dry_run = self.request.operation, self.request.dry_run
        if result.error.is_success:
            done = "disabled." if operation == DISABLE else f"{operation}d to {result.level}."
            return f"{result.name}{' can be ' if dry_run else ' was '}{done}"
        action = f"disable {result.name}" if operation == DISABLE else f"{operation} {result.name} to {result.level}"
        return f"{'Can not' if dry_run else 'Could not'} {action}. {result.error.message}"

    def lines(self) -> list[str]:
        return [self.line(result) for result in self.results]

    def to_json(self) -> dict[str, Any]:
        return {
            "operation": self.request.operation,
            "dryRun": self.request.dry_run,
            "results": [
                {
                    "feature": result.name,
                    "level": result.level,
                    "succeeded": result.error.is_success,
                    "error": None if result.error.is_success else result.error.error.name,
                    "message": result.error.message,
                }
                for result in self.results
            ],
            "failed": self.failures,
            "total": len(self.results),
        }


def update_features(controller: Controller, request: FeatureRequest) -> ControllerResult[UpdateOutcome]:
    """kafka-features upgrade / downgrade / disable against the cluster state (a dry run
    validates only and produces no records)."""
    result = controller.features.update_features(request.updates, validate_only=request.dry_run)
    return ControllerResult(result.records, UpdateOutcome.of(request, result.response), result.atomic)


# describe ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class FeatureDescription:
    name: str
    supported_min: int
    supported_max: int
    finalized_level: int


@dataclass(frozen=True)
class FeaturesDescription:
    features: tuple[FeatureDescription, ...]
    epoch: int | None
    # The release of the tool that prints (a 4.3 tool prints a 4.4 level as `UNKNOWN 33`).
    release: KafkaRelease

    def lines(self) -> list[str]:
        epoch = "-" if self.epoch is None else str(self.epoch)
        level_text = self.release.level_text
        # Kafka 4.3+ pads the columns (FeatureCommand.handleDescribe, 4.3.1 FeatureCommand.java:251:
        # "Feature: %-40s  SupportedMinVersion: %-15s  SupportedMaxVersion: %-15s  FinalizedVersionLevel: %-15s  Epoch: %s").
        return [
            f"Feature: {item.name:<40}  SupportedMinVersion: {level_text(item.name, item.supported_min):<15}"
            f"  SupportedMaxVersion: {level_text(item.name, item.supported_max):<15}"
            f"  FinalizedVersionLevel: {level_text(item.name, item.finalized_level):<15}  Epoch: {epoch}"
            for item in self.features
        ]

    def to_json(self) -> dict[str, Any]:
        finalized_mv = next((item.finalized_level for item in self.features if item.name == METADATA_VERSION), 0)
        return {
            "epoch": self.epoch,
            "metadataVersion": self.release.level_text(METADATA_VERSION, finalized_mv) if finalized_mv else None,
            "features": [
                {
                    "name": item.name,
                    "supportedMinVersion": item.supported_min,
                    "supportedMaxVersion": item.supported_max,
                    "finalizedVersionLevel": item.finalized_level,
                }
                for item in self.features
            ],
        }


def describe_features(control: FeatureControl) -> FeaturesDescription:
    """One entry per feature the controller supports, sorted by name (FeatureCommand.handleDescribe)."""
    finalized = control.finalized_features()
    supported = control.supported_features
    features = tuple(
        FeatureDescription(name, supported[name][0], supported[name][1], finalized.levels.get(name, 0))
        for name in sorted(supported)
    )
    return FeaturesDescription(features, finalized.epoch, control.release)


def describe(image: Image, release: KafkaRelease, node_id: int | None = None) -> FeaturesDescription:
    """kafka-features describe against the cluster state, by a tool of `release`. With `node_id`
    (`--node-id`, the node the request goes to) the supported ranges are that node's as it
    registered them (a broker's, else a controller's); the finalized levels are the cluster's."""
    if node_id is None:
        return describe_features(FeatureControl(image, release))
    if node_id < 0:
        # FeatureCommand.handleDescribe (4.4.0 FeatureCommand.java:241-243).
        raise UserError(f"Invalid node id {node_id}: must be non-negative.")
    broker = image.cluster.broker(node_id)
    controller = image.cluster.controllers.get(node_id)
    registration = broker if broker is not None else controller
    if registration is None:
        raise UserError(f"Node {node_id} is not registered in the cluster state: name a registered broker or controller, or leave out --node-id")
    return describe_features(FeatureControl(image, release, supported_features=registration.supported_features))


# version-mapping and feature-dependencies -----------------------------------------------------


@dataclass(frozen=True)
class VersionMapping:
    release_version: str
    metadata_version: MetadataVersion
    levels: tuple[tuple[str, int], ...]

    def lines(self) -> list[str]:
        return [
            f"{METADATA_VERSION}={self.metadata_version.level} ({self.release_version})",
            *(f"{name}={level}" for name, level in self.levels),
        ]

    def to_json(self) -> dict[str, Any]:
        return {
            "releaseVersion": self.release_version,
            "metadataVersion": self.metadata_version.name,
            "features": {METADATA_VERSION: self.metadata_version.level, **dict(self.levels)},
        }


def version_mapping(release: KafkaRelease, release_version: str | None = None) -> VersionMapping:
    """The feature levels a release version sets (the latest production release by default;
    FeatureCommand.handleVersionMapping, 4.4.0 :368-384).

    As in Kafka, any version string the table knows (unstable ones too) is accepted and echoed
    as given.
    """
    text = release.latest_production.name if release_version is None else release_version
    mv = _metadata_version(text, release)
    return VersionMapping(text, mv, tuple((item.name, item.default_level(mv)) for item in release.features))


@dataclass(frozen=True)
class FeatureDependencies:
    name: str
    level: int
    # metadata.version's own version string, when `name` is metadata.version.
    version: str | None
    # (feature, level, metadata.version string or None)
    dependencies: tuple[tuple[str, int, str | None], ...]

    def lines(self) -> list[str]:
        if self.version is not None:
            return [f"{self.name}={self.level} ({self.version}) has no dependencies."]
        if not self.dependencies:
            return [f"{self.name}={self.level} has no dependencies."]
        return [f"{self.name}={self.level} requires:"] + [
            f"    {name}={level}" + (f" ({version})" if version is not None else "")
            for name, level, version in self.dependencies
        ]

    def to_json(self) -> dict[str, Any]:
        document: dict[str, Any] = {"feature": self.name, "level": self.level}
        if self.version is not None:
            document["version"] = self.version
        document["dependencies"] = [
            {"feature": name, "level": level, **({"version": version} if version is not None else {})}
            for name, level, version in self.dependencies
        ]
        return document


@dataclass(frozen=True)
class DependencyReport:
    """The features looked up before the first error, and that error (Kafka prints the former)."""

    entries: tuple[FeatureDependencies, ...]
    error: str | None

    def lines(self) -> list[str]:
        return [line for entry in self.entries for line in entry.lines()]

    def to_json(self) -> list[dict[str, Any]]:
        return [entry.to_json() for entry in self.entries]


def _dependencies_of(text: str, release: KafkaRelease) -> FeatureDependencies:
    """FeatureCommand.handleFeatureDependencies (4.4.0 :387-432) for one `name=level`."""
    name, level = parse_name_and_level(text)
    if name == METADATA_VERSION:
        try:
            mv = release.metadata_version_for_level(level)
        except ValueError:
            raise UserError(f"Unknown metadata.version {level}") from None
        return FeatureDependencies(name, level, mv.name, ())
    item = release.features_by_name.get(name)
    if item is None:
        raise UserError(f"Unknown feature: {name}")
    try:
        feature_level = item.level(level)
    except ValueError as exc:
        raise UserError(str(exc)) from None
    dependencies = tuple(
        (dependency, needed, release.metadata_version_for_level(needed).name if dependency == METADATA_VERSION else None)
        for dependency, needed in feature_level.dependencies
    )
    return FeatureDependencies(name, level, None, dependencies)


def feature_dependencies(features: Sequence[str], release: KafkaRelease) -> DependencyReport:
    """What each `name=level` depends on; stops at the first feature that cannot be looked up."""
    entries: list[FeatureDependencies] = []
    for text in features:
        try:
            entries.append(_dependencies_of(text, release))
        except UserError as exc:
            return DependencyReport(tuple(entries), exc.message)
    return DependencyReport(tuple(entries), None)
