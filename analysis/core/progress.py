"""Progress of long work on a terminal: one line on stderr, rewritten in place.

A :class:`Progress` counts steps (passes, tasks, datasets) and rows; it shows nothing during its
first :data:`DELAY` seconds (short runs stay silent) and nothing at all unless its stream is a
terminal, so piped or redirected output never holds progress lines. The line reads::

    evaluate: 12/50 passes, 24,117,000 rows, 0:31 elapsed, about 1:42 left

Time left is ``elapsed x (total - done) / done``, over rows when the total rows are known, else
over steps; it is left out until something is done. The line is erased when the work ends.

Lower layers report through :func:`current` (a context variable, so a library function needs no
extra argument): ``with reporting(progress): ...`` makes ``progress`` the current one; without
it :func:`current` returns a silent one.
"""

from __future__ import annotations

import contextlib
import contextvars
import os
import sys
import time
from collections.abc import Callable, Iterator
from typing import TextIO

#: Seconds before the line first shows (``RETRIEVAL_DASHBOARD_PROGRESS_DELAY`` overrides it).
DELAY = 2.0
DELAY_ENV = "RETRIEVAL_DASHBOARD_PROGRESS_DELAY"
_INTERVAL = 0.25  # at most four redraws a second


def _clock_text(seconds: float) -> str:
    seconds = max(0, round(seconds))
    hours, rest = divmod(seconds, 3600)
    return f"{hours}:{rest // 60:02d}:{rest % 60:02d}" if hours else f"{rest // 60}:{rest % 60:02d}"


class Progress:
    """Steps and rows of one piece of work, drawn on ``stream`` when it is a terminal.

    Args:
        label: what is running (``"evaluate"``).
        stream: where to draw (default stderr); nothing is drawn unless ``stream.isatty()``.
        delay: seconds before the first draw (default :data:`DELAY` or its variable).
        clock: a monotonic clock (tests pass their own).
    """

    def __init__(
        self,
        label: str,
        stream: TextIO | None = None,
        delay: float | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.label = label
        self.stream = sys.stderr if stream is None else stream
        if delay is None:
            delay = float(os.environ.get(DELAY_ENV) or DELAY)
        self.delay = delay
        self.clock = clock
        self.enabled = bool(getattr(self.stream, "isatty", lambda: False)())
        self.start = clock()
        self.steps, self.rows = 0, 0
        self.total_steps: int | None = None
        self.total_rows: int | None = None
        self.unit = "steps"
        self.note = ""
        self._drawn = 0.0
        self._shown = False

    def plan(self, steps: int | None, unit: str, rows: int | None = None, note: str = "") -> None:
        """The work ahead: ``steps`` of ``unit`` (``"passes"``), ``rows`` in all if known."""
        self.total_steps, self.unit, self.total_rows, self.note = steps, unit, rows, note
        self.draw()

    def advance(self, steps: int = 1, rows: int = 0) -> None:
        """``steps`` more done, ``rows`` more read."""
        self.steps += steps
        self.rows += rows
        self.draw(force=bool(self.total_steps) and self.steps >= (self.total_steps or 0))

    def text(self) -> str:
        """The line as it is drawn now."""
        now = self.clock() - self.start
        done = f"{self.steps}/{self.total_steps}" if self.total_steps else f"{self.steps}"
        parts = [f"{done} {self.unit}"]
        if self.rows:
            parts.append(f"{self.rows:,} rows")
        parts.append(f"{_clock_text(now)} elapsed")
        fraction = None
        if self.total_rows and self.rows:
            fraction = min(1.0, self.rows / self.total_rows)
        elif self.total_steps and self.steps:
            fraction = min(1.0, self.steps / self.total_steps)
        if fraction:
            parts.append(f"about {_clock_text(now * (1 - fraction) / fraction)} left")
        note = f" ({self.note})" if self.note else ""
        return f"{self.label}{note}: " + ", ".join(parts)

    def draw(self, force: bool = False) -> None:
        if not self.enabled:
            return
        now = self.clock()
        if now - self.start < self.delay or (not force and now - self._drawn < _INTERVAL):
            return
        self._drawn = now
        self._shown = True
        self.stream.write("\r\x1b[K" + self.text())
        self.stream.flush()

    def close(self) -> None:
        """Erase the line (if it was drawn)."""
        if self._shown:
            self.stream.write("\r\x1b[K")
            self.stream.flush()
            self._shown = False


class _Silent(Progress):
    def __init__(self) -> None:
        super().__init__("", stream=_NoTerminal())


class _NoTerminal:
    def isatty(self) -> bool:
        return False

    def write(self, text: str) -> int:
        return len(text)

    def flush(self) -> None:
        return None


_CURRENT: contextvars.ContextVar[Progress | None] = contextvars.ContextVar(
    "retrieval_dashboard_progress", default=None
)


def current() -> Progress:
    """The progress set by :func:`reporting`, or a silent one."""
    return _CURRENT.get() or _Silent()


@contextlib.contextmanager
def reporting(progress: Progress) -> Iterator[Progress]:
    """Make ``progress`` the current one inside the block; erase its line at the end."""
    token = _CURRENT.set(progress)
    try:
        yield progress
    finally:
        _CURRENT.reset(token)
        progress.close()
