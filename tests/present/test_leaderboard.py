"""The leaderboard of one dataset (letters, best, baseline counts) and the grouped data checks."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps

from analysis.core.errors import DataWarning
from analysis.present.leaderboard import (
    check_table,
    leaderboard,
    leaderboard_html,
    model_letters,
    paired_t_pvalue,
)


def _table(values: dict[str, list[float]], dataset: str = "d") -> pd.DataFrame:
    rows = [
        {"dataset": dataset, "model": m, "query_id": f"q{i}", "mrr": v}
        for m, vs in values.items()
        for i, v in enumerate(vs)
    ]
    return pd.DataFrame(rows)


def test_model_names_read_as_numbers_keep_their_means():
    table = _table({"1": [1.0, 0.0, 1.0, 1.0], "2": [0.0, 0.0, 1.0, 0.0]})
    table["model"] = table["model"].astype(int)  # a CSV of models named 1 and 2
    board = leaderboard(table, ["mrr"], n_resamples=50)
    assert board["model"].tolist() == ["1", "2"]
    assert board["n"].tolist() == [4, 4]
    assert board["mrr"].tolist() == [0.75, 0.25]


def test_letters_mark_significant_wins_only():
    rng = np.random.default_rng(0)
    strong = rng.uniform(0.6, 1.0, 200)
    table = _table(
        {"strong": strong, "weak": strong - 0.3, "same": strong - 0.3 + rng.normal(0, 0.01, 200)}
    )
    board = leaderboard(table, ["mrr"], n_resamples=200)
    sig = dict(zip(board["model"], board["mrr sig"], strict=True))
    assert sig["strong"] == "bc"
    assert sig["weak"] == ""  # weak vs same: differences centred on 0
    assert board.loc[board["model"] == "strong", "mrr best"].item()
    assert not board.loc[board["model"] == "weak", "mrr best"].item()


def test_baseline_counts_improved_and_degraded_queries():
    table = _table({"base": [0.5, 0.5, 0.5, 0.5], "new": [1.0, 0.5, 0.0, 1.0]})
    board = leaderboard(table, ["mrr"], baseline="base", n_resamples=100).set_index("model")
    assert board.loc["new", "mrr improved"] == 2
    assert board.loc["new", "mrr degraded"] == 1
    assert board.loc["base", "mrr improved"] == 0


def test_leaderboard_refuses_several_datasets_and_unknown_baseline():
    both = pd.concat([_table({"m": [1.0, 0.0]}, "x"), _table({"m": [1.0, 0.0]}, "y")])
    with pytest.raises(ValueError, match="per dataset"):
        leaderboard(both, ["mrr"])
    with pytest.raises(ValueError, match="baseline"):
        leaderboard(_table({"m": [1.0, 0.0]}), ["mrr"], baseline="nope")


def test_paired_t_matches_scipy_and_edge_cases():
    a, b = np.array([0.1, 0.5, 0.9, 0.3]), np.array([0.2, 0.1, 0.4, 0.3])
    assert paired_t_pvalue(a, b) == pytest.approx(sps.ttest_rel(a, b).pvalue)
    assert paired_t_pvalue(a, a) == 1.0
    assert paired_t_pvalue(a, a - 0.1) == 0.0
    assert np.isnan(paired_t_pvalue(a[:1], b[:1]))


def test_html_escapes_model_names_and_bolds_best():
    table = _table({"<b>x</b>": [1.0, 1.0, 0.0], "y": [0.0, 0.0, 0.0]})
    out = leaderboard_html(leaderboard(table, ["mrr"], n_resamples=100), ["mrr"])
    assert "&lt;b&gt;x&lt;/b&gt;" in out
    assert "<b>x</b>" not in out
    assert "<b>0.667</b>" in out


def test_html_drops_a_names_directional_override():
    """U+202E in a model name reversed the rest of its row (``0.667`` read ``766.0``)."""
    table = _table({"bm25\u202e": [1.0, 1.0, 0.0], "y": [0.0, 0.0, 0.0]}, dataset="d\u2067")
    out = leaderboard_html(leaderboard(table, ["mrr"], n_resamples=100), ["mrr"])
    assert "\u202e" not in out
    assert "\u2067" not in out
    assert 'data-model="bm25"' in out


def test_model_letters_in_order():
    assert model_letters(["p", "q", "r"]) == {"p": "a", "q": "b", "r": "c"}


def test_checks_said_once_qrels_findings_for_all_models():
    dup = DataWarning("duplicate_qrels", 3, "3 duplicate qrels rows")
    miss_a = DataWarning("missing_from_run", 2, "2 of 10 queries missing")
    warnings = {("d", "a"): [dup, miss_a], ("d", "b"): [dup], ("e", "a"): []}
    checks = check_table(warnings)
    assert len(checks) == 2
    assert checks.iloc[0]["check"] == "missing_from_run"  # problems first
    assert checks.iloc[0]["models"] == "a"
    assert checks.iloc[1]["models"] == "all"


def test_html_with_a_baseline_the_board_was_not_computed_against_has_no_counts():
    table = _table({"a": [1.0, 0.0, 1.0], "b": [0.0, 0.0, 1.0]})
    board = leaderboard(table, ["mrr"], n_resamples=50)  # no baseline: no improved/degraded
    out = leaderboard_html(board, ["mrr"], baseline="a")
    assert "(baseline)" in out
    assert 'class="vs"' not in out
    counted = leaderboard_html(leaderboard(table, ["mrr"], baseline="a", n_resamples=50),
                               ["mrr"], baseline="a")  # fmt: skip
    assert '<small class="vs">+0 / −1</small>' in counted
