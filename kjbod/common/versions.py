"""metadata.version and the other finalizable features, as data: everything the newest Kafka
release kjbod speaks (4.4.0) defines, each metadata.version and feature level with the release
that first knows it.

What one release knows, its latest production and testing versions, its defaults and its texts
are a `KafkaRelease`'s (kjbod.common.kafka_release): a view over these tables. Adding a feature
or a metadata.version is a data change here; every gate and record-version choice reads from it.
Sources: Kafka 4.4.0 server-common MetadataVersion.java (constants lines 50-142, predicates
198-311), Feature.java and the FeatureVersion enums (KRaftVersion, TransactionVersion,
GroupVersion, EligibleLeaderReplicasVersion, ShareVersion, StreamsVersion); 4.3.1's sources for
what 4.3 knows.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from kjbod.errors import UserError

METADATA_VERSION = "metadata.version"
KRAFT_VERSION = "kraft.version"
TRANSACTION_VERSION = "transaction.version"
GROUP_VERSION = "group.version"
ELIGIBLE_LEADER_REPLICAS_VERSION = "eligible.leader.replicas.version"
SHARE_VERSION = "share.version"
STREAMS_VERSION = "streams.version"

# The releases, oldest first, as (major, minor): what `since` below compares with.
RELEASE_4_3 = (4, 3)
RELEASE_4_4 = (4, 4)


@dataclass(frozen=True, order=True)
class MetadataVersion:
    """One metadata.version: its feature level, its name, and whether metadata changed in it.

    A level no release kjbod speaks knows (a newer Kafka's) is kept as a number: `unknown(level)`
    is named `UNKNOWN <level>`, as Kafka's tools print it, and passes every gate below.
    """

    level: int
    release: str
    iv: int
    metadata_changed: bool
    # The first release kjbod speaks that knows this version (RELEASE_4_3: every release).
    since: tuple[int, int] = field(default=RELEASE_4_3, compare=False)

    @classmethod
    def unknown(cls, level: int) -> MetadataVersion:
        # A newer release's version may have changed metadata: a downgrade across it is refused.
        return cls(level, "UNKNOWN", -1, True, (99, 0))

    @property
    def is_known(self) -> bool:
        return self.iv >= 0

    @property
    def name(self) -> str:
        return f"{self.release}-IV{self.iv}" if self.is_known else f"UNKNOWN {self.level}"

    def __str__(self) -> str:
        return self.name

    # Gates: the behaviour that appears at each level (MetadataVersion.java predicates).
    @property
    def scram_supported(self) -> bool:
        """SCRAM credentials in the metadata (3.5-IV2; isScramSupported, 4.4.0 :198)."""
        return self.level >= 11

    @property
    def metadata_transactions_supported(self) -> bool:
        """BeginTransactionRecord/EndTransactionRecord (3.6-IV1; isMetadataTransactionSupported)."""
        return self.level >= 13

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
    def cidr_acl_supported(self) -> bool:
        """CIDR ACL host patterns (4.4-IV1; isCidrAclSupported, 4.4.0 :222)."""
        return self.level >= 32

    @property
    def controller_unregistration_supported(self) -> bool:
        """KIP-1312: UnregisterControllerRecord (4.4-IV2; isControllerUnregistrationSupported, 4.4.0 :262)."""
        return self.level >= 33

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
        """registerBrokerRecordVersion (4.4.0 :234-244): 4 from 4.3-IV0 (cordoned directories)."""
        if self.cordoned_log_dirs_supported:
            return 4
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


def _mv(level: int, release: str, iv: int, changed: bool, since: tuple[int, int] = RELEASE_4_3) -> MetadataVersion:
    return MetadataVersion(level, release, iv, changed, since)


# Every metadata.version of Kafka 4.4.0 (4.3.1 knows them up to 4.4-IV0).
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
    _mv(32, "4.4", 1, True, RELEASE_4_4),
    _mv(33, "4.4", 2, True, RELEASE_4_4),
    _mv(34, "4.5", 0, False, RELEASE_4_4),
)
_BY_LEVEL = {mv.level: mv for mv in METADATA_VERSIONS}

MINIMUM_METADATA_VERSION = _BY_LEVEL[7]
# A broker that sends no metadata.version range is assumed to support exactly level 1
# (MINIMUM_KRAFT_VERSION, 3.0-IV1), which no current cluster accepts.
MINIMUM_KRAFT_LEVEL = 1


def metadata_version_for_level(level: int) -> MetadataVersion:
    """The version of a feature level any release kjbod speaks knows; raises ValueError (the
    messages that name a release's range are KafkaRelease.metadata_version_for_level's)."""
    try:
        return _BY_LEVEL[level]
    except KeyError:
        raise ValueError(f"No MetadataVersion with feature level {level}") from None


def metadata_version_of_record(level: int) -> MetadataVersion:
    """The metadata.version a FeatureLevelRecord finalizes: a level newer than every release
    kjbod speaks is kept as `UNKNOWN <level>` (an import never stops on it); below the minimum
    is refused with Kafka's FeaturesDelta message (4.4.0 image/FeaturesDelta.java:63-65)."""
    found = _BY_LEVEL.get(level)
    if found is not None:
        return found
    if level > METADATA_VERSIONS[-1].level:
        return MetadataVersion.unknown(level)
    raise ValueError(
        f"No MetadataVersion with feature level {level}: unsupported metadata version - if you are currently upgrading "
        f"your cluster, please ensure the metadata version is set to {MINIMUM_METADATA_VERSION} (or higher) before "
        "updating the software version"
    )


def metadata_changed_between(a: MetadataVersion, b: MetadataVersion) -> bool:
    """`checkIfMetadataChanged`: true iff some version in (lower, higher] changed metadata."""
    low, high = sorted((a.level, b.level))
    return any(_BY_LEVEL.get(level, MetadataVersion.unknown(level)).metadata_changed for level in range(low + 1, high + 1))


@dataclass(frozen=True)
class FeatureLevel:
    """One level of a finalizable feature: the metadata.version that bootstraps it by default,
    the levels of other features it depends on, and the first release that knows it."""

    level: int
    bootstrap_level: int
    dependencies: tuple[tuple[str, int], ...] = ()
    since: tuple[int, int] = RELEASE_4_3


@dataclass(frozen=True)
class Feature:
    """A feature with the levels one release knows (KafkaRelease.features gives each release's)."""

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

    @property
    def latest_testing(self) -> int:
        return self.levels[-1].level

    def known_in(self, release: tuple[int, int]) -> Feature:
        """The levels a release knows."""
        return Feature(self.name, tuple(level for level in self.levels if level.since <= release))

    def level(self, level: int, latest_production: int | None = None) -> FeatureLevel:
        """`fromFeatureLevel(level, allowUnstable)`: any level, or with `latest_production` only
        those up to it; raises ValueError("No feature:<name> with feature level <n>")."""
        for feature_level in self.levels:
            if feature_level.level == level and (latest_production is None or level <= latest_production):
                return feature_level
        raise ValueError(f"No feature:{self.name} with feature level {level}")


# Kafka's PRODUCTION_FEATURES, in its enum order (Feature.java:45-50): the order of version-mapping
# output and of format's default-level loop. Latest production of each feature (its enum's
# LATEST_PRODUCTION) = its default at the release's latest production metadata.version.
ALL_FEATURES: tuple[Feature, ...] = (
    # KRaftVersion: level 1 has no dependencies (KRaftVersion.java:75).
    Feature(KRAFT_VERSION, (FeatureLevel(0, 7), FeatureLevel(1, 21))),
    Feature(TRANSACTION_VERSION, (FeatureLevel(0, 7), FeatureLevel(1, 24), FeatureLevel(2, 24))),
    Feature(GROUP_VERSION, (FeatureLevel(0, 7), FeatureLevel(1, 22))),
    Feature(ELIGIBLE_LEADER_REPLICAS_VERSION, (FeatureLevel(0, 7), FeatureLevel(1, 26, ((METADATA_VERSION, 23),)))),
    Feature(SHARE_VERSION, (FeatureLevel(0, 7), FeatureLevel(1, 28), FeatureLevel(2, 31, since=RELEASE_4_4))),
    Feature(STREAMS_VERSION, (FeatureLevel(0, 7), FeatureLevel(1, 29))),
)
ALL_FEATURES_BY_NAME = {feature.name: feature for feature in ALL_FEATURES}


# Feature versioning (FeatureControlManager, QuorumFeatures, VersionRange) ---------------------

# A node that does not list a feature supports only level 0 of it (QuorumFeatures.DISABLED).
DISABLED_RANGE = (0, 0)
_SHORT_MAX = 2**15 - 1


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


def validate_dependencies(name: str, item: FeatureLevel, proposed: Mapping[str, int]) -> None:
    """`Features.validateVersion` (4.4.0 Feature.java:164-178): any level >= 1 needs
    metadata.version 3.3-IV3 (level 7, MINIMUM_VERSION), then each dependency must hold in
    `proposed` (feature name -> the level it would have, metadata.version included).
    Raises ValueError with Kafka's message."""
    metadata_level = proposed.get(METADATA_VERSION)
    if item.level >= 1 and (metadata_level is None or metadata_level < MINIMUM_METADATA_VERSION.level):
        raise ValueError(
            f"{name} could not be set to {item.level} because it depends on "
            f"metadata.version={MINIMUM_METADATA_VERSION.level} ({MINIMUM_METADATA_VERSION})"
        )
    for dependency, needed in item.dependencies:
        found = proposed.get(dependency)
        if found is None or found < needed:
            raise ValueError(f"{name} could not be set to {item.level} because it depends on {dependency} level {needed}")


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
