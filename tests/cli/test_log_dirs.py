"""`kjbod log-dirs` through the CLI: Kafka's lines and streams, --from-disk, import."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ..conftest import Cli

D = {
    (1, 1): "ZNJ-ywU0nnQwRv5eRRU9ow", (1, 2): "XcZZOzUqS4yHOjhMQB6JLQ",
    (2, 1): "AAAAAAAAAAAAAAAAAAAAZA", (2, 2): "AAAAAAAAAAAAAAAAAAAAZQ",
}
ERROR = "org.apache.kafka.common.errors.KafkaStorageException"


@pytest.fixture
def cluster(cli: Cli, bootstrapped: Path) -> Cli:
    """Brokers 1 and 2 with two directories each; orders-0/1 placed explicitly; /data/b2/d1 failed."""
    for broker in (1, 2):
        dirs = [f"--dir=/data/b{broker}/d{i}={D[(broker, i)]}" for i in (1, 2)]
        assert cli("broker", "register", "--id", str(broker), *dirs).exit_code == 0
        assert cli("broker", "heartbeat", "--id", str(broker)).exit_code == 0
    assert cli("topic", "create", "orders", "--replica-assignment", "1:2,2:1").exit_code == 0
    assert cli("assign-dirs", "--broker", "1", "--assign", "orders:0=/data/b1/d1", "--assign", "orders:1=/data/b1/d2").exit_code == 0
    assert cli("assign-dirs", "--broker", "2", "--assign", "orders:0=/data/b2/d2", "--assign", "orders:1=/data/b2/d2").exit_code == 0
    assert cli("topic", "set-size", "orders", "--bytes", "1000").exit_code == 0
    assert cli("topic", "set-size", "orders", "--partition", "1", "--bytes", "77").exit_code == 0
    assert cli("broker", "fail-dir", "--id", "2", "--dir", "/data/b2/d1").exit_code == 0
    return cli


EXPECTED = {
    "brokers": [
        {"broker": 1, "logDirs": [
            {"partitions": [{"partition": "orders-0", "size": 1000, "offsetLag": 0, "isFuture": False}], "error": None, "logDir": "/data/b1/d1"},
            {"partitions": [{"partition": "orders-1", "size": 77, "offsetLag": 0, "isFuture": False}], "error": None, "logDir": "/data/b1/d2"},
        ]},
        {"broker": 2, "logDirs": [
            {"partitions": [], "error": ERROR, "logDir": "/data/b2/d1"},
            {"partitions": [
                {"partition": "orders-0", "size": 1000, "offsetLag": 0, "isFuture": False},
                {"partition": "orders-1", "size": 77, "offsetLag": 0, "isFuture": False},
            ], "error": None, "logDir": "/data/b2/d2"},
        ]},
    ],
    "version": 1,
}


def test_describe_prints_kafkas_three_lines(cluster: Cli) -> None:
    result = cluster("log-dirs", "describe")
    assert (result.exit_code, result.stderr) == (0, "")
    assert result.stdout == (
        "Querying brokers for log directories information\n"
        "Received log directory information from brokers 1,2\n"
        + json.dumps(EXPECTED, separators=(",", ":"))
        + "\n"
    )


def test_json_output_is_the_document_alone(cluster: Cli) -> None:
    result = cluster("-o", "json", "log-dirs", "describe")
    assert (result.exit_code, result.stderr) == (0, "")
    assert json.loads(result.stdout) == EXPECTED
    assert result.stdout == cluster("log-dirs", "describe").stdout.splitlines(keepends=True)[2]


def test_broker_and_topic_lists(cluster: Cli) -> None:
    lines = cluster("log-dirs", "describe", "--broker-list", "2", "--topic-list", "nothing").stdout.splitlines()
    assert lines[1:] == [
        "Received log directory information from brokers 2",
        '{"brokers":[{"broker":2,"logDirs":[{"partitions":[],"error":"org.apache.kafka.common.errors.KafkaStorageException",'
        '"logDir":"/data/b2/d1"},{"partitions":[],"error":null,"logDir":"/data/b2/d2"}]}],"version":1}',
    ]


def test_unknown_brokers_are_kafkas_error_on_stderr(cluster: Cli) -> None:
    result = cluster("log-dirs", "describe", "--broker-list", "0,1,3")
    assert (result.exit_code, result.stdout) == (1, "")
    assert result.stderr == "ERROR: The given brokers do not exist from --broker-list: 0,3. Current existent brokers: 1,2\n"
    result = cluster("log-dirs", "describe", "--broker-list", "1,x")
    assert (result.exit_code, result.stderr) == (1, 'For input string: "x" (in --broker-list)\n')


def test_from_disk_needs_a_config_and_the_config_needs_from_disk(cli: Cli, tmp_path: Path) -> None:
    assert cli("log-dirs", "describe", "--from-disk").exit_code == 2
    assert cli("log-dirs", "describe", "--config", str(tmp_path / "x")).exit_code == 2
    result = cli("log-dirs", "describe", "--from-disk", "--config", str(tmp_path / "missing.properties"), state=None)
    assert (result.exit_code, result.stderr) == (1, f"Cannot read {tmp_path / 'missing.properties'}: No such file or directory\n")


def test_from_disk_reads_the_broker_host_and_names_unreadable_directories(cli: Cli, tmp_path: Path) -> None:
    good = tmp_path / "d1"
    (good / "orders-0").mkdir(parents=True)
    (good / "orders-0" / "00000000000000000000.log").write_bytes(b"x" * 12)
    (good / "meta.properties").write_text(f"version=1\ncluster.id=abc\nnode.id=5\ndirectory.id={D[(1, 1)]}\n")
    config = tmp_path / "server.properties"
    config.write_text(f"node.id=5\nlog.dirs={good},{tmp_path / 'gone'}\n")
    result = cli("log-dirs", "describe", "--from-disk", "--config", str(config), state=None)
    assert result.exit_code == 0
    assert result.stderr == f"{tmp_path / 'gone'}: No such file or directory\n"
    assert result.stdout.splitlines() == [
        "Querying brokers for log directories information",
        "Received log directory information from brokers 5",
        '{"brokers":[{"broker":5,"logDirs":['
        f'{{"partitions":[{{"partition":"orders-0","size":12,"offsetLag":0,"isFuture":false}}],"error":null,"logDir":"{good}",'
        f'"pendingDeletion":[],"directoryId":"{D[(1, 1)]}"}},'
        f'{{"partitions":[],"error":"{ERROR}","logDir":"{tmp_path / "gone"}","pendingDeletion":[],"directoryId":null}}'
        ']}],"version":1}',
    ]


def kafka_output(document: dict) -> str:
    ids = ",".join(str(b["broker"]) for b in document["brokers"])
    return (
        "Querying brokers for log directories information\n"
        f"Received log directory information from brokers {ids}\n{json.dumps(document, separators=(',', ':'))}\n"
    )


def test_import_takes_newer_kafkas_disk_sizes_as_capacities(cluster: Cli, tmp_path: Path) -> None:
    saved = tmp_path / "v4.txt"
    saved.write_text(kafka_output({"brokers": [{"broker": 1, "logDirs": [
        {"partitions": [], "error": None, "logDir": "/data/b1/d2", "totalBytes": 2 * 2**40, "usableBytes": 2**40},
    ]}], "version": 1}))
    result = cluster("log-dirs", "import", str(saved))
    assert result.exit_code == 0, result.stderr
    assert result.stdout.splitlines()[-1] == "Recorded the disk size (totalBytes) of 1 log directory as its capacity."
    details = json.loads(cluster("-o", "json", "broker", "describe", "--id", "1").stdout)
    assert [(d["path"], d["capacityBytes"]) for d in details["directories"] if d["path"] == "/data/b1/d2"] == [("/data/b1/d2", 2 * 2**40)]
    again = json.loads(cluster("-o", "json", "log-dirs", "import", str(saved)).stdout)
    assert again["capacities"] == 0


def test_import_loads_sizes_and_warns_about_other_directories(cluster: Cli, tmp_path: Path) -> None:
    saved = tmp_path / "b1.txt"
    saved.write_text(kafka_output({"brokers": [{"broker": 1, "logDirs": [
        {"partitions": [{"partition": "orders-0", "size": 5000, "offsetLag": 0, "isFuture": False},
                        {"partition": "orders-1", "size": 60, "offsetLag": 12, "isFuture": False}], "error": None, "logDir": "/data/b1/d1"},
        {"partitions": [{"partition": "orders-0", "size": 10, "offsetLag": 4990, "isFuture": True}], "error": None, "logDir": "/data/b1/d2"},
    ]}], "version": 1}))
    result = cluster("log-dirs", "import", str(saved))
    assert result.exit_code == 0
    assert result.stdout == (
        "Loaded 1 file(s) covering 1 broker(s): 1 partition size(s), 1 lagging or partial replica(s), "
        "1 future replica(s) recorded; 0 outdated entries removed.\n"
    )
    assert result.stderr == (
        f"Warning: orders-1 on broker 1 is in /data/b1/d1 ({saved} $.brokers[0].logDirs[0].partitions[1]), but the cluster state "
        "has it in /data/b1/d2; to record where it is: kjbod assign-dirs --broker 1 --assign orders:1=/data/b1/d1\n"
    )
    shown = json.loads(cluster("-o", "json", "log-dirs", "describe", "--broker-list", "1").stdout)["brokers"][0]["logDirs"]
    assert shown == [
        {"partitions": [{"partition": "orders-0", "size": 5000, "offsetLag": 0, "isFuture": False}], "error": None, "logDir": "/data/b1/d1"},
        {"partitions": [{"partition": "orders-0", "size": 10, "offsetLag": 4990, "isFuture": True},
                        {"partition": "orders-1", "size": 60, "offsetLag": 12, "isFuture": False}], "error": None, "logDir": "/data/b1/d2"},
    ]


def test_import_problems_are_listed_and_nothing_is_written(cluster: Cli, tmp_path: Path) -> None:
    saved = tmp_path / "bad.txt"
    saved.write_text(kafka_output({"brokers": [{"broker": 3, "logDirs": []}, {"broker": 1, "logDirs": [
        {"partitions": [{"partition": "orders-9", "size": 1, "offsetLag": 0, "isFuture": False},
                        {"partition": "orders-0", "size": 1, "offsetLag": 0, "isFuture": False}], "error": None, "logDir": "/data/b1/d1"},
    ]}], "version": 1}))
    before = cluster("log-dirs", "describe").stdout
    result = cluster("log-dirs", "import", str(saved))
    assert (result.exit_code, result.stdout) == (1, "")
    assert result.stderr == (
        f"{saved} $.brokers[0].broker: broker 3 is not registered in the cluster state\n"
        f"{saved} $.brokers[1].logDirs[0].partitions[0].partition: partition orders-9 is not in the cluster state\n"
        "2 problem(s) found; nothing was written\n"
    )
    assert cluster("log-dirs", "describe").stdout == before
    result = cluster("-o", "json", "log-dirs", "import", str(saved))
    assert result.exit_code == 1
    assert json.loads(result.stdout) == {"problems": [line for line in result.stderr.splitlines()[:2]]}
    assert cluster("log-dirs", "import").exit_code == 2
