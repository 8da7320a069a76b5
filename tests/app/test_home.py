"""AppTest: the home page (one dataset, leaderboard per dataset, data checks, navigation)."""

from __future__ import annotations

import re

from tests.app.conftest import leaderboards, no_exception, open_page
from ui import visitors


def _html(at) -> str:
    return "".join(e.proto.body for e in at.get("html"))


def _param(at, name: str) -> str:
    value = at.query_params[name]
    return value[0] if isinstance(value, list) else value


def test_home_shows_one_dataset_with_its_headline_metrics(shared_demo_root):
    at = open_page()
    no_exception(at)
    assert at.selectbox(key="w_dataset").value == "stark-amazon"
    assert at.selectbox(key="w_metric").options == ["hit@1", "hit@5", "recall@20", "mrr"]
    assert at.selectbox(key="w_metric").value == "hit@1"
    board = leaderboards(at)
    assert list(board["model"]) == ["bm25-kb-propagation", "bm25", "char-ngram-tfidf"]
    assert set(board["dataset"]) == {"stark-amazon"}
    assert board["n"].min() >= 300
    page = _html(at)
    assert page.count("<table") == 1
    assert "<b>" in page
    assert "<sup>" in page


def test_spatial_dataset_offers_its_models_and_metrics(shared_demo_root):
    at = open_page(dataset="beijing")
    no_exception(at)
    assert at.selectbox(key="w_metric").options[0] == "recall@10"
    models = at.selectbox(key="w_model_a").options
    assert "bm25-distance-fusion" in models
    assert "bm25-kb-propagation" not in models


def test_baseline_adds_counts_and_goes_to_the_url(shared_demo_root):
    at = open_page()
    at.selectbox(key="home_baseline").select("bm25").run()
    no_exception(at)
    board = leaderboards(at).set_index("model")
    assert "+" not in board.loc["bm25", "cells"]  # the baseline has no counts
    counts = re.findall(r"\+(\d+) / −(\d+)", board.loc["bm25-kb-propagation", "cells"])
    assert len(counts) == 4  # one per headline metric
    assert int(counts[0][0]) > 0
    assert _param(at, "baseline") == "bm25"
    assert "(baseline)" in _html(at)


def test_every_dataset_on_demand_each_checked_once():
    at = open_page()
    at.toggle(key="home_all").set_value(True).run()
    no_exception(at)
    assert _html(at).count("<table") == 6
    assert len(set(leaderboards(at)["dataset"])) == 6
    checks = at.dataframe[-1].value
    assert {"stark-amazon", "beijing"} <= set(checks["dataset"])
    assert not checks.duplicated(["dataset", "check", "message"]).any()
    dup = checks[checks["check"] == "duplicate_qrels"]
    assert len(dup) >= 1
    assert set(dup["models"]) == {"all"}


def test_changing_metric_writes_url(shared_demo_root):
    at = open_page()
    at.selectbox(key="w_metric").select("mrr").run()
    no_exception(at)
    assert _param(at, "metric") == "mrr"


def test_deep_link_and_legacy_link(shared_demo_root):
    at = open_page(dataset="beijing", a="bm25", metric="ndcg@10")
    no_exception(at)
    assert at.selectbox(key="w_model_a").value == "bm25"
    assert at.selectbox(key="w_metric").value == "ndcg@10"
    old = open_page(datasets="shanghai,beijing", metric="recall", k="20")
    no_exception(old)
    assert old.selectbox(key="w_dataset").value == "shanghai"
    assert old.selectbox(key="w_metric").value == "recall@20"
    assert "datasets" not in old.query_params
    assert "k" not in old.query_params


def test_invalid_url_values_fall_back(shared_demo_root):
    at = open_page(dataset="nope", a="no-such-model", metric="hit@7")
    no_exception(at)
    assert at.selectbox(key="w_dataset").value == "stark-amazon"
    assert at.selectbox(key="w_metric").value == "hit@1"
    assert at.selectbox(key="w_model_a").value == "bm25-kb-propagation"


def test_an_overlong_shared_value_is_said_once(shared_demo_root):
    """An over-long ``metric`` (past the URL limit) is ignored with one warning, as every other
    over-long value, not one per look at it."""
    from ui.urlstate import MAX_PARAM_CHARS

    for name in ("metric", "dataset", "a"):
        at = open_page(**{name: "x" * (MAX_PARAM_CHARS + 1)})
        no_exception(at)
        said = [w.value for w in at.warning if f"{name!r} parameter is" in w.value]
        assert len(said) == 1, (name, said)
    assert at.selectbox(key="w_metric").value == "hit@1"


def test_navigation_names_home_first(shared_demo_root):
    at = open_page()
    links = at.get("page_link")
    assert links[0].proto.label == "Home"
    assert [link.proto.label for link in links[1:4]] == ["Slices", "Queries", "Compare"]


def test_leaderboard_is_read_from_the_disk_cache_after_a_restart(tmp_path, monkeypatch):
    """A restart (empty Streamlit caches) reads the same leaderboard from the disk cache without
    bootstrapping again; a changed run file computes it again."""
    import streamlit as st

    import analysis.present.leaderboard as lb
    from tests.app.conftest import make_wide_bundle

    root = make_wide_bundle(tmp_path)
    monkeypatch.setenv("RETRIEVAL_DASHBOARD_DATA_ROOTS", str(root))
    calls = []
    real = lb.leaderboard

    def counted(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(lb, "leaderboard", counted)
    first = _html(open_page())
    assert "<table" in first
    assert len(calls) == 1
    st.cache_resource.clear()  # a restart: only the disk cache is left
    st.cache_data.clear()
    again = open_page()
    no_exception(again)
    assert _html(again) == first
    assert len(calls) == 1

    run = sorted((root / "wide" / "mag" / "runs").iterdir())[0]
    run.write_text(run.read_text() + "\n")  # same lines, a new file stamp
    st.cache_resource.clear()
    no_exception(open_page())
    assert len(calls) == 2


def test_home_page_imports_leave_scipy_out():
    """scipy (~1 s to import) is imported by the functions that need it, not by the modules the
    home page imports: a restart with cached tables never pays for it."""
    import subprocess
    import sys

    from tests.app.conftest import ROOT

    code = (
        "import sys\n"
        "import analysis.present.leaderboard, ui.data, ui.state, ui.widgets\n"
        "print(sorted(m for m in ('scipy.stats', 'scipy.sparse', 'scipy.spatial')"
        " if m in sys.modules))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "[]", out.stdout


def test_home_loads_chart_code_ahead_unless_the_warm_up_is_off(monkeypatch):
    """The demo has a spatial dataset: the home page asks the browser to load plotly's and
    deck.gl's chart code in idle time; ``RETRIEVAL_DASHBOARD_WARM_UP=0`` (no work ahead of a
    visitor) leaves it out."""
    monkeypatch.delenv(visitors.WARM_UP_ENV, raising=False)
    page = _html(open_page())
    assert "__chartsPreloaded" in page
    assert "PlotlyChart." in page
    assert "DeckGlJsonChart." in page
    monkeypatch.setenv(visitors.WARM_UP_ENV, "0")
    at = open_page()
    no_exception(at)
    assert "__chartsPreloaded" not in _html(at)
