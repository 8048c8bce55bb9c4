"""The Spark engine runs the same kernels as the local engine and gives the same plan."""

from __future__ import annotations

import numpy as np
import pytest

from kjbod.planner.core import Goal, PlanRequest, plan
from kjbod.planner.engine import LocalEngine, SparkEngine
from kjbod.planner.tables import build_tables
from tests.planner.clusters import skewed_cluster

pytestmark = pytest.mark.spark

REQUESTS = [
    PlanRequest(Goal.BALANCE, seed=3),
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
