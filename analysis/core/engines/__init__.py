"""Engines: one interface over the in-memory core, DuckDB and Dask, with the same output.

Every engine takes the same run (a file, a folder of Parquet files or a glob of them; see
:mod:`analysis.core.engines.source`), the same qrels columns and metrics, and returns what
:func:`analysis.core.metrics.evaluate_arrays` returns: ``(qrels query ids, metric columns,
warnings, metrics)``, with the in-memory core's per-query values byte for byte.

* ``memory`` (:mod:`.memory`): the in-memory core; every option (tie policies, diagnostics,
  splits, compatibility variants); needs about 170 bytes per run line.
* ``duckdb`` (:mod:`.duckdb`): embedded DuckDB, out of core under a memory limit, Parquet in
  passes of whole queries (:mod:`.passes`), TREC text and CSV tables in one pass; trec_eval
  ties, no diagnostics.
* ``dask`` (:mod:`.dask`): the DuckDB engine's passes as tasks of a Dask cluster (or of this
  machine's threads); Parquet only.

``auto`` (:func:`choose`) picks by measured cost (:mod:`.auto`).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

import numpy as np

from analysis.core import ranking as rk
from analysis.core.engines.reduce import Result
from analysis.core.inputs import QrelsArrays, Split
from analysis.core.names import DEFAULT_METRICS

ENGINES = ("memory", "duckdb", "dask")
CHOICES = ("auto", *ENGINES)

RunReader = Callable[[str], tuple[rk.Ids, rk.Ids, np.ndarray]]


@dataclass(frozen=True)
class Options:
    """The options of an evaluation, for every engine (each refuses those it does not
    implement, see :func:`unsupported`).

    Attributes:
        relevance_threshold: relevant means ``relevance >= relevance_threshold``.
        ties, diagnostics, split, compat, candidates: as in
            :func:`analysis.core.metrics.evaluate_arrays` (the in-memory engine only, but for
            the ``trec_eval`` tie policy).
        memory_limit: DuckDB's memory limit per connection, e.g. ``"2GB"`` (default
            ``$RETRIEVAL_DASHBOARD_DUCKDB_MEMORY`` or 2GB).
        threads: DuckDB threads (default: every core); Dask on local threads: tasks at once.
        scheduler: a Dask scheduler address (default ``$DASK_SCHEDULER_ADDRESS``, else the
            threads of this machine).
        read_run: how the in-memory engine reads a run that is not Parquet (the command line
            gives its loaders of TREC runs, STaRK files and tables); ``(query ids, doc ids,
            scores)`` of a path.
    """

    relevance_threshold: int = 1
    ties: str = "trec_eval"
    diagnostics: bool = False
    split: Split = None
    compat: str = "trec_eval"
    candidates: Split = None
    memory_limit: str | None = None
    threads: int | None = None
    scheduler: str | None = None
    read_run: RunReader | None = None


def module(name: str) -> ModuleType:
    """The module of an engine (imported when first used: DuckDB and Dask load only then)."""
    if name not in ENGINES:
        raise ValueError(f"unknown engine {name!r} (known: {', '.join(CHOICES)})")
    return importlib.import_module(f"analysis.core.engines.{name}")


def out_of_core_limits(options: Options) -> str | None:
    """What the out-of-core engines do not implement among ``options``, as one phrase
    (``"does not implement --ties stable"``), or ``None``."""
    flags = []
    if options.ties != "trec_eval":
        flags.append(f"--ties {options.ties}")
    if options.diagnostics:
        flags.append("--diagnostics")
    if options.split is not None:
        flags.append("--split")
    if options.compat != "trec_eval":
        flags.append(f"--compat {options.compat}")
    return f"does not implement {' or '.join(flags)}" if flags else None


def unsupported(name: str, run: str | Path, options: Options) -> str | None:
    """Why engine ``name`` cannot evaluate ``run`` with ``options`` (one phrase), or ``None``."""
    return module(name).unsupported(run, options)


def choose(run: str | Path, options: Options = Options()) -> str:
    """The engine ``auto`` picks (see :mod:`analysis.core.engines.auto`)."""
    from analysis.core.engines.auto import choose as pick

    return pick(run, options)


def evaluate(
    run: str | Path,
    qrels: QrelsArrays,
    metrics: str | Iterable[str] = DEFAULT_METRICS,
    engine: str = "auto",
    options: Options = Options(),
) -> Result:
    """Per-query metrics of ``run`` on ``engine`` (``auto``: :func:`choose`).

    Raises:
        InputError: bad input (one line naming the file), or an engine that cannot do what
            ``options`` ask (naming the engine).
    """
    from analysis.core.errors import InputError

    name = choose(run, options) if engine == "auto" else engine
    reason = unsupported(name, run, options)
    if reason:
        raise InputError(f"--engine {name}", None, reason)
    return module(name).evaluate(run, qrels, metrics, options)
