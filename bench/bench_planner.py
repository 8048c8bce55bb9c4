"""The placement planner at scale: time, peak memory and plan quality on synthetic clusters.

    python bench/bench_planner.py                          # 1000 brokers x 12 dirs, 1M partitions, balance
    python bench/bench_planner.py --partitions 200000,1000000 --repeat 2 # Spark against local, interleaved
    python bench/bench_planner.py --partitions 100000,300000,1000000     # scaling
    python bench/bench_planner.py --goals remove-brokers,drain-dirs      # the must-move goals
    python bench/bench_planner.py --partitions 200000 --assigner         # against kafka-assigner
    python bench/bench_planner.py --waves 5                                # the balance plan in waves, checked in sequence
    python bench/bench_planner.py --engines local --repeat 2 --explain     # what --explain adds: time, CPU, file size

Each cluster comes from bench/synthetic.py (racks of unequal size, skewed partition sizes, hot
topics, nearly full disks) with `--new-brokers` empty brokers added, so `balance` starts skewed.
Disks are sized so the cluster would be half full when even. The cluster is imported with
`kjbod import cluster`, then `kjbod reassign plan` runs as a subprocess, end to end (reading the
state, Spark, writing the plan), while the whole process tree's memory is sampled; once per
engine of `--engines` (alternating, `--repeat` times), so that the engines' ratio comes from the
same run on the same machine: the medians' ratio is printed, and whether the engines' plans are
byte for byte the same. Every plan is then checked by `kjbod reassign check` (the hard rules)
and the figures printed:

    time, peak memory (process tree, Spark's JVM included), hard-rule violations, replica count,
    leader and byte spread across brokers, directory spread within brokers, data moved against
    the lower bound the report computes.

`--explain` plans each goal again with `--explain FILE` after every plain run (same engine,
alternating), and prints what it adds: the explanation's own time (from the report), the end to
end time and CPU time against the plain runs' medians, and the file's size and lines.

`--assigner` also runs LinkedIn's kafka-assigner (kafka-tools 0.1.9, `balance -t count
rackaware`) on the same broker-level input, in its own virtual environment (created on first
use under --workdir), and prints its time, partitions moved and spreads beside ours.
"""

from __future__ import annotations

import argparse
import json
import hashlib
import math
import os
import resource
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from synthetic import GIB, SyntheticSpec, generate, write_files  # noqa: E402

KJBOD = [sys.executable, "-m", "kjbod"]


def tree_rss(pid: int) -> int:
    """Resident bytes of a process and all its descendants (Spark's JVM and Python workers)."""
    children: dict[int, list[int]] = {}
    rss: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            children.setdefault(int(fields[1]), []).append(int(entry))
            rss[int(entry)] = int(fields[21]) * os.sysconf("SC_PAGE_SIZE")
        except (OSError, IndexError, ValueError):
            continue
    total, stack = 0, [pid]
    while stack:
        p = stack.pop()
        total += rss.get(p, 0)
        stack.extend(children.get(p, []))
    return total


def run_measured(command: list[str], env: dict[str, str] | None = None) -> tuple[subprocess.CompletedProcess[str], float, int, float]:
    """Run a command; return it, its wall time, the peak memory of its process tree and its CPU
    time (user + system, its descendants' included: what a busy machine inflates least)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    peak = 0
    stop = threading.Event()

    def sample() -> None:
        nonlocal peak
        while not stop.is_set():
            peak = max(peak, tree_rss(process.pid))
            stop.wait(0.25)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    out, err = process.communicate()
    stop.set()
    sampler.join()
    elapsed = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    return subprocess.CompletedProcess(command, process.returncode, out, err), elapsed, peak, cpu


def prepare(workdir: Path, partitions: int, args: argparse.Namespace) -> Path:
    """Generate, resize the disks, and import a cluster; reuse it when already there. The
    import's time and peak memory are kept in import.json beside the state."""
    name = f"c{partitions}-b{args.brokers}-n{args.new_brokers}-d{args.dirs}-r{args.racks}-s{args.seed}"
    cluster_dir = workdir / name
    state = cluster_dir / "state"
    if (cluster_dir / "ready").exists():
        return cluster_dir
    cluster_dir.mkdir(parents=True, exist_ok=True)
    generate_inputs(cluster_dir / "input", partitions, args)
    result, elapsed, peak, _ = run_measured(import_command(cluster_dir / "input", state))
    if result.returncode != 0:
        raise SystemExit(f"import failed: {result.stderr.strip()}")
    print(f"  imported in {elapsed:.1f} s (peak {peak / GIB:.1f} GiB)", flush=True)
    (cluster_dir / "import.json").write_text(json.dumps({"seconds": elapsed, "peak": peak}))
    (cluster_dir / "ready").write_text("")
    return cluster_dir


def import_command(inputs: Path, state: Path) -> list[str]:
    return [
        *KJBOD, "--state", str(state), "import", "cluster", "--brokers", str(inputs / "brokers.json"),
        "--assignment", str(inputs / "assignment.json"), "--log-dirs", str(inputs / "log-dirs.txt"),
    ]


def generate_inputs(inputs: Path, partitions: int, args: argparse.Namespace) -> None:
    """The cluster's import files, written by a child process (kept once `ready` is there): the
    generator's documents take gigabytes at millions of partitions, which this process, whose
    children are measured, should not hold."""
    if (inputs / "ready").exists():
        return
    shape = [partitions, args.brokers, args.new_brokers, args.dirs, args.racks, args.seed]
    code = f"import sys, json; sys.path.insert(0, {str(HERE)!r}); import bench_planner; bench_planner.write_inputs(sys.argv[1], *json.loads(sys.argv[2]))"
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", code, str(inputs), json.dumps(shape)], check=True)
    (inputs / "ready").write_text("")
    print(f"  generated {partitions} partitions in {time.perf_counter() - started:.1f} s", flush=True)


def write_inputs(inputs: str, partitions: int, brokers: int, new_brokers: int, dirs: int, racks: int, seed: int) -> None:
    """bench/synthetic.py's cluster with `new_brokers` of `brokers` empty and the disks resized."""
    loaded = brokers - new_brokers
    cluster = generate(
        SyntheticSpec(brokers=loaded, dirs_per_broker=dirs, partitions=partitions, racks=racks, hot_topics=4, full_dirs=max(2, brokers // 80), seed=seed)
    )
    _add_empty_brokers(cluster.brokers, new_brokers, dirs)
    _resize_disks(cluster, set(cluster.full))
    write_files(cluster, Path(inputs))


def _add_empty_brokers(brokers_doc: dict[str, Any], count: int, dirs: int) -> None:
    existing = brokers_doc["brokers"]
    racks = sorted({b["rack"] for b in existing})
    next_id = max(b["id"] for b in existing) + 1
    paths = [d["path"] for d in existing[0]["log_dirs"]][:dirs]
    for i in range(count):
        existing.append({"id": next_id + i, "rack": racks[i % len(racks)], "log_dirs": [{"path": p, "capacity_bytes": 0} for p in paths]})


def _resize_disks(cluster: Any, full: set[tuple[int, str]]) -> None:
    """One disk size that makes the cluster half full once even; a disk that would be over 90%
    full with it is bigger (some brokers have bigger disks), except the few meant to be nearly full."""
    used: dict[tuple[int, str], int] = {}
    for broker in cluster.log_dirs["brokers"]:
        for log_dir in broker["logDirs"]:
            used[(broker["broker"], log_dir["logDir"])] = sum(p["size"] for p in log_dir["partitions"] if not p["isFuture"])
    all_dirs = [(b["id"], d["path"]) for b in cluster.brokers["brokers"] for d in b["log_dirs"]]
    standard = sum(used.values()) / (len(all_dirs) * 0.5)
    standard = int(math.ceil(standard / (100 * GIB)) * 100 * GIB)
    for broker in cluster.brokers["brokers"]:
        for log_dir in broker["log_dirs"]:
            key = (broker["id"], log_dir["path"])
            bytes_used = used.get(key, 0)
            if key in full:
                log_dir["capacity_bytes"] = max(int(bytes_used / 0.95), 1)
            elif bytes_used > 0.9 * standard:
                log_dir["capacity_bytes"] = int(math.ceil(bytes_used / 0.9 / (100 * GIB)) * 100 * GIB)
            else:
                log_dir["capacity_bytes"] = standard


def goal_options(goal: str, cluster_dir: Path, args: argparse.Namespace) -> list[str]:
    brokers = json.loads((cluster_dir / "input" / "brokers.json").read_bytes())["brokers"]
    if goal == "remove-brokers":
        return ["--brokers", ",".join(str(b["id"]) for b in brokers[:2])]
    if goal == "drain-dirs":
        step = max(1, (args.brokers - args.new_brokers) // 20)
        chosen = brokers[: args.brokers - args.new_brokers : step][:20]
        options = []
        for b in chosen:
            options += ["--dir", f"{b['id']}:{b['log_dirs'][1]['path']}"]
        return options
    return []


def run_plan(
    cluster_dir: Path, goal: str, args: argparse.Namespace, engine: str, *, extra: tuple[str, ...] = (), name: str = "",
    env: dict[str, str] | None = None,
) -> dict[str, Any]:
    """`reassign plan` (options `extra` added, run with `env`) into plan-GOAL[-NAME].json, then
    `reassign check` of it; both measured."""
    plan_file = cluster_dir / f"plan-{goal}{'-' + name if name else ''}.json"
    command = [
        *KJBOD, "--state", str(cluster_dir / "state"), "-o", "json", "reassign", "plan", "--goal", goal,
        "--engine", engine, "--output-file", str(plan_file), "--overwrite", *goal_options(goal, cluster_dir, args), *extra,
    ]
    result, elapsed, peak, cpu = run_measured(command, env)
    if result.returncode != 0:
        raise SystemExit(f"plan failed ({result.returncode}): {result.stderr.strip()[-2000:]}")
    report = json.loads(result.stdout)
    check, check_seconds, check_peak, check_cpu = run_measured(
        [*KJBOD, "--state", str(cluster_dir / "state"), "-o", "json", "reassign", "check", "--reassignment-json-file", str(plan_file)]
    )
    try:
        verdict = json.loads(check.stdout)
        violations: Any = f"{verdict['counts'].get('error', 0)} error(s)" + (f" in {', '.join(verdict['failedChecks'])}" if verdict["failedChecks"] else "")
    except (ValueError, KeyError, TypeError):
        violations = f"unreadable check output: {check.stderr.strip()[-300:]}"
    written = plan_file.read_bytes()
    digest = hashlib.sha256(written).hexdigest()
    return {
        "report": report, "seconds": elapsed, "peak": peak, "violations": violations, "checkExit": check.returncode, "digest": digest,
        "checkSeconds": check_seconds, "checkPeak": check_peak, "cpu": cpu, "checkCpu": check_cpu, "entries": written.count(b'"topic"'),  # no topic name holds a quote
    }


def print_plan(label: str, run: dict[str, Any]) -> None:
    r = run["report"]
    before, after = r["before"], r["after"]
    print(f"{label}: {run['seconds']:.1f} s end to end (planner {r['seconds']:.1f} s), peak memory {run['peak'] / GIB:.2f} GiB")
    print(f"  engine: {r['engine']}" + (f" ({r['engineReason']})" if r.get("engineReason") else ""))
    print(f"  hard-rule violations (reassign check): {run['violations']} (exit {run['checkExit']})")
    print(
        f"  replicas per broker: max deviation {before['replicasMaxDeviationPercent']:.2f}% -> {after['replicasMaxDeviationPercent']:.2f}% "
        f"({after['replicasMin']}-{after['replicasMax']})"
    )
    print(
        f"  preferred leaders per broker: max deviation {before['leadersMaxDeviationPercent']:.2f}% -> {after['leadersMaxDeviationPercent']:.2f}% "
        f"({before.get('leadersMaxDeviation', 0):.1f} -> {after.get('leadersMaxDeviation', 0):.1f} leaders from the mean); "
        f"{r.get('partitionsReorderedOnly', 0)} partitions reordered only"
    )
    print(f"  bytes per broker: max deviation {before['bytesMaxDeviationPercent']:.2f}% -> {after['bytesMaxDeviationPercent']:.2f}%")
    print(
        f"  directory usage, furthest from its broker's mean: {before['directoryUsageMaxPointsFromBrokerMean']:.2f} -> "
        f"{after['directoryUsageMaxPointsFromBrokerMean']:.2f} points; fullest {before['directoryUsageMaxPercent']:.1f}% -> "
        f"{after['directoryUsageMaxPercent']:.1f}%"
    )
    print(f"  rack violations {before['rackViolations']} -> {after['rackViolations']}; unsatisfiable partitions {len(r['unsatisfiable'])}")
    ratio = r["movedOverLowerBound"]
    print(
        f"  moved: {r['partitionsChanged']} partitions, {r['replicasMovedBetweenBrokers']} replicas between brokers, "
        f"{r['replicasMovedBetweenDirectories']} between directories; {r['bytesMoved'] / GIB:,.0f} GiB = "
        f"{ratio if ratio is not None else '-'}x the lower bound ({r['lowerBoundBytes'] / GIB:,.0f} GiB)"
    )
    for note in r["notes"]:
        print(f"  note: {note}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--partitions", default="1000000", help="comma-separated sizes")
    parser.add_argument("--brokers", type=int, default=1000)
    parser.add_argument("--new-brokers", type=int, default=100, help="of --brokers, how many start empty")
    parser.add_argument("--dirs", type=int, default=12)
    parser.add_argument("--racks", type=int, default=10)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--goals", default="balance")
    parser.add_argument("--engines", default="spark,local", help="comma-separated, of auto, spark, local: run alternately")
    parser.add_argument("--repeat", type=int, default=1, help="runs of each engine per goal (alternating)")
    parser.add_argument("--assigner", action="store_true", help="also run kafka-assigner count+rackaware")
    parser.add_argument("--waves", type=int, metavar="K", help="also write the balance plan as waves of at most K moves per broker and check them")
    parser.add_argument("--explain", action="store_true", help="also plan with --explain after each run, and print what it adds")
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/kjbod-bench-planner"))
    args = parser.parse_args()
    args.workdir.mkdir(parents=True, exist_ok=True)
    engines = args.engines.split(",")
    print(f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f} at the start (shared machine: ratios are from the same run)")
    times: list[tuple[int, float]] = []
    for size in (int(s) for s in args.partitions.split(",")):
        print(f"== {size} partitions, {args.brokers} brokers ({args.new_brokers} empty) x {args.dirs} dirs, {args.racks} racks", flush=True)
        cluster_dir = prepare(args.workdir, size, args)
        for goal in args.goals.split(","):
            runs: dict[str, list[dict[str, Any]]] = {engine: [] for engine in engines}
            explained: dict[str, list[dict[str, Any]]] = {engine: [] for engine in engines}
            for attempt in range(args.repeat):
                for engine in engines:
                    run = run_plan(cluster_dir, goal, args, engine)
                    runs[engine].append(run)
                    print_plan(f"{goal} ({engine}, run {attempt + 1})", run)
                    if args.explain:
                        why = cluster_dir / f"why-{goal}.jsonl"
                        explained[engine].append(run_plan(cluster_dir, goal, args, engine, extra=("--explain", str(why)), name="explained"))
                        explained[engine][-1]["whyBytes"] = why.stat().st_size
                        with why.open("rb") as lines:
                            explained[engine][-1]["whyLines"] = sum(1 for _ in lines)
            compare_engines(goal, runs)
            if args.explain:
                print_explain_cost(goal, runs, explained)
            if goal == "balance":
                times.append((size, statistics.median(r["seconds"] for r in runs[engines[0]])))
        if args.waves:
            run_waves(cluster_dir, args.waves, engines[-1])
        if args.assigner:
            from assigner_peer import run_assigner  # noqa: PLC0415  (kept apart: it needs its own venv)

            ours = run_plan(cluster_dir, "balance", args, engines[0])
            print_plan(f"balance ({engines[0]}, beside kafka-assigner)", ours)
            run_assigner(cluster_dir, args.workdir, ours)
    if len(times) > 1:
        base_size, base_time = times[0]
        print(f"scaling (balance, {engines[0]}, end to end):")
        for size, seconds in times:
            print(f"  {size:>9} partitions: {seconds:6.1f} s  ({seconds / base_time:.2f}x the time for {size / base_size:.0f}x the partitions)")
    return 0


def run_waves(cluster_dir: Path, per_broker: int, engine: str) -> None:
    """The balance plan written as waves of at most `per_broker` moves per broker, and
    `reassign check` of the waves one after another."""
    for old in cluster_dir.glob("plan-waves*.json"):
        old.unlink()
    plan_file = cluster_dir / "plan-waves.json"
    state = str(cluster_dir / "state")
    command = [
        *KJBOD, "--state", state, "-o", "json", "reassign", "plan", "--goal", "balance", "--engine", engine,
        "--max-concurrent-moves-per-broker", str(per_broker), "--output-file", str(plan_file),
    ]
    result, elapsed, peak, _ = run_measured(command)
    if result.returncode != 0:
        raise SystemExit(f"plan in waves failed ({result.returncode}): {result.stderr.strip()[-2000:]}")
    waves = json.loads(result.stdout)["waves"]
    sizes = waves["partitions"]
    print(
        f"balance in waves of at most {per_broker} moves per broker ({engine}): {elapsed:.1f} s end to end, peak {peak / GIB:.2f} GiB; "
        f"{waves['count']} waves (lower bound {waves['lowerBound']}: the busiest broker's moves / {per_broker}); "
        f"partitions per wave {min(sizes)}-{max(sizes)} (first {sizes[0]}, median {statistics.median(sizes):.0f})"
    )
    for note in waves["notes"]:
        print(f"  note: {note}")
    pattern = str(cluster_dir / "plan-waves.wave-*.json")
    check, elapsed, peak, _ = run_measured([*KJBOD, "--state", state, "-o", "json", "reassign", "check", "--reassignment-json-file", pattern])
    try:
        verdict = json.loads(check.stdout)
        print(
            f"  reassign check of the {len(verdict['waves'])} waves one after another: exit {check.returncode}, {verdict['summary']} "
            f"({elapsed:.1f} s, peak {peak / GIB:.2f} GiB)"
        )
    except (ValueError, KeyError):
        print(f"  reassign check: exit {check.returncode}, unreadable output: {check.stderr.strip()[-500:]}")


def print_explain_cost(goal: str, runs: dict[str, list[dict[str, Any]]], explained: dict[str, list[dict[str, Any]]]) -> None:
    """What --explain added, per engine: medians of the plain and the explained runs."""
    for engine, plain in runs.items():
        with_explain = explained[engine]
        if not plain or not with_explain:
            continue
        last = with_explain[-1]
        summary = last["report"]["explanation"]
        own = statistics.median(r["report"]["explanation"]["seconds"] for r in with_explain)
        wall = statistics.median(r["seconds"] for r in plain), statistics.median(r["seconds"] for r in with_explain)
        cpu = statistics.median(r["cpu"] for r in plain), statistics.median(r["cpu"] for r in with_explain)
        peak = max(r["peak"] for r in plain), max(r["peak"] for r in with_explain)
        same = {r["digest"] for r in plain} == {r["digest"] for r in with_explain}
        print(
            f"{goal} --explain ({engine}, {len(with_explain)} run(s)): {summary['moves']:,} moved replicas explained, "
            f"{summary['unreached']:,} goals not reached; file {last['whyBytes'] / 1e6:,.1f} MB in {last['whyLines']:,} lines "
            f"({last['whyBytes'] / max(last['whyLines'], 1):.0f} bytes a line)"
        )
        print(
            f"  the explanation's own time (report) {own:.2f} s; end to end {wall[0]:.1f} -> {wall[1]:.1f} s (+{wall[1] - wall[0]:.1f} s), "
            f"CPU {cpu[0]:.1f} -> {cpu[1]:.1f} s (+{cpu[1] - cpu[0]:.1f} s), peak {peak[0] / GIB:.2f} -> {peak[1] / GIB:.2f} GiB; "
            f"the same plan: {same}"
        )
        print(f"  moves by goal: {summary['movesByGoal']}; not reached: {summary['unreachedByGoal']}")


def compare_engines(goal: str, runs: dict[str, list[dict[str, Any]]]) -> None:
    """The engines' median times side by side, their ratio to the last engine, and whether every
    run wrote the same plan."""
    engines = list(runs)
    if len(engines) < 2:
        return
    base = engines[-1]
    base_wall = statistics.median(r["seconds"] for r in runs[base])
    base_planner = statistics.median(r["report"]["seconds"] for r in runs[base])
    for engine in engines[:-1]:
        wall = statistics.median(r["seconds"] for r in runs[engine])
        planner = statistics.median(r["report"]["seconds"] for r in runs[engine])
        print(
            f"{goal}: {engine}/{base} wall-time ratio {wall / base_wall:.2f} ({wall:.1f} s / {base_wall:.1f} s, medians of "
            f"{len(runs[engine])} and {len(runs[base])}); planner only {planner / base_planner:.2f}"
        )
    digests = {r["digest"] for rs in runs.values() for r in rs}
    print(f"{goal}: {'the same plan from every run of every engine' if len(digests) == 1 else f'{len(digests)} different plans!'}")


if __name__ == "__main__":
    raise SystemExit(main())
