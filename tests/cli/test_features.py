"""`kjbod features`: kafka-features' lines, streams and exit codes (storage reference §5-§6)."""

from __future__ import annotations

from kjbod.records import CONFIG_RESOURCE_BROKER

import json
from pathlib import Path

import pytest

from kjbod.common.kafka_uuid import DirectoryId
from kjbod.records import BrokerFeature, FeatureLevelRecord, RegisterBrokerRecord
from kjbod.state.cluster_state import ClusterState, read_image

from ..conftest import Cli

INCARNATION = "O7xvrxGUTwyKxRtVqYj9qA"
PREFIX = "The update failed for all features since the following feature had an error: "
# What a broker of each release registers (BrokerFeatures.defaultSupportedFeatures).
RANGES_4_2 = {"metadata.version": (7, 29), "kraft.version": (0, 1), "transaction.version": (0, 2), "group.version": (0, 1),
              "eligible.leader.replicas.version": (0, 1), "share.version": (0, 1), "streams.version": (0, 1)}
RANGES_4_3 = {**RANGES_4_2, "metadata.version": (7, 30)}
DIRECTORIES = {broker_id: DirectoryId.random() for broker_id in (1, 2, 3)}


def register(state: Path, broker_id: int, ranges: dict[str, tuple[int, int]], epoch: int) -> None:
    """A broker (re-)registers with the supported ranges of its binaries."""
    record = RegisterBrokerRecord(
        version=3,
        broker_id=broker_id,
        incarnation_id=INCARNATION,
        broker_epoch=epoch,
        fenced=False,
        features=tuple(BrokerFeature(name=n, min_supported_version=lo, max_supported_version=hi) for n, (lo, hi) in ranges.items()),
        log_dirs=(DIRECTORIES[broker_id],),
    )
    with ClusterState.open(state, write=True) as opened:
        opened.commit([record])


def finalize(state: Path, **levels: int) -> None:
    with ClusterState.open(state, write=True) as opened:
        opened.commit([FeatureLevelRecord(name=name.replace("_", "."), feature_level=level) for name, level in levels.items()])


@pytest.fixture
def cluster_4_2(state_dir: Path) -> Path:
    """A 4.2 cluster (offsets 0-2) with three brokers still running 4.2 binaries (offsets 3-5)."""
    finalize(state_dir, metadata_version=29, kraft_version=1, group_version=1)
    for broker_id in (1, 2, 3):
        register(state_dir, broker_id, RANGES_4_2, epoch=10 + broker_id)
    return state_dir


def describe_lines(mv: str, epoch: str, **levels: int) -> str:
    """Kafka 4.3+'s padded columns (FeatureCommand.java:251 of 4.3.1 and 4.4.0), as a 4.4 controller
    supports them; `levels` are the finalized levels of the other features (0 when not given)."""
    level = {name.replace("_", "."): value for name, value in levels.items()}.get
    rows = [("eligible.leader.replicas.version", "0", "1", level("eligible.leader.replicas.version", 0)),
            ("group.version", "0", "1", level("group.version", 0)), ("kraft.version", "0", "1", level("kraft.version", 0)),
            ("metadata.version", "3.3-IV3", "4.4-IV2", mv), ("share.version", "0", "2", level("share.version", 0)),
            ("streams.version", "0", "1", level("streams.version", 0)), ("transaction.version", "0", "2", level("transaction.version", 0))]
    return "".join(
        f"Feature: {name:<40}  SupportedMinVersion: {low:<15}  SupportedMaxVersion: {high:<15}  FinalizedVersionLevel: {str(level):<15}  Epoch: {epoch}\n"
        for name, low, high, level in rows
    )


def lines_for(template: str, levels: dict[str, int], message: str = "") -> str:
    return "".join(template.format(name=name, level=level) + message + "\n" for name, level in sorted(levels.items()))


RELEASE_4_3 = {"metadata.version": 30, "kraft.version": 1, "transaction.version": 2, "group.version": 1,
               "eligible.leader.replicas.version": 1, "share.version": 1, "streams.version": 1}
RELEASE_4_2 = {**RELEASE_4_3, "metadata.version": 29}


# describe ----------------------------------------------------------------------------------


def test_describe_an_empty_state(cli: Cli) -> None:
    result = cli("features", "describe")
    assert (result.exit_code, result.stderr) == (0, "")
    assert result.stdout == describe_lines("UNKNOWN 0", "-")


def test_describe_prints_one_tab_separated_line_per_supported_feature(cli: Cli, cluster_4_2: Path) -> None:
    assert cli("features", "describe").stdout == describe_lines("4.2-IV1", "5", kraft_version=1, group_version=1)


def test_describe_as_json(cli: Cli, cluster_4_2: Path) -> None:
    result = cli("-o", "json", "features", "describe")
    assert json.loads(result.stdout) == {
        "epoch": 5,
        "metadataVersion": "4.2-IV1",
        "features": [
            {"name": "eligible.leader.replicas.version", "supportedMinVersion": 0, "supportedMaxVersion": 1, "finalizedVersionLevel": 0},
            {"name": "group.version", "supportedMinVersion": 0, "supportedMaxVersion": 1, "finalizedVersionLevel": 1},
            {"name": "kraft.version", "supportedMinVersion": 0, "supportedMaxVersion": 1, "finalizedVersionLevel": 1},
            {"name": "metadata.version", "supportedMinVersion": 7, "supportedMaxVersion": 33, "finalizedVersionLevel": 29},
            {"name": "share.version", "supportedMinVersion": 0, "supportedMaxVersion": 2, "finalizedVersionLevel": 0},
            {"name": "streams.version", "supportedMinVersion": 0, "supportedMaxVersion": 1, "finalizedVersionLevel": 0},
            {"name": "transaction.version", "supportedMinVersion": 0, "supportedMaxVersion": 2, "finalizedVersionLevel": 0},
        ],
    }


def test_describe_a_node_shows_what_it_registered(cli: Cli, cluster_4_2: Path) -> None:
    """--node-id: the node the request goes to; here the supported ranges it registered."""
    lines = cli("features", "describe", "--node-id", "2").stdout.splitlines()
    assert [line.split("SupportedMaxVersion: ")[1].split()[0] for line in lines] == ["1", "1", "1", "4.2-IV1", "1", "1", "2"]
    negative = cli("features", "describe", "--node-id", "-1")
    assert (negative.exit_code, negative.stderr) == (1, "Invalid node id -1: must be non-negative.\n")
    unknown = cli("features", "describe", "--node-id", "9")
    assert unknown.exit_code == 1 and unknown.stderr.startswith("Node 9 is not registered in the cluster state")


# The rolling upgrade -------------------------------------------------------------------------


def test_brokers_on_old_binaries_block_the_upgrade_and_are_named(cli: Cli, cluster_4_2: Path) -> None:
    result = cli("features", "upgrade", "--release-version", "4.3")
    message = PREFIX + "Invalid update version 30 for feature metadata.version. Broker 1 only supports versions 7-29"
    assert result.exit_code == 1
    assert result.stdout == lines_for("Could not upgrade {name} to {level}. ", RELEASE_4_3, message)
    assert result.stderr == "7 out of 7 operation(s) failed.\n"
    assert read_image(cluster_4_2).offset == 5  # nothing written


def test_the_upgrade_passes_once_every_broker_reregistered_with_the_new_range(cli: Cli, cluster_4_2: Path) -> None:
    register(cluster_4_2, 1, RANGES_4_3, epoch=21)
    register(cluster_4_2, 2, RANGES_4_3, epoch=22)
    still = cli("features", "upgrade", "--release-version", "4.3", "--dry-run")
    message = PREFIX + "Invalid update version 30 for feature metadata.version. Broker 3 only supports versions 7-29"
    assert (still.exit_code, still.stdout, still.stderr) == (
        1, lines_for("Can not upgrade {name} to {level}. ", RELEASE_4_3, message), "7 out of 7 operation(s) failed.\n"
    )
    register(cluster_4_2, 3, RANGES_4_3, epoch=23)

    dry = cli("features", "upgrade", "--release-version", "4.3", "--dry-run")
    assert (dry.exit_code, dry.stdout, dry.stderr) == (0, lines_for("{name} can be upgraded to {level}.", RELEASE_4_3), "")
    assert read_image(cluster_4_2).offset == 8  # a dry run writes nothing

    done = cli("features", "upgrade", "--release-version", "4.3")
    assert (done.exit_code, done.stdout, done.stderr) == (0, lines_for("{name} was upgraded to {level}.", RELEASE_4_3), "")
    # Enabling ELR wrote the cluster-level min.insync.replicas first (CfgCM 4.4.0 :705-770): 16 = 8 + that + 7 features.
    assert read_image(cluster_4_2).configs.get(CONFIG_RESOURCE_BROKER, "") == {"min.insync.replicas": "1"}
    assert cli("features", "describe").stdout == describe_lines("4.3-IV0", "16", kraft_version=1, transaction_version=2, group_version=1, eligible_leader_replicas_version=1, share_version=1, streams_version=1)

    back = cli("features", "downgrade", "--release-version", "4.2")
    refusal = PREFIX + (
        "Unsupported metadata.version downgrade from 30 to 29. Refusing to perform the requested downgrade because it might delete metadata information."
    )
    assert (back.exit_code, back.stdout, back.stderr) == (
        1, lines_for("Could not downgrade {name} to {level}. ", RELEASE_4_2, refusal), "7 out of 7 operation(s) failed.\n"
    )
    forced = cli("features", "downgrade", "--metadata", "4.2", "--unsafe")
    assert forced.exit_code == 1
    assert forced.stdout == (
        " `metadata` flag is deprecated and may be removed in a future release.\n"
        "Could not downgrade metadata.version to 29. " + PREFIX
        + "Unsupported metadata.version downgrade from 30 to 29. Unsafe metadata downgrade is not supported in this version.\n"
    )
    assert forced.stderr == "1 out of 1 operation(s) failed.\n"
    assert read_image(cluster_4_2).features.metadata_version.name == "4.3-IV0"


def test_feature_upgrade_and_disable(cli: Cli, state_dir: Path) -> None:
    finalize(state_dir, metadata_version=30)
    register(state_dir, 1, RANGES_4_3, epoch=1)
    up = cli("features", "upgrade", "--feature", "transaction.version=2", "--feature", "group.version = 1")
    assert (up.exit_code, up.stdout) == (0, "group.version was upgraded to 1.\ntransaction.version was upgraded to 2.\n")
    off = cli("features", "disable", "--feature", "group.version", "--dry-run")
    assert (off.exit_code, off.stdout) == (0, "group.version can be disabled.\n")
    off = cli("features", "disable", "--feature", "group.version")
    assert (off.exit_code, off.stdout) == (0, "group.version was disabled.\n")
    assert cli("features", "describe").stdout == describe_lines("4.3-IV0", "4", transaction_version=2)
    unknown = cli("features", "disable", "--feature", "foo")
    assert (unknown.exit_code, unknown.stdout, unknown.stderr) == (
        1,
        "Could not disable foo. " + PREFIX + "Invalid update version 0 for feature foo. Feature foo not found.\n",
        "1 out of 1 operation(s) failed.\n",
    )


def test_update_results_as_json(cli: Cli, cluster_4_2: Path) -> None:
    result = cli("-o", "json", "features", "upgrade", "--metadata", "4.3", "--dry-run")
    message = PREFIX + "Invalid update version 30 for feature metadata.version. Broker 1 only supports versions 7-29"
    assert result.exit_code == 1
    assert json.loads(result.stdout) == {
        "operation": "upgrade",
        "dryRun": True,
        "results": [
            {"feature": "metadata.version", "level": 30, "succeeded": False, "error": "INVALID_UPDATE_VERSION", "message": message}
        ],
        "failed": 1,
        "total": 1,
    }
    # The deprecation line moves to stderr so that stdout holds only the document.
    assert result.stderr == (
        " `metadata` flag is deprecated and may be removed in a future release.\n1 out of 1 operation(s) failed.\n"
    )


def test_an_update_on_a_state_without_metadata_version(cli: Cli) -> None:
    result = cli("features", "upgrade", "--release-version", "4.3")
    assert (result.exit_code, result.stdout) == (1, "")
    assert result.stderr.startswith("The cluster state has no finalized metadata.version yet")


# Client-side refusals: message on stderr, exit 1 ----------------------------------------------


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["upgrade"], "You must specify at least one feature to upgrade"),
        (["downgrade", "--unsafe"], "You must specify at least one feature to downgrade"),
        (["disable"], "You must specify at least one feature to disable"),
        (["upgrade", "--release-version", "4.3", "--feature", "group.version=1"],
         "Can not specify `release-version` with other feature flags."),
        (["upgrade", "--release-version", "3.2"], "Unknown metadata.version '3.2'. Supported metadata.version are: 3.3-IV3, "
         "3.4-IV0, 3.5-IV0, 3.5-IV1, 3.5-IV2, 3.6-IV0, 3.6-IV1, 3.6-IV2, 3.7-IV0, 3.7-IV1, 3.7-IV2, 3.7-IV3, 3.7-IV4, "
         "3.8-IV0, 3.9-IV0, 4.0-IV0, 4.0-IV1, 4.0-IV2, 4.0-IV3, 4.1-IV0, 4.1-IV1, 4.2-IV0, 4.2-IV1, 4.3-IV0, 4.4-IV0, 4.4-IV1, "
         "4.4-IV2, 4.5-IV0"),
        (["upgrade", "--feature", "group.version"], "Can't parse feature=level string group.version: equals sign not found."),
        (["upgrade", "--feature", "group.version=x"],
         "Can't parse feature=level string group.version=x: unable to parse x as a short."),
        (["upgrade", "--feature", "group.version=1", "--feature", "group.version=1"],
         "Feature group.version was specified more than once."),
        (["disable", "--feature", "a", "--feature", "a"], "Feature a was specified more than once."),
        (["upgrade", "--feature", "group.version=0"], "The upgradeType flag should be set to SAFE_DOWNGRADE or "
         "UNSAFE_DOWNGRADE when the provided maxVersionLevel:0 is < 1."),
        (["downgrade", "--feature", "group.version=-1"], "Cannot specify a negative version level."),
        (["upgrade", "--feature", "=1"], "Provided feature can not be empty."),
    ],
)
def test_client_side_refusals(cli: Cli, cluster_4_2: Path, args: list[str], message: str) -> None:
    result = cli("features", *args)
    assert (result.exit_code, result.stdout, result.stderr) == (1, "", message + "\n")


def test_the_deprecation_line_comes_before_a_metadata_error(cli: Cli, cluster_4_2: Path) -> None:
    result = cli("features", "upgrade", "--metadata", "4.3", "--feature", "metadata.version=30")
    assert (result.exit_code, result.stdout, result.stderr) == (
        1,
        " `metadata` flag is deprecated and may be removed in a future release.\n",
        "Feature metadata.version was specified more than once.\n",
    )


def test_a_broken_command_line_is_a_usage_error(cli: Cli) -> None:
    assert cli("features", "upgrade", "--bootstrap-server", "localhost:9092").exit_code == 2
    assert cli("features", "feature-dependencies").exit_code == 2
    assert cli("features", "upgrade", "--unsafe", "--feature", "group.version=1").exit_code == 2


# version-mapping and feature-dependencies (no state needed) --------------------------------------


MAPPING_4_4 = ("metadata.version=33 (4.4-IV2)\nkraft.version=1\ntransaction.version=2\ngroup.version=1\n"
               "eligible.leader.replicas.version=1\nshare.version=2\nstreams.version=1\n")
SUPPORTED_4_3 = ("3.3-IV3, 3.4-IV0, 3.5-IV0, 3.5-IV1, 3.5-IV2, 3.6-IV0, 3.6-IV1, 3.6-IV2, 3.7-IV0, 3.7-IV1, 3.7-IV2, 3.7-IV3, "
                 "3.7-IV4, 3.8-IV0, 3.9-IV0, 4.0-IV0, 4.0-IV1, 4.0-IV2, 4.0-IV3, 4.1-IV0, 4.1-IV1, 4.2-IV0, 4.2-IV1, 4.3-IV0, 4.4-IV0")


def test_version_mapping(cli: Cli, tmp_path: Path) -> None:
    """Kafka 4.4.0's (spec §2.3): every production feature in Feature's enum order."""
    assert cli("features", "version-mapping", state=tmp_path / "none").stdout == MAPPING_4_4
    assert cli("features", "version-mapping", "--release-version", "4.4").stdout == MAPPING_4_4.replace("(4.4-IV2)", "(4.4)")
    assert cli("features", "version-mapping", "--release-version", "4.0").stdout == (
        "metadata.version=25 (4.0)\nkraft.version=1\ntransaction.version=2\ngroup.version=1\n"
        "eligible.leader.replicas.version=0\nshare.version=0\nstreams.version=0\n"
    )
    assert json.loads(cli("-o", "json", "features", "version-mapping", "--release-version", "3.8").stdout) == {
        "releaseVersion": "3.8",
        "metadataVersion": "3.8-IV0",
        "features": {"metadata.version": 20, "kraft.version": 0, "transaction.version": 0, "group.version": 0,
                     "eligible.leader.replicas.version": 0, "share.version": 0, "streams.version": 0},
    }
    bad = cli("features", "version-mapping", "--release-version", "2.8")
    assert (bad.exit_code, bad.stdout, bad.stderr) == (
        1, "", f"Unknown metadata.version '2.8'. Supported metadata.version are: {SUPPORTED_4_3}, 4.4-IV1, 4.4-IV2, 4.5-IV0\n"
    )


def test_version_mapping_as_kafka_4_3_prints_it(cli: Cli, tmp_path: Path) -> None:
    """4.3.1: 4.3-IV0 by default, share.version 1 at 4.4-IV0 (its unstable version), no 4.4."""
    assert cli("--kafka-version", "4.3", "features", "version-mapping", state=tmp_path / "none").stdout == (
        "metadata.version=30 (4.3-IV0)\nkraft.version=1\ntransaction.version=2\ngroup.version=1\n"
        "eligible.leader.replicas.version=1\nshare.version=1\nstreams.version=1\n"
    )
    assert cli("--kafka-version", "4.3.1", "features", "version-mapping", "-h").exit_code == 0
    unstable = cli("--kafka-version", "4.3", "features", "version-mapping", "--release-version", "4.4-IV0")
    assert unstable.stdout.splitlines()[0::5] == ["metadata.version=31 (4.4-IV0)", "share.version=1"]
    bad = cli("--kafka-version", "4.3", "features", "version-mapping", "--release-version", "4.4")
    assert (bad.exit_code, bad.stderr) == (1, f"Unknown metadata.version '4.4'. Supported metadata.version are: {SUPPORTED_4_3}\n")
    wrong = cli("--kafka-version", "3.9", "features", "version-mapping")
    assert wrong.exit_code == 2 and "Unknown Kafka version '3.9' for --kafka-version: kjbod speaks Kafka 4.3 (4.3.1) or 4.4 (4.4.0)" in wrong.stderr


def test_feature_dependencies(cli: Cli) -> None:
    """Only eligible.leader.replicas.version has a dependency (KRaftVersion 1 has none,
    KRaftVersion.java:75)."""
    result = cli("features", "feature-dependencies", "--feature", "kraft.version=1", "--feature", "eligible.leader.replicas.version=1",
                 "--feature", "metadata.version=33")
    assert (result.exit_code, result.stdout) == (
        0, "kraft.version=1 has no dependencies.\neligible.leader.replicas.version=1 requires:\n    metadata.version=23 (4.0-IV1)\n"
        "metadata.version=33 (4.4-IV2) has no dependencies.\n"
    )
    assert json.loads(cli("-o", "json", "features", "feature-dependencies", "--feature", "eligible.leader.replicas.version=1").stdout) == [
        {"feature": "eligible.leader.replicas.version", "level": 1,
         "dependencies": [{"feature": "metadata.version", "level": 23, "version": "4.0-IV1"}]}
    ]
    older = cli("--kafka-version", "4.3", "features", "feature-dependencies", "--feature", "share.version=1", "--feature", "share.version=2")
    assert (older.exit_code, older.stdout, older.stderr) == (
        1, "share.version=1 has no dependencies.\n", "No feature:share.version with feature level 2\n"
    )
    assert cli("--kafka-version", "4.3", "features", "feature-dependencies", "--feature", "metadata.version=33").stderr == (
        "Unknown metadata.version 33\n"
    )


def test_feature_dependencies_keep_earlier_lines_when_a_later_one_fails(cli: Cli) -> None:
    args = ("features", "feature-dependencies", "--feature", "group.version=1", "--feature", "group.version=2")
    result = cli(*args)
    assert (result.exit_code, result.stdout, result.stderr) == (
        1, "group.version=1 has no dependencies.\n", "No feature:group.version with feature level 2\n"
    )
    for feature, message in (("foo=1", "Unknown feature: foo"), ("metadata.version=3", "Unknown metadata.version 3")):
        failed = cli("features", "feature-dependencies", "--feature", feature)
        assert (failed.exit_code, failed.stdout, failed.stderr) == (1, "", message + "\n")
    as_json = cli("-o", "json", *args)
    assert as_json.exit_code == 1
    assert json.loads(as_json.stdout) == {"error": {"message": "No feature:group.version with feature level 2", "exitCode": 1}}


def test_every_command_has_help_with_an_example(cli: Cli) -> None:
    for command in ("describe", "upgrade", "downgrade", "disable", "version-mapping", "feature-dependencies"):
        result = cli("features", command, "--help", state=None)
        assert result.exit_code == 0 and "Example: kjbod features " + command in result.stdout


def test_the_request_is_checked_before_the_state_is_opened(cli: Cli, tmp_path: Path) -> None:
    result = cli("features", "upgrade", state=tmp_path / "no-such-state")
    assert (result.exit_code, result.stderr) == (1, "You must specify at least one feature to upgrade\n")


def test_a_formatted_controller_names_itself_in_refusals(cli: Cli, tmp_path: Path) -> None:
    """Kafka's `Local controller <node.id> ...` (QuorumFeatures.java:109): the node that formatted the state."""
    from .support import formatted_controller

    state = formatted_controller(cli, tmp_path)
    result = cli("features", "upgrade", "--feature", "group.version=2", state=state)
    message = PREFIX + "Invalid update version 2 for feature group.version. Local controller 3000 only supports versions 0-1"
    assert (result.exit_code, result.stdout) == (1, f"Could not upgrade group.version to 2. {message}\n")
