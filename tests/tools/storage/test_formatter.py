"""`kjbod format` in the library: StorageTool's and the Formatter's rules (storage reference §1.3-§1.6)."""

from __future__ import annotations

import os
import random
from pathlib import Path

import pytest

from kjbod.common.kafka_release import KAFKA_4_3, KAFKA_4_4
from kjbod.common.kafka_uuid import DirectoryId, Uuid
from kjbod.errors import UsageError, UserError
from kjbod.records import FeatureLevelRecord
from kjbod.state import StateDirectory
from kjbod.tools.storage.formatter import (
    DirectoryAction,
    DirectoryKind,
    DirectoryStatus,
    FormatFailed,
    FormatRequest,
    plan_format,
)
from kjbod.storage.meta_properties import MetaProperties, read_meta_properties
from kjbod.tools.storage.format import format_storage

from tests.tools.storage.support import BROKER, CLUSTER_ID, CONTROLLER, DATE, WriteConfig, format_by_hand

VOTER_DIR_ID = "ZNJ-ywU0nnQwRv5eRRU9ow"


def request(config: Path, **flags: object) -> FormatRequest:
    """A format by kafka-storage 4.3 unless `release` says otherwise (4.4's layout and defaults
    have their own tests below)."""
    flags.setdefault("release", KAFKA_4_3)
    return FormatRequest(config_path=config, cluster_id=flags.pop("cluster_id", CLUSTER_ID), **flags)  # type: ignore[arg-type]


def refusal(config: Path, **flags: object) -> str:
    with pytest.raises(UserError) as caught:
        plan_format(request(config, **flags), rng=random.Random(1))
    assert caught.value.exit_code == 1
    return caught.value.message


class ScriptedRandom(random.Random):
    """Hands out the given 16-byte blocks first, so a test can force an id collision."""

    def __init__(self, blocks: list[bytes]) -> None:
        super().__init__(7)
        self.blocks = list(blocks)

    def randbytes(self, n: int) -> bytes:
        return self.blocks.pop(0) if self.blocks else super().randbytes(n)


def uuid_bytes(text: str) -> bytes:
    uuid = Uuid.from_string(text)
    return (uuid.msb & (2**64 - 1)).to_bytes(8, "big") + (uuid.lsb & (2**64 - 1)).to_bytes(8, "big")


def test_a_legacy_config_is_refused(write_config: WriteConfig) -> None:
    config = write_config({"broker.id": "1", "log.dirs": "{tmp}/d1"})
    assert refusal(config) == (
        "The kafka configuration file appears to be for a legacy cluster. "
        "Formatting is only supported for clusters in KRaft mode."
    )


def test_the_initial_controller_flags_exclude_each_other(write_config: WriteConfig) -> None:
    config = write_config(CONTROLLER)
    with pytest.raises(UsageError) as caught:
        request(config, standalone=True, no_initial_controllers=True)
    assert caught.value.exit_code == 2
    assert caught.value.message == "argument --no-initial-controllers/-N: not allowed with argument --standalone/-s"
    with pytest.raises(UsageError):
        request(config, initial_controllers="1@a:1:" + VOTER_DIR_ID, no_initial_controllers=True)


SUPPORTED_4_3 = ", ".join(mv.name for mv in KAFKA_4_3.metadata_versions[:-1])
SUPPORTED_4_4 = ", ".join(mv.name for mv in KAFKA_4_4.metadata_versions[:-1])


@pytest.mark.parametrize(
    ("release", "version", "supported"),
    [
        (KAFKA_4_3, "9.9", SUPPORTED_4_3),
        (KAFKA_4_3, "3.2", SUPPORTED_4_3),  # below the table (3.3-IV3 and later)
        (KAFKA_4_3, "4.4-IV0", SUPPORTED_4_3),  # fromVersionString(v, unstable=false): a testing version is unknown
        (KAFKA_4_3, "4.4", SUPPORTED_4_3),  # a bare release names a production IV only
        (KAFKA_4_4, "4.5-IV0", SUPPORTED_4_4),
        (KAFKA_4_4, "4.5", SUPPORTED_4_4),
    ],
)
def test_bad_release_versions(write_config: WriteConfig, release, version: str, supported: str) -> None:  # noqa: ANN001
    """StorageTool: MetadataVersion.fromVersionString(v, unstable.feature.versions.enable) (4.4.0 :135-140)."""
    message = f"Unknown metadata.version '{version}'. Supported metadata.version are: {supported}"
    assert refusal(write_config(BROKER), release_version=version, release=release) == message


def test_release_versions(write_config: WriteConfig) -> None:
    broker = write_config(BROKER)
    assert plan_format(request(broker)).metadata_version.name == "4.3-IV0"
    assert plan_format(request(broker, release_version="3.9")).metadata_version.name == "3.9-IV0"
    assert plan_format(request(broker, release_version="3.7.1")).metadata_version.name == "3.7-IV4"
    # A bare release is its newest production IV in the current table (4.0 -> 4.0-IV3).
    assert plan_format(request(broker, release_version="4.0")).metadata_version.name == "4.0-IV3"
    unstable = write_config({**BROKER, "unstable.feature.versions.enable": "true"}, name="unstable.properties")
    assert plan_format(request(unstable)).metadata_version.name == "4.4-IV0"
    assert plan_format(request(unstable, release_version="4.4-IV0")).metadata_version.name == "4.4-IV0"
    # Kafka 4.4.0: 4.4-IV2 by default, 4.5-IV0 with unstable versions.
    assert plan_format(request(broker, release=KAFKA_4_4)).metadata_version.name == "4.4-IV2"
    assert plan_format(request(broker, release=KAFKA_4_4, release_version="4.4")).metadata_version.name == "4.4-IV2"
    assert plan_format(request(unstable, release=KAFKA_4_4)).metadata_version.name == "4.5-IV0"
    # Kafka 4.x reads no inter.broker.protocol.version (a 3.x setting): the default applies.
    with_ibp = write_config({**BROKER, "inter.broker.protocol.version": "3.8"}, name="ibp.properties")
    assert plan_format(request(with_ibp)).metadata_version.name == "4.3-IV0"


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("", "No voters given."),
        (" , ", "No voters given."),  # Java's split drops the trailing empty items
        (", ,", "No @ found in dynamic voter string."),
        ("@a:1:x", "Invalid @ at beginning of dynamic voter string."),
        ("x@a:1:x", "Failed to parse node id in dynamic voter string."),
        ("-1@a:1:x", "Invalid negative node id -1 in dynamic voter string."),
        ("1@", "No hostname found after node id."),
        ("1@[::1:9093:x", "Hostname began with left bracket, but no right bracket was found."),
        ("1@host", "No colon following hostname could be found."),
        ("1@[::1]9093:x", "Port section must start with a colon."),
        ("1@host:9093", "No colon following port could be found."),
        ("1@host:port:x", "Failed to parse port in dynamic voter string."),
        ("1@host:70000:x", "Invalid port 70000 in dynamic voter string."),
        ("1@host:9093:not-a-uuid", "Failed to parse directory ID in dynamic voter string."),
        (f"1@a:1:{VOTER_DIR_ID},1@b:2:{VOTER_DIR_ID}", "Node id 1 was specified more than once."),
    ],
)
def test_initial_controllers_grammar(write_config: WriteConfig, spec: str, message: str) -> None:
    assert refusal(write_config(CONTROLLER), initial_controllers=spec) == message


def test_standalone_needs_a_controller_with_a_controller_listener(write_config: WriteConfig) -> None:
    dynamic_broker = write_config({**BROKER, "controller.quorum.voters": "", "controller.quorum.bootstrap.servers": "c:9093"}, "b.properties")
    assert refusal(dynamic_broker, standalone=True) == "You can only use --standalone on a controller."
    no_listener = write_config({**CONTROLLER, "listeners": "PLAINTEXT://:9092"}, name="c.properties")
    assert refusal(no_listener, standalone=True) == "No controller listeners found."


def test_standalone_uses_the_first_advertised_controller_listener(write_config: WriteConfig) -> None:
    config = write_config(
        {
            **CONTROLLER,
            "controller.listener.names": "CONTROLLER,SECOND",
            "listeners": "CONTROLLER://:9093,SECOND://0.0.0.0:9094",
            "advertised.listeners": "CONTROLLER://ctl-1.example.com:19093",
        }
    )
    plan = plan_format(request(config, standalone=True), rng=random.Random(3))
    (voter,) = plan.initial_controllers
    assert (voter.node_id, voter.host, voter.port) == (3000, "ctl-1.example.com", 19093)
    assert not DirectoryId.reserved(voter.directory_id)
    (metadata_dir,) = plan.directories
    assert (metadata_dir.kind, metadata_dir.directory_id) == (DirectoryKind.DYNAMIC_METADATA_VOTER, voter.directory_id)
    # No host means localhost; an IPv6 host is bracketed so that it parses (Kafka's does not).
    assert plan_format(request(write_config(CONTROLLER, name="l.properties"), standalone=True)).initial_controllers[0].host == "localhost"
    ipv6 = write_config({**CONTROLLER, "listeners": "CONTROLLER://[::1]:9093"}, name="v6.properties")
    assert plan_format(request(ipv6, standalone=True)).initial_controllers[0].host == "::1"


def test_a_controller_without_static_voters_must_choose(write_config: WriteConfig) -> None:
    controller = write_config(CONTROLLER)
    assert refusal(controller) == (
        "Because controller.quorum.voters is not set on this controller, you must specify one of the "
        "following: --standalone, --initial-controllers, or --no-initial-controllers."
    )
    assert plan_format(request(controller, no_initial_controllers=True)).initial_controllers == ()
    static = write_config({**CONTROLLER, "controller.quorum.voters": "3000@localhost:9093"}, name="s.properties")
    assert plan_format(request(static)).directories[0].kind is DirectoryKind.METADATA
    # Brokers skip the check.
    broker = write_config({**BROKER, "controller.quorum.voters": ""}, name="b.properties")
    assert plan_format(request(broker)).config.is_controller is False


def test_a_negative_node_id_is_refused(write_config: WriteConfig) -> None:
    config = write_config({k: v for k, v in BROKER.items() if k != "node.id"})
    assert refusal(config) == f"You must specify a valid non-negative node ID. (node.id in {config})"


def test_config_values_kjbod_reads_are_checked(write_config: WriteConfig) -> None:
    bad_id = write_config({**BROKER, "node.id": "one"}, name="a.properties")
    assert refusal(bad_id) == f"Invalid value one for configuration node.id: Not a number of type INT (in {bad_id})"
    bad_role = write_config({**BROKER, "process.roles": "broker,zookeeper"}, name="b.properties")
    assert refusal(bad_role) == (
        f"Unknown process role 'zookeeper' (only 'broker' and 'controller' are allowed roles) (in {bad_role})"
    )
    bad_flag = write_config({**BROKER, "unstable.feature.versions.enable": "yes"}, name="c.properties")
    assert refusal(bad_flag) == (
        f"Invalid value yes for configuration unstable.feature.versions.enable: "
        f"Expected value to be either true or false (in {bad_flag})"
    )
    no_dirs = write_config({**BROKER, "log.dirs": " , "}, name="d.properties")
    assert refusal(no_dirs) == f"At least one log directory must be defined via log.dirs or log.dir. (in {no_dirs})"
    missing = write_config(BROKER).with_name("missing.properties")
    assert refusal(missing) == f"Cannot read {missing}: No such file or directory"


def test_paths_and_text_that_no_file_system_or_record_can_take_are_refused(write_config: WriteConfig) -> None:
    """Issue 20: a NUL in log.dirs was an internal error ("embedded null byte"); so was a lone
    UTF-16 surrogate, which a \\uXXXX escape makes, in a path or in text kjbod stores."""
    cases = [
        ("log.dirs", "/x/d\0x", "Invalid value /x/d\\x00x for configuration log.dirs: a directory path cannot contain a NUL character"),
        ("metadata.log.dir", "/m\0", "Invalid value /m\\x00 for configuration metadata.log.dir: a directory path cannot contain a NUL character"),
        ("log.dirs", "/x/\\ud800", "Invalid value /x/\\ud800 for configuration log.dirs: '\\ud800' is half of a UTF-16 surrogate pair, not a character"),
        ("listeners", "PLAINTEXT://\\udc00:9092", "Invalid value PLAINTEXT://\\udc00:9092 for configuration listeners: '\\udc00' is half of a UTF-16 "
         "surrogate pair, not a character"),
    ]  # fmt: skip
    for index, (key, value, message) in enumerate(cases):
        config = write_config({**BROKER, key: value}, name=f"{index}.properties")
        assert refusal(config) == f"{message} (in {config})"


@pytest.mark.parametrize(
    ("features", "flags", "message"),
    [
        (["group.version"], {}, "Can't parse feature=level string group.version: equals sign not found."),
        (["group.version=x"], {}, "Can't parse feature=level string group.version=x: unable to parse x as a short."),
        (["group.version=40000"], {}, "Can't parse feature=level string group.version=40000: unable to parse 40000 as a short."),
        (["metadata.version=20"], {"release_version": "3.9"}, "Use --release-version instead of --feature metadata.version=X to avoid ambiguity."),
        (["metadata.version=5"], {}, "No MetadataVersion with feature level 5. Valid feature levels are from 7 to 31."),
        (["metadata.version=33"], {}, "No MetadataVersion with feature level 33. Valid feature levels are from 7 to 31."),
        (["metadata.version=31"], {}, "metadata.version 4.4-IV0 is not yet stable."),
        (["metadata.version=34"], {"release": KAFKA_4_4}, "metadata.version 4.5-IV0 is not yet stable."),
        (
            ["non.existent.feature=1"],
            {},
            "Unsupported feature: non.existent.feature. Supported features are: eligible.leader.replicas.version, group.version, "
            "kraft.version, share.version, streams.version, transaction.version",
        ),
        (
            ["kraft.version=1"],
            {},
            "Cannot set kraft.version to 1 unless controller.quorum.voters is empty and one of the flags --standalone, "
            "--initial-controllers, or --no-initial-controllers is used. For dynamic controllers support, try using one of "
            "--standalone, --initial-controllers, or --no-initial-controllers and removing controller.quorum.voters.",
        ),
        (["share.version=2"], {}, "No feature:share.version with feature level 2"),
        (["share.version=2"], {"release": KAFKA_4_4, "release_version": "4.3"}, None),
        (["eligible.leader.replicas.version=1"], {"release_version": "4.0-IV0"},
         "eligible.leader.replicas.version could not be set to 1 because it depends on metadata.version level 23"),
        (["group.version=2"], {}, "No feature:group.version with feature level 2"),
        (["transaction.version=-1"], {}, "No feature:transaction.version with feature level -1"),
    ],
)
def test_feature_flag_refusals(write_config: WriteConfig, features: list[str], flags: dict, message: str | None) -> None:
    if message is None:
        plan_format(request(write_config(BROKER), features=features, **flags))  # accepted
    else:
        assert refusal(write_config(BROKER), features=features, **flags) == message


@pytest.mark.parametrize(
    ("features", "flags", "message"),
    [
        (
            ["kraft.version=0"],
            {"standalone": True},
            "Cannot set kraft.version to 0 if controller.quorum.voters is empty and one of the flags --standalone, "
            "--initial-controllers, or --no-initial-controllers is used. For dynamic controllers support, try removing the "
            "--feature flag for kraft.version.",
        ),
        (
            ["kraft.version=0"],
            {"no_initial_controllers": True},
            "Cannot set kraft.version to 0 if controller.quorum.voters is empty and one of the flags --standalone, "
            "--initial-controllers, or --no-initial-controllers is used. For dynamic controllers support, try removing the "
            "--feature flag for kraft.version.",
        ),
        (["kraft.version=999"], {"standalone": True}, "No feature:kraft.version with feature level 999"),
    ],
)
def test_kraft_version_rules(write_config: WriteConfig, features: list[str], flags: dict, message: str) -> None:
    assert refusal(write_config(CONTROLLER), features=features, **flags) == message


def test_kraft_version_is_1_whenever_controller_quorum_voters_is_empty(write_config: WriteConfig) -> None:
    """hasDynamicQuorum = controller.quorum.voters is empty (4.4.0 StorageTool :150-151), at any
    release: KRaftVersion 1 depends on nothing."""
    controller = write_config(CONTROLLER)
    assert plan_format(request(controller, standalone=True, release_version="3.8-IV0")).feature_levels["kraft.version"] == 1
    assert plan_format(request(controller, no_initial_controllers=True)).feature_levels["kraft.version"] == 1
    broker = write_config({**BROKER, "controller.quorum.voters": "", "controller.quorum.bootstrap.servers": "c:9093"}, "b.properties")
    assert plan_format(request(broker)).feature_levels["kraft.version"] == 1
    assert plan_format(request(write_config(BROKER, "s.properties"))).feature_levels["kraft.version"] == 0


def test_static_voters_and_initial_controllers_exclude_each_other(write_config: WriteConfig) -> None:
    static = write_config({**CONTROLLER, "controller.quorum.voters": "3000@localhost:9093"})
    message = ("You cannot specify controller.quorum.voters and format the node with --initial-controllers or --standalone. If you "
               "want to use dynamic quorum, please remove controller.quorum.voters and specify controller.quorum.bootstrap.servers instead.")
    assert refusal(static, standalone=True) == message
    assert refusal(static, initial_controllers=f"3000@c:9093:{VOTER_DIR_ID}") == message


def test_feature_levels_and_bootstrap_records(write_config: WriteConfig) -> None:
    broker = write_config(BROKER)
    default = plan_format(request(broker))
    assert default.feature_levels == {"eligible.leader.replicas.version": 1, "group.version": 1, "kraft.version": 0, "metadata.version": 30,
                                      "share.version": 1, "streams.version": 1, "transaction.version": 2}
    # metadata.version first, then the others by name; kraft.version and level 0 never.
    assert default.records == (
        FeatureLevelRecord(name="metadata.version", feature_level=30),
        FeatureLevelRecord(name="eligible.leader.replicas.version", feature_level=1),
        FeatureLevelRecord(name="group.version", feature_level=1),
        FeatureLevelRecord(name="share.version", feature_level=1),
        FeatureLevelRecord(name="streams.version", feature_level=1),
        FeatureLevelRecord(name="transaction.version", feature_level=2),
    )
    newest = plan_format(request(broker, release=KAFKA_4_4))
    assert [(r.name, r.feature_level) for r in newest.records] == [
        ("metadata.version", 33), ("eligible.leader.replicas.version", 1), ("group.version", 1), ("share.version", 2),
        ("streams.version", 1), ("transaction.version", 2)]
    old = plan_format(request(broker, release_version="3.9"))
    assert old.records == (FeatureLevelRecord(name="metadata.version", feature_level=21),)
    # --feature: split at the first '=', trimmed, later duplicates win.
    chosen = plan_format(request(broker, features=[" group.version = 1", "transaction.version=1", "transaction.version= 0 "], release_version="4.0"))
    assert chosen.feature_levels == {"eligible.leader.replicas.version": 0, "group.version": 1, "kraft.version": 0, "metadata.version": 25,
                                     "share.version": 0, "streams.version": 0, "transaction.version": 0}
    by_level = plan_format(request(broker, features=["metadata.version=20"]))
    assert (by_level.metadata_version.name, by_level.records) == ("3.8-IV0", (FeatureLevelRecord(name="metadata.version", feature_level=20),))
    dynamic = plan_format(request(write_config(CONTROLLER, name="c.properties"), standalone=True))
    assert dynamic.feature_levels["kraft.version"] == 1
    assert [r.name for r in dynamic.records] == ["metadata.version", "eligible.leader.replicas.version", "group.version", "share.version",
                                                  "streams.version", "transaction.version"]


def test_directories_come_from_log_dirs_and_the_metadata_log_dir(write_config: WriteConfig, tmp_path: Path) -> None:
    config = write_config({**BROKER, "log.dirs": "{tmp}/d2 , {tmp}/d1,{tmp}/d2", "metadata.log.dir": "{tmp}/m"})
    plan = plan_format(request(config), rng=random.Random(1))
    assert [(d.path, d.kind) for d in plan.directories] == [
        (f"{tmp_path}/d1", DirectoryKind.DATA),
        (f"{tmp_path}/d2", DirectoryKind.DATA),
        (f"{tmp_path}/m", DirectoryKind.METADATA),
    ]
    # Without metadata.log.dir the first log dir (in config order) holds the metadata.
    first = plan_format(request(write_config(BROKER, name="b.properties")))
    assert [(d.path, d.kind) for d in first.directories] == [
        (f"{tmp_path}/d1", DirectoryKind.DATA),
        (f"{tmp_path}/d2", DirectoryKind.METADATA),
    ]
    single = write_config({**BROKER, "log.dirs": "", "log.dir": "{tmp}/only"}, name="c.properties")
    assert refusal(single) == f"At least one log directory must be defined via log.dirs or log.dir. (in {single})"
    fallback = write_config({k: v for k, v in BROKER.items() if k != "log.dirs"} | {"log.dir": "{tmp}/only"}, name="e.properties")
    assert [d.path for d in plan_format(request(fallback)).directories] == [f"{tmp_path}/only"]


def test_dynamic_directory_types(write_config: WriteConfig, tmp_path: Path) -> None:
    config = write_config({**CONTROLLER, "log.dirs": "{tmp}/meta,{tmp}/data"})
    voters = f"3000@c1:9093:{VOTER_DIR_ID},3001@c2:9093:AAAAAAAAAAAAAAAAAAAAZA"
    plan = plan_format(request(config, initial_controllers=voters), rng=random.Random(1))
    assert [(d.path, d.kind, d.directory_id == VOTER_DIR_ID) for d in plan.directories] == [
        (f"{tmp_path}/data", DirectoryKind.DATA, False),
        (f"{tmp_path}/meta", DirectoryKind.DYNAMIC_METADATA_VOTER, True),
    ]
    observer = plan_format(request(config, initial_controllers=f"3001@c2:9093:{VOTER_DIR_ID}"))
    assert observer.directories[1].kind is DirectoryKind.DYNAMIC_METADATA


def test_new_directory_ids_are_random_valid_and_distinct(write_config: WriteConfig, tmp_path: Path) -> None:
    dirs = ",".join(f"{{tmp}}/d{i}" for i in range(40))
    config = write_config({**BROKER, "log.dirs": dirs})
    ids = [d.directory_id for d in plan_format(request(config), rng=random.Random(5)).directories]
    assert len(set(ids)) == 40
    assert not any(DirectoryId.reserved(i) or i.startswith("-") for i in ids if i)
    # The RNG is injected: the same seed gives the same ids, another seed others.
    assert ids == [d.directory_id for d in plan_format(request(config), rng=random.Random(5)).directories]
    assert ids != [d.directory_id for d in plan_format(request(config), rng=random.Random(6)).directories]


def test_an_id_already_held_or_just_assigned_is_never_reused(write_config: WriteConfig, tmp_path: Path) -> None:
    existing = str(Uuid.random(random.Random(11)))
    format_by_hand(tmp_path / "d0", MetaProperties(1, CLUSTER_ID, 1, existing))
    config = write_config({**BROKER, "log.dirs": "{tmp}/d0,{tmp}/d1,{tmp}/d2"})
    fresh = str(Uuid.random(random.Random(12)))
    # The RNG first offers the held id, then `fresh` twice: d1 must get `fresh`, d2 something else.
    rng = ScriptedRandom([uuid_bytes(existing), uuid_bytes(fresh), uuid_bytes(fresh)])
    plan = plan_format(request(config, ignore_formatted=True), rng=rng)
    assert [d.directory_id for d in plan.directories][:2] == [existing, fresh]
    assert plan.directories[2].directory_id not in (existing, fresh)


def test_a_voter_directory_id_that_cannot_work_is_refused(write_config: WriteConfig, tmp_path: Path) -> None:
    config = write_config({**CONTROLLER, "log.dirs": "{tmp}/meta,{tmp}/data"})
    assert refusal(config, initial_controllers="3000@c:9093:AAAAAAAAAAAAAAAAAAAAAg") == (
        "Invalid reserved directory ID AAAAAAAAAAAAAAAAAAAAAg given for node 3000 in --initial-controllers"
    )
    format_by_hand(tmp_path / "data", MetaProperties(1, CLUSTER_ID, 3000, VOTER_DIR_ID))
    assert refusal(config, initial_controllers=f"3000@c:9093:{VOTER_DIR_ID}", ignore_formatted=True) == (
        f"The directory ID {VOTER_DIR_ID} given for node 3000 in --initial-controllers "
        "is already the ID of another directory of this node"
    )


def test_formatted_directories_are_checked_before_ignore_formatted(write_config: WriteConfig, tmp_path: Path) -> None:
    config = write_config(BROKER)
    format_by_hand(tmp_path / "d1", MetaProperties(1, "OtherClusterIdAAAAAAAA", 1, VOTER_DIR_ID))
    assert refusal(config, ignore_formatted=True) == (
        f"Invalid cluster.id in: {tmp_path}/d1/meta.properties. Expected {CLUSTER_ID}, but read OtherClusterIdAAAAAAAA"
    )
    format_by_hand(tmp_path / "d1", MetaProperties(1, CLUSTER_ID, 2, VOTER_DIR_ID))
    assert refusal(config, ignore_formatted=True) == (
        f"Stored node id 2 doesn't match previous node id 1 in {tmp_path}/d1/meta.properties. If you moved your "
        "data, make sure your configured node id matches. If you intend to create a new node, you should remove all "
        "data in your data directories."
    )
    format_by_hand(tmp_path / "d1", MetaProperties(1, CLUSTER_ID, 1, "AAAAAAAAAAAAAAAAAAAAYw"))
    assert refusal(config, ignore_formatted=True) == (
        f"Invalid reserved directory ID AAAAAAAAAAAAAAAAAAAAYw found in {tmp_path}/d1"
    )
    format_by_hand(tmp_path / "d1", MetaProperties(1, CLUSTER_ID, 1, VOTER_DIR_ID))
    format_by_hand(tmp_path / "d2", MetaProperties(1, CLUSTER_ID, 1, VOTER_DIR_ID))
    assert refusal(config, ignore_formatted=True) == (
        f"Duplicate directory ID {VOTER_DIR_ID} found. It was the ID of {tmp_path}/d1, but also of {tmp_path}/d2"
    )


def test_a_formatted_directory_needs_ignore_formatted(write_config: WriteConfig, tmp_path: Path) -> None:
    config = write_config(BROKER)
    format_by_hand(tmp_path / "d2", MetaProperties(1, CLUSTER_ID, 1, VOTER_DIR_ID))
    assert refusal(config) == (
        f"Log directory {tmp_path}/d2 is already formatted. "
        "Use --ignore-formatted to ignore this directory and format the others."
    )
    plan = plan_format(request(config, ignore_formatted=True))
    assert [d.action for d in plan.directories] == [DirectoryAction.FORMAT, DirectoryAction.ALREADY_FORMATTED]


def test_unreadable_directories_are_skipped_unless_nothing_is_left(write_config: WriteConfig, tmp_path: Path) -> None:
    (tmp_path / "d1").write_text("a file where a directory should be")
    plan = plan_format(request(write_config(BROKER)))
    assert [(d.action, d.error) for d in plan.directories] == [
        (DirectoryAction.UNREADABLE, f"Cannot read {tmp_path}/d1/meta.properties: Not a directory"),
        (DirectoryAction.FORMAT, None),
    ]
    only = write_config({**BROKER, "log.dirs": "{tmp}/d1"}, name="only.properties")
    assert refusal(only) == "No available log directories to format."
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "meta.properties").write_text("version=1\n")
    corrupt = write_config({**BROKER, "log.dirs": "{tmp}/bad,{tmp}/d3"}, name="corrupt.properties")
    assert plan_format(request(corrupt)).directories[0].error == f"Error loading {tmp_path}/bad/meta.properties: Failed to find node.id"


def run(config: Path, state: Path, *, dry_run: bool = False, seed: int = 1, **flags: object):  # type: ignore[no-untyped-def]
    return format_storage(request(config, **flags), StateDirectory(state), dry_run=dry_run, rng=random.Random(seed), date=DATE)


def test_formatted_directories_are_never_modified(write_config: WriteConfig, tmp_path: Path) -> None:
    config = write_config(BROKER)
    before = format_by_hand(tmp_path / "d1", MetaProperties(1, CLUSTER_ID, 1, None))
    os.utime(tmp_path / "d1" / "meta.properties", (1_000_000, 1_000_000))
    outcome = run(config, tmp_path / "state", ignore_formatted=True)
    assert [r.status for r in outcome.directories] == [DirectoryStatus.ALREADY_FORMATTED, DirectoryStatus.FORMATTED]
    assert (tmp_path / "d1" / "meta.properties").read_bytes() == before
    assert (tmp_path / "d1" / "meta.properties").stat().st_mtime == 1_000_000
    assert sorted(p.name for p in (tmp_path / "d1").iterdir()) == ["meta.properties"]
    assert run(config, tmp_path / "state", ignore_formatted=True).plan.all_formatted


def test_a_failure_part_way_keeps_earlier_directories_and_leaves_the_failed_one_untouched(
    write_config: WriteConfig, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = write_config({**BROKER, "log.dirs": "{tmp}/a1,{tmp}/b/new/d2,{tmp}/c3"})
    from kjbod.tools.storage import formatter

    real_write = formatter.write_meta_properties

    def full_disk_on_d2(directory: Path, props: dict, date: object = None) -> None:
        if directory.name == "d2":
            raise OSError(28, "No space left on device", str(directory / "meta.properties.tmp"))
        real_write(directory, props, date)

    monkeypatch.setattr(formatter, "write_meta_properties", full_disk_on_d2)
    with pytest.raises(FormatFailed) as caught:
        run(config, tmp_path / "state")
    assert caught.value.message == (
        f"Error while writing meta.properties file {tmp_path}/b/new/d2: No space left on device: "
        f"{tmp_path}/b/new/d2/meta.properties.tmp (nothing was left in {tmp_path}/b/new/d2; {tmp_path}/a1 stays formatted)"
    )
    assert [r.status for r in caught.value.outcome.directories] == [
        DirectoryStatus.FORMATTED,
        DirectoryStatus.FAILED,
        DirectoryStatus.NOT_ATTEMPTED,
    ]
    assert read_meta_properties(tmp_path / "a1")[1].cluster_id == CLUSTER_ID
    assert not (tmp_path / "b").exists()  # the directories created for d2 are gone again
    assert not (tmp_path / "c3").exists()
    monkeypatch.setattr(formatter, "write_meta_properties", real_write)
    done = run(config, tmp_path / "state", ignore_formatted=True)
    assert [r.status for r in done.directories] == [
        DirectoryStatus.ALREADY_FORMATTED,
        DirectoryStatus.FORMATTED,
        DirectoryStatus.FORMATTED,
    ]


def test_the_ibp_setting_is_not_a_release_version(write_config: WriteConfig) -> None:
    """Kafka 4.x's StorageTool reads only --release-version (4.4.0 StorageTool :135-140)."""
    with_ibp = write_config({**BROKER, "inter.broker.protocol.version": "2.8"})
    assert plan_format(request(with_ibp, features=["metadata.version=20"])).metadata_version.name == "3.8-IV0"


# The KIP-853 bootstrap snapshot -------------------------------------------------------------------

KAFKA_FORMAT = Path(__file__).parents[2] / "fixtures" / "kafka" / "format-initial"


def test_initial_controllers_get_the_bootstrap_snapshot_kafkas_formatter_writes(write_config: WriteConfig, tmp_path: Path) -> None:
    """The same config and flags as the Kafka-written fixture: the same voter set, and the same
    bytes once Kafka's clock readings are replayed."""
    from kjbod.kafka_formats import kraft_snapshot

    settings = dict(line.split("=", 1) for line in (KAFKA_FORMAT / "server.properties").read_text().splitlines())
    config = write_config({**settings, "log.dirs": "{tmp}/meta"})
    spec = "1@localhost:9093:Zx8pTf1mR0uD2b3c4e5f6g,2@[2001:db8::7]:9094:Bb8pTf1mR0uD2b3c4e5f6g,17@c17.example:9095:Cb8pTf1mR0uD2b3c4e5f6g"
    run(config, tmp_path / "state", release_version="3.9-IV0", initial_controllers=spec)
    name = "__cluster_metadata-0/00000000000000000000-0000000000.checkpoint"
    kafka = kraft_snapshot.read_kraft_snapshot(KAFKA_FORMAT / "meta" / name)
    ours = kraft_snapshot.read_kraft_snapshot(tmp_path / "meta" / name)
    assert ours.voters == kafka.voters  # ids 1, 17, 2; the IPv6 host as Java prints it
    assert (ours.kraft_version, ours.last_contained_log_timestamp) == (1, int(DATE.timestamp() * 1000))
    readings = iter([kafka.last_contained_log_timestamp] + [b.base_timestamp for b in kafka.batches])
    assert kraft_snapshot.write_bootstrap_snapshot(
        tmp_path / "again", list(ours.voters or ()), kraft_version=1, timestamp_ms=lambda: next(readings)
    ).read_bytes() == (KAFKA_FORMAT / "meta" / name).read_bytes()


def test_only_a_dynamic_metadata_directory_gets_the_snapshot(write_config: WriteConfig, tmp_path: Path) -> None:
    config = write_config({**CONTROLLER, "metadata.log.dir": "{tmp}/meta", "log.dirs": "{tmp}/data"})
    run(config, tmp_path / "state", initial_controllers=f"3001@c2:9093:{VOTER_DIR_ID}", release_version="3.9")  # an observer
    assert (tmp_path / "meta" / "__cluster_metadata-0").is_dir()
    assert not (tmp_path / "data" / "__cluster_metadata-0").exists()
    static = write_config({**CONTROLLER, "controller.quorum.voters": "3000@localhost:9093", "log.dirs": "{tmp}/static"}, "s.properties")
    run(static, tmp_path / "state2")
    assert not (tmp_path / "static" / "__cluster_metadata-0").exists()


def test_a_failure_after_the_snapshot_removes_it_too(write_config: WriteConfig, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from kjbod.tools.storage import formatter

    def full_disk(directory: Path, props: dict, date: object = None) -> None:
        raise OSError(28, "No space left on device", str(directory / "meta.properties.tmp"))

    monkeypatch.setattr(formatter, "write_meta_properties", full_disk)
    config = write_config(CONTROLLER)
    with pytest.raises(FormatFailed):
        run(config, tmp_path / "state", standalone=True)
    assert not (tmp_path / "meta").exists()


def test_voters_need_a_controller_listener_name(write_config: WriteConfig) -> None:
    config = write_config({**CONTROLLER, "controller.listener.names": ""})
    assert refusal(config, initial_controllers=f"3001@c2:9093:{VOTER_DIR_ID}") == (
        "controller.listener.names must contain at least one value when running KRaft with just the broker role"
    )


@pytest.mark.parametrize(
    ("host", "java"),
    [("localhost", "localhost"), ("10.0.0.1", "10.0.0.1"), ("::1", "0:0:0:0:0:0:0:1"), ("2001:DB8::7", "2001:db8:0:0:0:0:0:7"),
     ("::ffff:10.1.2.3", "10.1.2.3"), ("c1.example", "c1.example")],
)
def test_voter_hosts_as_java_prints_them(host: str, java: str) -> None:
    from kjbod.tools.storage.voters import java_host_string

    assert java_host_string(host) == java
