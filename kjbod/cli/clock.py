"""`kjbod clock`: the simulated time of the cluster state."""

from __future__ import annotations

from typing import Annotated, Optional

import typer

from kjbod.cli.context import app_context
from kjbod.cli.render import Lines, emit

app = typer.Typer(help="The simulated clock: advance it to let copies progress, or show it.", no_args_is_help=True)


def _clock_data(now_ms: int) -> dict:
    from kjbod.controller.clock_control import format_duration

    return {"timeMs": now_ms, "elapsed": format_duration(now_ms)}


@app.command()
def show(ctx: typer.Context) -> None:
    """Show the simulated time since the cluster state began.

    Example: kjbod clock show
    """
    from kjbod.state import read_image

    app_ = app_context(ctx)
    image = read_image(app_.state_dir, lock_timeout=app_.lock_timeout, notify=app_.notify)
    data = _clock_data(image.time_ms)
    emit(app_, Lines([f"Simulated time: {data['elapsed']} ({image.time_ms} ms)"], data))


@app.command()
def advance(
    ctx: typer.Context,
    duration: Annotated[Optional[str], typer.Argument(help="How far: 1500 (seconds), 1500s, 25m, 2h, 1d.")] = None,
    until_idle: Annotated[bool, typer.Option("--until-idle", help="Advance until nothing is in progress.")] = False,
) -> None:
    """Move the simulated clock forward.

    Example: kjbod clock advance 25m
    """
    from kjbod.controller.clock_control import format_duration, parse_duration_ms
    from kjbod.errors import UsageError
    from kjbod.state import run_operation

    app_ = app_context(ctx)
    if (duration is None) == (not until_idle):
        raise UsageError("Give either a DURATION or --until-idle")
    step = 0 if until_idle else parse_duration_ms(duration or "")
    result, _ = run_operation(
        app_.state_dir, lambda c: c.clock.advance(step), lock_timeout=app_.lock_timeout, notify=app_.notify
    )
    advance_ = result.response
    moved = advance_.now_ms - advance_.previous_ms
    text = (
        f"Advanced the clock by {format_duration(moved)} to {format_duration(advance_.now_ms)}."
        if moved
        else f"Nothing is in progress; the clock stays at {format_duration(advance_.now_ms)}."
    )
    emit(app_, Lines([text], {"previousMs": advance_.previous_ms, **_clock_data(advance_.now_ms)}))


def register(root: typer.Typer) -> None:
    root.add_typer(app, name="clock")
