"""The bad-input campaign's world and rules.

The world is a small real cluster built through the CLI in one directory: three JBOD brokers
(formatted, registered in racks, one restarted so that leadership moved), two topics with sizes,
a fourth broker's server.properties not yet formatted, and a valid example of every file kjbod
reads. Every generated input runs on a fresh copy of it, restored at the same absolute path (the
cluster state records absolute directory paths), with that directory as the working directory.

The rules (`check`): kjbod may succeed (exit 0) or fail with exit 1 or 2 and a message on stderr;
it must never raise (a traceback, or kjbod's "internal error" line), and a failed command must
leave the cluster state exactly as it was, except where the contract has per-item results (an
election or a directory assignment of several partitions, where the ones that succeed stay).
With `-o json`, stdout must hold exactly one JSON document whenever kjbod itself answered
(exit 0 or 1).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import traceback
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import typer.main
from typer.testing import CliRunner

from kjbod.cli.app import app

CLUSTER_ID = "XcZZOzUqS4yHOjhMQB6JLQ"
# The environment every run sees (nothing from the developer's shell).
ENV = {"KJBOD_STATE": None, "KJBOD_DEBUG": None, "KJBOD_LOCK_TIMEOUT": None, "NO_COLOR": "1", "COLUMNS": "100"}

# Inputs generated, by (file type, command), and how each run ended, by (file type, outcome).
GENERATED: Counter[tuple[str, str]] = Counter()
OUTCOMES: Counter[tuple[str, str]] = Counter()
# Runs that broke a rule, by rule ("traceback", "state changed by a failed command", ...).
PROBLEMS: Counter[str] = Counter()

# Built once: Typer rebuilds the Click command tree on every CliRunner.invoke (about 10 ms).
COMMAND = typer.main.get_command(app)


@dataclass
class Run:
    args: list[str]
    exit_code: int | None
    stdout: str
    stderr: str
    # Set when kjbod let an exception escape (what an operator would see as a traceback).
    error: str | None = None


def run_cli(args: list[str], cwd: Path) -> Run:
    """`kjbod ARGS` in-process, in `cwd`, with both streams captured and every exception caught."""
    runner = CliRunner()
    previous = os.getcwd()
    error = None
    with runner.isolation(env=ENV) as (stdout, stderr, _):
        os.chdir(cwd)
        try:
            COMMAND.main(args=args, prog_name="kjbod", standalone_mode=True)
            code: int | None = 0
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        except BaseException:  # noqa: BLE001 - the campaign's whole point is to see them
            code, error = None, traceback.format_exc()
        finally:
            os.chdir(previous)
        out = stdout.getvalue().decode("utf-8", "replace")
        err = stderr.getvalue().decode("utf-8", "replace")
    return Run(args, code, out, err, error)


def fingerprint(path: Path) -> dict[str, tuple[int, str]] | None:
    """Every file under `path` with its size and sha256 (None when `path` does not exist).
    The lock file is left out: it is the lock, not the state."""
    if not path.exists():
        return None
    files = {}
    for file in sorted(p for p in path.rglob("*") if p.is_file() and p.name != ".lock"):
        data = file.read_bytes()
        files[str(file.relative_to(path))] = (len(data), hashlib.sha256(data).hexdigest())
    return files


# Commands whose requests have one result per partition (Kafka's ElectLeaders and
# AssignReplicasToDirs): a failed item fails the command (exit 1), the others take effect.
# What a success looks like in their text output (with -o json: a result with error NONE).
PER_ITEM_SUCCESS = {
    "elect": "Successfully completed leader election",
    "assign-dirs": ": NONE",
}


def _some_items_succeeded(run: Run, label: str, json_output: bool) -> bool:
    if label not in PER_ITEM_SUCCESS or run.exit_code != 1:
        return False
    if not json_output:
        return PER_ITEM_SUCCESS[label] in run.stdout
    try:
        return any(result["error"] == "NONE" for result in json.loads(run.stdout)["results"])
    except (ValueError, KeyError, TypeError):
        return False


def check(run: Run, label: str, before: Any, after: Any, *, json_output: bool) -> str:
    """Assert the campaign's rules for one run; returns the outcome's name for the tally.
    A broken rule is counted in PROBLEMS (by rule) before the assertion fails."""
    shown = f"kjbod {' '.join(run.args)}\n--- stdout:\n{run.stdout[-2000:]}\n--- stderr:\n{run.stderr[-2000:]}"
    problem = _broken_rule(run, label, before, after, json_output)
    if problem is not None:
        rule, detail = problem
        PROBLEMS[rule] += 1
        raise AssertionError(f"{rule}: {detail}\n{shown}")
    if run.exit_code != 0 and before != after:
        return "exit 1, per-item successes kept"
    return f"exit {run.exit_code}"


def _broken_rule(run: Run, label: str, before: Any, after: Any, json_output: bool) -> tuple[str, str] | None:
    if run.error is not None:
        return "traceback", f"an exception escaped:\n{run.error}"
    if any("Traceback (most recent call last)" in stream for stream in (run.stdout, run.stderr)):
        return "traceback", "a traceback was printed"
    if "internal error" in run.stderr:
        return "traceback", "kjbod reported an internal error (an unexpected exception)"
    if run.exit_code not in (0, 1, 2):
        return "other exit code", f"exit {run.exit_code}"
    if run.exit_code != 0:
        message = run.stderr.rstrip("\n").split("\n")[-1].strip()
        if not (message or _problems_only(run, label, json_output)):
            return "no message", f"exit {run.exit_code} without a message"
    # --help and --version print their text whatever the output format, as every CLI does.
    if json_output and run.exit_code in (0, 1) and not {"-h", "--help", "--version"} & set(run.args):
        try:
            json.loads(run.stdout)
        except ValueError as exc:
            return "not one JSON document", f"-o json: stdout is not one JSON document ({exc})"
    if run.exit_code != 0 and before != after and not _some_items_succeeded(run, label, json_output):
        return "state changed by a failed command", "the command failed but changed the cluster state"
    return None


def _problems_only(run: Run, label: str, json_output: bool) -> bool:
    """kafka-storage info (`meta info`) reports its problems on stdout and exits 1 without a message."""
    if label != "meta info":
        return False
    if not json_output:
        return "Found problem" in run.stdout
    try:
        return bool(json.loads(run.stdout)["problems"])
    except (ValueError, KeyError, TypeError):
        return False


# The world -----------------------------------------------------------------------------------


def broker_config(world: Path, broker: int, rack: str, dirs: int, roles: str = "broker") -> str:
    paths = ",".join(str(world / f"b{broker}" / f"d{i}") for i in range(1, dirs + 1))
    return (
        f"process.roles={roles}\nnode.id={broker}\nbroker.rack={rack}\n"
        "controller.quorum.voters=1@localhost:9093\ncontroller.listener.names=CONTROLLER\n"
        f"listeners=PLAINTEXT://:9092,CONTROLLER://:9093\nlog.dirs={paths}\n"
    )


class World:
    """The cluster and its valid input files, rebuilt from a template before every input."""

    def __init__(self, base: Path) -> None:
        self.root = base / "world"
        self.template = base / "template"
        self.state = self.root / "state"
        self.root.mkdir(parents=True)
        self._build()
        shutil.copytree(self.root, self.template, symlinks=True)
        # A second template with the first reassignment running (for verify and cancel).
        self.must("reassign", "execute", "--reassignment-json-file", str(self.root / "reassignment.json"), "--throttle", "1000000")
        self.moving_template = base / "template-moving"
        shutil.copytree(self.root, self.moving_template, symlinks=True)

    def reset(self, *, moving: bool = False) -> None:
        """Restore the world: idle, or with the valid reassignment in progress."""
        shutil.rmtree(self.root)
        shutil.copytree(self.moving_template if moving else self.template, self.root, symlinks=True)

    def kjbod(self, *args: str) -> Run:
        return run_cli(["--state", str(self.state), *args], self.root)

    def must(self, *args: str) -> Run:
        run = self.kjbod(*args)
        assert run.exit_code == 0 and run.error is None, (args, run.stdout, run.stderr, run.error)
        return run

    def _build(self) -> None:
        w = self.root
        for broker, rack, dirs, roles in ((1, "r1", 3, "broker,controller"), (2, "r2", 2, "broker"), (3, "r3", 2, "broker"), (4, "r1", 2, "broker")):
            (w / f"broker{broker}.properties").write_text(broker_config(w, broker, rack, dirs, roles))
        for broker in (1, 2, 3):
            self.must("format", "-c", str(w / f"broker{broker}.properties"), "-t", CLUSTER_ID)
            self.must("broker", "register", "--config", str(w / f"broker{broker}.properties"))
            self.must("broker", "heartbeat", "--id", str(broker))
        self.must("topic", "create", "orders", "--partitions", "6", "--replication-factor", "2", "--seed", "1")
        self.must("topic", "create", "clicks", "--partitions", "3", "--replication-factor", "3", "--seed", "2")
        self.must("topic", "set-size", "orders", "--bytes", "2000000000")
        self.must("topic", "set-size", "clicks", "--bytes", "500000000")
        for broker in (1, 2, 3):
            self.must("assign-dirs", "--broker", str(broker), "--auto")
        # Broker 3 restarts: leadership moves off it (so preferred elections have work).
        self.must("broker", "shutdown", "--id", "3")
        self.must("broker", "register", "--config", str(w / "broker3.properties"))
        self.must("broker", "heartbeat", "--id", "3")
        self.must("clock", "advance", "--until-idle")
        topics = {t["topic"]: t for t in json.loads(self.must("-o", "json", "topic", "describe").stdout)}
        self.files = self._write_inputs(topics)

    def _write_inputs(self, topics: dict[str, Any]) -> dict[str, Any]:
        w = self.root
        orders0 = topics["orders"]["partitions"][0]["replicas"]
        spare = next(b for b in (1, 2, 3) if b not in orders0)
        clicks0 = topics["clicks"]["partitions"][0]["replicas"]
        on_broker1 = next(p["partition"] for p in topics["orders"]["partitions"] if 1 in p["replicas"])
        files: dict[str, Any] = {
            "reassignment": [
                {"version": 1, "partitions": [
                    {"topic": "orders", "partition": 0, "replicas": [orders0[0], spare], "log_dirs": ["any", str(w / f"b{spare}" / "d1")]},
                    {"topic": "clicks", "partition": 0, "replicas": list(reversed(clicks0))},
                ]},
                {"version": 1, "partitions": [{"topic": "orders", "partition": 1, "replicas": [3, 1, 2], "log_dirs": ["any", "any", "any"]}]},
            ],
            "topics": [
                {"topics": [{"topic": "orders"}, {"topic": "clicks"}], "version": 1},
                {"topics": [{"topic": "clicks"}], "version": 1},
            ],
            "election": [
                {"partitions": [{"topic": "orders", "partition": 0}, {"topic": "clicks", "partition": 1}]},
                {"partitions": [{"topic": "clicks", "partition": p} for p in range(3)]},
            ],
            "assign-dirs": [
                {"assignments": [{"topic": "orders", "partition": on_broker1, "directory": str(w / "b1" / "d2")}]},
            ],
        }
        for name, documents in files.items():
            (w / f"{name}.json").write_text(json.dumps(documents[0]))
        policy = w / "policy.toml"
        self.must("reassign", "check", "--write-default-policy", str(policy))
        files["policy"] = [
            policy.read_text(),
            'fail_on = ["error", "warning"]\nremoving_brokers = [3]\n\n[limits]\nmax_moves_per_broker = 2\nmax_bytes = "5GB"\n'
            'max_duration = "2h"\n\n[racks]\nmode = "no-worse"\n\n[throttle]\nrate = 50000000\n\n[severities]\n"rack.rule" = "warning"\n',
        ]
        files["log-dirs output"] = self.must("log-dirs", "describe").stdout
        (w / "log-dirs.txt").write_text(files["log-dirs output"])
        files["server.properties"] = [(w / f"broker{b}.properties").read_text() for b in (1, 2, 3, 4)]
        files["meta.properties"] = [(w / "b1" / "d2" / "meta.properties").read_text(), (w / "b2" / "d1" / "meta.properties").read_text()]
        for name, documents in files.items():
            if name not in ("policy", "log-dirs output", "server.properties", "meta.properties"):
                for index, document in enumerate(documents):
                    (w / f"{name}-{index}.json").write_text(json.dumps(document))
        return files
