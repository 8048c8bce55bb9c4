"""Progress of long operations (planning, importing, advancing the clock, loading a large state).

On an interactive terminal a status line on stderr shows what the operation is doing and for
how long, and disappears when it ends. In a pipe, a file or with `--output json` nothing at all
is printed, so scripts see exactly the same streams as without it.

The library reports progress through a plain `Callable[[str], None]` (it never imports rich);
`Progress` is that callable.
"""

from __future__ import annotations

import threading
import time
from types import TracebackType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kjbod.cli.context import AppContext

# Reading a small state takes milliseconds: a status line would only flicker. Loads that take
# longer than this show one.
LOADING_DELAY = 0.5


class _StatusText:
    """The status line's text, rendered on every refresh so that the elapsed time keeps ticking
    while the library is busy in one long step."""

    def __init__(self, text: str, started: float) -> None:
        self.text = text
        self.started = started

    def __rich__(self) -> Any:
        from rich.text import Text

        # One line that never wraps: a wrapped status line cannot be redrawn in place.
        return Text(f"[{time.perf_counter() - self.started:5.1f}s] {self.text}", no_wrap=True, overflow="ellipsis")


class Progress:
    """A status line on stderr for the duration of a `with` block, on an interactive terminal
    only (`AppContext.interactive`: stderr is a terminal and the output is not JSON).

        with Progress(app_, "Planning") as progress:
            plan_reassignment(..., progress=progress)

    Calling the object updates the text. With `delay`, the line appears only if the block is
    still running after that many seconds. While it is shown, the command's stderr messages
    (`app_.message`) are printed above it instead of through it.
    """

    def __init__(self, app_: AppContext, text: str, *, delay: float = 0.0) -> None:
        self.app = app_
        self.enabled = app_.interactive
        self.delay = delay
        self.text = _StatusText(text, time.perf_counter())
        self._status: Any = None
        self._timer: threading.Timer | None = None
        self._lock = threading.Lock()
        self._closed = False
        self._saved_stderr: Any = None

    def __enter__(self) -> Progress:
        if not self.enabled:
            return self
        from rich.console import Console
        from rich.file_proxy import FileProxy

        console = Console(file=self.app.stderr, highlight=False, markup=False, emoji=False, soft_wrap=True)
        self._status = console.status(self.text, spinner="dots")
        self._saved_stderr = self.app.stderr
        self.app.stderr = FileProxy(console, self._saved_stderr)  # type: ignore[assignment]
        if self.delay > 0:
            self._timer = threading.Timer(self.delay, self._start)
            self._timer.daemon = True
            self._timer.start()
        else:
            self._start()
        return self

    def _start(self) -> None:
        with self._lock:
            if not self._closed:
                self._status.start()

    def __call__(self, text: str) -> None:
        """The library's progress callback: what the operation is doing now."""
        self.text.text = text

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        if not self.enabled:
            return
        if self._timer is not None:
            self._timer.cancel()
        with self._lock:
            self._closed = True
            self._status.stop()
        self.app.stderr.flush()
        self.app.stderr = self._saved_stderr


def loading(app_: AppContext) -> Progress:
    """The status line for opening the cluster state: shown only when loading is slow (a large
    snapshot or a long record log to replay)."""
    return Progress(app_, "Loading the cluster state", delay=LOADING_DELAY)
