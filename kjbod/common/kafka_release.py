"""The Kafka release kjbod speaks: 4.3 (as 4.3.1 ships it) or 4.4 (4.4.0), the newest by default.

Some of what kjbod mirrors differs between the two (which metadata.versions and feature levels
exist, the latest production version and so every default, kafka-storage format's layout, some
texts). An operator names the release with the global option `--kafka-version 4.3|4.4` (or
`KJBOD_KAFKA_VERSION`); the CLI makes one `KafkaRelease` of it and passes it down: to the tools
(what Kafka's tools of that release print and accept) and to the controller (the release the
cluster state's controller runs: the feature ranges it supports, the topic configs it accepts).
Nothing reads it behind a caller's back: a library function that needs it takes it as an
argument.

What a release decides for the cluster itself is recorded in the state where Kafka records it:
every registration a kjbod command writes (format's controller, `broker register`, `quorum
add-controller`, import from files) carries the supported feature ranges of the release that
wrote it, as Kafka's nodes register theirs, so the features commands see a 4.3 broker of a
state as such whatever the release of the command that reads it.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

from kjbod.common.versions import (
    ALL_FEATURES,
    METADATA_VERSION,
    METADATA_VERSIONS,
    MINIMUM_METADATA_VERSION,
    RELEASE_4_3,
    RELEASE_4_4,
    Feature,
    MetadataVersion,
    metadata_versions_between,
)
from kjbod.errors import UsageError

KAFKA_VERSION_OPTION = "--kafka-version"
KAFKA_VERSION_ENV = "KJBOD_KAFKA_VERSION"


def _java_split_dots(text: str) -> list[str]:
    """`text.split(Pattern.quote("."))`: Java drops the trailing empty strings."""
    segments = text.split(".")
    while segments and segments[-1] == "":
        segments.pop()
    return segments


@dataclass(frozen=True)
class KafkaRelease:
    """One Kafka release as kjbod speaks it; compare with `is`/`==` or order by `version`."""

    version: tuple[int, int]
    # The exact release whose code this mirrors (the differential tests run its jars).
    full_version: str
    latest_production_level: int
    latest_testing_level: int

    @property
    def name(self) -> str:
        return f"{self.version[0]}.{self.version[1]}"

    def __str__(self) -> str:
        return self.name

    # metadata.version ------------------------------------------------------------------------

    @cached_property
    def metadata_versions(self) -> tuple[MetadataVersion, ...]:
        """Every metadata.version this release knows, production and testing, in order."""
        return tuple(mv for mv in METADATA_VERSIONS if mv.level <= self.latest_testing_level)

    @cached_property
    def latest_production(self) -> MetadataVersion:
        """MetadataVersion.LATEST_PRODUCTION: the default of format and version-mapping."""
        return next(mv for mv in self.metadata_versions if mv.level == self.latest_production_level)

    @property
    def latest_testing(self) -> MetadataVersion:
        """MetadataVersion.latestTesting(): the newest version, usable with unstable versions enabled."""
        return self.metadata_versions[-1]

    def is_production(self, mv: MetadataVersion) -> bool:
        return mv.level <= self.latest_production_level

    def knows(self, mv: MetadataVersion) -> bool:
        return mv.is_known and mv.level <= self.latest_testing_level

    def latest(self, unstable: bool) -> MetadataVersion:
        return self.latest_testing if unstable else self.latest_production

    def metadata_version_for_level(self, level: int) -> MetadataVersion:
        """`MetadataVersion.fromFeatureLevel`; raises ValueError with Kafka's message
        (4.4.0 MetadataVersion.java:392-398)."""
        for mv in self.metadata_versions:
            if mv.level == level:
                return mv
        raise ValueError(
            f"No MetadataVersion with feature level {level}. Valid feature levels are from "
            f"{MINIMUM_METADATA_VERSION.level} to {self.latest_testing_level}."
        )

    def level_text(self, name: str, level: int) -> str:
        """FeatureCommand.levelToString: a metadata.version level as its version string, or
        `UNKNOWN <level>` when this release does not know it; other features as numbers."""
        if name != METADATA_VERSION:
            return str(level)
        try:
            return self.metadata_version_for_level(level).name
        except ValueError:
            return f"UNKNOWN {level}"

    @cached_property
    def _version_strings(self) -> dict[str, MetadataVersion]:
        """MetadataVersion's static index (4.4.0 :318-329): every IV name, then each release
        (`4.3`) for its newest *production* IV."""
        index = {mv.name: mv for mv in self.metadata_versions}
        index.update({mv.release: mv for mv in self.metadata_versions if self.is_production(mv)})
        return index

    def supported_metadata_versions(self, unstable: bool) -> str:
        """What "Supported metadata.version are: ..." lists: 3.3-IV3 to the latest production
        (or testing) version, comma-separated."""
        return ", ".join(mv.name for mv in metadata_versions_between(MINIMUM_METADATA_VERSION, self.latest(unstable)))

    def parse_metadata_version(self, text: str, *, unstable: bool = True) -> MetadataVersion:
        """`MetadataVersion.fromVersionString(text, unstable)` (4.4.0 :365-381): `4.4`, `4.4-IV2`,
        `4.4.0` (the first two segments); raises ValueError with Kafka's message."""
        segments = _java_split_dots(text)
        key = text if len(segments) <= 2 else ".".join(segments[:2])
        found = self._version_strings.get(key)
        if found is None or (not unstable and not self.is_production(found)):
            raise ValueError(
                f"Unknown metadata.version '{text}'. Supported metadata.version are: {self.supported_metadata_versions(unstable)}"
            )
        return found

    # Features --------------------------------------------------------------------------------

    @cached_property
    def features(self) -> tuple[Feature, ...]:
        """Feature.PRODUCTION_FEATURES with the levels this release knows, in Kafka's enum order."""
        return tuple(feature.known_in(self.version) for feature in ALL_FEATURES)

    @cached_property
    def features_by_name(self) -> dict[str, Feature]:
        return {feature.name: feature for feature in self.features}

    def feature(self, name: str) -> Feature:
        """`Feature.featureFromName`; raises ValueError("Feature <n> not found.")."""
        try:
            return self.features_by_name[name]
        except KeyError:
            raise ValueError(f"Feature {name} not found.") from None

    def feature_latest_production(self, feature: Feature) -> int:
        """The feature enum's LATEST_PRODUCTION: its default at the latest production
        metadata.version (Kafka checks the two agree, Feature.java:264-322)."""
        return feature.default_level(self.latest_production)

    def supported_ranges(self, unstable: bool = False) -> dict[str, tuple[int, int]]:
        """What a node of this release supports and registers: BrokerFeatures /
        QuorumFeatures.defaultSupportedFeatureMap (4.4.0 server BrokerFeatures.java:68-80):
        metadata.version 3.3-IV3 to the latest production (or testing) version, each production
        feature 0 to its latest production (or testing) level, omitted when that is 0."""
        ranges = {METADATA_VERSION: (MINIMUM_METADATA_VERSION.level, self.latest(unstable).level)}
        for feature in self.features:
            high = feature.latest_testing if unstable else self.feature_latest_production(feature)
            if high > 0:
                ranges[feature.name] = (0, high)
        return ranges

    # kafka-storage format ----------------------------------------------------------------------

    @property
    def writes_bootstrap_snapshot(self) -> bool:
        """KAFKA-19648 (4.4): format writes no bootstrap.checkpoint; a controller's bootstrap
        records go into its `__cluster_metadata-0/00000000000000000000-0000000000.checkpoint`."""
        return self.version >= RELEASE_4_4

    # The controller ----------------------------------------------------------------------------

    @property
    def refuses_all_cordoned_brokers_in_manual_assignments(self) -> bool:
        """4.4.0's validateManualPartitionAssignment refuses a broker whose directories are all
        cordoned (RCM 4.4.0 :2049-2050: creations with an assignment and reassignments); 4.3.1
        accepts it (RCM 4.3.1 :2002-2032)."""
        return self.version >= RELEASE_4_4


KAFKA_4_3 = KafkaRelease(RELEASE_4_3, "4.3.1", latest_production_level=30, latest_testing_level=31)
KAFKA_4_4 = KafkaRelease(RELEASE_4_4, "4.4.0", latest_production_level=33, latest_testing_level=34)
KAFKA_RELEASES = (KAFKA_4_3, KAFKA_4_4)
NEWEST = KAFKA_RELEASES[-1]


def kafka_release(text: str) -> KafkaRelease:
    """`--kafka-version`: `4.4` or `4.4.0` (a patch release of a line speaks as the line)."""
    for release in KAFKA_RELEASES:
        if text.strip() in (release.name, release.full_version) or _java_split_dots(text.strip())[:2] == release.name.split("."):
            return release
    names = " or ".join(f"{release.name} ({release.full_version})" for release in KAFKA_RELEASES)
    raise UsageError(f"Unknown Kafka version '{text}' for {KAFKA_VERSION_OPTION}: kjbod speaks Kafka {names}")
