"""The report of a bundle: load the datasets, evaluate every run once, build the content and
write the HTML report or the slide deck (``python -m analysis report``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from analysis.core import progress
from analysis.core.errors import DataWarning, InputError
from analysis.core.metrics import TIE_POLICIES, parse_metrics, rank_run
from analysis.io.atomic import atomic_write_text
from analysis.io.audits import run_audits
from analysis.io.bundle import Dataset, load_dataset, load_model_run, read_manifest
from analysis.io.groups import run_metadata
from analysis.present.report.annotations import annotation_blocks, open_store
from analysis.present.report.content import build_content
from analysis.present.report.document import render_html
from analysis.present.report.model import (
    ReportContent,
    ReportSettings,
    ReportSources,
    canonical,
    default_models,
)
from analysis.stats.perquery import dashboard_metrics, per_query_table

__all__ = ["MAX_REPORT_DATASETS", "build_report", "bundle_content", "write_report"]

#: Datasets in one report: each adds its figures, tables and worst queries (about a second and
#: a few hundred kB of HTML); larger bundles are reported a selection at a time.
MAX_REPORT_DATASETS = 100


def _load(
    bundle_dir: Path, datasets: Sequence[str] | None, ties: str, split: str | None = None
) -> tuple[object, pd.DataFrame, dict, dict[str, Dataset], dict[tuple[str, str], pd.DataFrame]]:
    bundle = read_manifest(bundle_dir)
    names = list(bundle.datasets) if not datasets else list(dict.fromkeys(datasets))
    unknown = [n for n in names if n not in bundle.datasets]
    if unknown:
        known = list(bundle.datasets)
        more = f", ... ({len(known)} in all)" if len(known) > 20 else ""
        raise InputError(
            "--datasets",
            None,
            f"unknown dataset(s) {', '.join(unknown[:20])}; the bundle has "
            f"{', '.join(known[:20])}{more}",
        )
    if len(names) > MAX_REPORT_DATASETS:
        raise InputError(
            "--datasets",
            None,
            f"{len(names)} datasets: a report covers at most {MAX_REPORT_DATASETS} (about a "
            "second each); choose them with --datasets a,b,...",
        )
    frames = []
    warnings: dict[tuple[str, str], list[DataWarning]] = {}
    loaded: dict[str, Dataset] = {}
    runs_by: dict[tuple[str, str], pd.DataFrame] = {}
    shown = progress.current()
    shown.plan(len(names) + 1, "steps (each dataset evaluated, then the report)")
    for name in names:
        spec = bundle.datasets[name]
        ds = load_dataset(spec, split)
        if ds.split is not None and ds.qrels.empty:
            raise InputError(
                spec.splits[ds.split],
                None,
                f"no query of split {ds.split!r} is in the qrels of dataset {name!r}: nothing "
                "to report (choose another split, or the datasets with --datasets)",
            )
        runs = {model: load_model_run(spec, model) for model in spec.runs}
        for group in spec.groups:  # the ranking shown for a group (its first seed, its folds)
            runs_by[(name, group)] = load_model_run(spec, group)
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
            groups=spec.groups,
        )  # type: ignore[arg-type]
        frames.append(table)
        loaded[name] = ds
        for model, items in run_audits(spec, runs, ties=ties, dataset=ds).items():
            found[model] = [*found.get(model, []), *items]
        for model, items in found.items():
            warnings[(name, model)] = list(items)
        for model, run in runs.items():
            runs_by[(name, model)] = run
        shown.advance(1, sum(len(run) for run in runs.values()))
    table = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
    return bundle, table, warnings, loaded, runs_by


def bundle_content(
    bundle_dir: Path,
    *,
    datasets: list[str] | None = None,
    model_a: str | None = None,
    model_b: str | None = None,
    ties: str = "trec_eval",
    metric: str | None = None,
    split: str | None = None,
) -> ReportContent:
    """The report content of a bundle: every run evaluated once, then :func:`build_content`.

    Models default to :func:`default_models`; ``metric`` to each dataset's first headline metric.
    ``split`` is that of every selected dataset, as ``evaluate --bundle --split``
    (:func:`analysis.io.bundle.load_dataset`): ``None`` = each dataset's default split from
    ``bundle.toml`` (every query when it names none), ``"all"`` = every query, a name = that
    split (every selected dataset must have it; choose datasets with ``datasets``).

    Raises:
        InputError: unreadable bundle or data, unknown dataset, model, metric or split, a
            split none of whose queries the qrels judge (naming its file), A equal to B,
            unknown tie policy.
    """
    if ties not in TIE_POLICIES:
        raise InputError("--ties", None, f"must be one of {', '.join(TIE_POLICIES)}")
    chosen = _metric(metric, Path(bundle_dir), datasets)
    bundle, table, warnings, loaded, runs = _load(Path(bundle_dir), datasets, ties, split)
    names = list(loaded)
    model_a, model_b = _models(
        table, names, list(dict.fromkeys(m for (_, m) in runs)), (model_a, model_b)
    )
    cache: dict[tuple[str, str], pd.DataFrame] = {}

    def ranked(name: str, model: str) -> pd.DataFrame:
        if (name, model) not in cache:
            cache[(name, model)] = rank_run(runs[(name, model)], ties)  # type: ignore[arg-type]
        return cache[(name, model)]

    sources = ReportSources(
        dataset=loaded.__getitem__,
        ranked=ranked,
        warnings=warnings,
        annotations=_annotations(Path(bundle_dir), loaded, runs, ties),
        costs={n: _costs(loaded[n].spec) for n in names},
    )
    settings = ReportSettings(
        bundle=bundle.name,  # type: ignore[attr-defined]
        ties=ties,
        splits={n: loaded[n].split or "all" for n in names},
        model_names=bundle.models,  # type: ignore[attr-defined]
    )
    return build_content(
        table,
        headline={n: list(loaded[n].spec.metrics) for n in names},
        model_a=model_a,
        model_b=model_b,
        metric=chosen,
        sources=sources,
        settings=settings,
    )


def _metric(metric: str | None, bundle_dir: Path, datasets: Sequence[str] | None) -> str | None:
    """The canonical name of the report metric asked for (``None``: each dataset's first): a
    metric of the per-query table, i.e. a dashboard metric or a headline metric (``metrics`` in
    ``bundle.toml``) of one of the selected datasets."""
    if metric is None:
        return None
    chosen = canonical(metric)
    if chosen is None:  # not a metric: the reason parse_metrics gives (as evaluate --metrics)
        try:
            parse_metrics([metric])
        except ValueError as exc:
            raise InputError("--metric", None, str(exc)) from None
        raise InputError("--metric", None, f"unknown metric {metric!r}")
    specs = read_manifest(bundle_dir).datasets
    headline = [m for n, s in specs.items() if not datasets or n in datasets for m in s.metrics]
    known = dashboard_metrics(headline)
    if chosen not in known:
        raise InputError(
            "--metric",
            None,
            f"{metric!r} is not computed for the report's datasets; choose one of "
            f"{', '.join(known)} (or add it to a dataset's metrics in bundle.toml)",
        )
    return chosen


def _models(
    table: pd.DataFrame,
    names: Sequence[str],
    models: Sequence[str],
    asked: tuple[str | None, str | None],
) -> tuple[str | None, str | None]:
    """Models A and B: those asked for (each must have a run, and they must differ), else
    :func:`default_models` (B: the first other model when the defaults give only A)."""
    model_a, model_b = asked
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
    return model_a, model_b


def _annotations(
    bundle_dir: Path,
    loaded: Mapping[str, Dataset],
    runs: Mapping[tuple[str, str], pd.DataFrame],
    ties: str,
) -> dict[str, tuple]:
    """Each dataset's "Annotations" blocks from the bundle's annotation store (none without)."""
    written = {}
    store = open_store(bundle_dir)
    if store is not None:
        for i, (name, ds) in enumerate(loaded.items()):
            spec = ds.spec
            written[name] = annotation_blocks(
                store,
                name,
                {m: runs[(name, m)] for m in spec.runs},
                ds.qrels,
                spec.metrics,
                ties=ties,
                relevance_threshold=spec.relevance_threshold,
                index=i,
            )
    return written


def _costs(spec) -> dict[str, dict[str, float]]:
    """The run metadata of a dataset (:func:`analysis.io.groups.run_metadata`)."""
    return run_metadata(spec.runs, spec.run_metadata, spec.groups)


def build_report(bundle_dir: Path, **options: object) -> str:
    """The HTML report of a bundle: :func:`render_html` of :func:`bundle_content` (same
    options and errors)."""
    return render_html(bundle_content(Path(bundle_dir), **options))  # type: ignore[arg-type]


def write_report(bundle_dir: Path, out: Path, *, deck: bool = False, **options: Any) -> None:
    """Write the report (or, with ``deck``, the slide deck of
    :func:`analysis.present.report.deck.render_deck`) of a bundle to ``out`` (UTF-8);
    ``options`` are those of :func:`bundle_content` (datasets, models, ties, metric, split). The
    text goes to a temporary file next to ``out`` that is then renamed, so a failure never leaves
    a partial file.

    Raises:
        InputError: as :func:`bundle_content`, or ``out`` cannot be written.
    """
    from analysis.present.report.deck_html import render_deck

    content = bundle_content(Path(bundle_dir), **options)
    text = render_deck(content) if deck else render_html(content)
    atomic_write_text(out, text)  # a temporary file beside ``out``, renamed when complete
    progress.current().advance()
