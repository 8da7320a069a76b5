"""Opening input files: bounded, ``.gz`` transparently, pipes as streams, UTF-8 with an optional
BOM, any line ending; bounded JSON and TOML parsing.

Every problem becomes an :class:`~analysis.core.errors.InputError` naming the file (and the line
when one is known). Files are only ever opened for reading.

Limits (each a one-line error naming the file, never a memory blow-up):

* **Size cap** ``RETRIEVAL_DASHBOARD_MAX_INPUT_BYTES`` (default 4 GiB): no input is read past
  this many bytes, counted *after* decompression (a regular file larger than the cap is refused
  before it is opened; a gzip stream stops as soon as its output passes the cap).
* **Compression ratio** ``RETRIEVAL_DASHBOARD_MAX_GZIP_RATIO`` (default 200): once a gzip
  stream has produced 16 MiB, its output may be at most this many times the compressed bytes
  consumed so far. Text runs and qrels compress 3-20x; a "zip bomb" (1 MB of gzip holding 1 GiB
  of zeros, ratio ~1000) is refused after 16 MiB of output, whatever its total size, so it fails
  fast with bounded memory.
* **Nesting depth** :data:`MAX_DEPTH` (128) for JSON, JSONL and TOML: deeper documents are
  refused with the line where the limit is crossed (Python's parsers would raise
  ``RecursionError``); no data format here nests more than a few levels.
* **Binary content**: a NUL byte is never text. :func:`decode` (every file read as text) and
  :func:`binary_line` (format detection's look at the head of a file) refuse it with the line,
  without quoting it: a binary file (or 4 KB of zeros) is not a one-line split or queries file.

Non-regular files: a FIFO or pipe (``--run <(zcat run.gz)``, ``/dev/stdin``) is read once, as a
stream, into a private temporary file (under the size cap) that every later read of the same path
uses, so format detection and parsing never open the pipe twice (a second open would block
forever). Devices and sockets (``/dev/zero``, a terminal) are refused.
"""

from __future__ import annotations

import atexit
import contextlib
import gzip
import io
import json
import os
import re
import shutil
import stat
import tempfile
import tomllib
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

import numpy as np

from analysis.core import paths
from analysis.core.errors import InputError

BOM = "\ufeff"
ASCII_SPACE = " \t\n\r\v\f"  # the whitespace trec_eval splits fields on
MAX_BYTES_ENV = "RETRIEVAL_DASHBOARD_MAX_INPUT_BYTES"
MAX_RATIO_ENV = "RETRIEVAL_DASHBOARD_MAX_GZIP_RATIO"
DEFAULT_MAX_BYTES = 4 << 30
DEFAULT_MAX_RATIO = 200
RATIO_FLOOR = 16 << 20  # the ratio is only judged after this much output
MAX_DEPTH = 128
_CHUNK = 1 << 20


def _env_int(name: str, default: int) -> int:
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    try:
        value = int(raw)
    except ValueError:
        raise InputError(name, None, f"must be a positive integer, not {raw!r}") from None
    if value < 1:
        raise InputError(name, None, f"must be a positive integer, not {raw!r}")
    return value


def max_input_bytes() -> int:
    """The size cap in bytes (``RETRIEVAL_DASHBOARD_MAX_INPUT_BYTES``, default 4 GiB)."""
    return _env_int(MAX_BYTES_ENV, DEFAULT_MAX_BYTES)


def max_gzip_ratio() -> int:
    """The largest output/input ratio of a gzip stream past 16 MiB of output (default 200)."""
    return _env_int(MAX_RATIO_ENV, DEFAULT_MAX_RATIO)


# ------------------------------------------------------------------------------ opening files

_SPOOLED: dict[str, Path] = {}
_SPOOL_DIR: list[Path] = []


def _spool_dir() -> Path:
    if not _SPOOL_DIR:
        folder = Path(tempfile.mkdtemp(prefix="analysis-pipe-"))
        atexit.register(shutil.rmtree, folder, True)
        _SPOOL_DIR.append(folder)
    return _SPOOL_DIR[0]


def _spool(path: Path) -> Path:
    """Copy a FIFO/pipe once into a private temporary file (at most the size cap)."""
    key = str(path)
    if key in _SPOOLED:
        return _SPOOLED[key]
    cap = max_input_bytes()
    fd, name = tempfile.mkstemp(dir=_spool_dir())
    total = 0
    try:
        with path.open("rb", buffering=0) as src, os.fdopen(fd, "wb") as dst:
            while chunk := src.read(_CHUNK):
                total += len(chunk)
                if total > cap:
                    raise _too_large(path, cap)
                dst.write(chunk)
    except OSError as exc:
        Path(name).unlink(missing_ok=True)
        raise InputError(path, None, f"cannot read the stream: {exc.strerror or exc}") from None
    except InputError:
        Path(name).unlink(missing_ok=True)
        raise
    _SPOOLED[key] = Path(name)
    return _SPOOLED[key]


def _too_large(path: Path, cap: int) -> InputError:
    return InputError(
        path, None, f"larger than the input size limit of {cap} bytes (set {MAX_BYTES_ENV})"
    )


def check_file(path: str | Path) -> Path:
    """The path as a :class:`Path`, or an InputError when it is not a readable file.

    A FIFO/pipe is read once into a private spool (see the module notes); a device or socket
    is refused; a regular file larger than the size cap is refused."""
    if str(path) == "":  # Path("") is ".", the current folder
        raise InputError("''", None, "an empty path: name a file")
    p = Path(path)
    if str(p) in _SPOOLED:
        return p
    if "\0" in str(p):
        raise InputError(str(p).replace("\0", "\\0"), None, "a path cannot hold a NUL character")
    info = paths.stat(p, missing_ok=True)  # a loop, permission, a long name: one line
    if info is None:
        raise InputError(p, None, "no such file")
    mode = info.st_mode
    if stat.S_ISDIR(mode):
        raise InputError(p, None, "is a folder, not a file")
    if stat.S_ISFIFO(mode):
        _spool(p)
        return p
    if not stat.S_ISREG(mode):
        raise InputError(p, None, "is a device or socket, not a file (only files and pipes)")
    cap = max_input_bytes()
    if info.st_size > cap:
        raise _too_large(p, cap)
    return p


def source_path(path: str | Path) -> Path:
    """The regular file holding the path's bytes: the file itself, or a pipe's spool."""
    p = check_file(path)
    return _SPOOLED.get(str(p), p)


def magic(path: str | Path, n_bytes: int = 4) -> bytes:
    """The first bytes of the file as stored (before any decompression)."""
    with paths.reading(path, "cannot open"), source_path(path).open("rb") as f:
        return f.read(n_bytes)


def is_gzip(path: str | Path) -> bool:
    """True when the file starts with the gzip magic bytes (whatever its name)."""
    return magic(path, 2) == b"\x1f\x8b"


class _CappedGzip(io.RawIOBase):
    """A gzip stream that raises InputError when its output passes the size cap or the ratio."""

    def __init__(self, path: Path, source: Path) -> None:
        self._path = path
        self._raw = source.open("rb")
        self._gzip = gzip.GzipFile(fileobj=self._raw, mode="rb")
        self._compressed = max(1, source.stat().st_size)
        self._cap = max_input_bytes()
        self._ratio = max_gzip_ratio()
        self._out = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
        try:
            data = self._gzip.read(len(buffer))
        except (EOFError, OSError, zlib.error) as exc:
            reason = _gzip_reason(exc)
            raise InputError(self._path, None, f"cannot read the file: {reason}") from None
        n = len(data)
        buffer[:n] = data
        self._out += n
        if self._out > self._cap:
            raise _too_large(self._path, self._cap)
        consumed = max(1, min(self._compressed, self._raw.tell()))
        if self._out > RATIO_FLOOR and self._out > self._ratio * consumed:
            raise InputError(
                self._path,
                None,
                f"the gzip data expands more than {self._ratio} times (a decompression bomb?; "
                f"set {MAX_RATIO_ENV} to allow it)",
            )
        return n

    def close(self) -> None:
        self._gzip.close()
        self._raw.close()
        super().close()


def open_binary(path: str | Path) -> BinaryIO:
    """A binary stream of the file's content, decompressed when it is gzip, under the limits.

    Reading past a limit raises InputError; the caller closes the stream."""
    p = check_file(path)
    src = _SPOOLED.get(str(p), p)
    with paths.reading(p, "cannot open"):
        if is_gzip(p):
            return io.BufferedReader(_CappedGzip(p, src), buffer_size=_CHUNK)  # type: ignore[return-value]
        return src.open("rb")


@contextlib.contextmanager
def decompressed_file(path: str | Path) -> Iterator[Path]:
    """A regular file holding the path's decompressed bytes, for readers that read on their own
    threads (Arrow's CSV reader): a gzip file is decompressed here, on the calling thread and
    under the limits, into a private temporary file removed on exit; another file is given as
    it is (a pipe as its spool). A Python stream handed to Arrow would be read on Arrow's IO
    thread, and an error raised there can leave that thread calling into Python while the
    interpreter exits (an abort, or a hang)."""
    p = check_file(path)
    if not is_gzip(p):
        yield _SPOOLED.get(str(p), p)
        return
    fd, name = tempfile.mkstemp(dir=_spool_dir(), suffix=".gunzip")
    try:
        with open_binary(p) as src, os.fdopen(fd, "wb") as dst:
            shutil.copyfileobj(src, dst, _CHUNK)
        yield Path(name)
    finally:
        Path(name).unlink(missing_ok=True)


def read_bytes(path: str | Path) -> bytes:
    """The file's content, decompressed when it is gzip (bounded by the limits)."""
    p = check_file(path)
    try:
        with open_binary(p) as f:
            out = bytearray()
            while chunk := f.read(_CHUNK):
                out += chunk
            return bytes(out)
    except (EOFError, OSError, zlib.error) as exc:
        raise InputError(p, None, f"cannot read the file: {_gzip_reason(exc)}") from None


def _gzip_reason(exc: BaseException) -> str:
    if isinstance(exc, EOFError):
        return "the gzip stream is truncated"
    if isinstance(exc, gzip.BadGzipFile | zlib.error):
        return "the gzip data is corrupt"
    return str(exc)


NUL_MESSAGE = "a NUL byte: binary data, not a text file"
#: What a UTF-16 file (Excel's "Unicode text", Windows Notepad's "Unicode") is told.
UTF16_MESSAGE = "UTF-16 text (it starts with a UTF-16 byte-order mark): save the file as UTF-8"


def refuse_utf16(data: bytes, path: str | Path) -> None:
    """An InputError (line 1) when ``data`` starts with a UTF-16 byte-order mark: its ASCII
    characters hold NUL bytes, which would otherwise be reported as binary data."""
    if data[:2] in (b"\xff\xfe", b"\xfe\xff"):
        raise InputError(path, 1, UTF16_MESSAGE)


def binary_line(data: bytes | str) -> int | None:
    """The 1-based line of the first NUL byte (character) in ``data``, or None."""
    at = data.find(b"\0" if isinstance(data, bytes) else "\0")
    if at < 0:
        return None
    return data.count(b"\n" if isinstance(data, bytes) else "\n", 0, at) + 1


def decode(data: bytes, path: str | Path) -> str:
    """UTF-8 text without a leading BOM; an InputError names the line of an invalid byte or of
    a NUL byte (binary data); UTF-16 text is told to be saved as UTF-8."""
    refuse_utf16(data, path)
    line = binary_line(data)
    if line is not None:
        raise InputError(path, line, NUL_MESSAGE)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise InputError(path, line, "the file is not UTF-8 text") from None
    return text[1:] if text.startswith(BOM) else text


def read_text(path: str | Path) -> str:
    """The whole file as text (gzip, BOM and UTF-8 handled, bounded by the limits)."""
    return decode(read_bytes(path), path)


def iter_lines(text: str) -> Iterator[tuple[int, str]]:
    """(1-based line number, line) for every line, line endings (LF, CRLF, CR) removed."""
    for number, line in enumerate(io.StringIO(text, newline=None), start=1):
        yield number, line.rstrip("\n")


#: How many bytes format detection reads (:func:`head_text`).
HEAD_BYTES = 65536


def head_text(path: str | Path, n_bytes: int = HEAD_BYTES) -> str:
    """The first bytes of the file as text (for format detection); never raises on a cut char.
    UTF-16 text is refused (:func:`refuse_utf16`)."""
    p = check_file(path)
    try:
        with open_binary(p) as f:
            data = f.read(n_bytes)
    except (EOFError, OSError, zlib.error) as exc:
        raise InputError(p, None, f"cannot read the file: {_gzip_reason(exc)}") from None
    refuse_utf16(data, p)
    text = data.decode("utf-8", errors="replace")
    return text[1:] if text.startswith(BOM) else text


def first_data_line(text: str) -> tuple[int, str] | None:
    """The first line that is neither blank nor a ``#`` comment, with its number."""
    for number, line in iter_lines(text):
        stripped = line.strip()
        if stripped and not stripped.startswith("#"):
            return number, line
    return None


# ------------------------------------------------------------------------ bounded JSON / TOML


def _json_too_deep(text: str) -> int | None:
    """The 1-based line where JSON nesting first exceeds :data:`MAX_DEPTH`, or None.

    Brackets inside strings do not count: a ``"`` opens or closes a string unless an odd number
    of backslashes precedes it. Vectorised over the bracket and quote positions only; skipped
    outright when the text holds fewer opening brackets than the limit."""
    if text.count("[") + text.count("{") <= MAX_DEPTH:
        return None
    data = np.frombuffer(text.encode("utf-8", errors="surrogatepass"), dtype=np.uint8)
    quotes = np.flatnonzero(data == ord('"'))
    if len(quotes):
        escaped = quotes[(quotes > 0) & (data[np.maximum(quotes - 1, 0)] == ord("\\"))]
        drop = []
        for q in escaped.tolist():  # rare: count the run of backslashes before the quote
            i = q - 1
            while i >= 0 and data[i] == ord("\\"):
                i -= 1
            if (q - 1 - i) % 2:
                drop.append(q)
        if drop:
            quotes = np.setdiff1d(quotes, np.asarray(drop, dtype=quotes.dtype))
    opening = (data == ord("[")) | (data == ord("{"))
    closing = (data == ord("]")) | (data == ord("}"))
    where = np.flatnonzero(opening | closing)
    outside = np.searchsorted(quotes, where) % 2 == 0
    where = where[outside]
    steps = np.where(opening[where], 1, -1).astype(np.int32)
    depth = np.cumsum(steps, dtype=np.int64)
    deep = np.flatnonzero(depth > MAX_DEPTH)
    if not len(deep):
        return None
    return int(np.count_nonzero(data[: where[deep[0]]] == ord("\n"))) + 1


def check_json_depth(text: str, path: str | Path, first_line: int = 1) -> None:
    """Raise InputError with the line when JSON in ``text`` nests deeper than MAX_DEPTH."""
    line = _json_too_deep(text)
    if line is not None:
        raise InputError(path, first_line + line - 1, f"JSON nested deeper than {MAX_DEPTH} levels")


def parse_json(
    text: str, path: str | Path, first_line: int = 1, object_pairs_hook: object = None
) -> object:
    """``json.loads`` with the depth limit; errors name the file and the line.

    ``first_line`` is the file line where ``text`` starts (for one line of a JSONL file);
    ``object_pairs_hook`` is ``json.loads``'s. An integer of more than 4,300 digits (Python's
    limit of integer conversion) is an error too."""
    check_json_depth(text, path, first_line)
    try:
        return json.loads(text, object_pairs_hook=object_pairs_hook)  # type: ignore[arg-type]
    except json.JSONDecodeError as exc:
        raise InputError(path, first_line + exc.lineno - 1, f"invalid JSON: {exc.msg}") from None
    except RecursionError:  # not reached below MAX_DEPTH; kept as a guard
        raise InputError(path, first_line, f"JSON nested deeper than {MAX_DEPTH} levels") from None
    except ValueError as exc:  # an integer beyond Python's conversion limit
        raise InputError(path, None, f"invalid JSON: {str(exc).split(';')[0]}") from None


_TOML_TOKENS = re.compile(
    r'"""(?:[^\\]|\\.)*?"""|\'\'\'.*?\'\'\'|"(?:[^"\\\n]|\\.)*"|\'[^\'\n]*\'|#[^\n]*|[\[\]{}\n]',
    re.DOTALL,
)
_TOML_LINE = re.compile(r"line (\d+)")


def _toml_too_deep(text: str) -> int | None:
    """The line where TOML array/inline-table nesting first exceeds MAX_DEPTH, or None."""
    if text.count("[") + text.count("{") <= MAX_DEPTH:
        return None
    depth, line = 0, 1
    for match in _TOML_TOKENS.finditer(text):
        token = match.group()
        if token == "\n":
            line += 1
        elif token in "[{":
            depth += 1
            if depth > MAX_DEPTH:
                return line
        elif token in "]}":
            depth = max(0, depth - 1)
        else:
            line += token.count("\n")
    return None


def parse_toml(text: str, path: str | Path) -> dict[str, object]:
    """``tomllib.loads`` with the depth limit; errors name the file and the line."""
    line = _toml_too_deep(text)
    if line is not None:
        raise InputError(path, line, f"TOML nested deeper than {MAX_DEPTH} levels")
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        match = _TOML_LINE.search(str(exc))
        raise InputError(
            path, int(match.group(1)) if match else None, f"invalid TOML: {exc}"
        ) from None
    except RecursionError:
        raise InputError(path, None, f"TOML nested deeper than {MAX_DEPTH} levels") from None
