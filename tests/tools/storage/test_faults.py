"""Faults on a simulated filesystem (pyfakefs): permissions and a full disk.

Whatever fails, every directory ends either fully formatted (meta.properties and, as Kafka 4.3
writes them, bootstrap.checkpoint, or, as Kafka 4.4 writes them on a controller, the bootstrap
snapshot: all complete) or exactly as it was; no temporary file stays behind.
The tests run as a non-root user so that permissions apply.
"""

from __future__ import annotations

import errno
import random
from collections.abc import Iterator
from pathlib import Path

import pytest
from pyfakefs.fake_filesystem import FakeFilesystem
from pyfakefs.fake_filesystem_unittest import Patcher

from kjbod.common.kafka_release import KAFKA_4_3, KAFKA_4_4
from kjbod.records.wire import SCHEMA_DIR
from kjbod.state import StateDirectory
from kjbod.kafka_formats.bootstrap_checkpoint import BOOTSTRAP_CHECKPOINT
from kjbod.tools.storage.meta import EnsureIdsFailed, ensure_directory_ids
from kjbod.tools.storage.formatter import FormatFailed, FormatRequest
from kjbod.storage.meta_properties import (
    MetaProperties,
    read_meta_properties,
    write_meta_properties,
)
from kjbod.storage.properties import PropertiesError
from kjbod.tools.storage.format import format_storage

from tests.tools.storage.support import CLUSTER_ID, DATE, properties_text

CONFIG = Path("/etc/kafka/server.properties")
BROKER = {"process.roles": "broker", "node.id": "1", "controller.quorum.voters": "3000@c:9093"}


@pytest.fixture
def fake_fs() -> Iterator[FakeFilesystem]:
    with Patcher(allow_root_user=False) as patcher:
        assert patcher.fs is not None
        # Kafka's message schemas, read on first use (and cached) to write bootstrap.checkpoint:
        # without them here, a run of this file alone would cache none.
        patcher.fs.add_real_directory(SCHEMA_DIR, lazy_read=False)
        yield patcher.fs


def write_config(fs: FakeFilesystem, log_dirs: str, node: dict[str, str] = BROKER) -> None:
    fs.create_file(CONFIG, contents=properties_text({**node, "log.dirs": log_dirs}))


def format_dirs(**flags: object):  # type: ignore[no-untyped-def]
    """kafka-storage 4.3's format (bootstrap.checkpoint in every directory) unless `release` says."""
    flags.setdefault("release", KAFKA_4_3)
    request = FormatRequest(config_path=CONFIG, cluster_id=CLUSTER_ID, **flags)  # type: ignore[arg-type]
    return format_storage(request, StateDirectory(Path("/state")), rng=random.Random(1), date=DATE)


def listing(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir()) if directory.exists() else []


def assert_fully_formatted(directory: Path) -> None:
    assert listing(directory) == [BOOTSTRAP_CHECKPOINT, "meta.properties"]
    assert read_meta_properties(directory)[1].cluster_id == CLUSTER_ID
    assert len((directory / BOOTSTRAP_CHECKPOINT).read_bytes()) > 61


def test_a_directory_without_write_permission(fake_fs: FakeFilesystem) -> None:
    write_config(fake_fs, "/data/d1,/data/d2")
    fake_fs.create_dir("/data")
    fake_fs.create_dir("/data/d1", perm_bits=0o555)
    with pytest.raises(FormatFailed) as caught:
        format_dirs()
    # Linux names the file being created; pyfakefs names the directory that refused it.
    assert caught.value.message in (
        "Error while writing meta.properties file /data/d1: Permission denied: /data/d1/bootstrap.checkpoint.tmp (nothing was left in /data/d1)",
        "Error while writing meta.properties file /data/d1: Permission denied: /data/d1 (nothing was left in /data/d1)",
    )
    assert caught.value.exit_code == 1
    assert listing(Path("/data/d1")) == []
    assert not Path("/data/d2").exists()  # sorted order: d2 comes after the failure


def test_a_parent_without_write_permission(fake_fs: FakeFilesystem) -> None:
    write_config(fake_fs, "/data/d1")
    fake_fs.create_dir("/data", perm_bits=0o555)
    with pytest.raises(FormatFailed) as caught:
        format_dirs()
    assert caught.value.message == (
        "Error while writing meta.properties file /data/d1: Permission denied: /data/d1 (nothing was left in /data/d1)"
    )
    assert listing(Path("/data")) == []


def test_an_unreadable_directory_is_skipped_like_kafka(fake_fs: FakeFilesystem) -> None:
    write_config(fake_fs, "/data/d1,/data/d2")
    # (pyfakefs reports a file in a mode-000 directory as missing, so the file is unreadable instead.)
    fake_fs.create_file("/data/d1/meta.properties", contents="version=1\n", st_mode=0o100000)
    outcome = format_dirs()
    assert [(r.status.value, r.plan.error) for r in outcome.directories] == [
        ("unreadable", "Cannot read /data/d1/meta.properties: Permission denied"),
        ("formatted", None),
    ]
    assert_fully_formatted(Path("/data/d2"))


def test_an_unreadable_config_names_it(fake_fs: FakeFilesystem) -> None:
    write_config(fake_fs, "/data/d1")
    CONFIG.chmod(0o000)
    with pytest.raises(PropertiesError) as caught:
        format_dirs()
    assert caught.value.message == f"Cannot read {CONFIG}: Permission denied"


@pytest.mark.parametrize("free_bytes", range(0, 1200, 37))
def test_a_full_disk_leaves_each_directory_formatted_or_untouched(fake_fs: FakeFilesystem, free_bytes: int) -> None:
    write_config(fake_fs, "/data/d1,/data/d2,/data/d3")
    fake_fs.create_dir("/data/d2")
    fake_fs.create_file("/data/d2/unrelated.log", contents="keep me")
    fake_fs.set_disk_usage(10**9)  # start counting (pyfakefs reports 0 used before this)
    fake_fs.set_disk_usage(fake_fs.get_disk_usage().used + free_bytes)
    try:
        outcome = format_dirs()
    except FormatFailed as failure:
        outcome = failure.outcome
        assert "No space left on device" in failure.message
    states = {r.plan.path: r.status.value for r in outcome.directories}
    for name, before in (("d1", []), ("d2", ["unrelated.log"]), ("d3", [])):
        directory = Path("/data") / name
        if states[str(directory)] == "formatted":
            assert listing(directory) == sorted([BOOTSTRAP_CHECKPOINT, "meta.properties", *before])
        else:
            assert listing(directory) == before
    assert (Path("/data/d2") / "unrelated.log").read_text() == "keep me"
    # Once there is room again, --ignore-formatted completes the rest.
    fake_fs.set_disk_usage(10**9)
    format_dirs(ignore_formatted=True)
    for name in ("d1", "d3"):
        assert_fully_formatted(Path("/data") / name)


CONTROLLER = {"process.roles": "controller", "node.id": "3000", "controller.listener.names": "CONTROLLER", "listeners": "CONTROLLER://:9093"}
SNAPSHOT = "00000000000000000000-0000000000.checkpoint"


@pytest.mark.parametrize("free_bytes", range(0, 1400, 53))
def test_a_full_disk_leaves_a_4_4_controllers_directories_formatted_or_untouched(fake_fs: FakeFilesystem, free_bytes: int) -> None:
    """Kafka 4.4's layout: the metadata directory gets the bootstrap snapshot and meta.properties,
    the data directory meta.properties alone."""
    write_config(fake_fs, "/data/meta,/data/d2", CONTROLLER)
    fake_fs.set_disk_usage(10**9)
    fake_fs.set_disk_usage(fake_fs.get_disk_usage().used + free_bytes)
    try:
        outcome = format_dirs(release=KAFKA_4_4, standalone=True)
    except FormatFailed as failure:
        outcome = failure.outcome
        assert "No space left on device" in failure.message
    states = {r.plan.path: r.status.value for r in outcome.directories}
    expected = {"meta": ["__cluster_metadata-0", "meta.properties"], "d2": ["meta.properties"]}
    for name, files in expected.items():
        directory = Path("/data") / name
        assert listing(directory) == (files if states[str(directory)] == "formatted" else [])
    if states["/data/meta"] == "formatted":
        assert listing(Path("/data/meta/__cluster_metadata-0")) == [SNAPSHOT]
    fake_fs.set_disk_usage(10**9)
    format_dirs(release=KAFKA_4_4, standalone=True, ignore_formatted=True)
    assert listing(Path("/data/meta/__cluster_metadata-0")) == [SNAPSHOT]
    assert read_meta_properties(Path("/data/d2"))[1].cluster_id == CLUSTER_ID


def test_ensure_ids_on_a_full_disk_leaves_the_file_as_it_was(fake_fs: FakeFilesystem) -> None:
    write_config(fake_fs, "/data/d1")
    fake_fs.create_dir("/data/d1")
    write_meta_properties(Path("/data/d1"), MetaProperties(1, CLUSTER_ID, 1).to_properties(), DATE)
    before = Path("/data/d1/meta.properties").read_bytes()
    fake_fs.set_disk_usage(10**9)  # start counting (pyfakefs reports 0 used before this)
    fake_fs.set_disk_usage(fake_fs.get_disk_usage().used + 40)
    with pytest.raises(EnsureIdsFailed) as caught:
        ensure_directory_ids(CONFIG, rng=random.Random(1))
    assert caught.value.message.startswith("Error while writing meta.properties file /data/d1: No space left on device")
    assert Path("/data/d1/meta.properties").read_bytes() == before
    assert listing(Path("/data/d1")) == ["meta.properties"]


def test_errno_of_the_simulated_full_disk(fake_fs: FakeFilesystem) -> None:
    # Guards the tests above: pyfakefs reports a full disk as ENOSPC, as Linux does.
    fake_fs.set_disk_usage(10)
    with pytest.raises(OSError) as caught:
        fake_fs.create_file("/x", contents="more than ten bytes")
    assert caught.value.errno == errno.ENOSPC


def test_info_on_an_unreadable_meta_properties_names_it(fake_fs: FakeFilesystem) -> None:
    from kjbod.tools.storage.meta import storage_info

    write_config(fake_fs, "/data/d1")
    fake_fs.create_file("/data/d1/meta.properties", contents="version=1\n", st_mode=0o100000)
    with pytest.raises(PropertiesError) as caught:
        storage_info(CONFIG)
    assert caught.value.message == "Cannot read /data/d1/meta.properties: Permission denied"
