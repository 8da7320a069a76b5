"""The report: a written summary, the leaderboard, slice charts, model A against model B, the
worst queries with their rankings and the failure causes — as sections the Report page draws
and as one self-contained HTML file (``python -m analysis report``).

Content (:func:`build_content`, from a per-query table, DESIGN §3):

* **Report metric** per dataset: the metric given (the page passes the sidebar's), else the
  dataset's first headline metric (``metrics`` in ``bundle.toml``). Slices, the worst queries,
  the failure causes and the summary use it; the leaderboard and the A/B table show every
  headline metric of each dataset plus the report metric.
* **Leaderboard**: :func:`analysis.stats.mean_ci` per dataset, model and metric (mean over every
  query of the qrels — queries missing from a run count as 0 — with n and a seeded 95%
  bootstrap CI, B = 10,000). Bold = best mean of its dataset and metric. ``*`` = significantly
  below that best model: paired sign-flip randomization test (:func:`analysis.stats.compare_slices`,
  B = 10,000, seed 0) of the best model against each other model, Holm-corrected over all those
  comparisons of the table.
* **Slices**: per dataset, the report metric per slice value (``column = value``) and model with
  95% CIs, for the first :data:`MAX_SLICE_COLUMNS` varied slice columns (at most
  :data:`MAX_SLICE_VALUES` values each, the largest); and model A's worst slices
  (:func:`analysis.stats.slice_finder`, slices of at least :data:`MIN_SLICE` queries, over every
  varied slice column), sorted by gap = slice mean - overall mean.
* **A vs B** (delta = A - B): per dataset and metric, means, delta with its bootstrap CI,
  wins/ties/losses, randomization p and Holm's p over all dataset x metric rows; ``*`` marks
  p_holm < 0.05. Per-slice deltas of the report metric (slices of >= :data:`MIN_SLICE` queries,
  Holm within each dataset), the :data:`TOP_SLICE_DELTAS` largest |delta| per dataset.
* **Worst queries** of model A per dataset: lowest report metric, then the largest loss against B,
  then the deepest first gold rank (no gold retrieved first), then query id; the first
  :data:`TOP_QUERIES` with their gold documents and both rankings (top :data:`RANK_DEPTH`).
* **Failure causes** per dataset and model: queries at 0, queries whose value depends on the
  order of tied scores (``<metric>_min != <metric>_max``) and the range of the mean over tie
  orders, a non-gold POI on the gold's coordinate ranked above the gold (``indistinguishable``,
  spatial data), queries missing from the run, without relevant document, or with more gold than
  k (recall@k cannot reach 1); plus the data-check warnings.

The summary is a list of plain-text sentences generated from these numbers. Names of models,
datasets and slices come from files: the page escapes them
(:func:`analysis.present.export.escape_markdown`), the HTML escapes every data string with
:func:`html.escape`, figures with :func:`analysis.present.export.plotly_text`. The HTML inlines
plotly.js once (``include_plotlyjs=True`` for the first figure, ``False`` after) and contains no
external URL.

The module never imports streamlit.
"""

from __future__ import annotations

import html
import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from analysis.core.errors import DataWarning, InputError
from analysis.core.metrics import TIE_POLICIES, parse_metric, rank_run
from analysis.io.atomic import atomic_write_text
from analysis.io.bundle import Dataset, load_dataset, load_model_run, read_manifest
from analysis.present.export import (
    PLOTLY_CONFIG,
    Estimate,
    StyledTable,
    plotly_text,
    results_table,
    to_html,
)
from analysis.present.rankings import gold_table, ranking_table, side_by_side
from analysis.stats import compare_slices, holm, mean_ci, slice_finder
from analysis.stats.paired import format_p as p_text
from analysis.stats.paired import holm_bounds, p_phrase
from analysis.stats.perquery import dashboard_metrics, per_query_table, slice_columns

__all__ = [
    "Block",
    "QueryView",
    "ReportContent",
    "Section",
    "build_content",
    "build_report",
    "default_models",
    "render_html",
    "write_report",
]

MAX_SLICE_COLUMNS = 4
MAX_SLICE_VALUES = 12
MIN_SLICE = 10
TOP_WORST_SLICES = 5
TOP_SLICE_DELTAS = 8
TOP_QUERIES = 5
RANK_DEPTH = 10
QUERY_TEXT_CHARS = 160
ALPHA = 0.05
N_RESAMPLES = 10_000
SEED = 0
COLORS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2")
# thresholds that make a failure cause "notable" in the summary
NOTABLE_SHARE = 0.05
NOTABLE_TIE_RANGE = 0.01

BlockKind = Literal["text", "figure", "table", "query"]


@dataclass(frozen=True)
class QueryView:
    """One query of the worst-queries list: its text, key numbers, gold and rankings."""

    dataset: str
    query_id: str
    text: str
    facts: pd.DataFrame
    gold: pd.DataFrame
    rankings: pd.DataFrame


@dataclass(frozen=True)
class Block:
    """One thing to show (one screen in presentation mode). ``title`` and ``caption`` are plain
    text that may contain names from files (render them as text); ``key`` is a slug, unique in
    the report, used for widget keys and export file names."""

    key: str
    kind: BlockKind
    title: str
    caption: str = ""
    text: tuple[str, ...] = ()
    figure: go.Figure | None = None
    table: StyledTable | pd.DataFrame | None = None
    query: QueryView | None = None
    group: str | None = None  # LaTeX: column whose change starts a \midrule
    dataset: str | None = None  # set on blocks about one dataset (the page can filter them)


@dataclass(frozen=True)
class Section:
    """A report section; ``intro`` is constant text (no data strings)."""

    key: str
    title: str
    intro: str
    blocks: tuple[Block, ...]


@dataclass(frozen=True)
class ReportContent:
    """Everything the report shows; see the module docstring."""

    bundle: str
    datasets: tuple[str, ...]
    model_a: str | None
    model_b: str | None
    metrics: dict[str, str]
    ties: str
    summary: tuple[str, ...]
    sections: tuple[Section, ...]
    numbers: dict[str, pd.DataFrame] = field(default_factory=dict, compare=False)

    def blocks(self) -> list[tuple[Section, Block]]:
        """Every block in display order with its section (the slides of presentation mode)."""
        return [(s, b) for s in self.sections for b in s.blocks]


# --------------------------------------------------------------------------- helpers


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_-]+", "-", str(text)).strip("-").lower() or "x"


def _fmt(x: float, digits: int = 3) -> str:
    return "nan" if x is None or not math.isfinite(x) else f"{x:.{digits}f}"


def _canonical(name: str) -> str | None:
    try:
        return parse_metric(name).name
    except ValueError:
        return None


def _report_metrics(
    table: pd.DataFrame, datasets: Sequence[str], headline: Mapping[str, Sequence[str]], metric
) -> tuple[dict[str, str], dict[str, list[str]]]:
    """(report metric per dataset, leaderboard metrics per dataset), present in ``table``."""
    chosen: dict[str, str] = {}
    shown: dict[str, list[str]] = {}
    for name in datasets:
        heads = [c for c in (_canonical(h) for h in headline.get(name, ())) if c in table.columns]
        first = metric if metric is not None and metric in table.columns else None
        fallback = [m for m in ("hit@1", "recall@10", "mrr") if m in table.columns]
        fallback += [c for c in table.columns if _canonical(str(c)) == c]
        if not (first or heads or fallback):
            raise ValueError(f"dataset {name!r}: the per-query table has no metric column")
        chosen[name] = first or (heads[0] if heads else fallback[0])
        shown[name] = list(dict.fromkeys([chosen[name], *heads]))
    return chosen, shown


def default_models(table: pd.DataFrame, datasets: Sequence[str]) -> tuple[str | None, str | None]:
    """Models A and B when none is given: the models with a run on the most datasets (ties: the
    first seen in the table), A first."""
    counts: dict[str, int] = {}
    for name in datasets:
        for model in pd.unique(table.loc[table["dataset"] == name, "model"].astype(str)):
            counts[model] = counts.get(model, 0) + 1
    order = sorted(counts, key=lambda m: -counts[m])  # stable: first seen wins ties
    return (order[0] if order else None, order[1] if len(order) > 1 else None)


def _constant(series: pd.Series) -> bool:
    values = series.to_numpy(dtype=object)
    return len(values) == 0 or bool((series.isna().all()) or (series == values[0]).all())


def _varied_slices(sub: pd.DataFrame) -> list[str]:
    return [c for c in slice_columns(sub) if c != "dataset" and not _constant(sub[c])]


# --------------------------------------------------------------------------- statistics


def _best_vs_rest(
    table: pd.DataFrame, board: pd.DataFrame, n_resamples: int, seed: int
) -> pd.DataFrame:
    """``dataset, model, metric, best_model, p, p_holm``: each model against the best model of
    its (dataset, metric); Holm over every comparison. Best models get ``p_holm`` NaN."""
    pairs: dict[tuple[str, str, str], list[str]] = {}
    for (name, metric), grp in board.groupby(["dataset", "metric"], sort=False):
        if len(grp) < 2:
            continue
        best = str(grp.loc[grp["mean"].idxmax(), "model"])
        for other in grp["model"].astype(str):
            if other != best:
                pairs.setdefault((str(name), best, other), []).append(str(metric))
    rows: list[dict[str, object]] = []
    for (name, best, other), metrics in pairs.items():
        sub = table.loc[table["dataset"] == name]
        try:
            comp = compare_slices(sub, metrics, best, other, n_resamples=n_resamples, seed=seed)
        except ValueError:
            continue
        for rec in comp.to_dict("records"):
            rows.append(
                {
                    "dataset": name,
                    "model": other,
                    "metric": rec["metric"],
                    "best_model": best,
                    "p": rec["p_randomization"],
                    "p_floor": rec["p_floor"],
                }
            )
    out = pd.DataFrame(rows, columns=["dataset", "model", "metric", "best_model", "p", "p_floor"])
    out["p_holm"] = holm(out["p"]) if len(out) else np.array([], dtype=float)
    out["p_holm_bound"] = holm_bounds(out["p"], out["p_floor"].astype(bool))
    return out


def _compare(
    table: pd.DataFrame,
    datasets: Sequence[str],
    shown: Mapping[str, list[str]],
    model_a: str,
    model_b: str,
    n_resamples: int,
    seed: int,
) -> pd.DataFrame:
    """The ``all`` rows of :func:`compare_slices` per dataset with both models, with
    ``p_holm`` recomputed over every (dataset, metric) row."""
    frames = []
    for name in datasets:
        sub = table.loc[table["dataset"] == name]
        if not {model_a, model_b} <= set(sub["model"].astype(str)):
            continue
        try:
            comp = compare_slices(
                sub, shown[name], model_a, model_b, n_resamples=n_resamples, seed=seed
            )
        except ValueError:  # e.g. a metric not computed for every query: no comparison
            continue
        frames.append(comp.assign(dataset=name))
    if not frames:
        return pd.DataFrame()
    out = pd.concat(frames, ignore_index=True)
    out["p_holm"] = holm(out["p_randomization"])
    out["p_holm_bound"] = holm_bounds(out["p_randomization"], out["p_floor"])
    return out


def _slice_deltas(
    table: pd.DataFrame,
    datasets: Sequence[str],
    chosen: Mapping[str, str],
    model_a: str,
    model_b: str,
    n_resamples: int,
    seed: int,
) -> pd.DataFrame:
    frames = []
    for name in datasets:
        sub = table.loc[table["dataset"] == name]
        if not {model_a, model_b} <= set(sub["model"].astype(str)):
            continue
        cols = _varied_slices(sub)
        if not cols:
            continue
        try:
            comp = compare_slices(
                sub,
                [chosen[name]],
                model_a,
                model_b,
                cols,
                n_resamples=n_resamples,
                seed=seed,
                min_size=MIN_SLICE,
            )
        except ValueError:
            continue
        comp = comp.loc[comp["slice"] != "all"].copy()
        comp["p_holm"] = holm(comp["p_randomization"])
        comp["p_holm_bound"] = holm_bounds(comp["p_randomization"], comp["p_floor"])
        comp = comp.reindex(comp["delta"].abs().sort_values(ascending=False).index)
        frames.append(comp.head(TOP_SLICE_DELTAS).sort_values("delta").assign(dataset=name))
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def _causes(
    table: pd.DataFrame, datasets: Sequence[str], chosen: Mapping[str, str]
) -> pd.DataFrame:
    """One row per (dataset, model): counts of the failure causes of the report metric."""
    rows = []
    for name in datasets:
        metric = chosen[name]
        k = parse_metric(metric).k
        sub = table.loc[table["dataset"] == name]
        for model, grp in sub.groupby("model", sort=False):
            values = grp[metric].to_numpy(dtype=float)
            failing = values == 0
            lo_col, hi_col = f"{metric}_min", f"{metric}_max"
            if lo_col in grp.columns and hi_col in grp.columns:
                lo = grp[lo_col].to_numpy(dtype=float)
                hi = grp[hi_col].to_numpy(dtype=float)
                tie_dep = int((~np.isclose(lo, hi)).sum())
                mean_lo, mean_hi = float(lo.mean()), float(hi.mean())
            else:
                tie_dep, mean_lo, mean_hi = 0, math.nan, math.nan
            if "indistinguishable" in grp.columns:
                indist = grp["indistinguishable"].fillna(False).to_numpy(dtype=bool)
                dup = int(indist.sum())
                dup_failing = int((indist & failing).sum())
            else:
                dup, dup_failing = 0, 0
            gold_over_k = (
                int((grp["n_gold"].to_numpy() > k).sum())
                if k is not None and metric.startswith("recall") and "n_gold" in grp.columns
                else 0
            )
            rows.append(
                {
                    "dataset": name,
                    "model": str(model),
                    "metric": metric,
                    "n": len(grp),
                    "mean": float(values.mean()) if len(values) else math.nan,
                    "at 0": int(failing.sum()),
                    "tie-dependent": tie_dep,
                    "mean, worst tie order": mean_lo,
                    "mean, best tie order": mean_hi,
                    "non-gold on gold coordinate above gold": dup,
                    "of which at 0": dup_failing,
                    "missing from run": _count(grp, "missing_from_run"),
                    "no relevant doc": _count(grp, "no_relevant"),
                    "more gold than k": gold_over_k,
                }
            )
    return pd.DataFrame(rows)


def _count(frame: pd.DataFrame, column: str) -> int:
    if column not in frame.columns:
        return 0
    return int(frame[column].fillna(False).astype(bool).sum())


# --------------------------------------------------------------------------- figures


def _layout(fig: go.Figure, title: str, height: int) -> go.Figure:
    fig.update_layout(
        title={
            "text": plotly_text(title),
            "x": 0.0,
            "y": 0.99,
            "yref": "container",
            "yanchor": "top",
        },
        height=height,
        template="plotly_white",
        margin={"l": 10, "r": 10, "t": 100, "b": 40},
        legend={"orientation": "h", "yanchor": "bottom", "y": 1.0, "x": 0},
        font={"size": 14},
    )
    return fig


def _leaderboard_figure(board: pd.DataFrame, datasets: Sequence[str], chosen) -> go.Figure:
    """One panel per dataset: the report metric of every model with 95% CI error bars."""
    names = [
        d for d in datasets if ((board["dataset"] == d) & (board["metric"] == chosen[d])).any()
    ]
    cols = min(3, max(1, len(names)))
    rows = max(1, math.ceil(len(names) / cols))
    titles = [plotly_text(f"{d} — {chosen[d]}") for d in names]
    fig = make_subplots(rows=rows, cols=cols, subplot_titles=titles or None)
    models = list(dict.fromkeys(board["model"].astype(str)))
    for i, name in enumerate(names):
        part = board.loc[(board["dataset"] == name) & (board["metric"] == chosen[name])]
        for rec in part.to_dict("records"):
            model = str(rec["model"])
            fig.add_trace(
                go.Bar(
                    x=[plotly_text(model)],
                    y=[rec["mean"]],
                    name=plotly_text(model),
                    legendgroup=plotly_text(model),
                    showlegend=False,
                    marker_color=COLORS[models.index(model) % len(COLORS)],
                    error_y={
                        "type": "data",
                        "symmetric": False,
                        "array": [rec["ci_high"] - rec["mean"]],
                        "arrayminus": [rec["mean"] - rec["ci_low"]],
                    },
                    hovertemplate=(
                        f"{plotly_text(model)}<br>mean %{{y:.3f}}<br>95% CI "
                        f"[{rec['ci_low']:.3f}, {rec['ci_high']:.3f}]<br>n {int(rec['n'])}"
                        "<extra></extra>"
                    ),
                ),
                row=i // cols + 1,
                col=i % cols + 1,
            )
    fig.update_yaxes(rangemode="tozero")
    return _layout(fig, "Leaderboard: report metric per dataset (95% CI)", 330 * rows + 80)


def _slice_summary(sub: pd.DataFrame, metric: str) -> pd.DataFrame:
    """``label, column, value, model, n, mean, ci_low, ci_high`` for the slice chart."""
    frames = []
    for col in _varied_slices(sub)[:MAX_SLICE_COLUMNS]:
        labels = sub[col].astype("object").where(sub[col].notna(), "(missing)").astype(str)
        work = pd.DataFrame(
            {"value": labels, "model": sub["model"].astype(str), metric: sub[metric]}
        )
        top = work["value"].value_counts().head(MAX_SLICE_VALUES).index
        work = work.loc[work["value"].isin(top)]
        stats = mean_ci(work, metric, by=["value", "model"], n_resamples=N_RESAMPLES, seed=SEED)
        stats.insert(0, "column", col)
        frames.append(stats)
    if not frames:
        return pd.DataFrame()
    out = pd.concat(frames, ignore_index=True)
    out.insert(0, "label", out["column"] + " = " + out["value"].astype(str))
    return out


def _slice_figure(summary: pd.DataFrame, dataset: str, metric: str) -> go.Figure:
    labels = list(dict.fromkeys(summary["label"]))
    fig = go.Figure()
    models = list(dict.fromkeys(summary["model"]))
    for i, model in enumerate(models):
        part = summary.loc[summary["model"] == model]
        fig.add_trace(
            go.Bar(
                y=[plotly_text(v) for v in part["label"]],
                x=part["mean"],
                orientation="h",
                name=plotly_text(model),
                marker_color=COLORS[i % len(COLORS)],
                error_x={
                    "type": "data",
                    "symmetric": False,
                    "array": (part["ci_high"] - part["mean"]).tolist(),
                    "arrayminus": (part["mean"] - part["ci_low"]).tolist(),
                },
                customdata=np.stack([part["n"], part["ci_low"], part["ci_high"]], axis=1),
                hovertemplate="%{y}<br>mean %{x:.3f}<br>95% CI [%{customdata[1]:.3f}, "
                "%{customdata[2]:.3f}]<br>n %{customdata[0]}<extra>"
                + plotly_text(model)
                + "</extra>",
            )
        )
    fig.update_layout(barmode="group")
    fig.update_yaxes(
        categoryorder="array", categoryarray=[plotly_text(v) for v in labels][::-1], automargin=True
    )
    fig.update_xaxes(title_text=plotly_text(metric), rangemode="tozero")
    height = 140 + len(labels) * (14 * max(1, len(models)) + 8)
    return _layout(fig, f"{dataset}: {metric} by slice (95% CI)", min(max(height, 360), 1400))


def _compare_figure(comp: pd.DataFrame, model_a: str, model_b: str) -> go.Figure:
    labels = [
        plotly_text(f"{d} · {m}") for d, m in zip(comp["dataset"], comp["metric"], strict=True)
    ]
    significant = (comp["p_holm"] < ALPHA).to_numpy()
    fig = go.Figure()
    for flag, name, color in (
        (True, "significant (Holm)", "#d62728"),
        (False, "not significant", "#7f7f7f"),
    ):
        mask = significant == flag
        part = comp.loc[mask]
        fig.add_trace(
            go.Scatter(
                x=part["delta"],
                y=[lab for lab, m in zip(labels, mask, strict=True) if m],
                mode="markers",
                name=name,
                marker={"color": color, "size": 11},
                error_x={
                    "type": "data",
                    "symmetric": False,
                    "array": (part["ci_high"] - part["delta"]).tolist(),
                    "arrayminus": (part["delta"] - part["ci_low"]).tolist(),
                },
                customdata=np.stack([part["p_holm"], part["n"]], axis=1) if len(part) else None,
                hovertemplate="%{y}<br>delta %{x:.3f}<br>p (Holm) %{customdata[0]:.4f}"
                "<br>n %{customdata[1]}<extra></extra>",
            )
        )
    fig.add_vline(x=0, line_dash="dash", line_color="#333")
    fig.update_yaxes(categoryorder="array", categoryarray=labels[::-1], automargin=True)
    fig.update_xaxes(title_text=plotly_text(f"delta = {model_a} − {model_b} (95% CI)"))
    return _layout(
        fig, "A vs B: difference per dataset and metric", max(360, 120 + 30 * len(labels))
    )


# --------------------------------------------------------------------------- tables


def _leaderboard_block(board, pvalues, shown, datasets) -> Block:
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


def _compare_table(comp: pd.DataFrame) -> StyledTable:
    cells = pd.DataFrame(
        {
            "dataset": comp["dataset"].astype(str),
            "metric": comp["metric"].astype(str),
            "n": comp["n"].astype(int),
            "mean A": comp["mean_a"].astype(float),
            "mean B": comp["mean_b"].astype(float),
            "delta A−B": [
                Estimate(d, lo, hi)
                for d, lo, hi in zip(comp["delta"], comp["ci_low"], comp["ci_high"], strict=True)
            ],
            "wins/ties/losses": [
                f"{w}/{t}/{loss}"
                for w, t, loss in zip(comp["wins"], comp["ties"], comp["losses"], strict=True)
            ],
            "p": [
                p_text(p, bound=f)
                for p, f in zip(comp["p_randomization"], comp["p_floor"], strict=True)
            ],
            "p (Holm)": [
                p_text(p, bound=f)
                for p, f in zip(comp["p_holm"], comp["p_holm_bound"], strict=True)
            ],
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


def _slice_delta_table(deltas: pd.DataFrame) -> StyledTable:
    cells = pd.DataFrame(
        {
            "dataset": deltas["dataset"].astype(str),
            "slice": deltas["slice"].astype(str),
            "value": deltas["value"].astype(str),
            "metric": deltas["metric"].astype(str),
            "n": deltas["n"].astype(int),
            "mean A": deltas["mean_a"].astype(float),
            "mean B": deltas["mean_b"].astype(float),
            "delta A−B": [
                Estimate(d, lo, hi)
                for d, lo, hi in zip(
                    deltas["delta"], deltas["ci_low"], deltas["ci_high"], strict=True
                )
            ],
            "p (Holm)": [
                p_text(p, bound=f)
                for p, f in zip(deltas["p_holm"], deltas["p_holm_bound"], strict=True)
            ],
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


def _worst_slices_table(frames: list[pd.DataFrame]) -> StyledTable | None:
    if not frames:
        return None
    worst = pd.concat(frames, ignore_index=True)
    cells = pd.DataFrame(
        {
            "dataset": worst["dataset"].astype(str),
            "slice": worst["slice"].astype(str),
            "value": worst["value"].astype(str),
            "metric": worst["metric"].astype(str),
            "n": worst["n"].astype(int),
            "mean": [
                Estimate(m, lo, hi)
                for m, lo, hi in zip(worst["mean"], worst["ci_low"], worst["ci_high"], strict=True)
            ],
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


def _worst_queries(
    table: pd.DataFrame, name: str, metric: str, model_a: str, model_b: str | None
) -> pd.DataFrame:
    """Model A's queries of one dataset, worst first (see the module docstring)."""
    sub = table.loc[(table["dataset"] == name) & (table["model"] == model_a)]
    cols = [c for c in ("query_id", "text", metric, "first_gold_rank", "n_gold") if c in sub]
    rows = sub[cols].copy()
    if f"{metric}_min" in sub.columns:
        rows["tie-dependent"] = ~np.isclose(sub[f"{metric}_min"], sub[f"{metric}_max"])
    if "indistinguishable" in sub.columns:
        rows["non-gold on gold coordinate"] = sub["indistinguishable"].fillna(False).astype(bool)
    if "first_gold_rank" in rows.columns:
        rows["first_gold_rank"] = rows["first_gold_rank"].astype("Int64")
    col_a, col_b = f"{metric} A", f"{metric} B"
    rows = rows.rename(columns={metric: col_a}).reset_index(drop=True)
    if model_b is not None:
        b = table.loc[
            (table["dataset"] == name) & (table["model"] == model_b), ["query_id", metric]
        ]
        rows = rows.merge(b.rename(columns={metric: col_b}), on="query_id", how="left")
        delta = rows[col_a] - rows[col_b].fillna(rows[col_a])
    else:
        delta = pd.Series(0.0, index=rows.index)
    rank = (
        rows["first_gold_rank"].astype("Float64").fillna(np.inf).astype(float)
        if "first_gold_rank" in rows
        else pd.Series(np.inf, rows.index)
    )
    order = pd.DataFrame(
        {
            "a": rows[col_a].to_numpy(),
            "d": delta.to_numpy(),
            "r": -rank.to_numpy(),
            "q": rows["query_id"].astype(str).to_numpy(),
        }
    ).sort_values(["a", "d", "r", "q"], kind="stable")
    rows = rows.iloc[order.index.to_numpy()].reset_index(drop=True)
    if "text" in rows.columns:
        text = rows["text"].fillna("").astype(str)
        rows["text"] = text.where(
            text.str.len() <= QUERY_TEXT_CHARS, text.str.slice(0, QUERY_TEXT_CHARS - 1) + "…"
        )
    return rows


def _query_views(
    name: str,
    rows: pd.DataFrame,
    dataset: Dataset,
    ranked: Callable[[str, str], pd.DataFrame],
    model_a: str,
    model_b: str | None,
) -> list[QueryView]:
    """Gold and both rankings (top :data:`RANK_DEPTH`) of each query of ``rows`` (worst-queries
    rows of one dataset). The run, qrels and entities are cut to these queries and documents
    first, so the cost does not grow with the collection."""
    ids = rows["query_id"].astype(str).tolist()
    threshold = dataset.spec.relevance_threshold
    qrels = dataset.qrels.loc[dataset.qrels["query_id"].isin(ids)]
    runs = {}
    for model in (model_a, model_b):
        if model is not None:
            run = ranked(name, model)
            runs[model] = run.loc[run["query_id"].isin(ids)]
    entities = dataset.entities
    if entities is not None and "doc_id" in entities.columns:
        docs = set(qrels["doc_id"])
        for run in runs.values():
            docs |= set(run.loc[run["rank"] <= RANK_DEPTH, "doc_id"])
        entities = entities.loc[entities["doc_id"].isin(docs)]
    texts: dict[str, str] = {}
    if "text" in dataset.queries.columns:
        part = dataset.queries.loc[dataset.queries["query_id"].isin(ids)]
        texts = dict(zip(part["query_id"].astype(str), part["text"].astype(str), strict=True))
    views = []
    for row in rows.to_dict("records"):
        qid = str(row["query_id"])
        gold = gold_table(qrels, entities, qid, threshold=threshold)
        tables = [
            ranking_table(runs[m], qrels, entities, qid, top=RANK_DEPTH, threshold=threshold)
            for m in runs
        ]
        if len(tables) == 2:
            rankings = side_by_side(tables[0], tables[1], (model_a, str(model_b)))
        else:
            rankings = side_by_side(tables[0], tables[0].iloc[0:0], (model_a, "\x00"))
            rankings = rankings[[c for c in rankings.columns if not c.startswith("\x00")]]
        facts = pd.DataFrame([{k: v for k, v in row.items() if k != "text"}])
        gold = gold.drop(columns=["lat", "lon"], errors="ignore")
        views.append(QueryView(name, qid, texts.get(qid, ""), facts, gold, rankings))
    return views


# --------------------------------------------------------------------------- summary


def _summary(
    datasets: Sequence[str],
    chosen: Mapping[str, str],
    board: pd.DataFrame,
    pvalues: pd.DataFrame,
    comp: pd.DataFrame,
    deltas: pd.DataFrame,
    worst: Mapping[str, pd.DataFrame],
    causes: pd.DataFrame,
    warnings: Mapping[tuple[str, str], Sequence[DataWarning]],
    model_a: str | None,
    model_b: str | None,
) -> list[str]:
    """Plain-text sentences generated from the numbers (names are not escaped here)."""
    out: list[str] = []
    for name in datasets:
        metric = chosen[name]
        part = board.loc[(board["dataset"] == name) & (board["metric"] == metric)]
        if part.empty:
            continue
        part = part.sort_values("mean", ascending=False, kind="stable")
        top = part.iloc[0]
        sentence = (
            f"Best on {name} by {metric}: {top['model']} with {_fmt(top['mean'])} "
            f"(95% CI {_fmt(top['ci_low'])}–{_fmt(top['ci_high'])}, n = {int(top['n'])})"
        )
        if len(part) > 1:
            second = part.iloc[1]
            p = pvalues.loc[
                (pvalues["dataset"] == name)
                & (pvalues["metric"] == metric)
                & (pvalues["model"] == second["model"]),
                ["p_holm", "p_holm_bound"],
            ]
            verdict = ""
            if len(p):
                verdict = (
                    "significant after Holm correction"
                    if p["p_holm"].iloc[0] < ALPHA
                    else "not significant after Holm correction"
                )
                bound = bool(p["p_holm_bound"].iloc[0])
                verdict = f", {verdict}, {p_phrase(p['p_holm'].iloc[0], bound=bound)}"
            sentence += (
                f"; runner-up {second['model']} {_fmt(second['mean'])} "
                f"({_fmt(top['mean'] - second['mean'])} behind{verdict})"
            )
        out.append(sentence + ".")
    if model_a is not None and model_b is not None and not comp.empty:
        sig = comp.loc[comp["p_holm"] < ALPHA].sort_values("p_holm", kind="stable")
        head = (
            f"A = {model_a} vs B = {model_b}: {len(sig)} of {len(comp)} dataset × metric "
            "differences are significant after Holm correction"
        )
        if len(sig):
            items = [
                f"{r['dataset']} {r['metric']} {r['delta']:+.3f} "
                f"({p_phrase(r['p_holm'], bound=bool(r['p_holm_bound']))})"
                for r in sig.head(6).to_dict("records")
            ]
            head += ": " + "; ".join(items) + ("; …" if len(sig) > 6 else "")
        out.append(head + ".")
        if not deltas.empty:
            sig_slices = deltas.loc[deltas["p_holm"] < ALPHA].sort_values("delta", kind="stable")
            if len(sig_slices):
                sentence = (
                    f"Per slice, {len(sig_slices)} of the {len(deltas)} largest slice differences "
                    "are significant after Holm correction"
                )
                extremes = []
                low, high = sig_slices.iloc[0], sig_slices.iloc[-1]
                if low["delta"] < 0:
                    extremes.append(("largest loss of A", low))
                if high["delta"] > 0:
                    extremes.append(("largest gain of A", high))
                sentence += "".join(
                    f"; {what}: {r['dataset']} {r['slice']} = {r['value']} "
                    f"({r['metric']} {r['delta']:+.3f}, n = {int(r['n'])})"
                    for what, r in extremes
                )
                out.append(sentence + ".")
    elif model_a is not None and model_b is None:
        out.append("Only one model is selected: no A vs B comparison.")
    for name, frame in worst.items():
        if frame.empty:
            continue
        r = frame.iloc[0]
        flag = " (whole CI below)" if bool(r["below"]) else ""
        out.append(
            f"Worst slice of {model_a} on {name}: {r['slice']} = {r['value']} with "
            f"{r['metric']} {_fmt(r['mean'])} vs {_fmt(r['overall'])} overall "
            f"(n = {int(r['n'])}){flag}."
        )
    for rec in causes.to_dict("records"):
        if rec["model"] not in (model_a, model_b):
            continue
        who = f"{rec['model']} on {rec['dataset']}"
        n = rec["n"]
        spread = rec["mean, best tie order"] - rec["mean, worst tie order"]
        if rec["tie-dependent"] >= max(1, NOTABLE_SHARE * n) and spread >= NOTABLE_TIE_RANGE:
            out.append(
                f"Ties: {who}: {rec['metric']} depends on the order of tied scores for "
                f"{rec['tie-dependent']} of {n} queries; the mean lies between "
                f"{_fmt(rec['mean, worst tie order'])} and {_fmt(rec['mean, best tie order'])} "
                f"depending on that order (reported: {_fmt(rec['mean'])})."
            )
        failing = rec["at 0"]
        if failing and rec["of which at 0"] >= max(1, NOTABLE_SHARE * failing):
            out.append(
                f"Duplicate coordinates: {who}: in {rec['of which at 0']} of the {failing} "
                f"queries at {rec['metric']} = 0 a non-gold POI on the gold's coordinate is "
                "ranked above the gold."
            )
        if rec["missing from run"]:
            out.append(
                f"Missing: {who}: {rec['missing from run']} queries are missing from the run "
                "and count as 0."
            )
        if rec["more gold than k"] >= max(1, NOTABLE_SHARE * n):
            out.append(
                f"Caps: {who}: {rec['more gold than k']} of {n} queries have more gold documents "
                f"than the cutoff, so their {rec['metric']} cannot reach 1."
            )
    dup_qrels = {}
    for (name, _model), items in warnings.items():
        for w in items:
            if w.code == "duplicate_qrels":
                dup_qrels[name] = w.count
    for name, count in dup_qrels.items():
        out.append(
            f"Data: {name} has duplicate qrels rows ({count}); they were collapsed "
            "(otherwise recall and nDCG would be capped below 1)."
        )
    return out


# --------------------------------------------------------------------------- content


def build_content(
    table: pd.DataFrame,
    *,
    headline: Mapping[str, Sequence[str]],
    model_a: str | None,
    model_b: str | None,
    metric: str | None = None,
    dataset: Callable[[str], Dataset] | None = None,
    ranked: Callable[[str, str], pd.DataFrame] | None = None,
    warnings: Mapping[tuple[str, str], Sequence[DataWarning]] | None = None,
    bundle: str = "",
    ties: str = "trec_eval",
    top_queries: int = TOP_QUERIES,
    n_resamples: int = N_RESAMPLES,
    seed: int = SEED,
) -> ReportContent:
    """Compute every section of the report from a per-query table.

    Args:
        table: the long per-query table of the selected datasets (all models).
        headline: dataset -> its headline metric names (``bundle.toml`` ``metrics``); its order
            is the datasets' order. Datasets absent from ``table`` are left out.
        model_a, model_b: the compared models (``None``: no comparison; A's absence from a
            dataset skips its worst slices and worst queries there).
        metric: the report metric for every dataset, or ``None`` for each dataset's first
            headline metric.
        dataset, ranked: loaders for the worst queries' gold and rankings (``dataset(name)`` ->
            :class:`Dataset`, ``ranked(name, model)`` -> the ranked run); without them the
            worst-queries section lists the queries only.
        warnings: data-check warnings per (dataset, model).
        bundle, ties: shown in the header.
        top_queries: worst queries shown with rankings per dataset.
        n_resamples, seed: bootstrap and randomization settings.
    """
    warnings = warnings or {}
    present = set(table["dataset"].astype(str)) if not table.empty else set()
    datasets = [d for d in headline if d in present]
    if model_b == model_a:
        model_b = None
    if not datasets:
        return ReportContent(bundle, (), model_a, model_b, {}, ties, (), ())
    chosen, shown = _report_metrics(table, datasets, headline, metric)
    all_metrics = list(dict.fromkeys(m for d in datasets for m in shown[d]))
    table = table.loc[table["dataset"].isin(datasets)]

    board = mean_ci(
        table,
        all_metrics,
        by=["dataset", "model"],
        n_resamples=n_resamples,
        seed=seed,
        nan_policy="omit",
    )
    keep = {(d, m) for d in datasets for m in shown[d]}
    board = board.loc[[p in keep for p in zip(board["dataset"], board["metric"], strict=True)]]
    order = {d: i for i, d in enumerate(datasets)}
    board = board.sort_values(
        ["dataset", "metric"],
        key=lambda s: (
            s.map(order)
            if s.name == "dataset"
            else s.map({m: i for i, m in enumerate(all_metrics)})
        ),
        kind="stable",
    ).reset_index(drop=True)
    pvalues = _best_vs_rest(table, board, n_resamples, seed)

    sections: list[Section] = []
    lb_fig = _leaderboard_figure(board, datasets, chosen)
    sections.append(
        Section(
            "leaderboard",
            "Leaderboard",
            "Mean of each metric over every query of the qrels (a query missing from a run "
            "counts as 0), with n and a seeded 95% bootstrap CI. Bold: best per dataset; *: "
            "significantly below the best after Holm correction.",
            (
                _leaderboard_block(board, pvalues, shown, datasets),
                Block(
                    "leaderboard-chart",
                    "figure",
                    "Leaderboard chart",
                    figure=lb_fig,
                    caption="The report metric of each dataset; error bars: 95% CI.",
                ),
            ),
        )
    )

    slice_blocks: list[Block] = []
    worst_frames: dict[str, pd.DataFrame] = {}
    for i, name in enumerate(datasets):
        sub = table.loc[table["dataset"] == name]
        summary = _slice_summary(sub, chosen[name])
        if not summary.empty:
            slice_blocks.append(
                Block(
                    f"slices-{i}-{_slug(name)}",
                    "figure",
                    f"Slices of {name}",
                    caption=f"{chosen[name]} per slice value and model; error bars: 95% CI.",
                    figure=_slice_figure(summary, name, chosen[name]),
                    dataset=name,
                )
            )
        cols = _varied_slices(sub)
        if model_a is not None and cols and model_a in set(sub["model"].astype(str)):
            found = slice_finder(
                sub,
                chosen[name],
                model_a,
                cols,
                min_size=MIN_SLICE,
                n_resamples=n_resamples,
                seed=seed,
            )
            worst_frames[name] = found.head(TOP_WORST_SLICES).assign(
                dataset=name, metric=chosen[name]
            )
    worst_table = _worst_slices_table([f for f in worst_frames.values() if not f.empty])
    if worst_table is not None:
        slice_blocks.append(
            Block(
                "worst-slices",
                "table",
                "Worst slices of model A",
                caption=f"Model A: {model_a}.",
                table=worst_table,
                group="dataset",
            )
        )
    sections.append(
        Section(
            "slices",
            "Slices",
            "The report metric by slice (query type, answer-set size, split, metadata), "
            "models side by side, and the slices where model A does worst.",
            tuple(slice_blocks),
        )
    )

    comp = pd.DataFrame()
    deltas = pd.DataFrame()
    compare_blocks: list[Block] = []
    if model_a is not None and model_b is not None:
        comp = _compare(table, datasets, shown, model_a, model_b, n_resamples, seed)
        deltas = _slice_deltas(table, datasets, chosen, model_a, model_b, n_resamples, seed)
    if not comp.empty:
        names = f"A = {model_a}, B = {model_b}."
        compare_blocks += [
            Block(
                "compare-table",
                "table",
                "A vs B per dataset and metric",
                caption=names,
                table=_compare_table(comp),
                group="dataset",
            ),
            Block(
                "compare-chart",
                "figure",
                "A vs B chart",
                caption=names,
                figure=_compare_figure(comp, str(model_a), str(model_b)),
            ),
        ]
        if not deltas.empty:
            compare_blocks.append(
                Block(
                    "compare-slices",
                    "table",
                    "A vs B per slice",
                    caption=names,
                    table=_slice_delta_table(deltas),
                    group="dataset",
                )
            )
    else:
        compare_blocks.append(
            Block(
                "compare-none",
                "text",
                "A vs B",
                text=("No dataset has runs of both model A and model B: nothing to compare.",),
            )
        )
    sections.append(
        Section(
            "compare",
            "A vs B",
            "Paired comparison over the queries of each dataset: delta = A − B with a 95% "
            "bootstrap CI, wins/ties/losses, paired randomization test (sign flips, "
            "B = 10,000, seed 0) and Holm correction.",
            tuple(compare_blocks),
        )
    )

    query_blocks: list[Block] = []
    for i, name in enumerate(datasets):
        if model_a is None or model_a not in set(
            table.loc[table["dataset"] == name, "model"].astype(str)
        ):
            continue
        b = model_b if model_b in set(table.loc[table["dataset"] == name, "model"]) else None
        rows = _worst_queries(table, name, chosen[name], model_a, b)
        head = rows.head(top_queries)
        query_blocks.append(
            Block(
                f"worst-{i}-{_slug(name)}",
                "table",
                f"Worst queries of model A on {name}",
                caption=f"{chosen[name]} of A = {model_a}"
                + (f" and B = {b}" if b else "")
                + "; worst first (lowest A, then largest loss against B, then deepest first "
                "gold rank).",
                table=head.reset_index(drop=True),
                dataset=name,
            )
        )
        if dataset is None or ranked is None:
            continue
        views = _query_views(name, head, dataset(name), ranked, model_a, b)
        for j, view in enumerate(views):
            query_blocks.append(
                Block(
                    f"query-{i}-{j}-{_slug(name)}",
                    "query",
                    f"{name}: query {view.query_id}",
                    query=view,
                    caption="Gold documents, then the top "
                    f"{RANK_DEPTH} of each model (gold = relevant in the qrels).",
                    dataset=name,
                )
            )
    if not query_blocks:
        query_blocks.append(
            Block(
                "worst-none",
                "text",
                "Worst queries",
                text=("Model A has no run on the selected datasets.",),
            )
        )
    sections.append(
        Section(
            "worst-queries",
            "Worst queries",
            "The queries model A fails worst, with the gold documents and both rankings.",
            tuple(query_blocks),
        )
    )

    causes = _causes(table, datasets, chosen)
    checks = pd.DataFrame(
        [
            {"dataset": d, "model": m, "check": w.code, "count": w.count, "message": w.message}
            for (d, m), items in warnings.items()
            if d in datasets
            for w in items
        ],
        columns=["dataset", "model", "check", "count", "message"],
    )
    cause_blocks = [
        Block(
            "failure-causes",
            "table",
            "Failure causes",
            caption="Counts of queries per cause for the report metric of each dataset.",
            table=causes,
            group="dataset",
        ),
        Block(
            "data-checks",
            "table",
            "Data checks",
            table=checks,
            caption="Warnings found while loading and evaluating the runs.",
        ),
    ]
    sections.append(
        Section(
            "causes",
            "Failure causes",
            "Why queries fail: ties that change the metric, duplicate coordinates, missing "
            "queries, answer sets larger than the cutoff, and data problems.",
            tuple(cause_blocks),
        )
    )

    summary = _summary(
        datasets,
        chosen,
        board,
        pvalues,
        comp,
        deltas,
        worst_frames,
        causes,
        warnings,
        model_a,
        model_b,
    )
    summary_section = Section(
        "summary",
        "Summary",
        "Generated from the numbers below.",
        (Block("summary", "text", "Summary", text=tuple(summary)),),
    )
    return ReportContent(
        bundle=bundle,
        datasets=tuple(datasets),
        model_a=model_a,
        model_b=model_b,
        metrics=dict(chosen),
        ties=ties,
        summary=tuple(summary),
        sections=(summary_section, *sections),
        numbers={
            "leaderboard": board,
            "best_vs_rest": pvalues,
            "compare": comp,
            "slice_deltas": deltas,
            "causes": causes,
        },
    )


# --------------------------------------------------------------------------- HTML


_CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0;color:#222;
line-height:1.45;background:#fff}
header,section{max-width:1200px;margin:0 auto;padding:1.2rem 2rem}
section{border-top:1px solid #ddd}
h1{font-size:2rem;margin:.2rem 0}h2{font-size:1.6rem}h3{font-size:1.2rem;margin-top:1.6rem}
nav a{margin-right:1rem}
table{border-collapse:collapse;margin:.6rem 0;font-size:.9rem}
th,td{border-bottom:1px solid #ddd;padding:.25rem .6rem;text-align:left;vertical-align:top}
th{border-bottom:2px solid #444}
td.num{text-align:right;font-variant-numeric:tabular-nums}
p.notes,p.caption{font-size:.85rem;color:#555}
.summary li{font-size:1.1rem;margin:.3rem 0}
.query-text{white-space:pre-wrap;background:#f6f6f6;padding:.5rem;border-radius:4px}
.figure{margin:.8rem 0}
@media print{section{page-break-before:always}}
"""


def _text_html(block: Block) -> str:
    items = "".join(f"<li>{html.escape(t)}</li>" for t in block.text)
    return f'<ul class="summary">{items}</ul>'


def _query_html(view: QueryView, key: str) -> str:
    return (
        f'<p class="query-text">{html.escape(view.text)}</p>'
        + to_html(view.facts, table_id=f"table-{key}-facts")
        + "<h4>Gold</h4>"
        + to_html(view.gold, table_id=f"table-{key}-gold")
        + "<h4>Rankings</h4>"
        + to_html(view.rankings, table_id=f"table-{key}-rankings")
    )


def render_html(content: ReportContent) -> str:
    """The report as one self-contained HTML document (plotly.js inlined once, no external
    URL; every data string escaped)."""
    esc = html.escape
    nav = "".join(f'<a href="#{s.key}">{esc(s.title)}</a>' for s in content.sections)
    models = ", ".join(
        f"{label} = {esc(m)}" for label, m in (("A", content.model_a), ("B", content.model_b)) if m
    )
    metrics = "; ".join(f"{esc(d)}: {esc(m)}" for d, m in content.metrics.items())
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>Retrieval error analysis report — {esc(content.bundle)}</title>",
        f"<style>{_CSS}</style></head><body>",
        "<header><h1>Retrieval error analysis report</h1>",
        f'<p id="meta">Bundle: {esc(content.bundle)}. Datasets: '
        f"{esc(', '.join(content.datasets)) or 'none'}. Models: {models or 'none'}. "
        f"Report metric: {metrics or 'none'}. Ties: {esc(content.ties)}. Bootstrap and "
        f"randomization: B = {N_RESAMPLES:,}, seed {SEED}.</p>",
        f"<nav>{nav}</nav></header>",
    ]
    plotly_inlined = False
    for section in content.sections:
        parts.append(f'<section id="{esc(section.key)}"><h2>{esc(section.title)}</h2>')
        parts.append(f'<p class="caption">{esc(section.intro)}</p>')
        for block in section.blocks:
            parts.append(f'<div class="block" id="block-{esc(block.key)}">')
            if block.kind != "text" or block.title != section.title:
                parts.append(f"<h3>{esc(block.title)}</h3>")
            if block.caption:
                parts.append(f'<p class="caption">{esc(block.caption)}</p>')
            if block.kind == "text":
                parts.append(_text_html(block))
            elif block.kind == "figure" and block.figure is not None:
                div = block.figure.to_html(
                    full_html=False,
                    include_plotlyjs=not plotly_inlined,
                    config=PLOTLY_CONFIG,
                    div_id=f"fig-{block.key}",
                )
                plotly_inlined = True
                parts.append(f'<div class="figure">{div}</div>')
            elif block.kind == "table" and block.table is not None:
                parts.append(to_html(block.table, table_id=f"table-{block.key}"))
            elif block.kind == "query" and block.query is not None:
                parts.append(_query_html(block.query, block.key))
            parts.append("</div>")
        parts.append("</section>")
    parts.append("</body></html>\n")
    return "\n".join(parts)


# --------------------------------------------------------------------------- from a bundle


def _load(
    bundle_dir: Path, datasets: Sequence[str] | None, ties: str
) -> tuple[object, pd.DataFrame, dict, dict[str, Dataset], dict[tuple[str, str], pd.DataFrame]]:
    bundle = read_manifest(bundle_dir)
    names = list(bundle.datasets) if not datasets else list(dict.fromkeys(datasets))
    unknown = [n for n in names if n not in bundle.datasets]
    if unknown:
        raise InputError(
            "--datasets",
            None,
            f"unknown dataset(s) {', '.join(unknown)}; the bundle has {', '.join(bundle.datasets)}",
        )
    frames = []
    warnings: dict[tuple[str, str], list[DataWarning]] = {}
    loaded: dict[str, Dataset] = {}
    runs_by: dict[tuple[str, str], pd.DataFrame] = {}
    for name in names:
        spec = bundle.datasets[name]
        ds = load_dataset(spec)
        runs = {model: load_model_run(spec, model) for model in spec.runs}
        table, found = per_query_table(
            ds.queries,
            ds.qrels,
            runs,
            dataset=name,
            metrics=dashboard_metrics(spec.metrics),
            ties=ties,
            relevance_threshold=spec.relevance_threshold,
            headline=spec.metrics,
            entities=ds.entities,
        )  # type: ignore[arg-type]
        frames.append(table)
        loaded[name] = ds
        for model, items in found.items():
            warnings[(name, model)] = list(items)
        for model, run in runs.items():
            runs_by[(name, model)] = run
    table = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
    return bundle, table, warnings, loaded, runs_by


def build_report(
    bundle_dir: Path,
    *,
    datasets: list[str] | None = None,
    model_a: str | None = None,
    model_b: str | None = None,
    ties: str = "trec_eval",
    metric: str | None = None,
) -> str:
    """The HTML report of a bundle (see the module docstring).

    Models default to :func:`default_models`; ``metric`` to each dataset's first headline metric.

    Raises:
        InputError: unreadable bundle or data, unknown dataset, model or metric, A equal to B,
            unknown tie policy.
    """
    if ties not in TIE_POLICIES:
        raise InputError("--ties", None, f"must be one of {', '.join(TIE_POLICIES)}")
    canonical = None
    if metric is not None:
        canonical = _canonical(metric)
        if canonical is None or canonical not in dashboard_metrics():
            raise InputError("--metric", None, f"unknown metric {metric!r}")
    bundle, table, warnings, loaded, runs = _load(Path(bundle_dir), datasets, ties)
    names = list(loaded)
    models = list(dict.fromkeys(m for (_, m) in runs))
    for flag, model in (("--a", model_a), ("--b", model_b)):
        if model is not None and model not in models:
            raise InputError(
                flag,
                None,
                f"model {model!r} has no run in the selected datasets; models: {', '.join(models)}",
            )
    if model_a is not None and model_a == model_b:
        raise InputError("--b", None, "model B must differ from model A")
    default_a, default_b = default_models(table, names)
    if model_a is None:
        model_a = default_a if default_a != model_b else default_b
    if model_b is None:
        others = [m for m in (default_a, default_b, *models) if m is not None and m != model_a]
        model_b = others[0] if others else None
    cache: dict[tuple[str, str], pd.DataFrame] = {}

    def ranked(name: str, model: str) -> pd.DataFrame:
        if (name, model) not in cache:
            cache[(name, model)] = rank_run(runs[(name, model)], ties)  # type: ignore[arg-type]
        return cache[(name, model)]

    content = build_content(
        table,
        headline={n: list(loaded[n].spec.metrics) for n in names},
        model_a=model_a,
        model_b=model_b,
        metric=canonical,
        dataset=loaded.__getitem__,
        ranked=ranked,
        warnings=warnings,
        bundle=bundle.name,  # type: ignore[attr-defined]
        ties=ties,
    )
    return render_html(content)


def write_report(
    bundle_dir: Path,
    out: Path,
    *,
    datasets: list[str] | None = None,
    model_a: str | None = None,
    model_b: str | None = None,
    ties: str = "trec_eval",
) -> None:
    """Write :func:`build_report` to ``out`` (UTF-8), atomically: a killed run never leaves a
    partial report.

    Raises:
        InputError: as :func:`build_report`, or ``out`` cannot be written.
    """
    text = build_report(
        Path(bundle_dir), datasets=datasets, model_a=model_a, model_b=model_b, ties=ties
    )
    atomic_write_text(out, text)  # a temporary file beside ``out``, renamed when complete
