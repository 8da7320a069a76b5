"""N-model significance: every pair of models, paired tests, Holm correction, ranx letters.

For one dataset and one metric, every unordered pair of models (A before B in the given order)
is compared on the queries both were evaluated on with
:func:`analysis.stats.paired_comparison` (delta = mean(A - B), paired t-test, Wilcoxon, paired
randomization). The p-values of the chosen test are Holm-corrected over the ``N(N-1)/2`` pairs
of the dataset (family-wise error rate ``alpha``; one family per dataset and metric, since no
statistic pools datasets).

Letters, as ranx prints them: model i gets letter ``"abcdefghijklmnopqrstuvwxyz"[i]`` (in the
given model order; from the 27th model on ``a1``, ``b1``, ..., :func:`model_letters`), and a
model's cell lists the letters of the models it beats significantly (corrected p < alpha and a
positive delta). E.g. ``{"bm25": "", "dense": "a"}``: dense beats
bm25.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import combinations
from string import ascii_lowercase

import numpy as np
import pandas as pd

from analysis.stats.inference import holm, paired_comparison

__all__ = ["TESTS", "model_letters", "pairs", "significance_letters", "significance_matrix"]

TESTS = {"randomization": "p_randomization", "t": "p_t", "wilcoxon": "p_wilcoxon"}
PAIR_COLUMNS = [
    "dataset", "model_a", "model_b", "n", "mean_a", "mean_b", "delta", "ci_low", "ci_high",
    "p", "p_holm", "significant",
]  # fmt: skip


def model_letters(models: Sequence[str]) -> dict[str, str]:
    """Letter of each model, in order: ``a`` ... ``z``, then ``a1`` ... ``z1``, ``a2`` ... (as
    the leaderboard numbers them). Every letter is a letter and an optional number, so a cell
    of several letters (``"a1b"``) reads only one way."""
    n = len(ascii_lowercase)
    return {
        m: ascii_lowercase[i % n] + (str(i // n) if i >= n else "") for i, m in enumerate(models)
    }


def pairs(
    per_query: pd.DataFrame,
    metric: str,
    *,
    models: Sequence[str] | None = None,
    test: str = "randomization",
    alpha: float = 0.05,
    n_resamples: int = 10_000,
    seed: int = 0,
) -> pd.DataFrame:
    """Every pair of models per dataset: ``dataset, model_a, model_b, n, mean_a, mean_b,
    delta, ci_low, ci_high, p, p_holm, significant`` (``p`` of ``test``; ``significant`` =
    ``p_holm < alpha``). Pairs follow the model order (A is the earlier model).

    Raises:
        ValueError: unknown test or metric, alpha outside (0, 1).
    """
    if test not in TESTS:
        raise ValueError(f"unknown test {test!r}; choose from {sorted(TESTS)}")
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must be strictly between 0 and 1, got {alpha!r}")
    if metric not in per_query.columns:
        raise ValueError(f"metric {metric!r} is not a column of the per-query table")
    table = per_query if "dataset" in per_query.columns else per_query.assign(dataset="")
    rows = []
    for dataset, group in table.groupby("dataset", sort=False):
        wide = group.pivot_table(index="query_id", columns="model", values=metric, aggfunc="first")
        names = [m for m in (models or list(dict.fromkeys(group["model"]))) if m in wide.columns]
        found = []
        for a, b in combinations(names, 2):
            both = wide[[a, b]].dropna()
            result = paired_comparison(
                both[a].to_numpy(), both[b].to_numpy(), n_resamples=n_resamples, seed=seed
            )
            found.append(
                {
                    "dataset": dataset,
                    "model_a": a,
                    "model_b": b,
                    "n": result.n,
                    "mean_a": result.mean_a,
                    "mean_b": result.mean_b,
                    "delta": result.delta,
                    "ci_low": result.ci_low,
                    "ci_high": result.ci_high,
                    "p": getattr(result, TESTS[test]),
                }
            )
        if found:
            adjusted = holm([r["p"] for r in found])
            for r, p_holm in zip(found, adjusted, strict=True):
                r["p_holm"] = float(p_holm)
                r["significant"] = bool(p_holm < alpha)
            rows.extend(found)
    return pd.DataFrame(rows, columns=PAIR_COLUMNS)


def significance_letters(
    pair_table: pd.DataFrame, models: Sequence[str], dataset: str | None = None
) -> dict[str, str]:
    """Per model, the letters (:func:`model_letters`) of the models it beats significantly in
    ``pair_table`` (one dataset: ``dataset`` or the only one in the table)."""
    letters = model_letters(models)
    rows = pair_table if dataset is None else pair_table[pair_table["dataset"] == dataset]
    beaten: dict[str, set[str]] = {m: set() for m in models}
    for r in rows[rows["significant"]].itertuples(index=False):
        if r.model_a not in letters or r.model_b not in letters or r.delta == 0:
            continue
        winner, loser = (r.model_a, r.model_b) if r.delta > 0 else (r.model_b, r.model_a)
        beaten[winner].add(letters[loser])
    return {m: "".join(sorted(beaten[m])) for m in models}


def significance_matrix(
    pair_table: pd.DataFrame, models: Sequence[str], value: str = "p_holm"
) -> pd.DataFrame:
    """Square table (rows and columns = ``models``) of one dataset's pairs. ``value`` is
    ``"p_holm"`` or ``"p"`` (symmetric), or ``"delta"`` (cell ``[row, col]`` = mean(row - col)).
    NaN on the diagonal and for pairs not in the table."""
    if value not in ("p", "p_holm", "delta"):
        raise ValueError(f"value must be p, p_holm or delta, got {value!r}")
    out = pd.DataFrame(np.nan, index=list(models), columns=list(models))
    for r in pair_table.itertuples(index=False):
        if r.model_a in out.index and r.model_b in out.index:
            v = float(getattr(r, value))
            out.loc[r.model_a, r.model_b] = v
            out.loc[r.model_b, r.model_a] = -v if value == "delta" else v
    return out
