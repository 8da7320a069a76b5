"""The analyses report section: taxonomy and complementarity tables, escaped HTML."""

from __future__ import annotations

import pandas as pd

from analysis.core.metrics import rank_run
from analysis.io import load_run
from analysis.io.bundle import load_dataset, read_manifest
from analysis.present.analyses_report import analyses_html, analyses_parts
from analysis.stats.perquery import per_query_table
from analysis.stats.taxonomy import CATEGORIES, LOCATION
from tests.conftest import ROOT


def _hostile_dataset():
    evil = "<script>alert(1)</script>"
    runs = {
        evil: pd.DataFrame(
            {"query_id": ["1", "1", "2"], "doc_id": ["a", "b", "a"], "score": [2.0, 1.0, 1.0]}
        ),
        "m&m": pd.DataFrame({"query_id": ["1", "2"], "doc_id": ["b", "c"], "score": [1.0, 1.0]}),
    }
    qrels = pd.DataFrame({"query_id": ["1", "2"], "doc_id": ["a", "c"], "relevance": [1, 1]})
    queries = pd.DataFrame({"query_id": ["1", "2"], "text": ["x", "y"], "query_type": "t"})
    table, _ = per_query_table(queries, qrels, runs, dataset='d"<b>', metrics=["hit@1"])
    ranked = {m: rank_run(r) for m, r in runs.items()}
    return evil, table, ranked, qrels


def test_parts_count_every_query_and_html_escapes_data():
    evil, table, ranked, qrels = _hostile_dataset()
    parts = analyses_parts('d"<b>', table, ranked, qrels, metric="hit@1", k=1)
    tax = parts[0].table
    # a text-only dataset: no column for the spatial cause, which cannot occur on it
    assert list(tax.columns) == ["model", *[c for c in CATEGORIES if c != LOCATION], "queries"]
    assert tax["queries"].tolist() == [2, 2]
    assert tax.set_index("model").loc[evil, "hit"] == 1
    inter = parts[2].table
    assert inter["n"].sum() == 2
    assert parts[3].table.iloc[0]["oracle"] == 1.0  # each query solved by one of the two
    page = analyses_html(parts)
    assert "<script>alert(1)</script>" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert 'd"<b>' not in page
    assert all(p.key.replace("-", "").replace("_", "").isalnum() for p in parts)


def test_demo_dataset_section_has_tables_and_a_figure():
    spec = read_manifest(ROOT / "data" / "demo").datasets["stark-amazon"]
    ds = load_dataset(spec)
    runs = {m: load_run(p) for m, p in spec.runs.items()}
    table, _ = per_query_table(ds.queries, ds.qrels, runs, dataset=spec.name)
    ranked = {m: rank_run(r) for m, r in runs.items()}
    parts = analyses_parts(
        "stark-amazon", table, ranked, ds.qrels, ds.entities, ds.edges, by=["query_type"]
    )
    assert len(parts) == 5
    assert (parts[0].table["queries"] == 420).all()
    assert parts[1].figure is not None
    assert len(parts[1].figure.data) == 3  # one bar trace per model
    assert "query_type" in parts[4].table.columns
    page = analyses_html(parts)
    assert page.count("<table") == 4
    assert 'id="figure-taxonomy-figure-stark-amazon"' in page
