"""kjbod.tools.features: kafka-features' client side (storage reference §5), without the CLI."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kjbod.common.kafka_release import KAFKA_4_3, KAFKA_4_4
from kjbod.controller.errors import NONE, ApiError, Errors
from kjbod.controller.feature_control import FeatureUpdate, UpdateFeaturesResponse, UpgradeType
from kjbod.errors import UserError
from kjbod.tools import features as features_tool
from kjbod.tools.features import (
    DEPRECATION_NOTICE,
    FeatureRequest,
    UpdateOutcome,
    build_request,
    feature_dependencies,
    parse_name_and_level,
    version_mapping,
)

SUPPORTED = (
    "3.3-IV3, 3.4-IV0, 3.5-IV0, 3.5-IV1, 3.5-IV2, 3.6-IV0, 3.6-IV1, 3.6-IV2, 3.7-IV0, 3.7-IV1, 3.7-IV2, 3.7-IV3, "
    "3.7-IV4, 3.8-IV0, 3.9-IV0, 4.0-IV0, 4.0-IV1, 4.0-IV2, 4.0-IV3, 4.1-IV0, 4.1-IV1, 4.2-IV0, 4.2-IV1, 4.3-IV0, 4.4-IV0"
)
UP, SAFE, UNSAFE = UpgradeType.UPGRADE, UpgradeType.SAFE_DOWNGRADE, UpgradeType.UNSAFE_DOWNGRADE


def refused(message: str, operation: str = "upgrade", **flags: object) -> None:
    with pytest.raises(UserError) as raised:
        build_request(operation, KAFKA_4_3, **flags)  # type: ignore[arg-type]
    assert raised.value.message == message


# parseNameAndLevel -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "parsed"),
    [("group.version=1", ("group.version", 1)), (" group.version = +1 ", ("group.version", 1)),
     ("a=b=3", None), ("x=-5", ("x", -5)), ("x=32767", ("x", 32767)), ("x=-32768", ("x", -32768)), ("=2", ("", 2))],
)
def test_name_and_level_are_split_at_the_first_equals_sign_and_trimmed(text: str, parsed: tuple[str, int] | None) -> None:
    if parsed is None:
        with pytest.raises(UserError, match="unable to parse b=3 as a short"):
            parse_name_and_level(text)
    else:
        assert parse_name_and_level(text) == parsed


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("group.version", "Can't parse feature=level string group.version: equals sign not found."),
        ("group.version=", "Can't parse feature=level string group.version=: unable to parse  as a short."),
        ("group.version=one", "Can't parse feature=level string group.version=one: unable to parse one as a short."),
        ("x=32768", "Can't parse feature=level string x=32768: unable to parse 32768 as a short."),
        ("x=1_0", "Can't parse feature=level string x=1_0: unable to parse 1_0 as a short."),
        ("x=1.0", "Can't parse feature=level string x=1.0: unable to parse 1.0 as a short."),
    ],
)
def test_unparsable_feature_levels(text: str, message: str) -> None:
    with pytest.raises(UserError) as raised:
        parse_name_and_level(text)
    assert raised.value.message == message


@given(name=st.from_regex(r"[a-z][a-z.]{0,20}", fullmatch=True), level=st.integers(-(2**15), 2**15 - 1))
def test_every_short_round_trips(name: str, level: int) -> None:
    assert parse_name_and_level(f"{name}={level}") == (name, level)


# Building the request ---------------------------------------------------------------------


def test_release_version_sets_every_production_feature_but_an_upgrade_skips_zero_defaults() -> None:
    up = build_request("upgrade", KAFKA_4_3, release_version="3.9")
    assert dict(up.updates) == {"metadata.version": FeatureUpdate(21, UP), "kraft.version": FeatureUpdate(1, UP)}
    down = build_request("downgrade", KAFKA_4_3, release_version="3.9", unsafe=True)
    assert dict(down.updates) == {
        "metadata.version": FeatureUpdate(21, UNSAFE),
        "kraft.version": FeatureUpdate(1, UNSAFE),
        "transaction.version": FeatureUpdate(0, UNSAFE),
        "group.version": FeatureUpdate(0, UNSAFE),
        "eligible.leader.replicas.version": FeatureUpdate(0, UNSAFE),
        "share.version": FeatureUpdate(0, UNSAFE),
        "streams.version": FeatureUpdate(0, UNSAFE),
    }
    assert dict(build_request("upgrade", KAFKA_4_3, release_version="4.3").updates) == {
        "metadata.version": FeatureUpdate(30), "kraft.version": FeatureUpdate(1),
        "transaction.version": FeatureUpdate(2), "group.version": FeatureUpdate(1),
        "eligible.leader.replicas.version": FeatureUpdate(1), "share.version": FeatureUpdate(1), "streams.version": FeatureUpdate(1),
    }
    # Kafka 4.4.0 knows 4.4 (4.4-IV2) and share.version 2.
    assert dict(build_request("upgrade", KAFKA_4_4, release_version="4.4").updates) == {
        "metadata.version": FeatureUpdate(33), "kraft.version": FeatureUpdate(1),
        "transaction.version": FeatureUpdate(2), "group.version": FeatureUpdate(1),
        "eligible.leader.replicas.version": FeatureUpdate(1), "share.version": FeatureUpdate(2), "streams.version": FeatureUpdate(1),
    }


def test_release_version_cannot_be_combined_with_other_feature_flags() -> None:
    message = "Can not specify `release-version` with other feature flags."
    refused(message, release_version="4.3", metadata="4.3")
    refused(message, release_version="4.3", features=["group.version=1"])
    refused(message, "downgrade", release_version="bogus", features=["group.version=1"])


@pytest.mark.parametrize("flag", ["release_version", "metadata"])
@pytest.mark.parametrize("text", ["5.0", "banana", "4.4"])
def test_an_unknown_version_lists_the_supported_ones(flag: str, text: str) -> None:
    refused(f"Unknown metadata.version '{text}'. Supported metadata.version are: {SUPPORTED}", **{flag: text})


def test_a_testing_version_is_sent_for_the_controller_to_refuse() -> None:
    assert build_request("upgrade", KAFKA_4_3, release_version="4.4-IV0").updates["metadata.version"] == FeatureUpdate(31)


def test_the_metadata_flag_prints_its_deprecation_first_even_when_it_then_fails() -> None:
    printed: list[str] = []
    request = build_request("upgrade", KAFKA_4_3, metadata="4.3", print_line=printed.append)
    assert (printed, dict(request.updates)) == ([DEPRECATION_NOTICE], {"metadata.version": FeatureUpdate(30)})
    assert DEPRECATION_NOTICE == " `metadata` flag is deprecated and may be removed in a future release."
    printed.clear()
    with pytest.raises(UserError, match="^Unknown metadata.version '9"):
        build_request("upgrade", KAFKA_4_3, metadata="9", print_line=printed.append)
    assert printed == [DEPRECATION_NOTICE]


def test_a_feature_given_twice_is_refused() -> None:
    refused("Feature group.version was specified more than once.", features=["group.version=1", " group.version=1"])
    refused("Feature metadata.version was specified more than once.", metadata="4.3", features=["metadata.version=30"])
    refused("Feature group.version was specified more than once.", "disable", features=["group.version", "group.version"])


def test_the_admin_clients_own_checks() -> None:
    refused(
        "The upgradeType flag should be set to SAFE_DOWNGRADE or UNSAFE_DOWNGRADE when the provided "
        "maxVersionLevel:0 is < 1.",
        features=["group.version=0"],
    )
    refused("Cannot specify a negative version level.", "downgrade", features=["group.version=-1"])
    refused("Provided feature can not be empty.", features=[" =1"])
    refused("Provided feature can not be empty.", "disable", features=[" "])


def test_a_value_check_comes_before_the_duplicate_check_for_the_same_item() -> None:
    refused("Cannot specify a negative version level.", "downgrade", features=["group.version=1", "group.version=-1"])


@pytest.mark.parametrize("operation", ["upgrade", "downgrade", "disable"])
def test_at_least_one_feature_is_needed(operation: str) -> None:
    refused(f"You must specify at least one feature to {operation}", operation)


def test_disable_sends_level_zero_safe_or_unsafe() -> None:
    assert dict(build_request("disable", KAFKA_4_3, features=["group.version", "foo"]).updates) == {
        "group.version": FeatureUpdate(0, SAFE), "foo": FeatureUpdate(0, SAFE),
    }
    assert build_request("disable", KAFKA_4_3, features=["foo"], unsafe=True).updates["foo"] == FeatureUpdate(0, UNSAFE)


# Result lines ------------------------------------------------------------------------------

FAILED = ApiError(Errors.INVALID_UPDATE_VERSION, "Invalid update version 30 for feature metadata.version. Broker 1 only supports versions 7-29")
PREFIX = "The update failed for all features since the following feature had an error: "


def outcome(operation: str, dry_run: bool, error: ApiError, **levels: int) -> UpdateOutcome:
    updates = {name.replace("_", "."): FeatureUpdate(level, SAFE) for name, level in levels.items()}
    return UpdateOutcome.of(FeatureRequest(operation, updates, dry_run), UpdateFeaturesResponse(error, tuple(updates)))


@pytest.mark.parametrize(
    ("operation", "dry_run", "line"),
    [
        ("upgrade", False, "metadata.version was upgraded to 30."),
        ("upgrade", True, "metadata.version can be upgraded to 30."),
        ("downgrade", False, "metadata.version was downgraded to 30."),
        ("downgrade", True, "metadata.version can be downgraded to 30."),
        ("disable", False, "metadata.version was disabled."),
        ("disable", True, "metadata.version can be disabled."),
    ],
)
def test_success_lines(operation: str, dry_run: bool, line: str) -> None:
    result = outcome(operation, dry_run, NONE, metadata_version=30)
    assert (result.lines(), result.failures) == ([line], 0)


@pytest.mark.parametrize(
    ("operation", "dry_run", "start"),
    [
        ("upgrade", False, "Could not upgrade metadata.version to 30. "),
        ("upgrade", True, "Can not upgrade metadata.version to 30. "),
        ("downgrade", False, "Could not downgrade metadata.version to 30. "),
        ("downgrade", True, "Can not downgrade metadata.version to 30. "),
        ("disable", False, "Could not disable metadata.version. "),
        ("disable", True, "Can not disable metadata.version. "),
    ],
)
def test_failure_lines_repeat_the_controllers_message(operation: str, dry_run: bool, start: str) -> None:
    result = outcome(operation, dry_run, FAILED, metadata_version=30)
    assert result.lines() == [start + PREFIX + FAILED.message]


def test_lines_are_sorted_by_name_and_failures_counted() -> None:
    result = outcome("upgrade", False, FAILED, transaction_version=2, metadata_version=30, group_version=1)
    assert [line.split(" ")[3] for line in result.lines()] == ["group.version", "metadata.version", "transaction.version"]
    assert (result.failures, result.summary) == (3, "3 out of 3 operation(s) failed.")
    assert result.to_json()["results"][0] == {
        "feature": "group.version", "level": 1, "succeeded": False, "error": "INVALID_UPDATE_VERSION",
        "message": PREFIX + FAILED.message,
    }


# version-mapping and feature-dependencies --------------------------------------------------


def test_version_mapping_defaults_to_the_latest_production_release_of_the_tool() -> None:
    assert version_mapping(KAFKA_4_3).lines() == [
        "metadata.version=30 (4.3-IV0)", "kraft.version=1", "transaction.version=2", "group.version=1",
        "eligible.leader.replicas.version=1", "share.version=1", "streams.version=1",
    ]
    assert version_mapping(KAFKA_4_4).lines() == [
        "metadata.version=33 (4.4-IV2)", "kraft.version=1", "transaction.version=2", "group.version=1",
        "eligible.leader.replicas.version=1", "share.version=2", "streams.version=1",
    ]


def test_version_mapping_echoes_the_string_as_given() -> None:
    assert version_mapping(KAFKA_4_3, "3.9").lines() == [
        "metadata.version=21 (3.9)", "kraft.version=1", "transaction.version=0", "group.version=0",
        "eligible.leader.replicas.version=0", "share.version=0", "streams.version=0",
    ]
    assert version_mapping(KAFKA_4_3, "4.4-IV0").lines()[0] == "metadata.version=31 (4.4-IV0)"
    assert version_mapping(KAFKA_4_3, "4.4-IV0").lines()[5] == "share.version=1"
    assert version_mapping(KAFKA_4_4, "4.4-IV0").lines()[5] == "share.version=2"
    assert version_mapping(KAFKA_4_3, "3.7.1").to_json() == {
        "releaseVersion": "3.7.1", "metadataVersion": "3.7-IV4",
        "features": {"metadata.version": 19, "kraft.version": 0, "transaction.version": 0, "group.version": 0,
                     "eligible.leader.replicas.version": 0, "share.version": 0, "streams.version": 0},
    }


@pytest.mark.parametrize(("release", "text"), [(KAFKA_4_3, "3.2"), (KAFKA_4_3, "4.4"), (KAFKA_4_4, "4.5")])
def test_version_mapping_of_an_unknown_release(release, text: str) -> None:  # noqa: ANN001
    with pytest.raises(UserError) as raised:
        version_mapping(release, text)
    assert raised.value.message == f"Unknown metadata.version '{text}'. Supported metadata.version are: " + (
        SUPPORTED if release is KAFKA_4_3 else SUPPORTED + ", 4.4-IV1, 4.4-IV2, 4.5-IV0")


def test_feature_dependencies_lines() -> None:
    report = feature_dependencies(["kraft.version=1", "metadata.version = 21", "group.version=1", "transaction.version=0",
                                   "eligible.leader.replicas.version=1"], KAFKA_4_3)
    assert report.error is None
    assert report.lines() == [
        "kraft.version=1 has no dependencies.",
        "metadata.version=21 (3.9-IV0) has no dependencies.",
        "group.version=1 has no dependencies.",
        "transaction.version=0 has no dependencies.",
        "eligible.leader.replicas.version=1 requires:",
        "    metadata.version=23 (4.0-IV1)",
    ]


def test_feature_dependencies_know_the_tools_release() -> None:
    assert feature_dependencies(["metadata.version=33", "share.version=2"], KAFKA_4_4).lines() == [
        "metadata.version=33 (4.4-IV2) has no dependencies.", "share.version=2 has no dependencies."]
    assert feature_dependencies(["metadata.version=33"], KAFKA_4_3).error == "Unknown metadata.version 33"
    assert feature_dependencies(["share.version=2"], KAFKA_4_3).error == "No feature:share.version with feature level 2"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("metadata.version=6", "Unknown metadata.version 6"),
        ("foo=1", "Unknown feature: foo"),
        ("group.version=2", "No feature:group.version with feature level 2"),
        ("group.version", "Can't parse feature=level string group.version: equals sign not found."),
    ],
)
def test_feature_dependencies_stop_at_the_first_error_keeping_earlier_lookups(text: str, message: str) -> None:
    report = feature_dependencies(["group.version=1", text, "kraft.version=1"], KAFKA_4_3)
    assert (report.lines(), report.error) == (["group.version=1 has no dependencies."], message)


def test_level_text_renders_metadata_versions_by_name() -> None:
    level_text = KAFKA_4_3.level_text
    assert [level_text("metadata.version", 30), level_text("metadata.version", 0), level_text("group.version", 1)] == [
        "4.3-IV0", "UNKNOWN 0", "1",
    ]


def test_an_empty_request_is_refused_before_the_state_is_opened() -> None:
    with pytest.raises(UserError, match="^You must specify at least one feature to upgrade$"):
        features_tool.build_request("upgrade", KAFKA_4_3)


def test_a_4_3_tool_describes_a_4_4_cluster_as_kafka_4_3_1_does() -> None:
    """A level the tool does not know prints as `UNKNOWN <level>` (FeatureCommand.levelToString),
    the supported ranges are what the nodes registered."""
    from kjbod.image import EMPTY_IMAGE, replay_all
    from kjbod.records import FeatureLevelRecord

    image = replay_all(EMPTY_IMAGE, [FeatureLevelRecord(name="metadata.version", feature_level=33)])
    lines = features_tool.describe(image, KAFKA_4_3).lines()
    (mv,) = [line for line in lines if line.startswith("Feature: metadata.version ")]
    assert "SupportedMaxVersion: 4.3-IV0" in mv and "FinalizedVersionLevel: UNKNOWN 33" in mv
    (mv,) = [line for line in features_tool.describe(image, KAFKA_4_4).lines() if line.startswith("Feature: metadata.version ")]
    assert "SupportedMaxVersion: 4.4-IV2" in mv and "FinalizedVersionLevel: 4.4-IV2" in mv
