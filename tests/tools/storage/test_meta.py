"""`meta info` (kafka-storage info, §1.7), `meta show`, and `meta ensure-ids` (KIP-858 start-up)."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from kjbod.common.kafka_uuid import DirectoryId
from kjbod.errors import UserError
from kjbod.storage.ensemble import DirectoryState
from kjbod.storage.meta_properties import MetaProperties, read_meta_properties
from kjbod.storage.properties import read_properties
from kjbod.tools.storage.meta import EnsureIdsFailed, IdStatus, ensure_directory_ids, java_path_string, show_directories, storage_info

from tests.tools.storage.support import BROKER, CLUSTER_ID, DATE, WriteConfig, format_by_hand

ID_A = "ZNJ-ywU0nnQwRv5eRRU9ow"
ID_B = "3Ysf3XtkRKaFMEp3Xxj5DA"


# info ------------------------------------------------------------------------------------------


def test_info_of_a_healthy_node(write_config: WriteConfig, tmp_path: Path) -> None:
    config = write_config({**BROKER, "log.dirs": "{tmp}/d1/,{tmp}//d2"})
    format_by_hand(tmp_path / "d1", MetaProperties(1, CLUSTER_ID, 1, ID_A))
    format_by_hand(tmp_path / "d2", MetaProperties(1, CLUSTER_ID, 1, ID_B))
    report = storage_info(config)
    # Sorted as configured ("//d2" before "/d1/"), then printed as Paths.get(d).toString():
    # trailing slash dropped, repeated slashes collapsed. The first directory read is the reference.
    assert report.found_directories == [f"{tmp_path}/d2", f"{tmp_path}/d1"]
    assert report.metadata == MetaProperties(1, CLUSTER_ID, 1, ID_B)
    assert report.problems == []


def test_info_problems(write_config: WriteConfig, tmp_path: Path) -> None:
    dirs = ["a-ok", "b-missing", "c-file", "d-empty", "e-corrupt", "f-other-cluster", "g-other-node"]
    config = write_config({**BROKER, "log.dirs": ",".join(f"{{tmp}}/{d}" for d in dirs)})
    format_by_hand(tmp_path / "a-ok", MetaProperties(1, CLUSTER_ID, 1, ID_A))
    (tmp_path / "c-file").write_text("")
    (tmp_path / "d-empty").mkdir()
    (tmp_path / "e-corrupt").mkdir()
    (tmp_path / "e-corrupt" / "meta.properties").write_text("version=7\n")
    format_by_hand(tmp_path / "f-other-cluster", MetaProperties(1, "another", 1, ID_B))
    format_by_hand(tmp_path / "g-other-node", MetaProperties(1, CLUSTER_ID, 2, None))
    report = storage_info(config)
    assert report.found_directories == [f"{tmp_path}/{d}" for d in dirs if d not in ("b-missing", "c-file")]
    assert report.problems == [
        f"{tmp_path}/b-missing does not exist",
        f"{tmp_path}/c-file is not a directory",
        f"{tmp_path}/d-empty is not formatted.",
        f"Error loading {tmp_path}/e-corrupt/meta.properties: Unknown meta.properties version number 7",
        "Mismatched cluster IDs between storage directories.",
        "Mismatched node IDs between storage directories.",
    ]


def test_info_compares_the_config_mode_with_the_directories(write_config: WriteConfig, tmp_path: Path) -> None:
    format_by_hand(tmp_path / "d1", MetaProperties(0, CLUSTER_ID, 1, None))
    kraft = write_config({**BROKER, "log.dirs": "{tmp}/d1"})
    assert storage_info(kraft).problems == [
        (
            "The kafka configuration file appears to be for a cluster in KRaft mode, but the directories are "
            "formatted for legacy mode."
        )
    ]
    format_by_hand(tmp_path / "d1", MetaProperties(1, CLUSTER_ID, 1, None))
    legacy = write_config({"broker.id": "1", "log.dirs": "{tmp}/d1"}, name="legacy.properties")
    assert storage_info(legacy).problems == [
        (
            "The kafka configuration file appears to be for a legacy cluster, but the directories are formatted "
            "for a cluster in KRaft mode."
        )
    ]


def test_info_of_a_malformed_file_is_an_error_naming_it(write_config: WriteConfig, tmp_path: Path) -> None:
    (tmp_path / "d1").mkdir()
    (tmp_path / "d1" / "meta.properties").write_bytes(b"version=\\u00zz\n")
    with pytest.raises(UserError) as caught:
        storage_info(write_config({**BROKER, "log.dirs": "{tmp}/d1"}))
    assert caught.value.message == f"Malformed \\uxxxx encoding (\\u00zz) in {tmp_path}/d1/meta.properties"


@pytest.mark.parametrize(("raw", "shown"), [("/a//b/", "/a/b"), ("/", "/"), ("rel/x", "rel/x"), ("//", "/")])
def test_java_path_string(raw: str, shown: str) -> None:
    assert java_path_string(raw) == shown


# show ------------------------------------------------------------------------------------------


def test_show_reads_each_directory(tmp_path: Path) -> None:
    format_by_hand(tmp_path / "d1", MetaProperties(1, CLUSTER_ID, 1, ID_A))
    (tmp_path / "d2").mkdir()
    (tmp_path / "d3").write_text("")
    shown = show_directories([str(tmp_path / "d3"), str(tmp_path / "d1"), str(tmp_path / "d2")])
    assert [(d.state, d.meta, d.error) for d in shown.directories] == [
        (DirectoryState.ERROR, None, f"Cannot read {tmp_path}/d3/meta.properties: Not a directory"),
        (DirectoryState.FORMATTED, MetaProperties(1, CLUSTER_ID, 1, ID_A), None),
        (DirectoryState.EMPTY, None, None),
    ]
    assert shown.failed == 1
    assert shown.lines() == [
        f"{tmp_path}/d3: Cannot read {tmp_path}/d3/meta.properties: Not a directory",
        f"{tmp_path}/d1: {MetaProperties(1, CLUSTER_ID, 1, ID_A)}",
        f"{tmp_path}/d2: not formatted (no meta.properties)",
    ]


# ensure-ids ------------------------------------------------------------------------------------


def three_dirs(write_config: WriteConfig, tmp_path: Path) -> Path:
    return write_config({**BROKER, "log.dirs": "{tmp}/d1,{tmp}/d2,{tmp}/d3"})


def test_missing_ids_are_generated_and_other_keys_kept(write_config: WriteConfig, tmp_path: Path) -> None:
    config = three_dirs(write_config, tmp_path)
    format_by_hand(tmp_path / "d1", MetaProperties(1, CLUSTER_ID, 1, ID_A))
    before_d1 = (tmp_path / "d1" / "meta.properties").read_bytes()
    for name in ("d2", "d3"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "meta.properties").write_text(
            f"# written by an old broker\nversion=1\nnode.id=1\ncluster.id={CLUSTER_ID}\ncustom.key=kept value\n"
        )
    result = ensure_directory_ids(config, rng=random.Random(4), date=DATE)
    assert [(d.path, d.status, d.written) for d in result.directories] == [
        (f"{tmp_path}/d1", IdStatus.EXISTING, False),
        (f"{tmp_path}/d2", IdStatus.GENERATED, True),
        (f"{tmp_path}/d3", IdStatus.GENERATED, True),
    ]
    ids = [d.directory_id for d in result.directories]
    assert ids[0] == ID_A and len(set(ids)) == 3
    assert not any(DirectoryId.reserved(i) for i in ids if i)
    assert (tmp_path / "d1" / "meta.properties").read_bytes() == before_d1
    for item in result.directories[1:]:
        assert read_properties(Path(item.path) / "meta.properties") == {
            "version": "1",
            "node.id": "1",
            "cluster.id": CLUSTER_ID,
            "custom.key": "kept value",
            "directory.id": item.directory_id,
        }
        assert sorted(p.name for p in Path(item.path).iterdir()) == ["meta.properties"]
    # Idempotent: a second run finds every id and writes nothing.
    again = ensure_directory_ids(config, rng=random.Random(4))
    assert [(d.status, d.directory_id) for d in again.directories] == [(IdStatus.EXISTING, i) for i in ids]


def test_a_dry_run_writes_nothing(write_config: WriteConfig, tmp_path: Path) -> None:
    config = write_config({**BROKER, "log.dirs": "{tmp}/d1"})
    before = format_by_hand(tmp_path / "d1", MetaProperties(1, CLUSTER_ID, 1, None))
    result = ensure_directory_ids(config, dry_run=True)
    assert [(d.status, d.written) for d in result.directories] == [(IdStatus.GENERATED, False)]
    assert (tmp_path / "d1" / "meta.properties").read_bytes() == before


@pytest.mark.parametrize(
    ("metas", "message"),
    [
        (
            {"d1": MetaProperties(1, CLUSTER_ID, 1, ID_A), "d2": MetaProperties(1, CLUSTER_ID, 1, ID_A)},
            "Duplicate directory ID {a} found. It was the ID of {tmp}/d1, but also of {tmp}/d2",
        ),
        ({"d1": MetaProperties(1, CLUSTER_ID, 1, DirectoryId.LOST)}, "Invalid reserved directory ID AAAAAAAAAAAAAAAAAAAAAg found in {tmp}/d1"),
        (
            {"d1": MetaProperties(1, CLUSTER_ID, 2, None)},
            (
                "Stored node id 2 doesn't match previous node id 1 in {tmp}/d1/meta.properties. If you moved your "
                "data, make sure your configured node id matches. If you intend to create a new node, you should "
                "remove all data in your data directories."
            ),
        ),
        (
            {"d1": MetaProperties(1, CLUSTER_ID, 1, None), "d3": MetaProperties(1, "other", 1, None)},
            "Invalid cluster.id in: {tmp}/d3/meta.properties. Expected " + CLUSTER_ID + ", but read other",
        ),
        (
            {"d1": MetaProperties(1, CLUSTER_ID, 1, None)},
            "No `meta.properties` found in {tmp}/d2 (have you run `kjbod format` to format the directory?)",
        ),
        ({}, "No readable meta.properties files found."),
    ],
)
def test_ensure_ids_refusals(write_config: WriteConfig, tmp_path: Path, metas: dict, message: str) -> None:
    config = write_config({**BROKER, "log.dirs": "{tmp}/d1,{tmp}/d2" + (",{tmp}/d3" if "d3" in metas else "")})
    for name in ("d1", "d2", "d3"):
        if name in metas:
            format_by_hand(tmp_path / name, metas[name])
    if "d2" not in metas and metas:
        (tmp_path / "d2").mkdir()
    before = {p: p.read_bytes() for p in tmp_path.glob("*/meta.properties")}
    with pytest.raises(UserError) as caught:
        ensure_directory_ids(config)
    assert caught.value.message == message.format(tmp=tmp_path, a=ID_A)
    assert {p: p.read_bytes() for p in tmp_path.glob("*/meta.properties")} == before


def test_unreadable_data_directories_are_offline_but_the_metadata_directory_must_read(
    write_config: WriteConfig, tmp_path: Path
) -> None:
    config = write_config({**BROKER, "log.dirs": "{tmp}/d1,{tmp}/d2", "metadata.log.dir": "{tmp}/d1"})
    format_by_hand(tmp_path / "d1", MetaProperties(1, CLUSTER_ID, 1, None))
    (tmp_path / "d2").write_text("")
    result = ensure_directory_ids(config, rng=random.Random(1))
    assert [(d.status, d.error) for d in result.directories] == [
        (IdStatus.GENERATED, None),
        (IdStatus.OFFLINE, f"Cannot read {tmp_path}/d2/meta.properties: Not a directory"),
    ]
    swapped = write_config({**BROKER, "log.dirs": "{tmp}/d1,{tmp}/d2", "metadata.log.dir": "{tmp}/d2"}, name="s.properties")
    with pytest.raises(UserError) as caught:
        ensure_directory_ids(swapped)
    assert caught.value.message == f"Encountered I/O error in metadata log directory {tmp_path}/d2. Cannot continue."


def test_a_failed_write_keeps_earlier_ids_and_names_the_directory(
    write_config: WriteConfig, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = three_dirs(write_config, tmp_path)
    for name in ("d1", "d2", "d3"):
        format_by_hand(tmp_path / name, MetaProperties(1, CLUSTER_ID, 1, None))
    before_d2 = (tmp_path / "d2" / "meta.properties").read_bytes()
    from kjbod.tools.storage import meta

    real_write = meta.write_meta_properties

    def failing(directory: Path, props: dict, date: object = None) -> None:
        if directory.name == "d2":
            raise PermissionError(13, "Permission denied", str(directory / "meta.properties.tmp"))
        real_write(directory, props, date)

    monkeypatch.setattr(meta, "write_meta_properties", failing)
    with pytest.raises(EnsureIdsFailed) as caught:
        ensure_directory_ids(config)
    assert caught.value.message == (
        f"Error while writing meta.properties file {tmp_path}/d2: Permission denied: {tmp_path}/d2/meta.properties.tmp"
    )
    assert [d.written for d in caught.value.result.directories] == [True, False, False]
    assert read_meta_properties(tmp_path / "d1")[1].directory_id == caught.value.result.directories[0].directory_id
    assert (tmp_path / "d2" / "meta.properties").read_bytes() == before_d2
