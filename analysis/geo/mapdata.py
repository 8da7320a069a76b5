"""The Map page's building blocks: pydeck decks, the point table of one query, stack tables.

Pure functions over pandas tables (no Streamlit); :mod:`analysis.geo` does the geometry
(stacks, twins, per-query diagnostics), this module shapes it for display.

Display conventions:

* **Maps work offline.** The basemap is ``"none"`` by default: ``pdk.Deck(map_provider=None)``
  and no ``map_style``, so nothing needs the internet. ``"carto"`` draws CARTO's positron tiles,
  which the *browser* downloads from cartocdn.com.
* **Every layer has an ``id`` and ``pickable=True``**, and every row of a POI layer carries its
  ``doc_id``, so a click (Streamlit's ``on_select="rerun"``) tells the page which POI was chosen
  (:func:`selected_doc`). A click on a stack column selects the column's first POI.
* **Tooltips** use one HTML template over three fields per row, ``tip_title``, ``tip_name`` and
  ``tip_detail``. Everything that comes from data (POI names, query text, ids, model names) is
  passed through :func:`html.escape` into these fields (:func:`escape_text`), so a POI called
  ``<img src=x onerror=alert(1)>`` is shown as text by any renderer of the template. (Streamlit
  1.67's own tooltip code escapes interpolated values once more, so ``&``, ``<``, ``>``,
  quotes in a name appear as entities there: safe, slightly ugly.)
* **Jitter only in display.** Points that share a coordinate (a stack; or the same POI as gold,
  in A's and in B's list) are spread on a small sunflower spiral (:func:`jitter`, a few metres)
  in the *display* columns ``x_lat``/``x_lon``; ``lat``/``lon`` keep the true coordinates, and
  distances and stacks are always computed from those.
* **Colours**: the query is purple; gold POIs are large amber discs; model A's retrieved POIs are
  blue, model B's orange, dark for a hit (the POI is relevant) and pale for a miss; arcs from the
  query take the colour of the point they end at; stack columns are grey, height = stack size.
"""

from __future__ import annotations

import html
import json
import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd
import plotly.graph_objects as go
import pydeck as pdk

from analysis.core.metrics import evaluate
from analysis.geo import EARTH_RADIUS_M, canonicalize_twins, coordinate_stacks

__all__ = [
    "BASEMAPS",
    "MAX_K",
    "TOLERANCES",
    "TOOLTIP",
    "StaticDeck",
    "dataset_deck",
    "default_query",
    "escape_text",
    "has_coordinates",
    "histogram_figure",
    "jitter",
    "largest_stacks_table",
    "parse_basemap",
    "parse_tolerance",
    "poi_index",
    "query_deck",
    "query_diagnostics_table",
    "query_points",
    "query_ranking",
    "selected_doc",
    "stack_members",
    "strict_vs_twin_aware",
    "topk_index",
    "twin_aware_table",
]

BASEMAPS: tuple[str, ...] = ("none", "carto")
#: Stack tolerances offered on the page, in metres (0 = exact coordinates).
TOLERANCES: tuple[float, ...] = (0.0, 1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0)
#: At most this many retrieved POIs per model are drawn.
MAX_K = 50
#: Ranks kept per query by :func:`topk_index` (the largest cutoff of the dashboard).
KEEP_RANKS = 100
#: Distance (m) between consecutive rings of the display jitter spiral.
JITTER_STEP_M = 2.0
#: The dataset map draws at most this many POIs (every n-th one) under the stack columns.
MAX_BACKGROUND_POIS = 10_000
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
    if raw is None:
        return None
    try:
        value = float(raw)
    except ValueError:
        return None
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


def escape_text(values: Sequence[object] | pd.Series, limit: int = TIP_CHARS) -> list[str]:
    """Tooltip-safe text: ``str(value)`` cut to ``limit`` characters (with "…"), then
    :func:`html.escape` (``& < > " '``). Missing values become ``""``."""
    out = []
    for value in values.tolist() if isinstance(values, pd.Series) else values:
        if value is None or (isinstance(value, float) and math.isnan(value)) or value is pd.NA:
            out.append("")
            continue
        text = str(value)
        if len(text) > limit:
            text = text[: limit - 1] + "…"
        out.append(html.escape(text, quote=True))
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
    default step. For display only: never compute distances or stacks from the result.
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
    la[p] = la[p] + radius * np.cos(angle) / _M_PER_DEG
    lo[p] = lo[p] + radius * np.sin(angle) / (_M_PER_DEG * cos_lat)
    return la, lo


# --------------------------------------------------------------------------------------------
# stacks as tables
# --------------------------------------------------------------------------------------------


def poi_index(pois: pd.DataFrame, tolerance_m: float = 0.0) -> pd.DataFrame:
    """:func:`analysis.geo.coordinate_stacks` of ``pois`` (``doc_id, name, text, lat, lon``),
    indexed by ``doc_id`` as text (first row kept for a repeated id), with ``name`` and ``text``
    as strings (``name`` falls back to ``text``, then to the id)."""
    stacks = coordinate_stacks(pois, tolerance_m)
    stacks["doc_id"] = stacks["doc_id"].astype("str")
    text = stacks["text"].astype("str") if "text" in stacks.columns else None
    if "name" in stacks.columns:
        name = stacks["name"].astype("str")
    else:
        name = text if text is not None else stacks["doc_id"]
    name = name.where(name.notna() & (name != ""), stacks["doc_id"])
    stacks["name"] = name.fillna("").astype("str")
    stacks["text"] = text.fillna("") if text is not None else stacks["name"]
    stacks = stacks.drop_duplicates("doc_id")
    return stacks.set_index("doc_id", drop=False)


def largest_stacks_table(report: Mapping[str, Any], index: pd.DataFrame) -> pd.DataFrame:
    """The ``largest_stacks`` of :func:`analysis.geo.stack_report` as a table:
    ``stack_id, size, lat, lon, names`` (the names of up to 10 members, joined by " | ";
    plain text) and ``doc_ids`` (their ids, comma-separated)."""
    stacks = list(report.get("largest_stacks", []))
    all_ids = [str(d) for stack in stacks for d in stack["doc_ids"]]
    all_names = index["name"].reindex(all_ids).fillna("").astype("str").tolist()
    rows = []
    start = 0
    for stack in stacks:
        ids = [str(d) for d in stack["doc_ids"]]
        names = all_names[start : start + len(ids)]
        start += len(ids)
        rows.append(
            {
                "stack_id": int(stack["stack_id"]),
                "size": int(stack["size"]),
                "lat": float(stack["lat"]),
                "lon": float(stack["lon"]),
                "names": " | ".join(names),
                "doc_ids": ", ".join(ids),
            }
        )
    cols = ["stack_id", "size", "lat", "lon", "names", "doc_ids"]
    return pd.DataFrame(rows, columns=cols)


def histogram_figure(report: Mapping[str, Any]) -> go.Figure:
    """Bar chart of ``stack_size_histogram``: x = stack size (POIs at one coordinate), y =
    number of stacks of that size (log scale; singletons included as size 1)."""
    hist = report.get("stack_size_histogram", {})
    sizes = [int(s) for s in hist]
    counts = [int(hist[s]) for s in hist]
    fig = go.Figure(
        go.Bar(
            x=sizes,
            y=counts,
            marker_color="#555",
            hovertemplate="%{y} stacks of %{x} POIs<extra></extra>",
        )
    )
    fig.update_layout(
        xaxis_title="Stack size (POIs sharing a coordinate)",
        yaxis_title="Stacks",
        yaxis_type="log",
        height=320,
        margin={"l": 10, "r": 10, "t": 30, "b": 10},
        title=f"Stack sizes (tolerance {report.get('tolerance_m', 0.0):g} m)",
    )
    return fig


def stack_members(
    index: pd.DataFrame,
    doc_id: str,
    *,
    gold_ids: Sequence[str] = (),
    ranks: Mapping[str, pd.Series] | None = None,
    text_chars: int = TIP_CHARS,
) -> pd.DataFrame:
    """Every POI in the stack of ``doc_id`` (at the tolerance ``index`` was built with):
    ``selected, doc_id, name, text, lat, lon, stack_size`` and, when given, ``gold`` (the POI
    is relevant for the current query) and one ``rank <label>`` column per entry of ``ranks``
    (a Series doc_id -> rank; missing = not in that list). The selected POI comes first, then
    gold POIs, then table order. Empty when ``doc_id`` is not a POI; a POI without coordinates
    is its own stack. Names and text are plain text (cut to ``text_chars``)."""
    cols = ["selected", "doc_id", "name", "text", "lat", "lon", "stack_size"]
    if doc_id not in index.index:
        return pd.DataFrame(columns=cols)
    sid = int(index.loc[doc_id, "stack_id"])
    rows = index[index["stack_id"] == sid] if sid >= 0 else index.loc[[doc_id]]
    out = pd.DataFrame(
        {
            "selected": rows["doc_id"].to_numpy() == doc_id,
            "doc_id": rows["doc_id"].astype("str").to_numpy(),
            "name": rows["name"].astype("str").to_numpy(),
            "text": rows["text"].astype("str").str.slice(0, text_chars).to_numpy(),
            "lat": rows["lat"].to_numpy(dtype=np.float64),
            "lon": rows["lon"].to_numpy(dtype=np.float64),
            "stack_size": rows["stack_size"].to_numpy(),
        }
    )
    gold = set(map(str, gold_ids))
    out["gold"] = out["doc_id"].isin(gold)
    for label, series in (ranks or {}).items():
        lookup = pd.Series(series.to_numpy(), index=series.index.astype("str"))
        lookup = lookup[~lookup.index.duplicated()]
        out[f"rank {label}"] = lookup.reindex(out["doc_id"]).astype("Int64").to_numpy()
    out["_pos"] = np.arange(len(out))
    out = out.sort_values(["selected", "gold", "_pos"], ascending=[False, False, True])
    return out.drop(columns="_pos").reset_index(drop=True)


# --------------------------------------------------------------------------------------------
# one query: points, layers, deck
# --------------------------------------------------------------------------------------------


def topk_index(ranked: pd.DataFrame, keep: int = KEEP_RANKS) -> pd.DataFrame:
    """The top ``keep`` rows per query of a ranked run (``query_id, doc_id, rank``), indexed by
    ``query_id`` for fast per-query lookups (``.loc[[query_id]]``)."""
    top = ranked.loc[ranked["rank"] <= keep, ["query_id", "doc_id", "rank"]].copy()
    top["query_id"] = top["query_id"].astype("str")
    top["doc_id"] = top["doc_id"].astype("str")
    return top.sort_values(["query_id", "rank"], kind="stable").set_index("query_id", drop=False)


def query_ranking(index: pd.DataFrame | None, query_id: str) -> pd.DataFrame:
    """One query's rows of a :func:`topk_index` (``doc_id, rank``); empty when absent."""
    if index is None or query_id not in index.index:
        return pd.DataFrame({"doc_id": pd.Series(dtype="str"), "rank": pd.Series(dtype="int64")})
    return index.loc[[query_id], ["doc_id", "rank"]].reset_index(drop=True)


def query_points(
    gold_ids: Sequence[str],
    rankings: Mapping[str, pd.DataFrame],
    index: pd.DataFrame,
    *,
    k: int,
    model_names: Mapping[str, str] | None = None,
) -> pd.DataFrame:
    """The POIs of one query's map, one row per drawn item (a POI may appear three times: as
    gold, in A's list and in B's list).

    Args:
        gold_ids: the query's relevant doc ids.
        rankings: label (``"A"``/``"B"``) -> the query's ranking (``doc_id, rank``).
        index: :func:`poi_index` of the dataset's POIs.
        k: how many retrieved POIs per model (capped at :data:`MAX_K`).
        model_names: label -> model name, for the tooltips.

    Returns:
        ``role`` (``"gold"`` or the label), ``model`` (name, ``""`` for gold), ``rank`` (0 for
        gold), ``doc_id``, ``name``, ``lat``, ``lon`` (true coordinates), ``stack_id``,
        ``stack_size``, ``hit`` (the POI is relevant), ``located`` (it is a POI with a
        coordinate), then the display columns of :func:`jitter` ``x_lat``/``x_lon``, the
        ``color`` and the escaped tooltip fields ``tip_title``, ``tip_name``, ``tip_detail``.
        Rows: gold first (in the order given), then each model's top k by rank.
    """
    k = max(0, min(int(k), MAX_K))
    names = dict(model_names or {})
    gold = list(dict.fromkeys(str(g) for g in gold_ids))
    gold_set = set(gold)
    frames = [pd.DataFrame({"role": "gold", "model": "", "rank": 0, "doc_id": gold})]
    for label, ranking in rankings.items():
        top = ranking[ranking["rank"] <= k].sort_values("rank", kind="stable")
        frames.append(
            pd.DataFrame(
                {
                    "role": label,
                    "model": names.get(label, label),
                    "rank": top["rank"].to_numpy(dtype=np.int64),
                    "doc_id": top["doc_id"].astype("str").to_numpy(),
                }
            )
        )
    pts = pd.concat(frames, ignore_index=True)
    pts["rank"] = pts["rank"].astype("int64")
    pts["doc_id"] = pts["doc_id"].astype("str")
    info = index.reindex(pts["doc_id"])
    pts["name"] = info["name"].fillna("").astype("str").to_numpy()
    pts["lat"] = pd.to_numeric(info["lat"], errors="coerce").to_numpy(dtype=np.float64)
    pts["lon"] = pd.to_numeric(info["lon"], errors="coerce").to_numpy(dtype=np.float64)
    pts["stack_id"] = info["stack_id"].fillna(-1).astype("int64").to_numpy()
    pts["stack_size"] = info["stack_size"].fillna(0).astype("int64").to_numpy()
    pts["hit"] = pts["doc_id"].isin(gold_set)
    pts["located"] = ~(np.isnan(pts["lat"]) | np.isnan(pts["lon"]))
    pts["x_lat"], pts["x_lon"] = jitter(pts["lat"], pts["lon"])
    colors = []
    for role, hit in zip(pts["role"], pts["hit"], strict=True):
        if role == "gold":
            colors.append(GOLD_COLOR)
        else:
            colors.append(MODEL_COLORS.get(str(role), MODEL_COLORS["A"])[bool(hit)])
    pts["color"] = colors
    _tooltips(pts, gold_ranks=_gold_ranks(pts))
    return pts


def _gold_ranks(pts: pd.DataFrame) -> dict[str, str]:
    """doc_id -> "A: rank 3, B: —" for the gold rows' tooltips."""
    roles = pts["role"].tolist()
    labels = [r for r in dict.fromkeys(roles) if r != "gold"]
    best: dict[tuple[str, str], int] = {}
    for role, doc, rank in zip(roles, pts["doc_id"].tolist(), pts["rank"].tolist(), strict=True):
        if role != "gold":
            best.setdefault((role, doc), int(rank))
    out: dict[str, str] = {}
    for role, doc in zip(roles, pts["doc_id"].tolist(), strict=True):
        if role == "gold":
            parts = [
                f"{label}: rank {best[(label, doc)]}" if (label, doc) in best else f"{label}: —"
                for label in labels
            ]
            out[doc] = ", ".join(parts)
    return out


def _tooltips(pts: pd.DataFrame, gold_ranks: Mapping[str, str]) -> None:
    """Fill ``tip_title``, ``tip_name``, ``tip_detail`` (all escaped) in place."""
    models = escape_text(pts["model"])
    ids = escape_text(pts["doc_id"])
    roles = escape_text(pts["role"])
    rows = zip(
        pts["role"].tolist(),
        pts["doc_id"].tolist(),
        pts["rank"].tolist(),
        pts["stack_size"].tolist(),
        pts["located"].tolist(),
        pts["hit"].tolist(),
        strict=True,
    )
    titles, details = [], []
    for i, (role, doc, rank, size, located, hit) in enumerate(rows):
        stack = f"stack of {size} POIs" if size >= 2 else "alone on its coordinate"
        if not located:
            stack = "no coordinate"
        if role == "gold":
            titles.append("Gold POI")
            ranks = escape_text([gold_ranks.get(doc, "")])[0]
            details.append(f"doc {ids[i]} · {stack} · {ranks}")
        else:
            outcome = "hit" if hit else "miss"
            titles.append(f"Model {roles[i]} ({models[i]}) · rank {rank} · {outcome}")
            details.append(f"doc {ids[i]} · {stack}")
    pts["tip_title"] = titles
    pts["tip_name"] = escape_text(pts["name"])
    pts["tip_detail"] = details


def _records(frame: pd.DataFrame, columns: Sequence[str]) -> list[dict[str, Any]]:
    """Rows as JSON-ready dicts of plain Python values (no numpy scalars; NaN becomes None)."""
    lists = []
    for col in columns:
        values = frame[col].tolist()
        if pd.api.types.is_float_dtype(frame[col].dtype):
            values = [None if v != v else v for v in values]  # v != v: NaN
        lists.append(values)
    return [dict(zip(columns, row, strict=True)) for row in zip(*lists, strict=True)]


_TIP = ["tip_title", "tip_name", "tip_detail"]


def _view(lat: float, lon: float, extent_m: float, pitch: float = 0.0) -> pdk.ViewState:
    """A view centred on ``(lat, lon)`` whose zoom shows ``extent_m`` metres around it in a
    ~500 px high chart: ``zoom = log2(78271.5 · cos(lat) · 240 / extent)`` (Web Mercator with
    512 px tiles), clamped to [3, 17]; 16 when the extent is 0."""
    if not np.isfinite(extent_m) or extent_m <= 0:
        zoom = 16.0
    else:
        zoom = math.log2(78271.517 * max(math.cos(math.radians(lat)), 1e-6) * 240.0 / extent_m)
        zoom = float(min(max(zoom, 3.0), 17.0))
    return pdk.ViewState(latitude=lat, longitude=lon, zoom=round(zoom, 2), pitch=pitch, bearing=0)


class StaticDeck(pdk.Deck):
    """A :class:`pydeck.Deck` whose JSON is computed once: ``to_json`` serializes on the first
    call (compact separators, UTF-8 kept) and returns the same string afterwards, so a deck kept
    in a cache is not re-serialized on every rerun. Do not change its layers after that."""

    _json_cache: str | None = None

    def to_json(self) -> str:
        if self._json_cache is None:
            spec = json.loads(super().to_json())
            self._json_cache = json.dumps(spec, separators=(",", ":"), ensure_ascii=False)
        return self._json_cache


def _deck(layers: list[pdk.Layer], view: pdk.ViewState, basemap: str) -> StaticDeck:
    """A deck with the tooltip; ``basemap="none"`` gives ``map_provider=None`` and no style
    (works offline); ``"carto"`` CARTO's light style (needs internet in the browser)."""
    if basemap == "carto":
        return StaticDeck(
            layers=layers,
            initial_view_state=view,
            map_provider="carto",
            map_style="light",
            tooltip=TOOLTIP,
        )
    return StaticDeck(layers=layers, initial_view_state=view, map_provider=None, tooltip=TOOLTIP)


def query_deck(
    points: pd.DataFrame,
    query: Mapping[str, Any],
    *,
    basemap: str = "none",
) -> StaticDeck:
    """The map of one query: the :func:`query_points` rows plus the query.

    Layers (every one has an ``id`` and is pickable; bottom to top): ``stacks`` (ColumnLayer,
    one column per stack of size >= 2 among the drawn POIs, at the stack's true coordinate,
    elevation = stack size, its ``doc_id`` the first drawn POI of the stack), ``arcs_<label>``
    (ArcLayer from the query point to each of the model's POIs, only when the query has a
    coordinate), ``gold`` (amber discs), ``model_<label>`` (the model's top k) and ``query``.
    The view is centred on the first located gold POI (else the query, else the POIs), zoomed
    to show every drawn point, tilted 40° so the columns show.

    ``query`` holds ``query_id``, ``text`` and optional ``lat``/``lon``.
    """
    pts = points[points["located"]].copy()
    qlat = _float(query.get("lat"))
    qlon = _float(query.get("lon"))
    q_located = qlat is not None and qlon is not None
    gold = pts[pts["role"] == "gold"]
    if not gold.empty:
        clat, clon = float(gold["lat"].iloc[0]), float(gold["lon"].iloc[0])
    elif q_located:
        clat, clon = float(qlat), float(qlon)  # type: ignore[arg-type]
    elif not pts.empty:
        clat, clon = float(pts["lat"].median()), float(pts["lon"].median())
    else:
        clat, clon = 0.0, 0.0
    lats = pts["x_lat"].to_numpy(dtype=np.float64)
    lons = pts["x_lon"].to_numpy(dtype=np.float64)
    if q_located:
        lats = np.append(lats, qlat)
        lons = np.append(lons, qlon)
    extent = _extent(clat, clon, lats, lons)
    view = _view(clat, clon, extent, pitch=40.0)

    layers: list[pdk.Layer] = []
    stacked = pts[pts["stack_size"] >= 2].drop_duplicates("stack_id").copy()
    if not stacked.empty:
        shown = _stack_names(pts[pts["stack_size"] >= 2].drop_duplicates("doc_id"))
        stacked["tip_title"] = [f"Stack of {int(s)} POIs" for s in stacked["stack_size"]]
        stacked["tip_name"] = escape_text(
            [shown.get(s, "") for s in stacked["stack_id"].tolist()], limit=200
        )
        stacked["tip_detail"] = "click to list every POI of the stack"
        height = max(extent, 200.0) * 0.5
        layers.append(
            pdk.Layer(
                "ColumnLayer",
                id="stacks",
                data=_records(stacked, ["doc_id", "lat", "lon", "stack_size", *_TIP]),
                get_position=["lon", "lat"],
                get_elevation="stack_size",
                elevation_scale=height / float(stacked["stack_size"].max()),
                radius=max(extent / 80.0, 4.0),
                get_fill_color=STACK_COLOR,
                extruded=True,
                pickable=True,
                auto_highlight=True,
            )
        )
    labels = [r for r in dict.fromkeys(pts["role"]) if r != "gold"]
    if q_located:
        for label in labels:
            rows = pts[pts["role"] == label].assign(q_lat=qlat, q_lon=qlon)
            if rows.empty:
                continue
            layers.append(
                pdk.Layer(
                    "ArcLayer",
                    id=f"arcs_{label}",
                    data=_records(
                        rows, ["doc_id", "q_lat", "q_lon", "x_lat", "x_lon", "color", *_TIP]
                    ),
                    get_source_position=["q_lon", "q_lat"],
                    get_target_position=["x_lon", "x_lat"],
                    get_source_color=QUERY_COLOR,
                    get_target_color="color",
                    get_width=1.5,
                    pickable=True,
                )
            )
    point_cols = ["doc_id", "rank", "x_lat", "x_lon", "color", *_TIP]
    if not gold.empty:
        layers.append(
            pdk.Layer(
                "ScatterplotLayer",
                id="gold",
                data=_records(gold, point_cols),
                get_position=["x_lon", "x_lat"],
                get_fill_color="color",
                get_line_color=GOLD_LINE,
                stroked=True,
                line_width_min_pixels=2,
                get_radius=max(extent / 60.0, 3.0),
                radius_min_pixels=9,
                radius_max_pixels=40,
                pickable=True,
                auto_highlight=True,
            )
        )
    for label in labels:
        rows = pts[pts["role"] == label].sort_values("rank", ascending=False)
        if rows.empty:
            continue
        layers.append(
            pdk.Layer(
                "ScatterplotLayer",
                id=f"model_{label}",
                data=_records(rows, point_cols),
                get_position=["x_lon", "x_lat"],
                get_fill_color="color",
                get_line_color=[255, 255, 255, 255],
                stroked=True,
                line_width_min_pixels=1,
                get_radius=max(extent / 120.0, 2.0),
                radius_min_pixels=5,
                radius_max_pixels=20,
                pickable=True,
                auto_highlight=True,
            )
        )
    if q_located:
        qrow = {
            "doc_id": "",
            "lat": qlat,
            "lon": qlon,
            "tip_title": f"Query {escape_text([query.get('query_id', '')])[0]}",
            "tip_name": escape_text([query.get("text", "")])[0],
            "tip_detail": "the query's location",
        }
        layers.append(
            pdk.Layer(
                "ScatterplotLayer",
                id="query",
                data=[qrow],
                get_position=["lon", "lat"],
                get_fill_color=QUERY_COLOR,
                get_line_color=[255, 255, 255, 255],
                stroked=True,
                line_width_min_pixels=2,
                get_radius=max(extent / 60.0, 3.0),
                radius_min_pixels=8,
                radius_max_pixels=30,
                pickable=True,
            )
        )
    return _deck(layers, view, basemap)


def _stack_names(rows: pd.DataFrame, limit: int = 5) -> dict[int, str]:
    """stack_id -> the names of its first ``limit`` rows joined by " | " (raw text)."""
    out: dict[int, list[str]] = {}
    for sid, name in zip(rows["stack_id"].tolist(), rows["name"].tolist(), strict=True):
        names = out.setdefault(int(sid), [])
        if len(names) < limit:
            names.append(str(name))
    return {sid: " | ".join(names) for sid, names in out.items()}


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


# --------------------------------------------------------------------------------------------
# the dataset map
# --------------------------------------------------------------------------------------------


def dataset_deck(
    index: pd.DataFrame, *, basemap: str = "none", max_points: int = MAX_BACKGROUND_POIS
) -> StaticDeck:
    """The dataset's stacks: a ColumnLayer ``dataset_stacks`` (one column per stack of size
    >= 2 at its first POI's coordinate, elevation = stack size, ``doc_id`` = that POI) over a
    ScatterplotLayer ``dataset_pois`` of the POIs (every ``ceil(n / max_points)``-th located
    POI, so large datasets stay light). Both pickable. The view is centred on the median POI
    and zoomed to the 2nd-98th percentile box of the POIs."""
    located = index[index["stack_id"] >= 0]
    layers: list[pdk.Layer] = []
    if located.empty:
        return _deck(layers, _view(0.0, 0.0, 0.0), basemap)
    clat = float(located["lat"].median())
    clon = float(located["lon"].median())
    lo_lat, hi_lat = np.percentile(located["lat"], [2, 98])
    lo_lon, hi_lon = np.percentile(located["lon"], [2, 98])
    extent = _extent(clat, clon, np.array([lo_lat, hi_lat]), np.array([lo_lon, hi_lon]))
    view = _view(clat, clon, extent, pitch=45.0)

    stride = max(1, math.ceil(len(located) / max(max_points, 1)))
    bg = located.iloc[::stride].copy()
    bg["tip_title"] = escape_text(bg["name"])
    bg["tip_name"] = [f"doc {d}" for d in escape_text(bg["doc_id"])]
    bg["tip_detail"] = [
        f"stack of {int(s)} POIs" if s >= 2 else "alone on its coordinate" for s in bg["stack_size"]
    ]
    layers.append(
        pdk.Layer(
            "ScatterplotLayer",
            id="dataset_pois",
            data=_records(bg, ["doc_id", "lat", "lon", *_TIP]),
            get_position=["lon", "lat"],
            get_fill_color=POI_COLOR,
            get_radius=max(extent / 400.0, 5.0),
            radius_min_pixels=1.5,
            radius_max_pixels=6,
            pickable=True,
        )
    )
    stacks = located[located["stack_size"] >= 2]
    if not stacks.empty:
        first = stacks.drop_duplicates("stack_id").copy()
        names = _stack_names(stacks)
        first["tip_title"] = [f"Stack of {int(s)} POIs" for s in first["stack_size"]]
        first["tip_name"] = escape_text(
            [names.get(s, "") for s in first["stack_id"].tolist()], limit=200
        )
        first["tip_detail"] = "click to list every POI of the stack"
        layers.append(
            pdk.Layer(
                "ColumnLayer",
                id="dataset_stacks",
                data=_records(first, ["doc_id", "lat", "lon", "stack_size", *_TIP]),
                get_position=["lon", "lat"],
                get_elevation="stack_size",
                elevation_scale=max(extent, 1000.0) * 0.3 / float(first["stack_size"].max()),
                radius=max(extent / 250.0, 10.0),
                get_fill_color=[200, 60, 40, 200],
                extruded=True,
                pickable=True,
                auto_highlight=True,
            )
        )
    return _deck(layers, view, basemap)


# --------------------------------------------------------------------------------------------
# selection and per-query tables
# --------------------------------------------------------------------------------------------


def selected_doc(selection: Mapping[str, Any] | None) -> str | None:
    """The ``doc_id`` of the object a pydeck selection event holds (``{"indices": {layer:
    [i]}, "objects": {layer: [row]}}``, Streamlit's ``event.selection``); ``None`` when nothing
    with a doc id (e.g. the query point) is selected."""
    if not selection:
        return None
    objects = selection.get("objects") or {}
    for rows in objects.values():
        for row in rows or []:
            if isinstance(row, Mapping):
                doc = row.get("doc_id")
                if doc not in (None, ""):
                    return str(doc)
    return None


DIAGNOSTIC_LABELS = {
    "dist_query_gold_m": "query → nearest gold (m)",
    "dist_query_top1_m": "query → top-1 (m)",
    "gold_stack_size": "gold stack size",
    "first_gold_rank": "first gold rank",
    "indistinguishable": "indistinguishable",
    "n_above_gold_on_gold_coord": "non-gold above gold on its coordinate",
    "stackmates_in_top_k": "gold stack-mates in top k",
}


def query_diagnostics_table(
    diagnostics: Mapping[str, pd.DataFrame], query_id: str, model_names: Mapping[str, str]
) -> pd.DataFrame:
    """One row per model label with the :func:`analysis.geo.geo_diagnostics` columns of
    ``query_id`` (renamed as in :data:`DIAGNOSTIC_LABELS`; distances rounded to 0.1 m).
    Models whose table lacks the query get an empty row."""
    rows = []
    for label, diag in diagnostics.items():
        row: dict[str, Any] = {"model": f"{label}: {model_names.get(label, label)}"}
        hit = diag[diag["query_id"] == query_id]
        for col, name in DIAGNOSTIC_LABELS.items():
            value = hit[col].iloc[0] if len(hit) and col in hit.columns else None
            if value is not None and col.endswith("_m") and pd.notna(value):
                value = round(float(value), 1)
            row[name] = None if value is None or value is pd.NA else value
        rows.append(row)
    out = pd.DataFrame(rows, columns=["model", *DIAGNOSTIC_LABELS.values()])
    for col in ("gold stack size", "first gold rank"):
        out[col] = pd.array(out[col].tolist(), dtype="Int64")
    return out


def strict_vs_twin_aware(
    ranked: pd.DataFrame,
    qrels: pd.DataFrame,
    pois: pd.DataFrame,
    metrics: Sequence[str],
    *,
    tolerance_m: float = 0.0,
    relevance_threshold: int = 1,
) -> pd.DataFrame:
    """Per-query strict and twin-aware values of ``metrics`` (e.g. ``recall@10, ndcg@10``).

    Strict: :func:`analysis.core.metrics.evaluate` of the ranked run (``query_id, doc_id, rank``,
    evaluated in rank order, so the tie policy already applied stays). Twin-aware: the same
    on :func:`analysis.geo.canonicalize_twins` of run and qrels (twins at ``tolerance_m``): a
    retrieved twin of a gold counts as the gold, a gold twin group counts once.

    Returns one row per qrels query: ``query_id``, then ``<metric>`` and
    ``<metric> twin-aware`` for each metric.
    """
    run = ranked[["query_id", "doc_id", "rank"]]
    strict = evaluate(run, qrels, list(metrics), relevance_threshold=relevance_threshold)
    run_c, qrels_c = canonicalize_twins(run, qrels, pois, tolerance_m)
    aware = evaluate(run_c, qrels_c, list(metrics), relevance_threshold=relevance_threshold)
    aware = aware.rename(columns={m: f"{m} twin-aware" for m in metrics})
    return strict.merge(aware, on="query_id", how="left")


def twin_aware_table(
    evaluations: Mapping[str, pd.DataFrame],
    query_id: str,
    metrics: Sequence[str],
    model_names: Mapping[str, str],
) -> pd.DataFrame:
    """Strict vs twin-aware values per model label and metric: ``model, metric, strict,
    twin-aware`` for ``query_id`` and ``mean strict, mean twin-aware`` over every query of
    the dataset (NaN when the query is absent)."""
    rows = []
    for label, ev in evaluations.items():
        hit = ev[ev["query_id"] == query_id]
        for m in metrics:
            aware = f"{m} twin-aware"
            rows.append(
                {
                    "model": f"{label}: {model_names.get(label, label)}",
                    "metric": m,
                    "strict": float(hit[m].iloc[0]) if len(hit) else np.nan,
                    "twin-aware": float(hit[aware].iloc[0]) if len(hit) else np.nan,
                    "mean strict": float(ev[m].mean()) if len(ev) else np.nan,
                    "mean twin-aware": float(ev[aware].mean()) if len(ev) else np.nan,
                }
            )
    cols = ["model", "metric", "strict", "twin-aware", "mean strict", "mean twin-aware"]
    return pd.DataFrame(rows, columns=cols)
