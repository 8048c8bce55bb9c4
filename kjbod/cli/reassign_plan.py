"""`kjbod reassign plan`: the placement planner (broker and log directory of every moved replica)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from kjbod.cli import completion
from kjbod.cli.context import app_context
from kjbod.cli.progress import Progress
from kjbod.cli.render import Lines, emit
from kjbod.planner.request import Engine, Goal, RackMode, Refine


def add_commands(app: typer.Typer) -> None:
    """Adds `reassign plan` to the reassign group."""
    app.command(name="plan")(plan)


def plan(
    ctx: typer.Context,
    goal: Annotated[
        Goal,
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
        RackMode,
        typer.Option(
            "--rack-mode", case_sensitive=False,
            help="strict: at most one replica of a partition per rack while racks >= RF; even: as even as racks allow.",
        ),
    ] = RackMode.STRICT,
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
    refine: Annotated[
        Refine,
        typer.Option(
            "--refine", case_sensitive=False,
            help="auto: where the cluster is small enough (a model of at most 12,000 partition x directory choices), improve a "
            "balance plan with an exact solver (HiGHS, deterministic limits), kept only if it is closer to the bands, or as close and moves fewer bytes; "
            "the report says what it did. off: the heuristic's plan.",
        ),
    ] = Refine.AUTO,
    engine: Annotated[
        Engine,
        typer.Option(
            "--engine", case_sensitive=False,
            help="auto, spark or local. auto picks Spark where it is expected to be faster on this machine "
            "(its cores, the cluster's size, a --spark-master) and the report says which it chose and why.",
        ),
    ] = Engine.AUTO,
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
    explain: Annotated[
        Optional[Path],
        typer.Option(
            "--explain", metavar="FILE",
            help="Also write why each replica moves to FILE, one JSON line per moved replica (the goal it serves, by how much, "
            "before and after; why its broker and directory), then a line per goal the plan could not reach with what stands "
            "in the way; the report sums them up.",
        ),
    ] = None,
    overwrite: Annotated[bool, typer.Option("--overwrite", help="Replace --output-file (and its waves, and --explain) if it exists.")] = False,
) -> None:
    """Plan a reassignment: the broker and the log directory of every replica that moves.

    Hard rules are never broken: replication factors stay; no replica lands on a fenced or
    unregistered broker, an offline or cordoned directory, or past a directory's capacity
    threshold; the rack rule holds wherever it can (partitions where it cannot are listed);
    leaders stay unless the goal moves them; a partition keeping a replica on a fenced or
    unregistered broker is left as it is (Kafka's tool refuses a plan that names one). Only
    partitions that change are written, in Kafka's reassignment JSON, ready for `reassign
    check` and `reassign execute`.

    Example: kjbod reassign plan --goal balance --output-file plan.json --explain why.jsonl
    """
    from kjbod.tools.reassign.plan import ReassignPlanRequest, plan_reassignment

    app_ = app_context(ctx)
    request = ReassignPlanRequest.parse(
        goal=goal, broker_list=brokers, dirs=dirs or [], rack_mode=rack_mode, max_moves=max_moves, max_bytes=max_bytes,
        exclude_topics=exclude_topics, exclude_brokers=exclude_brokers, capacity_threshold=capacity_threshold, seed=seed,
        refine=refine, engine=engine, spark_master=spark_master, spark_conf=spark_conf or [],
        max_concurrent_moves_per_broker=max_concurrent_moves_per_broker, wave_size=wave_size, output_file=output_file, overwrite=overwrite,
        explain_file=explain,
    )
    # A live status line on a terminal while planning, nothing otherwise (stdout carries only the report).
    result = plan_reassignment(request, app_.read_image, state_bytes=app_.state_bytes(), planning=lambda: Progress(app_, "Planning"))
    if result.to_stdout and not app_.json:
        # The plan on stdout (for a pipe or a redirect), the report for the operator on stderr.
        app_.stdout.write(result.reassignment_text())
        app_.stdout.flush()
        for line in result.lines():
            app_.message(line)
    else:
        emit(app_, Lines(result.lines(), result.to_json()))
