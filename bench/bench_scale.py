"""The cluster state and the planner at the largest real scale (issue 30): 2,600 brokers x 12 log
directories, 10 racks, RF 3, skewed partition sizes, at 1M, 2M and 5M partitions in one run.

    flock /work/notes/heavy.lock python bench/bench_scale.py
        [--partitions 1000000,2000000,5000000] [--brokers 2600] [--new-brokers 100] [--dirs 12]
        [--racks 10] [--seed 7] [--engine auto] [--standalone] [--snapshot-import 1000000]
        [--workdir /tmp/kjbod-bench-scale] [--keep-states] [--tree DIR] [--no-plan] [--reads-only]
        [--read-runs 3]

Each cluster is bench/bench_planner.py's (bench/synthetic.py: unequal racks, log-normal sizes per
topic and partition, hot topics, a few nearly full disks; `--new-brokers` of the brokers empty,
so that `balance` has work), generated once per shape by a child process and cached under
--workdir. Then, for every size, each step runs as its own `kjbod` process, as an operator runs
it, measured end to end (wall time, and the peak resident memory of the whole process tree,
Spark's JVM and Python workers included):

    import cluster --brokers --assignment --log-dirs        target <= 60 s, <= 6 GB
    reads: broker list, broker describe, topic describe (an ordinary and a hot topic),
           log-dirs describe --broker-list 1, features describe       target <= 1 s each
    reassign plan --goal balance --engine auto              target <= 90 s, <= 8 GB
    reassign check of that plan                             target <= 10 s
    metadata export --kafka-snapshot, then import cluster --metadata-snapshot --log-dirs
           (at the sizes of --snapshot-import)             target <= 30 s at 1M

and the figures are printed as a table, with each step's cost per partition against the
smallest size's (cost should grow no faster than the work), in CPU time (user + system, child
processes included), which a busy machine inflates least. `--standalone` also plans the
largest size on a Spark standalone master and worker on this machine (bench/spark_standalone.py,
as tests/planner/test_standalone_cluster.py starts them) and says whether that plan is byte for
byte the local engine's (the local plan is made too when `auto` did not pick it).

`--tree DIR` runs another checkout's kjbod (e.g. `git archive COMMIT | tar -x -C DIR`), for
figures of the code before a change; every kjbod process runs with that directory on PYTHONPATH
and away from any checkout.

`--reads-only` times the reads alone, on states an earlier run imported (it never imports or
removes one): `flock /work/notes/heavy.lock python bench/bench_scale.py --partitions 5000000
--reads-only`. Each read runs `--read-runs` times (the median is the figure; every run is printed).

What is measured is what an operator gets: kjbod's byte code is compiled up front, as `pip
install` leaves an installed kjbod (and its dependencies), so PYTHONDONTWRITEBYTECODE, which
some environments set, changes nothing; PYTHONUNBUFFERED, which such environments set too, is
dropped for the kjbod processes (a terminal's or a pipe's stdout is buffered).

The machine is shared: the load average is printed beside every figure.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from bench_planner import KJBOD, generate_inputs, import_command, print_plan, run_measured, run_plan  # noqa: E402
from synthetic import GIB  # noqa: E402

TARGETS = {"import": (60.0, 6.0), "plan": (90.0, 8.0), "check": (10.0, None), "read": (1.0, None), "snapshot import": (30.0, None)}
# Topics bench/synthetic.py always makes: its first ordinary topic and its first hot topic.
ORDINARY_TOPIC = "service-00000.events"
HOT_TOPIC = "hot.events-00"
READS = [
    ("broker list", ["broker", "list"]),
    ("broker describe --id 1", ["broker", "describe", "--id", "1"]),
    (f"topic describe {ORDINARY_TOPIC}", ["topic", "describe", ORDINARY_TOPIC]),
    (f"topic describe {HOT_TOPIC} (hot)", ["topic", "describe", HOT_TOPIC]),
    ("log-dirs describe --broker-list 1", ["log-dirs", "describe", "--broker-list", "1"]),
    ("features describe", ["features", "describe"]),
]


def load() -> str:
    return f"load {os.getloadavg()[0]:.1f}"


def measured(label: str, command: list[str], env: dict[str, str] | None = None, runs: int = 1) -> dict[str, Any]:
    """One kjbod process (`runs` of them, one after another): its time and its process tree's
    peak memory, printed; with several runs the median time and CPU, and the highest peak."""
    figures = []
    for _ in range(runs):
        result, seconds, peak, cpu = run_measured(command, env)
        if result.returncode != 0:
            raise SystemExit(f"{label} failed ({result.returncode}): {result.stderr.strip()[-2000:]}")
        figures.append({"seconds": seconds, "peak": peak, "cpu": cpu})
    seconds, cpu = (statistics.median(f[key] for f in figures) for key in ("seconds", "cpu"))
    peak = max(f["peak"] for f in figures)
    runs_text = ", ".join(f"{f['seconds']:.2f}" for f in figures)
    each = f" (median of {runs}: {runs_text} s)" if runs > 1 else ""
    print(f"  {label}: {seconds:.2f} s (CPU {cpu:.2f} s), peak {peak / GIB:.2f} GiB{each} ({load()})", flush=True)
    return {"seconds": seconds, "peak": peak, "cpu": cpu}


def one_size(partitions: int, args: argparse.Namespace) -> dict[str, Any]:
    name = f"c{partitions}-b{args.brokers}-n{args.new_brokers}-d{args.dirs}-r{args.racks}-s{args.seed}"
    cluster_dir = args.workdir / name
    inputs = cluster_dir / "input"
    print(f"== {partitions:,} partitions, {args.brokers:,} brokers ({args.new_brokers} empty) x {args.dirs} dirs, {args.racks} racks, RF 3", flush=True)
    state = cluster_dir / "state"
    figures: dict[str, Any] = {"partitions": partitions}
    if args.reads_only and not state.exists():
        raise SystemExit(f"--reads-only: no imported state at {state} (run once without it)")
    if not args.reads_only:
        generate_inputs(inputs, partitions, args)
    if state.exists() and args.keep_states:
        print(f"  reusing the imported state {state} (--keep-states): no import figure")
    else:
        shutil.rmtree(state, ignore_errors=True)
        figures["import"] = measured("import cluster", import_command(inputs, state))
        (cluster_dir / "ready").write_text("")  # bench_planner.prepare's mark: the state is there
    figures["reads"] = {label: measured(label, [*KJBOD, "--state", str(state), *argv], runs=args.read_runs) for label, argv in READS}
    run = None
    if "plan" in args.steps:
        run = run_plan(cluster_dir, "balance", args, args.engine)
        print_plan(f"  reassign plan --goal balance --engine {args.engine}", run)
        print(f"  (plan CPU {run['cpu']:.1f} s; {load()})")
        print(f"  reassign check of the plan ({run['entries']:,} entries): {run['checkSeconds']:.2f} s (CPU {run['checkCpu']:.2f} s), "
              f"peak {run['checkPeak'] / GIB:.2f} GiB ({load()})")
        figures["plan"] = run
    if partitions in args.snapshot_import:
        export = cluster_dir / "export"
        shutil.rmtree(export, ignore_errors=True)
        export.mkdir()
        figures["export"] = measured("metadata export --kafka-snapshot", [*KJBOD, "--state", str(state), "metadata", "export", "--kafka-snapshot", str(export)])
        (snapshot,) = export.iterdir()
        again = cluster_dir / "state-from-snapshot"
        shutil.rmtree(again, ignore_errors=True)
        figures["snapshot import"] = measured(
            "import cluster --metadata-snapshot --log-dirs",
            [*KJBOD, "--state", str(again), "import", "cluster", "--metadata-snapshot", str(snapshot), "--log-dirs", str(inputs / "log-dirs.txt")],
        )
        shutil.rmtree(again, ignore_errors=True)
        shutil.rmtree(export, ignore_errors=True)
    if args.standalone and run is not None and partitions == max(args.sizes):
        figures["standalone"] = on_standalone(cluster_dir, args, run)
    return figures


def on_standalone(cluster_dir: Path, args: argparse.Namespace, planned: dict[str, Any]) -> dict[str, Any]:
    """The balance plan on a standalone master and worker, against the local engine's plan."""
    from spark_standalone import standalone_cluster, worker_python

    local = planned
    if not planned["report"]["engine"].startswith("local"):
        local = run_plan(cluster_dir, "balance", args, "local", name="local")
        print_plan("  reassign plan --engine local (to compare with)", local)
    work = args.workdir / "standalone"
    shutil.rmtree(work, ignore_errors=True)
    with standalone_cluster(work, cores=os.cpu_count() or 2, memory=args.worker_memory) as cluster:
        python = worker_python(work / "worker-python")
        extra = (
            "--spark-master", cluster.master, "--spark-conf", f"spark.pyspark.python={python}",
            "--spark-conf", f"spark.executor.memory={args.executor_memory}", "--spark-conf", "spark.driver.host=127.0.0.1",
        )
        env = {**cluster.env, "PYTHONPATH": os.environ["PYTHONPATH"]}  # the driver runs the chosen tree's kjbod
        run = run_plan(cluster_dir, "balance", args, "auto", extra=extra, name="standalone", env=env)
    print_plan(f"  reassign plan on the standalone cluster ({cluster.master})", run)
    same = run["digest"] == local["digest"]
    print(f"  standalone plan {'==' if same else '!='} local plan, byte for byte ({run['entries']:,} entries)", flush=True)
    return {"run": run, "same": same}


def table(results: list[dict[str, Any]]) -> None:
    """The figures side by side; each step's CPU time per partition against the first size's."""
    base = results[0]

    def cell(step: dict[str, Any] | None, base_step: dict[str, Any] | None, partitions: int, target: tuple[float, float | None]) -> str:
        if step is None:
            return "-"
        text = f"{step['seconds']:.1f} s (CPU {step['cpu']:.1f} s), {step['peak'] / GIB:.1f} GiB"
        if base_step is not None and base_step is not step:
            work = partitions / base["partitions"]
            text += f" ({step['cpu'] / base_step['cpu'] / work:.2f}x the CPU per partition)"
        seconds, gib = target
        ok = step["seconds"] <= seconds and (gib is None or step["peak"] / GIB <= gib)
        return text + ("" if ok else f" **over {seconds:.0f} s" + (f" / {gib:.0f} GB" if gib else "") + "**")

    if "plan" not in base:
        print("\n| partitions | import | reads (slowest) | import --metadata-snapshot --log-dirs |")
        print("|---|---|---|---|")
        for r in results:
            slowest = max(r["reads"].items(), key=lambda item: item[1]["seconds"])
            base_slowest = max(base["reads"].values(), key=lambda step: step["seconds"])
            print(
                f"| {r['partitions']:,} | {cell(r.get('import'), base.get('import'), r['partitions'], TARGETS['import'])} "
                f"| {slowest[0]}: {cell(slowest[1], base_slowest if r is not base else slowest[1], r['partitions'], TARGETS['read'])} "
                f"| {cell(r.get('snapshot import'), None, r['partitions'], TARGETS['snapshot import'])} |"
            )
        return
    print("\n| partitions | import | reads (slowest) | reassign plan (engine) | reassign check | import --metadata-snapshot --log-dirs |")
    print("|---|---|---|---|---|---|")
    for r in results:
        slowest = max(r["reads"].items(), key=lambda item: item[1]["seconds"])
        base_slowest = max(base["reads"].values(), key=lambda step: step["seconds"])
        plan = r["plan"]
        plan_step = {"seconds": plan["seconds"], "peak": plan["peak"], "cpu": plan["cpu"]}
        base_plan = {"seconds": base["plan"]["seconds"], "peak": base["plan"]["peak"], "cpu": base["plan"]["cpu"]} if r is not base else plan_step
        check_step = {"seconds": plan["checkSeconds"], "peak": plan["checkPeak"], "cpu": plan["checkCpu"]}
        base_check = {"seconds": base["plan"]["checkSeconds"], "peak": base["plan"]["checkPeak"], "cpu": base["plan"]["checkCpu"]} if r is not base else check_step
        print(
            f"| {r['partitions']:,} | {cell(r.get('import'), base.get('import'), r['partitions'], TARGETS['import'])} "
            f"| {slowest[0]}: {cell(slowest[1], base_slowest if r is not base else slowest[1], r['partitions'], TARGETS['read'])} "
            f"| {cell(plan_step, base_plan, r['partitions'], TARGETS['plan'])} ({plan['report']['engine']}; {plan['entries']:,} entries) "
            f"| {cell(check_step, base_check, r['partitions'], TARGETS['check'])} "
            f"| {cell(r.get('snapshot import'), None, r['partitions'], TARGETS['snapshot import'])} |"
        )
    for r in results:
        if "plan" not in r:
            continue
        reason = r["plan"]["report"].get("engineReason")
        if reason:
            print(f"engine at {r['partitions']:,} partitions: {r['plan']['report']['engine']} ({reason})")
        if "standalone" in r:
            s = r["standalone"]
            print(f"standalone master and worker at {r['partitions']:,} partitions: {s['run']['seconds']:.1f} s, peak {s['run']['peak'] / GIB:.1f} GiB; "
                  f"plan {'equal to' if s['same'] else 'DIFFERENT from'} the local engine's")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--partitions", default="1000000,2000000,5000000", help="comma-separated sizes, smallest first")
    parser.add_argument("--brokers", type=int, default=2600)
    parser.add_argument("--new-brokers", type=int, default=100, help="of --brokers, how many start empty")
    parser.add_argument("--dirs", type=int, default=12)
    parser.add_argument("--racks", type=int, default=10)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--engine", default="auto", choices=("auto", "spark", "local"))
    parser.add_argument("--standalone", action="store_true", help="also plan the largest size on a standalone master and worker")
    parser.add_argument("--worker-memory", default="6g", help="the standalone worker's memory")
    parser.add_argument("--executor-memory", default="4g")
    parser.add_argument("--snapshot-import", default="1000000", help="sizes at which to time import --metadata-snapshot --log-dirs")
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/kjbod-bench-scale"))
    parser.add_argument("--keep-states", action="store_true", help="reuse the states imported by an earlier run (no import figures)")
    parser.add_argument("--tree", type=Path, default=HERE.parent, help="the checkout whose kjbod runs (default: this one)")
    parser.add_argument("--no-plan", dest="steps", action="store_const", const={"import", "reads", "snapshot"},
                        default={"import", "reads", "plan", "snapshot"}, help="leave out reassign plan and check (the import and the reads only)")
    parser.add_argument("--reads-only", action="store_true", help="only the reads, on the states of an earlier run (nothing imported or removed)")
    parser.add_argument("--read-runs", type=int, default=3, help="runs of each read; the median is the figure")
    args = parser.parse_args()
    args.sizes = [int(s) for s in args.partitions.split(",")]
    args.snapshot_import = {int(s) for s in args.snapshot_import.split(",") if s}
    if args.reads_only:
        args.keep_states, args.steps, args.snapshot_import, args.standalone = True, {"reads"}, set(), False
    # What an operator's shell has: stdout buffered (see the module docstring).
    os.environ.pop("PYTHONUNBUFFERED", None)
    args.workdir.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    # Every kjbod process runs the chosen tree's code: first on the path, and `-m` puts the
    # working directory before it, so they run away from any checkout.
    tree = args.tree.resolve()
    os.environ["PYTHONPATH"] = str(tree)
    os.chdir(tempfile.gettempdir())
    where = subprocess.run([sys.executable, "-c", "import kjbod; print(kjbod.__file__)"], capture_output=True, text=True, check=True).stdout
    if not where.startswith(str(tree)):
        raise SystemExit(f"kjbod is imported from {where.strip()}, not from {tree}")
    # Byte-code compiled up front, as `pip install` leaves an installed kjbod (bench_open.py does the same).
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(tree / "kjbod")], check=True)
    print(f"kjbod from {tree}; machine: {os.cpu_count()} cores, {load()} at the start (shared machine)", flush=True)
    results = [one_size(size, args) for size in args.sizes]
    table(results)
    print(f"({(time.perf_counter() - started) / 60:.0f} minutes in all; {load()} at the end)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
