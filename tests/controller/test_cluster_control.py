"""Broker registration (ClusterControlManager §4.2): operation -> records -> replay -> state."""

from __future__ import annotations

import pytest

from kjbod.common.kafka_uuid import DirectoryId
from kjbod.controller import Controller, ControllerApiError, Errors
from kjbod.errors import UserError
from kjbod.image import replay_all
from kjbod.records import KjbodBrokerLogDirsRecord, KjbodClusterRecord, RegisterBrokerRecord

from .support import apply, bootstrap, new_dir, registration, with_brokers


def refused(image, request) -> ControllerApiError:  # noqa: ANN001
    with pytest.raises(ControllerApiError) as raised:
        Controller(image).cluster.register_broker(request)
    return raised.value


def test_a_new_broker_registers_fenced_with_the_next_offset_as_its_epoch() -> None:
    image = bootstrap()
    d1, d2 = new_dir(), new_dir()
    result = Controller(image).cluster.register_broker(registration(1, [d1, d2], rack="r1"))
    register, paths = result.records
    assert isinstance(register, RegisterBrokerRecord) and isinstance(paths, KjbodBrokerLogDirsRecord)
    assert (register.version, register.broker_epoch, register.fenced, register.rack) == (4, image.next_offset, True, "r1")
    assert register.log_dirs == (d1, d2)  # request order in the record
    assert {f.name for f in register.features} == {"metadata.version", "kraft.version", "transaction.version", "group.version",
                                                   "eligible.leader.replicas.version", "share.version", "streams.version"}
    assert register.cordoned_log_dirs is None  # registerBroker never sets it: the first heartbeat reports (4.4.0 RCM :1579-1588)
    after = apply(image, result)
    broker = after.cluster.brokers[1]
    assert broker.fenced and broker.epoch == image.next_offset and set(broker.directories) == {d1, d2}
    assert after.cluster.path_of(1, d2) == "/data/b1/d2"


def test_a_broker_of_another_cluster_is_refused_before_anything_else() -> None:
    """ClusterControlManager.registerBroker (CCM:349-352) checks the cluster id first."""
    ours, theirs = "MkU3OEVBNTcwNTJENDM2Qk", "XcZZOzUqS4yHOjhMQB6JLQ"
    image = replay_all(bootstrap(), [KjbodClusterRecord(cluster_id=ours, controller_id=3000)])
    error = refused(image, registration(1, [], cluster_id=theirs))  # no directories: that check comes later
    assert str(error) == f"INCONSISTENT_CLUSTER_ID: Expected cluster ID {ours}, but got cluster ID {theirs}"
    assert error.api_error.error is Errors.INCONSISTENT_CLUSTER_ID
    assert Controller(image).cluster.register_broker(registration(1, [new_dir()], cluster_id=ours)).records
    # Without a cluster id on either side there is nothing to compare.
    assert Controller(image).cluster.register_broker(registration(2, [new_dir()])).records
    assert Controller(bootstrap()).cluster.register_broker(registration(3, [new_dir()], cluster_id=theirs)).records


@pytest.mark.parametrize(
    ("dirs", "message"),
    [
        ([], "INVALID_REGISTRATION: No directories specified in request"),
        ([DirectoryId.UNASSIGNED], "INVALID_REGISTRATION: Reserved directory ID in request"),
    ],
)
def test_directory_checks(dirs: list[str], message: str) -> None:
    error = refused(bootstrap(), registration(1, dirs))
    assert str(error) == message and error.api_error.error is Errors.INVALID_REGISTRATION


def test_duplicate_directory_ids_and_a_directory_of_another_broker() -> None:
    image, dirs = with_brokers(bootstrap(), 1)
    d = new_dir()
    assert str(refused(image, registration(2, [d, d]))) == "INVALID_REGISTRATION: Duplicate directory ID in request"
    owned = dirs[1][0]
    assert str(refused(image, registration(2, [owned]))) == f"INVALID_REGISTRATION: Broker 1 is already registered with directory {owned}"


def test_an_unfenced_broker_cannot_be_replaced_by_another_incarnation() -> None:
    image, dirs = with_brokers(bootstrap(), 1)
    error = refused(image, registration(1, dirs[1], incarnation="O7xvrxGUTwyKxRtVqYj9qA"))
    assert str(error) == "DUPLICATE_BROKER_REGISTRATION: Another broker is registered with that broker id."


def test_a_fenced_broker_can_be_replaced_and_gets_a_new_epoch() -> None:
    image, dirs = with_brokers(bootstrap(), 1, unfence=False)
    result = Controller(image).cluster.register_broker(registration(1, dirs[1], incarnation="O7xvrxGUTwyKxRtVqYj9qA"))
    assert result.response.epoch == image.next_offset and not result.response.amended


def test_the_same_incarnation_amends_keeping_epoch_and_state() -> None:
    image, dirs = with_brokers(bootstrap(), 1)
    epoch = image.cluster.brokers[1].epoch
    result = Controller(image).cluster.register_broker(registration(1, dirs[1], rack="r9"))
    assert result.response.amended and result.response.epoch == epoch and not result.response.fenced
    after = apply(image, result)
    assert after.cluster.brokers[1].rack == "r9" and not after.cluster.brokers[1].fenced


def test_a_broker_must_support_the_finalized_metadata_version() -> None:
    error = refused(bootstrap(30), registration(1, [new_dir()], supported_features={"metadata.version": (7, 29)}))
    assert str(error) == (
        "UNSUPPORTED_VERSION: Unable to register because the broker does not support finalized version 30 of "
        "metadata.version. The broker wants a version between 7 and 29, inclusive."
    )


def test_a_finalized_feature_the_broker_does_not_mention_counts_as_0_0() -> None:
    from kjbod.records import FeatureLevelRecord
    from kjbod.image import replay_all

    image = replay_all(bootstrap(), [FeatureLevelRecord(name="group.version", feature_level=1)])
    error = refused(image, registration(1, [new_dir()], supported_features={"metadata.version": (7, 30)}))
    assert "finalized version 1 of group.version. The broker wants a version between 0 and 0" in str(error)


def test_below_3_7_iv2_a_jbod_broker_is_refused_and_directories_are_not_recorded() -> None:
    with pytest.raises(UserError, match="Multiple log directories \\(aka JBOD\\) are not supported in the current MetadataVersion 3.7-IV1"):
        Controller(bootstrap(16)).cluster.register_broker(registration(1, [new_dir(), new_dir()]))
    result = Controller(bootstrap(16)).cluster.register_broker(registration(1, [new_dir()]))
    assert result.records[0].version == 2 and result.records[0].log_dirs == ()
    assert apply(bootstrap(16), result).cluster.brokers[1].directories == ()


def test_default_directory_rules() -> None:
    image, dirs = with_brokers(bootstrap(), 2, dirs_each=1)
    image, _ = with_brokers(image, 0)
    single = Controller(image).cluster
    assert single.default_dir(1) == dirs[1][0]
    assert single.default_dir(99) == DirectoryId.UNASSIGNED
    jbod, _ = with_brokers(bootstrap(), 1, dirs_each=3)
    assert Controller(jbod).cluster.default_dir(1) == DirectoryId.UNASSIGNED
    old, _ = with_brokers(bootstrap(16), 1)
    assert Controller(old).cluster.default_dir(1) == DirectoryId.MIGRATING


