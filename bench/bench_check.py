"""`kjbod reassign check` benchmark: a plan of 200k partition moves against the 1M-partition
synthetic cluster.

    python bench/bench_check.py [--partitions 1000000] [--brokers 1000] [--dirs-per-broker 12]
                                [--moves 200000] [--keep DIR]

Builds the cluster with bench/synthetic.py and `kjbod import cluster` (not timed against the
target; --keep DIR reuses an import from an earlier run), writes a plan that moves one replica
of each of `--moves` random partitions to another broker of the same rack, into a named
directory (the other replicas stay, "any"), then times `kjbod reassign check` on it as an
operator runs it: a separate process, interpreter start-up, loading the state and writing the
report included. Target (issue 9): <= 30 s.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from synthetic import SyntheticSpec, generate, write_files  # noqa: E402

KJBOD = [sys.executable, "-m", "kjbod"]
TARGET_S = 30.0


def build_state(args: argparse.Namespace, work: Path) -> tuple[Path, dict, dict]:
    """The imported state and the brokers and assignment documents it came from."""
    state = work / "state"
    inputs = work / "input"
    if not (state / "kjbod-state.json").exists():
        spec = SyntheticSpec(
            brokers=args.brokers,
            dirs_per_broker=args.dirs_per_broker,
            partitions=args.partitions,
            replication_factor=3,
            racks=5,
            hot_topics=4,
            full_dirs=6,
            failed_dirs=2,
            seed=args.seed,
        )
        started = time.perf_counter()
        files = write_files(generate(spec), inputs)
        print(f"generate synthetic cluster ({args.partitions} partitions): {time.perf_counter() - started:.1f} s")
        command = [*KJBOD, "--state", str(state), "import", "cluster", "--brokers", str(files["brokers"]), "--assignment", str(files["assignment"])]
        for path in files["log_dirs"]:
            command += ["--log-dirs", str(path)]
        started = time.perf_counter()
        subprocess.run(command, check=True, capture_output=True)
        print(f"import cluster: {time.perf_counter() - started:.1f} s")
    brokers = json.loads((inputs / "brokers.json").read_text())
    assignment = json.loads((inputs / "assignment.json").read_text())
    return state, brokers, assignment


def failed_dirs(log_dirs_file: Path) -> set[tuple[int, str]]:
    """(broker, path) of the directories the kafka-log-dirs output reports with an error."""
    document = json.loads(log_dirs_file.read_text().split("\n", 2)[2])
    return {(b["broker"], d["logDir"]) for b in document["brokers"] for d in b["logDirs"] if d["error"]}


def write_plan(brokers: dict, assignment: dict, failed: set[tuple[int, str]], moves: int, seed: int, path: Path) -> None:
    """One replica of each of `moves` random partitions to another broker of its rack, into one
    of that broker's working directories."""
    rng = random.Random(seed)
    rack_of = {b["id"]: b["rack"] for b in brokers["brokers"]}
    paths = {b["id"]: [d["path"] for d in b["log_dirs"] if (b["id"], d["path"]) not in failed] for b in brokers["brokers"]}
    by_rack: dict[str, list[int]] = {}
    for broker, rack in sorted(rack_of.items()):
        by_rack.setdefault(rack, []).append(broker)
    partitions = []
    for entry in rng.sample(assignment["partitions"], moves):
        replicas = list(entry["replicas"])
        index = rng.randrange(len(replicas))
        choices = [b for b in by_rack[rack_of[replicas[index]]] if b not in replicas]
        replicas[index] = rng.choice(choices)
        log_dirs = ["any"] * len(replicas)
        log_dirs[index] = rng.choice(paths[replicas[index]])
        partitions.append({"topic": entry["topic"], "partition": entry["partition"], "replicas": replicas, "log_dirs": log_dirs})
    path.write_text(json.dumps({"version": 1, "partitions": partitions}, separators=(",", ":")))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--partitions", type=int, default=1_000_000)
    parser.add_argument("--brokers", type=int, default=1000)
    parser.add_argument("--dirs-per-broker", type=int, default=12)
    parser.add_argument("--moves", type=int, default=200_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--throttle", type=int, default=50 * 1024 * 1024)
    parser.add_argument("--keep", type=Path, help="work in this directory and keep it (reuses an earlier import)")
    args = parser.parse_args()
    work = args.keep or Path(tempfile.mkdtemp(prefix="kjbod-bench-check-"))
    work.mkdir(parents=True, exist_ok=True)
    try:
        state, brokers, assignment = build_state(args, work)
        plan = work / f"plan-{args.moves}.json"
        write_plan(brokers, assignment, failed_dirs(work / "input" / "log-dirs.txt"), args.moves, args.seed, plan)
        del brokers, assignment
        print(f"plan: {args.moves} partition moves ({plan.stat().st_size / 1e6:.0f} MB)")
        report = work / "check.json"
        command = [
            *KJBOD,
            "--state",
            str(state),
            "reassign",
            "check",
            "--reassignment-json-file",
            str(plan),
            "--throttle",
            str(args.throttle),
            "--replica-alter-log-dirs-throttle",
            str(2 * args.throttle),
            "--report",
            "json",
            "--report-file",
            str(report),
        ]
        started = time.perf_counter()
        result = subprocess.run(command, capture_output=True, text=True)
        elapsed = time.perf_counter() - started
        if result.returncode not in (0, 1):
            sys.stderr.write(result.stdout[-2000:] + result.stderr[-4000:])
            raise SystemExit(f"reassign check failed with exit code {result.returncode}")
        peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        document = json.loads(report.read_text())
        print(result.stdout.strip())
        for check in document["checks"]:
            worst = max((f["severity"] for f in check["findings"]), key=["info", "warning", "error"].index, default="-")
            print(f"  {check['id']:<24} {check['status']:<8} worst finding: {worst:<8} {check['summary'] or check['skippedReason']}"[:200])
        estimate = document["estimate"] or {}
        print(f"estimate: {estimate.get('method')} {estimate.get('duration')} (bottleneck: {estimate.get('bottleneck')})")
        print(
            f"reassign check of {args.moves} moves on {args.partitions} partitions: {elapsed:.2f} s "
            f"(target <= {TARGET_S:.0f} s); peak RSS of the child processes {peak / 1024:.0f} MB (the import's too, when it ran)"
        )
        print(f"RESULT check={elapsed:.2f}s")
        return 0 if elapsed <= TARGET_S else 1
    finally:
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    sys.exit(main())
