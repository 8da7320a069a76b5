"""AppTest: the Open data page lists a folder's files with their formats and first problems,
imports a known layout, writes a bundle from chosen files, and opens it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from analysis.io.bundle import load_dataset, read_manifest
from tests.app.conftest import no_exception, open_page

PAGE = "7_Open_data.py"
ROOTS_ENV = "RETRIEVAL_DASHBOARD_DATA_ROOTS"


@pytest.fixture
def root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A data root with a small STaRK-like folder and a generic folder with a broken run."""
    base = tmp_path / "roots"
    toy = base / "toy"
    (toy / "split").mkdir(parents=True)
    (toy / "runs" / "bm25").mkdir(parents=True)
    rows = "".join(f'{i},"query {i} {"word " * i}","[{i + 100}]"\n' for i in range(12))
    (toy / "stark_qa_human_generated_eval.csv").write_text("id,query,answer_ids\n" + rows)
    (toy / "runs" / "bm25" / "eval_results_human_generated_eval.csv").write_text(
        "idx,query_id,pred_rank\n"
        + "".join(f'{i},{i},"{json.dumps([i + 100, 7])}"\n' for i in range(12))
    )
    web = base / "web"
    web.mkdir()
    (web / "qrels.txt").write_text("q1 0 d1 1\nq2 0 d2 1\n")
    (web / "good.run").write_text("q1 Q0 d1 1 2.0 t\nq2 Q0 d9 1 1.0 t\nq2 Q0 d2 2 0.5 t\n")
    (web / "broken.run").write_text("q1 Q0 d1 1 nan t\n")
    monkeypatch.setenv(ROOTS_ENV, str(base))
    return base


def _files(at):
    found = [d.value for d in at.dataframe if list(d.value.columns)[:2] == ["file", "format"]]
    assert len(found) == 1
    return found[0].set_index("file")


def test_lists_formats_and_first_problems(root: Path) -> None:
    at = open_page(PAGE)
    no_exception(at)
    at.selectbox(key="od_folder").set_value("web").run()
    no_exception(at)
    files = _files(at)
    assert files.loc["qrels.txt", "format"] == "trec_qrels"
    assert files.loc["good.run", "roles"] == "run"
    assert files.loc["good.run", "rows"] == 3
    problem = files.loc["broken.run", "problem"]
    assert "broken.run:1:" in problem
    assert "score" in problem


def test_writes_a_bundle_from_chosen_files_and_opens_it(root: Path) -> None:
    at = open_page(PAGE)
    at.selectbox(key="od_folder").set_value("web").run()
    assert "broken.run" not in at.multiselect(key="od_runs:web").options
    at.multiselect(key="od_qrels:web").set_value(["qrels.txt"]).run()
    at.multiselect(key="od_runs:web").set_value(["good.run"]).run()
    at.button(key="od_write:web").click().run()
    no_exception(at)
    out = root / "_opened" / "web"
    spec = read_manifest(out).datasets["web"]
    assert list(spec.runs) == ["good"]
    assert len(load_dataset(spec).qrels) == 2
    assert sorted(p.name for p in (root / "web").iterdir()) == [
        "broken.run",
        "good.run",
        "qrels.txt",
    ]
    at.button(key="od_open").click().run()
    no_exception(at)
    assert at.session_state["_sel_bundle"] == "_opened/web"
    assert at.session_state["_sel_datasets"] == ["web"]


def test_imports_a_stark_folder_in_one_click(root: Path) -> None:
    at = open_page(PAGE)
    at.selectbox(key="od_folder").set_value("toy").run()
    no_exception(at)
    assert any(s.value == "Import as stark" for s in at.subheader)
    at.button(key="od_import:toy").click().run()
    no_exception(at)
    bundle = read_manifest(root / "_opened" / "toy")
    assert list(bundle.datasets) == ["toy-human"]
    assert list(bundle.datasets["toy-human"].runs) == ["bm25"]
    assert any("toy-human: 12 queries" in t.value for t in at.text)
