"""The Spark engine runs the same kernels as the local engine and gives the same plan."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from kjbod.errors import UserError
from kjbod.planner.core import Goal, PlanRequest, plan
from kjbod.planner.engine import LocalEngine, SparkEngine
from kjbod.planner.request import Refine
from kjbod.planner.kernels import SHED_COLUMNS, Kernel
from kjbod.planner.tables import build_tables
from tests.planner.clusters import skewed_cluster

pytestmark = pytest.mark.spark

REQUESTS = [
    # The exact refinement runs in the driver after the kernels, whatever the engine
    # (tests/planner/test_refine.py): off here, where it would only add its solves' seconds.
    PlanRequest(Goal.BALANCE, seed=3, refine=Refine.OFF),
    PlanRequest(Goal.ADD_BROKERS, brokers=(7, 8, 9)),
    PlanRequest(Goal.REMOVE_BROKERS, brokers=(1,)),
    PlanRequest(Goal.REBALANCE_DISKS),
]


@pytest.mark.parametrize("files", [True, False], ids=["local-files", "remote-rows"])
def test_spark_and_local_engines_give_the_same_plan(spark: object, files: bool) -> None:
    tables = build_tables(skewed_cluster(brokers=9, racks=3, dirs=3, topics=5, partitions=16, crowded=6))
    for request in REQUESTS:
        local = plan(tables, request, LocalEngine())
        engine = SparkEngine(spark, local=files, parallelism=3)  # type: ignore[arg-type]
        try:
            distributed = plan(tables, request, engine)
        finally:
            engine.close()
        assert (local.inter_moved | local.intra_moved).any(), request.goal
        assert np.array_equal(local.new_broker, distributed.new_broker), request.goal
        assert np.array_equal(local.new_dir, distributed.new_dir), request.goal
        assert np.array_equal(local.new_pos, distributed.new_pos), request.goal
        assert local.notes == distributed.notes


def test_a_failing_job_ends_in_one_line_that_says_what_to_do(spark: object) -> None:
    # A kernel the executors cannot run: it imports a module they do not have (as when the
    # workers' Python lacks what kjbod needs). Defined by source so Spark ships it by value.
    namespace: dict[str, object] = {}
    exec("def kernel(frame, params):\n    import kjbod_module_the_executors_lack\n", namespace)
    kernel = Kernel(namespace["kernel"], SHED_COLUMNS, ("group", "rep"))  # type: ignore[arg-type]
    frame = pd.DataFrame({"rep": np.arange(4, dtype=np.int64), "group": np.array([0, 0, 1, 1], dtype=np.int32)})
    engine = SparkEngine(spark, local=True, parallelism=2)  # type: ignore[arg-type]
    try:
        with pytest.raises(UserError) as raised:
            engine.map_groups(kernel, frame, {})
    finally:
        engine.close()
    message = str(raised.value)
    assert "\n" not in message and "Traceback" not in message
    assert message.startswith(
        "The Spark executors cannot run the planner (ModuleNotFoundError: No module named 'kjbod_module_the_executors_lack'): "
        "their Python needs numpy, pandas and pyarrow (kjbod sends its own code); point --spark-conf spark.pyspark.python=PATH "
        "at such a Python on the workers, or use --engine local. Spark's log: "
    )
