"""Where the planner's kernels run: in this process, or on Spark.

A kernel is a pure function `(DataFrame of whole groups, params) -> DataFrame`, with the columns
of its result declared beside it (kjbod.planner.kernels.Kernel). The local engine calls it once
on the whole table. The Spark engine splits the table into files that each hold whole groups
(brokers), runs the kernel on each with `mapInArrow`, and reads the results back; the driver
keeps the small global state between steps. Both give the same rows.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np
import pandas as pd

from kjbod.planner.kernels import Kernel

if TYPE_CHECKING:  # pyspark is imported only when the Spark engine runs
    import pyarrow as pa
    from pyspark.sql import SparkSession

class Engine(Protocol):
    name: str

    def map_groups(self, kernel: Kernel, frame: pd.DataFrame, params: dict[str, Any]) -> pd.DataFrame: ...


def canonical(result: pd.DataFrame) -> pd.DataFrame:
    """A kernel's rows in one order whatever the engine: by group, then event or replica."""
    keys = ["group", "seq"] if "seq" in result.columns else ["group", "rep"]
    return result.sort_values(keys, kind="stable").reset_index(drop=True)


class LocalEngine:
    name = "local"

    def map_groups(self, kernel: Kernel, frame: pd.DataFrame, params: dict[str, Any]) -> pd.DataFrame:
        return canonical(kernel.function(frame, params))

    def close(self) -> None:
        pass


def _spark_type(dtype: str) -> str:
    return {"int64": "bigint", "int32": "int", "float64": "double", "bool": "boolean"}[dtype]


def _run_on_batches(kernel: Kernel, params: dict[str, Any]) -> Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]]:
    """The function Spark runs on each partition: all its batches (whole groups) in one table."""

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        import pyarrow as pa

        collected = list(batches)
        if not collected:
            return  # an empty partition (a remote cluster may hand one out)
        table = pa.Table.from_batches(collected)
        if table.num_rows == 0:
            return
        result = kernel.function(table.to_pandas(), params)
        if not result.empty:
            yield from pa.Table.from_pandas(result, preserve_index=False).to_batches()

    return run


class SparkEngine:
    name = "spark"

    def __init__(self, session: SparkSession, *, local: bool, parallelism: int) -> None:
        self.session = session
        self.local = local
        self.parallelism = max(parallelism, 1)
        self._workdir = Path(tempfile.mkdtemp(prefix="kjbod-planner-"))
        self._step = 0

    def _buckets(self, frame: pd.DataFrame) -> list[np.ndarray]:
        """Whole groups per bucket, buckets of about equal rows (largest groups first)."""
        groups = frame["group"].to_numpy()
        unique, counts = np.unique(groups, return_counts=True)
        loads = np.zeros(self.parallelism, dtype=np.int64)
        members: list[list[int]] = [[] for _ in range(self.parallelism)]
        for i in np.argsort(-counts, kind="stable"):
            b = int(np.argmin(loads))
            members[b].append(int(unique[i]))
            loads[b] += counts[i]
        return [np.isin(groups, m) for m in members if m]

    def map_groups(self, kernel: Kernel, frame: pd.DataFrame, params: dict[str, Any]) -> pd.DataFrame:
        import pyarrow as pa
        import pyarrow.parquet as pq

        columns = kernel.columns
        schema = ", ".join(f"{name} {_spark_type(kind)}" for name, kind in columns.items())
        if frame.empty:
            return pd.DataFrame({name: pd.Series(dtype=kind) for name, kind in columns.items()})
        self._step += 1
        run = _run_on_batches(kernel, params)
        if self.local:
            source = self._workdir / f"in-{self._step}"
            source.mkdir()
            for i, mask in enumerate(self._buckets(frame)):
                pq.write_table(pa.Table.from_pandas(frame[mask], preserve_index=False), source / f"part-{i:05d}.parquet")
            data = self.session.read.parquet(str(source))
        else:
            # A remote cluster cannot read this machine's files: send the rows, one partition per bucket.
            bucket = np.zeros(len(frame), dtype=np.int32)
            for i, mask in enumerate(self._buckets(frame)):
                bucket[mask] = i
            data = self.session.createDataFrame(frame.assign(bucket=bucket)).repartition(self.parallelism, "bucket").drop("bucket")
        target = self._workdir / f"out-{self._step}"
        if self.local:
            data.mapInArrow(run, schema).write.parquet(str(target))
            result = pq.read_table(target).to_pandas()
        else:
            result = data.mapInArrow(run, schema).toPandas()
        return canonical(result.astype(columns))

    def close(self) -> None:
        shutil.rmtree(self._workdir, ignore_errors=True)
