"""`kjbod reassign run` interrupted by SIGINT and SIGKILL at random points and resumed, many times:
every run must end with the plan's placement, each wave executed once by Kafka's tool, the journal
complete and no throttle left. Prints the rounds, interruptions, failures and time.

    python bench/bench_reassign_interrupt.py [--interruptions 20] [--seed 1]   # Kafka's tool stood in (fake_kafka.py)
    python bench/bench_reassign_interrupt.py --live [--interruptions 20]      # a real Kafka 4.4.0 (JVMs: run under the lock)

The same harnesses as tests/tools/reassign/test_run_interrupted.py (2 rounds, 4 interruptions in
CI) and tests/kafka/test_reassign_run.py (2 interruptions on the real cluster).
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=1, help="at least this many plans run to the end; each is interrupted 1-3 times")
    parser.add_argument("--interruptions", type=int, default=20, help="at least this many signals in all")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--live", action="store_true", help="on a real Kafka 4.4.0 cluster (tests/kafka's)")
    parser.add_argument("--keep", action="store_true", help="keep the work folder")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="kjbod-reassign-interrupt-"))
    try:
        if args.live:
            from tests.kafka import interruptions
            from tests.kafka.moving import start_scene

            scene = start_scene(work / "scene")
            try:
                report = interruptions.run(scene, work / "runs", rounds=args.rounds, seed=args.seed, at_least=args.interruptions, log=print)
            finally:
                scene.cluster.stop()
        else:
            from tests.tools.reassign import interrupting

            report = interrupting.run(work, rounds=args.rounds, seed=args.seed, at_least=args.interruptions, log=print)
        for line in report.lines():
            print(line)
        print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores at the end")
        return 1 if report.failures or not report.interruptions else 0
    finally:
        if args.keep:
            print(f"work folder: {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
