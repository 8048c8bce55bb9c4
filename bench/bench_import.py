"""Import benchmark: `kjbod import cluster` of a synthetic cluster, then opening the state for a
read command; and `log-dirs describe --from-disk` on a directory of many partition folders.

    python bench/bench_import.py [--partitions 1000000] [--brokers 1000] [--dirs-per-broker 12]
                                 [--replication-factor 3] [--scan-partitions 10000] [--keep DIR]

Targets (issue 7): import of 1M partitions (RF 3, 1000 brokers x 12 directories) <= 60 s, opening
the imported state <= 10 s, scanning 10k partition folders well under a second. The import and
the reads run as separate `kjbod` processes, as an operator runs them, so the figures include
interpreter start-up.
"""

from __future__ import annotations

import argparse
import os
import resource
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


def timed_run(label: str, command: list[str]) -> float:
    """Run a command; print its wall time and its CPU time (the machine may be shared, and CPU
    time is what contention inflates least)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    result = subprocess.run(command, capture_output=True, text=True, check=False)
    elapsed = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if result.returncode != 0:
        sys.stderr.write(result.stdout[-2000:] + result.stderr[-4000:])
        raise SystemExit(f"{label} failed with exit code {result.returncode}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    print(f"{label}: {elapsed:.2f} s (CPU {cpu:.2f} s; load average {os.getloadavg()[0]:.1f})")
    return elapsed


def directory_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in path.iterdir() if p.is_file())


def bench_import(args: argparse.Namespace, work: Path) -> None:
    spec = SyntheticSpec(
        brokers=args.brokers, dirs_per_broker=args.dirs_per_broker, partitions=args.partitions,
        replication_factor=args.replication_factor, racks=5, hot_topics=4, full_dirs=6, failed_dirs=2, seed=args.seed,
    )
    started = time.perf_counter()
    cluster = generate(spec)
    files = write_files(cluster, work / "input")
    print(f"generate synthetic cluster ({args.partitions} partitions, RF {args.replication_factor}, "
          f"{args.brokers} brokers x {args.dirs_per_broker} dirs): {time.perf_counter() - started:.1f} s "
          f"(input files {directory_bytes(work / 'input') / 1e6:.0f} MB)")
    del cluster
    state = work / "state"
    command = [*KJBOD, "--state", str(state), "import", "cluster", "--brokers", str(files["brokers"]),
               "--assignment", str(files["assignment"])]
    for path in files["log_dirs"]:
        command += ["--log-dirs", str(path)]
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    imported = timed_run("import cluster (target <= 60 s)", command)
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    print(f"  peak RSS of the import: {max(peak, before) / 1024:.0f} MB; state on disk: {directory_bytes(state) / 1e6:.0f} MB")
    opened = timed_run(
        "open the imported state (read_image, target <= 10 s)",
        [sys.executable, "-c", f"from kjbod.state.cluster_state import read_image; read_image({str(state)!r})"],
    )
    timed_run("kjbod features describe on the imported state", [*KJBOD, "--state", str(state), "features", "describe"])
    timed_run("kjbod broker list on the imported state", [*KJBOD, "--state", str(state), "broker", "list"])
    print(f"RESULT import={imported:.2f}s open={opened:.2f}s")


def bench_scan(count: int, work: Path) -> None:
    """A log directory holding `count` partition folders, each with a segment, its two indexes
    and the usual checkpoint files; plus a few future and deleted ones."""
    from kjbod.tools.log_dirs.disk import scan_directory

    log_dir = work / "scan" / "kafka-logs"
    log_dir.mkdir(parents=True)
    for index in range(count):
        folder = log_dir / f"topic-{index % 97:02d}-{index}"
        if index % 1000 == 1:
            folder = log_dir / f"topic-{index % 97:02d}-{index}.{index:032x}-future"
        elif index % 1000 == 2:
            folder = log_dir / f"topic-{index % 97:02d}-{index}.{index:032x}-delete"
        folder.mkdir()
        (folder / "00000000000000000000.log").write_bytes(b"x" * (index % 500))
        for name in ("00000000000000000000.index", "00000000000000000000.timeindex", "leader-epoch-checkpoint", "partition.metadata"):
            (folder / name).touch()
    times = []
    for _ in range(3):
        started = time.perf_counter()
        entry, _notes = scan_directory(str(log_dir))
        times.append(time.perf_counter() - started)
    print(f"scan one log dir with {count} partition folders ({len(entry.partitions)} logs, "
          f"{len(entry.pending_deletion)} pending deletion): best {min(times) * 1000:.0f} ms, worst {max(times) * 1000:.0f} ms")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--partitions", type=int, default=1_000_000)
    parser.add_argument("--brokers", type=int, default=1000)
    parser.add_argument("--dirs-per-broker", type=int, default=12)
    parser.add_argument("--replication-factor", type=int, default=3)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--scan-partitions", type=int, default=10_000)
    parser.add_argument("--skip-import", action="store_true")
    parser.add_argument("--keep", type=Path, help="work in this directory and keep it")
    args = parser.parse_args()
    work = args.keep or Path(tempfile.mkdtemp(prefix="kjbod-bench-import-"))
    work.mkdir(parents=True, exist_ok=True)
    try:
        if not args.skip_import:
            bench_import(args, work)
        if args.scan_partitions:
            bench_scan(args.scan_partitions, work)
    finally:
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    sys.exit(main())
