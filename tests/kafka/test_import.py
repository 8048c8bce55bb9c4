"""b. A live cluster's own files imported by kjbod: what kjbod's describe commands print on the
imported state against what Kafka's tools print on the live cluster, line for line."""

from __future__ import annotations

import pytest

from tests.kafka.conftest import Live, kjbod


def test_import_of_the_live_cluster_succeeds(live: Live) -> None:
    result = live.import_result
    assert result is not None and result.exit_code == 0, result.stdout + result.stderr


def test_topic_describe(live: Live) -> None:
    ours = kjbod("topic", "describe", state=live.state)
    assert ours.exit_code == 0, ours.stderr
    assert ours.lines == live.kafka["topics"].lines


def test_log_dirs_describe(live: Live) -> None:
    ours = kjbod("log-dirs", "describe", state=live.state)
    assert ours.exit_code == 0, ours.stderr
    assert ours.lines == live.kafka["log-dirs"].lines


def test_features_describe(live: Live) -> None:
    ours = kjbod("features", "describe", state=live.state)
    assert ours.exit_code == 0, ours.stderr
    assert ours.lines == live.kafka["features"].lines


@pytest.mark.parametrize("what", ["status", "replication"])
def test_quorum_describe(live: Live, what: str) -> None:
    ours = kjbod("quorum", "describe", f"--{what}", state=live.state)
    assert ours.exit_code == 0, ours.stderr
    assert ours.lines == live.kafka[what].lines
