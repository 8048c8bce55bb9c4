"""The feature-versioning helpers of kjbod.common.versions and the gates other commands honour."""

from __future__ import annotations

import pytest

from kjbod.common.kafka_release import KAFKA_4_3, KAFKA_4_4, KafkaRelease
from kjbod.common.versions import (
    METADATA_VERSIONS,
    MINIMUM_METADATA_VERSION,
    metadata_version_for_level,
    metadata_versions_between,
    validate_dependencies,
    version_range_text,
)

# Kafka 4.4.0's MetadataVersion enum, in table order.
TABLE = [
    "3.3-IV3", "3.4-IV0", "3.5-IV0", "3.5-IV1", "3.5-IV2", "3.6-IV0", "3.6-IV1", "3.6-IV2", "3.7-IV0",
    "3.7-IV1", "3.7-IV2", "3.7-IV3", "3.7-IV4", "3.8-IV0", "3.9-IV0", "4.0-IV0", "4.0-IV1", "4.0-IV2",
    "4.0-IV3", "4.1-IV0", "4.1-IV1", "4.2-IV0", "4.2-IV1", "4.3-IV0", "4.4-IV0", "4.4-IV1", "4.4-IV2", "4.5-IV0",
]


def test_the_table_has_every_level_from_7_to_34_with_its_name() -> None:
    assert [(mv.level, mv.name) for mv in METADATA_VERSIONS] == list(zip(range(7, 35), TABLE))


@pytest.mark.parametrize("name", TABLE)
def test_directory_assignment_starts_at_3_7_iv2(name: str) -> None:
    mv = METADATA_VERSIONS[TABLE.index(name)]
    assert mv.directory_assignment_supported == (TABLE.index(name) >= TABLE.index("3.7-IV2"))


@pytest.mark.parametrize("name", TABLE)
def test_cordoned_log_dirs_start_at_4_3_iv0(name: str) -> None:
    mv = METADATA_VERSIONS[TABLE.index(name)]
    assert mv.cordoned_log_dirs_supported == (TABLE.index(name) >= TABLE.index("4.3-IV0"))


def test_the_supported_list_runs_from_the_minimum_to_the_latest_production_version() -> None:
    assert [mv.name for mv in metadata_versions_between(MINIMUM_METADATA_VERSION, KAFKA_4_3.latest_production)] == TABLE[:24]
    assert [mv.name for mv in metadata_versions_between(MINIMUM_METADATA_VERSION, KAFKA_4_4.latest_production)] == TABLE[:27]
    assert metadata_versions_between(metadata_version_for_level(20), metadata_version_for_level(20)) == (
        metadata_version_for_level(20),
    )


@pytest.mark.parametrize(("low", "high", "text"), [(0, 0, "0"), (7, 30, "7-30"), (1, 32767, "1+"), (0, 1, "0-1")])
def test_version_range_text(low: int, high: int, text: str) -> None:
    assert version_range_text(low, high) == text


def _validate(release: KafkaRelease, name: str, level: int, proposed: dict[str, int]) -> None:
    validate_dependencies(name, release.feature(name).level(level), proposed)


@pytest.mark.parametrize(
    ("release", "name", "level", "proposed", "message"),
    [
        (KAFKA_4_4, "foo", 1, {"metadata.version": 30}, "Feature foo not found."),
        (KAFKA_4_4, "group.version", 2, {"metadata.version": 30}, "No feature:group.version with feature level 2"),
        # Feature.validateVersion names MINIMUM_VERSION (4.4.0 Feature.java:166-168).
        (KAFKA_4_4, "group.version", 1, {}, "group.version could not be set to 1 because it depends on metadata.version=7 (3.3-IV3)"),
        (KAFKA_4_4, "eligible.leader.replicas.version", 1, {"metadata.version": 22},
         "eligible.leader.replicas.version could not be set to 1 because it depends on metadata.version level 23"),
        (KAFKA_4_3, "share.version", 2, {"metadata.version": 31}, "No feature:share.version with feature level 2"),
    ],
)
def test_feature_level_validation_messages(release: KafkaRelease, name: str, level: int, proposed: dict[str, int], message: str) -> None:
    with pytest.raises(ValueError) as raised:
        _validate(release, name, level, proposed)
    assert str(raised.value) == message


@pytest.mark.parametrize(
    ("name", "level", "proposed"),
    [("group.version", 0, {}), ("kraft.version", 1, {"metadata.version": 7}), ("transaction.version", 2, {"metadata.version": 7}),
     ("eligible.leader.replicas.version", 1, {"metadata.version": 23}), ("share.version", 2, {"metadata.version": 7})],
)
def test_feature_levels_that_validate(name: str, level: int, proposed: dict[str, int]) -> None:
    """kraft.version 1 depends on nothing (KRaftVersion.java:75)."""
    assert _validate(KAFKA_4_4, name, level, proposed) is None  # it raises ValueError on failure


def test_a_feature_above_its_latest_production_level_needs_unstable_versions() -> None:
    share = KAFKA_4_4.feature("share.version")
    assert share.level(2, KAFKA_4_4.feature_latest_production(share)).level == 2
    assert KAFKA_4_3.feature_latest_production(KAFKA_4_3.feature("share.version")) == 1
