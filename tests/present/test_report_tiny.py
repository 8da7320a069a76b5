"""Every report section on tiny datasets: 1 to 5 queries, lists of ragged lengths, query texts
of different lengths, one model, a model missing queries, no relevant document, no judged query
of the run. Each (shape, section) pair is a test: the section is there, holds at least one
block, and is drawn in the HTML report and the slide deck without an error."""

from __future__ import annotations

import functools
from pathlib import Path

import pytest

from analysis.present.report import bundle_content
from analysis.present.report.deck_html import render_deck
from analysis.present.report.document import render_html
from tests.bad_input.corpus import HERE

#: every section of the report (a section not listed here fails the test: add it)
SECTIONS = (
    "summary", "leaderboard", "slices", "compare", "worst-queries", "causes", "analyses", "metrics",
)  # fmt: skip


def _write(folder: Path, queries: str, qrels: str, runs: dict[str, str]) -> Path:
    (folder / "web" / "runs").mkdir(parents=True)
    (folder / "web" / "queries.csv").write_text(queries)
    (folder / "web" / "qrels.txt").write_text(qrels)
    for model, text in runs.items():
        (folder / "web" / "runs" / f"{model}.run").write_text(text)
    (folder / "bundle.toml").write_text(
        '[datasets.web]\nqueries = "web/queries.csv"\nqrels = "web/qrels.txt"\n'
    )
    return folder


def _unjudged(folder: Path) -> Path:
    """3 queries in the run, the qrels judge only a fourth one the run lacks."""
    return _write(
        folder,
        "query_id,text\nq1,a\nq2,bb bb\nq3,ccc ccc ccc\nq4,dddd\n",
        "q4 0 d4 1\n",
        {"bm25": "q1 Q0 d1 1 2.0 m\nq1 Q0 d2 2 1.0 m\nq2 Q0 d2 1 1.0 m\nq3 Q0 d3 1 1.0 m\n"},
    )


def _four_ragged_two_models(folder: Path) -> Path:
    """4 queries, lists of 1 to 4 documents, two models tied on every query but one."""
    run = "".join(f"q{i} Q0 d{j} {j} {5 - j}.0 m\n" for i in range(1, 5) for j in range(1, i + 1))
    other = run.replace("q4 Q0 d1 1 4.0", "q4 Q0 d1 1 0.5")
    return _write(
        folder,
        "query_id,text\n" + "".join(f"q{i},{'w' * i * 7}\n" for i in range(1, 5)),
        "".join(f"q{i} 0 d{i} 1\n" for i in range(1, 5)),
        {"bm25": run, "dense": other},
    )


MADE = {"unjudged": _unjudged, "four_ragged_two_models": _four_ragged_two_models}
SHAPES = (
    "two_queries_ragged",
    "one_query",
    "no_relevant",
    "model_missing_queries",
    *MADE,
)


@functools.cache
def _content(shape: str, folder: str):
    bundle = Path(folder) / shape
    if shape in MADE:
        if not bundle.exists():
            MADE[shape](bundle)
    else:
        bundle = HERE / "report" / shape
    content = bundle_content(bundle)
    return content, render_html(content), render_deck(content)


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> str:
    return str(tmp_path_factory.mktemp("tiny"))


@pytest.mark.parametrize("section", SECTIONS)
@pytest.mark.parametrize("shape", SHAPES)
def test_every_section_on_tiny_datasets(
    shape: str, section: str, folder: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RETRIEVAL_DASHBOARD_NOTES_DIR", str(Path(folder) / "notes"))
    content, page, deck = _content(shape, folder)
    found = {s.key: s for s in content.sections}
    assert set(found) <= set(SECTIONS), list(found)
    assert section in found, list(found)
    assert found[section].blocks, f"{section} is empty"
    assert f'<section id="{section}">' in page
    for block in found[section].blocks:
        assert f'id="block-{block.key}"' in page
    assert "<!DOCTYPE html>" in deck
