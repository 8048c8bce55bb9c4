"""Crash safety with real processes: writers killed with SIGKILL at random moments."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from kjbod.log.framing import read_batch

from . import crash_harness


def test_sigkill_never_loses_an_acknowledged_commit_or_shows_a_partial_one(tmp_path: Path) -> None:
    path = tmp_path / "state"
    report = crash_harness.run(path, kills=200, seed=20261121)
    print(report.summary())
    assert report.kills == 200
    assert (report.lost, report.partial, report.corrupt, report.unrecorded) == (0, 0, 0, 0)
    # The kills really interrupted writes, and commits really happened in between.
    assert report.torn_tails_recovered > 0
    assert report.acknowledged > 0 and report.commits_on_disk >= report.acknowledged
    assert not list(path.glob("*.tmp"))  # interrupted snapshots were cleaned up
    verify = subprocess.run(
        [sys.executable, "-m", "kjbod", "--state", str(path), "metadata", "verify"], capture_output=True, text=True
    )
    assert verify.returncode == 0, verify.stderr
    assert verify.stdout.splitlines()[-1] == "The cluster state is intact."


def kjbod(state: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "kjbod", "--state", str(state), *args], capture_output=True, text=True)


def test_a_damaged_length_of_the_last_acknowledged_batch_is_never_taken_for_a_torn_tail(tmp_path: Path) -> None:
    """Issue 20: a bit flipped in the length of the last batch (an acknowledged `broker fail-dir`)
    made it look like an interrupted write, and the next write cut the commit. Real processes:
    verify and the next write both exit 3 naming the offset, and nothing is cut.
    (tests/log/test_acknowledged_end.py flips every bit of the whole header in-process.)"""
    fixtures = Path(__file__).parents[1] / "log" / "fixtures"
    state = tmp_path / "state"
    made = kjbod(state, "import", "cluster", "--brokers", str(fixtures / "brokers.json"), "--assignment", str(fixtures / "assignment.json"))
    assert made.returncode == 0, made.stderr
    failed = kjbod(state, "broker", "fail-dir", "--id", "1", "--dir", "/mnt/d2")
    assert failed.returncode == 0, failed.stderr
    segment = sorted(state.glob("*.log"))[-1]
    intact = segment.read_bytes()
    last = 0
    while last + read_batch(intact, last).size < len(intact):
        last += read_batch(intact, last).size
    length = int.from_bytes(intact[last : last + 4], "big")
    for byte in range(4):
        # The lowest clear bit of the byte: the length grows, so the batch seems to run past the file.
        bit = next(b for b in range(8) if not (length >> (8 * (3 - byte))) & (1 << b))
        damaged = bytearray(intact)
        damaged[last + byte] ^= 1 << bit
        segment.write_bytes(bytes(damaged))
        for args in (("metadata", "verify"), ("broker", "heartbeat", "--id", "1")):
            result = kjbod(state, *args)
            assert (result.returncode, result.stdout) == (3, ""), (byte, args, result.stdout)
            assert f"is damaged at offset 13 ({segment.name}, byte {last}): an incomplete batch" in result.stderr or (
                f"is damaged at offset 13 ({segment.name}, byte {last}): an invalid batch length" in result.stderr
            ), result.stderr
        assert segment.read_bytes() == bytes(damaged)  # the commit was not cut
    segment.write_bytes(intact)
    shown = kjbod(state, "broker", "describe", "--id", "1")
    assert shown.returncode == 0 and "/mnt/d2   offline" in shown.stdout
