"""The report's data model: settings, the dataclasses every part of the report shares
(:class:`Block`, :class:`Section`, :class:`ReportContent`, :class:`QueryView`) and small helpers.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

import pandas as pd
import plotly.graph_objects as go

from analysis.core.metrics import parse_metric
from analysis.present.export import StyledTable
from analysis.stats.perquery import slice_columns

if TYPE_CHECKING:
    from analysis.core.errors import DataWarning
    from analysis.io.bundle import Dataset

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
    #: the written diff of A's and B's rankings (plain sentences; empty without B)
    diff: tuple[str, ...] = ()


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
    #: dataset -> its :class:`~analysis.present.report.numbers.DatasetNumbers` (the deck's source)
    per_dataset: dict[str, object] = field(default_factory=dict, compare=False)
    #: one example query per failure cause of model A (:mod:`~analysis.present.report.examples`)
    examples: tuple[object, ...] = field(default=(), compare=False)
    #: dataset -> the split its queries come from (``"all"``: every query); empty: not said
    splits: dict[str, str] = field(default_factory=dict)
    #: dataset -> its "Beyond the averages" parts (taxonomy, complementarity; may be empty)
    analyses: dict[str, tuple[object, ...]] = field(default_factory=dict, compare=False)
    #: model -> its colour in every figure (keyed by name over the bundle's models)
    colours: dict[str, str] = field(default_factory=dict, compare=False)

    def blocks(self) -> list[tuple[Section, Block]]:
        """Every block in display order with its section (the slides of presentation mode)."""
        return [(s, b) for s in self.sections for b in s.blocks]


@dataclass(frozen=True)
class ReportSettings:
    """How the report is computed and what its header says.

    ``bundle`` and ``ties`` are shown in the header; ``splits`` maps a dataset to the split its
    queries come from (``"all"``: every query; a dataset left out is not said). ``top_queries``
    worst queries get their rankings per dataset; ``n_resamples`` and ``seed`` drive the
    bootstrap and the randomization tests. ``model_names`` are every model of the bundle: each
    model gets the colour of its name among them (:func:`analysis.present.palette.model_colours`),
    the same in every report, page and export of the bundle."""

    bundle: str = ""
    ties: str = "trec_eval"
    top_queries: int = TOP_QUERIES
    n_resamples: int = N_RESAMPLES
    seed: int = SEED
    splits: Mapping[str, str] | None = None
    model_names: Sequence[str] = ()


@dataclass(frozen=True)
class ReportSources:
    """What the report reads besides the per-query table; every field is optional.

    ``dataset(name)`` -> the :class:`~analysis.io.bundle.Dataset` and ``ranked(name, model)`` ->
    the ranked run load the worst queries' gold and rankings (without them the worst-queries
    section lists the queries only, and the "Beyond the averages" section is left out unless
    ``analyses`` is given). ``warnings`` are the data-check warnings per (dataset, model).
    ``numbers(name, rows, metric, shown)`` -> the dataset's
    :class:`~analysis.present.report.numbers.DatasetNumbers` and ``analyses(name, rows,
    metric)`` -> its "Beyond the averages" parts are caches (e.g. the page's); default:
    computed here. ``annotations`` maps a dataset to the blocks of its "Annotations" section
    (:func:`analysis.present.report.annotations.annotation_blocks`). ``costs`` maps dataset ->
    model -> its numbers (``latency_ms``, ... :func:`analysis.io.groups.run_metadata`) for the
    "Quality against cost" section."""

    dataset: Callable[[str], Dataset] | None = None
    ranked: Callable[[str, str], pd.DataFrame] | None = None
    warnings: Mapping[tuple[str, str], Sequence[DataWarning]] | None = None
    numbers: Callable[[str, pd.DataFrame, str, Sequence[str]], object] | None = None
    analyses: Callable[[str, pd.DataFrame, str], Sequence[object]] | None = None
    annotations: Mapping[str, Sequence[Block]] | None = None
    costs: Mapping[str, Mapping[str, Mapping[str, float]]] | None = None


@dataclass(frozen=True)
class ReportNumbers:
    """The numbers the summary is written from, over the report's datasets: the leaderboard
    (``board``), best-vs-rest p-values (``pvalues``), A vs B per dataset and metric (``comp``)
    and per slice (``deltas``), all with Holm corrections across datasets; the worst slices of A
    per dataset (``worst``), the failure causes (``causes``) and each dataset's report metric
    (``chosen``)."""

    datasets: Sequence[str]
    chosen: Mapping[str, str]
    board: pd.DataFrame
    pvalues: pd.DataFrame
    comp: pd.DataFrame
    deltas: pd.DataFrame
    worst: Mapping[str, pd.DataFrame]
    causes: pd.DataFrame


# --------------------------------------------------------------------------- helpers


def slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_-]+", "-", str(text)).strip("-").lower() or "x"


def fmt(x: float, digits: int = 3) -> str:
    return "nan" if x is None or not math.isfinite(x) else f"{x:.{digits}f}"


def canonical(name: str) -> str | None:
    try:
        return parse_metric(name).name
    except ValueError:
        return None


def report_metrics(
    table: pd.DataFrame, datasets: Sequence[str], headline: Mapping[str, Sequence[str]], metric
) -> tuple[dict[str, str], dict[str, list[str]]]:
    """(report metric per dataset, leaderboard metrics per dataset), present in ``table``.

    ``metric`` is each dataset's report metric where the dataset's rows hold a value of it; a
    dataset that does not compute it (a column of another dataset, NaN in every row of this
    one) gets its first headline metric, as when the column is absent."""
    chosen: dict[str, str] = {}
    shown: dict[str, list[str]] = {}
    computed: set[str] = set()
    if metric is not None and metric in table.columns:
        has = table[metric].notna().groupby(table["dataset"].astype(str)).any()
        computed = set(has.index[has.to_numpy(dtype=bool)])
    for name in datasets:
        heads = [c for c in (canonical(h) for h in headline.get(name, ())) if c in table.columns]
        first = metric if name in computed else None
        fallback = [m for m in ("hit@1", "recall@10", "mrr") if m in table.columns]
        fallback += [c for c in table.columns if canonical(str(c)) == c]
        if not (first or heads or fallback):
            raise ValueError(f"dataset {name!r}: the per-query table has no metric column")
        chosen[name] = first or (heads[0] if heads else fallback[0])
        shown[name] = list(dict.fromkeys([chosen[name], *heads]))
    return chosen, shown


def default_models(table: pd.DataFrame, datasets: Sequence[str]) -> tuple[str | None, str | None]:
    """Models A and B when none is given: the models with a run on the most datasets (ties: the
    first seen in the table), A first."""
    counts: dict[str, int] = {}
    wanted = set(datasets)
    pairs = table[["dataset", "model"]].astype(str).drop_duplicates()
    for model in pairs.loc[pairs["dataset"].isin(wanted), "model"]:
        counts[model] = counts.get(model, 0) + 1
    order = sorted(counts, key=lambda m: -counts[m])  # stable: first seen wins ties
    return (order[0] if order else None, order[1] if len(order) > 1 else None)


def slice_columns_of(summary: pd.DataFrame) -> list[tuple[str, pd.DataFrame]]:
    """The rows of a report slice summary per slice column (``column`` order): one figure per
    column, never values of two columns in one chart."""
    if summary.empty or "column" not in summary:
        return []
    return [(str(c), summary.loc[summary["column"] == c]) for c in dict.fromkeys(summary["column"])]


def _constant(series: pd.Series) -> bool:
    values = series.to_numpy(dtype=object)
    return len(values) == 0 or bool((series.isna().all()) or (series == values[0]).all())


def varied_slices(sub: pd.DataFrame) -> list[str]:
    return [c for c in slice_columns(sub) if c != "dataset" and not _constant(sub[c])]
