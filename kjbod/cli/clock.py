"""`kjbod clock`: the simulated time of the cluster state, and the copies it drives."""

from __future__ import annotations

from typing import Annotated, Optional

import typer

from kjbod.cli.context import app_context
from kjbod.cli.render import Lines, emit

app = typer.Typer(help="The simulated clock: advance it to let copies progress, or show it and the copies in progress.\n\nExample: kjbod clock advance --until-idle", no_args_is_help=True)


def _clock_data(now_ms: int) -> dict:
    from kjbod.simulation.clock import format_duration

    return {"timeMs": now_ms, "elapsed": format_duration(now_ms)}


def _plural(count: int, word: str, plural: str | None = None) -> str:
    return f"{count} {word if count == 1 else plural or word + 's'}"


def _copy_text(image, c) -> str:
    """`orders-0 to broker 4` or `orders-0 on broker 2 to /data/b2/d2`."""
    if c.future:
        return f"{c.name} on broker {c.broker} to {image.cluster.path_of(c.broker, c.directory) or c.directory}"
    return f"{c.name} to broker {c.broker}"


def _copy_json(image, c, done_in_ms=None) -> dict:
    return {
        "topic": c.topic,
        "partition": c.partition,
        "broker": c.broker,
        "kind": "future" if c.future else "follower",
        "source": c.source,
        "directory": image.cluster.path_of(c.broker, c.directory) or c.directory,
        "copiedBytes": c.copied,
        "totalBytes": c.total,
        "bytesPerSecond": float(c.rate),
        "blocked": c.blocked,
        "completesInMs": done_in_ms,
    }


def _copy_line(image, c, done_in_ms) -> str:
    from kjbod.common.units import human_bytes, human_rate
    from kjbod.simulation.clock import format_duration

    text = f"  {_copy_text(image, c)}: {human_bytes(c.copied)} of {human_bytes(c.total)}"
    if c.blocked:
        return f"{text}; waiting: {c.blocked}"
    when = "beyond the horizon" if done_in_ms is None else f"done in {format_duration(done_in_ms)}"
    return f"{text} at {human_rate(c.rate)}; {when}"


@app.command()
def show(ctx: typer.Context) -> None:
    """Show the simulated time, and every copy in progress with its rate and when it completes.

    Example: kjbod clock show
    """
    from kjbod.simulation.copy_model import outlook

    app_ = app_context(ctx)
    image = app_.read_image()
    data = _clock_data(image.time_ms)
    lines = [f"Simulated time: {data['elapsed']} ({image.time_ms} ms)"]
    copies = outlook(image)
    if copies:
        lines.append(f"Copies in progress ({len(copies)}):")
        lines.extend(_copy_line(image, c, done_in) for c, done_in in copies)
    emit(app_, Lines(lines, {**data, "copies": [_copy_json(image, c, done_in) for c, done_in in copies]}))


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
    from kjbod.simulation.clock import ClockControl, format_duration, parse_duration_ms

    app_ = app_context(ctx)
    if (duration is None) == (not until_idle):
        raise UsageError("Give either a DURATION or --until-idle")
    if until_idle:
        operation = lambda c: ClockControl(c.image).advance_until_idle()
    else:
        step = parse_duration_ms(duration or "")
        operation = lambda c: ClockControl(c.image).advance(step)
    result, image = app_.run(operation, doing="Running the copies forward")
    advance_ = result.response
    moved = advance_.now_ms - advance_.previous_ms
    done = []
    if advance_.placed:
        count = len(advance_.placed)
        done.append(_plural(count, "new replica") + f" placed in a log directory by {'its broker' if count == 1 else 'their brokers'}")
    if advance_.completed:
        done.append(_plural(len(advance_.completed), "copy", "copies") + " completed")
    if advance_.reassignments_completed:
        done.append(_plural(advance_.reassignments_completed, "reassignment") + " completed")
    if advance_.moves_completed:
        done.append(_plural(advance_.moves_completed, "replica") + " promoted in a new log directory")
    summary = (" " + "; ".join(done) + ".") if done else ""
    if moved:
        text = f"Advanced the clock by {format_duration(moved)} to {format_duration(advance_.now_ms)}.{summary}"
    elif done:
        text = f"The clock stays at {format_duration(advance_.now_ms)}.{summary}"
    elif advance_.blocked:
        text = f"Nothing can progress; the clock stays at {format_duration(advance_.now_ms)}."
    else:
        text = f"Nothing is in progress; the clock stays at {format_duration(advance_.now_ms)}."
    lines = [text]
    if advance_.in_progress:
        lines.append(f"Still copying: {_plural(len(advance_.in_progress), 'copy', 'copies')} (kjbod clock show).")
    if advance_.blocked:
        lines.append(f"Cannot progress ({len(advance_.blocked)}):")
        lines.extend(f"  {_copy_text(image, c)}: {c.blocked}" for c in advance_.blocked)
    lines.extend(_quorum_lines(advance_.quorum))
    data = {
        "previousMs": advance_.previous_ms,
        **_clock_data(advance_.now_ms),
        "completed": [
            {"topic": c.topic, "partition": c.partition, "broker": c.broker, "kind": "future" if c.future else "follower",
             "timeMs": c.time_ms, "reassignmentCompleted": c.reassignment_completed}
            for c in advance_.completed
        ],
        "placed": [
            {"topic": image.topics.name_of(t) if t in image.topics.by_id else t, "partition": p, "broker": b,
             "directory": image.cluster.path_of(b, d) or d}
            for t, p, b, d in advance_.placed
        ],
        "inProgress": [_copy_json(image, c) for c in advance_.in_progress],
        "blocked": [_copy_json(image, c) for c in advance_.blocked],
        "quorum": _quorum_json(advance_.quorum),
    }
    emit(app_, Lines(lines, data))


def _quorum_lines(tick) -> list[str]:  # noqa: ANN001
    """What the controller quorum did while the clock moved."""
    from kjbod.simulation.clock import format_duration

    lines = []
    for key, time_ms in tick.caught_up:
        registered = " and registered" if key.id in tick.registered else ""
        lines.append(f"Controller {key.id} caught up with the leader at {format_duration(time_ms)}{registered}.")
    for controller_id in tick.registered:
        if controller_id not in {key.id for key, _ in tick.caught_up}:
            lines.append(f"Controller {controller_id} registered.")
    for key, end, target in tick.catching_up:
        lines.append(f"Controller {key.id} is catching up: {end} of {target} records.")
    if tick.committed is not None:
        offset, voters = tick.committed
        lines.append(f"The voter change at offset {offset} committed: the voters are {', '.join(map(str, voters))}.")
    change = tick.leader_change
    if change is not None:
        if change.leader >= 0:
            lines.append(f"Controller {change.previous} left the voter set and resigned; controller {change.leader} leads epoch {change.epoch}.")
        else:
            lines.append(f"Controller {change.previous} left the voter set and resigned; no voter majority runs to elect a leader.")
    return lines


def _quorum_json(tick) -> dict | None:  # noqa: ANN001
    if tick.is_empty:
        return None
    change = tick.leader_change
    return {
        "caughtUp": [{"controllerId": k.id, "directoryId": k.directory_id, "timeMs": t} for k, t in tick.caught_up],
        "catchingUp": [{"controllerId": k.id, "directoryId": k.directory_id, "logEndOffset": e, "target": t} for k, e, t in tick.catching_up],
        "registered": list(tick.registered),
        "committed": None if tick.committed is None else {"offset": tick.committed[0], "voters": list(tick.committed[1])},
        "leaderChange": None if change is None else {"previousLeader": change.previous, "leader": change.leader, "epoch": change.epoch},
    }


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
    from kjbod.common.units import human_rate
    from kjbod.simulation.clock import ClockControl

    app_ = app_context(ctx)
    result, _ = app_.run(
        lambda c: ClockControl(c.image).set_rates(broker, replication_rate=replication, alter_log_dirs_rate=alter_log_dirs, reset=reset)
    )
    settings = result.response
    where = "the cluster default" if broker is None else f"broker {broker}"
    parts = [
        f"replication {human_rate(settings.replication_rate) if settings.replication_rate else 'default'}",
        f"alter-log-dirs {human_rate(settings.alter_log_dirs_rate) if settings.alter_log_dirs_rate else 'default'}",
    ]
    data = {"broker": broker, "replicationBytesPerSecond": settings.replication_rate, "alterLogDirsBytesPerSecond": settings.alter_log_dirs_rate}
    emit(app_, Lines([f"Rates of {where}: {', '.join(parts)}."], data))


def register(root: typer.Typer) -> None:
    root.add_typer(app, name="clock")
