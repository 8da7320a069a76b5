"""Errors and data-check warnings shared by every loader and by the metric code.

Bad input raises :class:`InputError`, whose one-line message names the file, the line (when one
is known) and what is wrong: ``<file>:<line>: <what is wrong>``. The CLI prints it as
``error: <message>`` and exits with code 2; the app shows it with ``st.error``.

Problems that still let the data be used (a duplicated document in a ranking, a query missing
from a run, ...) are collected as :class:`DataWarning` objects instead: a stable ``code``, a
count and a plain-words message.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path


class InputError(ValueError):
    """A file (or table) that cannot be used as it is.

    Args:
        source: the file path (or a short table name such as ``"run"`` for in-memory input).
        line: 1-based line number in the file, or ``None`` when the problem is not tied to a line.
        message: what is wrong, in plain words, without a trailing period.
    """

    def __init__(self, source: str | Path, line: int | None, message: str) -> None:
        self.source = str(source)
        self.line = line
        self.message = message
        super().__init__(str(self))

    def __str__(self) -> str:
        where = self.source if self.line is None else f"{self.source}:{self.line}"
        return f"{where}: {self.message}"


class MissingDependency(ImportError):
    """An optional package a function needs is not installed; the message is one line naming
    what to install (e.g. ``pip install 'retrieval-error-dashboard[app]'``)."""


#: Optional packages and the extra of ``retrieval-error-dashboard`` that installs each.
EXTRAS: dict[str, str] = {
    "streamlit": "app",
    "plotly": "app",
    "pydeck": "app",
    "pyproj": "geo",
    "duckdb": "scale",
    "dask": "scale",
    "distributed": "scale",
    "kaleido": "export",
}


def missing_extra(exc: ImportError) -> str | None:
    """One line naming what to install for ``exc``: its own message for a
    :class:`MissingDependency`, the extra for a missing optional package (:data:`EXTRAS`), or
    None for any other import error (a bug, not a missing extra)."""
    if isinstance(exc, MissingDependency):
        return str(exc)
    package = (exc.name or "").split(".")[0]
    extra = EXTRAS.get(package) if isinstance(exc, ModuleNotFoundError) else None
    if extra is None:
        return None
    return f"{package} is not installed: pip install 'retrieval-error-dashboard[{extra}]'"


@dataclass(frozen=True)
class DataWarning:
    """A data-check finding that does not stop evaluation.

    Attributes:
        code: stable identifier, e.g. ``"missing_from_run"`` or ``"duplicate_qrels"``.
        count: how many items (queries, rows) the finding concerns.
        message: one sentence in plain words, including the count.
        examples: a few of the concerned ids, for display.
        level: ``"warning"``, or ``"info"`` for a count that needs no action (a split's
            dropped queries).
    """

    code: str
    count: int
    message: str
    examples: tuple[str, ...] = field(default_factory=tuple)
    level: str = "warning"

    def __str__(self) -> str:
        if self.level == "info":
            return self.message
        return f"warning: {self.message}"


def counted(count: int, singular: str, plural: str | None = None) -> str:
    """``count`` and the noun agreeing with it, for warning texts: ``1 query``, ``2 queries``."""
    return f"{count} {singular if count == 1 else plural or singular + 's'}"


def agreeing(count: int) -> tuple[str, str, str]:
    """The verb, possessive and object agreeing with ``count`` things, for warning texts:
    ``has, its, it`` for one, ``have, their, them`` for more."""
    return ("has", "its", "it") if count == 1 else ("have", "their", "them")
