"""`kjbod reassign run` interrupted and resumed on a real Kafka: the harness of the CI test
(tests/kafka/test_reassign_run.py, a few interruptions) and of bench/bench_reassign_interrupt.py
(20 and more).

Each round runs a plan of two waves that moves four partitions (a replica to another broker and
another replica to another directory of its broker, each); the rounds alternate between that plan
and the plan back, so every round moves data. A round starts `kjbod reassign run` as an operator
would (a process of its own), sends it SIGINT (Ctrl-C) or SIGKILL (a crash, a lost machine) after
a random delay, starts it again, and so on; the last start runs to the end. Then:
- Kafka's placement of every partition is the plan's (kafka-topics, kafka-log-dirs --describe);
- no wave was executed twice: Kafka's tool was started with --execute once per wave (each call
  of the bin/ script is logged) and the journal records one execution per wave;
- no throttle is left (kafka-configs --describe), nothing is reassigning (--list).
"""

from __future__ import annotations

import json
import random
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from tests.tools.reassign.interrupting import interrupted_and_resumed, pick_signal, write_plan
from tests.kafka.moving import THROTTLE, Placement, Scene, kafka_bin, placement, throttles_left

PARTITIONS = ("orders-0", "orders-1", "orders-2", "clicks-0")
WAVE_SIZE = 2
# A signal comes this long after a start: from kjbod's start-up to the middle of a wave.
DELAY = (0.3, 9.0)


@dataclass
class Interruption:
    round: int
    signal: str
    after: float
    exit_code: int
    journal: str  # the wave states the journal then held, e.g. "completed,executed,pending"


@dataclass
class Report:
    rounds: int = 0
    interruptions: int = 0
    signals: list[str] = field(default_factory=list)
    events: list[Interruption] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    seconds: float = 0.0
    starts: int = 0

    def lines(self) -> list[str]:
        by_signal = {name: self.signals.count(name) for name in sorted(set(self.signals))}
        lines = [
            f"{self.rounds} rounds, {self.starts} starts of kjbod reassign run, {self.interruptions} interruptions "
            f"({', '.join(f'{n} {name}' for name, n in by_signal.items())}), {len(self.failures)} failures, {self.seconds:.0f}s"
        ]
        lines += [f"  round {e.round}: {e.signal} after {e.after:.1f}s, exit {e.exit_code}, journal {e.journal}" for e in self.events]
        lines += [f"  FAILURE: {failure}" for failure in self.failures]
        return lines


def _entry(name: str, replicas: tuple[int, ...], dirs: tuple[str, ...]) -> dict:
    topic, _, partition = name.rpartition("-")
    return {"topic": topic, "partition": int(partition), "replicas": list(replicas), "log_dirs": list(dirs)}


def flip_plans(scene: Scene, start: Placement) -> tuple[list[dict], list[dict]]:
    """Waves that move each partition of PARTITIONS (its last replica to the lowest broker that
    has none, its first to its broker's next directory), and the waves that move them back."""
    brokers = sorted(node.node_id for node in scene.cluster.brokers)
    dirs_of = {node.node_id: [str(d) for d in node.log_dirs] for node in scene.cluster.brokers}
    forward, back = [], []
    for index, name in enumerate(PARTITIONS):
        replicas, dirs = start[name]
        newcomer = next(b for b in brokers if b not in replicas)
        first_dirs = dirs_of[replicas[0]]
        moved_dir = first_dirs[(first_dirs.index(dirs[0]) + 1) % len(first_dirs)]
        target = (*replicas[:-1], newcomer)
        target_dirs = (moved_dir, *dirs[1:-1], dirs_of[newcomer][index % len(dirs_of[newcomer])])
        forward.append(_entry(name, target, target_dirs))
        back.append(_entry(name, replicas, dirs))
    waves = [forward[i:i + WAVE_SIZE] for i in range(0, len(forward), WAVE_SIZE)]
    waves_back = [back[i:i + WAVE_SIZE] for i in range(0, len(back), WAVE_SIZE)][::-1]
    return [{"version": 1, "partitions": wave} for wave in waves], [{"version": 1, "partitions": wave} for wave in waves_back]


def run(scene: Scene, work: Path, *, rounds: int, seed: int, interruptions_per_round: tuple[int, int] = (1, 3),
        at_least: int = 0, signals: tuple[str, ...] = (), delay: tuple[float, float] = DELAY,
        log=lambda line: None) -> Report:  # noqa: ANN001 - a print-like callable
    """`rounds` rounds (more while fewer than `at_least` interruptions were delivered). Each signal
    is drawn at random, or taken in turn from `signals` when given; each comes `delay` seconds
    (drawn) after its start."""
    rng = random.Random(seed)
    cluster = scene.cluster
    invocations = work / "invocations.log"
    bin_dir = kafka_bin(work / "bin", cluster.version, log_invocations=invocations)
    report = Report()
    started = time.monotonic()
    start = placement(cluster)
    forward, back = flip_plans(scene, start)
    number = 0
    while number < rounds or report.interruptions < at_least:
        waves = forward if number % 2 == 0 else back
        (work / f"round-{number:03d}").mkdir(parents=True)
        plan = write_plan(work / f"round-{number:03d}", [wave["partitions"] for wave in waves])
        command = [sys.executable, "-m", "kjbod", "reassign", "run", "--reassignment-json-file", str(plan), "--bootstrap-server",
                   cluster.bootstrap_servers, "--kafka-bin", str(bin_dir), "--throttle", str(THROTTLE),
                   "--replica-alter-log-dirs-throttle", str(THROTTLE), "--poll-interval", "1"]
        planned = rng.randint(*interruptions_per_round)
        starts, sent, failures = interrupted_and_resumed(
            command, plan, interruptions=planned, rng=rng, delay=delay, pick=lambda k: pick_signal(rng, signals, report.interruptions + k),
            log=lambda line, number=number: log(f"round {number}: {line}"),
        )
        report.starts += starts
        report.interruptions += len(sent)
        report.signals += [event.signal for event in sent]
        report.events += [Interruption(number, event.signal, event.after, event.exit_code, event.journal) for event in sent]
        report.failures += [f"round {number}: {failure}" for failure in failures]
        if not failures:
            report.failures += _check(scene, plan, waves, invocations, number)
        report.rounds += 1
        number += 1
        if report.failures:
            break
    report.seconds = time.monotonic() - started
    return report


def _check(scene: Scene, plan: Path, waves: list[dict], invocations: Path, number: int) -> list[str]:
    failures = []
    now = placement(scene.cluster)
    for wave in waves:
        for entry in wave["partitions"]:
            name = f"{entry['topic']}-{entry['partition']}"
            if now[name] != (tuple(entry["replicas"]), tuple(entry["log_dirs"])):
                failures.append(f"round {number}: {name} is at {now[name]}, the plan says {entry['replicas']} {entry['log_dirs']}")
    journal = json.loads(plan.with_name("plan.journal.json").read_text())
    for record in journal["waves"]:
        if record["state"] != "completed" or record["executions"] != 1:
            failures.append(f"round {number}: the journal records {record['file']} as {record['state']} after {record['executions']} execution(s)")
    calls = invocations.read_text().splitlines() if invocations.exists() else []
    for index in range(1, len(waves) + 1):
        wave_file = str(plan.with_name(f"plan.wave-{index:03d}.json"))
        executes = [call for call in calls if "--execute" in call.split() and wave_file in call.split()]
        if len(executes) != 1:
            failures.append(f"round {number}: Kafka's tool ran --execute {len(executes)} times for {wave_file}")
    left = throttles_left(scene.cluster)
    if left:
        failures.append(f"round {number}: throttles left: {left}")
    listed = scene.cluster.tool("kafka-reassign-partitions", "--bootstrap-server", scene.cluster.bootstrap_servers, "--list")
    if "No partition reassignments found." not in listed.stdout:
        failures.append(f"round {number}: still reassigning: {listed.stdout}")
    return failures
