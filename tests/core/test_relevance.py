"""The relevance threshold everywhere (twin-aware metrics too) and integer relevance only."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from analysis.core.errors import InputError
from analysis.core.metrics import evaluate
from analysis.io import load_qrels
from analysis.stats.perquery import per_query_table


def _spatial() -> tuple[pd.DataFrame, ...]:
    queries = pd.DataFrame({"query_id": ["q"], "text": ["cafe"], "lat": [30.0], "lon": [120.0]})
    entities = pd.DataFrame(
        {
            "doc_id": ["a", "b", "c"],
            "name": ["cafe", "cafe", "bank"],
            "text": ["cafe", "cafe", "bank"],
            "lat": [30.001, 30.001, 30.01],
            "lon": [120.0, 120.0, 120.01],
        }
    )
    run = pd.DataFrame({"query_id": ["q", "q"], "doc_id": ["b", "c"], "score": [2.0, 1.0]})
    qrels = pd.DataFrame({"query_id": ["q", "q"], "doc_id": ["a", "c"], "relevance": [1, 2]})
    return queries, entities, run, qrels


def test_twin_aware_metrics_honour_the_relevance_threshold() -> None:
    queries, entities, run, qrels = _spatial()
    tables = {}
    for threshold in (1, 2):
        table, _ = per_query_table(
            queries, qrels, {"m": run}, dataset="d", metrics=["recall@10"],
            relevance_threshold=threshold, entities=entities,
        )  # fmt: skip
        tables[threshold] = table.iloc[0]
    # b is a twin of the gold a (relevance 1): it counts at threshold 1, not at threshold 2
    assert tables[1]["twin_recall@10"] == 1.0
    assert tables[2]["twin_recall@10"] == 1.0  # only c (relevance 2) is relevant, and retrieved
    assert tables[1]["recall@10"] == 0.5
    assert tables[2]["recall@10"] == 1.0
    qrels_low = qrels.assign(relevance=[2, 1])  # now the twin's gold a is the relevant one
    table, _ = per_query_table(
        queries, qrels_low, {"m": run}, dataset="d", metrics=["recall@10"],
        relevance_threshold=2, entities=entities,
    )  # fmt: skip
    assert table.iloc[0]["twin_recall@10"] == 1.0
    assert table.iloc[0]["recall@10"] == 0.0
    qrels_none = qrels.assign(relevance=[1, 1])
    table, _ = per_query_table(
        queries, qrels_none, {"m": run}, dataset="d", metrics=["recall@10"],
        relevance_threshold=2, entities=entities,
    )  # fmt: skip
    assert table.iloc[0]["twin_recall@10"] == 0.0  # nothing reaches relevance 2


def test_non_integer_relevance_is_an_error_naming_the_row_or_line(tmp_path: Path) -> None:
    run = pd.DataFrame({"query_id": ["q"], "doc_id": ["a"], "score": [1.0]})
    qrels = pd.DataFrame({"query_id": ["q", "q"], "doc_id": ["a", "b"], "relevance": [1, 0.5]})
    with pytest.raises(InputError, match=r"relevance 0.5 of row 2 is not an integer"):
        evaluate(run, qrels, ["hit@1"])
    table = tmp_path / "qrels.csv"
    table.write_text("query_id,doc_id,relevance\nq,a,1\nq,b,0.5\n")
    with pytest.raises(InputError, match=r"qrels.csv:3: relevance 0.5 is not an integer"):
        load_qrels(table)
