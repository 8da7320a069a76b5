"""N-model significance matrix: pairs, Holm, ranx-style letters."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from analysis.stats import holm, paired_comparison
from analysis.stats.significance import (
    model_letters,
    pairs,
    significance_letters,
    significance_matrix,
)


def _table() -> pd.DataFrame:
    rng = np.random.default_rng(0)
    n = 200
    base = rng.random(n)
    values = {"weak": base * 0.3, "mid": base * 0.3 + 0.01, "strong": np.minimum(base + 0.5, 1)}
    rows = [
        {"dataset": "d", "model": m, "query_id": str(i), "ndcg@10": v[i]}
        for m, v in values.items()
        for i in range(n)
    ]
    return pd.DataFrame(rows)


def test_pairs_use_paired_comparison_and_holm():
    table = _table()
    out = pairs(table, "ndcg@10", n_resamples=2000)
    assert list(zip(out["model_a"], out["model_b"], strict=True)) == [
        ("weak", "mid"),
        ("weak", "strong"),
        ("mid", "strong"),
    ]
    wide = table.pivot_table(index="query_id", columns="model", values="ndcg@10")
    direct = paired_comparison(wide["weak"], wide["strong"], n_resamples=2000)
    row = out.iloc[1]
    assert row["delta"] == pytest.approx(direct.delta)
    assert row["p"] == pytest.approx(direct.p_randomization)
    np.testing.assert_allclose(out["p_holm"], holm(out["p"]))
    t = pairs(table, "ndcg@10", test="t", n_resamples=100)
    assert t.iloc[1]["p"] == pytest.approx(direct.p_t)
    with pytest.raises(ValueError, match="unknown test"):
        pairs(table, "ndcg@10", test="z")
    with pytest.raises(ValueError, match="metric"):
        pairs(table, "mrr")


def test_letters_list_the_models_each_beats():
    table = _table()
    models = ["weak", "mid", "strong"]
    out = pairs(table, "ndcg@10", n_resamples=2000)
    letters = significance_letters(out, models)
    # mid is constantly 0.01 above weak: significant; strong beats both
    assert letters == {"weak": "", "mid": "a", "strong": "ab"}
    assert model_letters(models) == {"weak": "a", "mid": "b", "strong": "c"}
    # nothing significant at a tiny alpha... with Holm on 3 pairs, p >= 1/2001 each
    strict = pairs(table, "ndcg@10", n_resamples=2000, alpha=1e-6)
    assert significance_letters(strict, models) == dict.fromkeys(models, "")


def test_matrix_is_square_and_antisymmetric_in_delta():
    out = pairs(_table(), "ndcg@10", n_resamples=500)
    models = ["weak", "mid", "strong"]
    delta = significance_matrix(out, models, "delta")
    assert delta.loc["strong", "weak"] == pytest.approx(-delta.loc["weak", "strong"])
    assert delta.loc["strong", "weak"] > 0
    assert np.isnan(delta.loc["mid", "mid"])
    p = significance_matrix(out, models)
    assert p.loc["weak", "mid"] == p.loc["mid", "weak"]


def test_datasets_are_separate_families():
    table = pd.concat([_table(), _table().assign(dataset="e")], ignore_index=True)
    out = pairs(table, "ndcg@10", n_resamples=500)
    assert len(out) == 6
    one = pairs(_table(), "ndcg@10", n_resamples=500)
    np.testing.assert_allclose(out.loc[out["dataset"] == "e", "p_holm"], one["p_holm"])


def test_more_than_26_models_get_letters_and_readable_cells():
    models = [f"m{i}" for i in range(28)]
    letters = model_letters(models)
    assert [letters[m] for m in models[:3]] == ["a", "b", "c"]
    assert [letters[m] for m in models[25:]] == ["z", "a1", "b1"]
    # the last model beats the 27th ("a1") and the second ("b"): the cell reads "a1b", which
    # splits into letters (each a letter and an optional number) only one way
    pair_table = pd.DataFrame(
        {
            "dataset": "", "model_a": ["m26", "m1"], "model_b": ["m27", "m27"],
            "delta": [-0.2, -0.1], "p_holm": [0.001, 0.001], "significant": [True, True],
        }
    )  # fmt: skip
    cells = significance_letters(pair_table, models)
    assert cells["m27"] == "a1b"
    assert cells["m0"] == ""
