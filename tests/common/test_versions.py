"""The metadata.version and feature tables (metadata-version-current.md, storage reference §4)."""

from __future__ import annotations

import pytest

from kjbod.common.versions import (
    FEATURES_BY_NAME,
    GROUP_VERSION,
    KRAFT_VERSION,
    LATEST_PRODUCTION,
    LATEST_TESTING,
    MINIMUM_METADATA_VERSION,
    TRANSACTION_VERSION,
    default_supported_ranges,
    metadata_changed_between,
    metadata_version_for_level,
    parse_metadata_version,
)


def test_table_bounds() -> None:
    assert (MINIMUM_METADATA_VERSION.name, MINIMUM_METADATA_VERSION.level) == ("3.3-IV3", 7)
    assert (LATEST_PRODUCTION.name, LATEST_PRODUCTION.level) == ("4.3-IV0", 30)
    assert (LATEST_TESTING.name, LATEST_TESTING.level) == ("4.4-IV0", 31)


@pytest.mark.parametrize(
    ("text", "name"),
    [("4.3", "4.3-IV0"), ("3.7", "3.7-IV4"), ("3.7-IV2", "3.7-IV2"), ("3.7.1", "3.7-IV4"), ("4.0", "4.0-IV3"), ("4.4-IV0", "4.4-IV0")],
)
def test_parse_release_strings(text: str, name: str) -> None:
    assert parse_metadata_version(text).name == name


@pytest.mark.parametrize("text", ["4.4", "3.2", "2.8", "banana", ""])
def test_unknown_release_strings(text: str) -> None:
    with pytest.raises(ValueError, match=f"^Version {text} is not a valid version$"):
        parse_metadata_version(text)


def test_gates() -> None:
    assert not metadata_version_for_level(16).directory_assignment_supported
    assert metadata_version_for_level(17).directory_assignment_supported
    assert not metadata_version_for_level(29).cordoned_log_dirs_supported
    assert metadata_version_for_level(30).cordoned_log_dirs_supported
    assert metadata_version_for_level(17).partition_record_version == 1
    assert metadata_version_for_level(23).partition_record_version == 2


def test_metadata_changed_means_some_version_in_between_changed_it() -> None:
    v = metadata_version_for_level
    assert not metadata_changed_between(v(22), v(17))  # 4.0-IV0 can go back to 3.7-IV2
    assert metadata_changed_between(v(22), v(16))
    assert metadata_changed_between(v(30), v(29))  # 4.3-IV0 changed metadata
    assert not metadata_changed_between(v(29), v(29))


def test_feature_defaults_follow_bootstrap_versions() -> None:
    v = metadata_version_for_level
    assert FEATURES_BY_NAME[KRAFT_VERSION].default_level(v(20)) == 0
    assert FEATURES_BY_NAME[KRAFT_VERSION].default_level(v(21)) == 1
    # Levels 1 and 2 share a bootstrap version; the higher one wins.
    assert FEATURES_BY_NAME[TRANSACTION_VERSION].default_level(v(24)) == 2
    assert FEATURES_BY_NAME[GROUP_VERSION].default_level(v(21)) == 0
    assert default_supported_ranges() == {
        "metadata.version": (7, 30),
        "kraft.version": (0, 1),
        "transaction.version": (0, 2),
        "group.version": (0, 1),
    }
