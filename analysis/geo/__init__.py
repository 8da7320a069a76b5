"""Layer 1 — geometry (distances, one CRS per dataset), coordinate stacks, twins, map data.

May import :mod:`analysis.core`. The geometry functions are re-exported here.
"""

from analysis.geo.diagnostics import GeoIndex, geo_diagnostics, geo_index, model_geo_columns
from analysis.geo.geometry import (
    EARTH_RADIUS_M,
    canonicalize_twins,
    coordinate_stacks,
    haversine_m,
    normalize_text,
    stack_report,
    to_wgs84,
    twins,
)
from analysis.geo.ranked import ranked_geo_columns

__all__ = [
    "EARTH_RADIUS_M",
    "GeoIndex",
    "canonicalize_twins",
    "coordinate_stacks",
    "geo_diagnostics",
    "geo_index",
    "haversine_m",
    "model_geo_columns",
    "normalize_text",
    "ranked_geo_columns",
    "stack_report",
    "to_wgs84",
    "twins",
]
