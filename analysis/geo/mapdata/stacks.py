"""Stacks of POIs as tables, the stack-size histogram and the dataset map."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import pydeck as pdk

from analysis.geo import coordinate_stacks
from analysis.geo.mapdata.base import (
    _TIP,
    MAX_BACKGROUND_POIS,
    POI_COLOR,
    TIP_CHARS,
    StaticDeck,
    _deck,
    _extent,
    _records,
    _stack_layer,
    _view,
    escape_text,
    unwrap_lon,
)
from analysis.geo.mapdata.context import MAP_FONT

# --------------------------------------------------------------------------------------------
# stacks as tables
# --------------------------------------------------------------------------------------------


def poi_index(pois: pd.DataFrame, tolerance_m: float = 0.0) -> pd.DataFrame:
    """:func:`analysis.geo.coordinate_stacks` of ``pois`` (``doc_id, name, text, lat, lon``),
    indexed by ``doc_id`` as text (first row kept for a repeated id), with ``name`` and ``text``
    as strings (``name`` falls back to ``text``, then to the id) and ``lat``/``lon`` as floats
    (a table may hold them as text, e.g. quoted numbers in JSON)."""
    stacks = coordinate_stacks(pois, tolerance_m)
    for axis in ("lat", "lon"):
        stacks[axis] = pd.to_numeric(stacks[axis]).to_numpy(dtype=np.float64, na_value=np.nan)
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
    number of stacks of that size (log scale; singletons included as size 1).

    Readable axes: the log axis is labelled at powers of ten only (1, 10, 100, 1k, ...), so no
    labels overlap; x ticks are whole numbers (one per size up to 20 sizes, else automatic);
    the font stack names a CJK font (:data:`~analysis.geo.mapdata.context.MAP_FONT`)."""
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
        yaxis_title="Stacks (log scale)",
        height=320,
        margin={"l": 10, "r": 10, "t": 40, "b": 10},
        title=f"Stack sizes (tolerance {report.get('tolerance_m', 0.0):g} m)",
        font={"family": MAP_FONT},
        bargap=0.15,
    )
    fig.update_yaxes(type="log", dtick=1, tickformat="~s", minor={"showgrid": False})
    if 0 < len(sizes) <= 20:
        fig.update_xaxes(tickmode="array", tickvals=sizes, ticktext=[str(s) for s in sizes])
    else:
        fig.update_xaxes(tickformat="d")
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
# the dataset map
# --------------------------------------------------------------------------------------------


def dataset_deck(
    index: pd.DataFrame,
    *,
    basemap: str = "none",
    max_points: int = MAX_BACKGROUND_POIS,
    context: bool = True,
    datum: str = "wgs84",
    height_px: int = 420,
) -> StaticDeck:
    """The dataset's stacks: a ColumnLayer ``dataset_stacks`` (one column per stack of size
    >= 2 at its first POI's coordinate, elevation = stack size, ``doc_id`` = that POI) over a
    ScatterplotLayer ``dataset_pois`` of the POIs (every ``ceil(n / max_points)``-th located
    POI, so large datasets stay light). Both pickable. The view is centred on the median POI
    and zoomed to the 2nd-98th percentile box of the POIs, top-down (pitch 0), over the offline
    context layer (see :func:`analysis.geo.mapdata.query.query_deck`). Longitudes are drawn
    within 180° of the centre's, so POIs across the antimeridian sit beside it."""
    located = index[index["stack_id"] >= 0]
    layers: list[pdk.Layer] = []
    if located.empty:
        return _deck(layers, _view(0.0, 0.0, 0.0), basemap)
    # longitudes within 180° of the first POI's, then of the centre's (the antimeridian)
    located = located.assign(lon=unwrap_lon(located["lon"], float(located["lon"].iloc[0])))
    clat = float(located["lat"].median())
    clon = float(unwrap_lon(located["lon"].median(), 0.0))
    located = located.assign(lon=unwrap_lon(located["lon"], clon))
    lo_lat, hi_lat = np.percentile(located["lat"], [2, 98])
    lo_lon, hi_lon = np.percentile(located["lon"], [2, 98])
    extent = _extent(clat, clon, np.array([lo_lat, hi_lat]), np.array([lo_lon, hi_lon]))
    view = _view(clat, clon, extent, pitch=0.0)

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
        layers.append(
            _stack_layer(
                "dataset_stacks",
                stacks.drop_duplicates("stack_id").copy(),
                stacks,
                height_m=max(extent, 1000.0) * 0.3,
                radius_m=max(extent / 250.0, 10.0),
                color=[200, 60, 40, 200],
            )
        )
    return _deck(layers, view, basemap, context=context, datum=datum, height_px=height_px)
