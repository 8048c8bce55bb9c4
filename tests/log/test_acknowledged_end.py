"""The acknowledged end: damage inside an acknowledged commit is corruption, never a torn tail."""

from __future__ import annotations

import errno
import os
import re
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kjbod.cli.app import app
from kjbod.errors import CorruptStateError, UserError
from kjbod.log.acknowledged import ACKNOWLEDGED_FILE, AcknowledgedEnd
from kjbod.log.framing import HEADER_SIZE, read_batch
from kjbod.records import KjbodClockRecord
from kjbod.state import ClusterState, read_image

FIXTURES = Path(__file__).parent / "fixtures"
EARLIER_STATE = FIXTURES / "state-f4465ce"  # written before the checkpoint existed (see fixtures/README.md)


def kjbod(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def failed_directory_state(path: Path) -> Path:
    """The issue's case: an imported cluster whose last commit is an acknowledged `broker fail-dir`."""
    code, _, err = kjbod(
        "--state", str(path), "import", "cluster",
        "--brokers", str(FIXTURES / "brokers.json"), "--assignment", str(FIXTURES / "assignment.json"),
    )  # fmt: skip
    assert code == 0, err
    code, _, err = kjbod("--state", str(path), "broker", "fail-dir", "--id", "1", "--dir", "/mnt/d2")
    assert code == 0, err
    return path


def offline_directories(path: Path) -> list[str]:
    cluster = read_image(path).cluster
    return sorted(
        log_dir.directory_id
        for broker_id, log_dirs in cluster.log_dirs.items()
        for log_dir in log_dirs
        if not cluster.brokers[broker_id].has_online_dir(log_dir.directory_id)
    )


def last_batch_position(segment: Path) -> int:
    data = segment.read_bytes()
    position = 0
    while position + (size := read_batch(data, position).size) < len(data):
        position += size
    return position


def ticks(state: ClusterState, start: int, count: int) -> None:
    state.commit([KjbodClockRecord(time_ms=t) for t in range(start, start + count)])


def test_every_commit_records_its_end_in_alternating_copies(tmp_path: Path) -> None:
    path = tmp_path / "s"
    with ClusterState.open(path, write=True, create=True) as state:
        assert not (path / ACKNOWLEDGED_FILE).exists()  # nothing acknowledged yet
        ticks(state, 1, 3)
        first = (path / ACKNOWLEDGED_FILE).read_bytes()
        ticks(state, 4, 2)
        second = (path / ACKNOWLEDGED_FILE).read_bytes()
    assert len(first) == len(second) == 1024
    assert first[:512] == first[512:]  # a new file holds the end twice
    assert second[:512] == first[:512] and second[512:] != first[512:]  # the update went to the second copy
    ticks_written = AcknowledgedEnd.read(path)
    assert (ticks_written.sequence, ticks_written.next_offset) == (1, 5)
    with ClusterState.open(path, write=True) as state:
        ticks(state, 6, 1)
    third = (path / ACKNOWLEDGED_FILE).read_bytes()
    assert third[512:] == second[512:] and third[:512] != second[:512]  # the older copy was overwritten
    assert AcknowledgedEnd.read(path).next_offset == 6


def test_a_torn_update_of_the_checkpoint_falls_back_to_the_previous_end(tmp_path: Path) -> None:
    path = tmp_path / "s"
    with ClusterState.open(path, write=True, create=True) as state:
        ticks(state, 1, 2)
        ticks(state, 3, 1)  # sequence 1 is in the second copy
    data = bytearray((path / ACKNOWLEDGED_FILE).read_bytes())
    data[512 + 10] ^= 0x40  # a crash tore that update: the commit was never acknowledged
    (path / ACKNOWLEDGED_FILE).write_bytes(bytes(data))
    assert AcknowledgedEnd.read(path).next_offset == 2
    assert read_image(path).time_ms == 3  # the commit itself is whole, so it is kept


def test_a_checkpoint_with_no_valid_copy_is_corruption(tmp_path: Path) -> None:
    path = tmp_path / "s"
    with ClusterState.open(path, write=True, create=True) as state:
        ticks(state, 1, 2)
    data = bytearray((path / ACKNOWLEDGED_FILE).read_bytes())
    data[3] ^= 1
    data[515] ^= 1
    (path / ACKNOWLEDGED_FILE).write_bytes(bytes(data))
    with pytest.raises(CorruptStateError) as raised:
        ClusterState.open(path, write=True)
    assert str(raised.value) == (
        f"the acknowledged-end checkpoint {path / ACKNOWLEDGED_FILE} is damaged (neither of its two copies is valid); "
        "kjbod cannot tell a torn write from a damaged commit without it, so restore the state directory from a backup"
    )


def test_every_damaged_header_byte_of_the_last_acknowledged_batch_is_corruption(tmp_path: Path) -> None:
    """Each bit of each byte of the last batch's header, and each byte inverted: the commit is
    never cut, readers and writers both refuse with the offset, and it is whole again once the
    byte is restored."""
    path = failed_directory_state(tmp_path / "s")
    offline = offline_directories(path)
    assert len(offline) == 1
    segment = sorted(path.glob("*.log"))[-1]
    intact = segment.read_bytes()
    last = last_batch_position(segment)
    assert read_batch(intact, last).base_offset == 13
    cases = 0
    for index in range(HEADER_SIZE):
        for mask in (*(1 << bit for bit in range(8)), 0xFF):
            damaged = bytearray(intact)
            damaged[last + index] ^= mask
            segment.write_bytes(bytes(damaged))
            for write in (True, False):
                with pytest.raises(CorruptStateError, match=rf"damaged at offset 13 \({segment.name}, byte {last}\)"):
                    ClusterState.open(path, write=write).close()
            if mask == 0xFF:  # through the CLI too: a writer and verify both exit 3
                for args in (("clock", "advance", "1s"), ("metadata", "verify")):
                    code, out, err = kjbod("--state", str(path), *args)
                    assert (code, out) == (3, ""), (index, args)
                    assert err.startswith(f"the record log in {path} is damaged at offset 13 ({segment.name}, byte {last}): ")
            assert segment.read_bytes() == bytes(damaged), (index, mask)  # nothing was cut
            cases += 1
    assert cases == HEADER_SIZE * 9
    segment.write_bytes(intact)
    assert offline_directories(path) == offline  # the acknowledged fail-dir is still there


def test_a_cut_acknowledged_commit_is_corruption_not_a_torn_tail(tmp_path: Path) -> None:
    path = failed_directory_state(tmp_path / "s")
    segment = sorted(path.glob("*.log"))[-1]
    intact = segment.read_bytes()
    last = last_batch_position(segment)
    for cut, reason in (
        (len(intact) - 3, rf"byte {last}\): an incomplete batch \({len(intact) - 3 - last} of {len(intact) - last} bytes\), "
                          r"inside what was acknowledged \(commits up to offset 14, acknowledged-end.checkpoint\), "
                          "so not an interrupted write; "),
        (last, rf"byte {last}\): the log ends there, but commits up to offset 14 were acknowledged "
               r"\(acknowledged-end.checkpoint\); "),
    ):  # fmt: skip
        segment.write_bytes(intact[:cut])
        code, out, err = kjbod("--state", str(path), "clock", "advance", "1s")
        assert (code, out) == (3, "")
        assert err.startswith(f"the record log in {path} is damaged at offset 13 ({segment.name}, ")
        assert err.endswith("kjbod does not skip damaged data, so restore the state directory from a backup\n")
        assert re.search(reason, err), err
        assert segment.read_bytes() == intact[:cut]
        code, out, err = kjbod("--state", str(path), "metadata", "verify")
        assert (code, out) == (3, "") and "damaged at offset 13" in err


def test_an_acknowledged_commit_of_several_batches_cut_after_a_batch_is_corruption(tmp_path: Path) -> None:
    path = tmp_path / "s"
    with ClusterState.open(path, write=True, create=True) as state:
        ticks(state, 1, 2)
        ticks(state, 3, 12_000)  # three batches
    segment = sorted(path.glob("*.log"))[-1]
    data = segment.read_bytes()
    first = read_batch(data, 0).size
    second_batch_end = first + read_batch(data, first).size
    segment.write_bytes(data[:second_batch_end])  # the commit's first batch only (it CONTINUES)
    with pytest.raises(CorruptStateError, match=r"damaged at offset 2 .*a commit with no final batch, inside what was acknowledged"):
        ClusterState.open(path, write=True)


def test_a_torn_write_beyond_the_acknowledged_end_is_still_recovered(tmp_path: Path) -> None:
    path = failed_directory_state(tmp_path / "s")
    segment = sorted(path.glob("*.log"))[-1]
    intact, checkpoint = segment.read_bytes(), (path / ACKNOWLEDGED_FILE).read_bytes()
    with ClusterState.open(path, write=True) as state:
        ticks(state, 1, 40)
    # As a kill in the middle of that commit's write leaves it: half its batch, not acknowledged.
    grown = segment.read_bytes()
    segment.write_bytes(grown[: (len(intact) + len(grown)) // 2])
    (path / ACKNOWLEDGED_FILE).write_bytes(checkpoint)
    notices: list[str] = []
    with ClusterState.open(path, write=True, notify=notices.append) as state:
        assert state.image.next_offset == 15
    assert notices[0].startswith("Recovered the cluster state: removed an interrupted write left ")
    assert segment.read_bytes() == intact
    assert len(offline_directories(path)) == 1


def test_a_state_written_before_the_checkpoint_existed_opens_and_is_protected_after_its_next_commit(tmp_path: Path) -> None:
    path = tmp_path / "earlier"
    shutil.copytree(EARLIER_STATE, path)
    assert not (path / ACKNOWLEDGED_FILE).exists()
    notices: list[str] = []
    assert read_image(path, notify=notices.append).next_offset == 11 and notices == []
    assert offline_directories(path) == ["8BOa0gBQQ3GyAdt3yeS_6Q"]
    code, out, _ = kjbod("--state", str(path), "metadata", "verify")
    assert (code, out.splitlines()[-1]) == (0, "The cluster state is intact.")
    assert not (path / ACKNOWLEDGED_FILE).exists()  # reading writes nothing
    code, _, err = kjbod("--state", str(path), "clock", "advance", "1s")
    assert code == 0, err
    assert AcknowledgedEnd.read(path).next_offset == 12
    segment = sorted(path.glob("*.log"))[-1]
    data = bytearray(segment.read_bytes())
    last = last_batch_position(segment)
    data[last + 2] ^= 0x01  # the length of the commit just acknowledged
    segment.write_bytes(bytes(data))
    code, _, err = kjbod("--state", str(path), "clock", "advance", "1s")
    assert code == 3 and "damaged at offset 11" in err
    assert segment.read_bytes() == bytes(data)


def test_a_failed_checkpoint_update_takes_the_commit_back(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "s"
    with ClusterState.open(path, write=True, create=True) as state:
        ticks(state, 1, 2)
        segment = sorted(path.glob("*.log"))[-1]
        size, checkpoint = segment.stat().st_size, (path / ACKNOWLEDGED_FILE).read_bytes()
        real_fdatasync = os.fdatasync
        calls = []

        def full_once(fd: int) -> None:
            calls.append(fd)
            if len(calls) == 1:
                raise OSError(errno.ENOSPC, "No space left on device")
            real_fdatasync(fd)

        monkeypatch.setattr(os, "fdatasync", full_once)
        with pytest.raises(UserError, match="No space left on device"):
            ticks(state, 3, 1)
        monkeypatch.undo()
        assert (segment.stat().st_size, (path / ACKNOWLEDGED_FILE).read_bytes()) == (size, checkpoint)
        assert state.image.time_ms == 2
        ticks(state, 3, 1)  # the same process goes on
    assert AcknowledgedEnd.read(path).next_offset == 3 and read_image(path).time_ms == 3


def test_a_checkpoint_update_that_cannot_be_undone_keeps_the_commit_and_stops_writes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "s"
    with ClusterState.open(path, write=True, create=True) as state:
        ticks(state, 1, 2)

        def broken(fd: int) -> None:
            raise OSError(errno.EIO, "Input/output error")

        monkeypatch.setattr(os, "fdatasync", broken)
        with pytest.raises(UserError, match="Input/output error"):
            ticks(state, 3, 1)
        monkeypatch.undo()
        with pytest.raises(UserError, match="an earlier write failed and could not be undone"):
            ticks(state, 4, 1)
    # The checkpoint may claim the commit, so the log kept it: both agree on reopening.
    assert read_image(path).time_ms == 3
