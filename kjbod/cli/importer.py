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

    request = ImportRequest(brokers, assignment, log_dirs, metadata_version, cluster_id)
    summary = _importing(app_, lambda target, progress: import_cluster(request, target, progress=progress))
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


def _from_snapshot(app_: AppContext, snapshot: Path, metadata_log: Path | None, log_dirs: list[Path], cluster_id: str | None) -> None:
    from kjbod.tools.importer.from_snapshot import SnapshotImportRequest, directories_by_broker, import_from_snapshot

    request = SnapshotImportRequest(snapshot, metadata_log, log_dirs, cluster_id)
    summary = _importing(app_, lambda target, progress: import_from_snapshot(request, target, progress=progress))
    for warning in summary.warnings:
        app_.message(warning)
    offline = f" ({summary.offline_directories} offline)" if summary.offline_directories else ""
    reassigning = f", {summary.reassigning_partitions} being reassigned" if summary.reassigning_partitions else ""
    source = f"Read {summary.snapshot_records} records from the snapshot {summary.source_snapshot}"
    if metadata_log is not None:
        source += f" and {summary.log_records} from {summary.log_segments} log segment(s) after it"
    lines = [
        f"Imported {summary.brokers} broker(s) with {summary.directories} log directories{offline}, {summary.topics} topic(s) "
        f"and {summary.partitions} partition(s) ({summary.replicas} replicas{reassigning}) into {summary.state} "
        f"at metadata.version {summary.metadata_version}.",
        source + ".",
    ]
    if summary.torn_batch:
        lines.append(f"Ignored a torn last batch of the log (an interrupted write): {summary.torn_batch}.")
    if summary.dropped_in_transactions or summary.open_transaction:
        still_open = " (a transaction still open at the end of the log)" if summary.open_transaction else ""
        lines.append(f"Left out {summary.dropped_in_transactions} record(s) of aborted metadata transactions{still_open}.")
    if summary.not_modelled:
        counted = ", ".join(f"{name} {count}" for name, count in summary.not_modelled.items())
        lines.append(f"Records kjbod does not model, counted and left out: {counted}.")
    if log_dirs:
        lines.append(
            f"Joined {summary.joined_directories} of {summary.directories} log directories to their paths through the kafka-log-dirs output."
        )
    unjoined = directories_by_broker(summary)
    if unjoined:
        named = "; ".join(f"broker {broker}: {', '.join(ids)}" for broker, ids in sorted(unjoined.items()))
        lines.append(f"{len(summary.unjoined_directories)} log director{'y keeps its id as its path' if len(summary.unjoined_directories) == 1 else 'ies keep their id as their path'}: {named}.")
    if summary.unjoined_paths:
        lines.append(f"Paths in the kafka-log-dirs output no directory id was found for (empty or failed): {'; '.join(summary.unjoined_paths)}.")
    if log_dirs:
        lines.append(
            f"Sizes known for {summary.sized_partitions} partition(s); {summary.replica_logs} replica(s) lagging or partial; "
            f"{summary.future_replicas} future replica(s)."
        )
    if summary.quorum_leader is not None:
        voters = ", ".join(str(v["voterId"]) for v in sorted(summary.voters, key=lambda v: v["voterId"]))
        lines.append(
            f"Controller quorum: voters {voters} (kraft.version {summary.kraft_version}); the snapshot does not say which "
            f"leads, so controller {summary.quorum_leader} does here."
        )
    lines.append(f"Wrote {summary.records} records and a snapshot.")
    emit(app_, Lines(lines, summary.to_json()))
