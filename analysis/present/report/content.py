"""The report's content: :func:`build_content` assembles the sections from the per-dataset
numbers (:mod:`analysis.present.report.numbers`) and applies the Holm corrections that span
datasets."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace

import pandas as pd

from analysis.io.bundle import Dataset
from analysis.present.analyses_report import INTRO as ANALYSES_INTRO
from analysis.present.analyses_report import ReportPart, analyses_parts, depth_of
from analysis.present.groups import fold_table
from analysis.present.palette import model_colours
from analysis.present.pareto import cost_keys, pareto_figure, pareto_points
from analysis.present.report.annotations import annotations_section
from analysis.present.report.examples import pick_examples
from analysis.present.report.figures import (
    compare_figure,
    leaderboard_figure,
    slice_figure,
    slice_label_key,
)
from analysis.present.report.metric_cards import metrics_section
from analysis.present.report.model import (
    MIN_SLICE,
    RANK_DEPTH,
    Block,
    ReportContent,
    ReportNumbers,
    ReportSettings,
    ReportSources,
    Section,
    report_metrics,
    slice_columns_of,
    slug,
)
from analysis.present.report.numbers import (
    CONDITIONAL_CAUSES,
    DatasetNumbers,
    dataset_numbers,
    possible_causes,
)
from analysis.present.report.queries import query_views
from analysis.present.report.summary import summary_sentences
from analysis.present.report.tables import (
    compare_table,
    leaderboard_block,
    slice_delta_table,
    worst_slices_table,
)
from analysis.stats import holm
from analysis.stats.groups import fold_summary, group_members
from analysis.stats.paired import holm_bounds

__all__ = ["build_content"]

NumbersOf = Callable[[str, pd.DataFrame, str, Sequence[str]], DatasetNumbers]


def _concat(frames: Sequence[pd.DataFrame]) -> pd.DataFrame:
    kept = [f for f in frames if not f.empty]
    return pd.concat(kept, ignore_index=True) if kept else pd.DataFrame()


def build_content(
    table: pd.DataFrame,
    *,
    headline: Mapping[str, Sequence[str]],
    model_a: str | None,
    model_b: str | None,
    metric: str | None = None,
    sources: ReportSources | None = None,
    settings: ReportSettings | None = None,
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
        sources: loaders, caches and side tables (:class:`ReportSources`): without
            ``dataset`` and ``ranked`` the worst-queries section lists the queries only and
            "Beyond the averages" is left out (unless ``analyses`` is given; default
            :func:`dataset_analyses`); the "Annotations" section is left out without
            annotations; "Quality against cost" shows the report metric against the first
            cost key two models have (:func:`analysis.present.pareto.cost_keys`) and is left
            out when no dataset has one.
        settings: header, depth and resampling settings (:class:`ReportSettings`).

    A dataset with a fold group (a ``fold`` column in ``table``) gets its "Metrics per fold"
    table.
    """
    sources = sources or ReportSources()
    settings = settings or ReportSettings()
    present = set(table["dataset"].astype(str)) if not table.empty else set()
    datasets = [d for d in headline if d in present]
    if model_b == model_a:
        model_b = None
    if not datasets:
        return ReportContent(settings.bundle, (), model_a, model_b, {}, settings.ties, (), ())
    chosen, shown = report_metrics(table, datasets, headline, metric)
    by_dataset = dict(tuple(table.groupby(table["dataset"].astype(str), sort=False)))
    get = sources.numbers or _numbers_of(model_a, model_b, settings)
    per: dict[str, DatasetNumbers] = {
        name: get(name, by_dataset[name], chosen[name], shown[name])  # type: ignore[misc]
        for name in datasets
    }
    colours = model_colours(list(dict.fromkeys(table["model"].astype(str))), settings.model_names)
    pooled = _pooled(per, datasets, chosen)
    context = _Context(table, datasets, shown, per, colours, (model_a, model_b), sources, settings)
    return _assemble(context, pooled, by_dataset)


def _assemble(
    c: _Context, pooled: ReportNumbers, by_dataset: Mapping[str, pd.DataFrame]
) -> ReportContent:
    """The sections (the summary first), the examples and the numbers in one content."""
    sections = _sections(c, pooled)
    found = _analyses(c, by_dataset, pooled.chosen)
    if found is not None:
        sections.append(_analyses_section(found, c.datasets))
    sections += _closing_sections(c.sources, c.datasets, c.shown)
    model_a, model_b = c.models
    summary = summary_sentences(pooled, c.sources.warnings or {}, model_a, model_b)
    summary_section = Section(
        "summary",
        "Summary",
        "Generated from the numbers below.",
        (Block("summary", "text", "Summary", text=tuple(summary)),),
    )
    splits = c.settings.splits or {}
    return ReportContent(
        bundle=c.settings.bundle,
        datasets=tuple(c.datasets),
        model_a=model_a,
        model_b=model_b,
        metrics=dict(pooled.chosen),
        ties=c.settings.ties,
        summary=tuple(summary),
        sections=_unique_block_keys([summary_section, *sections]),
        numbers={
            "leaderboard": pooled.board,
            "best_vs_rest": pooled.pvalues,
            "compare": pooled.comp,
            "slice_deltas": pooled.deltas,
            "causes": pooled.causes,
        },
        per_dataset=dict(c.per),
        examples=_examples(c, sections),
        splits={d: str(splits[d]) for d in c.datasets if d in splits},
        analyses=found or {},
        colours=dict(c.colours),
    )


def _unique_block_keys(sections: Sequence[Section]) -> tuple[Section, ...]:
    """``sections`` with every block key unique over the report: a key already taken (two names
    with the same slug, e.g. slice columns ``Kind`` and ``kind?``) gets ``-2``, ``-3``, ... (the
    first number whose key no other block has). The first block with a key keeps it; order is
    kept."""
    taken = {b.key for s in sections for b in s.blocks}
    seen: set[str] = set()
    out = []
    for section in sections:
        blocks = []
        for block in section.blocks:
            key, n = block.key, 2
            while key in seen or (key != block.key and key in taken):
                key, n = f"{block.key}-{n}", n + 1
            seen.add(key)
            blocks.append(block if key == block.key else replace(block, key=key))
        out.append(replace(section, blocks=tuple(blocks)))
    return tuple(out)


@dataclass(frozen=True)
class _Context:
    """What every section of one report is built from."""

    table: pd.DataFrame
    datasets: list[str]
    shown: Mapping[str, Sequence[str]]
    per: Mapping[str, DatasetNumbers]
    colours: Mapping[str, str]
    models: tuple[str | None, str | None]
    sources: ReportSources
    settings: ReportSettings


def _numbers_of(model_a: str | None, model_b: str | None, settings: ReportSettings) -> NumbersOf:
    """The default ``numbers``: :func:`dataset_numbers` with the report's models and settings."""

    def compute(name: str, rows: pd.DataFrame, metric: str, shown: Sequence[str]):
        return dataset_numbers(
            rows, metric=metric, shown=shown, model_a=model_a, model_b=model_b,
            n_resamples=settings.n_resamples, seed=settings.seed,
        )  # fmt: skip

    return compute


def _pooled(
    per: Mapping[str, DatasetNumbers], datasets: Sequence[str], chosen: Mapping[str, str]
) -> ReportNumbers:
    """Every dataset's numbers in one table each, with the Holm corrections across datasets
    (best vs rest: ``p_holm``/``p_holm_bound`` over every dataset × metric × model; A vs B:
    over every dataset × metric)."""
    board = _concat([per[n].board for n in datasets])
    pvalues = _concat([per[n].best_vs_rest for n in datasets])
    if pvalues.empty:
        columns = ["dataset", "model", "metric", "best_model", "p", "p_floor"]
        pvalues = pd.DataFrame(columns=columns)
    pvalues["p_holm"] = holm(pvalues["p"]) if len(pvalues) else []
    pvalues["p_holm_bound"] = (
        holm_bounds(pvalues["p"], pvalues["p_floor"].astype(bool)) if len(pvalues) else []
    )
    comp = _concat([per[n].compare for n in datasets])
    if not comp.empty:
        comp["p_holm"] = holm(comp["p_randomization"])
        comp["p_holm_bound"] = holm_bounds(comp["p_randomization"], comp["p_floor"].astype(bool))
    return ReportNumbers(
        datasets=datasets,
        chosen=chosen,
        board=board,
        pvalues=pvalues,
        comp=comp,
        deltas=_concat([per[n].slice_deltas for n in datasets]),
        worst={n: per[n].worst_slices for n in datasets if not per[n].worst_slices.empty},
        causes=_concat([per[n].causes for n in datasets]),
    )


def _sections(c: _Context, pooled: ReportNumbers) -> list[Section]:
    """The sections computed from the numbers, in report order (leaderboard to causes)."""
    model_a, model_b = c.models
    resampling = (c.settings.n_resamples, c.settings.seed)
    loaders = (c.sources.dataset, c.sources.ranked)
    return [
        _leaderboard_section(
            pooled.board, pooled.pvalues, c.shown, c.datasets, pooled.chosen, c.colours
        ),
        *_folds_section(c.table, c.datasets, c.shown, resampling),
        *_costs_section(c.per, c.datasets, c.sources.costs or {}, c.table),
        _slices_section(c.per, c.datasets, model_a, c.colours),
        _compare_section(pooled.comp, pooled.deltas, model_a, model_b),
        _queries_section(c.per, c.datasets, c.models, loaders, c.settings.top_queries, c.table),
        _causes_section(pooled.causes, c.sources.warnings or {}, c.datasets),
    ]


def _analyses(
    c: _Context, by_dataset: Mapping[str, pd.DataFrame], chosen: Mapping[str, str]
) -> dict[str, tuple[ReportPart, ...]] | None:
    """Each dataset's "Beyond the averages" parts, from ``sources.analyses`` or computed with
    the loaders; ``None`` when neither is there."""
    analyses, dataset, ranked = c.sources.analyses, c.sources.dataset, c.sources.ranked
    if analyses is None and dataset is not None and ranked is not None:

        def analyses(name: str, rows: pd.DataFrame, metric: str) -> Sequence[ReportPart]:
            return dataset_analyses(name, rows, metric, dataset(name), ranked, c.colours)

    if analyses is None:
        return None
    return {
        name: tuple(analyses(name, by_dataset[name], chosen[name]))  # type: ignore[misc]
        for name in c.datasets
    }


def _closing_sections(
    sources: ReportSources, datasets: Sequence[str], shown: Mapping[str, Sequence[str]]
) -> list[Section]:
    """The "Annotations" section (when there are annotations) and the metric cards."""
    written = annotations_section(sources.annotations or {}, datasets)
    cards = metrics_section(m for name in datasets for m in shown[name])
    return [s for s in (written, cards) if s is not None]


def _examples(c: _Context, sections: Sequence[Section]) -> tuple[object, ...]:
    """One example query per failure cause of A (:func:`pick_examples`), reusing the views of
    the worst-queries section."""
    views = {
        (b.query.dataset, b.query.query_id): b.query
        for section in sections
        if section.key == "worst-queries"
        for b in section.blocks
        if b.kind == "query" and b.query is not None
    }
    model_a, model_b = c.models
    return pick_examples(
        c.per, c.datasets, model_a, model_b, views, c.sources.dataset, c.sources.ranked
    )


def _leaderboard_section(board, pvalues, shown, datasets, chosen, colours) -> Section:
    return Section(
        "leaderboard",
        "Leaderboard",
        "Mean of each metric over every query of the qrels (a query missing from a run "
        "counts as 0), with n and a seeded 95% bootstrap CI. Bold: best per dataset; *: "
        "significantly below the best after Holm correction.",
        (
            leaderboard_block(board, pvalues, shown, datasets),
            Block(
                "leaderboard-chart",
                "figure",
                "Leaderboard chart",
                figure=leaderboard_figure(board, datasets, chosen, colours),
                caption="The report metric of each dataset; error bars: 95% CI.",
            ),
        ),
    )


def _folds_section(table, datasets, shown, resampling: tuple[int, int]) -> list[Section]:
    """ "Metrics per fold": per dataset with a fold group (a ``fold`` slice column), every
    model's shown metrics on each fold's queries and pooled
    (:func:`analysis.stats.groups.fold_summary`); left out without fold groups."""
    n_resamples, seed = resampling
    blocks: list[Block] = []
    for i, name in enumerate(datasets):
        rows = table.loc[table["dataset"] == name]
        columns = [c for c in rows.columns if c == "fold" or str(c).startswith("fold (")]
        columns = [c for c in columns if rows[c].notna().any()]
        models = list(dict.fromkeys(rows["model"].astype(str)))
        metrics = [m for m in shown[name] if m in rows.columns]
        for j, column in enumerate(columns):
            summary = fold_summary(rows, column, metrics, models, n_resamples=n_resamples,
                                   seed=seed)  # fmt: skip
            blocks.append(Block(
                f"folds-{i}-{j}-{slug(name)}", "table", f"Metrics per fold on {name} ({column})",
                table=fold_table(summary, metrics), dataset=name,
                caption="Mean and 95% bootstrap CI on each fold's queries, then pooled.",
            ))  # fmt: skip
    if not blocks:
        return []
    intro = ("Cross-validation: each metric on the queries of each fold and on all of them "
             "pooled, for every model. A fold group's value of a query is that of the run of "
             "the query's fold; a model's spread over the folds shows how much its mean depends "
             "on the split.")  # fmt: skip
    return [Section("folds", "Metrics per fold", intro, tuple(blocks))]


def _costs_section(per, datasets, costs, table) -> list[Section]:
    """ "Quality against cost": per dataset with numbers, the report metric against the first
    cost key (:mod:`analysis.present.pareto`), with the points as a table."""
    blocks: list[Block] = []
    for i, name in enumerate(datasets):
        keys = cost_keys(costs.get(name, {}))
        if not keys:
            continue
        metric, key = per[name].metric, keys[0]
        board = per[name].board.loc[per[name].board["metric"] == metric]
        wide = pd.DataFrame({"model": board["model"], metric: board["mean"],
                             f"{metric} ci_low": board["ci_low"],
                             f"{metric} ci_high": board["ci_high"]})  # fmt: skip
        groups = group_members(table.loc[table["dataset"] == name])
        members = {m: g for g, (kind, runs) in groups.items() if kind == "seeds" for m in runs}
        points = pareto_points(wide, costs[name], metric, key, members=members)
        front = ", ".join(points.loc[points["front"], "model"])
        blocks += [
            Block(f"costs-{i}-{slug(name)}", "figure", f"{metric} against {key} on {name}",
                  figure=pareto_figure(points, metric, key), dataset=name,
                  caption=f"Mean and 95% CI against {key} (lower is better); dashed: the "
                  f"Pareto front ({front}); a seed group's runs small and faded."),
            Block(f"costs-table-{i}-{slug(name)}", "table", f"Points of {name}",
                  table=points.rename(columns={"cost": key, "value": metric}), dataset=name),
        ]  # fmt: skip
    if not blocks:
        return []
    intro = ("Each model's mean of the report metric (95% CI) against a number of its run from "
             "the bundle's run_metadata or ir_metadata beside the runs: the trade-off a paper "
             "reports, and the models no other model beats on both.")  # fmt: skip
    return [Section("costs", "Quality against cost", intro, tuple(blocks))]


def _slices_section(per, datasets, model_a, colours) -> Section:
    blocks: list[Block] = []
    for i, name in enumerate(datasets):
        summary = per[name].slice_summary
        metric = per[name].metric
        for column, part in slice_columns_of(summary):
            key = slice_label_key(part)[1]
            cut = " Labels: " + "; ".join(f"{m} {v}" for m, v in key) + "." if key else ""
            blocks.append(
                Block(
                    f"slices-{i}-{slug(name)}-{slug(column)}",
                    "figure",
                    f"Slices of {name} by {column}",
                    caption=f"{metric} per value of {column} and model; error bars: 95% CI; "
                    f"values with at least {MIN_SLICE} queries (n = queries).{cut}",
                    figure=slice_figure(part, name, metric, colours),
                    dataset=name,
                )
            )
    worst = worst_slices_table(
        [per[n].worst_slices for n in datasets if not per[n].worst_slices.empty]
    )
    if worst is not None:
        blocks.append(
            Block(
                "worst-slices",
                "table",
                "Worst slices of model A",
                caption=f"Model A: {model_a}.",
                table=worst,
                group="dataset",
            )
        )
    if not blocks:  # a tiny dataset: every query has the same slice values
        none = "No slice column takes two values on these queries: there is nothing to compare."
        blocks.append(Block("slices-none", "text", "No slices", text=(none,)))
    return Section(
        "slices",
        "Slices",
        "The report metric by slice (query type, answer-set size, split, metadata), "
        "models side by side, and the slices where model A does worst.",
        tuple(blocks),
    )


def _compare_section(comp, deltas, model_a, model_b) -> Section:
    blocks: list[Block] = []
    if not comp.empty:
        names = f"A = {model_a}, B = {model_b}."
        blocks += [
            Block(
                "compare-table",
                "table",
                "A vs B per dataset and metric",
                caption=names,
                table=compare_table(comp),
                group="dataset",
            ),
            Block(
                "compare-chart",
                "figure",
                "A vs B chart",
                caption=names,
                figure=compare_figure(comp, str(model_a), str(model_b)),
            ),
        ]
        if not deltas.empty:
            blocks.append(
                Block(
                    "compare-slices",
                    "table",
                    "A vs B per slice",
                    caption=names,
                    table=slice_delta_table(deltas),
                    group="dataset",
                )
            )
    else:
        blocks.append(
            Block(
                "compare-none",
                "text",
                "A vs B",
                text=("No dataset has runs of both model A and model B: nothing to compare.",),
            )
        )
    return Section(
        "compare",
        "A vs B",
        "Paired comparison over the queries of each dataset: delta = A − B with a 95% "
        "bootstrap CI, wins/ties/losses, paired randomization test (sign flips, "
        "B = 10,000, seed 0) and Holm correction.",
        tuple(blocks),
    )


def _queries_section(per, datasets, models, loaders, top_queries, table) -> Section:
    model_a, model_b = models
    dataset, ranked = loaders
    blocks: list[Block] = []
    for i, name in enumerate(datasets):
        rows = per[name].worst_queries
        if rows.empty:
            continue
        metric = per[name].metric
        b = model_b if f"{metric} B" in rows.columns else None
        head = rows.head(top_queries)
        blocks.append(
            Block(
                f"worst-{i}-{slug(name)}",
                "table",
                f"Worst queries of model A on {name}",
                caption=f"{metric} of A = {model_a}"
                + (f" and B = {b}" if b else "")
                + "; worst first (lowest A, then largest loss against B, then deepest first "
                "gold rank).",
                table=head.reset_index(drop=True),
                dataset=name,
            )
        )
        if dataset is None or ranked is None:
            continue
        rows = table.loc[table["dataset"] == name]
        views = query_views(name, head, dataset(name), ranked, model_a, b, rows)
        for j, view in enumerate(views):
            blocks.append(
                Block(
                    f"query-{i}-{j}-{slug(name)}",
                    "query",
                    f"{name}: query {view.query_id}",
                    query=view,
                    caption="Gold documents, then the top "
                    f"{RANK_DEPTH} of each model (gold = relevant in the qrels)"
                    + ("; what changed from A to B, written from the numbers." if b else "."),
                    dataset=name,
                )
            )
    if not blocks:
        blocks.append(
            Block(
                "worst-none",
                "text",
                "Worst queries",
                text=("Model A has no run on the selected datasets.",),
            )
        )
    return Section(
        "worst-queries",
        "Worst queries",
        "The queries model A fails worst, with the gold documents and both rankings.",
        tuple(blocks),
    )


def _possible(causes: pd.DataFrame) -> pd.DataFrame:
    """The causes table without the columns of causes that cannot occur on any of its rows."""
    keep = set(possible_causes(causes)) if not causes.empty else set()
    drop = [c for c in CONDITIONAL_CAUSES if c in causes.columns and c not in keep]
    return causes.drop(columns=drop)


def _causes_section(causes, warnings, datasets) -> Section:
    checks = pd.DataFrame(
        [
            {"dataset": d, "model": m, "check": w.code, "count": w.count, "message": w.message}
            for (d, m), items in warnings.items()
            if d in datasets
            for w in items
        ],
        columns=["dataset", "model", "check", "count", "message"],
    )
    return Section(
        "causes",
        "Failure causes",
        "Why queries fail: ties that change the metric, duplicate coordinates, missing "
        "queries, answer sets larger than the cutoff, and data problems.",
        (
            Block(
                "failure-causes",
                "table",
                "Failure causes",
                caption="Counts of queries per cause for the report metric of each dataset.",
                table=_possible(causes),
                group="dataset",
            ),
            Block(
                "data-checks",
                "table",
                "Data checks",
                table=checks,
                caption="Warnings found while loading and evaluating the runs.",
            ),
        ),
    )


def dataset_analyses(
    name: str,
    rows: pd.DataFrame,
    metric: str,
    ds: Dataset,
    ranked: Callable[[str, str], pd.DataFrame],
    colours: Mapping[str, str] | None = None,
) -> list[ReportPart]:
    """The "Beyond the averages" parts of one dataset
    (:func:`analysis.present.analyses_report.analyses_parts`) for the report metric: the failure
    taxonomy at the metric's cutoff k (10 for a metric without one, e.g. MRR), the queries each
    set of models solves (solved = the metric reaches 1: a hit, every gold in the top k, or the
    gold at rank 1 for MRR) and the oracle best-of-N of the metric."""
    models = list(dict.fromkeys(rows["model"].astype(str)))
    k = depth_of(metric)[0]
    return analyses_parts(
        name,
        rows,
        {m: ranked(name, m) for m in models},
        ds.qrels,
        ds.entities,
        getattr(ds, "edges", None),
        metric=metric,
        k=k,
        colours=colours,
    )


def _analyses_section(found: Mapping[str, Sequence[ReportPart]], datasets) -> Section:
    blocks = []
    for i, name in enumerate(datasets):
        for part in found.get(name, ()):
            kind = "figure" if part.figure is not None else "table"
            blocks.append(
                Block(
                    f"analyses-{i}-{part.key}",
                    kind,
                    part.title,
                    caption=part.caption,
                    figure=part.figure,
                    table=part.table,
                    dataset=name,
                )
            )
    return Section("analyses", "Beyond the averages", ANALYSES_INTRO, tuple(blocks))
