"""kafka-log-dirs in kjbod: Kafka's JSON from the cluster state, the scan of real directories,
reading Kafka's output back, and loading it into the state (reference §5, KIP-113)."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st
from pyfakefs.fake_filesystem import FakeFilesystem
from pyfakefs.fake_filesystem_unittest import Patcher

from kjbod.common.kafka_uuid import DirectoryId
from kjbod.errors import UserError
from kjbod.image import EMPTY_IMAGE, Image, replay_all
from kjbod.log_dirs_tool import (
    KAFKA_STORAGE_EXCEPTION,
    BrokerEntry,
    DirectoryName,
    LogDirEntry,
    LogDirsReport,
    PartitionEntry,
    ValidationFailed,
    describe_from_disk,
    describe_from_image,
    import_log_dirs,
    parse_directory_name,
    plan_log_dirs_import,
    scan_directory,
)
from kjbod.records import (
    FeatureLevelRecord,
    KjbodBrokerLogDirsRecord,
    KjbodLogDir,
    KjbodPartitionSizeRecord,
    KjbodReplicaLogRecord,
    PartitionRecord,
    RegisterBrokerRecord,
    TopicRecord,
)
from kjbod.state import ClusterState, read_image

INC = "O7xvrxGUTwyKxRtVqYj9qA"
FOO, BAR = "cJ3rE4bvQc2w5Y0kT1q9Zg", "AAAAAAAAAAAAAAAAAAAAZA"
# Two directories on each of brokers 1 and 2; broker 0 has Kafka's default /tmp/kafka-logs.
D0 = "ZNJ-ywU0nnQwRv5eRRU9ow"
D11, D12 = "XcZZOzUqS4yHOjhMQB6JLQ", "AAAAAAAAAAAAAAAAAAAAZQ"
D21, D22 = "AAAAAAAAAAAAAAAAAAAAZg", "AAAAAAAAAAAAAAAAAAAAZw"
UNASSIGNED = DirectoryId.UNASSIGNED


def broker(broker_id: int, dirs: dict[str, str], online: tuple[str, ...] | None = None, epoch: int = 1) -> list:
    """Registration records: `dirs` maps directory id -> path; `online` defaults to all."""
    return [
        RegisterBrokerRecord(
            version=4, broker_id=broker_id, incarnation_id=INC, broker_epoch=epoch, fenced=False,
            log_dirs=tuple(dirs) if online is None else online,
        ),
        KjbodBrokerLogDirsRecord(broker_id=broker_id, log_dirs=tuple(KjbodLogDir(directory_id=d, path=p) for d, p in dirs.items())),
    ]


def partition(topic_id: str, partition_id: int, replicas: tuple[int, ...], directories: tuple[str, ...]) -> PartitionRecord:
    return PartitionRecord(
        version=2, topic_id=topic_id, partition_id=partition_id, replicas=replicas, isr=replicas,
        leader=replicas[0], leader_epoch=0, partition_epoch=0, directories=directories,
    )


def image_of(*records: object) -> Image:
    return replay_all(EMPTY_IMAGE, [FeatureLevelRecord(name="metadata.version", feature_level=30), *records])  # type: ignore[list-item]


@pytest.fixture
def two_brokers() -> Image:
    """Brokers 1 and 2 with two directories each (D12 offline); foo-0..2 and bar-0."""
    return image_of(
        *broker(1, {D11: "/data/b1/d1", D12: "/data/b1/d2"}, online=(D11,)),
        *broker(2, {D21: "/data/b2/d1", D22: "/data/b2/d2"}, epoch=3),
        TopicRecord(name="foo", topic_id=FOO),
        partition(FOO, 0, (1, 2), (D11, D22)),
        partition(FOO, 1, (2, 1), (D21, D12)),
        partition(FOO, 2, (2,), (UNASSIGNED,)),
        TopicRecord(name="bar", topic_id=BAR),
        partition(BAR, 0, (2, 1), (D22, D11)),
        KjbodPartitionSizeRecord(topic_id=FOO, partition_id=0, size_bytes=5000),
        KjbodPartitionSizeRecord(topic_id=FOO, partition_id=1, size_bytes=700),
        KjbodPartitionSizeRecord(topic_id=BAR, partition_id=0, size_bytes=42),
        KjbodReplicaLogRecord(topic_id=FOO, partition_id=0, broker_id=2, size_bytes=1200, offset_lag=40),
        KjbodReplicaLogRecord(topic_id=FOO, partition_id=0, broker_id=2, future=True, directory_id=D21, size_bytes=300, offset_lag=9),
    )


# Kafka's JSON, from the state --------------------------------------------------------------------


def test_the_json_is_byte_identical_to_kafkas_for_kafkas_own_example() -> None:
    # reference §5.3, the key order confirmed on a JVM.
    image = image_of(
        *broker(0, {D0: "/tmp/kafka-logs"}),
        TopicRecord(name="foo", topic_id=FOO),
        partition(FOO, 0, (0,), (D0,)),
        KjbodPartitionSizeRecord(topic_id=FOO, partition_id=0, size_bytes=123),
    )
    report = describe_from_image(image)
    assert report.lines() == [
        "Querying brokers for log directories information",
        "Received log directory information from brokers 0",
        '{"brokers":[{"broker":0,"logDirs":[{"partitions":[{"partition":"foo-0","size":123,"offsetLag":0,"isFuture":false}],'
        '"error":null,"logDir":"/tmp/kafka-logs"}]}],"version":1}',
    ]


def test_offline_directories_future_replicas_lags_and_unplaced_replicas(two_brokers: Image) -> None:
    report = describe_from_image(two_brokers)
    assert report.to_kafka_json() == (
        '{"brokers":['
        '{"broker":1,"logDirs":['
        '{"partitions":[{"partition":"bar-0","size":42,"offsetLag":0,"isFuture":false},'
        '{"partition":"foo-0","size":5000,"offsetLag":0,"isFuture":false}],"error":null,"logDir":"/data/b1/d1"},'
        '{"partitions":[],"error":"org.apache.kafka.common.errors.KafkaStorageException","logDir":"/data/b1/d2"}]},'
        '{"broker":2,"logDirs":['
        '{"partitions":[{"partition":"foo-0","size":300,"offsetLag":9,"isFuture":true},'
        '{"partition":"foo-1","size":700,"offsetLag":0,"isFuture":false}],"error":null,"logDir":"/data/b2/d1"},'
        '{"partitions":[{"partition":"bar-0","size":42,"offsetLag":0,"isFuture":false},'
        '{"partition":"foo-0","size":1200,"offsetLag":40,"isFuture":false}],"error":null,"logDir":"/data/b2/d2"}]}'
        '],"version":1}'
    )


def test_topic_filter_keeps_directories_whose_partitions_are_all_filtered_out(two_brokers: Image) -> None:
    data = describe_from_image(two_brokers, "2", "bar").to_kafka_data()
    assert data == {
        "brokers": [
            {
                "broker": 2,
                "logDirs": [
                    {"partitions": [], "error": None, "logDir": "/data/b2/d1"},
                    {"partitions": [{"partition": "bar-0", "size": 42, "offsetLag": 0, "isFuture": False}], "error": None, "logDir": "/data/b2/d2"},
                ],
            }
        ],
        "version": 1,
    }


def test_unknown_brokers_give_kafkas_message() -> None:
    # LogDirsCommandTest:147-155: cluster {1}, --broker-list 0,1,2.
    image = image_of(*broker(1, {D11: "/d"}))
    with pytest.raises(UserError) as raised:
        describe_from_image(image, "0,1,2")
    assert raised.value.message == "ERROR: The given brokers do not exist from --broker-list: 0,2. Current existent brokers: 1"


@pytest.mark.parametrize(("text", "brokers"), [("1,1", [1]), ("2,,1,", [1, 2]), ("", [1, 2]), ("+1", [1])])
def test_broker_lists_split_as_kafka_does(two_brokers: Image, text: str, brokers: list[int]) -> None:
    assert describe_from_image(two_brokers, text).broker_ids == brokers


@pytest.mark.parametrize("text", ["1, 2", "x", "99999999999"])
def test_a_broker_list_that_is_not_numbers_names_the_piece(two_brokers: Image, text: str) -> None:
    piece = next(p for p in text.split(",") if not p.isdigit() or len(p) > 10)
    with pytest.raises(UserError, match=f'^For input string: "{piece}" \\(in --broker-list\\)$'):
        describe_from_image(two_brokers, text)


def test_a_cluster_before_jbod_places_each_replica_in_the_single_directory() -> None:
    # metadata.version 3.6 records no directories: every replica is MIGRATING.
    image = replay_all(
        EMPTY_IMAGE,
        [
            FeatureLevelRecord(name="metadata.version", feature_level=14),
            RegisterBrokerRecord(version=2, broker_id=1, incarnation_id=INC, broker_epoch=1, fenced=False),
            KjbodBrokerLogDirsRecord(broker_id=1, log_dirs=(KjbodLogDir(directory_id=D11, path="/var/kafka"),)),
            TopicRecord(name="foo", topic_id=FOO),
            PartitionRecord(version=0, topic_id=FOO, partition_id=0, replicas=(1,), isr=(1,), leader=1, leader_epoch=0, partition_epoch=0),
        ],
    )
    (log_dir,) = describe_from_image(image).brokers[0].log_dirs
    assert (log_dir.path, log_dir.error, [p.name for p in log_dir.partitions]) == ("/var/kafka", None, ["foo-0"])


_names = st.text(min_size=1, max_size=12)
_log_dirs = st.builds(
    LogDirEntry,
    path=st.text(max_size=20),
    error=st.none() | st.just(KAFKA_STORAGE_EXCEPTION),
    partitions=st.lists(
        st.builds(PartitionEntry, _names, st.integers(0, 2**31 - 1), st.integers(0, 2**63 - 1), st.integers(0, 2**63 - 1), st.booleans()),
        max_size=4,
    ),
    directory_id=st.none() | st.just(D11),
    pending_deletion=st.lists(_names, max_size=2),
)


@given(
    brokers=st.lists(st.builds(BrokerEntry, st.integers(0, 2**31 - 1), st.lists(_log_dirs, max_size=3)), max_size=3),
    disk=st.booleans(),
)
def test_the_json_text_is_exactly_the_document_serialized(brokers: list[BrokerEntry], disk: bool) -> None:
    # Folder names on a disk may hold quotes, backslashes or control characters: escaped as JSON.
    report = LogDirsReport(brokers, disk)
    assert report.to_kafka_json() == orjson.dumps(report.to_kafka_data()).decode()
    assert json.loads(report.to_kafka_json()) == report.to_kafka_data()


# Directory names (UnifiedLog, KIP-113) ----------------------------------------------------------

HEX = "3a5d2f7e0c1b4a6b8d9e0f1a2b3c4d5e"


@pytest.mark.parametrize(
    ("name", "parsed"),
    [
        ("foo-0", DirectoryName("foo", 0, "log")),
        ("my-topic-12", DirectoryName("my-topic", 12, "log")),
        (f"foo-3.{HEX}-future", DirectoryName("foo", 3, "future")),
        (f"foo-3.{HEX}-delete", DirectoryName("foo", 3, "delete")),
        (f"foo-3.{HEX}-stray", DirectoryName("foo", 3, "stray")),
        ("foo-3.move", DirectoryName("foo", 3, "future")),
        ("lost+found", None),
        ("foo", None),
        ("foo-", None),
        ("foo-x", None),
        (f"foo-3.{HEX[:-1]}-future", None),
        ("foo-99999999999", None),
    ],
)
def test_directory_names(name: str, parsed: DirectoryName | None) -> None:
    assert parse_directory_name(name) == parsed


@given(
    topic=st.text(alphabet="abcdefghijklmnopqrstuvwxyzABC0123456789._-", min_size=1, max_size=40),
    partition_id=st.integers(min_value=0, max_value=2**31 - 1),
    kind=st.sampled_from(["log", "future", "delete", "stray"]),
    unique=st.binary(min_size=16, max_size=16),
)
def test_every_partition_directory_name_parses_back(topic: str, partition_id: int, kind: str, unique: bytes) -> None:
    name = f"{topic}-{partition_id}" if kind == "log" else f"{topic}-{partition_id}.{unique.hex()}-{kind}"
    assert parse_directory_name(name) == DirectoryName(topic, partition_id, kind)


# Scanning real directories ------------------------------------------------------------------------


def make_partition(log_dir: Path, name: str, segments: dict[str, int]) -> None:
    folder = log_dir / name
    folder.mkdir(parents=True)
    for file_name, size in segments.items():
        (folder / file_name).write_bytes(b"x" * size)
    # Index files and checkpoints do not count towards a log's size.
    (folder / "00000000000000000000.index").write_bytes(b"i" * 1000)
    (folder / "leader-epoch-checkpoint").write_text("0\n1\n0 0\n")


def write_meta(log_dir: Path, directory_id: str | None) -> None:
    lines = ["version=1", "cluster.id=9kxKeqBbQWqd4JYl8EUZ4w", "node.id=4"] + ([f"directory.id={directory_id}"] if directory_id else [])
    (log_dir / "meta.properties").write_text("\n".join(lines) + "\n")


@pytest.fixture
def broker_host(tmp_path: Path) -> Path:
    """A broker's directories as Kafka leaves them; returns its server.properties."""
    d1, d2, meta = tmp_path / "d1", tmp_path / "d2", tmp_path / "meta"
    make_partition(d1, "orders-0", {"00000000000000000000.log": 1000, "00000000000000004000.log": 234})
    make_partition(d1, "orders-1", {"00000000000000000000.log": 10})
    make_partition(d1, f"orders-2.{HEX}-future", {"00000000000000000000.log": 55})
    make_partition(d1, f"audit-0.{HEX}-delete", {"00000000000000000000.log": 99})
    make_partition(d1, "lost+found", {})
    (d1 / "recovery-point-offset-checkpoint").write_text("0\n0\n")
    write_meta(d1, D11)
    make_partition(d2, "orders-2", {"00000000000000000000.log": 77})
    make_partition(d2, "audit-0.move", {"00000000000000000000.log": 5})
    write_meta(d2, None)
    make_partition(meta, "__cluster_metadata-0", {"00000000000000000000.log": 4096})
    write_meta(meta, D12)
    config = tmp_path / "server.properties"
    config.write_text(f"process.roles=broker\nnode.id=4\nlog.dirs={d2},{d1},{tmp_path / 'gone'}\nmetadata.log.dir={meta}\n")
    return config


def test_a_broker_host_scanned_as_kafka_would_report_it(broker_host: Path) -> None:
    root = broker_host.parent
    scan = describe_from_disk(broker_host)
    assert scan.problems == [f"{root / 'gone'}: No such file or directory"]
    assert scan.report.lines()[:2] == ["Querying brokers for log directories information", "Received log directory information from brokers 4"]
    assert json.loads(scan.report.lines()[2]) == {
        "brokers": [
            {
                "broker": 4,
                "logDirs": [
                    {
                        "partitions": [
                            {"partition": "orders-0", "size": 1234, "offsetLag": 0, "isFuture": False},
                            {"partition": "orders-1", "size": 10, "offsetLag": 0, "isFuture": False},
                            {"partition": "orders-2", "size": 55, "offsetLag": 0, "isFuture": True},
                        ],
                        "error": None,
                        "logDir": str(root / "d1"),
                        "pendingDeletion": ["audit-0"],
                        "directoryId": D11,
                    },
                    {
                        "partitions": [
                            {"partition": "audit-0", "size": 5, "offsetLag": 0, "isFuture": True},
                            {"partition": "orders-2", "size": 77, "offsetLag": 0, "isFuture": False},
                        ],
                        "error": None,
                        "logDir": str(root / "d2"),
                        "pendingDeletion": [],
                        "directoryId": None,
                    },
                    {"partitions": [], "error": KAFKA_STORAGE_EXCEPTION, "logDir": str(root / "gone"), "pendingDeletion": [], "directoryId": None},
                    {"partitions": [], "error": None, "logDir": str(root / "meta"), "pendingDeletion": [], "directoryId": D12},
                ],
            }
        ],
        "version": 1,
    }


def test_the_key_order_of_a_disk_scan_puts_kjbods_extensions_last(broker_host: Path) -> None:
    text = describe_from_disk(broker_host, topic_list="none").report.to_kafka_json()
    assert f'{{"partitions":[],"error":null,"logDir":"{broker_host.parent / "d1"}","pendingDeletion":["audit-0"],"directoryId":"{D11}"}}' in text


def test_a_folder_name_that_is_not_utf8_is_shown_as_java_decodes_it(tmp_path: Path) -> None:
    os.mkdir(os.path.join(os.fsencode(tmp_path), b"caf\xe9-0"))
    entry, _ = scan_directory(str(tmp_path))
    assert [p.name for p in entry.partitions] == ["caf\ufffd-0"]
    assert '"partition":"caf\ufffd-0"' in LogDirsReport([BrokerEntry(1, [entry])]).to_kafka_json()


def test_a_log_dir_that_is_a_file_is_offline(tmp_path: Path) -> None:
    (tmp_path / "not-a-dir").write_text("x")
    entry, notes = scan_directory(str(tmp_path / "not-a-dir"))
    assert (entry.error, entry.partitions, notes) == (KAFKA_STORAGE_EXCEPTION, [], [f"{tmp_path / 'not-a-dir'}: Not a directory"])


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads a mode-000 directory anyway; the pyfakefs tests cover it")
def test_a_mode_000_directory_on_a_real_disk_is_offline(broker_host: Path) -> None:
    d2 = broker_host.parent / "d2"
    d2.chmod(0)
    try:
        scan = describe_from_disk(broker_host)
    finally:
        d2.chmod(0o755)
    assert f"{d2}: Permission denied" in scan.problems
    assert [d.error for d in scan.report.brokers[0].log_dirs if d.path == str(d2)] == [KAFKA_STORAGE_EXCEPTION]


@pytest.fixture
def fake_fs() -> Iterator[FakeFilesystem]:
    with Patcher(allow_root_user=False) as patcher:
        assert patcher.fs is not None
        yield patcher.fs


def test_unreadable_directories_are_offline_with_the_os_error(fake_fs: FakeFilesystem) -> None:
    fake_fs.create_file("/etc/kafka/server.properties", contents="node.id=3\nlog.dirs=/data/a,/data/b,/data/c\n")
    fake_fs.create_file("/data/a/orders-0/00000000000000000000.log", contents="x" * 40)
    fake_fs.create_dir("/data/b", perm_bits=0o000)
    fake_fs.create_file("/data/c/orders-1/00000000000000000000.log", contents="y" * 7)
    fake_fs.create_dir("/data/c/orders-2", perm_bits=0o000)
    scan = describe_from_disk(Path("/etc/kafka/server.properties"))
    assert scan.problems == ["/data/b: Permission denied", "/data/c/orders-2: Permission denied"]
    dirs = {d.path: (d.error, [(p.name, p.size) for p in d.partitions]) for d in scan.report.brokers[0].log_dirs}
    assert dirs == {
        "/data/a": (None, [("orders-0", 40)]),
        # Kafka takes a whole directory offline on an I/O error inside it.
        "/data/b": (KAFKA_STORAGE_EXCEPTION, []),
        "/data/c": (KAFKA_STORAGE_EXCEPTION, []),
    }


def test_a_malformed_meta_properties_is_named_but_the_directory_stays_online(fake_fs: FakeFilesystem) -> None:
    fake_fs.create_file("/etc/kafka/server.properties", contents="node.id=3\nlog.dirs=/data/a\n")
    fake_fs.create_file("/data/a/meta.properties", contents="version=7\n")
    scan = describe_from_disk(Path("/etc/kafka/server.properties"))
    assert scan.problems == ["/data/a/meta.properties: Unknown meta.properties version number 7"]
    assert scan.report.brokers[0].log_dirs[0].error is None


# Reading Kafka's output back into an existing state ---------------------------------------------


def output(*brokers: dict, header: bool = True) -> str:
    ids = ",".join(str(b["broker"]) for b in brokers)
    document = json.dumps({"brokers": list(brokers), "version": 1}, separators=(",", ":"))
    prefix = f"Querying brokers for log directories information\nReceived log directory information from brokers {ids}\n" if header else ""
    return prefix + document + "\n"


def logdir(path: str, *partitions: tuple[str, int, int, bool], error: str | None = None) -> dict:
    return {
        "partitions": [{"partition": n, "size": s, "offsetLag": lag, "isFuture": f} for n, s, lag, f in partitions],
        "error": error,
        "logDir": path,
    }


def test_loading_output_sets_sizes_lags_and_futures(two_brokers: Image, tmp_path: Path) -> None:
    b1 = tmp_path / "b1.txt"
    b1.write_text(output({"broker": 1, "logDirs": [logdir("/data/b1/d1", ("foo-0", 6000, 0, False), ("bar-0", 40, 3, False))]}))
    b2 = tmp_path / "b2.txt"
    b2.write_text(
        output(
            {"broker": 2, "logDirs": [logdir("/data/b2/d2", ("foo-0", 6000, 0, False), ("bar-0", 50, 0, False)), logdir("/data/b2/d1", ("foo-1", 800, 0, False))]},
            header=False,
        )
    )
    result = plan_log_dirs_import(two_brokers, [b1, b2])
    assert (result.files, result.brokers, result.partition_sizes, result.replica_logs, result.future_replicas, result.removed_entries) == (2, 2, 3, 1, 0, 2)
    assert result.warnings == []
    after = replay_all(two_brokers, result.entries)
    foo, bar = after.topics.by_name["foo"], after.topics.by_name["bar"]
    # foo-0's leader (1) has 6000 bytes; broker 2 caught up, so its partial entry is gone, and
    # its future replica, no longer reported, is gone too.
    assert (foo.size(0), foo.replica_size(0, 2), foo.future_replica(0, 2)) == (6000, 6000, None)
    # foo-1's leader is 2 (800); broker 1's directory is offline and unreported: it keeps the full size.
    assert (foo.size(1), foo.replica_size(1, 1)) == (800, 800)
    # bar-0's leader (2) has 50; broker 1 is behind.
    assert (bar.size(0), bar.replica_size(0, 1), bar.replica_logs[(0, 1, False)].offset_lag) == (50, 40, 3)


def test_a_replica_in_another_directory_is_a_warning_with_the_fix(two_brokers: Image, tmp_path: Path) -> None:
    path = tmp_path / "out.txt"
    path.write_text(
        output(
            {"broker": 2, "logDirs": [
                logdir("/data/b2/d1", ("foo-0", 5000, 0, False), ("foo-2", 1, 0, False)),
                logdir("/data/b2/d2", ("foo-0", 90, 0, True), error=None),
            ]},
            {"broker": 1, "logDirs": [logdir("/data/b1/d1", error=KAFKA_STORAGE_EXCEPTION)]},
        )
    )
    result = plan_log_dirs_import(two_brokers, [path])
    assert result.warnings == [
        (
            f"Warning: foo-0 on broker 2 is in /data/b2/d1 ({path} $.brokers[0].logDirs[0].partitions[0]), but the cluster state has it in "
            "/data/b2/d2; to record where it is: kjbod assign-dirs --broker 2 --assign foo:0=/data/b2/d1"
        ),
        (
            f"Warning: foo-2 on broker 2 is in /data/b2/d1 ({path} $.brokers[0].logDirs[0].partitions[1]), but the cluster state has it in "
            "UNASSIGNED; to record where it is: kjbod assign-dirs --broker 2 --assign foo:2=/data/b2/d1"
        ),
        (
            f"Warning: log directory /data/b1/d1 of broker 1 is offline ({path} $.brokers[1].logDirs[0]), but online in the cluster state; "
            "if it failed: kjbod broker fail-dir --id 1 --dir /data/b1/d1"
        ),
    ]
    after = replay_all(two_brokers, result.entries)
    # Directories are not rewritten; the future replica moves to where it was reported.
    assert after.topics.by_name["foo"].partitions[0].directories == (D11, D22)
    assert after.topics.by_name["foo"].future_replica(0, 2).directory_id == D22


def test_every_problem_is_reported_and_nothing_is_written(two_brokers: Image, tmp_path: Path) -> None:
    bad = tmp_path / "bad.txt"
    bad.write_text(
        output(
            {"broker": 9, "logDirs": []},
            {"broker": 1, "logDirs": [
                logdir("/data/b1/nope"),
                logdir("/data/b1/d1", ("nosuch-0", 1, 0, False), ("foo-7", 1, 0, False), ("foo-2", 1, 0, False), ("foo-0", -1, 0, False), ("x", 1, 0, False)),
            ]},
            {"broker": 2, "logDirs": [logdir("/data/b2/d1", ("foo-1", 1, 0, False), ("foo-1", 2, 0, True)), logdir("/data/b2/d2", ("foo-1", 1, 0, False))]},
        )
    )
    unparsable = tmp_path / "broken.txt"
    unparsable.write_text("Querying brokers for log directories information\nReceived log directory information from brokers 1\n{\"brokers\": [\n")
    with pytest.raises(ValidationFailed) as raised:
        plan_log_dirs_import(two_brokers, [bad, unparsable, tmp_path / "missing.txt"])
    where = f"{bad} $.brokers"
    assert raised.value.problems == [
        f"{where}[0].broker: broker 9 is not registered in the cluster state",
        f"{where}[1].logDirs[0].logDir: broker 1 has no log directory /data/b1/nope registered in the cluster state (it has /data/b1/d1, /data/b1/d2)",
        f"{where}[1].logDirs[1].partitions[3].size: expected an integer >= 0, found -1",
        f"{where}[1].logDirs[1].partitions[0].partition: topic nosuch is not in the cluster state",
        f"{where}[1].logDirs[1].partitions[1].partition: partition foo-7 is not in the cluster state",
        f"{where}[1].logDirs[1].partitions[2].partition: broker 1 is not a replica of foo-2 (replicas 2)",
        f"{where}[1].logDirs[1].partitions[4].partition: expected \"<topic>-<partition>\", found 'x'",
        f"{where}[2].logDirs[1].partitions[0]: the replica of foo-1 on broker 2 is reported again (first at {where}[2].logDirs[0].partitions[0])",
        f"{unparsable} $: not valid JSON: unexpected end of data (line 4, column 1)",
        f"{tmp_path / 'missing.txt'} $: cannot read the file: No such file or directory",
        f"{where}[2].logDirs[0].partitions[1]: the future replica of foo-1 on broker 2 is in the same log directory as its current replica",
    ]
    assert raised.value.message == "11 problem(s) found; nothing was written"


def test_import_log_dirs_commits_all_or_nothing(tmp_path: Path) -> None:
    state = tmp_path / "state"
    with ClusterState.open(state, write=True, create=True) as opened:
        opened.commit([
            FeatureLevelRecord(name="metadata.version", feature_level=30),
            *broker(1, {D11: "/data/b1/d1"}),
            TopicRecord(name="foo", topic_id=FOO),
            partition(FOO, 0, (1,), (D11,)),
        ])
    good = tmp_path / "good.txt"
    good.write_text(output({"broker": 1, "logDirs": [logdir("/data/b1/d1", ("foo-0", 321, 0, False))]}))
    bad = tmp_path / "bad.txt"
    bad.write_text(output({"broker": 1, "logDirs": [logdir("/data/b1/d1", ("foo-0", 999, 0, False), ("foo-1", 1, 0, False))]}))
    with pytest.raises(ValidationFailed):
        import_log_dirs(state, [bad])
    assert read_image(state).topics.by_name["foo"].size(0) == 0
    assert import_log_dirs(state, [good]).partition_sizes == 1
    assert read_image(state).topics.by_name["foo"].size(0) == 321
