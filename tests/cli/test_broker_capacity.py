"""`broker register --capacity`: disk sizes for usage figures and the planner."""

from __future__ import annotations

import json
from pathlib import Path

from ..conftest import Cli

D1, D2 = "ZNJ-ywU0nnQwRv5eRRU9ow", "XcZZOzUqS4yHOjhMQB6JLQ"


def test_capacities_show_in_broker_describe(cli: Cli, bootstrapped: Path) -> None:
    registered = cli("broker", "register", "--id", "1", "--dir", f"/d1={D1}", "--dir", f"/d2={D2}", "--capacity", "/d1=4TB", "--capacity", "/d2=2TiB")
    assert registered.exit_code == 0, registered.stderr
    assert cli("broker", "heartbeat", "--id", "1").exit_code == 0
    assert cli("topic", "create", "t", "--replica-assignment", "1").exit_code == 0
    assert cli("assign-dirs", "--broker", "1", "--assign", "t:0=/d1").exit_code == 0
    assert cli("topic", "set-size", "t", "--bytes", "300GiB").exit_code == 0
    described = cli("broker", "describe", "--id", "1")
    # Readable units in text (4TB is 3.6 TiB)...
    assert described.stdout.splitlines()[2:] == [
        " DIRECTORY ID             PATH   STATE    REPLICAS   LEADERS        SIZE   CAPACITY   USED",
        " " + "─" * 89,
        " XcZZOzUqS4yHOjhMQB6JLQ   /d2    online          0         0         0 B    2.0 TiB   0.0%",
        " ZNJ-ywU0nnQwRv5eRRU9ow   /d1    online          1         1   300.0 GiB    3.6 TiB   8.1%",
    ]
    # ...and bytes in JSON.
    data = json.loads(cli("-o", "json", "broker", "describe", "--id", "1").stdout)
    assert [(d["path"], d["sizeBytes"], d["capacityBytes"]) for d in data["directories"]] == [
        ("/d2", 0, 2 * 2**40), ("/d1", 300 * 2**30, 4 * 10**12),
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
