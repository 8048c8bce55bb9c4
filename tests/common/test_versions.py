"""The metadata.version and feature tables of Kafka 4.4.0 (4.3.1 knows them up to 4.4-IV0), and
each release's view of them (kjbod.common.kafka_release)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kjbod.common.kafka_release import KAFKA_4_3, KAFKA_4_4, NEWEST, KafkaRelease, kafka_release
from kjbod.common.versions import (
    ALL_FEATURES_BY_NAME,
    GROUP_VERSION,
    KRAFT_VERSION,
    MINIMUM_METADATA_VERSION,
    SHARE_VERSION,
    TRANSACTION_VERSION,
    MetadataVersion,
    metadata_changed_between,
    metadata_version_for_level,
    metadata_version_of_record,
)
from kjbod.errors import UsageError


def test_table_bounds_of_each_release() -> None:
    assert (MINIMUM_METADATA_VERSION.name, MINIMUM_METADATA_VERSION.level) == ("3.3-IV3", 7)
    assert (KAFKA_4_3.latest_production.name, KAFKA_4_3.latest_testing.name) == ("4.3-IV0", "4.4-IV0")
    assert (KAFKA_4_4.latest_production.name, KAFKA_4_4.latest_testing.name) == ("4.4-IV2", "4.5-IV0")
    assert [mv.level for mv in KAFKA_4_4.metadata_versions] == list(range(7, 35))
    assert [mv.level for mv in KAFKA_4_3.metadata_versions] == list(range(7, 32))
    assert NEWEST is KAFKA_4_4


@pytest.mark.parametrize(
    ("release", "text", "name"),
    [
        (KAFKA_4_3, "4.3", "4.3-IV0"), (KAFKA_4_3, "3.7", "3.7-IV4"), (KAFKA_4_3, "3.7-IV2", "3.7-IV2"), (KAFKA_4_3, "3.7.1", "3.7-IV4"),
        (KAFKA_4_3, "4.0", "4.0-IV3"), (KAFKA_4_3, "4.4-IV0", "4.4-IV0"), (KAFKA_4_4, "4.4", "4.4-IV2"), (KAFKA_4_4, "4.4.0", "4.4-IV2"),
        (KAFKA_4_4, "4.5-IV0", "4.5-IV0"), (KAFKA_4_4, "4.3", "4.3-IV0"),
    ],
)
def test_parse_release_strings(release: KafkaRelease, text: str, name: str) -> None:
    assert release.parse_metadata_version(text).name == name


LIST_4_3 = ("3.3-IV3, 3.4-IV0, 3.5-IV0, 3.5-IV1, 3.5-IV2, 3.6-IV0, 3.6-IV1, 3.6-IV2, 3.7-IV0, 3.7-IV1, 3.7-IV2, 3.7-IV3, 3.7-IV4, "
            "3.8-IV0, 3.9-IV0, 4.0-IV0, 4.0-IV1, 4.0-IV2, 4.0-IV3, 4.1-IV0, 4.1-IV1, 4.2-IV0, 4.2-IV1, 4.3-IV0")


@pytest.mark.parametrize(
    ("release", "text", "unstable", "supported"),
    [
        (KAFKA_4_3, "4.4", True, LIST_4_3 + ", 4.4-IV0"),
        (KAFKA_4_3, "4.4-IV0", False, LIST_4_3),
        (KAFKA_4_4, "4.5", True, LIST_4_3 + ", 4.4-IV0, 4.4-IV1, 4.4-IV2, 4.5-IV0"),
        (KAFKA_4_4, "4.5-IV0", False, LIST_4_3 + ", 4.4-IV0, 4.4-IV1, 4.4-IV2"),
        (KAFKA_4_4, "3.2", True, LIST_4_3 + ", 4.4-IV0, 4.4-IV1, 4.4-IV2, 4.5-IV0"),
        (KAFKA_4_4, "4.3.", True, LIST_4_3 + ", 4.4-IV0, 4.4-IV1, 4.4-IV2, 4.5-IV0"),  # Java's split drops the empty tail
        (KAFKA_4_4, "", True, LIST_4_3 + ", 4.4-IV0, 4.4-IV1, 4.4-IV2, 4.5-IV0"),
    ],
)
def test_unknown_release_strings_in_kafkas_words(release: KafkaRelease, text: str, unstable: bool, supported: str) -> None:
    """MetadataVersion.fromVersionString (4.4.0 :365-381): the list ends at the latest testing
    version when unstable versions are allowed, else at the latest production one."""
    with pytest.raises(ValueError) as raised:
        release.parse_metadata_version(text, unstable=unstable)
    assert str(raised.value) == f"Unknown metadata.version '{text}'. Supported metadata.version are: {supported}"


def test_a_level_a_release_does_not_know() -> None:
    with pytest.raises(ValueError, match=r"^No MetadataVersion with feature level 33\. Valid feature levels are from 7 to 31\.$"):
        KAFKA_4_3.metadata_version_for_level(33)
    assert KAFKA_4_4.metadata_version_for_level(33).name == "4.4-IV2"
    assert (KAFKA_4_3.level_text("metadata.version", 33), KAFKA_4_4.level_text("metadata.version", 33)) == ("UNKNOWN 33", "4.4-IV2")


def test_a_newer_metadata_version_in_a_record_is_kept_as_its_level() -> None:
    newer = metadata_version_of_record(40)
    assert (newer.level, newer.name, newer.is_known) == (40, "UNKNOWN 40", False)
    assert newer.cordoned_log_dirs_supported and newer.register_broker_record_version == 4 and newer.partition_record_version == 2
    assert metadata_changed_between(newer, metadata_version_for_level(34))  # a downgrade across it is refused
    assert not KAFKA_4_4.knows(newer) and KAFKA_4_4.knows(metadata_version_for_level(34))
    with pytest.raises(ValueError, match="No MetadataVersion with feature level 6"):
        metadata_version_of_record(6)


def test_gates() -> None:
    v = metadata_version_for_level
    assert not v(16).directory_assignment_supported and v(17).directory_assignment_supported
    assert not v(29).cordoned_log_dirs_supported and v(30).cordoned_log_dirs_supported
    assert (v(17).partition_record_version, v(23).partition_record_version) == (1, 2)
    assert [v(level).register_broker_record_version for level in (7, 8, 17, 29, 30, 33)] == [1, 2, 3, 3, 4, 4]
    assert not v(10).scram_supported and v(11).scram_supported
    assert not v(32).controller_unregistration_supported and v(33).controller_unregistration_supported
    assert not v(31).cidr_acl_supported and v(32).cidr_acl_supported


def test_metadata_changed_means_some_version_in_between_changed_it() -> None:
    v = metadata_version_for_level
    assert not metadata_changed_between(v(22), v(17))  # 4.0-IV0 can go back to 3.7-IV2
    assert metadata_changed_between(v(22), v(16))
    assert metadata_changed_between(v(30), v(29))  # 4.3-IV0 changed metadata
    assert not metadata_changed_between(v(29), v(29))
    assert metadata_changed_between(v(33), v(31)) and not metadata_changed_between(v(34), v(33))


def test_feature_defaults_follow_bootstrap_versions() -> None:
    v = metadata_version_for_level
    features = ALL_FEATURES_BY_NAME
    assert features[KRAFT_VERSION].default_level(v(20)) == 0
    assert features[KRAFT_VERSION].default_level(v(21)) == 1
    # Levels 1 and 2 share a bootstrap version; the higher one wins.
    assert features[TRANSACTION_VERSION].default_level(v(24)) == 2
    assert features[GROUP_VERSION].default_level(v(21)) == 0
    # share.version 2 exists from Kafka 4.4.0 on; at 4.4-IV0 a 4.3 tool still bootstraps 1.
    assert KAFKA_4_3.feature(SHARE_VERSION).default_level(v(31)) == 1
    assert KAFKA_4_4.feature(SHARE_VERSION).default_level(v(31)) == 2


def test_what_a_node_of_each_release_supports() -> None:
    assert KAFKA_4_3.supported_ranges() == {
        "metadata.version": (7, 30), "kraft.version": (0, 1), "transaction.version": (0, 2), "group.version": (0, 1),
        "eligible.leader.replicas.version": (0, 1), "share.version": (0, 1), "streams.version": (0, 1),
    }
    assert KAFKA_4_4.supported_ranges() == {
        "metadata.version": (7, 33), "kraft.version": (0, 1), "transaction.version": (0, 2), "group.version": (0, 1),
        "eligible.leader.replicas.version": (0, 1), "share.version": (0, 2), "streams.version": (0, 1),
    }
    assert KAFKA_4_4.supported_ranges(unstable=True)["metadata.version"] == (7, 34)


@pytest.mark.parametrize(("text", "release"), [("4.3", KAFKA_4_3), ("4.3.1", KAFKA_4_3), ("4.4", KAFKA_4_4), ("4.4.0", KAFKA_4_4), (" 4.4 ", KAFKA_4_4)])
def test_kafka_versions(text: str, release: KafkaRelease) -> None:
    assert kafka_release(text) is release


@pytest.mark.parametrize("text", ["4.2", "4.5", "3", "", "banana"])
def test_unknown_kafka_versions(text: str) -> None:
    with pytest.raises(UsageError) as raised:
        kafka_release(text)
    assert raised.value.message == f"Unknown Kafka version '{text}' for --kafka-version: kjbod speaks Kafka 4.3 (4.3.1) or 4.4 (4.4.0)"


def test_an_unknown_metadata_version_orders_after_every_known_one() -> None:
    assert MetadataVersion.unknown(35) > metadata_version_for_level(34)


@given(st.text(alphabet="0123456789.-IVx ", max_size=12), st.sampled_from([KAFKA_4_3, KAFKA_4_4]), st.booleans())
def test_any_version_string_is_a_known_version_or_kafkas_refusal(text: str, release: KafkaRelease, unstable: bool) -> None:
    """fromVersionString: a version the release knows (production unless unstable versions are
    allowed), whose name or release the first two segments of the text are; else Kafka's one message."""
    try:
        mv = release.parse_metadata_version(text, unstable=unstable)
    except ValueError as exc:
        assert str(exc) == f"Unknown metadata.version '{text}'. Supported metadata.version are: {release.supported_metadata_versions(unstable)}"
    else:
        assert release.knows(mv) and (unstable or release.is_production(mv))
        assert ".".join(text.split(".")[:2]).rstrip(".") in (mv.name, mv.release) or text in (mv.name, mv.release)
