"""The home page's leaderboard of one dataset and its data checks.

Leaderboard (one dataset; never pools datasets): one row per model, one column group per
headline metric with

* the mean over the dataset's queries and a seeded 95% percentile bootstrap CI
  (:func:`analysis.stats.mean_ci`);
* ranx-style significance letters: model ``i`` gets the letter of model ``j`` (``a`` for the
  first row, ``b`` for the second, ...) when its mean is higher and the two-sided paired
  Student's t-test over the queries (``scipy.stats.ttest_rel``, ranx's default test) gives a
  Holm-corrected p-value below ``alpha``; the Holm family is every pair of models on that metric;
* PyTerrier-style improved / degraded counts against a chosen baseline model (queries where the
  model's value is higher / lower than the baseline's); the baseline's own counts are 0;
* ``best``: the highest mean of the column (every tied best is marked).

Run groups (:mod:`analysis.io.groups`) are rows of their own, beside their members (which stay
rows): a seed group's mean is the mean of its per-query seed means, its CI the two-level
bootstrap over queries and seeds (:func:`analysis.stats.groups.two_level_ci`), and its tests
and counts use the per-query seed means; the row says how many seeds. A group is not tested
against its own runs (those pairs are not in the Holm family). A fold group's row is
the model's cross-validated run (each query scored by its fold's run) with the ordinary CI.

Paired tests use the queries both models have a value for (in the per-query table every qrels
query has a row for every model, missing ones scored 0). t-test edge cases: all differences
zero gives p = 1; a constant non-zero difference gives p = 0; fewer than two queries gives no
letter.

Data checks: the warnings of every (dataset, model), grouped so that each finding is said once:
findings about the qrels (identical for every model) are one row, findings about runs list the
models that share the same message. Severity ``problem`` (results are affected: missing or
unknown queries, duplicate docs, queries without relevant docs, a run made on another qrels
version, a published summary the run contradicts) comes before ``note``.

The module never imports streamlit.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from analysis.core.errors import DataWarning
from analysis.core.measures import card
from analysis.present.escape import escape_html
from analysis.stats import holm, mean_ci
from analysis.stats.groups import group_members, with_two_level_cis
from analysis.stats.significance import model_letters

__all__ = [
    "CHECK_COLUMNS",
    "check_table",
    "leaderboard",
    "leaderboard_html",
    "model_letters",
    "paired_t_pvalue",
]

PROBLEMS = frozenset(
    {
        "missing_from_run",
        "not_in_qrels",
        "duplicate_docs",
        "no_relevant",
        "summary_mismatch",
        "qrels_version",
    }
)
CHECK_COLUMNS: tuple[str, ...] = ("dataset", "severity", "check", "models", "count", "message")


def paired_t_pvalue(a: np.ndarray, b: np.ndarray) -> float:
    """Two-sided paired t-test p-value of ``mean(a - b) = 0`` (edge cases: module docstring)."""
    d = np.asarray(a, dtype=float) - np.asarray(b, dtype=float)
    if d.size < 2:
        return math.nan
    if not d.any():
        return 1.0
    spread = float(d.max() - d.min())
    if spread <= 1e-10 * float(np.abs(d).max()):
        return 0.0
    from scipy import stats as sps  # lazy: ~1 s to import, only needed here

    return float(sps.ttest_rel(a, b).pvalue)


def _wide(table: pd.DataFrame, metric: str, models: Sequence[str]) -> pd.DataFrame:
    wide = table.pivot_table(index="query_id", columns="model", values=metric, aggfunc="first")
    return wide.reindex(columns=list(models))


def leaderboard(
    table: pd.DataFrame,
    metrics: Sequence[str],
    *,
    models: Sequence[str] | None = None,
    baseline: str | None = None,
    alpha: float = 0.05,
    n_resamples: int = 10_000,
    seed: int = 0,
) -> pd.DataFrame:
    """The leaderboard of ONE dataset's per-query table (see the module docstring).

    Returns:
        One row per model (``models`` order, default table order; names are text: a model
        column read as numbers ``1, 2`` gives ``"1", "2"``): ``model, letter, n, kind``
        (``run``, ``seeds`` or ``folds``), ``runs`` (seeds or folds of a group, else 1) and per
        metric ``m``: ``m`` (mean), ``m ci_low``, ``m ci_high``, ``m sig`` (letters of the models
        it beats significantly, alphabetical), ``m best`` (bool), ``m improved`` and
        ``m degraded`` (queries above / below the baseline; NaN without a baseline).

    Raises:
        ValueError: the table holds several datasets, a metric column is missing, or the
            baseline is not one of the models.
    """
    if (
        "dataset" in table.columns
        and len(table)
        and (table["dataset"] != table["dataset"].iloc[0]).any()
    ):
        raise ValueError("a leaderboard is per dataset: the table holds several datasets")
    missing = [m for m in metrics if m not in table.columns]
    if missing:
        raise ValueError(f"per-query table: metric column(s) {missing} not found")
    if len(table) and not pd.api.types.is_string_dtype(table["model"]):
        table = table.assign(model=table["model"].astype(str))  # names read as numbers
    order = list(dict.fromkeys(table["model"].astype(str))) if models is None else list(models)
    if baseline is not None and baseline not in order:
        raise ValueError(f"baseline {baseline!r} is not one of the models {order}")
    letters = model_letters(order)
    rows = table.loc[table["model"].astype(str).isin(order)]
    out = pd.DataFrame({"model": order, "letter": [letters[m] for m in order]})
    counts = rows.groupby("model")["query_id"].nunique()
    out["n"] = [int(counts.get(m, 0)) for m in order]
    groups = group_members(table)
    out["kind"], out["runs"] = _group_columns(groups, order)
    if rows.empty or not metrics:
        return out
    ci = mean_ci(rows, list(metrics), by=["model"], n_resamples=n_resamples, seed=seed)
    if "metric" not in ci.columns:
        ci = ci.assign(metric=metrics[0])
    ci = with_two_level_cis(ci, table, n_resamples=n_resamples, seed=seed)
    for metric in metrics:
        part = ci.loc[ci["metric"] == metric].set_index("model")
        mean = part["mean"].reindex(order).to_numpy(dtype=float)
        out[metric] = mean
        out[f"{metric} ci_low"] = part["ci_low"].reindex(order).to_numpy(dtype=float)
        out[f"{metric} ci_high"] = part["ci_high"].reindex(order).to_numpy(dtype=float)
        top = np.nanmax(mean) if np.isfinite(mean).any() else np.nan
        out[f"{metric} best"] = np.isclose(mean, top, rtol=0, atol=1e-12)
        wide = _wide(rows, metric, order)
        out[f"{metric} sig"] = _significance(wide, order, letters, alpha, _own(groups))
        improved, degraded = _against(wide, order, baseline)
        out[f"{metric} improved"] = improved
        out[f"{metric} degraded"] = degraded
    return out


def _group_columns(groups: Mapping[str, tuple[str, list[str]]], order: list[str]) -> tuple:
    """Each model's kind (``run``, ``seeds``, ``folds``) and its number of runs."""
    kinds = [groups[m][0] if m in groups else "run" for m in order]
    return kinds, [len(groups[m][1]) if m in groups else 1 for m in order]


def _own(groups: Mapping[str, tuple[str, list[str]]]) -> set[frozenset[str]]:
    """The (group, member) pairs: a group is not tested against its own runs."""
    return {frozenset((name, m)) for name, (_, members) in groups.items() for m in members}


def _significance(
    wide: pd.DataFrame,
    order: list[str],
    letters: Mapping[str, str],
    alpha: float,
    skip: set[frozenset[str]] = frozenset(),  # type: ignore[assignment]
) -> list[str]:
    pairs, pvalues = [], []
    for i, a in enumerate(order):
        for b in order[i + 1 :]:
            if frozenset((a, b)) in skip:
                continue
            both = wide[[a, b]].dropna()
            pairs.append((a, b, both[a].mean() - both[b].mean()))
            pvalues.append(paired_t_pvalue(both[a].to_numpy(), both[b].to_numpy()))
    adjusted = holm(np.asarray(pvalues, dtype=float)) if pvalues else np.array([])
    beats: dict[str, list[str]] = {m: [] for m in order}
    for (a, b, diff), p in zip(pairs, adjusted, strict=True):
        if np.isnan(p) or p >= alpha or diff == 0:
            continue
        winner, loser = (a, b) if diff > 0 else (b, a)
        beats[winner].append(letters[loser])
    return ["".join(sorted(beats[m])) for m in order]


def _against(wide: pd.DataFrame, order: list[str], baseline: str | None) -> tuple[list, list]:
    if baseline is None:
        return [math.nan] * len(order), [math.nan] * len(order)
    improved, degraded = [], []
    for model in order:
        both = wide[[model, baseline]].dropna() if model != baseline else wide[[model]].iloc[:0]
        d = both[model].to_numpy(dtype=float) - both[baseline].to_numpy(dtype=float)
        improved.append(int((d > 0).sum()) if model != baseline else 0)
        degraded.append(int((d < 0).sum()) if model != baseline else 0)
    return improved, degraded


def _cell(row: pd.Series, metric: str, baseline: str | None) -> str:
    mean = row[metric]
    if not np.isfinite(mean):
        return "<td>–</td>"
    lo, hi = row[f"{metric} ci_low"], row[f"{metric} ci_high"]
    value = f"{mean:.3f}"
    if row[f"{metric} best"]:
        value = f"<b>{value}</b>"
    sig = escape_html(str(row[f"{metric} sig"]))
    how = " (queries and seeds resampled)" if row.get("kind") == "seeds" else ""
    title = escape_html(f"{metric} = {mean:.4f}, 95% CI{how} [{lo:.4f}, {hi:.4f}], n = {row['n']}")
    parts = [value, f"<sup>{sig}</sup>" if sig else ""]
    parts.append(f'<br><small class="ci">[{lo:.3f}, {hi:.3f}]</small>')
    up, down = row.get(f"{metric} improved"), row.get(f"{metric} degraded")
    counted = up is not None and down is not None and not (pd.isna(up) or pd.isna(down))
    if baseline is not None and row["model"] != baseline and counted:
        parts.append(f'<br><small class="vs">+{int(up)} / −{int(down)}</small>')
    return f'<td title="{title}">{"".join(parts)}</td>'


def _card_title(metric: str) -> str:
    """A ``title`` attribute holding the metric's card (its hover text), or ``""``."""
    try:
        text = card(metric).text(width=10**6)
    except ValueError:
        return ""
    return f' title="{escape_html(text)}"'


def leaderboard_html(
    board: pd.DataFrame,
    metrics: Sequence[str],
    *,
    baseline: str | None = None,
    dataset: str = "",
) -> str:
    """The :func:`leaderboard` as an HTML table: best mean in bold, significance letters as
    superscripts, the CI small under the mean (and in the cell's hover title), ``+i / −d``
    against the baseline (when the board was computed against one: a board made without a
    baseline has no counts to show), the metric's card as each metric header's hover text.
    Every text from data (model and dataset names) is HTML-escaped; the table carries
    ``data-dataset`` and each row ``data-model``; a run group's name has ``n seeds, mean`` or
    ``n folds`` under it (``<small data-kind="seeds">``)."""
    head = "".join(f"<th{_card_title(m)}>{escape_html(m)}</th>" for m in metrics)
    lines = [
        f'<table class="leaderboard" data-dataset="{escape_html(dataset)}"><thead><tr><th></th>'
        f"<th>model</th><th>n</th>{head}</tr></thead><tbody>"
    ]
    for _, row in board.iterrows():
        name = escape_html(str(row["model"]))
        mark = " (baseline)" if baseline is not None and row["model"] == baseline else ""
        mark += _group_mark(row)
        cells = "".join(_cell(row, m, baseline) for m in metrics if m in board.columns)
        lines.append(
            f'<tr data-model="{name}"><td>{escape_html(str(row["letter"]))}</td>'
            f"<td>{name}{mark}</td><td>{int(row['n'])}</td>{cells}</tr>"
        )
    lines.append("</tbody></table>")
    return "".join(lines)


def _group_mark(row: pd.Series) -> str:
    """``n seeds`` (mean of the seeds) or ``n folds`` under a group's name."""
    kind, runs = row.get("kind", "run"), int(row.get("runs", 1))
    if kind == "seeds":
        return f'<br><small class="group" data-kind="seeds">{runs} seeds, mean</small>'
    if kind == "folds":
        return f'<br><small class="group" data-kind="folds">{runs} folds</small>'
    return ""


def check_table(warnings: Mapping[tuple[str, str], Sequence[DataWarning]]) -> pd.DataFrame:
    """The data checks of every ``(dataset, model)``, each finding said once (module docstring).

    Returns:
        Columns ``dataset, severity, check, models, count, message``, sorted by dataset (first
        appearance), severity (``problem`` first), check code; ``models`` is ``"all"`` when
        every model of the dataset has the same finding.
    """
    models_of: dict[str, list[str]] = {}
    found: dict[tuple[str, str, str], dict] = {}
    for (dataset, model), items in warnings.items():
        models_of.setdefault(dataset, []).append(model)
        for w in items:
            entry = found.setdefault((dataset, w.code, w.message), {"count": w.count, "models": []})
            entry["models"].append(model)
    rows = []
    for (dataset, code, message), entry in found.items():
        everyone = sorted(entry["models"]) == sorted(models_of[dataset])
        rows.append(
            {
                "dataset": dataset,
                "severity": "problem" if code in PROBLEMS else "note",
                "check": code,
                "models": "all" if everyone else ", ".join(entry["models"]),
                "count": int(entry["count"]),
                "message": message,
            }
        )
    if not rows:
        return pd.DataFrame({c: pd.Series(dtype=object) for c in CHECK_COLUMNS})
    out = pd.DataFrame(rows)
    rank = {d: i for i, d in enumerate(models_of)}
    out = out.assign(_d=out["dataset"].map(rank), _s=out["severity"] != "problem")
    out = out.sort_values(["_d", "_s", "check"], kind="stable")
    return out[list(CHECK_COLUMNS)].reset_index(drop=True)
