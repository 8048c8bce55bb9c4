"""`kjbod reassign plan`: the placement planner (broker and log directory of every moved replica)."""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import Annotated, Any, Optional

import typer

from kjbod.cli import completion
from kjbod.cli.context import app_context
from kjbod.cli.progress import Progress
from kjbod.cli.render import Lines, emit


class GoalChoice(str, Enum):
    balance = "balance"
    add_brokers = "add-brokers"
    remove_brokers = "remove-brokers"
    drain_dirs = "drain-dirs"
    fix_offline = "fix-offline"
    rebalance_disks = "rebalance-disks"


class RackModeChoice(str, Enum):
    strict = "strict"
    even = "even"


class EngineChoice(str, Enum):
    auto = "auto"
    spark = "spark"
    local = "local"


def add_commands(app: typer.Typer) -> None:
    """Adds `reassign plan` to the reassign group."""
    app.command(name="plan")(plan)


def plan(
    ctx: typer.Context,
    goal: Annotated[
        GoalChoice,
        typer.Option(
            "--goal", metavar="GOAL", case_sensitive=False,
            help="balance | add-brokers | remove-brokers | drain-dirs | fix-offline | rebalance-disks.",
        ),
    ],
    output_file: Annotated[
        Path,
        typer.Option(
            "--output-file", metavar="F",
            help="Where to write the reassignment JSON (with log_dirs); - prints it on stdout and the report on stderr.",
        ),
    ],
    brokers: Annotated[
        Optional[str],
        typer.Option(
            "--broker-list", "--brokers", metavar="LIST",
            help='The brokers to add or remove, as "7,8,9" (add-brokers, remove-brokers); --brokers is the same option.',
            autocompletion=completion.broker_list,
        ),
    ] = None,
    dirs: Annotated[
        Optional[list[str]],
        typer.Option("--dir", metavar="BROKER:PATH", help="A log directory to drain, by path or directory id (drain-dirs); repeatable."),
    ] = None,
    rack_mode: Annotated[
        RackModeChoice,
        typer.Option(
            "--rack-mode", case_sensitive=False,
            help="strict: at most one replica of a partition per rack while racks >= RF; even: as even as racks allow.",
        ),
    ] = RackModeChoice.strict,
    max_moves: Annotated[Optional[int], typer.Option("--max-moves", metavar="N", min=0, help="Move at most N replicas.")] = None,
    max_bytes: Annotated[
        Optional[str], typer.Option("--max-bytes", metavar="B", help="Move at most B bytes (500GB, 1.5TiB or plain bytes).")
    ] = None,
    exclude_topics: Annotated[
        Optional[str], typer.Option("--exclude-topics", metavar="REGEX", help="Never move replicas of topics matching REGEX (whole name).")
    ] = None,
    exclude_brokers: Annotated[
        Optional[str], typer.Option(
            "--exclude-brokers", metavar="LIST", help='Never move replicas to or from these brokers, as "4,5".',
            autocompletion=completion.broker_list,
        ),
    ] = None,
    capacity_threshold: Annotated[
        float, typer.Option("--capacity-threshold", metavar="F", help="Never fill a log directory past this share of its capacity.")
    ] = 0.8,
    seed: Annotated[int, typer.Option("--seed", help="Seed for tie-breaks; the same seed and state give the same plan.")] = 0,
    engine: Annotated[
        EngineChoice,
        typer.Option(
            "--engine", case_sensitive=False,
            help="auto, spark or local. auto picks Spark where it is expected to be faster on this machine "
            "(its cores, the cluster's size, a --spark-master) and the report says which it chose and why.",
        ),
    ] = EngineChoice.auto,
    spark_master: Annotated[
        Optional[str], typer.Option("--spark-master", metavar="URL", help="Run the Spark engine on this master (spark://host:7077, local[4], ...).")
    ] = None,
    spark_conf: Annotated[
        Optional[list[str]],
        typer.Option(
            "--spark-conf", metavar="KEY=VALUE",
            help="A Spark setting passed through to the session, e.g. spark.executor.memory=4g; repeatable.",
        ),
    ] = None,
    max_concurrent_moves_per_broker: Annotated[
        Optional[int],
        typer.Option(
            "--max-concurrent-moves-per-broker", metavar="K", min=1,
            help="Also write the plan as ordered waves (F.wave-001.json, ...; F without .json) in which no broker takes part "
            "in more than K moves, and no directory passes the capacity threshold once a wave completes.",
        ),
    ] = None,
    wave_size: Annotated[
        Optional[int],
        typer.Option("--wave-size", metavar="N", min=1, help="Also write the plan as ordered waves of at most N partitions each (see above; at most 10000, what Kafka starts in one request)."),
    ] = None,
    overwrite: Annotated[bool, typer.Option("--overwrite", help="Replace --output-file (and its waves) if it exists.")] = False,
) -> None:
    """Plan a reassignment: the broker and the log directory of every replica that moves.

    Hard rules are never broken: replication factors stay; no replica lands on a fenced or
    unregistered broker, an offline or cordoned directory, or past a directory's capacity
    threshold; the rack rule holds wherever it can (partitions where it cannot are listed);
    leaders stay unless the goal moves them. Only partitions that change are written, in
    Kafka's reassignment JSON, ready for `reassign check` and `reassign execute`.

    Example: kjbod reassign plan --goal balance --output-file plan.json
    """
    from kjbod.common.units import parse_bytes
    from kjbod.controller.result import MAX_RECORDS_PER_USER_OP
    from kjbod.errors import UserError
    from kjbod.planner import Goal, PlanRequest, RackMode, WaveLimits
    from kjbod.tools.reassign.plan import check_output_file, plan_reassignment, spark_before_loading

    app_ = app_context(ctx)
    goal_ = Goal(goal.value)
    broker_list = _broker_list(brokers, "--broker-list")
    if goal_ in (Goal.ADD_BROKERS, Goal.REMOVE_BROKERS) and not broker_list:
        raise UserError(f"--goal {goal_.value} needs --broker-list, e.g. --broker-list 7,8")
    if broker_list and goal_ not in (Goal.ADD_BROKERS, Goal.REMOVE_BROKERS):
        raise UserError(f"--broker-list is for --goal add-brokers or remove-brokers, not {goal_.value}")
    dir_specs = tuple(_dir_spec(text) for text in dirs or [])
    if goal_ is Goal.DRAIN_DIRS and not dir_specs:
        raise UserError("--goal drain-dirs needs at least one --dir BROKER:PATH, e.g. --dir 3:/data/02/kafka-logs")
    if dir_specs and goal_ is not Goal.DRAIN_DIRS:
        raise UserError(f"--dir is for --goal drain-dirs, not {goal_.value}")
    if not 0 < capacity_threshold <= 1:
        raise UserError(f"Invalid --capacity-threshold {capacity_threshold}: give a share of capacity above 0 and at most 1, e.g. 0.8")
    if spark_master is not None and engine is EngineChoice.local:
        raise UserError("--spark-master runs the Spark engine; drop it or use --engine spark")
    if spark_conf and engine is EngineChoice.local:
        raise UserError("--spark-conf is for the Spark engine; drop it or use --engine spark (or auto)")
    from kjbod.planner.session import parse_spark_conf

    spark_settings = parse_spark_conf(spark_conf or [])
    request = PlanRequest(
        goal=goal_,
        brokers=broker_list,
        dirs=dir_specs,
        rack_mode=RackMode(rack_mode.value),
        max_moves=max_moves,
        max_bytes=parse_bytes(max_bytes, "--max-bytes") if max_bytes is not None else None,
        exclude_topics=exclude_topics,
        exclude_brokers=_broker_list(exclude_brokers, "--exclude-brokers"),
        capacity_threshold=capacity_threshold,
        seed=seed,
    )
    if wave_size is not None and wave_size > MAX_RECORDS_PER_USER_OP:
        raise UserError(
            f"--wave-size {wave_size} is more than Kafka's controller starts in one request ({MAX_RECORDS_PER_USER_OP} partitions, "
            f"MAX_RECORDS_PER_USER_OP): give at most {MAX_RECORDS_PER_USER_OP}"
        )
    waves = None
    if max_concurrent_moves_per_broker is not None or wave_size is not None:
        waves = WaveLimits(per_broker=max_concurrent_moves_per_broker, size=wave_size)
    to_stdout = str(output_file) == "-"
    if to_stdout and waves is not None:
        raise UserError("Waves are written to files beside --output-file (F.wave-001.json, ...): give a file name, not -")
    if not to_stdout:
        check_output_file(output_file, overwrite, waves=waves is not None)  # before the work, not after it
    # Spark (when it will be wanted) starts now, so that its JVM comes up while the state loads.
    spark = spark_before_loading(engine.value, spark_master, spark_settings, state_bytes=app_.state_bytes())
    try:
        image = app_.read_image()
    except BaseException:
        if spark is not None:
            spark.discard()
        raise
    # A live status line on a terminal, nothing otherwise (stdout carries only the report).
    with Progress(app_, "Planning") as progress:
        run = plan_reassignment(
            image, request, None if to_stdout else output_file, engine=engine.value, spark_master=spark_master, spark_conf=spark_settings,
            spark=spark, waves=waves, progress=progress,
        )
    data = dict(run.report.data, outputFile=str(output_file))
    if not to_stdout:
        emit(app_, Lines(report_lines(data), data))
    elif app_.json:
        # One document on stdout: the report, with the plan in it.
        emit(app_, Lines([], dict(data, reassignment=run.report.reassignment)))
    else:
        # The plan on stdout (for a pipe or a redirect), the report for the operator on stderr.
        from kjbod.tools.reassign.plan import reassignment_json

        app_.stdout.write(reassignment_json(run).decode())
        app_.stdout.flush()
        for line in report_lines(data):
            app_.message(line)


def _broker_list(text: str | None, option: str) -> tuple[int, ...]:
    from kjbod.errors import UserError

    if text is None:
        return ()
    try:
        ids = tuple(int(part) for part in text.split(",") if part.strip())
    except ValueError:
        raise UserError(f'Invalid {option} "{text}": give broker ids separated by commas, e.g. 7,8') from None
    if not ids:
        raise UserError(f'Invalid {option} "{text}": give broker ids separated by commas, e.g. 7,8')
    return ids


def _dir_spec(text: str) -> tuple[int, str]:
    from kjbod.errors import UserError

    broker, sep, path = text.partition(":")
    if not sep or not path or not broker.strip().isdigit():
        raise UserError(f'Invalid --dir "{text}": give BROKER:PATH (or BROKER:DIRECTORY_ID), e.g. 3:/data/02/kafka-logs')
    return int(broker), path


# The text report ---------------------------------------------------------------------------


def _bytes(value: float) -> str:
    from kjbod.common.units import human_bytes

    return human_bytes(value)


def report_lines(data: dict[str, Any]) -> list[str]:
    """The report an operator reads: what the plan moves, balance before and after, a chart of
    directory usage, and anything the rules did not allow."""
    before, after = data["before"], data["after"]
    changed = data["partitionsChanged"]
    reason = data.get("engineReason") or ""
    lines = [
        f"Planned {data['goal']} for {data['brokers']} brokers, {data['directories']} log directories, {data['partitions']} partitions "
        f"({data['replicas']} replicas) with the {data['engine']} engine{f' ({reason})' if reason and reason != 'asked for' else ''}.",
    ]
    target = "stdout" if data["outputFile"] == "-" else data["outputFile"]
    if changed:
        lines.append(f"Wrote {changed} partition reassignment(s) to {target}.")
    else:
        lines.append(f"Nothing needs to move; wrote an empty reassignment to {target}.")
    waves = data.get("waves")
    if waves:
        lines.append(wave_line(waves))
    bound = data["lowerBoundBytes"]
    ratio = ""
    if bound and data["bytesMoved"] >= bound:
        ratio = f", {data['movedOverLowerBound']:.2f}x the least any plan must move ({_bytes(bound)})"
    elif bound:
        ratio = f"; reaching every balance band would move at least {_bytes(bound)}, but the rules keep this plan short of them"
    lines += [
        "",
        f"Moves: {data['replicasMovedBetweenBrokers']} replica(s) between brokers ({_bytes(data['bytesMovedBetweenBrokers'])}), "
        f"{data['replicasMovedBetweenDirectories']} between directories of a broker ({_bytes(data['bytesMovedBetweenDirectories'])}); "
        f"{_bytes(data['bytesMoved'])} in all{ratio}.",
    ]
    if data["preferredLeadersChanged"]:
        lines.append(
            f"Preferred leaders: {data['preferredLeadersChanged']} change; run `kjbod elect --election-type PREFERRED --all-topic-partitions` "
            "once the reassignment completes."
        )
    rows = [
        ("Replicas per broker", f"{before['replicasMin']}-{before['replicasMax']}", f"{after['replicasMin']}-{after['replicasMax']}"),
        ("  max deviation from target", _pct(before["replicasMaxDeviationPercent"]), _pct(after["replicasMaxDeviationPercent"])),
        ("Leaders: max deviation", _pct(before["leadersMaxDeviationPercent"]), _pct(after["leadersMaxDeviationPercent"])),
        ("Bytes: max deviation", _pct(before["bytesMaxDeviationPercent"]), _pct(after["bytesMaxDeviationPercent"])),
        ("Directory usage: fullest", _pct(before["directoryUsageMaxPercent"]), _pct(after["directoryUsageMaxPercent"])),
        ("  furthest from broker mean", _points(before["directoryUsageMaxPointsFromBrokerMean"]), _points(after["directoryUsageMaxPointsFromBrokerMean"])),
        ("Partitions breaking the rack rule", str(before["rackViolations"]), str(after["rackViolations"])),
    ]
    width = max(len(r[0]) for r in rows)
    lines += ["", f"{'':<{width}}  {'before':>12}  {'after':>12}"]
    lines += [f"{name:<{width}}  {b:>12}  {a:>12}" for name, b, a in rows]
    if after["directoryUsageMaxPercent"] is None:
        lines += ["", "Log directory usage is unknown: no disk capacities (`broker register --capacity`, or capacity_bytes on import)."]
    else:
        lines += ["", *usage_chart(data["directoryUsageHistogram"]["before"], data["directoryUsageHistogram"]["after"])]
    for note in data["notes"]:
        lines.append(f"Note: {note}")
    unsatisfiable = data["unsatisfiable"]
    if unsatisfiable:
        lines.append(f"The rack rule or the capacity threshold cannot be met for {len(unsatisfiable)} partition(s):")
        for item in unsatisfiable[:10]:
            lines.append(f"  {item['topic']}-{item['partition']}: {item['reason']}")
        if len(unsatisfiable) > 10:
            lines.append(f"  ... and {len(unsatisfiable) - 10} more (all of them with --output json)")
    lines.append("Per-broker and per-directory figures: --output json.")
    return lines


def wave_line(waves: dict[str, Any]) -> str:
    files = waves["files"]
    limits = []
    if waves["maxConcurrentMovesPerBroker"] is not None:
        limits.append(f"at most {waves['maxConcurrentMovesPerBroker']} moves per broker")
    if waves["waveSize"] is not None:
        limits.append(f"at most {waves['waveSize']} partitions")
    named = f"{files[0]}" if len(files) == 1 else f"{files[0]} ... {files[-1]}"
    bound = "no fewer waves can do it" if waves["count"] <= waves["lowerBound"] else f"at least {waves['lowerBound']} are needed"
    text = (
        f"Wrote it as {waves['count']} wave(s) to run one after another ({named}): {' and '.join(limits)} in a wave, "
        f"no directory past the capacity threshold once a wave completes; {bound}."
    )
    return " ".join([text, *waves["notes"]])


def _pct(value: float | None) -> str:
    return "unknown" if value is None else f"{value:.1f}%"


def _points(value: float | None) -> str:
    return "unknown" if value is None else f"{value:.1f} pts"


def usage_chart(before: list[int], after: list[int], width: int = 24) -> list[str]:
    """Directories by usage, in 10-point bins, before and after, as two bar columns."""
    most = max(max(before), max(after), 1)

    def bar(count: int) -> str:
        cells = count * width / most
        full = int(cells)
        text = "█" * full + ("▌" if cells - full >= 0.5 else "")
        return f"{text:<{width}} {count:>6}"

    lines = [f"Log directories by usage   {'before':<{width + 7}}  after"]
    for index, (b, a) in enumerate(zip(before, after)):
        label = f"{index * 10:>3}-{index * 10 + 10}%" if index < 9 else " 90%+   "
        lines.append(f"  {label:<24} {bar(b)}  {bar(a)}")
    return lines
