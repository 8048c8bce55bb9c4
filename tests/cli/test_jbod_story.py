"""The KIP-858 story end to end through the CLI, on real directories: format a JBOD broker,
register it from its server.properties, create topics, fail a disk, see what went offline,
replace the disk, re-register, assign, unfence."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from ..conftest import Cli
from .support import CLUSTER_ID, formatted_controller, write_config



def broker_config(root: Path, broker: int) -> Path:
    dirs = ",".join(str(root / f"b{broker}" / f"d{i}") for i in (1, 2, 3))
    return write_config(
        root / f"broker{broker}.properties",
        f"process.roles=broker\nnode.id={broker}\nbroker.rack=r{broker}\nlog.dirs={dirs}\n"
        "controller.quorum.voters=3000@localhost:9093\ncontroller.listener.names=CONTROLLER\n",
    )


def test_the_jbod_story(cli: Cli, tmp_path: Path) -> None:
    state = formatted_controller(cli, tmp_path)

    # Three brokers with three disks each register from their own files and are unfenced.
    for broker in (1, 2, 3):
        config = broker_config(tmp_path, broker)
        assert cli("format", "-c", str(config), "-t", CLUSTER_ID, state=state).exit_code == 0
        registered = cli("broker", "register", "--config", str(config), state=state)
        assert registered.stdout.endswith(": FENCED, 3 online directories.\n"), registered.stderr
        assert cli("broker", "heartbeat", "--id", str(broker), state=state).stdout == f"Broker {broker}: FENCED -> UNFENCED.\n"
    assert cli("topic", "create", "orders", "--partitions", "6", "--replication-factor", "3", "--seed", "1", state=state).exit_code == 0
    assert cli("topic", "create", "audit", "--partitions", "3", "--replication-factor", "2", "--seed", "2", state=state).exit_code == 0
    for broker in (1, 2, 3):
        assert cli("assign-dirs", "--broker", str(broker), "--auto", state=state).exit_code == 0

    # A disk of broker 1 fails: what was on it goes offline, with its path.
    failed = tmp_path / "b1" / "d2"
    result = cli("broker", "fail-dir", "--id", "1", "--dir", str(failed), state=state)
    assert result.exit_code == 0 and f"({failed}) is offline." in result.stdout
    described = json.loads(cli("-o", "json", "topic", "describe", state=state).stdout)
    offline = [
        (t["topic"], p["partition"]) for t in described for p in t["partitions"] if p["offline"] == [1]
    ]
    on_failed = [
        (t["topic"], p["partition"])
        for t in described
        for p in t["partitions"]
        for d in p["directories"]
        if d["broker"] == 1 and d["label"] == str(failed)
    ]
    assert offline and sorted(offline) == sorted(on_failed)
    text = cli("topic", "describe", "orders", state=state).stdout
    assert f"{failed}" in text and "Offline: 1" in text
    details = json.loads(cli("-o", "json", "broker", "describe", "--id", "1", state=state).stdout)
    assert [d["state"] for d in details["directories"] if d["path"] == str(failed)] == ["offline"]

    # Replace the disk: a new, empty directory gets the broker's cluster and node id and a new id.
    old_id = details["directories"][[d["path"] for d in details["directories"]].index(str(failed))]["directoryId"]
    shutil.rmtree(failed)
    failed.mkdir()
    config = broker_config(tmp_path, 1)
    assert cli("format", "-c", str(config), "-t", CLUSTER_ID, "--ignore-formatted", state=state).exit_code == 0
    assert cli("meta", "ensure-ids", "--config", str(config), state=state).exit_code == 0
    new_id = json.loads(cli("-o", "json", "meta", "show", str(failed), state=state).stdout)
    new_id = json.dumps(new_id)
    assert old_id not in new_id

    # Restart broker 1 on the new disk: it stays fenced until its replicas have directories.
    assert cli("broker", "shutdown", "--id", "1", state=state).exit_code == 0
    assert cli("broker", "register", "--config", str(config), state=state).stdout.endswith(": FENCED, 3 online directories.\n")
    waiting = cli("broker", "heartbeat", "--id", "1", state=state)
    assert waiting.stdout.startswith("Broker 1: FENCED.\nBroker 1 stays fenced: ")
    assert cli("assign-dirs", "--broker", "1", "--auto", state=state).exit_code == 0
    assert cli("broker", "heartbeat", "--id", "1", state=state).stdout.startswith("Broker 1: FENCED -> UNFENCED.")
    described = json.loads(cli("-o", "json", "topic", "describe", state=state).stdout)
    assert not [p for t in described for p in t["partitions"] if p["offline"]]
    labels = {d["label"] for t in described for p in t["partitions"] for d in p["directories"] if d["broker"] == 1}
    assert str(failed) in labels and labels <= {str(tmp_path / "b1" / f"d{i}") for i in (1, 2, 3)}

    # The new disk refills by replication as the simulated clock runs; then broker 1 is in sync again.
    assert cli("topic", "set-size", "orders", "--bytes", str(200 * 1024 * 1024), state=state).exit_code == 0
    refill = cli("clock", "advance", "--until-idle", state=state)
    assert refill.exit_code == 0, refill.stderr
    described = json.loads(cli("-o", "json", "topic", "describe", state=state).stdout)
    assert all(sorted(p["isr"]) == sorted(p["replicas"]) for t in described for p in t["partitions"])
    assert cli("clock", "show", state=state).stdout.startswith("Simulated time: ")


def test_a_broker_formatted_for_another_cluster_is_refused(cli: Cli, tmp_path: Path) -> None:
    """Kafka's controller refuses it with INCONSISTENT_CLUSTER_ID (ClusterControlManager.java:350)."""
    state = formatted_controller(cli, tmp_path)
    other = "MkU3OEVBNTcwNTJENDM2Qk"
    config = broker_config(tmp_path, 1)
    assert cli("format", "-c", str(config), "-t", other, state=state).exit_code == 0
    before = cli("metadata", "dump", state=state).stdout
    result = cli("broker", "register", "--config", str(config), state=state)
    assert (result.exit_code, result.stdout) == (1, "")
    assert result.stderr == f"INCONSISTENT_CLUSTER_ID: Expected cluster ID {CLUSTER_ID}, but got cluster ID {other}\n"
    assert cli("metadata", "dump", state=state).stdout == before


def test_directories_of_two_clusters_stop_the_broker(cli: Cli, tmp_path: Path, bootstrapped: Path) -> None:
    config = broker_config(tmp_path, 1)
    assert cli("format", "-c", str(config), "-t", CLUSTER_ID).exit_code == 0
    meta = tmp_path / "b1" / "d3" / "meta.properties"
    meta.write_text(meta.read_text().replace(CLUSTER_ID, "MkU3OEVBNTcwNTJENDM2Qk"))
    result = cli("broker", "register", "--config", str(config))
    assert (result.exit_code, result.stderr) == (
        1, f"Invalid cluster.id in: {meta}. Expected {CLUSTER_ID}, but read MkU3OEVBNTcwNTJENDM2Qk\n"
    )
