"""Checking paths: the one place where the errors of ``Path.resolve``, ``stat`` and ``open``
become one line naming the path.

Every loader, output writer and manifest reader goes through these functions, so a symlink loop,
a folder that may not be read, a name longer than the file system allows, a file where a folder
is expected (``run.txt/x``) or a folder where a file is expected is an
:class:`~analysis.core.errors.InputError` ``<path>: <what is wrong>``, never a traceback.
Python 3.11's ``Path.resolve`` reports a symlink loop as ``RuntimeError``; ``stat`` and
``open`` raise ``OSError`` with an ``errno``: both are translated here.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat as stat_mod
from collections.abc import Iterator
from pathlib import Path

from analysis.core.errors import InputError

__all__ = ["check_name", "describe", "kind_of", "path_error", "reading", "resolve", "stat"]

_REASONS = {
    errno.ENOENT: "no such file or folder",
    errno.ELOOP: "a symlink loop (or too many levels of symlinks)",
    errno.EACCES: "permission denied",
    errno.EPERM: "operation not permitted",
    errno.ENAMETOOLONG: "the name is too long for the file system",
    errno.ENOTDIR: "a part of the path is a file, not a folder",
    errno.EISDIR: "is a folder, not a file",
    errno.ENOSPC: "no space left on the device",
    errno.EDQUOT: "disk quota exceeded",
    errno.EFBIG: "the file is too large (file size limit)",
    errno.EIO: "input/output error of the device",
    errno.EROFS: "the file system is read-only",
    errno.EEXIST: "already exists",
    errno.ENXIO: "no such device",
    errno.ENODEV: "no such device",
}


def describe(exc: BaseException) -> str:
    """Plain words for an ``OSError`` (by its errno) or the ``RuntimeError`` of a symlink loop."""
    if isinstance(exc, RuntimeError):  # Path.resolve on Python < 3.13: "Symlink loop from ..."
        return _REASONS[errno.ELOOP]
    if isinstance(exc, OSError):
        if exc.errno in _REASONS:
            return _REASONS[exc.errno]
        return str(exc.strerror or exc).lower() if exc.strerror else str(exc)
    return str(exc)


def path_error(path: str | os.PathLike, exc: BaseException, doing: str = "") -> InputError:
    """An InputError ``<path>: [<doing>: ]<reason>`` for an error of resolve/stat/open."""
    reason = describe(exc)
    return InputError(os.fspath(path), None, f"{doing}: {reason}" if doing else reason)


def resolve(path: str | os.PathLike) -> Path:
    """``Path(path).expanduser().resolve()`` (not strict: missing parts are kept as given).

    Raises:
        InputError: a symlink loop, a part that may not be read, a name too long, a NUL byte
            in the name."""
    p = Path(path).expanduser()
    try:
        return p.resolve()
    except OSError as exc:
        raise path_error(p, exc) from None
    except ValueError:  # a NUL byte in the name
        raise InputError(os.fspath(p), None, "the name holds a NUL byte") from None
    except RuntimeError as exc:
        if not _is_loop(exc):
            raise
        raise path_error(p, exc) from None


def check_name(path: str | os.PathLike) -> None:
    """Refuse a path whose name is not UTF-8 text (bytes of another encoding, which Python
    keeps as surrogate escapes): Arrow and DuckDB take paths as UTF-8 and cannot open it.

    Raises:
        InputError: naming the path (its odd bytes shown as backslash escapes)."""
    try:
        os.fspath(path).encode("utf-8")
    except UnicodeEncodeError:
        shown = os.fspath(path).encode("utf-8", "backslashreplace").decode("ascii", "replace")
        raise InputError(
            shown, None, "the name is not UTF-8 text (bytes of another encoding): rename it"
        ) from None


def readable_name(name: str) -> str:
    """A file name as text for a model name: bytes that are not UTF-8 (kept by the file system
    as surrogate escapes, which no UTF-8 manifest or Arrow string can hold) become U+FFFD."""
    return name.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def stat(path: str | os.PathLike, *, missing_ok: bool = False) -> os.stat_result | None:
    """``os.stat`` of the path (symlinks followed); ``None`` for a missing path when
    ``missing_ok``.

    Raises:
        InputError: the path cannot be examined (missing, loop, permission, name too long, a
            file used as a folder)."""
    try:
        return Path(path).stat()
    except FileNotFoundError as exc:
        if missing_ok:
            return None
        raise path_error(path, exc) from None
    except OSError as exc:
        raise path_error(path, exc) from None
    except ValueError:  # a NUL byte in the name
        raise InputError(os.fspath(path), None, "the name holds a NUL byte") from None


def kind_of(mode: int) -> str:
    """What a file of this ``st_mode`` is, in words: ``file``, ``folder``, ``pipe``, ...."""
    if stat_mod.S_ISREG(mode):
        return "file"
    if stat_mod.S_ISDIR(mode):
        return "folder"
    if stat_mod.S_ISFIFO(mode):
        return "pipe (FIFO)"
    if stat_mod.S_ISCHR(mode) or stat_mod.S_ISBLK(mode):
        return "device"
    if stat_mod.S_ISSOCK(mode):
        return "socket"
    return "special file"


@contextlib.contextmanager
def reading(path: str | os.PathLike, doing: str = "cannot read") -> Iterator[None]:
    """Turn an ``OSError``/``RuntimeError`` raised inside the block into one InputError naming
    ``path`` (for ``open`` and the reads that follow it)."""
    try:
        yield
    except OSError as exc:
        raise path_error(path, exc, doing) from None
    except RuntimeError as exc:
        if not _is_loop(exc):
            raise
        raise path_error(path, exc, doing) from None


def _is_loop(exc: RuntimeError) -> bool:
    return str(exc).startswith("Symlink loop")
