"""`kjbod clock`: the simulated time of the cluster state, and the copies it drives."""

from __future__ import annotations

from typing import Annotated, Optional

import typer

from kjbod.cli.context import app_context
from kjbod.cli.render import Lines, emit

app = typer.Typer(help="The simulated clock: advance it to let copies progress, or show it and the copies in progress.\n\nExample: kjbod clock advance --until-idle", no_args_is_help=True)


@app.command()
def show(ctx: typer.Context) -> None:
    """Show the simulated time, and every copy in progress with its rate and when it completes.

    Example: kjbod clock show
    """
    from kjbod.tools.clock import clock_outlook

    app_ = app_context(ctx)
    shown = clock_outlook(app_.read_image())
    emit(app_, Lines(shown.lines(), shown.to_json()))


@app.command()
def advance(
    ctx: typer.Context,
    duration: Annotated[Optional[str], typer.Argument(help="How far: 1500 (seconds), 1500s, 250ms, 25m, 2h, 1d.")] = None,
    until_idle: Annotated[
        bool, typer.Option("--until-idle", help="Advance until the last copy that can progress completes (at most 365 days).")
    ] = False,
) -> None:
    """Move the simulated clock forward: copies progress, replicas join the ISR, moves complete.

    Example: kjbod clock advance 25m
    """
    from kjbod.errors import UsageError
    from kjbod.simulation.clock import ClockControl, parse_duration_ms
    from kjbod.tools.clock import advance_report

    app_ = app_context(ctx)
    if (duration is None) == (not until_idle):
        raise UsageError("Give either a DURATION or --until-idle")
    if until_idle:
        operation = lambda c: ClockControl(c.image).advance_until_idle()
    else:
        step = parse_duration_ms(duration or "")
        operation = lambda c: ClockControl(c.image).advance(step)
    result, image = app_.run(operation, doing="Running the copies forward")
    report = advance_report(result.response, image)
    emit(app_, Lines(report.lines(), report.to_json()))


@app.command("set-rate")
def set_rate(
    ctx: typer.Context,
    broker: Annotated[Optional[int], typer.Option("--broker", metavar="N", help="One broker; the cluster default when left out.")] = None,
    replication: Annotated[
        Optional[int],
        typer.Option("--replication", metavar="BPS", help="Link rate in bytes/s, in and out of each broker (kjbod.replication.bytes.per.second; default 100 MiB/s)."),
    ] = None,
    alter_log_dirs: Annotated[
        Optional[int],
        typer.Option("--alter-log-dirs", metavar="BPS", help="Local copy rate between directories in bytes/s (kjbod.alter.log.dirs.bytes.per.second; default 200 MiB/s)."),
    ] = None,
    reset: Annotated[bool, typer.Option("--reset", help="Remove this resource's rates (back to the default).")] = False,
) -> None:
    """Set the simulated copy rates (Kafka's throttles still apply on top of them).

    Example: kjbod clock set-rate --broker 4 --replication 125000000
    """
    from kjbod.simulation.clock import ClockControl
    from kjbod.tools.clock import RatesReport

    app_ = app_context(ctx)
    result, _ = app_.run(
        lambda c: ClockControl(c.image).set_rates(broker, replication_rate=replication, alter_log_dirs_rate=alter_log_dirs, reset=reset)
    )
    report = RatesReport(broker, result.response)
    emit(app_, Lines(report.lines(), report.to_json()))


def register(root: typer.Typer) -> None:
    root.add_typer(app, name="clock")
