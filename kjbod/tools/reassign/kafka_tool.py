"""Kafka's own command-line tools, found and run as an operator runs them, and their output read.

`kjbod reassign run` drives `kafka-reassign-partitions` (and, for the bytes it reports,
`kafka-log-dirs`) from the operator's Kafka installation: the script is found in `--kafka-bin
DIR`, else `$KAFKA_HOME/bin`, else on PATH (`kafka-reassign-partitions.sh` as Apache Kafka ships
it, or `kafka-reassign-partitions` as some packages name it). kjbod never speaks Kafka's protocol
itself: it runs the tool with the operator's `--bootstrap-server` and `--command-config` and reads
the lines the tool prints, which are those of ReassignPartitionsCommand (4.3.1 sources, the same
in 4.4.0): `--list` (curReassignmentsToString), `--execute` (the current assignment to keep for
rollback, then "Successfully started ..."), `--verify` (partitionReassignmentStatesToString,
replicaMoveStatesToString, clearAllThrottles).

Every tool runs in a session of its own: a Ctrl-C at the terminal reaches kjbod only, which lets an
`--execute` finish (stopping it halfway would leave a wave half started) and stops a `--verify`.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from kjbod.errors import UserError

REASSIGN_TOOL = "kafka-reassign-partitions"
LOG_DIRS_TOOL = "kafka-log-dirs"


class Interrupted(Exception):
    """The run was asked to stop (Ctrl-C, SIGTERM, SIGHUP) while a tool ran or between polls."""


def tool_names(tool: str) -> tuple[str, str]:
    """The names a Kafka tool's script has: Apache Kafka's `bin/NAME.sh`, or `NAME` (packages)."""
    return f"{tool}.sh", tool


def find_tool(tool: str, kafka_bin: Path | None, environ: Mapping[str, str]) -> Path | None:
    """The tool's script: in `kafka_bin` when given (only there), else in $KAFKA_HOME/bin, else on
    PATH; None when it is in none of them."""
    if kafka_bin is not None:
        places = [kafka_bin]
    elif environ.get("KAFKA_HOME"):
        places = [Path(environ["KAFKA_HOME"]) / "bin"]
    else:
        found = (shutil.which(name, path=environ.get("PATH", os.defpath)) for name in tool_names(tool))
        return next((Path(path).absolute() for path in found if path), None)
    for place in places:
        for name in tool_names(tool):
            candidate = place / name
            if candidate.is_file() and os.access(candidate, os.X_OK):
                return candidate.absolute()
    return None


def locate_reassign_tool(kafka_bin: Path | None, environ: Mapping[str, str]) -> Path:
    """kafka-reassign-partitions, or an error that says where it was looked for and what to do."""
    found = find_tool(REASSIGN_TOOL, kafka_bin, environ)
    if found is not None:
        return found
    sh, bare = tool_names(REASSIGN_TOOL)
    if kafka_bin is not None:
        if not kafka_bin.is_dir():
            raise UserError(f"--kafka-bin {kafka_bin} is not a directory: give the bin/ directory of your Kafka installation")
        raise UserError(f"No executable {sh} (or {bare}) in --kafka-bin {kafka_bin}: give the bin/ directory of your Kafka installation")
    if environ.get("KAFKA_HOME"):
        raise UserError(
            f"No executable {sh} (or {bare}) in KAFKA_HOME/bin ({Path(environ['KAFKA_HOME']) / 'bin'}): "
            "fix KAFKA_HOME or give --kafka-bin DIR"
        )
    raise UserError(f"Cannot find {sh} (or {bare}): give --kafka-bin DIR (the bin/ directory of your Kafka installation), set KAFKA_HOME, or put it on PATH")


@dataclass(frozen=True)
class KafkaTools:
    """How to run Kafka's tools against one cluster: the scripts, and the connection options
    every invocation gets (passed through as the operator gave them)."""

    reassign: Path
    log_dirs: Path | None
    bootstrap_server: str
    command_config: Path | None = None

    def _connection(self) -> list[str]:
        options = ["--bootstrap-server", self.bootstrap_server]
        if self.command_config is not None:
            options += ["--command-config", str(self.command_config)]
        return options

    def reassign_command(self, *args: str) -> list[str]:
        return [str(self.reassign), *self._connection(), *args]

    def list_command(self) -> list[str]:
        return self.reassign_command("--list")

    def execute_command(self, wave: Path, *, throttle: int, log_dir_throttle: int, timeout_ms: int | None, additional: bool) -> list[str]:
        args = ["--reassignment-json-file", str(wave), "--execute"]
        if additional:
            args.append("--additional")
        if throttle >= 0:
            args += ["--throttle", str(throttle)]
        if log_dir_throttle >= 0:
            args += ["--replica-alter-log-dirs-throttle", str(log_dir_throttle)]
        if timeout_ms is not None:
            args += ["--timeout", str(timeout_ms)]
        return self.reassign_command(*args)

    def verify_command(self, wave: Path, *, preserve_throttles: bool = False) -> list[str]:
        return self.reassign_command("--reassignment-json-file", str(wave), "--verify", *(["--preserve-throttles"] if preserve_throttles else []))

    def log_dirs_command(self, brokers: Sequence[int], topics: Sequence[str]) -> list[str] | None:
        if self.log_dirs is None:
            return None
        return [str(self.log_dirs), *self._connection(), "--describe", "--broker-list", ",".join(map(str, brokers)), "--topic-list", ",".join(topics)]


# Running a tool ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class ToolRun:
    command: tuple[str, ...]
    exit_code: int
    output: str  # stdout, then stderr


class Running:
    """A tool started in a session of its own (out of reach of the terminal's Ctrl-C)."""

    def __init__(self, command: Sequence[str], *, output: IO[bytes] | None = None) -> None:
        self.command = tuple(command)
        self._to_file = output is not None
        self.process = subprocess.Popen(
            self.command,
            stdin=subprocess.DEVNULL,
            stdout=output if output is not None else subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )

    @property
    def pid(self) -> int:
        return self.process.pid

    def finish(self, stop: threading.Event, *, interruptible: bool = True) -> ToolRun:
        """Wait for the tool. When `stop` is set meanwhile: an interruptible tool is ended and
        Interrupted raised; any other is waited for (and the caller stops after it)."""
        while True:
            try:
                out, _ = self.process.communicate(timeout=0.2)
                break
            except subprocess.TimeoutExpired:
                if interruptible and stop.is_set():
                    self.process.terminate()
                    try:
                        self.process.communicate(timeout=10)
                    except subprocess.TimeoutExpired:
                        self.process.kill()
                        self.process.communicate()
                    raise Interrupted from None
        text = "" if self._to_file else out.decode("utf-8", errors="replace")
        return ToolRun(self.command, self.process.returncode, text)


def run_tool(command: Sequence[str], stop: threading.Event) -> ToolRun:
    return Running(command).finish(stop)


def command_line(command: Sequence[str]) -> str:
    import shlex

    return shlex.join(command)


def wait_for_pid(pid: int, marker: str, stop: threading.Event) -> None:
    """Wait until process `pid` has ended, if it is the tool whose command line holds `marker`
    (a pid may have been reused since it was recorded). Linux's /proc; elsewhere nothing waits."""
    while _command_line_holds(pid, marker):
        if stop.wait(0.2):
            raise Interrupted


def processes_holding(marker: str, *flags: str) -> list[int]:
    """The pids whose command line holds `marker` and every one of `flags` (Linux's /proc)."""
    found = []
    try:
        entries = list(Path("/proc").iterdir())
    except OSError:
        return []
    for entry in entries:
        if entry.name.isdigit() and int(entry.name) != os.getpid() and _command_line_holds(int(entry.name), marker, *flags):
            found.append(int(entry.name))
    return found


def _command_line_holds(pid: int, marker: str, *flags: str) -> bool:
    try:
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    if stat.rsplit(")", 1)[1].split()[0] == "Z":  # a zombie has ended
        return False
    return any(marker.encode() == arg for arg in argv) and all(flag.encode() in argv for flag in flags)


# Reading what the tools print -------------------------------------------------------------------


def kafka_message(output: str) -> str:
    """The line of a failed tool's output that says what went wrong: Kafka's "Error: ..." line
    (main() prints it before the stack trace), else its last line that is not a stack frame."""
    lines = [line.rstrip() for line in output.splitlines() if line.strip()]
    for line in lines:
        if line.startswith("Error: "):
            return line.removeprefix("Error: ")
    frames = re.compile(r"^\s+at |^\s*\.\.\. \d+ more$|^Caused by: ")
    plain = [line for line in lines if not frames.match(line) and not line.startswith(("SLF4J", "WARNING"))]
    return plain[-1] if plain else "(no output)"


def parse_list(output: str) -> dict[str, str]:
    """`--list`: the partitions being reassigned, "topic-p" -> Kafka's line for it."""
    ongoing = {}
    for line in output.splitlines():
        head, sep, _ = line.partition(": replicas: ")
        if sep:
            ongoing[head] = line
    return ongoing


ROLLBACK_HEADER = "Current partition replica assignment"


def parse_rollback(output: str) -> str | None:
    """The JSON `--execute` prints as the current assignment "to use as the
    --reassignment-json-file option during rollback" (the first such block), or None."""
    lines = output.splitlines()
    for index, line in enumerate(lines):
        if line.strip() == ROLLBACK_HEADER:
            for candidate in lines[index + 1:index + 4]:
                if candidate.startswith("{"):
                    try:
                        json.loads(candidate)
                    except ValueError:
                        return None
                    return candidate
            return None
    return None


def execute_failure(output: str) -> tuple[str | None, str]:
    """What a failed `--execute` says: (the first partition it names or None, Kafka's message).
    Per-partition errors come as "Error reassigning partition(s):" then "topic-p: message"."""
    lines = output.splitlines()
    for index, line in enumerate(lines):
        if line.startswith("Error reassigning partition"):
            for detail in lines[index + 1:]:
                partition, sep, message = detail.partition(": ")
                if sep:
                    return partition, message
    return None, kafka_message(output)


# --verify ---------------------------------------------------------------------------------------

# ReassignPartitionsCommand.partitionReassignmentStatesToString / replicaMoveStatesToString.
_PARTITION_DONE = re.compile(r"^Reassignment of partition (?P<tp>.+) is completed\.$")
_PARTITION_MOVING = re.compile(r"^Reassignment of partition (?P<tp>.+) is still in progress\.$")
_PARTITION_ELSEWHERE = re.compile(r"^There is no active reassignment of partition (?P<tp>.+), but replica set is .* rather than .*\.$")
_REPLICA_DONE = re.compile(r"^Reassignment of replica (?P<tp>.+)-(?P<broker>\d+) completed successfully\.$")
_REPLICA_MOVING = re.compile(r"^Reassignment of replica (?P<tp>.+)-(?P<broker>\d+) is still in progress\.$")
_REPLICA_NOT_MOVING = re.compile(r"^Partition (?P<tp>.+) on broker (?P<broker>\d+) is not being moved from log dir .+ to .+\.$")
_REPLICA_ELSEWHERE = re.compile(r"^Partition (?P<tp>.+) on broker (?P<broker>\d+) is being moved to log dir .+ instead of .+\.$")
_REPLICA_ABSENT = re.compile(r"^Partition (?P<tp>.+) cannot be found in any live log directory on broker (?P<broker>\d+)\.$")
_REPLICA_OFFLINE = re.compile(r"^Partition (?P<tp>.+) is not found in any live log dir on broker (?P<broker>\d+)\. .*$")
_CLEARED = ("Clearing broker-level throttles on broker", "Clearing topic-level throttles on topic")

DONE, MOVING, NOT_STARTED, ABSENT, WRONG = "done", "moving", "not-started", "absent", "wrong"


@dataclass(frozen=True)
class VerifyStatus:
    """One `--verify`: the state of every partition ("topic-p") and replica move ("topic-p",
    broker) of the file, each with Kafka's line, and whether it cleared the throttles."""

    partitions: Mapping[str, tuple[str, str]]
    replicas: Mapping[tuple[str, int], tuple[str, str]]
    cleared: bool

    def partition_done(self, tp: str) -> bool:
        return self.partitions.get(tp, (None, ""))[0] == DONE and all(
            state == DONE for (name, _), (state, _) in self.replicas.items() if name == tp
        )

    @property
    def complete(self) -> bool:
        """Every partition and replica move of the file is where the file says."""
        return all(state == DONE for state, _ in self.partitions.values()) and all(state == DONE for state, _ in self.replicas.values())

    def not_started(self) -> list[str]:
        """Kafka's lines for what is neither done nor under way: never started (or cancelled)."""
        lines = [line for state, line in self.partitions.values() if state == NOT_STARTED]
        return lines + [line for state, line in self.replicas.values() if state == NOT_STARTED]

    def problems(self) -> list[tuple[str, str]]:
        """(partition, Kafka's line) for what will not complete by waiting: a replica set that
        differs with no reassignment under way, a move stopped or going to another directory, a
        replica on an offline directory or missing once its partition's reassignment is done."""
        found = [(tp, line) for tp, (state, line) in self.partitions.items() if state == NOT_STARTED]
        for (tp, _), (state, line) in self.replicas.items():
            partition_state = self.partitions.get(tp, (DONE, ""))[0]
            if state in (NOT_STARTED, WRONG) or (state == ABSENT and partition_state == DONE):
                found.append((tp, line))
        return found


def parse_verify(output: str) -> VerifyStatus:
    partitions: dict[str, tuple[str, str]] = {}
    replicas: dict[tuple[str, int], tuple[str, str]] = {}
    cleared = [False, False]
    partition_forms = ((_PARTITION_DONE, DONE), (_PARTITION_MOVING, MOVING), (_PARTITION_ELSEWHERE, NOT_STARTED))
    replica_forms = (
        (_REPLICA_DONE, DONE), (_REPLICA_MOVING, MOVING), (_REPLICA_NOT_MOVING, NOT_STARTED),
        (_REPLICA_ELSEWHERE, WRONG), (_REPLICA_ABSENT, ABSENT), (_REPLICA_OFFLINE, WRONG),
    )
    for line in output.splitlines():
        for index, prefix in enumerate(_CLEARED):
            if line.startswith(prefix):
                cleared[index] = True
        for pattern, state in partition_forms:
            match = pattern.match(line)
            if match:
                partitions[match["tp"]] = (state, line)
                break
        else:
            for pattern, state in replica_forms:
                match = pattern.match(line)
                if match:
                    replicas[(match["tp"], int(match["broker"]))] = (state, line)
                    break
    return VerifyStatus(partitions, replicas, all(cleared))


# kafka-log-dirs --describe ----------------------------------------------------------------------


@dataclass(frozen=True)
class ReplicaSize:
    broker: int
    log_dir: str
    size: int
    future: bool


def parse_log_dirs(output: str) -> dict[str, list[ReplicaSize]]:
    """`kafka-log-dirs --describe`: "topic-p" -> every replica of it the brokers reported (the
    JSON document is the output's last line; directories with an error report nothing)."""
    document = next((line for line in reversed(output.splitlines()) if line.startswith("{")), None)
    if document is None:
        raise ValueError("no JSON document in kafka-log-dirs' output")
    found: dict[str, list[ReplicaSize]] = {}
    for broker in json.loads(document)["brokers"]:
        for log_dir in broker["logDirs"]:
            for item in log_dir.get("partitions", []):
                found.setdefault(item["partition"], []).append(ReplicaSize(broker["broker"], log_dir["logDir"], item["size"], item["isFuture"]))
    return found
