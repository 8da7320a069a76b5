"""Retrieval error analysis: loaders, exact per-query metrics, statistics and geo diagnostics.

The library never imports streamlit; the app's pages call it. Its folders are its layers, lowest
first — a module imports its own layer and lower ones only (``tests/test_layers.py`` checks it):

==================  =========================================================================
``core``            ids, ranking, metrics, errors (the CLI's fast path: numpy/pyarrow, no pandas)
``geo``             distances, one CRS per dataset, coordinate stacks, twins, map data
``baselines``       baseline retrievers (BM25, character n-grams, KB propagation, distance fusion)
``io``              format detection, loaders, bundle manifests, importers
``stats``           bootstrap, paired tests, Holm, slicing, the per-query table, failure filters
``present``         views, the report, exports (tables, figures), escaping, palette
``cli``             ``python -m analysis …``
==================  =========================================================================

The public API a notebook calls is re-exported here (imported on first use, so that
``import analysis`` stays cheap)::

    import analysis
    run = analysis.load_run("bm25.trec")
    qrels = analysis.load_qrels("qrels.txt")
    per_query = analysis.evaluate(run, qrels, ["hit@1", "recall@20", "mrr"])
    bundle = analysis.load_bundle("data/demo")          # bundle.toml → Bundle
    dataset = analysis.load_dataset(bundle.datasets["stark-mag"])
    app = analysis.dashboard({"bm25": run, "dense": "dense.trec"}, qrels)   # app.url, app.stop()

=====================  ===================================================================
``evaluate``           per-query metrics of a run (:func:`analysis.core.metrics.evaluate`)
``evaluate_run``       the same plus data-check warnings
                       (:func:`analysis.core.metrics.evaluate_run`)
``rank_run``           a run ranked under a tie policy (:func:`analysis.core.metrics.rank_run`)
``InputError``         the one error of bad input: file, line, what is wrong
                       (:class:`analysis.core.errors.InputError`)
``load_run``           any supported run format (:func:`analysis.io.load_run`)
``load_qrels``         any supported qrels format (:func:`analysis.io.load_qrels`)
``load_queries``       queries (:func:`analysis.io.load_queries`)
``load_entities``      entities (:func:`analysis.io.load_entities`)
``load_bundle``        a bundle manifest (:func:`analysis.io.bundle.read_manifest`)
``load_dataset``       one dataset of a bundle (:func:`analysis.io.bundle.load_dataset`)
``paired_comparison``  paired statistics of two per-query arrays (:mod:`analysis.stats`)
``compare``            paired statistics of two or more runs on qrels (:mod:`analysis.stats.runs`)
``per_query_table``    the dashboard's per-query table (:mod:`analysis.stats.perquery`)
``register_measure``   add a per-query measure (:func:`analysis.core.measures.register_measure`)
``metric_card``        a metric's formula, cutoff, references and semantics
                       (:func:`analysis.core.measures.card`)
``dashboard``          the app on runs and qrels held in Python, in the background
                       (:func:`analysis.present.dashboard.dashboard`)
``save_bundle``        runs and qrels as a bundle folder to keep or share
                       (:func:`analysis.io.adhoc.save_bundle`)
``as_run``             a run from a path, DataFrame, dict, ranx ``Run``, PyTerrier frame,
                       records (:func:`analysis.io.objects.as_run`)
``as_qrels``           qrels from the same kinds of objects, ir_datasets' ``qrels_iter()``
                       too (:func:`analysis.io.objects.as_qrels`)
``to_ranx``            a ranx ``Run``/``Qrels`` (needs ranx) (:func:`analysis.io.objects.to_ranx`)
``from_ranx``          a ranx ``Run``/``Qrels`` as a table (:func:`analysis.io.objects.from_ranx`)
=====================  ===================================================================

Exports for papers and meetings are one import further:
:mod:`analysis.present.export` (tables as CSV, Markdown, LaTeX, HTML),
:mod:`analysis.present.figures` (figures as offline HTML, PNG, SVG) and
:mod:`analysis.present.report` (the offline report and the slide deck).
"""

from __future__ import annotations

import importlib
from typing import Any

_PUBLIC: dict[str, tuple[str, str]] = {
    "evaluate": ("analysis.core.metrics", "evaluate"),
    "evaluate_run": ("analysis.core.metrics", "evaluate_run"),
    "rank_run": ("analysis.core.metrics", "rank_run"),
    "InputError": ("analysis.core.errors", "InputError"),
    "load_run": ("analysis.io", "load_run"),
    "load_qrels": ("analysis.io", "load_qrels"),
    "load_queries": ("analysis.io", "load_queries"),
    "load_entities": ("analysis.io", "load_entities"),
    "load_bundle": ("analysis.io.bundle", "read_manifest"),
    "load_dataset": ("analysis.io.bundle", "load_dataset"),
    "paired_comparison": ("analysis.stats", "paired_comparison"),
    "compare": ("analysis.stats.runs", "compare"),
    "per_query_table": ("analysis.stats.perquery", "per_query_table"),
    "register_measure": ("analysis.core.measures", "register_measure"),
    "metric_card": ("analysis.core.measures", "card"),
    "dashboard": ("analysis.present.dashboard", "dashboard"),
    "save_bundle": ("analysis.io.adhoc", "save_bundle"),
    "as_run": ("analysis.io.objects", "as_run"),
    "as_qrels": ("analysis.io.objects", "as_qrels"),
    "to_ranx": ("analysis.io.objects", "to_ranx"),
    "from_ranx": ("analysis.io.objects", "from_ranx"),
}

__all__ = sorted(_PUBLIC)


def __getattr__(name: str) -> Any:
    if name in _PUBLIC:
        module, attr = _PUBLIC[name]
        return getattr(importlib.import_module(module), attr)
    raise AttributeError(f"module 'analysis' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_PUBLIC))
