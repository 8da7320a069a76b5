"""Saved depth (analysis.core.depth): a run saved at depth D and metrics that read deeper are
warned about once per run and metric, with counts, in the core, the out-of-core engines, the
per-query table and the command line; ``--diagnostics`` carries ``saved_depth`` and
``gold_beyond_depth``."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from analysis.core import engines
from analysis.core.metrics import evaluate_arrays, evaluate_run, qrels_arrays, run_arrays
from analysis.io.stark import read_stark_eval, read_stark_qa
from analysis.stats.perquery import per_query_table
from tests.helpers import run_main

N_QUERIES, DEPTH = 30, 20


def depth20() -> tuple[pd.DataFrame, pd.DataFrame]:
    """30 queries saved at depth 20. Queries 0-9: the gold at rank q + 1; 10-19: no gold in
    the list (it would come later); 20-24: two gold, one at rank 3, one not saved; 25-29: the
    gold at rank 1. Qrels also hold query 99, missing from the run."""
    rows, qrels = [], []
    for q in range(N_QUERIES):
        docs = [f"d{q}-{r}" for r in range(1, DEPTH + 1)]
        if q < 10:
            docs[q] = f"g{q}"
        elif 20 <= q < 25:
            docs[2] = f"g{q}"
        elif q >= 25:
            docs[0] = f"g{q}"
        rows += [(str(q), d, float(DEPTH - i)) for i, d in enumerate(docs)]
        qrels.append((str(q), f"g{q}", 1))
        if 20 <= q < 25:
            qrels.append((str(q), f"h{q}", 1))
    qrels.append(("99", "g99", 1))
    run = pd.DataFrame(rows, columns=["query_id", "doc_id", "score"])
    return run, pd.DataFrame(qrels, columns=["query_id", "doc_id", "relevance"])


def _by_code(warnings) -> dict:
    return {w.code: w for w in warnings}


def test_a_depth_20_run_read_by_recall_at_50_is_warned_with_counts() -> None:
    run, qrels = depth20()
    result = evaluate_run(run, qrels, ["hit@10", "recall@20", "recall@50", "mrr"])
    found = _by_code(result.warnings)
    assert "saved_depth:hit@10" not in found  # 10 <= 20: the metric reads saved ranks only
    assert "saved_depth:recall@20" not in found
    w = found["saved_depth:recall@50"]
    assert w.message == (
        "recall@50 reads ranks up to 50 but the run saved 20 < 50 for 30 of 31 queries; "
        "10 of them have no relevant document in the saved list: their recall@50 is 0 here; "
        "an evaluator that scores every candidate (STaRK's) may credit them; 5 more have only "
        "part of their relevant documents in the saved list: their recall@50 is a lower bound"
    )
    assert w.count == 15
    assert w.examples == ("10", "11", "12", "13", "14")
    codes = [w.code for w in result.warnings]
    assert len(codes) == len(set(codes))  # once per run and metric


def test_gold_beyond_the_saved_depth_is_counted_and_flagged_per_query() -> None:
    run, qrels = depth20()
    result = evaluate_run(run, qrels, ["mrr", "map", "precision"], diagnostics=True)
    found = _by_code(result.warnings)
    assert found["saved_depth:mrr"].message == (
        "mrr reads the whole ranking: 10 of 31 queries have no relevant document within the "
        "saved depth 20: their mrr is 0 here; an evaluator that scores every candidate "
        "(STaRK's) may credit them"
    )
    assert found["saved_depth:mrr"].count == 10
    assert found["saved_depth:map"].count == 15  # and 5 with part of their gold
    assert "5 more have only part of their relevant documents" in found["saved_depth:map"].message
    assert "saved_depth:precision" not in found  # precision reads exactly the saved list
    assert found["missing_from_run"].count == 1  # query 99: its own check, not a depth one
    pq_ = result.per_query.set_index("query_id")
    assert pq_["saved_depth"].tolist() == [20] * 30 + [0]
    assert pq_["saved_depth"].equals(pq_["n_retrieved"])
    beyond = pq_.index[pq_["gold_beyond_depth"]].tolist()
    assert beyond == [str(q) for q in range(10, 20)]
    assert (pq_.loc[beyond, "mrr"] == 0).all()


def test_rprec_reads_up_to_the_number_of_relevant_documents() -> None:
    run = pd.DataFrame(
        {"query_id": ["a"] * 3 + ["b"] * 6, "doc_id": list("xyz") + list("pqrstu"),
         "score": [3.0, 2.0, 1.0, 6.0, 5.0, 4.0, 3.0, 2.0, 1.0]}
    )  # fmt: skip
    qrels = pd.DataFrame(
        {"query_id": ["a"] * 5 + ["b"] * 2, "doc_id": list("xvwjk") + list("pz"),
         "relevance": [1] * 7}
    )  # fmt: skip
    found = _by_code(evaluate_run(run, qrels, ["rprec"]).warnings)
    w = found["saved_depth:rprec"]
    assert w.count == 1
    assert w.examples == ("a",)
    assert w.message.startswith("rprec reads ranks up to R (the query's number of relevant")
    assert "1 of 2 queries has only part of its relevant documents within the saved depth 3" in (
        w.message
    )
    assert "a lower bound" in w.message


def test_lists_of_different_lengths_are_named_as_such() -> None:
    run = pd.DataFrame(
        {"query_id": ["a", "a", "b"], "doc_id": ["x", "y", "z"], "score": [2.0, 1.0, 1.0]}
    )
    qrels = pd.DataFrame({"query_id": ["a", "b"], "doc_id": ["g", "h"], "relevance": [1, 1]})
    found = _by_code(evaluate_run(run, qrels, ["mrr", "hit@5"]).warnings)
    assert "within their saved lists (usually 2 documents)" in found["saved_depth:mrr"].message
    assert "the run saved fewer than 5 (at most 2) for 2 of 2" in found["saved_depth:hit@5"].message


def test_a_run_that_saved_every_gold_gets_no_depth_warning() -> None:
    run, qrels = depth20()
    keep = qrels["query_id"].astype(int).isin(range(10)) | (qrels["query_id"].astype(int) >= 25)
    result = evaluate_run(run, qrels[keep], ["recall@50", "mrr", "map", "ndcg", "rprec"])
    assert not [w for w in result.warnings if w.code.startswith("saved_depth:")]


def test_out_of_core_engines_give_the_cores_depth_warnings(tmp_path: Path) -> None:
    run, qrels = depth20()
    path = tmp_path / "run.parquet"
    pq.write_table(pa.Table.from_pandas(run, preserve_index=False), path)
    metrics = ["hit@10", "recall@50", "mrr", "map", "ndcg@100", "rprec"]
    core = evaluate_arrays(*run_arrays(run), qrels_arrays(qrels), metrics)[2]
    duck = engines.evaluate(path, qrels_arrays(qrels), metrics, "duckdb")[2]
    dask = engines.evaluate(path, qrels_arrays(qrels), metrics, "dask")[2]
    expected = [(w.code, w.count, w.message, w.examples) for w in core]
    assert [(w.code, w.count, w.message, w.examples) for w in duck] == expected
    assert [(w.code, w.count, w.message, w.examples) for w in dask] == expected
    assert any(w.code == "saved_depth:ndcg@100" for w in core)


def test_ndcg_counts_every_positive_grade_missing_whatever_the_threshold(tmp_path: Path) -> None:
    """nDCG's gains are every positive relevance, whatever the threshold: under
    ``relevance_threshold=2`` a grade-1 document missing from the saved list still makes nDCG
    a lower bound (0.76 here; 1 with it ranked next), while ``map``, which reads grade 2 only,
    is exact; the out-of-core engine says the same."""
    qrels = pd.DataFrame({"query_id": ["q", "q"], "doc_id": ["a", "b"], "relevance": [2, 1]})
    run = pd.DataFrame({"query_id": ["q"], "doc_id": ["a"], "score": [1.0]})
    metrics = ["ndcg@5", "ndcg", "map", "recall@5"]
    result = evaluate_run(run, qrels, metrics, relevance_threshold=2)
    found = _by_code(result.warnings)
    assert sorted(c for c in found if c.startswith("saved_depth:")) == [
        "saved_depth:ndcg",
        "saved_depth:ndcg@5",
    ]
    assert found["saved_depth:ndcg@5"].message.endswith(
        "1 of them has only part of its relevant documents in the saved list: its ndcg@5 "
        "is a lower bound"
    )
    path = tmp_path / "run.parquet"
    pq.write_table(pa.Table.from_pandas(run, preserve_index=False), path)
    options = engines.Options(relevance_threshold=2)
    duck = engines.evaluate(path, qrels_arrays(qrels), metrics, "duckdb", options)[2]
    assert [(w.code, w.message) for w in duck] == [(w.code, w.message) for w in result.warnings]


def test_the_per_query_table_keeps_the_headline_metrics_depth_warnings_only() -> None:
    run, qrels = depth20()
    queries = pd.DataFrame({"query_id": qrels["query_id"].unique(), "text": "t"})
    table, warnings = per_query_table(
        queries, qrels, {"m": run}, dataset="d", headline=["hit@1", "recall@20", "mrr"]
    )
    codes = [w.code for w in warnings["m"] if w.code.startswith("saved_depth:")]
    assert codes == ["saved_depth:mrr"]  # not recall@50/100, ndcg@50, ... of the full table
    assert {"saved_depth", "gold_beyond_depth", "n_retrieved", "first_gold_rank"} <= set(
        table.columns
    )


def _write(tmp_path: Path) -> tuple[Path, Path]:
    run, qrels = depth20()
    run_file, qrels_file = tmp_path / "depth20.run", tmp_path / "qrels.txt"
    ranked = run.assign(rank=run.groupby("query_id").cumcount() + 1)
    run_file.write_text(
        "".join(f"{r.query_id} Q0 {r.doc_id} {r.rank} {r.score} m\n" for r in ranked.itertuples())
    )
    qrels_file.write_text("".join(f"{r.query_id} 0 {r.doc_id} 1\n" for r in qrels.itertuples()))
    return run_file, qrels_file


def test_cli_evaluate_validate_and_compare_print_the_depth_warnings(tmp_path: Path) -> None:
    run_file, qrels_file = _write(tmp_path)
    out = tmp_path / "pq.csv"
    done = run_main("evaluate", "--run", run_file, "--qrels", qrels_file, "--metrics",
                   "hit@1,recall@50,mrr", "--diagnostics", "--out", out)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "warning: recall@50 reads ranks up to 50 but the run saved 20 < 50" in done.stdout
    assert "warning: mrr reads the whole ranking: 10 of 31 queries" in done.stdout
    table = pd.read_csv(out, dtype={"query_id": str}).set_index("query_id")
    # the diagnostics columns pages read are all still there, the new ones added
    for column in ("n_gold", "n_retrieved", "first_gold_rank", "missing_from_run", "no_relevant",
                   "tied_at_cutoff", "mrr_min", "mrr_max", "tie_sensitive"):  # fmt: skip
        assert column in table.columns
    assert table.loc["10", "saved_depth"] == 20
    assert bool(table.loc["10", "gold_beyond_depth"])
    assert table.loc["99", "saved_depth"] == 0
    assert not table.loc["99", "gold_beyond_depth"]
    done = run_main("validate", "--run", run_file, "--qrels", qrels_file, "--metrics", "recall@50")
    assert "recall@50 reads ranks up to 50" in done.stdout
    done = run_main("compare", "--qrels", qrels_file, "--run", run_file, "--run", run_file,
                   "--metrics", "mrr", "--resamples", "10")  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "depth20#1: warning: mrr reads the whole ranking" in done.stdout


def test_cli_duckdb_engine_prints_the_same_depth_warnings(tmp_path: Path) -> None:
    run_file, qrels_file = _write(tmp_path)
    args = ["evaluate", "--run", run_file, "--qrels", qrels_file, "--metrics", "recall@50,mrr"]
    memory = run_main(*args, "--engine", "memory", "--out", tmp_path / "a.csv")
    duck = run_main(*args, "--engine", "duckdb", "--out", tmp_path / "b.csv")
    assert duck.returncode == 0, duck.stderr
    assert memory.stdout == duck.stdout
    assert (tmp_path / "a.csv").read_bytes() == (tmp_path / "b.csv").read_bytes()


@pytest.mark.real
@pytest.mark.parametrize(("domain", "beyond", "n"), [("prime", 20, 109), ("mag", 28, 84)])
def test_real_ada002_human_queries_with_no_gold_in_the_saved_1000(
    real_dir: Path, domain: str, beyond: int, n: int
) -> None:
    folder = real_dir / "stark" / domain
    run, _ = read_stark_eval(folder / "runs/ada-002/eval_results_human_generated_eval.csv")
    _, qrels = read_stark_qa(folder / "stark_qa_human_generated_eval.csv")
    result = evaluate_run(run, qrels, ["hit@1", "hit@5", "recall@20", "mrr"], diagnostics=True)
    found = _by_code(result.warnings)
    assert [c for c in found if c.startswith("saved_depth:")] == ["saved_depth:mrr"]
    assert found["saved_depth:mrr"].message.startswith(
        f"mrr reads the whole ranking: {beyond} of {n} queries have no relevant document "
        "within the saved depth 1000: their mrr is 0 here"
    )
    per_query = result.per_query
    assert int(per_query["gold_beyond_depth"].sum()) == beyond
    assert set(per_query["saved_depth"]) == {1000}
    assert np.all(per_query.loc[per_query["gold_beyond_depth"], "mrr"] == 0)
