"""Creating a state survives SIGKILL at any moment: `format` and `import cluster` killed while
they create a state leave nothing that blocks the operator's retry (issue 20).
bench/bench_creation_kills.py runs the same harness with more kills."""

from __future__ import annotations

from pathlib import Path

from . import creation_kill_harness


def test_killed_creations_never_block_the_retry(tmp_path: Path) -> None:
    report = creation_kill_harness.run(tmp_path, kills=40, seed=20)
    print(report.summary())
    assert report.kills == 40 and set(report.per_command) == {"import", "format"}
    assert (report.blocked, report.left_after_retry) == (0, 0), report.problems
    # The kills really interrupted creations: some left partial work that the retry cleared.
    assert report.left_leftovers > 0


def test_the_harness_hears_what_a_retry_prints(tmp_path: Path) -> None:
    # Under pytest sys.stderr is a capture file, not fd 2: the harness must still read kjbod's
    # message, or an import refused because the kill came after it finished counts as blocked.
    code, stderr = creation_kill_harness.run_cli(["--state", str(tmp_path / "missing"), "topic", "describe", "t"], tmp_path)
    assert code != 0 and stderr.startswith(f"No cluster state at {tmp_path / 'missing'}:"), (code, stderr)
