"""Small pieces the library's long operations share: the do-nothing callback for a caller that
wants no notes or progress, and pausing the cyclic garbage collector around bulk loads."""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterator
from contextlib import contextmanager

Progress = Callable[[str], None]


def ignore(_: str) -> None:
    """The default notify/progress callback. Callers compare with `is ignore` to skip work
    (counting, timing) that only a real listener needs, so it must be this one object."""


@contextmanager
def gc_paused(*, keep: bool = False) -> Iterator[None]:
    """Loading a state or an export creates millions of small acyclic objects; the cyclic
    collector would rescan them over and over (it doubles the time) for nothing. With `keep`,
    what was made is meant to live as long as the command: it is moved out of the collector's
    sight (gc.freeze) before the collector resumes, which would otherwise scan it all once."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if keep:
            gc.freeze()
        if enabled:
            gc.enable()
