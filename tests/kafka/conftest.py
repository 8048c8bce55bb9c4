"""The running-Kafka tests: every test here is marked `kafka` and runs once per pinned release.

Without Java or Maven they skip with one line naming what is missing (test_prerequisites.py; the
other modules are not collected); with CI=true they never skip (a missing prerequisite fails them). Each release's cluster starts once per session
(`kafka_cluster`), and is stopped before the next release's starts.
"""

from __future__ import annotations

import os
import re
import shutil
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.kafka.cluster import KafkaCluster
from tests.kafka.runtime import KAFKA_VERSIONS, TOOL_RUNS, ToolResult, missing_prerequisite

HERE = Path(__file__).parent
MISSING = missing_prerequisite()
if MISSING is not None and os.environ.get("CI") != "true":
    # One line says why: test_prerequisites.py skips; the other modules are not collected.
    collect_ignore_glob = ["test_[!p]*.py"]


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if HERE in Path(str(item.fspath)).parents:
            item.add_marker(pytest.mark.kafka)


@pytest.fixture(scope="session")
def kafka_prerequisites() -> None:
    if MISSING is None:
        return
    if os.environ.get("CI") == "true":
        pytest.fail(f"CI=true: the Kafka tests must run, but this machine has {MISSING}")
    pytest.skip(f"the tests that run Kafka need Java and Maven: {MISSING}")


@pytest.fixture(autouse=True)
def _kafka_prerequisites(kafka_prerequisites: None) -> None:
    """Every test here needs them (the skip or failure is decided once per session)."""


@contextmanager
def kjbod_speaks(version: str) -> Iterator[str]:
    """kjbod mirrors this Kafka release meanwhile (KJBOD_KAFKA_VERSION, as an operator of that
    release sets it); the variable is as it was afterwards."""
    before = os.environ.get("KJBOD_KAFKA_VERSION")
    os.environ["KJBOD_KAFKA_VERSION"] = version
    try:
        yield version
    finally:
        if before is None:
            os.environ.pop("KJBOD_KAFKA_VERSION", None)
        else:
            os.environ["KJBOD_KAFKA_VERSION"] = before


@pytest.fixture(scope="session", params=KAFKA_VERSIONS)
def kafka_version(request: pytest.FixtureRequest) -> Iterator[str]:
    """The release under test; kjbod speaks it meanwhile, so every kjbod run of these tests
    mirrors the Kafka it is compared with."""
    with kjbod_speaks(request.param):
        yield request.param


# Lines a test has for the terminal summary (the reassign proof's figures).
SUMMARY_LINES: list[str] = []


def _summary() -> list[str]:
    """How long Kafka's tools took (the figure to watch for CI's time), then the tests' lines."""
    lines = []
    if TOOL_RUNS:
        seconds = sum(run.seconds for run in TOOL_RUNS)
        lines.append(f"Kafka tools: {len(TOOL_RUNS)} runs, {seconds:.0f}s")
    return lines + SUMMARY_LINES


def pytest_sessionfinish(session: pytest.Session) -> None:
    """In a pytest-xdist worker, the lines go to the controlling process with the worker's
    output (tests/conftest.py prints them there)."""
    workeroutput = getattr(session.config, "workeroutput", None)
    if workeroutput is not None:
        workeroutput["summary_lines"] = _summary()


def pytest_terminal_summary(terminalreporter, exitstatus, config) -> None:  # noqa: ANN001 - pytest's hook
    for line in _summary():
        terminalreporter.write_line(line)


@dataclass
class KjbodResult:
    exit_code: int
    stdout: str
    stderr: str

    @property
    def lines(self) -> list[str]:
        return self.stdout.splitlines()


def kjbod(*args: str | os.PathLike[str], state: Path | None = None) -> KjbodResult:
    """Run kjbod's CLI as an operator does (in-process, both streams captured)."""
    from kjbod.cli.app import app

    prefix = ["--state", str(state)] if state is not None else []
    result = CliRunner().invoke(app, [*prefix, *map(str, args)], catch_exceptions=False)
    return KjbodResult(result.exit_code, result.stdout, result.stderr)


def strict_xfail(request: pytest.FixtureRequest, versions: tuple[str, ...], reason: str) -> None:
    """Mark the running test a strict expected failure at these Kafka versions: a difference
    from Kafka handed on (the reason names the issue and what Kafka does)."""
    if request.getfixturevalue("kafka_version") in versions:
        request.applymarker(pytest.mark.xfail(strict=True, reason=reason))


# -- the live cluster of each release ---------------------------------------------------------

# The controller writes a snapshot every few KB of new records and never on a timer; with no
# no-op records (metadata.max.idle.interval.ms=0) its log stands still between our changes, so the
# snapshot and the log segments after it are copied at a moment nothing is written.
CONTROLLER_OVERRIDES = {
    # No leader rebalance on a timer: the scene elects preferred leaders itself.
    "auto.leader.rebalance.enable": "false",
    "metadata.log.max.record.bytes.between.snapshots": 2048,
    "metadata.log.max.snapshot.interval.ms": 0,
    "metadata.max.idle.interval.ms": 0,
}
# The metadata.version the live clusters run: 4.3-IV0 is 4.3.1's default and the newest kjbod
# models; 4.4.0's default (4.4-IV2) is issue 28's (test_import_of_a_default_4_4_cluster).
LIVE_RELEASE_VERSION = "4.3-IV0"


@contextmanager
def running_cluster(kafka_version: str, home: Path) -> Iterator[KafkaCluster]:
    """A cluster formatted by Kafka at LIVE_RELEASE_VERSION, started, and stopped at the end."""
    cluster = KafkaCluster(kafka_version, home, controller_overrides=dict(CONTROLLER_OVERRIDES))
    cluster.configure()
    cluster.format_with_kafka("--release-version", LIVE_RELEASE_VERSION)
    cluster.start()
    try:
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture(scope="session")
def kafka_cluster(kafka_version: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[KafkaCluster]:
    with running_cluster(kafka_version, tmp_path_factory.mktemp(f"kafka-{kafka_version}")) as cluster:
        yield cluster


@dataclass
class Live:
    """The live cluster after the scene, what Kafka's tools print on it, and the controller's
    files copied at that moment."""

    cluster: KafkaCluster
    copy: Path
    snapshot: Path
    metadata_log: Path
    log_dirs_file: Path
    kafka: dict[str, ToolResult] = field(default_factory=dict)
    import_result: KjbodResult | None = None

    @property
    def version(self) -> str:
        return self.cluster.version

    @property
    def state(self) -> Path:
        return self.copy / "state"


def _reassignment(moves: list[tuple[str, int, list[int], list[str]]]) -> str:
    import json

    return json.dumps({"version": 1, "partitions": [
        {"topic": topic, "partition": partition, "replicas": replicas, "log_dirs": dirs} for topic, partition, replicas, dirs in moves
    ]})


def _directory_of(log_dirs_json: dict, broker: int, partition: str) -> str:
    for entry in log_dirs_json["brokers"]:
        if entry["broker"] == broker:
            for log_dir in entry["logDirs"]:
                if any(item["partition"] == partition for item in log_dir["partitions"]):
                    return log_dir["logDir"]
    raise AssertionError(f"{partition} not found on broker {broker}")


def log_dirs_json(result: ToolResult) -> dict:
    import json

    return json.loads(result.lines[-1])


def metadata_log_end(directory: Path) -> int:
    """The offset after the last batch of the log segments in `directory` (the record batch
    header: baseOffset int64 at 0, batchLength int32 at 8, lastOffsetDelta int32 at 23)."""
    end = 0
    for segment in sorted(directory.glob("*.log")):
        data = segment.read_bytes()
        position = 0
        while position + 27 <= len(data):
            base = int.from_bytes(data[position:position + 8], "big")
            length = int.from_bytes(data[position + 8:position + 12], "big")
            if length == 0 or position + 12 + length > len(data):
                break
            end = base + int.from_bytes(data[position + 23:position + 27], "big") + 1
            position += 12 + length
    return end


def newest_snapshot(directory: Path) -> Path | None:
    snapshots = sorted(directory.glob("*.checkpoint"))
    return snapshots[-1] if snapshots else None


def quiet_moment(directory: Path, quiet: float = 3, timeout: float = 60) -> tuple[Path | None, int, list[str]]:
    """Wait until the controller's log and snapshots have not changed for `quiet` seconds (looked
    at every quarter second); its newest snapshot, log end and file names then."""
    deadline = time.monotonic() + timeout
    last, since = None, time.monotonic()
    while time.monotonic() < deadline:
        now = (newest_snapshot(directory), metadata_log_end(directory), sorted(p.name for p in directory.iterdir()))
        if now != last or any(name.endswith(".part") for name in now[2]):
            last, since = now, time.monotonic()
        elif time.monotonic() - since >= quiet:
            return now
        time.sleep(0.25)
    raise TimeoutError(f"{directory} still changing after {timeout}s")


def _settle(directory: Path, timeout: float = 60, quiet: float = 3) -> tuple[Path, int]:
    """quiet_moment's newest snapshot and log end."""
    snapshot, end, _ = quiet_moment(directory, quiet, timeout)
    return snapshot, end


def snapshot_end(snapshot: Path) -> int:
    return int(snapshot.name.split("-")[0])


@pytest.fixture(scope="session")
def live(kafka_cluster: KafkaCluster, tmp_path_factory: pytest.TempPathFactory) -> Live:
    """The scene every import, export and features test reads: JBOD topics, configs, moves
    between a broker's directories and between brokers, a preferred election; then the
    controller's snapshot and log copied, and Kafka's describe outputs taken."""
    cluster = kafka_cluster
    servers = cluster.bootstrap_servers
    topics = ("kafka-topics", "--bootstrap-server", servers)
    cluster.tool(*topics, "--create", "--topic", "events", "--partitions", "6", "--replication-factor", "3").check()
    cluster.tool(*topics, "--create", "--topic", "audit", "--partitions", "3", "--replication-factor", "2",
                 "--config", "retention.ms=86400000", "--config", "min.insync.replicas=2").check()
    before = log_dirs_json(cluster.tool("kafka-log-dirs", "--bootstrap-server", servers, "--describe").check())
    # events-0 on broker 1 to another of its directories; audit-0 to brokers 3,1 (directories "any").
    current = _directory_of(before, 1, "events-0")
    target = next(str(path) for path in cluster.brokers[0].log_dirs if str(path) != current)
    replicas_events_0 = next(item for item in _replicas(before) if item[0] == "events-0")[1]
    plan = _reassignment([
        ("events", 0, replicas_events_0, [target if broker == 1 else "any" for broker in replicas_events_0]),
        ("audit", 0, [3, 1], ["any", "any"]),
    ])
    work = tmp_path_factory.mktemp(f"scene-{cluster.version}")
    (work / "plan.json").write_text(plan)
    reassign = ("kafka-reassign-partitions", "--bootstrap-server", servers, "--reassignment-json-file", work / "plan.json")
    cluster.tool(*reassign, "--execute").check()
    for _ in range(30):
        verify = cluster.tool(*reassign, "--verify", "--preserve-throttles").check()
        if "is still in progress" not in verify.stdout:
            break
        time.sleep(1)
    cluster.tool("kafka-configs", "--bootstrap-server", servers, "--alter", "--entity-type", "topics", "--entity-name", "events",
                 "--add-config", "cleanup.policy=compact,segment.bytes=1048576").check()
    cluster.tool("kafka-leader-election", "--bootstrap-server", servers, "--election-type", "preferred", "--all-topic-partitions")

    metadata = cluster.controller.log_dirs[0] / "__cluster_metadata-0"
    # A broker may still report a finished move (AssignReplicasToDirs) after --verify says done: if
    # the controller writes while we copy or describe, settle and take everything again.
    for capture in range(3):
        snapshot, end = _settle(metadata)
        # A tail after the snapshot: one more small change unless the log already has one.
        for attempt in range(3):
            if snapshot is not None and 0 < snapshot_end(snapshot) < end:
                break
            cluster.tool("kafka-configs", "--bootstrap-server", servers, "--alter", "--entity-type", "topics", "--entity-name", "audit",
                         "--add-config", f"retention.bytes={1073741824 + 10 * capture + attempt}").check()
            snapshot, end = _settle(metadata)
        assert snapshot is not None and 0 < snapshot_end(snapshot) < end, f"no snapshot with records after it in {metadata}"

        copy = work / f"copy-{capture}"
        log_copy = copy / "__cluster_metadata-0"
        log_copy.mkdir(parents=True)
        shutil.copy2(snapshot, log_copy / snapshot.name)
        for segment in metadata.glob("*.log"):
            shutil.copy2(segment, log_copy / segment.name)
        result = Live(cluster, copy, log_copy / snapshot.name, log_copy, copy / "log-dirs.txt")
        log_dirs = cluster.tool("kafka-log-dirs", "--bootstrap-server", servers, "--describe").check()
        result.log_dirs_file.write_text(log_dirs.stdout)
        result.kafka["log-dirs"] = log_dirs
        result.kafka["topics"] = cluster.tool(*topics, "--describe").check()
        result.kafka["features"] = cluster.tool("kafka-features", "--bootstrap-server", servers, "describe").check()
        quorum = ("kafka-metadata-quorum", "--bootstrap-controller", cluster.bootstrap_controller, "describe")
        result.kafka["status"] = cluster.tool(*quorum, "--status").check()
        result.kafka["replication"] = cluster.tool(*quorum, "--replication").check()
        if metadata_log_end(log_copy) == metadata_log_end(metadata) == end and newest_snapshot(metadata) == snapshot:
            break
    else:
        raise AssertionError(f"the controller kept writing to {metadata} while its files were copied and described")
    result.import_result = kjbod("import", "cluster", "--metadata-snapshot", result.snapshot, "--metadata-log", log_copy,
                                 "--log-dirs", result.log_dirs_file, "--cluster-id", cluster.cluster_id, state=result.state)
    return result


def _replicas(log_dirs: dict) -> list[tuple[str, list[int]]]:
    """(partition, brokers holding it) from a kafka-log-dirs --describe document."""
    holders: dict[str, list[int]] = {}
    for entry in log_dirs["brokers"]:
        for log_dir in entry["logDirs"]:
            for item in log_dir["partitions"]:
                holders.setdefault(item["partition"], []).append(entry["broker"])
    return sorted(holders.items())


def tabs(text: str) -> list[list[str]]:
    """Lines split into their tab-separated fields, trailing spaces of each field kept."""
    return [line.split("\t") for line in text.splitlines()]


def words(line: str) -> list[str]:
    return re.split(r"\s+", line.strip())
