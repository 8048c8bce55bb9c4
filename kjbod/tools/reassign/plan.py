"""`kjbod reassign plan`: the placement planner's plan, written as Kafka's reassignment JSON."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

import orjson

from kjbod.common.callbacks import Progress, ignore
from kjbod.common.durable import atomic_write
from kjbod.errors import UserError
from kjbod.image import Image
from kjbod.planner import PlannerRun, PlanRequest, early_engine, run_planner, start_spark

if TYPE_CHECKING:
    from kjbod.planner.session import SparkStarter


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


def spark_before_loading(
    engine: str, spark_master: str | None, spark_conf: Mapping[str, str] | None, *, state_bytes: int | None
) -> SparkStarter | None:
    """A Spark session starting in the background when the planner will most likely run on
    Spark (asked for, a master given, or `auto` expecting a large cluster from the state's size
    on disk); None otherwise. Call it before loading the state: the JVM starts meanwhile."""
    if early_engine(engine, spark_master=spark_master, state_bytes=state_bytes) != "spark":
        return None
    return start_spark(spark_master, spark_conf)


def plan_reassignment(
    image: Image,
    request: PlanRequest,
    output_file: Path | None,
    *,
    engine: str = "auto",
    spark_master: str | None = None,
    spark_conf: Mapping[str, str] | None = None,
    spark: SparkStarter | None = None,
    progress: Progress = ignore,
) -> PlannerRun:
    """Plan against the image and write the reassignment JSON to `output_file` (atomically: the
    file is complete or absent; None writes no file: the caller prints it). Nothing in the
    state changes. `spark`: a session already starting (spark_before_loading), used if the
    Spark engine runs."""
    run = run_planner(image, request, engine=engine, spark_master=spark_master, spark_conf=spark_conf, spark=spark, progress=progress)
    if output_file is None:
        return run
    try:
        atomic_write(output_file, reassignment_json(run), temp_suffix=".kjbod-tmp")
    except OSError as exc:
        raise UserError(f"Cannot write --output-file {output_file}: {exc.strerror or exc}") from None
    run.output_file = output_file
    return run
