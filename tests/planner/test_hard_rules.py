"""Property test: on any small cluster (racks or none, fenced and unregistered brokers, offline
and cordoned directories, unknown capacities, nearly full disks, partitions already breaking
the rack rule, out-of-sync replicas) and any goal, the planner keeps every hard rule."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kjbod.errors import UserError
from kjbod.planner.core import Goal, PlanRequest, plan
from kjbod.planner.engine import LocalEngine
from kjbod.planner.tables import build_tables
from tests.planner.clusters import skewed_cluster
from tests.planner.rules import hard_rule_violations
from tests.planner.strategies import clusters, requests


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=st.data())
def test_every_plan_keeps_the_hard_rules(data: st.DataObject) -> None:
    t = data.draw(clusters())
    request = data.draw(requests(t))
    try:
        result = plan(t, request, LocalEngine())
    except UserError as error:
        # Only for requests the cluster cannot take: adding a broker that is not active.
        assert request.goal is Goal.ADD_BROKERS and "must be registered and unfenced" in str(error)
        return
    assert hard_rule_violations(t, result) == []


@pytest.mark.parametrize("seed", [0, 1])
def test_the_same_seed_gives_the_same_plan(seed: int) -> None:
    tables = build_tables(skewed_cluster(brokers=8, crowded=4, seed=seed))
    request = PlanRequest(Goal.BALANCE, seed=seed)
    first = plan(tables, request, LocalEngine())
    second = plan(build_tables(skewed_cluster(brokers=8, crowded=4, seed=seed)), request, LocalEngine())
    assert np.array_equal(first.new_broker, second.new_broker)
    assert np.array_equal(first.new_dir, second.new_dir)
    assert np.array_equal(first.new_pos, second.new_pos)
