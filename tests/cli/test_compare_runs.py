"""``python -m analysis compare`` and :mod:`analysis.stats.runs`: paired tests equal scipy on
pytrec_eval's per-query values, the randomization p within Monte-Carlo error of the exact
enumeration, ranx-style letters, honest floors, output formats and bad input."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import pytrec_eval
from scipy import stats as sps

import analysis
from analysis.stats.runs import COLUMNS, compare_per_query, significance_letters
from tests.helpers import pytrec_dicts, random_collection, run_main

_cli = run_main


def _write_trec(run: pd.DataFrame, path: Path) -> None:
    lines = [f"{q} Q0 {d} 0 {s!r} x" for q, d, s in zip(run["query_id"], run["doc_id"],
                                                        run["score"], strict=True)]  # fmt: skip
    path.write_text("\n".join(lines) + "\n")


def test_p_t_and_p_wilcoxon_equal_scipy_on_pytrec_eval_values(tmp_path: Path) -> None:
    run_a, qrels = random_collection(31, "unique", n_queries=120)
    run_b, _ = random_collection(32, "unique", n_queries=120)
    qrels_path = tmp_path / "qrels.txt"
    qrels_path.write_text("".join(f"{q} 0 {d} {r}\n" for q, d, r in qrels.itertuples(index=False)))
    _write_trec(run_a, tmp_path / "a.run")
    _write_trec(run_b, tmp_path / "b.run")
    out = tmp_path / "cmp.json"
    proc = _cli("compare", "--qrels", qrels_path, "--run", tmp_path / "a.run", "--run",
                tmp_path / "b.run", "--metrics", "mrr,ndcg@10,map", "--out", out)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    rows = {r["metric"]: r for r in json.loads(out.read_text())}
    assert list(json.loads(out.read_text())[0])[: len(COLUMNS)] == list(COLUMNS)
    queries = list(dict.fromkeys(qrels["query_id"]))
    keys = {"mrr": "recip_rank", "ndcg@10": "ndcg_cut_10", "map": "map"}
    per_run = []
    for run in (run_a, run_b):
        run_d, qrels_d = pytrec_dicts(run, qrels)
        ref = pytrec_eval.RelevanceEvaluator(qrels_d, {"recip_rank", "ndcg_cut.10", "map"})
        values = ref.evaluate(run_d)
        per_run.append({m: np.array([values.get(q, {}).get(k, 0.0) for q in queries])
                        for m, k in keys.items()})  # fmt: skip
    for metric in keys:
        a, b = per_run[0][metric], per_run[1][metric]
        row = rows[metric]
        assert row["n"] == len(queries)
        assert row["p_t"] == pytest.approx(sps.ttest_rel(a, b).pvalue, rel=1e-12)
        expected_w = sps.wilcoxon(a - b, zero_method="wilcox").pvalue
        assert row["p_wilcoxon"] == pytest.approx(expected_w, rel=1e-12)
        assert row["mean_a"] == pytest.approx(a.mean(), rel=1e-12)
        assert row["delta"] == pytest.approx((a - b).mean(), abs=1e-12)
    # the library call gives the same table
    table = analysis.compare({"a": run_a, "b": run_b}, qrels, ["mrr", "ndcg@10", "map"])
    np.testing.assert_allclose(table["p_t"], [rows[m]["p_t"] for m in keys], rtol=1e-12)


def test_randomization_p_is_within_monte_carlo_error_of_the_exact_enumeration() -> None:
    rng = np.random.default_rng(3)
    for trial in range(5):
        n = 15  # 2^15 = 32768 sign patterns: B = 10,000 samples, B = 2^15 enumerates
        a = rng.random(n)
        b = a - rng.normal(0.05 * trial, 0.1, n)
        values = {"a": {"m": a}, "b": {"m": b}}
        sampled = compare_per_query(values, ["m"], n_resamples=10_000, seed=trial).iloc[0]
        exact = compare_per_query(values, ["m"], n_resamples=1 << 15, seed=trial).iloc[0]
        assert bool(exact["randomization_exact"])
        assert not bool(sampled["randomization_exact"])
        p = exact["p_randomization"]
        error = 4 * np.sqrt(max(p * (1 - p), 1e-4) / 10_000) + 1 / 10_001
        assert abs(sampled["p_randomization"] - p) <= error, (trial, sampled, p)


def test_floored_p_values_say_so_and_letters_mark_the_better_runs(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    base = rng.random(300)
    values = {
        "weak": {"m": base * 0.5},
        "mid": {"m": base * 0.5 + rng.normal(0, 0.01, 300)},
        "strong": {"m": base},
    }
    table = compare_per_query(values, ["m"], n_resamples=2000, seed=1)
    strong = table[(table["b"] == "strong")]
    assert strong["p_floor"].all()  # no random sign pattern reaches |T_obs|
    assert (strong["p_randomization"] == 1 / 2001).all()
    assert strong["p_holm_bound"].all()
    letters = significance_letters(table, list(values), ["m"]).set_index("run")
    assert letters.loc["strong", "m"][1] == "ab"
    assert letters.loc["weak", "m"][1] == ""
    from analysis.cli.compare import render

    md = render(table, list(values), ["m"], ".md")
    assert "< 0.0005" in md  # 1/2001, never "0.0005" as if it were measured
    assert "^ab" in md
    tex = render(table, list(values), ["m"], ".tex")
    assert "$^{ab}$" in tex


def test_a_metric_named_twice_is_one_member_of_holms_family(tmp_path: Path) -> None:
    """``hit@1,HIT@1,mrr`` compared hit@1 twice, so Holm adjusted over three tests, not two."""
    run_a, qrels = random_collection(41, "unique", n_queries=60)
    run_b, _ = random_collection(42, "unique", n_queries=60)
    runs = {"a": run_a, "b": run_b}
    twice = analysis.compare(runs, qrels, "hit@1,HIT@1,mrr,recip_rank", n_resamples=500)
    once = analysis.compare(runs, qrels, "hit@1,mrr", n_resamples=500)
    assert twice["metric"].tolist() == ["hit@1", "mrr"]
    pd.testing.assert_frame_equal(twice, once)
    qrels_path = tmp_path / "qrels.txt"
    qrels_path.write_text("".join(f"{q} 0 {d} {r}\n" for q, d, r in qrels.itertuples(index=False)))
    for name, run in runs.items():
        _write_trec(run, tmp_path / f"{name}.run")
    out = tmp_path / "cmp.json"
    proc = _cli("compare", "--qrels", qrels_path, "--run", tmp_path / "a.run", "--run",
                tmp_path / "b.run", "--metrics", "hit@1,HIT@1,mrr", "--resamples", "500",
                "--out", out)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    rows = json.loads(out.read_text())
    assert [r["metric"] for r in rows] == ["hit@1", "mrr"]
    assert [r["p_holm"] for r in rows] == pytest.approx(once["p_holm"].tolist(), abs=0)


def test_letters_past_z_read_one_way() -> None:
    runs = [f"r{i}" for i in range(28)]
    table = pd.DataFrame(
        {
            "metric": "m", "a": ["r1", "r26"], "b": ["r27", "r27"], "mean_a": [0.1, 0.2],
            "mean_b": [0.5, 0.5], "delta": [-0.4, -0.3], "p_holm": [0.001, 0.001],
        }
    )  # fmt: skip
    letters = significance_letters(table, runs, ["m"]).set_index("run")
    assert letters["letter"].tolist()[24:] == ["y", "z", "a1", "b1"]
    # r27 beats "b" and the 27th run: "a1b" (a letter and an optional number each), where
    # "aab" would also read as "a" and "ab"
    assert letters.loc["r27", "m"][1] == "a1b"


def test_compare_writes_every_format_and_refuses_bad_input(tmp_path: Path) -> None:
    run_a, qrels = random_collection(41, "ties", n_queries=40)
    run_b, _ = random_collection(42, "ties", n_queries=40)
    qrels_path = tmp_path / "q.txt"
    qrels_path.write_text("".join(f"{q} 0 {d} {r}\n" for q, d, r in qrels.itertuples(index=False)))
    paths = []
    for name, run in (("a", run_a), ("b", run_b), ("c", run_a)):
        _write_trec(run, tmp_path / f"{name}.run")
        paths += ["--run", tmp_path / f"{name}.run"]
    for suffix in (".csv", ".md", ".tex", ".json"):
        out = tmp_path / f"out{suffix}"
        proc = _cli("compare", "--qrels", qrels_path, *paths, "--metrics", "hit@1,mrr",
                    "--out", out)  # fmt: skip
        assert proc.returncode == 0, proc.stderr
        assert out.stat().st_size > 0
    csv = pd.read_csv(tmp_path / "out.csv")
    assert len(csv) == 6  # 3 pairs x 2 metrics
    assert list(csv.columns[: len(COLUMNS)]) == list(COLUMNS)
    same = csv[(csv["a"] == "a") & (csv["b"] == "c")]
    assert (same["p_randomization"] == 1.0).all()
    assert (same["delta"] == 0).all()
    for bad, where in (
        (["--metrics", "hit@0"], "--metrics"),
        (["--out", tmp_path / "x.xlsx"], "unknown output format"),
        (["--out", qrels_path], "is an input file"),
    ):
        proc = _cli("compare", "--qrels", qrels_path, *paths, *bad)
        assert proc.returncode == 2
        assert proc.stderr.count("\n") == 1
        assert where in proc.stderr
    one = _cli("compare", "--qrels", qrels_path, "--run", tmp_path / "a.run")
    assert one.returncode == 2
    assert "at least two runs" in one.stderr
    assert not (tmp_path / "x.xlsx").exists()


@pytest.mark.parametrize(
    ("option", "value", "said"),
    [("--resamples", "1000000000", "1,000,000"), ("--seed", "-1", "non-negative")],
)
def test_compare_refuses_a_bad_resampling_option_in_one_line(
    tmp_path: Path, option: str, value: str, said: str
) -> None:
    """A billion resamples would need a 22 GiB index matrix for 3 queries, a negative seed is
    no seed: each refused up front in one line naming the option, nothing written."""
    (tmp_path / "q.txt").write_text("q1 0 d1 1\nq2 0 d2 1\nq3 0 d3 1\n")
    (tmp_path / "a.run").write_text("q1 Q0 d1 1 2 a\nq2 Q0 d9 1 3 a\nq2 Q0 d2 2 1 a\n")
    (tmp_path / "b.run").write_text("q1 Q0 d2 1 2 b\nq3 Q0 d3 1 1 b\n")
    runs = ["--run", tmp_path / "a.run", "--run", tmp_path / "b.run"]
    proc = _cli("compare", "--qrels", tmp_path / "q.txt", *runs, "--metrics", "mrr",
                option, value, "--out", tmp_path / "o.csv")  # fmt: skip
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1
    assert option in proc.stderr
    assert said in proc.stderr
    assert not (tmp_path / "o.csv").exists()


def test_run_names_are_text_in_markdown_and_latex() -> None:
    """Run names (file stems or NAME=) are escaped as every data string: no superscript from a
    ``^`` in a name, no HTML, code, math or link in Markdown, no unescaped ``>`` in LaTeX."""
    from analysis.cli.compare import render
    from analysis.present.escape import escape_latex, escape_markdown

    rng = np.random.default_rng(0)
    base = rng.random(50)
    names = ["a^b", "<img src>|`c` $x$ [l](http://e.x)", "x>y & z"]
    values = {n: {"m": base + 0.1 * i} for i, n in enumerate(names)}
    table = compare_per_query(values, ["m"], n_resamples=200, seed=0)
    md = render(table, names, ["m"], ".md")
    tex = render(table, names, ["m"], ".tex")
    for name in names:
        assert f"| {escape_markdown(name)} |" in md
        assert f"& {escape_latex(name)} &" in tex
    assert "<img" not in md.replace("\\<img", "")  # only escaped
    assert "a$^{b}$" not in tex
    plain = {n: {"m": base + 0.1 * i} for i, n in enumerate("abc")}
    plain_table = compare_per_query(plain, ["m"], n_resamples=200, seed=0)
    assert render(plain_table, list("abc"), ["m"], ".tex").isascii()  # pdflatex reads it
    assert "^ab" in md  # the letters of the runs a value beats stay as they are


@pytest.mark.parametrize("failing", ["computing", "writing"])
def test_a_per_query_failure_leaves_no_out_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, failing: str
) -> None:
    """``--out`` and ``--per-query`` come together: when the per-query table cannot be made or
    written, the command fails (exit 2) and ``--out`` keeps its previous content (none here)."""
    import errno

    from analysis.cli import _output, compare
    from analysis.core.errors import InputError

    def cannot_make(*args: object) -> pd.DataFrame:
        raise InputError("per-query", None, "cannot be made")

    def full_disk(frame: pd.DataFrame, out: Path):
        def write(path: Path) -> None:
            path.write_text("part")
            raise OSError(errno.ENOSPC, "No space left on device")

        return write

    if failing == "computing":
        monkeypatch.setattr(compare, "per_query_rows", cannot_make)
    else:
        monkeypatch.setattr(_output, "frame_writer", full_disk)
    run_a, qrels = random_collection(43, "ties", n_queries=10)
    qrels_path = tmp_path / "q.txt"
    qrels_path.write_text("".join(f"{q} 0 {d} {r}\n" for q, d, r in qrels.itertuples(index=False)))
    _write_trec(run_a, tmp_path / "a.run")
    out, per = tmp_path / "cmp.md", tmp_path / "per.csv"
    proc = _cli("compare", "--qrels", qrels_path, "--run", tmp_path / "a.run",
                "--run", f"b={tmp_path / 'a.run'}", "--metrics", "mrr",
                "--out", out, "--per-query", per)  # fmt: skip
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1, proc.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.run", "q.txt"]
