"""A controller's snapshot and log read as kjbod records: runs, unmodelled records, transactions."""

from __future__ import annotations

from pathlib import Path

import pytest

from kjbod.records import FeatureLevelRecord, NoOpRecord, PartitionChangeRecord, PartitionRecord, TopicRecord
from kjbod.records.codec import RecordRun
from kjbod.records.wire import encode_metadata_value, encode_record
from kjbod.kafka_formats.controller_metadata import read_controller_metadata
from kjbod.kafka_formats.kraft_snapshot import (
    SnapshotError,
    SnapshotId,
    Voter,
    VoterEndpoint,
    voters_message,
    write_kraft_snapshot,
)
from kjbod.kafka_formats.record_batch import CONTROL_KRAFT_VOTERS, batch_bytes, control_batch, data_records

FIXTURES = Path(__file__).parents[1] / "fixtures" / "kafka"
T = 1_700_000_000_000
TOPIC = "cJ3rE4bvQc2w5Y0kT1q9Zg"
DIR = "ZNJ-ywU0nnQwRv5eRRU9ow"


def partition(i: int) -> PartitionRecord:
    return PartitionRecord(version=1, partition_id=i, topic_id=TOPIC, replicas=(1,), isr=(1,), leader=1, leader_epoch=0, partition_epoch=0, directories=(DIR,))


def snapshot_of(directory: Path, values: list[bytes], end_offset: int) -> Path:
    return write_kraft_snapshot(directory / SnapshotId(end_offset, 2).file_name, values, epoch=2, timestamp_ms=T)


def begin() -> bytes:
    return encode_metadata_value("BeginTransactionRecord", 0, {"name": "t"})


def end() -> bytes:
    return encode_metadata_value("EndTransactionRecord", 0, {})


def abort() -> bytes:
    return encode_metadata_value("AbortTransactionRecord", 0, {"reason": None})


def segment(directory: Path, base: int, values: list[bytes]) -> None:
    (directory / f"{base:020d}.log").write_bytes(batch_bytes(base, data_records(values), len(values), timestamp_ms=T, leader_epoch=2))


def test_a_kafka_snapshot_becomes_records_with_runs_and_counts_what_kjbod_does_not_model() -> None:
    result = read_controller_metadata(FIXTURES / "all-records" / "00000000000000000044-0000000001.checkpoint")
    assert result.snapshot_records == 44 and result.end_offset == 44 and result.log_records == 0
    runs = [e for e in result.entries if isinstance(e, RecordRun)]
    assert {r.record_type.__name__ for r in runs} == {"TopicRecord", "PartitionRecord"}
    # RegisterControllerRecord is modelled too (the controller quorum), and the SCRAM credentials.
    assert result.records == sum(e.count if isinstance(e, RecordRun) else 1 for e in result.entries) == 33
    assert result.unmodelled == {
        name: 1
        for name in (
            "ProducerIdsRecord", "AccessControlEntryRecord", "RemoveAccessControlEntryRecord", "ClientQuotaRecord", "DelegationTokenRecord", "RemoveDelegationTokenRecord",
            "ZkMigrationStateRecord",
        )
    }
    assert result.kraft_version == 1 and result.voters is not None and len(result.voters) == 3


def test_consecutive_partition_records_form_one_run(tmp_path: Path) -> None:
    values = [encode_record(FeatureLevelRecord(name="metadata.version", feature_level=21)), encode_record(TopicRecord(name="t", topic_id=TOPIC))]
    values += [encode_record(partition(i)) for i in range(500)]
    result = read_controller_metadata(snapshot_of(tmp_path, values, 502))
    assert [type(e).__name__ for e in result.entries] == ["FeatureLevelRecord", "RecordRun", "RecordRun"]
    run = result.entries[2]
    assert isinstance(run, RecordRun) and run.count == 500 and run.records() == [partition(i) for i in range(500)]


def test_the_log_applies_from_the_snapshots_end_offset(tmp_path: Path) -> None:
    snapshot = snapshot_of(tmp_path, [encode_record(TopicRecord(name="t", topic_id=TOPIC)), encode_record(partition(0))], 10)
    log = tmp_path / "log"
    log.mkdir()
    segment(log, 0, [encode_record(NoOpRecord())] * 10)  # offsets 0-9: inside the snapshot, skipped
    change = PartitionChangeRecord(partition_id=0, topic_id=TOPIC, leader=2)
    segment(log, 10, [encode_record(change), encode_metadata_value("ProducerIdsRecord", 0, {"brokerId": 1, "brokerEpoch": 1, "nextProducerId": 1000})])
    result = read_controller_metadata(snapshot, log)
    assert result.entries[-1] == change and result.log_records == 2 and result.end_offset == 12
    assert result.unmodelled == {"ProducerIdsRecord": 1} and result.log_segments == 2


def test_a_batch_that_straddles_the_snapshot_end_is_read_from_it(tmp_path: Path) -> None:
    snapshot = snapshot_of(tmp_path, [encode_record(TopicRecord(name="t", topic_id=TOPIC))], 3)
    log = tmp_path / "log"
    log.mkdir()
    segment(log, 0, [encode_record(TopicRecord(name=f"old{i}", topic_id=TOPIC)) for i in range(3)] + [encode_record(NoOpRecord())])
    result = read_controller_metadata(snapshot, log)
    assert result.log_records == 1 and result.entries[-1] == NoOpRecord()


def test_a_gap_between_the_snapshot_and_the_log_is_refused(tmp_path: Path) -> None:
    snapshot = snapshot_of(tmp_path, [encode_record(NoOpRecord())], 5)
    log = tmp_path / "log"
    log.mkdir()
    segment(log, 8, [encode_record(NoOpRecord())])
    with pytest.raises(SnapshotError, match="the log continues at offset 8, but the records from offset 5 are missing"):
        read_controller_metadata(snapshot, log)


def test_a_renamed_snapshot_cannot_say_where_the_log_continues(tmp_path: Path) -> None:
    path = write_kraft_snapshot(tmp_path / "latest.checkpoint", [encode_record(NoOpRecord())], epoch=1, timestamp_ms=T)
    (tmp_path / "log").mkdir()
    with pytest.raises(SnapshotError, match="latest.checkpoint is not named <end offset>-<epoch>.checkpoint"):
        read_controller_metadata(path, tmp_path / "log")
    assert read_controller_metadata(path).records == 1  # without a log the name does not matter


def test_a_torn_last_batch_is_reported_and_ignored(tmp_path: Path) -> None:
    snapshot = snapshot_of(tmp_path, [encode_record(NoOpRecord())], 1)
    log = tmp_path / "log"
    log.mkdir()
    whole = batch_bytes(1, data_records([encode_record(TopicRecord(name="a", topic_id=TOPIC))]), 1, timestamp_ms=T, leader_epoch=2)
    torn = batch_bytes(2, data_records([encode_record(TopicRecord(name="b", topic_id=TOPIC))]), 1, timestamp_ms=T, leader_epoch=2)
    (log / f"{1:020d}.log").write_bytes(whole + torn[:-4])
    result = read_controller_metadata(snapshot, log)
    assert result.log_records == 1 and result.end_offset == 2
    assert result.torn is not None and "incomplete batch" in result.torn


def test_metadata_transactions_apply_only_when_they_end(tmp_path: Path) -> None:
    snapshot = snapshot_of(tmp_path, [encode_record(NoOpRecord())], 1)
    log = tmp_path / "log"
    log.mkdir()
    kept, lost, open_ = (TopicRecord(name=n, topic_id=TOPIC) for n in ("kept", "lost", "open"))
    segment(log, 1, [begin(), encode_record(kept), end(), begin(), encode_record(lost), abort(), begin(), encode_record(open_)])
    result = read_controller_metadata(snapshot, log)
    names = [e.name if isinstance(e, TopicRecord) else [r.name for r in e.records()] for e in result.entries if not isinstance(e, NoOpRecord)]
    assert names == [["kept"]]
    assert result.dropped_in_transactions == 2 and result.open_transaction and result.records == 2


def test_an_end_without_a_begin_is_damage(tmp_path: Path) -> None:
    snapshot = snapshot_of(tmp_path, [encode_record(NoOpRecord())], 1)
    log = tmp_path / "log"
    log.mkdir()
    segment(log, 1, [end()])
    with pytest.raises(SnapshotError, match="an EndTransactionRecord at offset 1 without an open transaction"):
        read_controller_metadata(snapshot, log)


def test_voter_changes_in_the_log_are_followed(tmp_path: Path) -> None:
    snapshot = snapshot_of(tmp_path, [encode_record(NoOpRecord())], 1)
    log = tmp_path / "log"
    log.mkdir()
    voters = (Voter(7, DIR, (VoterEndpoint("CONTROLLER", "c7", 9093),)),)
    (log / f"{1:020d}.log").write_bytes(control_batch(1, [(CONTROL_KRAFT_VOTERS, voters_message(voters))], timestamp_ms=T, leader_epoch=2))
    assert read_controller_metadata(snapshot, log).voters == voters


def test_a_malformed_record_is_named_by_offset(tmp_path: Path) -> None:
    bad = encode_record(TopicRecord(name="t", topic_id=TOPIC))[:-3]
    snapshot = snapshot_of(tmp_path, [encode_record(NoOpRecord()), bad], 2)
    with pytest.raises(SnapshotError, match=r"the record at offset 2 cannot be read: TopicRecord v0"):
        read_controller_metadata(snapshot)
