"""`kjbod reassign plan` through the CLI: the report, the plan file, every goal's plan passing
`reassign check`, a plan executed to completion, and the operator's mistakes."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kjbod.cli.app import app

from ..conftest import Cli

GIB = 2**30
TIB = 2**40
RACKS = {1: "r1", 2: "r2", 3: "r3", 4: "r1", 5: "r2", 6: "r3"}
ROTATIONS = [[1, 2, 3], [2, 3, 1], [3, 1, 2]]


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Brokers 1-6 in racks r1 (1, 4), r2 (2, 5), r3 (3, 6), each with /data/bN/d1 and d2 of
    1 TiB. `orders` (6 x 60 GiB) and `events` (6 x 6 GiB) live on brokers 1, 2, 3, all on d1;
    brokers 4-6 are empty."""
    work = tmp_path_factory.mktemp("plan")
    brokers = {
        "brokers": [
            {"id": b, "rack": rack, "log_dirs": [{"path": f"/data/b{b}/d1", "capacity_bytes": TIB}, {"path": f"/data/b{b}/d2", "capacity_bytes": TIB}]}
            for b, rack in RACKS.items()
        ]
    }
    partitions = [
        {"topic": topic, "partition": p, "replicas": ROTATIONS[p % 3], "log_dirs": [f"/data/b{b}/d1" for b in ROTATIONS[p % 3]]}
        for topic in ("events", "orders")
        for p in range(6)
    ]
    (work / "brokers.json").write_text(json.dumps(brokers))
    (work / "assignment.json").write_text(json.dumps({"version": 1, "partitions": partitions}))
    state = work / "state"
    for args in (
        ["import", "cluster", "--brokers", str(work / "brokers.json"), "--assignment", str(work / "assignment.json")],
        ["topic", "set-size", "orders", "--bytes", str(60 * GIB)],
        ["topic", "set-size", "events", "--bytes", str(6 * GIB)],
    ):
        result = CliRunner().invoke(app, ["--state", str(state), *args], catch_exceptions=False)
        assert result.exit_code == 0, result.stderr
    return state


@pytest.fixture
def state(template: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "cluster"
    shutil.copytree(template, copy)
    return copy


def test_balance_report_and_plan_file(cli: Cli, state: Path, tmp_path: Path) -> None:
    plan_file = tmp_path / "plan.json"
    result = cli("reassign", "plan", "--goal", "balance", "--output-file", str(plan_file), state=state)
    assert result.exit_code == 0, result.stderr
    assert result.stderr == ""
    # By hand: brokers 1-3 each give 3 orders and 3 events replicas (198 GiB) to 4-6, then move
    # one orders replica to their empty d2 (d1 198 GiB is past 9.7% + 5 points of 1 TiB). The
    # report's own bound is what d1 holds above that band on each old broker (3 x 240.8 GiB); the
    # exact refinement proves the heuristic's 774 GiB is the least any plan moves, and its bound
    # (the bands are the planner's own) becomes the report's.
    assert result.stdout == (
        "Planned balance for 6 brokers, 12 log directories, 12 partitions (36 replicas) with the local engine (auto: 36 replicas, too few for Spark to pay off).\n"
        f"Wrote 11 partition reassignment(s) to {plan_file}.\n"
        "\n"
        "Moves: 18 replica(s) between brokers (594.0 GiB), 3 between directories of a broker (180.0 GiB); 774.0 GiB in all, 1.00x the least any plan must move (774.0 GiB).\n"
        "Exact refinement: not better than the heuristic (optimal).\n"
        "Preferred leaders: 6 change; run `kjbod elect --election-type PREFERRED --all-topic-partitions` once the reassignment completes.\n"
        "\n"
        "                                         before         after\n"
        "Replicas per broker                        0-12           6-6\n"
        "  max deviation from target              100.0%          0.0%\n"
        "Leaders: max deviation                   100.0%          0.0%\n"
        "Bytes: max deviation                     100.0%          0.0%\n"
        "Directory usage: fullest                  38.7%         13.5%\n"
        "  furthest from broker mean            19.3 pts       3.8 pts\n"
        "Partitions breaking the rack rule             0             0\n"
        "\n"
        "Log directories by usage   before                           after\n"
        "    0-10%                  ████████████████████████      9  ████████████████              6\n"
        "   10-20%                                                0  ████████████████              6\n"
        "   20-30%                                                0                                0\n"
        "   30-40%                  ████████                      3                                0\n"
        "   40-50%                                                0                                0\n"
        "   50-60%                                                0                                0\n"
        "   60-70%                                                0                                0\n"
        "   70-80%                                                0                                0\n"
        "   80-90%                                                0                                0\n"
        "   90%+                                                  0                                0\n"
        "Per-broker and per-directory figures: --output json.\n"
    )
    document = json.loads(plan_file.read_text())
    assert document["version"] == 1
    assert len(document["partitions"]) == 11
    for entry in document["partitions"]:
        assert len(entry["replicas"]) == len(entry["log_dirs"]) == 3
        assert len({RACKS[b] for b in entry["replicas"]}) == 3


def test_json_report(cli: Cli, state: Path, tmp_path: Path) -> None:
    plan_file = tmp_path / "plan.json"
    result = cli("-o", "json", "reassign", "plan", "--goal", "balance", "--output-file", str(plan_file), state=state)
    assert result.exit_code == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["outputFile"] == str(plan_file)
    assert data["partitionsChanged"] == len(json.loads(plan_file.read_text())["partitions"])
    assert {row["broker"] for row in data["perBroker"]} == set(RACKS)
    directories = {(row["broker"], row["path"]): row for row in data["perDirectory"]}
    assert len(directories) == 12
    assert directories[(1, "/data/b1/d1")]["bytesBefore"] == 6 * 60 * GIB + 6 * 6 * GIB  # all of broker 1's replicas
    assert directories[(4, "/data/b4/d1")]["replicasBefore"] == 0
    assert data["after"]["replicasMin"] == data["after"]["replicasMax"] == 6
    assert data["unsatisfiable"] == []


def test_output_file_dash_prints_the_plan_on_stdout(cli: Cli, state: Path, tmp_path: Path) -> None:
    plan_file = tmp_path / "plan.json"
    assert cli("reassign", "plan", "--goal", "balance", "--output-file", str(plan_file), state=state).exit_code == 0
    piped = cli("reassign", "plan", "--goal", "balance", "--output-file", "-", state=state)
    assert piped.exit_code == 0, piped.stderr
    # The same plan, byte for byte; the report goes to stderr, and no file named "-" appears.
    assert piped.stdout == plan_file.read_text()
    assert piped.stderr.startswith("Planned balance for 6 brokers") and "Wrote 11 partition reassignment(s) to stdout.\n" in piped.stderr
    assert not (tmp_path / "-").exists() and not Path("-").exists()
    as_json = json.loads(cli("-o", "json", "reassign", "plan", "--goal", "balance", "--output-file", "-", state=state).stdout)
    assert as_json["outputFile"] == "-" and as_json["reassignment"] == json.loads(plan_file.read_text())


@pytest.mark.parametrize(
    "goal_args",
    [
        ["--goal", "balance"],
        ["--goal", "add-brokers", "--broker-list", "4,5"],
        ["--goal", "remove-brokers", "--brokers", "3"],  # the older name of --broker-list
        ["--goal", "drain-dirs", "--dir", "1:/data/b1/d1"],
        ["--goal", "rebalance-disks"],
        ["--goal", "balance", "--max-moves", "4", "--exclude-topics", "events"],
    ],
    ids=lambda args: "-".join(a.lstrip("-") for a in args),
)
def test_plans_pass_reassign_check_with_the_default_policy(cli: Cli, state: Path, tmp_path: Path, goal_args: list[str]) -> None:
    plan_file = tmp_path / "plan.json"
    planned = cli("reassign", "plan", *goal_args, "--output-file", str(plan_file), state=state)
    assert planned.exit_code == 0, planned.stderr
    assert json.loads(plan_file.read_text())["partitions"], "the goal moves something"
    checked = cli("reassign", "check", "--reassignment-json-file", str(plan_file), state=state)
    assert checked.exit_code == 0, checked.stdout + checked.stderr


def test_a_plan_made_while_copies_run_passes_reassign_check(cli: Cli, state: Path, tmp_path: Path) -> None:
    """Planned mid-flight (one reassignment copying, one move between directories copying), the
    plan keeps every replication factor and passes check: the planner sees the running work where
    it ends, as check does."""
    running = tmp_path / "running.json"
    running.write_text(json.dumps({"version": 1, "partitions": [
        {"topic": "orders", "partition": 0, "replicas": [4, 2, 3], "log_dirs": ["any", "any", "any"]},
        {"topic": "orders", "partition": 1, "replicas": [2, 3, 1], "log_dirs": ["/data/b2/d2", "any", "any"]},
    ]}))
    assert cli("reassign", "execute", "--reassignment-json-file", str(running), "--throttle", "1000000", state=state).exit_code == 0
    plan_file = tmp_path / "plan.json"
    planned = cli("reassign", "plan", "--goal", "balance", "--output-file", str(plan_file), state=state)
    assert planned.exit_code == 0, planned.stderr
    assert all(len(entry["replicas"]) == 3 for entry in json.loads(plan_file.read_text())["partitions"])
    checked = cli("reassign", "check", "--reassignment-json-file", str(plan_file), state=state)
    assert checked.exit_code == 0, checked.stdout + checked.stderr


def test_a_plan_runs_to_completion(cli: Cli, state: Path, tmp_path: Path) -> None:
    plan_file = tmp_path / "plan.json"
    assert cli("reassign", "plan", "--goal", "remove-brokers", "--brokers", "1", "--output-file", str(plan_file), state=state).exit_code == 0
    assert cli("reassign", "execute", "--reassignment-json-file", str(plan_file), state=state).exit_code == 0
    assert cli("clock", "advance", "--until-idle", state=state).exit_code == 0
    verified = cli("reassign", "verify", "--reassignment-json-file", str(plan_file), state=state)
    assert verified.exit_code == 0, verified.stdout + verified.stderr
    assert "is still in progress" not in verified.stdout
    described = json.loads(cli("-o", "json", "log-dirs", "describe", "--broker-list", "1", state=state).stdout.splitlines()[-1])
    assert all(not log_dir["partitions"] for b in described["brokers"] for log_dir in b["logDirs"])
    # Nothing left to do: the same goal now plans no moves.
    again = cli("reassign", "plan", "--goal", "remove-brokers", "--brokers", "1", "--output-file", str(tmp_path / "again.json"), state=state)
    assert again.exit_code == 0
    assert "Nothing needs to move; wrote an empty reassignment" in again.stdout
    assert json.loads((tmp_path / "again.json").read_text()) == {"version": 1, "partitions": []}


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--goal", "remove-brokers"], "--goal remove-brokers needs --broker-list, e.g. --broker-list 7,8"),
        (["--goal", "balance", "--broker-list", "1"], "--broker-list is for --goal add-brokers or remove-brokers, not balance"),
        (["--goal", "balance", "--brokers", "1"], "--broker-list is for --goal add-brokers or remove-brokers, not balance"),
        (["--goal", "remove-brokers", "--broker-list", "1,x"], 'Invalid --broker-list "1,x": give broker ids separated by commas, e.g. 7,8'),
        (["--goal", "remove-brokers", "--brokers", "42"], "Broker 42 is not in the cluster state"),
        (["--goal", "drain-dirs"], "--goal drain-dirs needs at least one --dir BROKER:PATH, e.g. --dir 3:/data/02/kafka-logs"),
        (["--goal", "drain-dirs", "--dir", "/data/b1/d1"], 'Invalid --dir "/data/b1/d1": give BROKER:PATH (or BROKER:DIRECTORY_ID), e.g. 3:/data/02/kafka-logs'),
        (["--goal", "drain-dirs", "--dir", "1:/data/b9/d1"], "Broker 1 has no log directory /data/b9/d1 (give its path or directory id)"),
        (["--goal", "balance", "--dir", "1:/data/b1/d1"], "--dir is for --goal drain-dirs, not balance"),
        (["--goal", "balance", "--capacity-threshold", "1.5"], "Invalid --capacity-threshold 1.5: give a share of capacity above 0 and at most 1, e.g. 0.8"),
        (["--goal", "balance", "--max-bytes", "lots"], "Invalid --max-bytes 'lots': give bytes, optionally with a unit (500GB, 1.5TiB)"),
        (["--goal", "balance", "--exclude-topics", "[a"], "Invalid --exclude-topics regular expression '[a': unterminated character set at position 0"),
        (["--goal", "add-brokers", "--brokers", "9"], "Broker 9 is not in the cluster state"),
        (
            ["--goal", "balance", "--wave-size", "10001"],
            "--wave-size 10001 is more than Kafka's controller starts in one request (10000 partitions, MAX_RECORDS_PER_USER_OP): give at most 10000",
        ),
        (["--goal", "balance", "--engine", "local", "--spark-master", "local[2]"], "--spark-master runs the Spark engine; drop it or use --engine spark"),
        (
            ["--goal", "balance", "--engine", "local", "--spark-conf", "spark.executor.memory=4g"],
            "--spark-conf is for the Spark engine; drop it or use --engine spark (or auto)",
        ),
        (
            ["--goal", "balance", "--spark-conf", "spark.executor.memory"],
            'Invalid --spark-conf "spark.executor.memory": give KEY=VALUE, e.g. --spark-conf spark.executor.memory=4g',
        ),
        (
            ["--goal", "balance", "--spark-conf", "executor.memory=4g"],
            'Invalid --spark-conf "executor.memory=4g": Spark settings start with "spark.", e.g. spark.executor.memory=4g',
        ),
    ],
)
def test_operator_mistakes_get_one_line_and_exit_1(cli: Cli, state: Path, tmp_path: Path, args: list[str], message: str) -> None:
    plan_file = tmp_path / "plan.json"
    result = cli("reassign", "plan", *args, "--output-file", str(plan_file), state=state)
    assert (result.exit_code, result.stderr, result.stdout) == (1, message + "\n", "")
    assert not plan_file.exists()


def test_an_existing_file_is_never_overwritten_without_overwrite(cli: Cli, state: Path, tmp_path: Path) -> None:
    plan_file = tmp_path / "plan.json"
    plan_file.write_text("my notes")
    result = cli("reassign", "plan", "--goal", "balance", "--output-file", str(plan_file), state=state)
    assert (result.exit_code, result.stderr) == (1, f"{plan_file} already exists; choose another --output-file or pass --overwrite to replace it\n")
    assert plan_file.read_text() == "my notes"
    replaced = cli("reassign", "plan", "--goal", "balance", "--output-file", str(plan_file), "--overwrite", state=state)
    assert replaced.exit_code == 0
    assert json.loads(plan_file.read_text())["version"] == 1
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith("plan.json")] == ["plan.json"]  # no temporary left


def test_a_missing_output_directory_is_reported_before_planning(cli: Cli, state: Path, tmp_path: Path) -> None:
    target = tmp_path / "nowhere" / "plan.json"
    result = cli("reassign", "plan", "--goal", "balance", "--output-file", str(target), state=state)
    assert (result.exit_code, result.stderr) == (1, f"The directory of --output-file {target} does not exist; create it first\n")


def test_an_unknown_goal_is_a_usage_error(cli: Cli, state: Path, tmp_path: Path) -> None:
    result = cli("reassign", "plan", "--goal", "tidy", "--output-file", str(tmp_path / "p.json"), state=state)
    assert result.exit_code == 2
    assert "tidy" in result.stderr


def test_an_empty_cluster_plans_nothing(cli: Cli, bootstrapped: Path, tmp_path: Path) -> None:
    plan_file = tmp_path / "plan.json"
    result = cli("reassign", "plan", "--goal", "balance", "--output-file", str(plan_file), state=bootstrapped)
    assert result.exit_code == 0, result.stderr
    assert "Nothing needs to move" in result.stdout
    assert json.loads(plan_file.read_text()) == {"version": 1, "partitions": []}


def test_unknown_disk_capacities_are_said_to_be_unknown(cli: Cli, tmp_path: Path) -> None:
    brokers = {"brokers": [{"id": b, "rack": f"r{b}", "log_dirs": ["/d1", "/d2"]} for b in (1, 2, 3)]}
    assignment = {"version": 1, "partitions": [{"topic": "t", "partition": p, "replicas": [1, 2], "log_dirs": ["/d1", "/d1"]} for p in range(2)]}
    (tmp_path / "brokers.json").write_text(json.dumps(brokers))
    (tmp_path / "assignment.json").write_text(json.dumps(assignment))
    state = tmp_path / "nocap"
    imported = cli("import", "cluster", "--brokers", str(tmp_path / "brokers.json"), "--assignment", str(tmp_path / "assignment.json"), state=state)
    assert imported.exit_code == 0, imported.stderr
    result = cli("reassign", "plan", "--goal", "balance", "--output-file", str(tmp_path / "plan.json"), state=state)
    assert result.exit_code == 0, result.stderr
    assert "Directory usage: fullest                unknown       unknown\n" in result.stdout
    assert "Log directory usage is unknown: no disk capacities (`broker register --capacity`, or capacity_bytes on import).\n" in result.stdout
    data = json.loads(cli("-o", "json", "reassign", "plan", "--goal", "balance", "--output-file", str(tmp_path / "p2.json"), state=state).stdout)
    assert data["after"]["directoryUsageMaxPercent"] is None


@pytest.mark.spark
def test_a_bad_spark_setting_ends_in_one_line_naming_it(state: Path, tmp_path: Path) -> None:
    # A process of its own: the tests' shared Spark session must not be the one that fails.
    pytest.importorskip("pyspark")
    from kjbod.planner.session import java_available, spark_log_path

    if not java_available():
        pytest.skip("no Java runtime for Spark")
    plan_file = tmp_path / "plan.json"
    result = subprocess.run(
        [sys.executable, "-m", "kjbod", "--state", str(state), "reassign", "plan", "--goal", "balance", "--engine", "spark",
         "--spark-conf", "spark.driver.memory=banana", "--output-file", str(plan_file)],
        capture_output=True, text=True, timeout=300,
    )
    assert (result.returncode, result.stdout) == (1, "")
    assert result.stderr == (
        f"Spark did not start on local[*] (Invalid maximum heap size: -Xmxbanana); its log is {spark_log_path()}. "
        "Check the master URL, the --spark-conf settings and Java, or use --engine local\n"
    )
    assert not plan_file.exists()


def closed_port() -> int:
    """A local TCP port that nothing listens on (it was free a moment ago)."""
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_an_unreachable_or_malformed_spark_master_ends_in_one_line(cli: Cli, state: Path, tmp_path: Path) -> None:
    # Found before Spark starts (Spark itself retries for a minute, then fails with an internal error).
    plan_file = tmp_path / "plan.json"
    master = f"spark://127.0.0.1:{closed_port()}"
    result = cli("reassign", "plan", "--goal", "balance", "--spark-master", master, "--output-file", str(plan_file), state=state)
    assert (result.exit_code, result.stdout) == (1, "")
    assert result.stderr == (
        f"Cannot reach the Spark master {master} (Connection refused): check the URL and that the master is running "
        "(its port is 7077 unless set otherwise), or use --engine local\n"
    )
    result = cli("reassign", "plan", "--goal", "balance", "--spark-master", "spark://head-node", "--output-file", str(plan_file), state=state)
    assert (result.exit_code, result.stdout, result.stderr) == (
        1, "", "Invalid --spark-master spark://head-node: give spark://HOST:PORT, e.g. spark://10.0.0.5:7077\n"
    )
    assert not plan_file.exists()


def moves_per_broker(entries: list[dict]) -> dict[int, int]:
    """Per broker, the moves it takes part in: against the template's layout (partition p on
    brokers ROTATIONS[p % 3], every replica on d1)."""
    counts: dict[int, int] = {}
    for entry in entries:
        old = ROTATIONS[entry["partition"] % 3]
        for broker, directory in zip(entry["replicas"], entry["log_dirs"]):
            if broker not in old or directory not in ("any", f"/data/b{broker}/d1"):
                counts[broker] = counts.get(broker, 0) + 1
        for broker in set(old) - set(entry["replicas"]):
            counts[broker] = counts.get(broker, 0) + 1
    return counts


def test_a_plan_in_waves_passes_reassign_check_wave_after_wave(cli: Cli, state: Path, tmp_path: Path) -> None:
    plan_file = tmp_path / "plan.json"
    result = cli(
        "-o", "json", "reassign", "plan", "--goal", "balance", "--max-concurrent-moves-per-broker", "2", "--output-file", str(plan_file),
        state=state,
    )
    assert result.exit_code == 0, result.stderr
    data = json.loads(result.stdout)
    waves = data["waves"]
    files = [Path(f) for f in waves["files"]]
    assert [f.name for f in files] == [f"plan.wave-{n:03d}.json" for n in range(1, waves["count"] + 1)]
    assert sorted(tmp_path.glob("plan.wave-*.json")) == files
    # Brokers 1-3 each give away 6 replicas and move one between their disks: at most 2 moves
    # per wave, so 4 waves at least.
    assert waves["lowerBound"] == 4 and waves["count"] >= 4
    whole = json.loads(plan_file.read_text())["partitions"]
    parts = [json.loads(f.read_text())["partitions"] for f in files]
    assert sorted((e["topic"], e["partition"]) for wave in parts for e in wave) == sorted((e["topic"], e["partition"]) for e in whole)
    for wave in parts:
        for entry in wave:
            assert entry in whole
        assert max(moves_per_broker(wave).values()) <= 2
    checked = cli("reassign", "check", "--reassignment-json-file", str(tmp_path / "plan.wave-*.json"), state=state)
    assert checked.exit_code == 0, checked.stdout
    assert checked.stdout.splitlines()[0].startswith(f"Plan check PASSED: {waves['count']} waves, checked one after another")


def test_no_wave_is_larger_than_kafka_starts_in_one_request(cli: Cli, state: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import kjbod.planner.run

    monkeypatch.setattr(kjbod.planner.run, "MAX_RECORDS_PER_USER_OP", 2)  # Kafka's 10000, made small enough to reach
    result = cli(
        "-o", "json", "reassign", "plan", "--goal", "balance", "--max-concurrent-moves-per-broker", "100", "--output-file", str(tmp_path / "plan.json"),
        state=state,
    )
    assert result.exit_code == 0, result.stderr
    waves = json.loads(result.stdout)["waves"]
    assert waves["waveSize"] == 2 and waves["count"] > 1
    assert max(waves["partitions"]) == 2 and sum(waves["partitions"]) == len(json.loads((tmp_path / "plan.json").read_text())["partitions"])


def test_waves_are_written_beside_the_plan_and_replaced_with_it(cli: Cli, state: Path, tmp_path: Path) -> None:
    plan_file = tmp_path / "plan.json"
    first = cli("reassign", "plan", "--goal", "balance", "--max-concurrent-moves-per-broker", "1", "--output-file", str(plan_file), state=state)
    assert first.exit_code == 0, first.stderr
    written = sorted(tmp_path.glob("plan.wave-*.json"))
    assert any(line.startswith(f"Wrote it as {len(written)} wave(s) to run one after another ({written[0]} ... {written[-1]})")
               for line in first.stdout.splitlines())
    plan_file.unlink()
    refused = cli("reassign", "plan", "--goal", "balance", "--wave-size", "100", "--output-file", str(plan_file), state=state)
    assert (refused.exit_code, refused.stderr) == (
        1, f"{written[0]} already exists (waves of an earlier plan); choose another --output-file or pass --overwrite to replace them\n"
    )
    again = cli("reassign", "plan", "--goal", "balance", "--wave-size", "100", "--overwrite", "--output-file", str(plan_file), state=state)
    assert again.exit_code == 0, again.stderr
    assert sorted(tmp_path.glob("plan.wave-*.json")) == [tmp_path / "plan.wave-001.json"]  # one wave of 11 now; the rest are gone
    assert json.loads((tmp_path / "plan.wave-001.json").read_text()) == json.loads(plan_file.read_text())


def test_waves_need_a_file_name_not_stdout(cli: Cli, state: Path) -> None:
    result = cli("reassign", "plan", "--goal", "balance", "--max-concurrent-moves-per-broker", "2", "--output-file", "-", state=state)
    assert (result.exit_code, result.stdout, result.stderr) == (
        1, "", "Waves are written to files beside --output-file (F.wave-001.json, ...): give a file name, not -\n"
    )


def test_explain_writes_a_line_per_moved_replica_and_sums_them_up(cli: Cli, state: Path, tmp_path: Path) -> None:
    plan_file, why = tmp_path / "plan.json", tmp_path / "why.jsonl"
    plain = cli("reassign", "plan", "--goal", "balance", "--output-file", str(tmp_path / "plain.json"), state=state)
    result = cli("reassign", "plan", "--goal", "balance", "--output-file", str(plan_file), "--explain", str(why), state=state)
    assert result.exit_code == 0, result.stderr
    # The same report, with the summary before its last line.
    summary = (
        "\n"
        f"Wrote why each of the 21 moved replica(s) moves to {why} (JSON lines).\n"
        "Why they move: 18 replica counts, 3 directory usage bands.\n"
        "Every goal of the plan is reached.\n"
    )
    last = "Per-broker and per-directory figures: --output json.\n"
    assert result.stdout == plain.stdout.replace(str(tmp_path / "plain.json"), str(plan_file)).replace(last, summary + last)
    assert plan_file.read_text() == (tmp_path / "plain.json").read_text()  # --explain changes nothing in the plan
    lines = [json.loads(line) for line in why.read_text().splitlines()]
    assert len(lines) == 21
    # By hand (see test_balance_report_and_plan_file): brokers 1-3 each give 6 replicas to 4-6
    # (from 12 to their target of 6), then move an orders replica from d1 (38.7% used) to d2.
    assert lines[0] == {
        "topic": "events",
        "partition": 1,
        "bytes": 6 * GIB,
        "from": {"broker": 3, "dir": "/data/b3/d1"},
        "to": {"broker": 6, "dir": "/data/b6/d2"},
        "goal": {"kind": "replica-count", "broker": 3, "measure": "replicas", "before": 12, "after": 6, "target": 6, "band": [6, 6]},
        "broker": {"why": "under-replica-target", "replicas": [0, 6, 6], "bytes": [0, 198 * GIB, 198 * GIB]},
        "dir": {"why": "least-used-with-room", "usagePercent": [0, 7.62]},
    }
    within = [line for line in lines if line["broker"] is None]
    assert [(line["from"]["broker"], line["goal"]["kind"], line["goal"]["before"], line["goal"]["after"], line["goal"]["band"]) for line in within] == [
        (b, "directory-band", 38.67, 13.48, [4.67, 14.67]) for b in (1, 2, 3)
    ]
    as_json = json.loads(
        cli("-o", "json", "reassign", "plan", "--goal", "balance", "--output-file", str(plan_file), "--explain", str(why), "--overwrite", state=state).stdout
    )
    assert {k: v for k, v in as_json["explanation"].items() if k != "seconds"} == {
        "file": str(why),
        "moves": 21,
        "movesByGoal": {"replica-count": 18, "directory-band": 3},
        "unreached": 0,
        "unreachedByGoal": {},
    }


def test_explain_with_the_plan_on_stdout(cli: Cli, state: Path, tmp_path: Path) -> None:
    why = tmp_path / "why.jsonl"
    piped = cli("reassign", "plan", "--goal", "remove-brokers", "--broker-list", "4", "--output-file", "-", "--explain", str(why), state=state)
    assert piped.exit_code == 0, piped.stderr
    assert json.loads(piped.stdout)["version"] == 1
    assert f"Wrote why each of the 0 moved replica(s) moves to {why} (JSON lines).\nWhy they move: nothing moves.\n" in piped.stderr
    assert why.read_text() == ""  # broker 4 holds nothing: nothing moves, nothing is out of reach


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--explain", "-"], "--explain writes JSON lines to a file: give a file name, not -"),
        (["--explain", "{plan}"], "--explain {plan} is also --output-file: give it another file name"),
        (["--explain", "{tmp}/nowhere/why.jsonl"], "The directory of --explain {tmp}/nowhere/why.jsonl does not exist; create it first"),
        (["--explain", "{tmp}"], "{tmp} already exists; choose another --explain or pass --overwrite to replace it"),
        (["--explain", "{tmp}", "--overwrite"], "--explain {tmp} is a directory; give a file name"),
    ],
)
def test_explain_mistakes_get_one_line_before_planning(cli: Cli, state: Path, tmp_path: Path, args: list[str], message: str) -> None:
    plan_file = tmp_path / "plan.json"
    args = [arg.format(plan=plan_file, tmp=tmp_path) for arg in args]
    result = cli("reassign", "plan", "--goal", "balance", "--output-file", str(plan_file), *args, state=state)
    assert (result.exit_code, result.stderr, result.stdout) == (1, message.format(plan=plan_file, tmp=tmp_path) + "\n", "")
    assert not plan_file.exists()


def test_an_existing_explain_file_is_kept_and_so_is_the_plan(cli: Cli, state: Path, tmp_path: Path) -> None:
    plan_file, why = tmp_path / "plan.json", tmp_path / "why.jsonl"
    why.write_text("my notes")
    result = cli("reassign", "plan", "--goal", "balance", "--output-file", str(plan_file), "--explain", str(why), state=state)
    assert (result.exit_code, result.stderr) == (1, f"{why} already exists; choose another --explain or pass --overwrite to replace it\n")
    assert why.read_text() == "my notes" and not plan_file.exists()
