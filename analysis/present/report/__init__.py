"""The report: a written summary, the leaderboard, slice charts, model A against model B, the
worst queries with their rankings and the failure causes — as sections the Report page draws
and as one self-contained HTML file (``python -m analysis report``).

Content (:func:`build_content`, from a per-query table, :mod:`analysis.stats.perquery`):

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
* **Metrics**: the card of every metric the report shows (formula, cutoff, references,
  semantics; :mod:`~.metric_cards`); the header's report metric links to its card.

The summary is a list of plain-text sentences generated from these numbers. Names of models,
datasets and slices come from files: the page escapes them
(:func:`analysis.present.export.escape_markdown`), the HTML escapes every data string with
:func:`analysis.present.export.escape_html`, figures with
:func:`analysis.present.export.plotly_text` (each drops the directional formatting characters
that would reorder the text after a name). The HTML inlines
plotly.js once (``include_plotlyjs=True`` for the first figure, ``False`` after) and contains no
external URL.

The slide deck (:mod:`analysis.present.report.deck`) is written from the same numbers: at most
12 slides by default, each one headline sentence and one figure or table, 16:9.

Modules: :mod:`~.model` (dataclasses, settings), :mod:`~.numbers` (the statistics of one
dataset, computed once and cacheable), :mod:`~.queries`, :mod:`~.figures`, :mod:`~.tables`,
:mod:`~.summary`, :mod:`~.metric_cards`, :mod:`~.content` (:func:`build_content`),
:mod:`~.document` (the HTML report), :mod:`~.deck` (the slides) and :mod:`~.build` (from a
bundle). None imports streamlit.
"""

from analysis.present.report.build import build_report, bundle_content, write_report
from analysis.present.report.content import build_content
from analysis.present.report.deck import Slide, build_deck
from analysis.present.report.deck_html import render_deck
from analysis.present.report.document import render_html
from analysis.present.report.model import (
    N_RESAMPLES,
    SEED,
    Block,
    QueryView,
    ReportContent,
    ReportSettings,
    ReportSources,
    Section,
    default_models,
)
from analysis.present.report.numbers import (
    DatasetNumbers,
    ModelNumbers,
    dataset_numbers,
    model_numbers,
)

__all__ = [
    "N_RESAMPLES",
    "SEED",
    "Block",
    "DatasetNumbers",
    "ModelNumbers",
    "QueryView",
    "ReportContent",
    "ReportSettings",
    "ReportSources",
    "Section",
    "Slide",
    "build_content",
    "build_deck",
    "build_report",
    "bundle_content",
    "dataset_numbers",
    "default_models",
    "model_numbers",
    "render_deck",
    "render_html",
    "write_report",
]
