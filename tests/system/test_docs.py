"""The CLI reference (docs/cli.md) is current, and every command documents itself: a help text
with an example that really parses, and help on every option and argument."""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any

import pytest

from .scripts import load_script


docs = load_script("docs/generate.py")
COMMANDS = docs.command_contexts()
IDS = [ctx.command_path for _, ctx in COMMANDS]


def test_the_cli_reference_is_current() -> None:
    expected = docs.render()
    found = docs.TARGET.read_text(encoding="utf-8") if docs.TARGET.exists() else ""
    assert found == expected, "docs/cli.md is stale: run `python docs/generate.py` and commit the result"


def test_the_reference_has_a_section_for_every_command() -> None:
    text = docs.TARGET.read_text(encoding="utf-8")
    for path in IDS:
        assert f"\n## {path}\n" in text
    # Every group and command of the contract is there (a sample that must never disappear).
    for path in ("kjbod format", "kjbod reassign plan", "kjbod log-dirs import", "kjbod clock advance", "kjbod import cluster"):
        assert path in IDS


def test_the_check_mode_fails_on_a_stale_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    stale = tmp_path / "cli.md"
    stale.write_text("# out of date\n")
    monkeypatch.setattr(docs, "TARGET", stale)
    assert docs.main(["--check"]) == 1
    assert "run `python docs/generate.py`" in capsys.readouterr().err
    assert docs.main([]) == 0
    assert docs.main(["--check"]) == 0


def _examples(help_text: str) -> list[str]:
    """The text after each "Example:" (one per help text today, on one line)."""
    found = []
    for line in help_text.splitlines():
        _, marker, rest = line.partition("Example: ")
        if marker:
            found.append(rest.strip())
    return found


def _resolve(example: str) -> tuple[Any, Any]:
    """Parse an example command line with the real parser: the command it names and its context.
    Raises the parser's error if a flag is unknown, a value invalid or a required option missing."""
    words = shlex.split(example)
    assert words[0] == "kjbod", example
    root = docs.root_command()
    ctx = root.make_context("kjbod", words[1:], terminal_width=docs.WIDTH)
    command, args = root, _remaining(ctx)
    while hasattr(command, "resolve_command") and args:
        name, sub, rest = command.resolve_command(ctx, args)
        ctx = sub.make_context(name, rest, parent=ctx)
        command = sub
        args = _remaining(ctx) if hasattr(sub, "resolve_command") else []
    return command, ctx


def _remaining(ctx: Any) -> list[str]:
    """What a group's parse left for its subcommand (Click keeps the subcommand's name apart)."""
    protected = getattr(ctx, "_protected_args", None)
    if protected is None:
        protected = getattr(ctx, "protected_args", [])
    return [*protected, *ctx.args]


@pytest.mark.parametrize(("command", "ctx"), COMMANDS, ids=IDS)
def test_every_command_has_help_with_an_example_that_parses(command: Any, ctx: Any) -> None:
    summary = docs.summary_line(command)
    assert summary, f"{ctx.command_path} has no help text"
    examples = _examples(command.help or "")
    assert examples, f"{ctx.command_path} has no 'Example: kjbod ...' line in its help"
    for example in examples:
        _, resolved = _resolve(example)
        # A group's example runs one of its commands.
        path = resolved.command_path
        assert path == ctx.command_path or path.startswith(ctx.command_path + " "), (
            f"the example of {ctx.command_path} runs another command: {example}"
        )


@pytest.mark.parametrize(("command", "ctx"), COMMANDS, ids=IDS)
def test_every_option_and_argument_has_help(command: Any, ctx: Any) -> None:
    missing = [
        param.name
        for param in command.params
        if param.name != "help" and not (getattr(param, "help", None) or "").strip()
    ]
    assert not missing, f"{ctx.command_path}: no help text for {', '.join(missing)}"


def test_the_audit_catches_a_command_without_an_example() -> None:
    assert _examples("Do something.\n\nNo example here.") == []
    with pytest.raises(Exception, match="No such option"):
        _resolve("kjbod clock advance --no-such-flag")


@pytest.mark.parametrize(("command", "ctx"), COMMANDS, ids=IDS)
def test_json_examples_in_help_are_printed_line_for_line(command: Any, ctx: Any) -> None:
    """A JSON example has no spaces to wrap at, so Click broke it inside a word; help that holds
    one is a `\\b` block (cli/render.py verbatim), whose lines reach the reader whole."""
    rendered = docs._help_text(command, ctx).splitlines()
    for param in command.params:
        text = getattr(param, "help", None) or ""
        if '{"' not in text:
            continue
        assert text.startswith("\b\n"), f"{ctx.command_path} {param.opts[0]}: JSON in help needs verbatim(...)"
        for line in text.split("\n")[1:]:
            assert any(shown.rstrip().endswith(line) or line + "  [required]" in shown for shown in rendered), (
                f"{ctx.command_path} {param.opts[0]}: {line!r} was rewrapped"
            )
