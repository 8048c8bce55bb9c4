"""`kjbod format` and `kjbod meta` (mirror kafka-storage format / info / random-uuid, plus the
KIP-858 broker start-up rule as `meta ensure-ids`).

Text mode prints kafka-storage's lines on its streams; `-o json` prints one document.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Optional

import typer

from kjbod.cli import completion
from kjbod.cli.context import AppContext, app_context
from kjbod.cli.render import Lines, emit

if TYPE_CHECKING:
    from collections.abc import Sequence

    from kjbod.storage.ensemble import LoadedDirectory
    from kjbod.tools.storage.meta import EnsureIdsResult, InfoReport
    from kjbod.tools.storage.formatter import DirectoryPlan, FormatOutcome

meta_app = typer.Typer(
    help="Read and repair the meta.properties of this node's log directories.\n\nExample: kjbod meta info -c /etc/kafka/server.properties", no_args_is_help=True
)

ConfigOption = Annotated[
    Path,
    typer.Option("--config", "-c", metavar="FILE", help="The node's server.properties (log.dirs, node.id, process.roles, ...)."),
]


# format ----------------------------------------------------------------------------------------


def format_command(
    ctx: typer.Context,
    config: ConfigOption,
    cluster_id: Annotated[
        str, typer.Option("--cluster-id", "-t", metavar="ID", help="The cluster id (kjbod meta random-uuid makes one).")
    ],
    release_version: Annotated[
        Optional[str],
        typer.Option(
            "--release-version", "-r", metavar="VERSION",
            help="The metadata.version to bootstrap, e.g. 4.3 or 4.3-IV0 (default: the latest production version, 4.3-IV0).",
            autocompletion=completion.release_version,
        ),
    ] = None,
    feature: Annotated[
        Optional[list[str]],
        typer.Option("--feature", "-f", metavar="NAME=LEVEL", help="A feature level to bootstrap, e.g. group.version=1; repeatable."),
    ] = None,
    ignore_formatted: Annotated[
        bool, typer.Option("--ignore-formatted", "-g", help="Leave formatted directories alone and format the others.")
    ] = False,
    standalone: Annotated[
        bool, typer.Option("--standalone", "-s", help="This controller alone is the initial KIP-853 voter set.")
    ] = False,
    initial_controllers: Annotated[
        Optional[str],
        typer.Option(
            "--initial-controllers", "-I", metavar="SPEC",
            help="The initial KIP-853 voters: id@host:port:directoryId,...",
        ),
    ] = None,
    no_initial_controllers: Annotated[
        bool,
        typer.Option("--no-initial-controllers", "-N", help="Format a controller without an initial voter set."),
    ] = False,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Check and print what would be written; write nothing.")] = False,
) -> None:
    """Format this node's log directories, as kafka-storage format.

    Writes meta.properties (cluster id, node id, a new directory.id) and bootstrap.checkpoint in
    every directory that needs them, and with --standalone or --initial-controllers the KIP-853
    bootstrap snapshot (the initial voter set) in the metadata directory; formatted directories
    are never modified. On a controller, also initialises the cluster state (--state) with the
    bootstrap feature levels if it holds no records yet.

    Example: kjbod format -c /etc/kafka/server.properties -t XcZZOzUqS4yHOjhMQB6JLQ --ignore-formatted
    """
    from kjbod.tools.storage.formatter import FormatFailed, FormatRequest, NoDirectoriesToFormat
    from kjbod.tools.storage.format import format_storage

    app_ = app_context(ctx)
    request = FormatRequest(
        config_path=config,
        cluster_id=cluster_id,
        release_version=release_version,
        features=tuple(feature or ()),
        ignore_formatted=ignore_formatted,
        standalone=standalone,
        initial_controllers=initial_controllers,
        no_initial_controllers=no_initial_controllers,
    )
    try:
        outcome = format_storage(request, app_.state_directory(), dry_run=dry_run)
    except NoDirectoriesToFormat as exc:
        # Kafka prints its "I/O error" lines on stdout, then fails.
        _warn_unreadable(app_, exc.unreadable, "then run format again")
        if not app_.json:
            emit(app_, Lines(_unreadable_lines(exc.unreadable), None))
        raise
    except FormatFailed as exc:
        _emit_format(app_, exc.outcome)
        raise
    # As kafka-storage format: the other directories are formatted and the exit code is 0; the
    # warning on stderr names the directory that was left alone.
    _emit_format(app_, outcome)


def _unreadable_lines(unreadable: Sequence[DirectoryPlan]) -> list[str]:
    return [f"I/O error trying to read log directory {d.path}. Ignoring..." for d in unreadable]


def _warn_unreadable(app_: AppContext, unreadable: Sequence[DirectoryPlan], advice: str) -> None:
    for directory in unreadable:
        app_.message(
            f"Warning: log directory {directory.path} was not formatted: {directory.error}; "
            f"fix it or remove it from log.dirs, {advice}"
        )


def _emit_format(app_: AppContext, outcome: FormatOutcome) -> None:
    from kjbod.tools.storage.formatter import DirectoryStatus, StateStatus

    plan = outcome.plan
    mv = plan.metadata_version
    lines = _unreadable_lines(plan.unreadable)
    if plan.all_formatted:
        lines.append("All of the log directories are already formatted.")
    # Sorted directory order (Kafka: Java HashMap order), see kjbod.tools.storage.formatter.
    for result in outcome.directories:
        kind = result.plan.kind.value if result.plan.kind else ""
        if result.status in (DirectoryStatus.FORMATTED, DirectoryStatus.FAILED):
            lines.append(f"Formatting {kind} {result.plan.path} with metadata.version {mv}.")
        elif result.status is DirectoryStatus.WOULD_FORMAT:
            # No directory.id here: a real run draws new random ids (-o json shows the plan's).
            lines.append(f"Would format {kind} {result.plan.path} with metadata.version {mv}.")
    state = outcome.state
    _warn_unreadable(app_, plan.unreadable, "then run format again with --ignore-formatted")
    # stdout carries kafka-storage's lines; what kjbod adds (the cluster state) goes to stderr.
    if state is not None and state.status is StateStatus.INITIALISED:
        app_.message(f"Initialised the cluster state {state.path} with metadata.version {mv}.")
    elif state is not None and state.status is StateStatus.WOULD_INITIALISE:
        app_.message(f"Would initialise the cluster state {state.path} with metadata.version {mv} if it holds no records yet.")
    if state is not None and state.status is StateStatus.ALREADY_INITIALISED:
        app_.message(f"The cluster state {state.path} already holds records; it was left as it is.")
    emit(app_, Lines(lines, outcome.to_json()))


# meta ------------------------------------------------------------------------------------------


@meta_app.command("info")
def meta_info(ctx: typer.Context, config: ConfigOption) -> None:
    """Check the log directories of this node (kafka-storage info); exits 1 if it finds problems.

    Example: kjbod meta info -c /etc/kafka/server.properties
    """
    from kjbod.errors import AlreadyReported
    from kjbod.tools.storage.meta import storage_info

    app_ = app_context(ctx)
    report = storage_info(config)
    emit(app_, Lines(_info_lines(report), _info_data(report)))
    if report.problems:
        # kafka-storage info reports problems on stdout and exits 1 without an error message.
        raise AlreadyReported(f"{len(report.problems)} problem(s) found in the log directories of {config}")


def _java_map_string(props: dict[str, str]) -> str:
    """Java TreeMap.toString: {k1=v1, k2=v2} in key order."""
    items = sorted(props.items(), key=lambda item: item[0].encode("utf-16-be"))
    return "{" + ", ".join(f"{key}={value}" for key, value in items) + "}"


def _info_lines(report: InfoReport) -> list[str]:
    lines: list[str] = []
    if report.found_directories:
        lines.append("Found log directory:" if len(report.found_directories) == 1 else "Found log directories:")
        lines.extend(f"  {directory}" for directory in report.found_directories)
        lines.append("")
    if report.metadata is not None:
        lines.append(f"Found metadata: {_java_map_string(report.metadata.to_properties())}")
        lines.append("")
    if report.problems:
        lines.append("Found problem:" if len(report.problems) == 1 else "Found problems:")
        lines.extend(f"  {problem}" for problem in report.problems)
        lines.append("")
    return lines


def _info_data(report: InfoReport) -> dict[str, object]:
    return {
        "config": str(report.config_path),
        "foundDirectories": report.found_directories,
        "metadata": report.metadata.to_properties() if report.metadata else None,
        "problems": report.problems,
        "directories": [d.to_json() for d in report.directories],
    }


@meta_app.command("show")
def meta_show(
    ctx: typer.Context,
    directories: Annotated[list[str], typer.Argument(metavar="DIR...", help="Log directories to read.")],
) -> None:
    """Show the meta.properties of each directory given; exits 1 if one cannot be read.

    Example: kjbod meta show /data/d1 /data/d2
    """
    from kjbod.errors import OperationFailed
    from kjbod.tools.storage.meta import show_directories

    app_ = app_context(ctx)
    loaded = show_directories(directories)
    emit(app_, Lines([_show_line(d) for d in loaded], {"directories": [d.to_json() for d in loaded]}))
    failed = sum(1 for d in loaded if d.error is not None)
    if failed:
        raise OperationFailed(f"{failed} out of {len(loaded)} operation(s) failed.")


def _show_line(directory: LoadedDirectory) -> str:
    if directory.meta is not None:
        return f"{directory.path}: {directory.meta}"
    if directory.error is not None:
        return f"{directory.path}: {directory.error}"
    return f"{directory.path}: not formatted (no meta.properties)"


@meta_app.command("random-uuid")
def meta_random_uuid(
    ctx: typer.Context,
    directory_id: Annotated[
        bool, typer.Option("--directory-id", help="A directory id: never one of KIP-858's reserved ids.")
    ] = False,
) -> None:
    """Print a new random Kafka Uuid (kafka-storage random-uuid), e.g. for --cluster-id.

    Example: kjbod meta random-uuid
    """
    from kjbod.common.kafka_uuid import DirectoryId, Uuid

    app_ = app_context(ctx)
    value = DirectoryId.random() if directory_id else str(Uuid.random())
    emit(app_, Lines([value], {"uuid": value}))


@meta_app.command("ensure-ids")
def meta_ensure_ids(
    ctx: typer.Context,
    config: ConfigOption,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Print the ids that would be written; write nothing.")] = False,
) -> None:
    """Give every formatted log directory a directory.id, as a broker does at start-up (KIP-858).

    Fails if two directories share an id or the directories disagree on cluster or node id;
    other keys of meta.properties are kept. Prints each directory's id.

    Example: kjbod meta ensure-ids -c /etc/kafka/server.properties
    """
    from kjbod.tools.storage.meta import EnsureIdsFailed, ensure_directory_ids

    app_ = app_context(ctx)
    try:
        result = ensure_directory_ids(config, dry_run=dry_run)
    except EnsureIdsFailed as exc:
        _emit_ensure_ids(app_, exc.result)
        raise
    _emit_ensure_ids(app_, result)


def _emit_ensure_ids(app_: AppContext, result: EnsureIdsResult) -> None:
    from kjbod.tools.storage.meta import IdStatus

    lines = []
    for item in result.directories:
        if item.status is IdStatus.OFFLINE:
            lines.append(f"{item.path}: offline ({item.error})")
        elif item.status is IdStatus.EXISTING:
            lines.append(f"{item.path}: {item.directory_id}")
        elif item.written:
            lines.append(f"{item.path}: {item.directory_id} (new)")
        elif result.dry_run:
            lines.append(f"{item.path}: {item.directory_id} (new; not written: dry run)")
        elif item.error is None:
            continue  # not reached: a write before it failed
        else:
            lines.append(f"{item.path}: {item.directory_id} (new; not written: {item.error})")
    emit(app_, Lines(lines, result.to_json()))


def register(root: typer.Typer) -> None:
    """Adds the top-level `format` command and the `meta` group."""
    root.command("format")(format_command)
    root.add_typer(meta_app, name="meta")
