"""import cluster --metadata-snapshot: a controller's own metadata becomes the cluster state."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kjbod.common.problems import ValidationFailed
from kjbod.errors import UserError
from kjbod.image import EMPTY_IMAGE, replay_all
from kjbod.records import PartitionRecord, TopicRecord
from kjbod.records.wire import encode_record
from kjbod.state import StateDirectory
from kjbod.kafka_formats.kraft_snapshot import SnapshotId, write_kraft_snapshot
from kjbod.tools.importer.from_snapshot import SnapshotImportRequest, import_from_snapshot, plan_snapshot_import

from ..kafka_image import kafka_image, oracle_shape, project
from .test_columnar import VALUES, _changed, _places

FIXTURES = Path(__file__).parents[2] / "fixtures" / "kafka"
SMALL = FIXTURES / "small-cluster"
SMALL_SNAPSHOT = SMALL / "via-image" / "00000000000000000013-0000000001.checkpoint"
EXPORT = FIXTURES / "kjbod-export"
EXPORT_SNAPSHOT = EXPORT / "00000000000000000079-0000000001.checkpoint"
# small-cluster's directories: broker -> (first, second) directory id.
DIRS = {1: ("ZHhjBKM7WhTDJjGgrRHWNQ", "3oJ4LLPQFmLNXhGoM4NSnA"), 2: ("sKiLcpl5FpChLAbWYcGrCg", "Emw1V57nt0AN4cwZsdZKPA"), 3: ("NKtRVYvUR6VDbrqg_v4biA", "NcjTNuXUZzbj_Cfa9suTDA")}


def planned_image(request: SnapshotImportRequest):  # type: ignore[no-untyped-def]
    plan = plan_snapshot_import(request)
    return plan, replay_all(EMPTY_IMAGE, plan.entries)


@pytest.mark.parametrize(("snapshot", "read"), [(SMALL_SNAPSHOT, SMALL / "kafka-read.jsonl"), (EXPORT_SNAPSHOT, EXPORT / "kafka-read.jsonl")])
def test_kjbod_reads_a_snapshot_exactly_as_kafkas_metadata_loader(snapshot: Path, read: Path) -> None:
    """Kafka's own MetadataImage of the file (frozen from the kafka-oracle) is kjbod's image."""
    _, image = planned_image(SnapshotImportRequest(snapshot))
    assert oracle_shape(image) == project(kafka_image(read))


def test_the_export_fixture_has_a_failed_directory_and_reassignments_in_flight() -> None:
    plan, image = planned_image(SnapshotImportRequest(EXPORT_SNAPSHOT))
    summary = plan.summary
    assert (summary.brokers, summary.directories, summary.offline_directories, summary.reassigning_partitions) == (4, 12, 1, 2)
    assert [(d.broker, d.offline) for d in summary.unjoined_directories if d.offline] == [(2, True)]
    assert summary.metadata_version == "4.0-IV0" and summary.not_modelled == {}


def log_dirs_output(tmp_path: Path, brokers: list[dict]) -> Path:
    path = tmp_path / "log-dirs.txt"
    path.write_text(
        "Querying brokers for log directories information\nReceived log directory information from brokers 1,2,3\n"
        + json.dumps({"version": 1, "brokers": brokers})
        + "\n"
    )
    return path


def entry(name: str, size: int, lag: int = 0, future: bool = False) -> dict:
    return {"partition": name, "size": size, "offsetLag": lag, "isFuture": future}


def test_paths_join_directory_ids_through_shared_replicas(tmp_path: Path) -> None:
    # small-cluster: orders-0 on 1/ZHhj, 2/sKiL, 3/NKtR; orders-1 on 2/Emw1, 3/NKtR, 1/3oJ4 ...
    output = log_dirs_output(
        tmp_path,
        [
            {"broker": 1, "logDirs": [
                {"logDir": "/d/1a", "error": None, "partitions": [entry("orders-0", 100), entry("clicks-1", 50)]},
                {"logDir": "/d/1b", "error": None, "partitions": [entry("orders-1", 70), entry("orders-2", 30, lag=5), entry("clicks-0", 10)]},
                {"logDir": "/d/1c", "error": None, "partitions": []},
            ]},
            {"broker": 2, "logDirs": [
                {"logDir": "/d/2a", "error": None, "partitions": [entry("orders-0", 100), entry("orders-2", 31)]},
                {"logDir": "/d/2b", "error": None, "partitions": [entry("orders-1", 70), entry("clicks-1", 40, lag=9), entry("orders-0", 60, future=True)]},
            ]},
            {"broker": 3, "logDirs": [
                {"logDir": "/d/3a", "error": "org.apache.kafka.common.errors.KafkaStorageException", "partitions": []},
            ]},
        ],
    )
    plan, image = planned_image(SnapshotImportRequest(SMALL_SNAPSHOT, log_dirs_files=[output]))
    paths = {(b, d.directory_id): d.path for b, dirs in image.cluster.log_dirs.items() for d in dirs}
    assert paths == {
        (1, DIRS[1][0]): "/d/1a", (1, DIRS[1][1]): "/d/1b",
        (2, DIRS[2][0]): "/d/2a", (2, DIRS[2][1]): "/d/2b",
        (3, DIRS[3][0]): DIRS[3][0], (3, DIRS[3][1]): DIRS[3][1],  # no path joins them: the id is the name
    }
    summary = plan.summary
    assert summary.joined_directories == 4 and [(d.broker, d.directory_id) for d in summary.unjoined_directories] == [(3, DIRS[3][0]), (3, DIRS[3][1])]
    assert summary.unjoined_paths == ["broker 1 /d/1c", "broker 3 /d/3a"]
    orders = image.topics.by_name["orders"]
    assert orders.sizes == {0: 100, 1: 70, 2: 31}  # the leader's log; broker 3 leads orders-2 unreported: the largest copy
    assert orders.replica_logs[(2, 1, False)].offset_lag == 5
    future = orders.future_replica(0, 2)
    assert future is not None and (future.directory_id, future.size_bytes) == (DIRS[2][1], 60)
    assert summary.future_replicas == 1 and summary.warnings == []


def test_a_path_holding_replicas_of_two_directories_is_joined_by_the_majority_with_a_warning(tmp_path: Path) -> None:
    output = log_dirs_output(
        tmp_path,
        [{"broker": 1, "logDirs": [{"logDir": "/d/1a", "error": None, "partitions": [entry("orders-0", 1), entry("clicks-1", 1), entry("orders-1", 1)]}]}],
    )
    plan, image = planned_image(SnapshotImportRequest(SMALL_SNAPSHOT, log_dirs_files=[output]))
    assert image.cluster.path_of(1, DIRS[1][0]) == "/d/1a"
    assert any("is directory ZHhjBKM7WhTDJjGgrRHWNQ by 2 replica(s), but 1 other replica(s)" in w for w in plan.summary.warnings)


def test_an_output_that_names_a_directory_id_joins_it_even_empty(tmp_path: Path) -> None:
    """`kjbod log-dirs describe --from-disk` names each directory's id (meta.properties): the way an
    empty directory (a broker just added, a drained disk) gets its path. An id the broker does not
    have joins nothing."""
    output = log_dirs_output(
        tmp_path,
        [{"broker": 3, "logDirs": [
            {"logDir": "/d/3a", "error": None, "partitions": [], "directoryId": DIRS[3][0]},
            {"logDir": "/d/3b", "error": None, "partitions": [], "directoryId": DIRS[3][1]},
            {"logDir": "/d/3c", "error": None, "partitions": [], "directoryId": DIRS[1][0]},
        ]}],
    )
    plan, image = planned_image(SnapshotImportRequest(SMALL_SNAPSHOT, log_dirs_files=[output]))
    assert image.cluster.path_of(3, DIRS[3][0]) == "/d/3a" and image.cluster.path_of(3, DIRS[3][1]) == "/d/3b"
    assert plan.summary.unjoined_paths == ["broker 3 /d/3c"]


def test_problems_in_the_log_dirs_output_write_nothing(tmp_path: Path) -> None:
    output = log_dirs_output(tmp_path, [{"broker": 1, "logDirs": [{"logDir": "/d/1a", "error": None, "partitions": [entry("nosuch-0", 1)]}]}])
    target = StateDirectory(tmp_path / "state")
    with pytest.raises(ValidationFailed) as caught:
        import_from_snapshot(SnapshotImportRequest(SMALL_SNAPSHOT, log_dirs_files=[output]), target)
    assert caught.value.problems == [f"{output} $.brokers[0].logDirs[0].partitions[0].partition: topic nosuch is not in the cluster state"]
    assert not (tmp_path / "state").exists()


def test_the_state_is_created_with_the_snapshot_records(tmp_path: Path) -> None:
    summary = import_from_snapshot(SnapshotImportRequest(SMALL_SNAPSHOT), StateDirectory(tmp_path / "state"))
    assert summary.records == 13 - 1 + 3  # less the ZkMigrationStateRecord, plus a directories record per broker
    assert summary.not_modelled == {"ZkMigrationStateRecord": 1}
    assert Path(summary.snapshot or "").exists() and summary.state == str(tmp_path / "state")


def test_an_unreadable_snapshot_is_one_line(tmp_path: Path) -> None:
    bad = tmp_path / "00000000000000000005-0000000001.checkpoint"
    bad.write_bytes(b"not a snapshot at all, just text")
    with pytest.raises(UserError, match="invalid batch length|does not start with a SnapshotHeaderRecord|incomplete"):
        plan_snapshot_import(SnapshotImportRequest(bad))
    with pytest.raises(UserError, match="Cannot read|cannot read"):
        plan_snapshot_import(SnapshotImportRequest(tmp_path / "missing.checkpoint"))


def test_records_kjbod_cannot_replay_are_one_line(tmp_path: Path) -> None:
    orphan = PartitionRecord(topic_id="cJ3rE4bvQc2w5Y0kT1q9Zg", replicas=(1,), isr=(1,))
    path = write_kraft_snapshot(tmp_path / SnapshotId(1, 1).file_name, [encode_record(orphan)], epoch=1, timestamp_ms=1)
    with pytest.raises(UserError, match="kjbod cannot replay the controller's records: Tried to create partition"):
        plan_snapshot_import(SnapshotImportRequest(path))


def test_a_snapshot_without_metadata_version_is_refused(tmp_path: Path) -> None:
    path = write_kraft_snapshot(tmp_path / SnapshotId(1, 1).file_name, [encode_record(TopicRecord(name="t", topic_id="cJ3rE4bvQc2w5Y0kT1q9Zg"))], epoch=1, timestamp_ms=1)
    with pytest.raises(UserError, match="holds no metadata.version record"):
        plan_snapshot_import(SnapshotImportRequest(path))


def test_a_metadata_log_that_is_not_a_directory_is_refused(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="--metadata-log .* is not a directory"):
        plan_snapshot_import(SnapshotImportRequest(SMALL_SNAPSHOT, metadata_log=tmp_path / "nope"))


def test_the_cluster_id_is_recorded_first(tmp_path: Path) -> None:
    plan = plan_snapshot_import(SnapshotImportRequest(SMALL_SNAPSHOT, cluster_id="ALH8esX1S5Gbv6IDnqJsvQ"))
    first = plan.entries[0]
    assert type(first).__name__ == "KjbodClusterRecord" and first.cluster_id == "ALH8esX1S5Gbv6IDnqJsvQ"  # type: ignore[union-attr]
    assert plan.summary.to_json()["clusterId"] == "ALH8esX1S5Gbv6IDnqJsvQ"


def _two_pass(monkeypatch: pytest.MonkeyPatch) -> None:
    """The reading before the single pass: join_paths, then the output read against the joined paths."""
    from kjbod.tools.importer import from_snapshot

    monkeypatch.setattr(from_snapshot, "_read_columns", lambda files, image, entries: None)
    monkeypatch.setattr(from_snapshot, "_read_once", lambda files, image: None)


def _objects(monkeypatch: pytest.MonkeyPatch) -> None:
    """The single pass with an Observation per replica (_read_once), before the columns."""
    from kjbod.tools.importer import from_snapshot

    monkeypatch.setattr(from_snapshot, "_read_columns", lambda files, image, entries: None)


def _join_test_output(tmp_path: Path) -> Path:
    return log_dirs_output(tmp_path, JOIN_TEST_BROKERS)


JOIN_TEST_BROKERS = [
            {"broker": 1, "logDirs": [
                {"logDir": "/d/1a", "error": None, "partitions": [entry("orders-0", 100), entry("clicks-1", 50), entry("orders-1", 9)]},
                {"logDir": "/d/1b", "error": None, "partitions": [entry("orders-2", 30, lag=5), entry("clicks-0", 10)], "totalBytes": 5000, "usableBytes": 100},
                {"logDir": "/d/1c", "error": None, "partitions": []},
            ]},
            {"broker": 2, "logDirs": [
                {"logDir": "/d/2a", "error": None, "partitions": [entry("orders-0", 100), entry("orders-2", 31)]},
                {"logDir": "/d/2b", "error": None, "partitions": [entry("orders-1", 70), entry("clicks-1", 40, lag=9), entry("orders-0", 60, future=True)]},
            ]},
            {"broker": 3, "logDirs": [
                {"logDir": "/d/3a", "error": "org.apache.kafka.common.errors.KafkaStorageException", "partitions": []},
            ]},
]


def test_the_log_dirs_output_is_read_and_walked_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Joining paths to directory ids and reading sizes take one reading of the output (at a
    million partitions, three million entries), and give what the two readings gave."""
    output = _join_test_output(tmp_path)
    reads: list[Path] = []
    read_bytes = Path.read_bytes

    def counted(path: Path) -> bytes:
        reads.append(path)
        return read_bytes(path)

    monkeypatch.setattr(Path, "read_bytes", counted)
    plan = plan_snapshot_import(SnapshotImportRequest(SMALL_SNAPSHOT, log_dirs_files=[output]))
    assert reads.count(output) == 1
    assert [w.split(";")[0].split(" (")[0] for w in plan.summary.warnings] == [
        "Warning: log directory /d/1a of broker 1 is directory ZHhjBKM7WhTDJjGgrRHWNQ by 2 replica(s), but 1 other replica(s) listed there are elsewhere in the snapshot",
        "Warning: orders-1 on broker 1 is in /d/1a",
    ]
    _two_pass(monkeypatch)
    before = plan_snapshot_import(SnapshotImportRequest(SMALL_SNAPSHOT, log_dirs_files=[output]))
    assert reads.count(output) == 3
    assert (plan.entries, plan.summary) == (before.entries, before.summary)


def test_a_path_the_join_leaves_without_an_id_is_passed_over_as_before(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # /d/1z lists a replica /d/1a already holds: the two are the same directory by their
    # replicas, and /d/1a has more; /d/1z keeps no directory id and what it lists is passed over.
    output = log_dirs_output(
        tmp_path,
        [{"broker": 1, "logDirs": [
            {"logDir": "/d/1a", "error": None, "partitions": [entry("orders-0", 100), entry("clicks-1", 50)]},
            {"logDir": "/d/1z", "error": None, "partitions": [entry("orders-0", 7)]},
        ]}],
    )
    plan, image = planned_image(SnapshotImportRequest(SMALL_SNAPSHOT, log_dirs_files=[output]))
    assert plan.summary.unjoined_paths == ["broker 1 /d/1z"]
    assert image.topics.by_name["orders"].sizes == {0: 100}
    _two_pass(monkeypatch)
    before = plan_snapshot_import(SnapshotImportRequest(SMALL_SNAPSHOT, log_dirs_files=[output]))
    assert (plan.entries, plan.summary) == (before.entries, before.summary)


def test_what_a_newer_kafka_writes_is_counted_and_the_import_goes_on(tmp_path: Path) -> None:
    """Issue 28: a record type kjbod has no schema for, a newer version of a record it models, a
    feature it does not know and a metadata.version past its table: only damaged input stops an
    import. The first two are counted and left out; the feature and the version are kept."""
    from kjbod.kafka_formats.kraft_snapshot import read_kraft_snapshot
    from kjbod.records import FeatureLevelRecord
    from kjbod.records.wire import uvarint

    values = [bytes(r.buffer[r.start : r.end]) for r in read_kraft_snapshot(SMALL_SNAPSHOT).data_records()]
    newer = [
        encode_record(FeatureLevelRecord(name="metadata.version", feature_level=40)),
        encode_record(FeatureLevelRecord(name="some.future.version", feature_level=3)),
        uvarint(1) + uvarint(99) + uvarint(0) + b"\x00\x00",  # an api key no schema kjbod has knows
        uvarint(1) + uvarint(2) + uvarint(7) + b"\x00" * 8,  # TopicRecord v7: kjbod knows v0
    ]
    snapshot = write_kraft_snapshot(tmp_path / "00000000000000000017-0000000001.checkpoint", [*values, *newer], epoch=1, timestamp_ms=0)
    plan, image = planned_image(SnapshotImportRequest(snapshot))
    assert plan.summary.not_modelled == {"TopicRecord v7": 1, "UnknownRecord(apiKey=99)": 1, "ZkMigrationStateRecord": 1}
    assert plan.summary.metadata_version == "UNKNOWN 40"
    assert image.features.finalized["some.future.version"] == 3
    assert image.topics.by_name.keys() >= {"orders", "clicks"}


# The output read as columns (from_snapshot._read_columns) ------------------------------------------


def _outcome(request: SnapshotImportRequest) -> object:
    try:
        plan = plan_snapshot_import(request)
    except ValidationFailed as exc:
        return exc.problems
    return plan.entries, plan.summary, replay_all(EMPTY_IMAGE, plan.entries) == plan.image


def _kafka_layout(tmp_path: Path, brokers: object) -> Path:
    """kafka-log-dirs' own layout (brokers, then version; no spaces): the one read in chunks."""
    path = tmp_path / "log-dirs.txt"
    path.write_text(
        "Querying brokers for log directories information\nReceived log directory information from brokers 1,2,3\n"
        + json.dumps({"brokers": brokers, "version": 1}, separators=(",", ":")) + "\n"
    )
    return path


def test_the_usual_output_is_read_as_columns_with_the_same_records(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A replica elsewhere than the snapshot says, lagging and future replicas, a failed directory:
    the columns give the records, summary and warnings of an Observation per replica."""
    from kjbod.tools.importer import from_snapshot

    request = SnapshotImportRequest(SMALL_SNAPSHOT, log_dirs_files=[_kafka_layout(tmp_path, JOIN_TEST_BROKERS)])
    taken = []
    read_columns = from_snapshot._read_columns
    monkeypatch.setattr(from_snapshot, "_read_columns", lambda *args: taken.append(read_columns(*args)) or taken[-1])
    columns = _outcome(request)
    assert taken[0] is not None and columns[1].warnings  # type: ignore[index]
    # The image made from the columns is the one the records replay into.
    plan = plan_snapshot_import(request)
    replayed = replay_all(EMPTY_IMAGE, plan.entries)
    assert plan.image is not None and plan.image.topics.root is not None
    assert plan.image.topics.table.by_topic_id().same_as(replayed.topics.table.by_topic_id())
    assert (plan.image.offset, plan.image.cluster, plan.image.quorum) == (replayed.offset, replayed.cluster, replayed.quorum)
    assert columns[2] is True  # type: ignore[index]
    _objects(monkeypatch)
    assert columns == _outcome(request)


def test_a_path_whose_replicas_split_evenly_is_left_to_the_observations(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Which directory a tie goes to depends on the order the replicas are met in: _read_once decides."""
    from kjbod.tools.importer import from_snapshot

    brokers = [{"broker": 1, "logDirs": [{"logDir": "/d/1a", "error": None, "partitions": [entry("orders-0", 1), entry("orders-1", 1)]}]}]
    request = SnapshotImportRequest(SMALL_SNAPSHOT, log_dirs_files=[_kafka_layout(tmp_path, brokers)])
    image = replay_all(EMPTY_IMAGE, from_snapshot._read(request).entries)
    assert from_snapshot._read_columns(request.log_dirs_files, image, from_snapshot._read(request).entries) is None
    columns = _outcome(request)
    _objects(monkeypatch)
    assert columns == _outcome(request)


OUTPUT_VALUES = st.one_of(
    VALUES, st.sampled_from(["/d/1a", "/d/2b", "/d/9", "clicks-1", "orders-2", "orders-9", DIRS[1][0], DIRS[2][1], DIRS[3][0]]), st.integers(1, 3),
)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(choice=st.integers(0, 10**6), change=st.sampled_from(["set", "set", "remove", "duplicate", "extra"]), value=OUTPUT_VALUES)
def test_any_change_to_the_output_gives_the_same_records_or_the_same_problems(
    tmp_path_factory: pytest.TempPathFactory, choice: int, change: str, value: object
) -> None:
    from kjbod.tools.importer import from_snapshot

    places = _places(JOIN_TEST_BROKERS)
    brokers = _changed(JOIN_TEST_BROKERS, places[choice % len(places)], change, value)
    request = SnapshotImportRequest(SMALL_SNAPSHOT, log_dirs_files=[_kafka_layout(tmp_path_factory.mktemp("changed"), brokers)])
    columns = _outcome(request)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(from_snapshot, "_read_columns", lambda files, image, entries: None)
        assert columns == _outcome(request)


def test_the_summary_names_the_unjoined_directories_of_a_few_brokers_and_counts_the_rest() -> None:
    """A cluster's new brokers (nothing on them yet) join no path: 100 of them would make one
    line of 1,200 ids. The first few brokers are named; -o json lists every id."""
    from kjbod.tools.importer.from_snapshot import UnjoinedDirectory

    plan, _ = planned_image(SnapshotImportRequest(SMALL_SNAPSHOT))
    few = plan.summary
    assert "broker 3: NKtRVYvUR6VDbrqg_v4biA, NcjTNuXUZzbj_Cfa9suTDA." in few.lines()[-2]
    many = [UnjoinedDirectory(broker, f"id-{broker}-{n}", False) for broker in range(10, 20) for n in range(2 if broker < 19 else 1)]
    few.unjoined_directories = many
    (line,) = [line for line in few.lines() if "keep their id" in line]
    assert line == (
        "19 log directories keep their id as their path: broker 10: id-10-0, id-10-1; broker 11: id-11-0, id-11-1; "
        "broker 12: id-12-0, id-12-1; and 13 more on 7 other brokers (1 to 2 each; -o json lists every id)."
    )
    assert len(few.to_json()["unjoinedDirectories"]) == 19


def _usual_output(tmp_path: Path, snapshot: Path) -> Path:
    """kafka-log-dirs output of a snapshot's cluster as it is: every replica in the directory the
    snapshot places it in, sizes and lags made up."""
    image = replay_all(EMPTY_IMAGE, read_snapshot_entries(snapshot))
    listed: dict[tuple[int, str], list[dict]] = {}
    for topic in image.topics.by_id.values():
        for partition_id, registration in sorted(topic.partitions.items()):
            for position, (broker, directory) in enumerate(zip(registration.replicas, registration.directories)):
                if broker in image.cluster.brokers and registration.leader != -1:
                    listed.setdefault((broker, directory), []).append(entry(f"{topic.name}-{partition_id}", 100 + position * (partition_id % 2), lag=position % 3))
    brokers = []
    for broker, registration in sorted(image.cluster.brokers.items()):
        dirs = [d for d in registration.directories if (broker, d) in listed]
        brokers.append({"broker": broker, "logDirs": [
            {"logDir": f"/d/{broker}/{i}", "error": None, "partitions": listed[(broker, d)]} for i, d in enumerate(dirs)
        ]})
    return _kafka_layout(tmp_path, brokers)


def read_snapshot_entries(snapshot: Path) -> list:
    from kjbod.kafka_formats.controller_metadata import read_controller_metadata

    return read_controller_metadata(snapshot).entries


@pytest.mark.parametrize("snapshot", [SMALL_SNAPSHOT, EXPORT_SNAPSHOT])
def test_a_snapshot_and_its_clusters_output_are_read_as_columns(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, snapshot: Path) -> None:
    """The export fixture has reassignments in flight and a failed directory: the columns carry
    them into the image as replaying the records does."""
    from kjbod.tools.importer import from_snapshot

    request = SnapshotImportRequest(snapshot, log_dirs_files=[_usual_output(tmp_path, snapshot)])
    plan = plan_snapshot_import(request)
    assert plan.image is not None and plan.image.topics.root is not None  # the columns took it
    replayed = replay_all(EMPTY_IMAGE, plan.entries)
    assert plan.image.topics.table.by_topic_id().same_as(replayed.topics.table.by_topic_id()) and plan.image == replayed
    assert plan.summary.sized_partitions and plan.summary.replica_logs
    monkeypatch.setattr(from_snapshot, "_read_columns", lambda files, image, entries: None)
    before = plan_snapshot_import(request)
    assert (plan.entries, plan.summary) == (before.entries, before.summary)
    # The snapshot the state is written with is the one the per-entry path writes, byte for
    # byte: the same arrays, directory codes included (they follow the order the image's topics
    # iterate in, which the deltas of the per-entry path set).
    assert before.image is not None
    ours, theirs = plan.image.topics.table.by_topic_id(), before.image.topics.table.by_topic_id()
    assert ours.strings() == theirs.strings()
    assert ours.arrays().keys() == theirs.arrays().keys()
    assert all(np.array_equal(array, theirs.arrays()[name]) for name, array in ours.arrays().items())
