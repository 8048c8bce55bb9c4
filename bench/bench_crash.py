"""Crash safety at scale: SIGKILL writers many times and report kills / lost / corrupt / unrecorded.

    python bench/bench_crash.py [--kills 1000] [--seed 1]

The same harness as tests/test_crash_safety.py (which CI runs with 200 kills).
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.system import crash_harness  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--kills", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="kjbod-crash-"))
    try:
        started = time.perf_counter()
        report = crash_harness.run(root / "state", args.kills, seed=args.seed)
        print(report.summary())
        print(f"elapsed: {time.perf_counter() - started:.0f} s")
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
