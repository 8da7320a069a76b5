"""Layer 3 — read runs, qrels, queries and entities from any supported format, detected from
the content.

=================  ===========================================  ==================================
format             recognised by                                 gives
=================  ===========================================  ==================================
``trec_run``       ``qid Q0 docno rank score tag`` lines          run
``trec_qrels``     ``qid iter docno rel`` lines                   qrels
``stark_qa``       CSV header with ``id, query, answer_ids``       queries and qrels
``stark_eval``     CSV header with ``query_id, pred_rank``         run (ranks, no scores)
``split_index``    ``*.index``: one id per line                    query ids of one split
``geobloom``       ``text<TAB>X<TAB>Y[<TAB>gold]`` with decimal X, Y   qrels (gold POI rows)
``ranx_json``      a JSON object of objects ``{"q1": {"d1": 1.2}}``  run or qrels (ranx's JSON)
``ranx_lz4``       LZ4 frame magic bytes (ranx's ``.lz4``)          run or qrels
``table``          CSV/TSV/Parquet/JSONL with the column names     run, qrels, queries or entities
=================  ===========================================  ==================================

Tables may use PyTerrier's and ranx's names: ``qid``, ``q_id`` and ``docno`` are the ids (see
:mod:`analysis.io.tables`); a qrels table without ``relevance`` takes PyTerrier's ``label`` (or
the integer ``score`` of ranx's Parquet qrels, ``q_id, doc_id, score``), else every row is a
relevant pair (relevance 1); a queries table without ``text`` takes PyTerrier's ``query``.
ranx JSON and ``.lz4``: :mod:`analysis.io.dicts`. In-memory objects (DataFrames, dicts, ranx
``Run``/``Qrels``, ir_datasets and PyTerrier frames): :mod:`analysis.io.objects`.

``.gz`` works for the text formats. The returned tables use the project's vocabulary:
runs ``query_id, doc_id, score`` (+ ``rank`` when the file gives ranks only), qrels
``query_id, doc_id, relevance``, queries ``query_id, text, ...``, entities ``doc_id, name, text,
...``. Ids are strings. Bad input raises :class:`~analysis.core.errors.InputError`.

Every file is opened through :mod:`analysis.io._text`: a size cap after decompression, a gzip
ratio limit, pipes read once as streams, devices refused, JSON/TOML depth-limited. Numbers follow
C's ``strtod``/``atol`` on ASCII (:func:`analysis.io.trec.c_float`); relevance must fit int64.

May import :mod:`analysis.core`, :mod:`analysis.geo` and :mod:`analysis.baselines`.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from analysis.core.errors import InputError
from analysis.core.inputs import RANK_RULE, bad_ranks
from analysis.io import dicts, trec
from analysis.io._text import (
    HEAD_BYTES,
    NUL_MESSAGE,
    binary_line,
    check_file,
    first_data_line,
    head_text,
    magic,
)

if TYPE_CHECKING:  # the table readers (and pandas) are imported where used: the command line
    import pandas as pd  # reads TREC files without them


FORMATS = (
    "trec_run",
    "trec_qrels",
    "stark_qa",
    "stark_eval",
    "split_index",
    "table",
    "geobloom",
    "ranx_json",
    "ranx_lz4",
)
#: the id columns a table may have, the project's and other tools' names (:mod:`.tables`)
_ID_COLUMNS = ("query_id", "doc_id", "qid", "q_id", "docno")


def _looks_like_geobloom(line: str) -> bool:
    """GeoBloom's ``text<TAB>X<TAB>Y[<TAB>gold]``: 3-4 tab-separated fields whose 2nd and 3rd
    are decimal numbers (projected coordinates), which TREC's integer columns never are."""
    fields = line.rstrip("\r\n").split("\t")
    if len(fields) not in (3, 4):
        return False
    try:
        float(fields[1])
        float(fields[2])
    except ValueError:
        return False
    return "." in fields[1] and "." in fields[2]


def detect_format(path: str | Path) -> str:
    """Guess the format of a file from its name and first data line (see the module table)."""
    p = check_file(path)
    start = magic(p)
    if start == dicts.LZ4_MAGIC:
        return "ranx_lz4"
    name = p.name.lower().removesuffix(".gz")
    if name.endswith(".parquet") or start == b"PAR1":
        return "table"
    if name.endswith(".index"):
        return "split_index"
    head = head_text(p)
    binary = binary_line(head)
    if binary is not None:
        raise InputError(p, binary, NUL_MESSAGE)
    if dicts.looks_like_ranx_json(head):
        return "ranx_json"
    if name.endswith((".jsonl", ".ndjson", ".json")):
        return "table"
    found = first_data_line(head)
    if found is None:
        raise InputError(p, None, "the file holds no data")
    return _line_format(p, head, found)


def _line_format(p: Path, head: str, found: tuple[int, str]) -> str:
    """The format of a text file from its first data line ``found`` (line number, text) in
    ``head``, the file's first bytes; an :class:`InputError` naming the line when none fits."""
    _, line = found
    columns = {c.strip().strip('"') for c in line.replace("\t", ",").split(",")}
    if "," in line or "\t" in line:
        # a STaRK header missing a column is still STaRK: its reader names the missing column
        if {"id", "query"} <= columns or "answer_ids" in columns:
            return "stark_qa"
        if "pred_rank" in columns or ({"idx", "query_id"} <= columns and "doc_id" not in columns):
            return "stark_eval"
    if columns & set(_ID_COLUMNS):  # also a one-column table
        return "table"
    if _looks_like_geobloom(line):
        return "geobloom"
    kind = trec.looks_like_trec(line)
    if kind:
        return kind
    if line.lstrip().startswith("<"):
        raise InputError(
            p, found[0], "an HTML/XML page, not data (a web page saved instead of the file?)"
        )
    if len(trec.fields(line)) == 1 and "," not in line:
        return "split_index"
    cut = not head.endswith(("\n", "\r")) and head.endswith(line)  # the head ends inside it
    if cut and len(line.encode("utf-8", "replace")) >= HEAD_BYTES - 16:
        raise InputError(
            p,
            found[0],
            f"the first data line is longer than {HEAD_BYTES:,} bytes, more than format "
            "detection reads (an id or a text of that size?)",
        )
    raise InputError(
        p,
        found[0],
        "unrecognised format (expected a TREC run/qrels, a STaRK CSV or a table "
        "with query_id/doc_id columns)",
    )


def _check_rows(frame: pd.DataFrame, path: Path) -> None:
    """A run or qrels table without a row (a header only, a Parquet file of 0 rows) is an
    error, as an empty TREC file is: a writer that stopped after the header, not a run of no
    documents or qrels judging nothing."""
    if not len(frame):
        raise InputError(path, None, "the table holds no rows (only its columns)")


def _check_ids(frame: pd.DataFrame, path: Path) -> None:
    """An empty query_id or doc_id cell is an error naming its line (it would become NaN)."""
    for column in ("query_id", "doc_id"):
        empty = (frame[column].fillna("").astype("str").str.strip() == "").to_numpy()
        if empty.any():
            i = int(np.flatnonzero(empty)[0])
            raise InputError(path, _row_line(path, i), f"empty {column}")


def _check_run_table(frame: pd.DataFrame, path: Path) -> pd.DataFrame:
    import pandas as pd

    missing = [c for c in ("query_id", "doc_id") if c not in frame.columns]
    if missing or not ({"score", "rank"} & set(frame.columns)):
        raise InputError(
            path, 1, "a run table needs the columns query_id, doc_id and score (or rank)"
        )
    _check_rows(frame, path)
    _check_ids(frame, path)
    for column in ("score", "rank"):
        if column in frame.columns:
            values = pd.to_numeric(frame[column], errors="coerce").to_numpy(dtype=np.float64)
            bad = ~np.isfinite(values)
            if bad.any():
                i = int(np.flatnonzero(bad)[0])
                raw = frame[column].iloc[[i]].tolist()[0]  # a Python value for the message
                empty = raw is None or (isinstance(raw, float) and np.isnan(raw)) or raw == ""
                what = f"empty {column}" if empty else f"{column} {raw!r} is not a finite number"
                raise InputError(path, _row_line(path, i), what)
            if column == "rank" and bad_ranks(values).any():
                i = int(np.flatnonzero(bad_ranks(values))[0])
                raw = frame[column].iloc[[i]].tolist()[0]
                raise InputError(path, _row_line(path, i), f"rank {raw!r} {RANK_RULE}")
            frame[column] = values if column == "score" else values.astype(np.int64)
    if "score" not in frame.columns:
        frame["score"] = -frame["rank"].astype(np.float64)
    return frame


def _relevance_column(column: pd.Series, path: Path) -> np.ndarray:
    """A relevance column as int64: every value an integer (``1.0`` counts) within int64.

    Integers are checked exactly (no detour through float64, which cannot hold every int64);
    floats must be whole and inside [-2^63, 2^63)."""
    import pandas as pd

    rel = pd.to_numeric(column, errors="coerce")
    values = rel.to_numpy()
    if values.dtype.kind in "iu":
        bad = values > np.iinfo(np.int64).max if values.dtype.kind == "u" else None
        if bad is None or not bad.any():
            return values.astype(np.int64)
        why = "is outside the 64-bit integer range"
    else:
        values = values.astype(np.float64)
        bad = ~np.isfinite(values) | (values != np.round(values))
        why = "is not an integer"
        if not bad.any():
            bad = (values >= 2.0**63) | (values < -(2.0**63))
            why = "is outside the 64-bit integer range"
    i = int(np.flatnonzero(bad)[0])
    value = column.iloc[[i]].tolist()[0]  # a Python value for the message
    raise InputError(path, _row_line(path, i), f"relevance {value!r} {why}")


def _row_line(path: Path, row: int) -> int | None:
    """File line of table row ``row`` (0-based) for CSV-like files; None for binary formats."""
    name = path.name.lower().removesuffix(".gz")
    if name.endswith(".parquet"):
        return None
    return row + (1 if name.endswith((".jsonl", ".ndjson")) else 2)


def _qrels_table(p: Path) -> pd.DataFrame:
    from analysis.io import tables

    frame = tables.read_table(p)
    if "doc_id" not in frame.columns and "query_id" in frame.columns:
        from analysis.io.spatial import gold_qrels

        found = gold_qrels(frame, p)  # a query table with gold ids (GeoGLUE gold_poi_ids)
        if found is not None:
            return found
    missing = [c for c in ("query_id", "doc_id") if c not in frame.columns]
    if missing:
        raise InputError(p, 1, "a qrels table needs the columns query_id, doc_id, relevance")
    _check_rows(frame, p)
    _check_ids(frame, p)
    frame = relevance_alias(frame)
    no_relevance(frame, p, 1)
    if "relevance" not in frame.columns:  # a list of gold pairs (e.g. LIST's qrels.csv)
        frame["relevance"] = 1
    frame["relevance"] = _relevance_column(frame["relevance"], p)
    return frame[["query_id", "doc_id", "relevance"]]


def relevance_alias(frame: pd.DataFrame) -> pd.DataFrame:
    """A qrels table without ``relevance`` takes PyTerrier's ``label``, else an integer
    ``score`` column (ranx's Parquet qrels ``q_id, doc_id, score``)."""
    import pandas as pd

    if "relevance" in frame.columns:
        return frame
    if "label" in frame.columns:
        return frame.rename(columns={"label": "relevance"})
    if "score" in frame.columns and pd.api.types.is_integer_dtype(frame["score"]):
        return frame.rename(columns={"score": "relevance"})
    return frame


#: column names (any case) of a relevance grade under another name: qrels holding one and no
#: ``relevance`` are refused rather than read as a list of relevant pairs
GRADE_NAMES = frozenset({"rel", "grade", "judgment", "judgement", "relevancy", "relevant", "qrel"})


def no_relevance(frame: pd.DataFrame, source: str | Path, line: int | None) -> None:
    """Refuse qrels (after :func:`relevance_alias`) with a ``score`` column that is not their
    relevance, or a grade under another name (:data:`GRADE_NAMES`, e.g. ``rel``, ``grade``):
    read as a list of relevant pairs, every pair would count as relevant, those graded 0 too.

    Raises:
        InputError: naming ``source`` and ``line``.
    """
    if "relevance" in frame.columns:
        return
    if "score" in frame.columns:
        raise InputError(
            source,
            line,
            f"a score column of type {frame['score'].dtype} and no relevance (or label): a run, "
            "not qrels? Qrels give an integer relevance",
        )
    grade = next((c for c in frame.columns if str(c).strip().lower() in GRADE_NAMES), None)
    if grade is not None:
        raise InputError(
            source,
            line,
            f"a column {str(grade)!r} and no relevance (or label): name the grade column "
            "relevance; qrels of query_id and doc_id only count every pair as relevant",
        )


def queries_columns(frame: pd.DataFrame) -> pd.DataFrame:
    """A queries table with ``text`` (PyTerrier's ``query`` column when it has no ``text``,
    else empty)."""
    if "text" not in frame.columns:
        frame = frame.rename(columns={"query": "text"}) if "query" in frame.columns else frame
        if "text" not in frame.columns:
            frame["text"] = ""
    return frame


def _queries_table(p: Path) -> pd.DataFrame:
    from analysis.io import tables

    frame = tables.read_table(p)
    if "query_id" not in frame.columns:
        raise InputError(p, 1, "a queries table needs a query_id column")
    return queries_columns(frame)


def _geobloom_qrels(p: Path) -> pd.DataFrame:
    from analysis.io.spatial import load_geobloom_qrels

    return load_geobloom_qrels(p)


def _geobloom_queries(p: Path) -> pd.DataFrame:
    raise InputError(
        p, None, "GeoBloom queries need the dataset's CRS: python -m analysis import geobloom"
    )


def _readers(kind: str) -> dict[str, Callable[[Path], pd.DataFrame]]:
    """The reader of each format that gives a ``kind`` (the module table's last column); the
    readers' modules are imported here, when a file is loaded."""
    from analysis.io import stark, tables

    return {
        "run": {
            "trec_run": trec.read_trec_run,
            "stark_eval": lambda p: stark.read_stark_eval(p)[0],
            "table": lambda p: _check_run_table(tables.read_table(p), p),
            "ranx_json": lambda p: dicts.read_ranx_json(p, "run"),
            "ranx_lz4": lambda p: dicts.read_ranx_lz4(p, "run"),
        },
        "qrels file": {
            "trec_qrels": trec.read_trec_qrels,
            "stark_qa": lambda p: stark.read_stark_qa(p)[1],
            "geobloom": _geobloom_qrels,
            "table": _qrels_table,
            "ranx_json": lambda p: dicts.read_ranx_json(p, "qrels"),
            "ranx_lz4": lambda p: dicts.read_ranx_lz4(p, "qrels"),
        },
        "queries file": {
            "stark_qa": lambda p: stark.read_stark_qa(p)[0],
            "table": _queries_table,
            "split_index": stark.read_split_index,
            "geobloom": _geobloom_queries,
        },
    }[kind]


def _load(path: str | Path, fmt: str, kind: str) -> pd.DataFrame:
    """Check ``path``, detect its format when ``fmt`` is ``"auto"`` and read it with that
    format's reader for ``kind``; a format without one is an error saying the file is not a
    ``kind``."""
    p = check_file(path)
    fmt = detect_format(p) if fmt == "auto" else fmt
    reader = _readers(kind).get(fmt)
    if reader is None:
        raise InputError(p, None, f"a {fmt} file is not a {kind}")
    return reader(p)


def load_run(path: str | Path, fmt: str = "auto") -> pd.DataFrame:
    """Load a run: ``query_id, doc_id, score`` (+ ``rank`` for rank-only formats), file order."""
    return _load(path, fmt, "run")


def load_qrels(path: str | Path, fmt: str = "auto") -> pd.DataFrame:
    """Load qrels: ``query_id, doc_id, relevance`` (int64)."""
    return _load(path, fmt, "qrels file")


def load_queries(path: str | Path, fmt: str = "auto") -> pd.DataFrame:
    """Load queries: ``query_id, text`` + any other columns (STaRK QA or a table)."""
    return _load(path, fmt, "queries file")


def load_entities(path: str | Path) -> pd.DataFrame:
    """Load entities (KB nodes, POIs): ``doc_id, name, text, ...`` from a table."""
    from analysis.io import tables

    p = check_file(path)
    frame = tables.read_table(p)
    if "doc_id" not in frame.columns:
        raise InputError(p, 1, "an entities table needs a doc_id column")
    for column in ("name", "text"):
        if column not in frame.columns:
            frame[column] = ""
    return frame


__all__ = [
    "FORMATS",
    "detect_format",
    "load_entities",
    "load_qrels",
    "load_queries",
    "load_run",
    "queries_columns",
    "relevance_alias",
]
