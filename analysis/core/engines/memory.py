"""The in-memory engine: the run read whole into Arrow and numpy, then the core
(:func:`analysis.core.metrics.evaluate_arrays`).

Parquet runs (a file, a folder or a glob) are read here, column by column, with the ids
converted as every engine converts them (:mod:`analysis.core.engines.source`); any other run
(TREC text, STaRK files, tables) through ``options.read_run``, the loaders of the layer above.
Every option of the core is available. Memory: about 170 bytes per run line at 50,000
candidates per query (1.7 GB at 10M lines), about 60 at 100 per query.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from analysis.core import progress
from analysis.core import ranking as rk
from analysis.core.engines import source as src
from analysis.core.engines.reduce import Result
from analysis.core.errors import InputError
from analysis.core.inputs import QrelsArrays
from analysis.core.metrics import evaluate_arrays

if TYPE_CHECKING:
    from analysis.core.engines import Options


def _parquet_files(run: str | Path) -> tuple[Path, ...] | None:
    """The Parquet files of ``run`` (checked by :func:`~analysis.core.engines.source.run_source`:
    its columns, at least one row), or ``None`` when it is something else (text, a pipe)."""
    p = Path(run)
    if src.is_glob(run) or p.is_dir() or (p.is_file() and src.is_parquet(p)):
        return src.run_source(run).files
    return None


def unsupported(run: str | Path, options: Options) -> str | None:
    if options.read_run is None and _parquet_files(run) is None:
        return "reads Parquet runs here; other formats need a loader (options.read_run)"
    return None


def read(run: str | Path, options: Options) -> tuple[rk.Ids, rk.Ids, np.ndarray]:
    """``(query ids, doc ids, scores)`` of the run, whole."""
    files = _parquet_files(run)
    if files is None:
        if options.read_run is None:
            raise InputError(run, None, "not a Parquet run")
        return options.read_run(str(run))
    shown = progress.current()
    shown.plan(len(files), "files read")
    return src.read_parquet_columns(files, done=lambda rows: shown.advance(1, rows))


def evaluate(
    run: str | Path, qrels: QrelsArrays, metrics: str | Iterable[str], options: Options
) -> Result:
    """Per-query metrics of ``run`` by the in-memory core."""
    return evaluate_columns(*read(run, options), qrels, metrics, options)


def evaluate_columns(
    queries: rk.Ids,
    docs: rk.Ids,
    scores: np.ndarray,
    qrels: QrelsArrays,
    metrics: str | Iterable[str],
    options: Options,
) -> Result:
    """:func:`analysis.core.metrics.evaluate_arrays` with the engine options."""
    return evaluate_arrays(
        queries,
        docs,
        scores,
        qrels,
        metrics,
        ties=options.ties,  # type: ignore[arg-type]
        relevance_threshold=options.relevance_threshold,
        diagnostics=options.diagnostics,
        split=options.split,
        compat=options.compat,  # type: ignore[arg-type]
        candidates=options.candidates,
    )
