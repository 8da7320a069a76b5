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
import io
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd
from pyproj import CRS

from analysis.core.errors import InputError
from analysis.geo import to_wgs84
from analysis.io._text import check_file, check_json_depth, is_gzip, read_bytes

__all__ = [
    "detect_spatial_format",
    "load_geobloom_pois",
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
]

PathLike = str | Path
CrsLike = str | int | CRS

POI_ID_COLS = ("doc_id", "poi_id", "id")
QUERY_ID_COLS = ("query_id", "qid", "id")
LAT_COLS = ("lat", "latitude")
LON_COLS = ("lon", "lng", "longitude")
GOLD_COLS = ("gold_poi_ids", "gold_doc_ids", "gold_ids", "gold", "answer_ids")
JSON_TEXT_KEYS = ("text", "query", "sentence", "name", "address")
FORMATS = ("list", "geoglue", "geobloom", "latlon")


# --------------------------------------------------------------------------------------------
# reading and line bookkeeping
# --------------------------------------------------------------------------------------------


@dataclass
class _Source:
    """A file's decoded text plus the 1-based line on which each data row starts."""

    path: Path
    text: str
    row_lines: npt.NDArray[np.int64] | None = None  # set for line-based formats
    _csv_lines: npt.NDArray[np.int64] | None = field(default=None, repr=False)

    def line(self, row: int) -> int | None:
        """1-based line of data row ``row`` (0-based); for CSV the header is not a row."""
        if self.row_lines is not None:
            if 0 <= row < len(self.row_lines) and self.row_lines[row] > 0:
                return int(self.row_lines[row])
            return None  # 0 marks "line unknown" (records wrapped in a JSON object)
        if self._csv_lines is None:
            self._csv_lines = _csv_record_lines(self.text)
        idx = row + 1  # skip the header record
        return int(self._csv_lines[idx]) if idx < len(self._csv_lines) else None

    def fail(self, row: int | None, message: str) -> InputError:
        """InputError at data row ``row``: its line, or ``record <row>`` when no line is known."""
        line = None if row is None else self.line(row)
        if row is not None and line is None:
            message = f"record {row}: {message}"
        return InputError(self.path, line, message)


def _csv_record_lines(text: str) -> npt.NDArray[np.int64]:
    """Start line of every non-blank CSV record (only computed when reporting an error)."""
    reader = csv.reader(io.StringIO(text, newline=""))
    starts: list[int] = []
    prev_end = 0
    for record in reader:
        if record:
            starts.append(prev_end + 1)
        prev_end = reader.line_num
    return np.asarray(starts, dtype=np.int64)


def _base_name(path: Path) -> str:
    name = path.name.lower()
    return name[:-3] if name.endswith(".gz") else name


def _read_text(path: PathLike) -> _Source:
    """Read a whole file as text (gzip by its magic bytes, bounded by the input limits of
    :mod:`analysis.io._text`, pipes as streams), UTF-8 with optional BOM."""
    p = Path(path)
    if not p.exists():
        raise InputError(p, None, "file not found")
    if p.is_dir():
        raise InputError(p, None, "is a folder, expected a file")
    if p.name.lower().endswith(".gz") and not is_gzip(check_file(p)):
        raise InputError(p, None, "cannot read file (named .gz but not gzip data)")
    raw = read_bytes(p)
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise InputError(p, line, "not UTF-8 text") from None
    return _Source(p, text)


def _read_csv(src: _Source) -> pd.DataFrame:
    """CSV with every cell a string (ids keep leading zeros); blank lines skipped."""
    try:
        df = pd.read_csv(
            io.StringIO(src.text, newline=""),
            dtype=str,
            keep_default_na=False,
            skip_blank_lines=True,
        )
    except pd.errors.EmptyDataError:
        raise InputError(src.path, 1, "empty file, expected a header line") from None
    except pd.errors.ParserError as exc:
        m = re.search(r"line (\d+)", str(exc))
        line = int(m.group(1)) if m else None
        detail = str(exc).split("C error: ")[-1].strip()
        raise InputError(src.path, line, f"malformed CSV: {detail}") from None
    df.columns = [str(c).strip() for c in df.columns]
    return df


def _text_lines(src: _Source) -> pd.Series:
    """Physical lines (CR stripped, trailing blank lines dropped); sets ``src.row_lines``."""
    lines = src.text.split("\n")
    lines = [ln[:-1] if ln.endswith("\r") else ln for ln in lines]
    while lines and not lines[-1].strip():
        lines.pop()
    src.row_lines = np.arange(1, len(lines) + 1, dtype=np.int64)
    return pd.Series(lines, dtype="str")


def _pick(columns: Sequence[str], candidates: Sequence[str]) -> str | None:
    lower = {c.lower(): c for c in columns}
    for cand in candidates:
        if cand in lower:
            return lower[cand]
    return None


def _require(src: _Source, df: pd.DataFrame, candidates: Sequence[str], hint: str) -> str:
    col = _pick(list(df.columns), candidates)
    if col is None:
        want = candidates[0] if len(candidates) == 1 else " or ".join(candidates)
        have = ", ".join(df.columns) if len(df.columns) else "none"
        raise InputError(src.path, 1, f"missing column {want} ({hint}; columns: {have})")
    return col


# --------------------------------------------------------------------------------------------
# validation kernels (vectorized; the first bad row is reported)
# --------------------------------------------------------------------------------------------


def _first(mask: npt.NDArray[np.bool_]) -> int | None:
    idx = np.flatnonzero(mask)
    return int(idx[0]) if idx.size else None


def _numbers(src: _Source, values: pd.Series, what: str) -> npt.NDArray[np.float64]:
    """Parse strings to floats; a missing or non-numeric cell raises ``InputError``."""
    s = values.astype("str").fillna("").str.strip()
    num = pd.to_numeric(s, errors="coerce").to_numpy(dtype=np.float64, na_value=np.nan)
    bad = _first(np.isnan(num))
    if bad is not None:
        raw = s.iloc[bad]
        msg = f"missing {what}" if raw == "" else f"{what} is not a number: {raw!r}"
        raise src.fail(bad, msg)
    return num


def _check_latlon(
    src: _Source,
    lat: npt.NDArray[np.float64],
    lon: npt.NDArray[np.float64],
    projected: tuple[npt.NDArray[np.float64], npt.NDArray[np.float64], str] | None = None,
) -> None:
    """Latitude in [-90, 90] and longitude in [-180, 180], finite."""
    bad_lat = ~(np.abs(lat) <= 90.0)  # NaN-safe
    bad_lon = ~(np.abs(lon) <= 180.0)
    row = _first(bad_lat | bad_lon)
    if row is None:
        return
    if projected is not None:
        x, y, crs = projected
        raise src.fail(
            row,
            f"coordinates ({float(x[row])!r}, {float(y[row])!r}) do not convert to a valid "
            f"latitude/longitude in {crs} (got lat={float(lat[row])!r}, "
            f"lon={float(lon[row])!r}); check the CRS and the axis order",
        )
    if bad_lat[row]:
        hint = " (are lat and lon swapped?)" if abs(float(lon[row])) <= 90.0 else ""
        raise src.fail(row, f"latitude {float(lat[row])!r} out of range [-90, 90]{hint}")
    raise src.fail(row, f"longitude {float(lon[row])!r} out of range [-180, 180]")


def _project(
    src: _Source,
    x: npt.NDArray[np.float64],
    y: npt.NDArray[np.float64],
    crs: CrsLike | None,
    always_xy: bool,
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    if crs is None:
        raise InputError(
            src.path,
            None,
            "coordinates are projected: pass the dataset's CRS, e.g. crs='EPSG:32650' (UTM 50N) "
            "or crs='EPSG:2385' (GeoGLUE-clean)",
        )
    if not (np.isfinite(x).all() and np.isfinite(y).all()):
        row = _first(~(np.isfinite(x) & np.isfinite(y)))
        raise src.fail(
            row, f"coordinate is not a finite number: ({float(x[row])!r}, {float(y[row])!r})"
        )
    try:
        lat, lon = to_wgs84(x, y, crs, always_xy=always_xy)
    except ValueError as exc:
        raise InputError(src.path, None, str(exc)) from None
    _check_latlon(src, lat, lon, projected=(x, y, str(crs)))
    return lat, lon


def _ids(src: _Source, values: pd.Series, what: str, unique: bool) -> pd.Series:
    ids = values.astype("str").fillna("").str.strip()
    empty = _first((ids == "").to_numpy(dtype=bool))
    if empty is not None:
        raise src.fail(empty, f"empty {what}")
    if unique:
        dup = ids.duplicated().to_numpy(dtype=bool)
        row = _first(dup)
        if row is not None:
            first_row = int(np.flatnonzero((ids == ids.iloc[row]).to_numpy(dtype=bool))[0])
            where = src.line(first_row)
            raise src.fail(row, f"duplicate {what} {ids.iloc[row]!r} (first on line {where})")
    return ids.reset_index(drop=True)


def _poi_frame(
    ids: pd.Series,
    text: pd.Series,
    name: pd.Series | None,
    lat: npt.NDArray[np.float64],
    lon: npt.NDArray[np.float64],
    extra: pd.DataFrame | None = None,
) -> pd.DataFrame:
    text = text.astype("str").fillna("").reset_index(drop=True)
    out = pd.DataFrame(
        {
            "doc_id": ids.astype("str").to_numpy(),
            "name": (text if name is None else name.astype("str").fillna("")).to_numpy(),
            "text": text.to_numpy(),
            "type": "poi",
            "lat": lat,
            "lon": lon,
        }
    )
    for c in ("doc_id", "name", "text", "type"):
        out[c] = out[c].astype("str")
    if extra is not None:
        extra = extra.reset_index(drop=True)
        if "type" in extra.columns:
            out["type"] = extra["type"].astype("str").to_numpy()
            extra = extra.drop(columns="type")
        for c in extra.columns:
            if c not in out.columns:
                out[c] = extra[c].to_numpy()
    return out


def _query_frame(
    ids: pd.Series,
    text: pd.Series,
    lat: npt.NDArray[np.float64],
    lon: npt.NDArray[np.float64],
    extra: pd.DataFrame | None = None,
) -> pd.DataFrame:
    out = pd.DataFrame(
        {
            "query_id": ids.astype("str").to_numpy(),
            "text": text.astype("str").fillna("").to_numpy(),
            "lat": lat,
            "lon": lon,
        }
    )
    out["query_id"] = out["query_id"].astype("str")
    out["text"] = out["text"].astype("str")
    if extra is not None:
        extra = extra.reset_index(drop=True)
        for c in extra.columns:
            if c not in out.columns:
                out[c] = extra[c].to_numpy()
    return out


def _qrels_frame(query_ids: pd.Series, doc_ids: pd.Series) -> pd.DataFrame:
    out = pd.DataFrame(
        {
            "query_id": query_ids.astype("str").to_numpy(),
            "doc_id": doc_ids.astype("str").to_numpy(),
        }
    )
    out["query_id"] = out["query_id"].astype("str")
    out["doc_id"] = out["doc_id"].astype("str")
    out["relevance"] = np.ones(len(out), dtype=np.int64)
    return out


def _empty_qrels() -> pd.DataFrame:
    return _qrels_frame(pd.Series([], dtype="str"), pd.Series([], dtype="str"))


def _split_gold(src: _Source, query_ids: pd.Series, gold: pd.Series) -> pd.DataFrame:
    """Gold cells (one id or a list) -> qrels rows in listed order."""
    cleaned = gold.astype("str").fillna("").str.replace(r"[\[\]\"']", " ", regex=True)
    parts = cleaned.str.strip().str.split(r"[\s,;|]+", regex=True)
    frame = pd.DataFrame({"query_id": query_ids.to_numpy(), "doc_id": parts.to_numpy()})
    frame = frame.explode("doc_id", ignore_index=True)
    frame = frame[frame["doc_id"].notna() & (frame["doc_id"] != "")]
    return _qrels_frame(frame["query_id"], frame["doc_id"])


# --------------------------------------------------------------------------------------------
# LIST
# --------------------------------------------------------------------------------------------


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


def _list_pois(src: _Source, crs: CrsLike | None, always_xy: bool) -> pd.DataFrame:
    df = _read_csv(src)
    id_col = _require(src, df, ("id", "poi_id", "doc_id"), "LIST poi.csv has id,coor,text")
    text_col = _require(src, df, ("text",), "LIST poi.csv has id,coor,text")
    ids = _ids(src, df[id_col], "POI id", unique=True)
    x, y = _list_coor(src, df)
    lat, lon = _project(src, x, y, crs, always_xy)
    extra = df.drop(columns=[id_col, text_col, _pick(df.columns, ("coor",))])
    extra = extra.assign(x=x, y=y)
    return _poi_frame(ids, df[text_col], None, lat, lon, extra)


def load_list_pois(path: PathLike, crs: CrsLike, *, always_xy: bool = True) -> pd.DataFrame:
    """Load a LIST ``poi.csv`` (``id,coor,text``, ``coor = "[x, y]"``) as a POI table.

    ``crs`` is the one projected CRS of the whole dataset (e.g. ``"EPSG:32650"``); ``x`` is the
    easting unless ``always_xy=False`` (then the CRS's authority axis order). Returns
    ``doc_id, name, text, type, lat, lon, x, y`` (+ other columns); ``name`` repeats ``text``.
    """
    return _list_pois(_read_text(path), crs, always_xy)


def _list_queries(src: _Source, crs: CrsLike | None, always_xy: bool) -> pd.DataFrame:
    df = _read_csv(src)
    id_col = _require(src, df, ("id", "query_id", "qid"), "LIST query.csv has id,coor,text")
    text_col = _require(src, df, ("text",), "LIST query.csv has id,coor,text")
    ids = _ids(src, df[id_col], "query id", unique=True)
    x, y = _list_coor(src, df)
    lat, lon = _project(src, x, y, crs, always_xy)
    extra = df.drop(columns=[id_col, text_col, _pick(df.columns, ("coor",))])
    return _query_frame(ids, df[text_col], lat, lon, extra.assign(x=x, y=y))


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


# --------------------------------------------------------------------------------------------
# GeoGLUE JSON / JSONL
# --------------------------------------------------------------------------------------------


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


# --------------------------------------------------------------------------------------------
# GeoBloom text files
# --------------------------------------------------------------------------------------------


def _geobloom_fields(src: _Source, allowed: tuple[int, ...]) -> pd.DataFrame:
    lines = _text_lines(src)
    blank = _first((lines.str.strip() == "").to_numpy(dtype=bool))
    if blank is not None:
        raise src.fail(blank, "blank line: GeoBloom ids are row numbers, so no row may be empty")
    parts = lines.str.split("\t")
    n = parts.str.len().to_numpy(dtype=np.int64)
    want = allowed if len(lines) == 0 else ((n[0],) if n[0] in allowed else allowed)
    bad = _first(~np.isin(n, want))
    if bad is not None:
        shape = " or ".join(str(a) for a in want)
        raise src.fail(
            bad, f"expected {shape} tab-separated fields (text, X, Y[, gold]), got {n[bad]}"
        )
    width = int(n[0]) if len(lines) else allowed[0]
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
    gold = df["gold"].str.strip()
    row = pd.to_numeric(gold, errors="coerce").to_numpy(dtype=np.float64, na_value=np.nan)
    bad = _first(~((row >= 0) & (np.floor(row) == row)))
    if bad is not None:
        raise src.fail(bad, f"gold must be a POI row number (integer >= 0), got {gold.iloc[bad]!r}")
    gold_ids = pd.Series(row.astype(np.int64).astype(str), dtype="str")
    return queries, _qrels_frame(ids, gold_ids)


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


# --------------------------------------------------------------------------------------------
# plain lat/lon CSV
# --------------------------------------------------------------------------------------------


def _latlon_common(
    src: _Source, id_cols: Sequence[str], what: str
) -> tuple[pd.DataFrame, str, pd.Series, npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    df = _read_csv(src)
    lat_col = _require(src, df, LAT_COLS, "a lat/lon CSV needs lat and lon columns")
    lon_col = _require(src, df, LON_COLS, "a lat/lon CSV needs lat and lon columns")
    id_col = _require(src, df, id_cols, f"the {what} column")
    lat = _numbers(src, df[lat_col], "latitude")
    lon = _numbers(src, df[lon_col], "longitude")
    _check_latlon(src, lat, lon)
    ids = _ids(src, df[id_col], what, unique=True)
    return df.drop(columns=[lat_col, lon_col, id_col]), id_col, ids, lat, lon


def _latlon_pois(src: _Source) -> pd.DataFrame:
    df, _, ids, lat, lon = _latlon_common(src, POI_ID_COLS, "POI id")
    text_col = _pick(list(df.columns), ("text",))
    name_col = _pick(list(df.columns), ("name",))
    if text_col is None and name_col is None:
        raise InputError(src.path, 1, "missing column text (or name)")
    text = df[text_col if text_col is not None else name_col]
    name = df[name_col] if name_col is not None else None
    extra = df.drop(columns=[c for c in (text_col, name_col) if c is not None])
    return _poi_frame(ids, text, name, lat, lon, extra)


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


# --------------------------------------------------------------------------------------------
# autodetection
# --------------------------------------------------------------------------------------------


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


def load_pois(
    path: PathLike, crs: CrsLike | None = None, *, always_xy: bool | None = None
) -> pd.DataFrame:
    """Load POIs from any supported spatial format (see :func:`detect_spatial_format`).

    ``crs`` is required for projected formats (LIST, GeoBloom) and ignored otherwise;
    ``always_xy`` defaults to each format's convention (LIST: x = easting; GeoBloom: the CRS's
    authority order). Returns ``doc_id, name, text, type, lat, lon`` (+ other columns) with
    unique string ids and validated WGS84 coordinates.
    """
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
