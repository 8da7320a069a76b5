"""Exactness against pytrec_eval on the id and score shapes that break fingerprints and float64
ranking: UTF-8 doc ids of 1-64 bytes whose longest ids differ between the run and the qrels and
between chunks of the run, and near-equal scores (9-10 significant digits, ``1e9 - rank``) that
tie in float32 as trec_eval stores them."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from analysis.core import ranking as rk
from analysis.core.metrics import evaluate, evaluate_arrays
from tests.helpers import PYTREC_NAMES, pytrec_dicts

METRICS = ["hit@1", "hit@5", "recall@5", "recall@20", "precision@5", "precision@10", "ndcg@3",
           "ndcg@10", "ndcg", "mrr", "map", "map@10", "map@100", "rprec"]  # fmt: skip
_ALPHABET = [*list("abcdefghijklmnopqrstuvwxyz0123456789-_:/."), "é", "ß", "中", "文", "😀"]


def _utf8_id(rng: np.random.Generator, max_bytes: int) -> str:
    """A random id of 1..max_bytes UTF-8 bytes (multi-byte characters included)."""
    target = int(rng.integers(1, max_bytes + 1))
    out, size = [], 0
    while size < target:
        ch = _ALPHABET[int(rng.integers(0, len(_ALPHABET)))]
        if size + len(ch.encode()) > target:
            ch = "x"
        out.append(ch)
        size += len(ch.encode())
    return "".join(out)


def _collection(seed: int, n_queries: int, n_docs: int, scores: str) -> tuple[pd.DataFrame, ...]:
    rng = np.random.default_rng(seed)
    pool = sorted({_utf8_id(rng, 40) for _ in range(6 * n_docs)})
    pool = np.array(pool, dtype=object)
    q_ids, d_ids, s_all, qr = [], [], [], []
    for q in range(n_queries):
        docs = list(pool[rng.choice(len(pool), size=n_docs, replace=False)])
        if q % 7 == 0:  # the longest ids of a chunk: 64 bytes, in the run only
            docs[int(rng.integers(0, n_docs))] = "L" * 60 + f"{q:04d}"
        if scores == "rank":
            s = 1e9 - np.arange(1, n_docs + 1, dtype=np.float64)  # all tie in float32
        else:  # 9-10 significant digits around one value: many float32 ties
            s = np.round(0.7 + rng.integers(0, 40, n_docs) * 1e-9, 10)
        q_ids += [f"q{q}"] * n_docs
        d_ids += docs
        s_all.append(s)
        for d in dict.fromkeys(rng.choice(docs, size=int(rng.integers(1, 8))).tolist()):
            qr.append((f"q{q}", d, int(rng.integers(0, 3))))
        qr.append((f"q{q}", "Q" * 62 + "é"[: q % 2], 1))  # longest qrels ids, never retrieved
    run = pd.DataFrame({"query_id": q_ids, "doc_id": d_ids, "score": np.concatenate(s_all)})
    qrels = pd.DataFrame(qr, columns=["query_id", "doc_id", "relevance"])
    for frame in (run, qrels):
        for c in ("query_id", "doc_id"):
            frame[c] = frame[c].astype("str")
    return run.sample(frac=1.0, random_state=seed).reset_index(drop=True), qrels


def _assert_exact(got: pd.DataFrame, run: pd.DataFrame, qrels: pd.DataFrame) -> None:
    import pytrec_eval

    run_d, qrels_d = pytrec_dicts(run, qrels)
    measures = {"success.1,5", "recall.5,20", "P.5,10", "ndcg_cut.3,10", "ndcg", "recip_rank",
                "map", "map_cut.10,100", "Rprec"}  # fmt: skip
    ref = pytrec_eval.RelevanceEvaluator(qrels_d, measures).evaluate(run_d)
    got = got.set_index("query_id")
    for metric in METRICS:
        key = PYTREC_NAMES[metric] if metric in PYTREC_NAMES else _extra(metric)
        expected = np.array([ref[q][key] for q in ref])
        values = got.loc[list(ref), metric].to_numpy()
        assert np.array_equal(values, expected), metric  # difference 0, query by query


def _extra(metric: str) -> str:
    return {"hit@5": "success_5", "recall@5": "recall_5", "ndcg@3": "ndcg_cut_3"}[metric]


@pytest.mark.parametrize("scores", ["near", "rank"])
@pytest.mark.parametrize("chunk", [1 << 20, 50])
def test_utf8_ids_and_near_equal_scores_equal_pytrec_eval(
    scores: str, chunk: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(rk, "CHUNK", chunk)  # 50: a doc dictionary per few queries
    run, qrels = _collection(7 if scores == "near" else 8, 120, 30, scores)
    lengths = run["doc_id"].str.encode("utf-8").str.len()
    assert lengths.min() == 1
    assert lengths.max() == 64
    assert qrels["doc_id"].str.encode("utf-8").str.len().max() == 64  # 62 + 'é' (2 bytes)
    got = evaluate(run, qrels, METRICS)
    _assert_exact(got, run, qrels)
    # float64 ranking would differ: the scores really tie in float32 only
    s = run["score"].to_numpy()
    assert len(np.unique(s)) > len(np.unique(s.astype(np.float32)))


def test_float32_ties_break_by_doc_id_and_bound_the_metrics() -> None:
    # 1e9 - 1 and 1e9 - 2 are equal in float32: trec_eval puts doc "b" before "a"
    run = pd.DataFrame({"query_id": ["q", "q"], "doc_id": ["a", "b"], "score": [1e9 - 1, 1e9 - 2]})
    qrels = pd.DataFrame({"query_id": ["q"], "doc_id": ["a"], "relevance": [1]})
    got = evaluate(run, qrels, ["hit@1", "mrr"], diagnostics=True).iloc[0]
    assert got["hit@1"] == 0.0
    assert got["mrr"] == 0.5
    assert (got["hit@1_min"], got["hit@1_max"]) == (0.0, 1.0)
    assert bool(got["tie_sensitive"])
    stable = evaluate(run, qrels, ["hit@1", "mrr"], ties="stable", diagnostics=True).iloc[0]
    assert stable["hit@1"] == 1.0  # file order, float64 scores differ: no tie
    assert (stable["hit@1_min"], stable["hit@1_max"]) == (1.0, 1.0)


def test_more_than_a_million_lines_in_arrow_chunks_equal_pytrec_eval() -> None:
    # 1.1M lines, Arrow chunks of 2^17 rows with different longest ids per chunk, two doc
    # dictionaries (CHUNK = 2^20 rows of whole queries)
    rng = np.random.default_rng(5)
    n_q, n_d = 11_000, 100
    pool = np.array([f"d{i}" for i in range(50_000)] + ["x" * 64], dtype=object)
    doc_idx = (rng.integers(0, 50_000, n_q)[:, None] + np.arange(n_d) * 101) % 50_000
    docs = pool[doc_idx.ravel()]
    docs[::9973] = pool[-1]  # the 64-byte id in some chunks only
    q = np.repeat(np.array([f"q{i}" for i in range(n_q)], dtype=object), n_d)
    s = np.tile(1e9 - np.arange(n_d, dtype=np.float64), n_q)  # float32 ties everywhere
    judged = rng.random(n_q * n_d) < 0.02
    qrels = pd.DataFrame({"query_id": q[judged], "doc_id": docs[judged], "relevance": 1})
    qrels = pd.concat([qrels, pd.DataFrame({"query_id": ["q1"], "doc_id": ["y" * 64],
                                            "relevance": [1]})], ignore_index=True)  # fmt: skip
    step = 1 << 17
    ids_q = pa.chunked_array(
        [pa.array(q[i : i + step], pa.string()) for i in range(0, len(q), step)]
    )
    ids_d = pa.chunked_array(
        [pa.array(docs[i : i + step], pa.string()) for i in range(0, len(q), step)]
    )
    names = ["hit@1", "recall@20", "mrr", "ndcg@10", "map"]
    query_ids, columns, _, _ = evaluate_arrays(ids_q, ids_d, s, qrels, names)
    import pytrec_eval

    run_d: dict[str, dict[str, float]] = {}
    for qi, di, si in zip(q, docs, s, strict=True):
        run_d.setdefault(qi, {}).setdefault(di, si)
    qrels_d: dict[str, dict[str, int]] = {}
    for qi, di in zip(qrels["query_id"], qrels["doc_id"], strict=True):
        qrels_d.setdefault(qi, {})[di] = 1
    keys = {"hit@1": "success_1", "recall@20": "recall_20", "mrr": "recip_rank",
            "ndcg@10": "ndcg_cut_10", "map": "map"}  # fmt: skip
    measures = {"success.1", "recall.20", "recip_rank", "ndcg_cut.10", "map"}
    ref = pytrec_eval.RelevanceEvaluator(qrels_d, measures).evaluate(run_d)
    order = {x: i for i, x in enumerate(query_ids.to_pylist())}
    rows = np.array([order[x] for x in ref])
    for name in names:
        expected = np.array([ref[x][keys[name]] for x in ref])
        assert np.array_equal(columns[name][rows], expected), name


@pytest.mark.parametrize("scores", ["near", "rank", "huge"])
def test_command_line_reads_scores_as_trec_eval_does(scores: str, tmp_path) -> None:
    # the command line rounds scores to float32 while reading (no float64 copy) when they fit;
    # beyond float32's range it keeps float64 and the core rounds them (to +-inf) after the
    # finiteness check. Both give the library's numbers on the float64 table.
    from analysis.cli import main

    run, qrels = _collection(11, 60, 25, "rank" if scores == "rank" else "near")
    if scores == "huge":  # two scores beyond float32's range: +inf in float32, a tie
        run.loc[run.index[:2], "score"] = [1e39, 2e39]
        run.loc[run.index[:2], "query_id"] = "q3"
    run_path, qrels_path, out = tmp_path / "run.txt", tmp_path / "qrels.txt", tmp_path / "o.csv"
    lines = [f"{q} Q0 {d} {i + 1} {s!r} t" for i, (q, d, s) in enumerate(run.itertuples(False))]
    run_path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    qrels_path.write_text(
        "".join(f"{q} 0 {d} {r}\n" for q, d, r in qrels.itertuples(index=False)), encoding="utf-8"
    )
    assert main(["evaluate", "--run", str(run_path), "--qrels", str(qrels_path),
                 "--metrics", ",".join(METRICS), "--out", str(out)]) == 0  # fmt: skip
    got = pd.read_csv(out, dtype={"query_id": str}).set_index("query_id")
    want = evaluate(run, qrels, METRICS).set_index("query_id")
    assert np.array_equal(got.loc[want.index, METRICS].to_numpy(), want[METRICS].to_numpy())
    if scores != "huge":
        _assert_exact(got.reset_index(), run, qrels)
