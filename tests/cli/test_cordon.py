"""KIP-1066 through the CLI, with exact output: cordon-dir/uncordon-dir as the dynamic
cordoned.log.dirs plus the broker's heartbeat, server.properties' cordoned.log.dirs at
`broker register --config`, and what `reassign execute` and `log-dirs describe` print."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kjbod.records import CONFIG_RESOURCE_BROKER
from kjbod.state import read_image

from ..conftest import Cli
from .support import CLUSTER_ID, formatted_controller, write_config

DIRS = {1: ["ZNJ-ywU0nnQwRv5eRRU9ow", "XcZZOzUqS4yHOjhMQB6JLQ"], 2: ["AAAAAAAAAAAAAAAAAAAAZA", "AAAAAAAAAAAAAAAAAAAAZQ"]}


@pytest.fixture
def cluster(cli: Cli, bootstrapped: Path) -> Cli:
    """Two unfenced brokers with two directories each, and topic t (one partition on broker 1)."""
    for broker, (d1, d2) in DIRS.items():
        assert cli("broker", "register", "--id", str(broker), "--dir", f"/data/b{broker}/d1={d1}", "--dir", f"/data/b{broker}/d2={d2}").exit_code == 0
        assert cli("broker", "heartbeat", "--id", str(broker)).exit_code == 0
    assert cli("topic", "create", "t", "--replica-assignment", "1").exit_code == 0
    assert cli("assign-dirs", "--broker", "1", "--auto").exit_code == 0
    return cli


def plan(tmp_path: Path, replicas: list[int], log_dirs: list[str]) -> str:
    path = tmp_path / "plan.json"
    path.write_text(json.dumps({"version": 1, "partitions": [{"topic": "t", "partition": 0, "replicas": replicas, "log_dirs": log_dirs}]}))
    return str(path)


def test_cordon_and_uncordon_write_the_dynamic_config(cluster: Cli, bootstrapped: Path) -> None:
    result = cluster("broker", "cordon-dir", "--id", "2", "--dir", "/data/b2/d2")
    assert (result.exit_code, result.stdout) == (0, f"Directory {DIRS[2][1]} (/data/b2/d2) of broker 2 is cordoned: it takes no new replicas.\n")
    image = read_image(bootstrapped)
    assert image.configs.get(CONFIG_RESOURCE_BROKER, "2") == {"cordoned.log.dirs": "/data/b2/d2"}
    assert image.cluster.brokers[2].cordoned == (DIRS[2][1],)
    data = json.loads(cluster("-o", "json", "broker", "cordon-dir", "--id", "2", "--dir", "/data/b2/d1").stdout)
    assert data["cordonedLogDirs"] == "/data/b2/d2,/data/b2/d1"
    assert sorted(data["cordonedDirectories"]) == sorted(DIRS[2])
    result = cluster("broker", "uncordon-dir", "--id", "2", "--dir", DIRS[2][1])
    assert result.stdout == f"Directory {DIRS[2][1]} (/data/b2/d2) of broker 2 is uncordoned: it takes new replicas again.\n"
    assert read_image(bootstrapped).configs.get(CONFIG_RESOURCE_BROKER, "2") == {"cordoned.log.dirs": "/data/b2/d1"}


def test_cordoning_below_4_3_iv0_is_refused_with_kafkas_text(cli: Cli, state_dir: Path) -> None:
    from kjbod.records import FeatureLevelRecord
    from kjbod.state import ClusterState

    with ClusterState.open(state_dir, write=True) as state:
        state.commit([FeatureLevelRecord(name="metadata.version", feature_level=29)])
    assert cli("broker", "register", "--id", "1", "--dir", f"/d1={DIRS[1][0]}").exit_code == 0
    result = cli("broker", "cordon-dir", "--id", "1", "--dir", "/d1")
    assert (result.exit_code, result.stdout, result.stderr) == (
        1, "", "INVALID_CONFIG: The cordoned.log.dirs configuration value cannot be set because it requires metadata.version >= 4.3-IV0\n",
    )


def test_a_new_topic_avoids_a_broker_whose_directories_are_all_cordoned(cluster: Cli) -> None:
    for path in ("/data/b2/d1", "/data/b2/d2"):
        assert cluster("broker", "cordon-dir", "--id", "2", "--dir", path).exit_code == 0
    result = cluster("topic", "create", "u", "--partitions", "1", "--replication-factor", "2")
    assert (result.exit_code, result.stderr) == (
        1,
        "INVALID_REPLICATION_FACTOR: Unable to replicate the partition 2 time(s): The target replication factor of 2 cannot be "
        "reached because only 1 broker(s) are registered or some brokers have all their log directories cordoned.\n",
    )


def test_kafka_4_4_refuses_a_reassignment_onto_an_all_cordoned_broker(cluster: Cli, tmp_path: Path) -> None:
    for path in ("/data/b2/d1", "/data/b2/d2"):
        assert cluster("broker", "cordon-dir", "--id", "2", "--dir", path).exit_code == 0
    result = cluster("--kafka-version", "4.4", "reassign", "execute", "--reassignment-json-file", plan(tmp_path, [2], ["any"]))
    # As a live 4.4.0 printed it (kafka-src/evidence/live-4.4.0/re2.out).
    assert result.exit_code == 1
    assert result.stdout.splitlines() == [
        "Current partition replica assignment",
        "",
        '{"version":1,"partitions":[{"topic":"t","partition":0,"replicas":[1],"log_dirs":["/data/b1/d1"]}]}',
        "",
        "Save this to use as the --reassignment-json-file option during rollback",
    ]
    assert result.stderr == (
        "Error reassigning partition(s):\n"
        "t-0: The manual partition assignment includes broker 2, but all its log directories are cordoned.\n"
    )
    # 4.3.1 has no such check: the reassignment starts.
    result = cluster("--kafka-version", "4.3", "reassign", "execute", "--reassignment-json-file", plan(tmp_path, [2], ["any"]))
    assert (result.exit_code, result.stdout.splitlines()[-1]) == (0, "Successfully started partition reassignment for t-0")


def test_a_move_into_a_cordoned_directory_fails_after_the_reassignment_started(cluster: Cli, tmp_path: Path, bootstrapped: Path) -> None:
    assert cluster("broker", "cordon-dir", "--id", "1", "--dir", "/data/b1/d2").exit_code == 0
    result = cluster("reassign", "execute", "--reassignment-json-file", plan(tmp_path, [1], ["/data/b1/d2"]))
    # As a live 4.4.0 printed it (kafka-src/evidence/live-4.4.0/re.out), with the stack trace left out.
    assert result.exit_code == 1
    assert result.stdout.splitlines()[-2:] == [
        "Save this to use as the --reassignment-json-file option during rollback",
        "Successfully started partition reassignment for t-0",
    ]
    assert result.stderr.splitlines() == [
        "Error: Failed to alter dir for t-0-1",
        "(kjbod) the broker refused to move a replica into a cordoned directory (t-0-1: Log directory /data/b1/d2 is cordoned); "
        'the reassignment started as in Kafka and the broker\'s other directory moves stand: name another directory (or "any") '
        "for these replicas",
    ]
    # Nothing else was written: no future replica in the cordoned directory.
    image = read_image(bootstrapped)
    topic = image.topics.by_name["t"]
    assert topic.future_replica(0, 1) is None


def test_heartbeats_report_server_properties_cordoned_log_dirs(cli: Cli, tmp_path: Path) -> None:
    state = formatted_controller(cli, tmp_path)
    dirs = [tmp_path / "b1" / f"d{i}" for i in (1, 2)]
    config = write_config(
        tmp_path / "broker1.properties",
        f"process.roles=broker\nnode.id=1\nlog.dirs={dirs[0]},{dirs[1]}\ncordoned.log.dirs={dirs[1]}\n"
        "controller.quorum.voters=3000@localhost:9093\ncontroller.listener.names=CONTROLLER\n",
    )
    assert cli("format", "-c", str(config), "-t", CLUSTER_ID, state=state).exit_code == 0
    assert cli("broker", "register", "--config", str(config), state=state).exit_code == 0
    image = read_image(state)
    assert image.cluster.brokers[1].cordoned is None  # unknown until the first heartbeat
    d2 = next(d.directory_id for d in image.cluster.log_dirs[1] if d.path == str(dirs[1]))
    result = cli("broker", "heartbeat", "--id", "1", state=state)
    assert result.stdout == f"Broker 1: FENCED -> UNFENCED.\nCordoned directories reported: {dirs[1]}.\n"
    assert read_image(state).cluster.brokers[1].cordoned == (d2,)
    assert cli("broker", "heartbeat", "--id", "1", state=state).stdout == "Broker 1: UNFENCED.\n"
    # log-dirs describe prints Kafka's lines only; kjbod says it on stderr.
    described = cli("log-dirs", "describe", state=state)
    assert "cordon" not in described.stdout.lower()
    assert described.stderr == f"Broker 1: cordoned (no new replicas; kafka-log-dirs does not show it): {dirs[1]}\n"


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("*,{d1}", "requirement failed: When cordoned.log.dirs is set to *, it must not contain other values"),
        ("/elsewhere", "requirement failed: All entries in cordoned.log.dirs must be present in log.dirs or log.dir. Missing entries : /elsewhere"),
    ],
)
def test_a_broker_with_a_bad_cordoned_log_dirs_does_not_register(cli: Cli, tmp_path: Path, value: str, message: str) -> None:
    state = formatted_controller(cli, tmp_path)
    d1 = tmp_path / "b1" / "d1"
    config = write_config(
        tmp_path / "broker1.properties",
        f"process.roles=broker\nnode.id=1\nlog.dirs={d1}\ncordoned.log.dirs={value.format(d1=d1)}\n"
        "controller.quorum.voters=3000@localhost:9093\ncontroller.listener.names=CONTROLLER\n",
    )
    assert cli("format", "-c", str(config), "-t", CLUSTER_ID, state=state).exit_code == 0
    result = cli("broker", "register", "--config", str(config), state=state)
    assert (result.exit_code, result.stderr) == (1, f"{message} (in {config})\n")
    assert 1 not in read_image(state).cluster.brokers


def test_reassign_check_simulates_execute_at_the_kafka_it_speaks(cluster: Cli, tmp_path: Path) -> None:
    """The check's simulation runs execute by a controller of --kafka-version: 4.4 refuses a
    broker whose directories are all cordoned, 4.3 starts the reassignment."""
    for path in ("/data/b2/d1", "/data/b2/d2"):
        assert cluster("broker", "cordon-dir", "--id", "2", "--dir", path).exit_code == 0
    plan_file = plan(tmp_path, [2], ["any"])

    def duration(version: str) -> dict:
        result = cluster("--kafka-version", version, "-o", "json", "reassign", "check", "--reassignment-json-file", plan_file)
        (found,) = [c for c in json.loads(result.stdout)["checks"] if c["id"] == "duration.estimate"]
        return found

    refused = "execute would refuse the plan: Error reassigning partition(s): t-0: The manual partition assignment includes broker 2"
    assert duration("4.4")["skippedReason"].startswith(refused)
    assert duration("4.3")["status"] == "passed"
