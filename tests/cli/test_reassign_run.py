"""`kjbod reassign run` against a stand-in for Kafka's bin/ (tests/tools/reassign/fake_kafka.py: Kafka's
lines over a cluster in a JSON file, time counted in --verify runs). The same command against a
real Kafka 4.4.0: tests/kafka/test_reassign_run.py."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.conftest import Cli
from tests.tools.reassign import interrupting
from tests.tools.reassign.fake_kafka import FakeKafka

WAVE_1 = [
    # a replica to the new broker 4, and broker 1's replica to its other directory
    {"topic": "orders", "partition": 0, "replicas": [1, 4], "log_dirs": ["/data/b1/d2", "/data/b4/d1"]},
    {"topic": "orders", "partition": 1, "replicas": [2, 4], "log_dirs": ["any", "/data/b4/d2"]},
]
WAVE_2 = [{"topic": "audit", "partition": 0, "replicas": [3, 4], "log_dirs": ["/data/b3/d2", "/data/b4/d1"]}]


def new_cluster(work: Path, **options: object) -> FakeKafka:
    kafka = FakeKafka(
        work / "cluster.json",
        brokers=[1, 2, 3, 4],
        partitions={
            "orders-0": {"replicas": [1, 2], "log_dirs": ["/data/b1/d1", "/data/b2/d1"], "size": 1000},
            "orders-1": {"replicas": [2, 3], "log_dirs": ["/data/b2/d1", "/data/b3/d1"], "size": 2000},
            "audit-0": {"replicas": [3, 1], "log_dirs": ["/data/b3/d1", "/data/b1/d1"], "size": 500},
        },
        **options,  # type: ignore[arg-type]
    ).save()
    kafka.write_bin(work / "kafka" / "bin")
    return kafka


def write_plan(work: Path, waves: list[list[dict]] = [WAVE_1, WAVE_2]) -> Path:  # noqa: B006 - never mutated
    return interrupting.write_plan(work, waves)


@pytest.fixture
def work(tmp_path: Path) -> Path:
    return tmp_path


@pytest.fixture
def kafka(work: Path) -> FakeKafka:
    return new_cluster(work)


def run(cli: Cli, work: Path, *extra: str, kafka_bin: bool = True) -> object:
    options = ["--kafka-bin", str(work / "kafka" / "bin")] if kafka_bin else []
    return cli("reassign", "run", "--reassignment-json-file", str(work / "plan.json"), "--bootstrap-server", "b1:9092", *options,
               "--throttle", "10MB", "--replica-alter-log-dirs-throttle", "5MB", "--poll-interval", "0.05", *extra, state=None)


def reassign_calls(kafka: FakeKafka) -> list[str]:
    """The actions of the kafka-reassign-partitions calls, with the wave file's name."""
    calls = []
    for call in FakeKafka.load(kafka.path).calls:
        if call[0] == "kafka-reassign-partitions":
            action = next(a for a in call if a in ("--list", "--execute", "--verify"))
            wave = Path(call[call.index("--reassignment-json-file") + 1]).name if "--reassignment-json-file" in call else ""
            calls.append(f"{action} {wave}".strip())
    return calls


def journal(work: Path) -> dict:
    return json.loads((work / "plan.journal.json").read_text())


def test_each_wave_is_listed_executed_and_verified_until_complete(cli: Cli, work: Path, kafka: FakeKafka) -> None:
    write_plan(work)
    result = run(cli, work)
    assert result.exit_code == 0, result.stderr
    after = FakeKafka.load(kafka.path)
    assert after.placement("orders-0") == ([1, 4], ["/data/b1/d2", "/data/b4/d1"])
    assert after.placement("orders-1") == ([2, 4], ["/data/b2/d1", "/data/b4/d2"])
    assert after.placement("audit-0") == ([3, 4], ["/data/b3/d2", "/data/b4/d1"])
    assert after.ongoing == {} and after.throttled_brokers == [] and after.throttled_topics == []
    # Kafka's steps, in an operator's order: two --verify runs per wave (fake_kafka's steps).
    assert reassign_calls(kafka) == [
        "--list", "--execute plan.wave-001.json", "--verify plan.wave-001.json", "--verify plan.wave-001.json",
        "--list", "--execute plan.wave-002.json", "--verify plan.wave-002.json", "--verify plan.wave-002.json",
    ]
    execute = next(call for call in after.calls if "--execute" in call)
    assert execute[1:] == ["--bootstrap-server", "b1:9092", "--reassignment-json-file", str(work / "plan.wave-001.json"), "--execute",
                           "--throttle", "10000000", "--replica-alter-log-dirs-throttle", "5000000"]
    lines = result.stdout.splitlines()
    assert lines[0].startswith(f"Ran 2 wave(s) of {work / 'plan.json'} with {work / 'kafka' / 'bin' / 'kafka-reassign-partitions.sh'}: "
                               "3 partition(s), 4.9 KiB moved in ")
    assert lines[2].split() == ["Wave", "Partitions", "Moved", "Time", "Throttled", "Rollback"]
    assert lines[3].split()[:4] == ["1", "2", "3.9", "KiB"] and lines[3].endswith("plan.wave-001.rollback.json")
    assert lines[4].split()[:4] == ["2", "1", "1000", "B"] and lines[4].endswith("plan.wave-002.rollback.json")
    assert lines[5] == f"Every wave is complete and Kafka has cleared the throttles; the journal is {work / 'plan.journal.json'}."
    assert "Wave 1 of 2: plan.wave-001.json, 2 partition(s)." in result.stderr
    assert "Wave 2 of 2 complete: 1 partition(s), 1000 B in " in result.stderr
    assert [wave["state"] for wave in journal(work)["waves"]] == ["completed", "completed"]
    assert [wave["executions"] for wave in journal(work)["waves"]] == [1, 1]


def test_the_rollback_file_is_the_assignment_kafka_printed(cli: Cli, work: Path, kafka: FakeKafka) -> None:
    write_plan(work)
    assert run(cli, work).exit_code == 0
    rollback = json.loads((work / "plan.wave-001.rollback.json").read_text())
    assert rollback == {"version": 1, "partitions": [
        {"topic": "orders", "partition": 0, "replicas": [1, 2], "log_dirs": ["any", "any"]},
        {"topic": "orders", "partition": 1, "replicas": [2, 3], "log_dirs": ["any", "any"]},
    ]}
    log = (work / "plan.wave-002.execute.log").read_text()
    assert log.startswith("$ ") and "Successfully started partition reassignment for audit-0" in log


def test_json_output(cli: Cli, work: Path, kafka: FakeKafka) -> None:
    write_plan(work)
    result = cli(
        "-o", "json", "reassign", "run", "--reassignment-json-file", str(work / "plan.json"), "--bootstrap-server", "b1:9092",
        "--kafka-bin", str(work / "kafka" / "bin"), "--poll-interval", "0.05", state=None,
    )
    assert result.exit_code == 0, result.stderr
    document = json.loads(result.stdout)
    assert document["dryRun"] is False and document["wavesRun"] == 2 and document["partitionsMoved"] == 3
    assert document["bytesMoved"] == 5000  # each copy counts: a replica to broker 4 and one between directories
    first = document["waves"][0]
    assert first["wave"] == 1 and first["file"] == "plan.wave-001.json" and first["state"] == "completed" and first["executions"] == 1
    assert first["rollbackFile"] == "plan.wave-001.rollback.json" and first["bytesMoved"] == 4000
    # No throttle asked: no time under throttle.
    assert first["throttledSeconds"] == 0.0 and first["seconds"] > 0


def test_a_completed_plan_is_not_run_again(cli: Cli, work: Path, kafka: FakeKafka) -> None:
    write_plan(work)
    assert run(cli, work).exit_code == 0
    again = run(cli, work)
    assert again.exit_code == 0, again.stderr
    assert again.stdout == f"All 2 wave(s) of {work / 'plan.json'} had completed ({work / 'plan.journal.json'}); nothing to run.\n"
    assert FakeKafka.load(kafka.path).executes(work / "plan.wave-001.json") == 1


def test_dry_run_prints_the_commands_and_runs_nothing(cli: Cli, work: Path, kafka: FakeKafka) -> None:
    write_plan(work)
    result = run(cli, work, "--dry-run")
    assert result.exit_code == 0, result.stderr
    tool = work / "kafka" / "bin" / "kafka-reassign-partitions.sh"
    connection = f"{tool} --bootstrap-server b1:9092"
    assert result.stdout.splitlines() == [
        "# Wave 1 of 2: plan.wave-001.json, 2 partition(s)",
        f"{connection} --list",
        f"{connection} --reassignment-json-file {work / 'plan.wave-001.json'} --execute --throttle 10000000 --replica-alter-log-dirs-throttle 5000000",
        "# its output to plan.wave-001.execute.log; the current assignment it prints to plan.wave-001.rollback.json",
        f"{connection} --reassignment-json-file {work / 'plan.wave-001.json'} --verify",
        "# every 0.05s until every partition and replica is complete and the throttles are cleared",
        "# Wave 2 of 2: plan.wave-002.json, 1 partition(s)",
        f"{connection} --list",
        f"{connection} --reassignment-json-file {work / 'plan.wave-002.json'} --execute --throttle 10000000 --replica-alter-log-dirs-throttle 5000000",
        "# its output to plan.wave-002.execute.log; the current assignment it prints to plan.wave-002.rollback.json",
        f"{connection} --reassignment-json-file {work / 'plan.wave-002.json'} --verify",
        "# every 0.05s until every partition and replica is complete and the throttles are cleared",
    ]
    assert FakeKafka.load(kafka.path).calls == []
    assert not (work / "plan.journal.json").exists()


def test_a_plan_without_waves_is_one_wave(cli: Cli, work: Path, kafka: FakeKafka) -> None:
    write_plan(work, [WAVE_1])
    (work / "plan.wave-001.json").unlink()
    result = run(cli, work)
    assert result.exit_code == 0, result.stderr
    assert reassign_calls(kafka)[:2] == ["--list", "--execute plan.json"]
    assert (work / "plan.rollback.json").exists()


def test_another_reassignment_under_way_stops_the_run_before_its_wave(cli: Cli, work: Path) -> None:
    kafka = new_cluster(work)
    kafka.ongoing = {"audit-0": {"replicas": [3, 2], "log_dirs": ["any", "any"], "left": 99}}
    kafka.save()
    write_plan(work, [WAVE_1])
    result = run(cli, work)
    assert result.exit_code == 1
    assert result.stderr.strip().splitlines()[-1] == (
        "Wave 1 of 1 (plan.wave-001.json) not started: Kafka is already reassigning 1 partition(s) that are not the wave's "
        "(audit-0: replicas: 3,2,1. adding: 2. removing: 1.). Let them complete (or cancel them), then run again"
    )
    assert reassign_calls(kafka) == ["--list"]


def test_a_refused_partition_stops_the_run_with_kafkas_message(cli: Cli, work: Path) -> None:
    new_cluster(work, execute_errors={"orders-1": "Replica assignment is invalid"})
    kafka = FakeKafka.load(work / "cluster.json")
    write_plan(work)
    result = run(cli, work)
    assert result.exit_code == 1
    message = result.stderr.strip().splitlines()[-1]
    assert message == (
        "Wave 1 of 2 (plan.wave-001.json) failed: orders-1: kafka-reassign-partitions --execute: Replica assignment is invalid. "
        "The journal plan.journal.json keeps the run's place: fix the cause and run again to resume"
    )
    record = journal(work)["waves"][0]
    assert record["state"] == "executing" and record["error"].startswith("Wave 1 of 2 (plan.wave-001.json) failed: orders-1:")
    assert journal(work)["waves"][1]["state"] == "pending"
    # The cause fixed, the same command resumes in wave 1: what Kafka started is not executed again,
    # the refused partition is (with --additional, the rest being under way).
    fixed = FakeKafka.load(kafka.path)
    fixed.execute_errors = {}
    fixed.save()
    again = run(cli, work)
    assert again.exit_code == 0, again.stderr
    executes = [call for call in FakeKafka.load(kafka.path).calls if "--execute" in call]
    assert len(executes) == 3 and "--additional" in executes[1]
    assert FakeKafka.load(kafka.path).placement("orders-1") == ([2, 4], ["/data/b2/d1", "/data/b4/d2"])


def test_a_wave_that_will_not_complete_by_waiting_stops_the_run(cli: Cli, work: Path) -> None:
    line = "There is no active reassignment of partition orders-0, but replica set is 1,2 rather than 1,4."
    new_cluster(work, stuck={"orders-0": line}, steps=1)
    write_plan(work)
    result = run(cli, work)
    assert result.exit_code == 1
    assert result.stderr.strip().splitlines()[-1] == (
        f"Wave 1 of 2 (plan.wave-001.json) failed: orders-0: kafka-reassign-partitions --verify: {line} "
        "The journal plan.journal.json keeps the run's place: fix the cause and run again to resume"
    )


def test_the_tool_is_found_in_kafka_home_else_on_path(cli: Cli, work: Path, kafka: FakeKafka, monkeypatch: pytest.MonkeyPatch) -> None:
    write_plan(work)
    monkeypatch.setenv("KAFKA_HOME", str(work / "kafka"))
    result = run(cli, work, "--dry-run", kafka_bin=False)
    assert result.stdout.splitlines()[1].startswith(f"{work / 'kafka' / 'bin' / 'kafka-reassign-partitions.sh'} ")
    monkeypatch.delenv("KAFKA_HOME")
    monkeypatch.setenv("PATH", f"{work / 'kafka' / 'bin'}{os.pathsep}{os.environ['PATH']}")
    result = run(cli, work, "--dry-run", kafka_bin=False)
    assert result.stdout.splitlines()[1].startswith(f"{work / 'kafka' / 'bin' / 'kafka-reassign-partitions.sh'} ")


@pytest.mark.parametrize(
    ("setup", "message"),
    [
        ("bin-missing", "--kafka-bin {work}/nowhere is not a directory: give the bin/ directory of your Kafka installation"),
        ("bin-empty", "No executable kafka-reassign-partitions.sh (or kafka-reassign-partitions) in --kafka-bin {work}/empty"),
        ("home", "No executable kafka-reassign-partitions.sh (or kafka-reassign-partitions) in KAFKA_HOME/bin ({work}/empty/bin): "
                 "fix KAFKA_HOME or give --kafka-bin DIR"),
        ("path", "Cannot find kafka-reassign-partitions.sh (or kafka-reassign-partitions): give --kafka-bin DIR"),
    ],
)
def test_a_missing_tool_is_one_line_that_says_where_it_looked(
    cli: Cli, work: Path, kafka: FakeKafka, monkeypatch: pytest.MonkeyPatch, setup: str, message: str
) -> None:
    write_plan(work)
    (work / "empty").mkdir()
    monkeypatch.delenv("KAFKA_HOME", raising=False)
    monkeypatch.setenv("PATH", str(work / "empty"))
    extra = {"bin-missing": ["--kafka-bin", str(work / "nowhere")], "bin-empty": ["--kafka-bin", str(work / "empty")]}.get(setup, [])
    if setup == "home":
        monkeypatch.setenv("KAFKA_HOME", str(work / "empty"))
    result = run(cli, work, *extra, kafka_bin=False)
    assert result.exit_code == 1
    assert message.format(work=work) in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_a_journal_of_another_version_of_the_plan_is_refused(cli: Cli, work: Path, kafka: FakeKafka) -> None:
    write_plan(work)
    assert run(cli, work).exit_code == 0
    write_plan(work, [WAVE_2, WAVE_1])
    result = run(cli, work)
    assert result.exit_code == 1
    assert (f"{work / 'plan.journal.json'} records a run of another version of plan.json (plan.wave-001.json has changed; it records "
            "waves plan.wave-001.json, plan.wave-002.json as started): restore the plan that ran, or move the journal away") in result.stderr


def test_stray_wave_files_are_refused(cli: Cli, work: Path, kafka: FakeKafka) -> None:
    write_plan(work)
    (work / "plan.json").write_text(json.dumps({"version": 1, "partitions": WAVE_1}))
    result = run(cli, work)
    assert result.exit_code == 1
    assert "The wave files beside" in result.stderr and "plan.wave-002.json holds partitions that are not in it" in result.stderr
    assert FakeKafka.load(kafka.path).calls == []


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--poll-interval", "0"], "Invalid --poll-interval 0.0"),
        (["--throttle", "fast"], "throttle"),
        (["--command-config", "/nonexistent/admin.properties"], "--command-config /nonexistent/admin.properties is not a file"),
    ],
)
def test_bad_values_are_refused_before_anything_runs(cli: Cli, work: Path, kafka: FakeKafka, options: list[str], message: str) -> None:
    write_plan(work)
    result = run(cli, work, *options)
    assert result.exit_code == 1 and message in result.stderr
    assert FakeKafka.load(kafka.path).calls == []


def test_the_command_config_is_passed_to_kafkas_tool(cli: Cli, work: Path, kafka: FakeKafka) -> None:
    write_plan(work, [WAVE_2])
    config = work / "admin.properties"
    config.write_text("security.protocol=SSL\n")
    assert run(cli, work, "--command-config", str(config)).exit_code == 0
    for call in FakeKafka.load(kafka.path).calls:
        assert call[call.index("--command-config") + 1] == str(config)


def test_help_has_an_example(cli: Cli) -> None:
    result = cli("reassign", "run", "--help", state=None)
    assert result.exit_code == 0
    assert "Example: kjbod reassign run --reassignment-json-file plan.json --bootstrap-" in " ".join(result.stdout.split())


def test_waves_run_in_the_order_of_their_numbers(work: Path) -> None:
    from kjbod.tools.reassign.run import load_waves

    waves = [[{"topic": "t", "partition": p, "replicas": [1], "log_dirs": ["any"]}] for p in range(3)]
    plan = write_plan(work, waves)
    (work / "plan.wave-003.json").rename(work / "plan.wave-1000.json")
    assert [wave.path.name for wave in load_waves(plan)] == ["plan.wave-001.json", "plan.wave-002.json", "plan.wave-1000.json"]
