"""The package's layers (docs/architecture.md), checked on the code itself."""

from __future__ import annotations

import itertools
import subprocess
import sys
from pathlib import Path

import grimp

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "kjbod"


def test_the_import_contracts_hold() -> None:
    """import-linter's contracts in pyproject.toml: layers, no state or Typer/rich in the library,
    pyspark only in the planner's Spark engine, tools that stand alone, Kafka's binary files
    read by the tools alone, and the CLI reaching a node's files through the tools."""
    lint = Path(sys.executable).with_name("lint-imports")
    result = subprocess.run([str(lint), "--config", str(ROOT / "pyproject.toml")], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout


def test_no_import_cycle_between_top_level_packages() -> None:
    graph = grimp.build_graph("kjbod")
    packages = sorted(f"kjbod.{path.name}" for path in PACKAGE.iterdir() if (path / "__init__.py").exists())
    cycles = [
        (a, b)
        for a, b in itertools.combinations(packages, 2)
        if graph.chain_exists(importer=a, imported=b, as_packages=True) and graph.chain_exists(importer=b, imported=a, as_packages=True)
    ]
    assert len(packages) >= 10 and cycles == []


def test_the_package_root_holds_only_the_entry_points_and_the_error_types() -> None:
    modules = sorted(path.name for path in PACKAGE.glob("*.py"))
    assert modules == ["__init__.py", "__main__.py", "errors.py"]


def test_tests_mirror_the_package_tree() -> None:
    """Every package of kjbod has its folder of tests (hatch's layout); end-to-end tests live in
    tests/system."""
    packages = {path.relative_to(PACKAGE) for path in PACKAGE.rglob("__init__.py")}
    folders = {path.parent for path in packages if path.parent != Path(".")}
    missing = sorted(str(folder) for folder in folders if not (ROOT / "tests" / folder).is_dir())
    assert missing == []
    loose = sorted(path.name for path in (ROOT / "tests").glob("test_*.py"))
    assert loose == []


# Folders of tests/ that mirror no package, each for a reason: end-to-end tests, data files, the
# benchmarks' own tests, and the tests that run Kafka's released jars (a live cluster per release).
TEST_FOLDERS_OF_NO_PACKAGE = {"system", "fixtures", "bench", "kafka"}


def test_every_folder_of_tests_mirrors_a_package_or_is_named_here() -> None:
    packages = {path.relative_to(PACKAGE).parts[0] for path in PACKAGE.glob("*/__init__.py")}
    folders = {path.name for path in (ROOT / "tests").iterdir() if path.is_dir() and not path.name.startswith((".", "__"))}
    assert sorted(folders - packages - TEST_FOLDERS_OF_NO_PACKAGE) == []

