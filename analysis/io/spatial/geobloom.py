"""GeoBloom text files ``text<TAB>X<TAB>Y[<TAB>gold_row]`` in a projected CRS."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from analysis.core.errors import InputError
from analysis.io.spatial._source import (
    CrsLike,
    PathLike,
    _base_name,
    _empty_qrels,
    _first,
    _numbers,
    _poi_frame,
    _project,
    _qrels_frame,
    _query_frame,
    _read_text,
    _Source,
    _text_lines,
)


def _geobloom_fields(src: _Source, allowed: tuple[int, ...]) -> pd.DataFrame:
    lines = _text_lines(src)
    blank = _first((lines.str.strip() == "").to_numpy(dtype=bool))
    if blank is not None:
        raise src.fail(blank, "blank line: GeoBloom ids are row numbers, so no row may be empty")
    parts = lines.str.split("\t")
    n = parts.str.len().to_numpy(dtype=np.int64)
    # one width for the whole file: the allowed one most lines have (the first line's on a
    # tie), so that the line named is the odd one out, not the line after an odd first line
    counts = [(int((n == w).sum()), w == (n[0] if len(n) else None), w) for w in allowed]
    best = max(counts)
    want = (best[2],) if best[0] else allowed
    bad = _first(~np.isin(n, want))
    if bad is not None:
        shape = " or ".join(str(a) for a in want)
        raise src.fail(
            bad, f"expected {shape} tab-separated fields (text, X, Y[, gold]), got {n[bad]}"
        )
    width = want[0]
    cols = ["text", "x", "y", "gold"][:width]
    if len(lines) == 0:
        return pd.DataFrame({c: pd.Series([], dtype="str") for c in cols})
    return pd.DataFrame(parts.tolist(), columns=cols, dtype="str")


def _geobloom_pois(src: _Source, crs: CrsLike | None, always_xy: bool) -> pd.DataFrame:
    df = _geobloom_fields(src, (3,))
    x = _numbers(src, df["x"], "X coordinate")
    y = _numbers(src, df["y"], "Y coordinate")
    lat, lon = _project(src, x, y, crs, always_xy)
    ids = pd.Series(np.arange(len(df)).astype(str), dtype="str")
    name = df["text"].str.split(",", n=1).str[0]
    return _poi_frame(ids, df["text"], name, lat, lon, pd.DataFrame({"x": x, "y": y}))


def load_geobloom_pois(path: PathLike, crs: CrsLike, *, always_xy: bool = False) -> pd.DataFrame:
    """Load a GeoBloom ``poi.txt`` (``text<TAB>X<TAB>Y``) as a POI table.

    POI ids are the 0-based row numbers as strings. ``(X, Y)`` are read in ``crs``'s authority
    axis order (``always_xy=False``; EPSG:2385: northing, easting, as in GeoGLUE-clean) or as
    (easting, northing) with ``always_xy=True``. Returns ``doc_id, name, text, type, lat, lon,
    x, y`` with ``name`` = text up to the first comma.
    """
    return _geobloom_pois(_read_text(path), crs, always_xy)


def _geobloom_queries(
    src: _Source, crs: CrsLike | None, always_xy: bool, id_prefix: str | None
) -> tuple[pd.DataFrame, pd.DataFrame]:
    df = _geobloom_fields(src, (3, 4))
    x = _numbers(src, df["x"], "X coordinate")
    y = _numbers(src, df["y"], "Y coordinate")
    lat, lon = _project(src, x, y, crs, always_xy)
    if id_prefix is None:
        id_prefix = Path(_base_name(src.path)).stem + "-"
    ids = pd.Series(id_prefix + pd.Series(np.arange(len(df)).astype(str)), dtype="str")
    queries = _query_frame(ids, df["text"], lat, lon, pd.DataFrame({"x": x, "y": y}))
    if "gold" not in df.columns:
        return queries, _empty_qrels()
    return queries, _gold_rows(src, ids, df["gold"])


def _gold_rows(src: _Source, ids: pd.Series, column: pd.Series) -> pd.DataFrame:
    gold = column.str.strip()
    row = pd.to_numeric(gold, errors="coerce").to_numpy(dtype=np.float64, na_value=np.nan)
    bad = _first(~((row >= 0) & (np.floor(row) == row)))
    if bad is not None:
        raise src.fail(bad, f"gold must be a POI row number (integer >= 0), got {gold.iloc[bad]!r}")
    gold_ids = pd.Series(row.astype(np.int64).astype(str), dtype="str")
    return _qrels_frame(ids, gold_ids)


def load_geobloom_queries(
    path: PathLike,
    crs: CrsLike,
    *,
    always_xy: bool = False,
    id_prefix: str | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Load a GeoBloom query file (``text<TAB>X<TAB>Y[<TAB>gold_row]``); returns
    ``(queries, qrels)``.

    Query ids are ``id_prefix + row`` (0-based), the prefix defaulting to the file stem and a
    dash (``test.txt`` -> ``test-0``). The gold column is the 0-based row of the gold POI in the
    matching ``poi.txt``, i.e. its ``doc_id``; without a 4th column qrels is empty. Axis order
    as in :func:`load_geobloom_pois`.
    """
    return _geobloom_queries(_read_text(path), crs, always_xy, id_prefix)


def load_geobloom_qrels(path: PathLike, *, id_prefix: str | None = None) -> pd.DataFrame:
    """The qrels of a GeoBloom query file (4th column = gold POI row), without converting the
    coordinates (no CRS needed): ``query_id, doc_id, relevance`` with the query ids of
    :func:`load_geobloom_queries`."""
    src = _read_text(path)
    df = _geobloom_fields(src, (3, 4))
    if id_prefix is None:
        id_prefix = Path(_base_name(src.path)).stem + "-"
    ids = pd.Series(id_prefix + pd.Series(np.arange(len(df)).astype(str)), dtype="str")
    if "gold" not in df.columns:
        raise InputError(src.path, 1, "no 4th column: this GeoBloom file holds no gold POIs")
    return _gold_rows(src, ids, df["gold"])
