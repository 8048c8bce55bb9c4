"""How the Spark engine cuts a job's rows into buckets: whole groups per bucket, every row once,
and off local mode enough buckets that no task carries more than TASK_PAYLOAD_BYTES of rows
(a 5M-partition plan on a 2-core standalone cluster once sent 138 MB tasks, which Spark refuses
past spark.rpc.message.maxSize)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from kjbod.planner import engine as engine_module
from kjbod.planner.engine import SparkEngine


def frame(groups: int, rows_per_group: int) -> pd.DataFrame:
    group = np.repeat(np.arange(groups), rows_per_group)
    return pd.DataFrame({"group": group, "bytes": np.arange(len(group), dtype=np.int64)})


@pytest.mark.parametrize("local", [True, False])
def test_buckets_hold_whole_groups_and_every_row_once(local: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(engine_module, "TASK_PAYLOAD_BYTES", 1 << 10)
    spark = SparkEngine(object(), local=local, parallelism=2)  # type: ignore[arg-type]
    rows = frame(groups=200, rows_per_group=5)  # 16 KB of rows
    count = spark._bucket_count(rows)
    buckets = spark._buckets(rows, count)
    assert count == (2 if local else 16)
    assert len(buckets) == count
    assert sorted(np.concatenate(buckets).tolist()) == list(range(len(rows)))
    groups = rows["group"].to_numpy()
    assert all(not set(groups[a]) & set(groups[b]) for i, a in enumerate(buckets) for b in buckets[i + 1 :])
    if not local:
        assert max(int(rows.iloc[b].memory_usage(index=False).sum()) for b in buckets) <= 2 * (1 << 10)
    spark.close()
