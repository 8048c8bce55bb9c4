"""metadata.version and the other finalizable features, as data.

The tables follow `metadata-version-current.md` (levels 7-31, the 4.3/4.4 line) and §4.3 of
the storage reference (kraft.version, transaction.version, group.version). Adding a feature or
a metadata.version is a data change here; every gate and record-version choice reads from it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property

from kjbod.errors import UserError

METADATA_VERSION = "metadata.version"
KRAFT_VERSION = "kraft.version"
TRANSACTION_VERSION = "transaction.version"
GROUP_VERSION = "group.version"


@dataclass(frozen=True, order=True)
class MetadataVersion:
    """One metadata.version: its feature level, its name, and whether metadata changed in it."""

    level: int
    release: str
    iv: int
    metadata_changed: bool

    @property
    def name(self) -> str:
        return f"{self.release}-IV{self.iv}"

    def __str__(self) -> str:
        return self.name

    # Gates: the behaviour that appears at each level (MetadataVersion.java predicates).
    @property
    def directory_assignment_supported(self) -> bool:
        """KIP-858 JBOD: directories in registrations and partitions (3.7-IV2)."""
        return self.level >= 17

    @property
    def elr_supported(self) -> bool:
        return self.level >= 23

    @property
    def cordoned_log_dirs_supported(self) -> bool:
        """KIP-1066: a cordoned directory takes no new replicas (4.3-IV0)."""
        return self.level >= 30

    @property
    def leader_epoch_bump_required_on_isr_shrink(self) -> bool:
        return self.level < 12

    @property
    def migration_supported(self) -> bool:
        return self.level >= 8

    @property
    def in_controlled_shutdown_state_supported(self) -> bool:
        return self.level >= 7

    @property
    def register_broker_record_version(self) -> int:
        if self.directory_assignment_supported:
            return 3
        if self.migration_supported:
            return 2
        return 1 if self.in_controlled_shutdown_state_supported else 0

    @property
    def partition_record_version(self) -> int:
        """PartitionRecord and PartitionChangeRecord share this selector."""
        if self.elr_supported:
            return 2
        return 1 if self.directory_assignment_supported else 0


def _mv(level: int, release: str, iv: int, changed: bool) -> MetadataVersion:
    return MetadataVersion(level, release, iv, changed)


METADATA_VERSIONS: tuple[MetadataVersion, ...] = (
    _mv(7, "3.3", 3, True),
    _mv(8, "3.4", 0, True),
    _mv(9, "3.5", 0, False),
    _mv(10, "3.5", 1, False),
    _mv(11, "3.5", 2, True),
    _mv(12, "3.6", 0, False),
    _mv(13, "3.6", 1, True),
    _mv(14, "3.6", 2, True),
    _mv(15, "3.7", 0, True),
    _mv(16, "3.7", 1, False),
    _mv(17, "3.7", 2, True),
    _mv(18, "3.7", 3, False),
    _mv(19, "3.7", 4, False),
    _mv(20, "3.8", 0, False),
    _mv(21, "3.9", 0, False),
    _mv(22, "4.0", 0, False),
    _mv(23, "4.0", 1, True),
    _mv(24, "4.0", 2, False),
    _mv(25, "4.0", 3, False),
    _mv(26, "4.1", 0, False),
    _mv(27, "4.1", 1, False),
    _mv(28, "4.2", 0, False),
    _mv(29, "4.2", 1, False),
    _mv(30, "4.3", 0, True),
    _mv(31, "4.4", 0, False),
)
_BY_LEVEL = {mv.level: mv for mv in METADATA_VERSIONS}

MINIMUM_METADATA_VERSION = _BY_LEVEL[7]
LATEST_PRODUCTION = _BY_LEVEL[30]
LATEST_TESTING = METADATA_VERSIONS[-1]
# A broker that sends no metadata.version range is assumed to support exactly level 1
# (MINIMUM_KRAFT_VERSION, 3.0-IV1), which no current cluster accepts.
MINIMUM_KRAFT_LEVEL = 1


def is_production(mv: MetadataVersion) -> bool:
    return mv.level <= LATEST_PRODUCTION.level


def metadata_version_for_level(level: int) -> MetadataVersion:
    """`MetadataVersion.fromFeatureLevel`; raises ValueError with Kafka's message."""
    try:
        return _BY_LEVEL[level]
    except KeyError:
        raise ValueError(f"No MetadataVersion with feature level {level}") from None


def _version_string_index() -> dict[str, MetadataVersion]:
    index = {mv.name: mv for mv in METADATA_VERSIONS}
    for mv in METADATA_VERSIONS:
        # A bare release names its newest production IV; unstable IVs are never a short form.
        if is_production(mv):
            index[mv.release] = mv
    return index


_BY_STRING = _version_string_index()


def parse_metadata_version(text: str) -> MetadataVersion:
    """`MetadataVersion.fromVersionString`: `4.3`, `4.3-IV0`, `4.3.1` (patch ignored).

    Raises ValueError("Version <s> is not a valid version").
    """
    segments = text.split(".")
    keep = 3 if text.startswith("0.") else 2
    key = ".".join(segments[:keep]) if len(segments) > keep else text
    try:
        return _BY_STRING[key]
    except KeyError:
        raise ValueError(f"Version {text} is not a valid version") from None


def metadata_changed_between(a: MetadataVersion, b: MetadataVersion) -> bool:
    """`checkIfMetadataChanged`: true iff some version in (lower, higher] changed metadata."""
    low, high = sorted((a.level, b.level))
    return any(_BY_LEVEL[level].metadata_changed for level in range(low + 1, high + 1))


@dataclass(frozen=True)
class FeatureLevel:
    """One level of a finalizable feature: the metadata.version that bootstraps it by default,
    and the levels of other features it depends on."""

    level: int
    bootstrap_level: int
    dependencies: tuple[tuple[str, int], ...] = ()


@dataclass(frozen=True)
class Feature:
    name: str
    levels: tuple[FeatureLevel, ...]

    def default_level(self, mv: MetadataVersion) -> int:
        """`defaultValue(mv)`: the highest level whose bootstrap version is at or below mv."""
        chosen = 0
        for feature_level in self.levels:
            if feature_level.bootstrap_level > mv.level:
                break
            chosen = feature_level.level
        return chosen

    @cached_property
    def latest_production(self) -> int:
        return self.default_level(LATEST_PRODUCTION)

    @property
    def latest_testing(self) -> int:
        return self.levels[-1].level

    def level(self, level: int, allow_unstable: bool = True) -> FeatureLevel:
        """`fromFeatureLevel`; raises ValueError("No feature:<name> with feature level <n>")."""
        for feature_level in self.levels:
            if feature_level.level == level and (allow_unstable or level <= self.latest_production):
                return feature_level
        raise ValueError(f"No feature:{self.name} with feature level {level}")


# Order matters: Kafka's PRODUCTION_FEATURES order, used by version-mapping output.
FEATURES: tuple[Feature, ...] = (
    Feature(KRAFT_VERSION, (FeatureLevel(0, 1), FeatureLevel(1, 21, ((METADATA_VERSION, 21),)))),
    Feature(TRANSACTION_VERSION, (FeatureLevel(0, 1), FeatureLevel(1, 24), FeatureLevel(2, 24))),
    Feature(GROUP_VERSION, (FeatureLevel(0, 1), FeatureLevel(1, 22))),
)
FEATURES_BY_NAME = {feature.name: feature for feature in FEATURES}


def feature(name: str) -> Feature:
    """`Features.featureFromName`; raises ValueError("Feature <n> not found.")."""
    try:
        return FEATURES_BY_NAME[name]
    except KeyError:
        raise ValueError(f"Feature {name} not found.") from None


def default_supported_ranges() -> dict[str, tuple[int, int]]:
    """What a broker of the latest production release advertises (features with max 0 omitted)."""
    ranges = {METADATA_VERSION: (MINIMUM_METADATA_VERSION.level, LATEST_PRODUCTION.level)}
    for item in FEATURES:
        if item.latest_production > 0:
            ranges[item.name] = (0, item.latest_production)
    return ranges


# Feature versioning (FeatureControlManager, QuorumFeatures, VersionRange) ---------------------

# A node that does not list a feature supports only level 0 of it (QuorumFeatures.DISABLED).
DISABLED_RANGE = (0, 0)
# Features.validateVersion: any level >= 1 needs metadata.version 3.3-IV0 (level 4), the first
# version with FeatureLevelRecord. Kafka's literal text names that level, which predates this table.
_FEATURE_LEVEL_RECORD_LEVEL = 4
_FEATURE_LEVEL_RECORD_VERSION = "3.3-IV0"
_SHORT_MAX = 2**15 - 1


def controller_supported_ranges() -> dict[str, tuple[int, int]]:
    """What kjbod's own controller supports (QuorumFeatures.defaultFeatureMap).

    kjbod's controller runs the latest production release with unstable versions disabled
    (kjbod has no switch to enable them): metadata.version 3.3-IV3..4.3-IV0 and each production
    feature from 0 to its latest production level.
    """
    return default_supported_ranges()


def version_range_text(low: int, high: int) -> str:
    """`VersionRange.toString`: `5`, `5+` (open ended) or `1-5`."""
    if low == high:
        return str(low)
    if high == _SHORT_MAX:
        return f"{low}+"
    return f"{low}-{high}"


def metadata_versions_between(first: MetadataVersion, last: MetadataVersion) -> tuple[MetadataVersion, ...]:
    """The table's versions from `first` to `last`, both included, in order."""
    return tuple(mv for mv in METADATA_VERSIONS if first.level <= mv.level <= last.level)


def validate_feature_level(name: str, level: int, proposed: Mapping[str, int]) -> None:
    """`featureFromName(name).fromFeatureLevel(level, true)` then `Features.validateVersion`.

    Checks that the feature and level exist and that the level's dependencies hold in
    `proposed` (feature name -> the level it would have, metadata.version included).
    Raises ValueError with Kafka's message.
    """
    item = feature(name).level(level)
    metadata_level = proposed.get(METADATA_VERSION)
    if level >= 1 and (metadata_level is None or metadata_level < _FEATURE_LEVEL_RECORD_LEVEL):
        raise ValueError(
            f"{name} could not be set to {level} because it depends on "
            f"metadata.version={_FEATURE_LEVEL_RECORD_LEVEL} ({_FEATURE_LEVEL_RECORD_VERSION})"
        )
    for dependency, needed in item.dependencies:
        found = proposed.get(dependency)
        if found is None or found < needed:
            raise ValueError(f"{name} could not be set to {level} because it depends on {dependency} level {needed}")


def _level(text: str, what: str) -> int:
    try:
        return int(text.strip())
    except ValueError:
        raise UserError(f"Invalid {what} '{text}': expected an integer") from None


def parse_feature_range(text: str) -> tuple[str, tuple[int, int]]:
    """`--supported-feature NAME=MIN-MAX` (or `NAME=LEVEL` for a single level)."""
    name, sep, levels = text.partition("=")
    low, dash, high = levels.partition("-")
    if not sep or not name.strip():
        raise UserError(f"Invalid --supported-feature '{text}': expected NAME=MIN-MAX, e.g. metadata.version=7-30")
    low_level = _level(low, f"minimum level in --supported-feature '{text}'")
    high_level = _level(high, f"maximum level in --supported-feature '{text}'") if dash else low_level
    if low_level < 0 or high_level < low_level:
        raise UserError(f"Invalid --supported-feature '{text}': need 0 <= MIN <= MAX")
    return name.strip(), (low_level, high_level)
