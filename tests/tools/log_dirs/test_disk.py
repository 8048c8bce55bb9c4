"""The log directories of a broker scanned on disk as kafka-log-dirs would report them:
partition directory names, offline and unreadable directories (reference §5, KIP-113)."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pyfakefs.fake_filesystem import FakeFilesystem
from pyfakefs.fake_filesystem_unittest import Patcher

from kjbod.tools.log_dirs.disk import describe_from_disk, DirectoryName, parse_directory_name, scan_directory
from kjbod.tools.log_dirs.report import (
    KAFKA_STORAGE_EXCEPTION,
    BrokerEntry,
    LogDirsReport,
)

from .support import D11, D12





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
