"""Shared pieces of the spatial loaders: reading files with line bookkeeping, vectorized
validation of ids and coordinates, and the output tables (see :mod:`analysis.io.spatial`)."""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, TypeAlias

import numpy as np
import numpy.typing as npt
import pandas as pd

from analysis.core.errors import InputError
from analysis.geo import to_wgs84
from analysis.io._text import check_file, is_gzip, read_bytes

if TYPE_CHECKING:
    from pyproj import CRS

PathLike = str | Path
CrsLike: TypeAlias = "str | int | CRS"  # pyproj is imported where a CRS is read (the geo extra)

POI_ID_COLS = ("doc_id", "poi_id", "id")
QUERY_ID_COLS = ("query_id", "qid", "id")
LAT_COLS = ("lat", "latitude")
LON_COLS = ("lon", "lng", "longitude")
GOLD_COLS = ("gold_poi_ids", "gold_doc_ids", "gold_ids", "gold", "answer_ids")
JSON_TEXT_KEYS = ("text", "query", "sentence", "name", "address")
FORMATS = ("list", "geoglue", "geobloom", "latlon")


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
    p = check_file(path)  # missing, a folder, a symlink loop, ...: one line naming it
    if p.name.lower().endswith(".gz") and not is_gzip(p):
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
    _check_axis_order(src, x, y, lat, lon, crs, always_xy)
    _check_latlon(src, lat, lon, projected=(x, y, str(crs)))
    return lat, lon


AREA_MARGIN_DEG = 1.0


def share_in_area(
    lat: npt.NDArray[np.float64], lon: npt.NDArray[np.float64], crs: CrsLike
) -> float:
    """Share of points inside the CRS's area of use (widened by 1 degree); 1.0 when the CRS
    declares none."""
    from pyproj import CRS

    try:
        area = CRS.from_user_input(crs).area_of_use
    except Exception:  # pyproj raises several types for odd input; the caller reports the CRS
        return 1.0
    if area is None or len(lat) == 0:
        return 1.0
    m = AREA_MARGIN_DEG
    inside = (
        (lat >= area.south - m)
        & (lat <= area.north + m)
        & (lon >= area.west - m)
        & (lon <= area.east + m)
    )
    return float(np.mean(inside))


def _check_axis_order(
    src: _Source,
    x: npt.NDArray[np.float64],
    y: npt.NDArray[np.float64],
    lat: npt.NDArray[np.float64],
    lon: npt.NDArray[np.float64],
    crs: CrsLike,
    always_xy: bool,
) -> None:
    """Refuse coordinates whose two axes are swapped: as read, fewer than half of the points fall
    in the CRS's area of use, read the other way round at least 90 % do (GeoBloom files put the
    northing first; EPSG:2385's own axis order is northing, easting)."""
    as_read = share_in_area(lat, lon, crs)
    if as_read >= 0.5:
        return
    with np.errstate(all="ignore"):
        swapped = share_in_area(*to_wgs84(y, x, crs, always_xy=always_xy), crs)
    if swapped < 0.9:
        return
    order = "(easting, northing)" if always_xy else "the CRS's own axis order"
    raise InputError(
        src.path,
        None,
        f"the two coordinate columns look swapped for {crs}: read as {order}, "
        f"{as_read:.0%} of the points fall in the CRS's area, read the other way round "
        f"{swapped:.0%} do (GeoBloom files put the northing first: use a CRS whose axis order "
        "is northing, easting, such as EPSG:2385, or switch the axis order: always_xy, "
        "--easting-first)",
    )


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
