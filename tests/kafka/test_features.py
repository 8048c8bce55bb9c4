"""d. kafka-features version-mapping and feature-dependencies for every release version, and
upgrade/downgrade/disable --dry-run on the live cluster, against kjbod's on the imported state."""

from __future__ import annotations

import pytest

from tests.kafka.conftest import Live, kjbod, strict_xfail
from tests.kafka.runtime import ToolResult, run_batch

# Every release each Kafka version's tools accept for --release-version, oldest first.
RELEASES = ("3.3", "3.4", "3.5", "3.6", "3.7", "3.8", "3.9", "4.0", "4.1", "4.2", "4.3", "4.4")
RELEASES_OF = {"4.3.1": RELEASES[:-1], "4.4.0": RELEASES}
# The features Kafka 4.3.1 and 4.4.0 define that kjbod does not model (issue 28).
NOT_MODELLED = ("eligible.leader.replicas.version", "share.version", "streams.version")
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


def _modelled(lines: list[str]) -> list[str]:
    return [line for line in lines if line.split("=")[0] not in NOT_MODELLED]


@pytest.mark.parametrize("release", RELEASES)
def test_version_mapping_of_the_features_kjbod_models(kafka_version: str, release: str, offline_features: dict,
                                                     request: pytest.FixtureRequest) -> None:
    if release not in RELEASES_OF[kafka_version]:
        pytest.skip(f"Kafka {kafka_version} has no release {release}")
    strict_xfail(request, ("4.4.0",) if release == "4.4" else (), "issue 28: kjbod refuses --release-version 4.4 "
                 "(Kafka 4.4.0 maps it to metadata.version=33 (4.4-IV2))")
    kafka = offline_features[tuple(_mapping_args(release))]
    ours = kjbod("features", *_mapping_args(release))
    assert (ours.exit_code, _modelled(ours.lines)) == (kafka.exit_code, _modelled(kafka.lines))


@pytest.mark.parametrize("release", RELEASES)
def test_version_mapping(kafka_version: str, release: str, offline_features: dict, request: pytest.FixtureRequest) -> None:
    if release not in RELEASES_OF[kafka_version]:
        pytest.skip(f"Kafka {kafka_version} has no release {release}")
    strict_xfail(request, ("4.3.1", "4.4.0"), "issue 28: Kafka's version-mapping also lists eligible.leader.replicas.version, "
                 "share.version and streams.version with their levels for the release")
    kafka = offline_features[tuple(_mapping_args(release))]
    ours = kjbod("features", *_mapping_args(release))
    assert (ours.exit_code, ours.stdout, ours.stderr) == (kafka.exit_code, kafka.stdout, kafka.stderr)


@pytest.mark.parametrize(("feature", "level"), FEATURE_LEVELS + tuple(("metadata.version", level) for level in METADATA_LEVELS.values()))
def test_feature_dependencies(kafka_version: str, feature: str, level: int, offline_features: dict, request: pytest.FixtureRequest) -> None:
    if (feature, level) == ("kraft.version", 1):
        strict_xfail(request, ("4.3.1", "4.4.0"), "issue 28: Kafka 4.3.1/4.4.0 print 'kraft.version=1 has no dependencies.' "
                     "(KRaftVersion.dependencies() is empty); kjbod requires metadata.version=21 (3.9-IV0)")
    if feature in NOT_MODELLED:
        strict_xfail(request, ("4.3.1", "4.4.0"), f"issue 28: kjbod does not know {feature} (Kafka prints its dependencies)")
    if feature == "metadata.version" and level > 30:
        if kafka_version == "4.3.1":
            pytest.skip("Kafka 4.3.1 has no metadata.version past 4.3-IV0")
        strict_xfail(request, ("4.4.0",), f"issue 28: kjbod does not know metadata.version level {level} (4.4-IV2 in Kafka 4.4.0)")
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


def _modelled_lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if not any(feature in line for feature in NOT_MODELLED)]


@pytest.mark.parametrize("name", list(DRY_RUNS))
def test_dry_run_of_the_features_kjbod_models(live: Live, dry_runs: dict[str, ToolResult], name: str, request: pytest.FixtureRequest) -> None:
    """The lines about the features kjbod models; the failure count is on stderr in both."""
    if name == "upgrade-release-4.4":
        strict_xfail(request, ("4.4.0",), "issue 28: kjbod refuses --release-version 4.4, which Kafka 4.4.0 upgrades to")
    kafka = dry_runs[name]
    ours = kjbod("features", *DRY_RUNS[name], "--dry-run", state=live.state)
    assert (ours.exit_code, _modelled_lines(ours.stdout)) == (kafka.exit_code, _modelled_lines(kafka.stdout)), (ours.stderr, kafka.stderr)


NOT_MODELLED_REASON = ("issue 28: with --release-version Kafka also sets eligible.leader.replicas.version, share.version "
                       "and streams.version (a line each, and counts them in 'N out of M operation(s) failed')")


@pytest.mark.parametrize("name", list(DRY_RUNS))
def test_dry_run(live: Live, dry_runs: dict[str, ToolResult], name: str, request: pytest.FixtureRequest) -> None:
    if name in ("upgrade-release", "downgrade-release"):
        strict_xfail(request, ("4.3.1", "4.4.0"), NOT_MODELLED_REASON)
    if name == "upgrade-release-4.4":
        strict_xfail(request, ("4.4.0",), "issue 28: kjbod refuses --release-version 4.4, which Kafka 4.4.0 upgrades to")
    kafka = dry_runs[name]
    ours = kjbod("features", *DRY_RUNS[name], "--dry-run", state=live.state)
    assert (ours.exit_code, ours.stdout, ours.stderr.strip()) == (kafka.exit_code, kafka.stdout, kafka.stderr.strip())
