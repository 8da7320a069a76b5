"""Tests for the private kernels in analysis.core.ranking (grouping, ties, orders, duplicates,
chunked paths)."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from analysis.core import ranking as rk
from analysis.core.metrics import evaluate, evaluate_arrays, evaluate_run
from tests.helpers import ALL_METRICS, assert_matches_pytrec, presorted, random_collection


def _ids(values: list[str]) -> pa.Array:
    return pa.array(values, pa.string())


def test_group_starts_and_positions() -> None:
    groups = np.array([0, 0, 0, 1, 2, 2, 5])
    starts, sizes = rk.group_starts(groups)
    assert starts.tolist() == [0, 3, 4, 6]
    assert sizes.tolist() == [3, 1, 2, 1]
    assert rk.positions(groups).tolist() == [1, 2, 3, 1, 1, 2, 1]
    empty_starts, empty_sizes = rk.group_starts(np.zeros(0, dtype=np.int64))
    assert len(empty_starts) == len(empty_sizes) == 0
    assert rk.positions(np.zeros(0, dtype=np.int64)).tolist() == []


def test_tie_blocks() -> None:
    codes = np.array([0, 0, 0, 0, 1, 1, 1, 2])
    scores = np.array([3.0, 2.0, 2.0, 1.0, 1.0, 1.0, 1.0, 1.0])
    ties = rk.tie_blocks(codes, scores)
    assert ties is not None
    assert ties.rows.tolist() == [1, 2, 4, 5, 6]
    assert ties.block.tolist() == [0, 0, 1, 1, 1]
    # equal scores in different queries are not a tie
    assert rk.tie_blocks(np.array([0, 1]), np.array([1.0, 1.0])) is None
    assert rk.tie_blocks(np.array([0]), np.array([1.0])) is None
    # two separate ties in one query
    ties = rk.tie_blocks(np.zeros(5, dtype=int), np.array([2.0, 2.0, 1.0, 0.0, 0.0]))
    assert ties is not None
    assert ties.rows.tolist() == [0, 1, 3, 4]
    assert ties.block.tolist() == [0, 0, 1, 1]


def test_order_source() -> None:
    assert rk.Order(perm=np.array([2, 0, 1])).source(np.array([0, 2])).tolist() == [2, 1]
    assert rk.Order().source(np.array([0, 1, 2])).tolist() == [0, 1, 2]
    moved = rk.Order(None, moved=np.array([3, 4]), moved_src=np.array([4, 3]))
    assert moved.source(np.arange(6)).tolist() == [0, 1, 2, 4, 3, 5]
    assert moved.source(np.array([5, 4])).tolist() == [5, 3]
    assert moved.source(np.zeros(0, dtype=np.int64)).tolist() == []


def test_order_run_sort_path_and_tie_policy() -> None:
    codes = np.array([0, 1, 0, 1, 0])
    scores = np.array([1.0, 5.0, 2.0, 5.0, 1.0])
    docs = _ids(["a", "x", "b", "y", "c"])
    stable = rk.order_run(codes, scores, docs, "stable")
    assert stable.source(np.arange(5)).tolist() == [2, 0, 4, 1, 3]
    trec = rk.order_run(codes, scores, docs, "trec_eval")
    assert trec.perm is not None
    # query 0: b (2.0), then c > a; query 1: y > x
    assert trec.source(np.arange(5)).tolist() == [2, 4, 0, 3, 1]


def test_order_run_presorted_moves_only_tied_rows() -> None:
    codes = np.array([0, 0, 0, 0, 1, 1])
    scores = np.array([3.0, 2.0, 2.0, 2.0, 1.0, 1.0])
    docs = _ids(["z", "a", "c", "b", "p", "q"])
    order = rk.order_run(codes, scores, docs, "trec_eval")
    assert order.perm is None
    assert order.moved is not None
    assert order.source(np.arange(6)).tolist() == [0, 2, 3, 1, 5, 4]
    assert rk.order_run(codes, scores, docs, "stable") == rk.Order()
    no_ties = rk.order_run(
        np.array([0, 0, 1]), np.array([2.0, 1.0, 1.0]), _ids(["a", "b", "c"]), "trec_eval"
    )
    assert no_ties == rk.Order(found_ties=True)  # looked for ties, found none, moves nothing


def test_order_run_treats_a_query_seen_again_as_unsorted() -> None:
    # query 0 reappears after query 1: not grouped, so the file must be sorted
    order = rk.order_run(
        np.array([0, 1, 0]), np.array([3.0, 2.0, 1.0]), _ids(["a", "b", "c"]), "stable"
    )
    assert order.perm is not None
    assert order.source(np.arange(3)).tolist() == [0, 2, 1]


def test_encode_numbers_ids_by_first_appearance() -> None:
    codes, dictionary = rk.encode(_ids(["b", "a", "b", "c"]))
    assert codes.tolist() == [0, 1, 0, 2]
    assert dictionary.to_pylist() == ["b", "a", "c"]
    chunked = pa.chunked_array([["b", "a"], ["b", "c"]])
    codes, dictionary = rk.encode(chunked)
    assert codes.tolist() == [0, 1, 0, 2]
    assert dictionary.to_pylist() == ["b", "a", "c"]
    codes, dictionary = rk.encode(pa.chunked_array([], pa.string()))
    assert len(codes) == 0
    assert len(dictionary) == 0


def test_as_string_array_keeps_strings() -> None:
    arr = rk.as_string_array(pd.Series(["007", "7"], dtype="str"))
    assert arr.to_pylist() == ["007", "7"]
    assert rk.as_string_array(pd.Series([7, 8])).to_pylist() == ["7", "8"]


def _dups(groups: list[int], docs: list[str]) -> list[int]:
    g = np.array(groups)
    ids = _ids(docs)
    return rk.duplicate_rows(g, rk.doc_codes(g, ids, rk.Order())).tolist()


def test_duplicate_rows_grid_branch() -> None:
    groups = [0, 0, 0, 1, 1, 2, 2, 2, 2]
    docs = ["a", "b", "a", "a", "b", "c", "c", "d", "c"]
    assert _dups(groups, docs) == [2, 6, 8]
    assert _dups([0], ["a"]) == []
    assert _dups([0, 1], ["a", "a"]) == []  # same doc in different queries


def test_duplicate_rows_grid_branch_block_by_block(monkeypatch: pytest.MonkeyPatch) -> None:
    # equal-size groups are checked a block of about CHUNK rows at a time: duplicates in the
    # first, a middle and the last block are all found
    monkeypatch.setattr(rk, "CHUNK", 7)  # 2 groups of 3 rows per block
    groups = np.repeat(np.arange(9), 3).tolist()
    docs = [f"d{i}" for i in range(27)]
    docs[2], docs[13], docs[26] = docs[1], docs[12], docs[24]
    assert _dups(groups, docs) == [2, 13, 26]


def test_duplicate_rows_non_grid_branch_with_uneven_groups() -> None:
    # one group of 5000 rows and 1000 single-row groups: the padded grid would be 1001 x 5000,
    # so the kernel takes the one-sort branch
    big = [f"d{i}" for i in range(5000)]
    big[4000] = "d17"
    big[4999] = "d4998"
    groups = [0] * 5000 + list(range(1, 1001))
    docs = big + ["d17"] * 1000
    assert _dups(groups, docs) == [4000, 4999]


def test_duplicate_rows_follow_the_order() -> None:
    # ranked row i holds the file row order.source(i); duplicates are reported in ranked rows
    ids = _ids(["a", "b", "a"])
    order = rk.Order(perm=np.array([2, 1, 0]))
    groups = np.zeros(3, dtype=int)
    assert rk.duplicate_rows(groups, rk.doc_codes(groups, ids, order)).tolist() == [2]


def test_duplicate_rows_of_ids_of_any_length_across_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(rk, "CHUNK", 3)  # a dictionary per chunk of whole queries
    long = "x" * 63 + "é"
    ids = pa.chunked_array([_ids(["a", long, "a"]), _ids(["b", "b" * 9, "b", long, long])])
    groups = np.array([0, 0, 0, 1, 1, 1, 2, 2])
    codes = rk.doc_codes(groups, ids, rk.Order())
    assert len(codes.sizes) > 1
    assert rk.duplicate_rows(groups, codes).tolist() == [2, 5, 7]


def test_chunk_bounds_never_split_a_group(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(rk, "CHUNK", 7)
    groups = np.repeat(np.arange(6), [3, 5, 1, 9, 2, 4])
    starts, _ = rk.group_starts(groups)
    bounds = rk._chunk_bounds(starts, len(groups))
    assert bounds[0][0] == 0
    assert bounds[-1][1] == len(groups)
    assert all(a[1] == b[0] for a, b in itertools.pairwise(bounds))
    assert all(lo in set(starts.tolist()) for lo, _ in bounds)
    assert len(bounds) > 2


def test_lookup_pairs() -> None:
    run_docs = _ids(["a", "b", "c", "a"])
    qrels_docs = _ids(["c", "a", "zz"])
    groups = np.array([0, 0, 0, 1])
    qrels_query = np.array([0, 1, -1])
    codes = rk.doc_codes(groups, run_docs, rk.Order(), qrels_query, qrels_docs)
    rows, qrows = rk.lookup_pairs(groups, codes, qrels_query)
    assert rows.tolist() == [2, 3]
    assert qrows.tolist() == [0, 1]


@pytest.mark.parametrize("regime", ["ties", "graded"])
def test_chunked_paths_equal_pytrec_eval(regime: str, monkeypatch: pytest.MonkeyPatch) -> None:
    run, qrels = random_collection(21, regime, n_queries=60, n_docs=30, long_ids=True)
    run = pd.concat([run, run.iloc[::13].assign(score=-5.0)], ignore_index=True)  # duplicates
    expected = evaluate(run, qrels, ALL_METRICS, diagnostics=True)
    monkeypatch.setattr(rk, "CHUNK", 7)
    dedup = run.groupby(["query_id", "doc_id"], as_index=False, sort=False)["score"].max()
    for frame in (run, presorted(run)):
        got = evaluate(frame, qrels, ALL_METRICS, diagnostics=True)
        pd.testing.assert_frame_equal(got, expected)
        assert_matches_pytrec(got, dedup, qrels)


def test_take_from_chunked_ids_matches_a_plain_take():
    rng = np.random.default_rng(3)
    values = [f"d{i:04d}" for i in range(200)]
    chunked = pa.chunked_array([pa.array(values[i : i + 37]) for i in range(0, 200, 37)])
    rows = rng.integers(0, 200, 500)
    assert rk.take(chunked, rows).to_pylist() == [values[i] for i in rows]
    assert rk.take(chunked, np.zeros(0, dtype=np.int64)).to_pylist() == []


def test_evaluate_arrays_on_chunked_ids_equals_the_dataframe_path():
    rng = np.random.default_rng(4)
    n_q, n_d = 40, 30
    q = np.repeat([f"q{i}" for i in range(n_q)], n_d)
    d = np.array([f"doc-{x:06d}" for x in rng.integers(0, 400, n_q * n_d)])
    s = rng.integers(0, 6, n_q * n_d).astype(float)  # ties, and duplicate docs
    run = pd.DataFrame({"query_id": q, "doc_id": d, "score": s})
    qrels = pd.DataFrame(
        {"query_id": q[::7], "doc_id": d[::7], "relevance": rng.integers(0, 3, len(q[::7]))}
    )
    metrics = ["hit@1", "recall@10", "mrr", "ndcg@10"]
    expected = evaluate_run(run, qrels, metrics, diagnostics=True)
    step = 97  # chunk boundaries inside queries
    chunks = [slice(i, i + step) for i in range(0, len(q), step)]
    ids, columns, _, _ = evaluate_arrays(
        pa.chunked_array([pa.array(q[c]) for c in chunks]),
        pa.chunked_array([pa.array(d[c]) for c in chunks]),
        s,
        qrels,
        metrics,
        diagnostics=True,
    )
    assert ids.to_pylist() == expected.per_query["query_id"].tolist()
    for name, values in columns.items():
        np.testing.assert_array_equal(values, expected.per_query[name].to_numpy(), err_msg=name)


@pytest.mark.parametrize("dictionary_order", ["appearance", "reversed"])
def test_encode_dictionary_ids_in_any_dictionary_order(dictionary_order):
    ids = ["q2", "q2", "q1", "q3", "q1"]
    dictionary = ["q2", "q1", "q3"] if dictionary_order == "appearance" else ["q3", "q1", "q2"]
    index = [dictionary.index(x) for x in ids]
    arr = pa.chunked_array(
        [
            pa.DictionaryArray.from_arrays(pa.array(index[:3], pa.int32()), pa.array(dictionary)),
            pa.DictionaryArray.from_arrays(pa.array(index[3:], pa.int32()), pa.array(dictionary)),
        ]
    )
    codes, dictionary_out = rk.encode(arr)
    assert codes.tolist() == [0, 0, 1, 2, 1]  # numbered by first appearance
    assert dictionary_out.to_pylist() == ["q2", "q1", "q3"]


@pytest.mark.parametrize("width", [1, 8, 150])
def test_lookup_pairs_by_table_and_by_key_agree_with_a_merge(monkeypatch, width):
    # queries judged with up to `width` docs: at most MAX_QRELS_WIDTH (8) uses the padded table,
    # more uses the sorted pair keys; both must find exactly the pairs a merge finds
    rng = np.random.default_rng(width)
    n_q = 30
    run = pd.DataFrame(
        {
            "query_id": np.repeat([f"q{i}" for i in range(n_q)], 80),
            "doc_id": [f"d{x}" for x in rng.integers(0, 300, n_q * 80)],
            "score": rng.random(n_q * 80),
        }
    ).drop_duplicates(["query_id", "doc_id"])
    qrels = pd.DataFrame(
        {
            "query_id": np.repeat([f"q{i}" for i in range(n_q)], width),
            "doc_id": [f"d{x}" for x in rng.integers(0, 300, n_q * width)],
            "relevance": 1,
        }
    ).drop_duplicates(["query_id", "doc_id"])
    merged = run.merge(qrels, on=["query_id", "doc_id"])
    per_query = evaluate(run, qrels, ["recall@1000"])
    expected = merged.groupby("query_id").size() / qrels.groupby("query_id").size()
    got = per_query.set_index("query_id")["recall@1000"]
    np.testing.assert_allclose(got.loc[expected.index].to_numpy(), expected.fillna(0).to_numpy())


def test_to_numpy_and_from_numpy_round_trip_without_pandas_shim():
    values = np.array([3, -1, 7], dtype=np.int64)
    assert rk.to_numpy(rk.from_numpy(values)).tolist() == [3, -1, 7]
    flags = np.array([True, False, True, True, False, False, True, False, True])
    assert rk.to_numpy(rk.from_numpy(flags)).tolist() == flags.tolist()
    with_nulls = pa.array([1, None, 3], pa.int32())
    assert rk.to_numpy(with_nulls, fill=-1).tolist() == [1, -1, 3]
    with pytest.raises(ValueError, match="nulls"):
        rk.to_numpy(with_nulls)
    sliced = pa.array([0.5, 1.5, 2.5, 3.5]).slice(1, 2)
    assert rk.to_numpy(sliced).tolist() == [1.5, 2.5]


def test_duplicate_rows_of_equal_size_groups_use_one_reshape(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(rk, "DOC_CHUNK", 6)  # two queries per doc dictionary
    groups = np.repeat(np.arange(4), 3)
    docs = ["a", "b", "a", "x", "y", "z", "c", "c", "c", "a", "b", "c"]
    assert _dups(groups.tolist(), docs) == [2, 7, 8]
    assert _dups([0, 0, 1, 1], ["a", "b", "b", "a"]) == []


def test_score_order_is_the_lexsort_on_adversarial_float32_scores() -> None:
    """The packed-key sort gives ``np.lexsort((-scores, query_codes))`` exactly: signed zeros
    (equal, so file order), infinities, subnormals, float32's extremes, heavy ties; a NaN and
    float64 scores take the lexsort itself."""
    from analysis.core.ranking import _score_order

    rng = np.random.default_rng(1)
    special = np.array([0.0, -0.0, np.inf, -np.inf, 1e-45, -1e-45, 3.4028235e38,
                        -3.4028235e38, 1.0, -1.0, 0.5], dtype=np.float32)  # fmt: skip
    for trial in range(300):
        n = int(rng.integers(1, 400))
        queries = rng.integers(0, rng.integers(1, 20), n).astype(np.int32)
        if trial % 2:
            scores = rng.choice(special, n)
        else:
            scores = np.round(rng.normal(size=n), 1).astype(np.float32)
        expected = np.lexsort((-scores, queries))
        assert np.array_equal(_score_order(queries, scores), expected), trial
        assert np.array_equal(_score_order(queries, scores.astype(np.float64)), expected)
    with_nan = np.array([1.0, np.nan, 2.0], dtype=np.float32)
    queries = np.zeros(3, dtype=np.int32)
    assert np.array_equal(_score_order(queries, with_nan), np.lexsort((-with_nan, queries)))
