"""Writing outputs safely: atomically, and never over an input.

* :func:`atomic_write` writes to a temporary file beside the target (same folder, so the same
  file system) and renames it over the target at the end (``os.replace``, atomic on POSIX and
  Windows). A process killed mid-write (even ``kill -9``) leaves the previous content or no file,
  never a partial one; two processes writing the same target leave one complete file (the last
  rename wins). A killed writer may leave its hidden ``.<name>.*.tmp`` file behind.
* :func:`refuse_overwrite` refuses a target that is one of the command's input files (compared
  after symlinks, and by inode for hard links).
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path

from analysis.core.errors import InputError


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def atomic_write(out: str | Path, write: Callable[[Path], None]) -> None:
    """Call ``write(tmp)`` on a temporary path beside ``out``, then rename it to ``out``.

    The new file gets the usual permissions (``0o666`` minus the umask). A symlink at ``out`` is
    replaced by the file (the file it pointed to is left alone).

    Raises:
        InputError: the folder cannot be written (the message names ``out``); whatever
            ``write`` raises is passed on after the temporary file is removed.
    """
    target = Path(out)
    folder = target.parent if str(target.parent) else Path()
    try:
        fd, name = tempfile.mkstemp(dir=folder, prefix=f".{target.name}.", suffix=".tmp")
    except OSError as exc:
        raise InputError(target, None, f"cannot write: {exc.strerror or exc}") from None
    os.close(fd)
    tmp = Path(name)
    try:
        write(tmp)
        tmp.chmod(0o666 & ~_umask())
        with tmp.open("rb") as f:  # the data is on disk before the name points at it
            os.fsync(f.fileno())
        tmp.replace(target)
    except OSError as exc:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise InputError(target, None, f"cannot write: {exc.strerror or exc}") from None
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise


def atomic_write_text(out: str | Path, text: str) -> None:
    """:func:`atomic_write` of UTF-8 text."""
    atomic_write(out, lambda tmp: tmp.write_text(text, encoding="utf-8"))


def _same(a: Path, b: Path) -> bool:
    try:
        return a.resolve() == b.resolve() or (a.exists() and b.exists() and a.samefile(b))
    except OSError:
        return False


def refuse_overwrite(
    out: str | Path, inputs: Iterable[str | Path], *, what: str = "an input file"
) -> None:
    """Raise InputError when ``out`` is one of ``inputs`` (after symlinks, or a hard link).

    ``what`` names the kind of file in the message: ``<out>: is <what>: refusing to overwrite
    it``."""
    target = Path(out)
    for given in inputs:
        if _same(target, Path(given)):
            raise InputError(target, None, f"is {what}: refusing to overwrite it")
