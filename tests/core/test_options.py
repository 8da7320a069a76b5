"""Keyword-options records: a function that takes its settings as ``**options`` typed by a
TypedDict still refuses a misspelt keyword, as Python does for a named parameter."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from analysis.core.inputs import qrels_arrays
from analysis.core.metrics import evaluate_arrays
from analysis.stats.perquery import per_query_table
from analysis.stats.slices import compare_slices, slice_finder


def _per_query() -> pd.DataFrame:
    rows = [
        {"dataset": "d", "query_id": f"q{i}", "model": m, "hit@1": float((i + j) % 2), "kind": k}
        for i, k in enumerate("aabb")
        for j, m in enumerate(("a", "b"))
    ]
    return pd.DataFrame(rows)


def test_a_misspelt_option_is_a_type_error() -> None:
    table = _per_query()
    with pytest.raises(TypeError, match="unexpected keyword argument 'n_resample'"):
        compare_slices(table, ["hit@1"], "a", "b", ["kind"], n_resample=10)
    with pytest.raises(TypeError, match="unexpected keyword argument 'minsize'"):
        slice_finder(table, "hit@1", "a", ["kind"], minsize=1)
    qrels = pd.DataFrame({"query_id": ["q"], "doc_id": ["x"], "relevance": [1]})
    ids = pa.array(["q"])
    with pytest.raises(TypeError, match="unexpected keyword argument 'tie'"):
        evaluate_arrays(ids, ids, np.array([1.0]), qrels_arrays(qrels), ["mrr"], tie="stable")
    run = pd.DataFrame({"query_id": ["q"], "doc_id": ["x"], "score": [1.0]})
    with pytest.raises(TypeError, match="unexpected keyword argument 'metric'"):
        per_query_table(qrels[["query_id"]], qrels, {"m": run}, dataset="d", metric=["mrr"])


def test_the_options_still_reach_the_computation() -> None:
    table = _per_query()
    few = compare_slices(table, ["hit@1"], "a", "b", ["kind"], n_resamples=50, min_size=3)
    assert few["slice"].tolist() == ["all"]  # the slices of 2 queries are below min_size
    both = compare_slices(table, ["hit@1"], "a", "b", ["kind"], n_resamples=50)
    assert both["slice"].tolist() == ["all", "kind", "kind"]
