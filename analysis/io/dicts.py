"""Runs and qrels as nested mappings ``{query_id: {doc_id: value}}``: Python dicts, ranx's JSON
files and ranx's ``.lz4`` files.

=====================  ====================================================================
source                 shape
=====================  ====================================================================
a Python dict          ``{"q1": {"d1": 12.5, "d2": 11.0}}`` (run: scores; qrels: relevance);
                       a run may also give ranked lists ``{"q1": ["d1", "d2"]}`` (ranks, no
                       scores, as STaRK's ``pred_rank``)
ranx JSON              ``Run.save("run.json")`` / ``Qrels.save("qrels.json")``: the same
                       mapping as one JSON object (``.json.gz`` too); recognised from the
                       content (an object whose first value is an object), whatever the name
ranx ``.lz4``          ``Run.save("run.lz4")``: the mapping in CBOR, compressed with LZ4 twice
                       (ranx writes ``lz4.frame.compress(cbor2.dumps(run))`` through
                       ``lz4.frame.open``); recognised by the LZ4 frame magic bytes. Reading
                       it needs the ``lz4`` and ``cbor2`` packages (ranx installs both);
                       without them it is one error line naming them
=====================  ====================================================================

Rules (those of every other loader): ids are strings (an integer key of a Python dict becomes
its decimal text; ``"007"`` stays ``"007"``), an empty id is an error, and so are two keys of
one mapping that become the same id (``1`` and ``"1"``, query ids or the doc ids of one query;
a ranked list may name a document twice, as a file may) and an id that is not valid Unicode
text (a lone surrogate, ``"\ud800"`` in JSON); run scores must be finite numbers (``bool``,
text, ``NaN``, ``inf`` are errors; ``Decimal`` and ``Fraction`` count); relevance must be an
integer (``1.0`` counts) within int64. A mapping with no pair at all is an error, as an empty
file is, and so are the columns of a table (``{"query_id": [...], "doc_id": [...]}``, or
``DataFrame.to_dict()``'s ``{"query_id": {0: ...}, "doc_id": {0: ...}}``: give
``pd.DataFrame(...)``). A key given twice in one JSON object (a JSON reader keeps only one of
its values) is an error naming its line. An error names the query and the document (and, for a
JSON file, the line of the query's key when it can be found). Rows keep the mapping's order.
"""

from __future__ import annotations

import decimal
import json
import math
import numbers
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from analysis.core.errors import InputError
from analysis.io._text import (
    check_file,
    magic,
    max_input_bytes,
    parse_json,
    read_text,
    source_path,
)
from analysis.io.trec import INT64_MAX, INT64_MIN

if TYPE_CHECKING:
    import pandas as pd

#: ranx JSON (or any JSON object of objects): ``{`` then a string key whose value is an object
RANX_JSON_HEAD = re.compile(r'\s*\{\s*(?:\}|"(?:[^"\\]|\\.)*"\s*:\s*\{)')
#: the magic number that starts an LZ4 frame
LZ4_MAGIC = b"\x04\x22\x4d\x18"
KINDS = ("run", "qrels")
_LZ4_PACKAGES = "the lz4 and cbor2 packages (pip install lz4 cbor2; ranx installs both)"


def looks_like_ranx_json(head: str) -> bool:
    """Whether text starts like a JSON object of objects (ranx's run/qrels JSON)."""
    return RANX_JSON_HEAD.match(head) is not None


def is_lz4(path: str | Path) -> bool:
    """Whether the file starts with the LZ4 frame magic number (ranx's ``.lz4`` files)."""
    return magic(path) == LZ4_MAGIC


def shown(value: object, width: int = 60) -> str:
    """``repr(value)`` (numpy scalars as Python's) on one line (an object whose ``repr`` spans
    lines, a DataFrame's, has them joined by spaces), cut to ``width`` characters for
    messages."""
    if isinstance(value, np.generic):
        value = value.item()
    try:
        text = re.sub(r"\s*[\r\n]\s*", " ", str(repr(value)))
    except Exception:  # a user object whose __repr__ fails
        text = f"<{type(value).__name__}>"
    return text if len(text) <= width else text[: width - 1] + "…"


def _id(value: object, what: str, source: str, where: str) -> str:
    if isinstance(value, bool) or not isinstance(value, str | numbers.Integral):
        raise InputError(
            source, None, f"{where}{what} {shown(value)} is not a string or an integer"
        )
    text = str(value)
    if not text.strip():
        raise InputError(source, None, f"{where}empty {what}")
    return text


def first_unencodable(texts: Sequence[str]) -> int | None:
    """Index of the first string that is not valid Unicode (a lone surrogate, which no file
    format here can hold), or None."""
    try:
        "\0".join(texts).encode("utf-8")
    except UnicodeEncodeError:
        return next(i for i, t in enumerate(texts) if not _encodes(t))
    return None


def _encodes(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def is_number(value: object) -> bool:
    """A real number: ``int``, ``float``, numpy numbers, ``Decimal``, ``Fraction``; not a
    ``bool`` (numpy's either), text or a complex number."""
    return isinstance(value, numbers.Real | decimal.Decimal) and not isinstance(
        value, bool | np.bool_
    )


def _bad_value(value: object, kind: str) -> str | None:
    """Why ``value`` cannot be a run score / a relevance, or None."""
    label = "score" if kind == "run" else "relevance"
    if not is_number(value):
        return f"{label} {shown(value)} is not a number"
    try:
        number = float(value)  # type: ignore[arg-type]
    except OverflowError:
        number = math.inf
    except ValueError:  # Decimal("sNaN"), which no float holds
        number = math.nan
    if kind == "run":
        return None if math.isfinite(number) else f"score {shown(value)} is not a finite number"
    if not math.isfinite(number) or number != math.floor(number):
        return f"relevance {shown(value)} is not an integer"
    whole = int(value) if isinstance(value, numbers.Integral) else int(number)
    if not INT64_MIN <= whole <= INT64_MAX:
        return f"relevance {shown(value)} is outside the 64-bit integer range"
    return None


def _line_of(text: str | None, query: str, doc: str | None) -> int | None:
    """The line of ``query``'s key (then of ``doc``'s after it) in JSON ``text``, if found."""
    if text is None:
        return None
    at = text.find(json.dumps(query, ensure_ascii=False) + ":")
    if at < 0:
        at = text.find(json.dumps(query) + ":")
    if at < 0:
        return None
    if doc is not None:
        inner = text.find(json.dumps(doc, ensure_ascii=False), at)
        at = inner if inner >= 0 else at
    return text.count("\n", 0, at) + 1


def _columns(data: Mapping, kind: str, source: str) -> tuple[list, list, list, bool]:
    """Flatten the mapping: query ids, doc ids, values, and whether the values are ranks (a
    run of ranked lists). Ids are checked here, values by :func:`_check_values`."""
    queries: list[str] = []
    docs: list[object] = []
    values: list[object] = []
    ranked: bool | None = None
    for key, inner in data.items():
        query = _id(key, "query_id", source, "")
        is_list = isinstance(inner, list | tuple) and kind == "run"
        if not is_list and not isinstance(inner, Mapping):
            what = "a mapping {doc_id: score}" if kind == "run" else "a mapping {doc_id: relevance}"
            raise InputError(source, None, f"query {query!r}: expected {what}, not {shown(inner)}")
        if ranked is not None and ranked != is_list:
            raise InputError(source, None, f"query {query!r}: mixes ranked lists and scores")
        ranked = is_list
        n = len(inner)
        queries.extend([query] * n)
        if is_list:
            docs.extend(inner)
            values.extend(range(1, n + 1))
        else:
            docs.extend(inner.keys())
            values.extend(inner.values())
    _same_ids(data, source)
    return queries, docs, values, bool(ranked)


def _same_ids(data: Mapping, source: str) -> None:
    """Refuse two keys of ``data`` that are the same id once written as text (``1``, ``"1"``)."""
    texts = [str(k) for k in data]
    if len(set(texts)) == len(texts):
        return
    seen: dict[str, object] = {}
    for key, text in zip(data, texts, strict=True):
        if text in seen:
            raise InputError(
                source,
                None,
                f"query ids {shown(seen[text])} and {shown(key)} are both the id {text!r}; "
                "use one spelling",
            )
        seen[text] = key


def _first_bad(values: Sequence[object], kind: str) -> int | None:
    """Index of the first value that is not a finite score / an integer relevance, or None."""
    types = set(map(type, values))
    if kind == "qrels" and types <= {int}:
        return next((i for i, v in enumerate(values) if not INT64_MIN <= v <= INT64_MAX), None)  # type: ignore[operator]
    if kind == "run" and types <= {float, int, np.float64}:
        try:
            array = np.fromiter(values, dtype=np.float64, count=len(values))  # type: ignore[arg-type]
        except OverflowError:  # an integer beyond float64: found by the loop below
            pass
        else:
            bad = np.flatnonzero(~np.isfinite(array))
            return int(bad[0]) if len(bad) else None
    return next((i for i, v in enumerate(values) if _bad_value(v, kind) is not None), None)


def _doc_ids(queries: Sequence[str], docs: list[object], source: str, ranked: bool) -> list[str]:
    """The doc ids as strings (see :func:`_id`); plain strings are only checked for emptiness
    (the keys of one mapping are then distinct). Other keys of one query's mapping (not a
    ranked list) that are the same id once written as text (``1``, ``"1"``) are refused."""
    if set(map(type, docs)) <= {str}:
        empty = next((i for i, d in enumerate(docs) if not d.strip()), None)  # type: ignore[attr-defined]
        if empty is not None:
            raise InputError(source, None, f"query {queries[empty]!r}: empty doc_id")
        return docs  # type: ignore[return-value]
    texts = [_id(d, "doc_id", source, f"query {q!r}: ") for q, d in zip(queries, docs, strict=True)]
    if not ranked:
        _same_doc_ids(queries, docs, texts, source)
    return texts


def _same_doc_ids(
    queries: Sequence[str], docs: Sequence[object], texts: Sequence[str], source: str
) -> None:
    """Refuse two doc keys of one query's mapping that are the same id as text (``1``, ``"1"``).

    Raises:
        InputError: naming the query and both keys.
    """
    seen: dict[tuple[str, str], object] = {}
    for query, doc, text in zip(queries, docs, texts, strict=True):
        first = seen.setdefault((query, text), doc)
        if first is not doc:
            raise InputError(
                source,
                None,
                f"query {query!r}: doc ids {shown(first)} and {shown(doc)} are both the id "
                f"{text!r}; use one spelling",
            )


def _check_text(queries: list[str], docs: list[str], source: str) -> None:
    """Refuse a query or doc id that is not valid Unicode text (:func:`first_unencodable`)."""
    for what, ids in (("query_id", queries), ("doc_id", docs)):
        bad = first_unencodable(ids)
        if bad is not None:
            where = f"query {queries[bad]!r}: " if what == "doc_id" else ""
            raise InputError(
                source, None, f"{where}{what} {shown(ids[bad])} is not valid Unicode text"
            )


def _not_columns(data: Mapping, source: str, in_file: bool = False) -> None:
    """Refuse the columns of a table (``{"query_id": [...], "doc_id": [...], ...}``, what a
    DataFrame is built from, or ``DataFrame.to_dict()``'s ``{column: {row: value}}``): the keys
    name a query id column and a doc id column (the project's, PyTerrier's or ranx's names).
    Read as a run or qrels, its queries would be the column names.

    Raises:
        InputError: saying to give ``pd.DataFrame(it)`` (``in_file``: to write the table's rows,
            pandas' ``to_json(orient="records")``, or a CSV).
    """
    from analysis.io.tables import ID_ALIASES

    names = {str(k) for k in data}
    ids = {ID_ALIASES.get(n, n) for n in names}
    if {"query_id", "doc_id"} <= ids:
        raise InputError(
            source,
            None,
            "a mapping of columns, not {query_id: {doc_id: value}}: "
            + (
                "write its rows (to_json(orient='records')) or a CSV"
                if in_file
                else "give pd.DataFrame(it)"
            ),
        )


def frame_from_mapping(
    data: object, kind: str, source: str | Path, text: str | None = None
) -> pd.DataFrame:
    """A run (``query_id, doc_id, score`` [+ ``rank``]) or qrels (``query_id, doc_id,
    relevance``) from ``{query_id: {doc_id: value}}`` (see the module docstring).

    ``source`` names the input in errors; ``text`` is the JSON the mapping was parsed from (to
    name the line of a bad value).

    Raises:
        InputError: not a mapping of mappings, an id that is empty or not a string/integer, a
            score that is not a finite number, a relevance that is not an integer in int64.
    """
    import pandas as pd

    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, not {kind!r}")
    where = str(source)
    if not isinstance(data, Mapping):
        what = type(data).__name__
        raise InputError(
            where, None, f"expected a mapping {{query_id: {{doc_id: value}}}}, not {what}"
        )
    if not data:
        raise InputError(where, None, "holds no data (an empty mapping)")
    _not_columns(data, where, in_file=text is not None)
    queries, raw_docs, values, ranked = _columns(data, kind, where)
    if not queries:
        raise InputError(where, None, "holds no data (every query's mapping is empty)")
    docs = _doc_ids(queries, raw_docs, where, ranked)
    _check_text(queries, docs, where)
    bad = _first_bad(values, kind)
    if bad is not None:
        query, doc = queries[bad], docs[bad]
        why = _bad_value(values[bad], kind) or "is not a number"
        line = _line_of(text, query, doc)
        raise InputError(where, line, f"query {query!r}, doc {doc!r}: {why}")
    frame = pd.DataFrame({"query_id": pd.array(queries, dtype="str"),
                          "doc_id": pd.array(docs, dtype="str")})  # fmt: skip
    if kind == "qrels":
        frame["relevance"] = np.asarray([int(v) for v in values], dtype=np.int64)  # type: ignore[call-overload]
    elif ranked:
        ranks = np.asarray(values, dtype=np.int64)
        frame["score"] = -ranks.astype(np.float64)
        frame["rank"] = ranks
    else:
        frame["score"] = np.fromiter(values, dtype=np.float64, count=len(values))  # type: ignore[arg-type]
    return frame


def read_ranx_json(path: str | Path, kind: str) -> pd.DataFrame:
    """A ranx JSON file (``.json``, ``.json.gz``, any name) as a run or qrels frame.

    Raises:
        InputError: invalid JSON (with its line), nesting deeper than the limit, or a value
            the module rules refuse (with the line of its query when found).
    """
    p = check_file(path)
    text = read_text(p)
    data = parse_json(text, p, object_pairs_hook=_Object)
    if isinstance(data, Mapping) and not data:
        raise InputError(p, None, "the file holds no data (an empty JSON object)")
    _no_repeated_keys(data, p, text)
    return frame_from_mapping(data, kind, p, text)


class _Object(dict):
    """A JSON object that remembers the first key given twice in it (``None``: none)."""

    def __init__(self, pairs: list[tuple[str, object]]) -> None:
        super().__init__(pairs)
        self.repeated = None
        if len(self) != len(pairs):
            seen: set[str] = set()
            self.repeated = next(k for k, _ in pairs if k in seen or seen.add(k))  # type: ignore[func-returns-value]


def _no_repeated_keys(data: object, path: Path, text: str) -> None:
    """Refuse a key given twice in one object of a ranx JSON file (with its second line)."""
    if not isinstance(data, _Object):
        return
    if data.repeated is not None:
        line = _second_line(text, json.dumps(data.repeated) + ":", 0)
        raise InputError(path, line, f"query {data.repeated!r} is given twice")
    for query, inner in data.items():
        if isinstance(inner, _Object) and inner.repeated is not None:
            start = text.find(json.dumps(query) + ":")
            line = _second_line(text, json.dumps(inner.repeated) + ":", max(start, 0))
            raise InputError(path, line, f"query {query!r}: doc {inner.repeated!r} is given twice")


def _second_line(text: str, key: str, start: int) -> int | None:
    """The line of the second ``key`` after ``start`` in ``text`` (None when not found: the key
    was written with other escapes)."""
    first = text.find(key, start)
    second = text.find(key, first + 1) if first >= 0 else -1
    return text.count("\n", 0, second) + 1 if second >= 0 else None


def _lz4_modules() -> tuple[object, object] | None:
    try:
        import cbor2  # type: ignore[import-not-found]
        import lz4.frame  # type: ignore[import-not-found]
    except ImportError:
        return None
    return lz4.frame, cbor2


def _decompress(frame_module: object, data: bytes, path: Path) -> bytes:
    """One LZ4 frame decompressed under the input size cap."""
    cap = max_input_bytes()
    decompressor = frame_module.LZ4FrameDecompressor()  # type: ignore[attr-defined]
    try:
        out = decompressor.decompress(data, max_length=cap + 1)
    except RuntimeError as exc:
        raise InputError(path, None, f"cannot read the LZ4 data: {exc}") from None
    if len(out) > cap:
        why = f"larger than the input size limit of {cap} bytes when decompressed"
        raise InputError(path, None, why)
    if not decompressor.eof:
        raise InputError(path, None, "the LZ4 data is truncated (the file was cut short)")
    return out


def read_ranx_lz4(path: str | Path, kind: str) -> pd.DataFrame:
    """A ranx ``.lz4`` file (CBOR in two LZ4 frames) as a run or qrels frame.

    Raises:
        InputError: the lz4/cbor2 packages are missing (naming them), the data is corrupt or
            larger than the size cap once decompressed, or a value the module rules refuse.
    """
    p = check_file(path)
    modules = _lz4_modules()
    if modules is None:
        raise InputError(p, None, f"a ranx .lz4 file: reading it needs {_LZ4_PACKAGES}")
    frame_module, cbor2 = modules
    raw = source_path(p).read_bytes()
    inner = _decompress(frame_module, raw, p)
    payload = _decompress(frame_module, inner, p) if inner.startswith(LZ4_MAGIC) else inner
    try:
        data = cbor2.loads(payload)  # type: ignore[attr-defined]
    except RecursionError:
        raise InputError(p, None, "the CBOR data is nested too deeply") from None
    except Exception as exc:  # cbor2 raises its own error classes (CBORDecodeError, ValueError)
        raise InputError(p, None, f"cannot read the CBOR data: {exc}") from None
    return frame_from_mapping(data, kind, p)


def mapping_from_frame(frame: pd.DataFrame, value: str) -> dict[str, dict[str, float | int]]:
    """``{query_id: {doc_id: value}}`` of a run or qrels frame, in row order; a pair listed twice
    keeps its largest value (a run's best-ranked occurrence, the qrels' maximum relevance, as
    the metric core collapses them)."""
    out: dict[str, dict[str, float | int]] = {}
    queries: Iterable[str] = frame["query_id"].astype("str").tolist()
    docs: Iterable[str] = frame["doc_id"].astype("str").tolist()
    for query, doc, v in zip(queries, docs, frame[value].tolist(), strict=True):
        inner = out.setdefault(query, {})
        inner[doc] = max(inner[doc], v) if doc in inner else v
    return out
