"""The Kafka-format commands: metadata dump --kafka-file, metadata export --kafka-snapshot,
import cluster --metadata-snapshot (exact output, -o json, exit codes)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from ..conftest import Cli

FIXTURES = Path(__file__).parents[1] / "fixtures" / "kafka"
SMALL = FIXTURES / "small-cluster" / "via-image" / "00000000000000000013-0000000001.checkpoint"


def test_dump_a_kafka_snapshot_as_json_lines(cli: Cli) -> None:
    result = cli("metadata", "dump", "--kafka-file", str(SMALL), state=None)
    lines = result.stdout.splitlines()
    assert result.exit_code == 0 and result.stderr == ""
    assert json.loads(lines[0])["batch"]["baseOffset"] == 0
    assert lines[1] == '{"offset":0,"type":"SnapshotHeaderRecord","version":0,"data":{"version":0,"lastContainedLogTimestamp":1700000000000},"control":"SNAPSHOT_HEADER"}'
    assert lines[3] == '{"offset":1,"type":"FeatureLevelRecord","version":0,"data":{"name":"metadata.version","featureLevel":21}}'
    assert len(lines) == 3 + 13 + 2


def test_dump_filters_by_kafka_record_type_and_offset(cli: Cli) -> None:
    result = cli("metadata", "dump", "--kafka-file", str(SMALL), "--type", "PARTITION_RECORD", "--from-offset", "10", state=None)
    rows = [json.loads(line) for line in result.stdout.splitlines()]
    assert [(r["offset"], r["type"]) for r in rows] == [(10, "PartitionRecord"), (11, "PartitionRecord"), (12, "PartitionRecord")]
    bad = cli("metadata", "dump", "--kafka-file", str(SMALL), "--type", "Bogus", state=None)
    assert bad.exit_code == 1 and bad.stderr.startswith("Unknown record type Bogus. Known types: AbortTransactionRecord")


def test_dump_json_is_one_document(cli: Cli) -> None:
    result = cli("-o", "json", "metadata", "dump", "--kafka-file", str(SMALL), state=None)
    document = json.loads(result.stdout)
    assert (document["batches"], document["records"], document["problems"]) == (3, 15, [])
    assert len(document["rows"]) == 18


def test_a_damaged_kafka_file_is_reported_by_byte_and_exits_1(cli: Cli, tmp_path: Path) -> None:
    data = bytearray(SMALL.read_bytes())
    data[200] ^= 0x01  # inside the data batch, which starts at byte 83
    bad = tmp_path / "bad.checkpoint"
    bad.write_bytes(bytes(data))
    result = cli("metadata", "dump", "--kafka-file", str(bad), state=None)
    assert result.exit_code == 1
    assert result.stderr == f"{bad} is damaged at byte 83: CRC mismatch in the batch at offset 1\n"
    assert '"crcValid":false' in result.stdout
    missing = cli("metadata", "dump", "--kafka-file", str(tmp_path / "nope"), state=None)
    assert (missing.exit_code, missing.stderr) == (1, f"Cannot read {tmp_path / 'nope'}: No such file or directory\n")


def test_import_a_snapshot_then_export_it_again(cli: Cli, tmp_path: Path) -> None:
    state = tmp_path / "imported"
    result = cli("import", "cluster", "--metadata-snapshot", str(SMALL), state=state)
    assert result.exit_code == 0, result.stderr
    assert result.stdout.splitlines() == [
        f"Imported 3 broker(s) with 6 log directories, 2 topic(s) and 5 partition(s) (13 replicas) into {state} at metadata.version 3.9-IV0.",
        f"Read 13 records from the snapshot {SMALL}.",
        "Records kjbod does not model, counted and left out: ZkMigrationStateRecord 1.",
        "6 log directories keep their id as their path: broker 1: 3oJ4LLPQFmLNXhGoM4NSnA, ZHhjBKM7WhTDJjGgrRHWNQ; "
        "broker 2: sKiLcpl5FpChLAbWYcGrCg, Emw1V57nt0AN4cwZsdZKPA; broker 3: NKtRVYvUR6VDbrqg_v4biA, NcjTNuXUZzbj_Cfa9suTDA.",
        "Wrote 15 records and a snapshot.",
    ]
    out = tmp_path / "out"
    out.mkdir()
    exported = cli("-o", "json", "metadata", "export", "--kafka-snapshot", str(out), state=state)
    document = json.loads(exported.stdout)
    assert document["recordsByType"] == {"ConfigRecord": 1, "FeatureLevelRecord": 1, "PartitionRecord": 5, "RegisterBrokerRecord": 3, "TopicRecord": 2}
    assert document["leftOut"] == {"KjbodBrokerLogDirsRecord": 3}
    written = Path(document["file"])
    assert written.parent == out and written.name == "00000000000000000015-0000000001.checkpoint"
    again = cli("metadata", "export", "--kafka-snapshot", str(written), state=state)
    assert (again.exit_code, again.stderr) == (1, f"{written} already exists; export does not replace a file: name a new file or a directory\n")


def test_export_to_a_directory_that_does_not_exist_is_refused_not_written_as_a_file(cli: Cli, tmp_path: Path) -> None:
    state = tmp_path / "imported"
    cli("import", "cluster", "--metadata-snapshot", str(SMALL), state=state)
    meant = f"{tmp_path / 'no-such-dir'}/"
    result = cli("metadata", "export", "--kafka-snapshot", meant, state=state)
    assert (result.exit_code, result.stderr) == (1, f"Cannot write into {meant}: no such directory; create it first, or name a file\n")
    assert not (tmp_path / "no-such-dir").exists()
    (tmp_path / "no-such-dir").mkdir()
    written = cli("metadata", "export", "--kafka-snapshot", meant, state=state)
    assert written.exit_code == 0 and [p.name for p in (tmp_path / "no-such-dir").iterdir()] == ["00000000000000000015-0000000001.checkpoint"]


def test_export_text(cli: Cli, tmp_path: Path) -> None:
    state = tmp_path / "imported"
    cli("import", "cluster", "--metadata-snapshot", str(SMALL), state=state)
    target = tmp_path / "x.checkpoint"
    result = cli("metadata", "export", "--kafka-snapshot", str(target), state=state)
    size = target.stat().st_size
    assert result.stdout == (
        f"Wrote {target} ({size} bytes): a KRaft snapshot at metadata.version 3.9-IV0, snapshot id 15-1, 12 records "
        "(ConfigRecord 1, FeatureLevelRecord 1, PartitionRecord 5, RegisterBrokerRecord 3, TopicRecord 2).\n"
        "Left out kjbod's own records (not Kafka's): KjbodBrokerLogDirsRecord 3.\n"
    )


def test_import_from_a_snapshot_and_its_log(cli: Cli, tmp_path: Path) -> None:
    from kjbod.records import PartitionChangeRecord
    from kjbod.records.wire import encode_record
    from kjbod.kafka_formats.record_batch import batch_bytes, data_records

    log = tmp_path / "__cluster_metadata-0"
    log.mkdir()
    shutil.copy(SMALL, log / SMALL.name)
    change = PartitionChangeRecord(version=1, topic_id="BnTTuiXK-fL9KZZ37lJCbw", partition_id=2, isr=(3, 1, 2))
    whole = batch_bytes(13, data_records([encode_record(change)]), 1, timestamp_ms=1, leader_epoch=1)
    (log / "00000000000000000013.log").write_bytes(whole + whole[:20])
    state = tmp_path / "imported"
    result = cli("-o", "json", "import", "cluster", "--metadata-snapshot", str(log / SMALL.name), "--metadata-log", str(log), state=state)
    document = json.loads(result.stdout)
    assert document["source"]["logRecords"] == 1 and document["source"]["logSegments"] == 1
    assert document["source"]["tornBatch"].startswith("00000000000000000013.log: an incomplete batch at byte")
    described = cli("topic", "describe", "orders", state=state).stdout
    assert "Partition: 2\tLeader: 3\tReplicas: 3,1,2\tIsr: 3,1,2" in described


def test_import_option_combinations_are_usage_errors(cli: Cli, tmp_path: Path) -> None:
    state = tmp_path / "s"
    mixed = cli("import", "cluster", "--metadata-snapshot", str(SMALL), "--brokers", "b.json", state=state)
    assert (mixed.exit_code, mixed.stderr) == (2, "--metadata-snapshot replaces --brokers, --assignment and --metadata-version (the snapshot holds them)\n")
    alone = cli("import", "cluster", "--metadata-log", str(tmp_path), state=state)
    assert (alone.exit_code, alone.stderr) == (2, "--metadata-log goes with --metadata-snapshot\n")
    neither = cli("import", "cluster", state=state)
    assert (neither.exit_code, neither.stderr) == (2, "Give --brokers FILE and --assignment FILE, or --metadata-snapshot FILE\n")
    assert not state.exists()


def test_a_snapshot_that_is_not_one_exits_1_and_writes_nothing(cli: Cli, tmp_path: Path) -> None:
    bad = tmp_path / "bad.checkpoint"
    bad.write_bytes(SMALL.read_bytes()[:-10])
    state = tmp_path / "s"
    result = cli("import", "cluster", "--metadata-snapshot", str(bad), state=state)
    assert result.exit_code == 1
    assert result.stderr.startswith(f"{bad}: the snapshot ends with an incomplete batch at byte")
    assert not state.exists() or not any(state.iterdir())


def _snapshot_of_a_long_running_cluster(tmp_path: Path) -> Path:
    """A controller's snapshot at offset 4000200: its brokers' epochs are Kafka's log offsets,
    far above the offsets of the state kjbod makes from it (which start at 0)."""
    from kjbod.records import FeatureLevelRecord, RegisterBrokerRecord
    from kjbod.records.wire import encode_record
    from kjbod.kafka_formats.kraft_snapshot import SnapshotId, write_kraft_snapshot

    records = [
        FeatureLevelRecord(name="metadata.version", feature_level=21),  # 3.9-IV0
        RegisterBrokerRecord(version=3, broker_id=1, incarnation_id="a8JDyXx7Qk-8-EMu9JvuOQ", broker_epoch=4_000_123,
                             rack="r1", fenced=True, log_dirs=("ZHhjBKM7WhTDJjGgrRHWNQ",)),
        RegisterBrokerRecord(version=3, broker_id=2, incarnation_id="OGOWv9UAVjHxZg7cMyVefA", broker_epoch=3_999_001,
                             rack="r2", fenced=True, log_dirs=("sKiLcpl5FpChLAbWYcGrCg",)),
    ]
    return write_kraft_snapshot(tmp_path / SnapshotId(4_000_200, 9).file_name, [encode_record(r) for r in records],
                                epoch=9, timestamp_ms=1_700_000_000_000)


def test_a_broker_registered_after_an_import_gets_a_higher_epoch_than_kafka_gave_it(cli: Cli, tmp_path: Path) -> None:
    state = tmp_path / "imported"
    assert cli("import", "cluster", "--metadata-snapshot", str(_snapshot_of_a_long_running_cluster(tmp_path)), state=state).exit_code == 0
    listed = {b["id"]: b["epoch"] for b in json.loads(cli("-o", "json", "broker", "list", state=state).stdout)}
    assert listed == {1: 4_000_123, 2: 3_999_001}  # Kafka's epochs are kept
    # A new incarnation of broker 2, then of broker 1: each epoch is above every epoch before it.
    second = cli("-o", "json", "broker", "register", "--id", "2", "--dir", "/data/b2=sKiLcpl5FpChLAbWYcGrCg", state=state)
    assert second.exit_code == 0, second.stderr
    assert json.loads(second.stdout)["epoch"] == 4_000_124
    first = cli("-o", "json", "broker", "register", "--id", "1", "--dir", "/data/b1=ZHhjBKM7WhTDJjGgrRHWNQ", state=state)
    assert json.loads(first.stdout)["epoch"] == 4_000_125
    # Heartbeats name the new epoch: the broker is unfenced with it.
    assert cli("broker", "heartbeat", "--id", "1", state=state).exit_code == 0
    listed = {b["id"]: (b["epoch"], b["state"]) for b in json.loads(cli("-o", "json", "broker", "list", state=state).stdout)}
    assert listed[1][0] == 4_000_125 and listed[2][0] == 4_000_124
