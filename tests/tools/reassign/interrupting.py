"""`kjbod reassign run` interrupted at random points and resumed, against the stand-in for Kafka's
bin/ (fake_kafka.py): the harness of tests/tools/reassign/test_run_interrupted.py (a few rounds in
CI) and of bench/bench_reassign_interrupt.py (20 and more; `--live` there runs
tests/kafka/interruptions.py on a real Kafka instead).

Each round: a fresh cluster and a plan of WAVES waves; `python -m kjbod reassign run` started as
an operator starts it (a process of its own), sent SIGINT (Ctrl-C) or SIGKILL (a crash, a lost
machine) after a random delay, started again, and so on; the last start runs to the end. The
stand-in's --execute takes EXECUTE_SECONDS before it starts anything and each move completes at
the STEPS-th --verify, so that the signals land in every phase: start-up, --list, a running
--execute, polling, between waves. Then:
- every partition is where the plan says (broker and directory);
- Kafka's tool ran --execute once per wave (every call of the bin/ scripts is recorded);
- the journal records every wave completed, each executed once;
- no throttle left, nothing reassigning.
"""

from __future__ import annotations

import json
import random
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from tests.tools.reassign.fake_kafka import FakeKafka

WAVES = 3
STEPS = 4
EXECUTE_SECONDS = 0.6
POLL_SECONDS = 0.1
DELAY = (0.3, 6.0)  # a signal comes this long after a start (kjbod starts in 1-2 s, a run lasts 4-6 s)


@dataclass
class Report:
    rounds: int = 0
    starts: int = 0
    signals: list[str] = field(default_factory=list)
    journal_states: list[str] = field(default_factory=list)  # the journal's wave states after each interruption
    failures: list[str] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def interruptions(self) -> int:
        return len(self.signals)

    def lines(self) -> list[str]:
        counts = ", ".join(f"{self.signals.count(name)} {name}" for name in sorted(set(self.signals)))
        phases = sorted(set(self.journal_states))
        return [
            f"{self.rounds} rounds, {self.starts} starts of kjbod reassign run, {self.interruptions} interruptions ({counts}), "
            f"{len(self.failures)} failures, {self.seconds:.1f}s",
            f"  journal states seen after an interruption: {'; '.join(phases)}",
            *(f"  FAILURE: {failure}" for failure in self.failures),
        ]


def _cluster(work: Path) -> tuple[FakeKafka, list[list[dict]]]:
    """Brokers 1-4 with two directories each; partitions t-0 .. t-(2*WAVES-1) on brokers 1,2; each
    wave moves two of them: the second replica to broker 3 or 4, the first to its other directory."""
    partitions = {f"t-{p}": {"replicas": [1, 2], "log_dirs": ["/data/b1/d1", "/data/b2/d1"], "size": 1000 * (p + 1)} for p in range(2 * WAVES)}
    kafka = FakeKafka(work / "cluster.json", brokers=[1, 2, 3, 4], partitions=partitions, steps=STEPS, execute_sleep=EXECUTE_SECONDS).save()
    kafka.write_bin(work / "bin")
    entries = [{"topic": "t", "partition": p, "replicas": [1, 3 + p % 2], "log_dirs": ["/data/b1/d2", f"/data/b{3 + p % 2}/d{1 + p % 2}"]}
               for p in range(2 * WAVES)]
    return kafka, [entries[i:i + 2] for i in range(0, len(entries), 2)]


def write_plan(work: Path, waves: list[list[dict]]) -> Path:
    """`work`/plan.json and its waves plan.wave-001.json, ... as `reassign plan` writes them."""
    plan = work / "plan.json"
    plan.write_text(json.dumps({"version": 1, "partitions": [e for wave in waves for e in wave]}) + "\n")
    for number, wave in enumerate(waves, start=1):
        (work / f"plan.wave-{number:03d}.json").write_text(json.dumps({"version": 1, "partitions": wave}) + "\n")
    return plan


def journal_states(plan: Path) -> str:
    journal = plan.with_name("plan.journal.json")
    if not journal.exists():
        return "no journal"
    return ",".join(wave["state"] for wave in json.loads(journal.read_text())["waves"])


def run(work: Path, *, rounds: int, seed: int, interruptions_per_round: tuple[int, int] = (1, 3), signals: tuple[str, ...] = (),
        at_least: int = 0, log=lambda line: None) -> Report:  # noqa: ANN001 - a print-like callable
    """`rounds` rounds (more while fewer than `at_least` signals were sent); each signal drawn at
    random, or taken in turn from `signals` when given."""
    rng = random.Random(seed)
    report = Report()
    started = time.monotonic()
    number = -1
    while number + 1 < rounds or report.interruptions < at_least:
        number += 1
        directory = work / f"round-{number:03d}"
        directory.mkdir(parents=True)
        kafka, waves = _cluster(directory)
        plan = write_plan(directory, waves)
        command = [sys.executable, "-m", "kjbod", "reassign", "run", "--reassignment-json-file", str(plan), "--bootstrap-server", "b1:9092",
                   "--kafka-bin", str(directory / "bin"), "--throttle", "1MB", "--replica-alter-log-dirs-throttle", "1MB",
                   "--poll-interval", str(POLL_SECONDS)]
        planned = rng.randint(*interruptions_per_round)
        starts, sent, failures = interrupted_and_resumed(
            command, plan, interruptions=planned, rng=rng, delay=DELAY, pick=lambda k: pick_signal(rng, signals, report.interruptions + k),
            log=lambda line, number=number: log(f"round {number}: {line}"),
        )
        report.starts += starts
        report.signals += [event.signal for event in sent]
        report.journal_states += [event.journal for event in sent]
        report.failures += [f"round {number}: {failure}" for failure in failures]
        report.failures += check(FakeKafka.load(kafka.path), plan, waves, number)
        report.rounds += 1
    report.seconds = time.monotonic() - started
    return report


@dataclass(frozen=True)
class Signalled:
    signal: str
    after: float  # seconds after its start
    exit_code: int
    journal: str  # the wave states the journal then held, e.g. "completed,executed,pending"


def pick_signal(rng: random.Random, signals: tuple[str, ...], sent: int) -> signal.Signals:
    """The next signal: taken in turn from `signals` when given, else SIGINT or SIGKILL at random."""
    if signals:
        return signal.Signals[signals[sent % len(signals)]]
    return rng.choice((signal.SIGINT, signal.SIGKILL))


def interrupted_and_resumed(
    command: list[str], plan: Path, *, interruptions: int, rng: random.Random, delay: tuple[float, float],
    pick, log=lambda line: None, timeout: float = 900,  # noqa: ANN001 - callables
) -> tuple[int, list[Signalled], list[str]]:
    """Start `command` (a `kjbod reassign run` of `plan`) as an operator would, send it `pick(k)`
    (k: the signals sent so far here) after a random `delay`, start it again, `interruptions` times; the last start runs to its end.
    Returns how many starts, the signals sent and what went wrong."""
    starts, sent, failures = 0, [], []
    for attempt in range(interruptions + 1):
        starts += 1
        process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        if attempt < interruptions:
            after = rng.uniform(*delay)
            try:
                process.communicate(timeout=after)
                if process.returncode != 0:
                    return starts, sent, [f"exit {process.returncode} before its signal"]
                continue  # it finished first: the next start finds nothing to do
            except subprocess.TimeoutExpired:
                chosen = pick(len(sent))
                process.send_signal(chosen)
                _, err = process.communicate(timeout=timeout)
                sent.append(Signalled(chosen.name, after, process.returncode, journal_states(plan)))
                log(f"{chosen.name} after {after:.2f}s, exit {process.returncode}, journal {sent[-1].journal}")
                # 1: stopped at a safe point; 130 or -SIGINT: before kjbod set its handler (Python's
                # start-up); 0: after its last wave had completed.
                if chosen is signal.SIGINT and process.returncode not in (0, 1, 130, -signal.SIGINT):
                    failures.append(f"SIGINT ended the run with {process.returncode}: {err[-500:]}")
                continue
        _, err = process.communicate(timeout=timeout)
        if process.returncode != 0:
            failures.append(f"the last start exited {process.returncode}: {err[-1500:]}")
    return starts, sent, failures


def check(kafka: FakeKafka, plan: Path, waves: list[list[dict]], number: int) -> list[str]:
    failures = []
    for wave in waves:
        for entry in wave:
            name = f"{entry['topic']}-{entry['partition']}"
            if kafka.placement(name) != (entry["replicas"], entry["log_dirs"]):
                failures.append(f"round {number}: {name} is at {kafka.placement(name)}, the plan says {entry['replicas']} {entry['log_dirs']}")
    for index in range(1, len(waves) + 1):
        executes = kafka.executes(plan.with_name(f"plan.wave-{index:03d}.json"))
        if executes != 1:
            failures.append(f"round {number}: Kafka's tool ran --execute {executes} times for wave {index}")
    journal_file = plan.with_name("plan.journal.json")
    records = json.loads(journal_file.read_text())["waves"] if journal_file.exists() else []
    if [(r["state"], r["executions"]) for r in records] != [("completed", 1)] * len(waves):
        failures.append(f"round {number}: the journal records {[(r['file'], r['state'], r['executions']) for r in records]}")
    if kafka.throttled_brokers or kafka.throttled_topics:
        failures.append(f"round {number}: throttles left on brokers {kafka.throttled_brokers}, topics {kafka.throttled_topics}")
    if kafka.ongoing:
        failures.append(f"round {number}: still reassigning {sorted(kafka.ongoing)}")
    return failures
