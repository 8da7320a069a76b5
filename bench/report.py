"""Benchmark: building the report and the slide deck.

Two bundles:

* the demo (``data/demo``: six datasets, 400-420 queries each, 3-4 models);
* a generated STaRK-shaped bundle of one dataset with ``--queries`` queries (default 10,000),
  three models with 100 ranked documents per query, 1-3 gold documents per query and three
  slice columns (query type, split, a 6-valued metadata column), written to ``--workdir``.

For each bundle it times, in one process, median of ``--repeat`` runs:

* ``load``: reading the bundle and evaluating every run (the per-query table; the app caches
  this before the Report page runs);
* ``content``: :func:`analysis.present.report.build_content` on that table (what the Report
  page computes for a selection; B = 10,000 bootstrap and sign-flip resamples);
* ``cached``: ``build_content`` again with every dataset's numbers cached (what the page
  does when only the shown sections or the datasets' order change: figures and tables only);
* ``a/b``: ``build_content`` with the model-independent numbers cached
  (:func:`~analysis.present.report.model_numbers`: leaderboard, best-vs-rest tests, slice
  means, causes), i.e. the page after choosing another model A or B;
* ``html``: :func:`~analysis.present.report.render_html` of the content;
* ``deck``: :func:`~analysis.present.report.build_deck` plus
  :func:`~analysis.present.report.render_deck`;
* ``cli``: ``python -m analysis report`` as a whole process (interpreter start included).

With ``--old REV`` the same timings are taken of the code at git revision ``REV`` (its files
exported with ``git archive`` into the work folder), old and new alternating in one run, each
in its own child process, and the table adds the ratio new / old per column.

Children run with compiled bytecode, as an installed copy does (:mod:`_bytecode`).

Usage::

    python bench/report.py [--queries 10000] [--repeat 3] [--workdir bench/out] [--old REV]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
from _bytecode import user_bytecode

ROOT = Path(__file__).resolve().parents[1]
COLUMNS = ("load", "content", "cached", "a/b", "html", "deck", "cli")


def make_bundle(folder: Path, n_queries: int, seed: int = 0) -> Path:
    """A one-dataset STaRK-shaped bundle (see the module docstring); returns its folder."""
    rng = np.random.default_rng(seed)
    data = folder / "big"
    (data / "runs").mkdir(parents=True, exist_ok=True)
    qids = [f"q{i:06d}" for i in range(n_queries)]
    queries = pd.DataFrame(
        {
            "query_id": qids,
            "text": [f"query number {i}" for i in range(n_queries)],
            "query_type": rng.choice(["product", "brand", "category", "review"], n_queries),
            "split": rng.choice(["train", "val", "test"], n_queries, p=[0.6, 0.2, 0.2]),
            "colour": rng.choice(["red", "blue", "green", "black", "white", "grey"], n_queries),
        }
    )
    queries.to_parquet(data / "queries.parquet", index=False)
    n_gold = rng.integers(1, 4, n_queries)
    qrels = pd.DataFrame(
        {
            "query_id": np.repeat(qids, n_gold),
            "doc_id": [f"d{rng.integers(0, 50_000)}" for _ in range(int(n_gold.sum()))],
            "relevance": 1,
        }
    ).drop_duplicates(["query_id", "doc_id"])
    qrels.to_parquet(data / "qrels.parquet", index=False)
    gold = qrels.groupby("query_id")["doc_id"].first()
    for model, skill in (("dense", 0.6), ("bm25", 0.45), ("hybrid", 0.55)):
        docs = rng.integers(0, 50_000, size=(n_queries, 100)).astype(str)
        docs = np.char.add("d", docs)
        hit = rng.random(n_queries) < skill
        pos = rng.integers(0, 20, n_queries)
        docs[np.flatnonzero(hit), pos[hit]] = gold.reindex(qids).to_numpy()[hit]
        scores = np.sort(rng.random((n_queries, 100)), axis=1)[:, ::-1]
        run = pd.DataFrame(
            {
                "query_id": np.repeat(qids, 100),
                "doc_id": docs.ravel(),
                "score": scores.ravel().round(6),
            }
        ).drop_duplicates(["query_id", "doc_id"])
        run.to_parquet(data / "runs" / f"{model}.parquet", index=False)
    (folder / "bundle.toml").write_text(
        'name = "bench-10k"\n[datasets.big]\nfamily = "stark"\n'
        'queries = "big/queries.parquet"\nqrels = "big/qrels.parquet"\nruns = "big/runs"\n'
        'metrics = ["hit@1", "hit@5", "recall@20", "mrr"]\n',
        encoding="utf-8",
    )
    return folder


def _once(bundle: Path, workdir: Path, root: Path) -> dict[str, float]:
    """One timing of every column, with the ``analysis`` package found under ``root``."""
    sys.path.insert(0, str(root))
    from analysis.present import report
    from analysis.present.report import build as report_build

    out: dict[str, float] = {}
    start = time.perf_counter()
    manifest, table, warnings, loaded, _runs = report_build._load(bundle, None, "trec_eval")
    out["load"] = time.perf_counter() - start
    names = list(loaded)
    a, b = report.default_models(table, names)
    headline = {n: list(loaded[n].spec.metrics) for n in names}

    def build(numbers=None):
        if not hasattr(report, "ReportSources"):  # a revision before the options records
            return report.build_content(
                table, headline=headline, model_a=a, model_b=b, warnings=warnings,
                bundle=manifest.name, numbers=numbers,
            )  # fmt: skip
        return report.build_content(
            table, headline=headline, model_a=a, model_b=b,
            sources=report.ReportSources(warnings=warnings, numbers=numbers),
            settings=report.ReportSettings(bundle=manifest.name),
        )  # fmt: skip

    start = time.perf_counter()
    content = build()
    out["content"] = time.perf_counter() - start
    per = content.per_dataset
    start = time.perf_counter()
    build(lambda name, rows, metric, shown: per[name])
    out["cached"] = time.perf_counter() - start
    bases = {
        n: report.ModelNumbers(p.board, p.best_vs_rest, p.slice_summary, p.causes)
        for n, p in per.items()
    }
    start = time.perf_counter()
    build(
        lambda name, rows, metric, shown: report.dataset_numbers(
            rows,
            metric=metric,
            shown=shown,
            model_a=a,
            model_b=b,
            n_resamples=report.N_RESAMPLES,
            seed=report.SEED,
            base=bases[name],
        ),
    )
    out["a/b"] = time.perf_counter() - start
    start = time.perf_counter()
    report.render_html(content)
    out["html"] = time.perf_counter() - start
    start = time.perf_counter()
    report.render_deck(content)
    out["deck"] = time.perf_counter() - start
    cmd = [sys.executable, "-m", "analysis", "report", "--bundle", str(bundle)]
    start = time.perf_counter()
    subprocess.run(
        [*cmd, "--out", str(workdir / f"{bundle.name}-report.html")],
        cwd=root,
        capture_output=True,
        check=True,
    )
    out["cli"] = time.perf_counter() - start
    return out


def _child(root: Path, bundle: Path, workdir: Path) -> dict[str, float]:
    """:func:`_once` in a fresh interpreter (imports, caches and memos start empty)."""
    code = (
        "import json, sys; sys.path.insert(0, sys.argv[1]); import report; "
        "from pathlib import Path; "
        "print(json.dumps(report._once(Path(sys.argv[2]), Path(sys.argv[3]), Path(sys.argv[4]))))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(ROOT / "bench"), str(bundle), str(workdir), str(root)],
        cwd=root,
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def _export(rev: str, workdir: Path) -> Path:
    """The files of git revision ``rev`` in ``workdir/old-<rev>`` (exported once)."""
    folder = workdir / f"old-{rev.replace('/', '_')}"
    if not (folder / "analysis").is_dir():
        folder.mkdir(parents=True, exist_ok=True)
        archive = subprocess.run(
            ["git", "-C", str(ROOT), "archive", rev], capture_output=True, check=True
        ).stdout
        subprocess.run(["tar", "-x", "-C", str(folder)], input=archive, check=True)
    return folder


def _row(name: str, r: dict[str, float]) -> str:
    return f"{name:13s} " + " ".join(f"{r[k]:7.2f}" for k in COLUMNS)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--workdir", type=Path, default=ROOT / "bench" / "out")
    parser.add_argument("--old", default=None, help="git revision to time side by side")
    args = parser.parse_args()
    args.workdir = args.workdir.resolve()
    args.workdir.mkdir(parents=True, exist_ok=True)
    big = args.workdir / f"bundle-{args.queries}"
    if not (big / "bundle.toml").exists():
        make_bundle(big, args.queries)
    roots = {"new": ROOT}
    if args.old:
        roots = {"old": _export(args.old, args.workdir), "new": ROOT}
    user_bytecode(args.workdir, tuple(roots.values()))
    print("bundle/code   " + " ".join(f"{k:>7s}" for k in COLUMNS) + "  (seconds, median)")
    for name, folder in (("demo", ROOT / "data" / "demo"), (f"{args.queries} q", big)):
        runs: dict[str, list[dict[str, float]]] = {k: [] for k in roots}
        for _ in range(args.repeat):  # old and new alternate, so both see the same load
            for label, root in roots.items():
                runs[label].append(_child(root, folder, args.workdir))
        med = {
            label: {k: statistics.median(r[k] for r in rs) for k in COLUMNS}
            for label, rs in runs.items()
        }
        for label in roots:
            print(_row(f"{name} {label}", med[label]))
        if "old" in med:
            ratio = {k: med["new"][k] / med["old"][k] for k in COLUMNS}
            print(f"{name + ' new/old':13s} " + " ".join(f"{ratio[k]:6.2f}x" for k in COLUMNS))


if __name__ == "__main__":
    main()
