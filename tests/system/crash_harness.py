"""Kill writers with SIGKILL at random moments and check what survives.

A forked child appends commits to one state, acknowledging each on a pipe once `commit`
returned (so only then may an operator have been told "done"). Commit k holds
`commit_size(k)` clock records numbered k * 1_000_000 + i; some commits span several batches,
and every 10th commit is followed by a snapshot. After each kill the parent reopens the state
as a writer (which recovers a torn tail) and checks that

- every acknowledged commit is present (else it counts as *lost*),
- the log is exactly a run of complete commits 0..K-1, nothing partial (else *partial*),
- the state opens at all (else *corrupt*),
- the acknowledged-end checkpoint covers every acknowledged commit (else *unrecorded*).

Shared by tests/test_crash_safety.py (CI) and bench/bench_crash.py (more kills).
"""

from __future__ import annotations

import os
import random
import select
import signal
import time
from dataclasses import dataclass
from pathlib import Path

from kjbod.errors import CorruptStateError
from kjbod.log.acknowledged import AcknowledgedEnd
from kjbod.records import KjbodClockRecord
from kjbod.state.cluster_state import ClusterState
from kjbod.state.inspect import iter_records

STRIDE = 1_000_000
_SIZES = (1, 7, 60, 6_001)  # 6_001 records are two batches of one commit


def commit_size(k: int) -> int:
    return _SIZES[k % len(_SIZES)]


def commit_end(k: int) -> int:
    """The offset after commit k."""
    full, rest = divmod(k + 1, len(_SIZES))
    return full * sum(_SIZES) + sum(_SIZES[:rest])


@dataclass
class CrashReport:
    kills: int = 0
    acknowledged: int = 0
    lost: int = 0
    partial: int = 0
    corrupt: int = 0
    unrecorded: int = 0
    torn_tails_recovered: int = 0
    commits_on_disk: int = 0

    def summary(self) -> str:
        return (
            f"kills={self.kills} acknowledged={self.acknowledged} lost={self.lost} partial={self.partial} "
            f"corrupt={self.corrupt} unrecorded={self.unrecorded} torn_tails_recovered={self.torn_tails_recovered} commits={self.commits_on_disk}"
        )


def slow_disk(mid_write: int | None = None) -> None:
    """Write in 16 KiB pieces with a pause between them, like a busy disk, so that kills land
    inside writes often rather than almost never. With `mid_write`, a byte goes to that pipe
    each time a write has pieces still to come, so a parent can kill inside one for certain
    (timing alone misses them on a loaded machine, where the work between writes stretches)."""
    real_write = os.write
    if mid_write is not None:
        os.set_blocking(mid_write, False)

    def slow_write(fd: int, data: bytes | memoryview) -> int:
        written = real_write(fd, memoryview(data)[:16384])
        if mid_write is not None and written < len(data):
            try:
                real_write(mid_write, b"w")
            except BlockingIOError:
                pass  # the parent is not listening
        time.sleep(0.002)
        return written

    os.write = slow_write  # type: ignore[assignment]


def _child(path: Path, ack_fd: int, mid_write: int, first_commit: int) -> None:
    real_write = os.write
    slow_disk(mid_write)
    with ClusterState.open(path, write=True) as state:
        k = first_commit
        while True:
            base = k * STRIDE
            state.commit([KjbodClockRecord(time_ms=base + i) for i in range(commit_size(k))])
            real_write(ack_fd, f"{k}\n".encode())
            if k % 10 == 9:
                state.write_snapshot()
            k += 1


def _spawn(path: Path, first_commit: int) -> tuple[int, int, int]:
    """The writer's pid, and the read ends of its acknowledgement and mid-write pipes."""
    read_fd, write_fd = os.pipe()
    mid_read, mid_write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child never returns
        try:
            os.close(read_fd)
            os.close(mid_read)
            _child(path, write_fd, mid_write, first_commit)
        finally:
            os._exit(0)
    os.close(write_fd)
    os.close(mid_write)
    return pid, read_fd, mid_read


def _wait_for_mid_write(fd: int, timeout: float = 5.0) -> None:
    """Return as soon as the writer is inside a write (or the timeout passed)."""
    os.set_blocking(fd, False)
    try:
        while os.read(fd, 65536):  # what came before: the writer may be past it
            pass
    except BlockingIOError:
        pass
    select.select([fd], [], [], timeout)


def _wait_for_acks(fd: int, count: int, timeout: float = 5.0) -> bytes:
    """Read acknowledgements until `count` arrived (or the timeout passed)."""
    received = b""
    deadline = time.monotonic() + timeout
    while received.count(b"\n") < count and time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], max(0.0, deadline - time.monotonic()))
        if ready:
            chunk = os.read(fd, 65536)
            if not chunk:
                break
            received += chunk
    return received


def _read_acks(fd: int, received: bytes) -> list[int]:
    while chunk := os.read(fd, 65536):
        received += chunk
    os.close(fd)
    return [int(line) for line in received.decode().split()]


class _Checker:
    """Walks the log once, from where the last check stopped."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.next_offset = 0
        self.complete_commits = 0  # commits 0..complete_commits-1 are verified

    def check(self, report: CrashReport) -> None:
        expected_commit, expected_index = self.complete_commits, 0
        offset = self.next_offset
        for offset, record in iter_records(self.path, from_offset=self.next_offset):
            k, i = divmod(record.time_ms, STRIDE)
            if (k, i) != (expected_commit, expected_index):
                report.partial += 1
                raise AssertionError(f"offset {offset}: found record {k}/{i}, expected {expected_commit}/{expected_index}")
            expected_index += 1
            if expected_index == commit_size(k):
                expected_commit, expected_index = k + 1, 0
                self.complete_commits = expected_commit
                self.next_offset = offset + 1
        if expected_index:
            report.partial += 1
            raise AssertionError(f"commit {expected_commit} is only partly visible ({expected_index} records)")


def run(path: Path, kills: int, *, seed: int = 1, max_delay: float = 0.08) -> CrashReport:
    rng = random.Random(seed)
    ClusterState.open(path, write=True, create=True).close()
    report = CrashReport()
    checker = _Checker(path)
    for _ in range(kills):
        pid, ack_fd, mid_write = _spawn(path, checker.complete_commits)
        # Let a few commits complete, then kill somewhere inside the following ones: at a
        # random moment, or (one kill in four) inside a write for certain.
        received = _wait_for_acks(ack_fd, rng.randint(0, 3))
        if rng.random() < 0.25:
            _wait_for_mid_write(mid_write)
        else:
            time.sleep(rng.uniform(0, max_delay))
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        os.close(mid_write)
        report.kills += 1
        acked = _read_acks(ack_fd, received)
        report.acknowledged += len(acked)
        notices: list[str] = []
        try:
            ClusterState.open(path, write=True, notify=notices.append).close()
        except CorruptStateError:
            report.corrupt += 1
            raise
        report.torn_tails_recovered += sum(n.startswith("Recovered") for n in notices)
        checker.check(report)
        report.lost += sum(1 for k in acked if k >= checker.complete_commits)
        if acked and AcknowledgedEnd.read(path).next_offset < commit_end(max(acked)):
            report.unrecorded += 1
    report.commits_on_disk = checker.complete_commits
    return report
