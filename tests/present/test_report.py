"""Tests for analysis.present.report: the offline HTML report of the demo bundle (no external URL,
the expected sections, leaderboard means equal to ``python -m analysis evaluate``), the generated
summary on known numbers, escaping of names from files, and errors."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from analysis.core.errors import InputError
from analysis.present import report
from analysis.present.palette import FONT_FAMILY, MODEL_COLOURS
from analysis.stats import holm
from analysis.stats.perquery import per_query_table
from tests.helpers import run_main

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "data" / "demo"
SECTIONS = [
    "summary",
    "leaderboard",
    "costs",
    "slices",
    "compare",
    "worst-queries",
    "causes",
    "analyses",
]
SECTIONS += ["metrics"]


class _Page(HTMLParser):
    """Collects src/href attributes, script tags, section ids and the cells of every table."""

    def __init__(self) -> None:
        super().__init__()
        self.urls: list[tuple[str, str, str]] = []
        self.scripts_with_src = 0
        self.links = 0
        self.sections: list[str] = []
        self.tables: dict[str, list[list[tuple[str, str | None]]]] = {}
        self._table: str | None = None
        self._cell: list[str] | None = None
        self._value: str | None = None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        for name in ("src", "href"):
            if name in attrs:
                self.urls.append((tag, name, attrs[name] or ""))
        if tag == "script" and "src" in attrs:
            self.scripts_with_src += 1
        if tag == "link":
            self.links += 1
        if tag == "section":
            self.sections.append(attrs.get("id", ""))
        if tag == "table":
            self._table = attrs.get("id", f"anon-{len(self.tables)}")
            self.tables[self._table] = []
        if tag == "tr" and self._table is not None:
            self.tables[self._table].append([])
        if tag in ("td", "th") and self._table is not None:
            self._cell, self._value = [], attrs.get("data-value")

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._cell is not None and self._table is not None:
            self.tables[self._table][-1].append(("".join(self._cell).strip(), self._value))
            self._cell = None
        if tag == "table":
            self._table = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell.append(data)


def _parse(text: str) -> _Page:
    page = _Page()
    page.feed(text)
    return page


@pytest.fixture(scope="module")
def demo_html(demo_content) -> str:
    """The HTML report of the whole demo bundle (write_report writes this text)."""
    return report.render_html(demo_content)


def _evaluate(dataset: str, model: str, metrics: list[str]) -> dict[str, float]:
    """Means printed by ``python -m analysis evaluate`` (4 decimals)."""
    proc = run_main(
        "evaluate",
        "--run", DEMO / dataset / "runs" / f"{model}.parquet",
        "--qrels", DEMO / dataset / "qrels.parquet",
        "--metrics", ",".join(metrics),
    )  # fmt: skip
    proc.check_returncode()
    means = {}
    for line in proc.stdout.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[0] in metrics:
            means[parts[0]] = float(parts[1])
    assert set(means) == set(metrics), proc.stdout
    return means


def _leaderboard(page: _Page) -> pd.DataFrame:
    """The leaderboard table as (dataset, model, metric, text, value) rows."""
    rows = page.tables["table-leaderboard-table"]
    header = [text for text, _ in rows[0]]
    out = []
    for row in rows[1:]:
        dataset, model = row[0][0], row[1][0]
        for metric, (text, value) in zip(header[2:], row[2:], strict=True):
            out.append((dataset, model, metric, text, float(value) if value else np.nan))
    return pd.DataFrame(out, columns=["dataset", "model", "metric", "text", "value"])


# --------------------------------------------------------------------------- the demo report


def test_demo_report_is_self_contained(demo_html):
    page = _parse(demo_html)
    assert demo_html.startswith("<!DOCTYPE html>")
    external = [u for u in page.urls if re.match(r"^\s*(https?:|//|ftp:|data:)", u[2], re.I)]
    assert external == []
    assert all(value.startswith("#") for _, _, value in page.urls)  # in-page anchors only
    assert page.scripts_with_src == 0
    assert page.links == 0
    assert '"displaylogo": false' in demo_html
    # plotly.js inlined exactly once, every chart drawn with it
    assert demo_html.count("window.Plotly") >= 1
    n_divs = len(re.findall(r'<div id="fig-[^"]+" class="plotly-graph-div"', demo_html))
    assert n_divs >= 8  # leaderboard, 6 slice charts, A vs B
    assert demo_html.count("Plotly.newPlot(") == n_divs
    assert len(re.findall(r"/\*\*\s*\n?\s*\*\s*plotly\.js v\d", demo_html)) == 1
    # fonts: the CJK stack by name, no web font
    css = demo_html.split("<style>", 1)[1].split("</style>", 1)[0]
    assert FONT_FAMILY in css
    assert "@import" not in css
    assert "url(" not in css
    assert '"family":"Noto Sans' in demo_html.replace(" ", "") or "Noto Sans CJK SC" in demo_html


def test_demo_report_has_the_expected_sections(demo_html):
    page = _parse(demo_html)
    assert page.sections == SECTIONS
    for key in ("table-leaderboard-table", "table-compare-table", "table-worst-slices",
                "table-failure-causes", "table-data-checks"):  # fmt: skip
        assert key in page.tables, key
    assert "Models: A = bm25, B = char-ngram-tfidf." in demo_html  # on all six datasets
    # worst queries of every dataset, with gold and both rankings
    for name in ("stark-amazon", "stark-mag", "stark-prime", "beijing", "shanghai", "geo-glue"):
        assert f"Worst queries of model A on {name}" in demo_html
    assert demo_html.count("<h4>Rankings</h4>") == 30
    ranking = page.tables["table-query-3-0-beijing-rankings"]
    assert [h for h, _ in ranking[0]] == [
        "rank", "bm25: doc_id", "bm25: gold", "bm25: name",
        "char-ngram-tfidf: doc_id", "char-ngram-tfidf: gold", "char-ngram-tfidf: name",
    ]  # fmt: skip
    assert len(ranking) == 11  # header + top 10


def test_demo_leaderboard_means_equal_the_cli_evaluate(demo_html):
    board = _leaderboard(_parse(demo_html))
    metrics = ["recall@10", "ndcg@10", "recall@20", "ndcg@20"]
    beijing = {}
    for model in ("bm25", "bm25-distance-fusion", "char-ngram-tfidf"):
        beijing[model] = expected = _evaluate("beijing", model, metrics)
        rows = board[(board["dataset"] == "beijing") & (board["model"] == model)]
        for metric, mean in expected.items():
            value = rows.loc[rows["metric"] == metric, "value"].item()
            assert value == pytest.approx(mean, abs=5.1e-5), (model, metric)
    expected = _evaluate(
        "stark-prime", "bm25-kb-propagation", ["hit@1", "hit@5", "recall@20", "mrr"]
    )
    rows = board[(board["dataset"] == "stark-prime") & (board["model"] == "bm25-kb-propagation")]
    for metric, mean in expected.items():
        assert rows.loc[rows["metric"] == metric, "value"].item() == pytest.approx(mean, abs=5.1e-5)
    # bold = the best mean of beijing's recall@10, as evaluate ranks them
    best = max(beijing, key=lambda m: beijing[m]["recall@10"])
    cell = board[(board["dataset"] == "beijing") & (board["metric"] == "recall@10")]
    assert cell.loc[cell["model"] == best, "text"].item().count("±") == 1
    assert f"<td>{best}</td>" in demo_html
    strong = re.findall(r"<strong>(\d\.\d{3})</strong>", demo_html)
    assert f"{beijing[best]['recall@10']:.3f}" in strong
    # the summary names that model as the best on beijing
    assert (
        f"Best on beijing by recall@10: {best} with {beijing[best]['recall@10']:.3f}" in demo_html
    )
    # not a headline metric of beijing: left blank
    assert (
        board.loc[(board["dataset"] == "beijing") & (board["metric"] == "hit@1"), "value"]
        .isna()
        .all()
    )


def test_cli_report_command(tmp_path):
    out = tmp_path / "r.html"
    proc = run_main(
        "report", "--bundle", DEMO,
        "--datasets", "geo-glue", "--a", "bm25-distance-fusion", "--b", "bm25",
        "--out", out,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    text = out.read_text(encoding="utf-8")
    assert "Models: A = bm25-distance-fusion, B = bm25." in text
    assert "Slices of geo-glue" in text
    assert "stark-amazon" not in text
    bad = run_main("report", "--bundle", DEMO, "--datasets", "nope", "--out", tmp_path / "x.html")
    assert bad.returncode == 2
    assert bad.stderr.startswith("error: --datasets: unknown dataset(s) nope")
    assert len(bad.stderr.strip().splitlines()) == 1


# --------------------------------------------------------------------------- errors


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"datasets": ["nope"]}, "unknown dataset"),
        ({"datasets": ["beijing"], "model_a": "bm25-kb-propagation"}, "no run"),
        ({"datasets": ["beijing"], "model_a": "bm25", "model_b": "bm25"}, "differ"),
        ({"datasets": ["beijing"], "ties": "random"}, "--ties"),
    ],
)
def test_build_report_rejects_bad_arguments(kwargs, match):
    with pytest.raises(InputError, match=match):
        report.build_report(DEMO, **kwargs)


def test_metric_may_be_a_headline_metric_of_the_bundle(tmp_path):
    """``--metric mrr@10`` on a bundle whose headline metric is mrr@10 (the report's default
    there) was refused as an unknown metric; a metric no selected dataset computes still is."""
    folder = tmp_path / "b"
    (folder / "d" / "runs").mkdir(parents=True)
    (folder / "d" / "qrels.txt").write_text("".join(f"q{i} 0 g{i} 1\n" for i in range(4)))
    (folder / "d" / "runs" / "m.run").write_text(
        "".join(f"q{i} Q0 {'g' if i % 2 else 'x'}{i} 1 1.0 m\n" for i in range(4))
    )
    (folder / "bundle.toml").write_text(
        '[datasets.d]\nqrels = "d/qrels.txt"\nruns = "d/runs"\nmetrics = ["mrr@10", "hit@1"]\n'
    )
    content = report.bundle_content(folder, metric="MRR@10")
    assert content.metrics == {"d": "mrr@10"}
    with pytest.raises(InputError, match="'map@10' is not computed for the report's datasets"):
        report.bundle_content(folder, metric="map@10")
    with pytest.raises(InputError, match="metric 'hit@0': the cutoff must be at least 1"):
        report.bundle_content(folder, metric="hit@0")  # the reason evaluate gives


def test_write_report_unwritable_output(tmp_path):
    with pytest.raises(InputError, match="cannot write"):
        report.write_report(DEMO, tmp_path / "missing" / "r.html", datasets=["geo-glue"])


# --------------------------------------------------------------------------- known numbers


def _synthetic(models: dict[str, list[list[tuple[str, float]]]], n_gold: int = 1):
    """A per-query table of one dataset 'ds' with 40 queries (q00..q39, type t0/t1) whose gold
    doc is g<i> (plus g<i>b.. for n_gold > 1); models map to per-query ranked (doc, score) lists
    built by the caller."""
    qids = [f"q{i:02d}" for i in range(40)]
    queries = pd.DataFrame(
        {"query_id": qids, "text": [f"query {i}" for i in range(40)],
         "query_type": ["t0" if i % 2 else "t1" for i in range(40)]}
    )  # fmt: skip
    qrels = pd.DataFrame(
        [(q, f"g{i}" + ("" if j == 0 else f"x{j}"), 1) for i, q in enumerate(qids)
         for j in range(n_gold)],
        columns=["query_id", "doc_id", "relevance"],
    )  # fmt: skip
    runs = {
        model: pd.DataFrame(
            [
                (q, doc, score)
                for q, ranked in zip(qids, lists, strict=True)
                for doc, score in ranked
            ],
            columns=["query_id", "doc_id", "score"],
        )
        for model, lists in models.items()
    }
    table, warnings = per_query_table(
        queries, qrels, runs, dataset="ds", metrics=["hit@1", "hit@5", "mrr", "recall@1"]
    )
    return table, {("ds", m): w for m, w in warnings.items()}, queries, qrels, runs


def test_summary_names_the_best_model_and_significant_difference():
    good = [[(f"g{i}", 2.0), ("n", 1.0)] for i in range(40)]  # gold at rank 1 everywhere
    bad = [[("n", 2.0), (f"g{i}", 1.0)] for i in range(40)]  # gold at rank 2 everywhere
    table, warnings, *_ = _synthetic({"good": good, "bad": bad})
    content = report.build_content(
        table, headline={"ds": ["hit@1", "mrr"]}, model_a="bad", model_b="good",
        sources=report.ReportSources(warnings=warnings),
        settings=report.ReportSettings(bundle="b", n_resamples=2000),
    )  # fmt: skip
    text = "\n".join(content.summary)
    assert "Best on ds by hit@1: good with 1.000 (95% CI 1.000–1.000, n = 40)" in text
    assert "runner-up bad 0.000 (1.000 behind, significant after Holm correction" in text
    assert "A = bad vs B = good: 2 of 2 dataset × metric differences are significant" in text
    assert "ds hit@1 -1.000" in text
    comp = content.numbers["compare"]
    assert comp["delta"].tolist() == pytest.approx([-1.0, -0.5])
    assert comp["p_holm"].tolist() == pytest.approx(holm(comp["p_randomization"]).tolist())
    # leaderboard marks: 'bad' is significantly below the best on both metrics
    lb = next(b for s in content.sections for b in s.blocks if b.key == "leaderboard-table")
    assert lb.table.marks["hit@1"].tolist() == ["*", ""]
    assert lb.table.bold["mrr"].tolist() == [False, True]


def test_a_tie_is_said_as_a_tie_and_no_p_value_is_printed_without_a_finding():
    """Two models that print the same best mean: "a tie at", never "best …; runner-up" at the
    same value; A vs B with no significant difference: no "largest … p = 1" in the summary or
    on a slide; slices at the overall mean: no "worst slice"."""

    def ranked(i: int, hit: bool) -> list[tuple[str, float]]:
        return [(f"g{i}", 2.0), ("n", 1.0)] if hit else [("n", 2.0), (f"g{i}", 1.0)]

    # 'a' and 'b' agree on every query but q00 and q01, whose outcomes they swap: one mean
    a = [ranked(i, i % 3 != 0) for i in range(40)]
    b = [ranked(i, (i % 3 != 0) != (i < 2)) for i in range(40)]
    table, warnings, *_ = _synthetic({"a": a, "b": b})
    content = report.build_content(
        table, headline={"ds": ["hit@1"]}, model_a="a", model_b="b",
        sources=report.ReportSources(warnings=warnings),
        settings=report.ReportSettings(n_resamples=500),
    )  # fmt: skip
    board = content.numbers["leaderboard"]
    means = board.loc[board["metric"] == "hit@1"].set_index("model")["mean"]
    assert means["a"] == pytest.approx(means["b"])  # the premise: a tie
    text = "\n".join(content.summary)
    assert f"Best on ds by hit@1: a tie at {means['a']:.3f} between a and b" in text
    assert "runner-up" not in text
    assert "0 of 1 dataset × metric differences are significant" in text
    assert "p = " not in text  # no p-value without a finding
    assert "p < " not in text
    # both query types score 0.650, as overall: no slice is named "worst"
    assert "No slice of a on ds is below its overall hit@1 (0.650)." in text
    assert "Worst slice" not in text
    slides = {s.key: s.headline for s in report.build_deck(content)}
    assert slides["best"] == f"ds by hit@1: a tie at {means['a']:.3f}: a, b"
    assert "largest" not in slides["significance"]
    assert slides["worst-slices"] == "No slice of a is below its overall hit@1"
    assert slides["slices-ds"] == "ds: hit@1 by slice"  # no "A is lowest on" a tied slice
    for headline in slides.values():
        assert "p = 1" not in headline
    assert slides["slice-deltas"].startswith("No slice difference between A and B is")


def test_summary_reports_ties_and_missing_queries():
    # 'tied': gold and a non-gold share the top score (tie order decides hit@1); 10 queries are
    # missing from its run
    tied = [[(f"g{i}", 1.0), ("a", 1.0)] if i < 30 else [] for i in range(40)]
    other = [[(f"g{i}", 1.0)] for i in range(40)]
    table, warnings, *_ = _synthetic({"tied": tied, "other": other})
    content = report.build_content(
        table, headline={"ds": ["hit@1"]}, model_a="tied", model_b="other",
        sources=report.ReportSources(warnings=warnings),
        settings=report.ReportSettings(n_resamples=500),
    )  # fmt: skip
    text = "\n".join(content.summary)
    causes = content.numbers["causes"].set_index("model")
    assert causes.loc["tied", "tie-dependent"] == 30
    assert causes.loc["tied", "missing from run"] == 10
    assert causes.loc["tied", "mean, worst tie order"] == pytest.approx(0.0)
    assert causes.loc["tied", "mean, best tie order"] == pytest.approx(0.75)
    assert "Ties: tied on ds: hit@1 depends on the order of tied scores for 30 of 40" in text
    assert "Missing: tied on ds: 10 queries are missing from the run and count as 0." in text
    assert "Ties: other" not in text


def test_more_gold_than_k_is_a_cause():
    runs = {"m": [[(f"g{i}", 1.0)] for i in range(40)], "n": [[("z", 1.0)] for _ in range(40)]}
    table, *_ = _synthetic(runs, n_gold=3)
    content = report.build_content(
        table, headline={"ds": ["recall@1"]}, model_a="m", model_b="n",
        settings=report.ReportSettings(n_resamples=200),
    )  # fmt: skip
    assert content.numbers["causes"].set_index("model").loc["m", "more gold than k"] == 40
    assert any(s.startswith("Caps: m on ds: 40 of 40 queries") for s in content.summary)


def test_single_model_and_empty_table():
    table, *_ = _synthetic({"only": [[(f"g{i}", 1.0)] for i in range(40)]})
    content = report.build_content(
        table, headline={"ds": ["hit@1"]}, model_a="only", model_b=None,
        settings=report.ReportSettings(n_resamples=200),
    )  # fmt: skip
    compare = next(s for s in content.sections if s.key == "compare")
    assert [b.kind for b in compare.blocks] == ["text"]
    assert "Only one model is selected: no A vs B comparison." in content.summary
    html_text = report.render_html(content)
    assert '<section id="compare">' in html_text
    empty = report.build_content(
        pd.DataFrame(), headline={"ds": ["hit@1"]}, model_a=None, model_b=None
    )
    assert empty.sections == ()
    assert "<h1>" in report.render_html(empty)


def test_a_metric_of_another_dataset_falls_back_to_the_datasets_own_headline():
    """The page passes the sidebar's metric for every dataset; a metric only one dataset computes
    (its own headline ``recall@1``) is a column of NaN in the other dataset's rows, which made
    the report fail (NaN in the slice statistics). That dataset now gets its first headline
    metric, as when the column is absent."""
    good = [[(f"g{i}", 2.0), ("n", 1.0)] for i in range(40)]
    bad = [[("n", 2.0), (f"g{i}", 1.0)] for i in range(40)]
    one, *_ = _synthetic({"good": good, "bad": bad})
    other = one.drop(columns=["recall@1", "recall@1_min", "recall@1_max"], errors="ignore")
    table = pd.concat([one, other.assign(dataset="ds2")], ignore_index=True)
    content = report.build_content(
        table, headline={"ds": ["recall@1"], "ds2": ["mrr", "hit@1"]}, model_a="bad",
        model_b="good", metric="recall@1", settings=report.ReportSettings(n_resamples=200),
    )  # fmt: skip
    assert content.metrics == {"ds": "recall@1", "ds2": "mrr"}
    board = content.numbers["leaderboard"]
    assert not board["mean"].isna().any()
    assert set(board.loc[board["dataset"] == "ds2", "metric"]) == {"mrr", "hit@1"}


def test_worst_queries_order_and_rankings():
    # model a: query i has its gold at rank (i % 5) + 1 -> hit@1 = 1 only for i % 5 == 0
    a = [[(f"n{j}", 10.0 - j) for j in range(i % 5)] + [(f"g{i}", 1.0)] for i in range(40)]
    b = [[(f"g{i}", 1.0)] for i in range(40)]
    table, _, queries, qrels, runs = _synthetic({"a": a, "b": b})
    from analysis.core.metrics import rank_run
    from analysis.io.bundle import Dataset, DatasetSpec

    spec = DatasetSpec(name="ds", family="generic", queries=None, qrels=Path("x"), runs={})
    ds = Dataset(spec=spec, queries=queries, qrels=qrels, entities=None, edges=None)
    content = report.build_content(
        table, headline={"ds": ["hit@1"]}, model_a="a", model_b="b",
        sources=report.ReportSources(dataset=lambda _: ds, ranked=lambda _, m: rank_run(runs[m])),
        settings=report.ReportSettings(n_resamples=200, top_queries=3),
    )  # fmt: skip
    section = next(s for s in content.sections if s.key == "worst-queries")
    worst = section.blocks[0].table
    # all at 0 with a loss of 1 against b; deepest first gold rank (5) first, then query id
    assert worst["query_id"].tolist() == ["q04", "q09", "q14"]
    assert worst["first_gold_rank"].tolist() == [5, 5, 5]
    assert worst["hit@1 A"].tolist() == [0.0, 0.0, 0.0]
    views = [b.query for b in section.blocks if b.kind == "query"]
    assert [v.query_id for v in views] == ["q04", "q09", "q14"]
    assert views[0].text == "query 4"
    ranking = views[0].rankings
    assert ranking["a: gold"].tolist() == [False, False, False, False, True]
    assert ranking["b: gold"].tolist()[:1] == [True]
    assert views[0].gold["doc_id"].tolist() == ["g4"]


# --------------------------------------------------------------------------- escaping


EVIL_MODEL = "<script>alert(1)<x>"
EVIL_DATASET = "<i>ds&co"
EVIL_TEXT = "</script><img src=x onerror=alert(2)> **bold**"


@pytest.fixture
def evil_bundle(tmp_path) -> Path:
    """A bundle whose dataset, model and query text are HTML."""
    folder = tmp_path / "b"
    (folder / "d" / "runs").mkdir(parents=True)
    qids = [f"q{i}" for i in range(12)]
    pd.DataFrame({"query_id": qids, "text": [EVIL_TEXT] * 12, "query_type": ["a", "b"] * 6}).to_csv(
        folder / "d" / "queries.csv", index=False
    )
    pd.DataFrame({"query_id": qids, "doc_id": [f"g{i}" for i in range(12)], "relevance": 1}).to_csv(
        folder / "d" / "qrels.csv", index=False
    )
    for name, gold_score in ((EVIL_MODEL, 2.0), ("plain", 0.5)):
        rows = [(q, f"g{i}", gold_score) for i, q in enumerate(qids)]
        rows += [(q, "other", 1.0) for q in qids]
        pd.DataFrame(rows, columns=["query_id", "doc_id", "score"]).to_csv(
            folder / "d" / "runs" / f"{name}.csv", index=False
        )
    (folder / "bundle.toml").write_text(
        f'name = "evil"\n[datasets."{EVIL_DATASET}"]\nqueries = "d/queries.csv"\n'
        'qrels = "d/qrels.csv"\nruns = "d/runs"\nmetrics = ["hit@1"]\n',
        encoding="utf-8",
    )
    return folder


def test_names_and_text_from_files_are_escaped(evil_bundle):
    text = report.build_report(evil_bundle, model_a=EVIL_MODEL, model_b="plain")
    page = _parse(text)
    assert [tag for tag, name, _ in page.urls if name == "src"] == []  # no <img src=x>
    assert "<script>alert" not in text
    assert "<img" not in text
    assert "<i>ds" not in text
    assert "&lt;script&gt;alert(1)&lt;x&gt;" in text
    assert "&lt;i&gt;ds&amp;co" in text
    assert "&lt;/script&gt;&lt;img src=x onerror=alert(2)&gt; **bold**" in text
    # inside the figures' JSON, plotly's own escaping plus ours (&lt;) keep it inert
    assert "\\u003cscript" not in text.split("<body>", 1)[1]
    assert "Best on <i>ds&co" not in text


def test_a_right_to_left_override_in_a_name_reorders_nothing_in_the_report():
    """A model named ``bm25`` + U+202E reversed everything after it in its sentence: the summary
    showed "with 0.650" as "056.0 htiw". The report, the deck and their tables drop the
    directional formatting characters of names and text from files."""
    good = [[(f"g{i}", 2.0), ("n", 1.0)] for i in range(40)]
    bad = [[("n", 2.0), (f"g{i}", 1.0)] for i in range(40)]
    table, *_ = _synthetic({"good\u202e": good, "bad\u2067": bad})
    content = report.build_content(
        table, headline={"ds": ["hit@1"]}, model_a="bad\u2067", model_b="good\u202e",
        settings=report.ReportSettings(bundle="b\u202d", n_resamples=200),
    )  # fmt: skip
    for text in (report.render_html(content), report.render_deck(content)):
        assert not re.search("[\u202a-\u202e\u2066-\u2069]", text)
        assert "Best on ds by hit@1: good with 1.000" in text


# --------------------------------------------------------------------------- the deck


def test_demo_deck_slides_are_written_from_the_numbers(demo_content):
    slides = report.build_deck(demo_content)
    assert 6 <= len(slides) <= 12
    keys = [s.key for s in slides]
    assert keys[:6] == [
        "overview", "best", "significance", "worst-slices", "slice-deltas", "causes",
    ]  # fmt: skip
    assert any(k.startswith("example-") for k in keys)  # a failure cause with its query
    for slide in slides:
        assert slide.headline
        assert len(slide.headline) <= 150
        assert (slide.figure is None) != (slide.table is None)  # one figure or one table
        if slide.table is not None:
            assert len(slide.table) <= 8
    # headlines state numbers of the report
    board = demo_content.numbers["leaderboard"]
    beijing = board[(board["dataset"] == "beijing") & (board["metric"] == "recall@10")]
    best = beijing.sort_values("mean", ascending=False).iloc[0]
    overview = slides[0].table.set_index("dataset")
    assert overview.loc["beijing", "best model"] == best["model"]
    assert overview.loc["beijing", "best (95% CI)"].startswith(f"{best['mean']:.3f} [")
    comp = demo_content.numbers["compare"]
    n_sig = int((comp["p_holm"] < 0.05).sum())
    assert f"{n_sig} of {len(comp)} differences are significant after Holm" in slides[2].headline
    # palette: model colours of the figures are Okabe-Ito
    colours = {bar.marker.color for bar in slides[1].figure.data}
    assert colours <= set(MODEL_COLOURS)
    assert report.build_deck(demo_content, max_slides=4)[-1].key == "worst-slices"


def test_a_cut_headline_never_ends_inside_a_number():
    """A headline longer than the slide's limit was cut wherever the limit fell: "... is
    +0.238)" became "... is +0.23…", another value. The cut now falls before the number."""
    from analysis.present.report.deck import HEADLINE_CHARS, _headline

    for pad in range(HEADLINE_CHARS - 12, HEADLINE_CHARS + 2):
        text = "x" * pad + " is +0.238 (n = 1250)"
        cut = _headline(text)
        assert len(cut) <= HEADLINE_CHARS
        assert cut == text or cut.endswith("…")
        numbers = re.findall(r"[+-]?\d+(?:\.\d+)?", cut)
        assert set(numbers) <= {"+0.238", "1250"}, (pad, cut)


def test_deck_html_is_offline_with_inline_navigation(demo_content):
    text = report.render_deck(demo_content)
    page = _parse(text)
    assert text.startswith("<!DOCTYPE html>")
    assert page.urls == []  # no src/href at all
    assert page.scripts_with_src == 0
    assert page.links == 0
    assert text.count('<section class="slide"') == len(report.build_deck(demo_content))
    assert "addEventListener('keydown'" in text
    assert "PageDown" in text
    assert "ArrowRight" in text
    assert FONT_FAMILY in text
    assert len(re.findall(r"/\*\*\s*\n?\s*\*\s*plotly\.js v\d", text)) == 1


def test_deck_escapes_names_from_files(evil_bundle):
    content = report.bundle_content(evil_bundle, model_a=EVIL_MODEL, model_b="plain")
    text = report.render_deck(content)
    body = text.split("<body>", 1)[1]
    markup = re.sub(r"<script>.*?</script>", "", body, flags=re.S)
    assert "<script>alert" not in markup
    assert "<img" not in markup
    assert "&lt;script&gt;alert(1)&lt;x&gt;" in markup
    assert "\\u003cscript" not in body


def test_block_keys_stay_unique_when_slice_columns_slug_alike(tmp_path):
    """Slice columns 'Kind' and 'kind?' give the same slug; each figure keeps its own block
    key, HTML id and plotly div (a repeated id would draw both figures into one div)."""
    folder = tmp_path / "b"
    (folder / "d" / "runs").mkdir(parents=True)
    qids = [f"q{i}" for i in range(24)]
    pd.DataFrame(
        {"query_id": qids, "text": ["t"] * 24, "Kind": ["x", "y"] * 12,
         "kind?": ["p"] * 12 + ["q"] * 12}
    ).to_csv(folder / "d" / "queries.csv", index=False)  # fmt: skip
    pd.DataFrame({"query_id": qids, "doc_id": [f"g{i}" for i in range(24)], "relevance": 1}).to_csv(
        folder / "d" / "qrels.csv", index=False
    )
    for name, shift in (("m1", 0), ("m2", 1)):
        rows = [(q, f"g{(i + shift * (i % 3 == 0))}", 1.0) for i, q in enumerate(qids)]
        pd.DataFrame(rows, columns=["query_id", "doc_id", "score"]).to_csv(
            folder / "d" / "runs" / f"{name}.csv", index=False
        )
    (folder / "bundle.toml").write_text(
        'name = "b"\n[datasets.d]\nqueries = "d/queries.csv"\nqrels = "d/qrels.csv"\n'
        'runs = "d/runs"\nmetrics = ["hit@1"]\n',
        encoding="utf-8",
    )
    content = report.bundle_content(folder)
    keys = [b.key for s in content.sections for b in s.blocks]
    slices = [b for s in content.sections for b in s.blocks if b.title.startswith("Slices of")]
    assert len(slices) == 2
    assert len(set(keys)) == len(keys)
    ids = re.findall(r'\bid="([^"]+)"', report.render_html(content))
    assert len(set(ids)) == len(ids)
