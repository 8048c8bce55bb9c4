"""KIP-1066 as Kafka 4.3.1 and 4.4.0 ship it (kafka-4.4-spec.md §4): cordoned.log.dirs as a
broker config, reported with heartbeats, and the controller's rules that follow from it."""

from __future__ import annotations

import pytest

from kjbod.common.java import hashmap_order
from kjbod.common.kafka_configs import CORDONED_LOG_DIRS
from kjbod.common.kafka_release import KAFKA_4_3, KAFKA_4_4
from kjbod.common.kafka_uuid import uuid_hash
from kjbod.controller import Controller, ControllerApiError, cordoned_dirs
from kjbod.controller.reassignment_control import ReassignmentTarget, ReplicaDirMove
from kjbod.controller.replication_control import CreateTopicRequest, HeartbeatRequest
from kjbod.errors import UserError
from kjbod.records import CONFIG_RESOURCE_BROKER, BrokerRegistrationChangeRecord, ConfigRecord

from .support import apply, bootstrap, registration, new_dir, with_brokers, with_topic


def cordon(image, broker_id: int, directory: str, cordoned: bool = True):  # noqa: ANN001, ANN201
    return apply(image, Controller(image).cluster.set_cordoned(broker_id, directory, cordoned))


# The config ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [("", []), ("  ", []), (" /a , /b ", ["/a", "/b"]), ("/a,,/b", ["/a", "", "/b"]), ("*", ["*"])],
)
def test_the_value_is_parsed_as_configdef_parses_a_list(value: str, expected: list[str]) -> None:
    # ConfigDef.java:766-773 (4.3.1): trimmed, split at \s*,\s*, empty items kept for the validator.
    assert cordoned_dirs.parse_list(value) == expected


def test_star_means_every_log_dir() -> None:
    # AbstractKafkaConfig.cordonedLogDirs (4.3.1 :96-102).
    assert cordoned_dirs.effective_paths("*", ["/d1", "/d2"]) == ["/d1", "/d2"]
    assert cordoned_dirs.effective_paths("/d2", ["/d1", "/d2"]) == ["/d2"]


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("*,/d1", "requirement failed: When cordoned.log.dirs is set to *, it must not contain other values"),
        ("/d1,/x,/y", "requirement failed: All entries in cordoned.log.dirs must be present in log.dirs or log.dir. Missing entries : /x, /y"),
        ("/d1,/d1", "Configuration 'cordoned.log.dirs' values must not be duplicated."),
        ("/d1,,/d2", "Configuration 'cordoned.log.dirs' values must not be empty."),
    ],
)
def test_a_broker_refuses_to_start_with_a_bad_static_value(value: str, message: str) -> None:
    # KafkaConfig.validateCordonedLogDirs (4.3.1 KafkaConfig.scala:532-540); ValidList (ConfigDef.java:1055-1090).
    with pytest.raises(UserError) as raised:
        cordoned_dirs.check_static(value, ["/d1", "/d2"])
    assert str(raised.value) == message


def test_a_broker_refuses_a_dynamic_value_naming_another_directory() -> None:
    # DynamicLogConfig.validateCordonedLogDirs (4.3.1 DynamicBrokerConfig.scala:582-590).
    with pytest.raises(UserError) as raised:
        cordoned_dirs.check_dynamic("/d1,/x", ["/d1", "/d2"])
    assert str(raised.value) == (
        "Invalid value [/d1, /x] for configuration cordoned.log.dirs: Invalid entry in cordoned.log.dirs: /x. "
        "All cordoned log dirs must be entries of log.dirs or log.dir."
    )
    cordoned_dirs.check_dynamic("*", ["/d1", "/d2"])


def test_the_controller_refuses_the_config_below_4_3_iv0_even_a_deletion() -> None:
    # ConfigurationControlManager.isCordonedLogDirsDisabled (4.3.1 :466-472; 4.4.0 :470).
    for value in ("/d1", None):
        with pytest.raises(ControllerApiError) as raised:
            cordoned_dirs.check_controller(bootstrap(29).features.metadata_version, None, value, forwarded=True)
        assert str(raised.value) == (
            "INVALID_CONFIG: The cordoned.log.dirs configuration value cannot be set because it requires metadata.version >= 4.3-IV0"
        )


def test_controllers_asked_directly_may_only_remove_entries() -> None:
    # isCordonedLogDirsInvalid (4.3.1 :445-463): not forwarded by a broker -> a subset of the current value.
    mv = bootstrap(30).features.metadata_version
    cordoned_dirs.check_controller(mv, "/d1, /d2", "/d2", forwarded=False)
    cordoned_dirs.check_controller(mv, "/d1", "", forwarded=False)
    cordoned_dirs.check_controller(mv, None, "/d1", forwarded=True)
    with pytest.raises(ControllerApiError) as raised:
        cordoned_dirs.check_controller(mv, "/d1", "/d1,/d2", forwarded=False)
    assert str(raised.value) == (
        "INVALID_CONFIG: When updating cordoned.log.dirs via controllers,  the new value must be a subset of the current configuration value."
    )


# Cordoning: the dynamic config, then the heartbeat that reports it -----------------------------


def test_cordoning_writes_the_dynamic_config_then_the_heartbeat_report() -> None:
    image, dirs = with_brokers(bootstrap(30), 1, dirs_each=2)
    result = Controller(image).cluster.set_cordoned(1, "/data/b1/d1", True)  # a path works too
    config, change = result.records
    assert config == ConfigRecord(resource_type=CONFIG_RESOURCE_BROKER, resource_name="1", name=CORDONED_LOG_DIRS, value="/data/b1/d1")
    assert isinstance(change, BrokerRegistrationChangeRecord) and change.version == 3
    assert change.cordoned_log_dirs == (dirs[1][0],)
    after = apply(image, result)
    assert after.cluster.brokers[1].cordoned == (dirs[1][0],)
    assert Controller(after).cluster.set_cordoned(1, dirs[1][0], True).records == ()  # already cordoned
    both = cordon(after, 1, dirs[1][1])
    assert both.configs.get(CONFIG_RESOURCE_BROKER, "1")[CORDONED_LOG_DIRS] == "/data/b1/d1,/data/b1/d2"
    # The broker collects the ids in a java.util.HashSet (BrokerLifecycleManager 4.3.1 :654-656).
    assert both.cluster.brokers[1].cordoned == tuple(hashmap_order(dirs[1], uuid_hash))
    again = cordon(both, 1, dirs[1][0], False)
    assert again.configs.get(CONFIG_RESOURCE_BROKER, "1")[CORDONED_LOG_DIRS] == "/data/b1/d2"
    assert again.cluster.brokers[1].cordoned == (dirs[1][1],)
    none = cordon(again, 1, dirs[1][1], False)
    assert none.configs.get(CONFIG_RESOURCE_BROKER, "1")[CORDONED_LOG_DIRS] == ""
    assert none.cluster.brokers[1].cordoned == ()


def test_cordoning_below_4_3_iv0_is_refused_with_kafkas_config_error() -> None:
    image, dirs = with_brokers(bootstrap(29), 1, dirs_each=2)
    with pytest.raises(ControllerApiError, match="requires metadata.version >= 4.3-IV0"):
        Controller(image).cluster.set_cordoned(1, dirs[1][0], True)


def test_registration_leaves_the_cordoned_directories_unknown_until_a_heartbeat() -> None:
    # registerBroker never sets CordonedLogDirs; the first heartbeat after catch-up writes a v3
    # change even when nothing is cordoned, the next ones only on a change (RCM 4.4.0 :1579-1588,
    # BrokerRegistration.cordonedDirChanged 4.3.1 :313-320).
    image = bootstrap(30)
    d1, d2 = new_dir(), new_dir()
    image = apply(image, Controller(image).cluster.register_broker(registration(1, [d1, d2], cordoned_log_dirs="/data/b1/d2")))
    assert image.cluster.brokers[1].cordoned is None
    assert image.cluster.static_cordoned[1] == "/data/b1/d2"
    first = Controller(image).replication.heartbeat(HeartbeatRequest(1, cordoned_log_dirs=Controller(image).cluster.reported_cordoned(1)))
    assert [r for r in first.records if isinstance(r, BrokerRegistrationChangeRecord) and r.version == 3][0].cordoned_log_dirs == (d2,)
    image = apply(image, first)
    assert image.cluster.brokers[1].cordoned == (d2,)
    second = Controller(image).replication.heartbeat(HeartbeatRequest(1, cordoned_log_dirs=(d2,)))
    assert not any(isinstance(r, BrokerRegistrationChangeRecord) and r.version == 3 for r in second.records)
    # A new incarnation's registration is unknown again.
    image = apply(image, Controller(image).replication.fence_broker(1))
    image = apply(image, Controller(image).cluster.register_broker(registration(1, [d1, d2], incarnation="ZNJ-ywU0nnQwRv5eRRU9ow")))
    assert image.cluster.brokers[1].cordoned is None


def test_an_empty_report_is_written_as_an_empty_list() -> None:
    image = bootstrap(30)
    image = apply(image, Controller(image).cluster.register_broker(registration(1, [new_dir()])))
    assert Controller(image).cluster.reported_cordoned(1) == ()
    result = Controller(image).replication.heartbeat(HeartbeatRequest(1, cordoned_log_dirs=()))
    assert [r.cordoned_log_dirs for r in result.records if isinstance(r, BrokerRegistrationChangeRecord) and r.version == 3] == [()]
    assert apply(image, result).cluster.brokers[1].cordoned == ()


def test_below_4_3_iv0_heartbeats_report_nothing() -> None:
    # The broker sends CordonedLogDirs only when the MV supports it; the controller ignores it otherwise.
    image = bootstrap(29)
    image = apply(image, Controller(image).cluster.register_broker(registration(1, [new_dir()])))
    assert Controller(image).cluster.reported_cordoned(1) is None
    result = Controller(image).replication.heartbeat(HeartbeatRequest(1, cordoned_log_dirs=()))
    assert not any(isinstance(r, BrokerRegistrationChangeRecord) and r.version == 3 for r in result.records)


def test_a_star_in_server_properties_cordons_every_directory() -> None:
    image = bootstrap(30)
    d1, d2 = new_dir(), new_dir()
    image = apply(image, Controller(image).cluster.register_broker(registration(1, [d1, d2], cordoned_log_dirs="*")))
    assert set(Controller(image).cluster.reported_cordoned(1) or ()) == {d1, d2}


def test_the_dynamic_value_overrides_server_properties() -> None:
    image = bootstrap(30)
    d1, d2 = new_dir(), new_dir()
    image = apply(image, Controller(image).cluster.register_broker(registration(1, [d1, d2], cordoned_log_dirs="*")))
    image = cordon(image, 1, d1, False)  # the dynamic value starts from the effective one
    assert image.configs.get(CONFIG_RESOURCE_BROKER, "1")[CORDONED_LOG_DIRS] == "/data/b1/d2"
    assert image.cluster.brokers[1].cordoned == (d2,)


# Placement and directory choice ---------------------------------------------------------------


def test_placement_skips_brokers_whose_directories_are_all_cordoned() -> None:
    # UsableBrokerIterator with hasUncordonedDirs (BHM 4.4.0 :363, CCM 4.4.0 :744).
    image, dirs = with_brokers(bootstrap(30), 3, dirs_each=2)
    image = cordon(cordon(image, 3, dirs[3][0]), 3, dirs[3][1])
    image = with_topic(image, "t", partitions=6, rf=2)
    assert all(3 not in p.replicas for p in image.topics.by_name["t"].partitions.values())
    with pytest.raises(ControllerApiError) as raised:
        Controller(image).replication.create_topic(CreateTopicRequest("u", 1, 3))
    assert str(raised.value) == (
        "INVALID_REPLICATION_FACTOR: Unable to replicate the partition 3 time(s): The target replication factor of 3 cannot be "
        "reached because only 2 broker(s) are registered or some brokers have all their log directories cordoned."
    )


def test_placement_with_every_broker_cordoned() -> None:
    image, dirs = with_brokers(bootstrap(30), 1, dirs_each=1)
    image = cordon(image, 1, dirs[1][0])
    with pytest.raises(ControllerApiError) as raised:
        Controller(image).replication.create_topic(CreateTopicRequest("t", 1, 1))
    # As a live 4.4.0 printed it (kafka-4.4-spec.md §4.3).
    assert str(raised.value) == (
        "INVALID_REPLICATION_FACTOR: Unable to replicate the partition 1 time(s): All brokers are currently fenced, "
        "or have all their log directories cordoned."
    )


def test_a_jbod_broker_puts_new_replicas_in_its_least_loaded_uncordoned_directory() -> None:
    # LogManager.nextLogDirs (4.4.0 LogManager.java:1672-1694): cordoned left out, ties in log.dirs order.
    image, dirs = with_brokers(bootstrap(30), 1, dirs_each=3)
    image = cordon(image, 1, dirs[1][0])
    image = with_topic(image, "t", partitions=3, rf=1)
    image = apply(image, Controller(image).replication.auto_assign_dirs(1))
    placed = [p.directory(1) for _, p in sorted(image.topics.by_name["t"].partitions.items())]
    assert placed == [dirs[1][1], dirs[1][2], dirs[1][1]]


def test_a_jbod_broker_with_every_directory_cordoned_uses_its_first_live_directory() -> None:
    image, dirs = with_brokers(bootstrap(30), 1, dirs_each=2)
    image = cordon(cordon(image, 1, dirs[1][0]), 1, dirs[1][1])
    # Replicas assigned before the cordon (a manual assignment with 4.3.1 does the same).
    image = with_brokers_topic_manual(image)
    image = apply(image, Controller(image).replication.auto_assign_dirs(1))
    assert [p.directory(1) for p in image.topics.by_name["t"].partitions.values()] == [dirs[1][0]]


def with_brokers_topic_manual(image):  # noqa: ANN001, ANN201
    return apply(image, Controller(image, KAFKA_4_3).replication.create_topic(CreateTopicRequest("t", assignment=((1,),))))


# Manual assignments: refused by 4.4.0 only ------------------------------------------------------


ALL_CORDONED = "INVALID_REPLICA_ASSIGNMENT: The manual partition assignment includes broker 2, but all its log directories are cordoned."


def test_a_manual_assignment_to_an_all_cordoned_broker_is_refused_by_4_4_only() -> None:
    # RCM 4.4.0 :2049-2050 (after "no such broker", before "more than once"); 4.3.1 has no such check.
    image, dirs = with_brokers(bootstrap(30), 2, dirs_each=1)
    image = cordon(image, 2, dirs[2][0])
    request = CreateTopicRequest("t", assignment=((1, 2),))
    with pytest.raises(ControllerApiError) as raised:
        Controller(image, KAFKA_4_4).replication.create_topic(request)
    assert str(raised.value) == ALL_CORDONED
    with pytest.raises(ControllerApiError, match="broker 9, but no such broker"):
        Controller(image, KAFKA_4_4).replication.create_topic(CreateTopicRequest("t", assignment=((9, 2),)))
    assert Controller(image, KAFKA_4_3).replication.create_topic(request).records


def test_a_reassignment_onto_an_all_cordoned_broker_is_refused_by_4_4_only() -> None:
    image, dirs = with_brokers(bootstrap(30), 2, dirs_each=2)
    image = apply(image, Controller(image).replication.create_topic(CreateTopicRequest("t", assignment=((1,),))))
    image = cordon(cordon(image, 2, dirs[2][0]), 2, dirs[2][1])
    target = [ReassignmentTarget("t", 0, (2,))]
    [result] = Controller(image, KAFKA_4_4).reassignment.alter_partition_reassignments(target).response
    assert str(result.error) == ALL_CORDONED
    [result] = Controller(image, KAFKA_4_3).reassignment.alter_partition_reassignments(target).response
    assert result.succeeded
    # One uncordoned directory is enough.
    image = cordon(image, 2, dirs[2][1], False)
    [result] = Controller(image, KAFKA_4_4).reassignment.alter_partition_reassignments(target).response
    assert result.succeeded


# Moves into a cordoned directory: refused by the broker, both releases ----------------------------


def test_a_move_into_a_cordoned_directory_is_refused_even_where_the_replica_already_is() -> None:
    # ReplicaManager.alterReplicaLogDirs (4.3.1 ReplicaManager.scala:1134-1137): offline first, then cordoned.
    image, dirs = with_brokers(bootstrap(30), 1, dirs_each=2)
    image = apply(image, Controller(image).replication.create_topic(CreateTopicRequest("t", assignment=((1,), (1,)))))
    image = apply(image, Controller(image).replication.auto_assign_dirs(1))
    image = cordon(image, 1, dirs[1][1])
    home = image.topics.by_name["t"].partitions[0].directory(1)
    moves = [ReplicaDirMove("t", 0, 1, dirs[1][1]), ReplicaDirMove("t", 1, 1, home)]
    result = Controller(image).reassignment.alter_replica_log_dirs(moves)
    assert str(result.response[0].error) == "INVALID_REPLICA_ASSIGNMENT: Log directory /data/b1/d2 is cordoned"
    if home == dirs[1][1]:
        assert not result.response[1].succeeded
    else:
        assert result.response[1].succeeded
