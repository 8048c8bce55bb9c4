"""`kjbod reassign check` through the CLI: every check made to fail and made to pass, the three
reports, the policy file, the exit codes."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kjbod.cli.app import app
from kjbod.records import CONFIG_RESOURCE_BROKER, CONFIG_RESOURCE_TOPIC, ConfigRecord
from kjbod.state.cluster_state import ClusterState

from ..conftest import Cli, CliResult

GIB = 2**30
TIB = 2**40
MIB = 2**20
RACKS = {1: "r1", 2: "r1", 3: "r2", 4: "r2", 5: "r3", 6: "r3", 7: "r1", 8: "r2"}
# 100 MiB/s: the copy model's default link rate too, so a throttled copy of 100 GiB takes 1024 s.
THROTTLE = str(100 * MIB)


def entry(topic: str, partition: int, replicas: list[int], dirs: list[str] | None = None) -> dict:
    found = {"topic": topic, "partition": partition, "replicas": replicas}
    if dirs is not None:
        found["log_dirs"] = dirs
    return found


def on(directory: str, replicas: list[int]) -> list[str]:
    return [f"/data/b{b}/{directory}" for b in replicas]


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An imported cluster: brokers 1-8 in racks r1 (1, 2, 7), r2 (3, 4, 8), r3 (5, 6), each with
    /data/bN/d1 and /data/bN/d2 of 1 TiB (broker 8's d1: 120 GiB). `orders` (3 x 100 GiB) lives on
    the d1s of 1, 3, 5; `events` (2 x 10 GiB) on the d2s of 2, 4, 6; brokers 7 and 8 are empty."""
    work = tmp_path_factory.mktemp("check")
    brokers = {
        "brokers": [
            {
                "id": b,
                "rack": rack,
                "log_dirs": [
                    {"path": f"/data/b{b}/d1", "capacity_bytes": 120 * GIB if b == 8 else TIB},
                    {"path": f"/data/b{b}/d2", "capacity_bytes": TIB},
                ],
            }
            for b, rack in RACKS.items()
        ]
    }
    assignment = {
        "version": 1,
        "partitions": [
            entry("orders", 0, [1, 3, 5], on("d1", [1, 3, 5])),
            entry("orders", 1, [3, 5, 1], on("d1", [3, 5, 1])),
            entry("orders", 2, [5, 1, 3], on("d1", [5, 1, 3])),
            entry("events", 0, [2, 4, 6], on("d2", [2, 4, 6])),
            entry("events", 1, [4, 6, 2], on("d2", [4, 6, 2])),
        ],
    }
    (work / "brokers.json").write_text(json.dumps(brokers))
    (work / "assignment.json").write_text(json.dumps(assignment))
    state = work / "state"
    for args in (
        ["import", "cluster", "--brokers", str(work / "brokers.json"), "--assignment", str(work / "assignment.json")],
        ["topic", "set-size", "orders", "--bytes", str(100 * GIB)],
        ["topic", "set-size", "events", "--bytes", str(10 * GIB)],
    ):
        result = CliRunner().invoke(app, ["--state", str(state), *args], catch_exceptions=False)
        assert result.exit_code == 0, result.stderr
    return state


@pytest.fixture
def cluster(cli: Cli, state_dir: Path, template: Path) -> Cli:
    shutil.rmtree(state_dir)
    shutil.copytree(template, state_dir)
    return cli


def commit(state_dir: Path, *records: ConfigRecord) -> None:
    with ClusterState.open(state_dir, write=True) as state:
        state.commit(list(records))


def write(tmp_path: Path, name: str, content: object) -> str:
    path = tmp_path / name
    path.write_text(content if isinstance(content, str) else json.dumps(content))
    return str(path)


def plan(tmp_path: Path, *partitions: dict, name: str = "plan.json") -> str:
    return write(tmp_path, name, {"version": 1, "partitions": list(partitions)})


# orders-0 from broker 1 to broker 7 (the same rack), every directory named.
GOOD = entry("orders", 0, [7, 3, 5], ["/data/b7/d1", "/data/b3/d1", "/data/b5/d1"])


def check(cli: Cli, plan_file: str, *options: str, policy: str | None = None) -> tuple[CliResult, dict]:
    extra = ["--policy", policy] if policy else []
    result = cli("-o", "json", "reassign", "check", "--reassignment-json-file", plan_file, *extra, *options)
    return result, json.loads(result.stdout)


def outcome(document: dict, check_id: str) -> tuple[str, list[tuple[str, str]]]:
    """(status, [(severity, message)]) of one check in a JSON report."""
    found = next(c for c in document["checks"] if c["id"] == check_id)
    return found["status"], [(f["severity"], f["message"]) for f in found["findings"]]


def finding(document: dict, check_id: str, index: int = 0) -> dict:
    return next(c for c in document["checks"] if c["id"] == check_id)["findings"][index]


def assert_passes(cli: Cli, plan_file: str, check_id: str, *options: str, policy: str | None = None) -> dict:
    result, document = check(cli, plan_file, *options, policy=policy)
    assert outcome(document, check_id) == ("passed", []), outcome(document, check_id)
    assert result.exit_code == (0 if document["passed"] else 1)
    return document


# The whole report ----------------------------------------------------------------------------------


def test_a_good_plan_passes_with_the_default_policy_and_prints_every_check(cluster: Cli, tmp_path: Path) -> None:
    good = plan(tmp_path, GOOD)
    result = cluster("reassign", "check", "--reassignment-json-file", good, "--throttle", THROTTLE)
    assert (result.exit_code, result.stderr) == (0, "")
    assert result.stdout.splitlines() == [
        f"Checked {good}: 1 partition(s); 1 replica(s) to add, 1 to remove, 0 to move between directories; "
        "100.0 GiB to copy between brokers, 0 B between directories.",
        "Plan check PASSED: 16 checks (findings: 0 error, 0 warning, 0 info; failing on error).",
        "",
        "PASS  plan.format [error]: 1 partition in Kafka's reassignment format",
        "PASS  topic.exists [error]: 1 partition of 1 topic found",
        "PASS  broker.eligible [error]: 3 target brokers checked",
        "PASS  logdir.valid [error]: 3 explicit log_dirs entries checked",
        "PASS  rf.unchanged [error]: 1 partition compared",
        "PASS  rack.rule [error]: Rule: no rack holds more than ceil(replication factor / 3 racks) replicas of a partition",
        # 100 GiB of 1 TiB.
        "PASS  capacity.threshold [error]: Fullest directory the plan adds to: 7:/data/b7/d1 at 9.8% (threshold 80.0%)",
        "PASS  isr.min-insync [error]: 1 moving partition checked against min.insync.replicas",
        "PASS  isr.concurrent-moves [error]: The plan drains no broker or directory",
        "PASS  throttle.required [warning]: 100.0 GiB between brokers at --throttle 100.0 MiB/s; 0 B between directories unthrottled",
        "PASS  throttle.orphaned [error]: No throttle is left over",
        "PASS  reassign.in-progress [warning]: No reassignment is in progress",
        "PASS  reassign.record-limit [warning]: 1 partition to change in one request (at most 10000)",
        # 100 GiB at 100 MiB/s: 1024 s.
        "PASS  duration.estimate [warning]: About 17m 4s under --throttle 100.0 MiB/s (simulated; limit 1d)",
        "SKIP  limits.moves-per-broker: the policy sets no limits.max_moves_per_broker",
        "SKIP  limits.bytes: the policy sets neither limits.max_bytes nor limits.max_bytes_per_broker",
    ]


def test_a_failing_plan_lists_the_worst_first_with_what_is_involved_and_exits_1(cluster: Cli, tmp_path: Path) -> None:
    # Broker 9 is unknown; orders-1 would drop to replication factor 2, on brokers 3 and 4 of one rack.
    bad = plan(tmp_path, entry("orders", 0, [9, 3, 5]), entry("orders", 1, [3, 4]))
    result = cluster("reassign", "check", "--reassignment-json-file", bad)
    assert result.exit_code == 1
    assert result.stderr == "3 out of 16 check(s) failed.\n"
    assert result.stdout.splitlines() == [
        f"Checked {bad}: 2 partition(s); 2 replica(s) to add, 3 to remove, 0 to move between directories; "
        "200.0 GiB to copy between brokers, 0 B between directories.",
        "Plan check FAILED: 3 of 16 checks failed (findings: 3 error, 1 warning, 1 info; failing on error).",
        "",
        "FAIL  broker.eligible [error]: 4 target brokers checked",
        "    error: Unknown broker id 9: no such broker is registered.",
        "      partitions: orders-0",
        "      brokers: 9",
        "FAIL  rf.unchanged [error]: 2 partitions compared",
        "    error: 1 partition would decrease its replication factor: orders-1 (3 -> 2)",
        "      partitions: orders-1",
        "FAIL  rack.rule [error]: Rule: no rack holds more than ceil(replication factor / 3 racks) replicas of a partition",
        "    error: 1 partition would put too many replicas in one rack: orders-1 (2 in r2, at most 1)",
        "      partitions: orders-1",
        "      brokers: 3, 4",
        "WARN  throttle.required [warning]: 200.0 GiB between brokers unthrottled; 0 B between directories unthrottled",
        "    warning: The plan copies 200.0 GiB between brokers, more than 10.0 GiB, without --throttle: give it to check and to "
        "execute (or set it in the policy's [throttle] section).",
        "      partitions: orders-0, orders-1",
        # Passing checks with notes come before clean passes.
        "PASS  capacity.threshold [error]: Fullest directory the plan adds to: 4:/data/b4/d1 at 9.8% (threshold 80.0%)",
        '    info: 1 new replica with "any" on brokers with several directories: the broker chooses the directory (KIP-858); '
        "this check assumed its least-used online, uncordoned directory.",
        "      partitions: orders-1",
        "      brokers: 4",
        "PASS  plan.format [error]: 2 partitions in Kafka's reassignment format",
        "PASS  topic.exists [error]: 2 partitions of 1 topic found",
        "PASS  logdir.valid [error]: 0 explicit log_dirs entries checked",
        "PASS  isr.min-insync [error]: 2 moving partitions checked against min.insync.replicas",
        "PASS  isr.concurrent-moves [error]: The plan drains no broker or directory",
        "PASS  throttle.orphaned [error]: No throttle is left over",
        "PASS  reassign.in-progress [warning]: No reassignment is in progress",
        # Checks that could not run say why, last.
        "SKIP  limits.moves-per-broker: the policy sets no limits.max_moves_per_broker",
        "SKIP  limits.bytes: the policy sets neither limits.max_bytes nor limits.max_bytes_per_broker",
        "SKIP  reassign.record-limit: execute would refuse the plan: Unknown broker id 9 (not registered, or fenced; see broker.eligible)",
        "SKIP  duration.estimate: execute would refuse the plan: Unknown broker id 9",
    ]


# plan.format ------------------------------------------------------------------------------------


def test_plan_format_fails_on_what_execute_refuses_with_kafkas_message(cluster: Cli, tmp_path: Path) -> None:
    twice = plan(tmp_path, GOOD, entry("orders", 0, [1, 3, 5]))
    result, document = check(cluster, twice)
    assert result.exit_code == 1
    # The last entry of a partition wins, as in Kafka: orders-0 stays as it is.
    assert outcome(document, "plan.format") == (
        "failed",
        [
            ("error", "Partition reassignment contains duplicate topic partitions: orders-0"),
            ("info", "1 partition already has this assignment: nothing to do for it."),
        ],
    )
    assert finding(document, "plan.format")["partitions"] == ["orders-0"]


def test_plan_format_fails_on_json_kafka_cannot_read_and_nothing_else_runs(cluster: Cli, tmp_path: Path) -> None:
    broken = write(tmp_path, "broken.json", '{"version":1,"partitions":[{"topic":"orders","partition":0,"replicas":[1,2],"log_dirs":["any"]}]}')
    result, document = check(cluster, broken)
    assert result.exit_code == 1
    assert outcome(document, "plan.format") == (
        "failed",
        [("error", "Size of replicas list [1, 2] is different from size of log dirs list [any] for partition orders-0")],
    )
    assert {c["status"] for c in document["checks"] if c["id"] != "plan.format"} == {"skipped"}
    assert document["plan"] == {"file": broken, "readable": False}
    text = cluster("reassign", "check", "--reassignment-json-file", write(tmp_path, "empty.json", ""))
    assert text.stdout.splitlines()[:5] == [
        f"Checked {tmp_path / 'empty.json'}: it could not be read as a reassignment.",
        "Plan check FAILED: 1 of 16 checks failed (findings: 1 error, 0 warning, 0 info; failing on error).",
        "",
        "FAIL  plan.format [error]: The file is not Kafka reassignment JSON",
        "    error: The input string shouldn't be empty",
    ]


def test_plan_format_passes_a_plan_without_log_dirs_and_notes_partitions_with_nothing_to_do(cluster: Cli, tmp_path: Path) -> None:
    result, document = check(cluster, plan(tmp_path, entry("orders", 0, [7, 3, 5]), entry("orders", 1, [3, 5, 1])))
    assert outcome(document, "plan.format") == ("passed", [("info", "1 partition already has this assignment: nothing to do for it.")])
    assert result.exit_code == 0


# topic.exists -----------------------------------------------------------------------------------


def test_topic_exists_fails_on_unknown_topics_and_partitions(cluster: Cli, tmp_path: Path) -> None:
    result, document = check(cluster, plan(tmp_path, entry("nope", 0, [1, 3, 5]), entry("orders", 9, [1, 3, 5]), GOOD))
    assert result.exit_code == 1
    assert outcome(document, "topic.exists") == ("failed", [("error", "Topic nope not found."), ("error", "Unable to find partition: orders-9")])
    assert finding(document, "topic.exists")["topics"] == ["nope"]
    # The partitions that exist are still checked.
    assert outcome(document, "rack.rule")[0] == "passed"


def test_topic_exists_passes(cluster: Cli, tmp_path: Path) -> None:
    assert_passes(cluster, plan(tmp_path, GOOD), "topic.exists")


# broker.eligible --------------------------------------------------------------------------------


def test_broker_eligible_fails_on_unknown_fenced_shutting_down_and_removed_brokers(cluster: Cli, state_dir: Path, tmp_path: Path) -> None:
    assert cluster("broker", "fence", "--id", "7").exit_code == 0
    # Broker 5 leads orders-2, so it stays in controlled shutdown until leadership moves.
    assert cluster("broker", "heartbeat", "--id", "5", "--want-shutdown").exit_code == 0
    policy = write(tmp_path, "policy.toml", "removing_brokers = [8, 1]\n")
    doomed = plan(tmp_path, entry("orders", 0, [7, 9, 5]), entry("events", 0, [2, 8, 6]), entry("orders", 1, [3, 5, 2]))
    result, document = check(cluster, doomed, policy=policy)
    assert result.exit_code == 1
    assert outcome(document, "broker.eligible") == (
        "failed",
        [
            ("error", "Unknown broker id 9: no such broker is registered."),
            ("error", "Broker 7 is fenced: a replica there cannot catch up, so its reassignment would never complete."),
            ("error", "Broker 5 is in controlled shutdown: a replica there cannot catch up, so its reassignment would never complete."),
            ("error", "Broker 8 is being removed (policy removing_brokers): no replica may stay on or move onto it."),
            # orders-2 stays on broker 1 (orders-0 moves off it); events-0 moves onto broker 8.
            ("info", "Broker 1 (being removed) still holds 1 replica once the plan completes."),
            ("info", "Broker 8 (being removed) still holds 1 replica once the plan completes."),
        ],
    )
    assert [f["partitions"] for f in next(c for c in document["checks"] if c["id"] == "broker.eligible")["findings"][:4]] == [
        ["orders-0"],
        ["orders-0"],
        ["orders-0", "orders-1"],
        ["events-0"],
    ]


def test_broker_eligible_passes(cluster: Cli, tmp_path: Path) -> None:
    assert_passes(cluster, plan(tmp_path, GOOD), "broker.eligible")


# logdir.valid -----------------------------------------------------------------------------------


def test_logdir_valid_fails_on_unknown_offline_and_cordoned_directories(cluster: Cli, tmp_path: Path) -> None:
    assert cluster("broker", "cordon-dir", "--id", "7", "--dir", "/data/b7/d1").exit_code == 0
    assert cluster("broker", "fail-dir", "--id", "8", "--dir", "/data/b8/d2").exit_code == 0
    doomed = plan(
        tmp_path,
        entry("orders", 0, [7, 3, 5], ["/data/b7/d1", "any", "any"]),
        entry("orders", 1, [3, 8, 1], ["any", "/data/b8/d2", "/data/b1/nope"]),
    )
    result, document = check(cluster, doomed)
    assert result.exit_code == 1
    assert outcome(document, "logdir.valid") == (
        "failed",
        [
            ("error", "log_dirs entries name no log directory of their broker: 1:/data/b1/nope"),
            ("error", "Replicas would move into 1 directory that is offline: 8:/data/b8/d2"),
            ("error", "Replicas would move into 1 directory that is cordoned (it takes no new replicas): 7:/data/b7/d1"),
        ],
    )
    assert finding(document, "logdir.valid", 2)["directories"][0]["path"] == "/data/b7/d1"


def test_logdir_valid_fails_on_a_move_between_directories_of_a_broker_with_an_offline_directory(cluster: Cli, tmp_path: Path) -> None:
    assert cluster("broker", "fail-dir", "--id", "3", "--dir", "/data/b3/d2").exit_code == 0
    result, document = check(
        cluster,
        plan(tmp_path, entry("events", 0, [2, 4, 6], ["any", "/data/b4/d1", "any"]), entry("orders", 1, [3, 5, 1], ["/data/b3/d2", "any", "any"])),
    )
    assert outcome(document, "logdir.valid") == (
        "failed",
        [
            ("error", "Replicas would move into 1 directory that is offline: 3:/data/b3/d2"),
            (
                "error",
                "Broker 3 has an offline log directory: a broker creates no future replica while one of its directories is "
                "offline, so these moves between directories fail.",
            ),
        ],
    )
    assert finding(document, "logdir.valid", 1)["partitions"] == ["orders-1"]
    moving, document = check(cluster, plan(tmp_path, entry("orders", 0, [1, 3, 5], ["any", "/data/b3/d1", "/data/b5/d2"]), name="move.json"))
    assert outcome(document, "logdir.valid") == ("passed", [])
    assert cluster("broker", "fail-dir", "--id", "5", "--dir", "/data/b5/d1").exit_code == 0
    moving, document = check(cluster, plan(tmp_path, entry("orders", 0, [1, 3, 5], ["any", "any", "/data/b5/d2"]), name="move.json"))
    assert outcome(document, "logdir.valid") == (
        "failed",
        [
            ("error", "Replicas whose directory is offline cannot move to another directory (re-replicate them instead)."),
        ],
    )


def test_logdir_valid_passes_explicit_and_any_directories(cluster: Cli, tmp_path: Path) -> None:
    assert_passes(cluster, plan(tmp_path, GOOD, entry("orders", 1, [3, 5, 7])), "logdir.valid")


# rf.unchanged -----------------------------------------------------------------------------------


def test_rf_unchanged_fails_on_a_decrease(cluster: Cli, tmp_path: Path) -> None:
    result, document = check(cluster, plan(tmp_path, entry("orders", 0, [1, 3])))
    assert result.exit_code == 1
    assert outcome(document, "rf.unchanged") == ("failed", [("error", "1 partition would decrease its replication factor: orders-0 (3 -> 2)")])


def test_rf_unchanged_passes_when_the_policy_allows_the_change(cluster: Cli, tmp_path: Path) -> None:
    policy = write(tmp_path, "policy.toml", '[replication_factor]\nallowed_changes = ["increase"]\n')
    result, document = check(cluster, plan(tmp_path, entry("events", 0, [2, 4, 6, 1])), policy=policy)
    assert outcome(document, "rf.unchanged") == (
        "passed",
        [("info", "1 partition would increase its replication factor: events-0 (3 -> 4) (allowed by the policy).")],
    )
    assert result.exit_code == 0


# rack.rule --------------------------------------------------------------------------------------


def test_rack_rule_fails_when_a_partition_loses_a_rack(cluster: Cli, tmp_path: Path) -> None:
    result, document = check(cluster, plan(tmp_path, entry("orders", 0, [1, 2, 5])))
    assert result.exit_code == 1
    assert outcome(document, "rack.rule") == (
        "failed",
        [("error", "1 partition would put too many replicas in one rack: orders-0 (2 in r1, at most 1)")],
    )
    assert finding(document, "rack.rule")["brokers"] == [1, 2, 5]


def test_rack_rule_no_worse_mode_and_off(cluster: Cli, tmp_path: Path) -> None:
    worse = plan(tmp_path, entry("orders", 0, [1, 2, 5]))
    no_worse = write(tmp_path, "policy.toml", '[racks]\nmode = "no-worse"\n')
    assert outcome(check(cluster, worse, policy=no_worse)[1], "rack.rule") == (
        "failed",
        [("error", "1 partition would put too many replicas in one rack: orders-0 (2 in r1, at most 1)")],
    )
    off = write(tmp_path, "off.toml", '[racks]\nmode = "off"\n')
    document = check(cluster, worse, policy=off)[1]
    assert next(c for c in document["checks"] if c["id"] == "rack.rule")["skippedReason"] == 'racks.mode is "off"'


def test_rack_rule_passes(cluster: Cli, tmp_path: Path) -> None:
    assert_passes(cluster, plan(tmp_path, GOOD, entry("events", 0, [2, 4, 5])), "rack.rule")


# capacity.threshold -----------------------------------------------------------------------------


def test_capacity_threshold_fails_when_a_directory_would_end_above_it(cluster: Cli, tmp_path: Path) -> None:
    # 100 GiB into broker 8's 120 GiB d1: 83.3%.
    result, document = check(cluster, plan(tmp_path, entry("orders", 0, [1, 8, 5], ["any", "/data/b8/d1", "any"])))
    assert result.exit_code == 1
    assert outcome(document, "capacity.threshold") == (
        "failed",
        [
            ("error", "Directory 8:/data/b8/d1 ends at 83.3% of 120.0 GiB (+100.0 GiB in 1 replica), above the threshold of 80.0%."),
        ],
    )
    assert finding(document, "capacity.threshold")["partitions"] == ["orders-0"]
    # A looser policy lets it through.
    loose = write(tmp_path, "policy.toml", "[limits]\ncapacity_threshold = 0.9\n")
    assert (
        outcome(check(cluster, plan(tmp_path, entry("orders", 0, [1, 8, 5], ["any", "/data/b8/d1", "any"])), policy=loose)[1], "capacity.threshold")[
            0
        ]
        == "passed"
    )


def test_capacity_threshold_assumes_the_least_used_directory_for_any_and_says_so(cluster: Cli, tmp_path: Path) -> None:
    # Broker 8's d2 (1 TiB) is least used as a fraction: the replica fits.
    result, document = check(cluster, plan(tmp_path, entry("orders", 0, [1, 8, 5])))
    assert outcome(document, "capacity.threshold") == (
        "passed",
        [
            (
                "info",
                '1 new replica with "any" on brokers with several directories: the broker chooses the directory (KIP-858); '
                "this check assumed its least-used online, uncordoned directory.",
            ),
        ],
    )
    assert next(c for c in document["checks"] if c["id"] == "capacity.threshold")["summary"] == (
        "Fullest directory the plan adds to: 8:/data/b8/d2 at 9.8% (threshold 80.0%)"
    )


def test_capacity_threshold_passes(cluster: Cli, tmp_path: Path) -> None:
    assert_passes(cluster, plan(tmp_path, GOOD), "capacity.threshold")


# isr.min-insync ---------------------------------------------------------------------------------


def test_min_insync_fails_when_too_few_in_sync_replicas_stay(cluster: Cli, state_dir: Path, tmp_path: Path) -> None:
    commit(state_dir, ConfigRecord(resource_type=CONFIG_RESOURCE_TOPIC, resource_name="orders", name="min.insync.replicas", value="2"))
    result, document = check(cluster, plan(tmp_path, entry("orders", 0, [7, 8, 5]), entry("orders", 1, [3, 5])))
    assert result.exit_code == 1
    assert outcome(document, "isr.min-insync") == (
        "failed",
        [
            (
                "error",
                "1 partition would keep fewer than min.insync.replicas in-sync replicas while moving: "
                "orders-0 (keeps 1 of 3 in sync, min.insync.replicas=2)",
            ),
        ],
    )
    # The cluster default applies where the topic sets nothing: a replication factor of 1 is below it.
    commit(state_dir, ConfigRecord(resource_type=CONFIG_RESOURCE_BROKER, resource_name="", name="min.insync.replicas", value="2"))
    result, document = check(cluster, plan(tmp_path, entry("events", 0, [2]), name="shrink.json"))
    assert outcome(document, "isr.min-insync") == (
        "failed",
        [
            (
                "error",
                "1 partition would keep fewer than min.insync.replicas in-sync replicas while moving: "
                "events-0 (keeps 1 of 3 in sync, min.insync.replicas=2)",
            ),
            (
                "error",
                "1 partition would have fewer replicas than min.insync.replicas and refuse acks=all writes: "
                "events-0 (1 replicas, min.insync.replicas=2)",
            ),
        ],
    )


def test_min_insync_passes_when_enough_in_sync_replicas_stay(cluster: Cli, state_dir: Path, tmp_path: Path) -> None:
    commit(state_dir, ConfigRecord(resource_type=CONFIG_RESOURCE_TOPIC, resource_name="orders", name="min.insync.replicas", value="2"))
    assert_passes(cluster, plan(tmp_path, GOOD), "isr.min-insync")


# isr.concurrent-moves ---------------------------------------------------------------------------


def test_concurrent_moves_fails_when_two_drained_brokers_share_a_partition(cluster: Cli, state_dir: Path, tmp_path: Path) -> None:
    commit(state_dir, ConfigRecord(resource_type=CONFIG_RESOURCE_BROKER, resource_name="", name="min.insync.replicas", value="2"))
    # Brokers 2 and 4 hold both events partitions: draining both at once.
    drain = plan(tmp_path, entry("events", 0, [7, 8, 6]), entry("events", 1, [8, 6, 7]))
    result, document = check(cluster, drain)
    assert result.exit_code == 1
    assert outcome(document, "isr.concurrent-moves") == (
        "failed",
        [
            (
                "error",
                "2 partitions have in-sync replicas in two or more of the brokers or directories this plan drains (2, 4); "
                "taken down together they would leave fewer than min.insync.replicas: events-0 (2, 4), events-1 (2, 4)",
            ),
        ],
    )
    assert finding(document, "isr.concurrent-moves")["brokers"] == [2, 4]


def test_concurrent_moves_counts_brokers_being_removed_that_the_plan_leaves_in_place(cluster: Cli, state_dir: Path, tmp_path: Path) -> None:
    commit(state_dir, ConfigRecord(resource_type=CONFIG_RESOURCE_BROKER, resource_name="", name="min.insync.replicas", value="2"))
    policy = write(tmp_path, "policy.toml", "removing_brokers = [2, 4]\n")
    result, document = check(cluster, plan(tmp_path, GOOD), policy=policy)
    assert outcome(document, "isr.concurrent-moves")[0] == "failed"
    assert finding(document, "isr.concurrent-moves")["partitions"] == ["events-0", "events-1"]


def test_concurrent_moves_passes_when_one_broker_is_drained(cluster: Cli, state_dir: Path, tmp_path: Path) -> None:
    commit(state_dir, ConfigRecord(resource_type=CONFIG_RESOURCE_BROKER, resource_name="", name="min.insync.replicas", value="2"))
    document = assert_passes(cluster, plan(tmp_path, entry("events", 0, [7, 4, 6]), entry("events", 1, [4, 6, 7])), "isr.concurrent-moves")
    assert next(c for c in document["checks"] if c["id"] == "isr.concurrent-moves")["summary"] == "The plan drains 1 broker or directory: 2"


# limits.moves-per-broker ------------------------------------------------------------------------


def test_moves_per_broker_fails_over_the_limit(cluster: Cli, tmp_path: Path) -> None:
    policy = write(tmp_path, "policy.toml", "[limits]\nmax_moves_per_broker = 1\n")
    result, document = check(cluster, plan(tmp_path, GOOD, entry("orders", 1, [3, 5, 7])), policy=policy)
    assert result.exit_code == 1
    assert outcome(document, "limits.moves-per-broker") == (
        "failed",
        [
            (
                "error",
                "2 brokers over the limit of 1 moves: broker 1: 2 (0 in, 2 out, 0 between directories), "
                "broker 7: 2 (2 in, 0 out, 0 between directories)",
            ),
        ],
    )


def test_moves_per_broker_passes_within_the_limit(cluster: Cli, tmp_path: Path) -> None:
    policy = write(tmp_path, "policy.toml", "[limits]\nmax_moves_per_broker = 2\n")
    assert_passes(cluster, plan(tmp_path, GOOD, entry("orders", 1, [3, 5, 7])), "limits.moves-per-broker", policy=policy)


# limits.bytes -----------------------------------------------------------------------------------


def test_bytes_fails_over_the_total_and_per_broker_limits(cluster: Cli, tmp_path: Path) -> None:
    policy = write(tmp_path, "policy.toml", f"[limits]\nmax_bytes = {150 * GIB}\nmax_bytes_per_broker = {150 * GIB}\n")
    result, document = check(cluster, plan(tmp_path, GOOD, entry("orders", 1, [3, 5, 7])), policy=policy)
    assert result.exit_code == 1
    assert outcome(document, "limits.bytes") == (
        "failed",
        [
            (
                "error",
                "The plan copies 200.0 GiB (214748364800 bytes: 200.0 GiB between brokers, 0 B between directories), over the limit of 150.0 GiB.",
            ),
            ("error", "1 broker would receive more than 150.0 GiB: broker 7: 200.0 GiB"),
        ],
    )


def test_bytes_passes_within_the_limits(cluster: Cli, tmp_path: Path) -> None:
    policy = write(tmp_path, "policy.toml", f"[limits]\nmax_bytes = {200 * GIB}\n")
    assert_passes(cluster, plan(tmp_path, GOOD, entry("orders", 1, [3, 5, 7])), "limits.bytes", policy=policy)


# throttle.required ------------------------------------------------------------------------------


def test_throttle_required_warns_and_fails_the_gate_when_the_policy_fails_on_warnings(cluster: Cli, tmp_path: Path) -> None:
    good = plan(tmp_path, GOOD, entry("orders", 1, [3, 5, 1], ["any", "any", "/data/b1/d2"]))
    message = (
        "The plan copies 100.0 GiB between brokers, more than 10.0 GiB, without --throttle: give it to check and to execute "
        "(or set it in the policy's [throttle] section)."
    )
    result, document = check(cluster, good)
    assert outcome(document, "throttle.required") == (
        "passed",
        [
            ("warning", message),
            ("warning", message.replace("between brokers", "between directories").replace("--throttle", "--replica-alter-log-dirs-throttle")),
        ],
    )
    assert result.exit_code == 0
    strict = write(tmp_path, "policy.toml", 'fail_on = ["warning", "error"]\n')
    result, document = check(cluster, good, policy=strict)
    assert outcome(document, "throttle.required")[0] == "failed"
    assert result.exit_code == 1


def test_throttle_required_passes_with_throttles_from_the_options_or_the_policy(cluster: Cli, tmp_path: Path) -> None:
    good = plan(tmp_path, GOOD, entry("orders", 1, [3, 5, 1], ["any", "any", "/data/b1/d2"]))
    assert_passes(cluster, good, "throttle.required", "--throttle", THROTTLE, "--replica-alter-log-dirs-throttle", THROTTLE)
    policy = write(tmp_path, "policy.toml", f"[throttle]\nrate = {THROTTLE}\nreplica_alter_log_dirs_rate = {THROTTLE}\n")
    document = assert_passes(cluster, good, "throttle.required", policy=policy)
    assert document["plan"]["throttle"] == 100 * MIB


# throttle.orphaned ------------------------------------------------------------------------------


def test_throttle_orphaned_fails_after_a_throttled_reassignment_nobody_verified(cluster: Cli, tmp_path: Path) -> None:
    earlier = plan(tmp_path, entry("events", 0, [7, 4, 6]), name="earlier.json")
    assert cluster("reassign", "execute", "--reassignment-json-file", earlier, "--throttle", "1000000").exit_code == 0
    assert cluster("clock", "advance", "--until-idle").exit_code == 0
    result, document = check(cluster, plan(tmp_path, GOOD))
    assert result.exit_code == 1
    assert outcome(document, "throttle.orphaned") == (
        "failed",
        [
            (
                "error",
                "Throttles left over from an earlier reassignment (they cap later replication, recovery included): "
                "topic events (leader.replication.throttled.replicas, follower.replication.throttled.replicas), "
                "broker 2 (leader.replication.throttled.rate=1000000, follower.replication.throttled.rate=1000000), "
                "broker 4 (leader.replication.throttled.rate=1000000, follower.replication.throttled.rate=1000000), "
                "broker 6 (leader.replication.throttled.rate=1000000, follower.replication.throttled.rate=1000000), "
                "broker 7 (leader.replication.throttled.rate=1000000, follower.replication.throttled.rate=1000000). "
                "Run `kjbod reassign verify` with the earlier plan, or remove them.",
            ),
        ],
    )
    # verify clears them, and the gate opens.
    assert cluster("reassign", "verify", "--reassignment-json-file", earlier).exit_code == 0
    assert_passes(cluster, plan(tmp_path, GOOD), "throttle.orphaned")


def test_throttle_orphaned_passes_while_the_throttled_reassignment_runs(cluster: Cli, tmp_path: Path) -> None:
    earlier = plan(tmp_path, entry("events", 0, [7, 4, 6]), name="earlier.json")
    assert cluster("reassign", "execute", "--reassignment-json-file", earlier, "--throttle", "1000000").exit_code == 0
    assert_passes(cluster, plan(tmp_path, GOOD), "throttle.orphaned")


# reassign.in-progress ---------------------------------------------------------------------------


def test_in_progress_warns_about_a_running_reassignment(cluster: Cli, tmp_path: Path) -> None:
    assert cluster("reassign", "execute", "--reassignment-json-file", plan(tmp_path, GOOD, name="running.json")).exit_code == 0
    result, document = check(cluster, plan(tmp_path, entry("orders", 0, [8, 3, 5]), entry("orders", 2, [5, 7, 3])))
    assert outcome(document, "reassign.in-progress") == (
        "passed",
        [
            (
                "warning",
                "1 partition is being reassigned now: orders-0; execute needs --additional to run alongside, "
                "and 1 partition of the plan would get a new target mid-flight.",
            ),
        ],
    )
    strict = write(tmp_path, "policy.toml", '[severities]\n"reassign.in-progress" = "error"\n')
    result, document = check(cluster, plan(tmp_path, entry("orders", 2, [5, 7, 3]), name="other.json"), policy=strict)
    assert outcome(document, "reassign.in-progress")[0] == "failed"
    assert result.exit_code == 1


def test_in_progress_passes(cluster: Cli, tmp_path: Path) -> None:
    assert_passes(cluster, plan(tmp_path, GOOD), "reassign.in-progress")


# reassign.record-limit --------------------------------------------------------------------------


def test_record_limit_warns_of_the_partitions_execute_would_fail_and_the_gate_still_passes(cli: Cli, state_dir: Path, tmp_path: Path) -> None:
    # Two topics of 5001 partitions on brokers 1 and 2; the plan moves every partition's replica
    # on 1 to 3 except a-0's: 10001 partitions change, one more than one request may write.
    half = 5001
    brokers = {"brokers": [{"id": b, "log_dirs": [{"path": f"/data/b{b}/d1"}]} for b in (1, 2, 3)]}
    assignment = {"version": 1, "partitions": [entry(name, p, [1, 2]) for name in ("a", "b") for p in range(half)]}
    imported = cli(
        "import", "cluster", "--brokers", write(tmp_path, "brokers.json", brokers), "--assignment", write(tmp_path, "assignment.json", assignment)
    )
    assert imported.exit_code == 0, imported.stderr
    huge = plan(tmp_path, *[entry(name, p, [1, 2] if (name, p) == ("a", 0) else [3, 2]) for name in ("a", "b") for p in range(half)])
    result, document = check(cli, huge)
    assert (result.exit_code, document["summary"]) == (
        0,
        "Plan check PASSED: 16 checks (findings: 0 error, 1 warning, 2 info; failing on error).",
    )
    assert outcome(document, "reassign.record-limit") == (
        "passed",
        [
            (
                "warning",
                "1 partition of the 10001 the plan changes would fail with UNKNOWN_SERVER_ERROR, from b-5000 on: Kafka's controller "
                "writes at most 10000 records (one per partition that changes) for one request (MAX_RECORDS_PER_USER_OP), so "
                "execute starts the first 10000 and fails the rest. Split the plan into waves of at most 10000 partitions "
                "(`reassign plan --wave-size N`, with --max-concurrent-moves-per-broker K to spread each broker's moves), check "
                "them together and execute them one after another.",
            )
        ],
    )
    assert finding(document, "reassign.record-limit")["partitions"] == ["b-5000"]
    # Execute fails exactly the partitions the check named.
    executed = cli("reassign", "execute", "--reassignment-json-file", huge)
    assert executed.exit_code == 1
    assert executed.stderr.splitlines()[:2] == ["Error reassigning partition(s):", "b-5000: The server experienced an unexpected error when processing the request."]
    # A policy may make it fail the gate; waves within the limit pass it.
    strict = write(tmp_path, "policy.toml", '[severities]\n"reassign.record-limit" = "error"\n')
    shutil.rmtree(state_dir)
    assert cli(
        "import", "cluster", "--brokers", str(tmp_path / "brokers.json"), "--assignment", str(tmp_path / "assignment.json")
    ).exit_code == 0
    result, document = check(cli, huge, policy=strict)
    assert (result.exit_code, outcome(document, "reassign.record-limit")[0]) == (1, "failed")
    waves = [plan(tmp_path, *[entry(name, p, [3, 2]) for p in range(half)], name=f"wave-{name}.json") for name in ("a", "b")]
    result = cli("-o", "json", "reassign", "check", "--reassignment-json-file", waves[0], "--reassignment-json-file", waves[1], "--policy", strict)
    assert result.exit_code == 0, result.stdout[-2000:]
    for wave in json.loads(result.stdout)["waves"]:
        assert outcome(wave, "reassign.record-limit") == ("passed", [])


def test_record_limit_passes_and_counts_only_partitions_that_change(cluster: Cli, tmp_path: Path) -> None:
    # orders-1 is listed as it is: it writes no record.
    result, document = check(cluster, plan(tmp_path, GOOD, entry("orders", 1, [3, 5, 1])))
    assert outcome(document, "reassign.record-limit") == ("passed", [])
    assert next(c for c in document["checks"] if c["id"] == "reassign.record-limit")["summary"] == (
        "1 partition to change in one request (at most 10000)"
    )


# duration.estimate ------------------------------------------------------------------------------


def test_duration_fails_over_the_policy_limit(cluster: Cli, tmp_path: Path) -> None:
    policy = write(tmp_path, "policy.toml", '[limits]\nmax_duration = "15m"\n[severities]\n"duration.estimate" = "error"\n')
    result, document = check(cluster, plan(tmp_path, GOOD), "--throttle", THROTTLE, policy=policy)
    assert result.exit_code == 1
    assert outcome(document, "duration.estimate") == (
        "failed",
        [
            (
                "error",
                "The plan would take about 17m 4s under --throttle 100.0 MiB/s, longer than the policy's 15m: "
                "raise the throttle or split the plan into batches.",
            ),
        ],
    )
    assert document["estimate"] == {
        "method": "simulation",
        "durationMs": 1_024_000,
        "duration": "17m 4s",
        "lowerBound": False,
        "bottleneck": None,
        "blocked": [],
        "otherCopiesInProgress": 0,
    }


def test_duration_fails_when_a_copy_can_never_complete(cluster: Cli, tmp_path: Path) -> None:
    # A throttle of 0 B/s: execute accepts it, and the copy never moves.
    result, document = check(cluster, plan(tmp_path, GOOD), "--throttle", "0")
    assert outcome(document, "duration.estimate") == (
        "passed",
        [
            ("warning", "1 copy can never complete (simulation): orders-0 to broker 7: its rate is 0 B/s (a throttle or link rate of 0)"),
        ],
    )


def test_duration_matches_what_the_clock_then_does(cluster: Cli, tmp_path: Path) -> None:
    two = plan(tmp_path, GOOD, entry("events", 1, [4, 6, 8], ["any", "any", "/data/b8/d2"]))
    # The check takes the throttle with a unit, execute as Kafka's plain bytes/s: the same rate.
    result, document = check(cluster, two, "--throttle", "50MiB")
    estimated = document["estimate"]["durationMs"]
    # Both copies share nothing: orders-0 (100 GiB at 50 MiB/s) takes 2048 s.
    assert estimated == 2_048_000
    assert cluster("reassign", "execute", "--reassignment-json-file", two, "--throttle", str(50 * MIB)).exit_code == 0
    advanced = json.loads(cluster("-o", "json", "clock", "advance", "--until-idle").stdout)
    assert advanced["timeMs"] - advanced["previousMs"] == estimated


def test_duration_bandwidth_estimate_matches_the_simulation_when_one_link_is_the_bottleneck(cluster: Cli, tmp_path: Path) -> None:
    # Three copies into broker 7: its inbound link (100 MiB/s) carries 300 GiB in 3072 s either way.
    fill = plan(tmp_path, GOOD, entry("orders", 1, [3, 5, 7]), entry("orders", 2, [5, 7, 3]))
    bandwidth = write(tmp_path, "policy.toml", '[estimate]\nmethod = "bandwidth"\n')
    simulated = check(cluster, fill)[1]["estimate"]
    estimated = check(cluster, fill, policy=bandwidth)[1]
    assert simulated["durationMs"] == estimated["estimate"]["durationMs"] == 3_072_000
    assert estimated["estimate"]["method"] == "bandwidth"
    assert estimated["estimate"]["bottleneck"] == "broker 7's inbound link (100.0 MiB/s)"
    assert next(c for c in estimated["checks"] if c["id"] == "duration.estimate")["summary"] == (
        "At least 51m 12s under no --throttle (bandwidth estimate, limited by broker 7's inbound link (100.0 MiB/s); limit 1d)"
    )


def test_duration_passes(cluster: Cli, tmp_path: Path) -> None:
    assert_passes(cluster, plan(tmp_path, GOOD), "duration.estimate", "--throttle", THROTTLE)


# Reports, files and the command line -------------------------------------------------------------


def test_junit_report_has_one_testcase_per_check(cluster: Cli, tmp_path: Path) -> None:
    result = cluster("reassign", "check", "--reassignment-json-file", plan(tmp_path, entry("orders", 0, [1, 2, 5])), "--report", "junit")
    assert result.exit_code == 1
    root = ET.fromstring(result.stdout)
    assert (root.tag, root.get("tests"), root.get("failures"), root.get("skipped")) == ("testsuites", "16", "1", "2")
    cases = {case.get("name"): case for case in root.iter("testcase")}
    assert list(cases) == [
        "plan.format",
        "topic.exists",
        "broker.eligible",
        "logdir.valid",
        "rf.unchanged",
        "rack.rule",
        "capacity.threshold",
        "isr.min-insync",
        "isr.concurrent-moves",
        "limits.moves-per-broker",
        "limits.bytes",
        "throttle.required",
        "throttle.orphaned",
        "reassign.in-progress",
        "reassign.record-limit",
        "duration.estimate",
    ]
    failure = cases["rack.rule"].find("failure")
    assert failure is not None and failure.get("type") == "error"
    assert failure.get("message") == "1 partition would put too many replicas in one rack: orders-0 (2 in r1, at most 1)"
    assert failure.text.splitlines()[1:] == ["partitions: orders-0", "brokers: 1, 2, 5"]
    assert cases["limits.bytes"].find("skipped").get("message") == "the policy sets neither limits.max_bytes nor limits.max_bytes_per_broker"
    assert cases["topic.exists"].find("failure") is None
    # A warning below the failing severity is reported, not failed.
    assert "warning: The plan copies 100.0 GiB between brokers" in cases["throttle.required"].find("system-out").text


def test_report_file_gets_the_report_and_stdout_one_line(cluster: Cli, tmp_path: Path) -> None:
    report = tmp_path / "check.xml"
    good = plan(tmp_path, GOOD)
    result = cluster("reassign", "check", "--reassignment-json-file", good, "--throttle", THROTTLE, "--report", "junit", "--report-file", str(report))
    assert (result.exit_code, result.stderr) == (0, "")
    assert result.stdout == f"Plan check PASSED: 16 checks (findings: 0 error, 0 warning, 0 info; failing on error). Report (junit): {report}\n"
    assert ET.parse(report).getroot().get("failures") == "0"
    # -o json still puts exactly one JSON document on stdout.
    result = cluster(
        "-o", "json", "reassign", "check", "--reassignment-json-file", good, "--report", "text", "--report-file", str(tmp_path / "r.txt")
    )
    document = json.loads(result.stdout)
    assert (document["reportFile"], document["reportFormat"], document["passed"]) == (str(tmp_path / "r.txt"), "text", True)
    assert (tmp_path / "r.txt").read_text().splitlines()[1].startswith("Plan check PASSED")


def test_report_json_without_o_json_prints_the_same_document(cluster: Cli, tmp_path: Path) -> None:
    good = plan(tmp_path, GOOD)
    plain = cluster("reassign", "check", "--reassignment-json-file", good, "--report", "json")
    assert json.loads(plain.stdout) == check(cluster, good)[1]


def test_command_line_structure_errors_exit_2(cluster: Cli, tmp_path: Path) -> None:
    assert cluster("reassign", "check").exit_code == 2
    result = cluster("-o", "json", "reassign", "check", "--reassignment-json-file", plan(tmp_path, GOOD), "--report", "junit")
    assert (result.exit_code, result.stderr) == (2, "-o json prints the JSON report on stdout; --report junit needs --report-file\n")
    result = cluster("reassign", "check", "--write-default-policy", str(tmp_path / "p.toml"), "--policy", "x.toml")
    assert (result.exit_code, result.stderr) == (2, "--write-default-policy cannot be combined with --policy\n")
    assert cluster("reassign", "check", "--reassignment-json-file", plan(tmp_path, GOOD), "--report", "yaml").exit_code == 2


def test_bad_values_exit_1_with_a_message(cluster: Cli, tmp_path: Path) -> None:
    good = plan(tmp_path, GOOD)
    result = cluster("reassign", "check", "--reassignment-json-file", good, "--throttle", "fast")
    assert (result.exit_code, result.stderr) == (1, "Cannot parse argument 'fast' of option throttle\n")
    policy = write(tmp_path, "policy.toml", "[limits]\ncapacity_treshold = 0.9\n")
    result = cluster("reassign", "check", "--reassignment-json-file", good, "--policy", policy)
    assert (result.exit_code, result.stderr) == (1, f"Invalid policy {policy}: limits.capacity_treshold (line 2): unknown key\n")
    binary = tmp_path / "plan.bin"
    binary.write_bytes(b"\xff\xfe{}")
    result = cluster("reassign", "check", "--reassignment-json-file", str(binary))
    assert (result.exit_code, result.stderr) == (1, f"Cannot read the plan {binary}: it is not UTF-8 text (invalid start byte at byte 0)\n")
    result = cluster("reassign", "check", "--reassignment-json-file", str(tmp_path / "missing.json"))
    assert (result.exit_code, result.stderr) == (1, f"No such file or directory: {tmp_path / 'missing.json'}\n")


def test_write_default_policy_writes_a_commented_file_check_reads_back(cluster: Cli, tmp_path: Path) -> None:
    target = tmp_path / "policy.toml"
    result = cluster("reassign", "check", "--write-default-policy", str(target), state=None)
    assert (result.exit_code, result.stdout) == (0, f"Wrote the default policy to {target}.\n")
    text = target.read_text()
    assert text.startswith("# kjbod reassign check policy (TOML).")
    assert "# max_moves_per_broker = 500   (unset: no limit)\n" in text
    assert '# "rack.rule" = "error"\n' in text
    assert_passes(cluster, plan(tmp_path, GOOD), "rack.rule", "--throttle", THROTTLE, policy=str(target))
    again = cluster("reassign", "check", "--write-default-policy", str(target), state=None)
    assert (again.exit_code, again.stderr) == (1, f"{target} already exists: remove it or choose another file for the default policy\n")


def test_a_plan_from_reassign_generate_passes_the_default_policy(cluster: Cli, tmp_path: Path) -> None:
    topics = write(tmp_path, "topics.json", '{"topics":[{"topic":"events"}],"version":1}')
    generated = json.loads(
        cluster("-o", "json", "reassign", "generate", "--topics-to-move-json-file", topics, "--broker-list", "1,2,3,4,5,6,7,8", "--seed", "3").stdout
    )
    proposal = write(tmp_path, "proposal.json", generated["proposed"])
    result, document = check(cluster, proposal, "--throttle", THROTTLE)
    assert document["passed"] is True, document["failedChecks"]
    assert result.exit_code == 0


def test_help_names_the_options(cluster: Cli) -> None:
    result = cluster("reassign", "check", "--help", state=None)
    assert result.exit_code == 0
    for option in (
        "--reassignment-json-file",
        "--policy",
        "--report",
        "--report-file",
        "--throttle",
        "--replica-alter-log-dirs-throttle",
        "--write-default-policy",
    ):
        assert option in result.stdout
    assert "Example: kjbod reassign check" in result.stdout


# The CI examples ------------------------------------------------------------------------------------

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "ci"


def run_script(state_dir: Path, tmp_path: Path, *plans: str, **env: str) -> subprocess.CompletedProcess:
    environment = {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
        "KJBOD_STATE": str(state_dir),
        "REPORT_DIR": str(tmp_path / "reports"),
        **env,
    }
    return subprocess.run(["bash", str(EXAMPLES / "check-plan.sh"), *plans], capture_output=True, text=True, env=environment, timeout=300)


def test_the_ci_script_passes_good_plans_and_fails_the_build_on_a_violation(cluster: Cli, state_dir: Path, tmp_path: Path) -> None:
    good = plan(tmp_path, GOOD, name="good.json")
    passed = run_script(state_dir, tmp_path, good, THROTTLE=THROTTLE)
    assert passed.returncode == 0, passed.stderr
    assert passed.stdout.splitlines() == [
        f"== {good}",
        f"Plan check PASSED: 16 checks (findings: 0 error, 0 warning, 0 info; failing on error). Report (junit): {tmp_path / 'reports' / 'good.xml'}",
    ]
    bad = plan(tmp_path, entry("orders", 0, [1, 2, 5]), name="bad.json")
    failed = run_script(state_dir, tmp_path, good, bad, THROTTLE=THROTTLE)
    assert failed.returncode == 1
    assert "FAIL  rack.rule [error]: Rule: no rack holds more than ceil(replication factor / 3 racks) replicas of a partition" in failed.stdout
    assert failed.stderr.splitlines()[-1] == f"At least one reassignment plan failed its checks; see the reports in {tmp_path / 'reports'}."
    reports = {p.name: ET.parse(p).getroot().get("failures") for p in (tmp_path / "reports").glob("*.xml")}
    assert reports == {"good.xml": "0", "bad.xml": "1"}
    # A policy the team keeps in the repository applies.
    relaxed = write(tmp_path, "policy.toml", '[racks]\nmode = "off"\n')
    assert run_script(state_dir, tmp_path, bad, THROTTLE=THROTTLE, POLICY=relaxed).returncode == 0


def test_the_ci_script_passes_usage_and_state_problems_through(state_dir: Path, tmp_path: Path) -> None:
    assert run_script(state_dir, tmp_path).returncode == 2
    missing = run_script(tmp_path / "no-state", tmp_path, plan(tmp_path, GOOD))
    assert missing.returncode == 1 and "No cluster state at" in missing.stderr


def test_the_workflow_runs_the_script_and_publishes_the_junit_reports() -> None:
    workflow = (EXAMPLES / "reassign-check.yml").read_text()
    assert "ci/check-plan.sh $plans" in workflow
    assert "report_paths: reassign-check-reports/*.xml" in workflow
    assert "REPORT_DIR: reassign-check-reports" in workflow


def test_logdir_valid_fails_when_a_moving_partition_keeps_a_replica_on_a_dead_disk(cluster: Cli, tmp_path: Path) -> None:
    assert cluster("broker", "fail-dir", "--id", "5", "--dir", "/data/b5/d1").exit_code == 0
    # orders-0 keeps its replica on broker 5, whose disk is gone: the reassignment cannot complete.
    result, document = check(cluster, plan(tmp_path, GOOD))
    assert outcome(document, "logdir.valid") == (
        "failed",
        [
            (
                "error",
                "1 partition would keep a replica in an offline directory: a reassignment completes only when every target "
                "replica is in sync, and that one cannot be; move it to another broker.",
            ),
        ],
    )
    assert finding(document, "logdir.valid")["directories"][0]["path"] == "/data/b5/d1"
    # Moving that replica away instead passes.
    assert_passes(cluster, plan(tmp_path, entry("orders", 0, [1, 3, 6]), name="away.json"), "logdir.valid")


def test_concurrent_moves_counts_cordoned_directories_drained_together(cluster: Cli, state_dir: Path, tmp_path: Path) -> None:
    commit(state_dir, ConfigRecord(resource_type=CONFIG_RESOURCE_BROKER, resource_name="", name="min.insync.replicas", value="2"))
    # Disks d2 of brokers 2 and 4 are being decommissioned; both hold both events partitions.
    for broker in (2, 4):
        assert cluster("broker", "cordon-dir", "--id", str(broker), "--dir", f"/data/b{broker}/d2").exit_code == 0
    layout = ((0, [2, 4, 6]), (1, [4, 6, 2]))

    def to_d1(brokers: tuple[int, ...]) -> list[dict]:
        return [entry("events", p, replicas, [f"/data/b{b}/d1" if b in brokers else "any" for b in replicas]) for p, replicas in layout]

    result, document = check(cluster, plan(tmp_path, *to_d1((2, 4))))
    assert outcome(document, "isr.concurrent-moves") == (
        "failed",
        [
            (
                "error",
                "2 partitions have in-sync replicas in two or more of the brokers or directories this plan drains "
                "(2:/data/b2/d2, 4:/data/b4/d2); taken down together they would leave fewer than min.insync.replicas: "
                "events-0 (2, 4), events-1 (2, 4)",
            ),
        ],
    )
    # One disk at a time passes.
    assert_passes(cluster, plan(tmp_path, *to_d1((2,)), name="one.json"), "isr.concurrent-moves")


def test_a_report_file_that_cannot_be_written_is_named(cluster: Cli, tmp_path: Path) -> None:
    target = tmp_path / "missing" / "check.xml"
    result = cluster("reassign", "check", "--reassignment-json-file", plan(tmp_path, GOOD), "--report-file", str(target))
    assert (result.exit_code, result.stderr) == (1, f"Cannot write the report {target}: No such file or directory\n")


# A sequence of waves ------------------------------------------------------------------------------

# Broker 8's d1 holds 120 GiB; with a threshold of 90% it takes orders-0 (100 GiB) or events-0
# (10 GiB), not both. Moving orders-0's replica to its d2 in between makes room.
LOOSE = "[limits]\ncapacity_threshold = 0.9\n"
EVENTS_TO_8 = entry("events", 0, [2, 8, 6], ["/data/b2/d2", "/data/b8/d1", "/data/b6/d2"])
ORDERS_TO_8 = entry("orders", 0, [1, 8, 5], ["/data/b1/d1", "/data/b8/d1", "/data/b5/d1"])
ORDERS_TO_8_D2 = entry("orders", 0, [1, 8, 5], ["/data/b1/d1", "/data/b8/d2", "/data/b5/d1"])


def sequence(cli: Cli, tmp_path: Path, *waves: dict, policy: str) -> tuple[CliResult, dict]:
    files = [plan(tmp_path, wave, name=f"w.wave-{number:03d}.json") for number, wave in enumerate(waves, 1)]
    options = [item for file in files for item in ("--reassignment-json-file", file)]
    result = cli("-o", "json", "reassign", "check", *options, "--policy", write(tmp_path, "policy.toml", policy))
    return result, json.loads(result.stdout)


def test_waves_are_checked_one_after_another(cluster: Cli, tmp_path: Path) -> None:
    # Each wave alone fits; together broker 8's d1 would end at 110 GiB (91.7%).
    for wave in (EVENTS_TO_8, ORDERS_TO_8):
        result, document = check(cluster, plan(tmp_path, wave), policy=write(tmp_path, "policy.toml", LOOSE))
        assert outcome(document, "capacity.threshold")[0] == "passed"
    result, document = sequence(cluster, tmp_path, ORDERS_TO_8, EVENTS_TO_8, policy=LOOSE)
    assert result.exit_code == 1
    assert result.stderr == f"1 out of 2 wave(s) failed (the first: {tmp_path / 'w.wave-002.json'}).\n"
    assert document["failedWaves"] == [str(tmp_path / "w.wave-002.json")]
    first, second = document["waves"]
    assert first["passed"] and not second["passed"]
    assert outcome(second, "capacity.threshold") == (
        "failed",
        [("error", "Directory 8:/data/b8/d1 ends at 91.7% of 120.0 GiB (+10.0 GiB in 1 replica), above the threshold of 90.0%.")],
    )


def test_a_wave_that_makes_room_lets_the_next_one_in(cluster: Cli, tmp_path: Path) -> None:
    # orders-0 is in two waves: the second moves its new replica on broker 8 to d2 (the first
    # wave's target is where it starts), and then events-0 fits.
    result, document = sequence(cluster, tmp_path, ORDERS_TO_8, ORDERS_TO_8_D2, EVENTS_TO_8, policy=LOOSE)
    assert (result.exit_code, document["passed"], document["failedWaves"]) == (0, True, [])
    assert document["summary"].startswith("Plan check PASSED: 3 waves, checked one after another (findings: 0 error")
    moving = document["waves"][1]["plan"]
    assert (moving["replicasAdded"], moving["replicasRemoved"], moving["directoryMoves"]) == (0, 0, 1)


def test_a_glob_names_the_waves_in_order(cluster: Cli, tmp_path: Path) -> None:
    files = [plan(tmp_path, wave, name=f"w.wave-{number:03d}.json") for number, wave in enumerate((ORDERS_TO_8, ORDERS_TO_8_D2, EVENTS_TO_8), 1)]
    policy = write(tmp_path, "policy.toml", LOOSE)
    result = cluster("reassign", "check", "--reassignment-json-file", str(tmp_path / "w.wave-*.json"), "--policy", policy)
    assert result.exit_code == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith("Plan check PASSED: 3 waves, checked one after another")
    assert [line.split(":")[0] for line in lines[2:5]] == ["PASS  wave 1", "PASS  wave 2", "PASS  wave 3"]
    assert [line.split(": ")[1].split(":")[0] for line in lines[2:5]] == files
    missing = cluster("reassign", "check", "--reassignment-json-file", str(tmp_path / "nothing-*.json"))
    assert (missing.exit_code, missing.stderr) == (
        1,
        f"No file matches --reassignment-json-file {tmp_path / 'nothing-*.json'}; check the pattern (quote it so the shell leaves it to kjbod)\n",
    )


def test_waves_in_junit_are_one_suite_each(cluster: Cli, tmp_path: Path) -> None:
    files = [plan(tmp_path, wave, name=f"w.wave-{number:03d}.json") for number, wave in enumerate((ORDERS_TO_8, EVENTS_TO_8), 1)]
    policy = write(tmp_path, "policy.toml", LOOSE)
    report = tmp_path / "check.xml"
    result = cluster(
        "reassign", "check", "--reassignment-json-file", files[0], "--reassignment-json-file", files[1], "--policy", policy,
        "--report", "junit", "--report-file", str(report),
    )
    assert result.exit_code == 1
    suites = ET.parse(report).getroot()
    assert [suite.get("name") for suite in suites] == [f"kjbod reassign check: {f}" for f in files]
    assert [suite.get("failures") for suite in suites] == ["0", "1"]
    assert suites.get("failures") == "1"
