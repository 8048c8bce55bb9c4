"""`kjbod reassign run`: a plan's waves carried out on a live cluster by Kafka's own
kafka-reassign-partitions, one after another, as an operator would by hand.

For each wave (`plan.wave-001.json`, ... as `reassign plan` writes them; a plan without waves is
one wave):
1. `--list`: nothing else may be reassigning, else the run stops and says what is;
2. `--execute` with the throttles given; Kafka's output goes to `plan.wave-001.execute.log` (by
   the tool itself, so it survives kjbod) and the current assignment it prints, to keep for
   rollback, to `plan.wave-001.rollback.json`;
3. `--verify` every `poll_interval` seconds, with a status line (wave n of N, partitions done,
   bytes copied from `kafka-log-dirs --describe` when that tool is beside the other, time left),
   until every partition and replica of the wave is where it says, and Kafka has cleared the
   throttles (which its --verify does once nothing is reassigning);
4. the wave is recorded as completed in the journal (journal.py).

An interrupted run resumes in the wave it was in: a wave the journal records as executing is
first waited for (an --execute of the earlier run may still be running: it is never stopped
halfway), then checked with `--verify --preserve-throttles`; only what Kafka never started is
executed again (`--additional` when the rest is under way), so a completed wave never runs twice.
The run stops at the first failure: the wave, the partition and Kafka's own message, the journal
as it was.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kjbod.common.callbacks import Progress, ignore
from kjbod.common.durable import atomic_write
from kjbod.common.java import parse_long_option
from kjbod.common.units import human_bytes, parse_rate
from kjbod.errors import UserError
from kjbod.tools.reassign.journal import COMPLETED, EXECUTED, EXECUTING, PENDING, Journal, now, plan_lock, seconds_between
from kjbod.tools.reassign.json_format import ANY_LOG_DIR, ReassignmentPlan, parse_reassignment_json, validate_execute_plan
from kjbod.tools.reassign.kafka_tool import (
    LOG_DIRS_TOOL,
    Interrupted,
    KafkaTools,
    ReplicaSize,
    Running,
    ToolRun,
    VerifyStatus,
    command_line,
    execute_failure,
    find_tool,
    kafka_message,
    locate_reassign_tool,
    parse_list,
    parse_log_dirs,
    parse_rollback,
    parse_verify,
    processes_holding,
    run_tool,
    wait_for_pid,
)
from kjbod.tools.reassign.plan import existing_waves

# A read-only tool (--list, --verify, kafka-log-dirs) that fails is run again this many times in a
# row before the run stops: a broker restarting must not end a run of hundreds of waves.
READ_ATTEMPTS = 3
# A --verify line that says a wave will not complete by waiting is believed after this many
# polls in a row: just after a reassignment completes, the broker that answers describeTopics may
# still show the old replica set while the controller lists none.
PROBLEM_POLLS = 3


class RunFailed(UserError):
    """A wave failed: the message names the wave, the partition and Kafka's own message."""


class RunInterrupted(UserError):
    """The run was stopped (Ctrl-C, SIGTERM, SIGHUP) before the plan completed."""


# The request -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ReassignRunRequest:
    """What `reassign run` is asked: the plan, the cluster and Kafka's tools, the throttles."""

    plan: Path
    bootstrap_server: str
    command_config: Path | None = None
    kafka_bin: Path | None = None
    throttle: int = -1
    log_dir_throttle: int = -1
    timeout_ms: int | None = None
    poll_interval: float = 10.0
    dry_run: bool = False

    @classmethod
    def parse(
        cls,
        *,
        plan: Path,
        bootstrap_server: str,
        command_config: Path | None = None,
        kafka_bin: Path | None = None,
        throttle: str = "-1",
        replica_alter_log_dirs_throttle: str = "-1",
        timeout: str | None = None,
        poll_interval: float = 10.0,
        dry_run: bool = False,
    ) -> ReassignRunRequest:
        if not bootstrap_server.strip():
            raise UserError("--bootstrap-server is empty: give the cluster's brokers, e.g. --bootstrap-server broker1:9092")
        if command_config is not None and not command_config.is_file():
            raise UserError(f"--command-config {command_config} is not a file: give the admin client's properties file")
        if not poll_interval > 0:
            raise UserError(f"Invalid --poll-interval {poll_interval}: give a number of seconds above 0, e.g. 10")
        timeout_ms = parse_long_option(timeout, "timeout") if timeout is not None else None
        return cls(
            plan=plan,
            bootstrap_server=bootstrap_server.strip(),
            command_config=command_config.absolute() if command_config is not None else None,
            kafka_bin=kafka_bin,
            throttle=parse_rate(throttle, "throttle"),
            log_dir_throttle=parse_rate(replica_alter_log_dirs_throttle, "replica-alter-log-dirs-throttle"),
            timeout_ms=timeout_ms,
            poll_interval=poll_interval,
            dry_run=dry_run,
        )


# The waves ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Wave:
    number: int
    count: int
    path: Path
    plan: ReassignmentPlan

    @property
    def stem(self) -> str:
        return self.path.name.removesuffix(".json")

    @property
    def rollback_path(self) -> Path:
        """Kafka's current assignment before the wave: `plan.wave-007.rollback.json`."""
        return self.path.with_name(f"{self.stem}.rollback.json")

    @property
    def log_path(self) -> Path:
        """What Kafka's --execute printed for the wave: `plan.wave-007.execute.log`."""
        return self.path.with_name(f"{self.stem}.execute.log")

    @property
    def partitions(self) -> list[str]:
        return [f"{entry.topic}-{entry.partition}" for entry in self.plan.entries]

    @property
    def topics(self) -> list[str]:
        return sorted({entry.topic for entry in self.plan.entries})

    def title(self) -> str:
        return f"Wave {self.number} of {self.count}"


def load_waves(plan_path: Path) -> list[Wave]:
    """The plan's waves in order (the plan itself when it has none), each read as Kafka's
    --execute reads it, and checked to be the plan's: together, exactly the plan's partitions."""
    if not plan_path.is_file():
        raise UserError(f"{plan_path} is not a file: give the plan `kjbod reassign plan` wrote (--output-file)")
    plan = _read_plan(plan_path)
    # By number: wave-1000 comes after wave-999 (a plan of thousands of waves names them so).
    files = sorted(existing_waves(plan_path), key=lambda path: int(path.name.rsplit(".wave-", 1)[1].removesuffix(".json"))) or [plan_path]
    waves = [Wave(number, len(files), path.absolute(), _read_plan(path)) for number, path in enumerate(files, start=1)]
    if len(files) > 1 or files[0] != plan_path:
        in_waves = {entry for wave in waves for entry in wave.plan.entries}
        if in_waves != set(plan.entries):
            stray = next((wave.path.name for wave in waves if not set(wave.plan.entries) <= set(plan.entries)), None)
            reason = f"{stray} holds partitions that are not in it" if stray else "its waves leave out some of its partitions"
            raise UserError(
                f"The wave files beside {plan_path} are not its waves ({reason}): plan again with --overwrite, "
                "or remove the stale wave files"
            )
    return waves


def _read_plan(path: Path) -> ReassignmentPlan:
    try:
        plan = parse_reassignment_json(path.read_text(encoding="utf-8", errors="replace"))
        validate_execute_plan(plan)
    except UserError as exc:
        raise UserError(f"{path}: {exc.message}") from None
    except OSError as exc:
        raise UserError(f"Cannot read {path}: {exc.strerror or exc}") from None
    return plan


# The result --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class WaveOutcome:
    number: int
    file: str
    partitions: int
    state: str  # completed (by this run), completed-earlier, pending
    executions: int = 0
    seconds: float | None = None
    throttled_seconds: float | None = None
    bytes_moved: int | None = None
    rollback_file: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "wave": self.number, "file": self.file, "partitions": self.partitions, "state": self.state, "executions": self.executions,
            "seconds": self.seconds, "throttledSeconds": self.throttled_seconds, "bytesMoved": self.bytes_moved,
            "rollbackFile": self.rollback_file,
        }


@dataclass(frozen=True)
class ReassignRunResult:
    plan: str
    journal: str
    tool: str
    waves: tuple[WaveOutcome, ...]
    seconds: float
    dry_run_commands: tuple[tuple[int, tuple[str, ...]], ...] | None = None

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"plan": self.plan, "journal": self.journal, "tool": self.tool, "dryRun": self.dry_run_commands is not None}
        if self.dry_run_commands is not None:
            data["commands"] = [{"wave": wave, "command": command} for wave, command in self.dry_run_commands if command]
        data["waves"] = [wave.to_json() for wave in self.waves]
        ran = [wave for wave in self.waves if wave.state == "completed"]
        data["wavesRun"] = len(ran)
        data["partitionsMoved"] = sum(wave.partitions for wave in ran)
        data["bytesMoved"] = sum(wave.bytes_moved or 0 for wave in ran)
        data["seconds"] = round(self.seconds, 3)
        return data

    def lines(self) -> list[str]:
        if self.dry_run_commands is not None:
            lines = [f"# {command[0]}" if len(command) == 1 else command_line(command) for _, command in self.dry_run_commands]
            return lines
        count = len(self.waves)
        ran = [wave for wave in self.waves if wave.state == "completed"]
        earlier = [wave for wave in self.waves if wave.state == "completed-earlier"]
        if not ran:
            return [f"All {count} wave(s) of {self.plan} had completed ({self.journal}); nothing to run."]
        moved = sum(wave.bytes_moved or 0 for wave in ran)
        lines = [
            f"Ran {len(ran)} wave(s) of {self.plan} with {self.tool}: {sum(w.partitions for w in ran)} partition(s), "
            f"{human_bytes(moved)} moved in {_duration(self.seconds)}."
            + (f" {len(earlier)} wave(s) had completed before this run." if earlier else ""),
            "",
            f"{'Wave':>5}  {'Partitions':>10}  {'Moved':>10}  {'Time':>8}  {'Throttled':>9}  Rollback",
        ]
        for wave in ran:
            moved_text = human_bytes(wave.bytes_moved) if wave.bytes_moved is not None else "unknown"
            throttled = _duration(wave.throttled_seconds) if wave.throttled_seconds is not None else "-"
            seconds = _duration(wave.seconds) if wave.seconds is not None else "-"
            lines.append(f"{wave.number:>5}  {wave.partitions:>10}  {moved_text:>10}  {seconds:>8}  {throttled:>9}  {wave.rollback_file or '-'}")
        lines.append(f"Every wave is complete and Kafka has cleared the throttles; the journal is {self.journal}.")
        return lines


def _duration(seconds: float) -> str:
    seconds = max(0.0, seconds)
    if seconds < 60:
        return f"{seconds:.1f}s"
    minutes, rest = divmod(int(round(seconds)), 60)
    if minutes < 60:
        return f"{minutes}m{rest:02d}s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m"


# Running the waves -------------------------------------------------------------------------------


def run_waves(
    request: ReassignRunRequest,
    *,
    environ: Mapping[str, str] | None = None,
    stop: threading.Event | None = None,
    status: Progress = ignore,
    notify: Progress = ignore,
) -> ReassignRunResult:
    """Carry out the plan's waves that the journal does not record as completed (see the module's
    docstring). `stop`: set it (from a signal handler) to end the run at the next safe point;
    RunInterrupted is raised then. `status`: the live status line; `notify`: a line for the
    operator at each step (stderr)."""
    started = time.monotonic()
    environ = os.environ if environ is None else environ
    stop = stop or threading.Event()
    waves = load_waves(request.plan)
    reassign = locate_reassign_tool(request.kafka_bin, environ)
    tools = KafkaTools(reassign, find_tool(LOG_DIRS_TOOL, reassign.parent, {}), request.bootstrap_server, request.command_config)
    plan_name = str(request.plan)
    if request.dry_run:
        journal = Journal.open(request.plan, [wave.path for wave in waves])
        return _dry_run(request, tools, waves, journal, started)
    outcomes: list[WaveOutcome] = []
    with plan_lock(request.plan):
        journal = Journal.open(request.plan, [wave.path for wave in waves])
        if tools.log_dirs is None:
            notify(f"No {LOG_DIRS_TOOL} beside {reassign}: the status line shows partitions, not bytes.")
        for index, wave in enumerate(waves):
            record = journal.waves[index]
            if record.state == COMPLETED:
                outcomes.append(_outcome(wave, journal, index, "completed-earlier"))
                continue
            try:
                _WaveRun(request, tools, journal, index, wave, stop, status, notify).run()
            except Interrupted:
                state = journal.waves[index].state
                doing = "Kafka carries on with what it started; " if state in (EXECUTING, EXECUTED) else ""
                raise RunInterrupted(
                    f"Interrupted in {wave.title()} ({wave.path.name}): {doing}run the same command again to resume "
                    f"(the journal {journal.path.name} keeps the run's place)"
                ) from None
            throttled = request.throttle >= 0 or request.log_dir_throttle >= 0
            outcomes.append(_outcome(wave, journal, index, "completed", throttled=throttled))
    return ReassignRunResult(plan_name, str(journal.path), str(reassign), tuple(outcomes), time.monotonic() - started)


def _outcome(wave: Wave, journal: Journal, index: int, state: str, *, throttled: bool = True) -> WaveOutcome:
    """The wave's figures. Kafka sets the throttles in the wave's first --execute and its --verify
    clears them as the wave completes: the wave's time is its time under throttle."""
    record = journal.waves[index]
    seconds = seconds_between(record.started, record.completed)
    return WaveOutcome(
        wave.number, str(wave.path.name), len(wave.plan.entries), state, record.executions, seconds,
        (seconds if throttled else 0.0) if seconds is not None else None, record.bytes_moved,
        str(wave.rollback_path.name) if wave.rollback_path.exists() else None,
    )


def _dry_run(request: ReassignRunRequest, tools: KafkaTools, waves: list[Wave], journal: Journal, started: float) -> ReassignRunResult:
    commands: list[tuple[int, tuple[str, ...]]] = []
    for index, wave in enumerate(waves):
        record = journal.waves[index]
        if record.state == COMPLETED:
            commands.append((wave.number, (f"{wave.title()} ({wave.path.name}) has completed (journal {journal.path.name})",)))
            continue
        resumed = f", resumed: {record.state}" if record.state != PENDING else ""
        commands.append((wave.number, (f"{wave.title()}: {wave.path.name}, {len(wave.plan.entries)} partition(s){resumed}",)))
        commands.append((wave.number, tuple(tools.list_command())))
        execute = tools.execute_command(wave.path, throttle=request.throttle, log_dir_throttle=request.log_dir_throttle,
                                        timeout_ms=request.timeout_ms, additional=False)
        commands.append((wave.number, tuple(execute)))
        commands.append((wave.number, (f"its output to {wave.log_path.name}; the current assignment it prints to {wave.rollback_path.name}",)))
        commands.append((wave.number, tuple(tools.verify_command(wave.path))))
        commands.append((wave.number, (f"every {request.poll_interval:g}s until every partition and replica is complete and the throttles are cleared",)))
    outcomes = tuple(
        _outcome(wave, journal, index, "completed-earlier" if journal.waves[index].state == COMPLETED else "pending") for index, wave in enumerate(waves)
    )
    return ReassignRunResult(str(request.plan), str(journal.path), str(tools.reassign), outcomes, time.monotonic() - started, tuple(commands))


def _attempts(log: str) -> list[str]:
    """The outputs of the --execute attempts in a wave's log, oldest first."""
    attempts: list[list[str]] = [[]]
    for line in log.splitlines():
        if line.startswith("$ ") and attempts[-1]:
            attempts.append([])
        attempts[-1].append(line)
    return ["\n".join(lines) for lines in attempts]


@dataclass
class _Move:
    """A replica the wave moves: to another broker, or to another directory of its broker."""

    partition: str
    broker: int
    target_dir: str
    between_dirs: bool


@dataclass
class _WaveRun:
    request: ReassignRunRequest
    tools: KafkaTools
    journal: Journal
    index: int
    wave: Wave
    stop: threading.Event
    status: Progress
    notify: Progress
    moves: list[_Move] = field(default_factory=list)
    sizes: dict[str, int] = field(default_factory=dict)
    problem_polls: int = 0
    first_copied: tuple[float, int] | None = None
    last_status: float = 0.0

    @property
    def record(self):  # noqa: ANN201 - the journal's WaveRecord
        return self.journal.waves[self.index]

    def run(self) -> None:
        wave = self.wave
        self._stop_point()
        ongoing = self._list()
        mine = set(wave.partitions)
        foreign = {tp: line for tp, line in ongoing.items() if tp not in mine}
        if self.record.state == PENDING and ongoing or foreign:
            lines = list((foreign or ongoing).values())
            shown = "; ".join(lines[:5]) + (f"; ... ({len(lines) - 5} more)" if len(lines) > 5 else "")
            whose = "that are not the wave's" if foreign else "of the wave, which this run did not start"
            raise RunFailed(
                f"{wave.title()} ({wave.path.name}) not started: Kafka is already reassigning {len(lines)} partition(s) "
                f"{whose} ({shown}). Let them complete (or cancel them), then run again"
            )
        if self.record.state == PENDING:
            self.notify(f"{wave.title()}: {wave.path.name}, {len(wave.plan.entries)} partition(s).")
            self._execute(additional=False)
        elif self.record.state == EXECUTING:
            self.notify(f"{wave.title()}: resuming {wave.path.name} (its --execute had not been seen to finish).")
            self._resume_executing(bool(ongoing))
        else:
            self.notify(f"{wave.title()}: resuming {wave.path.name} (executed; waiting for it to complete).")
        self._plan_moves()
        self._poll_until_complete()

    def _stop_point(self) -> None:
        if self.stop.is_set():
            raise Interrupted

    # The tools ------------------------------------------------------------------------------

    def _read_tool(self, command: list[str], what: str) -> ToolRun:
        """A read-only tool, run again after a failure (READ_ATTEMPTS in a row)."""
        for attempt in range(1, READ_ATTEMPTS + 1):
            result = run_tool(command, self.stop)
            if result.exit_code == 0:
                return result
            if attempt < READ_ATTEMPTS:
                self.notify(f"{self.wave.title()}: {what} failed ({kafka_message(result.output)}); trying again.")
                if self.stop.wait(min(self.request.poll_interval, 5.0)):
                    raise Interrupted
        self._fail(None, f"{what} failed {READ_ATTEMPTS} times in a row: {kafka_message(result.output)}")

    def _list(self) -> dict[str, str]:
        return parse_list(self._read_tool(self.tools.list_command(), "kafka-reassign-partitions --list").output)

    def _fail(self, partition: str | None, message: str):  # noqa: ANN202 - never returns
        where = f" {partition}:" if partition else ""
        text = f"{self.wave.title()} ({self.wave.path.name}) failed:{where} {message}"
        self.journal.update(self.index, error=text)
        end = " " if text.endswith(".") else ". "  # Kafka's line may end the message with its own period
        raise RunFailed(f"{text}{end}The journal {self.journal.path.name} keeps the run's place: fix the cause and run again to resume")

    # --execute ------------------------------------------------------------------------------

    def _execute(self, *, additional: bool) -> None:
        wave = self.wave
        command = self.tools.execute_command(
            wave.path, throttle=self.request.throttle, log_dir_throttle=self.request.log_dir_throttle,
            timeout_ms=self.request.timeout_ms, additional=additional,
        )
        record = self.record
        self.journal.update(self.index, state=EXECUTING, executions=record.executions + 1, started=record.started or now(), execute_pid=None, error=None)
        with open(wave.log_path, "ab") as log:
            log.write(f"$ {command_line(command)}\n".encode())
            log.flush()
            running = Running(command, output=log)
        self.journal.update(self.index, execute_pid=running.pid)
        # Never stopped halfway: a Ctrl-C meanwhile takes effect once it has finished.
        result = running.finish(self.stop, interruptible=False)
        self._after_execute(result.exit_code)

    def _after_execute(self, exit_code: int | None) -> None:
        """The execute's output read back from its log: the rollback kept, a failure reported."""
        wave = self.wave
        output = self._log_text()
        self._keep_rollback(output)
        if exit_code not in (0, None):
            partition, message = execute_failure(_attempts(output)[-1])
            self.journal.update(self.index, execute_pid=None)
            self._fail(partition, f"kafka-reassign-partitions --execute: {message}")
        self.journal.update(self.index, state=EXECUTED, execute_pid=None, executed=now())
        self.notify(f"{wave.title()}: Kafka started it; rollback in {wave.rollback_path.name}.")
        self._stop_point()

    def _log_text(self) -> str:
        """The execute log: each attempt starts with a `$ command` line kjbod writes."""
        try:
            return self.wave.log_path.read_text(encoding="utf-8", errors="replace")
        except FileNotFoundError:
            return ""

    def _keep_rollback(self, output: str) -> None:
        """The first current assignment Kafka printed for the wave is the one to roll back to
        (a later --execute of the same wave prints one the wave had already changed)."""
        path = self.wave.rollback_path
        if path.exists():
            return
        rollback = parse_rollback(output)
        if rollback is not None:
            try:
                atomic_write(path, rollback.encode() + b"\n", temp_suffix=".kjbod-tmp")
            except OSError as exc:
                raise UserError(f"Cannot write the rollback file {path}: {exc.strerror or exc}") from None

    def _resume_executing(self, anything_ongoing: bool) -> None:
        """An --execute of an earlier run may have been cut short, or be running still: wait for
        it, then start again only what Kafka never started."""
        wave = self.wave
        marker = str(wave.path)
        pids = [self.record.execute_pid] if self.record.execute_pid else processes_holding(marker, "--execute")
        for pid in pids:
            if pid is not None:
                self.notify(f"{wave.title()}: waiting for the --execute of an earlier run (pid {pid}) to finish.")
                wait_for_pid(pid, marker, self.stop)
        log = self._log_text()
        if not pids and self.record.executions > 0 and _attempts(log)[-1].count("\n") == 0:
            # Killed between recording the --execute and starting it: no pid, no process, not a
            # line of output (Kafka's tool always prints one). That attempt never ran.
            self.journal.update(self.index, executions=self.record.executions - 1)
        self._keep_rollback(log)
        verify = self._verify(preserve_throttles=True)
        if verify.not_started():
            anything_ongoing = anything_ongoing or bool(self._list())
            self.notify(f"{wave.title()}: Kafka has not started all of it ({verify.not_started()[0]}); executing it again.")
            self._execute(additional=anything_ongoing)
        else:
            self.journal.update(self.index, state=EXECUTED, execute_pid=None, executed=self.record.executed or now())

    # --verify and the status line -----------------------------------------------------------

    def _verify(self, *, preserve_throttles: bool = False) -> VerifyStatus:
        command = self.tools.verify_command(self.wave.path, preserve_throttles=preserve_throttles)
        return parse_verify(self._read_tool(command, "kafka-reassign-partitions --verify").output)

    def _poll_until_complete(self) -> None:
        wave = self.wave
        while True:
            log_dirs = self._start_log_dirs()
            verify = self._verify()
            sizes = self._finish_log_dirs(log_dirs)
            copied = self._copied(sizes) if sizes is not None else None
            if verify.complete and verify.cleared:
                total = sum(self.sizes.get(move.partition, 0) for move in self.moves) if self.sizes else None
                self.journal.update(self.index, state=COMPLETED, completed=now(), bytes_moved=total, error=None)
                self.notify(
                    f"{wave.title()} complete: {len(wave.plan.entries)} partition(s)"
                    + (f", {human_bytes(total)}" if total is not None else "")
                    + f" in {_duration(seconds_between(self.record.started, self.record.completed) or 0)}; Kafka cleared the throttles."
                )
                return
            problems = verify.problems()
            self.problem_polls = self.problem_polls + 1 if problems else 0
            if self.problem_polls >= PROBLEM_POLLS:
                partition, line = problems[0]
                self._fail(partition, f"kafka-reassign-partitions --verify: {line}")
            self._show(verify, copied)
            if self.stop.wait(self.request.poll_interval):
                raise Interrupted

    def _plan_moves(self) -> None:
        """The replicas the wave moves, from the assignment before it (the rollback file) and the
        wave's targets; without a rollback file, the partitions' status alone is shown."""
        try:
            before = parse_reassignment_json(self.wave.rollback_path.read_text(encoding="utf-8"))
        except (OSError, UserError):
            return
        current = {(entry.topic, entry.partition): entry for entry in before.entries}
        for entry in self.wave.plan.entries:
            name = f"{entry.topic}-{entry.partition}"
            old = current.get((entry.topic, entry.partition))
            old_dirs = dict(zip(old.replicas, old.log_dirs)) if old else {}
            for broker, target in zip(entry.replicas, entry.log_dirs):
                if broker not in old_dirs:
                    self.moves.append(_Move(name, broker, target, False))
                elif target != ANY_LOG_DIR and target != old_dirs[broker]:
                    self.moves.append(_Move(name, broker, target, True))

    def _start_log_dirs(self) -> Running | None:
        if not self.moves:
            return None
        brokers = sorted({move.broker for move in self.moves} | {b for e in self.wave.plan.entries for b in e.replicas})
        command = self.tools.log_dirs_command(brokers, self.wave.topics)
        return Running(command) if command is not None else None

    def _finish_log_dirs(self, running: Running | None) -> dict[str, list[ReplicaSize]] | None:
        if running is None:
            return None
        result = running.finish(self.stop)
        if result.exit_code != 0:
            return None  # the bytes are a courtesy: the status line shows partitions without them
        try:
            return parse_log_dirs(result.output)
        except (ValueError, KeyError, TypeError):
            return None

    def _copied(self, replicas: dict[str, list[ReplicaSize]]) -> int:
        """Bytes of the moved replicas at their destinations; each partition's size is the
        largest of its replicas' that are not future ones (a source has it all)."""
        for name, found in replicas.items():
            size = max((replica.size for replica in found if not replica.future), default=0)
            self.sizes[name] = max(size, self.sizes.get(name, 0))
        copied = 0
        for move in self.moves:
            total = self.sizes.get(move.partition, 0)
            here = [r for r in replicas.get(move.partition, []) if r.broker == move.broker]
            if move.between_dirs:
                future = [r.size for r in here if r.future]
                done = any(not r.future and r.log_dir == move.target_dir for r in here) and not future
                copied += total if done else min(total, max(future, default=0))
            else:
                copied += min(total, max((r.size for r in here), default=0))
        return copied

    def _show(self, verify: VerifyStatus, copied: int | None) -> None:
        wave = self.wave
        done = sum(1 for name in wave.partitions if verify.partition_done(name))
        parts = [f"{wave.title()}: {done} of {len(wave.partitions)} partitions done"]
        if copied is not None and self.moves:
            total = sum(self.sizes.get(move.partition, 0) for move in self.moves)
            parts.append(f"{human_bytes(copied)} of {human_bytes(total)} copied")
            clock = time.monotonic()
            if self.first_copied is None:
                self.first_copied = (clock, copied)
            elapsed, gained = clock - self.first_copied[0], copied - self.first_copied[1]
            if gained > 0 and elapsed > 0:
                parts.append(f"about {_duration((total - copied) * elapsed / gained)} left")
            else:
                parts.append("time left unknown")
        elif verify.complete:
            parts.append("waiting for Kafka to clear the throttles")
        self.status(", ".join(parts))
