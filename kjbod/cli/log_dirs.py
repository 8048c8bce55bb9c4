"""`kjbod log-dirs` (mirrors kafka-log-dirs): what is on which log directory, from the cluster
state or from a broker's real disks, and loading real kafka-log-dirs output into the state."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from kjbod.cli import completion
from kjbod.cli.context import AppContext, app_context
from kjbod.cli.render import Lines, emit

app = typer.Typer(
    help="Log directories and their contents, as kafka-log-dirs: from the cluster state or a broker's disks; load real output.\n\n"
    "Example: kjbod log-dirs describe --broker-list 1,2",
    no_args_is_help=True,
)


def register(root: typer.Typer) -> None:
    root.add_typer(app, name="log-dirs")


class KafkaLogDirsView:
    """kafka-log-dirs' three stdout lines in text; the same JSON document with -o json.
    Built lazily: for a large cluster only the form that is printed is computed."""

    def __init__(self, report: Any) -> None:
        self.report = report

    def to_json(self) -> Any:
        return self.report.to_kafka_data()

    def to_text(self) -> list[str]:
        return self.report.lines()


def emit_log_dirs(app_: AppContext, report: Any) -> None:
    """With -o json, Kafka's compact document itself (the third text line, byte for byte) is
    the one JSON document: the shared renderer's indented form of a million-partition cluster
    takes four times as long and twice the size, for the same data."""
    if app_.json:
        app_.stdout.write(report.to_kafka_json() + "\n")
        app_.stdout.flush()
        app_.emitted = True
    else:
        emit(app_, KafkaLogDirsView(report))


def report_problems(app_: AppContext, problems: list[str]) -> None:
    """Every problem of an input check on stderr (and as the JSON document with -o json); the
    caller then raises the error whose message is the count line."""
    for problem in problems:
        app_.message(problem)
    if app_.json:
        emit(app_, Lines([], {"problems": problems}))


@app.command()
def describe(
    ctx: typer.Context,
    broker_list: Annotated[
        str | None, typer.Option(
            "--broker-list", help="Only these brokers, comma-separated, e.g. 1,2 (default: every broker).", metavar="IDS",
            autocompletion=completion.broker_list,
        )
    ] = None,
    topic_list: Annotated[
        str | None, typer.Option(
            "--topic-list", help="Only partitions of these topics, comma-separated (default: every topic).", metavar="TOPICS",
            autocompletion=completion.topic_list,
        )
    ] = None,
    from_disk: Annotated[
        bool, typer.Option("--from-disk", help="Scan this host's log directories (needs --config) instead of reading the cluster state.")
    ] = False,
    config: Annotated[
        Path | None,
        typer.Option("--config", "-c", help="With --from-disk: the broker's server.properties (log.dirs or log.dir, metadata.log.dir).", metavar="FILE"),
    ] = None,
) -> None:
    """Show each broker's log directories, the partitions in them and their sizes, as kafka-log-dirs --describe.

    From the cluster state by default. With --from-disk, the directories in the broker's
    server.properties are scanned: partition folders and their segment bytes, future replicas
    (-future, .move), folders waiting for deletion (-delete) and each directory's id from
    meta.properties; an unreadable directory is reported offline. Each logDir object then
    also has two kjbod keys after Kafka's: "pendingDeletion" (partitions whose -delete folder
    is waiting to be removed) and "directoryId" (null without meta.properties). Arrays are
    sorted (brokers, paths, partitions) where Kafka's follow hash order.

    Example: kjbod log-dirs describe --broker-list 1,2 --topic-list orders
    """
    from kjbod.errors import UsageError

    app_ = app_context(ctx)
    if from_disk and config is None:
        raise UsageError("--from-disk needs --config FILE (the broker's server.properties)")
    if config is not None and not from_disk:
        raise UsageError("--config is only used with --from-disk")
    if config is not None:
        from kjbod.tools.log_dirs.disk import describe_from_disk

        scan = describe_from_disk(config, broker_list, topic_list)
        for line in scan.problems:
            app_.message(line)
        report = scan.report
    else:
        from kjbod.tools.log_dirs.report import cordoned_notes, describe_from_image, parse_broker_list

        parse_broker_list(broker_list)  # Kafka checks the list before it asks the cluster
        image = app_.read_image()
        report = describe_from_image(image, broker_list, topic_list)
        for note in cordoned_notes(image, report.broker_ids):
            app_.message(note)
    emit_log_dirs(app_, report)


@app.command("import")
def import_output(
    ctx: typer.Context,
    files: Annotated[
        list[Path], typer.Argument(help="Saved kafka-log-dirs --describe output, with or without its two header lines.", metavar="FILE...")
    ],
) -> None:
    """Load saved kafka-log-dirs output into the cluster state: partition sizes, replica lags and future replicas.

    Output of newer Kafka (DescribeLogDirs v4, KIP-827) also gives each directory's disk size
    (totalBytes): it becomes the directory's capacity.

    Brokers match by id and directories by path. A replica found in another directory than the
    state records is a warning (fix it with assign-dirs); unknown brokers, paths, topics or
    partitions are errors, and then nothing is written.

    Example: kjbod log-dirs import broker-1.txt broker-2.txt
    """
    from kjbod.common.problems import ValidationFailed
    from kjbod.tools.log_dirs.importer import import_log_dirs

    app_ = app_context(ctx)
    try:
        result = app_.run(lambda controller: import_log_dirs(controller, files))[0].response
    except ValidationFailed as exc:
        report_problems(app_, exc.problems)
        raise
    for warning in result.warnings:
        app_.message(warning)
    emit(app_, Lines(result.lines(), result.to_json()))
