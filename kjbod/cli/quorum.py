"""`kjbod quorum`: the controller quorum (KIP-853), as kafka-metadata-quorum, plus kjbod's own
start-controller and stop-controller to rehearse controllers joining, failing and returning.

Text mode keeps Kafka's streams: describe's lines and add/remove-controller's one line on stdout,
a refusal as the exception Kafka's tool prints (`org.apache.kafka.common.errors...: message`) on
stderr, then kjbod's note on what to do. kjbod has no bootstrap servers, so Kafka's
--bootstrap-server, --bootstrap-controller and --command-config (for the admin client) are gone;
add-controller's --config is the new controller's server.properties (Kafka reads it from
--command-config). unregister-controller is kafka-cluster's (KIP-1312, 4.4), here because it
completes remove-controller --unregister.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from kjbod.cli.context import AppContext, app_context
from kjbod.cli.render import Lines, emit

app = typer.Typer(
    help="The controller quorum (KIP-853), as kafka-metadata-quorum: describe it, add and remove controllers; "
    "start and stop controller processes to rehearse.\n\nExample: kjbod quorum describe --status",
    no_args_is_help=True,
)

ConfigOption = Annotated[
    Path,
    typer.Option(
        "--config", "-c", "--command-config", metavar="FILE",
        help="The controller's server.properties (node.id, process.roles, controller.listener.names, listeners, log.dirs "
        "or metadata.log.dir); its formatted metadata directory gives the directory id.",
    ),
]
DryRunOption = Annotated[bool, typer.Option("--dry-run", help="Check the request against the quorum and print what would be done; change nothing.")]


def register(root: typer.Typer) -> None:
    root.add_typer(app, name="quorum")


@app.command()
def describe(
    ctx: typer.Context,
    status: Annotated[bool, typer.Option("--status", help="A short summary of the quorum status.")] = False,
    replication: Annotated[bool, typer.Option("--replication", help="Detailed information about the status of replication.")] = False,
    human_readable: Annotated[
        bool, typer.Option("--human-readable", help="With --replication: timestamps as how long ago, in simulated time.")
    ] = False,
) -> None:
    """Describe the quorum (kafka-metadata-quorum describe): leader, epoch, high watermark, voters and observers with their lag.

    Timestamps are the simulated clock's milliseconds. Followers fetch while the clock moves, so
    records appended since the last `clock advance` show as their lag.

    Example: kjbod quorum describe --replication
    """
    from kjbod.controller import Controller
    from kjbod.tools.quorum import describe as tool

    app_ = app_context(ctx)
    tool.check_describe_flags(status, replication, human_readable)
    image = app_.read_image()
    # A refusal (no leader) is a QuorumError: the handler prints Kafka's exception line, then kjbod's note.
    info = Controller(image).quorum.describe()
    lines = tool.status_lines(info) if status else tool.replication_lines(info, human_readable)
    emit(app_, Lines(lines, tool.describe_json(info)))


@app.command("add-controller")
def add_controller(ctx: typer.Context, config: ConfigOption, dry_run: DryRunOption = False) -> None:
    """Add a controller to the voter set (kafka-metadata-quorum add-controller).

    The controller must run (kjbod quorum start-controller) and have caught up with the leader;
    kraft.version must be 1 and the previous voter change committed. The change commits at the
    next clock advance at which a majority of the new voter set has fetched it.

    Example: kjbod quorum add-controller --config /etc/kafka/controller-2.properties
    """
    from kjbod.tools.quorum import voter_changes as tool
    from kjbod.tools.quorum.controller_config import read_controller

    app_ = app_context(ctx)
    process = read_controller(config, app_.kafka)
    result, _ = app_.run(lambda c: c.quorum.add_voter(process.key, process.voter_endpoints), dry_run=dry_run)
    _emit_change(app_, result.response, tool.added_line, dry_run)


@app.command("remove-controller")
def remove_controller(
    ctx: typer.Context,
    controller_id: Annotated[int, typer.Option("--controller-id", "-i", metavar="ID", help="The id of the controller to remove.")],
    controller_directory_id: Annotated[
        str, typer.Option("--controller-directory-id", "-d", metavar="DIR_ID", help="The directory ID of the controller to remove.")
    ],
    dry_run: DryRunOption = False,
    unregister: Annotated[
        bool,
        typer.Option(
            "--unregister",
            help="If set, also unregister the controller after successfully removing it from the voter set "
            "(Kafka 4.4, KIP-1312; needs metadata.version 4.4-IV2).",
        ),
    ] = False,
) -> None:
    """Remove a controller from the voter set (kafka-metadata-quorum remove-controller).

    A leader that removes itself keeps leading until the change commits, then resigns. With
    --unregister its registration goes too (UnregisterControllerRecord); a refused unregistration
    leaves the removal made, as Kafka's tool does.

    Example: kjbod quorum remove-controller --controller-id 3 --controller-directory-id ZNJ-ywU0nnQwRv5eRRU9ow --unregister
    """
    from kjbod.tools.quorum import voter_changes as tool

    app_ = app_context(ctx)
    if unregister:
        tool.require_unregister_option(app_.kafka, "remove-controller --unregister")
    key = tool.parse_remove_request(controller_id, controller_directory_id)
    result, image = app_.run(lambda c: c.quorum.remove_voter(key, unregister=unregister), dry_run=dry_run)
    change = result.response
    if not change.error.is_success:
        raise tool.removal_error(change, unregister)
    lines = [tool.removed_line(change.key, dry_run, app_.kafka)]
    if change.unregistration is not None and change.unregistration.is_success:
        lines.append(tool.unregistered_line(controller_id, dry_run))
    emit(app_, Lines(lines, tool.change_json(change, dry_run)))
    for note in tool.change_notes(change, dry_run):
        app_.message(note)
    if change.unregistration is not None and change.unregistration.is_success and image.quorum.running_replica(controller_id):
        app_.message(tool.still_running_note(controller_id))
    if change.unregistration is not None and not change.unregistration.is_success:
        raise tool.unregistration_error(controller_id, change.unregistration)


@app.command("unregister-controller")
def unregister_controller(
    ctx: typer.Context,
    controller_id: Annotated[int, typer.Option("--id", "-i", metavar="ID", help="The ID of the controller to unregister.")],
) -> None:
    """Unregister a controller (kafka-cluster unregister-controller, Kafka 4.4, KIP-1312).

    Removes the controller's registration (UnregisterControllerRecord), not its place in the
    voter set (kjbod quorum remove-controller). The active controller cannot unregister itself.

    Example: kjbod quorum unregister-controller --id 3
    """
    from kjbod.tools.quorum import voter_changes as tool

    app_ = app_context(ctx)
    tool.require_unregister_option(app_.kafka, "unregister-controller")
    result, image = app_.run(lambda c: c.quorum.unregister_controller(controller_id))
    outcome = result.response
    line = tool.unregister_command_line(controller_id, outcome)  # raises a refusal Kafka's tool does not print as a line
    emit(app_, Lines([line], {"controllerId": controller_id, "unregistered": outcome.is_success}))
    if not outcome.is_success:
        app_.message(tool.UNREGISTRATION_NEEDS_4_4_IV2)
    elif image.quorum.running_replica(controller_id):
        app_.message(tool.still_running_note(controller_id))


def _emit_change(app_: AppContext, change, line, dry_run: bool) -> None:  # noqa: ANN001
    from kjbod.tools.quorum import voter_changes as tool

    if not change.error.is_success:
        raise tool.change_error(change)
    emit(app_, Lines([line(change, dry_run)], tool.change_json(change, dry_run)))
    for note in tool.change_notes(change, dry_run):
        app_.message(note)


@app.command("start-controller")
def start_controller(
    ctx: typer.Context,
    config: ConfigOption,
    catch_up_rate: Annotated[
        int, typer.Option("--catch-up-rate", min=1, max=10**12, metavar="RECORDS_PER_SECOND", help="How fast it fetches and replays the metadata log while it catches up.")
    ] = 50_000,
    supported_features: Annotated[
        Optional[list[str]],
        typer.Option("--supported-feature", metavar="NAME=MIN-MAX", help="A range its software supports; default: the latest production release's."),
    ] = None,
) -> None:
    """Start a controller process (kjbod's own): it fetches from the leader as an observer until it is added.

    A new controller (formatted with --no-initial-controllers) starts with an empty log and
    catches up as the clock advances; once caught up it registers. A stopped one resumes
    where it stopped. Starting a voter of controller.quorum.voters tells kjbod its directory id.

    Example: kjbod quorum start-controller --config /etc/kafka/controller-2.properties
    """
    from kjbod.tools.quorum import processes as tool
    from kjbod.tools.quorum.controller_config import read_controller

    app_ = app_context(ctx)
    process = read_controller(
        config, app_.kafka, catch_up_rate=catch_up_rate, supported_features=tool.parse_supported_features(supported_features)
    )
    result, _ = app_.run(lambda c: c.quorum.start_controller(process))
    emit(app_, Lines(tool.started_lines(result.response, catch_up_rate), tool.started_json(result.response)))


@app.command("stop-controller")
def stop_controller(
    ctx: typer.Context,
    controller_id: Annotated[int, typer.Option("--controller-id", "-i", metavar="ID", help="The id of the controller to stop.")],
    controller_directory_id: Annotated[
        Optional[str], typer.Option("--controller-directory-id", "-d", metavar="DIR_ID", help="Its directory id, when it matters which process.")
    ] = None,
) -> None:
    """Stop (or fail) a controller process (kjbod's own): it fetches no more; a leader is replaced by an election.

    Example: kjbod quorum stop-controller --controller-id 3
    """
    from kjbod.tools.quorum import processes as tool

    app_ = app_context(ctx)
    directory = tool.parse_directory_id(controller_directory_id)
    result, _ = app_.run(lambda c: c.quorum.stop_controller(controller_id, directory))
    stopped = result.response
    emit(app_, Lines(tool.stopped_lines(stopped), tool.stopped_json(stopped)))
    for note in tool.stopped_notes(stopped):
        app_.message(note)
