"""The shell completion scripts in completions/ are current and complete kjbod's real command
tree: commands, subcommands, options and choices."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kjbod.cli.app import app

from .scripts import load_script

completions = load_script("completions/generate.py")
BIN = Path(sys.executable).parent


def test_the_completion_scripts_are_current() -> None:
    expected = completions.scripts()
    assert sorted(path.name for path in expected) == ["_kjbod", "kjbod.bash", "kjbod.fish"]
    stale = completions.stale(expected)
    assert not stale, f"{', '.join(p.name for p in stale)} stale: run `python completions/generate.py` and commit the result"


def test_the_check_mode_names_the_command_to_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(completions, "HERE", tmp_path)
    (tmp_path / "kjbod.bash").write_text("# an old script\n")
    assert completions.main(["--check"]) == 1
    err = capsys.readouterr().err
    assert "kjbod.bash is stale: run `python completions/generate.py`" in err and "_kjbod is stale" in err
    assert completions.main([]) == 0
    assert completions.main(["--check"]) == 0
    assert (tmp_path / "_kjbod").read_text().startswith("#compdef kjbod\n")


def _bash_complete(line: str) -> list[str]:
    """What bash offers at the end of `line` with completions/kjbod.bash loaded."""
    script = completions.HERE / "kjbod.bash"
    program = f"""
source {script}
read -ra COMP_WORDS <<< "$LINE"
[[ "$LINE" == *" " ]] && COMP_WORDS+=("")
COMP_CWORD=$(( ${{#COMP_WORDS[@]}} - 1 ))
_kjbod_completion kjbod
printf '%s\\n' "${{COMPREPLY[@]}}"
"""
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}", "LINE": line}
    result = subprocess.run(["bash", "--norc", "-c", program], capture_output=True, text=True, env=env, timeout=60)
    assert result.returncode == 0, result.stderr
    return [word for word in result.stdout.split("\n") if word]


@pytest.mark.skipif(shutil.which("bash") is None or not (BIN / "kjbod").exists(), reason="needs bash and the kjbod script")
def test_bash_completes_commands_options_and_choices() -> None:
    assert _bash_complete("kjbod rea") == ["reassign"]
    assert _bash_complete("kjbod reassign pl") == ["plan"]
    assert _bash_complete("kjbod reassign plan --go") == ["--goal"]
    assert _bash_complete("kjbod reassign plan --goal ") == [
        "balance", "add-brokers", "remove-brokers", "drain-dirs", "fix-offline", "rebalance-disks",
    ]
    assert _bash_complete("kjbod -o ") == ["text", "json"]


def _complete(shell: str, line: str) -> str:
    env = {completions.COMPLETE_VAR: f"complete_{shell}", "_TYPER_COMPLETE_ARGS": line, "_TYPER_COMPLETE_FISH_ACTION": "get-args"}
    result = CliRunner().invoke(app, [], env=env, prog_name="kjbod")
    assert result.exit_code == 0, result.output
    return result.stdout


def test_zsh_and_fish_get_commands_with_their_summaries() -> None:
    zsh = _complete("zsh", "kjbod log-dirs ")
    assert zsh.startswith("_arguments '*: :((") and '"describe":"Show each broker' in zsh and '"import":"Load saved' in zsh
    fish = _complete("fish", "kjbod clock ")
    assert [line.split("\t")[0] for line in fish.splitlines()] == ["show", "advance", "set-rate"]


@pytest.mark.skipif(shutil.which("bash") is None or not (BIN / "kjbod").exists(), reason="needs bash and the kjbod script")
def test_bash_completes_names_from_the_cluster_state(tmp_path: Path) -> None:
    from kjbod.records import FeatureLevelRecord, TopicRecord
    from kjbod.state.cluster_state import ClusterState

    state = tmp_path / "state"
    with ClusterState.open(state, write=True, create=True) as opened:
        opened.commit([FeatureLevelRecord(name="metadata.version", feature_level=30)])
        opened.commit([TopicRecord(name="orders", topic_id="cJ3rE4bvQc2w5Y0kT1q9Zg"), TopicRecord(name="audit", topic_id="AAAAAAAAAAAAAAAAAAAAZA")])
    assert _bash_complete(f"kjbod --state {state} topic describe ") == ["audit", "orders"]
    assert _bash_complete(f"kjbod --state {state} topic describe or") == ["orders"]
