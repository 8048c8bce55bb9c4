"""Builders for the CLI's tests: the files `import cluster` reads, and a formatted controller
whose cluster state commands then run on."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tests.conftest import Cli

CLUSTER_ID = "XcZZOzUqS4yHOjhMQB6JLQ"

# `import cluster`'s three inputs for a small JBOD cluster: brokers, assignment, kafka-log-dirs output.
BROKERS = {"brokers": [
    {"id": 1, "rack": "r1", "log_dirs": [{"path": "/data/b1/d1", "capacity_bytes": 4000}, {"path": "/data/b1/d2", "capacity_bytes": 4000}]},
    {"id": 2, "rack": "r2", "log_dirs": [{"path": "/data/b2/d1", "capacity_bytes": 4000}, {"path": "/data/b2/d2", "capacity_bytes": 4000}]},
    {"id": 3, "rack": "r3", "log_dirs": [{"path": "/data/b3/d1", "capacity_bytes": 4000}]},
]}
ASSIGNMENT = {"version": 1, "partitions": [
    {"topic": "orders", "partition": 0, "replicas": [1, 2, 3], "log_dirs": ["/data/b1/d1", "/data/b2/d2", "/data/b3/d1"]},
    {"topic": "orders", "partition": 1, "replicas": [2, 3, 1], "log_dirs": ["/data/b2/d2", "/data/b3/d1", "/data/b1/d2"]},
    {"topic": "audit", "partition": 0, "replicas": [3, 1], "log_dirs": ["/data/b3/d1", "/data/b1/d2"]},
]}


def entry(name: str, size: int, lag: int = 0, future: bool = False) -> dict:
    return {"partition": name, "size": size, "offsetLag": lag, "isFuture": future}


LOG_DIRS = {"brokers": [
    {"broker": 1, "logDirs": [
        {"partitions": [entry("orders-0", 900)], "error": None, "logDir": "/data/b1/d1"},
        {"partitions": [entry("orders-1", 400, 25), entry("audit-0", 30)], "error": None, "logDir": "/data/b1/d2"},
    ]},
    {"broker": 2, "logDirs": [
        {"partitions": [entry("orders-1", 120, 7, True)], "error": None, "logDir": "/data/b2/d1"},
        {"partitions": [entry("orders-0", 900), entry("orders-1", 500)], "error": None, "logDir": "/data/b2/d2"},
    ]},
    {"broker": 3, "logDirs": [
        {"partitions": [entry("orders-0", 900), entry("orders-1", 500), entry("audit-0", 30)], "error": None, "logDir": "/data/b3/d1"},
    ]},
], "version": 1}


def write_config(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def formatted_controller(cli: Cli, tmp_path: Path) -> Path:
    """A controller (node 3000) formatted for CLUSTER_ID, which initialises the cluster state."""
    state = tmp_path / "state"
    controller = write_config(
        tmp_path / "controller.properties",
        f"process.roles=controller\nnode.id=3000\nlog.dirs={tmp_path / 'controller'}\n"
        "controller.quorum.voters=3000@localhost:9093\ncontroller.listener.names=CONTROLLER\n",
    )
    assert cli("format", "-c", str(controller), "-t", CLUSTER_ID, state=state).exit_code == 0
    return state
