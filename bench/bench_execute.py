"""Executing a planner batch at scale: `reassign execute`, `verify`, `clock advance --until-idle`.

    python bench/bench_execute.py /tmp/kjbod-bench-planner/c1000000-b1000-n100-d12-r10-s7
    python bench/bench_execute.py CLUSTER_DIR --batches 5000,20000 --workdir /tmp/bench-execute
    PYTHONPATH=/path/to/other/checkout python bench/bench_execute.py CLUSTER_DIR   # another kjbod

CLUSTER_DIR holds a cluster state (`state/`) and a planner plan (`plan-balance.json`), as
bench/bench_planner.py leaves them. For each batch size N the state is copied (`cp -r`, never
touched in place), the first N partitions of the plan become the batch file, and the operator's
sequence runs end to end, each step as its own `kjbod` process (state loading included):

    reassign execute --throttle 100000000
    reassign verify
    clock advance --until-idle
    reassign verify

Each step's wall time, CPU time (the kjbod process's user + system: what a shared, loaded
machine changes least), exit code and the records it wrote (the log's end offset before and
after) are printed; its stdout and stderr are kept in the work directory, so the outputs of two kjbod
versions can be compared with `diff -r`. A step that runs longer than --timeout is stopped and
reported as such (later steps still run, on the state it left unchanged).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

KJBOD = [sys.executable, "-m", "kjbod"]


def log_end_offset(state: Path) -> int:
    """The offset after the last committed record (the log is read from its last segment)."""
    from kjbod.log.record_log import RecordLog

    log = RecordLog(state)
    for _ in log.batches(from_offset=1 << 62):
        pass
    return log.next_offset or 0


def slice_plan(plan_path: Path, count: int, out: Path) -> int:
    plan = json.loads(plan_path.read_text())
    batch = {"version": 1, "partitions": plan["partitions"][:count]}
    out.write_text(json.dumps(batch))
    return len(batch["partitions"])


def run_step(name: str, args: list[str], state: Path, outdir: Path, timeout: float, cwd: Path) -> dict:
    before = log_end_offset(state)
    started, children = time.perf_counter(), resource.getrusage(resource.RUSAGE_CHILDREN)
    # cwd outside any checkout: `python -m` puts the working directory first on sys.path.
    process = subprocess.Popen(
        [*KJBOD, "--state", str(state), *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=cwd
    )
    try:
        stdout, stderr = process.communicate(timeout=timeout)
        code: int | str = process.returncode
    except subprocess.TimeoutExpired:
        process.kill()
        stdout, stderr = process.communicate()
        code = "timeout"
    elapsed = time.perf_counter() - started
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (used.ru_utime - children.ru_utime) + (used.ru_stime - children.ru_stime)
    (outdir / f"{name}.stdout").write_text(stdout)
    (outdir / f"{name}.stderr").write_text(stderr)
    written = log_end_offset(state) - before
    last = next((line for line in reversed(stdout.splitlines()) if line.strip()), "")
    return {"step": name, "seconds": elapsed, "cpu": cpu, "exit": code, "records": written, "last": last}


def bench_batch(cluster: Path, plan_name: str, count: int, workdir: Path, throttle: int, timeout: float) -> list[dict]:
    root = workdir / f"batch-{count}"
    if root.exists():
        shutil.rmtree(root)
    root.mkdir(parents=True)
    state = root / "state"
    started = time.perf_counter()
    subprocess.run(["cp", "-r", str(cluster / "state"), str(state)], check=True)
    print(f"batch {count}: state copied in {time.perf_counter() - started:.1f}s", flush=True)
    batch_file = root / "batch.json"
    actual = slice_plan(cluster / plan_name, count, batch_file)
    if actual != count:
        print(f"batch {count}: the plan has only {actual} partitions", flush=True)
    plan = ["--reassignment-json-file", str(batch_file)]
    steps = [
        ("1-execute", ["reassign", "execute", *plan, "--throttle", str(throttle)]),
        ("2-verify", ["reassign", "verify", *plan]),
        ("3-advance", ["clock", "advance", "--until-idle"]),
        ("4-verify", ["reassign", "verify", *plan]),
    ]
    results = []
    for name, args in steps:
        result = run_step(name, args, state, root, timeout, root)
        results.append(result)
        print(
            f"batch {count}: {name:10} {result['seconds']:8.1f}s  cpu {result['cpu']:7.1f}s  exit {result['exit']!s:7}  "
            f"records {result['records']:7}  | {result['last'][:110]}",
            flush=True,
        )
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("cluster", type=Path, help="A directory with state/ and the plan (bench_planner.py's).")
    parser.add_argument("--batches", default="5000,20000", help="Batch sizes: the first N partitions of the plan.")
    parser.add_argument("--plan", default="plan-balance.json", help="The plan file in the cluster directory.")
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/kjbod-bench-execute"), help="Where states are copied.")
    parser.add_argument("--throttle", type=int, default=100_000_000, help="--throttle of reassign execute (B/s).")
    parser.add_argument("--timeout", type=float, default=3600.0, help="Stop a step after this many seconds.")
    parser.add_argument("--keep", action="store_true", help="Keep the copied states (they are large).")
    options = parser.parse_args()
    sizes = [int(n) for n in options.batches.split(",") if n.strip()]
    options.workdir.mkdir(parents=True, exist_ok=True)
    print(f"kjbod: {subprocess.run([*KJBOD, '--version'], capture_output=True, text=True, cwd=options.workdir).stdout.strip()}"
          f" (PYTHONPATH={os.environ.get('PYTHONPATH', '')})", flush=True)
    summary = {}
    for count in sizes:
        summary[count] = bench_batch(options.cluster, options.plan, count, options.workdir, options.throttle, options.timeout)
        if not options.keep:
            shutil.rmtree(options.workdir / f"batch-{count}" / "state", ignore_errors=True)
    print()
    print(f"{'batch':>7} {'step':10} {'seconds':>9} {'cpu':>7} {'exit':>7} {'records':>8}")
    for count, results in summary.items():
        for r in results:
            print(f"{count:7} {r['step']:10} {r['seconds']:9.1f} {r['cpu']:7.1f} {r['exit']!s:>7} {r['records']:8}")


if __name__ == "__main__":
    main()
