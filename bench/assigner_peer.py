"""kafka-assigner beside kjbod's planner on the same broker-level input (bench_planner.py --assigner).

Creates a virtual environment with kafka-tools 0.1.9 (no dependencies; plus six and kazoo, which
it imports but does not declare) under the bench work directory on first use, runs
assigner_driver.py in it as released and with the count module's Python 3 division fixed, and
prints time, partitions and bytes moved, and the broker-level spreads of both plans. kafka-tools
has no notion of log directories, so only broker-level figures are compared.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
GIB = 1 << 30


def assigner_python(workdir: Path) -> Path:
    venv = workdir / "kafka-tools-venv"
    python = venv / "bin" / "python"
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        subprocess.run(
            [str(python), "-m", "pip", "install", "--quiet", "kafka-tools==0.1.9", "--no-deps", "six", "kazoo"], check=True
        )
    return python


def final_assignment(input_dir: Path, changes: list[dict[str, Any]]) -> dict[tuple[str, int], list[int]]:
    current = {(e["topic"], e["partition"]): e["replicas"] for e in json.loads((input_dir / "assignment.json").read_bytes())["partitions"]}
    for change in changes:
        current[(change["topic"], change["partition"])] = change["replicas"]
    return current


def sizes_of(input_dir: Path) -> dict[tuple[str, int], int]:
    with open(input_dir / "log-dirs.txt") as f:
        f.readline()
        f.readline()
        document = json.loads(f.read())
    sizes: dict[tuple[str, int], int] = {}
    for broker in document["brokers"]:
        for log_dir in broker["logDirs"]:
            for p in log_dir["partitions"]:
                if not p["isFuture"]:
                    topic, _, number = p["partition"].rpartition("-")
                    key = (topic, int(number))
                    sizes[key] = max(sizes.get(key, 0), p["size"])
    return sizes


def figures(input_dir: Path, changes: list[dict[str, Any]], sizes: dict[tuple[str, int], int]) -> dict[str, Any]:
    """Broker-level figures of a plan: moves and max deviation from the mean per broker."""
    brokers = json.loads((input_dir / "brokers.json").read_bytes())["brokers"]
    rack = {b["id"]: b.get("rack") for b in brokers}
    racks = len({r for r in rack.values() if r is not None})
    before = final_assignment(input_dir, [])
    after = final_assignment(input_dir, changes)
    replicas: Counter[int] = Counter()
    leaders: Counter[int] = Counter()
    load: Counter[int] = Counter()
    violations = 0
    moved_replicas = moved_bytes = changed = 0
    for key, replica_list in after.items():
        size = sizes.get(key, 0)
        for b in replica_list:
            replicas[b] += 1
            load[b] += size
        leaders[replica_list[0]] += 1
        rack_counts = Counter(rack[b] for b in replica_list)
        limit = 1 if racks >= len(replica_list) else math.ceil(len(replica_list) / racks)
        violations += max(rack_counts.values()) > limit
        added = set(replica_list) - set(before[key])
        moved_replicas += len(added)
        moved_bytes += len(added) * size
        changed += replica_list != before[key]

    def deviation(counter: Counter[int]) -> float:
        values = [counter.get(b["id"], 0) for b in brokers]
        mean = sum(values) / len(values)
        return max(abs(v - mean) for v in values) / mean * 100 if mean else 0.0

    return {
        "partitionsChanged": changed,
        "replicasMoved": moved_replicas,
        "bytesMoved": moved_bytes,
        "replicasDeviation": deviation(replicas),
        "leadersDeviation": deviation(leaders),
        "bytesDeviation": deviation(load),
        "rackViolations": violations,
        "replicasMin": min(replicas.get(b["id"], 0) for b in brokers),
        "replicasMax": max(replicas.get(b["id"], 0) for b in brokers),
    }


def run_assigner(cluster_dir: Path, workdir: Path, ours: dict[str, Any]) -> None:
    input_dir = cluster_dir / "input"
    python = assigner_python(workdir)
    sizes = sizes_of(input_dir)
    ours_plan = json.loads((cluster_dir / "plan-balance.json").read_bytes())["partitions"]
    engine = ours["report"]["engine"]
    rows = [(f"kjbod reassign plan --goal balance ({engine} engine)", ours["report"]["seconds"], ours["seconds"], figures(input_dir, ours_plan, sizes))]
    for mode in ("shipped", "fixed"):
        out = cluster_dir / f"assigner-{mode}.json"
        started = time.perf_counter()
        subprocess.run([str(python), str(HERE / "assigner_driver.py"), str(input_dir), mode, "1", str(out)], check=True)
        wall = time.perf_counter() - started
        result = json.loads(out.read_bytes())
        label = f"kafka-assigner count+rackaware ({'as released' if mode == 'shipped' else 'count fixed for Python 3'})"
        rows.append((label, result["seconds"], wall, figures(input_dir, result["partitions"], sizes)))
    print("side by side (broker level; kafka-assigner plans no log directories):")
    for label, planning, wall, f in rows:
        print(f"  {label}")
        print(f"    planning {planning:.1f} s, {wall:.1f} s end to end")
        print(
            f"    partitions changed {f['partitionsChanged']}, replicas moved {f['replicasMoved']}, "
            f"{f['bytesMoved'] / GIB:,.0f} GiB moved"
        )
        print(
            f"    max deviation from the mean: replicas {f['replicasDeviation']:.2f}% ({f['replicasMin']}-{f['replicasMax']}), "
            f"leaders {f['leadersDeviation']:.2f}%, bytes {f['bytesDeviation']:.2f}%; rack violations {f['rackViolations']}"
        )
    for label, _, wall, _ in rows[1:]:
        print(f"kjbod ({engine}) end to end: {wall / ours['seconds']:.2f}x faster than {label} ({ours['seconds']:.1f} s against {wall:.1f} s)")
