"""Dumping Kafka metadata files: batch rows, record rows as Kafka prints them, damage by byte."""

from __future__ import annotations

import json
from pathlib import Path

from kjbod.records import TopicRecord
from kjbod.records.wire import encode_record
from kjbod.tools.kafka_dump import dump_kafka_file
from kjbod.kafka_formats.record_batch import batch_bytes, data_records

FIXTURES = Path(__file__).parents[1] / "fixtures" / "kafka"
T = 1_700_000_000_000
TOPIC = "cJ3rE4bvQc2w5Y0kT1q9Zg"


def rows_of(path: Path) -> tuple[list[dict], list[str]]:
    rows, report = dump_kafka_file(path)
    return list(rows), report.problems


def test_a_kafka_snapshot_dumps_its_records_as_kafkas_reader_prints_them() -> None:
    directory = FIXTURES / "all-records"
    rows, problems = rows_of(directory / "00000000000000000044-0000000001.checkpoint")
    expected = [json.loads(line) for line in (directory / "kafka-read.jsonl").read_text().splitlines()]
    assert json.loads(json.dumps([r for r in rows if "batch" not in r])) == expected
    assert problems == []
    batches = [r["batch"] for r in rows if "batch" in r]
    assert [(b["baseOffset"], b["lastOffset"], b["isControl"], b["position"], b["crcValid"]) for b in batches] == [
        (0, 2, True, 0, True), (3, 46, False, batches[1]["position"], True), (47, 47, True, batches[2]["position"], True),
    ]
    assert batches[1]["position"] == batches[0]["size"]


def test_a_bootstrap_checkpoint_dumps_too() -> None:
    rows, problems = rows_of(FIXTURES / "format-initial" / "meta" / "bootstrap.checkpoint")
    records = [(r["offset"], r["type"], r.get("control")) for r in rows if "batch" not in r]
    assert records == [(0, "SnapshotHeaderRecord", "SNAPSHOT_HEADER"), (1, "FeatureLevelRecord", None), (2, "SnapshotFooterRecord", "SNAPSHOT_FOOTER")]
    assert rows[3]["data"] == {"name": "metadata.version", "featureLevel": 21} and problems == []


def test_a_crc_mismatch_is_reported_by_byte_and_the_dump_goes_on(tmp_path: Path) -> None:
    first = batch_bytes(0, data_records([encode_record(TopicRecord(name="a", topic_id=TOPIC))]), 1, timestamp_ms=T, leader_epoch=0)
    second = bytearray(batch_bytes(1, data_records([encode_record(TopicRecord(name="b", topic_id=TOPIC))]), 1, timestamp_ms=T, leader_epoch=0))
    second[40] ^= 0xFF  # inside the header's timestamps: covered by the CRC, the records still parse
    third = batch_bytes(2, data_records([encode_record(TopicRecord(name="c", topic_id=TOPIC))]), 1, timestamp_ms=T, leader_epoch=0)
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(first + bytes(second) + third)
    rows, problems = rows_of(path)
    assert [r["data"]["name"] for r in rows if "data" in r] == ["a", "b", "c"]
    assert [r["batch"]["crcValid"] for r in rows if "batch" in r] == [True, False, True]
    assert problems == [f"at byte {len(first)}: CRC mismatch in the batch at offset 1"]


def test_an_impossible_length_ends_the_dump_with_its_byte(tmp_path: Path) -> None:
    first = batch_bytes(0, data_records([encode_record(TopicRecord(name="a", topic_id=TOPIC))]), 1, timestamp_ms=T, leader_epoch=0)
    path = tmp_path / "x.log"
    path.write_bytes(first + b"\x00" * 8 + b"\x00\x00\x00\x05" + b"\x00" * 60)
    rows, problems = rows_of(path)
    assert len([r for r in rows if "batch" in r]) == 1
    assert problems == [f"at byte {len(first)}: invalid batch length 5 (the header alone is 49); the rest of the file (72 bytes) cannot be read"]


def test_a_torn_tail_is_a_row_not_a_problem(tmp_path: Path) -> None:
    whole = batch_bytes(0, data_records([b"\x01\x14\x00\x00"]), 1, timestamp_ms=T, leader_epoch=0)
    path = tmp_path / "x.log"
    path.write_bytes(whole + whole[:30])
    rows, problems = rows_of(path)
    assert rows[-1] == {"torn": {"position": len(whole), "bytes": 30, "batchSize": len(whole), "description": f"an incomplete batch at byte {len(whole)} (30 of {len(whole)} bytes)"}}
    assert rows[1] == {"offset": 0, "type": "NoOpRecord", "version": 0, "data": {}}
    assert problems == []


def test_an_undecodable_record_is_a_row_and_a_problem(tmp_path: Path) -> None:
    path = tmp_path / "x.log"
    path.write_bytes(batch_bytes(5, data_records([b"\x00\x02\x00"]), 1, timestamp_ms=T, leader_epoch=0))
    rows, problems = rows_of(path)
    assert rows[1]["offset"] == 5 and "unknown frame version 0" in rows[1]["error"]
    assert problems == [rows[1]["error"]]
