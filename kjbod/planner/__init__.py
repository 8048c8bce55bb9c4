"""The placement planner: one kernel (pure functions over tables), run in-process or on Spark.

`run_planner` (planner/run.py) plans against an image on a `PlannerEngine` (which owns the
Spark session of the run) and returns the report (with the reassignment, and its waves);
writing it to files is the command's (kjbod.tools.reassign.plan). PySpark is imported only when
the Spark engine runs.

The names below load on first use: a Spark executor imports `kjbod.planner.kernels`, and with it
this package, and must not need more than numpy, pandas and pyarrow to do so.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kjbod.planner.request import Engine, Goal, PlanRequest, RackMode, Refine
    from kjbod.planner.report import PlanReport
    from kjbod.planner.run import EngineOptions, PlannerEngine, WaveLimits, early_engine, run_planner

_EXPORTS = {
    "Engine": "kjbod.planner.request",
    "Goal": "kjbod.planner.request",
    "PlanRequest": "kjbod.planner.request",
    "RackMode": "kjbod.planner.request",
    "Refine": "kjbod.planner.request",
    "PlanReport": "kjbod.planner.report",
    "EngineOptions": "kjbod.planner.run",
    "PlannerEngine": "kjbod.planner.run",
    "WaveLimits": "kjbod.planner.run",
    "early_engine": "kjbod.planner.run",
    "run_planner": "kjbod.planner.run",
}

__all__ = [
    "Engine",
    "EngineOptions",
    "Goal",
    "PlanReport",
    "PlanRequest",
    "PlannerEngine",
    "RackMode",
    "Refine",
    "WaveLimits",
    "early_engine",
    "run_planner",
]  # the names of _EXPORTS, written out so that linters and readers see them


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'kjbod.planner' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
