"""Issue 28's second must-show: a Kafka 4.4.0 cluster with eligible leader replicas on, cordoned
directories, SCRAM users and share and streams finalized, imported by kjbod from the controller's
own files, planned, checked, exported, and the export read back by Kafka's kafka-metadata-shell
with the same image as it reads from Kafka's own snapshot.

The cluster is its own (one controller, three brokers x three directories), started once for the
module (about 40 s with the scene on an idle machine):
- formatted by 4.4.0's kafka-storage at 4.4-IV0 with a SCRAM user (`--add-scram`): the release's
  defaults finalize eligible.leader.replicas.version=1, share.version=2 and streams.version=1
  (kafka-features version-mapping). Not at 4.4-IV2, 4.4.0's default: the only kafka-metadata-shell
  on Maven Central is 4.3.1's, whose MetadataVersion ends at 4.4-IV0 (level 31); it cannot load a
  4.4-IV1+ image ("Unknown metadata version for FeaturesImage"). The later levels gate CIDR ACL
  host patterns and controller unregistration, which the scene does not use;
- broker 1's third directory cordoned in its server.properties (it holds nothing), broker 2's
  first two by kafka-configs (a dynamic, per-broker config; they hold replicas);
- a second SCRAM user by kafka-configs (SCRAM-SHA-512);
- topics orders (6 partitions, RF 3) and ledger (RF 2, by hand), min.insync.replicas=2;
- broker 3 shut down last: ledger's partitions lose it from their ISR below min.insync.replicas,
  and it stays an eligible leader replica.
The controller snapshots after every commit (metadata.log.max.record.bytes.between.snapshots=1),
so once it is quiet its newest snapshot holds every record: kjbod's import of the snapshot, the log
and kafka-log-dirs' output is the image of that snapshot, and kjbod's export of the state it
planned and checked is compared with Kafka's own snapshot of the same offset.
"""

from __future__ import annotations

import json
import re
import shutil
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from kjbod.common.kafka_uuid import uuid_sort_key
from tests.kafka.cluster import KafkaCluster, stop_processes
from tests.kafka.conftest import CONTROLLER_OVERRIDES, KjbodResult, _settle, kjbod, kjbod_speaks, snapshot_end
from tests.kafka.moving import kjbod_placement, log_dirs_outputs, planned
from tests.kafka.runtime import ToolResult, run_tool

SHOW_VERSION = "4.4.0"
SHOW_RELEASE = "4.4-IV0"
# ledger-0 and ledger-1 have broker 3 (they keep it as an eligible leader replica); the others not.
LEDGER = "1:3,3:2,2:1,1:2,2:1,1:2"
BROKER_SESSION_TIMEOUT_S = 9  # broker.session.timeout.ms's default
# Broker 2's first two directories (both cordoned) get these ids (meta.properties, before start),
# whose order in the broker's HashSet (buckets 1 and 5), which Kafka keeps, is not their sorted
# order: the comparison of the images sees the order of a registration's cordoned directories.
BROKER_2_DIRECTORY_IDS = ("N0GqkmxJmhCmzO3PpcI0ug", "6B2d-cgrUeUiLbX00Ew0ug")


@dataclass
class Show:
    cluster: KafkaCluster
    work: Path
    snapshot: Path  # Kafka's own, holding every record
    state: Path  # kjbod's import of the controller's files
    cordoned: dict[int, list[str]]  # broker -> cordoned paths
    imported: KjbodResult
    topics: ToolResult  # kafka-topics --describe once broker 3 is down
    shell: ToolResult  # kafka-metadata-shell's tree of Kafka's snapshot


# MetadataShell's non-interactive mode can print before its publisher has the image, on a loaded
# machine (MetadataShell.waitUntilCaughtUp, 4.3.1 MetadataShell.java:247): an empty image whose
# provenance is offset -1. Run it again.
EMPTY_IMAGE = "offset -1, epoch -1"


def metadata_shell_tree(snapshot: Path, tries: int = 3) -> ToolResult:
    for _ in range(tries):
        result = run_tool(SHOW_VERSION, "kafka-metadata-shell", "--snapshot", snapshot, "tree", "/")
        if EMPTY_IMAGE not in result.stdout:
            break
    assert result.exit_code == 0, result.stderr
    return result


def _quiet_snapshot(cluster: KafkaCluster) -> Path:
    """The controller's newest snapshot once it is quiet and holds every record of the log (a
    snapshot still being written when the last commit came is followed by one more change)."""
    metadata = cluster.controller.log_dirs[0] / "__cluster_metadata-0"
    for attempt in range(5):
        snapshot, end = _settle(metadata)
        if snapshot is not None and snapshot_end(snapshot) == end:
            return snapshot
        cluster.tool("kafka-configs", "--bootstrap-server", cluster.bootstrap_servers, "--alter", "--entity-type", "topics",
                     "--entity-name", "orders", "--add-config", f"retention.ms={86_400_000 + attempt}").check()
    raise AssertionError(f"no snapshot of {metadata} holds its whole log")


def _scene(cluster: KafkaCluster, work: Path) -> Show:
    work.mkdir()
    servers = cluster.bootstrap_servers
    topics = ("kafka-topics", "--bootstrap-server", servers)
    configs = ("kafka-configs", "--bootstrap-server", servers, "--alter")
    cluster.tool(*topics, "--create", "--topic", "orders", "--partitions", "6", "--replication-factor", "3",
                 "--config", "min.insync.replicas=2").check()
    cluster.tool(*topics, "--create", "--topic", "ledger", "--replica-assignment", LEDGER, "--config", "min.insync.replicas=2").check()
    broker_1, broker_2, broker_3 = cluster.brokers
    cordoned = {1: [str(broker_1.log_dirs[2])], 2: [str(broker_2.log_dirs[0]), str(broker_2.log_dirs[1])]}
    cluster.tool(*configs, "--entity-type", "brokers", "--entity-name", "2", "--add-config",
                 f"cordoned.log.dirs=[{','.join(cordoned[2])}]").check()
    cluster.tool(*configs, "--entity-type", "users", "--entity-name", "bob", "--add-config", "SCRAM-SHA-512=[password=bob-secret]").check()
    # Every broker up: kafka-log-dirs for the directories' paths (broker 1's empty d3 from its disk).
    log_dirs = log_dirs_outputs(cluster, work)
    stop_processes([broker_3.process.pid], grace=60)  # SIGTERM: a controlled shutdown, then fenced
    # The controller fences broker 3 once more when its session expires (a second
    # BrokerRegistrationChangeRecord fenced=1, broker.session.timeout.ms after the last heartbeat):
    # the files are copied after that.
    time.sleep(BROKER_SESSION_TIMEOUT_S)
    snapshot = _quiet_snapshot(cluster)
    copy = work / "controller" / "__cluster_metadata-0"
    copy.mkdir(parents=True)
    shutil.copy2(snapshot, copy / snapshot.name)
    for segment in snapshot.parent.glob("*.log"):
        shutil.copy2(segment, copy / segment.name)
    described = cluster.tool(*topics, "--describe").check()
    assert _quiet_snapshot(cluster) == snapshot, "the controller wrote while its files were copied"
    state = work / "state"
    imported = kjbod("import", "cluster", "--metadata-snapshot", copy / snapshot.name, "--metadata-log", copy,
                     *[arg for output in log_dirs for arg in ("--log-dirs", output)], "--cluster-id", cluster.cluster_id, state=state)
    return Show(cluster, work, copy / snapshot.name, state, cordoned, imported, described, metadata_shell_tree(copy / snapshot.name))


@pytest.fixture(scope="module")
def show(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Show]:
    home = tmp_path_factory.mktemp("kafka-show-4.4")
    with kjbod_speaks(SHOW_VERSION):
        cluster = KafkaCluster(SHOW_VERSION, home, controller_overrides={
            **CONTROLLER_OVERRIDES, "metadata.log.max.record.bytes.between.snapshots": 1})
        cluster.configure()
        broker_1 = cluster.brokers[0]
        with broker_1.config.open("a") as config:
            config.write(f"cordoned.log.dirs={broker_1.log_dirs[2]}\n")
        cluster.format_with_kafka("--release-version", SHOW_RELEASE,
                                  "--add-scram", "SCRAM-SHA-256=[name=alice,password=alice-secret,iterations=8192]")
        for directory, directory_id in zip(cluster.brokers[1].log_dirs, BROKER_2_DIRECTORY_IDS):
            meta = directory / "meta.properties"
            meta.write_text(re.sub(r"(?m)^directory\.id=.*$", f"directory.id={directory_id}", meta.read_text()))
        cluster.start()
        try:
            yield _scene(cluster, home / "scene")
        finally:
            cluster.stop()



def image_tree(result: ToolResult) -> dict[str, list[str]]:
    """The shell's `tree /` as {path: the lines printed under it}: a line ending with a colon names
    a node one level (two spaces) below the one before it; any other line is its node's value."""
    tree: dict[str, list[str]] = {}
    path: list[str] = []
    for line in result.lines:
        depth = (len(line) - len(line.lstrip(" "))) // 2
        if line.endswith(":"):
            path = [*path[:depth], line.strip()[:-1]]
            tree.setdefault("/".join(path), [])
        else:
            tree.setdefault("/".join(path[:depth]), []).append(line.strip())
    return tree


def test_kafkas_image_holds_the_scene(show: Show) -> None:
    """What the comparisons below compare: Kafka's own snapshot holds every part of the scene."""
    tree = image_tree(show.shell)
    features = {name: tree[f"image/features/finalized_{name}"] for name in ("eligible.leader.replicas.version", "share.version", "streams.version")}
    assert features == {"eligible.leader.replicas.version": ["1"], "share.version": ["2"], "streams.version": ["1"]}
    assert tree["image/features/metadataVersion"] == [f"Optional[{SHOW_RELEASE}]"]
    brokers = {broker: " ".join(tree[f"image/cluster/brokers/{broker}"]) for broker in (1, 2, 3)}
    cordoned = {broker: re.search(r"cordonedDirectories=\[([^]]*)\]", text)[1].split(", ") for broker, text in brokers.items() if broker != 3}
    assert len(cordoned[1]) == 1 and cordoned[2] == list(BROKER_2_DIRECTORY_IDS) != sorted(BROKER_2_DIRECTORY_IDS, key=uuid_sort_key), brokers
    assert "fenced=true" in brokers[3] and "fenced=false" in brokers[1]
    assert {"image/scram/SCRAM-SHA-256/alice", "image/scram/SCRAM-SHA-512/bob"} <= set(tree), sorted(p for p in tree if "scram" in p)
    partitions = [line for path, lines in tree.items() if path.startswith("image/topics/byName/ledger/") for line in lines]
    assert sum("elr=[3]" in line for line in partitions) == 2, partitions
    assert any("\tElr: 3\t" in line for line in show.topics.lines), show.topics.stdout


def test_kjbod_imports_the_controllers_files(show: Show) -> None:
    assert show.imported.exit_code == 0, show.imported.stdout + show.imported.stderr
    assert "Imported 3 broker(s) with 9 log directories, 2 topic(s) and 12 partition(s) (30 replicas)" in show.imported.stdout
    assert "keep their id as their path" not in show.imported.stdout, show.imported.stdout



def test_topic_describe_of_the_imported_state_prints_kafkas_lines(show: Show) -> None:
    """Isr, Elr and LastKnownElr with broker 3 down, and each topic's Configs (kjbod's
    Directories and Offline columns, after Kafka's, set aside)."""
    ours = kjbod("topic", "describe", state=show.state)
    assert ours.exit_code == 0, ours.stderr
    assert [re.sub(r"\tDirectories: [^\t]*\tOffline: [^\t]*$", "", line) for line in ours.lines] == show.topics.lines

@dataclass
class Plan:
    drained: str  # broker 1's directory the plan empties
    file: Path
    result: KjbodResult
    document: dict


def _without_broker_3(placement: dict, name: str) -> bool:
    return 3 not in placement[name][0]


@pytest.fixture(scope="module")
def plan(show: Show) -> Plan:
    """kjbod's plan to empty one of broker 1's open directories, the one holding most replicas
    the plan may move: its replicas can go to its other open directory (the third is cordoned) or
    to another broker's open one (broker 2's third; broker 3 is fenced). Partitions keeping a
    replica on broker 3 stay out of the plan: Kafka's tool refuses a plan naming a fenced broker."""
    before = kjbod_placement(show.state)
    movable = [dirs[replicas.index(1)] for name, (replicas, dirs) in before.items() if 1 in replicas and _without_broker_3(before, name)]
    drained = max(sorted(set(movable)), key=movable.count)
    assert drained not in show.cordoned[1]
    file = show.work / "drain.json"
    result = kjbod("-o", "json", "reassign", "plan", "--goal", "drain-dirs", "--dir", f"1:{drained}", "--engine", "local",
                   "--output-file", file, state=show.state)
    assert result.exit_code == 0, result.stdout + result.stderr
    return Plan(drained, file, result, json.loads(file.read_text()))


def test_the_plan_drains_the_directory_into_uncordoned_ones_only(show: Show, plan: Plan) -> None:
    before = kjbod_placement(show.state)
    after = planned(before, plan.document)
    moved = {(name, broker, directory) for name, (replicas, dirs) in after.items() for broker, directory in zip(replicas, dirs)
             if (broker, directory) not in set(zip(*before[name]))}
    assert moved, plan.document
    assert not [move for move in moved if move[2] in show.cordoned.get(move[1], ())], moved
    left = [name for name, (replicas, dirs) in after.items() if (1, plan.drained) in zip(replicas, dirs)]
    assert not [name for name in left if _without_broker_3(after, name)], (left, after)
    assert not [entry for entry in plan.document["partitions"] if 3 in entry["replicas"]], plan.document
    if left:
        assert "keeping a replica on a fenced or unregistered broker are left as they are" in plan.result.stdout, plan.result.stdout


def test_reassign_check_passes_the_plan(show: Show, plan: Plan) -> None:
    checked = kjbod("reassign", "check", "--reassignment-json-file", plan.file, state=show.state)
    assert checked.exit_code == 0, checked.stdout + checked.stderr


@pytest.fixture(scope="module")
def exported(show: Show, plan: Plan) -> ToolResult:
    """kjbod's export of the state it planned and checked, read by kafka-metadata-shell."""
    directory = show.work / "export"
    directory.mkdir()
    result = kjbod("metadata", "export", "--kafka-snapshot", directory, state=show.state)
    assert result.exit_code == 0, result.stderr
    # Named by the state's own next offset (kjbod numbers the records of its state log), not by
    # the controller's: the shell reads the image, whose provenance counts the snapshot's records.
    (snapshot,) = directory.glob("*.checkpoint")
    return metadata_shell_tree(snapshot)


# The provenance line gives the wall-clock time of the snapshot's last record (kjbod's clock is
# simulated).
PROVENANCE_TIME = re.compile(r"(offset \d+, epoch \d+, time ).*$")


def _image_lines(result: ToolResult) -> list[str]:
    return [PROVENANCE_TIME.sub(r"\1<time>", line) for line in result.lines]


def test_kafka_metadata_shell_reads_kjbods_export_as_the_same_image(show: Show, exported: ToolResult) -> None:
    """Features, brokers with their directories and cordoned directories, controllers, topics and
    partitions (ISR, ELR, LastKnownElr, directories, epochs), configs and SCRAM credentials: line
    for line, in the shell's order. Nothing is set aside but the provenance's wall-clock time."""
    assert _image_lines(exported) == _image_lines(show.shell)

