"""`kjbod import cluster` through the CLI, and every other command on the imported state."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kjbod.tools.importer.from_files import directory_id_for

from ..conftest import Cli
from .support import ASSIGNMENT, BROKERS, LOG_DIRS
from tests.synthetic import load_synthetic, sorted_log_dirs

ERROR = "org.apache.kafka.common.errors.KafkaStorageException"


@pytest.fixture
def exports(tmp_path: Path) -> list[str]:
    (tmp_path / "brokers.json").write_text(json.dumps(BROKERS))
    (tmp_path / "assignment.json").write_text(json.dumps(ASSIGNMENT))
    (tmp_path / "log-dirs.txt").write_text(
        "Querying brokers for log directories information\nReceived log directory information from brokers 1,2,3\n"
        + json.dumps(LOG_DIRS, separators=(",", ":")) + "\n"
    )
    return ["--brokers", str(tmp_path / "brokers.json"), "--assignment", str(tmp_path / "assignment.json"),
            "--log-dirs", str(tmp_path / "log-dirs.txt")]


@pytest.fixture
def prod(cli: Cli, exports: list[str], tmp_path: Path) -> Cli:
    """The CLI on a state imported from `exports`."""
    state = tmp_path / "prod-state"
    result = cli("import", "cluster", *exports, state=state)
    assert result.exit_code == 0, result.stderr

    def run(*args: str, input: str | None = None):  # type: ignore[no-untyped-def]
        return cli(*args, state=state, input=input)

    return run  # type: ignore[return-value]


def test_import_says_what_it_built(cli: Cli, exports: list[str], tmp_path: Path) -> None:
    state = tmp_path / "new"
    result = cli("import", "cluster", *exports, state=state)
    assert (result.exit_code, result.stderr) == (0, "")
    assert result.stdout == (
        f"Imported 3 broker(s) with 5 log directories, 2 topic(s) and 3 partition(s) (8 replicas) into {state} at metadata.version 4.4-IV2.\n"
        "Sizes known for 3 partition(s); 1 replica(s) lagging or partial; 1 future replica(s).\n"
        "Wrote 22 records and a snapshot.\n"
    )


def test_the_round_trip_reproduces_the_log_dirs_output_and_the_assignment(prod: Cli) -> None:
    described = json.loads(prod("-o", "json", "log-dirs", "describe").stdout)
    assert sorted_log_dirs(described) == sorted_log_dirs(LOG_DIRS)
    topics = json.loads(prod("-o", "json", "topic", "describe").stdout)
    assignment = [
        {"topic": t["topic"], "partition": p["partition"], "replicas": p["replicas"], "log_dirs": [d["label"] for d in p["directories"]]}
        for t in topics for p in t["partitions"]
    ]
    assert sorted(assignment, key=lambda p: (p["topic"], p["partition"])) == sorted(ASSIGNMENT["partitions"], key=lambda p: (p["topic"], p["partition"]))


def test_reading_commands_work_on_the_imported_state(prod: Cli) -> None:
    assert prod("topic", "describe", "audit").stdout.splitlines()[1] == (
        "\tTopic: audit\tPartition: 0\tLeader: 3\tReplicas: 3,1\tIsr: 3,1\tElr: \tLastKnownElr: "
        "\tDirectories: /data/b3/d1,/data/b1/d2\tOffline: "
    )
    assert prod("features", "describe").stdout.splitlines()[3] == (
        "Feature: metadata.version                          SupportedMinVersion: 3.3-IV3          SupportedMaxVersion: 4.4-IV2"
        "          FinalizedVersionLevel: 4.4-IV2          Epoch: 21"
    )
    brokers = json.loads(prod("-o", "json", "broker", "list").stdout)
    assert [(b["id"], b["rack"], b["state"], b["replicas"], b["leaders"]) for b in brokers] == [
        (1, "r1", "UNFENCED", 3, 1), (2, "r2", "UNFENCED", 2, 1), (3, "r3", "UNFENCED", 3, 1),
    ]
    broker1 = json.loads(prod("-o", "json", "broker", "describe", "--id", "1").stdout)
    assert [(d["path"], d["state"], d["replicas"], d["sizeBytes"], d["capacityBytes"]) for d in broker1["directories"]] == sorted(
        [("/data/b1/d1", "online", 1, 900, 4000), ("/data/b1/d2", "online", 2, 530, 4000)],
        key=lambda row: [d["directoryId"] for d in broker1["directories"]].index(directory_id_for(1, row[0])),
    )
    assert prod("metadata", "verify").stdout.splitlines()[-1] == "The cluster state is intact."


def test_writing_commands_work_on_the_imported_state(prod: Cli) -> None:
    assert prod("features", "upgrade", "--metadata", "4.4-IV2", "--dry-run").exit_code == 0
    assert prod("topic", "create", "new", "--partitions", "3", "--replication-factor", "2", "--seed", "1").exit_code == 0
    assert prod("assign-dirs", "--broker", "1", "--auto").exit_code == 0
    result = prod("broker", "fail-dir", "--id", "1", "--dir", "/data/b1/d1")
    assert result.exit_code == 0 and "orders-0: leader 1 -> 2" in result.stdout
    result = prod("elect", "--election-type", "PREFERRED", "--topic", "orders", "--partition", "0")
    assert (result.exit_code, result.stdout) == (
        1,
        "Error completing leader election (PREFERRED) for partition: orders-0: org.apache.kafka.common.errors."
        "PreferredLeaderNotAvailableException: The preferred leader was not available.\n",
    )
    shown = json.loads(prod("-o", "json", "log-dirs", "describe", "--broker-list", "1").stdout)["brokers"][0]["logDirs"]
    assert [(d["logDir"], d["error"]) for d in shown] == [("/data/b1/d1", ERROR), ("/data/b1/d2", None)]
    # The imported future replica of orders-1 on broker 2 (in /data/b2/d1) finishes its copy
    # and takes the replica's place.
    assert prod("clock", "advance", "1h").stdout.startswith("Advanced the clock by 1h to 1h. 1 copy completed; 1 replica promoted in a new log directory.\n")
    shown = json.loads(prod("-o", "json", "log-dirs", "describe", "--broker-list", "2").stdout)["brokers"][0]["logDirs"]
    assert [(d["logDir"], [p["partition"] for p in d["partitions"]]) for d in shown] == [("/data/b2/d1", ["orders-1"]), ("/data/b2/d2", ["orders-0"])]


def test_problems_are_listed_on_stderr_and_nothing_is_created(cli: Cli, exports: list[str], tmp_path: Path) -> None:
    bad = tmp_path / "bad-assignment.json"
    bad.write_text(json.dumps({"partitions": [{"topic": "t", "partition": 1, "replicas": [1, 4]}]}))
    args = [*exports[:2], "--assignment", str(bad)]
    state = tmp_path / "never"
    result = cli("import", "cluster", *args, state=state)
    assert (result.exit_code, result.stdout) == (1, "")
    assert result.stderr == (
        f"{bad} $.partitions[0].replicas[1]: The manual partition assignment includes broker 4, but no such broker is registered "
        "(it is not in the brokers file).\n"
        f"{bad} $.partitions: topic t has 1 partition(s) numbered up to 1; missing 0 (partitions are numbered 0 to n-1; the topic "
        "starts at $.partitions[0])\n"
        "2 problem(s) found; nothing was imported\n"
    )
    assert not state.exists()
    result = cli("-o", "json", "import", "cluster", *args, state=state)
    assert result.exit_code == 1 and json.loads(result.stdout) == {"problems": result.stderr.splitlines()[:2]}


def test_an_existing_state_is_refused(cli: Cli, exports: list[str], state_dir: Path) -> None:
    assert cli("clock", "advance", "1s").exit_code == 0
    result = cli("import", "cluster", *exports)
    assert (result.exit_code, result.stdout) == (1, "")
    assert result.stderr == (
        f"Cannot import into {state_dir}: the directory already holds a cluster state. `kjbod import cluster` creates a new "
        "cluster state and never overwrites one; point --state at a new or empty directory\n"
    )


def test_the_command_line_structure(cli: Cli, exports: list[str], tmp_path: Path) -> None:
    assert cli("import", "cluster", "--brokers", exports[1], state=tmp_path / "s").exit_code == 2
    # Kafka's version strings: a patch release names its minor version's newest production IV.
    result = cli("import", "cluster", *exports, "--metadata-version", "3.9.1", state=tmp_path / "s")
    assert result.exit_code == 0 and " at metadata.version 3.9-IV0.\n" in result.stdout
    assert "FinalizedVersionLevel: 3.9-IV0" in cli("features", "describe", state=tmp_path / "s").stdout
    result = cli("import", "cluster", *exports, "--metadata-version", "nope", state=tmp_path / "t")
    assert (result.exit_code, result.stderr[:65]) == (1, "Unknown metadata.version 'nope'. Supported metadata.version are: ")
    result = cli("import", "cluster", *exports, "--metadata-version", "4.5-IV0", state=tmp_path / "t")
    assert (result.exit_code, result.stderr) == (1, "metadata.version 4.5-IV0 is not yet stable.\n")
    result = cli("--kafka-version", "4.3", "import", "cluster", *exports, state=tmp_path / "u")
    assert result.exit_code == 0 and " at metadata.version 4.3-IV0.\n" in result.stdout


def test_a_synthetic_cluster_through_the_cli(cli: Cli, tmp_path: Path) -> None:
    synthetic = load_synthetic()
    cluster = synthetic.generate(synthetic.SyntheticSpec(brokers=6, dirs_per_broker=2, partitions=120, failed_dirs=1, seed=3))
    paths = synthetic.write_files(cluster, tmp_path / "in", per_broker=True)
    args = ["--brokers", str(paths["brokers"]), "--assignment", str(paths["assignment"])]
    for path in paths["log_dirs"]:
        args += ["--log-dirs", str(path)]
    assert cli("import", "cluster", *args, state=tmp_path / "s").exit_code == 0
    described = json.loads(cli("-o", "json", "log-dirs", "describe", state=tmp_path / "s").stdout)
    assert sorted_log_dirs(described) == sorted_log_dirs(cluster.log_dirs)


def test_reassign_generate_shows_the_imported_assignment_as_current(prod: Cli, tmp_path: Path) -> None:
    topics = tmp_path / "topics.json"
    topics.write_text(json.dumps({"topics": [{"topic": "orders"}, {"topic": "audit"}], "version": 1}))
    result = prod("reassign", "generate", "--topics-to-move-json-file", str(topics), "--broker-list", "1,2,3", "--seed", "1")
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    assert lines[0] == "Current partition replica assignment"
    # Kafka 4.1+ prints each replica's current directory (getReplicaToLogDir, 4.3.1
    # ReassignPartitionsCommand.java:566-574): the imported ones.
    expected = sorted(ASSIGNMENT["partitions"], key=lambda p: (p["topic"], p["partition"]))
    assert json.loads(lines[1]) == {"version": 1, "partitions": expected}
    proposed = tmp_path / "proposed.json"
    proposed.write_text(lines[4])
    assert prod("reassign", "execute", "--reassignment-json-file", str(proposed)).exit_code == 0
    assert prod("clock", "advance", "--until-idle").exit_code == 0
    verified = prod("reassign", "verify", "--reassignment-json-file", str(proposed))
    assert verified.exit_code == 0 and "Reassignment of partition orders-0 is completed." in verified.stdout
