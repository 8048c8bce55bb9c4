"""`kjbod reassign run` interrupted by SIGINT and SIGKILL and resumed (interrupting.py); the bench
bench/bench_reassign_interrupt.py does it 20 times and more."""

from __future__ import annotations

from pathlib import Path

from tests.tools.reassign import interrupting


def test_an_interrupted_run_resumes_and_executes_every_wave_once(tmp_path: Path) -> None:
    report = interrupting.run(tmp_path, rounds=2, seed=29, interruptions_per_round=(2, 2), signals=("SIGINT", "SIGKILL"))
    assert report.failures == [], report.lines()
    assert report.rounds == 2 and {"SIGINT", "SIGKILL"} <= set(report.signals), report.lines()


def test_the_check_finds_a_wave_executed_twice(tmp_path: Path) -> None:
    """The harness can fail: a wave whose --execute Kafka's tool saw twice is reported."""
    kafka, waves = interrupting._cluster(tmp_path)
    plan = interrupting.write_plan(tmp_path, waves)
    wave = str(plan.with_name("plan.wave-001.json"))
    kafka.calls = [["kafka-reassign-partitions", "--reassignment-json-file", wave, "--execute"]] * 2
    failures = interrupting.check(kafka, plan, waves, 0)
    assert "round 0: Kafka's tool ran --execute 2 times for wave 1" in failures
    assert any("is at ([1, 2]" in failure for failure in failures)
