"""Eligible leader replicas through the CLI: a 4.3-IV0 state with eligible.leader.replicas.version=1
and the cluster-level min.insync.replicas=2 a 4.1+ bootstrap writes; `topic describe` prints the
Elr and LastKnownElr columns as kafka-topics does, and lists the cluster-level min.insync.replicas
in Configs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kjbod.records import CONFIG_RESOURCE_BROKER, ConfigRecord, FeatureLevelRecord
from kjbod.state import ClusterState

from ..conftest import Cli

DIRS = {1: "ZNJ-ywU0nnQwRv5eRRU9ow", 2: "AAAAAAAAAAAAAAAAAAAAZA", 3: "AAAAAAAAAAAAAAAAAAAAZg"}
ELR_SUPPORTED = ("--supported-feature", "metadata.version=7-30", "--supported-feature", "eligible.leader.replicas.version=0-1")


@pytest.fixture
def elr(cli: Cli, state_dir: Path) -> Cli:
    with ClusterState.open(state_dir, write=True) as state:
        state.commit([
            FeatureLevelRecord(name="metadata.version", feature_level=30),
            FeatureLevelRecord(name="eligible.leader.replicas.version", feature_level=1),
            ConfigRecord(resource_type=CONFIG_RESOURCE_BROKER, resource_name="", name="min.insync.replicas", value="2"),
        ])
    for broker, directory in DIRS.items():
        assert cli("broker", "register", "--id", str(broker), "--dir", f"/data/b{broker}={directory}", *ELR_SUPPORTED).exit_code == 0
        assert cli("broker", "heartbeat", "--id", str(broker)).exit_code == 0
    assert cli("topic", "create", "t", "--replica-assignment", "1:2:3").exit_code == 0
    return cli


def partition_line(cli: Cli) -> str:
    return cli("topic", "describe", "t").stdout.splitlines()[1].split("\tDirectories: ")[0]


def test_fencing_fills_the_elr_and_describe_prints_it(elr: Cli) -> None:
    lines = elr("topic", "describe", "t").stdout.splitlines()
    assert lines[0].endswith("\tPartitionCount: 1\tReplicationFactor: 3\tConfigs: min.insync.replicas=2")
    elr("broker", "fence", "--id", "3")
    assert elr("broker", "fence", "--id", "2").stdout == "Broker 2 is FENCED.\n1 partition(s) changed:\n  t-0: ISR 1,2 -> 1, ELR none -> 2\n"
    assert partition_line(elr) == "\tTopic: t\tPartition: 0\tLeader: 1\tReplicas: 1,2,3\tIsr: 1\tElr: 2\tLastKnownElr: "
    result = elr("-o", "json", "broker", "fence", "--id", "1")
    assert [(c["elrBefore"], c["elrAfter"]) for c in json.loads(result.stdout)["changes"]] == [([2], [1, 2])]
    assert partition_line(elr) == "\tTopic: t\tPartition: 0\tLeader: none\tReplicas: 1,2,3\tIsr: \tElr: 1,2\tLastKnownElr: 1"
    elr("broker", "heartbeat", "--id", "2")
    assert partition_line(elr) == "\tTopic: t\tPartition: 0\tLeader: 2\tReplicas: 1,2,3\tIsr: 2\tElr: 1\tLastKnownElr: "
    data = json.loads(elr("-o", "json", "topic", "describe", "t").stdout)
    assert (data[0]["partitions"][0]["eligibleLeaderReplicas"], data[0]["partitions"][0]["lastKnownElr"]) == ([1], [])
    assert data[0]["configs"] == {}  # the topic's own configs


def test_a_restart_after_a_crash_leaves_the_elr(elr: Cli) -> None:
    for broker in (3, 2, 1):
        elr("broker", "fence", "--id", str(broker))
    result = elr("broker", "register", "--id", "2", "--dir", f"/data/b2={DIRS[2]}", *ELR_SUPPORTED,
                 "--incarnation-id", "AAAAAAAAAAAAAAAAAAAAAg", "--unclean-shutdown")
    assert result.exit_code == 0, result.stderr
    assert partition_line(elr) == "\tTopic: t\tPartition: 0\tLeader: none\tReplicas: 1,2,3\tIsr: \tElr: 1\tLastKnownElr: 1"
    elr("broker", "heartbeat", "--id", "2")
    assert partition_line(elr).startswith("\tTopic: t\tPartition: 0\tLeader: none\t")
    elr("broker", "heartbeat", "--id", "1")
    assert partition_line(elr) == "\tTopic: t\tPartition: 0\tLeader: 1\tReplicas: 1,2,3\tIsr: 1\tElr: \tLastKnownElr: "
