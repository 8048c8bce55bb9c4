"""Write docs/cli.md, kjbod's command-line reference, from the command tree itself.

    python docs/generate.py           # rewrite docs/cli.md
    python docs/generate.py --check   # exit 1 if docs/cli.md is not what the code generates

Every command and group gets a section with its `--help` text (usage, description with an
example, options with their help), rendered by the same formatter as `kjbod ... --help` at a
fixed width, so the file does not depend on the terminal it was generated in.
tests/test_docs.py fails when the file is stale.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

TARGET = Path(__file__).resolve().parent / "cli.md"
WIDTH = 100
# Typer's own completion options: shell-specific, documented in the README instead.
HIDDEN_OPTIONS = ("--install-completion", "--show-completion")

HEADER = """\
# kjbod command-line reference

Generated from the command tree by `python docs/generate.py` (the `--help` of every command);
do not edit by hand. The contract behind it: global options come before the command, `-o json`
prints exactly one JSON document on stdout, and exit codes are `0` success, `1` failed or
refused, `2` malformed command line, `3` corrupt or locked state.
"""


def root_command() -> Any:
    """The Click command behind `kjbod` (Typer vendors its own Click)."""
    import typer.main

    from kjbod.cli.app import app

    return typer.main.get_command(app)


def walk(command: Any, ctx: Any) -> Iterator[tuple[Any, Any]]:
    """(command, context) for the command and every subcommand, depth first, in listing order."""
    yield command, ctx
    for name in command.list_commands(ctx) if hasattr(command, "list_commands") else ():
        sub = command.get_command(ctx, name)
        if sub is None or sub.hidden:
            continue
        sub_ctx = sub.make_context(name, [], parent=ctx, resilient_parsing=True)
        yield from walk(sub, sub_ctx)


def command_contexts() -> list[tuple[Any, Any]]:
    root = root_command()
    ctx = root.make_context("kjbod", [], resilient_parsing=True, terminal_width=WIDTH, max_content_width=WIDTH)
    return list(walk(root, ctx))


def _help_text(command: Any, ctx: Any) -> str:
    hidden = [param for param in command.params if any(opt in HIDDEN_OPTIONS for opt in getattr(param, "opts", ()))]
    for param in hidden:
        param.hidden = True
    try:
        return command.get_help(ctx).rstrip()
    finally:
        for param in hidden:
            param.hidden = False


def summary_line(command: Any) -> str:
    """The first line of the command's help (its docstring's summary line)."""
    return (command.help or "").strip().split("\n", 1)[0].strip()


def _anchor(title: str) -> str:
    """GitHub's heading anchor: lower case, spaces to dashes, punctuation dropped."""
    return "".join(ch for ch in title.lower().replace(" ", "-") if ch.isalnum() or ch in "-_")


def render() -> str:
    contexts = command_contexts()
    titles = [ctx.command_path for _, ctx in contexts]
    lines = [HEADER, "## Commands", ""]
    for (command, _), title in zip(contexts, titles):
        indent = "  " * (title.count(" ") - 1) if " " in title else ""
        summary = summary_line(command)
        lines.append(f"{indent}- [`{title}`](#{_anchor(title)}){f': {summary}' if summary else ''}")
    for (command, ctx), title in zip(contexts, titles):
        lines += ["", f"## {title}", "", "```text", _help_text(command, ctx), "```"]
    return "\n".join(lines) + "\n"


def main(argv: list[str]) -> int:
    text = render()
    if argv == ["--check"]:
        if TARGET.exists() and TARGET.read_text(encoding="utf-8") == text:
            return 0
        print(f"{TARGET} is stale: run `python docs/generate.py`", file=sys.stderr)
        return 1
    if argv:
        print(__doc__, file=sys.stderr)
        return 2
    TARGET.write_text(text, encoding="utf-8")
    print(f"Wrote {TARGET}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
