"""`kjbod format` on a controller: the directories, then the cluster state's bootstrap, once (tools/storage/format.py)."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from kjbod.common.kafka_release import KAFKA_4_3, KAFKA_4_4
from kjbod.image import EMPTY_IMAGE, replay_all
from kjbod.kafka_formats.kraft_snapshot import read_kraft_snapshot
from kjbod.records import CONFIG_RESOURCE_BROKER, ConfigRecord, FeatureLevelRecord
from kjbod.state import StateDirectory
from kjbod.state.cluster_state import read_image
from kjbod.tools.storage.formatter import (
    DirectoryStatus,
    FormatFailed,
    FormatRequest,
    StateStatus,
)
from kjbod.tools.storage.format import format_storage
from tests.tools.storage.support import BROKER, CLUSTER_ID, CONTROLLER, DATE, WriteConfig

VOTER_DIR_ID = "ZNJ-ywU0nnQwRv5eRRU9ow"


def request(config: Path, **flags: object) -> FormatRequest:
    return FormatRequest(config_path=config, cluster_id=flags.pop("cluster_id", CLUSTER_ID), **flags)  # type: ignore[arg-type]


def run(config: Path, state: Path, *, dry_run: bool = False, seed: int = 1, **flags: object):  # type: ignore[no-untyped-def]
    return format_storage(request(config, **flags), StateDirectory(state), dry_run=dry_run, rng=random.Random(seed), date=DATE)


@pytest.mark.parametrize("release", [KAFKA_4_3, KAFKA_4_4])
def test_a_broker_is_formatted_and_never_touches_the_state(write_config: WriteConfig, tmp_path: Path, release) -> None:  # noqa: ANN001
    """Kafka 4.3 writes bootstrap.checkpoint in every directory; 4.4 (KAFKA-19648) only meta.properties."""
    config = write_config({**BROKER, "log.dirs": "{tmp}/deep/er/d1,{tmp}/d2"})
    outcome = run(config, tmp_path / "state", release=release)
    assert [(r.plan.path, r.status) for r in outcome.directories] == [
        (f"{tmp_path}/d2", DirectoryStatus.FORMATTED),
        (f"{tmp_path}/deep/er/d1", DirectoryStatus.FORMATTED),
    ]
    assert outcome.state is None and not (tmp_path / "state").exists()
    for result in outcome.directories:
        directory = Path(result.plan.path)
        expected = ["meta.properties"] if release is KAFKA_4_4 else ["bootstrap.checkpoint", "meta.properties"]
        assert sorted(p.name for p in directory.iterdir()) == expected
        assert (directory / "meta.properties").read_bytes() == (
            b"#\n#Fri Oct 25 03:33:01 UTC 2024\n"
            + f"cluster.id={CLUSTER_ID}\ndirectory.id={result.plan.directory_id}\nnode.id=1\nversion=1\n".encode()
        )


def test_a_controller_bootstraps_the_cluster_state_once(write_config: WriteConfig, tmp_path: Path) -> None:
    config = write_config({**CONTROLLER, "controller.quorum.voters": "3000@localhost:9093", "min.insync.replicas": "2"})
    state = tmp_path / "state"
    outcome = run(config, state)
    assert outcome.state is not None and outcome.state.status is StateStatus.INITIALISED
    image = read_image(state)
    expected = replay_all(
        EMPTY_IMAGE,
        [
            FeatureLevelRecord(name="metadata.version", feature_level=33),
            *(FeatureLevelRecord(name=name, feature_level=level) for name, level in (
                ("eligible.leader.replicas.version", 1), ("group.version", 1), ("share.version", 2), ("streams.version", 1),
                ("transaction.version", 2))),
            # With ELR bootstrapped, the controller's min.insync.replicas as the cluster-level value
            # (ActivationRecordsGenerator.recordsForEmptyLog, 4.4.0 :98-103).
            ConfigRecord(resource_type=CONFIG_RESOURCE_BROKER, resource_name="", name="min.insync.replicas", value="2"),
        ]
    )
    assert image.features == expected.features and image.configs == expected.configs
    # Then which cluster this is and which controller bootstrapped it (KjbodClusterRecord).
    assert (image.identity.cluster_id, image.identity.controller_id) == (CLUSTER_ID, 3000)
    # Then the static quorum of controller.quorum.voters: this controller, the leader of epoch 1.
    assert image.offset == 9
    assert (image.quorum.static, image.quorum.kraft_version, image.quorum.voter_ids, image.quorum.leader_id) == (True, 0, (3000,), 3000)
    again = run(config, state, ignore_formatted=True, release_version="3.9")
    assert again.plan.all_formatted and again.state is not None
    assert again.state.status is StateStatus.ALREADY_INITIALISED
    assert read_image(state).offset == 9
    # The controller registered what a 4.4 controller supports: the state records the release.
    (replica,) = image.quorum.replicas.values()
    assert dict((f.name, (f.min_supported_version, f.max_supported_version)) for f in replica.features)["metadata.version"] == (7, 33)


def test_before_4_1_no_elr_so_no_cluster_level_min_insync_replicas(write_config: WriteConfig, tmp_path: Path) -> None:
    config = write_config({**CONTROLLER, "controller.quorum.voters": "3000@localhost:9093"})
    run(config, tmp_path / "state", release_version="4.0")
    image = read_image(tmp_path / "state")
    assert image.features.level("eligible.leader.replicas.version") == 0 and dict(image.configs.resources) == {}


@pytest.mark.parametrize(
    ("flags", "controls"),
    [
        ({"controller.quorum.voters": "3000@localhost:9093"}, ["SNAPSHOT_HEADER"]),
        ({"no_initial_controllers": True}, ["SNAPSHOT_HEADER", "KRAFT_VERSION"]),
        ({"standalone": True}, ["SNAPSHOT_HEADER", "KRAFT_VERSION", "KRAFT_VOTERS"]),
    ],
)
def test_a_4_4_controller_writes_its_bootstrap_records_into_the_bootstrap_snapshot(
    write_config: WriteConfig, tmp_path: Path, flags: dict, controls: list[str]
) -> None:
    """KAFKA-19648: no bootstrap.checkpoint; `__cluster_metadata-0/00000000000000000000-0000000000.checkpoint`
    holds the control records (kraft.version when 1, the voters when there are initial ones) and
    then the bootstrap records (4.4.0 Formatter.writeBoostrapSnapshot :513-530)."""
    settings = {**CONTROLLER, **{k: v for k, v in flags.items() if "." in k}, "log.dirs": "{tmp}/meta,{tmp}/data"}
    config = write_config(settings)
    outcome = run(config, tmp_path / "state", **{k: v for k, v in flags.items() if "." not in k})
    assert sorted(p.name for p in (tmp_path / "meta").iterdir()) == ["__cluster_metadata-0", "meta.properties"]
    assert sorted(p.name for p in (tmp_path / "data").iterdir()) == ["meta.properties"]
    snapshot = read_kraft_snapshot(tmp_path / "meta" / "__cluster_metadata-0" / "00000000000000000000-0000000000.checkpoint")
    assert [c.type_name for c in snapshot.control_records] == [*controls, "SNAPSHOT_FOOTER"]
    assert [r.decode().kafka_json() for r in snapshot.data_records()] == [
        {"name": r.name, "featureLevel": r.feature_level} for r in outcome.plan.records]
    assert [r.name for r in outcome.plan.records][:2] == ["metadata.version", "eligible.leader.replicas.version"]


def test_a_dry_run_writes_nothing(write_config: WriteConfig, tmp_path: Path) -> None:
    config = write_config({**CONTROLLER, "controller.quorum.voters": "3000@localhost:9093", "log.dirs": "{tmp}/a/meta"})
    outcome = run(config, tmp_path / "state", dry_run=True)
    assert [r.status for r in outcome.directories] == [DirectoryStatus.WOULD_FORMAT]
    assert outcome.state is not None and outcome.state.status is StateStatus.WOULD_INITIALISE
    assert sorted(p.name for p in tmp_path.iterdir()) == ["server.properties"]


def test_a_state_that_cannot_be_created_is_reported_after_the_directories(write_config: WriteConfig, tmp_path: Path) -> None:
    config = write_config({**CONTROLLER, "controller.quorum.voters": "3000@localhost:9093"})
    (tmp_path / "state").mkdir()
    (tmp_path / "state" / "something").write_text("not a cluster state")
    with pytest.raises(FormatFailed) as caught:
        run(config, tmp_path / "state")
    assert caught.value.message == f"Cannot create a cluster state in {tmp_path / 'state'}: the directory is not empty (it holds something)"
    assert caught.value.outcome.directories[0].status is DirectoryStatus.FORMATTED


def test_a_locked_state_keeps_its_exit_code(
    write_config: WriteConfig, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from kjbod.errors import StateLockedError

    def locked(*args: object, **kwargs: object) -> None:
        raise StateLockedError("the cluster state is locked")

    monkeypatch.setattr(StateDirectory, "bootstrap", locked)
    config = write_config({**CONTROLLER, "controller.quorum.voters": "3000@localhost:9093"})
    with pytest.raises(FormatFailed) as caught:
        run(config, tmp_path / "state")
    assert (caught.value.exit_code, caught.value.message) == (3, "the cluster state is locked")
    assert caught.value.outcome.directories[0].status is DirectoryStatus.FORMATTED
