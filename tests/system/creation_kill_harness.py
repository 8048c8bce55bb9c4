"""Kill `format` (on a controller) and `import cluster` at random moments while they create a
state, then check that the interrupted creation blocks nothing.

Each trial creates a state in a fresh place: a path that does not exist yet, or an existing empty
directory (half the trials each). A forked child runs the command in-process (kjbod is already
imported, so the child spends its time creating the state) on a slow disk (writes in 16 KiB
pieces with a pause between them, so that kills land inside writes often), and is killed with
SIGKILL after a random delay up to the command's measured duration. Then:

- what the kill left is classified: *nothing* (the target as it was before), a *complete* state,
  or *leftovers* (a partial target, or a build directory beside or inside it);
- the operator's retry runs (the same command; format with --ignore-formatted): it must
  succeed, or for an import whose state was complete, refuse because the state exists. A retry
  that fails otherwise counts as *blocked*;
- after the retry the target must be a complete state and nothing may be left beside it or in
  it (else it counts in *left after the retry*).

Shared by tests/system/test_creation_kills.py (CI) and bench/bench_creation_kills.py.
"""

from __future__ import annotations

import os
import random
import shutil
import signal
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from kjbod.cli.app import app
from kjbod.state import read_image
from kjbod.state.marker import BUILD_PREFIX, MARKER

from tests.synthetic import load_synthetic
from .crash_harness import slow_disk

CLUSTER_ID = "XcZZOzUqS4yHOjhMQB6JLQ"


@dataclass
class KillReport:
    kills: int = 0
    finished_before_the_kill: int = 0
    # What a kill left, before the retry.
    left_nothing: int = 0
    left_complete: int = 0
    left_leftovers: int = 0
    blocked: int = 0
    left_after_retry: int = 0
    per_command: dict[str, int] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)

    def summary(self) -> str:
        commands = ", ".join(f"{name} {count}" for name, count in sorted(self.per_command.items()))
        return (
            f"kills={self.kills} ({commands}) finished_before_kill={self.finished_before_the_kill} "
            f"left: nothing={self.left_nothing} complete={self.left_complete} leftovers={self.left_leftovers}; "
            f"blocked={self.blocked} left_after_retry={self.left_after_retry}"
        )


class Scenario:
    """The inputs, and how to run and judge each command."""

    def __init__(self, root: Path, partitions: int, seed: int) -> None:
        self.root = root
        synthetic = load_synthetic()
        cluster = synthetic.generate(synthetic.SyntheticSpec(brokers=12, partitions=partitions, seed=seed))
        inputs = root / "inputs"
        inputs.mkdir(parents=True)
        synthetic.write_files(cluster, inputs)
        self.import_args = ["--brokers", str(inputs / "brokers.json"), "--assignment", str(inputs / "assignment.json"),
                            "--log-dirs", str(inputs / "log-dirs.txt")]
        self.partitions = partitions

    def args(self, command: str, trial: Path, *, retry: bool) -> list[str]:
        state = str(trial / "place" / "state")
        if command == "import":
            return ["--state", state, "import", "cluster", *self.import_args]
        config = trial / "server.properties"
        if not config.exists():
            config.write_text(
                "process.roles=controller\nnode.id=1\ncontroller.quorum.voters=1@localhost:9093\n"
                f"controller.listener.names=CONTROLLER\nlog.dirs={trial / 'meta'}\n"
            )
        return ["--state", state, "format", "-c", str(config), "-t", CLUSTER_ID, *(["--ignore-formatted"] if retry else [])]

    def complete(self, command: str, state: Path) -> bool:
        if not (state / MARKER).exists():
            return False
        image = read_image(state)
        if command == "import":
            return image.topics.partition_count == self.partitions
        return not image.is_empty


def run_cli(args: list[str], cwd: Path) -> tuple[int, str]:
    """`kjbod ARGS` in a child process (so that in-process state cannot leak); exit code and stderr."""
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read_fd)
        _redirect(2, write_fd)
        code = 1
        try:
            code = _invoke(args, cwd)
        finally:
            os._exit(code)
    os.close(write_fd)
    with os.fdopen(read_fd) as stream:
        stderr = stream.read()
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status), stderr


def _redirect(fd: int, target: int) -> None:
    """Point file descriptor `fd` (1 or 2) at `target`, and sys.stdout/sys.stderr with it: under
    pytest they are its capture files, not the descriptors, and what kjbod prints would miss the
    pipe (an import's "already holds a cluster state" then read as a blocked retry)."""
    os.dup2(target, fd)
    stream = open(fd, "w", buffering=1, closefd=False)  # noqa: SIM115 (lives as long as the child)
    if fd == 1:
        sys.stdout = stream
    else:
        sys.stderr = stream


def _invoke(args: list[str], cwd: Path) -> int:
    """`kjbod ARGS` in this (forked) process, stdout discarded; its exit code."""
    os.chdir(cwd)
    _redirect(1, os.open(os.devnull, os.O_WRONLY))
    try:
        app(args=args, prog_name="kjbod")
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else 1
    return 0


def _spawn(args: list[str], cwd: Path) -> int:
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            slow_disk()
            _redirect(2, os.open(os.devnull, os.O_WRONLY))
            code = _invoke(args, cwd)
        finally:
            os._exit(code)
    return pid


def _measure(scenario: Scenario, command: str, trial: Path) -> float:
    trial.mkdir(parents=True)
    started = time.monotonic()
    pid = _spawn(scenario.args(command, trial, retry=False), trial)
    _, status = os.waitpid(pid, 0)
    elapsed = time.monotonic() - started
    assert os.waitstatus_to_exitcode(status) == 0, f"{command} failed when not killed"
    return elapsed


def _beside_and_inside(place: Path, state: Path) -> list[str]:
    """Build directories and anything else next to or in the target that is not the state."""
    found = [p.name for p in place.iterdir() if p.name != "state"] if place.exists() else []
    if state.is_dir():
        found += [f"state/{p.name}" for p in state.iterdir() if p.name.startswith(BUILD_PREFIX)]
    return found


def run(root: Path, kills: int, *, seed: int = 1, partitions: int = 2000) -> KillReport:
    rng = random.Random(seed)
    scenario = Scenario(root, partitions, seed)
    duration = {command: _measure(scenario, command, root / f"measure-{command}") for command in ("import", "format")}
    report = KillReport()
    trial_number = 0
    while report.kills < kills:
        trial_number += 1
        command = ("import", "format")[trial_number % 2]
        trial = root / f"trial-{trial_number}"
        place = trial / "place"
        state = place / "state"
        place.mkdir(parents=True)
        existing = rng.random() < 0.5
        if existing:
            state.mkdir()
        pid = _spawn(scenario.args(command, trial, retry=False), trial)
        time.sleep(rng.uniform(0, duration[command] * 1.1))
        os.kill(pid, signal.SIGKILL)
        _, status = os.waitpid(pid, 0)
        if not os.WIFSIGNALED(status):
            report.finished_before_the_kill += 1
            _remove(trial)
            continue
        report.kills += 1
        report.per_command[command] = report.per_command.get(command, 0) + 1
        left = _beside_and_inside(place, state)
        was_complete = scenario.complete(command, state) if state.exists() else False
        state_files = [p.name for p in state.iterdir() if p.name != ".lock"] if state.is_dir() else []
        if was_complete:
            report.left_complete += 1
        elif not left and not state_files and state.exists() == existing:
            report.left_nothing += 1
        else:
            report.left_leftovers += 1
        code, stderr = run_cli(scenario.args(command, trial, retry=True), trial)
        refused_as_done = command == "import" and was_complete and "already holds a cluster state" in stderr
        if code != 0 and not refused_as_done:
            report.blocked += 1
            report.problems.append(f"trial {trial_number} ({command}, existing={existing}): retry exit {code}: {stderr.strip()}")
        elif not scenario.complete(command, state) or _beside_and_inside(place, state):
            report.left_after_retry += 1
            report.problems.append(f"trial {trial_number} ({command}): after the retry: {_beside_and_inside(place, state)}")
        _remove(trial)
    return report


def _remove(trial: Path) -> None:
    shutil.rmtree(trial, ignore_errors=True)
