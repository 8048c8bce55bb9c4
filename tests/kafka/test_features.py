"""d. kafka-features version-mapping and feature-dependencies for every release version, and
upgrade/downgrade/disable --dry-run on the live cluster, against kjbod's on the imported state."""

from __future__ import annotations

import pytest

from tests.kafka.conftest import Live, kjbod
from tests.kafka.runtime import ToolResult, run_batch

# Every release each Kafka version's tools accept for --release-version, oldest first.
RELEASES = ("3.3", "3.4", "3.5", "3.6", "3.7", "3.8", "3.9", "4.0", "4.1", "4.2", "4.3", "4.4")
RELEASES_OF = {"4.3.1": RELEASES[:-1], "4.4.0": RELEASES}
# feature-dependencies of each level of each feature (metadata.version: each release's level).
FEATURE_LEVELS = (("kraft.version", 0), ("kraft.version", 1), ("transaction.version", 1), ("transaction.version", 2),
                  ("group.version", 1), ("eligible.leader.replicas.version", 1), ("share.version", 1), ("streams.version", 1))
METADATA_LEVELS = {"3.3-IV3": 7, "3.9-IV0": 21, "4.0-IV3": 25, "4.1-IV1": 27, "4.2-IV1": 29, "4.3-IV0": 30, "4.4-IV2": 33}


def _mapping_args(release: str) -> list[str]:
    return ["version-mapping", "--release-version", release]


def _dependency_args(feature: str, level: int) -> list[str]:
    return ["feature-dependencies", "--feature", f"{feature}={level}"]


@pytest.fixture(scope="module")
def offline_features(kafka_version: str, tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, ...], ToolResult]:
    """Kafka's answers to every version-mapping and feature-dependencies question, one JVM."""
    questions = [_mapping_args(release) for release in RELEASES_OF[kafka_version]]
    questions += [_dependency_args(feature, level) for feature, level in FEATURE_LEVELS]
    questions += [_dependency_args("metadata.version", level) for level in METADATA_LEVELS.values()]
    results = run_batch(kafka_version, [("kafka-features", args) for args in questions], tmp_path_factory.mktemp(f"features-{kafka_version}"))
    return {tuple(args): result for args, result in zip(questions, results)}


@pytest.mark.parametrize("release", RELEASES)
def test_version_mapping(kafka_version: str, release: str, offline_features: dict) -> None:
    if release not in RELEASES_OF[kafka_version]:
        pytest.skip(f"Kafka {kafka_version} has no release {release}")
    kafka = offline_features[tuple(_mapping_args(release))]
    ours = kjbod("features", *_mapping_args(release))
    assert (ours.exit_code, ours.stdout, ours.stderr) == (kafka.exit_code, kafka.stdout, kafka.stderr)


@pytest.mark.parametrize(("feature", "level"), FEATURE_LEVELS + tuple(("metadata.version", level) for level in METADATA_LEVELS.values()))
def test_feature_dependencies(kafka_version: str, feature: str, level: int, offline_features: dict) -> None:
    """4.3.1 asked about 4.4-IV2 (33) answers `Unknown metadata.version 33`, as kjbod speaking 4.3."""
    kafka = offline_features[tuple(_dependency_args(feature, level))]
    ours = kjbod("features", *_dependency_args(feature, level))
    assert (ours.exit_code, ours.stdout, ours.stderr.strip()) == (kafka.exit_code, kafka.stdout, kafka.stderr.strip())


# upgrade / downgrade / disable --dry-run: the live cluster (4.3-IV0) against the imported state.
DRY_RUNS = {
    "upgrade-release": ["upgrade", "--release-version", "4.3"],
    "upgrade-release-4.4": ["upgrade", "--release-version", "4.4"],
    "downgrade-release": ["downgrade", "--release-version", "4.2"],
    "downgrade-feature": ["downgrade", "--feature", "transaction.version=1"],
    "upgrade-feature": ["upgrade", "--feature", "group.version=1"],
    "disable": ["disable", "--feature", "group.version"],
}


@pytest.fixture(scope="module")
def dry_runs(live: Live) -> dict[str, ToolResult]:
    servers = live.cluster.bootstrap_servers
    return {name: live.cluster.tool("kafka-features", "--bootstrap-server", servers, *args, "--dry-run") for name, args in DRY_RUNS.items()}


@pytest.mark.parametrize("name", list(DRY_RUNS))
def test_dry_run(live: Live, dry_runs: dict[str, ToolResult], name: str) -> None:
    kafka = dry_runs[name]
    ours = kjbod("features", *DRY_RUNS[name], "--dry-run", state=live.state)
    assert (ours.exit_code, ours.stdout, ours.stderr.strip()) == (kafka.exit_code, kafka.stdout, kafka.stderr.strip())
