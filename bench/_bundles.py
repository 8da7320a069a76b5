"""Bundles of the click benchmark: a generated STaRK-shaped one, and two the importers write from
the real benchmark files (``../shared/real`` beside the project)."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
REAL = ROOT.parent / "shared" / "real"


def make_big_bundle(folder: Path, n_queries: int, n_models: int = 3, seed: int = 0) -> None:
    """One STaRK-shaped dataset: ``n_queries`` queries (text, type, split), 1-20 gold each out of
    20k docs, ``n_models`` TREC runs of 100 docs per query (one with tied integer scores)."""
    rng = np.random.default_rng(seed)
    ds = folder / "big"
    (ds / "runs").mkdir(parents=True)
    words = np.array(["red", "blue", "shoe", "lamp", "river", "paper", "gene", "drug", "cafe"])
    with (ds / "queries.csv").open("w") as f:
        f.write("query_id,text,query_type\n")
        for q in range(n_queries):
            text = " ".join(rng.choice(words, rng.integers(3, 12)))
            f.write(f"q{q},{text},{'human' if q % 10 == 0 else 'synthesized'}\n")
    gold = {}
    with (ds / "qrels.txt").open("w") as f:
        for q in range(n_queries):
            gold[q] = rng.choice(20_000, rng.integers(1, 20), replace=False)
            f.writelines(f"q{q} 0 d{d} 1\n" for d in gold[q])
    for m in range(n_models):
        model, ties = f"model-{'abc'[m % 3]}{m // 3 or ''}", m == 1
        lines = []
        for q in range(n_queries):
            keep = rng.choice(gold[q], min(len(gold[q]), int(rng.integers(0, 4))), replace=False)
            docs = np.unique(np.r_[keep, rng.choice(20_000, 100)])[:100]
            rng.shuffle(docs)
            scores = np.sort(rng.integers(0, 20, len(docs)) if ties else rng.random(len(docs)))
            lines.extend(
                f"q{q} Q0 d{d} {r} {float(s):.6f} {model}\n"
                for r, (d, s) in enumerate(zip(docs, scores[::-1], strict=True), start=1)
            )
        (ds / "runs" / f"{model}.run").write_text("".join(lines))
    (folder / "bundle.toml").write_text(
        'name = "bench"\n[datasets.big]\nfamily = "stark"\n'
        'queries = "big/queries.csv"\nqrels = "big/qrels.txt"\nruns = "big/runs"\n'
        'metrics = ["hit@1", "hit@5", "recall@20", "mrr"]\n'
    )


def make_prime_bundle(out: Path, workdir: Path, real: Path = REAL) -> None:
    """``import stark`` of STaRK-Prime's human-generated queries with the real ada-002 run (top
    1,000 per query) and a second model for Compare: ada-002's lists reordered by seeded noise
    (``ada-002-perturbed``, STaRK's ``eval_results`` format). The STaRK importer offers no
    baselines."""
    from analysis.io.importers import import_stark

    prime = real / "stark" / "prime"
    src = workdir / "prime"
    (src / "runs" / "ada-002").mkdir(parents=True)
    qa = "stark_qa_human_generated_eval.csv"
    (src / qa).symlink_to(prime / qa)
    ada = prime / "runs" / "ada-002" / "eval_results_human_generated_eval.csv"
    (src / "runs" / "ada-002" / ada.name).symlink_to(ada)
    perturbed = src / "runs" / "ada-002-perturbed" / ada.name
    perturbed.parent.mkdir(parents=True)
    rng = np.random.default_rng(0)
    csv.field_size_limit(1 << 30)
    with ada.open(newline="") as f, perturbed.open("w") as o:
        o.write("idx,query_id,pred_rank\n")
        for row in csv.DictReader(f):
            ids = json.loads(row["pred_rank"])
            order = np.argsort(np.arange(len(ids)) + rng.normal(0, 30, len(ids)))
            o.write(f'{row["idx"]},{row["query_id"]},"{json.dumps([ids[i] for i in order])}"\n')
    import_stark(src, out, name="prime")


def make_geoglue_bundle(out: Path, real: Path = REAL) -> None:
    """``import geoglue --baselines`` of the GeoGLUE clean subset (1,000 queries over 5,000
    Hangzhou POIs, three baseline runs)."""
    from analysis.io.importers import import_geoglue

    import_geoglue(real / "geo" / "geoglue_clean_subset", out, name="geoglue", baselines=True)
