"""`broker register --capacity`: disk sizes for usage figures and the planner."""

from __future__ import annotations

from pathlib import Path

from ..conftest import Cli

D1, D2 = "ZNJ-ywU0nnQwRv5eRRU9ow", "XcZZOzUqS4yHOjhMQB6JLQ"


def test_capacities_show_in_broker_describe(cli: Cli, bootstrapped: Path) -> None:
    registered = cli("broker", "register", "--id", "1", "--dir", f"/d1={D1}", "--dir", f"/d2={D2}", "--capacity", "/d1=4TB", "--capacity", "/d2=2TiB")
    assert registered.exit_code == 0, registered.stderr
    described = cli("broker", "describe", "--id", "1")
    assert described.stdout.splitlines()[2:] == [
        " DIRECTORY ID             PATH   STATE    REPLICAS   LEADERS   BYTES        CAPACITY   USED",
        " ──────────────────────────────────────────────────────────────────────────────────────────",
        " XcZZOzUqS4yHOjhMQB6JLQ   /d2    online          0         0       0   2199023255552   0.0%",
        " ZNJ-ywU0nnQwRv5eRRU9ow   /d1    online          0         0       0   4000000000000   0.0%",
    ]


def test_without_capacities_the_columns_stay_away(cli: Cli, bootstrapped: Path) -> None:
    assert cli("broker", "register", "--id", "1", "--dir", f"/d1={D1}").exit_code == 0
    assert "CAPACITY" not in cli("broker", "describe", "--id", "1").stdout


def test_capacity_mistakes(cli: Cli, bootstrapped: Path) -> None:
    cases = [
        (["--capacity", "/d9=1TB"], "--capacity /d9=1TB: /d9 is not one of the broker's log directories (/d1)"),
        (["--capacity", "/d1=lots"], "Invalid --capacity 'lots': give bytes, optionally with a unit (500GB, 1.5TiB)"),
        (["--capacity", "/d1=0"], 'Invalid --capacity "/d1=0": a disk size must be above 0'),
        (["--capacity", "1TB"], 'Invalid --capacity "1TB": give PATH=BYTES, e.g. /data/01/kafka-logs=4TB'),
    ]
    for args, message in cases:
        result = cli("broker", "register", "--id", "1", "--dir", f"/d1={D1}", *args)
        assert (result.exit_code, result.stderr) == (1, message + "\n"), args
    assert cli("broker", "list").stdout.count("\n") <= 2  # nothing was registered
