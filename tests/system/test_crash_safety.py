"""Crash safety with real processes: writers killed with SIGKILL at random moments."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from . import crash_harness


def test_sigkill_never_loses_an_acknowledged_commit_or_shows_a_partial_one(tmp_path: Path) -> None:
    path = tmp_path / "state"
    report = crash_harness.run(path, kills=200, seed=20261121)
    print(report.summary())
    assert report.kills == 200
    assert (report.lost, report.partial, report.corrupt) == (0, 0, 0)
    # The kills really interrupted writes, and commits really happened in between.
    assert report.torn_tails_recovered > 0
    assert report.acknowledged > 0 and report.commits_on_disk >= report.acknowledged
    assert not list(path.glob("*.tmp"))  # interrupted snapshots were cleaned up
    verify = subprocess.run(
        [sys.executable, "-m", "kjbod", "--state", str(path), "metadata", "verify"], capture_output=True, text=True
    )
    assert verify.returncode == 0, verify.stderr
    assert verify.stdout.splitlines()[-1] == "The cluster state is intact."
