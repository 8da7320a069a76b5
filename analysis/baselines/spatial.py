"""Spatio-textual baseline: BM25 fused with the great-circle distance to the query (LIST's)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Final

import numpy as np
import numpy.typing as npt
import pandas as pd

from analysis.baselines.ranking import (
    FloatArray,
    check_texts,
    minmax,
    rank_blocks,
    resolve_query_ids,
    run_frame,
)
from analysis.baselines.text import BM25
from analysis.geo.geometry import off_globe

__all__ = ["EARTH_RADIUS_M", "SpatialFusion", "haversine_m"]

EARTH_RADIUS_M: Final = 6_371_008.8
"""Mean Earth radius (IUGG R1) in metres, the sphere used by :func:`haversine_m`."""


def haversine_m(
    lat1: npt.ArrayLike, lon1: npt.ArrayLike, lat2: npt.ArrayLike, lon2: npt.ArrayLike
) -> FloatArray:
    """Great-circle distance in metres between WGS84 points (degrees), broadcasting numpy-style::

        d = 2 R asin( sqrt( sin^2((phi2 - phi1) / 2)
                            + cos phi1 cos phi2 sin^2((lambda2 - lambda1) / 2) ) )

    with ``R`` = :data:`EARTH_RADIUS_M`. Pass column vectors and row vectors to get a matrix.
    """
    p1, p2 = np.radians(np.asarray(lat1, float)), np.radians(np.asarray(lat2, float))
    dp = p2 - p1
    dl = np.radians(np.asarray(lon2, float)) - np.radians(np.asarray(lon1, float))
    h = np.sin(dp / 2) ** 2 + np.cos(p1) * np.cos(p2) * np.sin(dl / 2) ** 2
    return 2 * EARTH_RADIUS_M * np.arcsin(np.sqrt(np.clip(h, 0.0, 1.0)))


def _check_degrees(lat: FloatArray, lon: FloatArray, what: str) -> None:
    """``ValueError`` unless every ``lat`` is in [-90, 90] and every ``lon`` in [-180, 180]
    (NaN and inf included: projected metres or swapped columns would give wrong distances)."""
    if not (np.isfinite(lat).all() and np.isfinite(lon).all()):
        raise ValueError(f"{what} coordinates must be finite numbers")
    bad = np.flatnonzero(off_globe(lat, lon))
    if len(bad):
        i = int(bad[0])
        name, v, lim = ("latitude", lat[i], 90) if abs(lat[i]) > 90 else ("longitude", lon[i], 180)
        raise ValueError(
            f"{what} {name} {float(v)!r} (position {i}) is out of range [-{lim}, {lim}]: "
            "coordinates are WGS84 degrees"
        )


class SpatialFusion:
    """LIST's spatio-textual baseline: linear fusion of distance and min-max-normalized BM25::

        score(q, p) = (1 - alpha) * (1 - min(d(q, p), d_max) / d_max)
                      + alpha * (bm25(q, p) - min_p' bm25(q, p')) / (max_p' bm25 - min_p' bm25)

    ``d`` is the haversine distance (:func:`haversine_m`) between the query's and the POI's
    coordinates. ``d_max`` is ``d_max_m`` when given (distances beyond it count as ``d_max``),
    else the largest query-POI distance of that query. A query without any matching term gets
    ``0`` for the text part and is ranked by distance alone. Every POI has a score, so each query
    gets exactly ``k`` results; POIs at the same coordinate with the same text tie exactly.
    """

    name = "bm25-distance-fusion"

    def __init__(
        self, alpha: float = 0.5, d_max_m: float | None = None, k1: float = 0.9, b: float = 0.4
    ) -> None:
        if not 0 <= alpha <= 1:
            raise ValueError(f"alpha must be in [0, 1], got {alpha}")
        if d_max_m is not None and not (math.isfinite(d_max_m) and d_max_m > 0):
            raise ValueError(f"d_max_m must be a positive number of metres, got {d_max_m}")
        self.alpha, self.d_max_m = alpha, d_max_m
        self.bm25 = BM25(k1, b)

    def fit(
        self,
        doc_ids: Sequence[str],
        texts: Sequence[str],
        lat: npt.ArrayLike,
        lon: npt.ArrayLike,
    ) -> SpatialFusion:
        """Index POIs: ids, texts and WGS84 coordinates (degrees, latitudes in [-90, 90] and
        longitudes in [-180, 180], else ``ValueError``)."""
        self.bm25.fit(doc_ids, texts)
        self.doc_ids = self.bm25.doc_ids
        self.lat, self.lon = np.asarray(lat, float), np.asarray(lon, float)
        if self.lat.shape != (len(self.doc_ids),) or self.lon.shape != self.lat.shape:
            raise ValueError("one latitude and one longitude per POI are needed")
        _check_degrees(self.lat, self.lon, "POI")
        return self

    def score_block(
        self, query_texts: Sequence[str], lat: FloatArray, lon: FloatArray
    ) -> FloatArray:
        """Dense fused scores ``(n_queries, n_pois)``."""
        text = minmax(self.bm25.score_block(query_texts))
        d = haversine_m(lat[:, None], lon[:, None], self.lat[None, :], self.lon[None, :])
        d_max = (
            np.full((len(lat), 1), self.d_max_m)
            if self.d_max_m is not None
            else d.max(axis=1, keepdims=True, initial=0.0)
        )
        near = 1.0 - np.divide(np.minimum(d, d_max), d_max, out=np.zeros_like(d), where=d_max > 0)
        return (1 - self.alpha) * near + self.alpha * text

    def search(
        self,
        query_texts: Sequence[str] | pd.Series,
        lat: npt.ArrayLike,
        lon: npt.ArrayLike,
        k: int = 100,
        query_ids: Sequence[str] | None = None,
        decimals: int | None = 6,
    ) -> pd.DataFrame:
        """Top-``k`` POIs per query located at ``lat, lon``: ``query_id, doc_id, score, rank``."""
        qids = resolve_query_ids(query_texts, query_ids)
        texts = list(query_texts)
        check_texts(texts, qids, "query")
        qlat, qlon = np.asarray(lat, float), np.asarray(lon, float)
        if qlat.shape != (len(texts),) or qlon.shape != qlat.shape:
            raise ValueError("one latitude and one longitude per query are needed")
        _check_degrees(qlat, qlon, "query")
        hits = rank_blocks(
            len(texts),
            len(self.doc_ids),
            lambda sl: self.score_block(texts[sl], qlat[sl], qlon[sl]),
            k,
            decimals,
            False,
        )
        return run_frame(qids, self.doc_ids, hits)
