"""Shell completion from the cluster state: broker ids, topic names, release versions (cli/completion.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from kjbod.cli.app import app
from kjbod.records import FeatureLevelRecord
from kjbod.state.cluster_state import ClusterState

from ..conftest import Cli

D = ["ZNJ-ywU0nnQwRv5eRRU9ow", "XcZZOzUqS4yHOjhMQB6JLQ", "AAAAAAAAAAAAAAAAAAAAZA"]


def complete(line: str, **env: str) -> list[str]:
    """What kjbod offers bash at the end of `line` (as completions/kjbod.bash asks it)."""
    words = line.split()
    if line.endswith(" "):
        words.append("")
    result = CliRunner().invoke(
        app, [], prog_name="kjbod",
        env={"_KJBOD_COMPLETE": "complete_bash", "COMP_WORDS": " ".join(words), "COMP_CWORD": str(len(words) - 1), **env},
    )
    assert result.exit_code == 0, result.output
    return result.stdout.split()


@pytest.fixture
def named(cli: Cli, bootstrapped: Path) -> Path:
    """Brokers 1, 2 and 11; topics orders and audit; metadata.version 4.3-IV0 (level 30)."""
    for broker, directory in zip((1, 2, 11), D, strict=True):
        assert cli("broker", "register", "--id", str(broker), "--dir", f"/d{broker}={directory}").exit_code == 0
        assert cli("broker", "heartbeat", "--id", str(broker)).exit_code == 0
    for topic in ("orders", "audit"):
        assert cli("topic", "create", topic, "--partitions", "1", "--replication-factor", "1").exit_code == 0
    return bootstrapped


def test_broker_ids_after_id_and_in_broker_lists(named: Path) -> None:
    state = f"kjbod --state {named}"
    assert complete(f"{state} broker describe --id ") == ["1", "2", "11"]
    assert complete(f"{state} broker fail-dir --id 1") == ["1", "11"]
    assert complete(f"{state} assign-dirs --broker 2") == ["2"]
    # A list offers the ids it does not hold yet, after what is typed.
    assert complete(f"{state} reassign generate --broker-list 1,") == ["1,2", "1,11"]
    assert complete(f"{state} log-dirs describe --broker-list 2,1") == ["2,1", "2,11"]


def test_broker_ids_in_the_planners_broker_lists(named: Path) -> None:
    state = f"kjbod --state {named}"
    assert complete(f"{state} reassign plan --goal add-brokers --broker-list ") == ["1", "2", "11"]
    assert complete(f"{state} reassign plan --goal remove-brokers --brokers 11,") == ["11,1", "11,2"]  # the alias completes too
    assert complete(f"{state} reassign plan --goal balance --exclude-brokers 1") == ["1", "11"]


def test_topic_names_after_topic_commands_and_in_topic_lists(named: Path) -> None:
    state = f"kjbod --state {named}"
    assert complete(f"{state} topic describe ") == ["audit", "orders"]
    assert complete(f"{state} topic delete o") == ["orders"]
    assert complete(f"{state} topic set-size a") == ["audit"]
    assert complete(f"{state} elect --topic ") == ["audit", "orders"]
    assert complete(f"{state} log-dirs describe --topic-list orders,") == ["orders,audit"]


def test_the_state_comes_from_kjbod_state_too_and_a_missing_one_offers_nothing(named: Path, tmp_path: Path) -> None:
    assert complete("kjbod topic describe ", KJBOD_STATE=str(named)) == ["audit", "orders"]
    assert complete(f"kjbod --state {tmp_path / 'nothing'} topic describe ") == []


def test_release_versions_follow_the_state_for_upgrades_and_downgrades(named: Path) -> None:
    state = f"kjbod --state {named}"
    # The state is at 4.3-IV0, 4.3's latest production version: nothing to upgrade to in 4.3; in 4.4
    # (the default) its production versions above.
    assert complete(f"kjbod --kafka-version 4.3 --state {named} features upgrade --release-version ") == []
    assert complete(f"{state} features upgrade --release-version ", KJBOD_KAFKA_VERSION="4.3") == []
    assert complete(f"{state} features upgrade --release-version ") == ["4.4-IV0", "4.4-IV1", "4.4", "4.4-IV2"]
    assert complete(f"{state} features downgrade --release-version 4.2") == ["4.2-IV0", "4.2", "4.2-IV1"]
    # "4.0" means 4.0-IV3: offered only where 4.0-IV3 is.
    assert complete(f"{state} features downgrade --metadata 4.0") == ["4.0-IV0", "4.0-IV1", "4.0-IV2", "4.0", "4.0-IV3"]
    assert complete(f"{state} features version-mapping --release-version 3.3") == ["3.3", "3.3-IV3"]
    assert complete(f"{state} format -r 4.") == ["4.0-IV0", "4.0-IV1", "4.0-IV2", "4.0", "4.0-IV3", "4.1-IV0", "4.1", "4.1-IV1",
                                                   "4.2-IV0", "4.2", "4.2-IV1", "4.3", "4.3-IV0", "4.4-IV0", "4.4-IV1", "4.4",
                                                   "4.4-IV2"]
    with ClusterState.open(named, write=True) as opened:  # as a 4.2 cluster would be
        opened.commit([FeatureLevelRecord(name="metadata.version", feature_level=29)])
    assert complete(f"kjbod --kafka-version 4.3 --state {named} features upgrade --release-version ") == ["4.3", "4.3-IV0"]
