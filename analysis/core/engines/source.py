"""Where a run lives, for every engine: one file, a folder of Parquet files, or a glob of them.

:func:`run_source` resolves the path a user gives: Parquet by its magic bytes (or a folder: its
``*.parquet`` files at any depth, sorted by path; or a glob such as ``'scores/*.parquet'``,
matched by Python's :mod:`glob` with ``**`` for any depth), a CSV table by a header naming
``query_id`` and ``doc_id``, else TREC run text. The files of a folder or a glob are one run, in
the order of their sorted paths.

Parquet columns: ``query_id`` and ``doc_id`` hold text (``string``, ``large_string``, a
dictionary of them), UTF-8 bytes (``binary``, decoded; other bytes are an error) or integers
(written in decimal, as ``str(int)``); ``score`` (or ``rank``, read as ``score = -rank``) holds
numbers. :class:`Columns` gives each engine the same conversion: DuckDB SQL expressions and an
Arrow reader (:func:`read_parquet_columns`), so an id reads as the same string whatever the
engine or encoding.
"""

from __future__ import annotations

import glob
import gzip
import math
import re
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from analysis.core import paths
from analysis.core import ranking as rk
from analysis.core.errors import InputError
from analysis.core.inputs import RANK_LIMIT, RANK_RULE, bad_ranks

_GLOB = "*?["
_IDS = ("query_id", "doc_id")


@dataclass(frozen=True)
class RunSource:
    """A resolved run: ``kind`` is ``parquet``, ``trec`` or ``csv``; ``path`` what the user gave
    (a file, a folder or a glob); ``files`` the files read, in order; ``delimiter`` the field
    separator of text files; ``score`` the column giving the score (``score`` or ``-rank``)."""

    kind: str
    path: Path
    files: tuple[Path, ...]
    delimiter: str = " "
    score: str = "score"


def head(path: Path, n: int = 1 << 16) -> str:
    """The first ``n`` bytes of a (possibly gzipped) text file, decoded."""
    opener = gzip.open if path.name.lower().endswith(".gz") else open
    try:
        with opener(path, "rb") as f:
            data = f.read(n)
    except (OSError, EOFError, zlib.error) as exc:  # unreadable, bad or truncated gzip
        raise InputError(path, None, f"cannot read: {exc}") from None
    return data.decode("utf-8", errors="replace").lstrip("\ufeff")


PARQUET_MAGIC = b"PAR1"


def is_parquet(path: Path) -> bool:
    """The file starts with Parquet's magic bytes (an unreadable file is one line naming it)."""
    with paths.reading(path, "cannot open"), path.open("rb") as f:
        return f.read(4) == PARQUET_MAGIC


def is_glob(path: str | Path) -> bool:
    """A path naming files by a pattern (and not an existing file or folder)."""
    return any(c in str(path) for c in _GLOB) and not Path(path).exists()


def parquet_files(path: str | Path) -> list[Path]:
    """The files of a Parquet run: a folder's ``*.parquet`` at any depth, a glob's matches (files
    only), or the file itself; sorted by path."""
    if is_glob(path):
        found = glob.glob(str(path), recursive=True)  # noqa: PTH207 (absolute patterns too)
        return sorted(Path(p) for p in found if Path(p).is_file())
    p = Path(path)
    if p.is_dir():
        return sorted(f for f in p.rglob("*.parquet") if f.is_file())
    return [p]


def run_source(path: str | Path) -> RunSource:
    """Resolve a run path (see the module docstring).

    Raises:
        InputError: a missing file, an empty folder or glob, a glob matching a file that is not
            Parquet, a Parquet file without the columns, or a text file whose first line is
            neither a TREC run line nor a table header.
    """
    p = Path(path)
    paths.check_name(p)
    if is_glob(path) or p.is_dir():
        files = parquet_files(path)
        for f in files:
            paths.check_name(f)
        if not files:
            what = "matches no file" if is_glob(path) else "holds no .parquet file"
            raise InputError(p, None, f"the {'glob' if is_glob(path) else 'folder'} {what}")
        other = next((f for f in files if not is_parquet(f)), None)
        if other is not None:
            raise InputError(other, None, "not a Parquet file (a folder or glob of a run "
                             "holds Parquet files only)")  # fmt: skip
        names = set(schema(files[0]).names)
        _require(names, files[0])
        _require_rows(files, p)
        return RunSource("parquet", p, tuple(files), score=_score_column(names))
    if not p.exists():
        raise InputError(p, None, "no such file")
    if is_parquet(p):
        names = set(schema(p).names)
        _require(names, p)
        _require_rows([p], p)
        return RunSource("parquet", p, (p,), score=_score_column(names))
    return _text_source(p)


#: The whitespace trec_eval splits a run line on (C's ``isspace``): ASCII only, where Python's
#: ``str.split`` and ``str.splitlines`` also split at a no-break space, ``\x1c``-``\x1f``, ``\x85``
ASCII_SPACE = " \t\n\v\f\r"
#: the fields of a TREC run line, as errors name them
TREC_USAGE = "qid Q0 docno rank score tag"


def text_lines(text: str) -> list[str]:
    """The lines of a text file's ``text``: split at ``\n``, ``\r\n`` or ``\r``, as DuckDB
    and trec_eval read them (not at the other breaks ``str.splitlines`` knows)."""
    return re.split(r"\r\n|\r|\n", text)


def _text_source(p: Path) -> RunSource:
    numbered = [
        (number, ln)
        for number, ln in enumerate(text_lines(head(p)), start=1)
        if ln.strip(ASCII_SPACE) and not ln.startswith("#")
    ]
    if not numbered:
        raise InputError(p, None, "the run is empty")
    line, first = numbered[0]
    lines = [ln for _, ln in numbered]
    for delim in (",", "\t"):
        names = set(header_names(first, delim))
        if {"query_id", "doc_id"} <= names:
            _require(names, p)
            if len(lines) == 1 and not _has_data_line(p):
                raise InputError(p, None, NO_ROWS)
            return RunSource("csv", p, (p,), delim, _score_column(names))
    words = re.split(f"[{ASCII_SPACE}]+", first.strip(ASCII_SPACE))
    for delim in (" ", "\t"):
        if len(first.split(delim)) == 6 and first.split(delim) == words:
            return RunSource("trec", p, (p,), delim)
    if len(words) == 6:  # a TREC line whose fields several spaces (or spaces and tabs) part
        raise InputError(
            p,
            line,
            "the out-of-core engines read TREC lines whose fields one space or one tab parts; "
            "this line has several spaces, or spaces and tabs: --engine memory reads it",
        )
    raise InputError(p, line, f"not a TREC run line ({TREC_USAGE}) nor a table header")


#: the error of a run table (Parquet, CSV) with its columns and no row, as the loaders say it
NO_ROWS = "the table holds no rows (only its columns)"


def _require_rows(files: list[Path], where: Path) -> None:
    """Refuse Parquet ``files`` (the run ``where``) holding no row at all (their footers'
    counts): a run without a line is an error, as an empty text run is."""
    import pyarrow.parquet as pq

    for f in files:
        try:
            if pq.ParquetFile(f).metadata.num_rows > 0:
                return
        except (pa.ArrowException, OSError) as exc:
            raise InputError(f, None, f"cannot read Parquet: {_first_line(exc)}") from None
    raise InputError(where, None, NO_ROWS)


def _has_data_line(p: Path) -> bool:
    """Whether the text table ``p`` has a non-blank line after its header (read up to the
    first such line)."""
    opener = gzip.open if p.name.lower().endswith(".gz") else open
    with (
        paths.reading(p, "cannot read"),
        opener(p, "rt", encoding="utf-8-sig", errors="replace") as f,
    ):
        lines = (line for line in f if line.strip())
        next(lines, None)
        return next(lines, None) is not None


def header_names(line: str, delimiter: str) -> list[str]:
    """The column names of a CSV table's header line, as its loader reads them: split at the
    delimiter, spaces and enclosing double quotes removed."""
    return [c.strip().strip('"') for c in line.rstrip("\r").split(delimiter)]


def _score_column(names: set[str]) -> str:
    return "score" if "score" in names else "-rank"


def _require(names: set[str], path: Path) -> None:
    missing = [c for c in _IDS if c not in names]
    if not missing and not ({"score", "rank"} & names):
        missing = ["score (or rank)"]
    if missing:
        raise InputError(path, None, f"missing column(s) {', '.join(missing)}")


def schema(path: Path) -> pa.Schema:
    """The Arrow schema of a Parquet file (one line naming the file when it cannot be read)."""
    import pyarrow.parquet as pq

    try:
        return pq.read_schema(path)
    except (pa.ArrowException, OSError) as exc:
        raise InputError(path, None, f"cannot read Parquet: {_first_line(exc)}") from None


def _first_line(exc: Exception) -> str:
    text = str(exc).replace("Could not open Parquet input source", "").strip(" :'")
    return (text.splitlines() or [type(exc).__name__])[0]


# --------------------------------------------------------------------------------------------
# Parquet columns, the same for every engine


@dataclass(frozen=True)
class Columns:
    """How the run's columns read as ``q`` (text), ``d`` (text) and ``s`` (a double): the
    column of each and whether it holds bytes (decoded as UTF-8) or integers."""

    score: str  # "score" or "rank"
    query_kind: str  # "text", "bytes" or "integer"
    doc_kind: str

    def sql(self, name: str) -> str:
        """A DuckDB expression reading column ``query_id`` or ``doc_id`` as text."""
        kind = self.query_kind if name == "query_id" else self.doc_kind
        if kind == "bytes":
            return f"decode({name})"  # UTF-8 checked, as Arrow's cast does
        return f"CAST({name} AS VARCHAR)"  # integers: decimal digits, as str(int)

    def sql_score(self) -> str:
        """A DuckDB expression reading the score as a double: ``score``, or minus ``rank``
        (:func:`negated_rank`)."""
        if self.score == "score":
            return "CAST(score AS DOUBLE)"
        return negated_rank("CAST(rank AS DOUBLE)")


def negated_rank(value: str) -> str:
    """A DuckDB expression: minus the rank ``value`` (an expression giving a double), NULL (a
    bad row) unless it is a whole number below :data:`RANK_LIMIT` in size."""
    return f"CASE WHEN {value} = floor({value}) AND abs({value}) < {RANK_LIMIT} THEN -({value}) END"


def _kind(field: pa.Field, path: Path) -> str:
    kind = field.type
    if pa.types.is_dictionary(kind):
        kind = kind.value_type
    if pa.types.is_string(kind) or pa.types.is_large_string(kind) or kind == pa.string_view():
        return "text"
    if pa.types.is_binary(kind) or pa.types.is_large_binary(kind):
        return "bytes"
    if pa.types.is_integer(kind):
        return "integer"
    raise InputError(
        path, None, f"column {field.name} has type {field.type}; ids must be strings or integers"
    )


def columns(arrow_schema: pa.Schema, path: Path) -> Columns:
    """The :class:`Columns` of a Parquet schema.

    Raises:
        InputError: a duplicated column, ids that are not text, bytes or integers, a score or
            rank that is not a number.
    """
    seen: set[str] = set()
    for name in arrow_schema.names:
        if name in seen:
            raise InputError(path, None, f"column {name!r} appears more than once")
        seen.add(name)
    _require(seen, path)
    score = "score" if "score" in seen else "rank"
    kind = arrow_schema.field(score).type
    if pa.types.is_dictionary(kind):
        kind = kind.value_type
    if not (pa.types.is_integer(kind) or pa.types.is_floating(kind)):
        raise InputError(path, None, f"column {score} has type {kind}; expected numbers")
    q, d = (_kind(arrow_schema.field(name), path) for name in _IDS)
    return Columns(score, q, d)


def as_ids(values: pa.ChunkedArray | pa.Array, where: Path, name: str) -> rk.Ids:
    """A column of ids as Arrow text, the way :class:`Columns` reads it in SQL: text as it is
    (dictionaries of text kept), UTF-8 bytes decoded, integers in decimal."""
    kind = values.type.value_type if pa.types.is_dictionary(values.type) else values.type
    if pa.types.is_string(kind) or pa.types.is_large_string(kind):
        return rk.as_string_array(values)
    if pa.types.is_dictionary(values.type):
        values = values.cast(kind)
    try:
        return pc.cast(values, pa.string())
    except pa.ArrowInvalid:
        raise InputError(where, None, f"column {name} holds bytes that are not UTF-8") from None


def scores_of(table: pa.Table, score: str) -> np.ndarray:
    """The scores of a table as float64 (``-rank`` for a rank column); nulls become NaN (the
    finiteness check names them). An integer a double cannot hold exactly (beyond 2^53) becomes
    the nearest double, as DuckDB's ``CAST(score AS DOUBLE)`` and trec_eval's ``atof`` of its
    text give."""
    values = table[score]
    if pa.types.is_dictionary(values.type):
        values = values.cast(values.type.value_type)
    as_double = pc.cast(values, pa.float64(), safe=False)
    out = rk.to_numpy(as_double, fill=np.nan) if len(values) else np.zeros(0)
    return -out if score == "rank" else out


def read_parquet_columns(
    files: Sequence[Path], done: Callable[[int], None] | None = None
) -> tuple[rk.Ids, rk.Ids, np.ndarray]:
    """``(query ids, doc ids, scores)`` of Parquet files read as one run, in file order;
    ``done(rows)`` is called after each file.

    Raises:
        InputError: a file that cannot be read or whose columns are not those of a run; a
            missing id or a score that is not a finite number (naming the file and its row,
            as the out-of-core engines do).
    """
    import pyarrow.parquet as pq

    first = columns(schema(files[0]), files[0])
    queries: list[pa.Array] = []
    docs: list[pa.Array] = []
    scores: list[np.ndarray] = []
    for path in files:
        cols = columns(schema(path), path)
        try:
            table = pq.read_table(path, columns=["query_id", "doc_id", cols.score])
        except (pa.ArrowException, OSError) as exc:
            raise InputError(path, None, f"cannot read Parquet: {_first_line(exc)}") from None
        if cols.score != first.score:
            raise InputError(path, None, f"has no {first.score} column, as {files[0].name} has")
        for name, out in (("query_id", queries), ("doc_id", docs)):
            ids = as_ids(table[name], path, name)
            out.extend(ids.chunks if isinstance(ids, pa.ChunkedArray) else [ids])
        scores.append(scores_of(table, cols.score))
        check_rows(table, scores[-1], path)
        if done is not None:
            done(len(table))
    return chunked(queries), chunked(docs), np.concatenate(scores)


def check_rows(table: pa.Table, scores: np.ndarray, path: Path) -> None:
    """Raise an InputError naming ``path`` and the first row (1-based, in the file) whose
    ``query_id`` or ``doc_id`` is missing or whose score (``scores``, the table's as read) is
    missing or not a finite number, or whose rank is not a whole number below 2^53 in size; the
    message is the out-of-core engines' (``<file>: row N: query_id is missing``, ``<file>: row
    N: score inf is not a finite number``, a missing score shown as ``None``; a rank as
    :func:`rank_problem` says)."""
    rank = table.column_names[2] == "rank"
    bad = ~np.isfinite(scores)
    if rank:
        bad |= bad_ranks(scores)
    for name in ("query_id", "doc_id"):
        if table[name].null_count:
            bad |= rk.to_numpy(pc.is_null(table[name]))
    if not bad.any():
        return
    i = int(np.flatnonzero(bad)[0])
    for name in ("query_id", "doc_id"):
        if not table[name][i].is_valid:
            raise InputError(path, None, f"row {i + 1}: {name} is missing")
    score = table.column(2)[i]  # the score or rank column read
    if rank:
        raise InputError(path, None, f"row {i + 1}: {rank_problem(score.as_py())}")
    value = float(scores[i]) if score.is_valid else None
    raise InputError(path, None, f"row {i + 1}: score {value!r} is not a finite number")


def rank_problem(raw: object) -> str:
    """Why the rank ``raw`` (as stored, None when missing) makes its row a bad row, as the
    loaders say it: missing, not finite, or not a whole number below 2^53 in size."""
    if raw is None:
        return "empty rank"
    if not math.isfinite(float(raw)):  # type: ignore[arg-type]
        return f"rank {raw!r} is not a finite number"
    return f"rank {raw!r} {RANK_RULE}"


def chunked(chunks: list[pa.Array]) -> pa.ChunkedArray:
    """Chunks of ids as one chunked array: all plain text (large or not), or all dictionaries
    of one type; otherwise plain text."""
    types = {c.type for c in chunks}
    if len(types) > 1:
        chunks = [c.cast(pa.large_string()) for c in chunks]
    return pa.chunked_array(chunks, type=chunks[0].type if chunks else pa.string())
