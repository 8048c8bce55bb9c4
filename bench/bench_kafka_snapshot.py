"""Kafka-format benchmark: `metadata export --kafka-snapshot` and `import cluster --metadata-snapshot`
of a synthetic cluster, with time and peak RSS of each command.

    python bench/bench_kafka_snapshot.py [--partitions 1000000] [--brokers 1000] [--dirs-per-broker 12]
                                         [--replication-factor 3] [--check] [--keep DIR]

Targets (issue 15): export and import of 1M partitions each <= 30 s end to end, peak <= 4 GB.
Every step runs as its own `kjbod` process, as an operator runs it, so the figures include
interpreter start-up and loading the state. The baseline is `import cluster` from the same
cluster's files (brokers, assignment, kafka-log-dirs output), measured in the same run: the
machine may be shared, and ratios move less than seconds. `--check` then compares the imported
states with the original (brokers, directories, partitions, features, configs; with
--log-dirs also paths and sizes) in this process.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from synthetic import SyntheticSpec, generate, write_files  # noqa: E402 (after the path set-up above)

KJBOD = [sys.executable, "-m", "kjbod"]
# Runs one command and reports its own peak RSS: RUSAGE_CHILDREN of a fresh process covers only it.
_MEASURE = (
    "import json, resource, subprocess, sys, time\n"
    "started = time.perf_counter()\n"
    "done = subprocess.run(sys.argv[1:], capture_output=True, text=True)\n"
    "elapsed = time.perf_counter() - started\n"
    "usage = resource.getrusage(resource.RUSAGE_CHILDREN)\n"
    "print(json.dumps({'code': done.returncode, 'elapsed': elapsed, 'cpu': usage.ru_utime + usage.ru_stime,\n"
    "                  'rss_mb': usage.ru_maxrss / 1024, 'stdout': done.stdout[-3000:], 'stderr': done.stderr[-3000:]}))\n"
)


def measured(label: str, command: list[str]) -> dict:
    result = json.loads(subprocess.run([sys.executable, "-c", _MEASURE, *command], capture_output=True, text=True, check=True).stdout)
    if result["code"] != 0:
        sys.stderr.write(result["stdout"] + result["stderr"])
        raise SystemExit(f"{label} failed with exit code {result['code']}")
    print(
        f"{label}: {result['elapsed']:.2f} s (CPU {result['cpu']:.2f} s), peak RSS {result['rss_mb']:.0f} MB "
        f"(load average {os.getloadavg()[0]:.1f})"
    )
    return result


def check(original: Path, imported: Path, with_paths: bool) -> None:
    from kjbod.state.cluster_state import read_image

    a, b = read_image(original), read_image(imported)
    same = {
        "features": a.features == b.features,
        "brokers (with their directory ids)": dict(a.cluster.brokers) == dict(b.cluster.brokers),
        "partitions (with their directories)": all(
            dict(t.partitions) == dict(b.topics.by_id[t.topic_id].partitions) for t in a.topics.by_id.values()
        ) and len(a.topics) == len(b.topics),
        "configs": a.configs == b.configs,
    }
    if with_paths:
        paths = {(broker, d.directory_id): d.path for broker, dirs in a.cluster.log_dirs.items() for d in dirs}
        joined = {(broker, d.directory_id): d.path for broker, dirs in b.cluster.log_dirs.items() for d in dirs}
        same["paths of the directories kafka-log-dirs lists"] = all(joined[k] == v for k, v in paths.items() if joined[k] != k[1])
        same["partition sizes"] = all(t.sizes == b.topics.by_id[t.topic_id].sizes for t in a.topics.by_id.values())
    for what, ok in same.items():
        print(f"  {what}: {'same' if ok else 'DIFFERENT'}")
    if not all(same.values()):
        raise SystemExit("the round trip changed the cluster")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--partitions", type=int, default=1_000_000)
    parser.add_argument("--brokers", type=int, default=1000)
    parser.add_argument("--dirs-per-broker", type=int, default=12)
    parser.add_argument("--replication-factor", type=int, default=3)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--check", action="store_true", help="compare the imported states with the original")
    parser.add_argument("--keep", type=Path, help="work in this directory and keep it")
    args = parser.parse_args()
    work = args.keep or Path(tempfile.mkdtemp(prefix="kjbod-bench-kafka-"))
    work.mkdir(parents=True, exist_ok=True)
    try:
        spec = SyntheticSpec(
            brokers=args.brokers, dirs_per_broker=args.dirs_per_broker, partitions=args.partitions,
            replication_factor=args.replication_factor, racks=5, hot_topics=4, full_dirs=6, failed_dirs=2, seed=args.seed,
        )
        started = time.perf_counter()
        files = write_files(generate(spec), work / "input")
        print(f"generate synthetic cluster ({args.partitions} partitions, RF {args.replication_factor}, "
              f"{args.brokers} brokers x {args.dirs_per_broker} dirs, 2 failed): {time.perf_counter() - started:.1f} s")
        log_dirs = [arg for path in files["log_dirs"] for arg in ("--log-dirs", str(path))]
        original = work / "original"
        baseline = measured(
            "baseline: import cluster from files",
            [*KJBOD, "--state", str(original), "import", "cluster", "--brokers", str(files["brokers"]),
             "--assignment", str(files["assignment"]), *log_dirs],
        )
        snapshot = work / "export"
        snapshot.mkdir()
        export = measured("metadata export --kafka-snapshot (target <= 30 s)", [*KJBOD, "--state", str(original), "metadata", "export", "--kafka-snapshot", str(snapshot)])
        (path,) = snapshot.iterdir()
        print(f"  {path.name}: {path.stat().st_size / 1e6:.0f} MB")
        imported = measured(
            "import cluster --metadata-snapshot (target <= 30 s)",
            [*KJBOD, "--state", str(work / "from-snapshot"), "import", "cluster", "--metadata-snapshot", str(path)],
        )
        joined = measured(
            "import cluster --metadata-snapshot --log-dirs",
            [*KJBOD, "--state", str(work / "from-snapshot-and-log-dirs"), "import", "cluster", "--metadata-snapshot", str(path), *log_dirs],
        )
        base = baseline["elapsed"]
        print(
            f"RESULT export={export['elapsed']:.2f}s ({export['elapsed'] / base:.2f}x baseline, {export['rss_mb']:.0f} MB) "
            f"import={imported['elapsed']:.2f}s ({imported['elapsed'] / base:.2f}x, {imported['rss_mb']:.0f} MB) "
            f"import+log-dirs={joined['elapsed']:.2f}s ({joined['elapsed'] / base:.2f}x, {joined['rss_mb']:.0f} MB) "
            f"baseline={base:.2f}s ({baseline['rss_mb']:.0f} MB)"
        )
        if args.check:
            print("check: the state imported from the snapshot against the original")
            check(original, work / "from-snapshot", with_paths=False)
            print("check: the state imported from the snapshot and the kafka-log-dirs output against the original")
            check(original, work / "from-snapshot-and-log-dirs", with_paths=True)
    finally:
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    sys.exit(main())
