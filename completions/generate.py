"""Write kjbod's shell completion scripts with Typer's own completion machinery.

    python completions/generate.py           # rewrite kjbod.bash, _kjbod and kjbod.fish here
    python completions/generate.py --check   # exit 1 if a script is not what Typer generates

Each script is what `_KJBOD_COMPLETE=source_<shell> kjbod` prints (Typer's spelling of Click's
`<shell>_source`). The scripts are thin: at every TAB the shell runs `kjbod` again with
`_KJBOD_COMPLETE=complete_<shell>`, and kjbod answers from its live command tree, so commands,
options and choices are always those of the installed version. They need `kjbod` on PATH
(completion does not work through `python -m kjbod`). tests/test_completions.py fails when a
file is stale. Installation: see the README's "Shell completion" section.
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
PROG = "kjbod"
COMPLETE_VAR = "_KJBOD_COMPLETE"
# shell -> the file name each shell's convention expects.
FILES = {"bash": "kjbod.bash", "zsh": "_kjbod", "fish": "kjbod.fish"}


def script(shell: str) -> str:
    """The completion script for `shell`, as `kjbod` itself prints it."""
    from typer.testing import CliRunner

    from kjbod.cli.app import app

    result = CliRunner().invoke(app, [], env={COMPLETE_VAR: f"source_{shell}"}, prog_name=PROG, catch_exceptions=False)
    if result.exit_code != 0 or not result.stdout.strip():
        raise RuntimeError(f"kjbod printed no {shell} completion script (exit {result.exit_code}): {result.stderr.strip()}")
    # Without the leading blank line Typer prints, `#compdef` is the first line, as compinit requires.
    return result.stdout.strip("\n") + "\n"


def scripts() -> dict[Path, str]:
    return {HERE / name: script(shell) for shell, name in FILES.items()}


def stale(expected: dict[Path, str]) -> list[Path]:
    return [path for path, text in expected.items() if not path.exists() or path.read_text(encoding="utf-8") != text]


def main(argv: list[str]) -> int:
    expected = scripts()
    if argv == ["--check"]:
        outdated = stale(expected)
        for path in outdated:
            print(f"{path} is stale: run `python completions/generate.py`", file=sys.stderr)
        return 1 if outdated else 0
    if argv:
        print(__doc__, file=sys.stderr)
        return 2
    for path, text in expected.items():
        path.write_text(text, encoding="utf-8")
        print(f"Wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
