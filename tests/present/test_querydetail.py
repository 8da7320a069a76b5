"""Query-term highlighting (escaped text, <mark> only), POI marks and the ranking table."""

from __future__ import annotations

import pandas as pd

from analysis.present.querydetail import geo_marks, highlight_html, query_terms, ranking_html


def test_query_terms_drop_stopwords_and_add_cjk_bigrams():
    assert query_terms("Find the red shoes") == ["shoes", "find", "red"]
    terms = query_terms("北京银行 ATM")
    assert "银行" in terms
    assert "北京银行" in terms
    assert "atm" in terms


def test_highlight_escapes_everything_and_marks_terms_only():
    out = highlight_html("<script>alert(1)</script> Red shoes & RED", ["red", "script"])
    assert "<script>" not in out
    assert out.count("<mark>") == 4  # "script" twice, "Red", "RED"
    assert "<mark>Red</mark>" in out
    assert "&amp;" in out
    stripped = out.replace("<mark>", "").replace("</mark>", "")
    assert "<" not in stripped.replace("&lt;", "")


def test_highlight_drops_directional_overrides():
    """A U+202E in a query or document text reversed everything after it on the page."""
    out = highlight_html("red \u202eshoes\u202c and red", ["red"])
    assert out == "<mark>red</mark> shoes and <mark>red</mark>"


def test_highlight_cuts_long_text():
    out = highlight_html("a" * 1000, [], limit=10)
    assert out == "a" * 9 + "…"


def test_geo_marks_distance_twin_and_stack():
    gold = pd.DataFrame({"doc_id": ["g"], "gold": [True], "name": ["Cafe A"], "lat": [30.0],
                         "lon": [120.0]})  # fmt: skip
    listing = pd.DataFrame(
        {
            "rank": [1, 2, 3],
            "doc_id": ["t", "s", "g"],
            "gold": [False, False, True],
            "name": ["cafe  a", "Bank", "Cafe A"],
            "lat": [30.0, 30.0, 30.0],
            "lon": [120.0, 120.0, 120.01],
        }
    )
    out = geo_marks(listing, gold, 30.0, 120.0)
    assert out["twin"].tolist() == [True, False, False]
    assert out["stack"].tolist() == [True, True, False]
    assert out["distance_m"].iloc[0] == 0.0
    assert 900 < out["distance_m"].iloc[2] < 1000
    body = ranking_html(out, ["cafe"])
    assert "mark-twin" in body
    assert "<th>distance</th>" in body
    assert "<mark>cafe</mark>" in body


def test_ranking_html_escapes_ids_and_marks_gold_rows():
    listing = pd.DataFrame({"rank": [1], "doc_id": ["<b>x</b>"], "gold": [True], "score": [1.0],
                            "text": ["<img src=x onerror=alert(1)>"]})  # fmt: skip
    body = ranking_html(listing, [])
    assert "<b>x</b>" not in body
    assert "<img" not in body
    assert "background-color" in body
