"""What every demo dataset is made of: the :class:`Dataset` record, seeded sampling helpers, text
helpers, query collection and the queries/qrels tables, and the vocabularies in ``demo/vocab``.

Every helper draws from the generator it is given, in a fixed order, so the same seed gives the
same datasets.
"""

from __future__ import annotations

import tomllib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from types import SimpleNamespace
from typing import Any, Final

import numpy as np
import pandas as pd

Rng = np.random.Generator

STARK_METRICS: Final = ("hit@1", "hit@5", "recall@20", "mrr")
SPATIAL_METRICS: Final = ("recall@10", "ndcg@10", "recall@20", "ndcg@20")
GEOGLUE_METRICS: Final = ("recall@1", "recall@10", "ndcg@10", "mrr")
DATASETS: Final = ("stark-amazon", "stark-mag", "stark-prime", "beijing", "shanghai", "geo-glue")
TOP_K: Final = 100

TEXTUAL, ONE_HOP, TWO_HOPS = "textual", "relational (1 hop)", "relational (2 hops)"


@dataclass
class Dataset:
    """One generated dataset: its tables and how to run retrievers on it."""

    name: str
    family: str  # "stark" or "spatial"
    description: str
    queries: pd.DataFrame
    qrels: pd.DataFrame
    entities: pd.DataFrame
    edges: pd.DataFrame | None = None
    candidate_types: tuple[str, ...] | None = None
    relation_triggers: dict[str, tuple[str, ...]] = field(default_factory=dict)
    fusion: dict[str, float] = field(default_factory=dict)
    metrics: tuple[str, ...] = STARK_METRICS
    runs: dict[str, pd.DataFrame] = field(default_factory=dict)
    #: run groups of the manifest: group name -> its seeds' model names
    seed_groups: dict[str, list[str]] = field(default_factory=dict)
    #: the manifest's run_metadata: model -> {key: number}
    run_metadata: dict[str, dict[str, float]] = field(default_factory=dict)


# ----------------------------------------------------------------------------------------------
# Small helpers
# ----------------------------------------------------------------------------------------------
def pick(rng: Rng, seq: Sequence[Any], p: Sequence[float] | None = None) -> Any:
    """One item of ``seq``: uniform (one ``integers`` draw), or with weights ``p`` (normalized to
    sum 1, one ``choice`` draw)."""
    if p is None:
        return seq[int(rng.integers(len(seq)))]
    w = np.asarray(p, float)
    return seq[int(rng.choice(len(seq), p=w / w.sum()))]


def sample(rng: Rng, seq: Sequence[Any], n: int) -> list[Any]:
    """``min(n, len(seq))`` distinct items of ``seq`` in drawn order (one ``choice`` draw)."""
    idx = rng.choice(len(seq), size=min(n, len(seq)), replace=False)
    return [seq[int(i)] for i in idx]


def zipf(n: int, s: float = 1.0) -> np.ndarray:
    """Zipf weights ``1 / i**s`` for ranks ``i = 1..n``, normalized to sum 1 (no draw)."""
    w = 1.0 / np.arange(1, n + 1) ** s
    return w / w.sum()


def digit_ids(rng: Rng, n: int, low: int, high: int) -> list[str]:
    """``n`` distinct integer ids in ``[low, high)`` as sorted strings of digits (STaRK style)."""
    return [str(int(v)) for v in np.sort(rng.choice(np.arange(low, high), n, replace=False))]


def typo(rng: Rng, text: str, n: int = 1) -> str:
    """Introduce ``n`` typos into words of five letters or more (swap, drop, double, vowel)."""
    toks = text.split(" ")
    cands = [i for i, t in enumerate(toks) if len(t) >= 5 and t.isalpha() and t.islower()]
    for i in sample(rng, cands, n):
        w = toks[i]
        j = int(rng.integers(1, len(w) - 2))
        kind = int(rng.integers(4))
        if kind == 0:
            w = w[:j] + w[j + 1] + w[j] + w[j + 2 :]
        elif kind == 1:
            w = w[:j] + w[j + 1 :]
        elif kind == 2:
            w = w[:j] + w[j] + w[j:]
        else:
            vowels = "aeiou"
            k = next((m for m in range(j, len(w)) if w[m] in vowels), j)
            w = w[:k] + vowels[(vowels.find(w[k]) + 1) % 5] + w[k + 1 :]
        toks[i] = w
    return " ".join(toks)


def plural(noun: str) -> str:
    """English plural of a product noun (``-s``, ``-es`` after x/sh/ch; ``-s`` nouns unchanged)."""
    if noun.endswith("s"):
        return noun
    if noun.endswith(("x", "sh", "ch")):
        return noun + "es"
    return noun + "s"


def article(word: str) -> str:
    """``"an"`` before a vowel letter, else ``"a"``."""
    return "an" if word[:1].lower() in "aeiou" else "a"


def str_col(values: Sequence[Any]) -> pd.Series:
    """A pandas string column (``None`` stays missing, anything else becomes ``str``)."""
    return pd.Series(pd.array([None if v is None else str(v) for v in values], dtype="str"))


@dataclass
class Query:
    """A generated query: its text, gold (indices into the dataset's candidates), its
    ``query_type`` and slice columns (``meta``)."""

    text: str
    gold: list[int]
    query_type: str
    meta: dict[str, str]


class NoQuery(Exception):
    """Raised by a query template whose anchor admits no query; the draw is skipped."""


def some(items: Sequence[Any]) -> Sequence[Any]:
    """``items`` when there are any, else :class:`NoQuery` (a template's anchor has nothing)."""
    if not items:
        raise NoQuery
    return items


def collect(
    rng: Rng,
    n: int,
    makers: Sequence[Callable[[Rng], Query]],
    weights: Sequence[float],
    max_gold: int,
) -> list[Query]:
    """Draw queries from template ``makers`` (picked by ``weights``) until ``n`` valid ones exist:
    1..``max_gold`` answers and a text not seen before. A template raising :class:`NoQuery`
    counts as a failed draw; after ``200 n`` draws it is a ``RuntimeError``."""
    out: list[Query] = []
    seen: dict[str, None] = {}
    for _ in range(200 * n):
        if len(out) == n:
            break
        try:
            q = pick(rng, makers, weights)(rng)
        except NoQuery:
            continue
        if not 1 <= len(q.gold) <= max_gold or q.text in seen:
            continue
        seen[q.text] = None
        out.append(q)
    if len(out) < n:
        raise RuntimeError(f"could only make {len(out)} of {n} queries")
    return out


def query_tables(
    queries: list[Query], doc_ids: Sequence[str], qids: Sequence[str], extra: dict[str, list[Any]]
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Queries and qrels tables from generated queries (gold = indices into ``doc_ids``)."""
    meta_cols = list(dict.fromkeys(k for q in queries for k in q.meta))
    qdf = pd.DataFrame(
        {
            "query_id": str_col(qids),
            "text": str_col([q.text for q in queries]),
            "query_type": str_col([q.query_type for q in queries]),
        }
    )
    for col, vals in extra.items():
        qdf[col] = vals if not isinstance(vals[0], str) else str_col(vals)
    for col in meta_cols:
        qdf[col] = str_col([q.meta.get(col) for q in queries])
    rows_q = [qid for qid, q in zip(qids, queries, strict=True) for _ in q.gold]
    rows_d = [doc_ids[g] for q in queries for g in q.gold]
    qrels = pd.DataFrame(
        {
            "query_id": str_col(rows_q),
            "doc_id": str_col(rows_d),
            "relevance": np.ones(len(rows_q), dtype=np.int64),
        }
    )
    return qdf, qrels


@cache
def vocabulary(name: str) -> SimpleNamespace:
    """The vocabulary ``demo/vocab/<name>.toml`` (word lists and tables of one domain), its
    top-level keys as attributes."""
    with (Path(__file__).parent / "vocab" / f"{name}.toml").open("rb") as fh:
        return SimpleNamespace(**tomllib.load(fh))
