"""Plain CSVs with WGS84 ``lat``/``lon`` columns (POIs and queries with gold ids)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pandas as pd

from analysis.core.errors import InputError
from analysis.io.spatial._source import (
    GOLD_COLS,
    LAT_COLS,
    LON_COLS,
    POI_ID_COLS,
    QUERY_ID_COLS,
    PathLike,
    _check_latlon,
    _empty_qrels,
    _ids,
    _numbers,
    _pick,
    _poi_frame,
    _query_frame,
    _read_csv,
    _read_text,
    _require,
    _Source,
    _split_gold,
)


def _latlon_common(
    src: _Source, id_cols: Sequence[str], what: str, table: pd.DataFrame | None = None
) -> tuple[pd.DataFrame, str, pd.Series, npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    df = _read_csv(src) if table is None else table
    lat_col = _require(src, df, LAT_COLS, "a lat/lon CSV needs lat and lon columns")
    lon_col = _require(src, df, LON_COLS, "a lat/lon CSV needs lat and lon columns")
    id_col = _require(src, df, id_cols, f"the {what} column")
    lat = _numbers(src, df[lat_col], "latitude")
    lon = _numbers(src, df[lon_col], "longitude")
    _check_latlon(src, lat, lon)
    ids = _ids(src, df[id_col], what, unique=True)
    return df.drop(columns=[lat_col, lon_col, id_col]), id_col, ids, lat, lon


def _latlon_pois(src: _Source, table: pd.DataFrame | None = None) -> pd.DataFrame:
    df, _, ids, lat, lon = _latlon_common(src, POI_ID_COLS, "POI id", table)
    text_col = _pick(list(df.columns), ("text",))
    name_col = _pick(list(df.columns), ("name",))
    if text_col is None and name_col is None:
        raise InputError(src.path, 1, "missing column text (or name)")
    text = df[text_col if text_col is not None else name_col]
    name = df[name_col] if name_col is not None else None
    extra = df.drop(columns=[c for c in (text_col, name_col) if c is not None])
    return _poi_frame(ids, text, name, lat, lon, extra)


def load_table_pois(path: PathLike) -> pd.DataFrame:
    """Load a POI table in Parquet or JSON Lines (an entities table as the importers write it:
    ``doc_id, name, text, type, lat, lon, ...``); the same columns and checks as
    :func:`load_latlon_pois`, errors name the record (Parquet has no lines)."""
    from analysis.io import tables

    table = tables.read_table(path)
    src = _Source(Path(path), "", row_lines=np.zeros(len(table), dtype=np.int64))
    if "type" in table.columns:
        table = table.assign(type=table["type"].astype("str"))
    return _latlon_pois(src, table.reset_index(drop=True))


def load_latlon_pois(path: PathLike) -> pd.DataFrame:
    """Load a POI CSV with ``lat,lon`` (WGS84 degrees) and an id column
    (``doc_id``/``poi_id``/``id``); ``text`` and/or ``name`` required, other columns kept as
    strings. Returns ``doc_id, name, text, type, lat, lon, ...``."""
    return _latlon_pois(_read_text(path))


def _latlon_queries(src: _Source) -> tuple[pd.DataFrame, pd.DataFrame]:
    df, _, ids, lat, lon = _latlon_common(src, QUERY_ID_COLS, "query id")
    text_col = _pick(list(df.columns), ("text", "query"))
    if text_col is None:
        raise InputError(src.path, 1, "missing column text (or query)")
    gold_col = _pick(list(df.columns), GOLD_COLS)
    extra = df.drop(columns=[c for c in (text_col, gold_col) if c is not None])
    queries = _query_frame(ids, df[text_col], lat, lon, extra)
    if gold_col is None:
        return queries, _empty_qrels()
    return queries, _split_gold(src, ids, df[gold_col])


def load_latlon_queries(path: PathLike) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Load a query CSV with ``lat,lon``, an id column (``query_id``/``qid``/``id``) and
    ``text``; returns ``(queries, qrels)``, qrels from a gold column (``gold_poi_ids``, ...)
    or empty. The gold column is not kept in ``queries``."""
    return _latlon_queries(_read_text(path))


def gold_qrels(table: pd.DataFrame, path: PathLike) -> pd.DataFrame | None:
    """qrels from a query table's gold column (``gold_poi_ids``/``gold_doc_ids``/``gold_ids``/
    ``gold``/``answer_ids``: one id or a list per query), or None when it has none.

    Raises:
        InputError: an empty query id; a gold column naming no POI at all (qrels judging
            nothing, as a qrels table of no row).
    """
    gold_col = _pick(list(table.columns), GOLD_COLS)
    if gold_col is None or "query_id" not in table.columns:
        return None
    src = _Source(Path(path), "", row_lines=np.arange(2, len(table) + 2, dtype=np.int64))
    ids = _ids(src, table["query_id"], "query id", unique=False)
    qrels = _split_gold(src, ids, table[gold_col].reset_index(drop=True))
    if qrels.empty:
        raise InputError(path, None, f"the {gold_col} column names no gold id (every cell empty)")
    return qrels
