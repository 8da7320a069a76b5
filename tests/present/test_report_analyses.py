"""The failure taxonomy and complementarity in the report: the "Beyond the averages" section of
the HTML report (every dataset, escaped) and its slide when the deck's budget has room."""

from __future__ import annotations

import html
from pathlib import Path

import pandas as pd
import pytest

from analysis.core.metrics import rank_run
from analysis.io.bundle import load_dataset, load_model_run, read_manifest
from analysis.present.analyses_report import analyses_parts
from analysis.present.report import (
    ReportSources,
    build_content,
    build_deck,
    render_html,
)
from analysis.present.report.deck import MAX_SLIDES
from analysis.stats.perquery import per_query_table

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def demo_prime():
    spec = read_manifest(ROOT / "data" / "demo").datasets["stark-prime"]
    ds = load_dataset(spec)
    runs = {m: load_model_run(spec, m) for m in spec.runs}
    table, _ = per_query_table(ds.queries, ds.qrels, runs, dataset=spec.name, headline=spec.metrics)
    ranked = {m: rank_run(r) for m, r in runs.items()}
    return spec, ds, table, ranked


def test_report_has_the_analyses_section_with_the_parts_of_each_dataset(demo_prime) -> None:
    spec, ds, table, ranked = demo_prime
    models = list(dict.fromkeys(table["model"]))
    content = build_content(
        table,
        headline={spec.name: list(spec.metrics)},
        model_a=models[0],
        model_b=models[1],
        sources=ReportSources(dataset=lambda name: ds, ranked=lambda name, model: ranked[model]),
    )
    section = next(s for s in content.sections if s.key == "analyses")
    assert section.title == "Beyond the averages"
    metric = content.metrics[spec.name]
    expected = analyses_parts(
        spec.name, table, ranked, ds.qrels, ds.entities, ds.edges, metric=metric, k=1
    )
    assert [b.title for b in section.blocks] == [p.title for p in expected]
    for block, part in zip(section.blocks, expected, strict=True):
        assert block.dataset == spec.name
        if part.table is not None:
            pd.testing.assert_frame_equal(block.table, part.table)
        else:
            assert block.kind == "figure"
    page = render_html(content)
    assert 'id="analyses"' in page
    for part in expected:
        assert html.escape(part.title) in page
    # the taxonomy counts every query of every model
    tax = section.blocks[0].table
    assert (tax["queries"] == table["query_id"].nunique()).all()


def test_without_loaders_the_section_is_left_out(demo_prime) -> None:
    spec, _, table, _ = demo_prime
    models = list(dict.fromkeys(table["model"]))
    content = build_content(
        table, headline={spec.name: list(spec.metrics)}, model_a=models[0], model_b=models[1]
    )
    assert "analyses" not in [s.key for s in content.sections]
    assert all(s.key != "beyond" for s in build_deck(content))


def test_demo_report_and_deck_carry_the_analyses(demo_content) -> None:
    content = demo_content
    section = next(s for s in content.sections if s.key == "analyses")
    assert {b.dataset for b in section.blocks} == set(content.datasets)
    deck = build_deck(content)
    assert len(deck) <= MAX_SLIDES
    beyond = next(s for s in deck if s.key == "beyond")
    assert list(beyond.table["dataset"]) == list(content.datasets)
    for name, row in zip(content.datasets, beyond.table.to_dict("records"), strict=True):
        oracle = next(p for p in content.analyses[name] if p.key.startswith("oracle-"))
        assert row["oracle"] == f"{float(oracle.table.iloc[0]['oracle']):.3f}"
    # the slide budget: with a budget that is already full the slide is left out
    assert all(s.key != "beyond" for s in build_deck(content, max_slides=6))
