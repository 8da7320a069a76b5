"""TREC run and qrels files.

Run: ``qid Q0 docno rank score tag``, whitespace-separated. As in trec_eval, the rank column is
ignored (the ranking comes from the scores) and fields after the sixth are ignored. Qrels:
``qid iter docno rel`` with an integer relevance.

Accepted as valid (trec_eval 10 accepts them): a UTF-8 BOM, CRLF line endings, blank lines and
lines starting with ``#``. Errors name the file and line: too few fields, a score that is not a
finite number (``nan``, ``inf``, text), a relevance that is not an integer or outside int64.

Fields are split on ASCII whitespace only (space, tab, CR, LF, VT, FF), as trec_eval's
``strtok``-style parser does: a no-break space (U+00A0) or any other Unicode space is part of
its id. Numbers follow C's ``strtod`` (scores) and ``atol`` (relevance) on ASCII, applied to the
whole field (see :func:`c_float`, :func:`c_int`): ``1_000``, ``1_0``, full-width ``１２`` or
Arabic-Indic ``١٢`` digits, which Python's ``float``/``int`` would read, are errors naming the
line; unlike ``atof``/``atol``, a field with trailing text (``1.5abc``, relevance ``1.5``) is an
error too instead of being cut short silently.

Large files are parsed by Arrow's multi-threaded CSV reader when they use one consistent
delimiter (a single space or a single tab); anything else (comments, mixed whitespace, a bad
value) goes through a line-by-line parser that either reads the file or reports the exact line.
The fast reader maps regular files (a pipe is read from its private spool, see
:mod:`analysis.io._text`) and reads gzip through the size- and ratio-capped stream.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pcsv

from analysis.core.errors import InputError
from analysis.core.inputs import C_INT, HEX_FLOAT
from analysis.core.ranking import to_numpy
from analysis.io._text import (
    check_file,
    decompressed_file,
    head_text,
    iter_lines,
    read_text,
)

if TYPE_CHECKING:
    import pandas as pd

RUN_FIELDS = ("query_id", "q0", "doc_id", "file_rank", "score", "tag")
QRELS_FIELDS = ("query_id", "iteration", "doc_id", "relevance")


def _delimiter(path: Path, n_fields: int) -> str | None:
    """The single-character delimiter when the head of the file is regular, else None."""
    head = head_text(path)
    lines = head.splitlines()[:-1] or head.splitlines()  # the last line may be cut
    if not lines:
        return None
    for delim in (" ", "\t"):
        if all(
            len(line.split(delim)) == n_fields and line.split(delim) == _FIELDS.findall(line)
            for line in lines
            if line
        ):
            return delim
    return None


#: bytes of a file :func:`_empty_field` compares at a time (a few times this in temporaries)
_SCAN_BLOCK = 1 << 24


def _empty_field(path: Path, delim: str) -> bool:
    """A line of the file has an empty field: two delimiters in a row, or one at a line's start
    or end. Arrow would read it as a field where trec_eval, splitting on runs of whitespace,
    sees none (``q  d 1 2 t`` has five fields); such a file is left to the line-by-line reader.
    Read a block at a time (a block's worth of memory, whatever the file's size)."""
    d = ord(delim)
    buf = bytearray(_SCAN_BLOCK + 1)  # [the previous block's last byte] + a block
    view = memoryview(buf)
    with path.open("rb") as f:
        buf[0] = ord("\n")  # a line break before the file: a delimiter first starts a line
        last = None
        while n := f.readinto(view[1:]):
            if _empty_in(np.frombuffer(buf, dtype=np.uint8, count=n + 1), d):
                return True
            last = buf[n]
            buf[0] = last
    return last == d  # the file ends with a delimiter


def _empty_in(block: np.ndarray, d: int) -> bool:
    """A delimiter next to another or to a line break in ``block``."""
    is_d = block == d
    ends = (block == ord("\n")) | (block == ord("\r"))
    return bool(np.any(is_d[1:] & (is_d[:-1] | ends[:-1])) or np.any(ends[1:] & is_d[:-1]))


def _fast_read(path: Path, names: tuple[str, ...], keep: dict[str, pa.DataType]) -> pa.Table | None:
    delim = _delimiter(path, len(names))
    if delim is None:
        return None
    # gzip: decompressed under the size and ratio limits on this thread; the file is read block
    # by block (a memory map would keep every page of a 400 MB file resident)
    with decompressed_file(path) as plain, pa.OSFile(os.fsencode(plain)) as source:
        if _empty_field(plain, delim):
            return None
        try:
            table = pcsv.read_csv(
                source,
                read_options=pcsv.ReadOptions(column_names=list(names), block_size=1 << 22),
                parse_options=pcsv.ParseOptions(delimiter=delim, quote_char=False),
                convert_options=pcsv.ConvertOptions(
                    include_columns=list(keep), column_types=keep, strings_can_be_null=False
                ),
            )
        except (pa.ArrowInvalid, OSError, EOFError):
            return None
    for name in keep:
        if table[name].null_count:
            return None
    return table


def read_trec_run(path: str | Path) -> pd.DataFrame:
    """Read a TREC run file into ``query_id, doc_id, score`` (ids as strings, file order kept).

    Raises:
        InputError: a line with fewer than 6 fields, or a score that is not a finite number.
    """
    table = read_trec_run_table(path)
    query_ids = table["query_id"].cast(pa.string())  # dictionary-encoded by the fast reader
    return table.set_column(0, "query_id", query_ids).to_pandas()


_QUERY_IDS = pa.dictionary(pa.int32(), pa.string())


def read_trec_run_table(path: str | Path) -> pa.Table:
    """:func:`read_trec_run` as an Arrow table (no pandas copy of 10M-line files). The query
    ids may come dictionary-encoded (the fast reader encodes them while parsing, in parallel),
    with one dictionary shared by every chunk."""
    p = check_file(path)
    table = _fast_read(
        p, RUN_FIELDS, {"query_id": _QUERY_IDS, "doc_id": pa.string(), "score": pa.float64()}
    )
    if table is not None:
        table = table.unify_dictionaries()
        finite = all(np.isfinite(to_numpy(c)).all() for c in table["score"].chunks)  # no copy
        if finite and not _has_empty(table):
            return table.select(["query_id", "doc_id", "score"])
    return _slow_run(p)


#: The characters trec_eval splits fields on (ASCII whitespace only); every reader and writer
#: of TREC files here uses this one definition.
TREC_SPACE = " \t\n\r\v\f"
#: A line whose first field starts with this is a comment (trec_eval 10)
COMMENT = "#"
_SPACE_CLASS = "".join(f"\\x{ord(c):02x}" for c in TREC_SPACE)
_FIELDS = re.compile(f"[^{_SPACE_CLASS}]+")
_UNSAFE = {  # a NUL byte is never text: the readers refuse a file holding one
    "doc_id": f"^$|[{_SPACE_CLASS}\\x00]",
    "query_id": f"^$|^{COMMENT}|[{_SPACE_CLASS}\\x00]",
}


def fields(line: str) -> list[str]:
    """The fields of a line, split on ASCII whitespace only (as trec_eval does)."""
    return _FIELDS.findall(line)


def trec_safe(value: str, column: str = "doc_id") -> bool:
    """True when a TREC file can carry ``value`` in ``column`` and read it back unchanged: the
    id is not empty and holds no ASCII whitespace (:data:`TREC_SPACE`) and no NUL character (a
    file holding one is refused, as trec_eval would end the text there); a ``query_id`` does
    not start with ``#`` either (the line would be a comment). Any other character -- a no-break
    space, CJK text, punctuation -- is safe: the readers keep it, the writers write it.

    Raises:
        ValueError: ``column`` is neither ``query_id`` nor ``doc_id``."""
    return re.search(_pattern(column), str(value)) is None


def trec_unsafe(ids: pd.Series, column: str = "doc_id") -> pd.Series:
    """The boolean mask of the ids that are not :func:`trec_safe` (vectorized)."""
    return ids.astype("str").str.contains(_pattern(column), regex=True)


def _pattern(column: str) -> str:
    if column not in _UNSAFE:
        raise ValueError(f"column must be query_id or doc_id, not {column!r}")
    return _UNSAFE[column]


def _id_bytes(chunk: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """(offsets, UTF-8 bytes) of a string chunk, as numpy views (no copy)."""
    width = 8 if pa.types.is_large_string(chunk.type) else 4
    _, offset_buf, data_buf = chunk.buffers()
    offsets = np.frombuffer(
        offset_buf,
        dtype=np.int64 if width == 8 else np.int32,
        count=len(chunk) + 1,
        offset=chunk.offset * width,
    )
    data = (
        np.frombuffer(data_buf, dtype=np.uint8) if data_buf is not None else np.zeros(0, np.uint8)
    )
    return offsets, data


def _has_empty(table: pa.Table) -> bool:
    """An empty id, an id holding whitespace (a line with mixed separators, which trec_eval
    splits differently), or a ``#`` comment line that happened to split into the right field
    count. Checked on the raw bytes of each chunk (a few passes over memory, no per-row work)."""
    for column in ("query_id", "doc_id"):
        chunks = table[column].chunks
        if chunks and pa.types.is_dictionary(chunks[0].type):
            chunks = [chunks[0].dictionary]  # unified: every chunk shares it
        for chunk in chunks:
            if len(chunk) == 0:
                continue
            offsets, data = _id_bytes(chunk)
            if np.any(np.diff(offsets) == 0):
                return True
            used = data[offsets[0] : offsets[-1]]
            if len(used) and used.min() <= 32:  # whitespace (or a control character)
                return True
            if column == "query_id" and np.any(data[offsets[:-1]] == ord("#")):
                return True
    return False


def _slow_table(
    path: Path, usage: str, value: Callable[[str, Path, int], float | int], value_field: int
) -> tuple[list[str], list[str], list]:
    """Query ids, doc ids and values (field ``value_field``, read by ``value``) of every data
    line, line by line: blank lines and ``#`` comments are skipped, a line with fewer fields
    than ``usage`` names is an error that names it."""
    n_fields = len(usage.split())
    qids: list[str] = []
    docs: list[str] = []
    values: list = []
    for number, line in iter_lines(read_text(path)):
        fields = _FIELDS.findall(line)
        if not fields or fields[0].startswith(COMMENT):
            continue
        if len(fields) < n_fields:
            raise InputError(
                path, number, f"expected {n_fields} fields '{usage}', found {len(fields)}"
            )
        values.append(value(fields[value_field], path, number))
        qids.append(fields[0])
        docs.append(fields[2])
    return qids, docs, values


def _slow_run(path: Path) -> pa.Table:
    qids, docs, scores = _slow_table(path, "qid Q0 docno rank score tag", _finite, 4)
    return pa.table(
        {
            "query_id": pa.array(qids, pa.string()),
            "doc_id": pa.array(docs, pa.string()),
            "score": pa.array(scores, pa.float64()),
        }
    )


# What C's strtod (trec_eval's atof) reads from a whole field, ASCII only: decimal and
# hexadecimal floats, inf/infinity and nan/nan(chars), case-insensitive where C is
_DECIMAL = r"(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?"
_SPECIAL = r"(?i:inf(?:inity)?|nan(?:\([0-9A-Za-z_]*\))?)"
C_FLOAT = re.compile(rf"[+-]?(?:{HEX_FLOAT}|{_DECIMAL}|{_SPECIAL})", re.ASCII)
INT64_MIN, INT64_MAX = -(1 << 63), (1 << 63) - 1


def c_float(text: str) -> float | None:
    """The value C's ``strtod`` gives for the whole of ``text``, or None when ``strtod`` would
    not read all of it.

    Accepted: ``[+-]`` then decimal digits with an optional point and exponent (``1``, ``.5``,
    ``5.``, ``1e-3``), a hexadecimal float (``0x1p3``), ``inf``/``infinity``/``nan``, ASCII only.
    Refused (Python's ``float`` reads them, trec_eval does not): ``_`` digit separators
    (``1_000``), non-ASCII digits (full-width ``１２``, Arabic-Indic ``١٢``), surrounding
    Unicode spaces."""
    if not C_FLOAT.fullmatch(text):
        return None
    body = text.lstrip("+-")
    if body[:2] in ("0x", "0X"):
        value = float.fromhex(body)
        return -value if text.startswith("-") else value
    if body[:3].lower() == "nan":
        return math.nan
    return float(text)


def c_int(text: str) -> int | None:
    """The integer of ``text`` when it is ``[+-]digits`` in ASCII (what ``atol`` reads as a
    whole field), else None. Range is not checked here (see :func:`relevance_value`)."""
    return int(text) if C_INT.fullmatch(text) else None


def _why_not(text: str) -> str:
    if "_" in text:
        return " (digit separators '_' are not part of the number syntax)"
    if not text.isascii():
        return " (only ASCII digits are numbers, as in trec_eval)"
    return ""


def _finite(text: str, path: Path, number: int) -> float:
    value = c_float(text)
    if value is None:
        raise InputError(path, number, f"score {text!r} is not a number{_why_not(text)}")
    if not math.isfinite(value):
        raise InputError(path, number, f"score {text!r} is not a finite number")
    return value


def relevance_value(text: str, path: str | Path, number: int | None) -> int:
    """A relevance field as trec_eval reads it: an ASCII integer within the 64-bit range.

    Raises:
        InputError: not an integer (``1.5``, ``１``, ``1_0``), or outside int64."""
    value = c_int(text)
    if value is None:
        raise InputError(path, number, f"relevance {text!r} is not an integer{_why_not(text)}")
    if not INT64_MIN <= value <= INT64_MAX:
        raise InputError(path, number, f"relevance {text!r} is outside the 64-bit integer range")
    return value


def _decimal_relevance(table: pa.Table) -> pa.Table | None:
    """The table with its relevance text read as int64, or None (the line-by-line reader's
    case) unless every value is a decimal integer within int64: Arrow's parser also reads
    ``0x1`` as 1, where trec_eval's ``atol`` stops at the ``x``."""
    text = table["relevance"]
    if not pc.all(pc.match_substring_regex(text, r"^[+-]?[0-9]+$")).as_py():
        return None
    try:
        values = pc.cast(text, pa.int64())
    except pa.ArrowInvalid:  # outside int64
        return None
    return table.set_column(table.column_names.index("relevance"), "relevance", values)


def read_trec_qrels(path: str | Path) -> pd.DataFrame:
    """Read a TREC qrels file into ``query_id, doc_id, relevance`` (relevance as int64).

    Raises:
        InputError: a line with fewer than 4 fields, or a relevance that is not an integer.
    """
    return read_trec_qrels_table(path).to_pandas()


def read_trec_qrels_table(path: str | Path) -> pa.Table:
    """:func:`read_trec_qrels` as an Arrow table."""
    p = check_file(path)
    table = _fast_read(
        p, QRELS_FIELDS, {"query_id": pa.string(), "doc_id": pa.string(), "relevance": pa.string()}
    )
    table = _decimal_relevance(table) if table is not None and not _has_empty(table) else None
    if table is not None:
        return table.select(["query_id", "doc_id", "relevance"])
    qids, docs, rels = _slow_table(p, "qid iter docno rel", relevance_value, 3)
    return pa.table(
        {
            "query_id": pa.array(qids, pa.string()),
            "doc_id": pa.array(docs, pa.string()),
            "relevance": pa.array(rels, pa.int64()),
        }
    )


def looks_like_trec(line: str) -> str | None:
    """``"trec_run"``, ``"trec_qrels"`` or None, judging from one data line (fields split on
    ASCII whitespace only, as trec_eval does: a no-break space stays inside its field)."""
    fields = _FIELDS.findall(line)
    if len(fields) >= 6 and _is_number(fields[4]):
        return "trec_run"
    if len(fields) == 4 and _is_int(fields[3]):
        return "trec_qrels"
    # a run without its tag column, qrels without the iteration column: still TREC, so the
    # reader reports the missing field with the line
    if len(fields) == 5 and _is_int(fields[3]) and _is_number(fields[4]):
        return "trec_run"
    if len(fields) == 3 and _is_int(fields[2]):
        return "trec_qrels"
    return None


def _is_number(text: str) -> bool:
    """A number for format detection: C syntax, or something Python reads as one (so that a
    run with ``1_000`` scores is still a run, and its reader names the line)."""
    if c_float(text) is not None:
        return True
    try:
        float(text)
    except ValueError:
        return False
    return True


def _is_int(text: str) -> bool:
    if c_int(text) is not None:
        return True
    try:
        int(text)
    except ValueError:
        return False
    return True
