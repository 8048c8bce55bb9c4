"""Start-up time of `kjbod --help` and `kjbod --version` (target: median <= 300 ms).

    python bench/bench_startup.py [--runs 21]

Also times `python -c pass` in the same run, so the figure can be read as a ratio to the bare
interpreter on any machine.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time


def median_ms(argv: list[str], runs: int) -> float:
    samples = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run(argv, check=True, stdout=subprocess.DEVNULL)
        samples.append((time.perf_counter() - started) * 1000)
    return statistics.median(samples)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=21)
    args = parser.parse_args()
    bare = median_ms([sys.executable, "-c", "pass"], args.runs)
    print(f"python -c pass: {bare:.0f} ms")
    for flag in ("--help", "--version"):
        figure = median_ms([sys.executable, "-m", "kjbod", flag], args.runs)
        print(f"kjbod {flag}: median {figure:.0f} ms ({figure / bare:.1f}x a bare interpreter)")


if __name__ == "__main__":
    main()
