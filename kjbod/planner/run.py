"""Running the planner: `run_planner` plans against an image and returns the report (with the
reassignment); writing it to a file is the command's (kjbod.tools.reassign.plan). `start_spark`
starts a Spark session in the background, so that a command can start it before it loads the
state. PySpark is imported only when the Spark engine runs."""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from kjbod.common.callbacks import Progress, ignore
from kjbod.controller.result import MAX_RECORDS_PER_USER_OP
from kjbod.image import Image
from kjbod.planner.core import PlanRequest, plan
from kjbod.planner.report import PlanReport, add_waves, report
from kjbod.planner.tables import build_tables

if TYPE_CHECKING:
    from kjbod.planner.session import SparkStarter


ENGINES = ("auto", "spark", "local")

# A cluster state takes about this many bytes on disk per replica (its newest snapshot or log);
# enough to guess, before loading it, whether `auto` will want Spark.
STATE_BYTES_PER_REPLICA = 70


@dataclass(frozen=True)
class WaveLimits:
    """How to split a plan into waves: at most `per_broker` moves per broker and `size`
    partitions per wave (None: no such limit but Kafka's, MAX_RECORDS_PER_USER_OP partitions)."""

    per_broker: int | None = None
    size: int | None = None


@dataclass
class PlannerRun:
    report: PlanReport
    engine: str
    engine_reason: str = ""
    output_file: Path | None = None


def start_spark(spark_master: str | None, spark_conf: Mapping[str, str] | None = None) -> SparkStarter:
    """Start a Spark session in the background (the JVM comes up while the state loads) and
    warm its Python workers."""
    from kjbod.planner.engine import warm_up_workers
    from kjbod.planner.session import SparkStarter

    return SparkStarter(spark_master or "local[*]", spark_conf, warm=warm_up_workers)


def early_engine(engine: str, *, spark_master: str | None, state_bytes: int | None) -> str:
    """Before the state is loaded: the engine `run_planner` will most likely choose, guessing the
    cluster's size from the state's bytes on disk. "spark" means: start Spark now."""
    from kjbod.planner.engine import choose_engine

    replicas = (state_bytes or 0) // STATE_BYTES_PER_REPLICA
    return choose_engine(engine, replicas=replicas, spark_master=spark_master).engine


def run_planner(
    image: Image,
    request: PlanRequest,
    *,
    engine: str = "auto",
    spark_master: str | None = None,
    spark_conf: Mapping[str, str] | None = None,
    spark: SparkStarter | None = None,
    waves: WaveLimits | None = None,
    progress: Progress = ignore,
) -> PlannerRun:
    """Plan `request` against the image. `engine` auto picks Spark where it is expected to win
    (see engine.choose_engine). `spark`: a session already starting (start_spark); it is used
    if Spark is chosen and discarded otherwise. `waves`: also split the plan into waves."""
    from kjbod.planner.engine import LocalEngine, SparkEngine, choose_engine

    started = time.perf_counter()
    progress("Reading the cluster state into tables")
    tables = build_tables(image)
    choice = choose_engine(engine, replicas=tables.replica_count, spark_master=spark_master)
    runner: LocalEngine | SparkEngine
    if choice.engine == "spark":
        from kjbod.planner.session import is_local

        master = spark_master or "local[*]"
        # The first job waits for the session; the planner's first steps run while it starts.
        starter = spark or start_spark(spark_master, spark_conf)
        starter.raise_if_failed()
        runner = SparkEngine(starter, local=is_local(master))
        label = f"spark ({master})"
    else:
        if spark is not None:
            spark.discard()
        runner = LocalEngine()
        label = "local"
    try:
        result = plan(tables, request, runner, progress=progress)
    finally:
        runner.close()
    progress("Writing the report")
    plan_report = report(result, time.perf_counter() - started, label, choice.reason)
    if waves is not None:
        progress("Splitting the plan into waves")
        # A wave is one request to Kafka's controller, which starts at most MAX_RECORDS_PER_USER_OP
        # partitions of it: no wave may be larger, whatever else limits it.
        size = min(waves.size or MAX_RECORDS_PER_USER_OP, MAX_RECORDS_PER_USER_OP)
        add_waves(plan_report, result, per_broker=waves.per_broker, size=size)
    return PlannerRun(plan_report, choice.engine, choice.reason)
