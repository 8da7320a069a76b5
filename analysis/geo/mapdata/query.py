"""One query on the map: its ranked POIs as points, tooltips and the deck."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import pydeck as pdk

from analysis.geo.mapdata.base import (
    _TIP,
    GOLD_COLOR,
    GOLD_LINE,
    KEEP_RANKS,
    MAX_K,
    MODEL_COLORS,
    QUERY_COLOR,
    STACK_COLOR,
    StaticDeck,
    _deck,
    _extent,
    _float,
    _records,
    _stack_layer,
    _stack_tips,
    _view,
    escape_text,
    jitter,
    unwrap_lon,
)
from analysis.geo.mapdata.context import label_row

WHITE: list[int] = [255, 255, 255, 255]
#: Radius (px) of the ring on which the drawn POIs of a stack are spread, for up to
#: :data:`RING_MIN` of them; each further POI adds :data:`RING_STEP_PX`.
RING_PX = 18.0
RING_MIN = 6
RING_STEP_PX = 3.0
#: Glyph of a stack member on the ring (drawn as text, so its offset is in pixels).
RING_GLYPH = "●"
BADGE_TEXT: list[int] = [20, 20, 20, 255]


def stack_ring(points: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The drawn POIs of every stack spread on a ring in display pixels, and one count badge
    per stack, so a stack stays visible at every zoom (points a few metres apart merge into
    one disc when zoomed out).

    ``points``: :func:`query_points` rows. A stack is a coordinate of ``stack_size >= 2`` POIs
    (of the whole dataset) that at least one drawn, located POI sits on.

    Returns:
        ``(ring, badges)``. ``ring``: one row per distinct drawn POI of a stack holding at least
        two of them (gold first, then by best rank, then doc id), at the stack's true
        coordinate, with ``offset`` = ``[r·cos θ, r·sin θ]`` px (``θ`` from the top, clockwise,
        evenly spaced; ``r`` = :data:`RING_PX`, more for large stacks), its ``color`` and
        tooltip. ``badges``: one row per stack with ``label`` = the stack size (every POI at
        the coordinate, drawn or not) and the stack's tooltip; ``doc_id`` is its first drawn
        POI (the badge itself lets clicks through to the POIs under it, whose selection lists
        the whole stack).
    """
    pts = points[points["located"] & (points["stack_size"] >= 2)].copy()
    columns = ["doc_id", "lat", "lon", "color", "offset", *_TIP]
    if pts.empty:
        return pd.DataFrame(columns=columns), pd.DataFrame(columns=["doc_id", "lat", "lon"])
    pts["_gold"] = (pts["role"] != "gold").astype(int)
    pts["_rank"] = pts["rank"].where(pts["role"] != "gold", 0)
    pts = pts.sort_values(["stack_id", "_gold", "_rank", "doc_id"], kind="stable")
    docs = pts.drop_duplicates("doc_id")  # a POI drawn as gold and in a list: once, as gold
    size = docs.groupby("stack_id")["doc_id"].transform("size").to_numpy()
    slot = docs.groupby("stack_id").cumcount().to_numpy()
    radius = RING_PX + RING_STEP_PX * np.maximum(size - RING_MIN, 0)
    angle = 2 * np.pi * slot / np.maximum(size, 1)
    docs = docs.assign(
        offset=[
            [round(float(r * np.sin(a)), 2), round(float(-r * np.cos(a)), 2)]
            for r, a in zip(radius, angle, strict=True)
        ]
    )
    ring = docs.loc[size >= 2, columns]
    first = docs.drop_duplicates("stack_id").copy()
    badges = _stack_tips(first, docs)
    badges["label"] = badges["stack_size"].astype(int).astype(str)
    return ring.reset_index(drop=True), badges.reset_index(drop=True)


def _ring_labels(points: pd.DataFrame) -> list[dict[str, Any]]:
    """Label rows of :func:`stack_ring` (:func:`~analysis.geo.mapdata.context.label_row`): the
    members as :data:`RING_GLYPH` in their colour at their pixel offsets, then each stack's size
    on a white badge at its coordinate. Every row carries a ``doc_id``: a click on a member
    selects it, one on a badge the stack's first drawn POI; either lists the whole stack."""
    ring, badges = stack_ring(points)
    if badges.empty:  # no stack: no ring either
        return []
    rows = [
        label_row([r["lon"], r["lat"]], RING_GLYPH, 15, r["color"], _tip_of(r), offset=r["offset"])
        for r in _records(ring, ["doc_id", "lat", "lon", "color", "offset", *_TIP])
    ]
    rows += [
        label_row([r["lon"], r["lat"]], r["label"], 13, BADGE_TEXT, _tip_of(r), badge=True)
        for r in _records(badges, ["doc_id", "lat", "lon", "label", *_TIP])
    ]
    return rows


def _tip_of(row: Mapping[str, Any]) -> dict[str, Any]:
    return {key: row[key] for key in ("doc_id", *_TIP)}


@dataclass(frozen=True)
class PointStyle:
    """How a points layer draws: ``fill`` (a colour or a column name), the outline ``line``
    colour and width ``line_px``, the ``radius`` in metres clamped to ``radius_px`` (min, max)
    pixels; ``highlight`` lights the point under the pointer."""

    fill: object
    line: list[int]
    line_px: int
    radius: float
    radius_px: tuple[int, int]
    highlight: bool = True


def _points_layer(
    layer_id: str, data: list[dict[str, Any]], position: list[str], style: PointStyle
) -> pdk.Layer:
    """A pickable, outlined ScatterplotLayer drawn as ``style`` says."""
    extra = {"auto_highlight": True} if style.highlight else {}
    return pdk.Layer(
        "ScatterplotLayer",
        id=layer_id,
        data=data,
        get_position=position,
        get_fill_color=style.fill,
        get_line_color=style.line,
        stroked=True,
        line_width_min_pixels=style.line_px,
        get_radius=style.radius,
        radius_min_pixels=style.radius_px[0],
        radius_max_pixels=style.radius_px[1],
        pickable=True,
        **extra,
    )


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


def query_deck(
    points: pd.DataFrame,
    query: Mapping[str, Any],
    *,
    basemap: str = "none",
    context: bool = True,
    datum: str = "wgs84",
    height_px: int = 520,
) -> StaticDeck:
    """The map of one query: the :func:`query_points` rows plus the query, top-down (pitch 0),
    over the offline context layer (``context``; ``datum`` = the POIs' datum, ``height_px`` =
    the chart's height, for the extent of the graticule and scale bar).

    Layers (every one has an ``id`` and is pickable; bottom to top): the context layers
    (``context_*``), ``stacks`` (ColumnLayer, one column per stack of size >= 2 among the drawn
    POIs, at the stack's true coordinate, elevation = stack size, its ``doc_id`` the first
    drawn POI of the stack), ``arcs_<label>`` (ArcLayer from the query point to each of the
    model's POIs, only when the query has a coordinate), ``gold`` (amber discs),
    ``model_<label>`` (the model's top k), ``query``, and on top the map's one TextLayer
    ``labels``: the district names and scale bar of the context, then the rows of
    :func:`stack_ring`, which spread the drawn POIs of each stack on a ring in pixels around it
    and show its size on a badge, at every zoom.
    The view is centred on the first located gold POI (else the query, else the POIs) and
    zoomed so every drawn point (the query, the gold and both top-k lists) is in view; it is
    top-down (tilt with Ctrl + drag to see the columns' heights). Longitudes are drawn within
    180° of the centre's (:func:`~analysis.geo.mapdata.base.unwrap_lon`), so points across the
    antimeridian sit beside it.

    ``query`` holds ``query_id``, ``text`` and optional ``lat``/``lon`` (a point outside
    [-90, 90] x [-180, 180] is not drawn, as one without coordinates).
    """
    pts = points[points["located"]].copy()
    qlat, qlon = _float(query.get("lat")), _float(query.get("lon"))
    where = None
    if qlat is not None and qlon is not None and abs(qlat) <= 90.0 and abs(qlon) <= 180.0:
        where = (qlat, qlon)  # a point off the globe would stop the browser drawing the map
    clat, clon = _centre(pts, pts[pts["role"] == "gold"], where)
    pts["lon"], pts["x_lon"] = unwrap_lon(pts["lon"], clon), unwrap_lon(pts["x_lon"], clon)
    if where is not None:
        where = (where[0], float(unwrap_lon(where[1], clon)))
    gold = pts[pts["role"] == "gold"]
    lats = pts["x_lat"].to_numpy(dtype=np.float64)
    lons = pts["x_lon"].to_numpy(dtype=np.float64)
    if where is not None:
        lats = np.append(lats, where[0])
        lons = np.append(lons, where[1])
    extent = _extent(clat, clon, lats, lons)
    view = _view(clat, clon, extent, pitch=0.0)
    labels = [r for r in dict.fromkeys(pts["role"]) if r != "gold"]
    layers = [
        *_stacks_layer(pts, extent),
        *_arc_layers(pts, labels, where),
        *_drawn_layers(pts, gold, labels, extent),
    ]
    if where is not None:
        layers.append(_query_layer(query, where, extent))
    return _deck(
        layers,
        view,
        basemap,
        labels=_ring_labels(pts),
        context=context,
        datum=datum,
        height_px=height_px,
    )


def _centre(
    pts: pd.DataFrame, gold: pd.DataFrame, where: tuple[float, float] | None
) -> tuple[float, float]:
    """The view's centre: the first located gold POI, else the query, else the POIs' median
    (longitudes taken within 180° of the first POI's), else (0, 0)."""
    if not gold.empty:
        return float(gold["lat"].iloc[0]), float(gold["lon"].iloc[0])
    if where is not None:
        return float(where[0]), float(where[1])
    if not pts.empty:
        lon = unwrap_lon(pts["lon"], float(pts["lon"].iloc[0]))
        return float(pts["lat"].median()), float(unwrap_lon(np.median(lon), 0.0))
    return 0.0, 0.0


def _stacks_layer(pts: pd.DataFrame, extent: float) -> list[pdk.Layer]:
    """The ``stacks`` ColumnLayer (one column per stack of size >= 2 among the drawn POIs);
    none without stacks."""
    members = pts[pts["stack_size"] >= 2]
    if members.empty:
        return []
    first = members.drop_duplicates("stack_id").copy()
    height = max(extent, 200.0) * 0.5
    return [
        _stack_layer(
            "stacks",
            first,
            members.drop_duplicates("doc_id"),
            height_m=height,
            radius_m=max(extent / 80.0, 4.0),
            color=STACK_COLOR,
        )
    ]


def _arc_layers(
    pts: pd.DataFrame, labels: Sequence[str], where: tuple[float, float] | None
) -> list[pdk.Layer]:
    """One ``arcs_<label>`` ArcLayer per model, from the query's point to each of its POIs;
    none when the query has no coordinate."""
    if where is None:
        return []
    qlat, qlon = where
    layers = []
    for label in labels:
        rows = pts[pts["role"] == label].assign(q_lat=qlat, q_lon=qlon)
        if rows.empty:
            continue
        layers.append(
            pdk.Layer(
                "ArcLayer",
                id=f"arcs_{label}",
                data=_records(rows, ["doc_id", "q_lat", "q_lon", "x_lat", "x_lon", "color", *_TIP]),
                get_source_position=["q_lon", "q_lat"],
                get_target_position=["x_lon", "x_lat"],
                get_source_color=QUERY_COLOR,
                get_target_color="color",
                get_width=1.5,
                pickable=True,
            )
        )
    return layers


def _drawn_layers(
    pts: pd.DataFrame, gold: pd.DataFrame, labels: Sequence[str], extent: float
) -> list[pdk.Layer]:
    """``gold`` (amber discs) under each ``model_<label>`` (the model's top k, the best rank
    drawn last); a layer without rows is left out."""
    point_cols = ["doc_id", "rank", "x_lat", "x_lon", "color", *_TIP]
    drawn = [("gold", gold, PointStyle("color", GOLD_LINE, 2, max(extent / 60.0, 3.0), (9, 40)))]
    for label in labels:
        rows = pts[pts["role"] == label].sort_values("rank", ascending=False)
        style = PointStyle("color", WHITE, 1, max(extent / 120.0, 2.0), (5, 20))
        drawn.append((f"model_{label}", rows, style))
    return [
        _points_layer(layer_id, _records(rows, point_cols), ["x_lon", "x_lat"], style)
        for layer_id, rows, style in drawn
        if not rows.empty
    ]


def _query_layer(query: Mapping[str, Any], where: tuple[float, float], extent: float) -> pdk.Layer:
    """The ``query`` point at the query's coordinate, with its id and text as the tooltip."""
    qrow = {
        "doc_id": "",
        "lat": where[0],
        "lon": where[1],
        "tip_title": f"Query {escape_text([query.get('query_id', '')])[0]}",
        "tip_name": escape_text([query.get("text", "")])[0],
        "tip_detail": "the query's location",
    }
    style = PointStyle(QUERY_COLOR, WHITE, 2, max(extent / 60.0, 3.0), (8, 30), highlight=False)
    return _points_layer("query", [qrow], ["lon", "lat"], style)
