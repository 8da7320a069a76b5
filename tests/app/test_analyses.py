"""AppTest: the Analyses page (taxonomy, complementarity, disagreement, significance, amended
metrics) on the demo bundle, and the annotation panel's writes reaching the database."""

from __future__ import annotations

import pytest

from analysis.core.metrics import evaluate, rank_run
from analysis.io import load_run
from analysis.io.annotations import AnnotationStore, database_path, default_author
from analysis.io.bundle import load_dataset, read_manifest
from analysis.stats.coverage import judgement_coverage, suspected_missing_answers
from analysis.stats.taxonomy import CATEGORIES
from tests.app.conftest import ROOT, no_exception, open_page

PAGE = "6_Analyses.py"
#: every test reads the demo bundle (its notes in a folder of its own): they share Streamlit's
#: caches, as the sessions of one server do while the notes change
pytestmark = pytest.mark.usefixtures("shared_demo_root")


@pytest.fixture(autouse=True)
def notes(tmp_path, monkeypatch):
    monkeypatch.setenv("RETRIEVAL_DASHBOARD_NOTES_DIR", str(tmp_path / "notes"))
    return tmp_path / "notes"


def _frame(at, key: str):
    found = [d for d in at.dataframe if d.key == key]
    if not found:  # only selectable frames carry their key in AppTest: match by columns
        return None
    return found[0].value


def _by_columns(at, first: list[str]):
    found = [d.value for d in at.dataframe if list(d.value.columns)[: len(first)] == first]
    assert found, first
    return found[0]


TABS = ["Failure taxonomy", "Coverage", "Complementarity", "Disagreement A vs B", "Significance",
        "Amended"]  # fmt: skip


def _open_tab(at, name: str) -> None:
    """Open tab ``name`` (lazy tabs: its content is computed and drawn by the next run)."""
    at.query_params["tab"] = name
    at.run()
    no_exception(at)


def _labelled(elements, label: str):
    found = [e for e in elements if e.label == label]
    assert len(found) == 1, label
    return found[0]


def test_taxonomy_counts_add_up_and_list_queries():
    at = open_page(PAGE, datasets="stark-prime", a="bm25", b="bm25-kb-propagation")
    no_exception(at)
    counts = at.dataframe[0].value.set_index("model")
    causes = [c for c in CATEGORIES if c != "location-indistinguishable"]  # no coordinates
    assert list(counts.columns) == [*causes, "queries"]
    assert (counts[causes].sum(axis=1) == 420).all()  # every query in one category
    assert at.selectbox(key="w_dataset").value == "stark-prime"
    at.selectbox(key="tax_model").select("bm25").run()
    at.selectbox(key="cat").select("not retrieved").run()
    no_exception(at)
    listed = _by_columns(at, ["query_id", "text", "first_gold_rank"])
    assert len(listed) == counts.loc["bm25", "not retrieved"]
    at.selectbox(key="tax_by").select("query_type").run()
    no_exception(at)
    by_slice = at.dataframe[1].value
    assert list(by_slice.columns) == ["model", "query_type", *causes]
    assert by_slice[causes].to_numpy().sum() == len(counts) * 420  # every model's queries
    # a click on a count of one slice lists exactly those queries
    row = by_slice.index[(by_slice["model"] == "bm25") & (by_slice["not retrieved"] > 0)][0]
    value = by_slice.loc[row, "query_type"]
    cell = {"selection": {"rows": [], "columns": [], "cells": [[int(row), "not retrieved"]]}}
    at.session_state["taxonomy_by_slice"] = cell
    at.run()
    no_exception(at)
    in_slice = _by_columns(at, ["query_id", "text", "first_gold_rank"])
    assert len(in_slice) == by_slice.loc[row, "not retrieved"]
    assert set(in_slice["query_id"]) <= set(listed["query_id"])
    assert any(f"in query_type = {value}" in c.value.replace("\\", "") for c in at.caption)
    _labelled(at.button, "All slices").click().run()
    assert len(_by_columns(at, ["query_id", "text", "first_gold_rank"])) == len(listed)
    assert listed["first_gold_rank"].isna().all()
    assert listed["open"].str.startswith("Queries?").all()


def test_a_click_on_a_count_lists_its_queries():
    at = open_page(PAGE, datasets="stark-amazon", a="bm25")
    no_exception(at)
    counts = at.dataframe[0].value
    row = counts["model"].tolist().index("char-ngram-tfidf")
    for category in ("near miss", "hit"):
        cell = {"selection": {"rows": [], "columns": [], "cells": [[row, category]]}}
        at.session_state["taxonomy_counts"] = cell
        at.run()
        no_exception(at)
        assert at.selectbox(key="tax_model").value == "char-ngram-tfidf"
        assert at.selectbox(key="cat").value == category
        listed = _by_columns(at, ["query_id", "text", "first_gold_rank"])
        assert len(listed) == counts.loc[row, category]
        assert listed["open"].str.contains("a=char-ngram-tfidf").all()
    # the held selection does not undo a later choice in the boxes
    at.selectbox(key="cat").select("not retrieved").run()
    no_exception(at)
    assert at.selectbox(key="cat").value == "not retrieved"
    listed = _by_columns(at, ["query_id", "text", "first_gold_rank"])
    assert len(listed) == counts.loc[row, "not retrieved"]


def test_coverage_shows_judged_at_k_per_model_and_the_most_unjudged_queries(notes):
    at = open_page(PAGE, datasets="stark-mag", a="bm25", metric="hit@5", tab="Coverage")
    no_exception(at)
    spec = read_manifest(ROOT / "data" / "demo").datasets["stark-mag"]
    qrels = load_dataset(spec).qrels
    summary = _by_columns(at, ["model", "n", "judged@5", "unjudged@5"]).set_index("model")
    assert set(summary.index) == set(spec.runs)
    for model, path in spec.runs.items():
        want = judgement_coverage(rank_run(load_run(path)), qrels, k=5)
        want = want[want["n_top"] > 0]
        assert summary.loc[model, "judged@5"] == pytest.approx(want["judged@5"].mean())
        assert summary.loc[model, "unjudged@5"] == pytest.approx(want["unjudged@5"].mean())
        assert summary.loc[model, "queries_with_unjudged"] == (want["unjudged@5"] > 0).sum()
    at.selectbox(key="cov_model").select("bm25").run()
    worst = _by_columns(at, ["query_id", "text", "unjudged@5"])
    assert len(worst) == min(50, summary.loc["bm25", "queries_with_unjudged"])
    assert worst["unjudged@5"].is_monotonic_decreasing
    assert worst["open"].str.startswith("Queries?").all()
    assert worst["open"].str.contains("a=bm25").all()
    # a reviewer judges the unjudged top 5 of the worst query: it is judged now, qrels untouched
    qid = worst["query_id"].iloc[0]
    top = rank_run(load_run(spec.runs["bm25"]))
    top = top[(top["query_id"] == qid) & (top["rank"] <= 5)]
    store = AnnotationStore(database_path(ROOT / "data" / "demo", notes))
    gold = set(qrels.loc[qrels["query_id"] == qid, "doc_id"])
    for doc in top["doc_id"]:
        if doc not in gold:
            store.set_judgement("stark-mag", qid, doc, 0, author="tester")
    at.run()
    no_exception(at)
    after = _by_columns(at, ["model", "n", "judged@5", "unjudged@5"]).set_index("model")
    assert (
        after.loc["bm25", "unjudged_total"]
        == summary.loc["bm25", "unjudged_total"] - (worst["unjudged@5"].iloc[0])
    )
    assert qid not in set(_by_columns(at, ["query_id", "text", "unjudged@5"])["query_id"])


def test_suspected_missing_answers_are_listed_for_review_and_leave_when_judged(notes):
    at = open_page(PAGE, datasets="stark-amazon", a="bm25", metric="hit@5", tab="Coverage")
    no_exception(at)
    at.selectbox(key="cov_model").select("char-ngram-tfidf").run()
    no_exception(at)
    spec = read_manifest(ROOT / "data" / "demo").datasets["stark-amazon"]
    ds = load_dataset(spec)
    ranked = rank_run(load_run(spec.runs["char-ngram-tfidf"]))
    want = suspected_missing_answers(ranked, ds.qrels, ds.entities, ds.edges, k=5)
    assert len(want) > 0
    listed = _by_columns(at, ["query_id", "text", "doc_id", "rank", "type", "gold_id"])
    assert len(listed) == len(want)
    assert listed[["query_id", "doc_id"]].to_numpy().tolist() == (
        want[["query_id", "doc_id"]].to_numpy().tolist()
    )
    assert listed["open"].str.contains("a=char-ngram-tfidf").all()
    # a reviewer judges a suspect of a missed query relevant: it leaves the list, a new hit
    hits = evaluate(load_run(spec.runs["char-ngram-tfidf"]), ds.qrels, ["hit@5"])
    missed = set(hits.loc[hits["hit@5"] == 0, "query_id"])
    first = listed[listed["query_id"].isin(missed)].iloc[0]
    store = AnnotationStore(database_path(ROOT / "data" / "demo", notes))
    store.set_judgement("stark-amazon", first["query_id"], first["doc_id"], 1, author="t")
    at.run()
    no_exception(at)
    after = _by_columns(at, ["query_id", "text", "doc_id", "rank", "type", "gold_id"])
    pairs = set(map(tuple, after[["query_id", "doc_id"]].to_numpy().tolist()))
    assert (first["query_id"], first["doc_id"]) not in pairs
    _open_tab(at, "Amended")
    side = _by_columns(at, ["model", "metric", "strict", "amended"]).set_index(["model", "metric"])
    row = side.loc[("char-ngram-tfidf", "hit@5")]  # the doc is in its top 5: a new hit
    assert row["amended"] > row["strict"]
    assert row["queries_changed"] == 1


def test_complementarity_disagreement_and_significance_render():
    at = open_page(PAGE, datasets="beijing", a="bm25", b="char-ngram-tfidf", metric="recall")
    no_exception(at)
    _open_tab(at, "Complementarity")
    inter = _by_columns(at, ["models", "n_models", "n", "share"])
    assert inter["n"].sum() == 400
    oracle = _by_columns(at, ["dataset", "n"])
    assert oracle["oracle"].iloc[0] >= oracle["best_single"].iloc[0]
    at.select_slider(key="solved").set_value(0.5).run()
    no_exception(at)
    assert _by_columns(at, ["models", "n_models", "n", "share"])["n"].sum() == 400
    _open_tab(at, "Disagreement A vs B")
    diff = _by_columns(at, ["query_id", "jaccard@10", "rbo", "tau_ap"])
    assert diff["rbo"].is_monotonic_increasing
    _open_tab(at, "Significance")
    letters = _by_columns(at, ["letter", "model"])
    assert letters["letter"].tolist() == ["a", "b", "c"]
    pairs = _by_columns(at, ["dataset", "model_a", "model_b"])
    assert len(pairs) == 3
    models = letters["model"].tolist()
    matrices = [d.value for d in at.dataframe if list(d.value.columns) == models]
    assert len(matrices) == 2  # the deltas (row - column) and the Holm p-values
    delta, p_holm = matrices
    first = pairs.iloc[0]
    assert delta.loc[first["model_a"], first["model_b"]] == pytest.approx(first["delta"])
    assert delta.loc[first["model_b"], first["model_a"]] == pytest.approx(-first["delta"])
    assert p_holm.loc[first["model_b"], first["model_a"]] == pytest.approx(first["p_holm"])


def test_judgements_give_amended_metrics_beside_strict(notes):
    at = open_page(PAGE, datasets="geo-glue", a="bm25", tab="Amended")
    no_exception(at)
    assert not [d for d in at.dataframe if list(d.value.columns)[:2] == ["model", "metric"]]
    store = AnnotationStore(database_path(ROOT / "data" / "demo", notes))
    # a reviewer adds a gold document nobody retrieved to a query bm25 solves
    spec = read_manifest(ROOT / "data" / "demo").datasets["geo-glue"]
    strict = evaluate(load_run(spec.runs["bm25"]), load_dataset(spec).qrels, ["recall@10"])
    qid = strict.loc[strict["recall@10"] == 1, "query_id"].iloc[0]
    store.set_judgement("geo-glue", qid, "zz", 1, author="tester")
    store.add_tag("geo-glue", qid, "label error")
    at.run()
    no_exception(at)
    side = _by_columns(at, ["model", "metric", "strict", "amended"])
    assert set(side["model"]) == {"bm25", "char-ngram-tfidf", "bm25-distance-fusion"}
    # a judged doc nobody retrieved lowers recall for that query: amended <= strict
    row = side[(side["model"] == "bm25") & (side["metric"] == "recall@10")].iloc[0]
    assert row["amended"] < row["strict"]
    assert row["queries_changed"] == 1
    labels = [b.label for b in at.get("download_button")]
    assert labels == ["Amended qrels (TREC)", "Annotations (CSV)"]
    who = _by_columns(at, ["query_id", "doc_id", "relevance", "author"])
    assert who[["query_id", "doc_id", "author"]].to_numpy().tolist() == [[qid, "zz", "tester"]]
    people = _by_columns(at, ["author", "tags", "notes", "judgements"]).set_index("author")
    assert people.loc["tester", ["judgements", "changes"]].tolist() == [1, 1]
    assert people.loc["anonymous", ["tags", "changes"]].tolist() == [1, 1]


def test_annotation_panel_writes_tags_notes_and_judgements(notes):
    at = open_page(PAGE, datasets="stark-mag", a="bm25")
    no_exception(at)
    from streamlit.testing.v1 import AppTest

    script = f"""
import sys
sys.path.insert(0, {str(ROOT)!r})
import ui.state
from ui.annotations import annotation_panel
real = ui.state.navigation
ui.state.navigation = lambda *args, **kwargs: None  # page links need the app's page tree
try:
    sel = ui.state.sidebar()
finally:
    ui.state.navigation = real  # the module is shared with the other tests of the process
annotation_panel(sel, "stark-mag", "007", ["d1", "d2", "d3"])
"""
    panel = AppTest.from_string(script, default_timeout=60)
    panel.query_params["datasets"] = "stark-mag"
    panel.run()
    no_exception(panel)
    name = _labelled(panel.text_input, "Your name")
    assert name.value == default_author()  # RETRIEVAL_DASHBOARD_AUTHOR, else the OS user
    name.input("  Ann   Reviewer ").run()
    tags = panel.multiselect[0]
    assert "label error" in tags.options
    tags.select("label error").run()
    no_exception(panel)
    panel.text_area[0].input("gold looks wrong").run()
    _labelled(panel.button, "Save note").click().run()
    _labelled(panel.selectbox, "Document").select("d2").run()
    _labelled(panel.radio, "Judgement").set_value(0).run()
    _labelled(panel.button, "Save judgement").click().run()
    no_exception(panel)
    store = AnnotationStore(database_path(ROOT / "data" / "demo", notes))
    assert store.tags("stark-mag", "007")["tag"].tolist() == ["label error"]
    assert store.note("stark-mag", "007") == "gold looks wrong"
    judged = store.judgements("stark-mag", "007")
    assert dict(zip(judged["doc_id"], judged["relevance"], strict=True)) == {"d2": 0}
    # each write names the session's author, remembered over reruns; shown beside each row
    assert store.tags("stark-mag", "007")["author"].tolist() == ["Ann Reviewer"]
    assert store.notes("stark-mag", "007")["author"].tolist() == ["Ann Reviewer"]
    assert judged["author"].tolist() == ["Ann Reviewer"]
    assert _labelled(panel.text_input, "Your name").value == "Ann Reviewer"
    shown = _by_columns(panel, ["doc_id", "relevance", "author", "updated"])
    assert shown["author"].tolist() == ["Ann Reviewer"]
    assert shown["updated"].str.endswith("Z").all()
    captions = [c.value.replace("\\", "") for c in panel.caption]  # markdown escapes
    assert any(c.startswith("Saved by Ann Reviewer, ") for c in captions), captions
    assert any(c.startswith("label error: Ann Reviewer, ") for c in captions), captions
    history = _by_columns(panel, ["kind", "doc_id", "value", "author", "at"])
    assert history["kind"].tolist() == ["tag", "note", "judgement"]
    assert set(history["author"]) == {"Ann Reviewer"}
    # a fresh session (a reload) shows what is stored
    again = AppTest.from_string(script, default_timeout=60)
    again.query_params["datasets"] = "stark-mag"
    again.run()
    assert again.multiselect[0].value == ["label error"]
    assert again.text_area[0].value == "gold looks wrong"
    assert _labelled(again.text_input, "Your name").value == default_author()  # a new session


def test_a_write_to_an_unusable_notes_database_is_a_message(notes):
    """The database turns unusable while the panel is open (replaced by another file; the same
    path for a read-only or full disk): saving a judgement says so in one line (as a note's
    or a tag's save does), with no traceback."""
    from streamlit.testing.v1 import AppTest

    script = f"""
import sys
sys.path.insert(0, {str(ROOT)!r})
import ui.state
from ui.annotations import annotation_panel
real = ui.state.navigation
ui.state.navigation = lambda *args, **kwargs: None
try:
    sel = ui.state.sidebar()
finally:
    ui.state.navigation = real
annotation_panel(sel, "stark-mag", "007", ["d1", "d2"])
"""
    store = AnnotationStore(database_path(ROOT / "data" / "demo", notes))
    store.add_tag("stark-mag", "007", "seen")
    panel = AppTest.from_string(script, default_timeout=60)
    panel.query_params["dataset"] = "stark-mag"
    panel.run()
    no_exception(panel)
    for extra in store.path.parent.glob("*.sqlite3-*"):  # the WAL files
        extra.unlink()
    store.path.write_bytes(b"not a database " * 100)
    _labelled(panel.button, "Save judgement").click().run()
    no_exception(panel)
    errors = [e.value.replace("\\", "") for e in panel.error]
    assert errors[0].startswith("The judgement was not saved: "), errors
    assert errors[0].endswith("not a notes database: file is not a database"), errors


def test_an_unusable_notes_database_leaves_the_page_without_judgements(notes):
    """The notes database turns unusable while the app runs (its store is kept between runs):
    the page says notes are not available and shows the strict analyses, no traceback."""
    store = AnnotationStore(database_path(ROOT / "data" / "demo", notes))
    store.set_judgement("stark-mag", "007", "d1", 1)
    at = open_page(PAGE, dataset="stark-mag", a="bm25")
    no_exception(at)
    for extra in store.path.parent.glob("*.sqlite3-*"):  # the WAL files
        extra.unlink()
    store.path.write_bytes(b"not a database " * 100)
    at.run()
    no_exception(at)
    warnings = [w.value.replace("\\", "") for w in at.warning]
    assert any(w.startswith("Notes are not available: ") for w in warnings), warnings
    assert _frame(at, "taxonomy_counts") is not None


def test_an_author_variable_past_100_characters_is_a_warning(notes, monkeypatch):
    """``RETRIEVAL_DASHBOARD_AUTHOR`` longer than an author name may be: the panel says so
    (naming the variable) and writes as anonymous until a name is typed; no traceback."""
    from analysis.io.annotations import ANONYMOUS, AUTHOR_ENV

    monkeypatch.setenv(AUTHOR_ENV, "n" * 101)
    at = open_page("2_Queries.py", dataset="stark-mag", a="bm25", q="5", qd="stark-mag")
    no_exception(at)
    said = [w.value.replace("\\", "") for w in at.warning]  # without the Markdown escapes
    (warning,) = [w for w in said if w.startswith(f"{AUTHOR_ENV}: ")]
    assert "at most 100 characters" in warning
    assert _labelled(at.text_input, "Your name").value == ANONYMOUS
    _labelled(at.button, "Save judgement").click().run()
    no_exception(at)
    store = AnnotationStore(database_path(ROOT / "data" / "demo", notes))
    assert store.judgements("stark-mag", "5")["author"].tolist() == [ANONYMOUS]


def test_every_demo_dataset_renders_without_exception():
    names = list(read_manifest(ROOT / "data" / "demo").datasets)
    assert len(names) == 6
    for name in names:
        at = open_page(PAGE, dataset=name, a="bm25")
        no_exception(at)
        assert at.dataframe[0].value["queries"].gt(0).all(), name
        for tab in TABS[1:-1]:  # only the open tab is drawn
            _open_tab(at, tab)
            assert at.dataframe, (name, tab)
        _open_tab(at, "Amended")  # no judgement yet: a caption and the annotations' export
        assert any("judgement(s) on this dataset" in c.value for c in at.caption), name


def test_only_the_open_tab_is_drawn():
    at = open_page(PAGE, dataset="beijing", a="bm25")
    assert _frame(at, "taxonomy_counts") is not None
    assert not [d for d in at.dataframe if list(d.value.columns)[:2] == ["letter", "model"]]
    _open_tab(at, "Significance")
    assert _frame(at, "taxonomy_counts") is None
    assert _by_columns(at, ["letter", "model"])["letter"].tolist() == ["a", "b", "c"]


def test_queries_page_shows_the_panel_for_the_selected_query(notes):
    at = open_page("2_Queries.py", datasets="stark-mag", a="bm25", q="5", qd="stark-mag")
    no_exception(at)
    assert "Notes and judgements" in [h.value for h in at.subheader]
    docs = _labelled(at.selectbox, "Document").options
    assert len(docs) == 20  # the ranked list shown (top 20)
    _labelled(at.button, "Save judgement").click().run()
    no_exception(at)
    store = AnnotationStore(database_path(ROOT / "data" / "demo", notes))
    judged = store.judgements("stark-mag", "5")
    assert judged["doc_id"].tolist() == [docs[0]]
    assert judged["relevance"].tolist() == [1]  # the default choice: relevant
