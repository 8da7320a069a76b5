"""AppTest: every metric name has its card one hover or click away, and the measures of a
plugin named by ``RETRIEVAL_DASHBOARD_PLUGINS`` are metric choices like the built-in ones."""

from __future__ import annotations

import html
import re

import pytest

from analysis.core.plugins import ENV
from tests.app.conftest import leaderboards, no_exception, open_page
from tests.helpers import drop_plugin, write_plugin


@pytest.fixture
def plugin_env(tmp_path, monkeypatch):
    """The test plugin, named by the app's environment variable (unloaded afterwards)."""
    path = write_plugin(tmp_path)
    monkeypatch.setenv(ENV, str(path))
    yield path
    drop_plugin(path, "found", "dcg_sum")


def _labels(at) -> list[str]:
    """The popovers' labels as shown (Markdown escapes removed)."""
    return [p.proto.popover.label.replace("\\", "") for p in at.get("popover")]


def _popover_text(at, label: str) -> str:
    """The Markdown inside the popover labelled ``label``."""
    for pop, shown in zip(at.get("popover"), _labels(at), strict=True):
        if shown == label:
            return " ".join(m.value for m in pop.markdown)
    raise AssertionError(f"no popover {label!r}: {_labels(at)}")


def test_the_sidebar_metric_and_the_leaderboard_headers_carry_the_card(shared_demo_root):
    at = open_page()
    no_exception(at)
    metric = at.selectbox(key="w_metric")
    assert metric.value == "hit@1"
    assert "success\\_1" in metric.help  # the card of the selected metric (Markdown-escaped)
    card = _popover_text(at, "About hit@1")
    assert "**Formula**" in card
    assert "trec\\_eval" in card
    page = "".join(e.proto.body for e in at.get("html"))
    head = page[page.index("<thead>") : page.index("</thead>")]
    for name in ("hit@1", "hit@5", "recall@20", "mrr"):
        assert f'title="{name} — ' in html.unescape(head.replace("&#x27;", "'"))
    metric.select("recall@20").run()
    assert "About recall@20" in _labels(at)


@pytest.mark.parametrize("page", ["1_Slices.py", "3_Compare.py"])
def test_slices_and_compare_show_the_metric_card(page, shared_demo_root):
    at = open_page(page, metric="recall@20")
    no_exception(at)
    card = _popover_text(at, "About recall@20")
    assert "relevant documents in the top 20" in card


def test_a_plugin_measure_is_a_metric_choice_with_its_card(plugin_env):
    at = open_page()
    no_exception(at)
    metric = at.selectbox(key="w_metric")
    assert metric.options == ["hit@1", "hit@5", "recall@20", "mrr", "found@10", "dcg_sum"]
    board = leaderboards(at)
    assert board is not None
    assert all('title="found@10 = ' in cells for cells in board["cells"])  # a value per model
    page = "".join(e.proto.body for e in at.get("html"))
    assert ">found@10</th>" in page
    assert ">dcg_sum</th>" in page
    metric.select("found@10").run()
    no_exception(at)
    assert "relevant documents in the top k / \\|R\\|" in _popover_text(at, "About found@10")
    at.switch_page("pages/1_Slices.py")
    at.run()
    no_exception(at)
    assert at.selectbox(key="w_metric").value == "found@10"
    assert "About found@10" in _labels(at)


def test_a_plugin_that_fails_is_one_line_in_the_sidebar(tmp_path, monkeypatch):
    bad = write_plugin(tmp_path, "raise RuntimeError('no licence')\n", "broken.py")
    monkeypatch.setenv(ENV, str(bad))
    at = open_page()
    no_exception(at)
    errors = [re.sub(r"\\(.)", r"\1", e.value) for e in at.sidebar.error]  # Markdown-escaped
    assert len(errors) == 1
    assert "A metric plugin could not be loaded" in errors[0]
    assert "broken.py:1" in errors[0]
    assert "RuntimeError: no licence" in errors[0]
    assert at.selectbox(key="w_metric").options == ["hit@1", "hit@5", "recall@20", "mrr"]
