"""`kjbod assign-dirs`: the AssignReplicasToDirs RPC a broker sends for its replicas (KIP-858)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from kjbod.cli import completion
from kjbod.cli.context import app_context
from kjbod.cli.render import Lines, emit, verbatim


def register(root: typer.Typer) -> None:
    root.command("assign-dirs")(assign_dirs)


def assign_dirs(
    ctx: typer.Context,
    broker: Annotated[int, typer.Option("--broker", help="The broker whose replicas are assigned.", metavar="N", autocompletion=completion.broker_id)],
    broker_epoch: Annotated[Optional[int], typer.Option("--broker-epoch", help="The epoch the broker sends (default: its current one).", metavar="E")] = None,
    assign: Annotated[
        Optional[list[str]], typer.Option("--assign", help="TOPIC:PARTITION=DIR (DIR: a directory id, a reserved id, or a path of the broker); repeatable.", metavar="T:P=DIR")
    ] = None,
    file: Annotated[
        Optional[Path], typer.Option("--file", help=verbatim(
            "A JSON file of assignments:",
            '{"assignments": [',
            '  {"topic": "orders", "partition": 0, "directory": "/mnt/d1"}]}',
        ), metavar="F")
    ] = None,
    auto: Annotated[bool, typer.Option("--auto", help="Choose as the broker does: the least loaded online, uncordoned directory for every replica without one.")] = False,
) -> None:
    """Assign a broker's replicas to its log directories (AssignReplicasToDirs).

    Exit 1 if any partition failed. Example: kjbod assign-dirs --broker 1 --auto
    """
    from kjbod.controller.replication_control import DirectoryAssignment
    from kjbod.errors import OperationFailed, UsageError
    from kjbod.tools.cluster.requests import parse_assignment, read_assignment_file

    app_ = app_context(ctx)
    if sum((bool(assign), file is not None, auto)) != 1:
        raise UsageError("Give exactly one of --assign, --file or --auto")
    wanted = [parse_assignment(a) for a in assign] if assign else read_assignment_file(file) if file else []

    def operation(c):  # noqa: ANN001, ANN202
        if auto:
            return c.replication.auto_assign_dirs(broker)
        items = [DirectoryAssignment(t, p, c.cluster.resolve_directory(broker, d)) for t, p, d in wanted]
        return c.replication.assign_replicas_to_dirs(broker, items, broker_epoch)

    result, image = app_.run(operation)
    reply = result.response
    lines = [
        f"{r.topic}-{r.partition} -> {r.directory} ({image.cluster.directory_label(broker, r.directory)}): {r.error.name}"
        for r in reply.results
    ]
    if auto and not reply.results:
        lines.append(f"Every replica of broker {broker} already has an online directory.")
    lines.extend(f"Left alone: {reason}" for reason in reply.skipped)
    from kjbod.tools.cluster.requests import impact_json, impact_lines

    if reply.impact:
        lines.append(f"{len(reply.impact)} partition(s) changed:")
        lines.extend(impact_lines(reply.impact))
    data = {
        "brokerId": broker,
        "results": [{"topic": r.topic, "partition": r.partition, "directoryId": r.directory, "error": r.error.name} for r in reply.results],
        "skipped": list(reply.skipped),
        "changes": impact_json(reply.impact),
    }
    emit(app_, Lines(lines, data))
    failed = sum(1 for r in reply.results if not r.succeeded)
    if failed:
        raise OperationFailed(f"{failed} out of {len(reply.results)} assignment(s) failed.")
