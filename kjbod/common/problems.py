"""Checking input files: every problem found in one pass, each named by its file and JSON path.

Import commands read several large files; an operator fixing them wants every problem at once,
not one per run. Nothing is written while any problem stands.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

from kjbod.errors import UserError


class Problems:
    """Every problem found in one pass, each as `<file> <JSON path>: <what is wrong>`."""

    def __init__(self) -> None:
        self.items: list[str] = []

    def add(self, source: str, path: str, message: str) -> None:
        self.items.append(f"{source} {path}: {message}")

    def __bool__(self) -> bool:
        return bool(self.items)

    def __len__(self) -> int:
        return len(self.items)


class ValidationFailed(UserError):
    """Input files with problems; nothing was written. `problems` lists every one."""

    def __init__(self, problems: list[str], what: str) -> None:
        super().__init__(f"{len(problems)} problem(s) found; {what}")
        self.problems = problems


def type_name(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a number with a fraction"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return "an object"


def load_json(path: Path, problems: Problems, *, skip_preamble: Callable[[bytes], int] | None = None) -> Any:
    """Parse a JSON file strictly (no NaN or Infinity, integers within 64 bits); a problem and
    None when it cannot be read or parsed. `skip_preamble` gives where the JSON starts in files
    that have lines before it (kafka-log-dirs' header lines, log lines)."""
    source = str(path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        problems.add(source, "$", f"cannot read the file: {exc.strerror or exc}")
        return None
    return parse_json(data, source, problems, start=skip_preamble(data) if skip_preamble else 0)


def parse_json(data: bytes, source: str, problems: Problems, *, start: int = 0) -> Any:
    """`load_json` of bytes already read (from `start`): the document, or a problem and None."""
    try:
        return orjson.loads(memoryview(data)[start:])
    except orjson.JSONDecodeError as exc:
        line = exc.lineno + data.count(b"\n", 0, start)
        problems.add(source, "$", f"not valid JSON: {exc.msg} (line {line}, column {exc.colno})")
        return None
