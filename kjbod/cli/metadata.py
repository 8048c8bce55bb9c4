"""`kjbod metadata`: the record log itself (dump, snapshot, verify)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from kjbod.cli.context import AppContext, app_context
from kjbod.cli.render import Lines, emit

app = typer.Typer(
    help="The cluster state's record log: dump it, snapshot it, verify it, export it in Kafka's format.\n\nExample: kjbod metadata verify",
    no_args_is_help=True,
)


@app.command()
def dump(
    ctx: typer.Context,
    from_offset: Annotated[int, typer.Option("--from-offset", min=0, help="Start at this offset.")] = 0,
    record_type: Annotated[
        Optional[list[str]],
        typer.Option("--type", metavar="TYPE", help="Only records of this type (PartitionRecord or PARTITION_RECORD); repeatable."),
    ] = None,
    kafka_file: Annotated[
        Optional[Path],
        typer.Option(
            "--kafka-file",
            metavar="FILE",
            help="Dump this Kafka metadata file instead of the cluster state: a KRaft snapshot, a bootstrap.checkpoint "
            "or a __cluster_metadata log segment, with its batches (as kafka-dump-log --cluster-metadata-decoder).",
        ),
    ] = None,
) -> None:
    """Print the records of the log as JSON lines: offset, type, version and data.

    With --kafka-file, print any Kafka metadata file the same way, each batch's header first
    ({"batch": {...}}); a damaged batch is reported with its byte position (exit 1).

    Example: kjbod metadata dump --type PartitionChangeRecord --from-offset 120
    """
    import json

    from kjbod.errors import UserError
    from kjbod.records.codec import record_type as lookup

    app_ = app_context(ctx)
    if kafka_file is not None:
        _dump_kafka_file(app_, kafka_file, from_offset, record_type or [])
        return
    try:
        wanted = {lookup(name) for name in record_type} if record_type else None
    except ValueError as exc:
        raise UserError(str(exc)) from None
    rows = (
        {"offset": offset, "type": type(record).__name__, "version": record.version, "data": record.data()}
        for offset, record in app_.state_directory().records(from_offset=from_offset)
        if wanted is None or type(record) in wanted
    )
    if app_.json:
        emit(app_, Lines([], list(rows)))
        return
    for row in rows:
        app_.stdout.write(json.dumps(row, separators=(",", ":")) + "\n")


def _dump_kafka_file(app_: AppContext, path: Path, from_offset: int, types: list[str]) -> None:
    import json

    from kjbod.tools.kafka_dump import dump_file

    dump = dump_file(path, from_offset=from_offset, types=types)
    if app_.json:
        emit(app_, Lines([], dump.to_json()))
    else:
        for row in dump.rows:
            app_.stdout.write(json.dumps(row, separators=(",", ":"), ensure_ascii=False) + "\n")
    dump.check()


@app.command()
def export(
    ctx: typer.Context,
    kafka_snapshot: Annotated[
        str,  # not Path: a trailing "/" (a directory meant) must reach the export
        typer.Option(
            "--kafka-snapshot",
            metavar="FILE",
            help="Write the state as a KRaft snapshot to FILE (or, for a directory, to <offset>-<epoch>.checkpoint in it).",
        ),
    ],
) -> None:
    """Write the cluster state as a KRaft snapshot that Kafka's own controller can load.

    Brokers with their log directories and fenced/cordoned state, topics, partitions (replicas,
    ISR, leader, epochs, directories, reassignments in flight), configs and features, at the
    record versions the state's metadata.version selects. kjbod's own records (paths, sizes,
    the clock) are left out. An existing file is never replaced.

    Example: kjbod metadata export --kafka-snapshot /tmp/00000000000000001000-0000000001.checkpoint
    """
    from kjbod.tools.kafka_export import export_kafka_snapshot

    app_ = app_context(ctx)
    image = app_.read_image()
    result = export_kafka_snapshot(image, kafka_snapshot)
    by_type = ", ".join(f"{name} {count}" for name, count in sorted(result.records.items()))
    lines = [
        f"Wrote {result.path} ({result.size} bytes): a KRaft snapshot at metadata.version {result.metadata_version}, "
        f"snapshot id {result.snapshot_id.end_offset}-{result.snapshot_id.epoch}, {result.record_count} records ({by_type}).",
    ]
    if result.left_out:
        left = ", ".join(f"{name} {count}" for name, count in sorted(result.left_out.items()))
        lines.append(f"Left out kjbod's own records (not Kafka's): {left}.")
    emit(app_, Lines(lines, result.to_json()))


@app.command()
def snapshot(ctx: typer.Context) -> None:
    """Write a snapshot of the current state, so the next start loads fast.

    Writes also take one by themselves once enough records follow the newest (metadata verify says
    how many).

    Example: kjbod metadata snapshot
    """
    app_ = app_context(ctx)
    with app_.open_state(write=True) as (state, progress):
        progress("Writing a snapshot")
        path = state.write_snapshot()
        end = state.image.next_offset
    emit(app_, Lines([f"Wrote snapshot {path} (offsets 0 to {end - 1})."], {"snapshot": str(path), "endOffset": end}))


@app.command()
def verify(ctx: typer.Context) -> None:
    """Check every batch checksum, replay every record, and check every snapshot against the log.

    Exits 3 if anything is damaged. Example: kjbod metadata verify
    """
    from kjbod.errors import CorruptStateError

    app_ = app_context(ctx)
    report = app_.state_directory().verify()
    # A snapshot of records from an earlier kjbod does not count: the log is replayed on it slowly.
    records_after = (
        f"{report.records_since_snapshot:,} follow it now"
        if report.newest_columnar_end
        else f"none is in columns yet, so all {report.records_since_snapshot:,} records count"
    )
    lines = [
        f"Segments: {report.segments}",
        f"Records: {report.records} (offsets 0 to {report.next_offset - 1})",
        f"Automatic snapshots: a write that leaves {report.auto_snapshot_records:,} records or more after the newest "
        f"snapshot writes one ({records_after})",
        f"Snapshots verified: {len(report.snapshots_verified)}",
    ]
    if report.record_snapshots:
        lines.append(
            f"Snapshots of records, from an earlier kjbod (slow to load; the next automatic snapshot replaces them): "
            f"{', '.join(report.record_snapshots)}"
        )
    if report.torn_tail is not None:
        lines.append(f"Torn tail (removed by the next write): {report.torn_tail.describe()}")
    lines.extend(f"Problem: {problem}" for problem in report.problems)
    lines.append("The cluster state is damaged." if report.problems else "The cluster state is intact.")
    data = {
        "segments": report.segments,
        "records": report.records,
        "nextOffset": report.next_offset,
        "snapshotsVerified": report.snapshots_verified,
        "recordsSinceSnapshot": report.records_since_snapshot,
        "autoSnapshotRecords": report.auto_snapshot_records,
        "recordSnapshots": report.record_snapshots,
        "tornTail": report.torn_tail.describe() if report.torn_tail else None,
        "problems": report.problems,
        "intact": not report.problems,
    }
    emit(app_, Lines(lines, data))
    if report.problems:
        raise CorruptStateError(f"{len(report.problems)} problem(s) found in {app_.state_dir}")


def register(root: typer.Typer) -> None:
    root.add_typer(app, name="metadata")

