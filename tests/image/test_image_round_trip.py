"""An image written as records replays to the same image, however the records are split
(Kafka's MetadataImageTest), and a run replays exactly like its records one by one."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from kjbod.image import EMPTY_IMAGE, Delta, Image, replay_all
from kjbod.records import (
    ConfigRecord,
    FeatureLevelRecord,
    KjbodBrokerLogDirsRecord,
    KjbodClockRecord,
    KjbodClusterRecord,
    KjbodLogDir,
    KjbodPartitionSizeRecord,
    KjbodReplicaLogRecord,
    PartitionChangeRecord,
    PartitionRecord,
    RegisterBrokerRecord,
    TopicRecord,
)
from kjbod.records.codec import RecordRun

T1, T2 = "cJ3rE4bvQc2w5Y0kT1q9Zg", "AAAAAAAAAAAAAAAAAAAAZA"
D1, D2 = "ZNJ-ywU0nnQwRv5eRRU9ow", "XcZZOzUqS4yHOjhMQB6JLQ"
INC = "O7xvrxGUTwyKxRtVqYj9qA"


def sample_image() -> Image:
    records = [
        FeatureLevelRecord(name="metadata.version", feature_level=30),
        FeatureLevelRecord(name="group.version", feature_level=1),
        KjbodClusterRecord(cluster_id="MkU3OEVBNTcwNTJENDM2Qk", controller_id=3000),
        RegisterBrokerRecord(version=4, broker_id=1, incarnation_id=INC, broker_epoch=1, log_dirs=(D1, D2), cordoned_log_dirs=(D2,), rack="a"),
        KjbodBrokerLogDirsRecord(broker_id=1, log_dirs=(KjbodLogDir(directory_id=D1, path="/d1"), KjbodLogDir(directory_id=D2, path="/d2", capacity_bytes=10))),
        RegisterBrokerRecord(version=3, broker_id=2, incarnation_id=INC, broker_epoch=4, fenced=False),
        TopicRecord(name="orders", topic_id=T1),
        *[PartitionRecord(version=1, topic_id=T1, partition_id=p, replicas=(1, 2), isr=(1, 2), leader=1, leader_epoch=0, partition_epoch=0, directories=(D1, "AAAAAAAAAAAAAAAAAAAAAQ")) for p in range(12)],
        TopicRecord(name="audit", topic_id=T2),
        PartitionRecord(version=1, topic_id=T2, partition_id=0, replicas=(2,), isr=(2,), leader=2, leader_epoch=0, partition_epoch=0),
        PartitionChangeRecord(version=1, topic_id=T1, partition_id=3, leader=2, isr=(2,), directories=(D2, D1)),
        KjbodPartitionSizeRecord(topic_id=T1, partition_id=3, size_bytes=5000),
        KjbodReplicaLogRecord(topic_id=T1, partition_id=3, broker_id=1, size_bytes=1200, offset_lag=40),
        KjbodReplicaLogRecord(topic_id=T1, partition_id=3, broker_id=2, future=True, directory_id=D2, size_bytes=300),
        ConfigRecord(resource_type=2, resource_name="orders", name="retention.ms", value="10"),
        KjbodClockRecord(time_ms=60_000),
    ]
    return replay_all(EMPTY_IMAGE, records)


def written(image: Image) -> list:
    return list(image.write())


def comparable(image: Image) -> tuple:
    # Registration offsets depend on where records sat in the log, not on the state.
    return (image.features, image.topics, image.configs, image.time_ms, image.identity, image.cluster.brokers, image.cluster.log_dirs)


def test_write_then_replay_gives_the_same_image() -> None:
    image = sample_image()
    assert comparable(replay_all(EMPTY_IMAGE, written(image))) == comparable(image)


def test_every_split_of_the_written_records_gives_the_same_image() -> None:
    image = sample_image()
    entries = written(image)
    for split in range(len(entries) + 1):
        first = replay_all(EMPTY_IMAGE, entries[:split])
        assert comparable(replay_all(first, entries[split:])) == comparable(image), split


def test_partitions_are_written_as_runs() -> None:
    kinds = [type(e).__name__ if not isinstance(e, RecordRun) else f"run:{e.record_type.__name__}" for e in written(sample_image())]
    assert "run:PartitionRecord" in kinds and "PartitionRecord" not in kinds


uuid_texts = st.sampled_from([D1, D2, "AAAAAAAAAAAAAAAAAAAAAQ", "AAAAAAAAAAAAAAAAAAAAAA"])


@st.composite
def partition_lists(draw: st.DrawFn) -> list[PartitionRecord]:
    version = draw(st.sampled_from([0, 1, 2]))
    records = []
    for partition_id in draw(st.lists(st.integers(0, 50), unique=True, max_size=20)):
        replicas = tuple(draw(st.lists(st.integers(0, 9), min_size=1, max_size=4, unique=True)))
        directories = tuple(draw(uuid_texts) for _ in replicas) if version and draw(st.booleans()) else ()
        records.append(PartitionRecord(
            version=version, topic_id=T1, partition_id=partition_id, replicas=replicas,
            isr=tuple(draw(st.permutations(replicas))), leader=draw(st.sampled_from(replicas)),
            leader_epoch=draw(st.integers(0, 5)), partition_epoch=draw(st.integers(0, 5)),
            removing_replicas=tuple(draw(st.lists(st.integers(0, 9), max_size=2))),
            leader_recovery_state=draw(st.sampled_from([0, 1])),
            directories=directories,
            eligible_leader_replicas=draw(st.none() | st.just((1,))) if version == 2 else None,
        ))
    return records


@settings(max_examples=200)
@given(partition_lists())
def test_a_run_replays_exactly_like_its_records(records: list[PartitionRecord]) -> None:
    base = replay_all(EMPTY_IMAGE, [TopicRecord(name="t", topic_id=T1)])
    one_by_one = replay_all(base, records)
    if not records:
        return
    delta = Delta(base)
    delta.replay_run(RecordRun.of(records), base.next_offset)
    in_bulk = delta.apply()
    assert in_bulk.topics == one_by_one.topics
    assert in_bulk.offset == one_by_one.offset
