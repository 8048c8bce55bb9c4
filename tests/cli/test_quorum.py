"""`kjbod quorum`: kafka-metadata-quorum's lines, streams and exit codes, on real formatted
controllers (MetadataQuorumCommand.java)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kjbod.state.cluster_state import read_image
from kjbod.storage.meta_properties import read_meta_properties

from ..conftest import Cli

CLUSTER_ID = "XcZZOzUqS4yHOjhMQB6JLQ"


def controller_config(tmp_path: Path, node_id: int, **extra: str) -> Path:
    settings = {
        "process.roles": "controller",
        "node.id": str(node_id),
        "controller.listener.names": "CONTROLLER",
        "listeners": f"CONTROLLER://controller-{node_id}:9093",
        "log.dirs": f"{tmp_path}/c{node_id}/meta",
        **extra,
    }
    path = tmp_path / f"controller-{node_id}.properties"
    path.write_text("".join(f"{k}={v}\n" for k, v in settings.items()))
    return path


def directory_id(tmp_path: Path, node_id: int) -> str:
    meta = read_meta_properties(tmp_path / f"c{node_id}" / "meta")[1]
    assert meta.directory_id is not None
    return meta.directory_id


@pytest.fixture
def standalone(cli: Cli, tmp_path: Path) -> Path:
    """Controller 1 formatted with --standalone, controllers 2 and 3 with --no-initial-controllers."""
    state = tmp_path / "quorum-state"
    for node_id, flag in ((1, "--standalone"), (2, "--no-initial-controllers"), (3, "--no-initial-controllers")):
        assert cli("format", "-c", str(controller_config(tmp_path, node_id)), "-t", CLUSTER_ID, flag, state=state).exit_code == 0
    return state


def test_describe_status_of_a_standalone_controller(cli: Cli, tmp_path: Path, standalone: Path) -> None:
    result = cli("quorum", "describe", "--status", state=standalone)
    assert (result.exit_code, result.stderr) == (0, "")
    end = read_image(standalone).next_offset
    assert result.stdout == (
        f"ClusterId:              {CLUSTER_ID}\n"
        "LeaderId:               1\n"
        "LeaderEpoch:            1\n"
        f"HighWatermark:          {end}\n"
        "MaxFollowerLag:         0\n"
        "MaxFollowerLagTimeMs:   0\n"
        f'CurrentVoters:          [{{"id": 1, "directoryId": "{directory_id(tmp_path, 1)}", "endpoints": ["CONTROLLER://controller-1:9093"]}}]\n'
        "CurrentObservers:       []\n"
    )


def test_describe_needs_exactly_one_view(cli: Cli, standalone: Path) -> None:
    for args, message in (
        ((), "One of --status or --replication must be specified with describe sub-command"),
        (("--status", "--replication"), "Only one of --status or --replication should be specified with describe sub-command"),
        (("--status", "--human-readable"), "The option --human-readable is only supported along with --replication"),
    ):
        result = cli("quorum", "describe", *args, state=standalone)
        assert (result.exit_code, result.stdout, result.stderr) == (2, "", message + "\n")


def test_grow_to_three_then_replace_a_failed_controller(cli: Cli, tmp_path: Path, standalone: Path) -> None:
    state = standalone
    c2, c3 = controller_config(tmp_path, 2), controller_config(tmp_path, 3)
    dir2 = directory_id(tmp_path, 2)

    refused = cli("quorum", "add-controller", "--config", str(c2), state=state)
    assert (refused.exit_code, refused.stdout) == (1, "")
    assert refused.stderr.splitlines()[0] == (
        "org.apache.kafka.common.errors.TimeoutException: Aborted add voter operation for since API_VERSIONS returned an error BROKER_NOT_AVAILABLE"
    )
    assert cli("quorum", "start-controller", "--config", str(c2), state=state).exit_code == 0
    lagging = cli("quorum", "add-controller", "--config", str(c2), state=state)
    assert lagging.stderr.splitlines()[0] == (
        f"org.apache.kafka.common.errors.TimeoutException: Aborted add voter operation for ReplicaKey(id=2, directoryId={dir2}) "
        "since it is lagging behind"
    )
    advanced = cli("clock", "advance", "1s", state=state)
    assert "Controller 2 caught up with the leader at 0.001s and registered." in advanced.stdout.splitlines()

    dry = cli("quorum", "add-controller", "--config", str(c2), "--dry-run", state=state)
    assert dry.stdout == f"DRY RUN of adding controller 2 with directory id {dir2} and endpoints: CONTROLLER://controller-2:9093\n"
    before = read_image(state).offset
    added = cli("quorum", "add-controller", "--config", str(c2), state=state)
    assert (added.exit_code, added.stdout) == (0, f"Added controller 2 with directory id {dir2} and endpoints: CONTROLLER://controller-2:9093\n")
    assert added.stderr.splitlines() == [
        f"The voter set is now 1, 2 (uncommitted, at offset {before + 1}); it commits at the next clock advance at which 2 of its "
        "2 voters have fetched it (kjbod clock advance 1s).",
        "Note: the quorum has 2 voters; a majority is 2, so it survives only 0 failures, as 1 voter would. "
        "Add or remove one more to keep it odd.",
    ]
    # One change at a time: controller 3 must wait for the commit.
    cli("quorum", "start-controller", "--config", str(c3), state=state)
    busy = cli("quorum", "add-controller", "--config", str(c3), state=state)
    assert busy.stderr.splitlines()[0] == (
        "org.apache.kafka.common.errors.TimeoutException: Request timed out waiting for leader to handle previous voter change request"
    )
    committed = cli("clock", "advance", "1s", state=state)
    assert f"The voter change at offset {before + 1} committed: the voters are 1, 2." in committed.stdout
    assert cli("quorum", "add-controller", "--config", str(c3), state=state).exit_code == 0
    cli("clock", "advance", "1s", state=state)
    status = cli("-o", "json", "quorum", "describe", "--status", state=state)
    data = json.loads(status.stdout)
    assert [v["id"] for v in data["voters"]] == [1, 2, 3] and data["latestVoterChange"]["committed"]

    # Controller 3's disk fails: stop it, remove it, format a new disk, start it, add it again.
    dir3 = directory_id(tmp_path, 3)
    assert cli("quorum", "stop-controller", "--controller-id", "3", state=state).exit_code == 0
    removed = cli("quorum", "remove-controller", "-i", "3", "-d", dir3, state=state)
    # 4.4.0's line has one space after the verb (4.4.0 MetadataQuorumCommand.java:508-510).
    assert (removed.exit_code, removed.stdout) == (0, f"Removed KRaft controller 3 with directory id {dir3}\n")
    cli("clock", "advance", "1s", state=state)
    import shutil

    shutil.rmtree(tmp_path / "c3")
    assert cli("format", "-c", str(c3), "-t", CLUSTER_ID, "--no-initial-controllers", state=state).exit_code == 0
    new_dir3 = directory_id(tmp_path, 3)
    assert new_dir3 != dir3
    cli("quorum", "start-controller", "--config", str(c3), state=state)
    cli("clock", "advance", "1s", state=state)
    assert cli("quorum", "add-controller", "--config", str(c3), state=state).exit_code == 0
    cli("clock", "advance", "1s", state=state)
    replication = cli("quorum", "describe", "--replication", state=state)
    rows = [line.split("\t") for line in replication.stdout.splitlines()]
    assert [(r[0].strip(), r[1].strip(), r[6].strip()) for r in rows[1:]] == [
        ("1", directory_id(tmp_path, 1), "Leader"),
        ("2", dir2, "Follower"),
        ("3", new_dir3, "Follower"),
        ("3", dir3, "Observer"),  # the failed process, until its observer session times out
    ]


def test_remove_controller_checks_its_flags_as_kafka_does(cli: Cli, standalone: Path) -> None:
    negative = cli("quorum", "remove-controller", "--controller-id", "-1", "--controller-directory-id", "x", state=standalone)
    assert (negative.exit_code, negative.stderr) == (1, "Invalid negative --controller-id: -1\n")
    bad = cli("quorum", "remove-controller", "-i", "1", "-d", "not-a-uuid", state=standalone)
    assert bad.exit_code == 1 and bad.stderr.startswith("Failed to parse --controller-directory-id: ")


def test_a_static_quorum_refuses_reconfiguration_until_kraft_version_1(cli: Cli, tmp_path: Path) -> None:
    state = tmp_path / "static"
    voters = "1@controller-1:9093,2@controller-2:9093,3@controller-3:9093"
    configs = {i: controller_config(tmp_path, i, **{"controller.quorum.voters": voters}) for i in (1, 2, 3)}
    for config in configs.values():
        assert cli("format", "-c", str(config), "-t", CLUSTER_ID, state=state).exit_code == 0
    result = cli("-o", "json", "quorum", "remove-controller", "-i", "3", "-d", "pF8N-Wl7SQ6r3M9Su_wzdw", state=state)
    assert result.exit_code == 1
    assert json.loads(result.stdout) == {"error": {
        "message": "org.apache.kafka.common.errors.UnsupportedVersionException: Cluster doesn't support removing voter because the kraft.version feature is 0",
        "exitCode": 1,
    }}
    assert result.stderr.splitlines()[1] == "Enable KIP-853 reconfiguration first: kjbod features upgrade --feature kraft.version=1"
    cli("clock", "advance", "1s", state=state)
    for node_id in (2, 3):
        assert cli("quorum", "start-controller", "--config", str(configs[node_id]), state=state).exit_code == 0
    upgraded = cli("features", "upgrade", "--feature", "kraft.version=1", state=state)
    assert (upgraded.exit_code, upgraded.stdout) == (0, "kraft.version was upgraded to 1.\n")
    status = json.loads(cli("-o", "json", "quorum", "describe", "--status", state=state).stdout)
    assert (status["kraftVersion"], status["staticVoters"]) == (1, False)
    assert all(v["directoryId"] for v in status["voters"])


def test_add_controller_reads_the_config_as_kafka_does(cli: Cli, tmp_path: Path, standalone: Path) -> None:
    missing = cli("quorum", "add-controller", "--config", str(tmp_path / "nope.properties"), state=standalone)
    # 4.4.0 MetadataQuorumCommand.java:174; 4.3.1's text at :171.
    assert (missing.exit_code, missing.stderr) == (1, f"Properties file {tmp_path / 'nope.properties'} does not exist.\n")
    old = cli("--kafka-version", "4.3", "quorum", "add-controller", "--config", str(tmp_path / "nope.properties"), state=standalone)
    assert (old.exit_code, old.stderr) == (1, f"Properties file {tmp_path / 'nope.properties'} does not exists!\n")
    broker = controller_config(tmp_path, 7, **{"process.roles": "broker"})
    assert cli("quorum", "add-controller", "-c", str(broker), state=standalone).stderr == (
        "process.roles did not contain 'controller' in configuration file. Is this a valid controller configuration file?\n"
    )
    unformatted = controller_config(tmp_path, 8)
    assert cli("quorum", "add-controller", "-c", str(unformatted), state=standalone).stderr == (
        f"Unable to read meta.properties from {tmp_path}/c8/meta\n"
    )
    far = controller_config(tmp_path, 9, listeners="CONTROLLER://controller-9:99999", **{"log.dirs": f"{tmp_path}/c2/meta"})
    assert cli("quorum", "start-controller", "-c", str(far), state=standalone).stderr == (
        f"port out of range:99999 (the CONTROLLER listener in {far})\n"
    )
    other = controller_config(tmp_path, 2, **{"controller.listener.names": "CTRL"})
    assert cli("quorum", "add-controller", "-c", str(other), state=standalone).stderr == (
        "Cannot find information about controller listener name: CTRL\n"
    )


def test_a_state_without_a_quorum_says_so(cli: Cli, bootstrapped: Path) -> None:
    result = cli("quorum", "describe", "--status")
    assert result.exit_code == 1
    assert result.stderr.startswith("The cluster state has no controller quorum")


def test_a_quorum_exported_and_imported_through_kafkas_snapshot_format(cli: Cli, tmp_path: Path) -> None:
    fixture = Path(__file__).parents[1] / "fixtures" / "kafka" / "quorum-export" / "00000000000000000029-0000000001.checkpoint"
    state = tmp_path / "imported"
    result = cli("import", "cluster", "--metadata-snapshot", str(fixture), "--cluster-id", "ALH8esX1S5Gbv6IDnqJsvQ", state=state)
    assert result.exit_code == 0, result.stderr
    assert (
        "Controller quorum: voters 1, 2, 3 (kraft.version 1); the snapshot does not say which leads, so controller 1 does here."
        in result.stdout.splitlines()
    )
    status = cli("quorum", "describe", "--status", state=state).stdout.splitlines()
    assert status[:3] == ["ClusterId:              ALH8esX1S5Gbv6IDnqJsvQ", "LeaderId:               1", "LeaderEpoch:            1"]
    exported = tmp_path / "exported"
    exported.mkdir()
    assert cli("metadata", "export", "--kafka-snapshot", str(exported), state=state).exit_code == 0
    again = tmp_path / "again"
    [snapshot] = exported.iterdir()
    assert cli("import", "cluster", "--metadata-snapshot", str(snapshot), state=again).exit_code == 0
    assert cli("quorum", "describe", "--status", state=again).stdout.splitlines()[6] == status[6]


def test_a_refusal_is_kafkas_exception_line_then_kjbods_note_from_the_error_handler(cli: Cli, tmp_path: Path, standalone: Path) -> None:
    """The refusal goes through the one error handler: Kafka's line, kjbod's advice, exit 1; with
    -o json, the error document."""
    config = controller_config(tmp_path, 2)
    text = cli("quorum", "add-controller", "--config", str(config), state=standalone)
    kafka_line = (
        "org.apache.kafka.common.errors.TimeoutException: Aborted add voter operation for since API_VERSIONS returned an error BROKER_NOT_AVAILABLE"
    )
    lines = text.stderr.splitlines()
    assert (text.exit_code, text.stdout, len(lines), lines[0]) == (1, "", 2, kafka_line)
    assert "start-controller" in lines[1]
    as_json = cli("-o", "json", "quorum", "add-controller", "--config", str(config), state=standalone)
    assert (as_json.exit_code, as_json.stderr) == (1, text.stderr)
    assert json.loads(as_json.stdout) == {"error": {"message": kafka_line, "exitCode": 1}}


def three_voters(cli: Cli, tmp_path: Path, state: Path) -> None:
    """Grow the standalone quorum to voters 1, 2, 3, every change committed."""
    for node_id in (2, 3):
        config = str(controller_config(tmp_path, node_id))
        assert cli("quorum", "start-controller", "--config", config, state=state).exit_code == 0
        cli("clock", "advance", "1s", state=state)
        assert cli("quorum", "add-controller", "--config", config, state=state).exit_code == 0
        cli("clock", "advance", "1s", state=state)


def test_remove_controller_unregister_at_4_4(cli: Cli, tmp_path: Path, standalone: Path) -> None:
    """KIP-1312: remove-controller --unregister (4.4.0 MetadataQuorumCommand.java:496-556)."""
    state = standalone
    three_voters(cli, tmp_path, state)
    dir1, dir3 = directory_id(tmp_path, 1), directory_id(tmp_path, 3)
    dry = cli("quorum", "remove-controller", "-i", "3", "-d", dir3, "--unregister", "--dry-run", state=state)
    assert (dry.exit_code, dry.stdout) == (
        0, f"DRY RUN of removing KRaft controller 3 with directory id {dir3}\nDRY RUN of unregistering KRaft controller 3\n"
    )
    cli("quorum", "stop-controller", "-i", "3", state=state)
    done = cli("quorum", "remove-controller", "-i", "3", "-d", dir3, "--unregister", state=state)
    assert (done.exit_code, done.stdout) == (0, f"Removed KRaft controller 3 with directory id {dir3}\nUnregistered KRaft controller 3\n")
    assert 3 not in read_image(state).cluster.controllers
    cli("clock", "advance", "1s", state=state)

    # Not a voter any more: Kafka's message for a VoterNotFoundException with --unregister (:529-540).
    gone = cli("quorum", "remove-controller", "-i", "3", "-d", dir3, "--unregister", state=state)
    assert (gone.exit_code, gone.stdout) == (1, "")
    # (The voter set prints in Java's HashSet order, which depends on the random directory ids.)
    first = gone.stderr.splitlines()[0]
    assert first.startswith(
        f"Failed to remove KRaft voter 3: Cannot remove voter ReplicaKey(id=3, directoryId={dir3}) from the set of voters [ReplicaKey("
    )
    assert first.endswith(")]. To unregister the controller from the cluster, run `kafka-cluster.sh unregister-controller --id 3`.")
    # The leader removing itself still leads: the removal stands, the unregistration is refused (:547-551, note the `..`).
    leader = cli("quorum", "remove-controller", "-i", "1", "-d", dir1, "--unregister", state=state)
    assert (leader.exit_code, leader.stdout) == (1, f"Removed KRaft controller 1 with directory id {dir1}\n")
    assert "Failed to unregister controller 1: Controller cannot unregister itself while it is active.. To unregister the controller " \
        "from the cluster, run `kafka-cluster.sh unregister-controller --id 1`." in leader.stderr.splitlines()
    assert read_image(state).quorum.voter_ids == (2,)
    cli("quorum", "stop-controller", "-i", "1", state=state)
    cli("clock", "advance", "1s", state=state)
    # kafka-cluster unregister-controller (4.4.0 ClusterTool.java:200-211).
    unregistered = cli("quorum", "unregister-controller", "--id", "1", state=state)
    assert (unregistered.exit_code, unregistered.stdout, unregistered.stderr) == (0, "Controller 1 is no longer registered.\n", "")
    again = cli("quorum", "unregister-controller", "--id", "1", state=state)
    assert (again.exit_code, again.stdout, again.stderr) == (
        1, "", "org.apache.kafka.common.errors.ControllerIdNotRegisteredException: Controller ID 1 is not currently registered.\n"
    )
    active = cli("quorum", "unregister-controller", "--id", "2", state=state)
    assert active.stderr.splitlines()[0] == "org.apache.kafka.common.errors.InvalidRequestException: Controller cannot unregister itself while it is active."


def test_unregistration_needs_metadata_version_4_4_iv2(cli: Cli, tmp_path: Path) -> None:
    state = tmp_path / "old-mv"
    for node_id, flag in ((1, "--standalone"), (2, "--no-initial-controllers")):
        config = str(controller_config(tmp_path, node_id))
        assert cli("format", "-c", config, "-t", CLUSTER_ID, flag, "--release-version", "4.3", state=state).exit_code == 0
    config2 = str(controller_config(tmp_path, 2))
    cli("quorum", "start-controller", "--config", config2, state=state)
    cli("clock", "advance", "1s", state=state)
    cli("quorum", "add-controller", "--config", config2, state=state)
    cli("clock", "advance", "1s", state=state)
    dir2 = directory_id(tmp_path, 2)
    removed = cli("quorum", "remove-controller", "-i", "2", "-d", dir2, "--unregister", state=state)
    assert (removed.exit_code, removed.stdout) == (1, f"Removed KRaft controller 2 with directory id {dir2}\n")
    assert removed.stderr.splitlines()[-2:] == [
        "Failed to unregister controller 2: The current MetadataVersion is too old to support controller unregistration.. "
        "To unregister the controller from the cluster, run `kafka-cluster.sh unregister-controller --id 2`.",
        "The removal was made. Unregistering a controller needs metadata.version 4.4-IV2: kjbod features upgrade --release-version 4.4",
    ]
    # kafka-cluster prints its own line for an UnsupportedVersionException, and exits 0 (ClusterTool.java:205-206).
    tool = cli("quorum", "unregister-controller", "--id", "2", state=state)
    assert (tool.exit_code, tool.stdout) == (0, "The target cluster does not support the controller unregistration API.\n")


def test_at_4_3_remove_controller_has_two_spaces_and_no_unregister(cli: Cli, tmp_path: Path, standalone: Path) -> None:
    state = standalone
    three_voters(cli, tmp_path, state)
    dir3 = directory_id(tmp_path, 3)
    # 4.3.1 MetadataQuorumCommand.java:505-508: "%s KRaft controller" after "DRY RUN of removing ".
    dry = cli("--kafka-version", "4.3", "quorum", "remove-controller", "-i", "3", "-d", dir3, "--dry-run", state=state)
    assert (dry.exit_code, dry.stdout) == (0, f"DRY RUN of removing  KRaft controller 3 with directory id {dir3}\n")
    for args in (("remove-controller", "-i", "3", "-d", dir3, "--unregister"), ("unregister-controller", "--id", "3")):
        refused = cli("--kafka-version", "4.3", "quorum", *args, state=state)
        assert (refused.exit_code, refused.stdout) == (2, "")
        assert "needs Kafka 4.4 (KIP-1312)" in refused.stderr
    assert 3 in read_image(state).cluster.controllers


def test_unregister_with_a_removal_kafka_cannot_make(cli: Cli, tmp_path: Path) -> None:
    """With --unregister, an UnsupportedVersionException of the removal gets Kafka's own message
    (4.4.0 MetadataQuorumCommand.java:529-540), then kjbod's note; nothing is written."""
    state = tmp_path / "static"
    voters = "1@controller-1:9093,2@controller-2:9093,3@controller-3:9093"
    for i in (1, 2, 3):
        assert cli("format", "-c", str(controller_config(tmp_path, i, **{"controller.quorum.voters": voters})), "-t", CLUSTER_ID, state=state).exit_code == 0
    before = read_image(state).offset
    result = cli("quorum", "remove-controller", "-i", "3", "-d", "pF8N-Wl7SQ6r3M9Su_wzdw", "--unregister", state=state)
    assert (result.exit_code, result.stdout) == (1, "")
    assert result.stderr.splitlines() == [
        "Failed to remove KRaft voter 3: Cluster doesn't support removing voter because the kraft.version feature is 0. "
        "To unregister the controller from the cluster, run `kafka-cluster.sh unregister-controller --id 3`.",
        "Enable KIP-853 reconfiguration first: kjbod features upgrade --feature kraft.version=1",
    ]
    assert read_image(state).offset == before
