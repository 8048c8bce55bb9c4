"""FeatureControl: FeatureControlManager's validation (storage reference §6), all or nothing.

Each test runs an operation, asserts the ControllerResult, then replays its records and asserts
the state, as Kafka's FeatureControlManagerTest does.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kjbod.common.kafka_release import KAFKA_4_3, KAFKA_4_4
from kjbod.common.kafka_uuid import DirectoryId
from kjbod.controller.errors import NONE, ApiError, Errors
from kjbod.controller.feature_control import (
    UPDATE_FAILED_PREFIX,
    FeatureControl,
    FeatureUpdate,
    UpdateFeaturesResponse,
    UpgradeType,
)
from kjbod.controller.result import ControllerResult
from kjbod.errors import UserError
from kjbod.image import EMPTY_IMAGE, Image, replay_all
from kjbod.records import CONFIG_RESOURCE_BROKER, BrokerFeature, ConfigRecord, FeatureLevelRecord, KjbodClusterRecord, RegisterBrokerRecord

INCARNATION = "O7xvrxGUTwyKxRtVqYj9qA"
UPGRADE, SAFE, UNSAFE = UpgradeType.UPGRADE, UpgradeType.SAFE_DOWNGRADE, UpgradeType.UNSAFE_DOWNGRADE
# What a broker of the 4.2 line advertises, and what one of the 4.3 line does.
RANGES_4_2 = {"metadata.version": (7, 29), "kraft.version": (0, 1), "transaction.version": (0, 2), "group.version": (0, 1)}
RANGES_4_3 = {**RANGES_4_2, "metadata.version": (7, 30)}
# metadata-version-current.md: the levels whose "metadata changed" column says yes.
METADATA_CHANGED_LEVELS = {7, 8, 11, 13, 14, 15, 17, 23, 30}


def registration(broker_id: int, ranges: dict[str, tuple[int, int]], *, epoch: int = 10, fenced: bool = False) -> RegisterBrokerRecord:
    return RegisterBrokerRecord(
        version=3,
        broker_id=broker_id,
        incarnation_id=INCARNATION,
        broker_epoch=epoch,
        fenced=fenced,
        features=tuple(BrokerFeature(name=n, min_supported_version=lo, max_supported_version=hi) for n, (lo, hi) in ranges.items()),
        log_dirs=(DirectoryId.random(),),
    )


def cluster(mv: int, *, features: dict[str, int] | None = None, brokers: dict[int, dict[str, tuple[int, int]]] | None = None) -> Image:
    records: list = [FeatureLevelRecord(name="metadata.version", feature_level=mv)]
    records += [FeatureLevelRecord(name=name, feature_level=level) for name, level in (features or {}).items()]
    records += [registration(broker_id, ranges) for broker_id, ranges in (brokers or {}).items()]
    return replay_all(EMPTY_IMAGE, records)


def update(image: Image, validate_only: bool = False, **updates: FeatureUpdate) -> ControllerResult[UpdateFeaturesResponse]:
    """The request, to a controller of the 4.3 line (these tests' ranges and messages are 4.3's)."""
    return FeatureControl(image, KAFKA_4_3).update_features({name.replace("_", "."): u for name, u in updates.items()}, validate_only)


def refused(image: Image, message: str, **updates: FeatureUpdate) -> None:
    result = update(image, **updates)
    assert result.records == ()
    assert result.response.error == ApiError(Errors.INVALID_UPDATE_VERSION, message)


def levels(image: Image) -> dict[str, int]:
    return FeatureControl(image, KAFKA_4_3).finalized_features().levels  # type: ignore[return-value]


# Success, dry run, all or nothing -------------------------------------------------------------


def test_an_upgrade_writes_one_record_per_feature_atomically_in_kafkas_processing_order() -> None:
    image = cluster(29, features={"kraft.version": 1}, brokers={1: RANGES_4_3, 2: RANGES_4_3})
    result = update(
        image,
        metadata_version=FeatureUpdate(30),
        kraft_version=FeatureUpdate(1),
        transaction_version=FeatureUpdate(2),
        group_version=FeatureUpdate(1),
    )
    assert result.atomic and result.response.error == NONE
    assert result.records == (
        FeatureLevelRecord(name="group.version", feature_level=1),
        FeatureLevelRecord(name="kraft.version", feature_level=1),
        FeatureLevelRecord(name="metadata.version", feature_level=30),
        FeatureLevelRecord(name="transaction.version", feature_level=2),
    )
    after = replay_all(image, result.records)
    assert levels(after) == {"metadata.version": 30, "kraft.version": 1, "transaction.version": 2, "group.version": 1}
    assert after.features.metadata_version is not None and after.features.metadata_version.name == "4.3-IV0"


def test_validate_only_checks_everything_and_returns_no_records() -> None:
    image = cluster(29, brokers={1: RANGES_4_3})
    result = update(image, validate_only=True, metadata_version=FeatureUpdate(30))
    assert (result.records, result.response.error) == ((), NONE)
    refused_dry = update(cluster(29, brokers={1: RANGES_4_2}), validate_only=True, metadata_version=FeatureUpdate(30))
    assert refused_dry.response.error.error is Errors.INVALID_UPDATE_VERSION


def test_one_failing_feature_fails_the_whole_request_with_no_records() -> None:
    image = cluster(29, brokers={1: RANGES_4_3})
    result = update(image, group_version=FeatureUpdate(1), metadata_version=FeatureUpdate(31))
    assert result.records == ()
    assert result.response.error == ApiError(
        Errors.INVALID_UPDATE_VERSION,
        "Invalid update version 31 for feature metadata.version. Local controller only supports versions 7-30",
    )
    # The admin client fails every feature with the controller's one message.
    expected = ApiError(Errors.INVALID_UPDATE_VERSION, UPDATE_FAILED_PREFIX + result.response.error.message)
    assert result.response.result("group.version") == expected
    assert result.response.result("metadata.version") == expected


def test_the_error_reported_is_the_first_failure_in_java_hash_map_order() -> None:
    # Inserted transaction first, but Kafka's HashMap iterates group.version (bucket 0) first.
    image = cluster(30)
    refused(
        image,
        "Invalid update version 2 for feature group.version. Local controller only supports versions 0-1",
        transaction_version=FeatureUpdate(3),
        group_version=FeatureUpdate(2),
    )


def test_a_cluster_state_without_metadata_version_is_refused() -> None:
    with pytest.raises(UserError, match=r"^The cluster state has no finalized metadata.version yet"):
        FeatureControl(EMPTY_IMAGE).update_features({"metadata.version": FeatureUpdate(30)})


# Support: local controller, then each registered broker -------------------------------------


def test_the_local_controller_supports_the_latest_production_release_only() -> None:
    image = cluster(30)
    refused(image, "Invalid update version 31 for feature metadata.version. Local controller only supports versions 7-30",
            metadata_version=FeatureUpdate(31))
    refused(image, "Invalid update version 1 for feature foo. Local controller does not support this feature.",
            foo=FeatureUpdate(1))


def test_the_local_controller_is_named_by_the_node_id_that_formatted_the_state() -> None:
    """QuorumFeatures.reasonNotLocallySupported: `"Local controller " + nodeId` (QuorumFeatures.java:109)."""
    image = replay_all(cluster(30), [KjbodClusterRecord(cluster_id="MkU3OEVBNTcwNTJENDM2Qk", controller_id=3000)])
    refused(image, "Invalid update version 31 for feature metadata.version. Local controller 3000 only supports versions 7-30",
            metadata_version=FeatureUpdate(31))
    refused(image, "Invalid update version 1 for feature foo. Local controller 3000 does not support this feature.",
            foo=FeatureUpdate(1))
    # Imported with --cluster-id: no controller formatted it, so its node id is not known.
    imported = replay_all(cluster(30), [KjbodClusterRecord(cluster_id="MkU3OEVBNTcwNTJENDM2Qk")])
    refused(imported, "Invalid update version 1 for feature foo. Local controller does not support this feature.",
            foo=FeatureUpdate(1))


def test_a_broker_with_a_lower_maximum_blocks_the_upgrade_until_it_reregisters() -> None:
    image = cluster(29, brokers={1: RANGES_4_3, 2: RANGES_4_2, 3: RANGES_4_3})
    refused(image, "Invalid update version 30 for feature metadata.version. Broker 2 only supports versions 7-29",
            metadata_version=FeatureUpdate(30))
    upgraded_binaries = replay_all(image, [registration(2, RANGES_4_3, epoch=20)])
    result = update(upgraded_binaries, metadata_version=FeatureUpdate(30))
    assert result.response.error == NONE
    assert replay_all(upgraded_binaries, result.records).features.level("metadata.version") == 30


def test_brokers_are_checked_in_id_order_fenced_ones_included() -> None:
    image = replay_all(cluster(29), [registration(3, RANGES_4_2), registration(2, {"metadata.version": (7, 28)}, fenced=True)])
    refused(image, "Invalid update version 30 for feature metadata.version. Broker 2 only supports versions 7-28",
            metadata_version=FeatureUpdate(30))


def test_a_feature_a_broker_does_not_list_counts_as_0_to_0() -> None:
    image = cluster(30, brokers={4: {"metadata.version": (7, 30)}})
    refused(image, "Invalid update version 1 for feature group.version. Broker 4 does not support this feature.",
            group_version=FeatureUpdate(1))
    # Level 0 is inside 0..0, so disabling still passes the support check.
    assert update(image, group_version=FeatureUpdate(0, SAFE)).response.error == NONE


@pytest.mark.parametrize(("supported", "text"), [((30, 30), "30"), ((7, 32767), "7+"), ((7, 29), "7-29")])
def test_version_ranges_render_as_kafka_does(supported: tuple[int, int], text: str) -> None:
    control = FeatureControl(cluster(30, brokers={1: {"metadata.version": supported}}),
                             supported_features={"metadata.version": (1, 32767)})
    result = control.update_features({"metadata.version": FeatureUpdate(6, SAFE)})
    assert result.response.error.message == (
        f"Invalid update version 6 for feature metadata.version. Broker 1 only supports versions {text}"
    )


# Direction and per-feature rules --------------------------------------------------------------


def test_a_negative_level_is_refused_before_anything_else() -> None:
    refused(cluster(30), "Invalid update version -1 for feature foo. A feature version cannot be less than 0.",
            foo=FeatureUpdate(-1, SAFE))


def test_an_upgrade_cannot_lower_a_level_and_a_downgrade_cannot_raise_one() -> None:
    image = cluster(30, features={"group.version": 1})
    refused(image, "Invalid update version 29 for feature metadata.version. Can't downgrade the version of this feature "
            "without setting the upgrade type to either safe or unsafe downgrade.", metadata_version=FeatureUpdate(29))
    refused(cluster(29), "Invalid update version 30 for feature metadata.version. Can't downgrade to a newer version.",
            metadata_version=FeatureUpdate(30, SAFE))
    refused(cluster(29), "Invalid update version 1 for feature group.version. Can't downgrade to a newer version.",
            group_version=FeatureUpdate(1, UNSAFE))


def test_the_same_level_is_accepted_and_rewritten() -> None:
    result = update(cluster(30, features={"group.version": 1}), group_version=FeatureUpdate(1, SAFE))
    assert result.records == (FeatureLevelRecord(name="group.version", feature_level=1),)


def test_a_downgrade_across_a_metadata_change_is_refused_safe_or_unsafe() -> None:
    image = cluster(30)
    refused(image, "Unsupported metadata.version downgrade from 30 to 29. Refusing to perform the requested downgrade because it might delete "
            "metadata information.", metadata_version=FeatureUpdate(29, SAFE))
    refused(image, "Unsupported metadata.version downgrade from 30 to 29. Unsafe metadata downgrade is not supported in this version.",
            metadata_version=FeatureUpdate(29, UNSAFE))


def test_a_downgrade_with_no_metadata_change_in_between_is_allowed() -> None:
    image = cluster(22)
    result = update(image, metadata_version=FeatureUpdate(17, SAFE))
    assert result.records == (FeatureLevelRecord(name="metadata.version", feature_level=17),)
    assert replay_all(image, result.records).features.level("metadata.version") == 17


@given(current=st.integers(7, 30), target=st.integers(7, 30), unsafe=st.booleans())
def test_downgrades_follow_the_metadata_changed_column(current: int, target: int, unsafe: bool) -> None:
    upgrade_type = UNSAFE if unsafe else SAFE
    result = update(cluster(current), metadata_version=FeatureUpdate(target, upgrade_type))
    if target > current:
        assert result.response.error.message.endswith("Can't downgrade to a newer version.")
    elif any(level in METADATA_CHANGED_LEVELS for level in range(target + 1, current + 1)):
        reason = "Unsafe metadata downgrade is not supported in this version." if unsafe else (
            "Refusing to perform the requested downgrade because it might delete metadata information."
        )
        assert result.response.error == ApiError(Errors.INVALID_UPDATE_VERSION, f"Unsupported metadata.version downgrade from {current} to {target}. {reason}")
        assert result.records == ()
    else:
        assert result.response.error == NONE
        assert replay_all(cluster(current), result.records).features.level("metadata.version") == target


def test_an_unknown_metadata_version_inside_the_supported_range() -> None:
    # Only a controller that claims more than the table knows can get here; the range is its
    # release's table (FeatureControlManager.java:393-396).
    for release, last in ((KAFKA_4_3, 31), (KAFKA_4_4, 34)):
        control = FeatureControl(cluster(7), release, supported_features={"metadata.version": (1, 40)})
        result = control.update_features({"metadata.version": FeatureUpdate(5, SAFE)})
        assert result.response.error.message == f"Invalid metadata.version 5. Valid versions are from 7 to {last}."
    control = FeatureControl(cluster(30), KAFKA_4_3, supported_features={"metadata.version": (1, 40)})
    result = control.update_features({"metadata.version": FeatureUpdate(33)})
    assert result.response.error.message == "Invalid metadata.version 33. Valid versions are from 7 to 31."


def test_unknown_features_and_levels_come_from_the_feature_table() -> None:
    refused(cluster(30), "Invalid update version 0 for feature foo. Feature foo not found.", foo=FeatureUpdate(0, SAFE))
    control = FeatureControl(cluster(30), KAFKA_4_3, supported_features={"group.version": (0, 5)})
    result = control.update_features({"group.version": FeatureUpdate(5)})
    assert result.response.error.message == (
        "Invalid update version 5 for feature group.version. No feature:group.version with feature level 5"
    )


def test_dependencies_are_checked_against_the_proposed_levels() -> None:
    image = cluster(22)
    refused(image, "Invalid update version 1 for feature eligible.leader.replicas.version. eligible.leader.replicas.version "
            "could not be set to 1 because it depends on metadata.version level 23", eligible_leader_replicas_version=FeatureUpdate(1))
    # Raising metadata.version in the same request satisfies the dependency.
    result = update(image, eligible_leader_replicas_version=FeatureUpdate(1), metadata_version=FeatureUpdate(23))
    assert result.records == (
        ConfigRecord(resource_type=CONFIG_RESOURCE_BROKER, resource_name="", name="min.insync.replicas", value="1"),
        FeatureLevelRecord(name="metadata.version", feature_level=23),
        FeatureLevelRecord(name="eligible.leader.replicas.version", feature_level=1),
    )
    # kraft.version 1 depends on nothing (KRaftVersion.java:75).
    assert update(cluster(20), kraft_version=FeatureUpdate(1)).response.error == NONE


def test_disabling_removes_the_feature_from_the_finalized_set() -> None:
    image = cluster(30, features={"group.version": 1, "transaction.version": 2})
    result = update(image, group_version=FeatureUpdate(0, SAFE))
    assert result.records == (FeatureLevelRecord(name="group.version", feature_level=0),)
    after = replay_all(image, result.records)
    assert levels(after) == {"metadata.version": 30, "transaction.version": 2}


# Reads ---------------------------------------------------------------------------------------


def test_finalized_features_carry_the_offset_of_the_last_record_as_epoch() -> None:
    image = cluster(29, features={"group.version": 1}, brokers={1: RANGES_4_2})
    finalized = FeatureControl(image).finalized_features()
    assert (dict(finalized.levels), finalized.epoch) == ({"metadata.version": 29, "group.version": 1}, 2)
    assert FeatureControl(EMPTY_IMAGE).finalized_features().epoch is None


def test_the_local_controller_supports_every_production_feature_of_its_release() -> None:
    common = {"kraft.version": (0, 1), "transaction.version": (0, 2), "group.version": (0, 1), "eligible.leader.replicas.version": (0, 1),
              "streams.version": (0, 1)}
    assert dict(FeatureControl(EMPTY_IMAGE, KAFKA_4_3).supported_features) == {"metadata.version": (7, 30), **common, "share.version": (0, 1)}
    assert dict(FeatureControl(EMPTY_IMAGE, KAFKA_4_4).supported_features) == {"metadata.version": (7, 33), **common, "share.version": (0, 2)}


# Enabling ELR (ConfigurationControlManager.updateFeatures, 4.4.0 :758-771) --------------------------


def min_isr(resource: str, value: str | None) -> ConfigRecord:
    return ConfigRecord(resource_type=CONFIG_RESOURCE_BROKER, resource_name=resource, name="min.insync.replicas", value=value)


def test_enabling_elr_writes_the_safety_records_before_the_feature_level() -> None:
    # maybeGenerateElrSafetyRecords (4.4.0 :705-738): the cluster-level min.insync.replicas when
    # there is none (the controller's static value, 1 by default), then every node-level one deleted,
    # brokers in TimelineHashSet order (17 before 1 at 4 slots: top bits of 17 * -7046029254386353131).
    image = replay_all(cluster(23), [min_isr("1", "2"), min_isr("17", "2"), min_isr("17", None),
                                     min_isr("17", "3"), ConfigRecord(resource_type=CONFIG_RESOURCE_BROKER, resource_name="5", name="log.cleaner.threads", value="2")])
    result = update(image, eligible_leader_replicas_version=FeatureUpdate(1))
    assert result.atomic and result.records == (
        min_isr("", "1"), min_isr("17", None), min_isr("1", None), FeatureLevelRecord(name="eligible.leader.replicas.version", feature_level=1),
    )
    after = replay_all(image, result.records)
    assert after.configs.get(CONFIG_RESOURCE_BROKER, "") == {"min.insync.replicas": "1"}
    assert all("min.insync.replicas" not in after.configs.get(CONFIG_RESOURCE_BROKER, b) for b in ("1", "17"))


def test_an_existing_cluster_level_value_is_kept_and_a_dry_run_or_a_disable_writes_no_config() -> None:
    image = replay_all(cluster(23), [min_isr("", "2")])
    assert update(image, eligible_leader_replicas_version=FeatureUpdate(1)).records == (
        FeatureLevelRecord(name="eligible.leader.replicas.version", feature_level=1),
    )
    assert update(cluster(23), validate_only=True, eligible_leader_replicas_version=FeatureUpdate(1)).records == ()
    enabled = cluster(23, features={"eligible.leader.replicas.version": 1})
    disabled = update(enabled, eligible_leader_replicas_version=FeatureUpdate(0, UpgradeType.SAFE_DOWNGRADE))
    assert disabled.records == (FeatureLevelRecord(name="eligible.leader.replicas.version", feature_level=0),)
    # A refused update writes nothing, safety records included.
    refused(cluster(22), "Invalid update version 1 for feature eligible.leader.replicas.version. eligible.leader.replicas.version "
            "could not be set to 1 because it depends on metadata.version level 23", eligible_leader_replicas_version=FeatureUpdate(1))


def test_the_broker_order_is_kafkas_timeline_hash_set() -> None:
    from kjbod.common.java import timeline_hash_set_order

    # Read from 4.4.0's own org.apache.kafka.timeline.TimelineHashSet (each set added in this order).
    assert timeline_hash_set_order([1, 2, 3]) == [2, 1, 3]
    assert timeline_hash_set_order([100, 5, 42, 7, 1000, 3]) == [1000, 5, 7, 3, 100, 42]
    assert timeline_hash_set_order([-1, 17, 33, 65, 1, 2049, 4097, 9, 25, 41, 57, 73]) == [73, 4097, 65, 57, 41, 2049, 33, -1, 25, 9, 17, 1]
