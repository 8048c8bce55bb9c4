"""The name index a state directory keeps for shell completion (state/names.py, log/name_index.py)."""

from __future__ import annotations

from pathlib import Path

from kjbod.log.name_index import NAME_INDEX, NameIndex, read_name_index
from kjbod.records import (
    FeatureLevelRecord,
    PartitionRecord,
    RegisterBrokerRecord,
    RemoveTopicRecord,
    TopicRecord,
    UnregisterBrokerRecord,
)
from kjbod.state.cluster_state import ClusterState

INC = "O7xvrxGUTwyKxRtVqYj9qA"
T1, T2 = "cJ3rE4bvQc2w5Y0kT1q9Zg", "AAAAAAAAAAAAAAAAAAAAZA"
D1 = "ZNJ-ywU0nnQwRv5eRRU9ow"


def register(broker_id: int) -> RegisterBrokerRecord:
    return RegisterBrokerRecord(version=3, broker_id=broker_id, incarnation_id=INC, broker_epoch=1, fenced=False, log_dirs=(D1,) if broker_id == 1 else ())


def test_each_commit_that_renames_rewrites_the_index(tmp_path: Path) -> None:
    path = tmp_path / "s"
    with ClusterState.open(path, write=True, create=True) as state:
        assert read_name_index(path) == NameIndex((), (), None)
        state.commit([FeatureLevelRecord(name="metadata.version", feature_level=30), register(2), register(1)])
        state.commit([TopicRecord(name="orders", topic_id=T1), TopicRecord(name="audit", topic_id=T2)])
        assert read_name_index(path) == NameIndex((1, 2), ("audit", "orders"), 30)
        state.commit([RemoveTopicRecord(topic_id=T2), UnregisterBrokerRecord(broker_id=2, broker_epoch=1)])
        assert read_name_index(path) == NameIndex((1,), ("orders",), 30)
        # A commit that cannot change a name leaves the file alone.
        (path / NAME_INDEX).write_text("left alone")
        state.commit([PartitionRecord(version=1, topic_id=T1, partition_id=0, replicas=(1,), isr=(1,), leader=1, directories=(D1,))])
        assert (path / NAME_INDEX).read_text() == "left alone"


def test_a_missing_or_stale_index_is_written_when_the_state_is_next_opened_for_writing(tmp_path: Path) -> None:
    path = tmp_path / "s"
    with ClusterState.open(path, write=True, create=True) as state:
        state.commit([FeatureLevelRecord(name="metadata.version", feature_level=29), register(1)])
    (path / NAME_INDEX).unlink()
    with ClusterState.open(path):  # a reader never writes
        pass
    assert read_name_index(path) is None
    ClusterState.open(path, write=True).close()
    assert read_name_index(path) == NameIndex((1,), (), 29)
    (path / NAME_INDEX).write_text('{"brokers": [7], "topics": [], "metadataVersion": 29}')  # as after a crash
    ClusterState.open(path, write=True).close()
    assert read_name_index(path) == NameIndex((1,), (), 29)


def test_an_unreadable_index_reads_as_none(tmp_path: Path) -> None:
    for text in ("", "not json", '{"brokers": ["1"], "topics": [], "metadataVersion": null}', '{"brokers": []}', "[]"):
        (tmp_path / NAME_INDEX).write_text(text)
        assert read_name_index(tmp_path) is None, text
    assert read_name_index(tmp_path / "missing") is None
