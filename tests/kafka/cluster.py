"""A real Kafka cluster on 127.0.0.1: one KRaft controller and three JBOD brokers, separate JVMs.

The controller is formatted `--standalone` (a dynamic, KIP-853 quorum: brokers and tools find it
through controller.quorum.bootstrap.servers); each broker has three log directories and a rack.
`start()` returns once every broker has logged "Transition from STARTING to STARTED", which
BrokerServer.startup does only after the controller has registered and unfenced it
(kafka/server/BrokerServer.scala:582-625 in 4.3.1). `stop()` ends every JVM it started (SIGTERM,
then SIGKILL after a grace period); a failed start stops them before it raises. In the tests the
JVMs also die with the Python process that started them (PR_SET_PDEATHSIG).

By hand, for development (the same cluster; stop it with the same directory):

    python -m tests.kafka.cluster start --kafka 4.4.0 --dir /tmp/kafka-dev
    python -m tests.kafka.cluster stop --dir /tmp/kafka-dev
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import ctypes
import json
import os
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from tests.kafka.runtime import SERVER_LOG4J, ToolResult, java_command, run_tool, tools_archive_from

CONTROLLER_ID = 100
BROKER_IDS = (1, 2, 3)
LOG_DIRS_PER_BROKER = 3
STARTED = "Transition from STARTING to STARTED"
# Small heaps; C1 only and the serial collector keep start-up cheap on two cores.
SERVER_JVM_FLAGS = ("-Xms64m", "-Xmx320m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xshare:auto", "-Djava.awt.headless=true")


def random_kafka_uuid() -> str:
    """`Uuid.randomUuid().toString()`: URL-safe base64 of 16 random bytes, unpadded, drawn again
    while it starts with a dash, as Kafka does (Uuid.java:76-82 in 4.3.1's kafka-clients): one id
    in 64 did, and kafka-storage's `-t -xyz...` then failed to parse (a cluster start in 64)."""
    while True:
        text = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
        if not text.startswith("-"):
            return text


def free_ports(count: int) -> list[int]:
    """Ports free on 127.0.0.1 now (all held open together, so they differ)."""
    with contextlib.ExitStack() as stack:
        sockets = [stack.enter_context(socket.socket()) for _ in range(count)]
        for sock in sockets:
            sock.bind(("127.0.0.1", 0))
        return [sock.getsockname()[1] for sock in sockets]


def _die_with_parent() -> None:
    """In the child before exec: SIGKILL when the process that started it ends (Linux)."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


def write_properties(path: Path, values: dict[str, object]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(f"{key}={value}\n" for key, value in values.items()))
    return path


@dataclass
class Node:
    node_id: int
    role: str  # "controller" or "broker"
    home: Path
    port: int
    log_dirs: list[Path]
    config: Path
    process: subprocess.Popen[bytes] | None = None

    @property
    def log(self) -> Path:
        return self.home / "server.log"

    def log_text(self) -> str:
        return self.log.read_text(errors="replace") if self.log.exists() else ""

    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None


@dataclass
class KafkaCluster:
    version: str
    home: Path
    cluster_id: str = field(default_factory=random_kafka_uuid)
    # Extra server.properties per role, e.g. snapshot thresholds for the import test.
    controller_overrides: dict[str, object] = field(default_factory=dict)
    broker_overrides: dict[str, object] = field(default_factory=dict)
    die_with_parent: bool = True
    brokers_count: int = len(BROKER_IDS)
    nodes: list[Node] = field(default_factory=list)
    common_config: dict[str, object] = field(default_factory=dict)

    # -- layout --------------------------------------------------------------------------------

    def configure(self) -> None:
        """Choose ports and write every node's server.properties (nothing formatted yet)."""
        broker_ids = BROKER_IDS[:self.brokers_count]
        controller_port, *broker_ports = free_ports(1 + len(broker_ids))
        quorum = f"127.0.0.1:{controller_port}"
        common = {
            "controller.quorum.bootstrap.servers": quorum,
            "controller.listener.names": "CONTROLLER",
            "listener.security.protocol.map": "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT",
            "num.network.threads": 1,
            "num.io.threads": 2,
            "background.threads": 2,
        }
        home = self.home / "controller"
        meta = home / "meta"
        controller = {
            "process.roles": "controller",
            "node.id": CONTROLLER_ID,
            "listeners": f"CONTROLLER://{quorum}",
            "advertised.listeners": f"CONTROLLER://{quorum}",
            "log.dirs": meta,
            **common,
            **self.controller_overrides,
        }
        self.nodes = [Node(CONTROLLER_ID, "controller", home, controller_port, [meta], write_properties(home / "server.properties", controller))]
        self.common_config = common
        for broker_id, port in zip(broker_ids, broker_ports):
            self.nodes.append(self._broker_node(broker_id, port))

    def _broker_node(self, broker_id: int, port: int) -> Node:
        """A JBOD broker's node and server.properties (three log directories, rack r<id>)."""
        home = self.home / f"broker-{broker_id}"
        dirs = [home / f"d{index}" for index in range(1, LOG_DIRS_PER_BROKER + 1)]
        broker = {
            "process.roles": "broker",
            "node.id": broker_id,
            "broker.rack": f"r{broker_id}",
            "listeners": f"PLAINTEXT://127.0.0.1:{port}",
            "advertised.listeners": f"PLAINTEXT://127.0.0.1:{port}",
            "inter.broker.listener.name": "PLAINTEXT",
            "log.dirs": ",".join(map(str, dirs)),
            "num.partitions": 1,
            "num.replica.fetchers": 1,
            "num.recovery.threads.per.data.dir": 1,
            "log.cleaner.threads": 1,
            "group.initial.rebalance.delay.ms": 0,
            **self.common_config,
            **self.broker_overrides,
        }
        return Node(broker_id, "broker", home, port, dirs, write_properties(home / "server.properties", broker))

    def add_broker(self, broker_id: int, *extra_format_args: str, timeout: float = 180) -> Node:
        """A new broker joins the running cluster: configured like the others, formatted by
        `kafka-storage format` with the cluster's id, started; returns once it is registered
        and unfenced. A failed start stops it before the error propagates."""
        node = self._broker_node(broker_id, free_ports(1)[0])
        self.tool("kafka-storage", "format", "-t", self.cluster_id, "-c", node.config, *extra_format_args).check()
        self.nodes.append(node)
        self._launch(node)
        try:
            self.wait_started(timeout)
        except BaseException:
            stop_processes([node.process.pid] if node.process else [], 30)
            raise
        self._save()
        return node

    @property
    def controller(self) -> Node:
        return self.nodes[0]

    @property
    def brokers(self) -> list[Node]:
        return self.nodes[1:]

    @property
    def bootstrap_servers(self) -> str:
        return ",".join(f"127.0.0.1:{node.port}" for node in self.brokers)

    @property
    def bootstrap_controller(self) -> str:
        return f"127.0.0.1:{self.controller.port}"

    def tool(self, tool: str, *args: str | os.PathLike[str]) -> ToolResult:
        return run_tool(self.version, tool, *args)

    def format_with_kafka(self, *extra: str) -> None:
        """`kafka-storage format` on every node, as an operator does (the controller standalone)."""
        self._in_parallel(
            lambda node: self.tool("kafka-storage", "format", "-t", self.cluster_id, "-c", node.config, *extra,
                                   *(["--standalone"] if node.role == "controller" else [])).check()
        )

    def _in_parallel(self, action: Callable[[Node], object]) -> None:
        """One thread per node; the first failure is raised after all have finished."""
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(len(self.nodes)) as pool:
            for future in [pool.submit(action, node) for node in self.nodes]:
                future.result()

    # -- life cycle ----------------------------------------------------------------------------

    def start(self, timeout: float = 180) -> None:
        """Start every node; return once every broker is registered and unfenced. On any failure
        every JVM started is stopped before the error propagates."""
        try:
            for node in self.nodes:
                self._launch(node)
            self.wait_started(timeout)
        except BaseException:
            self.stop()
            raise
        self._save()
        tools_archive_from(self.version, self.bootstrap_servers)

    def _launch(self, node: Node) -> None:
        command = java_command(self.version, "kafka.Kafka", [str(node.config)], jvm_flags=SERVER_JVM_FLAGS, log4j=SERVER_LOG4J)
        with open(node.log, "ab") as log:
            node.process = subprocess.Popen(
                command, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, cwd=node.home,
                start_new_session=True, preexec_fn=_die_with_parent if self.die_with_parent else None,
            )

    def wait_started(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        waiting = list(self.brokers)
        while waiting:
            for node in self.nodes:
                if not node.alive():
                    raise RuntimeError(f"Kafka {self.version} {node.role} {node.node_id} exited ({node.process.returncode if node.process else '-'}) "
                                       f"during start-up; end of {node.log}:\n{tail(node.log_text())}")
            waiting = [node for node in waiting if STARTED not in node.log_text()]
            if waiting and time.monotonic() > deadline:
                raise TimeoutError(f"Kafka {self.version} brokers {[node.node_id for node in waiting]} not started after {timeout:.0f}s; "
                                   f"end of {waiting[0].log}:\n{tail(waiting[0].log_text())}")
            if waiting:
                time.sleep(0.25)

    def pids(self) -> list[int]:
        return [node.process.pid for node in self.nodes if node.process is not None]

    def stop(self, grace: float = 30) -> None:
        """Brokers first (their controlled shutdown needs the controller), then the controller;
        SIGKILL whatever has not ended after `grace` seconds. Ends every JVM this object started."""
        stop_processes([node.process.pid for node in self.brokers if node.alive()], grace)
        stop_processes([node.process.pid for node in self.nodes if node.alive()], grace)
        for node in self.nodes:
            if node.process is not None:
                with contextlib.suppress(subprocess.TimeoutExpired):
                    node.process.wait(timeout=grace)
        with contextlib.suppress(FileNotFoundError):
            (self.home / "cluster.json").unlink()

    def _save(self) -> None:
        """What `python -m tests.kafka.cluster stop` needs, and what a developer wants to see."""
        state = {
            "version": self.version,
            "cluster_id": self.cluster_id,
            "bootstrap_servers": self.bootstrap_servers,
            "bootstrap_controller": self.bootstrap_controller,
            "nodes": [{"id": node.node_id, "role": node.role, "pid": node.process.pid if node.process else None,
                       "config": str(node.config), "log": str(node.log)} for node in self.nodes],
        }
        (self.home / "cluster.json").write_text(json.dumps(state, indent=2) + "\n")


def tail(text: str, lines: int = 40) -> str:
    return "\n".join(text.splitlines()[-lines:])


def pid_alive(pid: int) -> bool:
    """True while the process exists and is not a zombie."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def stop_processes(pids: Iterable[int], grace: float) -> None:
    pids = [pid for pid in pids if pid_alive(pid)]
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + grace
    while any(pid_alive(pid) for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.1)
    for pid in pids:
        if pid_alive(pid):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


def java_processes_under(path: Path) -> list[int]:
    """Pids of running java processes whose command line names a file under `path`."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if argv and argv[0].endswith(b"java") and any(str(path).encode() in arg for arg in argv) and pid_alive(int(entry.name)):
            found.append(int(entry.name))
    return found


# -- by hand ---------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.kafka.cluster", description="Start or stop the tests' Kafka cluster by hand.")
    commands = parser.add_subparsers(dest="command", required=True)
    start = commands.add_parser("start", help="format (kafka-storage) and start a controller and three JBOD brokers")
    start.add_argument("--kafka", default="4.4.0", help="the pinned Kafka release (default 4.4.0)")
    start.add_argument("--dir", type=Path, required=True, help="a new or empty directory for the nodes' configs, data and logs")
    stop = commands.add_parser("stop", help="stop the cluster started in --dir")
    stop.add_argument("--dir", type=Path, required=True)
    args = parser.parse_args(argv)
    home = args.dir.resolve()
    if args.command == "start":
        if home.exists() and any(home.iterdir()):
            parser.error(f"{home} is not empty: give a new directory (or stop the cluster there and remove it)")
        cluster = KafkaCluster(args.kafka, home, die_with_parent=False)
        cluster.configure()
        cluster.format_with_kafka()
        cluster.start()
        print(f"Kafka {cluster.version} cluster {cluster.cluster_id} started")
        print(f"  --bootstrap-server {cluster.bootstrap_servers}")
        print(f"  --bootstrap-controller {cluster.bootstrap_controller}")
        print(f"  nodes, pids and logs: {home / 'cluster.json'}")
        print(f"  stop it: python -m tests.kafka.cluster stop --dir {home}")
        return 0
    state_file = home / "cluster.json"
    if not state_file.is_file():
        print(f"No cluster started in {home} (no cluster.json)", file=sys.stderr)
        return 1
    state = json.loads(state_file.read_text())
    nodes = state["nodes"]
    stop_processes([node["pid"] for node in nodes if node["role"] == "broker"], 30)
    stop_processes([node["pid"] for node in nodes], 30)
    state_file.unlink()
    print(f"Kafka {state['version']} cluster {state['cluster_id']} stopped")
    return 0


if __name__ == "__main__":
    sys.exit(main())
