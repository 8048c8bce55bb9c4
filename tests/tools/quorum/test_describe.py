"""`quorum describe` against Kafka's own lines: the frozen output of MetadataQuorumCommand's
describe methods (tests/fixtures/kafka/quorum-describe/README.md), compared line by line."""

from __future__ import annotations

import pytest

from kjbod.controller import Controller
from kjbod.tools.quorum import describe as tool

from .scenarios import FIXTURES, SCENARIOS, oracle_input, parse_oracle_input


def kafka_lines(name: str, view: str) -> list[str]:
    return (FIXTURES / f"{name}.{view}.txt").read_text().splitlines()


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_the_scenario_still_describes_as_frozen(name: str) -> None:
    """The fixtures are tied to kjbod's states: a change in the model shows here first."""
    info = Controller(SCENARIOS[name]()).quorum.describe()
    assert oracle_input(info) == (FIXTURES / f"{name}.quorum").read_text()


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_status_lines_are_kafkas(name: str) -> None:
    info = Controller(SCENARIOS[name]()).quorum.describe()
    assert tool.status_lines(info) == kafka_lines(name, "status")
    assert tool.status_lines(parse_oracle_input((FIXTURES / f"{name}.quorum").read_text())) == kafka_lines(name, "status")


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_replication_lines_are_kafkas(name: str) -> None:
    info = Controller(SCENARIOS[name]()).quorum.describe()
    assert tool.replication_lines(info) == kafka_lines(name, "replication")


def test_the_scenarios_cover_what_the_layout_varies_on() -> None:
    """Null and real directory ids, observers with and without endpoints, a stopped voter, a
    replica that never caught up (-1), a lag time, and uneven column widths."""
    text = "\n".join((FIXTURES / f"{n}.status.txt").read_text() for n in SCENARIOS)
    assert '"directoryId": null' in text and "MaxFollowerLagTimeMs:   32000" in text
    assert '{"id": 4, "directoryId": "ZNJ-ywU0nnQwRv5eRRU9ow"}' in text
    replication = (FIXTURES / "degraded.replication.txt").read_text()
    assert "\t-1  " in replication and replication.splitlines()[0].endswith("Status  \t")


def test_human_readable_ages_come_from_the_simulated_clock() -> None:
    info = Controller(SCENARIOS["degraded"]()).quorum.describe()
    rows = [line.split("\t") for line in tool.replication_lines(info, human_readable=True)]
    assert rows[3][4].strip() == f"{info.now_ms - 4000} ms ago"
    assert rows[4][5].strip() == "-1"
