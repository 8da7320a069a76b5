"""GeoGLUE-style JSON / JSONL records whose ``gis`` list ends in ``"lon,lat"``."""

from __future__ import annotations

import json
import re
from typing import Any

import numpy as np
import pandas as pd

from analysis.core.errors import InputError
from analysis.io._text import check_json_depth
from analysis.io.spatial._source import (
    GOLD_COLS,
    JSON_TEXT_KEYS,
    POI_ID_COLS,
    QUERY_ID_COLS,
    PathLike,
    _check_latlon,
    _empty_qrels,
    _first,
    _ids,
    _numbers,
    _pick,
    _poi_frame,
    _query_frame,
    _read_text,
    _Source,
    _split_gold,
)


def _json_records(src: _Source) -> list[Any]:
    """Records of a JSON array, a JSONL file, or a JSON object wrapping one list of records.

    Sets ``src.row_lines`` to each record's starting line (unknown -> 0 for wrapped lists).
    """
    text = src.text
    check_json_depth(text, src.path)  # one line instead of a RecursionError
    stripped = text.lstrip()
    decoder = json.JSONDecoder()
    if stripped.startswith("["):
        pos = len(text) - len(stripped) + 1
        records: list[Any] = []
        starts: list[int] = []
        ws = re.compile(r"[\s,]*")
        seen, line = 0, 1  # newlines are counted incrementally (linear in the file size)
        while True:
            pos += len(ws.match(text, pos).group())  # type: ignore[union-attr]
            if pos >= len(text):
                raise InputError(src.path, text.count("\n") + 1, "invalid JSON: missing ']'")
            if text[pos] == "]":
                break
            try:
                obj, end = decoder.raw_decode(text, pos)
            except json.JSONDecodeError as exc:
                raise InputError(src.path, exc.lineno, f"invalid JSON: {exc.msg}") from None
            records.append(obj)
            line += text.count("\n", seen, pos)
            seen = pos
            starts.append(line)
            pos = end
        src.row_lines = np.asarray(starts, dtype=np.int64)
        return records
    lines = text.split("\n")
    records, starts = [], []
    for i, raw_line in enumerate(lines, start=1):
        if not raw_line.strip():
            continue
        try:
            records.append(json.loads(raw_line))
        except json.JSONDecodeError as exc:
            if not records:
                wrapped = _json_wrapped(src)
                if wrapped is not None:
                    return wrapped
            raise InputError(src.path, i, f"invalid JSON: {exc.msg}") from None
        starts.append(i)
    if len(records) == 1 and isinstance(records[0], dict) and "gis" not in records[0]:
        wrapped = _json_wrapped(src)  # an object wrapping the records, written on one line
        if wrapped is not None:
            return wrapped
    src.row_lines = np.asarray(starts, dtype=np.int64)
    return records


def _json_wrapped(src: _Source) -> list[Any] | None:
    try:
        doc = json.loads(src.text)
    except json.JSONDecodeError:
        return None
    if not isinstance(doc, dict):
        return None
    lists = [v for v in doc.values() if isinstance(v, list) and v and isinstance(v[0], dict)]
    if len(lists) != 1:
        return None
    src.row_lines = np.zeros(len(lists[0]), dtype=np.int64)
    return lists[0]


def _geoglue(src: _Source, kind: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    records = _json_records(src)
    if not records:
        raise InputError(src.path, None, "the file holds no record (empty, or an empty list)")
    id_keys = POI_ID_COLS if kind == "poi" else QUERY_ID_COLS
    what = "POI id" if kind == "poi" else "query id"
    rows: list[dict[str, Any]] = []
    gis_last: list[Any] = []
    for i, rec in enumerate(records):
        if not isinstance(rec, dict):
            raise src.fail(i, f"expected a JSON object, got {type(rec).__name__}")
        gis = rec.get("gis")
        if not isinstance(gis, list) or not gis:
            raise src.fail(i, 'missing "gis" list (its last element is "lon,lat")')
        gis_last.append(gis[-1])
        rows.append({k: v for k, v in rec.items() if k != "gis"})
    table = pd.DataFrame(rows) if rows else pd.DataFrame({"gis": []}).drop(columns="gis")
    last = pd.Series(gis_last, dtype=object)
    is_str = last.map(type).eq(str).to_numpy(dtype=bool)
    bad = _first(~is_str)
    if bad is not None:
        raise src.fail(
            bad, f'last element of "gis" must be the string "lon,lat", got {last.iloc[bad]!r}'
        )
    pair = last.astype("str").str.split(",")
    bad = _first((pair.str.len() != 2).to_numpy(dtype=bool))
    if bad is not None:
        raise src.fail(bad, f'last element of "gis" must be "lon,lat", got {last.iloc[bad]!r}')
    lon = _numbers(src, pair.str[0], "longitude")
    lat = _numbers(src, pair.str[1], "latitude")
    _check_latlon(src, lat, lon)

    id_col = _pick(list(table.columns), id_keys)
    if id_col is None:
        ids = pd.Series(np.arange(len(table)).astype(str), dtype="str")
    else:
        raw = table[id_col].map(_cell_str)
        ids = _ids(src, raw, what, unique=True)
    text_col = _pick(list(table.columns), JSON_TEXT_KEYS)
    if text_col is None:
        raise InputError(src.path, None, f"records have no text field (one of {JSON_TEXT_KEYS})")
    text = table[text_col].map(_cell_str)
    gold_col = _pick(list(table.columns), GOLD_COLS) if kind == "query" else None
    drop = [c for c in (id_col, text_col, gold_col) if c is not None]
    scalar = [
        c
        for c in table.columns
        if c not in drop and table[c].map(lambda v: isinstance(v, str | int | float | bool)).all()
    ]
    extra = table[scalar].astype("str") if scalar else None
    if kind == "poi":
        name_col = _pick(list(table.columns), ("name",))
        name = None if name_col is None else table[name_col].astype("str")
        return _poi_frame(ids, text, name, lat, lon, extra), _empty_qrels()
    queries = _query_frame(ids, text, lat, lon, extra)
    if gold_col is None:
        return queries, _empty_qrels()
    gold = table[gold_col].map(
        lambda v: " ".join(map(str, v)) if isinstance(v, list) else _cell_str(v)
    )
    return queries, _split_gold(src, ids, gold)


def _cell_str(value: Any) -> str:
    """A JSON value as text; a missing key (None or the NaN pandas fills in) becomes ''."""
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return ""
    return str(value)


def load_geoglue_pois(path: PathLike) -> pd.DataFrame:
    """Load GeoGLUE-style POI records (JSON array or JSONL) whose ``gis[-1]`` is ``"lon,lat"``.

    Returns ``doc_id, name, text, type, lat, lon`` + the records' other scalar fields. Ids come
    from ``poi_id``/``doc_id``/``id`` or, when no record has one, the 0-based record number.
    """
    return _geoglue(_read_text(path), "poi")[0]


def load_geoglue_queries(path: PathLike) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Load GeoGLUE-style query records; returns ``(queries, qrels)``.

    Gold POIs are read from ``gold_poi_ids``/``gold_doc_ids``/``gold_ids``/``gold``/
    ``answer_ids`` (one id or a list); qrels is empty when records carry none.
    """
    return _geoglue(_read_text(path), "query")
