"""`kjbod import` (bring a real cluster into the cluster state)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from kjbod.cli.context import app_context
from kjbod.cli.log_dirs import report_problems
from kjbod.cli.progress import Progress
from kjbod.cli.render import Lines, emit, verbatim

app = typer.Typer(
    help="Bring a real cluster into a new cluster state: brokers, directories, topics, assignment, sizes.\n\n"
    "Example: kjbod --state ./prod-state import cluster --brokers brokers.json --assignment current.json",
    no_args_is_help=True,
)


def register(root: typer.Typer) -> None:
    root.add_typer(app, name="import")


@app.command()
def cluster(
    ctx: typer.Context,
    brokers: Annotated[
        Path,
        typer.Option("--brokers", help=verbatim(
            "The brokers:",
            '{"brokers": [{"id": 1, "rack": "r1", "log_dirs": [',
            '  {"path": "/mnt/d1", "capacity_bytes": 4000000000000}]}]}',
        ), metavar="FILE"),
    ],
    assignment: Annotated[
        Path,
        typer.Option("--assignment", help="The current assignment as Kafka reassignment JSON (log_dirs optional; an optional leader per partition).", metavar="FILE"),
    ],
    log_dirs: Annotated[
        list[Path] | None,
        typer.Option("--log-dirs", help="Saved kafka-log-dirs --describe output (sizes, lags, future replicas, failed directories, disk sizes as capacities); repeatable.", metavar="FILE"),
    ] = None,
    metadata_version: Annotated[
        str | None, typer.Option("--metadata-version", help="The cluster's metadata.version, e.g. 3.9 or 4.3-IV0 (default: latest production).", metavar="V")
    ] = None,
    cluster_id: Annotated[
        str | None,
        typer.Option(
            "--cluster-id", metavar="ID",
            help="The cluster.id in the brokers' meta.properties; broker register --config then refuses brokers of another cluster.",
        ),
    ] = None,
) -> None:
    """Create a new cluster state from a real cluster's exported files.

    Every input is checked first and every problem is listed with its file and JSON path;
    nothing is written unless all of it is valid. --state must name a new or empty directory.

    Example: kjbod --state ./prod-state import cluster --brokers brokers.json --assignment current.json --log-dirs log-dirs.txt
    """
    from kjbod.common.problems import ValidationFailed
    from kjbod.tools.importer.from_files import ImportRequest, import_cluster

    app_ = app_context(ctx)
    request = ImportRequest(brokers, assignment, list(log_dirs or []), metadata_version, cluster_id)
    try:
        with Progress(app_, "Importing") as progress:
            summary = import_cluster(request, app_.state_directory(progress), progress=progress)
    except ValidationFailed as exc:
        report_problems(app_, exc.problems)
        raise
    offline = f" ({summary.offline_directories} offline)" if summary.offline_directories else ""
    lines = [
        f"Imported {summary.brokers} broker(s) with {summary.directories} log directories{offline}, {summary.topics} topic(s) "
        f"and {summary.partitions} partition(s) ({summary.replicas} replicas) into {summary.state} at metadata.version {summary.metadata_version}.",
        f"Sizes known for {summary.sized_partitions} partition(s); {summary.replica_logs} replica(s) lagging or partial; "
        f"{summary.future_replicas} future replica(s).",
    ]
    if summary.offline_replicas:
        lines.append(f"{summary.offline_replicas} replica(s) are in offline directories and out of their ISR.")
    if summary.unassigned_replicas:
        lines.append(
            f"{summary.unassigned_replicas} replica(s) have no log directory yet (UNASSIGNED): give their paths in the "
            "assignment's log_dirs or in --log-dirs output, or run `kjbod assign-dirs --broker N --auto`."
        )
    lines.append(f"Wrote {summary.records} records and a snapshot.")
    emit(app_, Lines(lines, summary.to_json()))
