"""`kjbod broker`, `topic`, `assign-dirs` and `elect` through the CLI, with exact output."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ..conftest import Cli

DIRS = {
    1: ["ZNJ-ywU0nnQwRv5eRRU9ow", "XcZZOzUqS4yHOjhMQB6JLQ"],
    2: ["AAAAAAAAAAAAAAAAAAAAZA", "AAAAAAAAAAAAAAAAAAAAZQ"],
    3: ["AAAAAAAAAAAAAAAAAAAAZg", "AAAAAAAAAAAAAAAAAAAAZw"],
}


@pytest.fixture
def cluster(cli: Cli, bootstrapped: Path) -> Cli:
    """Three unfenced brokers in three racks, two directories each, and a topic of 3 partitions."""
    for broker, (d1, d2) in DIRS.items():
        assert cli("broker", "register", "--id", str(broker), "--rack", f"r{broker}",
                   "--dir", f"/data/b{broker}/d1={d1}", "--dir", f"/data/b{broker}/d2={d2}").exit_code == 0
        assert cli("broker", "heartbeat", "--id", str(broker)).exit_code == 0
    assert cli("topic", "create", "orders", "--replica-assignment", "1:2:3,2:3:1,3:1:2").exit_code == 0
    for broker in DIRS:
        assert cli("assign-dirs", "--broker", str(broker), "--auto").exit_code == 0
    return cli


def test_register_and_heartbeat_lines(cli: Cli, bootstrapped: Path) -> None:
    result = cli("broker", "register", "--id", "1", "--dir", f"/d1={DIRS[1][0]}", "--dir", f"/d2={DIRS[1][1]}")
    assert (result.exit_code, result.stdout) == (0, "Registered broker 1 with epoch 1: FENCED, 2 online directories.\n")
    assert cli("broker", "heartbeat", "--id", "1", "--no-unfence").stdout == "Broker 1: FENCED.\n"
    assert cli("broker", "heartbeat", "--id", "1").stdout == "Broker 1: FENCED -> UNFENCED.\n"


def test_registration_errors_are_one_line(cli: Cli, bootstrapped: Path) -> None:
    result = cli("broker", "register", "--id", "1")
    assert (result.exit_code, result.stderr) == (1, "INVALID_REGISTRATION: No directories specified in request\n")
    result = cli("broker", "register", "--id", "1", "--dir", "/d1=not-an-id")
    assert result.exit_code == 1 and result.stderr.startswith("Invalid directory id in --dir '/d1=not-an-id': ")
    assert cli("broker", "register").exit_code == 2


def test_a_state_without_metadata_version_says_how_to_fix_it(cli: Cli) -> None:
    result = cli("broker", "register", "--id", "1", "--dir", f"/d1={DIRS[1][0]}")
    assert result.exit_code == 1 and "has no metadata.version yet" in result.stderr


def test_topic_describe_shows_directories_with_paths_and_offline_replicas(cluster: Cli) -> None:
    lines = cluster("topic", "describe", "orders").stdout.splitlines()
    assert lines[0].startswith("Topic: orders\tTopicId: ") and lines[0].endswith("\tPartitionCount: 3\tReplicationFactor: 3\tConfigs: ")
    assert lines[1] == (
        "\tTopic: orders\tPartition: 0\tLeader: 1\tReplicas: 1,2,3\tIsr: 1,2,3\tElr: \tLastKnownElr: "
        "\tDirectories: /data/b1/d1,/data/b2/d1,/data/b3/d1\tOffline: "
    )
    result = cluster("broker", "fail-dir", "--id", "2", "--dir", "/data/b2/d1")
    assert result.stdout.splitlines()[:2] == ["Broker 2: UNFENCED.", f"Directory {DIRS[2][0]} (/data/b2/d1) is offline."]
    described = cluster("topic", "describe", "orders").stdout.splitlines()
    offline_lines = [line for line in described[1:] if line.endswith("Offline: 2")]
    assert offline_lines and all("/data/b2/d1" in line for line in offline_lines)
    assert all("Isr: 2" not in line and ",2" not in line.split("Isr: ")[1].split("\t")[0] for line in offline_lines)


def test_failing_the_only_in_sync_copy_reports_the_partition_offline(cli: Cli, bootstrapped: Path) -> None:
    cli("broker", "register", "--id", "1", "--dir", f"/data/d1={DIRS[1][0]}")
    cli("broker", "heartbeat", "--id", "1")
    cli("topic", "create", "solo", "--replica-assignment", "1")
    result = cli("broker", "fail-dir", "--id", "1", "--dir", "/data/d1")
    assert result.stdout.splitlines() == [
        "Broker 1: UNFENCED.",
        f"Directory {DIRS[1][0]} (/data/d1) is offline.",
        "1 partition(s) changed:",
        "  solo-0: leader 1 -> none (offline: no leader)",
        "No leader now (offline): solo-0",
    ]


def test_broker_list_and_describe(cluster: Cli) -> None:
    cluster("broker", "cordon-dir", "--id", "3", "--dir", "/data/b3/d2")
    listed = cluster("broker", "list").stdout.splitlines()
    assert listed[0].split() == ["ID", "RACK", "STATE", "EPOCH", "DIRS", "ONLINE", "CORDONED", "REPLICAS", "LEADERS"]
    assert listed[2].split() == ["1", "r1", "UNFENCED", "1", "2/2", "0", "3", "1"]
    assert listed[4].split()[:6] == ["3", "r3", "UNFENCED", "9", "2/2", "1"]  # each first heartbeat writes its cordoned report
    rows = json.loads(cluster("-o", "json", "broker", "list").stdout)
    assert [r["leaders"] for r in rows] == [1, 1, 1]
    details = json.loads(cluster("-o", "json", "broker", "describe", "--id", "3").stdout)
    assert [(d["path"], d["state"]) for d in details["directories"]] == [("/data/b3/d1", "online"), ("/data/b3/d2", "cordoned")]
    assert sum(d["replicas"] for d in details["directories"]) == 3
    text = cluster("broker", "describe", "--id", "3").stdout.splitlines()
    assert text[0].startswith("Broker 3: UNFENCED, epoch 9, rack r3, incarnation ")


def test_controlled_shutdown_then_preferred_election_is_not_possible_yet(cluster: Cli) -> None:
    result = cluster("broker", "shutdown", "--id", "1")
    assert result.stdout.startswith("Broker 1: controlled shutdown done, leadership moved off 1 partition(s); the broker is FENCED.\n")
    result = cluster("elect", "--election-type", "preferred", "--topic", "orders", "--partition", "0")
    assert result.exit_code == 1
    assert result.stdout == (
        "Error completing leader election (PREFERRED) for partition: orders-0: "
        "org.apache.kafka.common.errors.PreferredLeaderNotAvailableException: The preferred leader was not available.\n"
    )
    assert result.stderr == "1 replica(s) could not be elected\n"
    assert cluster("elect", "--election-type", "PREFERRED", "--all-topic-partitions").stdout == "Error completing leader election (PREFERRED) for partition: orders-0: org.apache.kafka.common.errors.PreferredLeaderNotAvailableException: The preferred leader was not available.\n"


def test_unclean_election_says_data_may_be_lost(cli: Cli, bootstrapped: Path) -> None:
    for broker in (1, 2):
        cli("broker", "register", "--id", str(broker), "--dir", f"/b{broker}={DIRS[broker][0]}")
        cli("broker", "heartbeat", "--id", str(broker))
    cli("topic", "create", "t", "--replica-assignment", "1:2")
    cli("broker", "fence", "--id", "2")
    cli("broker", "fence", "--id", "1")
    cli("broker", "heartbeat", "--id", "2")
    result = cli("elect", "--election-type", "unclean", "--all-topic-partitions")
    assert (result.exit_code, result.stdout) == (0, "Successfully completed leader election (UNCLEAN) for partitions t-0\n")
    assert result.stderr.startswith("WARNING: unclean leader election for t-0: the new leader was not in sync, so committed data may be lost")
    assert cli("elect", "--election-type", "unclean", "--topic", "t", "--partition", "0").stdout == "Valid replica already elected for partitions t-0\n"


def test_elect_option_rules(cluster: Cli, tmp_path: Path) -> None:
    assert cluster("elect", "--election-type", "PREFERRED").exit_code == 2
    assert cluster("elect", "--election-type", "PREFERRED", "--topic", "orders").exit_code == 2
    bad = tmp_path / "e.json"
    bad.write_text('{"partitions": [{"topic": "orders", "partition": 0}, {"topic": "orders", "partition": 0}]}')
    result = cluster("elect", "--election-type", "PREFERRED", "--path-to-json-file", str(bad))
    assert (result.exit_code, result.stderr) == (1, "Replica election data contains duplicate partitions: [orders-0]\n")
    bad.write_text("{}")
    assert cluster("elect", "--election-type", "PREFERRED", "--path-to-json-file", str(bad)).stderr == "Replica election data is empty\n"


def test_assign_dirs_results_and_exit_code(cluster: Cli) -> None:
    result = cluster("assign-dirs", "--broker", "1", "--assign", "orders:0=/data/b1/d2", "--assign", "orders:9=/data/b1/d2")
    assert result.exit_code == 1
    assert result.stdout.splitlines()[:2] == [
        f"orders-0 -> {DIRS[1][1]} (/data/b1/d2): NONE",
        f"orders-9 -> {DIRS[1][1]} (/data/b1/d2): UNKNOWN_TOPIC_OR_PARTITION",
    ]
    assert result.stderr == "1 out of 2 assignment(s) failed.\n"
    assert cluster("assign-dirs", "--broker", "1", "--auto").stdout == "Every replica of broker 1 already has an online directory.\n"
    assert cluster("assign-dirs", "--broker", "1").exit_code == 2


def test_topic_commands(cluster: Cli) -> None:
    assert cluster("topic", "create", "a.b", "--partitions", "1", "--replication-factor", "1", "--seed", "3").stdout == (
        "WARNING: Due to limitations in metric names, topics with a period ('.') or underscore ('_') could collide. "
        "To avoid issues it is best to use either, but not both.\nCreated topic a.b.\n"
    )
    result = cluster("topic", "create", "x", "--partitions", "1", "--replication-factor", "4")
    assert (result.exit_code, result.stderr) == (
        1,
        "INVALID_REPLICATION_FACTOR: Unable to replicate the partition 4 time(s): The target replication factor of 4 "
        "cannot be reached because only 3 broker(s) are registered or some brokers have all their log directories cordoned.\n",
    )
    assert cluster("topic", "create", "y", "--replica-assignment", "1:1").stderr == "Partition replica lists may not contain duplicate entries: 1\n"
    assert cluster("topic", "create", "y", "--partitions", "1").exit_code == 2
    assert cluster("topic", "set-size", "orders", "--bytes", "1000").stdout == "Set the size of 3 partition(s) of orders to 1000 bytes.\n"
    data = json.loads(cluster("-o", "json", "topic", "describe", "orders").stdout)
    assert [p["sizeBytes"] for p in data[0]["partitions"]] == [1000, 1000, 1000]
    # A size with a unit, as --capacity takes it.
    assert cluster("topic", "set-size", "orders", "--partition", "1", "--bytes", "1.5GiB").stdout == (
        "Set the size of 1 partition(s) of orders to 1610612736 bytes.\n"
    )
    bad = cluster("topic", "set-size", "orders", "--bytes", "-5")
    assert (bad.exit_code, bad.stderr) == (1, "Invalid --bytes '-5': give bytes, optionally with a unit (500GB, 1.5TiB)\n")
    assert cluster("topic", "delete", "orders").stdout == "Deleted topic orders.\n"
    assert cluster("topic", "describe", "orders").stderr == "Topic 'orders' does not exist as expected\n"


def test_a_topic_too_large_for_one_operation_is_one_line_and_writes_nothing(cluster: Cli, state_dir: Path) -> None:
    segments = {p.name: p.read_bytes() for p in state_dir.rglob("*") if p.is_file()}
    result = cluster("topic", "create", "huge", "--partitions", "2000000000", "--replication-factor", "3")
    assert (result.exit_code, result.stdout) == (1, "")
    assert result.stderr == (
        "POLICY_VIOLATION: Unable to perform excessively large batch operation. Creating topic huge with 2000000000 partitions "
        "needs 2000000001 records, but one operation writes at most 10000 (Kafka's MAX_RECORDS_PER_USER_OP): "
        "create it with at most 9999 partitions.\n"
    )
    assert {p.name: p.read_bytes() for p in state_dir.rglob("*") if p.is_file()} == segments
    assert cluster("topic", "describe", "huge").stderr == "Topic 'huge' does not exist as expected\n"
