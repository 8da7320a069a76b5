"""Tests for analysis.present.mapfigure: the still map of one query in local metres."""

from __future__ import annotations

import json

import pandas as pd

from analysis.geo import mapdata as geomap
from analysis.present.mapfigure import map_snapshot_figure


def test_points_across_the_antimeridian_are_drawn_metres_apart() -> None:
    east, west = 179.99995, -179.99995  # 11 m apart, across the antimeridian
    pois = pd.DataFrame({"doc_id": ["g", "w1", "w2"], "name": ["g", "w1", "w2"],
                         "lat": [0.0, 0.0, 0.0001], "lon": [east, west, west]})  # fmt: skip
    ranking = pd.DataFrame({"doc_id": ["w1", "w2"], "rank": [1, 2]})
    points = geomap.query_points(["g"], {"A": ranking}, geomap.poi_index(pois), k=10)
    fig, unit, far = map_snapshot_figure(points, {"lat": 0.0, "lon": west}, {"A": "bm25"})
    assert (unit, far) == ("m", 0)
    spec = json.loads(fig.to_json())
    xs = [x for trace in spec["data"] for x in geomap_values(trace.get("x", []))]
    assert xs
    assert max(abs(x) for x in xs) < 30.0  # metres east of the gold, not 40,000 km


def geomap_values(value: object) -> list[float]:
    """A plotly JSON array: a list, or a typed array ``{"dtype", "bdata"}``."""
    if isinstance(value, dict) and "bdata" in value:
        import base64

        import numpy as np

        return np.frombuffer(base64.b64decode(value["bdata"]), dtype=value["dtype"]).tolist()
    return [float(v) for v in value]
