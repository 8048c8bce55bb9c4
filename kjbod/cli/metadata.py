"""`kjbod metadata`: the record log itself (dump, snapshot, verify)."""

from __future__ import annotations

from typing import Annotated, Optional

import typer

from kjbod.cli.context import app_context
from kjbod.cli.render import Lines, emit

app = typer.Typer(help="The cluster state's record log: dump it, snapshot it, verify it.\n\nExample: kjbod metadata verify", no_args_is_help=True)


@app.command()
def dump(
    ctx: typer.Context,
    from_offset: Annotated[int, typer.Option("--from-offset", min=0, help="Start at this offset.")] = 0,
    record_type: Annotated[
        Optional[list[str]],
        typer.Option("--type", metavar="TYPE", help="Only records of this type (PartitionRecord or PARTITION_RECORD); repeatable."),
    ] = None,
) -> None:
    """Print the records of the log as JSON lines: offset, type, version and data.

    Example: kjbod metadata dump --type PartitionChangeRecord --from-offset 120
    """
    import json

    from kjbod.errors import UserError
    from kjbod.records.codec import record_type as lookup

    app_ = app_context(ctx)
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


@app.command()
def snapshot(ctx: typer.Context) -> None:
    """Write a snapshot of the current state, so the next start loads fast.

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
    lines = [
        f"Segments: {report.segments}",
        f"Records: {report.records} (offsets 0 to {report.next_offset - 1})",
        f"Snapshots verified: {len(report.snapshots_verified)}",
    ]
    if report.torn_tail is not None:
        lines.append(f"Torn tail (removed by the next write): {report.torn_tail.describe()}")
    lines.extend(f"Problem: {problem}" for problem in report.problems)
    lines.append("The cluster state is damaged." if report.problems else "The cluster state is intact.")
    data = {
        "segments": report.segments,
        "records": report.records,
        "nextOffset": report.next_offset,
        "snapshotsVerified": report.snapshots_verified,
        "tornTail": report.torn_tail.describe() if report.torn_tail else None,
        "problems": report.problems,
        "intact": not report.problems,
    }
    emit(app_, Lines(lines, data))
    if report.problems:
        raise CorruptStateError(f"{len(report.problems)} problem(s) found in {app_.state_dir}")


def register(root: typer.Typer) -> None:
    root.add_typer(app, name="metadata")
