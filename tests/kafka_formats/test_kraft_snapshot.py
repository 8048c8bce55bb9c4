"""KRaft snapshots, checked against files Kafka's own code wrote."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import stat
import struct
from pathlib import Path

import pytest

from kjbod.records import FeatureLevelRecord, TopicRecord
from kjbod.records.wire import encode_metadata_value, encode_record
from kjbod.kafka_formats.kraft_snapshot import (
    BOOTSTRAP_SNAPSHOT_ID,
    CLUSTER_METADATA_DIR,
    SnapshotError,
    SnapshotId,
    Voter,
    VoterEndpoint,
    latest_snapshot,
    read_kraft_snapshot,
    snapshot_batches,
    voters_in_record_order,
    write_bootstrap_snapshot,
    write_kraft_snapshot,
    write_snapshot_file,
)
from kjbod.kafka_formats.record_batch import batch_bytes, data_records

FIXTURES = Path(__file__).parents[1] / "fixtures" / "kafka"
T = 1_700_000_000_000
TOPIC = "cJ3rE4bvQc2w5Y0kT1q9Zg"


def voter(voter_id: int, directory_id: str, host: str, port: int, listener: str = "CONTROLLER") -> Voter:
    return Voter(voter_id, directory_id, (VoterEndpoint(listener, host, port),))


# Names -----------------------------------------------------------------------------------------


def test_snapshot_names_are_kafkas() -> None:
    assert SnapshotId(15, 1).file_name == "00000000000000000015-0000000001.checkpoint"
    assert BOOTSTRAP_SNAPSHOT_ID.file_name == "00000000000000000000-0000000000.checkpoint"
    assert SnapshotId.from_file_name("00000000000000000044-0000000001.checkpoint") == SnapshotId(44, 1)
    for other in ("00000000000000000044-0000000001.checkpoint.part", "x.checkpoint", "44-1.checkpoint"):
        assert SnapshotId.from_file_name(other) is None


# Reading Kafka's files -------------------------------------------------------------------------


def test_a_kafka_snapshot_with_voters_reads_back() -> None:
    snapshot = read_kraft_snapshot(FIXTURES / "all-records" / "00000000000000000044-0000000001.checkpoint")
    assert snapshot.snapshot_id == SnapshotId(44, 1)
    assert snapshot.last_contained_log_timestamp == T
    assert snapshot.kraft_version == 1
    assert snapshot.voters == (
        voter(1, "Zx8pTf1mR0uD2b3c4e5f6g", "localhost", 9093),
        voter(2, "Bb8pTf1mR0uD2b3c4e5f6g", "0:0:0:0:0:0:0:1", 9095),
        voter(3, "Ab8pTf1mR0uD2b3c4e5f6g", "c3.example", 9094),
    )
    assert snapshot.data_record_count == 44
    assert [r.offset for r in snapshot.data_records()] == list(range(3, 47))


@pytest.mark.parametrize("case", ["format-initial", "format-standalone"])
def test_the_kip_853_bootstrap_snapshot_is_written_as_kafkas_formatter_writes_it(case: str, tmp_path: Path) -> None:
    kafka_file = FIXTURES / case / "meta" / CLUSTER_METADATA_DIR / BOOTSTRAP_SNAPSHOT_ID.file_name
    kafka = read_kraft_snapshot(kafka_file)
    assert kafka.data_record_count == 0 and kafka.kraft_version == 1 and kafka.voters
    # Kafka's clock was read three times: for the header's lastContainedLogTimestamp, then
    # once per batch. Replay those readings; the voters are given in any order.
    readings = iter([kafka.last_contained_log_timestamp] + [b.base_timestamp for b in kafka.batches])
    written = write_bootstrap_snapshot(tmp_path, list(reversed(kafka.voters)), kraft_version=1, timestamp_ms=lambda: next(readings))
    assert written == tmp_path / CLUSTER_METADATA_DIR / "00000000000000000000-0000000000.checkpoint"
    assert written.read_bytes() == kafka_file.read_bytes()
    assert stat.S_IMODE(os.stat(written).st_mode) == 0o400


def test_voters_are_listed_in_kafkas_hashmap_order() -> None:
    voters = [voter(i, "Zx8pTf1mR0uD2b3c4e5f6g", "h", 1) for i in (2, 17, 1)]
    assert [v.voter_id for v in voters_in_record_order(voters)] == [1, 17, 2]  # a 4-bucket table: 17 lands with 1
    many = [voter(i, "Zx8pTf1mR0uD2b3c4e5f6g", "h", 1) for i in range(1, 8)]
    assert [v.voter_id for v in voters_in_record_order(many)] == list(range(1, 8))


def test_a_snapshot_is_rewritten_byte_for_byte() -> None:
    path = FIXTURES / "all-records" / "00000000000000000044-0000000001.checkpoint"
    kafka = read_kraft_snapshot(path)
    rewritten = b"".join(
        snapshot_batches(
            (r.value for r in kafka.data_records()),
            epoch=1,
            timestamp_ms=T,
            last_contained_log_timestamp=T,
            kraft_version=1,
            voters=kafka.voters,
        )
    )
    assert rewritten == path.read_bytes()


def _load_make_records():
    spec = importlib.util.spec_from_file_location("make_records", FIXTURES / "batching" / "make_records.py")
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


def test_batches_are_cut_exactly_where_kafkas_snapshot_writer_cuts_them() -> None:
    """150 002 records, 18 MB: Kafka cut 8 MiB batches, each followed by a 1024-record one."""
    make_records = _load_make_records()
    values = (encode_metadata_value(r["type"], r["version"], r["data"]) for r in make_records.records())
    digest = hashlib.sha256()
    layout = []
    for batch in snapshot_batches(values, epoch=1, timestamp_ms=T, last_contained_log_timestamp=T):
        digest.update(batch)
        base, length = struct.unpack_from(">qi", batch)
        count = struct.unpack_from(">i", batch, 57)[0]
        control = bool(struct.unpack_from(">h", batch, 21)[0] & 0x20)
        layout.append(
            f"  batch[{len(layout)}] {'CONTROL' if control else 'DATA'} baseOffset={base} lastOffset={base + count - 1} "
            f"epoch=1 appendTimestamp={T} sizeInBytes={length + 12} records={count}"
        )
    assert layout == (FIXTURES / "batching" / "kafka-batches.txt").read_text().splitlines()
    assert digest.hexdigest() == (FIXTURES / "batching" / "kafka.sha256").read_text().split()[0]


# Writing files ---------------------------------------------------------------------------------


def test_a_snapshot_file_is_read_only_and_leaves_no_partial_file(tmp_path: Path) -> None:
    target = tmp_path / "__cluster_metadata-0" / SnapshotId(3, 2).file_name
    write_kraft_snapshot(target, [encode_record(FeatureLevelRecord(name="metadata.version", feature_level=21))], epoch=2, timestamp_ms=T)
    assert stat.S_IMODE(os.stat(target).st_mode) == 0o400
    assert [p.name for p in target.parent.iterdir()] == [target.name]
    snapshot = read_kraft_snapshot(target)
    assert (snapshot.snapshot_id, snapshot.data_record_count, snapshot.kraft_version) == (SnapshotId(3, 2), 1, None)
    assert all(b.partition_leader_epoch == 2 for b in snapshot.batches)


def test_a_failed_write_leaves_the_target_untouched(tmp_path: Path) -> None:
    target = tmp_path / "snap.checkpoint"
    target.write_bytes(b"old")

    def failing():
        yield b"partial"
        raise OSError(28, "No space left on device")

    with pytest.raises(OSError, match="No space left"):
        write_snapshot_file(target, failing())
    assert target.read_bytes() == b"old"
    assert [p.name for p in tmp_path.iterdir()] == ["snap.checkpoint"]


def test_latest_snapshot_ignores_partial_and_deleted_files(tmp_path: Path) -> None:
    for name in (
        "00000000000000000010-0000000001.checkpoint",
        "00000000000000000200-0000000003.checkpoint",
        "00000000000000000900-0000000003.checkpoint.part",
        "00000000000000000800-0000000003.checkpoint.deleted",
        "00000000000000000300.log",
    ):
        (tmp_path / name).write_bytes(b"")
    assert latest_snapshot(tmp_path) == tmp_path / "00000000000000000200-0000000003.checkpoint"


# Damaged snapshots -----------------------------------------------------------------------------


def _small_snapshot(tmp_path: Path) -> Path:
    values = [encode_record(TopicRecord(name=f"t{i}", topic_id=TOPIC)) for i in range(3)]
    return write_kraft_snapshot(tmp_path / SnapshotId(3, 1).file_name, values, epoch=1, timestamp_ms=T)


def test_a_truncated_snapshot_is_not_complete(tmp_path: Path) -> None:
    path = _small_snapshot(tmp_path)
    cut = tmp_path / "cut.checkpoint"
    cut.write_bytes(path.read_bytes()[:-30])
    with pytest.raises(SnapshotError, match=r"cut.checkpoint: the snapshot ends with an incomplete batch at byte \d+ .* it is not a complete snapshot"):
        read_kraft_snapshot(cut)


def test_a_snapshot_without_its_footer_is_not_complete(tmp_path: Path) -> None:
    data = _small_snapshot(tmp_path).read_bytes()
    footer = read_kraft_snapshot(_small_snapshot(tmp_path / "again")).batches[-1]
    cut = tmp_path / "nofooter.checkpoint"
    cut.write_bytes(data[: footer.position])
    with pytest.raises(SnapshotError, match="does not end with a SnapshotFooterRecord"):
        read_kraft_snapshot(cut)


def test_a_file_that_is_no_snapshot_is_named(tmp_path: Path) -> None:
    path = tmp_path / "records.checkpoint"
    path.write_bytes(batch_bytes(0, data_records([b"\x01\x02\x00"]), 1, timestamp_ms=T, leader_epoch=0))
    with pytest.raises(SnapshotError, match="does not start with a SnapshotHeaderRecord"):
        read_kraft_snapshot(path)


def test_a_flipped_bit_is_reported_with_its_byte(tmp_path: Path) -> None:
    path = _small_snapshot(tmp_path)
    snapshot = read_kraft_snapshot(path)
    data_batch = snapshot.batches[1]
    damaged = bytearray(path.read_bytes())
    damaged[data_batch.position + 70] ^= 0x10
    bad = tmp_path / "bad.checkpoint"
    bad.write_bytes(bytes(damaged))
    with pytest.raises(SnapshotError, match=f"bad.checkpoint: at byte {data_batch.position}: CRC mismatch in the batch at offset 1"):
        read_kraft_snapshot(bad)


def test_fixture_readme_names_every_fixture() -> None:
    readme = (FIXTURES / "README.md").read_text()
    for entry in sorted(p.name for p in FIXTURES.iterdir() if p.is_dir()):
        assert f"`{entry}/`" in readme, entry
    assert json.loads((FIXTURES / "all-records" / "records.jsonl").read_text().splitlines()[0])["type"] == "FeatureLevelRecord"
