"""Output files of the commands that write tables (``evaluate --bundle``, ``compare``): written
to a temporary file beside the target, then renamed, so a failure never leaves a partial file."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from analysis.core.errors import InputError

if TYPE_CHECKING:
    import pandas as pd


def write_atomic(out: Path, write: Callable[[Path], None]) -> None:
    """Call ``write(temporary path)`` beside ``out``, then rename it to ``out``.

    Raises:
        InputError: the folder cannot be written, or writing failed (the target is untouched).
    """
    out = Path(out)
    try:
        fd, name = tempfile.mkstemp(prefix=f".{out.name}.", suffix=".tmp", dir=out.parent or ".")
    except OSError as exc:
        raise InputError(out, None, f"cannot write: {exc.strerror or exc}") from None
    os.close(fd)
    tmp = Path(name)
    try:
        write(tmp)
        tmp.replace(out)
    except (OSError, ValueError) as exc:
        raise InputError(out, None, f"cannot write: {exc}") from None
    finally:
        if tmp.exists():
            tmp.unlink()


def write_frame(frame: pd.DataFrame, out: Path) -> None:
    """A table as CSV, or Parquet for a ``.parquet`` name, atomically (:func:`write_atomic`)."""

    def write(path: Path) -> None:
        if out.suffix.lower() == ".parquet":
            frame.to_parquet(path, index=False)
        else:
            frame.to_csv(path, index=False)

    write_atomic(out, write)
