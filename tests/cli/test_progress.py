"""Progress of long operations: a status line on an interactive terminal, nothing in a pipe or
with --output json."""

from __future__ import annotations

import io
import json
import os
import re
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest

from kjbod.cli.context import AppContext, OutputFormat
from kjbod.cli.progress import Progress

from ..conftest import Cli
from .support import ASSIGNMENT, BROKERS, LOG_DIRS

KJBOD = Path(sys.executable).parent / "kjbod"


class FakeTerminal(io.StringIO):
    """A stderr that says it is a terminal."""

    def isatty(self) -> bool:
        return True


def app_on(stream: io.StringIO, output: OutputFormat = OutputFormat.text) -> AppContext:
    return AppContext(state_dir=Path("unused"), output=output, stdout=io.StringIO(), stderr=stream)


def test_a_terminal_gets_a_status_line_that_goes_away() -> None:
    terminal = FakeTerminal()
    app_ = app_on(terminal)
    with Progress(app_, "Planning") as progress:
        progress("Starting Spark (local[*])")
        time.sleep(0.3)  # the status redraws on its own thread
        app_.message("Skipping 00000000000000000120.snapshot: damaged; using the log.")
    written = terminal.getvalue()
    assert "Starting Spark (local[*])" in written
    assert "s] Starting Spark" in written  # with the elapsed time
    # A message during the status is printed whole, above it, and stderr is the terminal again.
    assert "Skipping 00000000000000000120.snapshot: damaged; using the log.\n" in written
    assert app_.stderr is terminal
    # The status line is erased at the end (transient) and the cursor shown again.
    assert written.startswith("\x1b[?25l") and "\x1b[?25h" in written[-20:] and written.endswith("\x1b[2K")


@pytest.mark.parametrize(
    ("stream", "output"),
    [(io.StringIO(), OutputFormat.text), (FakeTerminal(), OutputFormat.json)],
    ids=["pipe", "json-on-a-terminal"],
)
def test_a_pipe_or_json_output_gets_nothing(stream: io.StringIO, output: OutputFormat) -> None:
    app_ = app_on(stream, output)
    with Progress(app_, "Planning") as progress:
        progress("Starting Spark")
        time.sleep(0.1)
        app_.message("a message")
    assert stream.getvalue() == "a message\n"
    assert app_.stderr is stream


def test_a_delayed_status_line_appears_only_for_slow_operations() -> None:
    quick = FakeTerminal()
    with Progress(app_on(quick), "Loading the cluster state", delay=5) as progress:
        progress("Replaying the record log: offset 0 (100%)")
    assert quick.getvalue() == ""
    slow = FakeTerminal()
    with Progress(app_on(slow), "Loading the cluster state", delay=0.05) as progress:
        progress("Replaying the record log: offset 5,000 (40%)")
        time.sleep(0.3)
    assert "Replaying the record log: offset 5,000 (40%)" in slow.getvalue()


def test_commands_stay_quiet_when_stderr_is_not_a_terminal(cli: Cli, tmp_path: Path) -> None:
    (tmp_path / "b.json").write_text(json.dumps(BROKERS))
    (tmp_path / "a.json").write_text(json.dumps(ASSIGNMENT))
    state = tmp_path / "imported"
    imported = cli("import", "cluster", "--brokers", str(tmp_path / "b.json"), "--assignment", str(tmp_path / "a.json"), state=state)
    assert (imported.exit_code, imported.stderr) == (0, "")
    for args in (["clock", "advance", "10m"], ["reassign", "plan", "--goal", "balance", "--engine", "local", "--output-file", str(tmp_path / "p.json")]):
        result = cli(*args, state=state)
        assert (result.exit_code, result.stderr) == (0, ""), result.stderr


def _on_a_pty(args: list[str], *, stdout_to_pty: bool = True) -> tuple[int, str, str]:
    """Run kjbod with stderr (and stdout) on a pseudo-terminal: what the terminal showed, and stdout if piped."""
    master, slave = os.openpty()
    env = {**os.environ, "TERM": "xterm", "COLUMNS": "120"}
    proc = subprocess.Popen(
        [str(KJBOD), *args], stdin=subprocess.DEVNULL, stdout=slave if stdout_to_pty else subprocess.PIPE, stderr=slave, env=env
    )
    os.close(slave)
    shown = b""
    while True:
        ready, _, _ = select.select([master], [], [], 60)
        if not ready:
            break
        try:
            chunk = os.read(master, 65536)
        except OSError:  # the child closed the terminal
            break
        if not chunk:
            break
        shown += chunk
    os.close(master)
    piped = proc.stdout.read().decode() if proc.stdout else ""
    return proc.wait(timeout=60), shown.decode(errors="replace"), piped


@pytest.mark.skipif(not KJBOD.exists() or sys.platform == "win32", reason="needs the kjbod script and a pseudo-terminal")
def test_import_shows_its_progress_on_a_real_terminal_but_not_with_json(tmp_path: Path) -> None:
    (tmp_path / "b.json").write_text(json.dumps(BROKERS))
    (tmp_path / "a.json").write_text(json.dumps(ASSIGNMENT))
    (tmp_path / "l.txt").write_text(json.dumps(LOG_DIRS))
    files = ["import", "cluster", "--brokers", str(tmp_path / "b.json"), "--assignment", str(tmp_path / "a.json"), "--log-dirs", str(tmp_path / "l.txt")]
    code, shown, _ = _on_a_pty(["--state", str(tmp_path / "one"), *files])
    assert code == 0, shown
    # A status line (spinner, elapsed time, the importer's step), erased before the report.
    assert re.search(r"\[ +\d+\.\ds\] (Importing|Reading|Building|Writing)", shown), shown
    assert "\x1b[2KImported 3 broker(s)" in shown
    code, shown, piped = _on_a_pty(["-o", "json", "--state", str(tmp_path / "two"), *files], stdout_to_pty=False)
    assert (code, shown) == (0, "")
    assert json.loads(piped)["brokers"] == 3
