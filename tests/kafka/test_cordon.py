"""KIP-1066 on the live cluster of each release (the session's shared cluster, no new one): a log
directory cordoned with Kafka's own kafka-configs, the cluster imported by kjbod, and kjbod's view
and refusals compared with Kafka's (kafka-4.4-spec.md §4):

- the imported registration lists the directory the broker's heartbeat reported, and the
  broker's dynamic cordoned.log.dirs came with it;
- `log-dirs describe` prints what kafka-log-dirs prints (nothing about cordoning);
- a move into the cordoned directory: kafka-reassign-partitions starts the reassignment, then fails
  with `Error: Failed to alter dir for <topic>-<p>-<broker>`; kjbod's `reassign execute` prints
  the same lines;
- with `cordoned.log.dirs=*` (every directory), a reassignment naming the broker: 4.4.0 refuses it
  (`Error reassigning partition(s):`), 4.3.1 starts it; kjbod speaking each release does the same.

The plans keep every partition's replicas (a no-op reassignment), so the cluster is left as it was
once the config is deleted at the end. About 12 Kafka tool runs and two imports per release
(~40 s each on an idle machine).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.kafka.cluster import KafkaCluster
from tests.kafka.conftest import Live, kjbod, log_dirs_json
from tests.kafka.moving import capture

BROKER = 1


def _configs(cluster: KafkaCluster, *args: str) -> None:
    cluster.tool("kafka-configs", "--bootstrap-server", cluster.bootstrap_servers, "--alter", "--entity-type", "brokers",
                 "--entity-name", str(BROKER), *args).check()


def _plan(path: Path, topic: str, partition: int, replicas: list[int], log_dirs: list[str]) -> Path:
    path.write_text(json.dumps({"version": 1, "partitions": [
        {"topic": topic, "partition": partition, "replicas": replicas, "log_dirs": log_dirs}]}))
    return path


def _sorted_log_dirs(stdout: str) -> tuple[list[str], dict]:
    *head, document = stdout.splitlines()
    data = json.loads(document)
    for broker in data["brokers"]:
        for log_dir in broker["logDirs"]:
            log_dir["partitions"].sort(key=lambda item: item["partition"])
            log_dir["partitions"] = [{k: v for k, v in p.items() if k not in ("size", "offsetLag")} for p in log_dir["partitions"]]
        broker["logDirs"].sort(key=lambda item: item["logDir"])
    data["brokers"].sort(key=lambda item: item["broker"])
    return head, data


def _error_lines(stdout: str) -> list[str]:
    """Kafka's lines from the failure on (kjbod prints them on stderr), without the stack trace."""
    lines = stdout.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("Error"))
    return [line for line in lines[start:] if line and not line.startswith(("\tat ", "Caused by", "org.apache", "\t..."))]


@pytest.fixture(scope="module")
def cordoned(live: Live, tmp_path_factory: pytest.TempPathFactory):  # noqa: ANN201
    """Broker 1's directory that holds none of partition `moved`'s replica, cordoned; the cluster
    imported. After the `live` scene was captured (it needs the fixture), and undone at the end."""
    cluster = live.cluster
    work = tmp_path_factory.mktemp(f"cordon-{cluster.version}")
    document = log_dirs_json(live.kafka["log-dirs"])
    dirs = next(b["logDirs"] for b in document["brokers"] if b["broker"] == BROKER)
    home = next(d for d in dirs if d["partitions"])
    name = home["partitions"][0]["partition"]
    topic, _, partition = name.rpartition("-")
    target = next(d["logDir"] for d in dirs if d["logDir"] != home["logDir"])
    line = next(line for line in live.kafka["topics"].lines if f"Topic: {topic}\tPartition: {partition}\t" in line)
    replicas = [int(b) for b in line.split("Replicas: ")[1].split("\t")[0].split(",")]
    _configs(cluster, "--add-config", f"cordoned.log.dirs={target}")
    try:
        yield cluster, work, (topic, int(partition), replicas, target), capture(cluster, work / "one")
    finally:
        _configs(cluster, "--delete-config", "cordoned.log.dirs")


def test_kjbod_sees_the_cordoned_directory_the_broker_reported(cordoned) -> None:  # noqa: ANN001
    cluster, _, (_, _, _, target), state = cordoned
    details = json.loads(kjbod("-o", "json", "broker", "describe", "--id", str(BROKER), state=state).stdout)
    assert [d["path"] for d in details["directories"] if d["state"] == "cordoned"] == [target]
    described = kjbod("log-dirs", "describe", state=state)
    kafka = cluster.tool("kafka-log-dirs", "--bootstrap-server", cluster.bootstrap_servers, "--describe").check()
    assert _sorted_log_dirs(described.stdout) == _sorted_log_dirs(kafka.stdout)
    assert f"Broker {BROKER}: cordoned (no new replicas; kafka-log-dirs does not show it): {target}" in described.stderr


def test_a_move_into_the_cordoned_directory_fails_as_in_kafka(cordoned) -> None:  # noqa: ANN001
    cluster, work, (topic, partition, replicas, target), state = cordoned
    plan = _plan(work / "into-cordoned.json", topic, partition, replicas, [target if b == BROKER else "any" for b in replicas])
    kafka = cluster.tool("kafka-reassign-partitions", "--bootstrap-server", cluster.bootstrap_servers,
                         "--reassignment-json-file", plan, "--execute")
    ours = kjbod("reassign", "execute", "--reassignment-json-file", plan, state=state)
    assert (ours.exit_code, kafka.exit_code) == (1, 1)
    failure = kafka.lines.index(f"Error: Failed to alter dir for {topic}-{partition}-{BROKER}")
    assert ours.lines == kafka.lines[:failure]
    assert ours.stderr.splitlines()[0] == kafka.lines[failure]


def test_an_all_cordoned_broker_in_a_reassignment(cordoned) -> None:  # noqa: ANN001
    cluster, work, (topic, partition, replicas, _), _ = cordoned
    _configs(cluster, "--add-config", "cordoned.log.dirs=*")
    state = capture(cluster, work / "all")
    plan = _plan(work / "all-cordoned.json", topic, partition, replicas, ["any"] * len(replicas))
    kafka = cluster.tool("kafka-reassign-partitions", "--bootstrap-server", cluster.bootstrap_servers,
                         "--reassignment-json-file", plan, "--execute")
    ours = kjbod("reassign", "execute", "--reassignment-json-file", plan, state=state)
    if cluster.version == "4.4.0":  # refused by 4.4.0's controller only
        assert (ours.exit_code, kafka.exit_code) == (1, 1)
        assert ours.lines == kafka.lines[:kafka.lines.index("Error reassigning partition(s):")]
        assert ours.stderr.splitlines() == _error_lines(kafka.stdout) == [
            "Error reassigning partition(s):",
            f"{topic}-{partition}: The manual partition assignment includes broker {BROKER}, but all its log directories are cordoned.",
        ]
    else:
        assert (ours.exit_code, kafka.exit_code) == (0, 0), kafka.stdout
        assert ours.lines == kafka.lines
