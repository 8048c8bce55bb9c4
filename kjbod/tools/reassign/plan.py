"""`kjbod reassign plan`: the placement planner's plan, written as Kafka's reassignment JSON."""

from __future__ import annotations

import os
from pathlib import Path

import orjson

from kjbod.common.callbacks import Progress, ignore
from kjbod.common.durable import atomic_write
from kjbod.errors import UserError
from kjbod.image import Image
from kjbod.planner import PlannerRun, PlanRequest, run_planner


def check_output_file(path: Path, overwrite: bool) -> None:
    """Fail before planning, not after, when the plan could not be written."""
    if path.exists() and not overwrite:
        raise UserError(f"{path} already exists; choose another --output-file or pass --overwrite to replace it")
    if path.is_dir():
        raise UserError(f"--output-file {path} is a directory; give a file name")
    parent = path.parent if str(path.parent) else Path(".")
    if not parent.is_dir():
        raise UserError(f"The directory of --output-file {path} does not exist; create it first")
    if not os.access(parent, os.W_OK):
        raise UserError(f"Cannot write --output-file {path}: its directory is not writable")


def reassignment_json(run: PlannerRun) -> bytes:
    """The plan as Kafka's reassignment JSON, one line: what --output-file holds."""
    return orjson.dumps(run.report.reassignment) + b"\n"


def plan_reassignment(
    image: Image,
    request: PlanRequest,
    output_file: Path | None,
    *,
    engine: str | None = None,
    spark_master: str | None = None,
    progress: Progress = ignore,
) -> PlannerRun:
    """Plan against the image and write the reassignment JSON to `output_file` (atomically: the
    file is complete or absent; None writes no file: the caller prints it). Nothing in the
    state changes."""
    run = run_planner(image, request, engine=engine, spark_master=spark_master, progress=progress)
    if output_file is None:
        return run
    try:
        atomic_write(output_file, reassignment_json(run), temp_suffix=".kjbod-tmp")
    except OSError as exc:
        raise UserError(f"Cannot write --output-file {output_file}: {exc.strerror or exc}") from None
    run.output_file = output_file
    return run
