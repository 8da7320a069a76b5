"""Runs, qrels, queries and entities from what a notebook holds, as the project's tables.

=============================  ===============================================================
object                         read as
=============================  ===============================================================
a path (``str``, ``Path``)     the file, its format detected from the content
                               (:func:`analysis.io.load_run` and friends)
a pandas ``DataFrame``         a table in the project's column names, or in PyTerrier's (runs
                               ``qid, docno, score[, rank]``, qrels ``qid, docno, label``,
                               topics ``qid, query``), ranx's (``q_id, doc_id, score``) or
                               ir_datasets' (qrels ``query_id, doc_id, relevance, iteration``)
a pyarrow or polars table      the same, through its ``to_pandas()``
a mapping                      run/qrels ``{query_id: {doc_id: value}}`` (a run may give
                               ranked lists ``{query_id: [doc_id, ...]}``); queries
                               ``{query_id: text}``; entities ``{doc_id: text}``
a ranx ``Run`` / ``Qrels``     its ``to_dict()`` (any object with ``to_dict()``; ranx itself
                               is not imported)
an iterable of records         named tuples (ir_datasets' ``qrels_iter()``: ``TrecQrel(query_id,
                               doc_id, relevance, iteration)``; ``scoreddocs_iter()``;
                               ``queries_iter()``; ``docs_iter()``) or dicts, their field names
                               as columns; plain 3-tuples as ``query_id, doc_id, score`` (run)
                               or ``query_id, doc_id, relevance`` (qrels)
an ir_datasets dataset         its ``qrels_iter()`` (qrels), ``queries_iter()`` (queries),
                               ``scoreddocs_iter()`` (run), ``docs_iter()`` (entities)
=============================  ===============================================================

The rules of the file loaders hold: ids are strings (integer ids become their decimal text,
``"007"`` stays ``"007"``; float, boolean, missing or empty ids and text that is not valid
Unicode are errors), scores are finite numbers, relevance an integer within int64, and an input
with no row is an error (as an empty file is). Errors are
:class:`~analysis.core.errors.InputError` naming the input (``run 'bm25'``) and the row (its
index label); an object whose own ``to_pandas()``, ``to_dict()`` or iteration fails, or returns
something else than promised, is one such error too. A table's column names must be unique;
ids held in the index (``df.set_index(["query_id", "doc_id"])``) are read as columns. A run
keeps ``score`` (and ``rank`` only when it has ranks but no scores: ``score = -rank``, as the
loaders do); PyTerrier's 0-based ``rank`` beside a score is dropped, the ranking comes from the
scores. A ranx ``Qrels`` (an object with a ``qrels`` attribute) is refused as a run, and a ranx
``Run`` (a ``run`` attribute and no ``qrels``) as qrels.

:func:`to_ranx` and :func:`from_ranx` convert to and from ranx objects; only :func:`to_ranx`
imports ranx (an optional dependency: without it, one error line says to install it).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from analysis.core.errors import InputError, MissingDependency
from analysis.core.inputs import RANK_RULE, bad_ranks
from analysis.core.measures import USER_FAILURES, one_line
from analysis.io import (
    load_entities,
    load_qrels,
    load_queries,
    load_run,
    no_relevance,
    queries_columns,
    relevance_alias,
)
from analysis.io.dicts import (
    first_unencodable,
    frame_from_mapping,
    is_number,
    mapping_from_frame,
    shown,
)
from analysis.io.trec import INT64_MAX, INT64_MIN

if TYPE_CHECKING:
    import pandas as pd

#: the methods of an ir_datasets dataset that give each kind of table
_DATASET_ITERATORS = {
    "run": "scoreddocs_iter",
    "qrels": "qrels_iter",
    "queries": "queries_iter",
    "entities": "docs_iter",
}
_PLAIN_TUPLES = {
    "run": ("query_id", "doc_id", "score"),
    "qrels": ("query_id", "doc_id", "relevance"),
}


def _call(obj: object, method: str, source: str) -> Any:
    """``obj.<method>()``, its failure one :class:`InputError` line naming the method."""
    try:
        return getattr(obj, method)()
    except USER_FAILURES as exc:
        raise InputError(
            source, None, f"{type(obj).__name__}.{method}() raised {one_line(exc)}"
        ) from None


def _records(rows: Iterable[Any], kind: str, source: str) -> pd.DataFrame:
    """An iterable of named tuples, dicts or plain tuples as a DataFrame."""
    import pandas as pd

    try:
        rows = list(rows)
    except USER_FAILURES as exc:
        raise InputError(source, None, f"reading its rows raised {one_line(exc)}") from None
    if not rows:
        raise InputError(source, None, f"no rows (an empty {kind})")
    first = rows[0]
    if isinstance(first, Mapping):
        _alike(rows, lambda r: isinstance(r, Mapping), "a mapping", source)
        return pd.DataFrame.from_records(rows)
    if isinstance(first, tuple) and hasattr(first, "_fields"):
        columns = list(first._fields)
    else:
        columns = list(_PLAIN_TUPLES.get(kind, ()))
        if not (columns and isinstance(first, tuple | list) and len(first) == len(columns)):
            raise InputError(
                source, None, f"rows of {type(first).__name__} are not records with field names"
            )
    size = len(columns)
    _alike(rows, lambda r: isinstance(r, tuple | list) and len(r) == size,
           f"a tuple of {size} fields ({', '.join(columns)})", source)  # fmt: skip
    return pd.DataFrame.from_records(rows, columns=columns)


def _alike(rows: list, fits: Any, what: str, source: str) -> None:
    """Refuse the first row that is not ``what`` (``fits(row)`` false), as the first row is."""
    for i, row in enumerate(rows):
        if not fits(row):
            raise InputError(source, None, f"row {i}: {shown(row)} is not {what} as row 0 is")


def _is_mapping(obj: object) -> bool:
    """Whether ``obj`` is read as a nested mapping (a dict, a ranx ``Run``/``Qrels``: any
    object with ``to_dict()`` that is no table)."""
    import pandas as pd

    if isinstance(obj, Mapping):
        return True
    table = isinstance(obj, pd.DataFrame | pd.Series | str | Path) or hasattr(obj, "to_pandas")
    return not table and hasattr(obj, "to_dict")


def _frame(obj: object, kind: str, source: str) -> pd.DataFrame | None:
    """``obj`` as a DataFrame with the project's id names, or None for a mapping (read by the
    caller) or a ranx object (``to_dict()``)."""
    import pandas as pd

    if isinstance(obj, pd.DataFrame):
        frame = obj
    elif hasattr(obj, "to_pandas") and not isinstance(obj, Mapping):  # pyarrow, polars
        frame = _call(obj, "to_pandas", source)
        if not isinstance(frame, pd.DataFrame):
            raise InputError(
                source, None, f"to_pandas() returned a {type(frame).__name__}, not a DataFrame"
            )
    elif _is_mapping(obj):
        return None
    elif hasattr(obj, _DATASET_ITERATORS[kind]):
        frame = _records(_call(obj, _DATASET_ITERATORS[kind], source), kind, source)
    elif isinstance(obj, Iterable) and not isinstance(obj, str | bytes | pd.Series):
        frame = _records(obj, kind, source)
    else:
        raise InputError(source, None, f"cannot read a {type(obj).__name__} as a {kind}")
    return _columns(frame, kind, source)


def _columns(frame: pd.DataFrame, kind: str, source: str) -> pd.DataFrame:
    """A copy of ``frame`` with the ids of a named index as columns, the project's id names and
    unique, flat column names; refused when it has no row."""
    from analysis.io.tables import with_vocabulary

    named = [n for n in frame.index.names if n is not None and n not in frame.columns]
    frame = frame.reset_index(level=named) if named else frame.copy()
    if frame.columns.nlevels > 1:
        raise InputError(source, None, "its columns have several levels; flatten them first")
    frame = with_vocabulary(frame)
    repeated = frame.columns[frame.columns.duplicated()]
    if len(repeated):
        raise InputError(source, None, f"column {shown(repeated[0])} appears more than once")
    if not len(frame):
        raise InputError(source, None, f"no rows (an empty {kind})")
    return frame


def _at(frame: pd.DataFrame, i: int) -> str:
    """The ``i``-th row (0-based position) by its index label."""
    return f"row {_show(frame.index[i])}"


def _show(value: object) -> str:
    return shown(value)


def _ids(frame: pd.DataFrame, column: str, source: str) -> np.ndarray:
    """An id column as strings (by position): strings or integers only, none missing or empty,
    all valid Unicode text."""
    import pandas as pd

    if column not in frame.columns:
        raise InputError(
            source, None, f"no {column} column (columns: {', '.join(map(str, frame.columns))})"
        )
    col = frame[column]
    missing = col.isna().to_numpy()
    if missing.any():
        raise InputError(
            source, None, f"{_at(frame, int(np.flatnonzero(missing)[0]))}: {column} is missing"
        )
    if isinstance(col.dtype, pd.CategoricalDtype):
        col = col.astype(object)
    kind = col.dtype.kind
    if kind in "iu":
        return col.astype("str").to_numpy()
    if kind not in "OTU" and not pd.api.types.is_string_dtype(col):
        raise InputError(
            source, None, f"column {column} has type {col.dtype}; ids must be strings or integers"
        )
    values = col.tolist()
    types = set(map(type, values))
    if not types <= {str}:
        for i, v in enumerate(values):
            if isinstance(v, bool) or not isinstance(v, str | int | np.integer):
                raise InputError(
                    source,
                    None,
                    f"{_at(frame, i)}: {column} {_show(v)} is not a string or an integer",
                )
    bad = first_unencodable([str(v) for v in values])
    if bad is not None:
        raise InputError(
            source,
            None,
            f"{_at(frame, bad)}: {column} {_show(values[bad])} is not valid Unicode text",
        )
    text = col.astype("str")
    empty = (text.str.strip() == "").to_numpy()
    if empty.any():
        raise InputError(
            source, None, f"{_at(frame, int(np.flatnonzero(empty)[0]))}: empty {column}"
        )
    return text.to_numpy()


def _numbers(frame: pd.DataFrame, column: str, source: str) -> np.ndarray:
    """A numeric column as float64, every value finite."""
    import pandas as pd

    col = frame[column]
    numeric = pd.api.types.is_numeric_dtype(col) and col.dtype.kind not in "bc"
    if not (numeric or col.dtype.kind == "O"):
        raise InputError(source, None, f"column {column} has type {col.dtype}; expected numbers")
    if col.dtype.kind == "O":
        values = np.asarray([_real(v) for v in col.tolist()], dtype=np.float64)
    else:
        values = pd.to_numeric(col, errors="coerce").to_numpy(dtype=np.float64, na_value=np.nan)
    bad = ~np.isfinite(values)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raw = _show(col.iloc[i])
        raise InputError(source, None, f"{_at(frame, i)}: {column} {raw} is not a finite number")
    return values


def _real(value: object) -> float:
    """``value`` of an object column as a float; NaN for what is not a real number (text,
    booleans, complex numbers, missing values, ``Decimal("sNaN")``) and ``inf`` beyond the float
    range."""
    if not is_number(value):
        return math.nan
    try:
        return float(value)  # type: ignore[arg-type]
    except OverflowError:
        return math.inf
    except ValueError:  # Decimal("sNaN"), which no float holds
        return math.nan


def _run_table(frame: pd.DataFrame, source: str) -> pd.DataFrame:
    import pandas as pd

    out = pd.DataFrame(
        {"query_id": _ids(frame, "query_id", source), "doc_id": _ids(frame, "doc_id", source)}
    )
    if "score" in frame.columns:
        out["score"] = _numbers(frame, "score", source)
    elif "rank" in frame.columns:
        ranks = _numbers(frame, "rank", source)
        if bad_ranks(ranks).any():
            i = int(np.flatnonzero(bad_ranks(ranks))[0])
            raw = _show(frame["rank"].iloc[i])
            raise InputError(source, None, f"{_at(frame, i)}: rank {raw} {RANK_RULE}")
        out["score"] = -ranks
        out["rank"] = ranks.astype(np.int64)
    else:
        raise InputError(source, None, "a run needs a score (or rank) column")
    return out


def _qrels_table(frame: pd.DataFrame, source: str) -> pd.DataFrame:
    import pandas as pd

    frame = relevance_alias(frame)
    out = pd.DataFrame(
        {"query_id": _ids(frame, "query_id", source), "doc_id": _ids(frame, "doc_id", source)}
    )
    no_relevance(frame, source, None)
    if "relevance" not in frame.columns:  # a list of relevant pairs
        out["relevance"] = np.ones(len(out), dtype=np.int64)
        return out
    out["relevance"] = _relevance(frame, source)
    return out


def _relevance(frame: pd.DataFrame, source: str) -> np.ndarray:
    """The ``relevance`` column as int64, exactly: integers as they are (``2**63 - 1`` too, and
    the Python integers of an object column beyond 2^53), other numbers when whole.

    Raises:
        InputError: naming the first row whose value is not a finite number, not whole, or
            outside the 64-bit range.
    """
    col = frame["relevance"]
    values = _numbers(frame, "relevance", source)  # refuses what is not a finite number
    if col.dtype.kind == "i":
        return col.to_numpy(dtype=np.int64)
    if col.dtype.kind in "uO":
        raw = col.to_numpy(dtype=np.uint64) if col.dtype.kind == "u" else col.to_numpy()
        wholes = [_whole(v) for v in raw.tolist()]
        bad = np.asarray([v is None or not INT64_MIN <= v <= INT64_MAX for v in wholes])
    else:  # floats: a whole float64 below 2^63 in size is an exact int64
        bad = (values != np.floor(values)) | (values >= 2.0**63) | (values < -(2.0**63))
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise InputError(
            source,
            None,
            f"{_at(frame, i)}: relevance {_show(col.iloc[i])} is not an integer in the 64-bit "
            "range",
        )
    return np.asarray(wholes, dtype=np.int64) if col.dtype.kind in "uO" else values.astype(np.int64)


def _whole(value: object) -> int | None:
    """A finite real number as a Python integer, exactly (``Decimal`` and ``Fraction`` too);
    None when it is not whole."""
    whole = int(value)  # type: ignore[call-overload]
    return whole if whole == value else None


def _run_or_qrels(obj: object, kind: str, source: str) -> pd.DataFrame:
    if isinstance(obj, str | Path):
        return load_run(obj) if kind == "run" else load_qrels(obj)
    frame = _frame(obj, kind, source)
    if frame is None:
        if not isinstance(obj, Mapping):
            _ranx_kind(obj, kind, source)
        data = obj if isinstance(obj, Mapping) else _call(obj, "to_dict", source)
        return frame_from_mapping(data, kind, source)
    return _run_table(frame, source) if kind == "run" else _qrels_table(frame, source)


def _ranx_kind(obj: object, kind: str, source: str) -> None:
    """Refuse a ranx object of the other kind (a ``Qrels``, told by its ``qrels`` attribute, as a
    run; a ``Run``, told by its ``run`` attribute, as qrels): its values would be read as
    the other's.

    Raises:
        InputError: naming what the object holds.
    """
    is_qrels = hasattr(obj, "qrels")
    if kind == "run" and is_qrels:
        raise InputError(source, None, f"a ranx {type(obj).__name__} holds qrels, not a run")
    if kind == "qrels" and not is_qrels and hasattr(obj, "run"):
        raise InputError(source, None, f"a ranx {type(obj).__name__} holds a run, not qrels")


def as_run(obj: object, source: str = "run") -> pd.DataFrame:
    """A run ``query_id, doc_id, score`` (+ ``rank`` for ranks without scores) from any object
    of the module table; ``source`` names it in errors.

    Raises:
        InputError: an unreadable object or file, a missing column, a bad id or score.
    """
    return _run_or_qrels(obj, "run", source)


def as_qrels(obj: object, source: str = "qrels") -> pd.DataFrame:
    """Qrels ``query_id, doc_id, relevance`` (int64) from any object of the module table.

    Raises:
        InputError: an unreadable object or file, a missing column, a bad id or relevance.
    """
    return _run_or_qrels(obj, "qrels", source)


def _text_mapping(obj: Mapping, key: str, source: str) -> pd.DataFrame:
    """``{id: text}`` as a frame (``None``, ``pd.NA`` and NaN texts are empty, numbers their
    text).

    Raises:
        InputError: a text that is another object (a list: a mapping of columns; a record; a
            dict), naming its id.
    """
    import pandas as pd

    if not obj:
        raise InputError(source, None, "no rows (an empty mapping)")
    missing = [v is None or v is pd.NA or (isinstance(v, float) and v != v) for v in obj.values()]
    for (k, v), empty in zip(obj.items(), missing, strict=True):
        if not (empty or isinstance(v, str) or is_number(v)):
            what = type(v).__name__
            raise InputError(
                source, None, f"{key} {shown(k)}: text {shown(v)} is a {what}, not a string"
            )
    texts = ["" if empty else str(v) for v, empty in zip(obj.values(), missing, strict=True)]
    frame = pd.DataFrame(
        {key: pd.Series(list(obj.keys()), dtype=object), "text": pd.Series(texts, dtype=object)}
    )
    frame[key] = _ids(frame, key, source)
    return frame


def _check_texts(frame: pd.DataFrame, source: str) -> pd.DataFrame:
    """``frame`` when every text in it is valid Unicode (no lone surrogate, which no file can
    hold).

    Raises:
        InputError: naming the row and the column.
    """
    for column in frame.columns:
        if frame[column].dtype.kind != "O":
            continue
        values = frame[column].tolist()
        bad = first_unencodable([v for v in values if isinstance(v, str)])
        if bad is not None:
            i = [j for j, v in enumerate(values) if isinstance(v, str)][bad]
            raise InputError(
                source,
                None,
                f"{_at(frame, i)}: {shown(column)} {shown(values[i])} is not valid Unicode text",
            )
    return frame


def as_queries(obj: object, source: str = "queries") -> pd.DataFrame:
    """Queries ``query_id, text`` + any other columns (slices): a file, a DataFrame (PyTerrier
    topics ``qid, query``; ir_datasets queries, whose ``title`` is the text when there is no
    ``text``), a mapping ``{query_id: text}`` or records."""
    if isinstance(obj, str | Path):
        return load_queries(obj)
    if isinstance(obj, Mapping):
        return _check_texts(_text_mapping(obj, "query_id", source), source)
    frame = _frame(obj, "queries", source)
    if frame is None:
        raise InputError(source, None, f"cannot read a {type(obj).__name__} as queries")
    frame["query_id"] = _ids(frame, "query_id", source)
    if "text" not in frame.columns and "query" not in frame.columns and "title" in frame.columns:
        frame = frame.rename(columns={"title": "text"})
    frame = queries_columns(frame)
    frame["text"] = frame["text"].fillna("").astype(object).map(str)
    return _check_texts(frame, source)


def as_entities(obj: object, source: str = "entities") -> pd.DataFrame:
    """Entities ``doc_id, name, text`` + any other columns (``type``, ``lat``, ``lon``, ...): a
    file, a DataFrame (PyTerrier's ``docno``), a mapping ``{doc_id: text}`` or records
    (ir_datasets' ``docs_iter()``)."""
    if isinstance(obj, str | Path):
        return load_entities(obj)
    if isinstance(obj, Mapping):
        frame = _text_mapping(obj, "doc_id", source)
    else:
        frame = _frame(obj, "entities", source)
        if frame is None:
            raise InputError(source, None, f"cannot read a {type(obj).__name__} as entities")
        frame["doc_id"] = _ids(frame, "doc_id", source)
    for column in ("name", "text"):
        if column not in frame.columns:
            frame[column] = ""
    return _check_texts(frame, source)


def to_ranx(obj: object, kind: str = "run", name: str | None = None) -> Any:
    """A ranx ``Run`` (``kind="run"``, named ``name``) or ``Qrels`` (``kind="qrels"``) from any
    object :func:`as_run` / :func:`as_qrels` reads. A pair listed twice keeps its largest value
    (best score, maximum relevance).

    Raises:
        MissingDependency: ranx is not installed (one line: ``pip install ranx``).
        InputError: as :func:`as_run` / :func:`as_qrels`.
    """
    if kind not in ("run", "qrels"):
        raise ValueError(f"kind must be 'run' or 'qrels', not {kind!r}")
    try:
        import ranx  # type: ignore[import-not-found]
    except ImportError:
        raise MissingDependency("to_ranx needs ranx: pip install ranx") from None
    if kind == "qrels":
        return ranx.Qrels.from_dict(mapping_from_frame(as_qrels(obj), "relevance"))
    return ranx.Run.from_dict(mapping_from_frame(as_run(obj), "score"), name=name)


def from_ranx(obj: object) -> pd.DataFrame:
    """The run (``query_id, doc_id, score``) of a ranx ``Run`` or the qrels (``query_id,
    doc_id, relevance``) of a ranx ``Qrels`` (told apart by ranx's ``qrels`` attribute); ranx
    is not imported. A table (a DataFrame, Series, pyarrow or polars table, whose ``to_dict()``
    maps columns, not queries), a plain mapping or a path is refused: :func:`as_run` and
    :func:`as_qrels` read those.

    Raises:
        InputError: ``obj`` is not a ranx object, or its mapping breaks the rules of
            :mod:`analysis.io.dicts`.
    """
    if isinstance(obj, Mapping) or not _is_mapping(obj):
        raise InputError(
            "ranx",
            None,
            f"a {type(obj).__name__} is not a ranx Run or Qrels (as_run and as_qrels read it)",
        )
    kind = "qrels" if hasattr(obj, "qrels") else "run"
    source = f"ranx {type(obj).__name__}"
    return frame_from_mapping(_call(obj, "to_dict", source), kind, source)
