"""Creating a state under SIGKILL: kill `format` and `import cluster` at random moments while
they create a state in fresh places, and report kills / blocked / leftovers.

    python bench/bench_creation_kills.py [--kills 500] [--seed 1] [--partitions 2000]

The same harness as tests/system/test_creation_kills.py (which CI runs with 40 kills); see
tests/system/creation_kill_harness.py for what each figure means. `blocked` and
`left_after_retry` must be 0.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.system import creation_kill_harness  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--kills", type=int, default=500)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--partitions", type=int, default=2000, help="partitions of the imported cluster")
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="kjbod-creation-kills-"))
    try:
        started = time.perf_counter()
        report = creation_kill_harness.run(root, args.kills, seed=args.seed, partitions=args.partitions)
        print(report.summary())
        for problem in report.problems[:20]:
            print(f"  {problem}")
        print(f"elapsed: {time.perf_counter() - started:.0f} s")
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
