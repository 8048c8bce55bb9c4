"""The placement planner: one kernel (pure functions over tables), run in-process or on Spark.

`run_planner` plans against an image and returns the report (with the reassignment); writing it
to a file is the command's (kjbod.tools.reassign.plan). PySpark is imported only when the Spark
engine runs.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

from kjbod.common.callbacks import Progress, ignore
from kjbod.image import Image
from kjbod.planner.core import Goal, PlanRequest, RackMode, plan
from kjbod.planner.report import PlanReport, report
from kjbod.planner.tables import build_tables

# Below this many replicas the local engine is faster than starting Spark.
SPARK_THRESHOLD_REPLICAS = 300_000

__all__ = ["Goal", "PlanRequest", "RackMode", "PlanReport", "PlannerRun", "run_planner", "SPARK_THRESHOLD_REPLICAS"]


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
