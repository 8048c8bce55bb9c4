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
    from kjbod.tools.storage.formatter import FormatOutcome

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
            help="The release version to use for the initial feature settings, e.g. 4.4 or 4.4-IV2. The minimum is 3.3-IV3; "
            "the default is the latest production version of --kafka-version (4.4-IV2 for 4.4, 4.3-IV0 for 4.3). "
            "Note (Kafka 4.4's help): formatted directories are not forward-compatible: the broker version must be greater "
            "than or equal to the kafka-storage tool that formatted the directory, regardless of this setting.",
            autocompletion=completion.release_version,
        ),
    ] = None,
    feature: Annotated[
        Optional[list[str]],
        typer.Option("--feature", "-f", metavar="NAME=LEVEL", help="A feature level to bootstrap, e.g. group.version=1; repeatable."),
    ] = None,
    add_scram: Annotated[
        Optional[list[str]],
        typer.Option(
            "--add-scram", "-S", metavar="MECHANISM=[name=N,password=P]",
            help="A SCRAM credential to bootstrap (a UserScramCredentialRecord), e.g. "
            "'SCRAM-SHA-256=[name=alice,password=alice-secret]' or "
            "'SCRAM-SHA-512=[name=alice,iterations=8192,salt=\"N3E=\",saltedpassword=\"YCE=\"]'; repeatable.",
        ),
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

    Writes meta.properties (cluster id, node id, a new directory.id) in every directory that needs
    one, and the bootstrap metadata as the --kafka-version's kafka-storage writes it: at 4.4, on a
    controller, the bootstrap snapshot __cluster_metadata-0/00000000000000000000-0000000000.checkpoint
    (kraft.version, the initial voters of --standalone or --initial-controllers, the bootstrap
    records); at 4.3, bootstrap.checkpoint in every directory and, with --standalone or
    --initial-controllers, the KIP-853 bootstrap snapshot (the voter set) in the metadata directory.
    Formatted directories are never modified. On a controller, also initialises the cluster state
    (--state) with the bootstrap metadata if it holds no records yet.

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
        release=app_.kafka,
        add_scram=tuple(add_scram or ()),
    )
    try:
        outcome = format_storage(request, app_.state_directory(), dry_run=dry_run)
    except NoDirectoriesToFormat as exc:
        # Kafka prints its "I/O error" lines on stdout, then fails.
        _notes(app_, exc.notes())
        if not app_.json:
            emit(app_, Lines(exc.lines(), None))
        raise
    except FormatFailed as exc:
        _emit_format(app_, exc.outcome)
        raise
    _emit_format(app_, outcome)


def _notes(app_: AppContext, notes: list[str]) -> None:
    for note in notes:
        app_.message(note)


def _emit_format(app_: AppContext, outcome: FormatOutcome) -> None:
    # stdout carries kafka-storage's lines; what kjbod adds (warnings, the cluster state) goes to stderr.
    _notes(app_, outcome.notes())
    emit(app_, Lines(outcome.lines(), outcome.to_json()))


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
    emit(app_, Lines(report.lines(), report.to_json()))
    if report.problems:
        # kafka-storage info reports problems on stdout and exits 1 without an error message.
        raise AlreadyReported(f"{len(report.problems)} problem(s) found in the log directories of {config}")


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
    shown = show_directories(directories)
    emit(app_, Lines(shown.lines(), shown.to_json()))
    if shown.failed:
        raise OperationFailed(f"{shown.failed} out of {len(shown.directories)} operation(s) failed.")


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
        emit(app_, Lines(exc.result.lines(), exc.result.to_json()))
        raise
    emit(app_, Lines(result.lines(), result.to_json()))


def register(root: typer.Typer) -> None:
    """Adds the top-level `format` command and the `meta` group."""
    root.command("format")(format_command)
    root.add_typer(meta_app, name="meta")
