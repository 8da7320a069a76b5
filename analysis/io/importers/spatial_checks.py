"""Data checks for projected spatial benchmarks.

* **A UTM zone per point (LIST).** LIST's preprocessing projected every point with the UTM zone
  of its own longitude. A city that straddles a zone boundary (Hangzhou, 120°E: zones 50/51)
  then has eastings from two planes: points just west of the boundary sit near the eastern edge
  of the western zone (easting > 600 km), points just east of it near the western edge of the
  eastern zone (easting < 400 km). Converted with one zone, the second group lands ~575 km
  away (LIST's hard-coded maximum distance of 598,971 m is that artefact).
  :func:`utm_zone_split` detects it: eastings fall into those two edge groups, and converting
  the low group with the next zone east puts both groups side by side. Which two zones is
  ambiguous from the numbers alone (zones N-1/N fit as well as N/N+1): the given CRS is taken
  to be the zone of most points (on a tie, the western of the two). The importer then
  converts each group with the zone it was projected in (the inverse of what LIST did) and says
  so; distances are haversine on WGS84 afterwards.
* **Swapped axes (GeoBloom: northing first)** are refused by the spatial loaders themselves
  (:func:`analysis.io.spatial._source._check_axis_order`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from analysis.geo import haversine_m, to_wgs84

LOW_EDGE_M = 400_000.0
HIGH_EDGE_M = 600_000.0
NEIGHBOUR_KM = 150.0


@dataclass(frozen=True)
class ZoneSplit:
    """Points projected in two UTM zones: ``low`` marks the points of ``low_crs`` (eastings near
    the zone's western edge), the others belong to ``high_crs``."""

    low_crs: str
    high_crs: str
    apart_km: float


def _utm(crs: str) -> tuple[int, bool] | None:
    from pyproj import CRS  # here: importing the importers needs no pyproj (the geo extra)

    try:
        zone = CRS.from_user_input(crs).utm_zone
    except Exception:  # pyproj raises several types; the loaders already validated the CRS
        return None
    if not zone:
        return None
    return int(zone[:-1]), zone[-1].upper() == "N"


def _epsg(zone: int, north: bool) -> str:
    return f"EPSG:{32600 + zone if north else 32700 + zone}"


def _centre(lat: npt.NDArray[np.float64], lon: npt.NDArray[np.float64]) -> tuple[float, float]:
    return float(np.median(lat)), float(np.median(lon))


def utm_zone_split(
    x: npt.NDArray[np.float64], y: npt.NDArray[np.float64], crs: str
) -> ZoneSplit | None:
    """Detect a UTM zone per point (see the module docstring); None when the CRS is not UTM or
    the eastings do not show the two-edge pattern."""
    found = _utm(crs)
    if found is None or len(x) == 0:
        return None
    zone, north = found
    low = x < LOW_EDGE_M
    high = x > HIGH_EDGE_M
    if not low.any() or not high.any() or (low | high).sum() < len(x):
        return None
    lat_1, lon_1 = to_wgs84(x, y, crs)
    apart = haversine_m(*_centre(lat_1[low], lon_1[low]), *_centre(lat_1[high], lon_1[high]))
    if apart / 1000 <= 3 * NEIGHBOUR_KM:
        return None
    found_splits = []
    for west in (zone, zone - 1):  # the high group is in `west`, the low one in `west + 1`
        if west < 1 or west + 1 > 60:
            continue
        high_crs, low_crs = _epsg(west, north), _epsg(west + 1, north)
        lat_h, lon_h = to_wgs84(x[high], y[high], high_crs)
        lat_l, lon_l = to_wgs84(x[low], y[low], low_crs)
        together = haversine_m(*_centre(lat_h, lon_h), *_centre(lat_l, lon_l)) / 1000
        if together < NEIGHBOUR_KM:
            in_given = int(high.sum()) if west == zone else int(low.sum())
            found_splits.append((in_given, ZoneSplit(low_crs, high_crs, float(apart) / 1000)))
    if not found_splits:
        return None
    # Both readings (the given zone and the next one east, or the one west and the given one)
    # put the groups side by side; the coordinates cannot tell them apart. The given CRS is
    # taken to be the zone of most points (ties: the given zone is the western one).
    return max(found_splits, key=lambda item: item[0])[1]


def convert_split(
    x: npt.NDArray[np.float64], y: npt.NDArray[np.float64], split: ZoneSplit
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """WGS84 ``(lat, lon)`` with each point converted in the zone its easting belongs to."""
    lat = np.empty(len(x), dtype=np.float64)
    lon = np.empty(len(x), dtype=np.float64)
    low = x < LOW_EDGE_M
    lat[low], lon[low] = to_wgs84(x[low], y[low], split.low_crs)
    lat[~low], lon[~low] = to_wgs84(x[~low], y[~low], split.high_crs)
    return lat, lon
