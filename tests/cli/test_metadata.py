"""`kjbod metadata dump|snapshot|verify`, and how damage reaches the operator."""

from __future__ import annotations

import json
from pathlib import Path

from kjbod.log.acknowledged import ACKNOWLEDGED_FILE
from kjbod.log.framing import HEADER_SIZE, read_batch

from ..conftest import Cli


def three_ticks(cli: Cli) -> None:
    for step in ("1s", "2s", "3s"):
        assert cli("clock", "advance", step).exit_code == 0


def segment_of(state: Path) -> Path:
    return sorted(state.glob("*.log"))[0]


def test_dump_prints_json_lines(cli: Cli) -> None:
    three_ticks(cli)
    assert cli("metadata", "dump").stdout.splitlines() == [
        '{"offset":0,"type":"KjbodClockRecord","version":0,"data":{"timeMs":1000}}',
        '{"offset":1,"type":"KjbodClockRecord","version":0,"data":{"timeMs":3000}}',
        '{"offset":2,"type":"KjbodClockRecord","version":0,"data":{"timeMs":6000}}',
    ]
    assert [row["offset"] for row in json.loads(cli("-o", "json", "metadata", "dump", "--from-offset", "1").stdout)] == [1, 2]
    assert cli("metadata", "dump", "--type", "KJBOD_CLOCK_RECORD", "--from-offset", "2").stdout.count("\n") == 1
    assert cli("metadata", "dump", "--type", "PartitionRecord").stdout == ""
    bad = cli("metadata", "dump", "--type", "Bogus")
    assert bad.exit_code == 1 and bad.stderr.startswith("Unknown record type Bogus. Known types: BrokerRegistrationChangeRecord")


def test_snapshot_then_verify(cli: Cli, state_dir: Path) -> None:
    three_ticks(cli)
    assert cli("metadata", "snapshot").stdout == f"Wrote snapshot {state_dir / '00000000000000000003.snapshot'} (offsets 0 to 2).\n"
    cli("clock", "advance", "4s")
    result = cli("metadata", "verify")
    assert (result.exit_code, result.stdout) == (
        0,
        "Segments: 1\nRecords: 4 (offsets 0 to 3)\n"
        "Automatic snapshots: a write that leaves 5,000 records or more after the newest snapshot writes one (1 follow it now)\n"
        "Snapshots verified: 1\nThe cluster state is intact.\n",
    )


def test_a_flipped_byte_exits_3_naming_the_offset(cli: Cli, state_dir: Path) -> None:
    three_ticks(cli)
    segment = segment_of(state_dir)
    data = bytearray(segment.read_bytes())
    second = read_batch(bytes(data), 0).size
    data[second + HEADER_SIZE + 5] ^= 0x20
    segment.write_bytes(bytes(data))
    for args in (("clock", "show"), ("clock", "advance", "1s"), ("metadata", "verify")):
        result = cli(*args)
        assert result.exit_code == 3, args
        assert result.stderr == (
            f"the record log in {state_dir} is damaged at offset 1 ({segment.name}, byte {second}): a checksum mismatch; "
            "kjbod does not skip damaged data, so restore the state directory from a backup\n"
        )
    assert segment.read_bytes() == bytes(data)


def test_a_truncated_unacknowledged_last_batch_is_recovered_by_the_next_write(cli: Cli, state_dir: Path) -> None:
    # As a kill leaves it after the last batch reached the file but before it was acknowledged.
    cli("clock", "advance", "1s")
    cli("clock", "advance", "2s")
    acknowledged = (state_dir / ACKNOWLEDGED_FILE).read_bytes()
    cli("clock", "advance", "3s")
    (state_dir / ACKNOWLEDGED_FILE).write_bytes(acknowledged)
    segment = segment_of(state_dir)
    size = segment.stat().st_size
    with segment.open("r+b") as handle:
        handle.truncate(size - 3)
    verify = cli("metadata", "verify")
    assert verify.exit_code == 0
    assert "Torn tail (removed by the next write): an interrupted write left" in verify.stdout
    assert cli("clock", "show").stdout == "Simulated time: 3s (3000 ms)\n"
    write = cli("clock", "advance", "1s")
    assert write.exit_code == 0
    assert write.stderr.startswith("Recovered the cluster state: removed an interrupted write left ")
    assert write.stdout == "Advanced the clock by 1s to 4s.\n"
    assert cli("metadata", "verify").stdout.endswith("Snapshots verified: 0\nThe cluster state is intact.\n")


def test_a_snapshot_that_disagrees_with_the_log_fails_verify(cli: Cli, state_dir: Path) -> None:
    three_ticks(cli)
    cli("metadata", "snapshot")
    snapshot = state_dir / "00000000000000000003.snapshot"
    data = bytearray(snapshot.read_bytes())
    data[len(data) // 2] ^= 0x01
    snapshot.write_bytes(bytes(data))
    result = cli("metadata", "verify")
    assert result.exit_code == 3
    assert "Problem: snapshot 00000000000000000003.snapshot is damaged: a checksum mismatch" in result.stdout
    assert result.stderr == f"1 problem(s) found in {state_dir}\n"
