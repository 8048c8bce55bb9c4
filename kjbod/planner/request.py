"""What the planner is asked: a goal, its brokers or directories, the rules and limits; and the
engines it can run on. Plain values without numpy, so that the command line can offer them
as its choices without loading the planner."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum


class Goal(str, Enum):
    BALANCE = "balance"
    ADD_BROKERS = "add-brokers"
    REMOVE_BROKERS = "remove-brokers"
    DRAIN_DIRS = "drain-dirs"
    FIX_OFFLINE = "fix-offline"
    REBALANCE_DISKS = "rebalance-disks"


class RackMode(str, Enum):
    STRICT = "strict"
    EVEN = "even"


class Refine(str, Enum):
    """auto: improve a balance plan with an exact solver where the cluster is small enough
    (refine.py); off: the heuristic's plan as it is."""

    AUTO = "auto"
    OFF = "off"


class Engine(str, Enum):
    """Where the kernels run: auto picks Spark where it is expected to be faster (engine.choose_engine)."""

    AUTO = "auto"
    SPARK = "spark"
    LOCAL = "local"


@dataclass(frozen=True)
class PlanRequest:
    goal: Goal
    brokers: tuple[int, ...] = ()  # add-brokers / remove-brokers
    dirs: tuple[tuple[int, str], ...] = ()  # drain-dirs: (broker id, path or directory id)
    rack_mode: RackMode = RackMode.STRICT
    max_moves: int | None = None
    max_bytes: int | None = None
    exclude_topics: str | None = None
    exclude_brokers: tuple[int, ...] = ()
    capacity_threshold: float = 0.8
    seed: int = 0
    # Balance bands: replica counts within this fraction of the target, directory usage within
    # this many points (of capacity) of the broker's mean.
    count_tolerance: float = 0.005
    disk_band: float = 0.05
    refine: Refine = Refine.AUTO
