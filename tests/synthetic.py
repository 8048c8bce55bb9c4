"""The benchmarks' synthetic clusters for tests: bench/synthetic.py's generator, and an order-free
view of the kafka-log-dirs documents it writes, for comparing them with what kjbod describes."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any


def load_synthetic() -> Any:
    """bench/synthetic.py: the generator the benchmarks use."""
    return load_bench("synthetic")


def load_bench(name: str) -> Any:
    """A module of bench/ (not a package), by file name."""
    path = Path(__file__).resolve().parents[1] / "bench" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"kjbod_bench_{name}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def sorted_log_dirs(document: dict) -> list:
    """A kafka-log-dirs document's directories and their partitions, in a fixed order."""
    return sorted(
        (b["broker"], d["logDir"], d["error"], sorted((p["partition"], p["size"], p["offsetLag"], p["isFuture"]) for p in d["partitions"]))
        for b in document["brokers"] for d in b["logDirs"]
    )
