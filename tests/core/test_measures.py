"""The measure registry: every list of metrics is read from it, and a user measure registered
with one call works in ``evaluate``, on the command line (``--plugin``), in the out-of-core
engine and in the report; a bad plugin is one line."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from analysis.core import measures
from analysis.core.errors import InputError
from analysis.core.measures import REGISTRY, Measure, card, known, register_measure
from analysis.core.metrics import evaluate, evaluate_run, parse_metric, rank_run
from analysis.core.plugins import load_plugin
from analysis.stats.perquery import dashboard_metrics
from tests.helpers import ROOT, drop_plugin, random_collection, run_cli, run_main, write_plugin


@pytest.fixture
def plugin(tmp_path: Path):
    """The test plugin of :data:`tests.helpers.PLUGIN`, loaded (and unloaded afterwards)."""
    path = write_plugin(tmp_path)
    module = load_plugin(str(path))
    yield path, module
    drop_plugin(path, "found", "dcg_sum")


def _write_trec(run: pd.DataFrame, qrels: pd.DataFrame, folder: Path) -> tuple[Path, Path]:
    run_path, qrels_path = folder / "run.trec", folder / "qrels.txt"
    lines = [f"{q} Q0 {d} 0 {s!r} sys" for q, d, s in run.itertuples(index=False)]
    run_path.write_text("\n".join(lines) + "\n")
    qrels_path.write_text(
        "\n".join(f"{q} 0 {d} {r}" for q, d, r in qrels.itertuples(index=False)) + "\n"
    )
    return run_path, qrels_path


# ------------------------------------------------------------------------- the registry


def test_every_measure_is_parsed_listed_and_described() -> None:
    for m in REGISTRY.values():
        assert m.name in known()
        for alias in (m.name, *m.aliases):
            assert parse_metric(alias).measure == m.name
            assert parse_metric(alias.upper()).measure == m.name
        if m.cutoff == "optional":
            assert parse_metric(f"{m.name}@7").k == 7
        described = card(m.example)
        assert described.formula == measures.fill(m.formula, None)
        assert described.name == m.example
    assert known() == (
        "hit@k, recall@k, precision@k (P@k), ndcg, ndcg@k, mrr, mrr@k, map, map@k, rprec"
    )


def test_cards_carry_formula_cutoff_references_and_semantics() -> None:
    got = dict(card("recall@20").lines())
    assert got["Formula"] == "relevant documents in the top 20 / all relevant documents |R|"
    assert got["Cutoff"].startswith("ranks 1..20")
    assert got["trec_eval"].startswith("recall_20")
    assert got["ir_measures"] == "R@20"
    assert got["STaRK evaluator"].startswith("recall@20")
    assert "--compat list" in got["LIST"]
    for label in ("Ties", "Queries missing from the run", "Queries without relevant documents"):
        assert got[label]
    assert "saved fewer than 20" in got["Saved depth"]
    mrr = dict(card("mrr").lines())
    assert mrr["trec_eval"].startswith("recip_rank")
    assert "no relevant document scores 0 here" in mrr["Saved depth"]
    assert card("P@5").name == "precision@5"
    assert "**precision@5**" in card("P@5").markdown()
    with pytest.raises(ValueError, match="unknown metric"):
        card("bogus@3")


def test_a_new_measure_is_one_declaration(monkeypatch: pytest.MonkeyPatch) -> None:
    """A declaration alone makes a measure parse, evaluate, join the dashboard's table and
    get a card."""

    def at_least_two(j: measures.Judged, k: int | None) -> np.ndarray:
        return (j.hits(k) >= 2).astype(np.float64)

    declared = Measure(
        "pair", "Pair@{k}", "1 if two relevant documents are in the top {k}", at_least_two,
        aliases=("two",), trec_eval="none", dashboard="cutoffs",
    )  # fmt: skip
    monkeypatch.setitem(REGISTRY, "pair", declared)
    run = pd.DataFrame({"query_id": ["q"] * 3, "doc_id": ["a", "b", "c"], "score": [3.0, 2.0, 1.0]})
    qrels = pd.DataFrame({"query_id": ["q", "q"], "doc_id": ["a", "c"], "relevance": [1, 1]})
    got = evaluate(run, qrels, "pair@2,two@3").iloc[0]
    assert (got["pair@2"], got["two@3"]) == (0.0, 1.0)
    assert "pair@10" in dashboard_metrics()
    assert "pair, pair@k" in known()
    assert dict(card("pair@3").lines())["Formula"] == "1 if two relevant documents are in the top 3"


def test_register_refuses_built_in_and_malformed_names() -> None:
    with pytest.raises(ValueError, match="taken by the built-in recall"):
        register_measure("R", lambda r, n, k: n)
    with pytest.raises(ValueError, match="ASCII letters and underscores"):
        register_measure("top-5", lambda r, n, k: n)
    with pytest.raises(ValueError, match="callable"):
        register_measure("mine", "not a function")  # type: ignore[arg-type]
    assert "mine" not in REGISTRY


# ------------------------------------------------------------------------- user measures


def test_user_measure_equals_its_reference_with_ties_and_missing_queries(plugin) -> None:
    """``found@k`` is recall@k at threshold 1 (the same values and tie bounds, bit for bit);
    ``dcg_sum`` equals a loop over the ranked run; each gets an array only as deep as needed."""
    _, module = plugin
    run, qrels = random_collection(5, "ties", n_queries=60, n_docs=30)
    result = evaluate_run(run, qrels, "found@5,recall@5,found,recall,dcg_sum", diagnostics=True)
    table = result.per_query.set_index("query_id")
    for a, b in (("found@5", "recall@5"), ("found", "recall")):
        for suffix in ("", "_min", "_max"):
            assert table[a + suffix].to_numpy().tobytes() == table[b + suffix].to_numpy().tobytes()
    assert table["found@5_min"].lt(table["found@5_max"]).any()  # ties reorder the user measure
    ranked = rank_run(run)
    gain = qrels.set_index(["query_id", "doc_id"])["relevance"].clip(lower=0)
    for qid, value in table["dcg_sum"].items():
        rows = ranked.loc[ranked["query_id"] == qid]
        rel = [gain.get((qid, d), 0) for d in rows["doc_id"]]
        expected = sum(g / np.log2(r + 1) for g, r in zip(rel, rows["rank"], strict=True))
        assert value == pytest.approx(expected, rel=1e-12, abs=1e-15)
    assert (table.loc[table.index.str.startswith("m"), ["found@5", "dcg_sum"]] == 0).all().all()
    nq = len(table)
    deepest = ranked.merge(qrels.loc[qrels["relevance"] > 0], on=["query_id", "doc_id"])["rank"]
    shapes: dict = {}
    for name, shape, k in module.SHAPES:  # the first call of each: the ranking as evaluated
        shapes.setdefault((name, k), shape)
    assert shapes[("found", 5)] == (nq, 5)
    assert shapes[("found", None)] == shapes[("dcg_sum", None)] == (nq, int(deepest.max()))
    assert max(shape[1] for _, shape, _ in module.SHAPES) <= 30  # tie orders: the run's depth


def test_user_measure_on_the_command_line_and_in_the_out_of_core_engines(
    plugin, tmp_path: Path
) -> None:
    path, _ = plugin
    run, qrels = random_collection(6, "graded", n_queries=40, n_docs=25)
    run_path, qrels_path = _write_trec(run, qrels, tmp_path)
    expected = evaluate(run, qrels, "found@10,dcg_sum,ndcg@10")
    outs = {}
    # the memory engine in a separate process (--plugin loads it there); the others in this
    # one, where the fixture has loaded it
    for engine, cli in (("memory", run_cli), ("duckdb", run_main)):
        outs[engine] = tmp_path / f"{engine}.csv"
        proc = cli("evaluate", "--run", run_path, "--qrels", qrels_path, "--plugin", path,
                   "--metrics", "found@10,dcg_sum,ndcg@10", "--engine", engine,
                   "--out", outs[engine])  # fmt: skip
        assert proc.returncode == 0, proc.stderr
        assert "found@10" in proc.stdout
    assert outs["memory"].read_bytes() == outs["duckdb"].read_bytes()
    run.to_parquet(tmp_path / "run.parquet")
    outs["dask"] = tmp_path / "dask.csv"
    proc = run_main("evaluate", "--run", tmp_path / "run.parquet", "--qrels", qrels_path,
                    "--plugin", path, "--metrics", "found@10,dcg_sum,ndcg@10", "--engine", "dask",
                    "--out", outs["dask"])  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert outs["dask"].read_bytes() == outs["memory"].read_bytes()
    got = pd.read_csv(outs["memory"], dtype={"query_id": str})
    pd.testing.assert_frame_equal(got, expected, check_dtype=False)


def test_a_plugin_named_as_a_module_and_the_help(plugin, tmp_path: Path) -> None:
    path, _ = plugin
    env = {**os.environ, "PYTHONPATH": f"{path.parent}{os.pathsep}{ROOT}"}
    cmd = [sys.executable, "-m", "analysis", "--help-metrics", "--plugin", path.stem]
    proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    heads = [line.split(" — ")[0] for line in proc.stdout.splitlines() if line[:1].strip()]
    assert heads == [m.example for m in REGISTRY.values()]  # every measure, plugin's included
    assert "Formula: relevant documents in the top k / |R|" in proc.stdout
    helptext = run_main("evaluate", "--help", "--plugin", path).stdout  # loaded by the fixture
    assert "found, found@k" in " ".join(helptext.split())
    for command in ("compare", "report", "validate", "geo", "notes"):
        assert "--plugin" in run_main(command, "--help").stdout, command


BAD_MEASURE = """\
import numpy as np
import analysis

def broken(ranked_rel, n_rel, k):
    return {body}

analysis.register_measure("broken", broken)
"""


@pytest.mark.parametrize(
    ("plugin_text", "expected"),
    [
        (None, r"^error: no_such_plugin_module: plugin: no module named 'no_such_plugin_module'$"),
        ("import numpy as np\nx = (\n", r"^error: .*bad\.py:2: plugin .*SyntaxError: "),
        ("import analysis\nraise RuntimeError('no licence')\n",
         r"^error: .*bad\.py:2: plugin .*: RuntimeError: no licence$"),
        (BAD_MEASURE.format(body="1 / 0"),
         r"^error: measure 'broken' \(.*bad\.py\): .*bad\.py:5: raised ZeroDivisionError: "),
        (BAD_MEASURE.format(body="np.zeros((3, 2))"),
         r"^error: measure 'broken' .*: returned shape \(3, 2\); it must return one value per "
         r"query, shape \(\d+,\)$"),
        (BAD_MEASURE.format(body="np.full(len(n_rel), np.nan)"),
         r"^error: measure 'broken' .*: returned \d+ values that are not finite numbers$"),
        (BAD_MEASURE.format(body="'text'"),
         r"^error: measure 'broken' .*: returned str, not one number per query$"),
        (BAD_MEASURE.format(body="np.ones(len(n_rel)) * 1j"),
         r"^error: measure 'broken' .*: returned ndarray of complex128, not one number per "
         r"query$"),
        (BAD_MEASURE.format(body="__import__('sys').exit(0)"),
         r"^error: measure 'broken' .*bad\.py:5: raised SystemExit: 0$"),
        ("import sys\nsys.exit(0)\n", r"^error: .*bad\.py:2: plugin .*bad\.py: SystemExit: 0$"),
        ("import analysis\nanalysis.register_measure('P', len)\n",
         r"^error: .*bad\.py:2: plugin .*: ValueError: measure name 'P' is taken by the built-in "
         r"precision$"),
        ("import analysis\nanalysis.register_measure('model', len, cutoff=False)\n",
         r"^error: .*bad\.py:2: plugin .*: ValueError: measure name 'model' is a column of the "
         r"per-query table"),
        ("class E(Exception):\n    def __str__(self):\n        raise RuntimeError\nraise E()\n",
         r"^error: .*bad\.py:4: plugin .*bad\.py: E$"),
    ],
)  # fmt: skip
def test_a_bad_plugin_is_one_line(tmp_path: Path, plugin_text: str | None, expected: str) -> None:
    run, qrels = random_collection(7, "unique", n_queries=10, n_docs=5)
    run_path, qrels_path = _write_trec(run, qrels, tmp_path)
    spec = "no_such_plugin_module" if plugin_text is None else write_plugin(tmp_path, plugin_text,
                                                                            "bad.py")  # fmt: skip
    out = tmp_path / "out.csv"
    proc = run_cli("evaluate", "--run", run_path, "--qrels", qrels_path, "--plugin", spec,
                   "--metrics", "broken@3" if plugin_text and "broken" in plugin_text else "mrr",
                   "--out", out)  # fmt: skip
    assert proc.returncode == 2
    lines = proc.stderr.splitlines()
    assert len(lines) == 1, proc.stderr
    assert re.search(expected, lines[0]), proc.stderr
    assert not out.exists()


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("", "'': plugin: not a module name (mylab.measures) or a .py path"),
        ("..x", "..x: plugin: not a module name (mylab.measures) or a .py path"),
        ("a\0b.py", "a\\0b.py: plugin: a NUL character"),
        ("x" * 300, "x" * 79 + "…: plugin: not a module name (mylab.measures) or a .py path"),
    ],
)
def test_a_plugin_name_that_names_nothing_is_one_line(spec: str, message: str) -> None:
    """An empty or relative name named importlib's own file, a NUL in a path was a traceback,
    a long name was repeated whole."""
    from analysis.core.plugins import load_plugin

    with pytest.raises(InputError) as err:
        load_plugin(spec)
    assert str(err.value) == message


def test_a_raised_keyboard_interrupt_and_prints_of_a_plugin(tmp_path: Path) -> None:
    """A plugin raising KeyboardInterrupt stops the command as Ctrl-C does (one line, 130);
    what a plugin and its measure print goes to stderr, never into the command's output."""
    run, qrels = random_collection(7, "unique", n_queries=10, n_docs=5)
    run_path, qrels_path = _write_trec(run, qrels, tmp_path)
    stop = write_plugin(tmp_path, "raise KeyboardInterrupt\n", "stop.py")
    proc = run_cli("evaluate", "--run", run_path, "--qrels", qrels_path, "--plugin", stop)
    assert (proc.returncode, proc.stderr) == (130, "error: interrupted\n")
    loud = BAD_MEASURE.replace("def broken", "print('loaded')\n\ndef broken").format(
        body="print('called') or np.ones(len(n_rel))"
    )
    plugin = write_plugin(tmp_path, loud, "loud.py")
    other = tmp_path / "other.trec"
    other.write_text(run_path.read_text())
    proc = run_cli("compare", "--run", run_path, "--run", other, "--qrels", qrels_path,
                   "--metrics", "broken@3", "--resamples", "100", "--plugin", plugin)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "broken@3" in proc.stdout
    assert "loaded" not in proc.stdout
    assert "called" not in proc.stdout
    assert proc.stderr.splitlines()[:2] == ["loaded", "called"]


def test_user_output_goes_to_stderr_and_stdout_comes_back(capsys) -> None:
    """Nested and concurrent uses share one redirection, undone by the last one."""
    import threading

    before = sys.stdout
    with measures.user_output():
        print("inner")
        threads = [threading.Thread(target=_print_in_user_output) for _ in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert sys.stdout is before
    print("outer")
    captured = capsys.readouterr()
    assert captured.out == "outer\n"
    assert captured.err.count("thread\n") == 8


def _print_in_user_output() -> None:
    for _ in range(50):
        with measures.user_output():
            print("thread", end="" if _ else "\n")


@pytest.mark.parametrize(
    "name",
    [None, 5, "", "a_", "_a", "ü", "top-5", "x" * 41, "model", "text", "n_gold", "query_id",
     "saved_depth", "category", "twin_recall", "hit_min", "mine_max", "hits", "p"],
)  # fmt: skip
def test_register_refuses_names_that_are_taken_malformed_or_columns(name: object) -> None:
    """A name that is not a short ASCII identifier, a built-in or alias, or a column of the
    per-query table (its values would overwrite that column, or be overwritten) is refused."""
    before = dict(REGISTRY)
    with pytest.raises(ValueError, match=r"^measure name "):
        register_measure(name, lambda r, n, k: n)  # type: ignore[arg-type]
    assert before == REGISTRY


def test_the_reserved_names_cover_the_per_query_tables_columns() -> None:
    """Every column of the dashboard's per-query table (spatial and STaRK demo datasets) is a
    metric, a tie bound, a query's own column or a reserved name."""
    from analysis.io.bundle import load_dataset, load_model_run, read_manifest
    from analysis.stats.perquery import per_query_table

    bundle = read_manifest(ROOT / "data" / "demo")
    for name in ("beijing", "stark-prime"):
        spec = bundle.datasets[name]
        ds = load_dataset(spec)
        model = next(iter(spec.runs))
        table, _ = per_query_table(ds.queries, ds.qrels, {model: load_model_run(spec, model)},
                                   dataset=name, entities=ds.entities)  # fmt: skip
        others = set(table.columns) - set(dashboard_metrics()) - set(ds.queries.columns)
        others = {c.split("@")[0] for c in others if not c.endswith(("_min", "_max"))}
        assert others <= measures.RESERVED, others - measures.RESERVED


def test_a_queries_column_named_like_a_user_measure_keeps_the_measures_values() -> None:
    from analysis.stats.perquery import per_query_table

    register_measure("difficulty", lambda r, n, k: np.full(len(n), 0.5), cutoff=False)
    try:
        run = pd.DataFrame({"query_id": ["a", "b"], "doc_id": ["d", "e"], "score": [1.0, 1.0]})
        qrels = pd.DataFrame({"query_id": ["a", "b"], "doc_id": ["d", "x"], "relevance": [1, 1]})
        queries = pd.DataFrame({"query_id": ["a", "b"], "text": ["", ""], "difficulty": [9, 9]})
        table, _ = per_query_table(queries, qrels, {"m": run}, dataset="d")
        assert table["difficulty"].tolist() == [0.5, 0.5]
        assert "difficulty_x" not in table.columns
    finally:
        measures.unregister_measure("difficulty")


@pytest.mark.parametrize(
    ("returned", "message"),
    [
        (lambda n: ["1"] * len(n), "returned list of <U1, not one number per query"),
        (lambda n: [None] * len(n), "returned list of object, not one number per query"),
        (lambda n: np.ma.masked_array(np.ones(len(n)), mask=[True] * len(n)),
         "returned masked values"),
        (lambda n: np.ones(len(n)) + 0j, "returned ndarray of complex128"),
        (lambda n: 1.0, r"returned shape \(\); it must return one value per query"),
        (lambda n: list(np.ones(len(n), dtype=bool)), None),
        (lambda n: np.ones(len(n), dtype=np.int8), None),
        (lambda n: pd.Series(np.ones(len(n)), index=[f"x{i}" for i in range(len(n))]), None),
    ],
)  # fmt: skip
def test_a_measure_returns_one_real_number_per_query(returned, message) -> None:
    """Integers, booleans and floats in a list or an array count; text, objects, complex
    numbers and masked entries are never coerced into numbers."""
    register_measure("given", lambda r, n, k: returned(n))
    run, qrels = random_collection(8, "unique", n_queries=5, n_docs=5)
    try:
        if message is None:
            assert set(evaluate(run, qrels, "given@3")["given@3"]) <= {0.0, 1.0}
        else:
            with pytest.raises(InputError, match=message):
                evaluate(run, qrels, "given@3")
    finally:
        measures.unregister_measure("given")


def test_a_measure_called_with_the_wrong_signature_names_its_definition() -> None:
    def no_arguments():  # the call fails before entering it
        return 0

    register_measure("mistyped", no_arguments)  # type: ignore[arg-type]
    run, qrels = random_collection(8, "unique", n_queries=5, n_docs=5)
    try:
        with pytest.raises(InputError) as info:
            evaluate(run, qrels, "mistyped@3")
        line = no_arguments.__code__.co_firstlineno
        assert f"test_measures.py:{line}: raised TypeError: " in str(info.value)
    finally:
        measures.unregister_measure("mistyped")


def test_a_cutoff_is_written_in_ascii_digits() -> None:
    assert parse_metric("hit@10").k == 10
    for name in ("hit@１０", "hit@٥", "hit_５"):
        with pytest.raises(ValueError, match="unknown metric"):
            parse_metric(name)


def test_a_failing_measure_raises_input_error_in_the_library(tmp_path: Path) -> None:
    path = write_plugin(tmp_path, BAD_MEASURE.format(body="n_rel[:1]"), "short.py")
    load_plugin(str(path))
    try:
        run, qrels = random_collection(8, "unique", n_queries=5, n_docs=5)
        with pytest.raises(InputError, match=r"returned shape \(1,\)"):
            evaluate(run, qrels, "broken")
    finally:
        drop_plugin(path, "broken")


# ------------------------------------------------------------------------- the report


def _toy_bundle(folder: Path) -> Path:
    run_a, qrels = random_collection(9, "graded", n_queries=40, n_docs=20, n_missing=0,
                                     n_extra=0)  # fmt: skip
    run_b, _ = random_collection(10, "graded", n_queries=40, n_docs=20, n_missing=0, n_extra=0)
    runs = folder / "toy" / "runs"
    runs.mkdir(parents=True)
    _write_trec(run_a, qrels, folder / "toy")
    (folder / "toy" / "run.trec").rename(runs / "a.trec")
    run_b = run_b.loc[run_b["query_id"].isin(set(run_a["query_id"]))]
    _write_trec(run_b, qrels, folder / "toy")
    (folder / "toy" / "run.trec").rename(runs / "b.trec")
    ids = sorted(set(qrels["query_id"]))
    pd.DataFrame({"query_id": ids, "text": [f"query {i}" for i in ids]}).to_csv(
        folder / "toy" / "queries.csv", index=False
    )
    (folder / "bundle.toml").write_text(
        'name = "toy"\n\n[datasets.toy]\nqueries = "toy/queries.csv"\nqrels = "toy/qrels.txt"\n'
        'runs = "toy/runs"\nmetrics = ["found@10", "mrr"]\n'
    )
    return folder


def test_report_shows_the_user_measure_and_every_card(plugin, tmp_path: Path) -> None:
    path, _ = plugin
    bundle = _toy_bundle(tmp_path / "bundle")
    out = tmp_path / "report.html"
    proc = run_main("report", "--bundle", bundle, "--plugin", path, "--out", out)
    assert proc.returncode == 0, proc.stderr
    page = out.read_text()
    assert '<section id="metrics">' in page
    assert '<a href="#block-metric-found-10">found@10</a>' in page  # the header's report metric
    assert 'id="block-metric-found-10"' in page
    assert 'id="block-metric-mrr"' in page
    assert "Formula: relevant documents in the top k / |R|" in page  # the user's own words
    assert "trec_eval: recip_rank" in page
    # without --plugin, in a process of its own (the fixture has loaded the plugin in this one)
    missing = run_cli("report", "--bundle", bundle, "--out", tmp_path / "r2.html")
    assert missing.returncode == 2
    assert "unknown metric 'found@10'" in missing.stderr


def test_missing_queries_score_0_and_the_array_stays_bounded(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A query missing from the run scores 0 whatever the measure makes of its row of zeros;
    a relevance array beyond :data:`~analysis.core.measures.MAX_CELLS` is refused in one line."""
    register_measure("misses", lambda rel, n_rel, k: 1.0 - (rel > 0).mean(axis=1))
    try:
        run, qrels = random_collection(11, "unique", n_queries=20, n_docs=10, n_missing=5)
        table = evaluate(run, qrels, "misses@5").set_index("query_id")["misses@5"]
        assert (table[table.index.str.startswith("m")] == 0).all()
        assert (table[~table.index.str.startswith("m")] > 0).any()
        monkeypatch.setattr(measures, "MAX_CELLS", 10)
        with pytest.raises(InputError, match=r"measure 'misses' .*too large .* use a cutoff"):
            evaluate(run, qrels, "misses@5")
    finally:
        measures.unregister_measure("misses")


def _fingerprint_of(fn) -> str:
    register_measure("fingerprinted", fn)
    try:
        return {n: d for n, _, d in measures.user_fingerprint()}["fingerprinted"]
    finally:
        measures.unregister_measure("fingerprinted")


def _scaled(w: float):
    return lambda r, n, k: r.sum(axis=1) * w


def test_a_measure_redefined_with_another_body_gets_another_fingerprint() -> None:
    """Cache keys hold this fingerprint: a redefinition that computes other numbers must
    change it (else the app shows the old definition's values)."""

    def total(r, n, k):
        return np.sum(r, axis=1)

    first = _fingerprint_of(total)

    def total(r, n, k):  # redefined: same bytecode, another function name
        return np.mean(r, axis=1)

    assert _fingerprint_of(total) != first
    assert _fingerprint_of(_scaled(1.0)) != _fingerprint_of(_scaled(5.0))  # closures

    def weighted(r, n, k, w=1.0):
        return r.sum(axis=1) * w

    before = _fingerprint_of(weighted)
    weighted.__defaults__ = (2.0,)
    assert _fingerprint_of(weighted) != before
    assert _fingerprint_of(_scaled(2.0)) == _fingerprint_of(_scaled(2.0))  # same: a cache hit
