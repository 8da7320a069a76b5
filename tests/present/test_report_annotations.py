"""The report's "Annotations" section: tags and the strict vs amended metrics of the bundle's
notes database, beside (never instead of) the strict numbers; left out without a database,
which the report never creates."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from analysis.core.metrics import evaluate, rank_run
from analysis.io.amended import amended_qrels
from analysis.io.annotations import NOTES_ENV, AnnotationStore, database_path
from analysis.io.bundle import load_dataset, load_model_run, read_manifest
from analysis.present.report import bundle_content, render_html

DEMO = Path(__file__).resolve().parents[2] / "data" / "demo"
DATASET, MODEL, QUERY = "stark-mag", "bm25", "5"


def _sections(content) -> dict:
    return {s.key: s for s in content.sections}


def test_no_notes_database_no_section_and_nothing_created(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(NOTES_ENV, str(tmp_path / "notes"))
    content = bundle_content(DEMO, datasets=[DATASET])
    assert "annotations" not in _sections(content)
    assert not (tmp_path / "notes").exists()


def test_tags_and_amended_metrics_beside_the_strict_ones(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    notes = tmp_path / "notes"
    monkeypatch.setenv(NOTES_ENV, str(notes))
    spec = read_manifest(DEMO).datasets[DATASET]
    ds = load_dataset(spec)
    run = load_model_run(spec, MODEL)
    top = rank_run(run).query("query_id == @QUERY").iloc[0]["doc_id"]
    gold = set(ds.qrels.loc[ds.qrels["query_id"] == QUERY, "doc_id"])
    relevance = 0 if top in gold else 1  # the judgement changes hit@1 of this query
    store = AnnotationStore(database_path(DEMO, notes))
    store.add_tag(DATASET, QUERY, "label error", author="Ann <b>")
    store.add_tag(DATASET, "7", "label error", author="Bo")
    store.set_judgement(DATASET, QUERY, top, relevance, author="Ann <b>")

    content = bundle_content(DEMO, datasets=[DATASET])
    section = _sections(content)["annotations"]
    tags = next(b for b in section.blocks if b.title == f"Tags on {DATASET}").table
    assert tags.to_dict("records") == [
        {"tag": "label error", "queries": 2, "authors": "Ann <b>, Bo"}
    ]
    title = f"Strict and amended metrics on {DATASET}"
    amended = next(b for b in section.blocks if b.title == title).table
    row = amended.query("model == @MODEL and metric == 'hit@1'").iloc[0]
    strict = evaluate(run, ds.qrels, ["hit@1"])["hit@1"].mean()
    new = evaluate(run, amended_qrels(ds.qrels, store.judgements(DATASET)), ["hit@1"])
    assert row["strict"] == pytest.approx(strict)
    assert row["amended"] == pytest.approx(new["hit@1"].mean())
    assert row["queries_changed"] == 1
    assert np.sign(row["delta"]) == (1 if relevance else -1)
    # the strict leaderboard is unchanged by the judgement
    board = content.numbers["leaderboard"]
    hit = board.query("model == @MODEL and metric == 'hit@1'")
    assert hit["mean"].tolist() == [pytest.approx(strict)]
    page = render_html(content)
    assert "Ann &lt;b&gt;, Bo" in page
    assert "Ann <b>" not in page


def test_each_datasets_blocks_name_their_dataset(tmp_path: Path) -> None:
    """With notes on two datasets the report showed two tables titled "Tags" (and two "Notes"
    lists) with nothing saying which dataset each is of; each title now names its dataset."""
    import pandas as pd

    from analysis.present.report.annotations import annotation_blocks, annotations_section

    store = AnnotationStore(tmp_path / "notes.sqlite")
    store.add_tag("web", "q1", "label error", author="Ann")
    store.add_tag("news", "q2", "ambiguous", author="Bo")
    qrels = pd.DataFrame(columns=["query_id", "doc_id", "relevance"])
    found = {
        name: annotation_blocks(store, name, {}, qrels, ["hit@1"], index=i)
        for i, name in enumerate(("web", "news"))
    }
    section = annotations_section(found, ["web", "news"])
    assert [b.title for b in section.blocks] == ["Tags on web", "Tags on news"]
