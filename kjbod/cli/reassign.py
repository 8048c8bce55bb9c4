"""`kjbod reassign` (mirrors kafka-reassign-partitions, plus plan and check).

Subcommands replace Kafka's action flags; options keep Kafka's names. There is no
--bootstrap-server: the commands act on the cluster state (--state).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from kjbod.cli import completion
from kjbod.cli import reassign_check, reassign_plan, reassign_run
from kjbod.cli.context import AppContext, app_context
from kjbod.cli.render import Lines, emit, verbatim

app = typer.Typer(
    help="Partition reassignment, as kafka-reassign-partitions: generate, execute, verify, cancel, list (and plan, check, run).\n\n"
    "Example: kjbod reassign plan --goal balance --output-file plan.json",
    no_args_is_help=True,
)

ReassignmentFile = Annotated[
    Path,
    typer.Option(
        "--reassignment-json-file", metavar="F",
        help=verbatim(
            "The reassignment, in Kafka's JSON:",
            '{"version":1,"partitions":[',
            ' {"topic":"foo","partition":1,"replicas":[1,2,3],',
            '  "log_dirs":["any","/mnt/d2","any"]}]}',
        ),
    ),
]
PreserveThrottles = Annotated[
    bool, typer.Option("--preserve-throttles", help="Do not clear the broker and topic throttles.")
]


def register(root: typer.Typer) -> None:
    # The planner and the CI gate live in their own modules and add their commands here.
    reassign_plan.add_commands(app)
    reassign_check.add_commands(app)
    reassign_run.add_commands(app)
    root.add_typer(app, name="reassign")


def _read(path: Path) -> str:
    # As Kafka reads it (Utils.readFileAsString: new String(bytes, UTF_8)): bytes that are not
    # UTF-8 become U+FFFD, and the JSON parser then reports the problem.
    return path.read_text(encoding="utf-8", errors="replace")


def _finish(app_: AppContext, report) -> None:
    """Print an action's lines (or its JSON document), then fail with its error, if any."""
    from kjbod.errors import UserError

    emit(app_, Lines(list(report.lines), report.data))
    if report.error:
        raise UserError(report.error)


@app.command()
def generate(
    ctx: typer.Context,
    topics_to_move_json_file: Annotated[
        Path, typer.Option("--topics-to-move-json-file", metavar="F", help=verbatim("The topics to move:", '{"topics":[{"topic":"foo"}],"version":1}'))
    ],
    broker_list: Annotated[
        str, typer.Option("--broker-list", metavar="LIST", help='The brokers to assign to, as "0,1,2".', autocompletion=completion.broker_list)
    ],
    disable_rack_aware: Annotated[bool, typer.Option("--disable-rack-aware", help="Ignore the brokers' racks.")] = False,
    seed: Annotated[
        Optional[int], typer.Option("--seed", help="Seed for the random start and shift (java.util.Random), for a repeatable proposal.")
    ] = None,
) -> None:
    """Propose a reassignment of the topics over the brokers (Kafka's rack-aware AdminUtils).

    Prints the current assignment and the proposal; nothing changes.
    Example: kjbod reassign generate --topics-to-move-json-file topics.json --broker-list 1,2,3 --seed 7
    """
    from kjbod.tools.reassign.actions import generate as generate_

    app_ = app_context(ctx)
    topics_json = _read(topics_to_move_json_file)
    image = app_.read_image()
    _finish(app_, generate_(image, topics_json, broker_list, disable_rack_aware=disable_rack_aware, seed=seed))


@app.command()
def execute(
    ctx: typer.Context,
    reassignment_json_file: ReassignmentFile,
    throttle: Annotated[
        str,
        typer.Option("--throttle", metavar="BPS", help="Inter-broker replication throttle in bytes/s, or with a unit: 50MiB, 50MB (negative: none)."),
    ] = "-1",
    replica_alter_log_dirs_throttle: Annotated[
        str,
        typer.Option(
            "--replica-alter-log-dirs-throttle", metavar="BPS",
            help="Throttle of moves between log directories in bytes/s, or with a unit: 100MiB (negative: none).",
        ),
    ] = "-1",
    additional: Annotated[
        bool, typer.Option("--additional", help="Execute while other reassignments run; also how to change the throttle of a running one.")
    ] = False,
    timeout: Annotated[
        str, typer.Option("--timeout", metavar="MS", help="Accepted for Kafka compatibility: kjbod starts log-directory moves at once.")
    ] = "10000",
    disallow_replication_factor_change: Annotated[
        bool,
        typer.Option(
            "--disallow-replication-factor-change",
            help="Denies the ability to change a partition's replication factor as part of this reassignment through adding "
            "validation against it (KIP-860): each such partition is refused.",
        ),
    ] = False,
) -> None:
    """Start the reassignment: prints the current assignment to keep for rollback, sets the throttles.

    Example: kjbod reassign execute --reassignment-json-file plan.json --throttle 50MB
    """
    from kjbod.common.java import parse_long_option
    from kjbod.common.units import parse_rate
    from kjbod.tools.reassign.actions import execute as execute_
    from kjbod.tools.reassign.json_format import parse_reassignment_json

    app_ = app_context(ctx)
    inter_broker = parse_rate(throttle, "throttle")
    log_dirs = parse_rate(replica_alter_log_dirs_throttle, "replica-alter-log-dirs-throttle")
    parse_long_option(timeout, "timeout")
    plan = parse_reassignment_json(_read(reassignment_json_file))
    result, _ = app_.run(
        lambda c: execute_(
            c, plan, throttle=inter_broker, log_dir_throttle=log_dirs, additional=additional,
            disallow_replication_factor_change=disallow_replication_factor_change,
        )
    )
    _finish(app_, result.response)


@app.command()
def verify(ctx: typer.Context, reassignment_json_file: ReassignmentFile, preserve_throttles: PreserveThrottles = False) -> None:
    """Report the reassignment's status, copy progress and time left; clear the throttles once done.

    Example: kjbod reassign verify --reassignment-json-file plan.json
    """
    from kjbod.tools.reassign.actions import verify as verify_
    from kjbod.tools.reassign.json_format import parse_reassignment_json

    app_ = app_context(ctx)
    plan = parse_reassignment_json(_read(reassignment_json_file))
    result, _ = app_.run(lambda c: verify_(c, plan, preserve_throttles=preserve_throttles))
    _finish(app_, result.response)


@app.command()
def cancel(
    ctx: typer.Context,
    reassignment_json_file: ReassignmentFile,
    preserve_throttles: PreserveThrottles = False,
    timeout: Annotated[
        str, typer.Option("--timeout", metavar="MS", help="Accepted for Kafka compatibility: kjbod moves replicas back at once.")
    ] = "10000",
) -> None:
    """Cancel the file's running reassignments and log-directory moves, then clear the throttles.

    Example: kjbod reassign cancel --reassignment-json-file plan.json
    """
    from kjbod.common.java import parse_long_option
    from kjbod.tools.reassign.actions import cancel as cancel_
    from kjbod.tools.reassign.json_format import parse_reassignment_json

    app_ = app_context(ctx)
    parse_long_option(timeout, "timeout")
    plan = parse_reassignment_json(_read(reassignment_json_file))
    result, _ = app_.run(lambda c: cancel_(c, plan, preserve_throttles=preserve_throttles))
    _finish(app_, result.response)


@app.command("list")
def list_(ctx: typer.Context) -> None:
    """List the reassignments in progress.

    Example: kjbod reassign list
    """
    from kjbod.tools.reassign.actions import list_reassignments

    app_ = app_context(ctx)
    _finish(app_, list_reassignments(app_.read_image()))
