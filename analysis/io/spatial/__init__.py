"""Loaders for spatio-textual POI retrieval data (LIST, GeoGLUE, GeoBloom, plain lat/lon CSV).

Every loader returns tables in the project's vocabulary, with string ids and WGS84 degrees:

* POIs: ``doc_id, name, text, type, lat, lon`` + the file's other columns (``type`` is ``"poi"``
  unless the file has one; projected inputs keep their raw coordinates as ``x, y``);
* queries: ``query_id, text, lat, lon`` + other columns;
* qrels: ``query_id, doc_id, relevance`` (``relevance = 1`` for every listed gold; duplicate rows
  are kept -- the metric core warns about them and collapses them).

Formats:

* **LIST** ``poi.csv`` / ``query.csv``: ``id,coor,text`` with ``coor = "[x, y]"`` in a projected
  CRS (UTM), and ``qrels.csv``: ``query_id,poi_id``. The caller gives ONE CRS for the dataset
  (see :mod:`analysis.geo` for why not one UTM zone per point); ``x`` is the easting.
* **GeoGLUE** JSON (an array of records) or JSONL (one record per line): each record has a
  ``gis`` list whose last element is the string ``"lon,lat"`` (longitude first), an id
  (``poi_id``/``doc_id``/``id``, queries ``query_id``/``qid``/``id``; the 0-based record number
  when no record has one) and a text (``text``/``query``/``sentence``/``name``/``address``).
  Query records may list gold POIs under ``gold_poi_ids``/``gold_doc_ids``/``gold``/``answer_ids``.
* **GeoBloom** text files ``text<TAB>X<TAB>Y[<TAB>gold]``: X, Y in a projected CRS given by the
  caller, read in the CRS's *authority* axis order by default (``always_xy=False``). For the
  GeoGLUE-clean subset the CRS is EPSG:2385 (Xian 1980 / 3-degree Gauss-Kruger CM 120E) whose
  authority order is (northing, easting) -- exactly GeoBloom's (X, Y) -- so
  ``crs="EPSG:2385"`` with the default is right; pass ``always_xy=True`` for files whose X is
  the easting. POI ids are the 0-based row numbers (``"0"``, ``"1"``, ...), so a blank line
  inside a POI file is an error (it would shift every id after it). In query files the 4th
  column is the gold POI row, turned into qrels; query ids are ``<id_prefix><row>`` with the
  prefix defaulting to the file stem plus ``-`` (``test.txt`` -> ``test-0``, ``test-1``, ...),
  which keeps train/dev/test ids apart. ``name`` is the text up to its first comma (GeoGLUE-clean
  texts are ``name,category,...,address,district``).
* **lat/lon CSV**: columns ``lat``/``latitude`` and ``lon``/``lng``/``longitude``, an id column
  (POIs ``doc_id``/``poi_id``/``id``, queries ``query_id``/``qid``/``id``) and ``text`` and/or
  ``name``; other columns are kept. A query CSV may carry gold ids in ``gold_poi_ids``/
  ``gold_doc_ids``/``gold_ids``/``gold`` (one id or a list separated by ``,;|`` or spaces,
  brackets and quotes allowed), turned into qrels.

Common rules: gzip files are decompressed (under the input limits of :mod:`analysis.io._text`);
a UTF-8 BOM and CRLF line endings are fine; files are only read. Bad input raises
:class:`analysis.core.errors.InputError` naming the file and, where there is one, the line:
non-numeric or missing coordinates, latitude outside [-90, 90] or longitude outside [-180, 180]
(after conversion, for projected input), a missing column, an empty or duplicate POI id,
malformed JSON or CSV.
"""

from __future__ import annotations

import csv
from pathlib import Path

import pandas as pd

from analysis.core.errors import InputError
from analysis.io.spatial._source import (
    LAT_COLS,
    LON_COLS,
    CrsLike,
    PathLike,
    _base_name,
    _empty_qrels,
    _read_text,
    _Source,
)
from analysis.io.spatial.geobloom import (
    _geobloom_pois,
    _geobloom_queries,
    load_geobloom_pois,
    load_geobloom_qrels,
    load_geobloom_queries,
)
from analysis.io.spatial.geoglue import _geoglue, load_geoglue_pois, load_geoglue_queries
from analysis.io.spatial.latlon import (
    _latlon_pois,
    _latlon_queries,
    gold_qrels,
    load_latlon_pois,
    load_latlon_queries,
    load_table_pois,
)
from analysis.io.spatial.list_csv import (
    _list_pois,
    _list_queries,
    load_list_pois,
    load_list_qrels,
    load_list_queries,
)

__all__ = [
    "detect_spatial_format",
    "gold_qrels",
    "load_geobloom_pois",
    "load_geobloom_qrels",
    "load_geobloom_queries",
    "load_geoglue_pois",
    "load_geoglue_queries",
    "load_latlon_pois",
    "load_latlon_queries",
    "load_list_pois",
    "load_list_qrels",
    "load_list_queries",
    "load_pois",
    "load_queries",
    "load_table_pois",
]

FORMATS = ("list", "geoglue", "geobloom", "latlon")


def _detect(src: _Source) -> str:
    name = _base_name(src.path)
    if name.endswith((".json", ".jsonl", ".ndjson")):
        return "geoglue"
    first = next((ln for ln in src.text.split("\n") if ln.strip()), "").strip()
    if first.startswith(("{", "[")):
        return "geoglue"
    fields = first.split("\t")
    if len(fields) in (3, 4) and not name.endswith(".csv"):
        nums = pd.to_numeric(pd.Series(fields[1:3]), errors="coerce")
        if nums.notna().all():
            return "geobloom"
    header = {h.strip().lower() for h in next(csv.reader([first]), [])}
    if "coor" in header:
        return "list"
    if header & set(LAT_COLS) and header & set(LON_COLS):
        return "latlon"
    if header & set(LAT_COLS) or header & set(LON_COLS):
        missing = " or ".join(LON_COLS if header & set(LAT_COLS) else LAT_COLS)
        raise InputError(
            src.path,
            1,
            f"unrecognised spatial format: missing column {missing} "
            "(a lat/lon CSV needs both a latitude and a longitude column)",
        )
    raise InputError(
        src.path,
        1,
        "unrecognised spatial format: expected LIST id,coor,text, a lat,lon CSV, "
        "GeoGLUE JSON/JSONL with gis, or GeoBloom text<TAB>X<TAB>Y",
    )


def detect_spatial_format(path: PathLike) -> str:
    """Which spatial format a file is: ``"list"``, ``"geoglue"``, ``"geobloom"`` or ``"latlon"``.

    By extension (``.json``/``.jsonl`` -> GeoGLUE; ``.gz`` stripped first) and content: a first
    line starting with ``{``/``[`` is JSON, 3-4 tab-separated fields with numbers in the 2nd and
    3rd are GeoBloom, a CSV header with ``coor`` is LIST, one with lat and lon is plain lat/lon.
    """
    return _detect(_read_text(path))


def is_table(path: PathLike) -> bool:
    """A Parquet file (by name or magic bytes) or a ``.jsonl`` table with a ``doc_id`` column."""
    p = Path(path)
    name = _base_name(p)
    if name.endswith(".parquet"):
        return True
    try:
        with p.open("rb") as fh:
            if fh.read(4) == b"PAR1":
                return True
    except OSError:
        return False
    return False


def load_pois(
    path: PathLike, crs: CrsLike | None = None, *, always_xy: bool | None = None
) -> pd.DataFrame:
    """Load POIs from any supported spatial format (see :func:`detect_spatial_format`).

    ``crs`` is required for projected formats (LIST, GeoBloom) and ignored otherwise;
    ``always_xy`` defaults to each format's convention (LIST: x = easting; GeoBloom: the CRS's
    authority order). Returns ``doc_id, name, text, type, lat, lon`` (+ other columns) with
    unique string ids and validated WGS84 coordinates.
    """
    if is_table(path):
        return load_table_pois(path)
    src = _read_text(path)
    fmt = _detect(src)
    if fmt == "list":
        return _list_pois(src, crs, True if always_xy is None else always_xy)
    if fmt == "geobloom":
        return _geobloom_pois(src, crs, False if always_xy is None else always_xy)
    if fmt == "geoglue":
        return _geoglue(src, "poi")[0]
    return _latlon_pois(src)


def load_queries(
    path: PathLike,
    crs: CrsLike | None = None,
    *,
    always_xy: bool | None = None,
    id_prefix: str | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Load spatial queries from any supported format; returns ``(queries, qrels)``.

    qrels come from the file when it carries gold (GeoBloom 4th column, a lat/lon CSV gold
    column, GeoGLUE gold fields) and are empty otherwise (LIST keeps them in ``qrels.csv``: see
    :func:`load_list_qrels`). ``id_prefix`` applies to GeoBloom files only.
    """
    src = _read_text(path)
    fmt = _detect(src)
    if fmt == "list":
        queries = _list_queries(src, crs, True if always_xy is None else always_xy)
        return queries, _empty_qrels()
    if fmt == "geobloom":
        return _geobloom_queries(src, crs, False if always_xy is None else always_xy, id_prefix)
    if fmt == "geoglue":
        return _geoglue(src, "query")
    return _latlon_queries(src)
