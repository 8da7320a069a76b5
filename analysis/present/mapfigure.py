"""A still image of one query's map for a paper: the query, its gold POIs and the top k of A
and B as a plotly figure in local metres, with every stack spread on a ring.

Positions are metres east and north of the first gold POI (else the query), from WGS84 with an
equirectangular approximation (``x = Δlon · cos(lat₀) · m/°``, ``y = Δlat · m/°``, ``Δlon``
taken the short way round, in [-180°, 180°], so points across the antimeridian stay metres
apart; at a few km the error is far below a pixel); km when the points span more than 3 km.
POIs that share a coordinate (a stack) are drawn on a ring of radius :data:`RING_SHARE` of the
figure's extent around it, with a grey spoke to the true position and the stack's size beside
it, so the stack is visible however far the figure zooms out.

The frame: a list's results can lie tens of km away (a text match in another district) while
the query, the gold and most results sit within a few hundred metres; drawn to scale, the
near ones would merge into one blot. The frame is therefore fitted to the query, the gold POIs
and 3 in 4 of the results (:data:`FRAME_QUANTILE`), with a margin of :data:`FRAME_MARGIN`; a
result more than twice that far is drawn on the frame's edge (10% beyond the farthest other
point) in its own direction, its true distance written after its rank (``4 (61 km)``). The
module never imports streamlit.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from analysis.geo import EARTH_RADIUS_M
from analysis.present.escape import plotly_text
from analysis.present.palette import FONT_FAMILY, TIE_COLOUR

__all__ = ["FRAME_MARGIN", "FRAME_QUANTILE", "RING_SHARE", "map_snapshot_figure"]

#: Ring radius of a stack as a share of the largest distance from the centre.
RING_SHARE = 0.05
#: Share of the results the frame is fitted to (with the query and every gold POI).
FRAME_QUANTILE = 0.75
#: The frame's radius over the farthest point it is fitted to.
FRAME_MARGIN = 1.25
_M_PER_DEG = EARTH_RADIUS_M * math.pi / 180.0
#: (symbol, colour of a hit, colour of a miss) per list label.
_STYLE = {"A": ("circle", "#0054BE", "#8CB9F0"), "B": ("diamond", "#CD5000", "#FCC48C")}
_GOLD, _QUERY = "#FFB300", "#7B3294"


def _local(frame: pd.DataFrame, lat0: float, lon0: float) -> tuple[np.ndarray, np.ndarray]:
    lat = frame["lat"].to_numpy(dtype=float)
    lon = frame["lon"].to_numpy(dtype=float)
    dlon = lon - lon0  # the short way round: across the antimeridian, not 360° back
    dlon = np.where(dlon > 180.0, dlon - 360.0, np.where(dlon < -180.0, dlon + 360.0, dlon))
    x = dlon * math.cos(math.radians(lat0)) * _M_PER_DEG
    return x, (lat - lat0) * _M_PER_DEG


def _spread(pts: pd.DataFrame, radius: float) -> pd.DataFrame:
    """``px``/``py``: each distinct POI of a coordinate shared by several drawn POIs moved to a
    ring around it (gold first, from the top, clockwise); others stay."""
    key = pts["x"].round(3).astype(str) + "," + pts["y"].round(3).astype(str)
    docs = pts.drop_duplicates("doc_id").assign(_key=key)
    n = docs.groupby("_key")["doc_id"].transform("size").to_numpy()
    i = docs.groupby("_key").cumcount().to_numpy()
    angle = 2 * np.pi * i / np.maximum(n, 1)
    shift = np.where(n >= 2, radius, 0.0)
    docs = docs.assign(px=docs["x"] + shift * np.sin(angle), py=docs["y"] + shift * np.cos(angle))
    return pts.merge(docs[["doc_id", "px", "py"]], on="doc_id", how="left")


def map_snapshot_figure(
    points: pd.DataFrame, query: Mapping[str, object], names: Mapping[str, str]
) -> tuple[go.Figure, str, int]:
    """The figure of :func:`analysis.geo.mapdata.query_points` rows (``role``, ``rank``,
    ``doc_id``, ``lat``, ``lon``, ``stack_size``, ``hit``, ``located``) and the query
    (``lat``/``lon`` optional), the unit of its axes (``"m"`` or ``"km"``) and how many
    results are drawn on the frame's edge (module docstring). ``names``: list label -> model
    name. Equal axis scales; ranks written beside A's and B's markers."""
    pts = points[points["located"]].copy()
    spot = pd.DataFrame({"lat": [query.get("lat")], "lon": [query.get("lon")]}, dtype=float)
    located = bool(spot.notna().all(axis=None))
    gold = pts[pts["role"] == "gold"]
    origin = gold.iloc[0] if not gold.empty else spot.iloc[0] if located else None
    lat0 = float(origin["lat"]) if origin is not None else 0.0
    lon0 = float(origin["lon"]) if origin is not None else 0.0
    pts["x"], pts["y"] = _local(pts, lat0, lon0)
    qx, qy = _local(spot, lat0, lon0) if located else (np.empty(0), np.empty(0))
    pts = _frame(pts, float(np.hypot(qx, qy).max()) if located else 0.0)
    extent = float(np.nanmax(np.abs(np.r_[pts["x"], pts["y"], qx, qy, 1.0])))
    scale, unit = (1000.0, "km") if extent > 3000 else (1.0, "m")
    pts = _spread(pts, RING_SHARE * extent)
    fig = go.Figure()
    for _, row in pts.drop_duplicates("doc_id").loc[lambda f: f["px"] != f["x"]].iterrows():
        fig.add_trace(go.Scatter(
            x=[row["x"] / scale, row["px"] / scale], y=[row["y"] / scale, row["py"] / scale],
            mode="lines", line={"color": TIE_COLOUR, "width": 1}, showlegend=False,
            hoverinfo="skip",
        ))  # fmt: skip
    _markers(fig, pts, scale, names)
    if located:
        fig.add_trace(go.Scatter(
            x=[qx[0] / scale], y=[qy[0] / scale], mode="markers", name="query",
            marker={"symbol": "star", "size": 18, "color": _QUERY, "line": {"width": 1}},
        ))  # fmt: skip
    _stack_sizes(fig, pts, scale)
    fig.update_layout(
        xaxis={"title": f"east ({unit})", "zeroline": False},
        yaxis={"title": f"north ({unit})", "zeroline": False, "scaleanchor": "x",
               "scaleratio": 1},
        height=620, width=820, font={"family": FONT_FAMILY},
    )  # fmt: skip
    return fig, unit, int(pts.drop_duplicates("doc_id")["far_m"].notna().sum())


def _frame(pts: pd.DataFrame, query_m: float) -> pd.DataFrame:
    """``pts`` with ``far_m``: the true distance of a result drawn on the frame's edge (module
    docstring), NaN for the others; those results' ``x``/``y`` moved onto the edge."""
    dist = np.hypot(pts["x"].to_numpy(dtype=float), pts["y"].to_numpy(dtype=float))
    listed = (pts["role"] != "gold").to_numpy()
    near = [query_m, 1.0, *dist[~listed]]
    if listed.any():
        near.append(float(np.nanquantile(dist[listed], FRAME_QUANTILE)))
    edge = FRAME_MARGIN * float(np.nanmax(near))
    far = listed & (dist > 2 * edge)
    if not far.any():
        return pts.assign(far_m=np.nan)
    rim = 1.1 * max(edge, float(np.nanmax(dist[~far], initial=0.0)))
    shrink = np.where(far, rim / np.where(far, dist, 1.0), 1.0)
    return pts.assign(x=pts["x"] * shrink, y=pts["y"] * shrink, far_m=np.where(far, dist, np.nan))


def _distance(metres: float) -> str:
    if metres >= 10_000:
        return f"{metres / 1000:,.0f} km"
    return f"{metres / 1000:.1f} km" if metres >= 1000 else f"{metres:,.0f} m"


def _markers(fig: go.Figure, pts: pd.DataFrame, scale: float, names: Mapping[str, str]) -> None:
    """Gold rings, then each list's markers (dark = relevant, pale = not) with their ranks."""
    gold = pts[pts["role"] == "gold"]
    if not gold.empty:
        fig.add_trace(go.Scatter(
            x=gold["px"] / scale, y=gold["py"] / scale, mode="markers", name="gold POI",
            marker={"symbol": "circle-open", "size": 20, "color": _GOLD, "line": {"width": 3}},
        ))  # fmt: skip
    for label, (symbol, hit, miss) in _STYLE.items():
        rows = pts[pts["role"] == label]
        if rows.empty:
            continue
        name = plotly_text(f"{label}: {names.get(label, label)}")
        text, where = _rank_labels(rows, "top right" if label == "A" else "bottom right")
        fig.add_trace(go.Scatter(
            x=rows["px"] / scale, y=rows["py"] / scale, mode="markers+text", name=name,
            text=text, textposition=where, cliponaxis=False,
            marker={"symbol": symbol, "size": 10, "line": {"width": 1, "color": "white"},
                    "color": [hit if h else miss for h in rows["hit"]]},
        ))  # fmt: skip


def _rank_labels(rows: pd.DataFrame, near: str) -> tuple[list[str], list[str]]:
    """Each marker's text and its position: the rank beside a marker drawn to scale
    (``near``); on the frame's edge, the ranks of the results drawn at one spot (to 1% of
    the frame) joined on the first, with the distance, written towards the inside."""
    far = rows["far_m"].to_numpy(dtype=float)
    size = float(np.nanmax(np.abs(np.r_[rows["px"], rows["py"], 1.0])))
    spot = (
        (rows["px"] / (0.01 * size)).round().astype(str)
        + ","
        + (rows["py"] / (0.01 * size)).round().astype(str)
    )
    text, where, done = [], [], set()
    for i, (rank, key) in enumerate(zip(rows["rank"], spot, strict=True)):
        if np.isnan(far[i]):
            text.append(str(int(rank)))
            where.append(near)
            continue
        same = [j for j in range(len(rows)) if spot.iloc[j] == key and not np.isnan(far[j])]
        ranks = ", ".join(str(int(rows["rank"].iloc[j])) for j in same)
        text.append("" if key in done else f"{ranks} ({_distance(far[i])})")
        done.add(key)
        x, y = float(rows["px"].iloc[i]), float(rows["py"].iloc[i])
        where.append(f"{'bottom' if y > 0 else 'top'} {'left' if x > 0 else 'right'}")
    return text, where


def _stack_sizes(fig: go.Figure, pts: pd.DataFrame, scale: float) -> None:
    """The size of every stack a drawn POI sits on, as text at the stack's true position."""
    stacks = pts[pts["stack_size"] >= 2].drop_duplicates("stack_id")
    if stacks.empty:
        return
    fig.add_trace(go.Scatter(
        x=stacks["x"] / scale, y=stacks["y"] / scale, mode="markers+text",
        name="stack: ×n POIs", text=[f"×{int(s)}" for s in stacks["stack_size"]],
        textposition="top left", marker={"symbol": "square-open", "size": 7,
                                             "color": "#444"},
    ))  # fmt: skip
