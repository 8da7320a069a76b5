"""AppTest: the home page (bundle, leaderboard, data checks)."""

from __future__ import annotations

from tests.app.conftest import no_exception, open_page


def test_home_renders_leaderboard_on_demo():
    at = open_page()
    no_exception(at)
    board = at.dataframe[0].value
    assert set(board["dataset"]) == {
        "stark-amazon",
        "stark-mag",
        "stark-prime",
        "beijing",
        "shanghai",
        "geo-glue",
    }
    assert board["n"].min() >= 300
    assert board.iloc[0, 3].count("[") == 1  # "mean [low, high]"


def test_home_data_checks_list_duplicate_qrels():
    at = open_page()
    checks = at.dataframe[1].value
    assert "duplicate_qrels" in set(checks["check"])


def test_changing_metric_changes_leaderboard():
    at = open_page()
    before = at.dataframe[0].value.columns.tolist()
    at.selectbox(key="w_measure").select("ndcg").run()
    no_exception(at)
    after = at.dataframe[0].value.columns.tolist()
    assert "ndcg@10" in after
    assert before != after
    assert at.query_params["metric"] in ("ndcg", ["ndcg"])


def test_deep_link_selects_datasets_and_models():
    at = open_page(datasets="beijing", a="bm25", metric="recall", k="20")
    no_exception(at)
    board = at.dataframe[0].value
    assert set(board["dataset"]) == {"beijing"}
    assert "recall@20" in board.columns
    assert at.selectbox(key="w_model_a").value == "bm25"


def test_invalid_url_values_fall_back():
    at = open_page(datasets="nope", a="no-such-model", k="7")
    no_exception(at)
    assert at.selectbox(key="w_k").value == 10
    assert len(at.multiselect(key="w_datasets").value) == 6
