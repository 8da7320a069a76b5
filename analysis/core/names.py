"""Metric names: parsing ``hit@1``, ``recall@20``, ``P@5``, ``nDCG@10``, ``map``, ``map@100``,
``rprec``, ... into :class:`Metric` objects, with one-line errors naming the known metrics.

Names, aliases and cutoff rules come from the measure registry
(:mod:`analysis.core.measures`), user measures included."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from analysis.core.measures import known, parse_name

TiePolicy = Literal["trec_eval", "stable"]
TIE_POLICIES: tuple[str, ...] = ("trec_eval", "stable")
DEFAULT_METRICS: tuple[str, ...] = ("hit@1", "hit@5", "recall@20", "mrr", "ndcg@10")


@dataclass(frozen=True)
class Metric:
    """One metric: ``measure`` (a name in the measure registry), cutoff ``k`` (``None`` for the
    whole list) and the ``label`` it was requested under (used as the column name)."""

    measure: str
    k: int | None
    label: str

    @property
    def name(self) -> str:
        """Canonical name, e.g. ``ndcg@10``."""
        return self.measure if self.k is None else f"{self.measure}@{self.k}"


def parse_metric(text: str) -> Metric:
    """Parse ``hit@1``, ``recall@20``, ``P@5``, ``nDCG@10``, ``ndcg_cut_10``, ``mrr``, ``RR@10``,
    ``map``, ``map@100`` (= ``map_cut_100``), ``rprec`` (= ``Rprec``).

    Raises:
        ValueError: one line naming the unknown measure and the known ones, or saying that the
            cutoff is not a positive integer (``hit@0``) or not allowed (``rprec@5``).
    """
    found, k = parse_name(text)
    return Metric(found.name, k, str(text).strip())


def parse_metrics(spec: str | Iterable[str | Metric]) -> list[Metric]:
    """Parse a comma-separated string or a sequence of metric names (duplicates removed).

    Raises:
        ValueError: an unknown name (see :func:`parse_metric`) or no metric at all.
    """
    items = spec.split(",") if isinstance(spec, str) else list(spec)
    out: list[Metric] = []
    for item in items:
        if isinstance(item, Metric):
            metric = item
        elif str(item).strip():
            metric = parse_metric(str(item))
        else:
            continue
        if metric.label not in {m.label for m in out}:
            out.append(metric)
    if not out:
        raise ValueError(f"no metric requested (known: {known()})")
    return out
