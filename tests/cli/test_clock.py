"""`kjbod clock`."""

from __future__ import annotations

import json

from ..conftest import Cli


def test_advance_then_show(cli: Cli) -> None:
    assert cli("clock", "advance", "25m").stdout == "Advanced the clock by 25m to 25m.\n"
    assert cli("clock", "advance", "90").stdout == "Advanced the clock by 1m 30s to 26m 30s.\n"
    assert cli("clock", "advance", "1d").stdout == "Advanced the clock by 1d to 1d 26m 30s.\n"
    assert cli("clock", "advance", "250ms").stdout == "Advanced the clock by 0.250s to 1d 26m 30.250s.\n"
    assert cli("clock", "show").stdout == "Simulated time: 1d 26m 30.250s (87990250 ms)\n"
    assert json.loads(cli("-o", "json", "clock", "show").stdout) == {"timeMs": 87_990_250, "elapsed": "1d 26m 30.250s"}


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
