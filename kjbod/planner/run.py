"""Running the planner: `run_planner` plans against an image and returns the report (with the
reassignment, and its waves when asked for); writing it to files is the command's
(kjbod.tools.reassign.plan).

Where the kernels run is one object: `EngineOptions` (auto, spark or local; a Spark master and
settings), and `PlannerEngine`, which owns the Spark session of one planning run: started early
(`warm_up`, before the state loads, when the run will most likely want it), used if Spark is
chosen, discarded otherwise or when the run ends without planning. PySpark is imported only when
the Spark engine runs.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import TracebackType
from typing import TYPE_CHECKING

from kjbod.common.callbacks import Progress, ignore
from kjbod.controller.result import MAX_RECORDS_PER_USER_OP
from kjbod.errors import UserError
from kjbod.image import Image
from kjbod.planner.core import plan
from kjbod.planner.report import PlanReport, report
from kjbod.planner.request import Engine, PlanRequest
from kjbod.planner.tables import build_tables

if TYPE_CHECKING:
    from kjbod.planner.engine import LocalEngine, SparkEngine
    from kjbod.planner.session import SparkStarter


# A cluster state takes about this many bytes on disk per replica (its newest snapshot or log);
# enough to guess, before loading it, whether `auto` will want Spark.
STATE_BYTES_PER_REPLICA = 70


@dataclass(frozen=True)
class EngineOptions:
    """Where the planner's kernels run: `engine` is auto, spark or local (auto picks Spark where
    it is expected to win, see engine.choose_engine); `spark_master` and `spark_conf` are for
    the Spark engine."""

    engine: Engine = Engine.AUTO
    spark_master: str | None = None
    spark_conf: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.engine is Engine.LOCAL:
            _refuse_spark_options(self.spark_master, list(self.spark_conf))

    @classmethod
    def parse(cls, engine: Engine, spark_master: str | None, spark_conf: Sequence[str]) -> EngineOptions:
        """From the command line's values; `spark_conf` as KEY=VALUE items."""
        from kjbod.planner.session import parse_spark_conf

        if engine is Engine.LOCAL:
            _refuse_spark_options(spark_master, spark_conf)
        return cls(engine, spark_master, parse_spark_conf(list(spark_conf)))

    @property
    def master(self) -> str:
        return self.spark_master or "local[*]"


def _refuse_spark_options(spark_master: str | None, spark_conf: Sequence[str]) -> None:
    if spark_master is not None:
        raise UserError("--spark-master runs the Spark engine; drop it or use --engine spark")
    if spark_conf:
        raise UserError("--spark-conf is for the Spark engine; drop it or use --engine spark (or auto)")


@dataclass(frozen=True)
class WaveLimits:
    """How to split a plan into waves: at most `per_broker` moves per broker and `size`
    partitions per wave. A wave is one request to Kafka's controller, which starts at most
    MAX_RECORDS_PER_USER_OP partitions of it: no wave is larger, whatever else limits it."""

    per_broker: int | None = None
    size: int | None = None

    def __post_init__(self) -> None:
        if self.size is not None and self.size > MAX_RECORDS_PER_USER_OP:
            raise UserError(
                f"--wave-size {self.size} is more than Kafka's controller starts in one request ({MAX_RECORDS_PER_USER_OP} partitions, "
                f"MAX_RECORDS_PER_USER_OP): give at most {MAX_RECORDS_PER_USER_OP}"
            )

    @property
    def wave_size(self) -> int:
        """The most partitions of a wave: `size`, else Kafka's limit."""
        return self.size or MAX_RECORDS_PER_USER_OP


def early_engine(engine: str, *, spark_master: str | None, state_bytes: int | None) -> str:
    """Before the state is loaded: the engine the run will most likely choose, guessing the
    cluster's size from the state's bytes on disk."""
    from kjbod.planner.engine import choose_engine

    replicas = (state_bytes or 0) // STATE_BYTES_PER_REPLICA
    return choose_engine(engine, replicas=replicas, spark_master=spark_master).engine


class PlannerEngine:
    """The engine of one planning run, and the Spark session it may start (see the module
    docstring). Use it in a `with` block: a session started and never used is discarded at
    its end."""

    def __init__(self, options: EngineOptions) -> None:
        self.options = options
        self._spark: SparkStarter | None = None
        self._used = False

    def __enter__(self) -> PlannerEngine:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self._discard()

    def warm_up(self, state_bytes: int | None) -> None:
        """Before the state is loaded: start Spark now if the run will most likely choose it
        (asked for, a master given, or `auto` expecting a large cluster from the state's bytes
        on disk), so that its JVM comes up while the state loads."""
        if early_engine(self.options.engine.value, spark_master=self.options.spark_master, state_bytes=state_bytes) == "spark":
            self._start()

    def _start(self) -> SparkStarter:
        """A Spark session starting in the background, its Python workers warmed."""
        if self._spark is None:
            from kjbod.planner.engine import warm_up_workers
            from kjbod.planner.session import SparkStarter

            self._spark = SparkStarter(self.options.master, self.options.spark_conf, warm=warm_up_workers)
        return self._spark

    def _discard(self) -> None:
        if self._spark is not None and not self._used:
            self._spark.discard()

    def open(self, replicas: int) -> tuple[LocalEngine | SparkEngine, str, str]:
        """The engine for a cluster of `replicas` replicas: (runner, its label, why it was chosen).
        Choosing the local engine discards a Spark session already starting."""
        from kjbod.planner.engine import LocalEngine, SparkEngine, choose_engine

        choice = choose_engine(self.options.engine.value, replicas=replicas, spark_master=self.options.spark_master)
        if choice.engine != "spark":
            self._discard()
            return LocalEngine(), "local", choice.reason
        from kjbod.planner.session import is_local

        # The first job waits for the session; the planner's first steps run while it starts.
        starter = self._start()
        starter.raise_if_failed()
        self._used = True
        return SparkEngine(starter, local=is_local(self.options.master)), f"spark ({self.options.master})", choice.reason


def run_planner(
    image: Image,
    request: PlanRequest,
    engine: PlannerEngine,
    *,
    waves: WaveLimits | None = None,
    explain: bool = False,
    progress: Progress = ignore,
) -> PlanReport:
    """Plan `request` against the image on `engine`, and with `waves` split the plan into waves;
    with `explain` the report says why each replica moves (explain.py)."""
    started = time.perf_counter()
    progress("Reading the cluster state into tables")
    tables = build_tables(image)
    runner, label, reason = engine.open(tables.replica_count)
    try:
        result = plan(tables, request, runner, progress=progress)
    finally:
        runner.close()
    progress("Writing the report")
    if explain:
        progress("Explaining the moves")
    plan_report = report(result, time.perf_counter() - started, label, reason, explain=explain)
    if waves is not None:
        progress("Splitting the plan into waves")
        plan_report = plan_report.with_waves(result, per_broker=waves.per_broker, size=waves.wave_size)
    return plan_report
