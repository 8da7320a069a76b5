"""Shared test helpers: random runs and qrels, and adapters to pytrec_eval / ir_measures.

The random generator builds runs of ``n_queries x n_docs`` rows in three regimes:

* ``unique``: every score distinct within its query;
* ``ties``: integer scores 0..4, so most documents share their score with others;
* ``graded``: unique scores, relevance 0..3 plus some ``-1`` rows (gain 0 for trec_eval).

Every generated collection also holds queries that are only in the qrels (they must score 0)
and queries that are only in the run (they must be left out).
"""

from __future__ import annotations

import contextlib
import io
import itertools
import logging
import os
import subprocess
import sys
import tempfile
import traceback
import warnings
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path

import numpy as np
import pandas as pd
import pytrec_eval

ROOT = Path(__file__).resolve().parents[1]


def run_cli(*args: str | Path, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """``python -m analysis ARGS`` from the project folder, output captured as text, never
    raising on a non-zero exit (tests read ``returncode``, ``stdout`` and ``stderr``)."""
    return subprocess.run(
        [sys.executable, "-m", "analysis", *map(str, args)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def run_main(
    *args: str | Path, env: Mapping[str, str] | None = None, cwd: Path = ROOT
) -> subprocess.CompletedProcess[str]:
    """:func:`analysis.cli.main` on ``ARGS`` in this process, read as :func:`run_cli` reads a
    separate one (``returncode``, ``stdout``, ``stderr``), without its interpreter start.

    What a separate process would show is shown: a ``SystemExit`` is its exit code, an
    uncaught exception a traceback on stderr and code 1, warnings go to stderr under Python's
    default filters, and what C code writes to file descriptors 1 and 2 is read too. What a
    command could change is put back afterwards: the environment (``env`` is added to it for
    the call), the working folder (``cwd``), the root logger's handlers and level, and the
    warning filters. A plugin would stay loaded, so ``--plugin`` is refused unless this process
    has loaded that plugin already: run those with :func:`run_cli`, as are interpreter-exit
    behaviour, signals and resource limits."""
    from analysis.cli import main
    from analysis.core import plugins

    argv = [str(a) for a in args]
    named = [b for a, b in itertools.pairwise(argv) if a == "--plugin"]
    if any(a.startswith("--plugin=") for a in argv) or any(
        plugins._key(spec) not in plugins._LOADED for spec in named
    ):
        raise ValueError("a plugin loaded here would stay loaded: use run_cli")
    loaded = dict(plugins._LOADED)
    stdout, stderr = _text_stream(), _text_stream()
    with _isolated(env, cwd), _fd_output() as fds, warnings.catch_warnings(record=True) as shown:
        _python_default_warning_filters()
        with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
            code = _exit_code(main, argv)
    assert loaded == plugins._LOADED, "a command loaded a plugin in the test process"
    err = (
        _read(stderr)
        + fds[2]
        + "".join(
            warnings.formatwarning(w.message, w.category, w.filename, w.lineno, w.line)
            for w in shown
        )
    )
    return subprocess.CompletedProcess(["analysis", *argv], code, _read(stdout) + fds[1], err)


def _text_stream() -> io.TextIOWrapper:
    """A text stream over bytes, like a piped ``sys.stdout`` (with a ``buffer``)."""
    return io.TextIOWrapper(io.BytesIO(), encoding="utf-8", errors="backslashreplace")


def _read(stream: io.TextIOWrapper) -> str:
    stream.flush()
    return stream.buffer.getvalue().decode("utf-8")  # type: ignore[attr-defined]


def _exit_code(main, argv: list[str]) -> int:
    """``main(argv)``'s exit code as the interpreter would make it."""
    try:
        return main(argv)
    except SystemExit as exc:
        if exc.code is None or isinstance(exc.code, int):
            return exc.code or 0
        sys.stderr.write(f"{exc.code}\n")
        return 1
    except BaseException:  # what the interpreter prints for an uncaught exception
        sys.stderr.write(traceback.format_exc())
        return 1


def _python_default_warning_filters() -> None:
    """The filters of a fresh interpreter without ``-W`` (``warnings.filters`` at start)."""
    warnings.resetwarnings()
    for category in (ResourceWarning, ImportWarning, PendingDeprecationWarning):
        warnings.simplefilter("ignore", category)
    warnings.simplefilter("ignore", DeprecationWarning)
    warnings.filterwarnings("default", category=DeprecationWarning, module="__main__")


@contextlib.contextmanager
def _isolated(env: Mapping[str, str] | None, cwd: Path) -> Iterator[None]:
    """Run the block with ``env`` added to the environment and ``cwd`` as working folder,
    then put back the environment, the working folder and the root logger."""
    environ, here = dict(os.environ), Path.cwd()
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    try:
        os.environ.update(env or {})
        os.chdir(cwd)
        yield
    finally:
        os.chdir(here)
        os.environ.clear()
        os.environ.update(environ)
        root.handlers[:] = handlers
        root.setLevel(level)


@contextlib.contextmanager
def _fd_output() -> Iterator[dict[int, str]]:
    """What is written to file descriptors 1 and 2 in the block (by C code, child
    processes), as text once the block ends."""
    texts: dict[int, str] = {}
    saved = {fd: os.dup(fd) for fd in (1, 2)}
    files = {fd: tempfile.TemporaryFile() for fd in (1, 2)}  # noqa: SIM115 (closed below)
    try:
        for fd, file in files.items():
            os.dup2(file.fileno(), fd)
        yield texts
    finally:
        for fd, file in files.items():
            os.dup2(saved[fd], fd)
            os.close(saved[fd])
            file.seek(0)
            texts[fd] = file.read().decode("utf-8", "backslashreplace")
            file.close()


def build_wheel(folder: Path) -> Path:
    """A wheel of the project built in ``folder`` from a copy of its sources (so no ``build/``
    or ``*.egg-info`` lands in the checkout), with this interpreter's setuptools."""
    import shutil

    src = folder / "src"
    src.mkdir(parents=True)
    for name in ("pyproject.toml", "README.md", "requirements.txt", "app.py"):
        shutil.copy2(ROOT / name, src / name)
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for name in ("analysis", "demo", "ui", "pages", ".streamlit"):
        shutil.copytree(ROOT / name, src / name, ignore=ignore)
    out = folder / "wheel"
    done = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
         "-w", str(out), str(src)],
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    (wheel,) = out.glob("*.whl")
    return wheel


# our metric name -> pytrec_eval result key
PYTREC_NAMES: dict[str, str] = {
    "hit@1": "success_1",
    "hit@5": "success_5",
    "hit@10": "success_10",
    "recall@5": "recall_5",
    "recall@20": "recall_20",
    "recall@100": "recall_100",
    "precision@5": "P_5",
    "precision@10": "P_10",
    "precision@20": "P_20",
    "mrr": "recip_rank",
    "ndcg@3": "ndcg_cut_3",
    "ndcg@10": "ndcg_cut_10",
    "ndcg@20": "ndcg_cut_20",
    "ndcg": "ndcg",
    "recall": "set_recall",
    "precision": "set_P",
    "map": "map",
    "map@10": "map_cut_10",
    "map@100": "map_cut_100",
    "rprec": "Rprec",
}
PYTREC_MEASURES = {
    "success.1,5,10",
    "recall.5,20,100",
    "P.5,10,20",
    "recip_rank",
    "ndcg_cut.3,10,20",
    "ndcg",
    "set_recall",
    "set_P",
    "map",
    "map_cut.10,100",
    "Rprec",
}
ALL_METRICS: list[str] = list(PYTREC_NAMES)


def random_collection(
    seed: int,
    regime: str,
    *,
    n_queries: int = 300,
    n_docs: int = 100,
    n_missing: int = 20,
    n_extra: int = 10,
    long_ids: bool = False,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """A random ``(run, qrels)`` pair (see the module docstring for the regimes).

    Run queries ``q0..`` come in a shuffled row order; ``m*`` queries are only in the qrels,
    ``x*`` queries only in the run. With ``long_ids`` doc ids are 40 characters, half of them
    sharing a 30-character prefix (exercises the folded fingerprints).
    """
    rng = np.random.default_rng(seed)
    pool = 20 * n_docs
    if long_ids:
        prefix = "urn:doc:shared-prefix-0123456789"
        names = np.array(
            [
                f"{prefix}-{i:07d}" if i % 2 else f"{rng.integers(0, 2**62):040x}"[:40]
                for i in range(pool)
            ]
        )
    else:
        names = np.array([f"d{i}" for i in range(pool)])
    q_run: list[np.ndarray] = []
    d_run: list[np.ndarray] = []
    s_run: list[np.ndarray] = []
    q_rel: list[str] = []
    d_rel: list[str] = []
    r_rel: list[int] = []
    for q in range(n_queries + n_extra):
        qid = f"q{q}" if q < n_queries else f"x{q}"
        docs = rng.choice(pool, size=n_docs, replace=False)
        if regime == "ties":
            scores = rng.integers(0, 5, size=n_docs).astype(np.float64)
        else:
            scores = rng.permutation(n_docs).astype(np.float64) / 7.0 + rng.normal(0, 1e-3)
        q_run.append(np.full(n_docs, qid))
        d_run.append(names[docs])
        s_run.append(scores)
        if q >= n_queries:
            continue
        # judged docs: some retrieved, some not retrieved
        n_judged = int(rng.integers(0, 12))
        judged = list(rng.choice(docs, size=min(n_judged, n_docs), replace=False))
        judged += list(rng.choice(pool, size=int(rng.integers(0, 4))))
        for d in dict.fromkeys(judged):
            if regime == "graded":
                rel = int(rng.choice([-1, 0, 1, 2, 3], p=[0.1, 0.2, 0.3, 0.2, 0.2]))
            else:
                rel = int(rng.random() < 0.7)
            q_rel.append(qid)
            d_rel.append(str(names[d]))
            r_rel.append(rel)
    for m in range(n_missing):
        for d in rng.choice(pool, size=3, replace=False):
            q_rel.append(f"m{m}")
            d_rel.append(str(names[d]))
            r_rel.append(int(rng.integers(1, 3)))
    run = pd.DataFrame(
        {
            "query_id": pd.array(np.concatenate(q_run), dtype="str"),
            "doc_id": pd.array(np.concatenate(d_run), dtype="str"),
            "score": np.concatenate(s_run),
        }
    )
    run = run.sample(frac=1.0, random_state=seed).reset_index(drop=True)
    qrels = pd.DataFrame(
        {
            "query_id": pd.array(q_rel, dtype="str"),
            "doc_id": pd.array(d_rel, dtype="str"),
            "relevance": np.array(r_rel, dtype=np.int64),
        }
    )
    return run, qrels


def presorted(run: pd.DataFrame, seed: int = 0) -> pd.DataFrame:
    """The run grouped by query (first appearance) and sorted by score descending, with tied
    rows in a random order (so the no-sort path must still reorder docs inside ties)."""
    rng = np.random.default_rng(seed)
    first = pd.Index(pd.unique(run["query_id"]))
    frame = run.assign(_q=first.get_indexer(run["query_id"]), _r=rng.random(len(run))).sort_values(
        ["_q", "score", "_r"], ascending=[True, False, True]
    )
    return frame.drop(columns=["_q", "_r"]).reset_index(drop=True)


def pytrec_dicts(
    run: pd.DataFrame, qrels: pd.DataFrame
) -> tuple[dict[str, dict[str, float]], dict[str, dict[str, int]]]:
    """``(run, qrels)`` as the nested dicts pytrec_eval takes."""
    run_d: dict[str, dict[str, float]] = {}
    for q, d, s in zip(run["query_id"], run["doc_id"], run["score"], strict=True):
        run_d.setdefault(str(q), {})[str(d)] = float(s)
    qrels_d: dict[str, dict[str, int]] = {}
    for q, d, r in zip(qrels["query_id"], qrels["doc_id"], qrels["relevance"], strict=True):
        qrels_d.setdefault(str(q), {})[str(d)] = int(r)
    return run_d, qrels_d


def pytrec_eval_per_query(
    run: pd.DataFrame, qrels: pd.DataFrame, relevance_level: int = 1
) -> dict[str, dict[str, float]]:
    """pytrec_eval's per-query results for :data:`PYTREC_MEASURES`."""
    run_d, qrels_d = pytrec_dicts(run, qrels)
    evaluator = pytrec_eval.RelevanceEvaluator(
        qrels_d, PYTREC_MEASURES, relevance_level=relevance_level
    )
    return evaluator.evaluate(run_d)


def assert_matches_pytrec(
    ours: pd.DataFrame,
    run: pd.DataFrame,
    qrels: pd.DataFrame,
    metrics: Iterable[str] = ALL_METRICS,
    *,
    relevance_level: int = 1,
    reference: Mapping[str, Mapping[str, float]] | None = None,
    tol: float = 1e-9,
) -> None:
    """Every metric of every query equals pytrec_eval; qrels queries absent from the run are 0;
    run queries absent from the qrels are not in ``ours``."""
    ref = reference or pytrec_eval_per_query(run, qrels, relevance_level)
    ours = ours.set_index("query_id")
    qrels_ids = list(dict.fromkeys(qrels["query_id"].astype(str)))
    assert list(ours.index) == qrels_ids  # one row per qrels query, qrels order
    run_ids = set(run["query_id"].astype(str))
    assert set(ref) == set(qrels_ids) & run_ids
    missing = [q for q in qrels_ids if q not in run_ids]
    metrics = list(metrics)
    for metric in metrics:
        key = PYTREC_NAMES[metric]
        queries = list(ref)
        expected = np.array([ref[q][key] for q in queries])
        got = ours.loc[queries, metric].to_numpy(dtype=np.float64)
        bad = np.flatnonzero(np.abs(got - expected) > tol)
        assert len(bad) == 0, (
            f"{metric}: {len(bad)} queries differ, e.g. {[queries[i] for i in bad[:3]]}: "
            f"ours {got[bad[:3]]} vs pytrec_eval {expected[bad[:3]]}"
        )
        if missing:
            assert (ours.loc[missing, metric] == 0).all(), metric


#: A plugin module: two user measures (``found``: relevant documents in the top k over |R|, which
#: is recall@k at relevance threshold 1; ``dcg_sum``: Σ gain / log2(rank + 1), no cutoff) and
#: ``SHAPES``, the shapes of the arrays the measures were given.
PLUGIN = """\
import numpy as np

import analysis

SHAPES = []


def found(ranked_rel, n_rel, k):
    SHAPES.append(("found", ranked_rel.shape, k))
    return (ranked_rel > 0).sum(axis=1) / np.maximum(n_rel, 1)


def dcg_sum(ranked_rel, n_rel, k):
    SHAPES.append(("dcg_sum", ranked_rel.shape, k))
    ranks = np.arange(1, ranked_rel.shape[1] + 1)
    return (ranked_rel / np.log2(ranks + 1)).sum(axis=1)


analysis.register_measure("found", found, help="relevant documents in the top k / |R|")
analysis.register_measure("dcg_sum", dcg_sum, cutoff=False, help="Σ gain_i / log2(i + 1)")
"""


def write_plugin(folder: Path, text: str = PLUGIN, name: str = "labmeasures.py") -> Path:
    """Write a plugin module into ``folder``; returns its path."""
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


def drop_plugin(path: Path, *measures: str) -> None:
    """Undo a test's plugin: unregister its measures and forget the module."""
    from analysis.core.measures import unregister_measure
    from analysis.core.plugins import forget

    for name in measures:
        unregister_measure(name)
    forget(str(path))
