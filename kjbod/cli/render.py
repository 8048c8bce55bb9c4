"""The one renderer: every command hands it a view with a text form and a JSON form.

Text is what an operator reads (Kafka's exact lines where kjbod mirrors a Kafka tool, tables
otherwise); JSON is exactly one document on stdout with stable keys. Tables look as rich draws
them; rich is imported only for a table that does not fit the terminal or holds more than plain
ASCII text (the others are drawn directly, as rich would), so commands start and finish fast.
"""

from __future__ import annotations

import io
import json
import os
import shutil
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from itertools import islice
from typing import Any, Protocol

from kjbod.cli.context import AppContext
from kjbod.common.json_text import indented_json


LINES_PER_WRITE = 4096


class View(Protocol):
    def to_json(self) -> Any: ...

    def to_text(self) -> Iterable[str]: ...


@dataclass
class Lines:
    """Plain text lines, and the data behind them for `--output json`."""

    lines: Sequence[str]
    data: Any

    def to_json(self) -> Any:
        return self.data

    def to_text(self) -> Iterable[str]:
        return self.lines


@dataclass
class Column:
    title: str
    key: str
    justify: str = "left"
    # How the value appears in text; JSON always gets the raw value.
    fmt: Callable[[Any], str] = str


@dataclass
class Table:
    columns: Sequence[Column]
    rows: Sequence[dict[str, Any]]
    title: str | None = None
    # Extra lines printed under the table in text mode.
    footer: Sequence[str] = field(default_factory=list)
    # The JSON document; defaults to the rows.
    data: Any = None

    def to_json(self) -> Any:
        return self.rows if self.data is None else self.data

    def cells(self) -> list[list[str]]:
        return [
            [column.fmt(row.get(column.key)) if row.get(column.key) is not None else "-" for column in self.columns] for row in self.rows
        ]

    def to_text(self) -> Iterable[str]:
        cells = self.cells()
        width = _width()
        lines = _plain_table(self.columns, cells, self.title, width)
        if lines is None:
            lines = _rich_table(self.columns, cells, self.title, width)
        return lines + list(self.footer)


def _plain_table(columns: Sequence[Column], cells: list[list[str]], title: str | None, width: int) -> list[str] | None:
    """The lines rich draws for a table that fits the width and holds plain ASCII text, drawn
    without rich (which takes a second for a thousand rows); None for any other table."""
    texts = [column.title for column in columns] + [cell for row in cells for cell in row] + ([title] if title is not None else [])
    if not columns or any(column.justify not in ("left", "right") or not column.title for column in columns):
        return None
    if not all(text.isascii() and text.isprintable() and text == text.strip() for text in texts):
        return None
    widths = [max([len(column.title), *(len(row[i]) for row in cells)]) for i, column in enumerate(columns)]
    last = len(columns) - 1

    def line(values: Sequence[str]) -> str:
        parts = []
        for i, (value, column) in enumerate(zip(values, columns)):
            text = value.rjust(widths[i]) if column.justify == "right" else value.ljust(widths[i])
            parts.append((" " if i else "") + text + (" " if i < last else ""))
        return (" " + " ".join(parts) + " ").rstrip()

    total = 2 + sum(widths) + 2 * last + last  # edges, cells, their inner padding, separators
    if total > width or (title is not None and len(title) > total):
        return None
    lines = [title, ""] if title is not None else []
    lines.append(line([column.title for column in columns]))
    lines.append(" " + "\u2500" * (total - 2))
    lines.extend(line(row) for row in cells)
    while lines and not lines[0]:
        lines.pop(0)
    while lines and not lines[-1]:
        lines.pop()
    return lines


def _rich_table(columns: Sequence[Column], cells: list[list[str]], title: str | None, width: int) -> list[str]:
    from rich import box
    from rich.console import Console
    from rich.table import Table as RichTable

    table = RichTable(title=title, box=box.SIMPLE_HEAD, title_justify="left", pad_edge=False)
    for column in columns:
        table.add_column(column.title, justify=column.justify, no_wrap=True)  # type: ignore[arg-type]
    for row in cells:
        table.add_row(*row)
    buffer = io.StringIO()
    Console(file=buffer, width=width, color_system=None, markup=False, highlight=False, emoji=False).print(table)
    lines = [line.rstrip() for line in buffer.getvalue().split("\n")]
    while lines and not lines[0]:
        lines.pop(0)
    while lines and not lines[-1]:
        lines.pop()
    return lines


def _width() -> int:
    columns = os.environ.get("COLUMNS", "")
    if columns.isdigit():
        return int(columns)
    return max(shutil.get_terminal_size((160, 24)).columns, 80)


def verbatim(*lines: str) -> str:
    """Help text that Click prints line for line (its `\\b` marker): a JSON example is not
    rewrapped, so it is never broken inside a word. Keep each line within the help column."""
    return "\b\n" + "\n".join(lines)


def emit(app: AppContext, view: View) -> None:
    """Write a view to stdout in the selected output format."""
    if app.json:
        app.stdout.write(indented_json(view.to_json()) + "\n")
        app.emitted = True
    else:
        # A few thousand lines per write: a write per line costs a system call each when stdout
        # is unbuffered (PYTHONUNBUFFERED), and a hot topic is described in 100,000 lines.
        lines = iter(view.to_text())
        while chunk := list(islice(lines, LINES_PER_WRITE)):
            app.stdout.write("\n".join(chunk) + "\n")
    app.stdout.flush()


def emit_error(app: AppContext, message: str, exit_code: int) -> None:
    """An error: one line on stderr, and in JSON mode an error document if none was written."""
    app.message(message)
    emit_error_document(app, message, exit_code)


def emit_error_document(app: AppContext, message: str, exit_code: int) -> None:
    """In JSON mode, the error document on stdout (unless a document was already written)."""
    if app.json and not app.emitted:
        app.stdout.write(json.dumps({"error": {"message": message, "exitCode": exit_code}}, indent=2) + "\n")
        app.stdout.flush()
        app.emitted = True
