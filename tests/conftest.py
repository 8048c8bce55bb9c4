"""Shared fixtures: a pinned terminal, a CLI runner with separate streams, a fresh state."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings
from typer.testing import CliRunner

from kjbod.cli.app import app
from kjbod.state.cluster_state import ClusterState

# Properties are checked by what they find, never by how fast: on a shared 2-core machine one
# example can take 300 ms where it takes 1 ms alone, and a deadline then fails a correct test.
settings.register_profile("kjbod", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("kjbod")


# Under pytest-xdist (pyproject's addopts), the tests that share a costly session fixture run in
# one worker, so that it starts once: the live Kafka clusters (every test in tests/kafka/) and the
# local Spark session (the modules that use it); the others spread over the workers one by one,
# the largest groups first. A scheduler of its own rather than xdist_group marks and --dist
# loadgroup: with pytest 9.2 loadgroup silently stops grouping (pytest-xdist issue #1386).
SHARED_FIXTURE_GROUPS = {
    "tests/kafka/": "kafka",
    "tests/planner/test_engines.py::": "spark",
    "tests/planner/test_standalone_cluster.py::": "spark",
    "tests/planner/test_engine_choice.py::": "spark",
}


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: object) -> object:
    from xdist.scheduler import LoadScopeScheduling

    class SharedFixtureScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return next((group for prefix, group in SHARED_FIXTURE_GROUPS.items() if nodeid.startswith(prefix)), nodeid)

    return SharedFixtureScheduling(config, log)


# Lines the workers' tests leave for the terminal summary (tests/kafka/conftest.py's figures),
# gathered as each worker ends.
_WORKER_SUMMARY_LINES: list[str] = []


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error) -> None:  # noqa: ANN001 - pytest-xdist's hook
    _WORKER_SUMMARY_LINES.extend(getattr(node, "workeroutput", {}).get("summary_lines", []))


def pytest_terminal_summary(terminalreporter) -> None:  # noqa: ANN001 - pytest's hook
    for line in _WORKER_SUMMARY_LINES:
        terminalreporter.write_line(line)


@pytest.fixture(autouse=True)
def _pinned_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.setenv("COLUMNS", "100")
    for name in ("KJBOD_STATE", "KJBOD_DEBUG", "KJBOD_LOCK_TIMEOUT"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture(autouse=True)
def _fresh_directory_ids() -> None:
    """tests/controller/support.py draws directory ids from one seeded generator: start it over,
    so that no test's ids depend on which tests ran before it."""
    from tests.controller.support import reset_ids

    reset_ids()


@dataclass
class CliResult:
    exit_code: int
    stdout: str
    stderr: str


Cli = Callable[..., CliResult]


@pytest.fixture
def state_dir(tmp_path: Path) -> Path:
    """An empty, initialised cluster state."""
    path = tmp_path / "state"
    ClusterState.open(path, write=True, create=True).close()
    return path


@pytest.fixture
def cli(state_dir: Path) -> Cli:
    """Run `kjbod --state <state_dir> ARGS...` in-process and capture both streams."""

    def run(*args: str, state: Path | None = state_dir, input: str | None = None) -> CliResult:
        prefix = ["--state", str(state)] if state is not None else []
        result = CliRunner().invoke(app, [*prefix, *args], input=input, catch_exceptions=False)
        return CliResult(result.exit_code, result.stdout, result.stderr)

    return run


@pytest.fixture
def bootstrapped(state_dir: Path) -> Path:
    """The state with metadata.version 4.3-IV0 finalized, as `format` on a controller leaves it."""
    from kjbod.records import FeatureLevelRecord

    with ClusterState.open(state_dir, write=True) as state:
        state.commit([FeatureLevelRecord(name="metadata.version", feature_level=30)])
    return state_dir
