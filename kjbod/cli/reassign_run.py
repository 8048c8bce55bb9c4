"""`kjbod reassign run`: a plan's waves carried out on a live cluster by Kafka's own
kafka-reassign-partitions (the library: kjbod/tools/reassign/run.py)."""

from __future__ import annotations

import signal
import threading
import time
from pathlib import Path
from typing import Annotated, Any, Optional

import typer

from kjbod.cli.context import AppContext, app_context
from kjbod.cli.progress import Progress
from kjbod.cli.render import Lines, emit

# Without a terminal (a log file, nohup), the status line goes to stderr at most this often.
QUIET_STATUS_SECONDS = 30.0


def add_commands(app: typer.Typer) -> None:
    """Adds `reassign run` to the reassign group."""
    app.command(name="run")(run)


def run(
    ctx: typer.Context,
    reassignment_json_file: Annotated[
        Path,
        typer.Option(
            "--reassignment-json-file", metavar="F",
            help="The plan `reassign plan` wrote; its waves F.wave-001.json, ... run in order (a plan without waves is one wave).",
        ),
    ],
    bootstrap_server: Annotated[
        str, typer.Option("--bootstrap-server", metavar="HOST:PORT", help="The cluster's brokers, passed to Kafka's tools as given.")
    ],
    command_config: Annotated[
        Optional[Path],
        typer.Option("--command-config", metavar="FILE", help="The admin client's properties (security, timeouts), passed to Kafka's tools."),
    ] = None,
    kafka_bin: Annotated[
        Optional[Path],
        typer.Option(
            "--kafka-bin", metavar="DIR",
            help="Kafka's bin/ directory, holding kafka-reassign-partitions.sh (default: KAFKA_HOME/bin, else PATH).",
        ),
    ] = None,
    throttle: Annotated[
        str,
        typer.Option("--throttle", metavar="BPS", help="Inter-broker replication throttle of each wave, bytes/s or with a unit: 50MiB (negative: none)."),
    ] = "-1",
    replica_alter_log_dirs_throttle: Annotated[
        str,
        typer.Option(
            "--replica-alter-log-dirs-throttle", metavar="BPS",
            help="Throttle of each wave's moves between log directories, bytes/s or with a unit (negative: none).",
        ),
    ] = "-1",
    timeout: Annotated[
        Optional[str],
        typer.Option("--timeout", metavar="MS", help="Passed to --execute: how long Kafka waits for log-directory moves to start."),
    ] = None,
    poll_interval: Annotated[
        float, typer.Option("--poll-interval", metavar="SECONDS", help="How often --verify is run while a wave copies.")
    ] = 10.0,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Print the commands it would run, from where the journal stands; run nothing.")] = False,
) -> None:
    """Carry out a plan's waves on a live cluster with Kafka's own kafka-reassign-partitions.

    For each wave, as an operator would by hand: --list (nothing else may be reassigning),
    --execute with the throttles (Kafka's current assignment kept as F.wave-NNN.rollback.json),
    then --verify every --poll-interval seconds with a status line until the wave is complete
    and Kafka has cleared the throttles. A journal beside the plan (F.journal.json) records each
    completed wave: run the same command again after an interruption (Ctrl-C, a lost session, a
    crash) and it resumes in the wave it was in, never executing a completed wave again. The first
    failure stops the run with the wave, the partition and Kafka's own message.

    Example: kjbod reassign run --reassignment-json-file plan.json --bootstrap-server broker1:9092 --throttle 50MB
    """
    from kjbod.tools.reassign.run import ReassignRunRequest, run_waves

    app_ = app_context(ctx)
    request = ReassignRunRequest.parse(
        plan=reassignment_json_file, bootstrap_server=bootstrap_server, command_config=command_config, kafka_bin=kafka_bin,
        throttle=throttle, replica_alter_log_dirs_throttle=replica_alter_log_dirs_throttle, timeout=timeout,
        poll_interval=poll_interval, dry_run=dry_run,
    )
    stop = threading.Event()
    with _stopped_by_signals(app_, stop), Progress(app_, "Starting") as progress:
        status = progress if progress.enabled else _QuietStatus(app_)
        result = run_waves(request, stop=stop, status=status, notify=app_.message)
    emit(app_, Lines(result.lines(), result.to_json()))


class _QuietStatus:
    """The status line where it cannot be redrawn (a pipe, a file): a line now and then."""

    def __init__(self, app_: AppContext) -> None:
        self.app = app_
        self.last = 0.0

    def __call__(self, text: str) -> None:
        clock = time.monotonic()
        if clock - self.last >= QUIET_STATUS_SECONDS:
            self.last = clock
            self.app.message(text)


class _stopped_by_signals:
    """While the run lasts, SIGINT (Ctrl-C), SIGTERM and SIGHUP (a lost session) ask it to stop
    at its next safe point instead of killing it where it stands."""

    SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)

    def __init__(self, app_: AppContext, stop: threading.Event) -> None:
        self.app = app_
        self.stop = stop
        self.saved: dict[int, Any] = {}

    def _handle(self, number: int, frame: Any) -> None:
        if not self.stop.is_set():
            self.stop.set()
            try:
                self.app.message(f"{signal.Signals(number).name}: stopping at the next safe point (an --execute under way is let finish).")
            except OSError:  # the terminal has gone (SIGHUP)
                pass

    def __enter__(self) -> _stopped_by_signals:
        if threading.current_thread() is threading.main_thread():
            for number in self.SIGNALS:
                self.saved[number] = signal.signal(number, self._handle)
        return self

    def __exit__(self, *exc: object) -> None:
        for number, handler in self.saved.items():
            signal.signal(number, handler)



