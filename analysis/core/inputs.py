"""Inputs of the metric core: the columns of a run and of qrels, checked, and the qrels prepared
for the kernels (queries numbered, duplicate pairs collapsed exactly, split and candidate
filters)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from analysis.core import ranking as rk
from analysis.core.errors import InputError

#: Why a rank is refused: the loaders and every engine keep whole-number ranks below 2^53 in
#: size (``1.5`` would sit between two ranks; from 2^53 on, doubles no longer tell neighbouring
#: integers apart)
RANK_RULE = "is not a whole number below 2^53 in size"
RANK_LIMIT = 2**53
#: A hexadecimal float as C's ``strtod`` (trec_eval's ``atof``) reads it, without its sign
#: (``0x1p3`` is 8, ``0X.8`` is 0.5), ASCII only: the text readers accept it as trec_eval
#: does, and the DuckDB engine, which cannot, names it
HEX_FLOAT = r"0[xX](?:[0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)(?:[pP][+-]?[0-9]+)?"
#: A whole field as C's ``atol`` reads it: an optional sign and ASCII digits (the text readers'
#: integer ranks and grades; the DuckDB engine shows such a rank as the integer it is)
C_INT = re.compile(r"[+-]?[0-9]+", re.ASCII)

if TYPE_CHECKING:
    import pandas as pd

Split = Sequence[str] | rk.Ids | None


def bad_ranks(values: np.ndarray) -> np.ndarray:
    """Which finite ranks break :data:`RANK_RULE`: not whole numbers, or of size 2^53 or more
    (``1.5`` would be cut to 1, ``1e30`` would wrap around in 64-bit integers and rank first).
    NaN and infinities are not flagged here: callers refuse them as not finite."""
    with np.errstate(invalid="ignore"):
        return (values != np.floor(values)) | (np.abs(values) >= RANK_LIMIT)


def require_table(frame: object, what: str) -> None:
    """Refuse a run or qrels (``what``) that is not a pandas DataFrame (a dict, a ranx object, a
    pyarrow table, ...): :func:`analysis.as_run` / :func:`analysis.as_qrels` read those.

    Raises:
        InputError: naming the object's type and the reader.
    """
    import pandas as pd

    if not isinstance(frame, pd.DataFrame):
        reader = "analysis.as_qrels" if what == "qrels" else "analysis.as_run"
        raise InputError(
            what, None, f"a {type(frame).__name__} is not a DataFrame; read it with {reader}()"
        )


def require_columns(frame: pd.DataFrame, columns: Sequence[str], what: str) -> None:
    require_table(frame, what)
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise InputError(what, None, f"missing column(s) {', '.join(missing)}")


def run_scores(run: pd.DataFrame) -> np.ndarray:
    import pandas as pd

    if "score" in run.columns:
        scores = pd.to_numeric(run["score"], errors="coerce").to_numpy(dtype=np.float64)
        bad = ~np.isfinite(scores)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            value = run["score"].iloc[[i]].tolist()[0]  # a Python value for the message
            raise InputError("run", None, f"score {value!r} of row {i + 1} is not a finite number")
        return scores
    if "rank" in run.columns:
        ranks = pd.to_numeric(run["rank"], errors="coerce").to_numpy(dtype=np.float64)
        if not np.isfinite(ranks).all():
            raise InputError("run", None, "column rank holds a value that is not a number")
        return -ranks
    raise InputError("run", None, "missing column score (or rank)")


@dataclass(frozen=True)
class Qrels:
    """Qrels prepared for the kernels: one row per unique (query, doc) pair."""

    queries: pa.Array  # qrels query ids, in order of first appearance
    query_index: np.ndarray  # per unique (query, doc) row
    docs: rk.Ids
    relevance: np.ndarray
    n_duplicate_rows: int
    n_duplicate_queries: int
    rows_per_pair: np.ndarray  # qrels rows collapsed into each pair (LIST counts them)


QrelsArrays = tuple[rk.Ids, rk.Ids, np.ndarray]


def qrels_arrays(qrels: pd.DataFrame) -> QrelsArrays:
    """``(query ids, doc ids, relevance)`` of a qrels table, after checking the values.

    Raises:
        InputError: a relevance that is not an integer (``0.5``, text; naming the row), a
            missing id.
    """
    import pandas as pd

    require_columns(qrels, ["query_id", "doc_id", "relevance"], "qrels")
    rel = pd.to_numeric(qrels["relevance"], errors="coerce")
    bad = (rel.isna() | (rel != rel.round())).to_numpy()
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        value = qrels["relevance"].iloc[[i]].tolist()[0]
        raise InputError("qrels", None, f"relevance {value!r} of row {i + 1} is not an integer")
    for name in ("query_id", "doc_id"):
        if qrels[name].isna().any():
            i = int(np.flatnonzero(qrels[name].isna().to_numpy())[0])
            raise InputError("qrels", None, f"{name} of row {i + 1} is missing")
    return (
        id_array(qrels, "query_id", "qrels"),
        id_array(qrels, "doc_id", "qrels"),
        _int64(qrels, rel),
    )


def _int64(qrels: pd.DataFrame, rel: pd.Series) -> np.ndarray:
    """Whole relevance values (no missing one) as int64, exactly.

    Raises:
        InputError: a value that is infinite or outside the 64-bit range (naming the row).
    """
    values = rel.to_numpy()
    if values.dtype.kind == "i":
        return values.astype(np.int64)
    if values.dtype.kind == "f":
        bad = (values >= 2.0**63) | (values < -(2.0**63))
    else:  # unsigned, or Python integers beyond int64 (an object column)
        bad = np.asarray([not -(2**63) <= int(v) < 2**63 for v in values.tolist()], dtype=bool)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        value = qrels["relevance"].iloc[[i]].tolist()[0]
        raise InputError(
            "qrels", None, f"relevance {value!r} of row {i + 1} is outside the 64-bit range"
        )
    return values.astype(np.int64)


def id_array(frame: pd.DataFrame, name: str, what: str) -> rk.Ids:
    """The id column ``name`` of a run or qrels (``what``) as Arrow strings: strings as they
    are, integers as their decimal text (so that ``1`` of one table meets ``"1"`` of the
    other), missing ids as nulls (refused by the callers, naming the row); a column with no
    id at all (an empty table) may have any type.

    Raises:
        InputError: ids of another type (floats, booleans, bytes, dates: their text, ``"1.0"``,
            ``"True"``, would silently match no id of the other table), naming the column's
            type or the first such value's row.
    """
    values = frame[name].array
    try:
        arr = pa.array(values, from_pandas=True)
    except (pa.ArrowInvalid, pa.ArrowTypeError):  # a mix of types in an object column
        return rk.as_string_array(_mixed_ids(values.tolist(), name, what))
    kind = arr.type.value_type if pa.types.is_dictionary(arr.type) else arr.type
    ok = pa.types.is_string(kind) or pa.types.is_large_string(kind) or pa.types.is_integer(kind)
    if not (ok or arr.null_count == len(arr)):  # no id (an empty table) or only missing ones
        if frame[name].dtype == object:  # names the first value that is no id
            return rk.as_string_array(_mixed_ids(values.tolist(), name, what))
        raise InputError(
            what,
            None,
            f"column {name} has type {frame[name].dtype}; ids must be strings or integers",
        )
    return rk.as_string_array(arr)


def _mixed_ids(values: list, name: str, what: str) -> pa.Array:
    """Ids of an object column mixing strings and integers as one string array (missing ids
    as nulls).

    Raises:
        InputError: the first value that is neither (its row, 1-based).
    """
    import pandas as pd

    out: list[str | None] = []
    for i, v in enumerate(values):
        if v is None or v is pd.NA or (isinstance(v, float) and v != v):
            out.append(None)
        elif isinstance(v, str) or (isinstance(v, int | np.integer) and not isinstance(v, bool)):
            out.append(str(v))
        else:
            raise InputError(
                what, None, f"{name} {v!r} of row {i + 1} is not a string or an integer"
            )
    return pa.array(out, type=pa.string())


def prepare_qrels(queries: rk.Ids, docs: rk.Ids, relevance: np.ndarray) -> Qrels:
    """Number the qrels queries (first appearance) and collapse duplicate (query, doc) pairs to
    their maximum relevance. Pairs are compared exactly (Arrow dictionary codes of both ids)."""
    codes, dictionary = rk.encode(queries)
    codes = codes.astype(np.int64)
    doc_codes, doc_dictionary = rk.encode(docs)
    key = codes * max(len(doc_dictionary), 1) + doc_codes.astype(np.int64)
    n = len(key)
    if n < 2 or bool(np.all(np.diff(np.sort(key)) != 0)):  # no duplicate pair (the common case)
        return Qrels(dictionary, codes, docs, relevance, 0, 0, np.ones(n, dtype=np.int64))
    uniq, first, inverse, counts = np.unique(
        key, return_index=True, return_inverse=True, return_counts=True
    )
    keep = np.sort(first)  # one row per pair, in order of first appearance
    best = np.full(len(uniq), np.iinfo(np.int64).min)
    np.maximum.at(best, inverse, relevance)
    at = np.searchsorted(uniq, key[keep])
    dup_pairs = counts > 1
    return Qrels(
        queries=dictionary,
        query_index=codes[keep],
        docs=rk.take(docs, keep),
        relevance=best[at],
        n_duplicate_rows=int((counts - 1).sum()),
        n_duplicate_queries=len(np.unique(codes[first[dup_pairs]])),
        rows_per_pair=counts[at],
    )


def restrict_qrels(arrays: QrelsArrays, split: Split) -> tuple[QrelsArrays, int]:
    """The qrels rows whose query is in ``split``, and how many qrels queries were dropped."""
    queries, docs, relevance = arrays
    split_ids = split_array(split)
    inside = rk.to_numpy(pc.is_in(_plain(queries), value_set=split_ids))
    before = len(pc.unique(_plain(queries)))
    rows = np.flatnonzero(inside)
    kept = (rk.take(queries, rows), rk.take(docs, rows), np.asarray(relevance)[rows])
    return kept, before - len(pc.unique(_plain(kept[0])))


def _plain(ids: rk.Ids) -> rk.Ids:
    return ids.cast(ids.type.value_type) if pa.types.is_dictionary(ids.type) else ids


def split_array(split: Split) -> pa.Array:
    ids = split
    if not isinstance(ids, pa.Array | pa.ChunkedArray):
        ids = rk.string_array([str(x) for x in split]).cast(pa.string())
    ids = rk.as_string_array(_plain(ids))
    return pc.unique(ids.combine_chunks() if isinstance(ids, pa.ChunkedArray) else ids)


def candidate_qrels(arrays: QrelsArrays, candidates: Split) -> tuple[QrelsArrays, int]:
    """STaRK's variant: gold docs that are not ``candidates`` get relevance 0 (STaRK's evaluator
    keeps only candidates in its gold mask), so a query keeps its row and scores 0 when none of
    its gold ids is a candidate. Returns the qrels and the number of golds dropped."""
    queries, docs, relevance = arrays
    inside = rk.to_numpy(pc.is_in(_plain(docs), value_set=split_array(candidates)))
    relevance = np.asarray(relevance)
    dropped = int(((relevance > 0) & ~inside).sum())
    return (queries, docs, np.where(inside, relevance, 0)), dropped


def run_arrays(run: pd.DataFrame) -> tuple[rk.Ids, rk.Ids, np.ndarray]:
    """``(query ids, doc ids, scores)`` of a run table, ids as Arrow strings (zero-copy for
    pandas' ``str`` columns; see :func:`id_array`); a table with ranks but no scores gets
    ``score = -rank``."""
    require_columns(run, ["query_id", "doc_id"], "run")
    return id_array(run, "query_id", "run"), id_array(run, "doc_id", "run"), run_scores(run)
