"""LIST files: ``poi.csv`` / ``query.csv`` (``id,coor,text``) and ``qrels.csv``."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
import pandas as pd

from analysis.io.spatial._source import (
    CrsLike,
    PathLike,
    _first,
    _ids,
    _numbers,
    _pick,
    _poi_frame,
    _project,
    _qrels_frame,
    _query_frame,
    _read_csv,
    _read_text,
    _require,
    _Source,
)


def _list_coor(src: _Source, df: pd.DataFrame) -> tuple[npt.NDArray[np.float64], ...]:
    col = _require(src, df, ("coor",), 'LIST files have id,coor,text with coor = "[x, y]"')
    coor = df[col].astype("str").str.strip().str.strip("[]() ")
    parts = coor.str.split(",")
    bad = _first((parts.str.len() != 2).to_numpy(dtype=bool))
    if bad is not None:
        raise src.fail(bad, f'coor must look like "[x, y]", got {df[col].iloc[bad]!r}')
    x = _numbers(src, parts.str[0], "x coordinate")
    y = _numbers(src, parts.str[1], "y coordinate")
    return x, y


def _list_table(
    src: _Source,
    crs: CrsLike | None,
    always_xy: bool,
    file: str,
    id_names: tuple[str, ...],
    what: str,
) -> tuple[pd.Series, pd.Series, npt.NDArray[np.float64], npt.NDArray[np.float64], pd.DataFrame]:
    """The rows of a LIST ``id,coor,text`` file: unique ids (``what`` names them in errors), the
    text column, WGS84 ``lat``/``lon`` and the other columns plus the projected ``x``, ``y``."""
    df = _read_csv(src)
    id_col = _require(src, df, id_names, f"LIST {file} has id,coor,text")
    text_col = _require(src, df, ("text",), f"LIST {file} has id,coor,text")
    ids = _ids(src, df[id_col], what, unique=True)
    x, y = _list_coor(src, df)
    lat, lon = _project(src, x, y, crs, always_xy)
    extra = df.drop(columns=[id_col, text_col, _pick(df.columns, ("coor",))])
    return ids, df[text_col], lat, lon, extra.assign(x=x, y=y)


def _list_pois(src: _Source, crs: CrsLike | None, always_xy: bool) -> pd.DataFrame:
    ids, text, lat, lon, extra = _list_table(
        src, crs, always_xy, "poi.csv", ("id", "poi_id", "doc_id"), "POI id"
    )
    return _poi_frame(ids, text, None, lat, lon, extra)


def load_list_pois(path: PathLike, crs: CrsLike, *, always_xy: bool = True) -> pd.DataFrame:
    """Load a LIST ``poi.csv`` (``id,coor,text``, ``coor = "[x, y]"``) as a POI table.

    ``crs`` is the one projected CRS of the whole dataset (e.g. ``"EPSG:32650"``); ``x`` is the
    easting unless ``always_xy=False`` (then the CRS's authority axis order). Returns
    ``doc_id, name, text, type, lat, lon, x, y`` (+ other columns); ``name`` repeats ``text``.
    """
    return _list_pois(_read_text(path), crs, always_xy)


def _list_queries(src: _Source, crs: CrsLike | None, always_xy: bool) -> pd.DataFrame:
    ids, text, lat, lon, extra = _list_table(
        src, crs, always_xy, "query.csv", ("id", "query_id", "qid"), "query id"
    )
    return _query_frame(ids, text, lat, lon, extra)


def load_list_queries(path: PathLike, crs: CrsLike, *, always_xy: bool = True) -> pd.DataFrame:
    """Load a LIST ``query.csv`` (``id,coor,text``) as ``query_id, text, lat, lon, x, y``.

    Same CRS and axis rules as :func:`load_list_pois`.
    """
    return _list_queries(_read_text(path), crs, always_xy)


def load_list_qrels(path: PathLike) -> pd.DataFrame:
    """Load a LIST ``qrels.csv`` (``query_id,poi_id``) as ``query_id, doc_id, relevance``.

    Every row is a gold POI (``relevance = 1``). Duplicate rows are kept as they are in the
    file (LIST's Beijing/Shanghai test qrels repeat gold ids in 1-2 % of queries); the metric
    core warns about them and collapses them.
    """
    src = _read_text(path)
    df = _read_csv(src)
    q_col = _require(src, df, ("query_id", "qid"), "LIST qrels.csv has query_id,poi_id")
    d_col = _require(src, df, ("poi_id", "doc_id"), "LIST qrels.csv has query_id,poi_id")
    qids = _ids(src, df[q_col], "query id", unique=False)
    dids = _ids(src, df[d_col], "POI id", unique=False)
    return _qrels_frame(qids, dids)
