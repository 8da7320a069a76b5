"""Opening input files: ``.gz`` transparently, UTF-8 with an optional BOM, any line ending.

Every problem becomes an :class:`~analysis.core.errors.InputError` naming the file (and the line
when one is known). Files are only ever opened for reading.
"""

from __future__ import annotations

import gzip
import io
import zlib
from collections.abc import Iterator
from pathlib import Path

from analysis.core.errors import InputError

BOM = "\ufeff"


def is_gzip(path: Path) -> bool:
    """True when the file starts with the gzip magic bytes (whatever its name)."""
    with path.open("rb") as f:
        return f.read(2) == b"\x1f\x8b"


def check_file(path: str | Path) -> Path:
    """The path as a :class:`Path`, or an InputError when it is not a readable file."""
    p = Path(path)
    if not p.exists():
        raise InputError(p, None, "no such file")
    if p.is_dir():
        raise InputError(p, None, "is a folder, not a file")
    return p


def read_bytes(path: str | Path) -> bytes:
    """The file's content, decompressed when it is gzip."""
    p = check_file(path)
    try:
        if is_gzip(p):
            with gzip.open(p, "rb") as f:
                return f.read()
        return p.read_bytes()
    except (EOFError, OSError, zlib.error) as exc:
        raise InputError(p, None, f"cannot read the file: {_gzip_reason(exc)}") from None


def _gzip_reason(exc: BaseException) -> str:
    if isinstance(exc, EOFError):
        return "the gzip stream is truncated"
    if isinstance(exc, gzip.BadGzipFile | zlib.error):
        return "the gzip data is corrupt"
    return str(exc)


def decode(data: bytes, path: str | Path) -> str:
    """UTF-8 text without a leading BOM; an InputError names the line of an invalid byte."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise InputError(path, line, "the file is not UTF-8 text") from None
    return text[1:] if text.startswith(BOM) else text


def read_text(path: str | Path) -> str:
    """The whole file as text (gzip, BOM and UTF-8 handled)."""
    return decode(read_bytes(path), path)


def iter_lines(text: str) -> Iterator[tuple[int, str]]:
    """(1-based line number, line) for every line, line endings (LF, CRLF, CR) removed."""
    for number, line in enumerate(io.StringIO(text, newline=None), start=1):
        yield number, line.rstrip("\n")


def head_text(path: str | Path, n_bytes: int = 65536) -> str:
    """The first bytes of the file as text (for format detection); never raises on a cut char."""
    p = check_file(path)
    try:
        if is_gzip(p):
            with gzip.open(p, "rb") as f:
                data = f.read(n_bytes)
        else:
            with p.open("rb") as f:
                data = f.read(n_bytes)
    except (EOFError, OSError, zlib.error) as exc:
        raise InputError(p, None, f"cannot read the file: {_gzip_reason(exc)}") from None
    text = data.decode("utf-8", errors="replace")
    return text[1:] if text.startswith(BOM) else text


def first_data_line(text: str) -> tuple[int, str] | None:
    """The first line that is neither blank nor a ``#`` comment, with its number."""
    for number, line in iter_lines(text):
        stripped = line.strip()
        if stripped and not stripped.startswith("#"):
            return number, line
    return None
