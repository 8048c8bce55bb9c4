"""The placement planner: one kernel (pure functions over tables), run in-process or on Spark.

`plan_reassignment` is what `kjbod reassign plan` calls: read the cluster state, plan, write
Kafka's reassignment JSON, return the report. PySpark is imported only when the Spark engine runs.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path

import orjson

from kjbod.common.callbacks import Progress, ignore
from kjbod.common.durable import atomic_write
from kjbod.errors import UserError
from kjbod.image import Image
from kjbod.planner.core import Goal, PlanRequest, RackMode, plan
from kjbod.planner.report import PlanReport, report
from kjbod.planner.tables import build_tables

# Below this many replicas the local engine is faster than starting Spark.
SPARK_THRESHOLD_REPLICAS = 300_000

__all__ = ["Goal", "PlanRequest", "RackMode", "PlanReport", "PlannerRun", "run_planner", "plan_reassignment", "SPARK_THRESHOLD_REPLICAS"]



@dataclass
class PlannerRun:
    report: PlanReport
    engine: str
    output_file: Path | None = None


def run_planner(
    image: Image,
    request: PlanRequest,
    *,
    engine: str | None = None,
    spark_master: str | None = None,
    progress: Progress = ignore,
) -> PlannerRun:
    """Plan `request` against the image. `engine` None picks Spark for large clusters (or when a
    Spark master is given) and the local engine otherwise."""
    started = time.perf_counter()
    progress("Reading the cluster state into tables")
    tables = build_tables(image)
    chosen = engine or ("spark" if tables.replica_count >= SPARK_THRESHOLD_REPLICAS or spark_master else "local")
    if chosen == "spark":
        from kjbod.planner.engine import SparkEngine
        from kjbod.planner.session import default_parallelism, spark_session

        master = spark_master or "local[*]"
        progress(f"Starting Spark ({master})")
        session = spark_session(master)
        runner = SparkEngine(session, local=master.startswith("local"), parallelism=default_parallelism(session) * 2)
    else:
        from kjbod.planner.engine import LocalEngine

        runner = LocalEngine()
    try:
        result = plan(tables, request, runner, progress=progress)
    finally:
        runner.close()
    progress("Writing the report")
    label = f"spark ({spark_master or 'local[*]'})" if chosen == "spark" else "local"
    return PlannerRun(report(result, time.perf_counter() - started, label), chosen)


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


def plan_reassignment(
    state_dir: Path,
    request: PlanRequest,
    output_file: Path,
    *,
    overwrite: bool = False,
    engine: str | None = None,
    spark_master: str | None = None,
    lock_timeout: float = 30.0,
    notify: Progress = ignore,
    progress: Progress = ignore,
) -> PlannerRun:
    """Plan against the cluster state in `state_dir` and write the reassignment JSON to
    `output_file` (atomically: the file is complete or absent). Nothing in the state changes."""
    from kjbod.state import read_image

    check_output_file(output_file, overwrite)
    progress("Reading the cluster state")
    image = read_image(state_dir, lock_timeout=lock_timeout, notify=notify)
    run = run_planner(image, request, engine=engine, spark_master=spark_master, progress=progress)
    try:
        atomic_write(output_file, orjson.dumps(run.report.reassignment) + b"\n", temp_suffix=".kjbod-tmp")
    except OSError as exc:
        raise UserError(f"Cannot write --output-file {output_file}: {exc.strerror or exc}") from None
    run.output_file = output_file
    return run
