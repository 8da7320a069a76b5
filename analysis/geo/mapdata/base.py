"""Shared pieces of the map data: settings, colours, the tooltip, URL values, tooltip-safe
text, display jitter, the view and the deck (see :mod:`analysis.geo.mapdata`)."""

from __future__ import annotations

import html
import json
import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd
import pydeck as pdk
from pydeck.bindings.json_tools import default_serialize

from analysis.geo import EARTH_RADIUS_M

BASEMAPS: tuple[str, ...] = ("none", "carto")
#: Stack tolerances offered on the page, in metres (0 = exact coordinates).
TOLERANCES: tuple[float, ...] = (0.0, 1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0)
#: At most this many retrieved POIs per model are drawn.
MAX_K = 50
#: Ranks kept per query by :func:`topk_index` (the largest cutoff of the dashboard).
KEEP_RANKS = 100
#: Distance (m) between consecutive rings of the display jitter spiral.
JITTER_STEP_M = 2.0
#: The dataset map draws at most this many POIs (every n-th one) under the stack columns (each
#: with its tooltip, ~170 bytes: the map stays under ~0.5 MB; every stack is drawn).
MAX_BACKGROUND_POIS = 2_500
TIP_CHARS = 120
EPS = 1e-9
_M_PER_DEG = EARTH_RADIUS_M * math.pi / 180.0
_GOLDEN_ANGLE = math.pi * (3.0 - math.sqrt(5.0))

Color = list[int]
QUERY_COLOR: Color = [123, 50, 148, 255]
GOLD_COLOR: Color = [255, 179, 0, 200]
GOLD_LINE: Color = [120, 80, 0, 255]
MODEL_COLORS: dict[str, dict[bool, Color]] = {
    "A": {True: [0, 84, 190, 255], False: [140, 185, 240, 235]},
    "B": {True: [205, 80, 0, 255], False: [252, 196, 140, 235]},
}
STACK_COLOR: Color = [70, 70, 70, 110]
POI_COLOR: Color = [110, 110, 110, 150]

TOOLTIP: dict[str, Any] = {
    "html": "<b>{tip_title}</b><br/>{tip_name}<br/><small>{tip_detail}</small>",
    "style": {"backgroundColor": "#262730", "color": "#fafafa", "fontSize": "12px"},
}


# --------------------------------------------------------------------------------------------
# URL values and small helpers
# --------------------------------------------------------------------------------------------


def parse_tolerance(raw: str | None) -> float | None:
    """A tolerance (m) from the URL: one of :data:`TOLERANCES`, else ``None``."""
    value = _float(raw)
    return value if value in TOLERANCES else None


def parse_basemap(raw: str | None) -> str | None:
    """A basemap from the URL: one of :data:`BASEMAPS`, else ``None``."""
    return raw if raw in BASEMAPS else None


def has_coordinates(entities: pd.DataFrame | None) -> bool:
    """True when ``entities`` has ``lat``/``lon`` columns and at least one located row."""
    if entities is None or not {"lat", "lon"} <= set(entities.columns) or entities.empty:
        return False
    lat = pd.to_numeric(entities["lat"], errors="coerce")
    lon = pd.to_numeric(entities["lon"], errors="coerce")
    return bool((lat.notna() & lon.notna()).any())


_BRACES = str.maketrans({"{": "&#123;", "}": "&#125;"})


def escape_text(values: Sequence[object] | pd.Series, limit: int = TIP_CHARS) -> list[str]:
    """Tooltip-safe text: ``str(value)`` cut to ``limit`` characters (with "…"), then
    :func:`html.escape` (``& < > " '``) and the braces ``{ }`` as ``&#123; &#125;``: the
    renderers fill the tooltip template's ``{field}``s one after another, each at its first
    occurrence in the text built so far, so a ``{tip_detail}`` inside a name would be filled
    too. Missing values become ``""``."""
    out = []
    for value in values.tolist() if isinstance(values, pd.Series) else values:
        if value is None or (isinstance(value, float) and math.isnan(value)) or value is pd.NA:
            out.append("")
            continue
        text = str(value)
        if len(text) > limit:
            text = text[: limit - 1] + "…"
        out.append(html.escape(text, quote=True).translate(_BRACES))
    return out


def default_query(table: pd.DataFrame, dataset: str, model: str | None, metric: str) -> str | None:
    """The query the page opens with: model ``model``'s worst query on ``dataset`` by ``metric``
    among its failures (value < 1), the first one in table order among equal values (worst
    first, as a failure list sorted by value). Without failures the first query; ``None``
    when the table has no row of that dataset and model (or lacks the metric)."""
    if table.empty or model is None or metric not in table.columns:
        return None
    rows = table[(table["dataset"] == dataset) & (table["model"] == model)]
    if rows.empty:
        return None
    values = rows[metric].to_numpy(dtype=np.float64)
    ids = rows["query_id"].astype("str").to_numpy()
    failing = np.flatnonzero(values < 1.0 - EPS)
    if failing.size == 0:
        return str(ids[0])
    best = failing[np.argmin(values[failing])]  # argmin returns the first minimum
    return str(ids[best])


# --------------------------------------------------------------------------------------------
# display jitter
# --------------------------------------------------------------------------------------------


def jitter(
    lat: npt.ArrayLike, lon: npt.ArrayLike, step_m: float = JITTER_STEP_M
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """Display coordinates that separate points sharing an exact coordinate.

    Points whose ``(lat, lon)`` is unique are returned unchanged (as are NaN coordinates). The
    ``n >= 2`` points of a group with the same coordinate, in input order ``i = 0..n-1``, are
    moved onto a sunflower spiral around it: distance ``step_m * sqrt(i + 1)`` metres, bearing
    ``i * 137.5°`` (the golden angle), converted with ``dlat = dy / m_per_deg`` and
    ``dlon = dx / (m_per_deg * cos(lat))``. The offset of a point depends only on its position
    within its group, so the result is deterministic; a group of 100 spans about 20 m at the
    default step. Latitudes are clipped to [-90, 90] (a stack at a pole; the browser's map
    cannot draw others). For display only: never compute distances or stacks from the result.
    """
    la = np.asarray(lat, dtype=np.float64).copy()
    lo = np.asarray(lon, dtype=np.float64).copy()
    if la.size == 0:
        return la, lo
    valid = ~(np.isnan(la) | np.isnan(lo))
    keys = pd.DataFrame({"lat": la + 0.0, "lon": lo + 0.0})[valid]
    if keys.empty:
        return la, lo
    pos = np.flatnonzero(valid)
    group = keys.groupby(["lat", "lon"], sort=False).ngroup().to_numpy()
    size = np.bincount(group)[group]
    index = keys.groupby(["lat", "lon"], sort=False).cumcount().to_numpy()
    moved = size >= 2
    if not moved.any():
        return la, lo
    i = index[moved].astype(np.float64)
    radius = step_m * np.sqrt(i + 1.0)
    angle = i * _GOLDEN_ANGLE
    p = pos[moved]
    cos_lat = np.maximum(np.cos(np.radians(la[p])), 1e-6)
    la[p] = np.clip(la[p] + radius * np.cos(angle) / _M_PER_DEG, -90.0, 90.0)
    lo[p] = lo[p] + radius * np.sin(angle) / (_M_PER_DEG * cos_lat)
    return la, lo


def unwrap_lon(lon: npt.ArrayLike, ref: float) -> npt.NDArray[np.float64]:
    """Longitudes moved by 360° to within 180° of ``ref`` (the others unchanged, NaN stays NaN),
    for drawing around ``ref``: points on the other side of the antimeridian (179.99° beside
    -179.99°) are drawn next to it, not a world away across the map."""
    lo = np.asarray(lon, dtype=np.float64)
    d = lo - ref
    return np.where(d > 180.0, lo - 360.0, np.where(d < -180.0, lo + 360.0, lo))


#: decimals of drawn coordinates: 1e-6 degree is about 0.1 m (equal points stay equal)
COORD_DECIMALS = 6


def _records(frame: pd.DataFrame, columns: Sequence[str]) -> list[dict[str, Any]]:
    """Rows as JSON-ready dicts of plain Python values (no numpy scalars; NaN becomes None);
    coordinates (columns ending in ``lat``/``lon``) rounded to :data:`COORD_DECIMALS`
    decimals, which the browser draws the same and receives in fewer bytes."""
    lists = []
    for col in columns:
        values = frame[col]
        if col.endswith(("lat", "lon")) and pd.api.types.is_float_dtype(values.dtype):
            values = values.round(COORD_DECIMALS)
        values = values.tolist()
        if pd.api.types.is_float_dtype(frame[col].dtype):
            values = [None if v != v else v for v in values]  # v != v: NaN
        lists.append(values)
    return [dict(zip(columns, row, strict=True)) for row in zip(*lists, strict=True)]


_TIP = ["tip_title", "tip_name", "tip_detail"]


#: Metres per pixel at zoom 0 on the equator (Web Mercator, deck.gl's 512-px world).
M_PER_PX_ZOOM0 = 78_271.517
#: Pixels from the centre to the farthest drawn point: 85% of the half-height of a 520 px map.
FIT_RADIUS_PX = 220.0


def _view(lat: float, lon: float, extent_m: float, pitch: float = 0.0) -> pdk.ViewState:
    """A view centred on ``(lat, lon)`` whose zoom puts a point ``extent_m`` metres away
    :data:`FIT_RADIUS_PX` pixels from the centre (inside a 520 px high chart):
    ``zoom = log2(M_PER_PX_ZOOM0 · cos(lat) · FIT_RADIUS_PX / extent)``, clamped to [3, 18];
    16 when the extent is 0."""
    if not np.isfinite(extent_m) or extent_m <= 0:
        zoom = 16.0
    else:
        cos_lat = max(math.cos(math.radians(lat)), 1e-6)
        zoom = math.log2(M_PER_PX_ZOOM0 * cos_lat * FIT_RADIUS_PX / extent_m)
        zoom = float(min(max(zoom, 3.0), 18.0))
    return pdk.ViewState(latitude=lat, longitude=lon, zoom=round(zoom, 2), pitch=pitch, bearing=0)


def view_bounds(
    view: pdk.ViewState, width_px: int = 900, height_px: int = 520
) -> tuple[float, float, float, float]:
    """``(lon_min, lat_min, lon_max, lat_max)`` seen by a top-down ``view`` in a chart of
    ``width_px`` x ``height_px`` (900 px: the narrowest a map is drawn on the page, so the
    scale bar placed in the box is on screen also in wider charts): metres per pixel
    ``M_PER_PX_ZOOM0 * cos(lat) / 2**zoom``, converted to degrees at the view's latitude."""
    lat, lon, zoom = float(view.latitude), float(view.longitude), float(view.zoom)
    cos_lat = max(math.cos(math.radians(lat)), 1e-6)
    m_per_px = M_PER_PX_ZOOM0 * cos_lat / 2.0**zoom
    half_lat = height_px / 2 * m_per_px / _M_PER_DEG
    half_lon = width_px / 2 * m_per_px / (_M_PER_DEG * cos_lat)
    return (lon - half_lon, max(lat - half_lat, -85.0), lon + half_lon, min(lat + half_lat, 85.0))


class StaticDeck(pdk.Deck):
    """A :class:`pydeck.Deck` whose JSON is computed once: ``to_json`` serializes on the first
    call (compact separators, UTF-8 kept) and returns the same string afterwards, so a deck kept
    in a cache is not re-serialized on every rerun. Do not change its layers after that."""

    _json_cache: str | None = None

    def to_json(self) -> str:
        if self._json_cache is None:  # pydeck's serialization, compact, in one pass
            self._json_cache = json.dumps(
                self,
                sort_keys=True,
                default=default_serialize,
                separators=(",", ":"),
                ensure_ascii=False,
            )
        return self._json_cache


def _deck(
    layers: list[pdk.Layer],
    view: pdk.ViewState,
    basemap: str,
    *,
    labels: Sequence[dict[str, Any]] = (),
    context: bool = True,
    datum: str = "wgs84",
    height_px: int = 520,
) -> StaticDeck:
    """A deck with the tooltip; ``basemap="none"`` gives ``map_provider=None`` and no style
    (works offline); ``"carto"`` CARTO's light style (needs internet in the browser). With
    ``context`` the offline context layers of :mod:`analysis.geo.mapdata.context` go under the
    data layers (with a basemap too: they are offline and say which datum the POIs are in).
    Every text of the map (the context's ``labels`` rows, then ``labels``, drawn in that order)
    is one TextLayer ``labels`` on top (:func:`~analysis.geo.mapdata.context.labels_layer`)."""
    from analysis.geo.mapdata.context import context_parts, labels_layer

    rows = list(labels)
    if context and layers:
        under, names = context_parts(view_bounds(view, height_px=height_px), datum)
        layers, rows = [*under, *layers], [*names, *rows]
    if rows:
        layers = [*layers, labels_layer(rows)]
    if basemap == "carto":
        return StaticDeck(
            layers=layers,
            initial_view_state=view,
            map_provider="carto",
            map_style="light",
            tooltip=TOOLTIP,
        )
    return StaticDeck(layers=layers, initial_view_state=view, map_provider=None, tooltip=TOOLTIP)


def _float(value: object) -> float | None:
    try:
        out = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None
    return out if math.isfinite(out) else None


def _extent(clat: float, clon: float, lats: np.ndarray, lons: np.ndarray) -> float:
    """Largest haversine distance (m) from the centre to any finite point (0 when none)."""
    ok = np.isfinite(lats) & np.isfinite(lons)
    if not ok.any():
        return 0.0
    p1, p2 = np.radians(clat), np.radians(lats[ok])
    dl = np.radians(lons[ok] - clon)
    a = np.sin((p2 - p1) / 2) ** 2 + np.cos(p1) * np.cos(p2) * np.sin(dl / 2) ** 2
    d = 2 * EARTH_RADIUS_M * np.arcsin(np.sqrt(np.minimum(a, 1.0)))
    return float(d.max())


def _stack_names(rows: pd.DataFrame, limit: int = 5) -> dict[int, str]:
    """stack_id -> the names of its first ``limit`` rows joined by " | " (raw text)."""
    out: dict[int, list[str]] = {}
    for sid, name in zip(rows["stack_id"].tolist(), rows["name"].tolist(), strict=True):
        names = out.setdefault(int(sid), [])
        if len(names) < limit:
            names.append(str(name))
    return {sid: " | ".join(names) for sid, names in out.items()}


def _stack_tips(first: pd.DataFrame, members: pd.DataFrame) -> pd.DataFrame:
    """``first`` (one row per stack) with the tooltip of a stack column: "Stack of n POIs", the
    names of its first five ``members`` (escaped, at most 200 characters) and a click hint."""
    names = _stack_names(members)
    first["tip_title"] = [f"Stack of {int(s)} POIs" for s in first["stack_size"]]
    first["tip_name"] = escape_text(
        [names.get(s, "") for s in first["stack_id"].tolist()], limit=200
    )
    first["tip_detail"] = "click to list every POI of the stack"
    return first


def _stack_layer(
    layer_id: str,
    first: pd.DataFrame,
    members: pd.DataFrame,
    *,
    height_m: float,
    radius_m: float,
    color: list[int],
) -> pdk.Layer:
    """A pickable ColumnLayer with one column per stack (``first``: one row per stack, given
    the tooltip of :func:`_stack_tips`): the highest column is ``height_m`` metres high, the
    others in proportion to their ``stack_size``."""
    first = _stack_tips(first, members)
    return pdk.Layer(
        "ColumnLayer",
        id=layer_id,
        data=_records(first, ["doc_id", "lat", "lon", "stack_size", *_TIP]),
        get_position=["lon", "lat"],
        get_elevation="stack_size",
        elevation_scale=height_m / float(first["stack_size"].max()),
        radius=radius_m,
        get_fill_color=color,
        extruded=True,
        pickable=True,
        auto_highlight=True,
    )
