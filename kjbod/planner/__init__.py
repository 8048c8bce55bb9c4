"""The placement planner: one kernel (pure functions over tables), run in-process or on Spark.

`run_planner` (planner/run.py) plans against an image and returns the report (with the
reassignment); writing it to a file is the command's (kjbod.tools.reassign.plan). PySpark is
imported only when the Spark engine runs.

The names below load on first use: a Spark executor imports `kjbod.planner.kernels`, and with it
this package, and must not need more than numpy, pandas and pyarrow to do so.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kjbod.planner.core import Goal, PlanRequest, RackMode
    from kjbod.planner.report import PlanReport
    from kjbod.planner.run import ENGINES, PlannerRun, WaveLimits, early_engine, run_planner, start_spark

_EXPORTS = {
    "Goal": "kjbod.planner.core",
    "PlanRequest": "kjbod.planner.core",
    "RackMode": "kjbod.planner.core",
    "PlanReport": "kjbod.planner.report",
    "ENGINES": "kjbod.planner.run",
    "PlannerRun": "kjbod.planner.run",
    "WaveLimits": "kjbod.planner.run",
    "early_engine": "kjbod.planner.run",
    "run_planner": "kjbod.planner.run",
    "start_spark": "kjbod.planner.run",
}

__all__ = [
    "ENGINES",
    "Goal",
    "PlanReport",
    "PlanRequest",
    "PlannerRun",
    "RackMode",
    "WaveLimits",
    "early_engine",
    "run_planner",
    "start_spark",
]  # the names of _EXPORTS, written out so that linters and readers see them


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'kjbod.planner' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
