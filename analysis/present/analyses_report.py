"""Report section "Beyond the averages": failure taxonomy and complementarity of one dataset.

:func:`analyses_parts` computes the parts (tables as DataFrames, figures as plotly figures, titles
and captions as plain text that may hold names from files); :func:`analyses_html` renders them
as an HTML fragment in which every data string is escaped (tables through
:func:`analysis.present.export.to_html`, figures as ``<div>`` elements that use the report's
plotly.js, titles and captions through :func:`~analysis.present.escape.escape_html`). The
report plugs either in: the parts as slides, or the fragment as one section.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TypedDict, Unpack

import pandas as pd
import plotly.graph_objects as go

from analysis.core.options import check_options
from analysis.present.escape import escape_html
from analysis.present.export import PLOTLY_CONFIG, plotly_text, to_html
from analysis.present.palette import FONT_FAMILY, model_colours
from analysis.present.slicing import sort_slice_rows
from analysis.stats.complementarity import intersections, oracle, solved_matrix
from analysis.stats.taxonomy import (
    CATEGORIES,
    applicable_categories,
    classify_dataset,
    taxonomy_counts,
)

__all__ = [
    "DEFAULT_DEPTH",
    "ReportPart",
    "analyses_html",
    "analyses_parts",
    "depth_of",
    "solved_figure",
    "taxonomy_table",
]

#: Depth of the failure causes and coverage for a metric without cutoff (MRR, MAP, R-prec).
DEFAULT_DEPTH = 10

INTRO = (
    "Why each model misses queries (the first applicable cause, in a fixed precedence), which "
    "queries each model solves alone or with others, and the oracle that picks the best model "
    "per query with hindsight."
)


@dataclass(frozen=True)
class ReportPart:
    """One table or figure of the section. ``title`` and ``caption`` are plain text."""

    key: str
    title: str
    caption: str
    table: pd.DataFrame | None = None
    figure: go.Figure | None = None


def depth_of(metric: str) -> tuple[int, str]:
    """The depth the failure causes, coverage and overlap read for ``metric`` and how to say it:
    ``recall@20`` -> ``(20, "at k = 20 (the cutoff of recall@20)")``; a metric without cutoff
    (``mrr``) -> ``(10, "in the top 10 (mrr has no cutoff: a fixed depth of 10)")``, never
    "k = 10 for MRR". An unknown name is treated as having no cutoff."""
    from analysis.core.metrics import parse_metric

    try:
        k = parse_metric(metric).k
    except ValueError:
        k = None
    if k is not None:
        return int(k), f"at k = {k} (the cutoff of {metric})"
    return DEFAULT_DEPTH, (
        f"in the top {DEFAULT_DEPTH} ({metric} has no cutoff: a fixed depth of {DEFAULT_DEPTH})"
    )


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_-]+", "-", str(text)).strip("-").lower() or "x"


def taxonomy_table(classified: pd.DataFrame, models: Sequence[str]) -> pd.DataFrame:
    """Counts per model (rows, in ``models`` order) and category (columns, every category of
    :data:`analysis.stats.taxonomy.CATEGORIES` that can occur on the dataset:
    :func:`~analysis.stats.taxonomy.applicable_categories`), plus ``queries``; first column
    ``model``."""
    counts = taxonomy_counts(classified)
    wide = counts.pivot_table(index="model", columns="category", values="n", aggfunc="sum")
    columns = list(applicable_categories(classified))
    wide = wide.reindex(index=list(models), columns=columns).fillna(0).astype("int64")
    wide["queries"] = wide.sum(axis=1)
    wide.columns.name = None
    return wide.rename_axis("model").reset_index()


def solved_figure(
    inter: pd.DataFrame, labels: Mapping[str, str] | None = None, *, horizontal: bool = False
) -> go.Figure:
    """Bars of :func:`analysis.stats.complementarity.intersections`: queries solved by exactly
    each set of models (``models`` column; ``labels``: models -> axis label, escaped for plotly;
    default the names escaped). ``horizontal``: one row per set, read left to right (long or
    Chinese model names are never slanted)."""
    names = inter["models"].astype(str).tolist()
    cats = [labels[n] for n in names] if labels is not None else [plotly_text(n) for n in names]
    counts = inter["n"].tolist()
    if horizontal:
        bar = go.Bar(y=cats, x=counts, orientation="h", marker_color="#0072B2")
    else:
        bar = go.Bar(x=cats, y=counts, marker_color="#0072B2")
    fig = go.Figure(bar)
    axes = ("yaxis", "xaxis") if horizontal else ("xaxis", "yaxis")
    fig.update_layout(
        {f"{axes[0]}_title": "solved by exactly", f"{axes[1]}_title": "queries"},
        height=max(320, 60 + 28 * len(cats)) if horizontal else 320,
        margin={"t": 10, "b": 10}, font={"family": FONT_FAMILY},
    )  # fmt: skip
    fig.layout[axes[0]].type = "category"
    if horizontal:
        fig.layout.yaxis.autorange = "reversed"
    return fig


def _taxonomy_figure(
    table: pd.DataFrame, dataset: str, k: int, colours: Mapping[str, str] | None = None
) -> go.Figure:
    fig = go.Figure()
    colours = {**model_colours(table["model"].tolist()), **(colours or {})}
    failures = [c for c in CATEGORIES if c != "hit" and c in table.columns]
    for _, row in table.iterrows():
        fig.add_bar(
            name=plotly_text(row["model"]),
            x=failures,
            y=[int(row[c]) for c in failures],
            marker_color=colours[row["model"]],
        )
    fig.update_layout(
        barmode="group",
        title={
            "text": plotly_text(f"{dataset}: failure causes, top {k}"),
            "x": 0.0,
            "xanchor": "left",
            "pad": {"l": 12},
        },
        yaxis_title="queries",
        template="plotly_white",
        height=420,
        font={"family": FONT_FAMILY, "size": 14},
        legend={"orientation": "h", "yanchor": "bottom", "y": 1.02, "x": 0},
        margin={"l": 10, "r": 10, "t": 90, "b": 40},
    )
    return fig


class PartsOptions(TypedDict, total=False):
    """The keyword options of :func:`analyses_parts`."""

    metric: str
    k: int
    threshold: float
    by: Sequence[str]
    colours: Mapping[str, str] | None


def analyses_parts(
    dataset: str,
    per_query: pd.DataFrame,
    ranked: Mapping[str, pd.DataFrame],
    qrels: pd.DataFrame,
    entities: pd.DataFrame | None = None,
    edges: pd.DataFrame | None = None,
    **options: Unpack[PartsOptions],
) -> list[ReportPart]:
    """The section's parts for one dataset: the taxonomy counts (table and figure), the
    UpSet-style intersections of the solved queries (``metric >= threshold``) and the oracle
    best-of-N (overall and by the ``by`` slice columns).

    ``per_query`` holds the dataset's rows (every model); ``ranked`` maps each model to its
    ranked run (for the suspected missing answers). Options (keywords, :class:`PartsOptions`):
    ``metric`` (``"hit@10"``), the taxonomy's cutoff ``k`` (10), ``threshold`` (1.0), ``by``
    (no slice columns) and ``colours``: model -> colour (default:
    :func:`~analysis.present.palette.model_colours` of the dataset's models).
    """
    check_options("analyses_parts", options, PartsOptions)
    metric, k = options.get("metric", "hit@10"), options.get("k", 10)
    threshold, colours = options.get("threshold", 1.0), options.get("colours")
    by = options.get("by", ())
    rows = per_query[per_query["dataset"] == dataset] if "dataset" in per_query else per_query
    models = list(dict.fromkeys(rows["model"]))
    classified = classify_dataset(rows, ranked, qrels, entities, edges, k=k)
    tax = taxonomy_table(classified, models)
    solved = solved_matrix(rows, metric, threshold=threshold, models=models)
    inter = intersections(solved)
    best = oracle(rows, metric, models=models)
    parts = [
        ReportPart(
            _slug(f"taxonomy-{dataset}"),
            f"{dataset}: why queries are missed (top {k})",
            "Each query of each model in one category: hit, or the first cause that applies "
            "in the order " + ", ".join(CATEGORIES[1:]) + ". Suspected missing answers are "
            "retrieved, unjudged entities sharing type and relations with a gold: candidates "
            "for review, not errors.",
            table=tax,
        ),
        ReportPart(
            _slug(f"taxonomy-figure-{dataset}"),
            f"{dataset}: failure causes per model",
            "Queries per failure cause (hits left out).",
            figure=_taxonomy_figure(tax, dataset, k, colours),
        ),
        ReportPart(
            _slug(f"intersections-{dataset}"),
            f"{dataset}: who solves which queries ({metric} ≥ {threshold:g})",
            f"Queries solved by exactly these models, of {len(solved)} queries every model was "
            "evaluated on; '(none)' = no model solves them.",
            table=inter.drop(columns=[f"in:{m}" for m in solved.columns]),
        ),
        ReportPart(
            _slug(f"oracle-{dataset}"),
            f"{dataset}: oracle best-of-{len(models)} ({metric})",
            "Mean of the best model's value per query, picked with hindsight: an upper bound "
            "for choosing one model per query, not an achievable score.",
            table=best,
        ),
    ]
    for column in by:
        parts.append(
            ReportPart(
                _slug(f"oracle-{dataset}-{column}"),
                f"{dataset}: oracle by {column}",
                f"As above, per value of {column}.",
                table=sort_slice_rows(oracle(rows, metric, models=models, by=[column]), column),
            )
        )
    return parts


def analyses_html(parts: Sequence[ReportPart], *, title: str = "Beyond the averages") -> str:
    """The parts as one ``<section>`` fragment; every data string is escaped. Figures are
    ``<div>`` elements that need plotly.js loaded once by the page that includes them."""
    out = [f'<section id="analyses"><h2>{escape_html(title)}</h2><p>{escape_html(INTRO)}</p>']
    for part in parts:
        out.append(f'<div class="block" id="{escape_html(part.key)}">')
        out.append(f"<h3>{escape_html(part.title)}</h3>")
        if part.caption:
            out.append(f'<p class="caption">{escape_html(part.caption)}</p>')
        if part.table is not None:
            out.append(to_html(part.table, table_id=f"table-{part.key}"))
        if part.figure is not None:
            out.append(
                part.figure.to_html(
                    full_html=False,
                    include_plotlyjs=False,
                    config=PLOTLY_CONFIG,
                    div_id=f"figure-{part.key}",
                )
            )
        out.append("</div>")
    out.append("</section>")
    return "\n".join(out)
