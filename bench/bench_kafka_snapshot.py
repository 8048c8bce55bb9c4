"""Kafka-format benchmark: `metadata export --kafka-snapshot` and `import cluster --metadata-snapshot`
of a synthetic cluster, with time and peak RSS of each command.

    python bench/bench_kafka_snapshot.py [--partitions 1000000] [--brokers 1000] [--dirs-per-broker 12]
                                         [--replication-factor 3] [--check] [--cache DIR]
                                         [--baseline-tree DIR] [--repeat N] [--only TEXT]

Targets (issue 15): export and import of 1M partitions each <= 30 s end to end, peak <= 4 GB.
Every step runs as its own `kjbod` process, as an operator runs it, so the figures include
interpreter start-up and loading the state. `import cluster` from the same cluster's files
(brokers, assignment, kafka-log-dirs output) is measured in the same run as a reference: the
machine may be shared, and ratios move less than seconds.

`--cache DIR` keeps the generated files, the state they import to and its export in DIR (one
subdirectory per cluster shape), so that later runs skip building them. `--baseline-tree DIR`
runs every command a second time with another checkout's kjbod (e.g. a `git worktree` of main),
interleaved with this one's, and prints a table of both with ratios. `--repeat N` runs each
command N times and keeps the fastest. `--only TEXT` runs only the steps whose name contains
TEXT. `--check` then compares the imported states with the
original (brokers, directories, partitions, features, configs; with --log-dirs also paths and
sizes) in this process.
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


def measured(label: str, command: list[str], tree: Path = ROOT) -> dict:
    """Run `command` with the kjbod of `tree` (its directory first on the module path; `-m`
    puts the working directory before PYTHONPATH, so it runs there too)."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    result = json.loads(
        subprocess.run([sys.executable, "-c", _MEASURE, *command], capture_output=True, text=True, check=True, cwd=tree, env=env).stdout
    )
    if result["code"] != 0:
        sys.stderr.write(result["stdout"] + result["stderr"])
        raise SystemExit(f"{label} failed with exit code {result['code']}")
    print(
        f"{label}: {result['elapsed']:.2f} s (CPU {result['cpu']:.2f} s), peak RSS {result['rss_mb']:.0f} MB "
        f"(load average {os.getloadavg()[0]:.1f})",
        flush=True,
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


def prepared(spec: SyntheticSpec, cache: Path) -> tuple[dict, Path, Path]:
    """The input files, the state imported from them and its Kafka snapshot, built once per
    cluster shape under `cache` (a directory is complete once its `ready` file exists)."""
    ready = cache / "ready"
    if ready.exists():
        files = json.loads(ready.read_text())
        print(f"reusing the cluster cached in {cache}")
        return (
            {"brokers": Path(files["brokers"]), "assignment": Path(files["assignment"]), "log_dirs": [Path(p) for p in files["log_dirs"]]},
            cache / "original",
            Path(files["snapshot"]),
        )
    shutil.rmtree(cache, ignore_errors=True)
    cache.mkdir(parents=True)
    started = time.perf_counter()
    files = write_files(generate(spec), cache / "input")
    print(f"generate synthetic cluster: {time.perf_counter() - started:.1f} s")
    log_dirs = [arg for path in files["log_dirs"] for arg in ("--log-dirs", str(path))]
    measured("prepare: import cluster from files", [*KJBOD, "--state", str(cache / "original"), "import", "cluster",
             "--brokers", str(files["brokers"]), "--assignment", str(files["assignment"]), *log_dirs])
    (cache / "export").mkdir()
    measured("prepare: metadata export --kafka-snapshot", [*KJBOD, "--state", str(cache / "original"), "metadata", "export",
             "--kafka-snapshot", str(cache / "export")])
    (snapshot,) = (cache / "export").iterdir()
    ready.write_text(json.dumps({"brokers": str(files["brokers"]), "assignment": str(files["assignment"]),
                                 "log_dirs": [str(p) for p in files["log_dirs"]], "snapshot": str(snapshot)}))
    return files, cache / "original", snapshot


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--partitions", type=int, default=1_000_000)
    parser.add_argument("--brokers", type=int, default=1000)
    parser.add_argument("--dirs-per-broker", type=int, default=12)
    parser.add_argument("--replication-factor", type=int, default=3)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--check", action="store_true", help="compare the imported states with the original")
    parser.add_argument("--cache", type=Path, help="keep the generated cluster, its state and its export here, and reuse them")
    parser.add_argument("--baseline-tree", type=Path, help="also run every command with this checkout's kjbod, for a comparison")
    parser.add_argument("--repeat", type=int, default=1, help="run each command this many times and keep the fastest")
    parser.add_argument("--only", action="append", metavar="TEXT",
                        help="run only the steps whose name contains TEXT (repeatable), e.g. --only log-dirs")
    args = parser.parse_args()
    spec = SyntheticSpec(
        brokers=args.brokers, dirs_per_broker=args.dirs_per_broker, partitions=args.partitions,
        replication_factor=args.replication_factor, racks=5, hot_topics=4, full_dirs=6, failed_dirs=2, seed=args.seed,
    )
    print(f"cluster: {args.partitions} partitions, RF {args.replication_factor}, {args.brokers} brokers x {args.dirs_per_broker} dirs, "
          f"2 failed, seed {args.seed}")
    work = Path(tempfile.mkdtemp(prefix="kjbod-bench-kafka-"))
    shape = f"p{args.partitions}-b{args.brokers}-d{args.dirs_per_broker}-rf{args.replication_factor}-s{args.seed}"
    cache = args.cache / shape if args.cache else work / "cache"
    trees = {"this tree": ROOT}
    if args.baseline_tree:
        trees = {"baseline": args.baseline_tree.resolve(), **trees}
    try:
        files, original, snapshot = prepared(spec, cache)
        print(f"  {snapshot.name}: {snapshot.stat().st_size / 1e6:.0f} MB")
        log_dirs = [arg for path in files["log_dirs"] for arg in ("--log-dirs", str(path))]
        steps = {
            "import cluster from files": lambda state: ["import", "cluster", "--brokers", str(files["brokers"]),
                                                        "--assignment", str(files["assignment"]), *log_dirs],
            "metadata export --kafka-snapshot (target <= 30 s)": None,
            "import --metadata-snapshot (target <= 30 s)": lambda state: ["import", "cluster", "--metadata-snapshot", str(snapshot)],
            "import --metadata-snapshot --log-dirs (target <= 30 s)": lambda state: ["import", "cluster", "--metadata-snapshot",
                                                                                     str(snapshot), *log_dirs],
        }
        if args.only:
            steps = {step: arguments for step, arguments in steps.items() if any(text in step for text in args.only)}
        results: dict[str, dict[str, dict]] = {step: {} for step in steps}
        kept: dict[str, Path] = {}  # step -> this tree's first state, for --check
        for run in range(args.repeat):
            for n, (step, arguments) in enumerate(steps.items()):
                for name, tree in trees.items():
                    out = work / f"{name.replace(' ', '-')}-{n}-{run}"
                    if arguments is None:
                        out.mkdir()
                        command = [*KJBOD, "--state", str(original), "metadata", "export", "--kafka-snapshot", str(out)]
                    else:
                        command = [*KJBOD, "--state", str(out), *arguments(out)]
                    result = measured(f"{step} [{name}]", command, tree)
                    best = results[step].get(name)
                    if best is None or result["elapsed"] < best["elapsed"]:
                        results[step][name] = result
                    if arguments is None:
                        continue
                    if args.check and run == 0 and name == "this tree":
                        kept[step] = out
                        continue
                    shutil.rmtree(out)  # one 1M state at a time on the disk
        print()
        names = list(trees)
        header = "| step | " + " | ".join(f"{name} (s, MB)" for name in names) + (" | ratio |" if len(names) > 1 else " |")
        print(header)
        print("|" + "---|" * (header.count("|") - 1))
        for step in steps:
            cells = [f"{results[step][name]['elapsed']:.1f} s, {results[step][name]['rss_mb']:.0f} MB" for name in names]
            ratio = f" | {results[step]['this tree']['elapsed'] / results[step]['baseline']['elapsed']:.2f}x" if len(names) > 1 else ""
            print(f"| {step} | " + " | ".join(cells) + ratio + " |")
        print(f"(fastest of {args.repeat}; load average {os.getloadavg()[0]:.1f} at the end)")
        if args.check:
            for step, with_paths in (("import --metadata-snapshot (target <= 30 s)", False), ("import --metadata-snapshot --log-dirs (target <= 30 s)", True)):
                if step in kept:
                    print(f"check: the state of `{step}` against the original")
                    check(original, kept[step], with_paths=with_paths)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    sys.exit(main())
