"""The runbooks in examples/ run end to end (each in its own temporary folder)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
# The demo runs the Spark planner: it has its own test below, marked spark.
RUNBOOKS = sorted(p for p in EXAMPLES.glob("*.sh") if p.name != "demo.sh")


def _run(script: Path, *, merged: bool = False) -> subprocess.CompletedProcess[str]:
    """`merged`: stderr into stdout, in the order a terminal shows them."""
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    # As in a terminal of its own: no state from the caller, tables at their natural width.
    for name in ("KJBOD_STATE", "COLUMNS"):
        env.pop(name, None)
    streams = {"stdout": subprocess.PIPE, "stderr": subprocess.STDOUT} if merged else {"capture_output": True}
    return subprocess.run(["bash", str(script)], text=True, env=env, timeout=600, **streams)  # type: ignore[call-overload]


@pytest.mark.parametrize("script", RUNBOOKS, ids=lambda p: p.name)
def test_runbook(script: Path) -> None:
    result = _run(script)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]


@pytest.mark.spark
@pytest.mark.skipif(shutil.which("java") is None, reason="the demo's planner runs on Spark, which needs a Java runtime")
def test_the_demo_tells_the_whole_story() -> None:
    result = _run(EXAMPLES / "demo.sh", merged=True)
    out = result.stdout
    assert result.returncode == 0, out[-3000:]
    headings = re.findall(r"^== (\d+)\. ", out, re.MULTILINE)
    assert headings == [str(n) for n in range(1, 12)]
    story = [
        # format bootstraps the cluster state on the broker that is also a controller (a note on stderr)
        "Initialised the cluster state ",
        "Broker 3: FENCED -> UNFENCED.",
        # the failed disk, and what went offline with it
        "/broker3/disk2) is offline.",
        "Offline: 3",
        "/broker3/disk2   offline ",
        # the replacement: a new directory id, fenced until its replicas have directories, refilled
        "Broker 3 stays fenced: 5 replica(s) have no directory yet",
        "14 copies completed.",
        # the Spark planner, the check, the throttled execution, the clock, the verification
        "with the spark (local[*]) engine.",
        "moved replica(s) moves to why.jsonl (JSON lines).",
        "Why they move: ",
        "Plan check PASSED",
        "The inter-broker throttle limit was set to 50000000 B/s",
        "reassignments completed.",
        "Clearing broker-level throttles on brokers 1,2,3,4",
        "Successfully completed leader election (PREFERRED)",
        "The cluster state is intact.",
    ]
    position = 0
    for line in story:
        found = out.find(line, position)
        assert found >= 0, f"the demo's output lacks (after position {position}): {line}"
        position = found
    # Broker 4 starts empty and ends with replicas in both its directories.
    before, after = out.split("== 7.")[0], out.split("== 11.")[1]
    assert re.search(r"^  4   rack-b   UNFENCED .* 0 +0$", before, re.MULTILINE)
    broker4 = after.split("Broker 4:")[1]
    assert len(re.findall(r"/broker4/disk\d +online +[1-9]", broker4)) == 2
    # The temporary folder is gone.
    work = re.search(r"Initialised the cluster state (\S+)/state ", out)
    assert work and not Path(work.group(1)).exists()


def test_the_kafka_runbook_plans_checks_and_runs_waves_through_kafkas_tool(tmp_path: Path) -> None:
    """examples/kafka/plan-check-run.sh against a stand-in for Kafka's bin/ (fake_kafka.py) that
    holds the cluster kjbod imported; tests/kafka/test_reassign_run.py runs it on a real Kafka."""
    import json

    from tests.tools.reassign.fake_kafka import FakeKafka

    dirs = {b: [f"/data/b{b}/d1", f"/data/b{b}/d2"] for b in (1, 2, 3, 4)}
    brokers = {"brokers": [{"id": b, "rack": f"r{b}", "log_dirs": [{"path": d, "capacity_bytes": 10**9} for d in dirs[b]]} for b in dirs]}
    placement = {f"orders-{p}": ([1 + p % 3, 1 + (p + 1) % 3], [dirs[1 + p % 3][0], dirs[1 + (p + 1) % 3][p % 2]]) for p in range(6)}
    sizes = {name: 1000 * (int(name.rsplit("-", 1)[1]) + 1) for name in placement}
    assignment = {"version": 1, "partitions": [
        {"topic": "orders", "partition": int(name.rsplit("-", 1)[1]), "replicas": list(r), "log_dirs": list(d)} for name, (r, d) in placement.items()
    ]}
    log_dirs = {"version": 1, "brokers": [{"broker": b, "logDirs": [
        {"logDir": d, "error": None, "partitions": [
            {"partition": name, "size": sizes[name], "offsetLag": 0, "isFuture": False} for name, (r, ds) in placement.items() if (b, d) in zip(r, ds)
        ]} for d in dirs[b]]} for b in dirs]}
    (tmp_path / "brokers.json").write_text(json.dumps(brokers))
    (tmp_path / "assignment.json").write_text(json.dumps(assignment))
    (tmp_path / "log-dirs.txt").write_text("Querying brokers for log directories information\n" + json.dumps(log_dirs) + "\n")
    state = tmp_path / "state"
    imported = subprocess.run([sys.executable, "-m", "kjbod", "--state", str(state), "import", "cluster", "--brokers", str(tmp_path / "brokers.json"),
                               "--assignment", str(tmp_path / "assignment.json"), "--log-dirs", str(tmp_path / "log-dirs.txt")],
                              capture_output=True, text=True)
    assert imported.returncode == 0, imported.stderr
    kafka = FakeKafka(tmp_path / "cluster.json", brokers=list(dirs), steps=1, partitions={
        name: {"replicas": list(r), "log_dirs": list(d), "size": sizes[name]} for name, (r, d) in placement.items()
    }).save()
    kafka.write_bin(tmp_path / "kafka" / "bin")
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}", "KJBOD_STATE": str(state),
           "BOOTSTRAP_SERVER": "b1:9092", "KAFKA_HOME": str(tmp_path / "kafka"), "WORK": str(tmp_path / "work"), "POLL_INTERVAL": "0.05"}
    (tmp_path / "work").mkdir()
    result = subprocess.run(["bash", str(EXAMPLES / "kafka" / "plan-check-run.sh"), "--goal", "drain-dirs", "--dir", "1:/data/b1/d1",
                             "--engine", "local"], capture_output=True, text=True, env=env, timeout=600)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    for heading in ("== 1.", "== 2.", "== 3.", "== 4.", "== 5.", "== 6.", "Plan check PASSED", "No partition reassignments found.",
                    "No broker throttle left."):
        assert heading in result.stdout, result.stdout
    after = FakeKafka.load(kafka.path)
    assert not any("/data/b1/d1" in entry["log_dirs"] for entry in after.partitions.values())
    assert (tmp_path / "work" / "plan.wave-001.rollback.json").exists() and (tmp_path / "work" / "plan.journal.json").exists()
