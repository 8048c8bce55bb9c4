"""`kjbod import cluster`: the records built from a real cluster's exports, the checks (every
problem with its file and JSON path, in one pass), the new state, and the round trip back to
kafka-log-dirs output and the current assignment."""

from __future__ import annotations

import json
import re
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kjbod.common.kafka_uuid import DirectoryId, Uuid, canonical
from kjbod.common.problems import ValidationFailed
from kjbod.common.kafka_release import NEWEST
from kjbod.errors import UserError
from kjbod.image import EMPTY_IMAGE, Image, replay_all
from kjbod.state.snapshots.records import list_snapshots
from kjbod.records import KjbodClockRecord, KjbodLogDir
from kjbod.state import StateDirectory
from kjbod.state.cluster_state import ClusterState, read_image
from kjbod.tools.importer.from_files import (
    ImportRequest,
    ImportSummary,
    derived_uuid,
    directory_id_for,
    import_cluster,
    plan_import,
    topic_id_for,
)
from kjbod.tools.log_dirs.report import KAFKA_STORAGE_EXCEPTION, describe_from_image
from tests.synthetic import load_synthetic, sorted_log_dirs

ERROR = KAFKA_STORAGE_EXCEPTION


def write(path: Path, document: Any, header: bool = False) -> Path:
    text = json.dumps(document, separators=(",", ":"))
    if header:
        ids = ",".join(str(b["broker"]) for b in document["brokers"])
        text = f"Querying brokers for log directories information\nReceived log directory information from brokers {ids}\n{text}\n"
    path.write_text(text)
    return path


BROKERS = {
    "brokers": [
        {"id": 1, "rack": "r1", "log_dirs": [{"path": "/data/b1/d1", "capacity_bytes": 1000}, {"path": "/data/b1/d2", "capacity_bytes": 2000}]},
        {"id": 2, "rack": "r2", "log_dirs": [{"path": "/data/b2/d1", "capacity_bytes": None}, {"path": "/data/b2/d2"}]},
        {"id": 3, "rack": None, "log_dirs": ["/data/b3"]},
    ]
}
ASSIGNMENT = {
    "version": 1,
    "partitions": [
        {"topic": "orders", "partition": 0, "replicas": [1, 2, 3], "log_dirs": ["/data/b1/d1", "/data/b2/d2", "/data/b3"]},
        {"topic": "orders", "partition": 1, "replicas": [2, 3, 1], "log_dirs": ["any", "any", "any"]},
        {"topic": "orders", "partition": 2, "replicas": [3, 1], "leader": 1},
        {"topic": "audit", "partition": 0, "replicas": [2]},
    ],
}
LOG_DIRS = {
    "brokers": [
        {"broker": 1, "logDirs": [
            {"partitions": [{"partition": "orders-0", "size": 500, "offsetLag": 0, "isFuture": False},
                            {"partition": "orders-1", "size": 250, "offsetLag": 7, "isFuture": False}], "error": None, "logDir": "/data/b1/d1"},
            {"partitions": [{"partition": "orders-0", "size": 20, "offsetLag": 480, "isFuture": True},
                            {"partition": "orders-2", "size": 90, "offsetLag": 0, "isFuture": False}], "error": None, "logDir": "/data/b1/d2"},
        ]},
        {"broker": 2, "logDirs": [
            {"partitions": [], "error": ERROR, "logDir": "/data/b2/d1"},
            {"partitions": [{"partition": "orders-0", "size": 500, "offsetLag": 0, "isFuture": False},
                            {"partition": "orders-1", "size": 300, "offsetLag": 0, "isFuture": False}], "error": None, "logDir": "/data/b2/d2"},
        ]},
    ],
    "version": 1,
}


@pytest.fixture
def files(tmp_path: Path) -> ImportRequest:
    return ImportRequest(
        write(tmp_path / "brokers.json", BROKERS),
        write(tmp_path / "assignment.json", ASSIGNMENT),
        [write(tmp_path / "log-dirs.txt", LOG_DIRS, header=True)],
    )


def imported(request: ImportRequest) -> Image:
    return replay_all(EMPTY_IMAGE, plan_import(request).entries)


# Ids ----------------------------------------------------------------------------------------------


@settings(max_examples=200)
@given(kind=st.sampled_from(["directory", "topic"]), broker=st.integers(0, 2**31 - 1), path=st.text(max_size=60))
def test_derived_ids_are_valid_stable_non_reserved_uuids(kind: str, broker: int, path: str) -> None:
    text = derived_uuid(kind, broker, path)
    assert canonical(text) == text
    assert not DirectoryId.reserved(text) and not text.startswith("-")
    assert derived_uuid(kind, broker, path) == text
    assert Uuid.from_string(text).msb >> 12 & 0xF == 4  # shaped like Uuid.randomUuid()


def test_ids_differ_by_broker_path_and_topic() -> None:
    ids = {directory_id_for(1, "/d1"), directory_id_for(2, "/d1"), directory_id_for(1, "/d2"), topic_id_for("orders"), topic_id_for("orders2")}
    assert len(ids) == 5


# What the import builds -------------------------------------------------------------------------


def test_brokers_are_registered_unfenced_with_their_directories(files: ImportRequest) -> None:
    image = imported(files)
    assert image.features.metadata_version is not None and image.features.metadata_version.name == "4.4-IV2"
    assert dict(image.features.finalized) == {"eligible.leader.replicas.version": 1, "group.version": 1, "share.version": 2,
                                              "streams.version": 1, "transaction.version": 2}
    b1, b2, b3 = (image.cluster.brokers[i] for i in (1, 2, 3))
    assert [(b.rack, b.fenced, b.in_controlled_shutdown) for b in (b1, b2, b3)] == [("r1", False, False), ("r2", False, False), (None, False, False)]
    # The epoch is the offset of the registration: six bootstrap feature levels come first.
    assert [b.epoch for b in (b1, b2, b3)] == [6, 8, 10]
    assert dict(b1.supported_features) == NEWEST.supported_ranges()
    d = {(b, p): directory_id_for(b, p) for b, p in [(1, "/data/b1/d1"), (1, "/data/b1/d2"), (2, "/data/b2/d1"), (2, "/data/b2/d2"), (3, "/data/b3")]}
    assert image.cluster.log_dirs[1] == (
        KjbodLogDir(directory_id=d[(1, "/data/b1/d1")], path="/data/b1/d1", capacity_bytes=1000),
        KjbodLogDir(directory_id=d[(1, "/data/b1/d2")], path="/data/b1/d2", capacity_bytes=2000),
    )
    assert image.cluster.log_dirs[3] == (KjbodLogDir(directory_id=d[(3, "/data/b3")], path="/data/b3"),)
    # /data/b2/d1 is offline in the log-dirs output: configured, but not an online directory.
    assert set(b2.directories) == {d[(2, "/data/b2/d2")]}
    assert len(image.cluster.log_dirs[2]) == 2


def test_partitions_replicas_leaders_and_directories(files: ImportRequest) -> None:
    image = imported(files)
    orders = image.topics.by_name["orders"]
    assert orders.topic_id == topic_id_for("orders")
    p0, p1, p2 = (orders.partitions[i] for i in range(3))
    assert (p0.replicas, p0.isr, p0.leader, p0.leader_epoch, p0.partition_epoch) == ((1, 2, 3), (1, 2, 3), 1, 0, 0)
    assert p0.directories == (directory_id_for(1, "/data/b1/d1"), directory_id_for(2, "/data/b2/d2"), directory_id_for(3, "/data/b3"))
    # "any": where the log-dirs output shows it; else the broker's only directory.
    assert p1.directories == (directory_id_for(2, "/data/b2/d2"), directory_id_for(3, "/data/b3"), directory_id_for(1, "/data/b1/d1"))
    # No log_dirs, the file's leader, and broker 1's replica not in its log-dirs output... it is (d2).
    assert (p2.leader, p2.directories) == (1, (directory_id_for(3, "/data/b3"), directory_id_for(1, "/data/b1/d2")))
    audit = image.topics.by_name["audit"].partitions[0]
    # Broker 2 has two directories and the output does not show audit-0: not assigned yet.
    assert audit.directories == (DirectoryId.UNASSIGNED,)


def test_sizes_lags_and_future_replicas(files: ImportRequest) -> None:
    orders = imported(files).topics.by_name["orders"]
    # The partition's size is its leader's log; a follower that differs gets its own entry.
    assert [orders.size(p) for p in range(3)] == [500, 300, 90]
    assert (orders.replica_size(1, 1), orders.replica_logs[(1, 1, False)].offset_lag) == (250, 7)
    assert orders.replica_size(1, 3) == 300  # not reported: a complete copy
    future = orders.future_replica(0, 1)
    assert future is not None and (future.directory_id, future.size_bytes, future.offset_lag) == (directory_id_for(1, "/data/b1/d2"), 20, 480)
    assert set(orders.replica_logs) == {(1, 1, False), (0, 1, True)}


def test_replicas_on_failed_directories_leave_the_isr_and_leadership(tmp_path: Path) -> None:
    brokers = {"brokers": [{"id": b, "log_dirs": ["/a", "/b"]} for b in (1, 2)]}
    assignment = {"partitions": [
        {"topic": "t", "partition": 0, "replicas": [1, 2], "log_dirs": ["/a", "/a"]},
        {"topic": "t", "partition": 1, "replicas": [1], "log_dirs": ["/a"]},
        {"topic": "t", "partition": 2, "replicas": [2, 1], "log_dirs": ["/b", "/b"]},
    ]}
    log_dirs = {"brokers": [{"broker": 1, "logDirs": [{"partitions": [], "error": ERROR, "logDir": "/a"}, {"partitions": [], "error": None, "logDir": "/b"}]}]}
    image = imported(ImportRequest(write(tmp_path / "b.json", brokers), write(tmp_path / "a.json", assignment), [write(tmp_path / "l.json", log_dirs)]))
    t = image.topics.by_name["t"].partitions
    assert [(p.isr, p.leader) for p in (t[0], t[1], t[2])] == [((2,), 2), ((1,), -1), ((2, 1), 2)]


def test_an_older_metadata_version_without_jbod(tmp_path: Path) -> None:
    brokers = write(tmp_path / "b.json", {"brokers": [{"id": 1, "log_dirs": ["/kafka"]}, {"id": 2, "log_dirs": ["/kafka"]}]})
    assignment = write(tmp_path / "a.json", {"partitions": [{"topic": "t", "partition": 0, "replicas": [2, 1]}]})
    log_dirs = write(tmp_path / "l.json", {"brokers": [{"broker": 2, "logDirs": [{"partitions": [{"partition": "t-0", "size": 9, "offsetLag": 0, "isFuture": False}], "error": None, "logDir": "/kafka"}]}]})
    image = imported(ImportRequest(brokers, assignment, [log_dirs], "3.6"))
    assert image.features.metadata_version is not None and image.features.metadata_version.name == "3.6-IV2"
    # PartitionRecord v0 has no directories; the single directory holds every replica.
    assert image.topics.by_name["t"].partitions[0].directories == (DirectoryId.MIGRATING, DirectoryId.MIGRATING)
    report = describe_from_image(image, "2")
    assert [(d.path, [(p.name, p.size) for p in d.partitions]) for d in report.brokers[0].log_dirs] == [("/kafka", [("t-0", 9)])]


def test_metadata_version_values(files: ImportRequest) -> None:
    supported = ", ".join(mv.name for mv in NEWEST.metadata_versions)
    for text, message in [("9.9", f"Unknown metadata.version '9.9'. Supported metadata.version are: {supported}"),
                          ("4.5-IV0", "metadata.version 4.5-IV0 is not yet stable.")]:
        files.metadata_version = text
        with pytest.raises(UserError) as raised:
            plan_import(files)
        assert raised.value.message == message


# Checks --------------------------------------------------------------------------------------------


def test_every_problem_is_reported_with_its_file_and_json_path(tmp_path: Path) -> None:
    brokers = write(tmp_path / "brokers.json", {"brokers": [
        {"id": 1, "rack": "r1", "log_dirs": [{"path": "/d1", "capacity_bytes": -5}, {"path": "/d1//"}]},
        {"id": 1, "log_dirs": [{"path": "relative/d1"}]},
        {"id": 2, "log_dirs": []},
        {"id": "3", "rack": 7, "log_dirs": ["/x"]},
        {"id": 4, "log_dirs": [{"path": "/d", "directory_id": "AAAAAAAAAAAAAAAAAAAAAQ"}, {"path": "/e", "directory_id": "nope"}]},
    ]})
    assignment = write(tmp_path / "assignment.json", {"version": 1, "partitions": [
        {"topic": "orders", "partition": 0, "replicas": [1, 9], "log_dirs": ["/d1", "any", "any"]},
        {"topic": "orders", "partition": 0, "replicas": [1, 1]},
        {"topic": "orders", "partition": 2, "replicas": [1], "log_dirs": ["/nope"]},
        {"topic": "bad name", "partition": 0, "replicas": [1]},
        {"topic": "a.b", "partition": 0, "replicas": [1]},
        {"topic": "a_b", "partition": 0, "replicas": [1], "leader": 4},
        {"topic": "t", "partition": -1, "replicas": []},
        {"topic": "t", "partition": 0, "replicas": [1.0]},
        {"partition": 1, "replicas": [1], "log_dirs": None},
    ]})
    log_dirs = write(tmp_path / "log-dirs.txt", {"brokers": [
        {"broker": 7, "logDirs": []},
        {"broker": 1, "logDirs": [{"partitions": [{"partition": "zzz-0", "size": 1, "offsetLag": 0, "isFuture": "no"}], "error": None, "logDir": "/dX"}]},
    ], "version": 2}, header=True)
    broken = tmp_path / "broken.json"
    broken.write_text('{"brokers": [')
    with pytest.raises(ValidationFailed) as raised:
        plan_import(ImportRequest(brokers, assignment, [log_dirs, broken]))
    b, a, ld = f"{brokers} $.brokers", f"{assignment} $.partitions", f"{log_dirs} $"
    assert raised.value.problems == [
        f"{b}[0].log_dirs[0].capacity_bytes: expected a capacity in bytes (an integer >= 0) or null, found -5",
        f"{b}[0].log_dirs[1].path: duplicate log directory /d1 (first at $.brokers[0].log_dirs[0].path)",
        f"{b}[1].id: duplicate broker id 1 (first at $.brokers[0])",
        f"{b}[1].log_dirs[0].path: 'relative/d1' is not an absolute path",
        f"{b}[2].log_dirs: expected a non-empty array of log directories, found an empty array",
        f"{b}[3].id: expected a broker id (an integer from 0 to 2147483647), found a string",
        f"{b}[3].rack: expected a rack name or null, found an integer",
        f"{b}[4].log_dirs[0].directory_id: AAAAAAAAAAAAAAAAAAAAAQ is a reserved directory id (Kafka refuses it: Reserved directory ID in request)",
        f"{b}[4].log_dirs[1].directory_id: 'nope' is not a directory id: Input string `nope` decoded as 3 bytes, which is not equal to the expected 16 bytes of a base64-encoded UUID",
        f"{a}[0].replicas[1]: The manual partition assignment includes broker 9, but no such broker is registered (it is not in the brokers file).",
        f"{a}[0].log_dirs: Size of replicas list [1, 9] is different from size of log dirs list [/d1, any, any] for partition orders-0",
        f"{a}[1].replicas: Partition replica lists may not contain duplicate entries: orders-0 contains multiple entries for 1",
        f"{a}[1]: Partition reassignment contains duplicate topic partitions: orders-0 (first at $.partitions[0])",
        f"{a}[2].log_dirs[0]: broker 1 has no log directory /nope in the brokers file (it has /d1)",
        f"{a}[3].topic: Topic name is invalid: 'bad name' contains one or more characters other than ASCII alphanumerics, '.', '_' and '-'",
        f"{a}[5].leader: the leader must be one of the replicas 1, found 4",
        f"{a}[6].partition: The given partition index -1 is not valid.",
        f"{a}[6].replicas: Partition replica list cannot be empty",
        f"{a}[7].replicas[0]: Expected `Int` value, received 1.0",
        f"{a}[8].topic: No such field exists: `topic`",
        f"{a}[8].log_dirs: Expected `JSON array` value, received null",
        f"{assignment} $.partitions: topic orders has 2 partition(s) numbered up to 2; missing 1 (partitions are numbered 0 to n-1; the topic starts at $.partitions[0])",
        f"{a}[5].topic: Topic 'a_b' collides with existing topic: a.b",
        f"{ld}.version: Not supported version field value 2",
        f"{ld}.brokers[0].broker: broker 7 is not in the brokers file {brokers}",
        f"{ld}.brokers[1].logDirs[0].logDir: broker 1 has no log directory /dX in the brokers file {brokers} (it has /d1)",
        f"{ld}.brokers[1].logDirs[0].partitions[0].isFuture: expected true or false, found a string",
        f"{broken} $: not valid JSON: unexpected end of data (line 1, column 14)",
    ]


def test_the_assignment_and_the_log_dirs_output_must_agree(files: ImportRequest, tmp_path: Path) -> None:
    document = json.loads(json.dumps(ASSIGNMENT))
    document["partitions"][0]["log_dirs"][0] = "/data/b1/d2"
    files.assignment_file = write(tmp_path / "moved.json", document)
    with pytest.raises(ValidationFailed) as raised:
        plan_import(files)
    assert raised.value.problems == [
        f"{files.assignment_file} $.partitions[0].log_dirs[0]: orders-0 on broker 1 is in /data/b1/d1 per "
        f"{files.log_dirs_files[0]} $.brokers[0].logDirs[0].partitions[0], not in /data/b1/d2",
    ]


def test_disk_sizes_in_newer_log_dirs_output_become_capacities(files: ImportRequest, tmp_path: Path) -> None:
    """KIP-827: newer kafka-log-dirs prints each volume's totalBytes and usableBytes (-1: unknown)."""
    document = json.loads(json.dumps(LOG_DIRS))
    volumes = [(b, d) for b in document["brokers"] for d in b["logDirs"]]
    for (_, log_dir), (total, usable) in zip(volumes, [(4 * 10**12, 10**12), (8000, 100), (-1, -1), (3 * 2**40, 2**40)]):
        log_dir.update(totalBytes=total, usableBytes=usable)
    files.log_dirs_files = [write(tmp_path / "v4.txt", document, header=True)]
    capacities = {(d.path): d.capacity_bytes for dirs in imported(files).cluster.log_dirs.values() for d in dirs}
    # The brokers file's capacity_bytes wins; a directory without one takes the disk's totalBytes.
    assert capacities == {"/data/b1/d1": 1000, "/data/b1/d2": 2000, "/data/b2/d1": None, "/data/b2/d2": 3 * 2**40, "/data/b3": None}

    volumes[0][1].update(totalBytes="4TB", usableBytes=-2)
    volumes[1][1].update(totalBytes=100, usableBytes=200)
    files.log_dirs_files = [write(tmp_path / "bad.txt", document, header=True)]
    with pytest.raises(ValidationFailed) as raised:
        plan_import(files)
    source = files.log_dirs_files[0]
    assert raised.value.problems == [
        f"{source} $.brokers[0].logDirs[0].totalBytes: expected a byte count (an integer >= 0, or -1 if unknown), found a string",
        f"{source} $.brokers[0].logDirs[1].usableBytes: usableBytes 200 is more than totalBytes 100",
    ]


def test_a_broker_whose_every_directory_failed_cannot_be_imported(tmp_path: Path) -> None:
    brokers = write(tmp_path / "b.json", {"brokers": [{"id": 1, "log_dirs": ["/a"]}]})
    assignment = write(tmp_path / "a.json", {"partitions": []})
    log_dirs = write(tmp_path / "l.json", {"brokers": [{"broker": 1, "logDirs": [{"partitions": [], "error": ERROR, "logDir": "/a"}]}]})
    with pytest.raises(ValidationFailed) as raised:
        plan_import(ImportRequest(brokers, assignment, [log_dirs]))
    assert raised.value.problems == [
        f"{brokers} $.brokers[0].log_dirs: every log directory of broker 1 is reported offline; a Kafka broker stops when all its "
        "log directories fail, so leave it out of the log-dirs output or register it later"
    ]


def test_jbod_needs_metadata_version_3_7_iv2(tmp_path: Path) -> None:
    brokers = write(tmp_path / "b.json", {"brokers": [{"id": 1, "log_dirs": ["/a", "/b"]}]})
    assignment = write(tmp_path / "a.json", {"partitions": []})
    with pytest.raises(ValidationFailed) as raised:
        plan_import(ImportRequest(brokers, assignment, [], "3.7-IV1"))
    assert raised.value.problems == [
        f"{brokers} $.brokers[0].log_dirs: broker 1 has 2 log directories, but metadata.version 3.7-IV1 does not support JBOD "
        "(it needs 3.7-IV2 or later; see --metadata-version)"
    ]


# The new state -------------------------------------------------------------------------------------


def import_cluster_into(path: Path, request: ImportRequest) -> ImportSummary:
    return import_cluster(request, StateDirectory(path))


def test_import_creates_the_state_with_a_snapshot(files: ImportRequest, tmp_path: Path) -> None:
    state = tmp_path / "state"
    summary = import_cluster_into(state, files)
    assert summary.to_json() == {
        "state": str(state),
        "clusterId": None,
        "metadataVersion": "4.4-IV2",
        "brokers": 3,
        "directories": 5,
        "offlineDirectories": 1,
        "topics": 2,
        "partitions": 4,
        "replicas": 9,
        "unassignedReplicas": 1,
        "offlineReplicas": 0,
        "sizedPartitions": 3,
        "replicaLogs": 1,
        "futureReplicas": 1,
        # 6 features, 3 x 2 broker records, 2 topics, 4 partitions, 3 sizes, 2 replica logs.
        "records": 23,
        "snapshot": str(list_snapshots(state)[0][1]),
    }
    assert list_snapshots(state)[0][0] == 23
    assert read_image(state).topics == imported(files).topics


def test_a_cluster_id_is_recorded_with_no_controller(files: ImportRequest, tmp_path: Path) -> None:
    assert (import_cluster_into(tmp_path / "plain", files), read_image(tmp_path / "plain"))[1].identity is None
    files.cluster_id = "MkU3OEVBNTcwNTJENDM2Qk"
    summary = import_cluster_into(tmp_path / "named", files)
    assert (summary.cluster_id, summary.to_json()["clusterId"], summary.records) == ("MkU3OEVBNTcwNTJENDM2Qk", "MkU3OEVBNTcwNTJENDM2Qk", 24)
    identity = read_image(tmp_path / "named").identity
    assert identity is not None and (identity.cluster_id, identity.controller_id) == ("MkU3OEVBNTcwNTJENDM2Qk", None)


def test_importing_again_gives_the_same_state(files: ImportRequest, tmp_path: Path) -> None:
    import_cluster_into(tmp_path / "one", files)
    import_cluster_into(tmp_path / "two", files)
    one, two = read_image(tmp_path / "one"), read_image(tmp_path / "two")
    assert (one.topics, one.cluster.brokers, one.cluster.log_dirs) == (two.topics, two.cluster.brokers, two.cluster.log_dirs)


def test_an_existing_state_or_a_non_empty_directory_is_never_overwritten(files: ImportRequest, tmp_path: Path) -> None:
    existing = tmp_path / "existing"
    with ClusterState.open(existing, write=True, create=True) as state:
        state.commit([KjbodClockRecord(time_ms=5)])
    other = tmp_path / "other"
    other.mkdir()
    (other / "notes.txt").write_text("keep me")
    for path, obstacle in ((existing, "the directory already holds a cluster state"), (other, "the directory is not empty (it holds notes.txt)")):
        with pytest.raises(UserError, match=rf"^Cannot import into {path}: {re.escape(obstacle)}\. `kjbod import cluster` creates"):
            import_cluster_into(path, files)
    assert (other / "notes.txt").read_text() == "keep me"
    assert read_image(existing).time_ms == 5


def test_a_state_that_holds_no_record_is_no_obstacle(files: ImportRequest, tmp_path: Path) -> None:
    """What an earlier kjbod left when killed after writing the marker: it holds nothing."""
    empty_state = tmp_path / "empty-state"
    ClusterState.open(empty_state, write=True, create=True).close()
    import_cluster_into(empty_state, files)
    assert read_image(empty_state).topics == imported(files).topics


def test_a_huge_partition_number_is_one_problem_found_without_walking_to_it(files: ImportRequest, tmp_path: Path) -> None:
    """Issue 20: partition 2147483647 made the numbering check build range(2147483648) (3.9 GB)."""
    files.assignment_file = write(tmp_path / "huge.json", {"version": 1, "partitions": [
        {"topic": "t", "partition": 2147483647, "replicas": [1]}, {"topic": "t", "partition": 3, "replicas": [1]},
    ]})  # fmt: skip
    with pytest.raises(ValidationFailed) as raised:
        import_cluster_into(tmp_path / "new", files)
    assert [problem for problem in map(str, raised.value.problems) if "numbered" in problem] == [
        f"{files.assignment_file} $.partitions: topic t has 2 partition(s) numbered up to 2147483647; missing 0,1,2,4,5,6,7,8,9,10,11,"
        "12,13,14,15,16,17,18,19,20 and 2147483626 more (partitions are numbered 0 to n-1; the topic starts at $.partitions[1])"
    ]


def test_invalid_input_writes_nothing(files: ImportRequest, tmp_path: Path) -> None:
    files.assignment_file = write(tmp_path / "bad.json", {"partitions": [{"topic": "t", "partition": 1, "replicas": [1]}]})
    empty = tmp_path / "empty"
    empty.mkdir()
    for path in (tmp_path / "new", empty):
        with pytest.raises(ValidationFailed):
            import_cluster_into(path, files)
    assert not (tmp_path / "new").exists() and list(empty.iterdir()) == []


def test_a_failure_while_writing_leaves_the_directory_as_it_was(files: ImportRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def full_disk(self: ClusterState, entries: object, **options: object) -> None:
        raise OSError(28, "No space left on device", str(self.path))

    monkeypatch.setattr(ClusterState, "commit", full_disk)
    empty = tmp_path / "empty"
    empty.mkdir()
    for path in (tmp_path / "new", empty):
        with pytest.raises(OSError):
            import_cluster_into(path, files)
    assert not (tmp_path / "new").exists() and list(empty.iterdir()) == []


# The round trip -----------------------------------------------------------------------------------


def current_assignment(image: Image) -> list[dict]:
    """The assignment the image holds, as Kafka's reassignment JSON partitions with paths."""
    return [
        {
            "topic": topic.name,
            "partition": partition_id,
            "replicas": list(p.replicas),
            "log_dirs": [image.cluster.path_of(b, d) or "any" for b, d in zip(p.replicas, p.directories)],
        }
        for topic, partition_id, p in image.topics.partitions()
    ]


@pytest.mark.parametrize("per_broker", [False, True])
def test_round_trip_of_a_synthetic_cluster(tmp_path: Path, per_broker: bool) -> None:
    synthetic = load_synthetic()
    cluster = synthetic.generate(synthetic.SyntheticSpec(brokers=9, dirs_per_broker=3, partitions=400, failed_dirs=2, lagging_fraction=0.1, future_fraction=0.05, seed=7))
    paths = synthetic.write_files(cluster, tmp_path / "in", per_broker=per_broker)
    import_cluster_into(tmp_path / "state", ImportRequest(paths["brokers"], paths["assignment"], paths["log_dirs"]))
    image = read_image(tmp_path / "state")
    assert sorted_log_dirs(describe_from_image(image).to_kafka_data()) == sorted_log_dirs(cluster.log_dirs)
    expected = sorted(cluster.assignment["partitions"], key=lambda p: (p["topic"], p["partition"]))
    assert current_assignment(image) == expected
    # The failed directories hold replicas that are out of their ISR.
    failed = {(b, directory_id_for(b, p)) for b, p in cluster.failed}
    offline = [(b, p.isr) for _, _, p in image.topics.partitions() for b, d in zip(p.replicas, p.directories) if (b, d) in failed]
    assert offline and all(b not in isr or len(isr) == 1 for b, isr in offline)


@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_any_consistent_export_round_trips(data: st.DataObject) -> None:
    """Random brokers, directories (some failed), topics, replica lists, placements, sizes,
    lags and future replicas: the image gives back the log-dirs output and the assignment."""
    draw = data.draw
    dirs = {b: [f"/data/{b}/d{i}" for i in range(draw(st.integers(1, 3)))] for b in range(1, draw(st.integers(1, 4)) + 1)}
    failed = {(b, p) for b, paths in dirs.items() for p in paths[1:] if draw(st.booleans())}
    held: dict[tuple[int, str], list[dict]] = {(b, p): [] for b, paths in dirs.items() for p in paths}
    partitions = []
    names = draw(st.lists(st.from_regex(r"[a-z][a-z0-9-]{0,6}", fullmatch=True), min_size=1, max_size=3, unique=True))
    for topic in names:
        for partition_id in range(draw(st.integers(1, 3))):
            replicas = draw(st.permutations(sorted(dirs)))[: draw(st.integers(1, len(dirs)))]
            placed = [draw(st.sampled_from(dirs[b])) for b in replicas]
            size = draw(st.integers(0, 10**12))
            for b, path in zip(replicas, placed):
                if (b, path) in failed:
                    continue
                copy = draw(st.sampled_from([size, size // 2]))
                held[(b, path)].append(entry_doc(f"{topic}-{partition_id}", copy, draw(st.sampled_from([0, 0, 17])), False))
                others = [p for p in dirs[b] if p != path and (b, p) not in failed]
                if others and draw(st.integers(0, 4)) == 0:
                    held[(b, draw(st.sampled_from(others)))].append(entry_doc(f"{topic}-{partition_id}", size // 3, 5, True))
            # Replicas on failed directories are not in the output: their paths must be given.
            style = "paths" if any((b, p) in failed for b, p in zip(replicas, placed)) else draw(st.sampled_from(["paths", "any", "absent"]))
            item: dict[str, Any] = {"topic": topic, "partition": partition_id, "replicas": replicas}
            if style != "absent":
                item["log_dirs"] = placed if style == "paths" else ["any"] * len(replicas)
            partitions.append((item, placed))
    log_dirs = {"brokers": [
        {"broker": b, "logDirs": [{"partitions": held[(b, p)], "error": ERROR if (b, p) in failed else None, "logDir": p} for p in paths]}
        for b, paths in dirs.items()
    ], "version": 1}
    brokers = {"brokers": [{"id": b, "log_dirs": paths} for b, paths in dirs.items()]}
    with tempfile.TemporaryDirectory() as tmp:
        request = ImportRequest(
            write(Path(tmp) / "b.json", brokers),
            write(Path(tmp) / "a.json", {"partitions": [item for item, _ in partitions]}),
            [write(Path(tmp) / "l.txt", log_dirs, header=True)],
        )
        image = imported(request)
    assert sorted_log_dirs(describe_from_image(image).to_kafka_data()) == sorted_log_dirs(log_dirs)
    expected = sorted(({**item, "log_dirs": placed} for item, placed in partitions), key=lambda p: (p["topic"], p["partition"]))
    assert current_assignment(image) == expected


def entry_doc(name: str, size: int, lag: int, future: bool) -> dict:
    return {"partition": name, "size": size, "offsetLag": lag, "isFuture": future}
