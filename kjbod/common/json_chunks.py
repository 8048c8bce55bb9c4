"""A large JSON document in a known compact layout, read as chunks of its one big array.

The files an import reads at millions of partitions (an assignment, kafka-log-dirs output) are
hundreds of megabytes to gigabytes of one array of small objects, in the compact layout the
tool that wrote them uses (`{"version":1,"partitions":[{..},{..}]}`). Parsing such a document
whole makes gigabytes of objects at once; this module cuts the array's text into chunks of
whole elements instead, read from the file a few megabytes at a time, which the caller decodes
one by one as `[` + chunk + `]`.

Chunks are cut where a `boundary` occurs (e.g. `},{"topic":`). A boundary inside a string or a
nested value cuts an element in two, but then a chunk does not decode on its own; and when
every chunk decodes as an array, the document is exactly the concatenation of those arrays
(`[a,b]` and `[c]` valid means `[a,b,c]` is, with these elements). So a caller that decodes
every chunk has read the document, and one that meets a chunk that does not decode reads the
document the ordinary way, which names the problem if there is one.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

CHUNK_BYTES = 8 * 1024 * 1024
_HEAD_BYTES = 1024 * 1024
_TAIL_BYTES = 4096
_SPACE = b" \t\r\n"


class ArrayChunks:
    """The chunks of the array of a document in one of `layouts` ((head, tail) pairs: the bytes
    before and after the array), after the lines `skip_preamble` finds before the JSON. `open`
    gives None for a document in no such layout (or that cannot be read)."""

    def __init__(self, path: Path, body_start: int, body_end: int, boundary: bytes, chunk_bytes: int) -> None:
        self.path = path
        self.body_start = body_start
        self.body_end = body_end
        self.boundary = boundary
        self.chunk_bytes = chunk_bytes

    @classmethod
    def open(
        cls,
        path: Path,
        layouts: Sequence[tuple[bytes, bytes]],
        boundary: bytes,
        *,
        skip_preamble: Callable[[bytes], int] | None = None,
        chunk_bytes: int | None = None,
    ) -> ArrayChunks | None:
        assert boundary.startswith(b"},"), "a boundary is the end of one element, a comma and the start of the next"
        try:
            with path.open("rb") as handle:
                size = os.fstat(handle.fileno()).st_size
                head = handle.read(_HEAD_BYTES)
                handle.seek(max(0, size - _TAIL_BYTES))
                tail = handle.read()
        except OSError:
            return None
        start = skip_preamble(head) if skip_preamble is not None else 0
        if start >= len(head) and size > len(head):
            return None  # a preamble longer than we look at: not the usual file
        end = size
        tail_start = size - len(tail)
        while end > tail_start and tail[end - tail_start - 1] in _SPACE:
            end -= 1
        for opening, closing in layouts:
            if head.startswith(opening, start) and tail.endswith(closing, 0, end - tail_start):
                body_start, body_end = start + len(opening), end - len(closing)
                if body_start <= body_end:
                    return cls(path, body_start, body_end, boundary, chunk_bytes or CHUNK_BYTES)
        return None

    def __iter__(self) -> Iterator[bytes]:
        """The array's text in chunks of whole elements (as far as the boundaries tell), without
        the commas between chunks; nothing for an empty array."""
        if self.body_start == self.body_end:
            return
        boundary = self.boundary
        with self.path.open("rb") as handle:
            handle.seek(self.body_start)
            left = self.body_end - self.body_start
            carry = b""
            while left > 0:
                block = handle.read(min(self.chunk_bytes, left))
                if not block:
                    raise OSError(f"{self.path} ended early (was it changed while read?)")
                left -= len(block)
                buffer = carry + block if carry else block
                if left <= 0:
                    carry = buffer
                    break
                cut = buffer.rfind(boundary)
                if cut < 0:
                    carry = buffer
                    continue
                # The boundary is `}` + `,` + the next element's start.
                yield buffer[: cut + 1]
                carry = buffer[cut + 2 :]
            if carry:
                yield carry
