"""Output files of the commands that write tables (``evaluate --bundle``, ``compare``,
``disagree``): through :func:`analysis.io.atomic.atomic_write` (a temporary file beside the target,
then a rename), so a failure never leaves a partial file. CSV text cells go through
:func:`analysis.io.csvsafe.neutralize_frame` (no spreadsheet formulas)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from analysis.io.atomic import atomic_write, atomic_write_text
from analysis.io.csvsafe import neutralize_frame

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["atomic_write_text", "frame_writer", "write_frame"]


def write_frame(frame: pd.DataFrame, out: Path) -> None:
    """A table as CSV, or Parquet for a ``.parquet`` name, atomically."""
    atomic_write(out, frame_writer(frame, out))


def frame_writer(frame: pd.DataFrame, out: Path) -> Callable[[Path], None]:
    """What writes ``frame`` to a path as ``out`` is written (CSV, or Parquet for a
    ``.parquet`` name): the ``write`` of :func:`~analysis.io.atomic.atomic_write`."""

    def write(path: Path) -> None:
        if Path(out).suffix.lower() == ".parquet":
            frame.to_parquet(path, index=False)
        else:
            neutralize_frame(frame).to_csv(path, index=False)

    return write
