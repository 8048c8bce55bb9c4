"""Where the planner's kernels run: in this process, or on Spark; and which of the two to use.

A kernel is a pure function `(DataFrame of whole groups, params) -> DataFrame`, with the columns
of its result (and their order) declared beside it (kjbod.planner.kernels.Kernel). The local
engine calls it once on the whole table. The Spark engine splits the table into buckets of whole
groups (brokers) of about equal rows and runs the kernel on each bucket in a Spark task, one job
per kernel call, each bucket and each result as Arrow:

- in local mode the buckets go to the tasks in shared memory (one memory-mapped Arrow IPC file,
  a record batch per bucket), and each task writes its result the same way: the job itself
  carries only bucket numbers;
- on a cluster each task receives its bucket as Arrow IPC bytes and returns its result so.

The jobs are plain RDD jobs (parallelize, mapPartitions): the rows never need Spark SQL, whose
session and Arrow UDF machinery cost this machine about five seconds before the first job and a
query plan per job, for nothing the kernels use.

`submit` returns at once with a pending result, so the driver can do other work (leaders, say)
while a Spark job runs; the local engine has the result ready when `submit` returns. Both give
the same rows, in the order the kernel declares.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np
import pandas as pd

from kjbod.errors import UserError
from kjbod.planner.kernels import Kernel

# The most rows' bytes one task carries to a cluster's executor (well under Spark's default
# spark.rpc.message.maxSize, 128 MiB, which also holds the task's closure).
TASK_PAYLOAD_BYTES = 32 << 20

if TYPE_CHECKING:  # pyspark and pyarrow are imported only when the Spark engine runs
    import pyarrow as pa
    from pyspark.sql import SparkSession


class _Starting(Protocol):
    def result(self) -> SparkSession: ...


class Pending(Protocol):
    def result(self) -> pd.DataFrame: ...


class Engine(Protocol):
    name: str

    def submit(self, kernel: Kernel, frame: pd.DataFrame, params: dict[str, Any]) -> Pending: ...

    def map_groups(self, kernel: Kernel, frame: pd.DataFrame, params: dict[str, Any]) -> pd.DataFrame: ...

    def close(self) -> None: ...


def canonical(kernel: Kernel, result: pd.DataFrame) -> pd.DataFrame:
    """A kernel's rows in one order whatever the engine, with its declared types."""
    columns = kernel.columns
    return result[list(columns)].astype(columns).sort_values(list(kernel.order), kind="stable").reset_index(drop=True)


class _Done:
    def __init__(self, value: pd.DataFrame) -> None:
        self._value = value

    def result(self) -> pd.DataFrame:
        return self._value


class LocalEngine:
    name = "local"

    def submit(self, kernel: Kernel, frame: pd.DataFrame, params: dict[str, Any]) -> Pending:
        return _Done(self.map_groups(kernel, frame, params))

    def map_groups(self, kernel: Kernel, frame: pd.DataFrame, params: dict[str, Any]) -> pd.DataFrame:
        return canonical(kernel, kernel.function(frame, params))

    def close(self) -> None:
        pass


def _arrow_bytes(table: pa.Table | pa.RecordBatch) -> bytes:
    import pyarrow as pa

    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write(table)
    return sink.getvalue().to_pybytes()


def _run_on_payloads(kernel: Kernel, params: dict[str, Any]) -> Callable[[Iterator[tuple[int, bytes]]], Iterator[tuple[int, bytes]]]:
    """The task on a cluster: its bucket arrives as Arrow IPC bytes; its result leaves so."""
    function = kernel.function

    def run(items: Iterator[tuple[int, bytes]]) -> Iterator[tuple[int, bytes]]:
        import pyarrow as pa

        for bucket, payload in items:
            frame = pa.ipc.open_stream(payload).read_all().to_pandas()
            result = function(frame, params)
            yield bucket, _arrow_bytes(pa.Table.from_pandas(result, preserve_index=False))

    return run


def _run_on_shared_files(kernel: Kernel, params: dict[str, Any], source: str, results: str) -> Callable[[Iterator[int]], Iterator[tuple[int, int]]]:
    """The task in local mode: its input is bucket numbers; each bucket is a record batch of the
    memory-mapped Arrow file `source`, and its result goes to `results/NNNNN.arrow`."""
    function = kernel.function

    def run(buckets: Iterator[int]) -> Iterator[tuple[int, int]]:
        import pyarrow as pa

        for bucket in buckets:
            with pa.memory_map(source) as mapped:
                frame = pa.Table.from_batches([pa.ipc.open_file(mapped).get_batch(bucket)]).to_pandas()
            result = function(frame, params)
            table = pa.Table.from_pandas(result, preserve_index=False)
            with pa.OSFile(os.path.join(results, f"{bucket:05d}.arrow"), "wb") as sink, pa.ipc.new_file(sink, table.schema) as writer:
                writer.write_table(table)
            yield bucket, len(result)

    return run


def shared_memory_dir() -> str | None:
    """Where local-mode buckets are exchanged: /dev/shm when this machine has it."""
    return "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else None


class SparkEngine:
    """`session` may be a session or something still starting one (`.result()` gives it): the
    planner's first steps then run while Spark comes up, and the first job waits for it.
    `parallelism`: buckets per job (default: twice the session's default parallelism)."""

    name = "spark"

    def __init__(self, session: SparkSession | _Starting, *, local: bool, parallelism: int | None = None) -> None:
        self._session = session
        self.local = local
        self._parallelism = parallelism
        self._workdir = Path(tempfile.mkdtemp(prefix="kjbod-planner-", dir=shared_memory_dir() if local else None))
        self._step = 0
        self._jobs = ThreadPoolExecutor(max_workers=1, thread_name_prefix="kjbod-spark-job")

    @property
    def session(self) -> SparkSession:
        if hasattr(self._session, "result"):
            self._session = self._session.result()  # type: ignore[union-attr]
        return self._session  # type: ignore[return-value]

    @property
    def parallelism(self) -> int:
        if self._parallelism is None:
            self._parallelism = int(self.session.sparkContext.defaultParallelism) * 2
        return max(self._parallelism, 1)

    def _buckets(self, frame: pd.DataFrame, count: int) -> list[np.ndarray]:
        """Row positions of whole groups per bucket, `count` buckets of about equal rows (largest
        groups first, each to the lightest bucket); rows keep their order within a bucket."""
        groups = frame["group"].to_numpy().astype(np.int64)
        counts = np.bincount(groups)
        present = np.flatnonzero(counts)
        loads = [0] * count
        bucket_of = np.zeros(len(counts), dtype=np.int16)
        for g in present[np.argsort(-counts[present], kind="stable")].tolist():
            b = loads.index(min(loads))
            bucket_of[g] = b
            loads[b] += int(counts[g])
        row_bucket = bucket_of[groups].astype(np.int16)  # a stable sort of 16-bit keys is a radix sort
        order = np.argsort(row_bucket, kind="stable")
        bounds = np.searchsorted(row_bucket[order], np.arange(count + 1))
        return [order[bounds[b] : bounds[b + 1]] for b in range(count) if bounds[b + 1] > bounds[b]]

    def _bucket_count(self, frame: pd.DataFrame) -> int:
        """The session's parallelism; off local mode at least enough buckets that no task, which
        carries its bucket's rows, nears spark.rpc.message.maxSize (128 MiB by default: at 5M
        partitions on 2 cores a bucket was 138 MB and the job was refused). The kernels work
        group by group, so the number of buckets never changes the plan."""
        if self.local:
            return self.parallelism
        size = int(frame.memory_usage(index=False).sum())
        return min(max(self.parallelism, -(-size // TASK_PAYLOAD_BYTES)), np.iinfo(np.int16).max)

    def submit(self, kernel: Kernel, frame: pd.DataFrame, params: dict[str, Any]) -> Pending:
        if frame.empty:
            return _Done(kernel.empty())
        self._step += 1
        return _SparkResult(self._jobs.submit(self._run, kernel, frame, params, self._step))

    def map_groups(self, kernel: Kernel, frame: pd.DataFrame, params: dict[str, Any]) -> pd.DataFrame:
        return self.submit(kernel, frame, params).result()

    def _run(self, kernel: Kernel, frame: pd.DataFrame, params: dict[str, Any], step: int) -> pd.DataFrame:
        import pyarrow as pa

        buckets = self._buckets(frame, self._bucket_count(frame))
        rows = pa.RecordBatch.from_pandas(frame, preserve_index=False)
        # One gather into bucket order, then a zero-copy slice per bucket.
        ordered = rows.take(pa.array(np.concatenate(buckets)))
        starts = np.r_[0, np.cumsum([len(b) for b in buckets])].tolist()
        slices = [ordered.slice(start, end - start) for start, end in zip(starts, starts[1:])]
        context = self.session.sparkContext
        if self.local:
            source = self._workdir / f"in-{step}.arrow"
            results = self._workdir / f"out-{step}"
            results.mkdir()
            with pa.OSFile(str(source), "wb") as sink, pa.ipc.new_file(sink, rows.schema) as writer:
                for piece in slices:
                    writer.write_batch(piece)
            run = _run_on_shared_files(kernel, params, str(source), str(results))
            try:
                context.parallelize(range(len(slices)), len(slices)).mapPartitions(run).collect()
                tables = [_read_arrow(path) for path in sorted(results.iterdir())]
            finally:
                source.unlink(missing_ok=True)
                shutil.rmtree(results, ignore_errors=True)
        else:
            # A cluster cannot read this machine's memory: each task gets its bucket's bytes.
            payloads = [(i, _arrow_bytes(piece)) for i, piece in enumerate(slices)]
            returned = sorted(context.parallelize(payloads, len(payloads)).mapPartitions(_run_on_payloads(kernel, params)).collect())
            tables = [pa.ipc.open_stream(payload).read_all() for _, payload in returned]
        tables = [table for table in tables if table.num_rows]
        result = pa.concat_tables(tables).to_pandas() if tables else kernel.empty()
        return canonical(kernel, result)

    def close(self) -> None:
        self._jobs.shutdown(wait=True)
        shutil.rmtree(self._workdir, ignore_errors=True)


def _read_arrow(path: Path) -> pa.Table:
    import pyarrow as pa

    with pa.memory_map(str(path)) as mapped:
        return pa.ipc.open_file(mapped).read_all()


class _SparkResult:
    def __init__(self, future: Future[pd.DataFrame]) -> None:
        self._future = future

    def result(self) -> pd.DataFrame:
        try:
            return self._future.result()
        except UserError:
            raise
        except Exception as exc:  # noqa: BLE001  (py4j and pyspark raise many kinds)
            raise spark_job_error(exc) from None


def spark_job_error(exc: BaseException) -> UserError:
    """One line an operator can act on, for a Spark job that failed; the whole error goes to
    Spark's log."""
    from kjbod.planner.session import spark_error_summary, spark_log_path

    summary = spark_error_summary(exc)
    try:
        with open(spark_log_path(), "a", encoding="utf-8") as log:
            log.write(f"\n--- kjbod: a planner job failed ---\n{exc}\n")
    except OSError:
        pass
    program = re.search(r'Cannot run program "([^"]*)"(?:[^)]*?error=\d+, ([^)\n]*))?', str(exc))
    if program:
        reason = f" ({program.group(2).strip()})" if program.group(2) else ""
        return UserError(
            f"The Spark executors cannot start their Python {program.group(1)}{reason}: point --spark-conf spark.pyspark.python=PATH "
            f"at a Python with numpy, pandas and pyarrow on the workers, or use --engine local. Spark's log: {spark_log_path()}"
        )
    if re.search(r"No module named 'kjbod(\.[\w.]+)?'", summary):
        return UserError(
            f"The Spark executors cannot import kjbod ({summary}), whose code kjbod sends with the job to workers that run "
            "another Python than its own: check the workers' Python (--spark-conf spark.pyspark.python=PATH, 3.11 or later) "
            f"and Spark's log {spark_log_path()}, or use --engine local"
        )
    if "ModuleNotFoundError" in summary or "ImportError" in summary:
        return UserError(
            f"The Spark executors cannot run the planner ({summary}): their Python needs numpy, pandas and pyarrow "
            "(kjbod sends its own code); point --spark-conf spark.pyspark.python=PATH at such a Python on the workers, "
            f"or use --engine local. Spark's log: {spark_log_path()}"
        )
    if "different minor versions" in summary or "Python in worker has different version" in summary:
        return UserError(
            f"The Spark executors run another Python version than kjbod ({summary}); point --spark-conf "
            f"spark.pyspark.python=PATH at a Python of the same version on the workers, or use --engine local. Spark's log: {spark_log_path()}"
        )
    if "OutOfMemoryError" in summary or "Java heap space" in summary:
        return UserError(
            f"A Spark job ran out of memory ({summary}): give it more with --spark-conf spark.driver.memory=8g "
            f"(or spark.executor.memory on a cluster), or use --engine local. Spark's log: {spark_log_path()}"
        )
    return UserError(
        f"A Spark job of the planner failed ({summary}); the whole error is in Spark's log {spark_log_path()}. "
        "Check the --spark-conf settings and the workers, or use --engine local"
    )


def warm_up_workers(session: SparkSession) -> None:
    """One task per core that imports what the kernels need, so that the first real job finds
    its Python workers started and warm (they are reused)."""
    context = session.sparkContext
    parallelism = int(context.defaultParallelism)
    try:
        context.parallelize(range(parallelism), parallelism).mapPartitions(_import_kernels).collect()
    except Exception as exc:  # noqa: BLE001  (py4j and pyspark raise many kinds)
        raise spark_job_error(exc) from None


def _import_kernels(items: Iterator[int]) -> Iterator[int]:
    import pandas  # noqa: F401
    import pyarrow  # noqa: F401

    import kjbod.planner.kernels  # noqa: F401

    yield from items


# Choosing the engine ----------------------------------------------------------------------------

# Measured on a 2-core machine (bench/bench_planner.py, 200k and 1M partitions): the kernels take
# about this long per replica in this process, loading the state about as long again, and a Spark
# session with warm workers costs about this much before its first job; each job adds its own.
KERNEL_SECONDS_PER_REPLICA = 2.2e-6
LOAD_SECONDS_PER_REPLICA = 2.2e-6
SPARK_START_SECONDS = 11.0
SPARK_JOB_SECONDS = 0.4
SPARK_JOBS = 5


@dataclass(frozen=True)
class EngineChoice:
    engine: str  # "spark" or "local"
    reason: str


def available_cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def choose_engine(requested: str, *, replicas: int, spark_master: str | None, cores: int | None = None) -> EngineChoice:
    """`auto` picks Spark where it is expected to win on this machine: always with a Spark
    master (the work leaves this machine), else when the kernels' parallel time saved on this
    machine's cores outweighs Spark's start-up (the part the state load does not hide) and its
    jobs' overhead."""
    if requested == "local":
        return EngineChoice("local", "asked for")
    if requested == "spark":
        return EngineChoice("spark", "asked for")
    if spark_master:
        return EngineChoice("spark", f"auto: a Spark master was given ({spark_master})")
    cores = cores or available_cores()
    kernels = KERNEL_SECONDS_PER_REPLICA * replicas
    cost = max(SPARK_START_SECONDS - LOAD_SECONDS_PER_REPLICA * replicas, 0.0) + SPARK_JOB_SECONDS * SPARK_JOBS
    if kernels <= cost:
        return EngineChoice("local", f"auto: {replicas:,} replicas, too few for Spark to pay off")
    if cores < 2:
        return EngineChoice("local", "auto: one core, so Spark cannot run the kernels in parallel")
    saved = kernels * (1 - 1 / cores)
    if saved > cost:
        return EngineChoice("spark", f"auto: {cores} cores and {replicas:,} replicas: Spark saves about {saved:.0f} s and costs about {cost:.0f} s")
    return EngineChoice("local", f"auto: on {cores} cores Spark would save about {saved:.0f} s of the kernels' {kernels:.0f} s but cost about {cost:.0f} s")
