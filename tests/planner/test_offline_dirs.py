"""Plans for a cluster with failed log directories pass `reassign check`: a replica in an offline
directory never moves to another directory of its broker (it leaves the broker or stays), a broker
with an offline directory moves none of its replicas between its directories, and a partition
whose replica set changes does not keep a replica in an offline directory."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kjbod.cli.app import app

from ..conftest import Cli

GIB = 2**30
TIB = 2**40
RACKS = {1: "r1", 2: "r2", 3: "r3", 4: "r1", 5: "r2", 6: "r3"}
FAILED = {1: "/data/b1/d1", 4: "/data/b4/d2"}


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Brokers 1-6 (racks r1-r3), each with d1 and d2 of 1 TiB. `spread` (24 x 10 GiB) over all
    six brokers, in d1 or d2 by partition; `heavy` (6 x 50 GiB) on brokers 1-3 only, all in d1;
    then /data/b1/d1 and /data/b4/d2 fail."""
    work = tmp_path_factory.mktemp("offline")
    brokers = {
        "brokers": [
            {"id": b, "rack": rack, "log_dirs": [{"path": f"/data/b{b}/d{d}", "capacity_bytes": TIB} for d in (1, 2)]}
            for b, rack in RACKS.items()
        ]
    }
    partitions = []
    for p in range(24):
        replicas = [(p + i) % 6 + 1 for i in range(3)]  # three consecutive brokers: three racks
        partitions.append({"topic": "spread", "partition": p, "replicas": replicas, "log_dirs": [f"/data/b{b}/d{p % 2 + 1}" for b in replicas]})
    for p in range(6):
        replicas = [[1, 2, 3], [2, 3, 1], [3, 1, 2]][p % 3]
        partitions.append({"topic": "heavy", "partition": p, "replicas": replicas, "log_dirs": [f"/data/b{b}/d1" for b in replicas]})
    (work / "brokers.json").write_text(json.dumps(brokers))
    (work / "assignment.json").write_text(json.dumps({"version": 1, "partitions": partitions}))
    state = work / "state"
    steps = [
        ["import", "cluster", "--brokers", str(work / "brokers.json"), "--assignment", str(work / "assignment.json")],
        ["topic", "set-size", "spread", "--bytes", str(10 * GIB)],
        ["topic", "set-size", "heavy", "--bytes", str(50 * GIB)],
        *(["broker", "fail-dir", "--id", str(b), "--dir", path] for b, path in FAILED.items()),
    ]
    for args in steps:
        result = CliRunner().invoke(app, ["--state", str(state), *args], catch_exceptions=False)
        assert result.exit_code == 0, result.stderr
    return state


@pytest.fixture
def state(template: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "cluster"
    shutil.copytree(template, copy)
    return copy


def current_layout() -> dict[tuple[str, int], dict[int, str]]:
    """Where every replica is now (the template's layout): partition -> broker -> path."""
    layout = {}
    for p in range(24):
        layout[("spread", p)] = {(p + i) % 6 + 1: f"/data/b{(p + i) % 6 + 1}/d{p % 2 + 1}" for i in range(3)}
    for p in range(6):
        layout[("heavy", p)] = {b: f"/data/b{b}/d1" for b in [[1, 2, 3], [2, 3, 1], [3, 1, 2]][p % 3]}
    return layout


@pytest.mark.parametrize(
    "goal_args",
    [
        ["--goal", "balance"],
        ["--goal", "fix-offline"],
        ["--goal", "add-brokers", "--broker-list", "5,6"],
        ["--goal", "remove-brokers", "--broker-list", "2"],
        ["--goal", "drain-dirs", "--dir", "3:/data/b3/d1"],
        ["--goal", "rebalance-disks"],
    ],
    ids=lambda args: "-".join(a.lstrip("-") for a in args),
)
def test_plans_with_offline_directories_pass_reassign_check(cli: Cli, state: Path, tmp_path: Path, goal_args: list[str]) -> None:
    plan_file = tmp_path / "plan.json"
    planned = cli("reassign", "plan", *goal_args, "--engine", "local", "--output-file", str(plan_file), state=state)
    assert planned.exit_code == 0, planned.stderr
    entries = json.loads(plan_file.read_text())["partitions"]
    assert entries, "the goal moves something"
    layout = current_layout()
    offline_brokers = set(FAILED)
    for entry in entries:
        now = layout[(entry["topic"], entry["partition"])]
        changes_set = set(entry["replicas"]) != set(now)
        for broker, path in zip(entry["replicas"], entry["log_dirs"]):
            if broker in now and path != "any":
                # A kept replica changes directory only on a broker with no offline directory.
                assert path == now[broker] or broker not in offline_brokers, (entry, broker)
            if broker in now and now[broker] == FAILED.get(broker):
                assert not changes_set, f"{entry} keeps a replica in an offline directory while its replica set changes"
    checked = cli("reassign", "check", "--reassignment-json-file", str(plan_file), state=state)
    assert checked.exit_code == 0, checked.stdout + checked.stderr


def test_fix_offline_moves_offline_replicas_to_other_brokers(cli: Cli, state: Path, tmp_path: Path) -> None:
    plan_file = tmp_path / "plan.json"
    planned = cli("-o", "json", "reassign", "plan", "--goal", "fix-offline", "--engine", "local", "--output-file", str(plan_file), state=state)
    assert planned.exit_code == 0, planned.stderr
    report = json.loads(planned.stdout)
    layout = current_layout()
    offline = {key for key, replicas in layout.items() if any(path == FAILED.get(b) for b, path in replicas.items())}
    entries = {(e["topic"], e["partition"]): e for e in json.loads(plan_file.read_text())["partitions"]}
    assert set(entries) == offline
    for key, entry in entries.items():
        failed_broker = next(b for b, path in layout[key].items() if path == FAILED.get(b))
        assert failed_broker not in entry["replicas"], entry
    assert report["replicasMovedBetweenDirectories"] == 0
    assert report["replicasMovedBetweenBrokers"] == len(offline)


def test_other_goals_keep_the_replica_sets_of_partitions_with_offline_replicas_and_say_so(cli: Cli, state: Path, tmp_path: Path) -> None:
    plan_file = tmp_path / "plan.json"
    planned = cli("reassign", "plan", "--goal", "balance", "--engine", "local", "--output-file", str(plan_file), state=state)
    assert planned.exit_code == 0, planned.stderr
    layout = current_layout()
    offline = {key for key, replicas in layout.items() if any(path == FAILED.get(b) for b, path in replicas.items())}
    entries = json.loads(plan_file.read_text())["partitions"]
    assert entries, "the goal moves something"
    # Their replicas may change directory on brokers with no offline directory, nothing more.
    for entry in entries:
        key = (entry["topic"], entry["partition"])
        if key in offline:
            assert set(entry["replicas"]) == set(layout[key]), entry
    assert (
        f"Note: {len(offline)} partition(s) with a replica in an offline log directory are left as they are "
        "(--goal fix-offline moves those replicas to other brokers)"
    ) in planned.stdout.splitlines()
