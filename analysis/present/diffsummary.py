"""A written diff of two rankings of one query: a few sentences made from the numbers only.

:func:`diff_sentences` turns the facts of :func:`analysis.stats.rankdiff.rank_diff` and the two
metric values into ``(kind, sentence)`` pairs, in this order (a kind appears only when it has
something to say):

* ``outcome``: the metric for A and for B and which is better (3 decimals, more when needed
  to tell the two values apart);
* ``gold``: where each gold document moved, rank in A -> rank in B (the most relevant and best
  ranked first, at most ``max_items``, then how many more);
* ``reversals``: pairs of judged documents of different relevance that B orders the other way
  from A, as many as B puts right and as many as it puts wrong, with an example of each;
* ``mover``: the document of either top k whose rank changed most;
* ``unjudged``: documents without a judgement that enter B's top k (or A's), and which of them
  are suspected missing answers;
* ``ties``: a value that depends on the order of tied scores (the metric's tie bounds), with
  the gold document in the tie; "ties decide the outcome" when some order of the tied scores
  would make the other model come out ahead (or level), naming who could come out ahead
  (either, or one of them "or level" when the other never can);
* ``poi``: non-relevant POIs ranked above the first gold on the gold's own coordinate (a
  stack), and twins of a gold (same text and place under another id) in the top k.

Models are called "A" and "B"; ids are plain text: render the sentences escaped (HTML,
Markdown) -- the functions here return plain text.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

import pandas as pd

from analysis.stats.rankdiff import Moved, Place, RankDiff, TieBlock, rank_diff

__all__ = ["KINDS", "Outcome", "diff_sentences", "diff_text", "query_diffs", "query_summaries"]

KINDS = ("outcome", "gold", "reversals", "mover", "unjudged", "ties", "poi")
MAX_ITEMS = 3
ARROW = "→"


@dataclass(frozen=True)
class Outcome:
    """The metric of a query for A and B, with their tie bounds (min, max over the orders of
    tied scores; ``None``: not known)."""

    metric: str
    value_a: float
    value_b: float
    bounds_a: tuple[float, float] | None = None
    bounds_b: tuple[float, float] | None = None


def _rank(rank: int | None) -> str:
    return "not retrieved" if rank is None else str(rank)


def _list(items: Sequence[str], total: int) -> str:
    text = ", ".join(items)
    return text + (f" and {total - len(items)} more" if total > len(items) else "")


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


def _outcome(o: Outcome) -> str:
    """The two values with 3 decimals, or as many more (up to 12) as tell them apart, so two
    different values never read alike ("A 0.5001, B 0.5004; B is better by 0.0003")."""
    if o.value_a == o.value_b:
        return f"{o.metric} is {o.value_a:.3f} for both A and B."
    better = "A" if o.value_a > o.value_b else "B"
    gap = abs(o.value_a - o.value_b)
    d = 3
    while d < 12 and f"{o.value_a:.{d}f}" == f"{o.value_b:.{d}f}":
        d += 1
    return (f"{o.metric}: A {o.value_a:.{d}f}, B {o.value_b:.{d}f}; {better} is better by "
            f"{gap:.{d}f}.")  # fmt: skip


def _gold(gold: Sequence[Moved], n: int) -> str:
    if not gold:
        return "The qrels hold no relevant document for this query."
    items = [f"{m.doc_id} {_rank(m.rank_a)} {ARROW} {_rank(m.rank_b)}" for m in gold[:n]]
    word = "Gold document" if len(gold) == 1 else "Gold documents"
    return f"{word}, rank in A {ARROW} B: {_list(items, len(gold))}."


def _reversals(d: RankDiff) -> str | None:
    if not d.n_fixed and not d.n_broken:
        return None
    parts = []
    if d.n_fixed:
        x, y = d.fixed[0]
        parts.append(f"puts the more relevant document first in {_plural(d.n_fixed, 'pair')} "
                     f"that A had the other way ({x} above {y})")  # fmt: skip
    if d.n_broken:
        x, y = d.broken[0]
        parts.append(f"puts the less relevant one first in {_plural(d.n_broken, 'pair')} "
                     f"that A had right ({x} above {y})")  # fmt: skip
    return "Rank reversals among judged documents: B " + ", and ".join(parts) + "."


def _mover(m: Moved | None) -> str | None:
    if m is None:
        return None
    judged = "unjudged" if m.relevance is None else f"relevance {m.relevance}"
    moved = f"{_rank(m.rank_a)} {ARROW} {_rank(m.rank_b)}"
    return f"Largest mover: {m.doc_id} ({judged}), rank {moved}."


def _unjudged(d: RankDiff, n: int) -> str | None:
    parts = []
    for side, other, docs, suspects in (("B", "A", d.unjudged_b, d.suspects_b),
                                        ("A", "B", d.unjudged_a, d.suspects_a)):  # fmt: skip
        if not docs:
            continue
        verb = "enters" if len(docs) == 1 else "enter"
        text = f"{_plural(len(docs), 'unjudged document')} {verb} {side}'s top {d.k} but not "
        text += f"{other}'s ({_list(list(docs[:n]), len(docs))})"
        if suspects:
            text += f", {_plural(len(suspects), 'suspected missing answer')} among them"
            text += f" ({_list(list(suspects[:n]), len(suspects))})"
        parts.append(text)
    return ("; ".join(parts)[0].upper() + "; ".join(parts)[1:] + ".") if parts else None


def _tie_note(side: str, block: TieBlock | None) -> str:
    if block is None:
        return ""
    others = _plural(block.size - 1, "other document")
    return (f" (in {side}, gold {block.doc_id} shares score {block.score:g} with {others} at "
            f"ranks {block.first_rank}–{block.last_rank})")  # fmt: skip


def _ties(d: RankDiff, o: Outcome) -> str | None:
    lo_a, hi_a = o.bounds_a or (o.value_a, o.value_a)
    lo_b, hi_b = o.bounds_b or (o.value_b, o.value_b)
    if lo_a == hi_a and lo_b == hi_b:
        return None
    span = lambda lo, hi: f"{lo:.3f}" if lo == hi else f"{lo:.3f}–{hi:.3f}"  # noqa: E731
    note = _tie_note("A", d.tie_a) if lo_a != hi_a else ""
    note += _tie_note("B", d.tie_b) if lo_b != hi_b else ""
    ranges = f"A scores {span(lo_a, hi_a)} and B {span(lo_b, hi_b)}"
    if not (lo_a - hi_b > 0 or hi_a - lo_b < 0):  # A - B can be > 0 and <= 0, or < 0 and >= 0
        a_ahead, b_ahead = hi_a > lo_b, hi_b > lo_a
        who = ("either could come out ahead" if a_ahead and b_ahead
               else "A could come out ahead or level" if a_ahead
               else "B could come out ahead or level")  # fmt: skip
        return (f"Ties decide the outcome: over the orders of tied scores {ranges}, so "
                f"{who}{note}.")  # fmt: skip
    return f"Tied scores move the values ({ranges}) but not which model is ahead{note}."


def _poi(d: RankDiff, n: int) -> str | None:
    parts = []
    for side, spots, twins in (("A", d.on_gold_spot_a, d.twins_a), ("B", d.on_gold_spot_b,
                                                                    d.twins_b)):  # fmt: skip
        if spots:
            docs = _list([doc for doc, _ in spots[:n]], len(spots))
            size = max(s for _, s in spots)
            parts.append(f"{side} ranks {docs} above the first gold on the gold's coordinate "
                         f"(a stack of {size} POIs)")  # fmt: skip
        if twins:
            items = [f"{doc} (twin of gold {gold})" for doc, gold in twins[:n]]
            parts.append(f"{side}'s top {d.k} holds {_list(items, len(twins))}, the same text "
                         "and place under another id")  # fmt: skip
    return ("POIs: " + "; ".join(parts) + ".") if parts else None


def diff_sentences(
    diff: RankDiff, outcome: Outcome, *, max_items: int = MAX_ITEMS
) -> list[tuple[str, str]]:
    """The written diff as ``(kind, sentence)`` pairs (module docstring; kinds in
    :data:`KINDS` order, each at most once)."""
    found = {
        "outcome": _outcome(outcome),
        "gold": _gold(diff.gold, max_items),
        "reversals": _reversals(diff),
        "mover": _mover(diff.mover),
        "unjudged": _unjudged(diff, max_items),
        "ties": _ties(diff, outcome),
        "poi": _poi(diff, max_items),
    }
    return [(kind, text) for kind, text in found.items() if text]


def diff_text(diff: RankDiff, outcome: Outcome, *, max_items: int = MAX_ITEMS) -> str:
    """The sentences of :func:`diff_sentences` in one paragraph."""
    return " ".join(text for _, text in diff_sentences(diff, outcome, max_items=max_items))


def _by_query(frame: pd.DataFrame, keep: set[str]) -> dict[str, pd.DataFrame]:
    rows = frame.loc[frame["query_id"].astype("str").isin(keep)]
    return {str(q): g for q, g in rows.groupby(rows["query_id"].astype("str"), sort=False)}


def query_diffs(
    ranked: tuple[pd.DataFrame, pd.DataFrame],
    qrels: pd.DataFrame,
    query_ids: Sequence[str],
    *,
    k: int,
    threshold: int = 1,
    ties: str = "trec_eval",
    suspects: Mapping[str, Collection[str]] | None = None,
    places: Mapping[str, Place] | None = None,
) -> dict[str, RankDiff]:
    """:func:`analysis.stats.rankdiff.rank_diff` of every query of ``query_ids``, from the two
    ranked runs ``ranked = (A, B)`` (``query_id, doc_id, score, rank``) and the qrels (each
    cut into queries once). ``suspects``: suspected missing answers per query; ``places``: POI
    stacks and twins."""
    keep = {str(q) for q in query_ids}
    runs = [_by_query(r, keep) for r in ranked]
    judged = _by_query(qrels, keep)
    empty_run, empty_qrels = ranked[0].iloc[0:0], qrels.iloc[0:0]
    out = {}
    for qid in dict.fromkeys(str(q) for q in query_ids):
        out[qid] = rank_diff(
            runs[0].get(qid, empty_run), runs[1].get(qid, empty_run),
            judged.get(qid, empty_qrels), k=k, threshold=threshold, ties=ties,
            places=places, suspects=(suspects or {}).get(qid, ()),
        )  # fmt: skip
    return out


def query_summaries(diffs: Mapping[str, RankDiff], values: pd.DataFrame, metric: str) -> pd.Series:
    """The written diff (:func:`diff_text`) of every query of ``values`` (``query_id,
    value_a, value_b`` and, when known, the tie bounds ``a_min, a_max, b_min, b_max``) from
    its facts in ``diffs`` (:func:`query_diffs`). One text per query, indexed by query id."""
    out = {}
    for row in values.to_dict("records"):
        qid = str(row["query_id"])
        bounds = [(row.get(f"{s}_min"), row.get(f"{s}_max")) for s in ("a", "b")]
        known = [None if lo is None or pd.isna(lo) else (lo, hi) for lo, hi in bounds]
        outcome = Outcome(metric, row["value_a"], row["value_b"], known[0], known[1])
        out[qid] = diff_text(diffs[qid], outcome)
    return pd.Series(out, name="summary", dtype="str")
