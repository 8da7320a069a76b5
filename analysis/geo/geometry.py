"""Geo diagnostics for spatio-textual POI retrieval: distances, coordinate stacks, twins.

Spatial benchmarks hide a failure mode that plain metrics do not show: many POIs share one
coordinate (GeoGLUE shifts coordinates for privacy, so thousands of POIs sit on a few hundred
points), and some POIs are *twins* -- the same text at the same coordinate under another id. A
retriever cannot tell such POIs apart by location, and a twin of the gold is arguably as good as
the gold. This module finds both per dataset (stacks, twins); the per-query diagnostics built
on them are in :mod:`analysis.geo.diagnostics`.

Conventions (the project's column vocabulary):

* POIs: ``doc_id, name, text, lat, lon`` (+ anything). Ids are strings; coordinates are WGS84
  degrees. A POI with a missing (NaN) ``lat`` or ``lon`` belongs to no stack and has no twin.
* queries: ``query_id, text, lat, lon, ...``; qrels: ``query_id, doc_id, relevance`` (relevant
  means ``relevance >= 1``); ranked runs: ``query_id, doc_id, score, rank`` (rank 1-based, one row
  per document per query, as produced by ``analysis.core.metrics.rank_run``).

Distances are great-circle distances on a sphere of the WGS84 mean radius ``R = 6,371,008.8 m``
(IUGG arithmetic mean radius ``R1 = (2a + b) / 3``). The spherical model differs from the
ellipsoidal (Vincenty/Karney) distance by at most ~0.5 %, far below anything that matters for
"how far was the retrieved POI from the gold".

Projected coordinates are converted with pyproj using **one CRS per dataset**. LIST's
preprocessing picked the UTM zone of each point separately; two POIs 2 km apart on either side of
120°E then get eastings from zone 50 and zone 51, whose planes are centred 6° apart, so treating
the pair as one plane puts them ~575 km apart. Converting every point of a dataset with the same
CRS (and only then comparing) avoids this; :func:`to_wgs84` therefore takes one CRS for a whole
array.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt
import pandas as pd
import pyarrow.compute as pc

if TYPE_CHECKING:
    from pyproj import CRS

from analysis.core import arrow as rk
from analysis.core.errors import InputError
from analysis.geo.linkage import single_linkage

__all__ = [
    "EARTH_RADIUS_M",
    "canonicalize_twins",
    "coordinate_stacks",
    "haversine_m",
    "normalize_text",
    "off_globe",
    "stack_report",
    "to_wgs84",
    "twins",
]

#: WGS84 mean Earth radius in metres (IUGG R1 = (2a + b) / 3).
EARTH_RADIUS_M: float = 6_371_008.8

ArrayLike = npt.ArrayLike
FloatArray = npt.NDArray[np.float64]


# --------------------------------------------------------------------------------------------
# distances and projections
# --------------------------------------------------------------------------------------------


def haversine_m(
    lat1: ArrayLike, lon1: ArrayLike, lat2: ArrayLike, lon2: ArrayLike
) -> FloatArray | float:
    """Great-circle distance in metres between WGS84 points (degrees), broadcasting like numpy.

    Formula (haversine, numerically safe for small distances)::

        a = sin²((φ2 − φ1) / 2) + cos φ1 · cos φ2 · sin²((λ2 − λ1) / 2)
        d = 2 · R · arcsin(√min(a, 1)),   R = 6,371,008.8 m (WGS84 mean radius)

    Edge cases: identical points give exactly ``0.0``; longitudes on either side of the
    antimeridian (179.9° and −179.9°) are handled (the sine of the half-difference is periodic);
    a NaN in any input gives NaN for that element. ``a`` is clipped to 1 so rounding near
    antipodal points cannot produce NaN. Returns a Python float when every input is a scalar.
    """
    p1 = np.radians(np.asarray(lat1, dtype=np.float64))
    p2 = np.radians(np.asarray(lat2, dtype=np.float64))
    dl = np.radians(np.asarray(lon2, dtype=np.float64) - np.asarray(lon1, dtype=np.float64))
    a = np.sin((p2 - p1) / 2.0) ** 2 + np.cos(p1) * np.cos(p2) * np.sin(dl / 2.0) ** 2
    d = 2.0 * EARTH_RADIUS_M * np.arcsin(np.sqrt(np.minimum(a, 1.0)))
    if np.ndim(d) == 0:
        return float(d)
    return d


def to_wgs84(
    x: ArrayLike, y: ArrayLike, crs: str | int | CRS, *, always_xy: bool = True
) -> tuple[FloatArray, FloatArray]:
    """Convert projected coordinates of one dataset to WGS84 ``(lat, lon)`` in degrees.

    One CRS for the whole array, on purpose: LIST chose a UTM zone per point, so two POIs 2 km
    apart on either side of 120°E (the UTM 50/51 boundary) got coordinates in two different
    planes, ~575 km apart when read as one plane. Convert a dataset with the single CRS its
    coordinates were produced in (e.g. ``"EPSG:32650"``), then compare in lat/lon.

    Axis order: with ``always_xy=True`` (default) ``x`` is the easting and ``y`` the northing,
    whatever the CRS says (pyproj ``Transformer.from_crs(crs, "EPSG:4326", always_xy=True)``).
    With ``always_xy=False`` ``(x, y)`` follow the CRS's *authority* axis order; for EPSG:2385
    (Xian 1980 / 3-degree Gauss-Kruger CM 120E, the GeoGLUE-clean subset) that is (northing,
    easting), for UTM (EPSG:326xx) it is (easting, northing).

    Returns float arrays ``(lat, lon)``; points pyproj cannot convert come back as ``inf`` (or
    NaN for NaN input) -- callers validate ranges (the loaders raise ``InputError`` naming the
    line). Raises ``ValueError`` for an unknown CRS.
    """
    from pyproj import CRS, Transformer  # here, not at import: the app's pages never need it
    from pyproj.exceptions import CRSError, ProjError

    try:
        src = CRS.from_user_input(crs)
        transformer = Transformer.from_crs(src, "EPSG:4326", always_xy=always_xy)
    except (CRSError, ProjError) as exc:
        raise ValueError(f"unknown or unusable CRS {crs!r}: {exc}") from exc
    xa = np.atleast_1d(np.asarray(x, dtype=np.float64))
    ya = np.atleast_1d(np.asarray(y, dtype=np.float64))
    a, b = transformer.transform(xa, ya, errcheck=False)
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    # always_xy=True returns (lon, lat); EPSG:4326's authority order is (lat, lon).
    return (b, a) if always_xy else (a, b)


def _ecef_unit(lat: FloatArray, lon: FloatArray) -> FloatArray:
    """Points on the sphere of radius R as (n, 3) Cartesian coordinates in metres."""
    p = np.radians(lat)
    lam = np.radians(lon)
    cp = np.cos(p)
    return EARTH_RADIUS_M * np.column_stack([cp * np.cos(lam), cp * np.sin(lam), np.sin(p)])


# --------------------------------------------------------------------------------------------
# stacks and twins
# --------------------------------------------------------------------------------------------


def _coords(pois: pd.DataFrame, table: str = "pois") -> tuple[FloatArray, FloatArray]:
    missing = [c for c in ("lat", "lon") if c not in pois.columns]
    if missing:
        raise InputError(table, None, f"missing column(s) {', '.join(missing)}")
    try:
        lat = pd.to_numeric(pois["lat"], errors="raise").to_numpy(dtype=np.float64, na_value=np.nan)
        lon = pd.to_numeric(pois["lon"], errors="raise").to_numpy(dtype=np.float64, na_value=np.nan)
    except (ValueError, TypeError) as exc:
        raise InputError(table, None, f"lat/lon must be numbers: {exc}") from exc
    _check_range(lat, lon, pois, table)
    return lat, lon


def off_globe(lat: FloatArray, lon: FloatArray) -> npt.NDArray[np.bool_]:
    """Per point: a latitude outside [-90, 90] or a longitude outside [-180, 180], infinities
    included (swapped columns, projected metres); NaN (missing) is not flagged."""
    return ~(np.isnan(lat) | (np.abs(lat) <= 90.0)) | ~(np.isnan(lon) | (np.abs(lon) <= 180.0))


def _check_range(lat: FloatArray, lon: FloatArray, table: pd.DataFrame, name: str) -> None:
    """``InputError`` naming the first row (1-based, with its id) that is :func:`off_globe`."""
    bad = off_globe(lat, lon)
    if not bad.any():
        return
    row = int(np.flatnonzero(bad)[0])
    id_col = next((c for c in ("doc_id", "query_id") if c in table.columns), None)
    where = f"row {row + 1}" + (f" ({id_col} {table[id_col].iloc[row]!r})" if id_col else "")
    if not np.isnan(lat[row]) and not abs(lat[row]) <= 90.0:
        hint = " (are lat and lon swapped?)" if abs(lon[row]) <= 90.0 else ""
        raise InputError(
            name, None, f"{where}: latitude {float(lat[row])!r} out of range [-90, 90]{hint}"
        )
    raise InputError(name, None, f"{where}: longitude {float(lon[row])!r} out of range [-180, 180]")


def _first_appearance_ids(labels: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
    """Renumber arbitrary integer labels 0..m-1 in order of their first occurrence."""
    return pd.factorize(labels)[0].astype(np.int64)


def _stack_labels(lat: FloatArray, lon: FloatArray, tolerance_m: float) -> npt.NDArray[np.int64]:
    """Stack id per point (-1 for NaN coordinates), numbered by first appearance."""
    if not np.isfinite(tolerance_m) or tolerance_m < 0:
        raise ValueError(f"tolerance_m must be a finite number >= 0, got {tolerance_m!r}")
    n = lat.size
    out = np.full(n, -1, dtype=np.int64)
    valid = ~(np.isnan(lat) | np.isnan(lon))
    if not valid.any():
        return out
    # + 0.0 turns -0.0 into 0.0 so both spell the same coordinate.
    keys = (lat[valid] + 0.0) + 1j * (lon[valid] + 0.0)
    # a hash table numbers the distinct coordinates in order of first appearance
    exact, uniq = pd.factorize(keys)
    if tolerance_m > 0 and uniq.size > 1:
        # Single linkage on the sphere: the chord length 2R·sin(d / 2R) is monotone in the
        # great-circle distance d, so a KD-tree radius query on 3-D points is exact.
        xyz = _ecef_unit(uniq.real, uniq.imag)
        chord = 2.0 * EARTH_RADIUS_M * np.sin(min(tolerance_m / (2.0 * EARTH_RADIUS_M), np.pi / 2))
        exact = _first_appearance_ids(single_linkage(xyz, chord)[exact])
    out[valid] = exact
    return out


def coordinate_stacks(pois: pd.DataFrame, tolerance_m: float = 0.0) -> pd.DataFrame:
    """Group POIs that share a coordinate; return a copy of ``pois`` with two new columns.

    * ``stack_id`` (int): the stack the POI belongs to, numbered 0, 1, ... in order of the
      stack's first POI in the table. Every located POI has one (a lone POI is a stack of 1).
    * ``stack_size`` (int): number of POIs (rows) in that stack.

    Semantics:

    * ``tolerance_m == 0`` (default): *exact* stacks -- identical ``(lat, lon)`` floats.
      (Two spellings of one pole, ``(90, 0)`` and ``(90, 45)``, are different coordinates.)
    * ``tolerance_m > 0``: *single-linkage* clusters -- two POIs are in one stack when a chain of
      POIs joins them in which consecutive POIs are at most ``tolerance_m`` metres apart
      (great-circle distance on the sphere of :data:`EARTH_RADIUS_M`, inclusive up to float
      rounding). A stack can therefore be wider than ``tolerance_m``. Implementation: exact
      duplicates are collapsed, the distinct coordinates are put on the sphere in 3-D and
      clustered at the equivalent chord length by a cube grid plus nearest-neighbour queries
      (see :func:`analysis.geo.linkage.single_linkage`): O(n log n) time and O(n) memory, even
      when thousands of POIs lie within the tolerance of each other (all pairs: O(n^2)).

    POIs with a NaN ``lat`` or ``lon`` get ``stack_id = -1`` and ``stack_size = 0``.

    Raises ``InputError`` when ``lat``/``lon`` are missing, not numeric, infinite or out of
    range (latitude outside [-90, 90], longitude outside [-180, 180]; the message names the
    row) and ``ValueError`` for a negative or non-finite ``tolerance_m``.
    """
    lat, lon = _coords(pois)
    sid = _stack_labels(lat, lon, float(tolerance_m))
    size = np.zeros(sid.size, dtype=np.int64)
    located = sid >= 0
    if located.any():
        counts = np.bincount(sid[located])
        size[located] = counts[sid[located]]
    out = pois.copy()
    out["stack_id"] = sid
    out["stack_size"] = size
    return out


def normalize_text(text: pd.Series) -> pd.Series:
    """Normalize text for twin detection: Unicode NFKC, case-folded, whitespace runs collapsed
    to one space and stripped. Missing values become the empty string."""
    codes, uniques = pd.factorize(text.astype("str").fillna(""))  # each distinct text once
    s = pd.Series(uniques, dtype="str").str.normalize("NFKC").str.casefold()
    s = s.str.replace(r"\s+", " ", regex=True).str.strip()
    out = s.to_numpy(dtype=object)[codes] if len(codes) else np.zeros(0, dtype=object)
    return pd.Series(out, index=text.index, dtype="str")


def _text_codes(text: pd.Series) -> npt.NDArray[np.int64]:
    """Per row, a number for its :func:`normalize_text` (equal numbers: equal normalized
    texts), -1 for the empty text. Each distinct raw text is normalized once."""
    codes, uniques = pd.factorize(text.astype("str").fillna(""))
    norm = normalize_text(pd.Series(uniques, dtype="str")).to_numpy(dtype=object)
    ncodes, nuniques = pd.factorize(norm)
    empty = np.flatnonzero(nuniques == "")
    if len(empty):
        ncodes[ncodes == empty[0]] = -1
    return ncodes.astype(np.int64)[codes] if len(codes) else np.zeros(0, dtype=np.int64)


def _require_unique_ids(table: pd.DataFrame, col: str, name: str) -> None:
    if col not in table.columns:
        raise InputError(name, None, f"missing column {col}")
    ids = table[col]
    arrow = isinstance(ids.dtype, pd.StringDtype) and ids.dtype.storage == "pyarrow"
    if arrow and len(pc.unique(rk.as_string_array(ids))) == len(ids):  # one hash pass in Arrow
        return
    dup = ids.duplicated()
    if dup.any():
        first = str(table.loc[dup, col].iloc[0])
        raise InputError(
            name,
            None,
            f"{int(dup.sum())} duplicate {col} value(s), e.g. {first!r}; ids must be unique",
        )


def _twin_groups(
    sid: npt.NDArray[np.int64], text: pd.Series
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """``(twin group, group size, row of the group's first POI)`` per POI, from its stack id
    (-1: not located) and text: the groups of :func:`twins` (numbered 0, 1, ... by their first
    POI in table order, -1 without a twin; a POI without a twin is a group of 1 headed by
    itself)."""
    n = len(sid)
    group = np.full(n, -1, dtype=np.int64)
    gsize = np.ones(n, dtype=np.int64)
    head = np.arange(n, dtype=np.int64)
    tcode = _text_codes(text)
    valid = (sid >= 0) & (tcode >= 0)
    if not valid.any():
        return group, gsize, head
    pos = np.flatnonzero(valid)
    tcode = tcode[valid]
    # (stack, text) pairs numbered by first appearance: one hash pass over 64-bit keys
    gid = _first_appearance_ids(sid[valid] * (int(tcode.max()) + 1) + tcode)
    counts = np.bincount(gid)
    seen = np.maximum.accumulate(gid)
    first = np.flatnonzero(np.r_[True, gid[1:] > seen[:-1]])  # row of group g: first[g]
    is_twin = counts >= 2
    renum = np.cumsum(is_twin) - 1
    member = is_twin[gid]
    group[pos[member]] = renum[gid[member]]
    gsize[pos] = counts[gid]
    head[pos] = pos[first[gid]]
    return group, gsize, head


def twins(pois: pd.DataFrame, tolerance_m: float = 0.0, text_col: str = "text") -> pd.DataFrame:
    """Find twins: POIs with the same normalized text at the same coordinate under different ids.

    Returns a copy of ``pois`` with:

    * ``twin_group`` (int): 0, 1, ... for POIs in a group of two or more twins (numbered by the
      group's first POI in table order), ``-1`` for POIs without a twin.
    * ``twin_group_size`` (int): number of POIs in the POI's group (1 when it has no twin).
    * ``twin_canonical`` (str): the ``doc_id`` of the group's first POI in table order (the POI's
      own id when it has no twin). Every later member is a redundant copy of it -- for the
      GeoGLUE-clean subset this is exactly the ``dup_of`` column of the released CSV.

    "Same text" compares :func:`normalize_text` of ``text_col`` (NFKC, casefold, whitespace
    collapsed); empty text never makes twins. "Same coordinate" means the same exact stack
    (identical lat/lon) by default, or the same single-linkage stack when ``tolerance_m > 0``
    (see :func:`coordinate_stacks`). POIs with missing coordinates have no twins. ``doc_id`` must
    be unique (``InputError`` otherwise), so group sizes count distinct ids.
    """
    _check_twin_input(pois, text_col)
    lat, lon = _coords(pois)
    sid = _stack_labels(lat, lon, float(tolerance_m))
    group, gsize, head = _twin_groups(sid, pois[text_col])
    ids = pois["doc_id"].astype("str").to_numpy(dtype=object)
    canonical = ids[head]
    out = pois.copy()
    out["twin_group"] = group
    out["twin_group_size"] = gsize
    out["twin_canonical"] = pd.array(canonical, dtype="str")
    return out


def _check_twin_input(pois: pd.DataFrame, text_col: str) -> None:
    """``InputError`` for repeated ``doc_id``s or a missing text column (what :func:`twins`
    needs beyond the coordinates)."""
    _require_unique_ids(pois, "doc_id", "pois")
    if text_col not in pois.columns:
        raise InputError("pois", None, f"missing column {text_col}")


def stack_report(
    pois: pd.DataFrame, tolerance_m: float = 0.0, top: int = 10, text_col: str = "text"
) -> dict[str, Any]:
    """Dataset-level duplicate-coordinate and twin summary (JSON-serializable plain types).

    Keys:

    * ``n_pois``: rows in ``pois``; ``n_located``: rows with a lat/lon;
      ``tolerance_m``: the stack tolerance used (0 = exact).
    * ``n_stacked``: POIs sharing their (exact or single-linkage) coordinate with at least one
      other POI, i.e. POIs in stacks of size >= 2; ``n_stacks``: stacks of size >= 2;
      ``largest_stack``: size of the largest stack (0 when nothing is located);
      ``share_stacked`` = ``n_stacked / n_located`` (0.0 when nothing is located).
    * ``stack_size_histogram``: ``{stack size: number of stacks of that size}`` over all stacks,
      singletons included (int keys; ``json.dumps`` writes them as strings).
    * ``largest_stacks``: the ``top`` largest stacks of size >= 2 (ties by first appearance),
      each ``{"stack_id", "size", "lat", "lon", "doc_ids"}`` with ``lat/lon`` of its first POI
      and at most 10 example ids.
    * twins (see :func:`twins`): ``n_twin_groups`` (groups of >= 2 twins), ``n_twins`` (POIs in
      such groups), ``n_twin_duplicates`` = ``n_twins - n_twin_groups`` (POIs whose text and
      coordinate repeat an earlier POI's: the redundant copies).
    """
    st = coordinate_stacks(pois, tolerance_m)
    _check_twin_input(pois, text_col)
    sid = st["stack_id"].to_numpy()
    tg = _twin_groups(sid, pois[text_col])[0]  # the twins of the same stacks
    located = sid >= 0
    counts = np.bincount(sid[located]) if located.any() else np.zeros(0, dtype=np.int64)
    n_located = int(located.sum())
    n_stacked = int(counts[counts >= 2].sum())
    sizes, freq = np.unique(counts, return_counts=True)
    big = np.flatnonzero(counts >= 2)
    big = big[np.argsort(-counts[big], kind="stable")][: max(int(top), 0)]
    largest: list[dict[str, Any]] = []
    if big.size:
        members = st.loc[np.isin(sid, big), ["doc_id", "lat", "lon", "stack_id"]]
        first = members.drop_duplicates("stack_id").set_index("stack_id")
        examples = members.groupby("stack_id", sort=False).head(10)
        examples = examples.groupby("stack_id", sort=False)["doc_id"].agg(list)
        largest = [
            {
                "stack_id": int(s),
                "size": int(counts[s]),
                "lat": float(first.loc[s, "lat"]),
                "lon": float(first.loc[s, "lon"]),
                "doc_ids": [str(v) for v in examples.loc[s]],
            }
            for s in big
        ]
    n_twin_groups = int(tg.max() + 1) if tg.size else 0
    n_twins = int((tg >= 0).sum())
    return {
        "n_pois": len(pois),
        "n_located": n_located,
        "tolerance_m": float(tolerance_m),
        "n_stacked": n_stacked,
        "n_stacks": int((counts >= 2).sum()),
        "largest_stack": int(counts.max()) if counts.size else 0,
        "share_stacked": float(n_stacked / n_located) if n_located else 0.0,
        "stack_size_histogram": {int(s): int(f) for s, f in zip(sizes, freq, strict=True)},
        "largest_stacks": largest,
        "n_twin_groups": n_twin_groups,
        "n_twins": n_twins,
        "n_twin_duplicates": n_twins - n_twin_groups,
    }


def canonicalize_twins(
    run: pd.DataFrame, qrels: pd.DataFrame, pois: pd.DataFrame, tolerance_m: float = 0.0
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Rewrite a run and qrels so that twins count as one document (twin-aware evaluation).

    Every ``doc_id`` that belongs to a twin group (see :func:`twins`) is replaced by the group's
    canonical id (``twin_canonical``: the id of the group's first POI in table order); ids that
    are not POIs or have no twin are kept. Then

    * run: per ``(query_id, canonical doc)`` only the best-ranked occurrence is kept -- the
      smallest ``rank`` when the run has a ``rank`` column (ranks are then renumbered 1..n per
      query in the same order, closing the gaps), otherwise the highest ``score`` (first in file
      order on equal scores). Other columns of the kept row are unchanged.
    * qrels: per ``(query_id, canonical doc)`` the maximum ``relevance``.

    Twin-aware Recall/NDCG are then ``analysis.core.metrics.evaluate(run_c, qrels_c, ...)`` on the
    returned tables: a retrieved twin of a gold counts as the gold, a gold group counts once in
    the denominator (|relevant| = distinct gold groups) and in the ideal DCG, and a second twin
    of an already-retrieved gold no longer takes a rank in the list. Without twins the tables
    are returned unchanged (up to the rank renumbering). Note: if the run is re-ranked from
    scores, ties between *different* documents are broken by the canonical ids.
    """
    tw = twins(pois, tolerance_m)
    is_twin = tw["twin_group"].to_numpy() >= 0
    mapping = pd.Series(
        tw["twin_canonical"].to_numpy()[is_twin],
        index=tw["doc_id"].astype("str").to_numpy()[is_twin],
    )

    def _canon(ids: pd.Series) -> pd.Series:
        s = ids.astype("str")
        mapped = s.map(mapping)
        return mapped.where(mapped.notna(), s).astype("str")

    r = run.copy()
    r["query_id"] = r["query_id"].astype("str")
    r["doc_id"] = _canon(r["doc_id"])
    r["_pos"] = np.arange(len(r))
    if "rank" in r.columns:
        r = r.sort_values(["query_id", "rank", "_pos"], kind="stable")
        r = r.drop_duplicates(["query_id", "doc_id"], keep="first")
        r["rank"] = r.groupby("query_id", sort=False).cumcount().astype("int64") + 1
        r = r.sort_values("_pos", kind="stable")
    elif "score" in r.columns:
        best = r.sort_values(["score", "_pos"], ascending=[False, True], kind="stable")
        keep = best.drop_duplicates(["query_id", "doc_id"], keep="first")["_pos"]
        r = r[r["_pos"].isin(keep)]
    else:
        r = r.drop_duplicates(["query_id", "doc_id"], keep="first")
    r = r.drop(columns="_pos").reset_index(drop=True)

    qr = qrels.copy()
    qr["query_id"] = qr["query_id"].astype("str")
    qr["doc_id"] = _canon(qr["doc_id"])
    qr["_pos"] = np.arange(len(qr))
    qr = qr.sort_values(["relevance", "_pos"], ascending=[False, True], kind="stable")
    qr = qr.drop_duplicates(["query_id", "doc_id"], keep="first").sort_values("_pos")
    qr = qr.drop(columns="_pos").reset_index(drop=True)
    return r, qr
