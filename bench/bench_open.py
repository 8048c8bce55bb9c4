"""Opening a million-partition cluster state: every command's time and peak memory, against a
baseline checkout measured in the same run (issue 17).

    flock /work/notes/heavy.lock python bench/bench_open.py --baseline /tmp/kjbod-base
        [--partitions 1000000] [--runs 3] [--work /tmp/kjbod-bench-open] [--steps reads,writes,bound,check,replay,plan]
        [--same-state]

--baseline is a checkout of the code to compare with (e.g. `git worktree add /tmp/kjbod-base
<commit>`): its commands run with that checkout first on PYTHONPATH, the rest with this one. Each
command is a separate `python -m kjbod` process, as an operator runs it: interpreter start-up,
imports, loading the state and writing the output are all in the figure. Peak memory is the
process's maximum resident set (os.wait4), mapped snapshot pages included.

The state is built once and cached under --work: bench/synthetic.py's cluster (1000 brokers x
12 directories, RF 3, 5 racks, hot topics, full and failed disks), imported by each side's own
`import cluster` (the baseline's state has a snapshot of records, this side's a columnar one).
The planner steps use bench/bench_planner.py's cluster (the same generator, 100 of the 1000
brokers empty, cached under its own --workdir), whose balance plan is the ~350k-entry plan
`reassign check` is timed on; this side converts a copy of that state with `metadata snapshot`.

Targets (issue 17): read commands <= 1.0 s and <= 500 MB each; writes of a few partitions
<= 1.5 s; reassign check of a ~350k-entry plan <= 3 s; reassign plan --engine local <= 30 s.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

from bench_check import failed_dirs, write_plan  # noqa: E402 (after the path set-up above)
from synthetic import SyntheticSpec, generate, write_files  # noqa: E402

MIB = 1024 * 1024


@dataclass
class Side:
    name: str
    code: Path  # the checkout whose kjbod runs

    def env(self) -> dict[str, str]:
        env = dict(os.environ)
        env["PYTHONPATH"] = str(self.code)
        env.setdefault("PYTHONHASHSEED", "0")
        return env


@dataclass
class Run:
    seconds: float
    cpu: float  # user + system: what a busy machine inflates least
    peak_mib: float
    code: int
    stdout: str
    stderr: str


def run(side: Side, argv: list[str], *, check: bool = True) -> Run:
    """One process, timed, with its peak resident memory. It runs in a directory holding no
    checkout: `python -m` and `-c` put the working directory first on sys.path, before
    PYTHONPATH, so a checkout there would be the kjbod that runs, whatever the side."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        started = time.perf_counter()
        process = subprocess.Popen([sys.executable, *argv], stdout=out, stderr=err, env=side.env(), cwd=tempfile.gettempdir())
        _, status, usage = os.wait4(process.pid, 0)
        elapsed = time.perf_counter() - started
        process.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        cpu = usage.ru_utime + usage.ru_stime
        result = Run(elapsed, cpu, usage.ru_maxrss / 1024, process.returncode, out.read().decode(), err.read().decode())
    if check and result.code != 0:
        raise SystemExit(f"{side.name}: {' '.join(argv)} failed ({result.code}): {result.stderr.strip()[-2000:]}")
    return result


def kjbod(side: Side, state: Path, *args: str, check: bool = True) -> Run:
    return run(side, ["-m", "kjbod", "--state", str(state), *args], check=check)


def copy_state(source: Path, target: Path, *, snapshots: bool = True) -> Path:
    if target.exists():
        shutil.rmtree(target)
    target.mkdir(parents=True)
    for item in source.iterdir():
        if item.name.endswith(".snapshot") and not snapshots:
            continue
        if item.is_file():
            shutil.copy2(item, target / item.name)
    return target


def row(label: str, before: list[Run] | None, after: list[Run], target: str = "") -> None:
    """One line: median wall time (and CPU time) and worst peak of each side, and the ratios."""

    def figures(runs: list[Run]) -> tuple[float, float, float, str]:
        wall = statistics.median(r.seconds for r in runs)
        cpu = statistics.median(r.cpu for r in runs)
        peak = max(r.peak_mib for r in runs)
        return wall, cpu, peak, f"{wall:.2f} s (CPU {cpu:.2f} s), {peak:,.0f} MiB"

    a, a_cpu, a_peak, a_text = figures(after)
    if before:
        b, b_cpu, b_peak, b_text = figures(before)
        print(f"| {label} | {b_text} | {a_text} | {b / a:.1f}x faster (CPU {b_cpu / a_cpu:.1f}x), {b_peak / a_peak:.1f}x less memory | {target} |")
    else:
        print(f"| {label} | not run | {a_text} | | {target} |")
    sys.stdout.flush()


def header(title: str) -> None:
    print(f"\n{title}\n\n| command | before | after | ratio | target |\n|---|---|---|---|---|")


# The states -------------------------------------------------------------------------------------


def planner_cluster(planner_work: str, partitions: int) -> str:
    """bench/bench_planner.py's cluster, generated and imported when it is not cached yet (by the
    kjbod on PYTHONPATH: the baseline's, when there is one)."""
    import bench_planner

    options = argparse.Namespace(brokers=1000, new_brokers=100, dirs=12, racks=10, seed=7)
    return str(bench_planner.prepare(Path(planner_work), partitions, options))


def synthetic_inputs(work: Path, partitions: int) -> Path:
    inputs = work / f"c{partitions}" / "input"
    if not (inputs / "ready").exists():
        in_child("generate_inputs", inputs, partitions)
    return inputs


def generate_inputs(inputs: str, partitions: int) -> None:
    """bench/synthetic.py's cluster as import files (bench/bench_import.py's spec)."""
    inputs = Path(inputs)  # type: ignore[assignment]
    spec = SyntheticSpec(
        brokers=1000, dirs_per_broker=12, partitions=partitions, replication_factor=3, racks=5, hot_topics=4, full_dirs=6, failed_dirs=2, seed=1
    )
    started = time.perf_counter()
    write_files(generate(spec), inputs)
    (inputs / "ready").write_text("")
    print(f"generated the synthetic cluster ({partitions:,} partitions) in {time.perf_counter() - started:.1f} s")


def imported_state(side: Side, inputs: Path, state: Path, *, again: bool) -> Path:
    ready = state.with_name(state.name + ".ready")
    if ready.exists() and not again:
        return state
    if state.exists():
        shutil.rmtree(state)
    ready.unlink(missing_ok=True)
    result = run(side, ["-m", "kjbod", "--state", str(state), "import", "cluster", "--brokers", str(inputs / "brokers.json"),
                        "--assignment", str(inputs / "assignment.json"), "--log-dirs", str(inputs / "log-dirs.txt")])
    size = sum(p.stat().st_size for p in state.iterdir()) / MIB
    print(f"{side.name}: import cluster {result.seconds:.1f} s, peak {result.peak_mib:,.0f} MiB, state {size:,.0f} MiB "
          f"({', '.join(f'{p.name} {p.stat().st_size / MIB:,.0f} MiB' for p in sorted(state.iterdir()) if p.suffix in ('.log', '.snapshot'))})")
    ready.write_text("")
    return state


def in_child(function: str, *args: object, env: dict[str, str] | None = None) -> object:
    """Run one of this module's helpers in a child process and return its JSON result: the big
    input documents never enter this process, whose memory its children would inherit (the peak
    memory of a forked child counts its parent's pages)."""
    code = f"import json, sys; sys.path.insert(0, {str(HERE)!r}); import bench_open; print(json.dumps(bench_open.{function}(*json.loads(sys.argv[1]))))"
    result = subprocess.run([sys.executable, "-c", code, json.dumps([str(a) if isinstance(a, Path) else a for a in args])],
                            capture_output=True, text=True, check=True, env=env, cwd=tempfile.gettempdir())
    # The result is the last line; a helper's progress lines (bench_planner.prepare prints its
    # own) come before it and are passed on.
    *said, last = result.stdout.rstrip("\n").split("\n")
    for line in said:
        print(line, flush=True)
    return json.loads(last)


def typical_topic(inputs: str) -> tuple[str, str]:
    """A service topic of ordinary size and the largest hot topic."""
    counts: dict[str, int] = {}
    for entry in json.loads((Path(inputs) / "assignment.json").read_text())["partitions"]:
        counts[entry["topic"]] = counts.get(entry["topic"], 0) + 1
    ordinary = min((t for t in counts if not t.startswith("hot.")), key=lambda t: (abs(counts[t] - 64), t))
    hot = max((t for t in counts if t.startswith("hot.")), key=lambda t: (counts[t], t))
    return ordinary, hot


def write_plans(inputs: str, plans: list[tuple[int, int, str]]) -> list[str]:
    """(moves, seed, path) plans of random moves within racks (bench/bench_check.py's)."""
    brokers = json.loads((Path(inputs) / "brokers.json").read_text())
    assignment = json.loads((Path(inputs) / "assignment.json").read_text())
    failed = failed_dirs(Path(inputs) / "log-dirs.txt")
    for moves, seed, path in plans:
        if not Path(path).exists():
            write_plan(brokers, assignment, failed, moves, seed, Path(path))
    return [path for _, _, path in plans]


def failing_dirs(inputs: str, count: int) -> list[tuple[int, str]]:
    """One working directory on each of `count` brokers."""
    brokers = json.loads((Path(inputs) / "brokers.json").read_text())["brokers"]
    return [(b["id"], b["log_dirs"][0]["path"]) for b in brokers[10 : 10 + count]]


# Steps ------------------------------------------------------------------------------------------


READS: list[tuple[str, list[str]]] = []


def choose_reads(inputs: Path) -> None:
    ordinary, hot = in_child("typical_topic", inputs)  # type: ignore[misc]
    READS[:] = [
        ("broker list", ["broker", "list"]),
        ("broker describe --id 1", ["broker", "describe", "--id", "1"]),
        (f"topic describe {ordinary} (64 partitions)", ["topic", "describe", ordinary]),
        ("log-dirs describe --broker-list 1", ["log-dirs", "describe", "--broker-list", "1"]),
        ("features describe", ["features", "describe"]),
        (f"topic describe {hot} (hot topic, large)", ["topic", "describe", hot]),
    ]


def reads(sides: list[Side], states: dict[str, Path], runs: int) -> None:
    header("Read commands (target: <= 1.0 s and <= 500 MiB each)")
    for label, args in READS:
        results = {}
        outputs = set()
        for side in sides:
            results[side.name] = [kjbod(side, states[side.name], *args) for _ in range(runs)]
            outputs.add(results[side.name][0].stdout)
        # The baseline may print differently where main changed the output since (broker
        # describe's units): compare with main's own code on the same state to tell.
        same = "" if len(outputs) == 1 else " (output differs from the baseline's)"
        row(label + same, results.get("before"), results["after"], "<= 1.0 s, <= 500 MiB" if "hot topic" not in label else "")


def writes(sides: list[Side], states: dict[str, Path], inputs: Path, work: Path, runs: int) -> None:
    plans = [Path(p) for p in in_child("write_plans", inputs, [(100, 100 + i, str(work / f"plan-100-{i}.json")) for i in range(runs)])]  # type: ignore[union-attr]
    dirs = in_child("failing_dirs", inputs, runs)
    header("Writes of a few partitions (target: <= 1.5 s each, fsync included)")
    results: dict[str, dict[str, list[Run]]] = {"create": {}, "fail": {}, "execute": {}}
    after_writes: dict[str, dict[str, list[Run]]] = {}
    tail = 0
    for side in sides:
        state = copy_state(states[side.name], work / f"scratch-{side.name}")
        results["create"][side.name] = [
            kjbod(side, state, "topic", "create", f"bench-{i}", "--partitions", "12", "--replication-factor", "3", "--seed", str(i)) for i in range(runs)
        ]
        results["fail"][side.name] = [kjbod(side, state, "broker", "fail-dir", "--id", str(b), "--dir", path) for b, path in dirs]
        results["execute"][side.name] = [
            kjbod(side, state, "reassign", "execute", "--reassignment-json-file", str(plan), "--throttle", "50000000", *(["--additional"] if i else []))
            for i, plan in enumerate(plans)
        ]
        # The reads again, now that the log holds the writes after the snapshot.
        for label, args in READS[:4]:
            after_writes.setdefault(label, {})[side.name] = [kjbod(side, state, *args)]
        if side.name == "after":
            tail = records_after_snapshot(side, state)
        shutil.rmtree(state)
    row("topic create (12 partitions)", results["create"].get("before"), results["create"]["after"], "<= 1.5 s")
    row("broker fail-dir (one directory)", results["fail"].get("before"), results["fail"]["after"], "<= 1.5 s")
    row("reassign execute (100 moves)", results["execute"].get("before"), results["execute"]["after"], "<= 1.5 s")
    header(f"Reads after those writes ({tail:,} records in the log after the newest snapshot)")
    for label, by_side in after_writes.items():
        row(label, by_side.get("before"), by_side["after"], "<= 1.0 s, <= 500 MiB")


def records_after_snapshot(side: Side, state: Path) -> int:
    code = "import sys; from kjbod.state.cluster_state import ClusterState; print(ClusterState.open(sys.argv[1]).records_since_snapshot)"
    return int(run(side, ["-c", code, str(state)]).stdout)


def tail_at_the_bound(side: Side, state: Path, inputs: Path, work: Path) -> None:
    """Reads when the log after the snapshot is as long as it gets before a write snapshots it
    (snapshots.AUTO_SNAPSHOT_RECORDS): the slowest a read gets between automatic snapshots."""
    code = "from kjbod.state.snapshots import AUTO_SNAPSHOT_RECORDS as A; print(A)"
    bound = int(run(side, ["-c", code]).stdout)
    scratch = copy_state(state, work / "scratch-bound")
    # Directory moves of one replica each add about three records (PartitionChange, replica logs).
    moves = 0
    while True:
        left = bound - 1 - records_after_snapshot(side, scratch)
        if left < 200:
            break
        plan = work / f"plan-bound-{moves}.json"
        size = max(10, min(3000, left // 8))
        in_child("write_plans", inputs, [(size, 1000 + moves, str(plan))])
        done = kjbod(side, scratch, "reassign", "execute", "--reassignment-json-file", str(plan), "--additional", check=False)
        plan.unlink()
        moves += 1
        if done.code != 0 or moves > 40:
            break
    tail = records_after_snapshot(side, scratch)
    header(f"Reads with {tail:,} records after the snapshot (the bound is {bound:,}): this side only")
    for label, args in READS[:5]:
        row(label, None, [kjbod(side, scratch, *args)], "<= 1.0 s, <= 500 MiB")
    shutil.rmtree(scratch)


def replay(sides: list[Side], states: dict[str, Path], work: Path) -> None:
    header("Opening the state in a process (read_image): from the log alone, and from a snapshot")
    code = "from kjbod.state.cluster_state import read_image; import sys; read_image(sys.argv[1])"
    for with_snapshot in (False, True):
        results = {}
        for side in sides:
            state = states[side.name]
            if not with_snapshot:
                state = copy_state(state, work / f"log-only-{side.name}", snapshots=False)
            results[side.name] = [run(side, ["-c", code, str(state)])]
            if not with_snapshot:
                shutil.rmtree(state)
        label = "replay of the whole log (no snapshot)" if not with_snapshot else "open from the snapshot (+ the log after it)"
        row(label, results.get("before"), results["after"])


def check(sides: list[Side], states: dict[str, Path], inputs: Path, work: Path, moves: int, runs: int = 1) -> None:
    plan = work / f"plan-{moves}.json"
    if not plan.exists():
        in_child("write_plans", inputs, [(moves, 1, str(plan))])
    header(f"reassign check of {moves:,} random moves (target: <= 3 s)")
    results: dict[str, list[Run]] = {side.name: [] for side in sides}
    for _ in range(runs):  # the sides take turns, so that a change in the machine's load hits both
        for side in sides:
            results[side.name].append(kjbod(side, states[side.name], "reassign", "check", "--reassignment-json-file", str(plan), "--throttle",
                                            "50000000", "--report", "json", "--report-file", str(work / f"check-{side.name}.json"), check=False))
    verdict = compare_reports(work / "check-before.json", work / "check-after.json") if len(sides) > 1 else ""
    row("reassign check" + verdict, results.get("before"), results["after"], "<= 3 s")


def compare_reports(before: Path, after: Path) -> str:
    """A note for the row: none when the two JSON reports are equal, else whether they differ only
    by checks one side does not have (a check added since the baseline, whose findings change the
    summary line and the counts too)."""
    a, b = json.loads(before.read_text()), json.loads(after.read_text())
    if a == b:
        return ""
    ids_a, ids_b = ({c["id"] for c in doc["checks"]} for doc in (a, b))
    only = sorted(ids_a ^ ids_b)
    for doc in (a, b):
        doc["checks"] = [c for c in doc["checks"] if c["id"] in ids_a & ids_b]
        for key in ("summary", "counts"):
            doc.pop(key, None)
    if only and a == b:
        return f" (reports equal but for {', '.join(only)}, which one side lacks)"
    return " (REPORTS DIFFER)"


def planner(sides: list[Side], args: argparse.Namespace, work: Path) -> None:
    cluster = Path(in_child("planner_cluster", args.planner_work, args.partitions, env=sides[0].env()))  # type: ignore[arg-type]
    base_state = cluster / "state"
    states = {}
    for side in sides:
        if side.name == "before":
            states[side.name] = base_state
            continue
        target = work / "planner-state-after"
        ready = target.with_name(target.name + ".ready")
        if not ready.exists():
            copy_state(base_state, target)
            converted = kjbod(side, target, "metadata", "snapshot")
            print(f"after: metadata snapshot of the planner's state (a snapshot of records -> columns): {converted.seconds:.1f} s")
            ready.write_text("")
        states[side.name] = target
    header(f"reassign plan --goal balance --engine local on bench_planner's {args.partitions:,}-partition cluster (target: <= 30 s)")
    results = {}
    for side in sides:
        output = work / f"plan-balance-{side.name}.json"
        results[side.name] = [kjbod(side, states[side.name], "reassign", "plan", "--goal", "balance", "--engine", "local",
                                    "--output-file", str(output), "--overwrite")]
    same = len(sides) == 1 or (work / "plan-balance-before.json").read_bytes() == (work / "plan-balance-after.json").read_bytes()
    row("reassign plan" + ("" if same else " (PLANS DIFFER)"), results.get("before"), results["after"], "<= 30 s")
    plan = work / "plan-balance-after.json"
    entries = len(json.loads(plan.read_text())["partitions"])
    results = {}
    for side in sides:
        results[side.name] = [kjbod(side, states[side.name], "reassign", "check", "--reassignment-json-file", str(plan),
                                    "--report", "json", "--report-file", str(work / f"check-balance-{side.name}.json"), check=False)]
    row(f"reassign check of the balance plan ({entries:,} entries)", results.get("before"), results["after"], "<= 3 s")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline", type=Path, help="checkout of the code to compare with (omit: this side only)")
    parser.add_argument("--partitions", type=int, default=1_000_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--moves", type=int, default=350_000, help="random moves in the plan reassign check is timed on")
    parser.add_argument("--work", type=Path, default=Path("/tmp/kjbod-bench-open"))
    parser.add_argument("--planner-work", type=Path, default=Path("/tmp/kjbod-bench-planner"))
    parser.add_argument("--steps", default="reads,writes,bound,check,replay,plan")
    parser.add_argument("--reimport", action="store_true", help="import this side's state again (after a change of its layout)")
    parser.add_argument("--same-state", action="store_true",
                        help="both sides read this side's state (to compare code that reads the same layout; the baseline must read it)")
    args = parser.parse_args()
    steps = set(args.steps.split(","))
    sides = ([Side("before", args.baseline.resolve())] if args.baseline else []) + [Side("after", ROOT)]
    for side in sides:  # each side runs its own code
        where = run(side, ["-c", "import kjbod; print(kjbod.__file__)"]).stdout.strip()
        if not where.startswith(str(side.code)):
            raise SystemExit(f"{side.name}: kjbod is imported from {where}, not from {side.code}")
        # Byte-code compiled up front, as `pip install` leaves an installed kjbod: otherwise a
        # checkout run with PYTHONDONTWRITEBYTECODE set compiles every module in every command.
        run(side, ["-m", "compileall", "-q", str(side.code / "kjbod")])
    work = args.work / f"c{args.partitions}"
    work.mkdir(parents=True, exist_ok=True)
    print(f"kjbod bench_open: {args.partitions:,} partitions; before = {args.baseline}, after = {ROOT}; "
          f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    inputs = synthetic_inputs(args.work, args.partitions)
    states = {
        side.name: imported_state(side, inputs, work / f"state-{'base' if side.name == 'before' else 'new'}", again=args.reimport and side.name == "after")
        for side in sides
        if side.name == "after" or not args.same_state
    }
    if args.same_state:
        states["before"] = states["after"]
    choose_reads(inputs)
    if "reads" in steps:
        reads(sides, states, args.runs)
    if "writes" in steps:
        writes(sides, states, inputs, work, args.runs)
    if "bound" in steps:
        tail_at_the_bound(sides[-1], states["after"], inputs, work)
    if "check" in steps:
        check(sides, states, inputs, work, args.moves, args.runs)
    if "replay" in steps:
        replay(sides, states, work)
    if "plan" in steps:
        planner(sides, args, work)
    return 0


if __name__ == "__main__":
    sys.exit(main())
