"""The controller quorum (KIP-853): operation -> records -> replay -> state, one test per gate with
Kafka's error code and message (AddVoterHandler, RemoveVoterHandler, KafkaRaftClient)."""

from __future__ import annotations

import re

import pytest

from kjbod.controller import Controller, ControllerResult
from kjbod.controller.errors import Errors
from kjbod.controller.feature_control import FeatureUpdate, UpgradeType
from kjbod.controller.quorum_control import ControllerProcess, QuorumError, VoterChange
from kjbod.image import Image, ReplicaKey
from kjbod.records import (
    KRaftVersionRecord,
    NoOpRecord,
    RegisterControllerRecord,
    VoterEndpoint,
    VotersRecord,
)
from kjbod.simulation.clock import ClockControl

from .support import CLUSTER, DIRS, add, advance, grown, process, remove, standalone, start, static
from .support import apply as run

NEW_DISK_3 = "8r7iZ2qlSQOBMT7XJSbdVQ"


def refused(result: ControllerResult[VoterChange], error: Errors, message: str) -> None:
    assert result.records == ()
    assert (result.response.error.error, result.response.error.message) == (error, message)


def voters(image: Image) -> tuple[int, ...]:
    return image.quorum.voter_ids


# Where the quorum starts --------------------------------------------------------------------


def test_standalone_bootstrap_is_a_committed_voter_set_of_one_with_kraft_version_1() -> None:
    image = standalone()
    quorum = image.quorum
    assert (quorum.kraft_version, voters(image), quorum.leader_id, quorum.leader_epoch, quorum.static) == (1, (1,), 1, 1, False)
    info = Controller(image).quorum.describe()
    assert (info.high_watermark, info.log_end_offset, info.change_committed) == (image.next_offset, image.next_offset, True)


def test_a_static_quorum_has_no_directory_ids_except_the_formatting_controllers_process() -> None:
    image = static()
    assert image.quorum.static and image.quorum.kraft_version == 0
    assert [v.key for v in image.quorum.voters] == [ReplicaKey(1), ReplicaKey(2), ReplicaKey(3)]
    assert sorted(image.quorum.replicas, key=ReplicaKey.sort_key) == [ReplicaKey(1, DIRS[1]), ReplicaKey(2), ReplicaKey(3)]


# The gates of AddVoterHandler ---------------------------------------------------------------


def test_kraft_version_0_refuses_reconfiguration_with_unsupported_version() -> None:
    image = static()
    refused(add(image, 4), Errors.UNSUPPORTED_VERSION, "Cluster doesn't support adding voter because the kraft.version feature is 0")
    refused(remove(image, 3, DIRS[3]), Errors.UNSUPPORTED_VERSION, "Cluster doesn't support removing voter because the kraft.version feature is 0")


def test_a_new_voter_must_be_running() -> None:
    refused(
        add(standalone(), 2), Errors.REQUEST_TIMED_OUT, "Aborted add voter operation for since API_VERSIONS returned an error BROKER_NOT_AVAILABLE"
    )


def test_a_new_voter_must_have_caught_up_and_catches_up_at_its_rate_as_the_clock_moves() -> None:
    image = start(standalone(), 2, catch_up_rate=2)
    target = image.next_offset
    refused(add(image, 2), Errors.REQUEST_TIMED_OUT, f"Aborted add voter operation for ReplicaKey(id=2, directoryId={DIRS[2]}) since it is lagging behind")
    result = ClockControl(image).advance(1000)
    assert result.response.quorum.catching_up == ((ReplicaKey(2, DIRS[2]), 2, target),)
    image = run(image, result)
    refused(add(image, 2), Errors.REQUEST_TIMED_OUT, f"Aborted add voter operation for ReplicaKey(id=2, directoryId={DIRS[2]}) since it is lagging behind")
    # It needs the rest of the leader's log as it is now (the advance appended to it) at 2 records/s.
    needed_ms = math_ceil_ms(image.next_offset - 2, 2)
    assert ClockControl(image).advance(needed_ms - 1).response.quorum.caught_up == ()
    result = ClockControl(image).advance(needed_ms)
    assert result.response.quorum.caught_up == ((ReplicaKey(2, DIRS[2]), 1000 + needed_ms),)
    assert any(isinstance(r, RegisterControllerRecord) and r.controller_id == 2 for r in result.records)
    image = run(image, result)
    assert 2 in image.cluster.controllers
    assert add(image, 2).response.error.is_success


def math_ceil_ms(records: int, rate: int) -> int:
    return -(-records * 1000 // rate)


def test_the_caught_up_check_is_for_the_exact_directory_id() -> None:
    image = advance(start(standalone(), 2))
    other = "pF8N-Wl7SQ6r3M9Su_wzdw"
    refused(add(image, 2, directory=other), Errors.REQUEST_TIMED_OUT, f"Aborted add voter operation for ReplicaKey(id=2, directoryId={other}) since it is lagging behind")


def test_a_new_voter_must_support_the_finalized_kraft_version() -> None:
    image = advance(start(standalone(), 2, supported_features={"metadata.version": (7, 30), "kraft.version": (0, 0)}))
    refused(
        add(image, 2),
        Errors.INVALID_REQUEST,
        f"Aborted add voter operation for ReplicaKey(id=2, directoryId={DIRS[2]}) since the kraft.version range "
        "(min: 0, max: 0) doesn't support the finalized version 1",
    )


def test_one_voter_change_at_a_time() -> None:
    image = advance(start(advance(start(standalone(), 2)), 3))
    image = run(image, add(image, 2))
    refused(add(image, 3), Errors.REQUEST_TIMED_OUT, "Request timed out waiting for leader to handle previous voter change request")
    refused(remove(image, 2), Errors.REQUEST_TIMED_OUT, "Request timed out waiting for leader to handle previous voter change request")
    assert not Controller(image).quorum.describe().change_committed
    result = ClockControl(image).advance(1000)
    assert result.response.quorum.committed == (image.quorum.voters_offset, (1, 2))
    image = run(image, result)
    assert Controller(image).quorum.describe().change_committed
    assert add(image, 3).response.error.is_success


def test_an_uncommitted_change_whose_request_timed_out_blocks_the_next_one() -> None:
    image = grown(3)
    image = advance(start(image, 4))
    image = run(image, add(image, 4))  # needs 3 of the 4 voters
    image = run(image, Controller(image).quorum.stop_controller(2))
    image = run(image, Controller(image).quorum.stop_controller(3))
    image = advance(image, 3000)  # the request timed out (2 s) and the change cannot commit
    info = Controller(image).quorum.describe()
    assert not info.change_committed
    refused(
        remove(image, 4),
        Errors.REQUEST_TIMED_OUT,
        f"Request timed out waiting for voters to commit the latest voter change at Optional[{image.quorum.voters_offset}] with HWM {info.high_watermark}",
    )


def test_a_new_leader_accepts_no_change_until_a_majority_fetched_its_epoch() -> None:
    image = advance(start(grown(3), 4))
    image = run(image, Controller(image).quorum.stop_controller(1))
    assert (image.quorum.leader_id, image.quorum.leader_epoch) == (2, 2)
    refused(add(image, 4), Errors.REQUEST_TIMED_OUT, "Request timed out waiting for leader to establish HWM and fence previous voter changes")
    image = advance(image)
    assert add(image, 4).response.error.is_success


def test_a_voter_id_cannot_be_added_twice() -> None:
    image = grown(2)
    result = add(image, 2, directory=NEW_DISK_3)
    assert result.response.error.error is Errors.DUPLICATE_VOTER
    message = result.response.error.message or ""
    assert message.startswith(f"The voter id for ReplicaKey(id=2, directoryId={NEW_DISK_3}) is already part of the set of voters [")
    assert sorted(re.findall(r"ReplicaKey\(id=\d, directoryId=[^)]+\)", message.split("voters ")[1])) == [
        f"ReplicaKey(id=1, directoryId={DIRS[1]})", f"ReplicaKey(id=2, directoryId={DIRS[2]})"
    ]


def test_the_request_must_name_a_directory_and_the_leaders_listener() -> None:
    image = advance(start(standalone(), 2))
    refused(
        Controller(image).quorum.add_voter(ReplicaKey(2, "AAAAAAAAAAAAAAAAAAAAAA"), process(2).voter_endpoints),
        Errors.INVALID_REQUEST, "Add voter request didn't include a valid voter",
    )
    endpoints = (VoterEndpoint(name="OTHER", host="c2", port=9093),)
    refused(
        Controller(image).quorum.add_voter(ReplicaKey(2, DIRS[2]), endpoints),
        Errors.INVALID_REQUEST,
        "Add voter request didn't include the endpoint (Endpoints(endpoints={ListenerName(OTHER)=c2/<unresolved>:9093})) "
        "for the default listener ListenerName(CONTROLLER)",
    )


def test_a_change_whose_new_majority_cannot_run_is_refused_before_it_is_appended() -> None:
    image = advance(start(grown(3), 4))
    image = run(image, Controller(image).quorum.stop_controller(2))
    image = run(image, Controller(image).quorum.stop_controller(3))
    result = add(image, 4)
    refused(result, Errors.REQUEST_TIMED_OUT, None)  # type: ignore[arg-type]
    assert "only 2 of the 4 voters" in (result.response.note or "")


# RemoveVoterHandler -------------------------------------------------------------------------


def test_only_an_exact_voter_can_be_removed_and_never_the_last() -> None:
    image = grown(2)
    message = f"Cannot remove voter ReplicaKey(id=2, directoryId={NEW_DISK_3}) from the set of voters ["
    result = remove(image, 2, NEW_DISK_3)
    assert result.response.error.error is Errors.VOTER_NOT_FOUND and (result.response.error.message or "").startswith(message)
    refused(remove(standalone(), 1), Errors.VOTER_NOT_FOUND, f"Cannot remove voter ReplicaKey(id=1, directoryId={DIRS[1]}) from the set of voters [ReplicaKey(id=1, directoryId={DIRS[1]})]")
    refused(
        Controller(image).quorum.remove_voter(ReplicaKey(2, "AAAAAAAAAAAAAAAAAAAAAA")), Errors.INVALID_REQUEST,
        "Remove voter request didn't include a valid voter",
    )


def test_a_leader_that_removes_itself_leads_until_the_change_commits_then_resigns() -> None:
    image = grown(3)
    result = remove(image, 1)
    assert result.response.leader_resigns
    image = run(image, result)
    assert (voters(image), image.quorum.leader_id) == ((2, 3), 1)
    info = Controller(image).quorum.describe()
    assert info.leader.key.id == 1 and [r.key.id for r in info.observers] == [1]
    tick = ClockControl(image).advance(1000)
    change = tick.response.quorum.leader_change
    assert change is not None and (change.previous, change.leader, change.epoch) == (1, 2, 2)
    image = run(image, tick)
    assert (image.quorum.leader_id, image.quorum.leader_epoch) == (2, 2)
    # The old leader runs on as an observer; the new epoch is not committed before the next advance.
    info = Controller(image).quorum.describe()
    assert [r.key for r in info.observers] == [ReplicaKey(1, DIRS[1])] and info.high_watermark == -1
    assert Controller(advance(image)).quorum.describe().high_watermark > 0


def test_replacing_a_failed_voter_with_a_new_disk() -> None:
    image = grown(3)
    image = run(image, Controller(image).quorum.stop_controller(3))
    image = advance(run(image, remove(image, 3)))
    assert voters(image) == (1, 2)
    image = advance(start(image, 3, directory=NEW_DISK_3))
    image = advance(run(image, add(image, 3, directory=NEW_DISK_3)))
    assert [v.key for v in image.quorum.voters][-1] == ReplicaKey(3, NEW_DISK_3)
    assert Controller(image).quorum.describe().change_committed


# Processes and elections ----------------------------------------------------------------------


def test_a_leaderless_quorum_answers_nothing_until_a_majority_runs_again() -> None:
    image = grown(3)
    image = run(image, Controller(image).quorum.stop_controller(2))
    image = run(image, Controller(image).quorum.stop_controller(1))
    assert image.quorum.leader_id == -1
    with pytest.raises(QuorumError, match="Timed out waiting for a node assignment. Call: describeMetadataQuorum"):
        Controller(image).quorum.describe()
    refused(add(image, 4), Errors.REQUEST_TIMED_OUT, "Timed out waiting for a node assignment. Call: addRaftVoter")
    result = Controller(image).quorum.start_controller(process(2))
    assert result.response.leader_change is not None and result.response.leader_change.leader in (2, 3)
    assert run(image, result).quorum.has_leader


def test_a_running_controller_cannot_be_started_twice() -> None:
    image = start(standalone(), 2)
    with pytest.raises(Exception, match="Controller 2 is already running"):
        Controller(image).quorum.start_controller(process(2))
    with pytest.raises(Exception, match="belongs to cluster"):
        Controller(image).quorum.start_controller(
            ControllerProcess(3, DIRS[3], process(3).end_points, cluster_id="AAAAAAAAAAAAAAAAAAAAAQ", incarnation_id=CLUSTER)
        )


# kraft.version through features ---------------------------------------------------------------


def upgrade(image: Image, level: int = 1, kind: UpgradeType = UpgradeType.UPGRADE, validate_only: bool = False):  # type: ignore[no-untyped-def]
    return Controller(image).features.update_features({"kraft.version": FeatureUpdate(level, kind)}, validate_only)


def test_upgrading_kraft_version_needs_every_voter_known_and_able() -> None:
    image = advance(static())  # every voter registers once caught up
    result = upgrade(image)
    assert result.records == ()
    assert result.response.error.message == "Invalid upgrade of kraft.version to 1 because not all of the voters support it"
    for node_id in (2, 3):
        image = start(image, node_id)  # kjbod learns their directory ids and software
    assert upgrade(image, validate_only=True).records == ()
    result = upgrade(image)
    assert [type(r) for r in result.records] == [KRaftVersionRecord, VotersRecord, type(result.records[2]), NoOpRecord]
    image = run(image, result)
    assert (image.quorum.kraft_version, image.quorum.static) == (1, False)
    assert [v.key for v in image.quorum.voters] == [ReplicaKey(i, DIRS[i]) for i in (1, 2, 3)]
    assert Controller(image).features.finalized_features().levels["kraft.version"] == 1
    refused_downgrade = upgrade(image, 0, UpgradeType.SAFE_DOWNGRADE)
    assert refused_downgrade.response.error.message == "Invalid update version 0 for feature kraft.version. Can't downgrade the version of this feature."
    # The upgrade is a voter change: it commits at the next advance, then reconfiguration works.
    image = advance(start(advance(image), 4))
    assert add(image, 4).response.error.is_success


def test_an_unregistered_voter_blocks_a_feature_upgrade() -> None:
    image = static()
    result = Controller(image).features.update_features({"group.version": FeatureUpdate(1)})
    assert result.response.error.message == (
        "Invalid update version 1 for feature group.version. controller 2 has not registered, and may not support this feature"
    )
    assert advance(image).cluster.controllers.keys() == {1, 2, 3}


def test_advance_until_idle_waits_for_a_catching_up_controller() -> None:
    image = start(standalone(), 2, catch_up_rate=3)
    result = ClockControl(image).advance_until_idle()
    assert result.response.quorum.caught_up == ((ReplicaKey(2, DIRS[2]), math_ceil_ms(image.next_offset, 3)),)
    assert result.response.now_ms == math_ceil_ms(image.next_offset, 3)


# Unregistering a controller (KIP-1312, 4.4.0) ------------------------------------------------------

MV_4_4_IV2 = 33


def test_remove_with_unregister_appends_the_unregistration_after_the_voter_change() -> None:
    # MetadataQuorumCommand.handleRemoveController (4.4.0 :505-518): removeRaftVoter, then
    # unregisterController; CCM.unregisterController writes one UnregisterControllerRecord (:513-516).
    image = grown(3, MV_4_4_IV2)
    assert sorted(image.cluster.controllers) == [1, 2, 3]
    result = Controller(image).quorum.remove_voter(ReplicaKey(3, DIRS[3]), unregister=True)
    assert result.response.unregistration is not None and result.response.unregistration.is_success
    assert [type(r).__name__ for r in result.records][-1] == "UnregisterControllerRecord"
    image = run(image, result)
    assert voters(image) == (1, 2) and sorted(image.cluster.controllers) == [1, 2]


def test_without_unregister_the_registration_stays() -> None:
    image = grown(2, MV_4_4_IV2)
    result = remove(image, 2)
    assert result.response.unregistration is None
    assert sorted(run(image, result).cluster.controllers) == [1, 2]


def test_unregistration_refusals_leave_the_removal_made() -> None:
    # CCM.unregisterController (4.4.0 :504-509): metadata.version below 4.4-IV2 first.
    old = grown(2, 30)
    result = Controller(old).quorum.remove_voter(ReplicaKey(2, DIRS[2]), unregister=True)
    assert result.records and result.response.unregistration is not None
    assert (result.response.unregistration.error, result.response.unregistration.message) == (
        Errors.UNSUPPORTED_VERSION, "The current MetadataVersion is too old to support controller unregistration."
    )
    assert all(type(r).__name__ != "UnregisterControllerRecord" for r in result.records)
    # QuorumController.unregisterController (4.4.0 :2167-2168): the active controller itself;
    # a leader removing itself still leads until its removal commits.
    result = Controller(grown(3, MV_4_4_IV2)).quorum.remove_voter(ReplicaKey(1, DIRS[1]), unregister=True)
    assert result.response.leader_resigns and result.records
    assert (result.response.unregistration.error, result.response.unregistration.message) == (  # type: ignore[union-attr]
        Errors.INVALID_REQUEST, "Controller cannot unregister itself while it is active."
    )


def test_a_refused_removal_attempts_no_unregistration() -> None:
    result = Controller(grown(2, MV_4_4_IV2)).quorum.remove_voter(ReplicaKey(2, NEW_DISK_3), unregister=True)
    assert result.records == () and result.response.error.error is Errors.VOTER_NOT_FOUND and result.response.unregistration is None


def test_unregister_controller_on_its_own() -> None:
    image = grown(3, MV_4_4_IV2)
    image = advance(run(image, remove(image, 3)))
    # Kafka does not check voter membership (CCM 4.4.0 :504-516): a voter can be unregistered too.
    result = Controller(image).quorum.unregister_controller(2)
    assert (result.response.is_success, [type(r).__name__ for r in result.records]) == (True, ["UnregisterControllerRecord"])
    image = run(image, Controller(image).quorum.unregister_controller(3))
    assert sorted(image.cluster.controllers) == [1, 2]
    again = Controller(image).quorum.unregister_controller(3)
    assert again.records == ()
    assert (again.response.error, again.response.message) == (Errors.CONTROLLER_ID_NOT_REGISTERED, "Controller ID 3 is not currently registered.")
    active = Controller(image).quorum.unregister_controller(1)
    assert (active.response.error, active.response.message) == (Errors.INVALID_REQUEST, "Controller cannot unregister itself while it is active.")


def test_an_unregistered_controller_that_still_runs_registers_again() -> None:
    # ControllerRegistrationManager.onMetadataUpdate (4.3.1 kafka_2.13 ControllerRegistrationManager.scala:158-193):
    # a running controller whose registration is gone sends it again.
    image = grown(3, MV_4_4_IV2)
    image = run(image, Controller(image).quorum.remove_voter(ReplicaKey(3, DIRS[3]), unregister=True))
    assert 3 not in image.cluster.controllers
    assert 3 in advance(image).cluster.controllers
    stopped = run(image, Controller(image).quorum.stop_controller(3))
    assert 3 not in advance(stopped).cluster.controllers
