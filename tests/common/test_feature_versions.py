"""The feature-versioning helpers of kjbod.common.versions and the gates other commands honour."""

from __future__ import annotations

import pytest

from kjbod.common.versions import (
    METADATA_VERSIONS,
    LATEST_PRODUCTION,
    MINIMUM_METADATA_VERSION,
    controller_supported_ranges,
    metadata_version_for_level,
    metadata_versions_between,
    validate_feature_level,
    version_range_text,
)

# metadata-version-current.md, in table order.
TABLE = [
    "3.3-IV3", "3.4-IV0", "3.5-IV0", "3.5-IV1", "3.5-IV2", "3.6-IV0", "3.6-IV1", "3.6-IV2", "3.7-IV0",
    "3.7-IV1", "3.7-IV2", "3.7-IV3", "3.7-IV4", "3.8-IV0", "3.9-IV0", "4.0-IV0", "4.0-IV1", "4.0-IV2",
    "4.0-IV3", "4.1-IV0", "4.1-IV1", "4.2-IV0", "4.2-IV1", "4.3-IV0", "4.4-IV0",
]


def test_the_table_has_every_level_from_7_to_31_with_its_name() -> None:
    assert [(mv.level, mv.name) for mv in METADATA_VERSIONS] == list(zip(range(7, 32), TABLE))


@pytest.mark.parametrize("name", TABLE)
def test_directory_assignment_starts_at_3_7_iv2(name: str) -> None:
    mv = METADATA_VERSIONS[TABLE.index(name)]
    assert mv.directory_assignment_supported == (TABLE.index(name) >= TABLE.index("3.7-IV2"))


@pytest.mark.parametrize("name", TABLE)
def test_cordoned_log_dirs_start_at_4_3_iv0(name: str) -> None:
    mv = METADATA_VERSIONS[TABLE.index(name)]
    assert mv.cordoned_log_dirs_supported == (TABLE.index(name) >= TABLE.index("4.3-IV0"))


def test_the_supported_list_runs_from_the_minimum_to_the_latest_production_version() -> None:
    assert [mv.name for mv in metadata_versions_between(MINIMUM_METADATA_VERSION, LATEST_PRODUCTION)] == TABLE[:-1]
    assert metadata_versions_between(metadata_version_for_level(20), metadata_version_for_level(20)) == (
        metadata_version_for_level(20),
    )


@pytest.mark.parametrize(("low", "high", "text"), [(0, 0, "0"), (7, 30, "7-30"), (1, 32767, "1+"), (0, 1, "0-1")])
def test_version_range_text(low: int, high: int, text: str) -> None:
    assert version_range_text(low, high) == text


def test_the_controller_supports_the_latest_production_release_without_unstable_levels() -> None:
    assert controller_supported_ranges() == {
        "metadata.version": (7, 30), "kraft.version": (0, 1), "transaction.version": (0, 2), "group.version": (0, 1),
    }


@pytest.mark.parametrize(
    ("name", "level", "proposed", "message"),
    [
        ("foo", 1, {"metadata.version": 30}, "Feature foo not found."),
        ("group.version", 2, {"metadata.version": 30}, "No feature:group.version with feature level 2"),
        ("group.version", 1, {}, "group.version could not be set to 1 because it depends on metadata.version=4 (3.3-IV0)"),
        ("kraft.version", 1, {"metadata.version": 20},
         "kraft.version could not be set to 1 because it depends on metadata.version level 21"),
    ],
)
def test_feature_level_validation_messages(name: str, level: int, proposed: dict[str, int], message: str) -> None:
    with pytest.raises(ValueError) as raised:
        validate_feature_level(name, level, proposed)
    assert str(raised.value) == message


@pytest.mark.parametrize(
    ("name", "level", "proposed"),
    [("group.version", 0, {}), ("kraft.version", 1, {"metadata.version": 21}), ("transaction.version", 2, {"metadata.version": 7})],
)
def test_feature_levels_that_validate(name: str, level: int, proposed: dict[str, int]) -> None:
    assert validate_feature_level(name, level, proposed) is None  # it raises ValueError on failure
