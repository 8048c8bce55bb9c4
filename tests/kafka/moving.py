"""Data moved on a real Kafka by Kafka's own tools (issue 29): the pieces the tests of
`kjbod reassign run` and the interruption bench share.

- `kafka_bin`: a bin/ directory as an operator's KAFKA_HOME holds it, one `kafka-*.sh` script per
  tool, each running the tool's main class of the pinned release (what kafka-run-class.sh does);
- `Topic`, `produce`: real data written by Kafka's ProducerPerformance (acks=all);
- `read_back`: every record of a topic read by Kafka's console consumer, as a digest per partition;
- `placement`: where Kafka says every replica is (kafka-topics --describe for the brokers in
  order, kafka-log-dirs --describe for the directories), and the same read from kjbod's state;
- `throttles_left`: the throttle configs kafka-configs --describe still shows;
- `MinIsrSampler`: kafka-topics --under-min-isr-partitions, sampled while data moves;
- `capture`: the controller's snapshot and log and a kafka-log-dirs output, taken at a quiet
  moment and imported by `kjbod import cluster`.
"""

from __future__ import annotations

import hashlib
import json
import re
import shlex
import shutil
import subprocess
import threading
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from tests.kafka.cluster import KafkaCluster
from tests.kafka.conftest import kjbod, quiet_moment
from tests.kafka.runtime import _TOOL_CLASSES, java_command, tool_class, tool_release

# The tools an operator's bin/ holds that these tests use, with the main class each script runs.
BIN_TOOLS = ("kafka-reassign-partitions", "kafka-log-dirs", "kafka-topics", "kafka-configs")

Placement = dict[str, tuple[tuple[int, ...], tuple[str, ...]]]  # "topic-p" -> (replicas in order, their directories)


def kafka_bin(directory: Path, version: str, *, tools: Iterable[str] = BIN_TOOLS, log_invocations: Path | None = None) -> Path:
    """Write `directory`/kafka-<tool>.sh for each tool: `exec java ... -cp <classpath> <main class> "$@"`,
    what Kafka's bin/ scripts do through kafka-run-class.sh. With `log_invocations`, each script
    first appends its arguments to that file (one line per run: how the interruption tests count
    the --execute of each wave)."""
    directory.mkdir(parents=True, exist_ok=True)
    for tool in tools:
        assert tool in _TOOL_CLASSES, tool
        release = tool_release(version, tool)
        command = java_command(release, tool_class(version, tool), [])
        log = f'printf "%s\\n" "$*" >> {shlex.quote(str(log_invocations))}\n' if log_invocations is not None else ""
        script = directory / f"{tool}.sh"
        script.write_text(f"#!/bin/sh\n# Kafka {release}'s {tool}, as its bin/ script runs it.\n{log}exec {shlex.join(command)} \"$@\"\n")
        script.chmod(0o755)
    return directory


# Data ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Topic:
    name: str
    partitions: int
    replication_factor: int
    records: int
    record_size: int
    min_insync: int

    @property
    def bytes(self) -> int:
        return self.records * self.record_size


def create_topics(cluster: KafkaCluster, topics: Iterable[Topic]) -> None:
    for topic in topics:
        cluster.tool("kafka-topics", "--bootstrap-server", cluster.bootstrap_servers, "--create", "--topic", topic.name,
                     "--partitions", str(topic.partitions), "--replication-factor", str(topic.replication_factor),
                     "--config", f"min.insync.replicas={topic.min_insync}").check()


def produce(cluster: KafkaCluster, topic: Topic) -> str:
    """Write the topic's records with Kafka's ProducerPerformance (acks=all, no compression):
    letters A-Z drawn at random, `record_size` bytes each. Returns its summary line."""
    command = java_command(cluster.version, "org.apache.kafka.tools.ProducerPerformance", [
        "--bootstrap-server", cluster.bootstrap_servers, "--topic", topic.name, "--num-records", str(topic.records),
        "--record-size", str(topic.record_size), "--throughput", "-1", "--command-property", "acks=all", "linger.ms=20",
    ])
    done = subprocess.run(command, capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stdout + done.stderr
    summary = [line for line in done.stdout.splitlines() if line.startswith(f"{topic.records} records sent")]
    assert summary, done.stdout + done.stderr
    return summary[-1]


@dataclass(frozen=True)
class Digest:
    records: int
    sha256: str


def read_back(cluster: KafkaCluster, topic: Topic, timeout: float = 300) -> dict[int, Digest]:
    """Every record of the topic, read from the beginning by Kafka's console consumer: per
    partition, how many and the SHA-256 of their offsets and values in offset order."""
    command = java_command(cluster.version, "org.apache.kafka.tools.consumer.ConsoleConsumer", [
        "--bootstrap-server", cluster.bootstrap_servers, "--topic", topic.name, "--from-beginning",
        "--max-messages", str(topic.records), "--timeout-ms", "30000",
        "--formatter-property", "print.partition=true", "--formatter-property", "print.offset=true",
    ])
    done = subprocess.run(command, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)
    hashes: dict[int, list[tuple[int, str]]] = {}
    for line in done.stdout.splitlines():
        match = re.fullmatch(r"Partition:(\d+)\tOffset:(\d+)\t(.*)", line)
        assert match, line[:200]
        hashes.setdefault(int(match[1]), []).append((int(match[2]), match[3]))
    digests = {}
    for partition, records in hashes.items():
        sha = hashlib.sha256()
        for offset, value in sorted(records):
            sha.update(f"{offset}\t{value}\n".encode())
        digests[partition] = Digest(len(records), sha.hexdigest())
    return dict(sorted(digests.items()))


# Where the replicas are -----------------------------------------------------------------------------


_PARTITION_LINE = re.compile(r"^\s*Topic: (?P<topic>\S+)\tPartition: (?P<partition>\d+)\t.*?Replicas: (?P<replicas>[\d,]*)\t")


def parse_placement(topics_describe: str, log_dirs_describe: str) -> Placement:
    """kafka-topics --describe's replica lists with kafka-log-dirs --describe's directories (a
    future replica, mid-move, is not where the replica is)."""
    where: dict[tuple[str, int], str] = {}
    document = json.loads(next(line for line in reversed(log_dirs_describe.splitlines()) if line.startswith("{")))
    for broker in document["brokers"]:
        for log_dir in broker["logDirs"]:
            for item in log_dir["partitions"]:
                if not item["isFuture"]:
                    where[(item["partition"], broker["broker"])] = log_dir["logDir"]
    placement: Placement = {}
    for line in topics_describe.splitlines():
        match = _PARTITION_LINE.match(line + "\t")
        if match:
            name = f"{match['topic']}-{match['partition']}"
            replicas = tuple(int(b) for b in match["replicas"].split(",") if b)
            placement[name] = (replicas, tuple(where.get((name, b), "?") for b in replicas))
    return dict(sorted(placement.items()))


def placement(cluster: KafkaCluster) -> Placement:
    """Both tools run at once (nothing moves meanwhile: between plans, or after a plan's last wave)."""
    servers = cluster.bootstrap_servers
    topics, log_dirs = in_parallel(lambda tool: cluster.tool(tool, "--bootstrap-server", servers, "--describe").check(),
                                   ("kafka-topics", "kafka-log-dirs"))
    return parse_placement(topics.stdout, log_dirs.stdout)


def kjbod_placement(state: Path) -> Placement:
    """The same view of a kjbod state, from kjbod's own mirrors of the two tools."""
    topics = kjbod("topic", "describe", state=state)
    log_dirs = kjbod("log-dirs", "describe", state=state)
    assert topics.exit_code == 0 and log_dirs.exit_code == 0, topics.stderr + log_dirs.stderr
    return parse_placement(topics.stdout, log_dirs.stdout)


def planned(before: Placement, plan: dict) -> Placement:
    """The placement a reassignment file leaves: its partitions' replicas, each in its named
    directory ("any": where it was, for a replica that stays)."""
    after = dict(before)
    for entry in plan["partitions"]:
        name = f"{entry['topic']}-{entry['partition']}"
        old = dict(zip(*before[name]))
        dirs = tuple(old.get(b, "?") if d == "any" else d for b, d in zip(entry["replicas"], entry.get("log_dirs") or ["any"] * len(entry["replicas"])))
        after[name] = (tuple(entry["replicas"]), dirs)
    return after


THROTTLE_CONFIGS = (
    "leader.replication.throttled.rate", "follower.replication.throttled.rate", "replica.alter.log.dirs.io.max.bytes.per.second",
    "leader.replication.throttled.replicas", "follower.replication.throttled.replicas",
)


def throttles_left(cluster: KafkaCluster) -> list[str]:
    """Every line of kafka-configs --describe (brokers, then topics) that names a throttle."""
    servers = cluster.bootstrap_servers
    lines = []
    for entity in ("brokers", "topics"):
        described = cluster.tool("kafka-configs", "--bootstrap-server", servers, "--describe", "--entity-type", entity).check()
        lines += [line for line in described.stdout.splitlines() if any(f"{name}=" in line for name in THROTTLE_CONFIGS)]
    return lines


@dataclass
class Samples:
    count: int = 0


@dataclass
class MinIsrSampler:
    """kafka-topics --describe --under-min-isr-partitions every `interval` seconds in the
    background while data moves (inside `sampling()`; between plans nothing moves, and a JVM every
    few seconds is a fair share of two cores): how many samples, and every line one of them printed
    (none expected)."""

    cluster: KafkaCluster
    interval: float = 2.0
    samples: int = 0
    under: list[str] = field(default_factory=list)
    _stop: threading.Event = field(default_factory=threading.Event)
    _active: threading.Event = field(default_factory=threading.Event)
    _current: Samples | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _thread: threading.Thread | None = None

    def __enter__(self) -> MinIsrSampler:
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()
        return self

    @contextmanager
    def sampling(self) -> Iterator[Samples]:
        """Sample meanwhile; the samples counted are those that began and ended inside, and one
        more is taken at the end, so that a short move is sampled at least once after it."""
        current = self._current = Samples()
        self._active.set()
        try:
            yield current
        finally:
            self._active.clear()
            with self._lock:
                self._current = None
            self._take(current)

    def _sample(self) -> None:
        while not self._stop.is_set():
            if not self._active.wait(0.2):
                continue
            current = self._current
            if current is not None:
                self._take(current)
            self._stop.wait(self.interval)

    def _take(self, current: Samples) -> None:
        result = self.cluster.tool("kafka-topics", "--bootstrap-server", self.cluster.bootstrap_servers, "--describe", "--under-min-isr-partitions")
        if result.exit_code == 0:
            with self._lock:
                self.samples += 1
                current.count += 1
                self.under += [line for line in result.stdout.splitlines() if line.strip()]

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=120)


# The controller's files, imported -------------------------------------------------------------------


# Kafka 4.4's kafka-log-dirs prints no disk sizes; DescribeLogDirs v4 carries them (totalBytes and
# usableBytes, KIP-827) and kjbod reads them as the directories' capacities. The scene's directories
# share one big disk, on which tens of MB are nothing: it pretends each is a disk of this size
# (written into the outputs as those two fields), so that directory usage means something to the
# planner (rebalance-disks) and to the check (capacity.threshold).
DISK_BYTES = 32_000_000


def _with_disk_sizes(text: str) -> str:
    """A log-dirs output with DISK_BYTES as each directory's totalBytes (usableBytes: what its
    partitions leave), as a newer kafka-log-dirs prints them."""
    *head, document = text.rstrip("\n").split("\n")
    data = json.loads(document)
    for broker in data["brokers"]:
        for log_dir in broker["logDirs"]:
            log_dir["totalBytes"] = DISK_BYTES
            log_dir["usableBytes"] = DISK_BYTES - sum(item["size"] for item in log_dir["partitions"])
    return "\n".join([*head, json.dumps(data, separators=(",", ":"))]) + "\n"


def log_dirs_outputs(cluster: KafkaCluster, work: Path) -> list[Path]:
    """kafka-log-dirs --describe for the import, with the pretend disk sizes. A directory that holds
    no replica (a broker just added, a drained disk) cannot be joined to its directory id through
    the replicas: for a broker with one, the output is `kjbod log-dirs describe --from-disk` on its
    host instead (it reads each directory's meta.properties), and Kafka's covers the other brokers
    (--broker-list)."""
    servers = cluster.bootstrap_servers
    described = cluster.tool("kafka-log-dirs", "--bootstrap-server", servers, "--describe").check()
    document = json.loads(described.lines[-1])
    with_empty = sorted(b["broker"] for b in document["brokers"] if any(not d["partitions"] for d in b["logDirs"]))
    files = []
    others = [node.node_id for node in cluster.brokers if node.node_id not in with_empty]
    if others:
        kafka = described if not with_empty else cluster.tool(
            "kafka-log-dirs", "--bootstrap-server", servers, "--describe", "--broker-list", ",".join(map(str, others))).check()
        files.append(work / "log-dirs.txt")
        files[-1].write_text(_with_disk_sizes(kafka.stdout))
    for node in cluster.brokers:
        if node.node_id in with_empty:
            disk = kjbod("log-dirs", "describe", "--from-disk", "--config", node.config)
            assert disk.exit_code == 0, disk.stderr
            files.append(work / f"log-dirs-broker-{node.node_id}-from-disk.txt")
            files[-1].write_text(_with_disk_sizes(disk.stdout))
    return files


def capture(cluster: KafkaCluster, work: Path) -> Path:
    """The controller's newest snapshot, the log segments after it and the log-dirs outputs
    (log_dirs_outputs), taken while the controller writes nothing (brokers report finished moves
    a little after --verify says done: a copy spoiled by a write is taken again); then
    `kjbod import cluster` of them into `work`/state, which is returned."""
    metadata = cluster.controller.log_dirs[0] / "__cluster_metadata-0"
    for attempt in range(5):
        quiet = quiet_moment(metadata, timeout=90)
        assert quiet[0] is not None, f"the controller has written no snapshot yet in {metadata}"
        copy = work / f"controller-files-{attempt}"
        copy.mkdir(parents=True)
        for name in quiet[2]:
            if name.endswith((".log", ".checkpoint")):
                shutil.copy2(metadata / name, copy / name)
        outputs = log_dirs_outputs(cluster, work)
        if quiet_moment(metadata, quiet=0.5, timeout=90) == quiet:
            break
    else:
        raise AssertionError(f"the controller kept writing to {metadata} while its files were copied")
    state = work / "state"
    log_dirs = [arg for output in outputs for arg in ("--log-dirs", output)]
    imported = kjbod("import", "cluster", "--metadata-snapshot", copy / quiet[0].name, "--metadata-log", copy, *log_dirs,
                     "--cluster-id", cluster.cluster_id, state=state)
    assert imported.exit_code == 0, imported.stdout + imported.stderr
    assert "keep their id as their path" not in imported.stdout, imported.stdout
    return state


# The scene: a dedicated cluster with data, and a broker added -------------------------------------

SCENE_VERSION = "4.4.0"
# Sizes differ per topic; tens of MB in all, so that waves under THROTTLE take seconds.
SCENE_TOPICS = (
    Topic("orders", partitions=3, replication_factor=3, records=8_000, record_size=1_000, min_insync=2),
    Topic("clicks", partitions=2, replication_factor=3, records=12_000, record_size=400, min_insync=2),
    Topic("audit", partitions=1, replication_factor=2, records=2_000, record_size=2_000, min_insync=1),
)
# Both throttles of every wave (bytes/s): a partition of 2-3 MB copies in a second or two.
THROTTLE = 2_000_000
ADDED_BROKER = 4


@dataclass
class Scene:
    cluster: KafkaCluster
    bin: Path
    produced: dict[str, str]
    records_before: dict[str, dict[int, Digest]]
    seconds: dict[str, float] = field(default_factory=dict)  # per phase of its start, for the figures


def in_parallel(action, items):  # noqa: ANN001, ANN201 - a small helper over a thread pool
    from concurrent.futures import ThreadPoolExecutor

    items = list(items)
    with ThreadPoolExecutor(len(items)) as pool:
        return list(pool.map(action, items))


def start_scene(home: Path, *, die_with_parent: bool = True, log_invocations: Path | None = None) -> Scene:
    """The dedicated cluster: formatted at the newest metadata.version kjbod models (issue 28
    brings 4.4's), snapshots every few KB of records (for the imports), a small
    __consumer_offsets (the consumers' groups create it); topics written by ProducerPerformance
    and read back once; then broker 4 added, empty. The caller stops the cluster."""
    from tests.kafka.conftest import CONTROLLER_OVERRIDES, LIVE_RELEASE_VERSION

    cluster = KafkaCluster(
        SCENE_VERSION, home / "cluster", controller_overrides=dict(CONTROLLER_OVERRIDES),
        broker_overrides={"offsets.topic.num.partitions": 1}, die_with_parent=die_with_parent,
    )
    seconds: dict[str, float] = {}
    mark = time.monotonic()

    def timed(phase: str) -> None:
        nonlocal mark
        seconds[phase], mark = time.monotonic() - mark, time.monotonic()

    cluster.configure()
    cluster.format_with_kafka("--release-version", LIVE_RELEASE_VERSION)
    timed("format")
    cluster.start()
    timed("start")
    try:
        in_parallel(lambda topic: create_topics(cluster, [topic]), SCENE_TOPICS)
        timed("topics")
        produced = dict(zip((t.name for t in SCENE_TOPICS), in_parallel(lambda topic: produce(cluster, topic), SCENE_TOPICS)))
        timed("produce")
        records = dict(zip((t.name for t in SCENE_TOPICS), in_parallel(lambda topic: read_back(cluster, topic), SCENE_TOPICS)))
        timed("read back")
        cluster.add_broker(ADDED_BROKER, "--release-version", LIVE_RELEASE_VERSION)
        timed("broker added")
    except BaseException:
        cluster.stop()
        raise
    return Scene(cluster, kafka_bin(home / "kafka" / "bin", SCENE_VERSION, log_invocations=log_invocations), produced, records, seconds)
