"""From plan to a moved cluster (issue 29): kjbod's plans carried out on a real Kafka 4.4.0 by Kafka's
own kafka-reassign-partitions, and kjbod's rehearsal of the same waves against what Kafka did.

A cluster of its own (the shared one of the other Kafka tests keeps the scene they read): one KRaft
controller, three brokers with three log directories each, topics written by Kafka's
ProducerPerformance, then a fourth broker (moving.start_scene). Four plans run one after another,
each made on kjbod's import of the cluster's own files at that moment (controller snapshot, log
segments, log-dirs outputs), checked with `reassign check`, and split into waves of at most two
moves per broker:

1. add-brokers 4: every wave by hand, as an operator types it (--execute, then --verify until
   complete);
2. drain-dirs of broker 1's first directory: `kjbod reassign run`;
3. rebalance-disks: the runbook examples/kafka/plan-check-run.sh (plan, check, run);
4. remove-brokers 2: `kjbod reassign run`.

After each: where Kafka says every replica is (kafka-topics and kafka-log-dirs --describe) equals
the plan, for every replica's broker and directory, and equals kjbod's rehearsal (the same waves
with `reassign execute` and `clock advance --until-idle` on the imported state). While the waves
of every plan run: no partition under min.insync.replicas (sampled). At the end: no throttle left
(kafka-configs), every record written before read back. Then `reassign run` interrupted by SIGINT
and SIGKILL and resumed (interruptions.py; bench/bench_reassign_interrupt.py does it 20+ times).
The figures (waves, partitions and bytes moved, seconds per wave and under throttle, and where the
time of each step went) are printed in the terminal summary and kept in figures.txt.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests.kafka import interruptions
from tests.kafka.conftest import SUMMARY_LINES, KjbodResult, kjbod, kjbod_speaks
from tests.kafka.moving import (
    SCENE_TOPICS,
    SCENE_VERSION,
    THROTTLE,
    Digest,
    MinIsrSampler,
    Placement,
    Scene,
    capture,
    in_parallel,
    kjbod_placement,
    placement,
    planned,
    read_back,
    start_scene,
    throttles_left,
)
from tests.kafka.runtime import TARGET

RUNBOOK = Path(__file__).resolve().parents[2] / "examples" / "kafka" / "plan-check-run.sh"
MOVES_PER_BROKER = "2"
THROTTLES = ("--throttle", str(THROTTLE), "--replica-alter-log-dirs-throttle", str(THROTTLE))


@dataclass
class WaveFigure:
    wave: int
    partitions: int
    bytes_moved: int | None
    seconds: float
    throttled_seconds: float


@dataclass
class Step:
    name: str
    goal: tuple[str, ...]
    how: str  # "by hand", "reassign run" or "runbook"
    before: Placement = field(default_factory=dict)
    imported: Placement = field(default_factory=dict)
    plan: dict = field(default_factory=dict)
    report: dict = field(default_factory=dict)
    waves: list[Path] = field(default_factory=list)
    checks: list[KjbodResult] = field(default_factory=list)
    rehearsal: list[KjbodResult] = field(default_factory=list)
    rehearsed: Placement = field(default_factory=dict)
    after: Placement = field(default_factory=dict)
    figures: list[WaveFigure] = field(default_factory=list)
    output: str = ""
    seconds: float = 0.0
    samples: int = 0  # min-ISR samples taken while its waves ran
    phases: dict[str, float] = field(default_factory=dict)  # seconds per phase of the step, for the figures

    def timed(self, phase: str, started: float) -> float:
        now = time.monotonic()
        self.phases[phase] = self.phases.get(phase, 0.0) + now - started
        return now

    @property
    def expected(self) -> Placement:
        return planned(self.before, self.plan)


@dataclass
class Moved:
    scene: Scene
    scene_seconds: float
    steps: list[Step]
    sampler: MinIsrSampler
    throttles: list[str]
    records_after: dict[str, dict[int, Digest]]
    seconds: float
    work: Path


def _steps(scene: Scene) -> list[Step]:
    first_dir = str(scene.cluster.brokers[0].log_dirs[0])
    return [
        Step("add-brokers", ("--goal", "add-brokers", "--broker-list", "4"), "by hand"),
        Step("drain-dirs", ("--goal", "drain-dirs", "--dir", f"1:{first_dir}"), "reassign run"),
        Step("rebalance-disks", ("--goal", "rebalance-disks"), "runbook"),
        Step("remove-brokers", ("--goal", "remove-brokers", "--broker-list", "2"), "reassign run"),
    ]


@pytest.fixture(scope="module", autouse=True)
def _kjbod_speaks_the_scene_release() -> Any:
    """kjbod mirrors the scene's Kafka (KJBOD_KAFKA_VERSION, as its operator sets it), whichever
    release the other modules' session fixture left set."""
    with kjbod_speaks(SCENE_VERSION):
        yield


@pytest.fixture(scope="module")
def moved(tmp_path_factory: pytest.TempPathFactory) -> Any:
    work = tmp_path_factory.mktemp("reassign-run")
    started = time.monotonic()
    scene = start_scene(work)
    scene_seconds = time.monotonic() - started
    try:
        steps = _steps(scene)
        with MinIsrSampler(scene.cluster) as sampler:
            before = placement(scene.cluster)
            for step in steps:
                _carry_out(scene, step, work / step.name, before, sampler)
                # Nothing moves between two plans: where one left every replica is where the next starts.
                before = step.after
        throttles = throttles_left(scene.cluster)
        records = dict(zip((t.name for t in SCENE_TOPICS), in_parallel(lambda topic: read_back(scene.cluster, topic), SCENE_TOPICS)))
        yield Moved(scene, scene_seconds, steps, sampler, throttles, records, time.monotonic() - started, work)
    finally:
        scene.cluster.stop()


def _carry_out(scene: Scene, step: Step, work: Path, before: Placement, sampler: MinIsrSampler) -> None:
    """Import, plan, check, rehearse, then carry out the waves (min ISR sampled meanwhile)."""
    started = mark = time.monotonic()
    cluster = scene.cluster
    work.mkdir()
    step.before = before
    state = capture(cluster, work)
    step.imported = kjbod_placement(state)
    mark = step.timed("capture and import", mark)
    plan_file = work / "plan.json"
    if step.how == "runbook":
        # The runbook plans, checks and runs in one go: its waves are rehearsed after it ran, on
        # the state it planned on (the run changes Kafka, not the imported state).
        with sampler.sampling() as samples:
            step.output = _runbook(scene, state, work, step.goal)
        step.figures = [_figure(wave) for wave in json.loads((work / "run.json").read_text())["waves"]]
        mark = step.timed("runbook (plan, check, run)", mark)
    else:
        planned_ = kjbod("-o", "json", "reassign", "plan", *step.goal, "--engine", "local",
                         "--max-concurrent-moves-per-broker", MOVES_PER_BROKER, "--output-file", plan_file, state=state)
        assert planned_.exit_code == 0, planned_.stdout + planned_.stderr
        step.report = json.loads(planned_.stdout)
        step.checks = [
            kjbod("reassign", "check", "--reassignment-json-file", plan_file, *THROTTLES, state=state),
            kjbod("reassign", "check", "--reassignment-json-file", work / "plan.wave-*.json", *THROTTLES, state=state),
        ]
        mark = step.timed("plan and check", mark)
    step.plan = json.loads(plan_file.read_text())
    step.waves = sorted(work.glob("plan.wave-*[0-9].json"))
    assert step.plan["partitions"] and step.waves, f"{step.name}: nothing planned"
    _rehearse(step, state, work / "rehearsal")
    mark = step.timed("rehearsal", mark)
    if step.how == "by hand":
        with sampler.sampling() as samples:
            step.figures = [_by_hand(scene, wave, number) for number, wave in enumerate(step.waves, start=1)]
    elif step.how == "reassign run":
        with sampler.sampling() as samples:
            ran = kjbod("-o", "json", "reassign", "run", "--reassignment-json-file", plan_file, "--bootstrap-server", cluster.bootstrap_servers,
                        "--kafka-bin", scene.bin, *THROTTLES, "--poll-interval", "1")
        assert ran.exit_code == 0, ran.stdout + ran.stderr
        step.output = ran.stderr
        step.figures = [_figure(wave) for wave in json.loads(ran.stdout)["waves"]]
    if step.how != "runbook":
        mark = step.timed("run", mark)
    step.samples = samples.count
    step.after = placement(cluster)
    step.timed("placement", mark)
    step.seconds = time.monotonic() - started


def _figure(wave: dict) -> WaveFigure:
    return WaveFigure(wave["wave"], wave["partitions"], wave["bytesMoved"], wave["seconds"], wave["throttledSeconds"])


def _rehearse(step: Step, state: Path, copy: Path) -> None:
    """The same waves on kjbod's imported state: execute, let the simulated copies finish, verify."""
    shutil.copytree(state, copy)
    for wave in step.waves:
        step.rehearsal += [
            kjbod("reassign", "execute", "--reassignment-json-file", wave, *THROTTLES, state=copy),
            kjbod("clock", "advance", "--until-idle", state=copy),
            kjbod("reassign", "verify", "--reassignment-json-file", wave, state=copy),
        ]
    step.rehearsed = kjbod_placement(copy)


def _by_hand(scene: Scene, wave: Path, number: int) -> WaveFigure:
    """One wave as an operator runs it: --execute under the throttles, then --verify every second
    until every partition and replica of the wave is complete and Kafka has cleared the throttles."""
    tool = [str(scene.bin / "kafka-reassign-partitions.sh"), "--bootstrap-server", scene.cluster.bootstrap_servers,
            "--reassignment-json-file", str(wave)]
    started = time.monotonic()
    execute = subprocess.run([*tool, "--execute", *THROTTLES], capture_output=True, text=True, timeout=300)
    assert execute.returncode == 0, execute.stdout + execute.stderr
    assert "Successfully started partition reassignment" in execute.stdout, execute.stdout
    while True:
        verify = subprocess.run([*tool, "--verify"], capture_output=True, text=True, timeout=300)
        assert verify.returncode == 0, verify.stdout + verify.stderr
        states = [line for line in verify.stdout.splitlines() if line.startswith(("Reassignment of", "There is no", "Partition "))]
        done = all(line.endswith((" is completed.", " completed successfully.")) for line in states)
        if done and "Clearing broker-level throttles" in verify.stdout:
            break
        assert time.monotonic() - started < 300, verify.stdout
        time.sleep(1)
    seconds = time.monotonic() - started
    partitions = len(json.loads(wave.read_text())["partitions"])
    return WaveFigure(number, partitions, None, seconds, seconds)


def _runbook(scene: Scene, state: Path, work: Path, goal: tuple[str, ...]) -> str:
    """examples/kafka/plan-check-run.sh, as an operator runs it; its run's JSON report kept."""
    env = {
        **os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}", "KJBOD_STATE": str(state),
        "BOOTSTRAP_SERVER": scene.cluster.bootstrap_servers, "KAFKA_BIN": str(scene.bin), "WORK": str(work),
        "THROTTLE": str(THROTTLE), "MOVES_PER_BROKER": MOVES_PER_BROKER, "POLL_INTERVAL": "1",
    }
    env.pop("KAFKA_HOME", None)
    result = subprocess.run(["bash", str(RUNBOOK), *goal, "--engine", "local"], capture_output=True, text=True, env=env, timeout=900)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-4000:]
    for heading in ("== 1.", "== 2.", "== 3.", "== 4.", "== 5.", "== 6.", "Plan check PASSED", "No partition reassignments found.",
                    "No broker throttle left."):
        assert heading in result.stdout, f"the runbook's output lacks {heading!r}:\n{result.stdout[-4000:]}"
    # Its run's figures, from the journal beside its plan.
    (work / "run.json").write_text(json.dumps(_journal_figures(work)))
    return result.stdout + result.stderr


def _journal_figures(work: Path) -> dict:
    from kjbod.tools.reassign.journal import seconds_between

    journal = json.loads((work / "plan.journal.json").read_text())
    waves = []
    for number, record in enumerate(journal["waves"], start=1):
        seconds = seconds_between(record["started"], record["completed"])
        partitions = len(json.loads((work / record["file"]).read_text())["partitions"])
        waves.append({"wave": number, "partitions": partitions, "bytesMoved": record["bytesMoved"], "seconds": seconds, "throttledSeconds": seconds})
    return {"waves": waves}


# The proof ------------------------------------------------------------------------------------------

STEP_NAMES = ("add-brokers", "drain-dirs", "rebalance-disks", "remove-brokers")


def _step(moved: Moved, name: str) -> Step:
    return next(step for step in moved.steps if step.name == name)


@pytest.mark.parametrize("name", STEP_NAMES)
def test_the_import_sees_where_kafka_has_every_replica(moved: Moved, name: str) -> None:
    step = _step(moved, name)
    assert step.imported == step.before


@pytest.mark.parametrize("name", [n for n in STEP_NAMES if n != "rebalance-disks"])
def test_each_plan_and_its_waves_pass_the_check(moved: Moved, name: str) -> None:
    for result in _step(moved, name).checks:
        assert result.exit_code == 0, result.stdout + result.stderr
        assert "PASSED" in result.stdout


@pytest.mark.parametrize("name", STEP_NAMES)
def test_the_plan_moves_something_in_waves_of_at_most_two_moves_per_broker(moved: Moved, name: str) -> None:
    step = _step(moved, name)
    assert len(step.waves) >= 1
    for wave in step.waves:
        moves: dict[int, int] = {}
        for entry in json.loads(wave.read_text())["partitions"]:
            replicas, dirs = step.before[f"{entry['topic']}-{entry['partition']}"]
            old = dict(zip(replicas, dirs))
            # A move between brokers counts for both (the broker added and the one removed), a
            # move between directories for its broker.
            changed = [b for b in entry["replicas"] if b not in old] + [b for b in replicas if b not in entry["replicas"]]
            changed += [b for b, target in zip(entry["replicas"], entry["log_dirs"]) if b in old and target not in ("any", old[b])]
            for broker in changed:
                moves[broker] = moves.get(broker, 0) + 1
        assert moves and max(moves.values()) <= 2, (wave.name, moves)


@pytest.mark.parametrize("name", STEP_NAMES)
def test_kafka_ends_where_the_plan_says(moved: Moved, name: str) -> None:
    """Every replica's broker (in order) and log directory, as Kafka reports them."""
    step = _step(moved, name)
    assert step.after == step.expected
    assert all("?" not in dirs for _, dirs in step.after.values())


@pytest.mark.parametrize("name", STEP_NAMES)
def test_the_rehearsal_ends_where_kafka_did(moved: Moved, name: str) -> None:
    step = _step(moved, name)
    for result in step.rehearsal:
        assert result.exit_code == 0, result.stdout + result.stderr
    assert step.rehearsed == step.after


def test_the_goals_did_what_they_say(moved: Moved) -> None:
    cluster = moved.scene.cluster
    after_add = _step(moved, "add-brokers").after
    assert any(4 in replicas for replicas, _ in after_add.values())
    drained = str(cluster.brokers[0].log_dirs[0])
    assert not any(drained in dirs for _, dirs in _step(moved, "drain-dirs").after.values())
    assert not any(2 in replicas for replicas, _ in _step(moved, "remove-brokers").after.values())


def test_no_partition_went_under_min_insync_replicas(moved: Moved) -> None:
    """Sampled while the waves of every plan ran (each plan's run lasts several seconds)."""
    assert all(step.samples >= 2 for step in moved.steps), [(step.name, step.samples) for step in moved.steps]
    assert moved.sampler.under == []


def test_no_throttle_is_left(moved: Moved) -> None:
    assert moved.throttles == []


def test_every_record_written_before_is_read_back(moved: Moved) -> None:
    for topic in SCENE_TOPICS:
        before, after = moved.scene.records_before[topic.name], moved.records_after[topic.name]
        assert sum(d.records for d in before.values()) == topic.records
        assert after == before


def _run_step(moved: Moved) -> Step:
    return next(step for step in moved.steps if step.how == "reassign run")


def test_reassign_run_prints_its_progress(moved: Moved) -> None:
    output = _run_step(moved).output
    count = len(_run_step(moved).waves)
    assert f"Wave 1 of {count}: plan.wave-001.json" in output
    assert f"Wave {count} of {count} complete: " in output and "Kafka cleared the throttles." in output


@pytest.mark.parametrize("name", [step for step in STEP_NAMES if step != "add-brokers"])
def test_rollback_files_are_kafkas_current_assignment(moved: Moved, name: str) -> None:
    """Each wave's rollback file (kept by `reassign run`, also the runbook's) is what --execute
    printed: the placement before the wave, i.e. the plan's start with the earlier waves done."""
    step = _step(moved, name)
    assert step.how in ("reassign run", "runbook")
    expected = step.before
    for wave in step.waves:
        rollback = json.loads(wave.with_name(wave.name.replace(".json", ".rollback.json")).read_text())
        assert sorted(f"{e['topic']}-{e['partition']}" for e in rollback["partitions"]) == sorted(
            f"{e['topic']}-{e['partition']}" for e in json.loads(wave.read_text())["partitions"])
        for entry in rollback["partitions"]:
            assert expected[f"{entry['topic']}-{entry['partition']}"] == (tuple(entry["replicas"]), tuple(entry["log_dirs"])), wave.name
        expected = planned(expected, json.loads(wave.read_text()))


def test_the_figures(moved: Moved) -> None:
    """The figures of the run (the note's): waves, partitions and bytes moved, time per wave,
    time under throttle. Printed in the terminal summary."""
    scene = ", ".join(f"{phase} {seconds:.1f}s" for phase, seconds in moved.scene.seconds.items())
    lines = [f"reassign run on Kafka 4.4.0: {len(moved.steps)} plans, {moved.seconds:.0f}s in all ({moved.scene_seconds:.0f}s for the "
             f"cluster and its data: {scene}); min-ISR samples {moved.sampler.samples}, under min ISR {len(moved.sampler.under)}"]
    for step in moved.steps:
        measured = [f.bytes_moved for f in step.figures if f.bytes_moved is not None]
        planned_bytes = step.report.get("bytesMoved")
        # reassign run measures what it copied (kafka-log-dirs); by hand, only the plan's figure is known.
        moved_text = f"{sum(measured) / 1e6:.1f} MB moved (measured)" if measured else "bytes not measured"
        lines.append(
            f"  {step.name} ({step.how}): {len(step.waves)} waves, {sum(f.partitions for f in step.figures)} partitions, "
            + moved_text + (f", {planned_bytes / 1e6:.1f} MB planned" if planned_bytes else "")
            + f"; per wave {', '.join(f'{f.seconds:.1f}s' for f in step.figures)}; under throttle {sum(f.throttled_seconds for f in step.figures):.1f}s"
            + f"; the step {step.seconds:.0f}s (" + ", ".join(f"{phase} {seconds:.1f}s" for phase, seconds in step.phases.items()) + ")"
        )
    (moved.work / "figures.txt").write_text("\n".join(lines) + "\n")
    # Written while the test's output is captured, the lines would be lost: the conftest's terminal
    # summary prints them, and kafka/target/ keeps them (pytest's temporary folders rotate).
    SUMMARY_LINES.extend(["", *lines])
    (TARGET / "reassign-proof-figures.txt").write_text("\n".join(lines) + "\n")
    assert all(step.figures for step in moved.steps)


# Interrupted and resumed ------------------------------------------------------------------------


def test_reassign_run_interrupted_and_resumed(moved: Moved, tmp_path: Path) -> None:
    """SIGINT, then SIGKILL of the run resumed, at random points of one plan (two waves), resumed
    until it completes: the plan's placement, every wave executed once, no throttle left (the
    bench does it 20+ times, at any point from kjbod's start-up to the end). A resumed run that
    ends before its signal makes another round."""
    report = interruptions.run(moved.scene, tmp_path, rounds=1, seed=29, interruptions_per_round=(2, 2), at_least=2,
                               signals=("SIGINT", "SIGKILL"), delay=(2.5, 6.0))
    for line in report.lines():
        print(line)
    assert report.interruptions >= 2 and {"SIGINT", "SIGKILL"} <= set(report.signals), report.lines()
    assert report.failures == [], report.lines()
