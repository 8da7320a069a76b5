"""Disagreement and taxonomy on the real STaRK ada-002 runs (marker ``real``)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from analysis.core.metrics import evaluate_run
from analysis.io import load_qrels
from analysis.io.stark import read_stark_eval
from analysis.stats.disagree import disagreement
from analysis.stats.taxonomy import CATEGORIES, classify, taxonomy_counts
from tests.stats.test_disagree import _rbo_reference

pytestmark = pytest.mark.real


def _real(real_dir: Path, domain: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    folder = real_dir / "stark" / domain
    run, _ = read_stark_eval(folder / "runs" / "ada-002" / "eval_results_human_generated_eval.csv")
    return run, load_qrels(folder / "stark_qa_human_generated_eval.csv")


@pytest.mark.parametrize("domain", ["amazon", "mag", "prime"])
def test_disagreement_of_a_real_run_with_a_perturbed_copy(real_dir: Path, domain: str) -> None:
    run, _ = _real(real_dir, domain)
    same = disagreement(run, run, k=10)
    assert np.allclose(same[["jaccard@10", "rbo", "tau_ap"]].to_numpy(), 1.0)
    # swap the first two documents of every query: same set, different order at the top
    ranked = run.copy()
    ranked["rank"] = ranked.groupby("query_id", sort=False).cumcount() + 1
    swapped = ranked.copy()
    swapped.loc[ranked["rank"] == 1, "score"], swapped.loc[ranked["rank"] == 2, "score"] = (
        ranked.loc[ranked["rank"] == 2, "score"].to_numpy(),
        ranked.loc[ranked["rank"] == 1, "score"].to_numpy(),
    )
    diff = disagreement(ranked, swapped, k=10)
    assert (diff["jaccard@10"] == 1.0).all()
    assert (diff["rbo"] < 1.0).all()
    assert (diff["tau_ap"] < 1.0).all()
    # against the term-by-term sum on a few queries with their real (long, varied) ids
    for qid in diff["query_id"].head(5):
        a = ranked[ranked["query_id"] == qid].sort_values("rank")["doc_id"].head(10).tolist()
        b = [a[1], a[0], *a[2:]]
        want = _rbo_reference(a, b, 0.9)
        assert diff.set_index("query_id").loc[qid, "rbo"] == pytest.approx(want, rel=1e-9)


@pytest.mark.parametrize("domain", ["amazon", "mag", "prime"])
def test_taxonomy_partitions_the_real_queries(real_dir: Path, domain: str) -> None:
    run, qrels = _real(real_dir, domain)
    per_query = evaluate_run(run, qrels, ["hit@10"], diagnostics=True).per_query
    out = classify(per_query.assign(model="ada-002"), k=10)
    counts = taxonomy_counts(out).set_index("category")["n"]
    assert set(counts.index) == set(CATEGORIES)
    assert counts.sum() == len(per_query)
    assert counts["hit"] == per_query["hit@10"].sum()
