"""java.util.Properties files, read and written as Java does (storage reference §1.6).

Parsing is javaproperties' (comments with # and !, = : or whitespace separators, continuation
lines, escapes, \\uXXXX escapes, later keys overriding earlier ones). Kafka reads both
server.properties and meta.properties with `Properties.load(InputStream)`, i.e. as ISO-8859-1,
so files are decoded that way here too.

Writing follows `Properties.store`: a comment line, a `#<Date.toString()>` line, then one
`key=value` line per entry with Java's escaping. Kafka stores meta.properties through a UTF-8
Writer, which writes non-ASCII characters raw even though its own reader decodes ISO-8859-1, so a
non-ASCII value does not survive Kafka's round trip (§1.6, a Kafka bug). kjbod writes those
characters as \\uXXXX escapes instead (what `store(OutputStream)` does): the file is pure ASCII,
reads back identically in Kafka and here, and is byte-identical to Kafka's for ASCII content.
"""

from __future__ import annotations

import errno
from collections.abc import Iterable
from datetime import datetime
from pathlib import Path

import javaproperties

from kjbod.errors import UserError


class PropertiesError(UserError):
    """A properties file that cannot be read or parsed; the message names the file."""

    def __init__(self, message: str, path: Path, *, missing: bool = False) -> None:
        super().__init__(message)
        self.path = path
        # True when the file (or a directory above it) does not exist.
        self.missing = missing


def parse_properties(data: bytes | str, source: Path) -> dict[str, str]:
    """Parse properties text; raises PropertiesError naming `source` for malformed escapes."""
    try:
        return javaproperties.loads(data)
    except javaproperties.InvalidUEscapeError as exc:
        # Java: IllegalArgumentException("Malformed \\uxxxx encoding.")
        raise PropertiesError(f"Malformed \\uxxxx encoding ({exc.escape}) in {source}", source) from None


def read_properties(path: Path) -> dict[str, str]:
    """Read a properties file; every failure is a PropertiesError naming the path."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        missing = isinstance(exc, FileNotFoundError) or exc.errno == errno.ENOENT
        raise PropertiesError(f"Cannot read {path}: {exc.strerror or exc}", path, missing=missing) from None
    return parse_properties(data, path)


def format_properties(
    entries: Iterable[tuple[str, str]],
    *,
    comment: str | None = "",
    date: datetime | None = None,
) -> bytes:
    """The bytes `Properties.store(writer, comment)` writes, with entries in the given order.

    `date` is the moment for the `#<date>` line (Java's `Date.toString()`: `Fri Oct 25 03:33:01
    UTC 2024`); None means now, in the local time zone, as Java does.
    """
    text = javaproperties.dumps(
        entries,
        comments=comment,
        timestamp=True if date is None else date,
        ensure_ascii=True,
        ensure_ascii_comments=True,
    )
    return text.encode("ascii")
