"""WGS84 <-> GCJ-02, the two datums of Chinese POI data.

GCJ-02 ("Mars coordinates") is the obfuscated datum that Chinese map services (Amap/Gaode,
Tencent, Meituan's maps) publish; it differs from WGS84 (GPS, OpenStreetMap, EPSG:4326) by a
smooth, position-dependent shift of 100-700 m inside China (about +0.006° in longitude and
+0.001° in latitude around Beijing, i.e. ~500 m east and ~150 m north). Outside China's bounding
box (longitude 72.004-137.8347, latitude 0.8293-55.8271) the two coincide.

* :func:`wgs84_to_gcj02`: the published forward formula (Krasovsky 1940 ellipsoid,
  ``a = 6378245``, ``e^2 = 0.00669342162296594323``), vectorized.
* :func:`gcj02_to_wgs84`: its inverse by fixed-point iteration (``w <- w - (f(w) - g)``, five
  steps); the round trip is exact to better than 1e-7 degrees (~1 cm) inside the bounding box.
  Within about 0.001° of its edge the shift moves some points across it, so two WGS84 points
  there can have one GCJ-02 image and the inverse is off by up to 0.01°.

Used to draw the offline context layer (stored in WGS84) over POIs in either datum.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

__all__ = ["DATUMS", "gcj02_to_wgs84", "in_china", "wgs84_to_gcj02"]

#: Datums a dataset's coordinates can be in.
DATUMS: tuple[str, ...] = ("wgs84", "gcj02")
_A = 6378245.0
_EE = 0.00669342162296594323

Array = npt.NDArray[np.float64]


def in_china(lon: npt.ArrayLike, lat: npt.ArrayLike) -> npt.NDArray[np.bool_]:
    """True inside the bounding box where GCJ-02 differs from WGS84."""
    lo, la = np.asarray(lon, dtype=np.float64), np.asarray(lat, dtype=np.float64)
    return (lo >= 72.004) & (lo <= 137.8347) & (la >= 0.8293) & (la <= 55.8271)


def _offset(lon: Array, lat: Array) -> tuple[Array, Array]:
    x, y = lon - 105.0, lat - 35.0
    pi = np.pi
    common = (20.0 * np.sin(6.0 * x * pi) + 20.0 * np.sin(2.0 * x * pi)) * 2.0 / 3.0
    dlat = -100.0 + 2.0 * x + 3.0 * y + 0.2 * y * y + 0.1 * x * y + 0.2 * np.sqrt(np.abs(x))
    dlat += common
    dlat += (20.0 * np.sin(y * pi) + 40.0 * np.sin(y / 3.0 * pi)) * 2.0 / 3.0
    dlat += (160.0 * np.sin(y / 12.0 * pi) + 320.0 * np.sin(y * pi / 30.0)) * 2.0 / 3.0
    dlon = 300.0 + x + 2.0 * y + 0.1 * x * x + 0.1 * x * y + 0.1 * np.sqrt(np.abs(x))
    dlon += common
    dlon += (20.0 * np.sin(x * pi) + 40.0 * np.sin(x / 3.0 * pi)) * 2.0 / 3.0
    dlon += (150.0 * np.sin(x / 12.0 * pi) + 300.0 * np.sin(x / 30.0 * pi)) * 2.0 / 3.0
    rad = lat / 180.0 * pi
    magic = 1.0 - _EE * np.sin(rad) ** 2
    sqrt_magic = np.sqrt(magic)
    dlat = dlat * 180.0 / ((_A * (1.0 - _EE)) / (magic * sqrt_magic) * pi)
    dlon = dlon * 180.0 / (_A / sqrt_magic * np.cos(rad) * pi)
    inside = in_china(lon, lat)
    return np.where(inside, dlon, 0.0), np.where(inside, dlat, 0.0)


def wgs84_to_gcj02(lon: npt.ArrayLike, lat: npt.ArrayLike) -> tuple[Array, Array]:
    """``(lon, lat)`` in GCJ-02 of WGS84 coordinates (unchanged outside China)."""
    lo, la = np.asarray(lon, dtype=np.float64), np.asarray(lat, dtype=np.float64)
    dlon, dlat = _offset(lo, la)
    return lo + dlon, la + dlat


def gcj02_to_wgs84(lon: npt.ArrayLike, lat: npt.ArrayLike) -> tuple[Array, Array]:
    """``(lon, lat)`` in WGS84 of GCJ-02 coordinates (iterated inverse, ~1 cm)."""
    g_lon, g_lat = np.asarray(lon, dtype=np.float64), np.asarray(lat, dtype=np.float64)
    w_lon, w_lat = g_lon.copy(), g_lat.copy()
    for _ in range(5):
        f_lon, f_lat = wgs84_to_gcj02(w_lon, w_lat)
        w_lon, w_lat = w_lon - (f_lon - g_lon), w_lat - (f_lat - g_lat)
    return w_lon, w_lat
