"""The small drawing helpers of ui/widgets.py."""

from __future__ import annotations

import re

import pandas as pd

from ui.widgets import escape_markdown, format_ci_table


def test_escape_markdown_neutralises_links_images_html_and_emphasis():
    raw = "see [x](javascript:alert(1)) ![i](http://h/y.png) <b>b</b> *s* a_b"
    out = escape_markdown(raw)
    # every special character is preceded by a backslash, so nothing forms Markdown syntax
    assert not re.search(r"(?<!\\)[\[\]()!<>*_:]", out)
    # ... and an invisible word joiner keeps "http://" from being autolinked
    assert re.sub(r"\\(.)", r"\1", out).replace("\u2060", "") == raw
    assert "http:\u2060" in re.sub(r"\\(.)", r"\1", out)


def test_format_ci_table_writes_mean_and_interval_per_metric():
    board = pd.DataFrame(
        {
            "dataset": ["d", "d"],
            "model": ["m", "m"],
            "metric": ["hit@1", "mrr"],
            "n": [10, 10],
            "mean": [0.5, 0.25],
            "ci_low": [0.2, 0.1],
            "ci_high": [0.8, 0.4],
        }
    )
    wide = format_ci_table(board, ["hit@1", "mrr"])
    assert wide.loc[0, "hit@1"] == "0.500 [0.200, 0.800]"
    assert wide.loc[0, "mrr"] == "0.250 [0.100, 0.400]"
    assert list(wide.columns) == ["dataset", "model", "n", "hit@1", "mrr"]


def test_plotly_figure_is_the_cached_dict_built_once_and_never_copied():
    """A cached figure dict gives one shared figure, equal to the dict, whose ``to_dict()`` is
    the dict itself; another dict (another choice on the page) gives its own figure."""
    import plotly.graph_objects as go
    import plotly.io as pio
    import streamlit as st

    from ui.widgets import plotly_figure

    st.cache_resource.clear()
    spec = go.Figure(go.Scatter(x=[1, 2], y=[3, 4], hovertext=["a", "b"])).to_dict()
    figure = plotly_figure(spec)
    assert plotly_figure(spec) is figure
    assert figure.to_dict() is spec
    assert figure.data[0].hovertext == ("a", "b")
    assert pio.to_json(figure, validate=False) == pio.to_json(go.Figure(spec), validate=False)
    other = go.Figure(go.Scatter(x=[1, 2], y=[5, 6])).to_dict()
    assert plotly_figure(other).to_dict() is other
    assert plotly_figure(other) is not figure
    st.cache_resource.clear()
