"""The `kjbod` command: global options, command groups, and the one error handler.

Command modules import only Typer and this package's CLI helpers at module level; the library
(pydantic models, the log) is imported inside each command, so `kjbod --help` and
`kjbod --version` start fast and never load pyspark. The `kjbod` script has Typer build only the
command its command line names (`command_app`), and a read loads only what it reads
(tests/cli/test_app.py checks the reads bench/bench_scale.py times).
"""

from __future__ import annotations

import copy
import os
import sys
import traceback
from pathlib import Path
from typing import Annotated, Any

import typer
from typer.core import TyperGroup

from kjbod import __version__
from kjbod.cli import assign_dirs, broker, clock, elect, features, importer, log_dirs, metadata, quorum, reassign, storage, topic
from kjbod.cli.context import AppContext, OutputFormat
from kjbod.cli.render import emit_error, emit_error_document
from kjbod.common.kafka_release import NEWEST, kafka_release
from kjbod.errors import UsageError
from kjbod.log.lock import DEFAULT_LOCK_TIMEOUT

HELP = """Operator toolkit for Apache Kafka clusters that run JBOD (several log directories per broker).

Storage tools that work on real directories (format, meta, log-dirs --from-disk), a KRaft-style
controller state kept as a record log (--state), and a placement planner on Spark.

Example: kjbod --state ./prod-state -o json topic describe orders
"""


def _is_parser_signal(exc: BaseException) -> bool:
    """Typer's own exits and the usage errors of its (vendored) Click, which it reports itself."""
    return isinstance(exc, (typer.Exit, typer.Abort)) or (hasattr(exc, "exit_code") and hasattr(exc, "show"))


def _debug_enabled(app: AppContext | None) -> bool:
    if app is not None:
        return app.debug
    return os.environ.get("KJBOD_DEBUG", "").lower() in ("1", "true", "yes", "on")


def report_error(app: AppContext | None, exc: BaseException) -> int:
    """Print one line for `exc` (a traceback too with --debug; then kjbod's note, if the error has
    one) and return the exit code. An error whose output already reported it prints nothing."""
    from kjbod.errors import AlreadyReported, KjbodError

    if isinstance(exc, KjbodError):
        message, code = exc.message, exc.exit_code
    elif isinstance(exc, OSError):
        target = f": {exc.filename}" if exc.filename else ""
        message, code = f"{exc.strerror or exc}{target}", 1
    else:
        message = f"internal error: {type(exc).__name__}: {exc} (run with --debug for the traceback and report it)"
        code = 1
    target_app = app or AppContext(state_dir=Path("kjbod-state"))
    if _debug_enabled(app):
        target_app.stderr.write("".join(traceback.format_exception(exc)))
    if isinstance(exc, AlreadyReported):
        emit_error_document(target_app, message, code)  # nothing, unless no document was written
        return code
    emit_error(target_app, message, code)
    note = getattr(exc, "note", None)
    if note:
        target_app.message(note)
    return code


def _is_usage_error(exc: BaseException) -> bool:
    """A malformed command line as (vendored) Click reports it: exit code 2, a message."""
    return getattr(exc, "exit_code", None) == 2 and callable(getattr(exc, "format_message", None))


def _usage_message(exc: Any) -> str:
    if type(exc).__name__ == "NoArgsIsHelpError":  # its message is the whole help text
        return f"Missing command: see '{exc.ctx.command_path} --help'"
    return str(exc.format_message())


def _global_options(args: list[str]) -> tuple[OutputFormat, list[str], str | None]:
    """Read from the raw command line: the --output that the global options ask for, the flags
    among them, and the command after them (None when there is none)."""
    output, flags, index = OutputFormat.text, [], 0
    while index < len(args):
        token = args[index]
        value = None
        if token in ("-o", "--output"):
            value, index = (args[index + 1] if index + 1 < len(args) else ""), index + 2
        elif token.startswith("--output="):
            value, index = token.partition("=")[2], index + 1
        elif token.startswith("-o") and not token.startswith("--"):
            value, index = token[2:], index + 1
        elif token in ("--state", "--lock-timeout", "--kafka-version"):
            index += 2
        elif token.startswith("-"):
            flags.append(token)
            index += 1
        else:
            return output, flags, token  # the command: global options come before it
        if value is not None and value.lower() in ("text", "json"):
            output = OutputFormat(value.lower())
    return output, flags, None


def _output_in(args: list[str]) -> OutputFormat:
    """The --output that the global options ask for, read from the raw command line (for an
    error found before the root callback has run)."""
    return _global_options(args)[0]


def _json_usage_error(app: AppContext, exc: BaseException) -> None:
    """`-o json` promises one JSON document on stdout, for a malformed command line too; Click
    then prints its usage and message on stderr and exits 2."""
    if _is_usage_error(exc):
        emit_error_document(app, _usage_message(exc), 2)


class KjbodGroup(TyperGroup):
    """The root group: turns library errors into the contract's exit codes."""

    def make_context(self, info_name: str | None, args: list[str], parent: Any = None, **extra: Any) -> Any:
        raw = list(args)
        try:
            return super().make_context(info_name, args, parent=parent, **extra)
        except Exception as exc:
            # A bad global option or value: the root callback has not run, so read -o here.
            _json_usage_error(AppContext(state_dir=Path("kjbod-state"), output=_output_in(raw)), exc)
            raise

    def invoke(self, ctx: typer.Context) -> Any:
        try:
            return super().invoke(ctx)
        except BrokenPipeError:
            # The reader of stdout went away (`kjbod topic describe | head`): stop quietly, as Unix
            # tools do. Output comes after the state is written, so nothing is left half-done.
            _discard_stdout()
            raise typer.Exit(1) from None
        except Exception as exc:
            if _is_parser_signal(exc):
                # An unknown command is found before the root callback makes the context.
                output = ctx.params.get("output", OutputFormat.text)
                _json_usage_error(ctx.obj if isinstance(ctx.obj, AppContext) else AppContext(Path("kjbod-state"), output), exc)
                raise
            app = ctx.obj if isinstance(ctx.obj, AppContext) else None
            raise typer.Exit(report_error(app, exc)) from None


def _discard_stdout() -> None:
    """Point stdout at /dev/null so the interpreter's last flush does not fail again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):  # stdout without a file descriptor (a test's capture)
        pass


def _version(value: bool) -> None:
    if value:
        typer.echo(f"kjbod {__version__}")
        raise typer.Exit()


app = typer.Typer(
    name="kjbod",
    cls=KjbodGroup,
    help=HELP,
    rich_markup_mode=None,
    pretty_exceptions_enable=False,
    no_args_is_help=True,
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
)


@app.callback()
def root(
    ctx: typer.Context,
    state: Annotated[
        Path,
        typer.Option("--state", envvar="KJBOD_STATE", metavar="DIR", help="The cluster state directory (record log and snapshots)."),
    ] = Path("kjbod-state"),
    output: Annotated[
        OutputFormat,
        typer.Option("--output", "-o", case_sensitive=False, help="text for people; json for exactly one JSON document on stdout."),
    ] = OutputFormat.text,
    lock_timeout: Annotated[
        float,
        typer.Option("--lock-timeout", min=0, metavar="SECONDS", envvar="KJBOD_LOCK_TIMEOUT", help="How long a write waits for another writer's lock before exiting 3."),
    ] = DEFAULT_LOCK_TIMEOUT,
    kafka_version: Annotated[
        str,
        typer.Option(
            "--kafka-version",
            envvar="KJBOD_KAFKA_VERSION",
            metavar="4.3|4.4",
            help="The Kafka release to mirror: its metadata.versions, features, defaults, texts and format layout "
            "(4.3 as 4.3.1, 4.4 as 4.4.0).",
        ),
    ] = NEWEST.name,
    debug: Annotated[
        bool, typer.Option("--debug", envvar="KJBOD_DEBUG", help="Print a traceback with every error.")
    ] = False,
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version and exit.")
    ] = False,
) -> None:
    try:
        kafka = kafka_release(kafka_version)
    except UsageError as exc:
        raise typer.BadParameter(exc.message, param_hint="'--kafka-version'") from None
    ctx.obj = AppContext(state_dir=state, output=output, lock_timeout=lock_timeout, debug=debug, kafka=kafka)


# The command groups of the contract, in the order `kjbod --help` lists them.
for module in (storage, broker, topic, assign_dirs, elect, features, quorum, reassign, log_dirs, importer, clock, metadata):
    module.register(app)


def command_app(args: list[str]) -> typer.Typer:
    """The app with only the command (or command group) that the command line names, which is
    all the command needs: Typer builds the parameters of every command it holds before it parses
    anything, some 40 ms for all of kjbod's. The whole app when no command is named or the name
    is not one (Click's message then suggests the others), for --help or another flag before
    the command but --debug, and for shell completion."""
    _, flags, name = _global_options(args)
    if name is None or any(flag != "--debug" for flag in flags) or any(key.startswith("_KJBOD_COMPLETE") for key in os.environ):
        return app
    groups = [group for group in app.registered_groups if group.name == name]
    commands = [command for command in app.registered_commands if command.name == name]
    if len(groups) + len(commands) != 1:
        return app
    chosen = copy.copy(app)
    chosen.registered_groups, chosen.registered_commands = groups, commands
    return chosen


def main() -> None:
    # kjbod does no linear algebra: the OpenBLAS thread pool numpy starts as it loads (a thread
    # per core, spinning a while) only takes CPU from the command, ~0.1 s of it on two cores.
    # Set before a command loads numpy; an operator's own setting wins.
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    command_app(sys.argv[1:])(prog_name="kjbod")
