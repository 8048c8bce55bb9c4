"""`kjbod clock`."""

from __future__ import annotations

import json
from pathlib import Path

from ..conftest import Cli

GIB = 2**30


def test_advance_then_show(cli: Cli) -> None:
    assert cli("clock", "advance", "25m").stdout == "Advanced the clock by 25m to 25m.\n"
    assert cli("clock", "advance", "90").stdout == "Advanced the clock by 1m 30s to 26m 30s.\n"
    assert cli("clock", "advance", "1d").stdout == "Advanced the clock by 1d to 1d 26m 30s.\n"
    assert cli("clock", "advance", "250ms").stdout == "Advanced the clock by 0.250s to 1d 26m 30.250s.\n"
    assert cli("clock", "show").stdout == "Simulated time: 1d 26m 30.250s (87990250 ms)\n"
    assert json.loads(cli("-o", "json", "clock", "show").stdout) == {"timeMs": 87_990_250, "elapsed": "1d 26m 30.250s", "copies": []}


def test_until_idle_with_nothing_in_progress_keeps_the_time(cli: Cli) -> None:
    cli("clock", "advance", "10s")
    assert cli("clock", "advance", "--until-idle").stdout == "Nothing is in progress; the clock stays at 10s.\n"


def test_bad_durations(cli: Cli) -> None:
    result = cli("clock", "advance", "5x")
    assert (result.exit_code, result.stderr) == (
        1, "Invalid duration '5x': use a number with an optional unit ms, s, m, h or d, e.g. 25m\n"
    )
    assert cli("clock", "advance").exit_code == 2
    assert cli("clock", "advance", "5s", "--until-idle").exit_code == 2


def moving(cli: Cli, tmp_path: Path) -> None:
    """Brokers 1-3 with one directory each; t-0 (1 GiB, on 1 and 2) moves to 3 and 2."""
    for broker, directory in ((1, "AAAAAAAAAAAAAAAAAAAAZA"), (2, "AAAAAAAAAAAAAAAAAAAAZQ"), (3, "AAAAAAAAAAAAAAAAAAAAZg")):
        assert cli("broker", "register", "--id", str(broker), "--dir", f"/data/b{broker}={directory}").exit_code == 0
        assert cli("broker", "heartbeat", "--id", str(broker)).exit_code == 0
    assert cli("topic", "create", "t", "--replica-assignment", "1:2").exit_code == 0
    assert cli("topic", "set-size", "t", "--bytes", str(GIB)).exit_code == 0
    plan = tmp_path / "plan.json"
    plan.write_text('{"partitions":[{"topic":"t","partition":0,"replicas":[3,2]}]}')
    assert cli("reassign", "execute", "--reassignment-json-file", str(plan)).exit_code == 0


def test_show_lists_copies_and_advance_reports_completions(cli: Cli, bootstrapped: Path, tmp_path: Path) -> None:
    moving(cli, tmp_path)
    # 1 GiB over the default 100 MiB/s links: 10.24 s.
    assert cli("clock", "show").stdout.splitlines() == [
        "Simulated time: 0s (0 ms)",
        "Copies in progress (1):",
        "  t-0 to broker 3: 0 B of 1.0 GiB at 100.0 MiB/s; done in 10.240s",
    ]
    assert cli("clock", "advance", "5s").stdout.splitlines() == ["Advanced the clock by 5s to 5s.", "Still copying: 1 copy (kjbod clock show)."]
    assert cli("clock", "show").stdout.splitlines()[2] == "  t-0 to broker 3: 500.0 MiB of 1.0 GiB at 100.0 MiB/s; done in 5.240s"
    result = cli("-o", "json", "clock", "advance", "--until-idle")
    document = json.loads(result.stdout)
    assert (document["previousMs"], document["timeMs"]) == (5_000, 10_240)
    assert document["completed"] == [{"topic": "t", "partition": 0, "broker": 3, "kind": "follower", "timeMs": 10_240, "reassignmentCompleted": True}]
    assert cli("clock", "advance", "--until-idle").stdout == "Nothing is in progress; the clock stays at 10.240s.\n"


def test_copies_that_cannot_progress_are_reported(cli: Cli, bootstrapped: Path, tmp_path: Path) -> None:
    moving(cli, tmp_path)
    cli("broker", "fence", "--id", "3")
    assert cli("clock", "advance", "--until-idle").stdout.splitlines() == [
        "Nothing can progress; the clock stays at 0s.",
        "Cannot progress (1):",
        "  t-0 to broker 3: broker 3 is fenced",
    ]
    assert cli("clock", "advance", "1m").stdout.splitlines() == [
        "Advanced the clock by 1m to 1m.", "Cannot progress (1):", "  t-0 to broker 3: broker 3 is fenced",
    ]


def test_set_rate_changes_the_pace_and_refuses_a_copy_beyond_a_year(cli: Cli, bootstrapped: Path, tmp_path: Path) -> None:
    moving(cli, tmp_path)
    assert cli("clock", "set-rate", "--replication", str(GIB)).stdout == "Rates of the cluster default: replication 1.0 GiB/s, alter-log-dirs default.\n"
    assert cli("clock", "set-rate", "--broker", "3", "--replication", "1").stdout == "Rates of broker 3: replication 1 B/s, alter-log-dirs default.\n"
    result = cli("clock", "advance", "--until-idle")
    assert (result.exit_code, result.stderr) == (
        1,
        "The copies in progress would take longer than 365d at the current rates; nothing was changed. "
        "Advance by a duration instead, or raise the throttles or rates\n",
    )
    assert cli("clock", "set-rate", "--broker", "3", "--reset").stdout == "Rates of broker 3: replication default, alter-log-dirs default.\n"
    assert cli("clock", "advance", "--until-idle").stdout == "Advanced the clock by 1s to 1s. 1 copy completed; 1 reassignment completed.\n"
    assert cli("clock", "set-rate", "--broker", "9", "--replication", "5").exit_code == 1
    assert cli("clock", "set-rate", "--replication", "x").exit_code == 2
