"""Eligible leader replicas (KIP-966) against a live Kafka: a cluster of its own (ELR on, as
every 4.1+ cluster is), a topic whose partitions lose in-sync replicas as brokers shut down.

- what kafka-topics --describe prints once brokers 3 and 2 are down (Isr, Elr, LastKnownElr),
  against kjbod's topic describe of the controller's files imported then;
- the same shutdowns made by kjbod's controller on the state imported before them: its ISR, ELR
  and LastKnownElr follow Kafka's PartitionChangeBuilder to the same lines.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.kafka.cluster import KafkaCluster, stop_processes
from tests.kafka.conftest import _settle, kjbod, running_cluster, snapshot_end
from tests.kafka.runtime import ToolResult

# elr-0 led by 1, elr-1 led by 3 (moves to 2, then 1); elr2-0 on brokers 2 and 3 only (goes
# leaderless). Kafka wants one replication factor per topic.
TOPICS = {"elr": "1:2:3,3:2:1", "elr2": "2:3"}


@dataclass
class Scene:
    cluster: KafkaCluster
    before: Path  # kjbod's state imported with every broker up
    after: Path  # ... and once brokers 3 and 2 shut down
    kafka: dict[str, ToolResult] = field(default_factory=dict)


def _capture(cluster: KafkaCluster, work: Path, name: str) -> Path:
    """The controller's newest snapshot and log, copied once it is quiet, imported by kjbod."""
    metadata = cluster.controller.log_dirs[0] / "__cluster_metadata-0"
    snapshot, end = _settle(metadata)
    for attempt in range(10):
        if snapshot is not None and 0 < snapshot_end(snapshot) <= end:
            break
        # Records enough for the controller's next snapshot (2 KB between snapshots).
        cluster.tool("kafka-configs", "--bootstrap-server", cluster.bootstrap_servers, "--alter", "--entity-type", "topics",
                     "--entity-name", "pad", "--add-config", f"retention.bytes={1073741824 + attempt}").check()
        snapshot, end = _settle(metadata)
    assert snapshot is not None, f"no snapshot in {metadata}"
    copy = work / name / "__cluster_metadata-0"
    copy.mkdir(parents=True)
    shutil.copy2(snapshot, copy / snapshot.name)
    for segment in metadata.glob("*.log"):
        shutil.copy2(segment, copy / segment.name)
    state = work / name / "state"
    result = kjbod("import", "cluster", "--metadata-snapshot", copy / snapshot.name, "--metadata-log", copy,
                   "--cluster-id", cluster.cluster_id, state=state)
    assert result.exit_code == 0, result.stdout + result.stderr
    return state


@pytest.fixture(scope="module")
def scene(kafka_version: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Scene]:
    home = tmp_path_factory.mktemp(f"kafka-elr-{kafka_version}")
    with running_cluster(kafka_version, home) as cluster:
        topics = ("kafka-topics", "--bootstrap-server", cluster.bootstrap_servers)
        cluster.tool(*topics, "--create", "--topic", "pad", "--partitions", "1", "--replication-factor", "1").check()
        for topic, assignment in TOPICS.items():
            cluster.tool(*topics, "--create", "--topic", topic, "--replica-assignment", assignment, "--config", "min.insync.replicas=2").check()
        work = home / "scene"
        before = _capture(cluster, work, "before")
        for broker in (3, 2):  # SIGTERM: each shuts down under the controller's control, then is fenced
            node = next(node for node in cluster.brokers if node.node_id == broker)
            stop_processes([node.process.pid], grace=60)
            _settle(cluster.controller.log_dirs[0] / "__cluster_metadata-0")
        scene = Scene(cluster, before, _capture(cluster, work, "after"))
        for topic in TOPICS:
            scene.kafka[topic] = cluster.tool(*topics, "--describe", "--topic", topic).check()
        yield scene


def _kafka_columns(lines: list[str]) -> list[str]:
    return [re.sub(r"\tDirectories: [^\t]*\tOffline: [^\t]*$", "", line) for line in lines]


def test_kafka_keeps_the_replicas_that_shut_down_eligible(scene: Scene) -> None:
    """The scene does what it says (Kafka's lines, ELR in them), so the comparisons below compare something."""
    assert scene.kafka["elr"].lines[1].endswith("\tIsr: 1\tElr: 2\tLastKnownElr: "), scene.kafka["elr"].lines
    partition = scene.kafka["elr2"].lines[1]
    assert "\tLeader: none\t" in partition and partition.endswith("\tLastKnownElr: 2"), partition


@pytest.mark.parametrize("topic", TOPICS)
def test_describe_of_the_imported_state_prints_kafkas_lines(scene: Scene, topic: str) -> None:
    ours = kjbod("topic", "describe", topic, state=scene.after)
    assert ours.exit_code == 0, ours.stderr
    assert _kafka_columns(ours.lines) == scene.kafka[topic].lines


def test_kjbods_controller_makes_kafkas_isr_and_elr_changes(scene: Scene, tmp_path: Path) -> None:
    state = tmp_path / "state"
    shutil.copytree(scene.before, state)
    for broker in (3, 2):
        result = kjbod("broker", "shutdown", "--id", str(broker), state=state)
        assert result.exit_code == 0, result.stdout + result.stderr
    for topic in TOPICS:
        assert _kafka_columns(kjbod("topic", "describe", topic, state=state).lines) == scene.kafka[topic].lines
