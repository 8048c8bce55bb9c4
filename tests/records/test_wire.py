"""Kafka's binary record format: the schema-driven codecs against bytes Kafka's own code wrote."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, get_args

import orjson
import pytest
from annotated_types import Ge, Le
from hypothesis import given, settings
from hypothesis import strategies as st

from kjbod.records import (
    ControllerEndpoint,
    ControllerFeature,
    KRaftVersionFeature,
    Voter,
    VoterEndpoint,
    BrokerEndpoint,
    BrokerFeature,
    BrokerRegistrationChangeRecord,
    ConfigRecord,
    PartitionChangeRecord,
    PartitionRecord,
    RegisterBrokerRecord,
    TopicRecord,
)
from kjbod.records.base import Record
from kjbod.records.codec import RecordRun
from kjbod.records.wire import (
    CONTROL_MODELS,
    control_data,
    control_model,
    MODELLED_RECORDS,
    RunCollector,
    WireError,
    codec,
    decode_metadata_value,
    decode_record,
    encode_metadata_value,
    encode_record,
    encode_run,
    model_from_value,
    read_uvarint,
    read_varint,
    schema,
    schemas,
    uvarint,
    varint,
)
from kjbod.kafka_formats.kraft_snapshot import read_kraft_snapshot

from .examples import DIR_A, DIR_B, TOPIC, examples

FIXTURES = Path(__file__).parents[1] / "fixtures" / "kafka"
ALL_RECORDS = FIXTURES / "all-records"
ALL_RECORDS_SNAPSHOT = ALL_RECORDS / "00000000000000000044-0000000001.checkpoint"

_INT_RANGES = {
    "int8": (-(2**7), 2**7 - 1),
    "int16": (-(2**15), 2**15 - 1),
    "uint16": (0, 2**16 - 1),
    "int32": (-(2**31), 2**31 - 1),
    "int64": (-(2**63), 2**63 - 1),
}


def kafka_read_lines(directory: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (directory / "kafka-read.jsonl").read_text().splitlines() if '"offset"' in line]


# The schemas -----------------------------------------------------------------------------------


def test_every_schema_compiles_at_every_version() -> None:
    compiled = [(name, version) for name, spec in schemas().items() for version in spec.versions if codec(name, version)]
    assert len(schemas()) == 32
    assert ("RegisterBrokerRecord", 4) in compiled and ("BrokerRegistrationChangeRecord", 3) in compiled
    assert ("VotersRecord", 0) in compiled and ("LeaderChangeMessage", 1) in compiled


# Defaults that never reach the wire: the field is in every version and not tagged, so Kafka
# always writes its value. kjbod's "no rack" is None; Kafka's generated class starts from "".
_DEFAULTS_OFF_THE_WIRE = {("RegisterBrokerRecord", "Rack")}


def _allows_none(annotation: Any) -> bool:
    return type(None) in get_args(annotation)


def _int_bounds(info: Any) -> tuple[int | None, int | None]:
    low = high = None
    for meta in info.metadata:
        if isinstance(meta, Ge):
            low = meta.ge
        elif isinstance(meta, Le):
            high = meta.le
    return low, high


def _check_struct(model: type, fields: Any, version: int, where: str) -> None:
    """The model's fields at `version` agree with the schema's: names, defaults, nullability."""
    by_alias = {(info.alias or name): (name, info) for name, info in model.model_fields.items() if name not in ("type", "version")}
    present = [f for f in fields if f.present_in(version)]
    since = getattr(model, "FIELD_SINCE", None)
    model_names = {alias for alias, (name, _) in by_alias.items() if since is None or since[name] <= version}
    assert model_names == {f.json_name for f in present}, f"{where} v{version}: field names"
    for f in present:
        name, info = by_alias[f.json_name]
        if (where, f.name) in _DEFAULTS_OFF_THE_WIRE:
            assert not f.tagged_versions.high and f.versions.low == 0, "only an always-present field's default stays off the wire"
        if since is not None:
            assert since[name] == f.versions.low, f"{where}.{f.name}: first version"
        if not info.is_required() and (where, f.name) not in _DEFAULTS_OFF_THE_WIRE:
            default = info.default
            expected = f.default()
            if f.is_array and expected is not None:
                expected = tuple(expected)
            assert default == expected, f"{where}.{f.name}: default {default!r}, Kafka's {expected!r}"
        assert _allows_none(info.annotation) == f.nullable_in(version), f"{where}.{f.name} v{version}: nullability"
        if f.type in _INT_RANGES:
            assert _int_bounds(info) == _INT_RANGES[f.type], f"{where}.{f.name}: range of {f.type}"
        if f.is_struct:
            element = _STRUCTS.get((where, f.name)) or {"EndPoints": BrokerEndpoint, "Features": BrokerFeature}[f.name]
            _check_struct(element, f.fields, version, f"{where}.{f.name}")


_STRUCTS = {
    ("RegisterControllerRecord", "EndPoints"): ControllerEndpoint,
    ("RegisterControllerRecord", "Features"): ControllerFeature,
    ("VotersRecord", "Voters"): Voter,
    ("VotersRecord.Voters", "Endpoints"): VoterEndpoint,
    ("VotersRecord.Voters", "KRaftVersionFeature"): KRaftVersionFeature,
}


@pytest.mark.parametrize("name", sorted(MODELLED_RECORDS))
def test_every_kjbod_model_agrees_with_kafkas_schema(name: str) -> None:
    model = MODELLED_RECORDS[name]
    spec = schema(name)
    assert model.API_KEY == spec.api_key
    assert model.VERSIONS == spec.versions
    for version in model.VERSIONS:
        _check_struct(model, spec.fields, version, name)


def test_kjbod_models_every_record_the_controller_needs() -> None:
    assert set(MODELLED_RECORDS) == {
        "RegisterBrokerRecord", "UnregisterBrokerRecord", "TopicRecord", "PartitionRecord", "ConfigRecord",
        "PartitionChangeRecord", "FenceBrokerRecord", "UnfenceBrokerRecord", "RemoveTopicRecord",
        "FeatureLevelRecord", "BrokerRegistrationChangeRecord", "NoOpRecord", "RegisterControllerRecord",
        "ClearElrRecord", "UnregisterControllerRecord", "UserScramCredentialRecord", "RemoveUserScramCredentialRecord",
    }
    assert set(CONTROL_MODELS) == {"KRaftVersionRecord", "VotersRecord"}


@pytest.mark.parametrize("name", sorted(CONTROL_MODELS))
def test_the_control_record_models_agree_with_kafkas_schema(name: str) -> None:
    """KRaftVersionRecord and VotersRecord: Kafka's data field `Version` is the model's version."""
    model = CONTROL_MODELS[name]
    spec = schema(name)
    assert spec.api_key is None and model.VERSIONS == spec.versions
    version_field, *fields = spec.fields
    assert version_field.name == "Version"
    for version in model.VERSIONS:
        _check_struct(model, tuple(fields), version, name)


def test_kafka_written_voters_decode_into_kjbods_models_and_back() -> None:
    """The three-voter set and kraft.version Kafka wrote into the all-records snapshot's header."""
    snapshot = read_kraft_snapshot(ALL_RECORDS_SNAPSHOT)
    controls = {c.type_name: c for c in snapshot.control_records}
    voters = control_model("VotersRecord", controls["KRAFT_VOTERS"].data)
    assert sorted(v.voter_id for v in voters.voters) == [1, 2, 3]
    assert control_data(voters) == controls["KRAFT_VOTERS"].data
    kraft = control_model("KRaftVersionRecord", controls["KRAFT_VERSION"].data)
    assert kraft.k_raft_version == 1 and control_data(kraft) == controls["KRAFT_VERSION"].data


# Against bytes Kafka wrote ---------------------------------------------------------------------


def test_kafka_written_records_decode_to_what_kafkas_json_converter_prints() -> None:
    snapshot = read_kraft_snapshot(ALL_RECORDS_SNAPSHOT)
    expected = [line for line in kafka_read_lines(ALL_RECORDS) if "control" not in line]
    decoded = []
    for record in snapshot.data_records():
        value = record.decode()
        decoded.append({"offset": record.offset, "type": value.name, "version": value.version, "data": value.kafka_json()})
    assert orjson.loads(orjson.dumps(decoded)) == expected
    assert len(decoded) == 44


def test_kafka_written_control_records_decode_to_kafkas_json() -> None:
    snapshot = read_kraft_snapshot(ALL_RECORDS_SNAPSHOT)
    expected = [(line["offset"], line["control"], line["data"]) for line in kafka_read_lines(ALL_RECORDS) if "control" in line]
    assert [(c.offset, c.type_name, c.data) for c in snapshot.control_records] == expected


def test_every_kafka_written_record_encodes_back_to_the_same_bytes() -> None:
    for record in read_kraft_snapshot(ALL_RECORDS_SNAPSHOT).data_records():
        value = record.decode()
        assert encode_metadata_value(value.name, value.version, value.data()) == record.value, value.name


def test_modelled_records_round_trip_through_kjbods_models_byte_for_byte() -> None:
    seen = set()
    for record in read_kraft_snapshot(ALL_RECORDS_SNAPSHOT).data_records():
        model = model_from_value(record.decode())
        if model is None:
            continue
        seen.add((type(model).__name__, model.version))
        assert encode_record(model) == record.value, model


def test_the_fixture_covers_every_modelled_record_at_every_version_kafka_knows() -> None:
    seen = {(type(m).__name__, m.version) for m in (decode_record(r.buffer, r.start, r.end) for r in read_kraft_snapshot(ALL_RECORDS_SNAPSHOT).data_records()) if m}
    expected = {(name, v) for name, model in MODELLED_RECORDS.items() for v in model.VERSIONS}
    # The oracle's Kafka predates KIP-1066 (RegisterBrokerRecord v4, BrokerRegistrationChangeRecord v3)
    # and KIP-1312 (UnregisterControllerRecord), and wrote no ClearElrRecord.
    assert expected - seen == {("RegisterBrokerRecord", 4), ("BrokerRegistrationChangeRecord", 3), ("ClearElrRecord", 0),
                               ("UnregisterControllerRecord", 0)}


def test_records_kjbod_does_not_model_decode_but_give_no_model() -> None:
    unmodelled = set()
    for record in read_kraft_snapshot(ALL_RECORDS_SNAPSHOT).data_records():
        value = record.decode()
        if model_from_value(value) is None:
            unmodelled.add(value.name)
    assert unmodelled == {
        "ProducerIdsRecord", "AccessControlEntryRecord", "RemoveAccessControlEntryRecord", "ClientQuotaRecord", "DelegationTokenRecord", "RemoveDelegationTokenRecord",
        "ZkMigrationStateRecord", "BeginTransactionRecord", "EndTransactionRecord",
        "AbortTransactionRecord",
    }


# kjbod's records -------------------------------------------------------------------------------


@pytest.mark.parametrize("record", [r for r in examples() if type(r).__name__ in MODELLED_RECORDS], ids=lambda r: f"{type(r).__name__}-v{r.version}")
def test_every_example_round_trips(record: Record) -> None:
    assert decode_record(encode_record(record)) == record


def test_cordoned_directories_use_the_kip_1066_tags() -> None:
    register = RegisterBrokerRecord(version=4, broker_id=1, incarnation_id=DIR_A, broker_epoch=1, log_dirs=(DIR_A, DIR_B), cordoned_log_dirs=(DIR_B,))
    data = codec("RegisterBrokerRecord", 4).decode_dict(encode_record(register), 3)
    assert data["cordonedLogDirs"] == (DIR_B,)
    uuid = codec("TopicRecord", 0).encode  # a TopicRecord is a name and a uuid: borrow its uuid bytes
    a, b = uuid("", DIR_A)[1:17], uuid("", DIR_B)[1:17]
    # Two tagged fields: tag 0 (LogDirs, 33 bytes: a compact array of 2) and tag 1 (CordonedLogDirs, 17 bytes).
    assert encode_record(register).endswith(b"\x02" + b"\x00\x21\x03" + a + b + b"\x01\x11\x02" + b)
    # Nullable as released (KIP-1066 in 4.3): null (not reported yet) is absent, an empty list is written.
    reported_none = register.model_copy(update={"cordoned_log_dirs": ()})
    assert decode_record(encode_record(reported_none)) == reported_none
    assert encode_record(reported_none).endswith(b"\x02" + b"\x00\x21\x03" + a + b + b"\x01\x01\x01")
    unknown = register.model_copy(update={"cordoned_log_dirs": None})
    assert encode_record(unknown).endswith(b"\x01" + b"\x00\x21\x03" + a + b)
    change = BrokerRegistrationChangeRecord(version=3, broker_id=1, broker_epoch=1, cordoned_log_dirs=())
    assert decode_record(encode_record(change)) == change  # empty (uncordon all) is not null (no change)
    assert encode_record(change).endswith(b"\x01\x03\x01\x01")  # tag 3, 1 byte, empty compact array
    assert encode_record(change.model_copy(update={"cordoned_log_dirs": None})).endswith(b"\x00")


def test_tagged_fields_are_written_only_when_not_default() -> None:
    unchanged = PartitionChangeRecord(partition_id=1, topic_id=TOPIC)
    assert encode_record(unchanged) == bytes([1, 5, 0]) + b"\x00\x00\x00\x01" + codec("TopicRecord", 0).encode("", TOPIC)[1:-1] + b"\x00"
    with_isr = PartitionChangeRecord(partition_id=1, topic_id=TOPIC, isr=())
    assert encode_record(with_isr).endswith(b"\x01\x00\x01\x01")  # one tag: 0, size 1, empty array


def test_fields_outside_the_version_are_refused_as_kafka_refuses_them() -> None:
    with pytest.raises(ValueError, match="directories needs version 1"):
        encode_record(PartitionRecord(version=0, topic_id=TOPIC, replicas=(1,), isr=(1,), directories=(DIR_A,)))


def _uuid() -> st.SearchStrategy[str]:
    return st.binary(min_size=16, max_size=16).map(lambda raw: __import__("base64").urlsafe_b64encode(raw)[:22].decode())


_int32 = st.integers(-(2**31), 2**31 - 1)
_int_lists = st.lists(_int32, max_size=6).map(tuple)
_maybe_int_lists = st.none() | _int_lists
_text = st.text(max_size=30)


@st.composite
def partition_records(draw: st.DrawFn) -> PartitionRecord:
    version = draw(st.integers(0, 2))
    replicas = draw(_int_lists)
    return PartitionRecord(
        version=version,
        partition_id=draw(_int32),
        topic_id=draw(_uuid()),
        replicas=replicas,
        isr=draw(_int_lists),
        removing_replicas=draw(_int_lists),
        adding_replicas=draw(_int_lists),
        leader=draw(_int32),
        leader_recovery_state=draw(st.integers(-128, 127)),
        leader_epoch=draw(_int32),
        partition_epoch=draw(_int32),
        directories=tuple(draw(_uuid()) for _ in replicas) if version >= 1 else (),
        eligible_leader_replicas=draw(_maybe_int_lists) if version >= 2 else None,
        last_known_elr=draw(_maybe_int_lists) if version >= 2 else None,
    )


@st.composite
def partition_change_records(draw: st.DrawFn) -> PartitionChangeRecord:
    version = draw(st.integers(0, 2))
    return PartitionChangeRecord(
        version=version,
        partition_id=draw(_int32),
        topic_id=draw(_uuid()),
        isr=draw(_maybe_int_lists),
        leader=draw(_int32),
        replicas=draw(_maybe_int_lists),
        removing_replicas=draw(_maybe_int_lists),
        adding_replicas=draw(_maybe_int_lists),
        leader_recovery_state=draw(st.integers(-128, 127)),
        directories=draw(st.none() | st.lists(_uuid(), max_size=4).map(tuple)) if version >= 1 else None,
        eligible_leader_replicas=draw(_maybe_int_lists) if version >= 2 else None,
        last_known_elr=draw(_maybe_int_lists) if version >= 2 else None,
    )


@st.composite
def register_broker_records(draw: st.DrawFn) -> RegisterBrokerRecord:
    version = draw(st.integers(0, 4))
    int16 = st.integers(-(2**15), 2**15 - 1)
    endpoint = st.tuples(_text, _text, st.integers(0, 65535), int16).map(
        lambda t: BrokerEndpoint(name=t[0], host=t[1], port=t[2], security_protocol=t[3])
    )
    feature = st.tuples(_text, int16, int16).map(lambda t: BrokerFeature(name=t[0], min_supported_version=t[1], max_supported_version=t[2]))
    return RegisterBrokerRecord(
        version=version,
        broker_id=draw(_int32),
        is_migrating_zk_broker=draw(st.booleans()) if version >= 2 else False,
        incarnation_id=draw(_uuid()),
        broker_epoch=draw(st.integers(-(2**63), 2**63 - 1)),
        end_points=tuple(draw(st.lists(endpoint, max_size=3))),
        features=tuple(draw(st.lists(feature, max_size=3))),
        rack=draw(st.none() | _text),
        fenced=draw(st.booleans()),
        in_controlled_shutdown=draw(st.booleans()) if version >= 1 else False,
        log_dirs=tuple(draw(st.lists(_uuid(), max_size=3))) if version >= 3 else (),
        cordoned_log_dirs=draw(st.none() | st.lists(_uuid(), max_size=3).map(tuple)) if version >= 4 else None,
    )


@settings(max_examples=150, deadline=None)
@given(st.one_of(
    partition_records(),
    partition_change_records(),
    register_broker_records(),
    st.tuples(st.integers(-128, 127), _text, _text, st.none() | _text).map(
        lambda t: ConfigRecord(resource_type=t[0], resource_name=t[1], name=t[2], value=t[3])
    ),
    st.tuples(_text, _uuid()).map(lambda t: TopicRecord(name=t[0], topic_id=t[1])),
))
def test_any_record_round_trips_through_the_wire(record: Record) -> None:
    assert decode_record(encode_record(record)) == record


@settings(max_examples=50, deadline=None)
@given(st.lists(partition_records().filter(lambda r: r.version == 1), min_size=1, max_size=20))
def test_runs_encode_and_collect_column_wise_exactly_as_record_by_record(records: list[PartitionRecord]) -> None:
    run = RecordRun.of(records)
    encoded = list(encode_run(run))
    assert encoded == [encode_record(r) for r in records]
    collector = RunCollector(schema("PartitionRecord"), 1)
    for value in encoded:
        collector.collect(value, 3, len(value))  # after the 3-byte frame
    assert collector.run().records() == records


# Varints and errors ----------------------------------------------------------------------------


@pytest.mark.parametrize("value", [0, 1, 127, 128, 16383, 16384, 2**31 - 1, 2**35])
def test_unsigned_varints(value: int) -> None:
    encoded = uvarint(value)
    assert read_uvarint(encoded, 0) == (value, len(encoded))


@pytest.mark.parametrize("value", [0, 1, -1, 63, -64, 64, 300, -(2**31), 2**31 - 1, -(2**63), 2**63 - 1])
def test_zigzag_varints(value: int) -> None:
    assert read_varint(varint(value), 0) == (value, len(varint(value)))


def test_varint_bytes_match_kafkas_byteutils() -> None:
    assert (varint(-1), varint(1), varint(300), uvarint(300)) == (b"\x01", b"\x02", b"\xd8\x04", b"\xac\x02")


def test_a_collector_refuses_a_record_of_the_wrong_length_and_stays_aligned() -> None:
    collector = RunCollector(schema("TopicRecord"), 0)
    good = encode_record(TopicRecord(name="a", topic_id=TOPIC))
    collector.collect(good, 3, len(good))
    with pytest.raises(WireError, match="TopicRecord v0: the message ends at byte"):
        collector.collect(good + b"\x00", 3, len(good) + 1)
    collector.collect(good, 3, len(good))
    assert collector.run().records() == [TopicRecord(name="a", topic_id=TOPIC)] * 2


def test_a_truncated_record_is_refused() -> None:
    value = encode_record(PartitionRecord(topic_id=TOPIC, replicas=(1, 2), isr=(1,)))
    for cut in (3, 10, len(value) - 1):
        with pytest.raises(WireError):
            decode_metadata_value(value[:cut])


def test_garbage_after_a_record_is_refused() -> None:
    value = encode_record(TopicRecord(name="t", topic_id=TOPIC))
    with pytest.raises(WireError, match="1 byte\\(s\\) of garbage after the message"):
        decode_metadata_value(value + b"\x00")


def test_frame_version_0_is_refused_as_kafka_refuses_it() -> None:
    value = encode_record(TopicRecord(name="t", topic_id=TOPIC))
    with pytest.raises(WireError, match="unknown frame version 0"):
        decode_metadata_value(b"\x00" + value[1:])


def test_an_unknown_api_key_is_reported_not_parsed() -> None:
    value = decode_metadata_value(b"\x01\x63\x00whatever")
    assert (value.spec, value.api_key, value.name) == (None, 99, "UnknownRecord(apiKey=99)")


def test_an_unknown_version_is_refused() -> None:
    with pytest.raises(WireError, match="TopicRecord version 5 is not one this schema knows"):
        decode_metadata_value(b"\x01\x02\x05" + b"\x00" * 20)


def test_a_null_in_a_non_nullable_field_is_refused() -> None:
    # TopicRecord v0 with a null name: compact length 0.
    with pytest.raises(WireError, match="null value in a non-nullable field"):
        decode_metadata_value(b"\x01\x02\x00\x00" + b"\x00" * 17)


def test_unknown_tagged_fields_are_skipped() -> None:
    body = codec("TopicRecord", 0).encode("t", TOPIC)
    with_tag = body[:-1] + b"\x01\x63\x02ab"  # one tagged field: tag 99, two bytes
    assert codec("TopicRecord", 0).decode_dict(with_tag, 0, len(with_tag)) == {"name": "t", "topicId": TOPIC}
