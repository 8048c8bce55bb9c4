"""The root command: global options, exit codes and the one error handler."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

import kjbod
from kjbod.cli.app import app, command_app
from kjbod.state.cluster_state import ClusterState

from ..conftest import Cli


def test_version(cli: Cli) -> None:
    result = cli("--version", state=None)
    assert (result.exit_code, result.stdout) == (0, f"kjbod {kjbod.__version__}\n")


def test_help_lists_the_command_groups(cli: Cli) -> None:
    result = cli("--help", state=None)
    assert result.exit_code == 0
    for group in ("metadata", "clock"):
        assert f"\n  {group} " in result.stdout


def test_a_malformed_command_line_exits_2(cli: Cli) -> None:
    assert cli("no-such-command").exit_code == 2
    assert cli("clock", "show", "--bogus").exit_code == 2


def test_a_missing_state_is_one_line_on_stderr_and_exit_1(cli: Cli, tmp_path: Path) -> None:
    result = cli("clock", "show", state=tmp_path / "missing")
    assert result.exit_code == 1
    assert result.stdout == ""
    assert result.stderr == (
        f"No cluster state at {tmp_path / 'missing'}: create one with `kjbod format` on a controller node or "
        "`kjbod import cluster`, or point --state (KJBOD_STATE) at an existing one\n"
    )


def test_json_mode_puts_an_error_document_on_stdout(cli: Cli, tmp_path: Path) -> None:
    result = cli("-o", "json", "clock", "show", state=tmp_path / "missing")
    assert result.exit_code == 1
    document = json.loads(result.stdout)
    assert document["error"]["exitCode"] == 1 and document["error"]["message"].startswith("No cluster state at")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["-o", "json", "no-such-command"], "No such command 'no-such-command'."),
        (["--output=JSON", "clock", "show", "--bogus"], "No such option: --bogus"),
        (["-ojson", "broker", "describe", "--id", "x"], "Invalid value for '--id': Input should be a valid integer, unable to parse string as an integer"),
        (["-o", "json", "--bogus", "clock", "show"], "No such option: --bogus"),
        (["-o", "json", "topic", "create"], "Missing argument 'name'."),
        (["-o", "json", "broker"], "Missing command: see 'kjbod broker --help'"),
        (["-o", "json"], "Missing command."),
    ],
)
def test_json_mode_puts_an_error_document_on_stdout_for_a_malformed_command_line_too(cli: Cli, args: list[str], message: str) -> None:
    result = cli(*args)
    assert result.exit_code == 2
    assert json.loads(result.stdout) == {"error": {"message": message, "exitCode": 2}}
    assert "Usage: kjbod" in result.stderr  # Click's usage and message stay on stderr


def test_a_malformed_command_line_in_text_mode_leaves_stdout_empty(cli: Cli) -> None:
    for args in (["no-such-command"], ["-o", "text", "clock", "show", "--bogus"], ["-o", "yaml", "clock", "show"]):
        result = cli(*args)
        assert (result.exit_code, result.stdout) == (2, ""), args
        assert "Error: " in result.stderr


def test_debug_adds_a_traceback(cli: Cli, tmp_path: Path) -> None:
    result = cli("--debug", "clock", "show", state=tmp_path / "missing")
    assert result.exit_code == 1
    assert result.stderr.startswith("Traceback (most recent call last):")
    assert result.stderr.rstrip().endswith("or point --state (KJBOD_STATE) at an existing one")


def test_an_unexpected_exception_is_an_internal_error_without_a_traceback(cli: Cli, monkeypatch: pytest.MonkeyPatch) -> None:
    def boom(*args: object, **kwargs: object) -> None:
        raise ValueError("boom")

    monkeypatch.setattr("kjbod.state.read_image", boom)
    result = cli("clock", "show")
    assert result.exit_code == 1
    assert result.stderr == "internal error: ValueError: boom (run with --debug for the traceback and report it)\n"


def test_the_state_can_come_from_the_environment(state_dir: Path, monkeypatch: pytest.MonkeyPatch, cli: Cli) -> None:
    monkeypatch.setenv("KJBOD_STATE", str(state_dir))
    assert cli("clock", "show", state=None).stdout == "Simulated time: 0s (0 ms)\n"


HOLD_LOCK = """
import sys, time
from kjbod.state.cluster_state import ClusterState
with ClusterState.open(sys.argv[1], write=True):
    print("locked", flush=True)
    time.sleep(30)
"""


def test_a_lock_held_past_the_timeout_exits_3(cli: Cli, state_dir: Path) -> None:
    holder = subprocess.Popen([sys.executable, "-c", HOLD_LOCK, str(state_dir)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "locked"
        result = cli("--lock-timeout", "0.3", "clock", "advance", "1s")
    finally:
        holder.kill()
        holder.wait()
    assert result.exit_code == 3
    assert result.stderr == (
        f"the cluster state {state_dir} is locked by process {holder.pid} (a writer); waited 0.3 s (raise --lock-timeout to wait longer)\n"
    )


@pytest.mark.parametrize(
    "args",
    [
        ["topic", "--help"], ["topic", "describ"], ["-o", "json", "topic", "describ"], ["format", "--help"], ["--debug", "clock", "show"],
        ["clock", "show", "--bogus"], ["no-such-command"], ["--help", "topic"], [],
    ],
)
def test_the_app_of_the_named_command_answers_as_the_whole_app(state_dir: Path, args: list[str]) -> None:
    # `kjbod` builds only the command its command line names (main, command_app).
    line = ["--state", str(state_dir), *args]
    whole, one = (CliRunner().invoke(chosen, line) for chosen in (app, command_app(line)))
    assert (one.exit_code, one.stdout, one.stderr) == (whole.exit_code, whole.stdout, whole.stderr)


def test_only_a_known_command_after_plain_options_builds_an_app_of_its_own() -> None:
    assert [group.name for group in command_app(["-o", "json", "--state", "s", "topic", "describe"]).registered_groups] == ["topic"]
    assert [command.name for command in command_app(["format", "-c", "x"]).registered_commands] == ["format"]
    assert command_app(["--help", "topic"]) is app
    assert command_app(["topics", "describe"]) is app
    assert command_app([]) is app


def test_importing_the_cli_loads_neither_pyspark_nor_the_library() -> None:
    code = "import sys, kjbod.cli.app; print(sorted(m for m in ('pyspark', 'pandas', 'pydantic', 'rich') if m in sys.modules))"
    found = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert found == "[]"


def test_python_dash_m_runs_the_same_command(state_dir: Path) -> None:
    ClusterState.open(state_dir).close()
    result = subprocess.run([sys.executable, "-m", "kjbod", "--version"], capture_output=True, text=True)
    assert (result.returncode, result.stdout) == (0, f"kjbod {kjbod.__version__}\n")


def test_a_reader_that_goes_away_ends_the_command_quietly(state_dir: Path) -> None:
    """`kjbod metadata dump | head -1`: no "Broken pipe" noise on stderr, exit 1, as Python's own
    guidance for EPIPE has it."""
    from kjbod.records import NoOpRecord

    with ClusterState.open(state_dir, write=True, create=True) as state:
        state.commit([NoOpRecord()] * 20_000)  # far more than a pipe's buffer once printed
    process = subprocess.Popen(
        [sys.executable, "-m", "kjbod", "--state", str(state_dir), "metadata", "dump"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )
    assert process.stdout.readline().startswith(b"{")
    process.stdout.close()  # the reader leaves, as `head -1` does
    stderr = process.stderr.read()
    assert (process.wait(timeout=60), stderr) == (1, b"")


# What a read command must not load (issue 30: reads of a 5M-partition state within a second):
# the planner and its data frames, the controller's write side, the importers, Kafka's binary
# formats, rich. Checked on the modules one process holds after running every read bench_scale
# times, through main() as the `kjbod` script runs them.
NOT_FOR_READS = (
    "pyspark", "pandas", "pyarrow", "scipy", "rich",
    "kjbod.planner.core", "kjbod.planner.run", "kjbod.simulation", "kjbod.tools.importer", "kjbod.tools.reassign", "kjbod.kafka_formats",
    "kjbod.controller.controller", "kjbod.controller.replication_control", "kjbod.controller.reassignment_control",
)
READS = (
    ("broker", "list"), ("broker", "describe", "--id", "1"), ("topic", "describe", "orders"), ("topic", "describe"),
    ("log-dirs", "describe", "--broker-list", "1"), ("features", "describe"), ("-o", "json", "topic", "describe", "orders"),
)


def test_the_read_commands_load_nothing_they_do_not_use(cli: Cli, bootstrapped: Path) -> None:
    assert cli("broker", "register", "--id", "1", "--dir=/data/d1=AAAAAAAAAAAAAAAAAAAAZA").exit_code == 0
    assert cli("broker", "heartbeat", "--id", "1").exit_code == 0
    assert cli("topic", "create", "orders", "--replica-assignment", "1,1").exit_code == 0
    code = f"""
import json, sys
from kjbod.cli.app import main
for args in {READS!r}:
    sys.argv = ["kjbod", "--state", {str(bootstrapped)!r}, *args]
    try:
        main()
    except SystemExit as exit:
        assert not exit.code, (args, exit.code)
print(json.dumps(sorted(m for m in sys.modules if any(m == x or m.startswith(x + ".") for x in {NOT_FOR_READS!r}))), file=sys.stderr)
import os
print(os.environ.get("OPENBLAS_NUM_THREADS"), file=sys.stderr)  # main() keeps numpy's BLAS to one thread
"""
    environment = {name: value for name, value in os.environ.items() if name != "OPENBLAS_NUM_THREADS"}
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=environment)
    assert result.returncode == 0, result.stderr
    assert "Directories: /data/d1" in result.stdout  # the reads ran
    assert json.loads(result.stderr.splitlines()[-2]) == []
    assert result.stderr.splitlines()[-1] == "1"
