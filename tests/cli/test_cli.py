"""Tests for ``python -m analysis evaluate|validate`` from the repo root (the commands through
:func:`analysis.cli.main`), and what its process entry points set up in a fresh interpreter."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from analysis.cli import main
from analysis.cli._heap import glibc
from analysis.core.metrics import evaluate
from analysis.io import load_qrels, load_run
from tests.helpers import run_main

RUN = """\
# a comment line
q1 Q0 a 1 3.0 sys
q1 Q0 b 2 2.0 sys
q1 Q0 c 3 2.0 sys
q1 Q0 d 4 1.0 sys
007 Q0 x 1 1.0 sys
007 Q0 y 2 1.0 sys
007 Q0 x 3 0.5 sys
extra Q0 a 1 1.0 sys
"""
QRELS = """\
q1 0 b 1
q1 0 z 2
007 0 x 1
7 0 x 1
"""
STARK_QA = 'id,query,answer_ids\n0,"first\nquery","[5, 7]"\n1,second,[9]\n2,third,[1]\n'
ROOT = Path(__file__).resolve().parents[2]
STARK_EVAL = 'idx,query_id,pred_rank,hit@1\n0,0,"[7, 3, 5]",1.0\n1,1,"[1, 2, 9]",0.0\n'


_cli = run_main


def _digest(paths: list[Path]) -> dict[Path, str]:
    return {p: hashlib.sha256(p.read_bytes()).hexdigest() for p in paths}


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    out = {
        "run": tmp_path / "a.run",
        "qrels": tmp_path / "a.qrels",
        "qa": tmp_path / "stark_qa.csv",
        "eval": tmp_path / "eval_results_test.csv",
    }
    out["run"].write_text(RUN)
    out["qrels"].write_text(QRELS)
    out["qa"].write_text(STARK_QA)
    out["eval"].write_text(STARK_EVAL)
    return out


def _assert_no_traceback(proc: subprocess.CompletedProcess[str]) -> None:
    assert "Traceback" not in proc.stdout
    assert "Traceback" not in proc.stderr


def test_evaluate_writes_csv_with_the_requested_columns(
    files: dict[str, Path], tmp_path: Path
) -> None:
    out = tmp_path / "x.csv"
    inputs = [files["run"], files["qrels"]]
    before = _digest(inputs)
    proc = _cli(
        "evaluate", "--run", files["run"], "--qrels", files["qrels"],
        "--metrics", "hit@1,mrr,nDCG@10", "--out", out,
    )  # fmt: skip
    _assert_no_traceback(proc)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    assert _digest(inputs) == before

    table = pd.read_csv(out, dtype={"query_id": str})
    assert list(table.columns) == ["query_id", "hit@1", "mrr", "nDCG@10"]
    assert table["query_id"].tolist() == ["q1", "007", "7"]  # one row per qrels query
    assert table.loc[2, ["hit@1", "mrr", "nDCG@10"]].tolist() == [0.0, 0.0, 0.0]  # missing

    expected = evaluate(load_run(files["run"]), load_qrels(files["qrels"]), "hit@1,mrr,nDCG@10")
    for column in ("hit@1", "mrr", "nDCG@10"):
        np.testing.assert_allclose(table[column], expected[column], rtol=0, atol=1e-12)
    # q1 under trec_eval ties: a, c, b (c > b), d -> first gold b at rank 3
    assert table.loc[0, "mrr"] == pytest.approx(1 / 3, abs=1e-12)

    lines = proc.stdout.splitlines()
    assert lines[0].split() == ["metric", "mean", "n"]
    means = {line.split()[0]: line.split()[1:] for line in lines[1:4]}
    assert list(means) == ["hit@1", "mrr", "nDCG@10"]
    for column, (mean, n) in means.items():
        assert float(mean) == pytest.approx(expected[column].mean(), abs=5e-5)
        assert n == "3"
    warnings = [line for line in lines if line.startswith("warning: ")]
    assert (
        "warning: 1 of 3 queries in the qrels is missing from the run; it scores 0 on "
        "every metric (as trec_eval -c)" in warnings
    )
    assert any("1 of 3 queries in the run is not in the qrels" in w for w in warnings)
    assert any("1 duplicate document in the run (in 1 query)" in w for w in warnings)
    assert any("have tied scores" in w or "has tied scores" in w for w in warnings)


def test_evaluate_writes_parquet_with_diagnostics(files: dict[str, Path], tmp_path: Path) -> None:
    out = tmp_path / "x.parquet"
    proc = _cli(
        "evaluate", "--run", files["run"], "--qrels", files["qrels"],
        "--metrics", "recall@2,P@2", "--out", out, "--diagnostics",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    table = pd.read_parquet(out)
    assert list(table.columns[:3]) == ["query_id", "recall@2", "P@2"]
    assert {"n_gold", "first_gold_rank", "tie_sensitive", "recall@2_min", "recall@2_max"} <= set(
        table.columns
    )
    assert table["query_id"].tolist() == ["q1", "007", "7"]
    expected = evaluate(
        load_run(files["run"]), load_qrels(files["qrels"]), "recall@2,P@2", diagnostics=True
    )
    pd.testing.assert_series_equal(table["recall@2"], expected["recall@2"])
    assert table["n_gold"].tolist() == [2, 1, 1]


def test_ties_stable_changes_a_tied_case(files: dict[str, Path], tmp_path: Path) -> None:
    values = {}
    for ties in ("trec_eval", "stable"):
        out = tmp_path / f"{ties}.csv"
        proc = _cli(
            "evaluate", "--run", files["run"], "--qrels", files["qrels"],
            "--metrics", "mrr", "--ties", ties, "--out", out,
        )  # fmt: skip
        assert proc.returncode == 0, proc.stderr
        values[ties] = pd.read_csv(out, dtype={"query_id": str}).set_index("query_id")["mrr"]
    # q1: b and c tie at 2.0; trec_eval puts c first (gold b at rank 3), stable keeps b first
    assert values["trec_eval"]["q1"] == pytest.approx(1 / 3)
    assert values["stable"]["q1"] == pytest.approx(1 / 2)


def test_stark_inputs(files: dict[str, Path], tmp_path: Path) -> None:
    out = tmp_path / "stark.csv"
    before = _digest([files["eval"], files["qa"]])
    proc = _cli(
        "evaluate", "--run", files["eval"], "--qrels", files["qa"],
        "--metrics", "hit@1,recall@2,mrr", "--out", out,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    table = pd.read_csv(out, dtype={"query_id": str}).set_index("query_id")
    assert table.to_dict("index") == {
        "0": {"hit@1": 1.0, "recall@2": 0.5, "mrr": 1.0},
        "1": {"hit@1": 0.0, "recall@2": 0.0, "mrr": pytest.approx(1 / 3)},
        "2": {"hit@1": 0.0, "recall@2": 0.0, "mrr": 0.0},  # not in the eval file
    }
    assert _digest([files["eval"], files["qa"]]) == before


def test_validate_prints_warnings_and_exits_0(files: dict[str, Path], tmp_path: Path) -> None:
    proc = _cli("validate", "--run", files["run"], "--qrels", files["qrels"])
    assert proc.returncode == 0, proc.stderr
    _assert_no_traceback(proc)
    lines = proc.stdout.splitlines()
    assert lines[0] == "3 queries in the qrels, 8 run lines"
    codes = " ".join(lines[1:])
    for text in ("missing from the run", "not in the qrels", "duplicate document", "tied scores"):
        assert text in codes
    assert all(line.startswith("warning: ") for line in lines[1:])
    # clean data
    run = tmp_path / "clean.run"
    run.write_text("q Q0 a 1 2.0 s\nq Q0 b 2 1.0 s\n")
    qrels = tmp_path / "clean.qrels"
    qrels.write_text("q 0 a 1\n")
    proc = _cli("validate", "--run", run, "--qrels", qrels)
    assert proc.returncode == 0
    assert proc.stdout.splitlines() == ["1 query in the qrels, 2 run lines", "no problems found"]
    run.write_text("q Q0 a 1 2.0 s\n")
    proc = _cli("validate", "--run", run, "--qrels", qrels)
    assert proc.stdout.splitlines() == ["1 query in the qrels, 1 run line", "no problems found"]


@pytest.mark.parametrize(
    ("case", "where"),
    [
        ("five_columns", "{run}:3:"),
        ("nan_score", "{run}:4:"),
        ("missing_file", "{tmp}/absent.run:"),
        ("bad_qrels", "{qrels}:2:"),
        ("unknown_metric", "--metrics:"),
        ("bad_ties", "argument --ties"),
        ("empty_id_in_csv", "{tmp}/run.csv:3:"),
    ],
)
def test_bad_input_exits_2_with_one_error_line(
    files: dict[str, Path], tmp_path: Path, case: str, where: str
) -> None:
    run, qrels = files["run"], files["qrels"]
    args: list[str | Path] = ["--run", run, "--qrels", qrels]
    if case == "five_columns":
        run.write_text("# c\nq1 Q0 a 1 3.0 s\nq1 Q0 b 2 2.0\n")
    elif case == "nan_score":
        run.write_text("q1 Q0 a 1 3.0 s\n\n# note\nq1 Q0 b 2 nan s\n")
    elif case == "missing_file":
        args[1] = tmp_path / "absent.run"
    elif case == "bad_qrels":
        qrels.write_text("q1 0 b 1\nq1 0 z high\n")
    elif case == "unknown_metric":
        args += ["--metrics", "hit@1,mapp@5"]
    elif case == "bad_ties":
        args += ["--ties", "random"]
    elif case == "empty_id_in_csv":
        run = tmp_path / "run.csv"
        run.write_text("query_id,doc_id,score\nq1,a,1.0\n,b,2.0\n")
        args[1] = run
    inputs = [p for p in (run, qrels) if p.exists()]
    before = _digest(inputs)
    out = tmp_path / "out.csv"
    proc = _cli("evaluate", *args, "--out", out)
    _assert_no_traceback(proc)
    assert proc.returncode == 2
    err = proc.stderr.splitlines()
    assert len(err) == 1, proc.stderr
    assert err[0].startswith("error: ")
    assert where.format(run=run, qrels=qrels, tmp=tmp_path) in err[0]
    assert not out.exists()
    assert _digest(inputs) == before


def test_validate_bad_input(files: dict[str, Path]) -> None:
    files["run"].write_text("q1 Q0 a 1 inf s\n")
    proc = _cli("validate", "--run", files["run"], "--qrels", files["qrels"])
    assert proc.returncode == 2
    assert proc.stderr == f"error: {files['run']}:1: score 'inf' is not a finite number\n"


_SETTINGS = ("ARROW_DEFAULT_MEMORY_POOL", "NUMPY_MADVISE_HUGEPAGE", "MALLOC_MMAP_MAX_")
_SHOW = (
    "import atexit, os\n"
    "def _show():\n"
    "    import pyarrow as pa\n"
    "    print(pa.default_memory_pool().backend_name, os.environ.get('NUMPY_MADVISE_HUGEPAGE'))\n"
    "atexit.register(_show)\n"
)
#: Each way the command line starts its own process: ``python -m analysis`` and the console
#: script's entry point (``analysis.cli:console``).
_STARTS = {
    "python -m analysis": "import runpy\nrunpy.run_module('analysis', run_name='__main__')\n",
    "console script": "import sys\nfrom analysis.cli import console\nsys.exit(console())\n",
}


def _allocation(code: str, *args: str, **extra: str) -> list[str]:
    """What ``code`` prints in a fresh interpreter (arguments ``args``) whose environment has
    none of the allocation settings (plus ``extra``)."""
    env = {k: v for k, v in os.environ.items() if k not in _SETTINGS} | extra
    cmd = [sys.executable, "-c", code, *args]
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    return out.stdout.split()[-2:]


@pytest.mark.skipif(not glibc(), reason="the allocation settings apply to glibc only")
@pytest.mark.parametrize("start", list(_STARTS))
def test_the_command_line_shares_one_heap_unless_malloc_is_configured(
    start: str, files: dict[str, Path]
) -> None:
    """Started as its own process, the command line has Arrow allocate from the C library and
    numpy ask for no huge pages (set before either loads); a ``MALLOC_MMAP_MAX_`` of the user's
    leaves both."""
    args = ("evaluate", "--run", str(files["run"]), "--qrels", str(files["qrels"]))
    assert _allocation(_SHOW + _STARTS[start], *args) == ["system", "0"]
    own = _allocation(_SHOW)  # pyarrow's own choice (mimalloc in the wheels)
    assert own[0] != "system"
    assert _allocation(_SHOW + _STARTS[start], *args, MALLOC_MMAP_MAX_="65536") == own


def test_importing_or_calling_the_command_line_leaves_the_process_as_it_is(
    files: dict[str, Path],
) -> None:
    """``import analysis.cli`` and ``main()`` inside another program change neither the
    environment nor the allocator: only the process entry points tune them."""
    code = (
        "import os, sys\n"
        "before = dict(os.environ)\n"
        "import analysis.cli\n"
        "same_after_import = dict(os.environ) == before\n"
        "loaded = [m for m in ('numpy', 'pyarrow') if m in sys.modules]\n"
        "code = analysis.cli.main(sys.argv[1:])\n"
        "import pyarrow as pa\n"
        "print(same_after_import, dict(os.environ) == before, loaded, code, "
        "pa.default_memory_pool().backend_name != 'system')\n"
    )
    env = {k: v for k, v in os.environ.items() if k not in _SETTINGS}
    args = ["evaluate", "--run", str(files["run"]), "--qrels", str(files["qrels"])]
    out = subprocess.run([sys.executable, "-c", code, *args], env=env, capture_output=True,
                         text=True, cwd=ROOT, check=True)  # fmt: skip
    assert out.stdout.splitlines()[-1] == "True True [] 0 True"


def _nul_bundle(folder: Path, dataset: str, queries: str | None) -> Path:
    """A one-dataset bundle in ``folder`` named ``dataset`` (TOML escapes allowed), with
    ``queries`` as its queries path when given."""
    (folder / "d" / "runs").mkdir(parents=True)
    (folder / "d" / "qrels.csv").write_text("query_id,doc_id,relevance\nq1,a,1\n")
    (folder / "d" / "runs" / "m.csv").write_text("query_id,doc_id,score\nq1,a,1.0\n")
    extra = f'queries = "{queries}"\n' if queries else ""
    (folder / "bundle.toml").write_text(
        f'[datasets."{dataset}"]\nqrels = "d/qrels.csv"\nruns = "d/runs"\n{extra}'
    )
    return folder


def test_report_on_a_manifest_path_with_a_nul_byte_is_one_line(tmp_path: Path) -> None:
    """A NUL byte in a path of ``bundle.toml``: one error line naming the manifest."""
    bundle = _nul_bundle(tmp_path, "d", "d/q\\u0000.csv")
    out = tmp_path / "r.html"
    proc = _cli("report", "--bundle", bundle, "--out", out)
    _assert_no_traceback(proc)
    assert proc.returncode == 2
    err = proc.stderr.splitlines()
    assert len(err) == 1, proc.stderr
    assert err[0].startswith(f"error: {bundle / 'bundle.toml'}: dataset 'd': queries ")
    assert err[0].endswith("the name holds a NUL byte")
    assert not out.exists()


def test_report_of_a_dataset_named_with_a_nul_byte(tmp_path: Path) -> None:
    """A dataset name is text, a NUL byte included: its default files are looked up in a folder
    of that name (none can exist), and the report is written."""
    bundle = _nul_bundle(tmp_path, "d\\u0000", None)
    out = tmp_path / "r.html"
    proc = _cli("report", "--bundle", bundle, "--out", out)
    _assert_no_traceback(proc)
    assert proc.returncode == 0, proc.stderr
    assert "Datasets: d\0." in out.read_text(encoding="utf-8")


def test_output_the_terminal_cannot_encode_is_escaped_not_a_traceback(tmp_path: Path) -> None:
    """Under ``PYTHONIOENCODING=ascii`` the geo report's Chinese POI name is written as a
    ``\\u`` escape on standard output (as standard error writes one) instead of ending in a
    UnicodeEncodeError; a ``main()`` inside another program keeps that program's stdout."""
    pois = tmp_path / "pois.csv"
    pois.write_text("doc_id,text,lat,lon\n银行,x,30.0,120.0\nb,y,30.0,120.0\n", encoding="utf-8")
    env = {**os.environ, "PYTHONIOENCODING": "ascii"}
    out = subprocess.run([sys.executable, "-m", "analysis", "geo", "--pois", str(pois)], env=env,
                         capture_output=True, text=True, cwd=ROOT)  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert '"doc_ids": ["\\u94f6\\u884c", "b"]' in out.stdout
    plain = tmp_path / "plain.csv"
    plain.write_text("doc_id,text,lat,lon\na,x,30.0,120.0\n")
    code = "import sys, analysis.cli; analysis.cli.main(sys.argv[1:]); print(sys.stdout.errors)"
    inside = subprocess.run([sys.executable, "-c", code, "geo", "--pois", str(plain)], env=env,
                            capture_output=True, text=True, cwd=ROOT, check=True)  # fmt: skip
    assert inside.stdout.splitlines()[-1] == "strict"


@pytest.mark.parametrize("command", ["evaluate", "compare"])
def test_a_closed_standard_output_still_writes_out(
    files: dict[str, Path], tmp_path: Path, command: str
) -> None:
    """``... --out FILE | head -1``: standard output closes after the first line. The command
    ends with one line and exit code 2, as for any output that cannot be written, and still
    writes ``--out`` whole (unbuffered standard output fails at the first print after that)."""
    out = tmp_path / "out.csv"
    runs = ["--run", files["run"]] if command == "evaluate" else ["--run", files["run"]] * 2
    args = [command, *runs, "--qrels", files["qrels"], "--out", out]
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen([sys.executable, "-m", "analysis", *map(str, args)], cwd=ROOT,
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)  # fmt: skip
    assert proc.stdout is not None
    assert proc.stderr is not None
    proc.stdout.close()  # the reader is gone before the first line is written
    stderr = proc.stderr.read()
    assert proc.wait(timeout=300) == 2
    assert stderr == "error: stdout: cannot write: broken pipe\n"
    assert _cli(*args[:-2], "--out", tmp_path / "again.csv").returncode == 0
    assert out.read_bytes() == (tmp_path / "again.csv").read_bytes()


def test_notes_writes_both_outputs_or_neither(tmp_path: Path) -> None:
    """``notes --csv A --qrels B`` where B cannot be written: one line, exit 2, and no A either
    (the two outputs come together, as ``compare``'s ``--out`` and ``--per-query``)."""
    from tests.bad_input.made import OK_BUNDLE, make, run_analysis

    csv = tmp_path / "open" / "notes.csv"
    csv.parent.mkdir()
    qrels = make("readonly_folder", tmp_path / "made", name="amended.qrels")
    args = ["notes", "--bundle", str(OK_BUNDLE), "--dataset", "web", "--notes-dir",
            str(tmp_path / "notes"), "--csv", str(csv), "--qrels", str(qrels)]  # fmt: skip
    proc = run_analysis(args, tmp_path, "readonly_folder")
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.startswith(f"error: {qrels}: cannot write: permission denied")
    assert list(csv.parent.iterdir()) == []


@pytest.mark.parametrize("summary", ["run.metrics.json", "leaderboard.csv"])
def test_validate_split_compares_a_summary_without_a_split_on_that_split(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], summary: str
) -> None:
    """``validate --split dev.txt``: a summary that names no split of its own (``<run>.metrics
    .json``, a leaderboard row) is compared on the split's queries, as the run is evaluated,
    not on every query of the qrels (then "a different split: ... split dev.txt")."""
    (tmp_path / "qrels.txt").write_text("".join(f"q{i} 0 d{i} 1\n" for i in range(4)))
    run = tmp_path / "run.txt"
    run.write_text("q0 Q0 d0 1 2 r\nq1 Q0 d1 1 2 r\nq2 Q0 x 1 2 r\nq3 Q0 y 1 2 r\n")
    (tmp_path / "dev.txt").write_text("q0\nq1\n")
    text = '{"hit@1": 1.0}' if summary.endswith(".json") else "model,hit@1\nrun,1.0\n"
    (tmp_path / summary).write_text(text)
    args = ["validate", "--run", str(run), "--qrels", str(tmp_path / "qrels.txt")]
    assert main([*args, "--split", str(tmp_path / "dev.txt")]) == 0
    out = capsys.readouterr().out
    assert "matches the means computed on the 2 queries of split dev (hit@1)" in out
    assert main(args) == 0  # without --split: every query, where hit@1 is 0.5
    assert "computed on the 4 queries: hit@1 1.0000 (computed 0.5000)" in capsys.readouterr().out
