"""Time of a TAB: shell completion of topic names and broker ids on a large cluster state.

    python bench/bench_completion.py --state S [--runs 21] [--topic-prefix t]

S is a cluster state, e.g. a million-partition one made with
    python bench/synthetic.py --out DIR --brokers 1000 --dirs-per-broker 12 --partitions 1000000 \\
        --racks 5 --hot-topics 4 --full-dirs 6 --failed-dirs 2
    kjbod --state S import cluster --brokers DIR/brokers.json --assignment DIR/assignment.json --log-dirs DIR/log-dirs.txt
(run both under `flock /work/notes/heavy.lock` on the shared machine).

A figure is the median wall time of one `kjbod` process answering bash's completion request, as
completions/kjbod.bash makes it. The baseline is the same request against a directory with no
state (the same code path, nothing to read); the samples of the two are interleaved so that a
busy machine slows both alike. For scale: `kjbod topic describe` of one topic, which loads the
whole state, and the read of the name index alone, in-process.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

SCRIPT = Path(sys.executable).parent / "kjbod"


def run_ms(argv: list[str], env: dict[str, str] | None = None) -> tuple[float, str]:
    started = time.perf_counter()
    output = subprocess.run(argv, check=True, capture_output=True, text=True, env=env).stdout
    return (time.perf_counter() - started) * 1000, output


def tab(line: str) -> tuple[float, str]:
    env = {**os.environ, "_KJBOD_COMPLETE": "complete_bash", "COMP_WORDS": line, "COMP_CWORD": str(len(line.split(" ")) - 1)}
    return run_ms([str(SCRIPT)], env)


def compare(line: str, state: str, missing: str, runs: int) -> tuple[float, float, int]:
    """Medians (with the state, without one) and how many values were offered."""
    with_state, without, offered = [], [], 0
    for _ in range(runs):
        elapsed, output = tab(line.format(state=state))
        with_state.append(elapsed)
        offered = len(output.split())
        without.append(tab(line.format(state=missing))[0])
    return statistics.median(with_state), statistics.median(without), offered


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--state", type=Path, required=True)
    parser.add_argument("--runs", type=int, default=21)
    parser.add_argument("--topic-prefix", default="t")
    args = parser.parse_args()
    state, missing = str(args.state), str(args.state.parent / "no-state-here")

    from kjbod.log.name_index import NAME_INDEX, read_name_index

    reads = []
    for _ in range(args.runs):
        started = time.perf_counter()
        names = read_name_index(args.state)
        reads.append((time.perf_counter() - started) * 1000)
    assert names is not None, f"{args.state / NAME_INDEX} is missing: any write command creates it"
    print(
        f"{NAME_INDEX}: {(args.state / NAME_INDEX).stat().st_size:,} bytes, {len(names.topics):,} topics, "
        f"{len(names.brokers):,} brokers; read in-process: median {statistics.median(reads):.1f} ms"
    )
    for what, line in (
        (f"topic names (topic describe {args.topic_prefix}<TAB>)", f"kjbod --state {{state}} topic describe {args.topic_prefix}"),
        ("broker ids (log-dirs describe --broker-list 1,<TAB>)", "kjbod --state {state} log-dirs describe --broker-list 1,"),
    ):
        with_state, without, offered = compare(line, state, missing, args.runs)
        print(f"TAB, {what}: median {with_state:.0f} ms, {offered} offered; without a state {without:.0f} ms "
              f"({with_state / without:.2f}x)")
    topic = names.topics[0]
    loads = [run_ms([sys.executable, "-m", "kjbod", "--state", state, "topic", "describe", topic])[0] for _ in range(3)]
    print(f"kjbod topic describe {topic} (loads the whole state): median {statistics.median(loads):.0f} ms")


if __name__ == "__main__":
    main()
