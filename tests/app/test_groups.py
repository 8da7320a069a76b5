"""AppTest: run groups, the written diff, quality against cost and every model per query on the
demo (stark-prime has the dense seed group and latencies) and on generated bundles."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import numpy as np
import pandas as pd

from tests.app.conftest import leaderboards, no_exception, open_page
from tests.stats.test_groups import FOLDS, make_group_bundle

ROOT = Path(__file__).resolve().parents[2]
PRIME = {"dataset": "stark-prime", "metric": "mrr"}


def _html(at) -> str:
    return "".join(e.proto.body for e in at.get("html"))


def _charts(at) -> list[dict]:
    return [json.loads(c.proto.spec) for c in at.get("plotly_chart")]


def _frame(at, columns: list[str]) -> pd.DataFrame:
    """The first dataframe of the page whose columns start with ``columns``."""
    return next(d.value for d in at.dataframe if list(d.value.columns[: len(columns)]) == columns)


def _param(at, name: str) -> str | None:
    value = at.query_params.get(name)
    return value[0] if isinstance(value, list) else value


def test_home_shows_the_seed_group_and_quality_against_cost(shared_demo_root):
    at = open_page(**PRIME)
    no_exception(at)
    board = leaderboards(at).set_index("model")
    assert list(board.index) == ["bm25-kb-propagation", "bm25", "char-ngram-tfidf", "dense",
                                 "dense-s1", "dense-s2", "dense-s3"]  # fmt: skip
    assert "3 seeds, mean" in board.loc["dense", "cells"]
    assert "queries and seeds resampled" in board.loc["dense", "cells"]
    assert "Quality against cost" in [s.value for s in at.subheader]
    assert not _charts(at)  # drawn on request: a first visit loads no chart code
    at.toggle(key="home_costs").set_value(True).run()
    no_exception(at)
    assert _param(at, "costs") == "1"
    assert at.selectbox(key="home_cost").value == "latency_ms"
    with (ROOT / "data" / "demo" / "bundle.toml").open("rb") as f:
        meta = tomllib.load(f)["datasets"]["stark-prime"]["run_metadata"]
    (chart,) = _charts(at)
    points = {t["name"]: t["x"][0] for t in chart["data"] if t["name"] != "Pareto front"}
    assert points["bm25"] == meta["bm25"]["latency_ms"]
    assert points["dense-s2"] == meta["dense-s2"]["latency_ms"]
    at.selectbox(key="home_cost").select("index_mb").run()
    no_exception(at)
    assert _param(at, "cost") == "index_mb"
    (chart,) = _charts(at)
    names = {t["name"] for t in chart["data"]}
    assert "bm25-kb-propagation" not in names  # it has no index_mb
    assert "No index\\_mb for\\: bm25\\-kb\\-propagation" in at.caption[-2].value


def test_a_link_with_costs_draws_quality_against_cost(shared_demo_root):
    at = open_page(costs="1", cost="index_mb", **PRIME)
    no_exception(at)
    assert at.toggle(key="home_costs").value
    assert at.selectbox(key="home_cost").value == "index_mb"
    assert len(_charts(at)) == 1


def test_compare_a_seed_group_shows_sensitivity_and_the_written_diff(shared_demo_root):
    at = open_page("3_Compare.py", a="dense", b="bm25", q="5", qd="stark-prime", **PRIME)
    no_exception(at)
    assert at.text[0].value.startswith("A: dense (3 seeds, per-query means)    B: bm25")
    assert "Seed sensitivity" in [s.value for s in at.subheader]
    page = _html(at)
    assert "All 3 seed pairs give A − B the same sign as the seed means." in page
    kinds = [k for k in ("outcome", "gold", "mover", "unjudged") if f'data-kind="{k}"' in page]
    assert kinds == ["outcome", "gold", "mover", "unjudged"]
    heat = next(c for c in _charts(at) if c["data"][0]["type"] == "heatmap")
    assert heat["data"][0]["y"] == ["dense-s1", "dense-s2", "dense-s3"]
    assert any("its first seed" in c.value and "dense\\-s1" in c.value for c in at.caption)


def test_every_model_page_counts_filters_and_opens_a_query(shared_demo_root):
    at = open_page("8_Every_model.py", **PRIME)
    no_exception(at)
    counts = {m.label: int(m.value.replace(",", "")) for m in at.metric}
    assert sum(counts.values()) == 420
    assert at.multiselect(key="every_models").value == [
        "bm25-kb-propagation", "bm25", "char-ngram-tfidf", "dense", "dense-s1", "dense-s2",
        "dense-s3"]  # fmt: skip
    at.segmented_control(key="every_show").set_value("one solves").run()
    no_exception(at)
    listed = _frame(at, ["query_id", "text", "outcome", "solver"])
    assert len(listed) == counts["one solves"]
    assert set(listed["outcome"]) == {"one solves"}
    assert _param(at, "show") == "one solves"
    solver = listed["solver"].iloc[0]
    at.session_state["every_grid"] = {"selection": {"points": [
        {"customdata": [listed["query_id"].iloc[0], solver]}]}}  # fmt: skip
    at.run()
    no_exception(at)
    assert at.title[0].value == "Failing queries"
    assert _param(at, "a") == solver
    assert _param(at, "q") == listed["query_id"].iloc[0]


def _many_models(roots: Path, names: list[str]) -> None:
    """Bundle ``many``: one dataset of 30 queries and a random run of each model ``names``."""
    rng = np.random.default_rng(3)
    ds = roots / "many" / "web"
    (ds / "runs").mkdir(parents=True)
    (ds / "qrels.txt").write_text("".join(f"q{q} 0 g{q} 1\n" for q in range(30)))
    for name in names:
        lines = [f"q{q} Q0 {'g' if rng.random() < 0.5 else 'x'}{q} 1 1 t\n" for q in range(30)]
        (ds / "runs" / f"{name}.run").write_text("".join(lines))
    (roots / "many" / "bundle.toml").write_text('name = "many"\n[datasets.web]\nqrels = '
                                                '"web/qrels.txt"\nruns = "web/runs"\n')  # fmt: skip


def test_more_than_twelve_models_show_twelve(roots: Path):
    _many_models(roots, [f"m{m:02d}" for m in range(14)])
    at = open_page("8_Every_model.py", bundle="many", metric="hit@1")
    no_exception(at)
    assert len(at.multiselect(key="every_models").value) == 12
    assert any("14 models; the chart shows 12 at most" in c.value for c in at.caption)
    traces = [t for t in _charts(at)[0]["data"] if t["type"] == "bar"]
    assert len(traces) == 12
    # cells carry colours, not numbers (plotly.js warns once per bar with a numeric colour)
    assert all(isinstance(c, str) for t in traces for c in t["marker"]["color"])
    assert sum(len(t["customdata"]) for t in traces) == 12 * 30


def test_a_link_naming_more_than_twelve_models_shows_the_first_twelve(roots: Path):
    names = [f"m{m:02d}" for m in range(14)]
    _many_models(roots, names)
    at = open_page("8_Every_model.py", bundle="many", metric="hit@1", models=",".join(names))
    no_exception(at)
    assert at.multiselect(key="every_models").value == names[:12]


def test_a_link_keeps_a_model_whose_name_holds_a_comma(roots: Path):
    """Model names come from run file names, which may hold commas (``bm25,k1=0.9.run``): a
    ``models`` link naming one opens with it chosen."""
    _many_models(roots, ["bm25,k1=0.9", "m01", "m02"])
    at = open_page("8_Every_model.py", bundle="many", metric="hit@1", models="m02,bm25,k1=0.9")
    no_exception(at)
    assert at.multiselect(key="every_models").value == ["m02", "bm25,k1=0.9"]


def test_fold_groups_show_metrics_per_fold(roots: Path):
    make_group_bundle(roots / "cv", FOLDS)
    at = open_page(bundle="cv", metric="hit@1")
    no_exception(at)
    board = leaderboards(at).set_index("model")
    assert "2 folds" in board.loc["cv", "cells"]
    folds = _frame(at, ["model", "fold", "n"])
    cv = folds.loc[folds["model"] == "cv"]
    assert cv["fold"].tolist() == ["even", "odd", "pooled"]
    assert cv["n"].tolist() == [20, 20, 40]
    report = open_page("5_Report.py", bundle="cv", metric="hit@1", section="folds")
    no_exception(report)
    assert report.radio(key="report_section").value == "folds"
    shown = _frame(report, ["model", "fold", "n"])
    assert shown.loc[shown["model"] == "cv", "fold"].tolist() == ["even", "odd", "pooled"]
