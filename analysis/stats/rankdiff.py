"""What changed between two rankings of one query: the facts a written diff reports
(:mod:`analysis.present.diffsummary` turns them into sentences).

For one query, ranking A and ranking B (``doc_id, score, rank``, rank 1-based as evaluated) and
the query's qrels rows (``doc_id, relevance``), :func:`rank_diff` finds:

* **gold moves**: every relevant document (``relevance >= threshold``) with its rank in A and
  in B (``None``: not retrieved), most relevant first, then best rank;
* **reversals among judged documents**: pairs of judged documents of different relevance that
  A and B order differently (a document that a list does not return counts as below all it
  returns; a pair that either list leaves unordered, returning neither document, is skipped);
  *fixed* pairs are those B puts in the right order (the more relevant first) and A did not,
  *broken* the other way round;
* **the largest mover**: among the documents in the top k of A or B, the one whose rank changes
  most (a document not returned counts as rank ``depth + 1``, ``depth`` the longer list's
  length); ties broken by the better rank, then the doc id;
* **unjudged newcomers**: documents without a qrels row in B's top k but not in A's top k (and
  the other way round), with those among ``suspects`` (suspected missing answers,
  :mod:`analysis.stats.coverage`) marked;
* **ties around the gold**: for each ranking, the first relevant document that shares its score
  with a non-relevant one (scores compared as the tie policy compares them: 32-bit floats under
  ``trec_eval``), with the score, the number of documents that share it and their rank span;
* **POIs** (given ``places``, :func:`poi_places` of the dataset's POIs): non-relevant
  documents ranked above the first gold on the gold's coordinate, and twins of a gold (same
  text and coordinate under another id) in the top k.

Everything is computed from the numbers only; ids stay text (render them escaped).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import pandas as pd

__all__ = ["EXAMPLES", "Moved", "Place", "RankDiff", "TieBlock", "poi_places", "rank_diff"]

#: Examples of reversed pairs kept per kind.
EXAMPLES = 3


@dataclass(frozen=True)
class Moved:
    """A document's rank in A and in B (``None``: not retrieved) and its relevance (``None``:
    unjudged)."""

    doc_id: str
    relevance: int | None
    rank_a: int | None
    rank_b: int | None


class Place(NamedTuple):
    """A POI's exact stack (``-1``: not located), the stack's size and the id of its twin
    group's first POI (its own id when it has no twin)."""

    stack: int
    size: int
    canonical: str


@dataclass(frozen=True)
class TieBlock:
    """A relevant document tied with non-relevant ones: the shared score, how many documents
    share it and their ranks."""

    doc_id: str
    score: float
    size: int
    first_rank: int
    last_rank: int


@dataclass(frozen=True)
class RankDiff:
    """The facts of :func:`rank_diff` (module docstring). ``*_a``/``*_b`` belong to ranking A/B;
    ``fixed``/``broken`` are up to :data:`EXAMPLES` pairs ``(document B ranks first, document
    B ranks after it)`` of the ``n_fixed``/``n_broken`` reversals."""

    query_id: str
    k: int
    gold: tuple[Moved, ...]
    n_fixed: int
    n_broken: int
    fixed: tuple[tuple[str, str], ...]
    broken: tuple[tuple[str, str], ...]
    mover: Moved | None
    unjudged_a: tuple[str, ...]
    unjudged_b: tuple[str, ...]
    suspects_a: tuple[str, ...]
    suspects_b: tuple[str, ...]
    tie_a: TieBlock | None
    tie_b: TieBlock | None
    on_gold_spot_a: tuple[tuple[str, int], ...] = ()
    on_gold_spot_b: tuple[tuple[str, int], ...] = ()
    twins_a: tuple[tuple[str, str], ...] = ()
    twins_b: tuple[tuple[str, str], ...] = ()


def _ranks(run: pd.DataFrame) -> dict[str, int]:
    ids = run["doc_id"].astype("str").tolist()
    return dict(zip(ids, run["rank"].astype(int).tolist(), strict=True))


def _reversals(
    judged: dict[str, int], ra: dict[str, int], rb: dict[str, int]
) -> tuple[int, int, list[tuple[str, str]], list[tuple[str, str]]]:
    """Counts of fixed and broken pairs and up to :data:`EXAMPLES` of each (best ranked
    first), over every pair of judged documents of different relevance (vectorized)."""
    docs = np.array(sorted(d for d in judged if d in ra or d in rb), dtype=object)
    if docs.size < 2:
        return 0, 0, [], []
    rel = np.array([judged[d] for d in docs])
    pos_a = np.array([ra.get(d, np.inf) for d in docs], dtype=np.float64)
    pos_b = np.array([rb.get(d, np.inf) for d in docs], dtype=np.float64)
    more = rel[:, None] > rel[None, :]  # row more relevant than column
    known = ~(np.isinf(pos_a[:, None]) & np.isinf(pos_a[None, :]))
    known &= ~(np.isinf(pos_b[:, None]) & np.isinf(pos_b[None, :]))
    first_a = pos_a[:, None] < pos_a[None, :]
    first_b = pos_b[:, None] < pos_b[None, :]
    fixed = np.argwhere(more & known & first_b & ~first_a)
    broken = np.argwhere(more & known & first_a & ~first_b)
    best = np.minimum(pos_a, pos_b)

    def examples(pairs: np.ndarray, b_first_more: bool) -> list[tuple[str, str]]:
        order = np.lexsort((pairs[:, 1], pairs[:, 0], best[pairs].min(axis=1)))[:EXAMPLES]
        out = [(str(docs[i]), str(docs[j])) for i, j in pairs[order]]
        return out if b_first_more else [(lo, hi) for hi, lo in out]

    return len(fixed), len(broken), examples(fixed, True), examples(broken, False)


def _mover(top: list[str], ra: dict, rb: dict, judged: dict) -> Moved | None:
    if not top:
        return None
    depth = max(len(ra), len(rb)) + 1
    best = max(
        top,
        key=lambda d: (
            abs(ra.get(d, depth) - rb.get(d, depth)),
            -min(ra.get(d, depth), rb.get(d, depth)),
            d,
        ),
    )
    if ra.get(best) == rb.get(best):
        return None
    return Moved(best, judged.get(best), ra.get(best), rb.get(best))


def _tie_block(run: pd.DataFrame, relevant: set[str], ties: str) -> TieBlock | None:
    """The first relevant document sharing its score with a non-relevant one."""
    scores = run["score"].to_numpy(dtype=np.float64)
    compared = scores.astype(np.float32) if ties == "trec_eval" else scores
    ids = run["doc_id"].astype("str").to_numpy(dtype=object)
    ranks = run["rank"].to_numpy(dtype=np.int64)
    for i in np.argsort(ranks, kind="stable"):
        if ids[i] not in relevant:
            continue
        same = compared == compared[i]
        if any(d not in relevant for d in ids[same]):
            block = ranks[same]
            return TieBlock(str(ids[i]), float(scores[i]), int(same.sum()),
                            int(block.min()), int(block.max()))  # fmt: skip
    return None


def _top(ranks: dict[str, int], k: int) -> list[str]:
    return sorted((d for d, r in ranks.items() if r <= k), key=ranks.__getitem__)


def rank_diff(
    a: pd.DataFrame,
    b: pd.DataFrame,
    qrels: pd.DataFrame,
    *,
    k: int,
    threshold: int = 1,
    ties: str = "trec_eval",
    suspects: Collection[str] = (),
    places: Mapping[str, Place] | None = None,
) -> RankDiff:
    """The facts of the module docstring for one query: ``a``/``b`` its rows of the two ranked
    runs (``doc_id, score, rank``), ``qrels`` its qrels rows (``doc_id, relevance``), ``k`` the
    cutoff of "the top k", ``threshold`` the relevance that counts as relevant, ``ties`` the tie
    policy (``trec_eval``: scores tie as 32-bit floats), ``suspects`` suspected missing answers,
    ``places`` the POIs' stacks and twins (:func:`poi_places`, or None)."""
    qid = str(a["query_id"].iloc[0]) if "query_id" in a and len(a) else ""
    if not qid and "query_id" in b and len(b):
        qid = str(b["query_id"].iloc[0])
    judged = dict(
        zip(qrels["doc_id"].astype("str"), qrels["relevance"].astype(int).tolist(), strict=True)
    )
    relevant = {d for d, r in judged.items() if r >= threshold}
    ra, rb = _ranks(a), _ranks(b)
    gold = sorted(
        (Moved(d, judged[d], ra.get(d), rb.get(d)) for d in relevant),
        key=lambda m: (-m.relevance, min(m.rank_a or 1 << 30, m.rank_b or 1 << 30), m.doc_id),
    )
    n_fixed, n_broken, fixed, broken = _reversals(judged, ra, rb)
    top_a, top_b = _top(ra, k), _top(rb, k)
    new_b = [d for d in top_b if d not in set(top_a) and d not in judged]
    new_a = [d for d in top_a if d not in set(top_b) and d not in judged]
    union = list(dict.fromkeys([*top_a, *top_b]))
    spots = _poi_facts(places, ra, rb, relevant, k) if places else {}
    return RankDiff(
        query_id=qid, k=k, gold=tuple(gold), n_fixed=n_fixed, n_broken=n_broken,
        fixed=tuple(fixed), broken=tuple(broken),
        mover=_mover(union, ra, rb, judged), unjudged_a=tuple(new_a), unjudged_b=tuple(new_b),
        suspects_a=tuple(d for d in new_a if d in suspects),
        suspects_b=tuple(d for d in new_b if d in suspects),
        tie_a=_tie_block(a, relevant, ties), tie_b=_tie_block(b, relevant, ties), **spots,
    )  # fmt: skip


def poi_places(entities: pd.DataFrame) -> dict[str, Place]:
    """The located POIs of ``entities`` (``doc_id, lat, lon, text``) by id: exact stacks and
    twins (:func:`analysis.geo.coordinate_stacks`, :func:`analysis.geo.twins`)."""
    from analysis.geo import coordinate_stacks, twins

    located = entities.dropna(subset=["lat", "lon"]).drop_duplicates("doc_id")
    if located.empty:
        return {}
    stacks = coordinate_stacks(located)
    canonical = twins(located)["twin_canonical"].astype("str").tolist()
    ids = located["doc_id"].astype("str").tolist()
    sid, size = stacks["stack_id"].tolist(), stacks["stack_size"].tolist()
    return {d: Place(int(i), int(n), c) for d, i, n, c in zip(ids, sid, size, canonical,
                                                              strict=True)}  # fmt: skip


def _poi_facts(places: Mapping[str, Place], ra: dict, rb: dict, relevant: set, k: int) -> dict:
    """``on_gold_spot_*`` and ``twins_*`` of :class:`RankDiff`."""
    gold_stacks = {places[d].stack for d in relevant if d in places} - {-1}
    canonical = {places[d].canonical: d for d in relevant if d in places}
    out: dict[str, tuple] = {}
    for side, ranks in (("a", ra), ("b", rb)):
        first = min((ranks[d] for d in relevant if d in ranks), default=None)
        above = [d for d, r in sorted(ranks.items(), key=lambda x: x[1])
                 if d not in relevant and first is not None and r < first]  # fmt: skip
        spot = [(d, places[d].size) for d in above
                if d in places and places[d].stack in gold_stacks]  # fmt: skip
        near = [d for d in _top(ranks, k) if d not in relevant and d in places]
        twin = [(d, canonical[places[d].canonical]) for d in near
                if places[d].canonical in canonical]  # fmt: skip
        out[f"on_gold_spot_{side}"], out[f"twins_{side}"] = tuple(spot), tuple(twin)
    return out
