"""a. `kafka-storage format` and `kjbod format` on the same server.properties: the same stdout
lines and exit status, the same files (byte for byte but timestamps, CRCs and random ids); and a
cluster whose every node kjbod formatted starts, with Kafka registering the directory ids kjbod
wrote. Also: a cluster that fails to start leaves no JVM behind."""

from __future__ import annotations

import base64
import json
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.kafka.cluster import KafkaCluster, java_processes_under, pid_alive
from tests.kafka.conftest import kjbod, strict_xfail
from tests.kafka.runtime import ToolResult, run_batch
from tests.kafka.test_features import RELEASES_OF

CLUSTER_ID = "ALH8esX1S5Gbv6IDnqJsvQ"
# Fixed directory ids for --initial-controllers (node 1 is the one formatted).
INITIAL_CONTROLLERS = "1@127.0.0.1:9093:Zx8pTf1mR0uD2b3c4e5f6g,2@127.0.0.1:9094:Bb8pTf1mR0uD2b3c4e5f6g,3@127.0.0.1:9095:Cb8pTf1mR0uD2b3c4e5f6g"
COMMON = {
    "controller.listener.names": "CONTROLLER",
    "listener.security.protocol.map": "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT",
    "controller.quorum.bootstrap.servers": "127.0.0.1:9093",
}
SHAPES = {
    "standalone": ({"process.roles": "controller", "node.id": 1, "listeners": "CONTROLLER://127.0.0.1:9093", "log.dirs": "{data}/meta"},
                   ["--standalone"]),
    "initial-controllers": ({"process.roles": "controller", "node.id": 1, "listeners": "CONTROLLER://127.0.0.1:9093", "log.dirs": "{data}/meta"},
                            ["--initial-controllers", INITIAL_CONTROLLERS]),
    "broker": ({"process.roles": "broker", "node.id": 2, "listeners": "PLAINTEXT://127.0.0.1:9092",
                "log.dirs": "{data}/d1,{data}/d2,{data}/d3"}, []),
    # A SCRAM credential with its salt given (nothing random): the same record byte for byte.
    "standalone-scram": ({"process.roles": "controller", "node.id": 1, "listeners": "CONTROLLER://127.0.0.1:9093", "log.dirs": "{data}/meta"},
                         ["--standalone", "--add-scram", 'SCRAM-SHA-512=[name=alice,iterations=8192,salt="N3E=",saltedpassword="YCE="]']),
}
# SCRAM needs metadata.version 3.5-IV2: older releases refuse (no files to compare).
SCRAM_RELEASES_REFUSED = ("3.3", "3.4")
DEFAULT = "default"  # no --release-version: the tool's own default
ALL_RELEASES = (*RELEASES_OF["4.4.0"], DEFAULT)


def _release_args(release: str) -> list[str]:
    return [] if release == DEFAULT else ["--release-version", release]


@dataclass
class FormatCase:
    home: Path
    args: list[str]
    kafka: ToolResult

    @property
    def data(self) -> Path:
        return self.home / "data"

    @property
    def kafka_data(self) -> Path:
        return self.home / "kafka-data"


@dataclass
class Formats:
    cases: dict[tuple[str, str], FormatCase]
    started_ms: int
    ended_ms: int


@pytest.fixture(scope="module")
def kafka_formats(kafka_version: str, tmp_path_factory: pytest.TempPathFactory) -> Formats:
    """kafka-storage format of every shape at every release (one JVM); each case's directories are
    then moved aside, for kjbod to format the same paths."""
    work = tmp_path_factory.mktemp(f"format-{kafka_version}")
    cases, invocations = {}, []
    for release in (*RELEASES_OF[kafka_version], DEFAULT):
        for shape, (config, shape_args) in SHAPES.items():
            if shape == "standalone-scram" and release in SCRAM_RELEASES_REFUSED:
                continue
            home = work / f"{shape}-{release}"
            data = home / "data"
            values = {**COMMON, **{key: str(value).format(data=data) for key, value in config.items()}}
            (home).mkdir()
            (home / "server.properties").write_text("".join(f"{key}={value}\n" for key, value in values.items()))
            args = ["format", "-t", CLUSTER_ID, "-c", str(home / "server.properties"), *_release_args(release), *shape_args]
            cases[(shape, release)] = home, args
            invocations.append(("kafka-storage", args))
    started = int(time.time() * 1000)
    results = run_batch(kafka_version, invocations, work / "batch")
    ended = int(time.time() * 1000)
    formats = Formats({}, started, ended)
    for (key, (home, args)), result in zip(cases.items(), results):
        case = FormatCase(home, args, result)
        if case.data.exists():
            case.data.rename(case.kafka_data)
        formats.cases[key] = case
    return formats


def _directory_ids(root: Path) -> list[bytes]:
    """The raw bytes of every directory.id written under root (random on each side)."""
    ids = []
    for meta in root.rglob("meta.properties"):
        for line in meta.read_text().splitlines():
            if line.startswith("directory.id="):
                ids.append(base64.urlsafe_b64decode(line.split("=", 1)[1] + "=="))
    return ids


def _masked(data: bytes, formats: Formats, random_ids: list[bytes]) -> bytes:
    """A metadata file with what may differ zeroed: each batch's CRC (bytes 17-20) and timestamps
    (27-42), any 8-byte time of this test run (the snapshot header's lastContainedLogTimestamp), and
    the random directory ids (the standalone voter's)."""
    out = bytearray(data)
    position = 0
    while position + 61 <= len(out):
        length = int.from_bytes(out[position + 8:position + 12], "big")
        out[position + 17:position + 21] = bytes(4)
        out[position + 27:position + 43] = bytes(16)
        position += 12 + length
    # The random ids first: a voter id then an id can read as a time of this year (00 00 00 01 a2 ...).
    for random_id in random_ids:
        out = bytearray(bytes(out).replace(random_id, bytes(16)))
    low, high = formats.started_ms - 86_400_000, formats.ended_ms + 86_400_000 * 365
    for index in range(len(out) - 7):
        if low <= int.from_bytes(out[index:index + 8], "big") <= high:
            out[index:index + 8] = bytes(8)
    return bytes(out)


def _properties(path: Path) -> dict[str, str]:
    values = dict(line.split("=", 1) for line in path.read_text().splitlines() if line and not line.startswith("#"))
    if "directory.id" in values:
        assert len(base64.urlsafe_b64decode(values["directory.id"] + "==")) == 16
        values["directory.id"] = "<random>"
    return values


def _tree(root: Path) -> dict[str, Path]:
    return {str(path.relative_to(root)): path for path in sorted(root.rglob("*")) if path.is_file() and path.name != ".lock"}


def _differences(kafka_version: str, shape: str, release: str, *, files: bool, features: bool = True) -> list[str]:
    """What differs, at which Kafka version, for which shape and release: strict expected
    failures, each naming the issue it is handed on to and what Kafka does. None today (issue 28
    closed the last: features, release 4.4, KAFKA-19648's layout, kraft.version's dependencies)."""
    return []


def _case(kafka_version: str, shape: str, release: str, kafka_formats: Formats, request: pytest.FixtureRequest, *, files: bool,
          features: bool = True) -> FormatCase:
    if (shape, release) not in kafka_formats.cases:
        if shape == "standalone-scram" and release in SCRAM_RELEASES_REFUSED:
            pytest.skip(f"metadata.version {release} has no SCRAM: both refuse, no files to compare")
        pytest.skip(f"Kafka {kafka_version} has no release {release}")
    reasons = _differences(kafka_version, shape, release, files=files, features=features)
    if reasons:
        strict_xfail(request, (kafka_version,), "; ".join(reasons))
    return kafka_formats.cases[(shape, release)]


def _format_with_kjbod(case: FormatCase):  # noqa: ANN202 - the conftest's KjbodResult
    if not hasattr(case, "ours"):
        case.ours = kjbod(*case.args, state=case.home / "state")
    return case.ours


@pytest.mark.parametrize("shape", list(SHAPES))
@pytest.mark.parametrize("release", ALL_RELEASES)
def test_kjbod_format_prints_what_kafka_storage_prints(kafka_version: str, shape: str, release: str, kafka_formats: Formats,
                                                       request: pytest.FixtureRequest) -> None:
    case = _case(kafka_version, shape, release, kafka_formats, request, files=False)
    ours = _format_with_kjbod(case)
    assert (ours.exit_code, ours.lines) == (case.kafka.exit_code, case.kafka.lines), (ours.stderr, case.kafka.stderr)


@pytest.mark.parametrize("shape", list(SHAPES))
@pytest.mark.parametrize("release", ALL_RELEASES)
def test_kjbod_format_writes_the_files_kafka_storage_writes(kafka_version: str, shape: str, release: str, kafka_formats: Formats,
                                                            request: pytest.FixtureRequest) -> None:
    case = _case(kafka_version, shape, release, kafka_formats, request, files=True)
    _format_with_kjbod(case)
    theirs_tree, our_tree = _tree(case.kafka_data), _tree(case.data)
    assert theirs_tree, case.kafka.stderr
    assert sorted(our_tree) == sorted(theirs_tree)
    theirs_ids, our_ids = _directory_ids(case.kafka_data), _directory_ids(case.data)
    for name, path in our_tree.items():
        if name.endswith("meta.properties"):
            assert _properties(path) == _properties(theirs_tree[name]), name
        else:
            assert _masked(path.read_bytes(), kafka_formats, our_ids) == _masked(theirs_tree[name].read_bytes(), kafka_formats, theirs_ids), name


BOOTSTRAP_LINE = "Bootstrap metadata: "


@pytest.mark.parametrize("shape", list(SHAPES))
@pytest.mark.parametrize("release", ALL_RELEASES)
def test_kjbod_format_prints_the_directory_lines_and_writes_the_meta_properties(
    kafka_version: str, shape: str, release: str, kafka_formats: Formats, request: pytest.FixtureRequest
) -> None:
    """What can be compared where the features kjbod does not model (and 4.4.0's layout) make the
    two tests above fail: the exit status, every stdout line but the BootstrapMetadata, and each
    directory's meta.properties."""
    case = _case(kafka_version, shape, release, kafka_formats, request, files=True, features=False)
    ours = _format_with_kjbod(case)
    without_bootstrap = lambda lines: [line for line in lines if not line.startswith(BOOTSTRAP_LINE)]  # noqa: E731
    assert (ours.exit_code, without_bootstrap(ours.lines)) == (case.kafka.exit_code, without_bootstrap(case.kafka.lines))
    theirs = {name: path for name, path in _tree(case.kafka_data).items() if name.endswith("meta.properties")}
    mine = {name: path for name, path in _tree(case.data).items() if name.endswith("meta.properties")}
    assert theirs and sorted(mine) == sorted(theirs)
    assert all(_properties(mine[name]) == _properties(theirs[name]) for name in theirs)


def test_a_cluster_kjbod_formatted_starts_with_its_directory_ids(kafka_version: str, tmp_path: Path) -> None:
    """Every node formatted by kjbod (controller standalone, a broker with three directories):
    Kafka starts them, the quorum's voter has kjbod's directory id, the broker registers kjbod's
    three; stop() then leaves no JVM behind."""
    cluster = KafkaCluster(kafka_version, tmp_path / "cluster", brokers_count=1)
    cluster.configure()
    for node in cluster.nodes:
        extra = ["--standalone"] if node.role == "controller" else []
        result = kjbod("format", "-c", node.config, "-t", cluster.cluster_id, *extra, state=node.home / "state")
        assert result.exit_code == 0, result.stderr
    ids = {node.node_id: [_properties_raw(log_dir / "meta.properties")["directory.id"] for log_dir in node.log_dirs] for node in cluster.nodes}
    try:
        cluster.start()
        status = cluster.tool("kafka-metadata-quorum", "--bootstrap-controller", cluster.bootstrap_controller, "describe", "--status").check()
        voters = json.loads(next(line for line in status.lines if line.startswith("CurrentVoters:")).split(":", 1)[1])
        assert [(voter["id"], voter["directoryId"]) for voter in voters] == [(cluster.controller.node_id, ids[cluster.controller.node_id][0])]
        segments = sorted((cluster.controller.log_dirs[0] / "__cluster_metadata-0").glob("*.log"))
        dump = cluster.tool("kafka-dump-log", "--cluster-metadata-decoder", "--files", ",".join(map(str, segments))).check()
        registrations = [json.loads(line.split("payload: ", 1)[1]) for line in dump.lines if '"REGISTER_BROKER_RECORD"' in line]
        broker = cluster.brokers[0]
        assert registrations and all(sorted(r["data"]["logDirs"]) == sorted(ids[broker.node_id]) for r in registrations)
    finally:
        pids = cluster.pids()
        cluster.stop()
    assert pids and not [pid for pid in pids if pid_alive(pid)]
    assert java_processes_under(cluster.home) == []


def _properties_raw(path: Path) -> dict[str, str]:
    return dict(line.split("=", 1) for line in path.read_text().splitlines() if line and not line.startswith("#"))


def test_a_failed_start_leaves_no_jvm(kafka_version: str, tmp_path: Path) -> None:
    """The broker's directories are left unformatted: it exits, and start() stops the controller
    it had started before raising."""
    if kafka_version != "4.4.0":
        pytest.skip("the fixture's clean-up is the same code at every version; once is enough")
    cluster = KafkaCluster(kafka_version, tmp_path / "cluster", brokers_count=1)
    cluster.configure()
    controller = cluster.controller
    assert kjbod("format", "-c", controller.config, "-t", cluster.cluster_id, "--standalone", state=controller.home / "state").exit_code == 0
    with pytest.raises(RuntimeError, match="broker 1 exited"):
        cluster.start()
    pids = cluster.pids()
    assert len(pids) == 2 and not [pid for pid in pids if pid_alive(pid)]
    assert java_processes_under(cluster.home) == []
    shutil.rmtree(cluster.home)


@pytest.mark.parametrize("release", ["4.3", DEFAULT])
def test_kjbod_imports_the_bootstrap_snapshot_kafka_4_4_writes(kafka_version: str, release: str, kafka_formats: Formats,
                                                               request: pytest.FixtureRequest, tmp_path: Path) -> None:
    """Since KAFKA-19648 a 4.4.0 controller's first snapshot holds the bootstrap feature levels: at
    4.4.0's default release (4.4-IV2) it is what import meets in every new 4.4 cluster."""
    if kafka_version != "4.4.0":
        pytest.skip("4.3.1's bootstrap snapshot holds no metadata.version (its bootstrap.checkpoint does)")
    case = kafka_formats.cases[("standalone", release)]
    snapshot = case.kafka_data / "meta" / "__cluster_metadata-0" / "00000000000000000000-0000000000.checkpoint"
    result = kjbod("import", "cluster", "--metadata-snapshot", snapshot, state=tmp_path / "state")
    assert result.exit_code == 0, result.stderr
    assert "Controller quorum: voters 1 (kraft.version 1)" in result.stdout
