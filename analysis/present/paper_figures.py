"""The app's figures as figures for papers (:mod:`analysis.present.paper`): one builder per
figure of the Slices, Compare, Map and Analyses pages and of the report, each returning a
:class:`~analysis.present.paper.PaperFigure` with its own title, axis labels and caption.

Conventions: one slice column per figure; slice labels cut to
:data:`~analysis.present.paper.LABEL_CHARS` columns with their full text in the caption and
their query count in the label (``(n = 3)``: a bar of a 3-query slice says so); only the slices
the page shows (its minimum slice size applied); every model in the colour of its name
(``colours``, see :func:`~analysis.present.palette.model_colours`). Titles and captions are plain
text (names from files as they are: :func:`~analysis.present.paper.paper_figure` escapes them).
The module never imports streamlit.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import pandas as pd
import plotly.graph_objects as go

from analysis.geo.mapdata.stacks import histogram_figure
from analysis.present.analyses_report import solved_figure
from analysis.present.compare_figures import delta_histogram, is_discrete, scatter_figure
from analysis.present.mapfigure import map_snapshot_figure
from analysis.present.overlap import query_rank_figure, transition_figure
from analysis.present.paper import (
    LEGEND_CHARS,
    PaperFigure,
    legend_short,
    paper_figure,
    short_labels,
    shorten,
)
from analysis.present.slicing import slice_bar_figure, slice_heatmap_figure

__all__ = [
    "SliceChart",
    "block_paper",
    "delta_histogram_paper",
    "map_snapshot_paper",
    "query_rank_paper",
    "scatter_paper",
    "slice_bars_paper",
    "slice_heatmap_paper",
    "solved_paper",
    "stack_histogram_paper",
    "transition_paper",
]


def _sizes(summary: pd.DataFrame) -> dict[str, int]:
    """Queries per slice value (the largest n over the models: a model missing some queries
    of a slice has a smaller n)."""
    return {str(v): int(n) for v, n in summary.groupby("value", sort=False)["n"].max().items()}


def _slice_note(metric: str, column: str, min_size: int, *, bars: bool = True) -> str:
    """The caption's method sentence; the minimum slice size is named only when it leaves
    slices out (a minimum of 1 query shows every slice); the error bars only with ``bars``
    (a heatmap has none)."""
    kept = (
        f"slices of fewer than {min_size} queries are left out"
        if min_size > 1
        else "every slice is shown, however few its queries"
    )
    ci = "error bars: seeded 95% bootstrap CI; " if bars else ""
    return (
        f"Mean {metric} over the queries of each value of {column}, per model; {ci}"
        f"n = queries in the slice; {kept}."
    )


@dataclass(frozen=True)
class SliceChart:
    """What the Slices page draws: the slice means (:func:`~analysis.present.slicing.
    slice_summary` rows, its minimum slice size ``min_size`` applied) of one ``column``, the
    values in display ``order``, the dataset's name and the model colours."""

    summary: pd.DataFrame
    metric: str
    column: str
    order: Sequence[str]
    dataset: str
    min_size: int
    colours: Mapping[str, str] | None = None

    def labels(self) -> tuple[dict[str, str], list[tuple[str, str]], list[str]]:
        """Axis labels (cut, with their n), the key of the cut ones, the models."""
        labels, key = short_labels(self.order, sizes=_sizes(self.summary))
        return labels, key, list(dict.fromkeys(self.summary["model"].astype(str)))


def slice_bars_paper(chart: SliceChart) -> PaperFigure:
    """The Slices page's bars (:func:`~analysis.present.slicing.slice_bar_figure`) of one
    column for a paper: labels cut with their n, caption with the full labels."""
    labels, key, models = chart.labels()
    fig = slice_bar_figure(
        chart.summary, chart.metric, chart.column, models, chart.order,
        colours=chart.colours, labels=labels,
    )  # fmt: skip
    fig.update_layout(showlegend=True)  # one model too: the legend names it
    return paper_figure(
        fig,
        title=f"{chart.dataset}: {chart.metric} by {chart.column} (95% CI)",
        caption=f"Models: {', '.join(models)}. "
        + _slice_note(chart.metric, chart.column, chart.min_size),
        key=key,
    )


def slice_heatmap_paper(chart: SliceChart) -> PaperFigure:
    """The Slices page's heatmap of one column for a paper (models along the bottom)."""
    labels, key, models = chart.labels()
    fig = slice_heatmap_figure(
        chart.summary, chart.metric, chart.column, models, chart.order, labels=labels
    )
    fig.update_xaxes(side="bottom")
    note = _slice_note(chart.metric, chart.column, chart.min_size, bars=False)
    return paper_figure(
        fig,
        title=f"{chart.dataset}: {chart.metric} by {chart.column} and model",
        caption=f"Cells: {note[0].lower()}{note[1:]} The colour scale spans the shown means.",
        key=key,
    )


def scatter_paper(
    paired: pd.DataFrame, names: tuple[str, str], metric: str, *, dataset: str
) -> PaperFigure:
    """The Compare page's per-query scatter (A on x, B on y) for a paper."""
    fig = scatter_figure(paired, names, metric)
    fig.update_layout(showlegend=False)
    discrete = len(paired) > 0 and is_discrete(pd.concat([paired["a"], paired["b"]]))
    jitter = " Points are jittered for display (the metric takes few values)." if discrete else ""
    return paper_figure(
        fig,
        title=f"{dataset}: {metric} per query, A = {names[0]} vs B = {names[1]}",
        caption=f"One point per query scored by both models (n = {len(paired):,}); below the "
        f"dashed diagonal A is better.{jitter}",
        height=620,
    )


def delta_histogram_paper(
    bins: pd.DataFrame, names: tuple[str, str], metric: str, *, dataset: str
) -> PaperFigure:
    """The Compare page's histogram of the per-query deltas for a paper."""
    count = bins.groupby("kind")["count"].sum() if len(bins) else pd.Series(dtype=int)
    wins, ties, losses = (int(count.get(k, 0)) for k in ("win", "tie", "loss"))
    return paper_figure(
        delta_histogram(bins, names, metric),
        title=f"{dataset}: per-query difference of {metric}, A − B",
        caption=f"A = {names[0]}, B = {names[1]}. Blue: A better ({wins:,} queries), orange: "
        f"B better ({losses:,}), grey: ties ({ties:,}).",
    )


def transition_paper(matrix: pd.DataFrame, names: tuple[str, str], *, dataset: str) -> PaperFigure:
    """The Compare page's rank-bucket transition matrix of the gold documents for a paper."""
    total = int(matrix.to_numpy().sum())
    return paper_figure(
        transition_figure(matrix, names),
        title=f"{dataset}: rank of each gold document in A and in B",
        caption=f"A = {names[0]}, B = {names[1]}; {total:,} gold documents, counted by the rank "
        "bucket in A (rows) and in B (columns); on the diagonal both rank it alike.",
        height=460,
    )


def query_rank_paper(
    changes: pd.DataFrame, names: tuple[str, str], depth: int, *, dataset: str, query: str
) -> PaperFigure:
    """One query's Δrank chart (rank of each gold document in A and in B) for a paper: the
    names cut to :data:`~analysis.present.paper.LEGEND_CHARS` columns, B's distinct from A's
    when both start alike (full names in the caption)."""
    first = shorten(names[0], LEGEND_CHARS)
    short = (first, first if names[1] == names[0] else legend_short(names[1], {first}))
    return paper_figure(
        query_rank_figure(changes, short, depth),
        title=f"{dataset}, query {query}: rank of each gold document in A and in B",
        caption=f"A = {names[0]}, B = {names[1]}; one line per gold document, blue when A ranks "
        f"it higher, orange when B does; rank {depth + 1} = not retrieved.",
        width=700,
        height=420,
    )


def stack_histogram_paper(report: Mapping[str, object], *, dataset: str) -> PaperFigure:
    """The Map page's histogram of stack sizes (POIs sharing a coordinate) for a paper."""
    tol = float(report.get("tolerance_m", 0.0) or 0.0)  # type: ignore[arg-type]
    return paper_figure(
        histogram_figure(report),
        title=f"{dataset}: POIs sharing a coordinate (tolerance {tol:g} m)",
        caption="Number of stacks (log scale) per stack size; size 1 = a POI alone on its "
        "coordinate.",
    )


def solved_paper(inter: pd.DataFrame, metric: str, threshold: float, *, dataset: str):
    """The Analyses page's "solved by exactly these models" bars for a paper (model
    combinations cut, full names in the caption)."""
    labels, key = short_labels(inter["models"].astype(str))
    return paper_figure(
        solved_figure(inter, labels, horizontal=True),
        title=f"{dataset}: queries solved by exactly these models ({metric} ≥ {threshold:g})",
        caption="'(none)': no model solves them.",
        key=key,
    )


def block_paper(fig: go.Figure, title: str, caption: str = "") -> PaperFigure:
    """A figure of the report (its blocks carry their title and caption) for a paper."""
    return paper_figure(fig, title=title, caption=caption)


def map_snapshot_paper(
    points: pd.DataFrame,
    query: Mapping[str, object],
    names: Mapping[str, str],
    *,
    dataset: str,
    k: int,
) -> PaperFigure:
    """One query's map (:func:`~analysis.present.mapfigure.map_snapshot_figure`) for a paper;
    the caption says what every mark is and quotes the query (cut to 120 characters)."""
    fig, unit, far = map_snapshot_figure(points, query, names)
    edge = (
        f" {far} result{'s' if far > 1 else ''} farther away {'are' if far > 1 else 'is'} drawn "
        "on the frame's edge, each in its own direction, with its distance from the first gold "
        "POI after its rank."
        if far
        else ""
    )
    lists = " and ".join(
        f"{label} = {names[label]} ({shape})"
        for label, shape in (("A", "blue circles"), ("B", "orange diamonds"))
        if label in names
    )
    text = shorten(str(query.get("text") or ""), 120)
    return paper_figure(
        fig,
        title=f"{dataset}: query {query.get('query_id', '')} on the map",
        caption=(f"Query: {text}. " if text else "")
        + f"Gold POIs (amber rings), the top {k} of {lists or 'no model'}, dark when relevant, "
        f"with their ranks; the query's location (purple star). Positions in {unit} east and "
        "north of the first gold POI; POIs sharing a coordinate are spread on a ring around "
        "it (grey spokes to the true position); ×n = POIs at that coordinate in the dataset."
        + edge,
        width=820,
        height=620,
    )
