"""The report's tables (:class:`~analysis.present.export.StyledTable` with bold, marks and
notes): the leaderboard, A vs B per dataset and per slice, and model A's worst slices."""

from __future__ import annotations

import numpy as np
import pandas as pd

from analysis.present.export import Estimate, StyledTable, results_table
from analysis.present.report.model import (
    ALPHA,
    MIN_SLICE,
    TOP_SLICE_DELTAS,
    TOP_WORST_SLICES,
    Block,
)
from analysis.stats.paired import format_p

__all__ = ["compare_table", "leaderboard_block", "slice_delta_table", "worst_slices_table"]


def p_cells(pvalues: pd.Series, bounds: pd.Series) -> list[str]:
    """p-values as table text, ``< x`` where a value is only an upper bound
    (:func:`analysis.stats.paired.format_p`)."""
    return [format_p(p, bound=bool(b)) for p, b in zip(pvalues, bounds, strict=True)]


def estimates(frame: pd.DataFrame, column: str) -> list[Estimate]:
    """``column`` with its 95% CI (``ci_low``, ``ci_high``) as table cells."""
    return [
        Estimate(v, lo, hi)
        for v, lo, hi in zip(frame[column], frame["ci_low"], frame["ci_high"], strict=True)
    ]


def _slice_cells(frame: pd.DataFrame) -> dict[str, pd.Series]:
    """The leading columns of the per-slice tables: dataset, slice, value, metric, n."""
    return {
        "dataset": frame["dataset"].astype(str),
        "slice": frame["slice"].astype(str),
        "value": frame["value"].astype(str),
        "metric": frame["metric"].astype(str),
        "n": frame["n"].astype(int),
    }


def leaderboard_block(board, pvalues, shown, datasets) -> Block:
    metrics = list(dict.fromkeys(m for d in datasets for m in shown[d]))
    keep = {(d, m) for d in datasets for m in shown[d]}
    styled = results_table(board, metrics, keep=keep, pvalues=pvalues, alpha=ALPHA)
    return Block(
        key="leaderboard-table",
        kind="table",
        title="Leaderboard table",
        caption="Rows: dataset and model; columns: each dataset's headline metrics and the "
        "report metric (blank where not a headline metric of that dataset).",
        table=styled,
        group="dataset",
    )


def compare_table(comp: pd.DataFrame) -> StyledTable:
    cells = pd.DataFrame(
        {
            "dataset": comp["dataset"].astype(str),
            "metric": comp["metric"].astype(str),
            "n": comp["n"].astype(int),
            "mean A": comp["mean_a"].astype(float),
            "mean B": comp["mean_b"].astype(float),
            "delta A−B": estimates(comp, "delta"),
            "wins/ties/losses": [
                f"{w}/{t}/{loss}"
                for w, t, loss in zip(comp["wins"], comp["ties"], comp["losses"], strict=True)
            ],
            "p": p_cells(comp["p_randomization"], comp["p_floor"]),
            "p (Holm)": p_cells(comp["p_holm"], comp["p_holm_bound"]),
        }
    )
    marks = pd.DataFrame("", index=cells.index, columns=cells.columns)
    marks["delta A−B"] = np.where(comp["p_holm"].to_numpy() < ALPHA, "*", "")
    notes = (
        "delta = mean of A − B over the queries scored by both; ± half-width of the 95% "
        "bootstrap CI (larger side).",
        f"*: significant after Holm correction over the {len(comp)} rows (paired randomization "
        f"test, alpha = {ALPHA:g}).",
    )
    data = comp[
        [
            "dataset",
            "metric",
            "n",
            "mean_a",
            "mean_b",
            "delta",
            "ci_low",
            "ci_high",
            "wins",
            "ties",
            "losses",
            "effect_size",
            "p_t",
            "p_randomization",
            "p_holm",
        ]
    ]
    return StyledTable(cells=cells, marks=marks, notes=notes, data=data.reset_index(drop=True))


def slice_delta_table(deltas: pd.DataFrame) -> StyledTable:
    cells = pd.DataFrame(
        {
            **_slice_cells(deltas),
            "mean A": deltas["mean_a"].astype(float),
            "mean B": deltas["mean_b"].astype(float),
            "delta A−B": estimates(deltas, "delta"),
            "p (Holm)": p_cells(deltas["p_holm"], deltas["p_holm_bound"]),
        }
    )
    marks = pd.DataFrame("", index=cells.index, columns=cells.columns)
    marks["delta A−B"] = np.where(deltas["p_holm"].to_numpy() < ALPHA, "*", "")
    notes = (
        f"Per dataset, the {TOP_SLICE_DELTAS} slices (>= {MIN_SLICE} queries) with the largest "
        "|delta| of the report metric; Holm correction over all slices of that dataset; "
        f"*: p (Holm) < {ALPHA:g}.",
    )
    return StyledTable(cells=cells, marks=marks, notes=notes, data=deltas.reset_index(drop=True))


def worst_slices_table(frames: list[pd.DataFrame]) -> StyledTable | None:
    if not frames:
        return None
    worst = pd.concat(frames, ignore_index=True)
    cells = pd.DataFrame(
        {
            **_slice_cells(worst),
            "mean": estimates(worst, "mean"),
            "overall": worst["overall"].astype(float),
            "gap": worst["gap"].astype(float),
            "CI below overall": worst["below"].astype(bool),
        }
    )
    notes = (
        f"Model A's {TOP_WORST_SLICES} slices (>= {MIN_SLICE} queries) furthest below its overall "
        "mean per dataset; gap = slice mean − overall mean. 'CI below overall' is a screening "
        "flag (the slice is part of the overall mean), not a test.",
    )
    return StyledTable(cells=cells, notes=notes, data=worst)
