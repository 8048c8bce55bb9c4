"""`kjbod import` (bring a real cluster into the cluster state)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, TypeVar

import typer

from kjbod.cli.context import AppContext, app_context
from kjbod.cli.log_dirs import report_problems
from kjbod.cli.progress import Progress
from kjbod.cli.render import Lines, emit, verbatim

if TYPE_CHECKING:
    from kjbod.state import StateDirectory

T = TypeVar("T")

app = typer.Typer(
    help="Bring a real cluster into a new cluster state: brokers, directories, topics, assignment, sizes; "
    "from exported files or from a KRaft controller's own snapshot.\n\n"
    "Example: kjbod --state ./prod-state import cluster --brokers brokers.json --assignment current.json",
    no_args_is_help=True,
)


def register(root: typer.Typer) -> None:
    root.add_typer(app, name="import")


@app.command()
def cluster(
    ctx: typer.Context,
    brokers: Annotated[
        Path | None,
        typer.Option("--brokers", help=verbatim(
            "The brokers:",
            '{"brokers": [{"id": 1, "rack": "r1", "log_dirs": [',
            '  {"path": "/mnt/d1", "capacity_bytes": 4000000000000}]}]}',
        ), metavar="FILE"),
    ] = None,
    assignment: Annotated[
        Path | None,
        typer.Option("--assignment", help="The current assignment as Kafka reassignment JSON (log_dirs optional; an optional leader per partition).", metavar="FILE"),
    ] = None,
    metadata_snapshot: Annotated[
        Path | None,
        typer.Option(
            "--metadata-snapshot",
            help="A KRaft controller's snapshot (__cluster_metadata-0/<offset>-<epoch>.checkpoint) instead of --brokers/--assignment.",
            metavar="FILE",
        ),
    ] = None,
    metadata_log: Annotated[
        Path | None,
        typer.Option("--metadata-log", help="The controller's __cluster_metadata-0 directory: its log segments past the snapshot apply too.", metavar="DIR"),
    ] = None,
    log_dirs: Annotated[
        list[Path] | None,
        typer.Option("--log-dirs", help="Saved kafka-log-dirs --describe output (sizes, lags, future replicas, failed directories, disk sizes as capacities; paths); repeatable.", metavar="FILE"),
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
    """Create a new cluster state from a real cluster's exported files, or from a controller's
    own metadata (--metadata-snapshot).

    Every input is checked first and every problem is listed with its file and JSON path;
    nothing is written unless all of it is valid. --state must name a new or empty directory.

    From a snapshot, the state is exactly the controller's (directory ids, fenced and cordoned
    brokers, ISR, epochs, reassignments in flight, configs, features); --log-dirs adds sizes and
    joins each directory id to its path through the replicas both list.

    Example: kjbod --state ./prod-state import cluster --brokers brokers.json --assignment current.json --log-dirs log-dirs.txt

    Example: kjbod --state ./prod-state import cluster --metadata-snapshot 00000000000000052113-0000000007.checkpoint --log-dirs log-dirs.txt
    """
    from kjbod.errors import UsageError

    app_ = app_context(ctx)
    if metadata_snapshot is not None:
        if brokers is not None or assignment is not None or metadata_version is not None:
            raise UsageError("--metadata-snapshot replaces --brokers, --assignment and --metadata-version (the snapshot holds them)")
        _from_snapshot(app_, metadata_snapshot, metadata_log, list(log_dirs or []), cluster_id)
        return
    if metadata_log is not None:
        raise UsageError("--metadata-log goes with --metadata-snapshot")
    if brokers is None or assignment is None:
        raise UsageError("Give --brokers FILE and --assignment FILE, or --metadata-snapshot FILE")
    _from_files(app_, brokers, assignment, list(log_dirs or []), metadata_version, cluster_id)


def _importing(app_: AppContext, run: Callable[[StateDirectory, Callable[[str], None]], T]) -> T:
    """Run an import into the state directory with a progress line; every input problem goes to
    stderr (and -o json) before the count line ends the command."""
    from kjbod.common.problems import ValidationFailed

    try:
        with Progress(app_, "Importing") as progress:
            return run(app_.state_directory(progress), progress)
    except ValidationFailed as exc:
        report_problems(app_, exc.problems)
        raise


def _from_files(
    app_: AppContext, brokers: Path, assignment: Path, log_dirs: list[Path], metadata_version: str | None, cluster_id: str | None
) -> None:
    from kjbod.tools.importer.from_files import ImportRequest, import_cluster

    request = ImportRequest(brokers, assignment, log_dirs, metadata_version, cluster_id, app_.kafka)
    summary = _importing(app_, lambda target, progress: import_cluster(request, target, progress=progress))
    emit(app_, Lines(summary.lines(), summary.to_json()))


def _from_snapshot(app_: AppContext, snapshot: Path, metadata_log: Path | None, log_dirs: list[Path], cluster_id: str | None) -> None:
    from kjbod.tools.importer.from_snapshot import SnapshotImportRequest, import_from_snapshot

    request = SnapshotImportRequest(snapshot, metadata_log, log_dirs, cluster_id, app_.kafka)
    summary = _importing(app_, lambda target, progress: import_from_snapshot(request, target, progress=progress))
    for warning in summary.warnings:
        app_.message(warning)
    emit(app_, Lines(summary.lines(), summary.to_json()))
