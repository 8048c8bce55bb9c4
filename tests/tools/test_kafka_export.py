"""metadata export --kafka-snapshot, and the round trip export -> import -> the same image."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kjbod.common.kafka_uuid import DirectoryId
from kjbod.common.versions import metadata_version_for_level
from kjbod.errors import UserError
from kjbod.image import EMPTY_IMAGE, Image, replay_all
from kjbod.records import (
    CONFIG_RESOURCE_BROKER,
    CONFIG_RESOURCE_TOPIC,
    BrokerEndpoint,
    BrokerFeature,
    ConfigRecord,
    FeatureLevelRecord,
    KjbodBrokerLogDirsRecord,
    KjbodClockRecord,
    KjbodLogDir,
    KjbodPartitionSizeRecord,
    PartitionRecord,
    Record,
    RegisterBrokerRecord,
    TopicRecord,
)
from kjbod.kafka_formats.kraft_snapshot import SnapshotId, read_kraft_snapshot
from kjbod.tools.importer.from_snapshot import SnapshotImportRequest, plan_snapshot_import
from kjbod.tools.kafka_export import export_kafka_snapshot

T = 1_700_000_000_000
TOPIC = "cJ3rE4bvQc2w5Y0kT1q9Zg"
DIR_A = "ZNJ-ywU0nnQwRv5eRRU9ow"
DIR_B = "XcZZOzUqS4yHOjhMQB6JLQ"


def small_image(level: int = 21, *extra: Record) -> Image:
    register = RegisterBrokerRecord(
        version=3, broker_id=1, incarnation_id=DIR_A, broker_epoch=5, fenced=False, rack="r1", log_dirs=(DIR_A, DIR_B),
        end_points=(BrokerEndpoint(name="PLAINTEXT", host="b1", port=9092, security_protocol=0),),
        features=(BrokerFeature(name="metadata.version", min_supported_version=7, max_supported_version=30),),
    )
    return replay_all(
        EMPTY_IMAGE,
        [
            FeatureLevelRecord(name="metadata.version", feature_level=level),
            register,
            KjbodBrokerLogDirsRecord(broker_id=1, log_dirs=(KjbodLogDir(directory_id=DIR_A, path="/d/a"), KjbodLogDir(directory_id=DIR_B, path="/d/b"))),
            TopicRecord(name="t", topic_id=TOPIC),
            PartitionRecord(version=1, topic_id=TOPIC, partition_id=0, replicas=(1,), isr=(1,), leader=1, leader_epoch=3, partition_epoch=4, directories=(DIR_B,)),
            KjbodPartitionSizeRecord(topic_id=TOPIC, partition_id=0, size_bytes=1000),
            ConfigRecord(resource_type=CONFIG_RESOURCE_TOPIC, resource_name="t", name="retention.ms", value="1000"),
            KjbodClockRecord(time_ms=T - 5),
            *extra,
        ],
    )


def reimported(path: Path) -> Image:
    return replay_all(EMPTY_IMAGE, plan_snapshot_import(SnapshotImportRequest(path)).entries)


def assert_same_cluster(a: Image, b: Image) -> None:
    """Brokers (with their directories), partitions (with theirs), features and configs."""
    assert a.features == b.features
    assert dict(a.cluster.brokers) == dict(b.cluster.brokers)
    assert {t.topic_id: (t.name, dict(t.partitions)) for t in a.topics.by_id.values()} == {
        t.topic_id: (t.name, dict(t.partitions)) for t in b.topics.by_id.values()
    }
    assert a.configs == b.configs


def test_export_writes_a_read_only_kraft_snapshot_named_by_its_id(tmp_path: Path) -> None:
    image = small_image()
    result = export_kafka_snapshot(image, tmp_path, timestamp_ms=T)
    assert result.path == tmp_path / SnapshotId(image.next_offset, 1).file_name
    assert stat.S_IMODE(os.stat(result.path).st_mode) == 0o400
    assert dict(result.records) == {"FeatureLevelRecord": 1, "RegisterBrokerRecord": 1, "TopicRecord": 1, "PartitionRecord": 1, "ConfigRecord": 1}
    assert dict(result.left_out) == {"KjbodBrokerLogDirsRecord": 1, "KjbodPartitionSizeRecord": 1, "KjbodClockRecord": 1}
    snapshot = read_kraft_snapshot(result.path)
    assert snapshot.last_contained_log_timestamp == T - 5  # the state's simulated clock
    assert snapshot.kraft_version is None and snapshot.data_record_count == 5
    assert all(b.base_timestamp == T for b in snapshot.batches)
    assert_same_cluster(reimported(result.path), image)


def test_records_are_written_at_the_versions_the_metadata_version_selects(tmp_path: Path) -> None:
    for level, register, partition in ((7, 1, 0), (8, 2, 0), (17, 3, 1), (23, 3, 2), (30, 4, 2)):
        image = replay_all(
            EMPTY_IMAGE,
            [
                FeatureLevelRecord(name="metadata.version", feature_level=level),
                RegisterBrokerRecord(version=1, broker_id=1, incarnation_id=DIR_A, broker_epoch=1),
                TopicRecord(name="t", topic_id=TOPIC),
                PartitionRecord(topic_id=TOPIC, partition_id=0, replicas=(1,), isr=(1,), leader=1),
            ],
        )
        path = export_kafka_snapshot(image, tmp_path / f"{level}.checkpoint", timestamp_ms=T).path
        versions = {r.decode().name: r.decode().version for r in read_kraft_snapshot(path).data_records()}
        assert (versions["RegisterBrokerRecord"], versions["PartitionRecord"]) == (register, partition), level


def test_kraft_version_goes_into_the_kraft_version_control_record(tmp_path: Path) -> None:
    image = small_image(21, FeatureLevelRecord(name="kraft.version", feature_level=1))
    result = export_kafka_snapshot(image, tmp_path / "s.checkpoint", timestamp_ms=T)
    snapshot = read_kraft_snapshot(result.path)
    assert snapshot.kraft_version == 1 and "kraft.version" not in str([r.decode().data() for r in snapshot.data_records()])


# A live Kafka 4.4.0 broker's three directories, all cordoned (cordoned.log.dirs=d1,d2,d3), and the
# order its controller's snapshot lists them in: the broker's HashSet<Uuid> (buckets 1, 5, 13).
LIVE_CORDONED = ("N0GqkmxJmhCmzO3PpcI0ug", "6B2d-cgrUeUiLbX00Ew0ug", "GD1rDogemYWyJkSUgmB-Bw")


def test_cordoned_directories_are_exported_in_the_order_the_broker_sent_them(tmp_path: Path) -> None:
    """Kafka keeps a registration's cordoned directories as the broker's heartbeat listed them
    (List.copyOf a HashSet<Uuid>), not sorted: a live broker's list comes back out of kjbod's
    export as Kafka's snapshot holds it."""
    register = RegisterBrokerRecord(
        version=4, broker_id=1, incarnation_id=DIR_A, broker_epoch=5, fenced=False, log_dirs=tuple(sorted(LIVE_CORDONED)),
        cordoned_log_dirs=LIVE_CORDONED,
        end_points=(BrokerEndpoint(name="PLAINTEXT", host="b1", port=9092, security_protocol=0),),
    )
    image = replay_all(EMPTY_IMAGE, [FeatureLevelRecord(name="metadata.version", feature_level=30), register])
    path = export_kafka_snapshot(image, tmp_path / "s.checkpoint", timestamp_ms=T).path
    (written,) = [r.decode() for r in read_kraft_snapshot(path).data_records() if r.decode().name == "RegisterBrokerRecord"]
    assert tuple(written.data()["cordonedLogDirs"]) == LIVE_CORDONED
    assert reimported(path).cluster.brokers[1].cordoned_directories == frozenset(LIVE_CORDONED)


def test_an_existing_file_is_never_replaced(tmp_path: Path) -> None:
    target = tmp_path / "s.checkpoint"
    target.write_bytes(b"mine")
    with pytest.raises(UserError, match=f"{target} already exists; export does not replace a file"):
        export_kafka_snapshot(small_image(), target, timestamp_ms=T)
    assert target.read_bytes() == b"mine"
    with pytest.raises(UserError, match="no such directory"):
        export_kafka_snapshot(small_image(), tmp_path / "nope" / "s.checkpoint", timestamp_ms=T)


def test_an_empty_state_has_nothing_to_export(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="holds no metadata.version"):
        export_kafka_snapshot(EMPTY_IMAGE, tmp_path / "s.checkpoint")


# The round trip on a family of states ---------------------------------------------------------------

LEVELS = [7, 8, 11, 17, 21, 22, 23, 25, 30]
RESERVED = [DirectoryId.UNASSIGNED, DirectoryId.LOST]


@st.composite
def cluster_states(draw: st.DrawFn) -> list[Record]:
    """A state any metadata.version kjbod knows can hold: brokers with directories (JBOD from
    3.7-IV2), fenced, shutting down or cordoned (4.3-IV0); partitions with any replicas, ISR,
    leader, epochs, directories, ELR (4.0-IV1), reassignments; topic and broker configs."""
    level = draw(st.sampled_from(LEVELS))
    mv = metadata_version_for_level(level)
    uuids = st.binary(min_size=16, max_size=16).map(lambda b: __import__("base64").urlsafe_b64encode(b)[:22].decode())
    records: list[Record] = [FeatureLevelRecord(name="metadata.version", feature_level=level)]
    if draw(st.booleans()):
        records.append(FeatureLevelRecord(name="group.version", feature_level=1))
    # A partition's ELR is exported only with ELR enabled (test_elr_is_exported_only_while_enabled).
    elr = mv.elr_supported and draw(st.booleans())
    if elr:
        records.append(FeatureLevelRecord(name="eligible.leader.replicas.version", feature_level=1))
    broker_ids = draw(st.lists(st.integers(0, 50), min_size=1, max_size=5, unique=True))
    # Directory ids are unique across the cluster and never reserved (KIP-858).
    pool = draw(st.lists(uuids.filter(lambda u: not DirectoryId.reserved(u)), min_size=3 * len(broker_ids), max_size=3 * len(broker_ids), unique=True))
    dirs: dict[int, list[str]] = {}
    version = 4 if mv.cordoned_log_dirs_supported else mv.register_broker_record_version
    for index, broker in enumerate(broker_ids):
        own = pool[3 * index : 3 * index + draw(st.integers(1, 3))] if mv.directory_assignment_supported else []
        dirs[broker] = own
        online = own[: draw(st.integers(1, len(own)))] if own else []
        records.append(
            RegisterBrokerRecord(
                version=version,
                broker_id=broker,
                incarnation_id=draw(uuids),
                broker_epoch=draw(st.integers(0, 2**40)),
                rack=draw(st.none() | st.sampled_from(["r1", "r2"])),
                fenced=draw(st.booleans()),
                in_controlled_shutdown=draw(st.booleans()),
                end_points=(BrokerEndpoint(name="PLAINTEXT", host=f"b{broker}", port=9092, security_protocol=0),),
                log_dirs=tuple(online),
                # null (not reported yet) or the reported list, possibly empty (KIP-1066 as released).
                cordoned_log_dirs=draw(st.none() | st.lists(st.sampled_from(online), unique=True).map(tuple)) if version >= 4 and online
                else draw(st.none() | st.just(())) if version >= 4 else None,
            )
        )
    topic_ids = draw(st.lists(uuids, max_size=3, unique=True))
    for t, topic_id in enumerate(topic_ids):
        records.append(TopicRecord(name=f"topic-{t}", topic_id=topic_id))
        for p in range(draw(st.integers(1, 4))):
            replicas = tuple(draw(st.lists(st.sampled_from(broker_ids), min_size=1, max_size=4, unique=True)))
            directories = ()
            if mv.directory_assignment_supported:
                directories = tuple(draw(st.sampled_from(dirs[b] + RESERVED)) for b in replicas)
            isr = tuple(b for b in replicas if draw(st.booleans())) or replicas[:1]
            split = draw(st.integers(0, len(replicas)))
            reassigning = draw(st.booleans()) and len(replicas) > 1
            records.append(
                PartitionRecord(
                    version=mv.partition_record_version,
                    topic_id=topic_id,
                    partition_id=p,
                    replicas=replicas,
                    isr=isr,
                    adding_replicas=replicas[:split] if reassigning else (),
                    removing_replicas=replicas[split:] if reassigning else (),
                    leader=draw(st.sampled_from([-1, *isr])),
                    leader_recovery_state=draw(st.sampled_from([0, 1])),
                    leader_epoch=draw(st.integers(0, 2**31 - 1)),
                    partition_epoch=draw(st.integers(0, 2**31 - 1)),
                    directories=directories,
                    eligible_leader_replicas=tuple(draw(st.lists(st.sampled_from(replicas), unique=True))) or None if elr else None,
                    last_known_elr=tuple(draw(st.lists(st.sampled_from(replicas), unique=True))) or None if elr else None,
                )
            )
        if draw(st.booleans()):
            records.append(ConfigRecord(resource_type=CONFIG_RESOURCE_TOPIC, resource_name=f"topic-{t}", name="cleanup.policy", value="compact"))
    if draw(st.booleans()):
        records.append(ConfigRecord(resource_type=CONFIG_RESOURCE_BROKER, resource_name=str(broker_ids[0]), name="leader.replication.throttled.rate", value="100"))
    return records


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(cluster_states())
def test_any_state_round_trips_through_kafkas_format(tmp_path_factory: pytest.TempPathFactory, records: list[Record]) -> None:
    image = replay_all(EMPTY_IMAGE, records)
    path = export_kafka_snapshot(image, tmp_path_factory.mktemp("export") / "s.checkpoint", timestamp_ms=T).path
    assert_same_cluster(reimported(path), image)


@pytest.mark.parametrize("enabled", [True, False])
def test_elr_is_exported_only_while_enabled(tmp_path: Path, enabled: bool) -> None:
    """PartitionRegistration.toRecord (4.4.0 :376-408) writes ELR and LastKnownElr only when
    the image has eligible.leader.replicas.version >= 1 (ImageWriterOptions): a cluster that
    disabled ELR keeps the lists in memory and its snapshot drops them."""
    image = replay_all(EMPTY_IMAGE, [
        FeatureLevelRecord(name="metadata.version", feature_level=30),
        FeatureLevelRecord(name="eligible.leader.replicas.version", feature_level=1 if enabled else 0),
        TopicRecord(name="t", topic_id="cJ3rE4bvQc2w5Y0kT1q9Zg"),
        PartitionRecord(version=2, topic_id="cJ3rE4bvQc2w5Y0kT1q9Zg", partition_id=0, replicas=(1, 2, 3), isr=(), leader=-1,
                        eligible_leader_replicas=(1, 2), last_known_elr=(1,)),
    ])
    assert image.topics.partition("cJ3rE4bvQc2w5Y0kT1q9Zg", 0).elr == (1, 2)
    back = reimported(export_kafka_snapshot(image, tmp_path / "s.checkpoint", timestamp_ms=T).path)
    partition = back.topics.partition("cJ3rE4bvQc2w5Y0kT1q9Zg", 0)
    assert (partition.elr, partition.last_known_elr) == (((1, 2), (1,)) if enabled else ((), ()))


def test_a_synthetic_cluster_round_trips_with_its_paths_and_sizes(tmp_path: Path) -> None:
    """A 20k-partition synthetic cluster (bench/synthetic.py; bench_kafka_snapshot.py --check
    does the same at any size): exported, then imported with its kafka-log-dirs output, every
    directory's path and every partition's size come back; only the failed directories, which
    kafka-log-dirs lists without replicas, keep their id as their name."""
    from tests.synthetic import load_synthetic

    from kjbod.tools.importer.from_files import ImportRequest, plan_import

    synthetic = load_synthetic()
    spec = synthetic.SyntheticSpec(brokers=40, dirs_per_broker=6, partitions=20_000, racks=4, hot_topics=2, full_dirs=3, failed_dirs=2, seed=15)
    files = synthetic.write_files(synthetic.generate(spec), tmp_path / "input")
    image = replay_all(EMPTY_IMAGE, plan_import(ImportRequest(files["brokers"], files["assignment"], files["log_dirs"])).entries)
    path = export_kafka_snapshot(image, tmp_path / "s.checkpoint", timestamp_ms=T).path
    plan = plan_snapshot_import(SnapshotImportRequest(path, log_dirs_files=files["log_dirs"]))
    back = replay_all(EMPTY_IMAGE, plan.entries)
    assert_same_cluster(back, image)
    paths = {(b, d.directory_id): d.path for b, dirs in image.cluster.log_dirs.items() for d in dirs}
    joined = {(b, d.directory_id): d.path for b, dirs in back.cluster.log_dirs.items() for d in dirs}
    unjoined = {key for key, value in joined.items() if value == key[1]}
    assert {key: joined[key] for key in paths if key not in unjoined} == {key: paths[key] for key in paths if key not in unjoined}
    offline = {(b, d) for b, dirs in image.cluster.log_dirs.items() for d in (x.directory_id for x in dirs) if d not in image.cluster.brokers[b].directories}
    assert unjoined == offline and len(offline) == 2
    assert all(t.sizes == back.topics.by_id[t.topic_id].sizes and dict(t.replica_logs) == dict(back.topics.by_id[t.topic_id].replica_logs) for t in image.topics.by_id.values())
