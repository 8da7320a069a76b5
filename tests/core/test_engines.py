"""Tests for analysis.core.engines: every engine (memory, duckdb, dask on a local cluster of
separate processes) x every layout (one file; one file of many row groups, query-major or in
random order; whole-query part files, one query cut between two of them) x every id encoding
(string, large_string, dictionary, binary UTF-8, integers) gives the in-memory core's per-query
CSV byte for byte and its warnings, on runs with ties (float32 ties too), duplicate documents,
non-ASCII ids, queries missing from either side; the core itself agrees with pytrec_eval on
each encoding. Then the interface (a file, a folder or a glob for every engine), ``auto``'s
choices and the progress line."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from analysis.core import engines
from analysis.core.engines import Options, auto, passes
from analysis.core.metrics import evaluate_arrays, qrels_arrays, run_arrays
from analysis.core.progress import Progress
from tests.core.test_duckdb import UNICODE, _codes, _csv_bytes, _frame
from tests.helpers import ALL_METRICS, assert_matches_pytrec, random_collection

ENCODINGS = ("string", "large_string", "dictionary", "binary", "integer")
LAYOUTS = ("one file", "row groups, query-major", "row groups, random order", "parts")


def _collection() -> tuple[pd.DataFrame, pd.DataFrame]:
    """120 queries x 60 docs (about 7,000 rows): integer scores 0-4 (ties everywhere), some
    scores equal only as float32, duplicate docs, non-ASCII doc ids, queries only in the run
    or only in the qrels; rows in random order."""
    run, qrels = random_collection(31, "ties", n_queries=120, n_docs=60)
    rng = np.random.default_rng(31)
    near = rng.random(len(run)) < 0.05
    run.loc[near, "score"] = run.loc[near, "score"] + 1e-12  # the same float32
    odd = rng.random(len(run)) < 0.03
    run.loc[odd, "doc_id"] = rng.choice(UNICODE, int(odd.sum()))
    dup = run.sample(n=60, random_state=31)
    run = pd.concat([run, dup.assign(score=dup["score"] - 1.0)], ignore_index=True)
    run = run.drop_duplicates(["query_id", "doc_id", "score"]).sample(frac=1.0, random_state=31)
    return run.reset_index(drop=True), qrels


def _as_integers(run: pd.DataFrame, qrels: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The collection with every id replaced by a distinct integer (written in decimal in the
    frames the core reads)."""
    ids = pd.unique(pd.concat([run["query_id"], run["doc_id"], qrels["query_id"], qrels["doc_id"]]))
    numbers = np.random.default_rng(5).permutation(50 * len(ids))[: len(ids)]  # distinct
    number = dict(zip(ids, numbers.tolist(), strict=True))
    out = []
    for frame in (run, qrels):
        frame = frame.copy()
        for column in ("query_id", "doc_id"):
            frame[column] = frame[column].map(lambda x: str(number[x]))
        out.append(frame)
    return out[0], out[1]


_REFERENCE: dict[str, tuple] = {}


def _reference(encoding: str, tmp: Path) -> tuple[pd.DataFrame, pd.DataFrame, bytes, dict]:
    """The collection for an encoding, and the core's CSV bytes and warnings (checked against
    pytrec_eval once)."""
    if encoding not in _REFERENCE:
        run, qrels = _collection()
        if encoding == "integer":
            run, qrels = _as_integers(run, qrels)
        core = evaluate_arrays(*run_arrays(run), qrels_arrays(qrels), ALL_METRICS)
        best = run.sort_values("score", ascending=False).drop_duplicates(["query_id", "doc_id"])
        assert_matches_pytrec(_frame(core), best, qrels)
        _REFERENCE[encoding] = (run, qrels, _csv_bytes(core, tmp / "core.csv"), _codes(core[2]))
    return _REFERENCE[encoding]


def _column(values: pd.Series, encoding: str) -> pa.Array:
    text = pa.array(values.astype(str).tolist(), type=pa.string())
    if encoding == "integer":
        return pa.array(values.astype(np.int64))
    if encoding == "dictionary":
        return text.dictionary_encode()
    return text.cast({"string": pa.string(), "large_string": pa.large_string(),
                      "binary": pa.binary()}[encoding])  # fmt: skip


def _table(run: pd.DataFrame, encoding: str) -> pa.Table:
    return pa.table({"query_id": _column(run["query_id"], encoding),
                     "doc_id": _column(run["doc_id"], encoding),
                     "score": pa.array(run["score"].to_numpy())})  # fmt: skip


def _write(run: pd.DataFrame, encoding: str, layout: str, folder: Path) -> Path:
    """The run written in a layout; returns the path an engine is given."""
    folder.mkdir()
    if layout == "one file":
        pq.write_table(_table(run, encoding), folder / "run.parquet")
        return folder / "run.parquet"
    if layout.startswith("row groups"):
        ordered = run.sort_values("query_id", kind="stable") if "query-major" in layout else run
        pq.write_table(_table(ordered, encoding), folder / "run.parquet", row_group_size=250)
        return folder / "run.parquet"
    ordered = run.sort_values("query_id", kind="stable").reset_index(drop=True)
    cuts = np.linspace(0, len(ordered), 7).astype(int)  # whole queries but at the cuts
    for i in range(6):
        part = ordered.iloc[cuts[i] : cuts[i + 1]]
        pq.write_table(_table(part, encoding), folder / f"part-{i}.parquet", row_group_size=300)
    return folder


@pytest.mark.parametrize("encoding", ENCODINGS)
@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("engine", engines.ENGINES)
def test_every_engine_layout_and_encoding_gives_the_core_bytes(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    request: pytest.FixtureRequest,
    engine: str,
    layout: str,
    encoding: str,
) -> None:
    run, qrels, expected, warnings = _reference(encoding, tmp_path)
    path = _write(run, encoding, layout, tmp_path / "run")
    monkeypatch.setattr(passes, "MAX_ROWS", len(run) // 6)  # several passes
    monkeypatch.setattr(passes, "BYTES_PER_ROW", 2 * 10**9 // (len(run) // 3))  # buckets too
    scheduler = request.getfixturevalue("dask_cluster") if engine == "dask" else None
    got = engines.evaluate(path, qrels_arrays(qrels), ALL_METRICS, engine,
                           Options(scheduler=scheduler))  # fmt: skip
    assert _csv_bytes(got, tmp_path / "got.csv") == expected
    assert _codes(got[2]) == warnings


def test_the_plan_of_each_layout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """What the matrix above runs through: several passes everywhere; row groups and parts of
    whole queries without hash buckets, row groups in random order in buckets."""
    run, _, _, _ = _reference("string", tmp_path)
    monkeypatch.setattr(passes, "MAX_ROWS", len(run) // 6)
    budget = len(run) // 3
    for layout in LAYOUTS[1:]:
        path = _write(run, "string", layout, tmp_path / layout.replace(" ", "_").replace(",", ""))
        layout_of = passes.read_layout(engines.source.run_source(path).files)
        got = passes.plan_run(layout_of, budget, len(run) // 6)
        assert len(got) >= 3, layout
        buckets = {p.buckets for p in got}
        assert buckets == ({-(-len(run) // budget)} if "random" in layout else {1}), layout


@pytest.mark.parametrize("kind", [pa.int64(), pa.uint64()])
def test_integer_scores_beyond_2_53_read_as_the_nearest_double_on_every_engine(
    tmp_path: Path, kind: pa.DataType
) -> None:
    """An integer score column holds values a double cannot hold exactly (2^53 + 1, 2^64 - 1):
    every engine reads each as the nearest double, as DuckDB's cast and trec_eval's ``atof``
    of its text do, and ranks by them."""
    scores = [2**60 + 1, 2**60 - 1, 2**53 + 1, 3, 2**64 - 1 if kind == pa.uint64() else 2]
    path = tmp_path / "run.parquet"
    pq.write_table(pa.table({"query_id": ["q"] * 5, "doc_id": ["a", "b", "c", "d", "e"],
                             "score": pa.array(scores, type=kind)}), path)  # fmt: skip
    run = pd.DataFrame({"query_id": "q", "doc_id": list("abcde"),
                        "score": [float(s) for s in scores]})  # fmt: skip
    qrels = pd.DataFrame({"query_id": ["q", "q"], "doc_id": ["c", "d"], "relevance": [1, 2]})
    expected = _csv_bytes(evaluate_arrays(*run_arrays(run), qrels_arrays(qrels), ALL_METRICS),
                          tmp_path / "core.csv")  # fmt: skip
    for engine in engines.ENGINES:
        got = engines.evaluate(path, qrels_arrays(qrels), ALL_METRICS, engine, Options(threads=1))
        assert _csv_bytes(got, tmp_path / "got.csv") == expected, engine


# -------------------------------------------------------------------------- one interface


def _cli(capsys: pytest.CaptureFixture[str], *args: str | Path) -> tuple[int, str]:
    """``python -m analysis ARGS`` in this process: the exit code and what went to stderr."""
    from analysis.cli import main

    capsys.readouterr()
    code = main([str(a) for a in args])
    return code, capsys.readouterr().err


def test_every_engine_takes_a_file_a_folder_and_a_glob(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run, qrels, expected, _ = _reference("string", tmp_path)
    folder = _write(run, "string", "parts", tmp_path / "parts")
    qrels_path = tmp_path / "qrels.csv"
    qrels.to_csv(qrels_path, index=False)
    globs = (folder / "*.parquet", folder / "**" / "part-*.parquet")
    cases = [("memory", folder), ("memory", globs[1])] + [(e, globs[0]) for e in engines.ENGINES]
    for engine, given in cases:  # (the engine matrix above reads folders on every engine)
        out = tmp_path / "out.csv"
        code, err = _cli(capsys, "evaluate", "--run", given, "--qrels", qrels_path,
                         "--engine", engine, "--metrics", ",".join(ALL_METRICS),
                         "--out", out)  # fmt: skip
        assert code == 0, (engine, given, err)
        assert out.read_bytes() == expected, (engine, given)
        out.unlink()


def test_a_folder_of_other_files_or_an_empty_glob_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q 0 a 1\n")
    (tmp_path / "runs").mkdir()
    (tmp_path / "runs" / "a.parquet").write_text("not parquet")
    cases = ((tmp_path / "runs", "a.parquet: not a Parquet file"),
             (tmp_path / "none" / "*.parquet", "the glob matches no file"))  # fmt: skip
    for engine in engines.ENGINES:
        for given, message in cases:
            code, err = _cli(capsys, "evaluate", "--run", given, "--qrels", qrels,
                             "--engine", engine)  # fmt: skip
            assert code == 2, (engine, err)
            assert err.count("\n") == 1
            assert message in err, (engine, err)


def test_a_run_of_columns_without_rows_is_one_line_on_every_engine(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A Parquet file, a folder of Parquet parts or a CSV table with the run's columns and no
    row is refused as the loaders refuse it (it would score every query 0); a folder whose
    other part holds rows is read."""
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q 0 a 1\n")
    empty = pa.table({"query_id": pa.array([], pa.string()), "doc_id": pa.array([], pa.string()),
                      "score": pa.array([], pa.float64())})  # fmt: skip
    pq.write_table(empty, tmp_path / "run.parquet")
    (tmp_path / "parts").mkdir()
    pq.write_table(empty, tmp_path / "parts" / "a.parquet")
    pq.write_table(empty, tmp_path / "parts" / "b.parquet")
    (tmp_path / "run.csv").write_text("query_id,doc_id,score\n\n")
    (tmp_path / "mixed").mkdir()
    pq.write_table(empty, tmp_path / "mixed" / "a.parquet")
    pq.write_table(pa.table({"query_id": ["q"], "doc_id": ["a"], "score": [1.0]}),
                   tmp_path / "mixed" / "b.parquet")  # fmt: skip
    for engine in engines.ENGINES:
        for given in ("run.parquet", "parts", "run.csv"):
            code, err = _cli(capsys, "evaluate", "--run", tmp_path / given, "--qrels", qrels,
                             "--engine", engine)  # fmt: skip
            assert code == 2, (engine, given, err)
            assert err == f"error: {tmp_path / given}: the table holds no rows (only its columns)\n"
        code, err = _cli(capsys, "evaluate", "--run", tmp_path / "mixed", "--qrels", qrels,
                         "--metrics", "mrr", "--engine", engine)  # fmt: skip
        assert code == 0, (engine, err)


def _evaluate_pairs(
    path: Path,
    pairs: list[tuple[str, str]],
    scores: list[float],
    qrels: pd.DataFrame,
    engine: str,
    scheduler: str | None,
):
    """hit@3 on ``engine`` of the run of ``(query, doc)`` ``pairs`` and ``scores``, written to
    the Parquet file ``path``."""
    queries, docs = zip(*pairs, strict=True)
    pq.write_table(pa.table({"query_id": queries, "doc_id": docs, "score": scores}), path)
    return engines.evaluate(path, qrels_arrays(qrels), "hit@3", engine,
                            Options(scheduler=scheduler))  # fmt: skip


@pytest.mark.parametrize("engine", engines.ENGINES)
def test_a_run_that_matches_no_relevant_doc_is_flagged_on_every_engine(
    tmp_path: Path, request: pytest.FixtureRequest, engine: str
) -> None:
    """Doc ids with a space before them (what a CSV written with ', ' gives) match no qrels
    id, so none of the six queries finds its relevant doc: flagged ``no_match`` on every
    engine; the same run without the spaces finds them and is not flagged."""
    qrels = pd.DataFrame({"query_id": [f"q{i}" for i in range(6)],
                          "doc_id": [f"d{i}" for i in range(6)], "relevance": 1})  # fmt: skip
    scheduler = request.getfixturevalue("dask_cluster") if engine == "dask" else None
    found = {}
    for space in (" ", ""):
        pairs = [(f"q{i}", f"{space}d{(i + j) % 6}") for i in range(6) for j in range(3)]
        got = _evaluate_pairs(tmp_path / f"run{len(space)}.parquet", pairs, [3.0, 2.0, 1.0] * 6,
                              qrels, engine, scheduler)  # fmt: skip
        found[space] = {w.code: w for w in got[2]}
    assert "no_match" not in found[""]
    flagged = found[" "]["no_match"]
    assert flagged.count == 6
    assert "a space before each id" in flagged.message


@pytest.mark.parametrize("engine", engines.ENGINES)
@pytest.mark.parametrize("grade", [0, -1])
def test_a_run_that_finds_only_judged_non_relevant_docs_is_not_flagged(
    tmp_path: Path, request: pytest.FixtureRequest, engine: str, grade: int
) -> None:
    """Each of the six queries' lists holds only documents the qrels judge non-relevant (grade
    0, or a negative grade as TREC pools write it): every hit@3 is 0, but the run and the qrels
    name documents the same way, so the id-convention warning would be a false alarm. The same
    lists with those documents renamed are flagged."""
    qrels = pd.DataFrame(
        [(f"q{i}", f"gold{i}", 1) for i in range(6)]
        + [(f"q{i}", f"n{i}-{j}", grade) for i in range(6) for j in range(2)],
        columns=["query_id", "doc_id", "relevance"],
    )
    scheduler = request.getfixturevalue("dask_cluster") if engine == "dask" else None
    found = {}
    for prefix in ("", "x"):
        pairs = [(f"q{i}", f"{prefix}n{i}-{j}") for i in range(6) for j in range(2)]
        got = _evaluate_pairs(tmp_path / f"run{prefix}.parquet", pairs, [2.0, 1.0] * 6, qrels,
                              engine, scheduler)  # fmt: skip
        assert not got[1]["hit@3"].any()
        found[prefix] = {w.code for w in got[2]}
    assert "no_match" not in found[""], engine
    assert "no_match" in found["x"], engine


def test_a_run_whose_file_name_is_not_utf8_is_one_line_on_every_engine(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Arrow and DuckDB open files by UTF-8 name only: a name holding other bytes (a surrogate
    escape in Python) is refused naming the path, for a Parquet run, a folder of parts holding
    such a file and, on DuckDB and Dask, a TREC run (the memory engine's text reader reads it)."""
    import os

    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q 0 a 1\n")
    odd = os.fsdecode(b"run\xff")
    table = pa.table({"query_id": ["q"], "doc_id": ["a"], "score": [1.0]})
    with (tmp_path / f"{odd}.parquet").open("wb") as f:
        pq.write_table(table, f)
    (tmp_path / f"{odd}.trec").write_text("q Q0 a 1 1.0 x\n")
    (tmp_path / "parts").mkdir()
    with (tmp_path / "parts" / f"{odd}.parquet").open("wb") as f:
        pq.write_table(table, f)
    for engine in engines.ENGINES:
        for given in (f"{odd}.parquet", f"{odd}.trec", "parts"):
            code, err = _cli(capsys, "evaluate", "--run", tmp_path / given, "--qrels", qrels,
                             "--engine", engine)  # fmt: skip
            if engine == "memory" and given.endswith(".trec"):
                assert code == 0, err
                continue
            assert code == 2, (engine, given, err)
            assert err.startswith("error: "), err
            assert err.count("\n") == 1, err
            assert "udcff." in err, err
            assert err.endswith(": the name is not UTF-8 text (bytes of another encoding): "
                                "rename it\n"), err  # fmt: skip


# ---------------------------------------------------------------------------------- auto


def _full_candidate(path: Path, queries: int, docs: int, decimals: int | None = 2) -> Path:
    rng = np.random.default_rng(0)
    scores = rng.random(queries * docs)
    pq.write_table(pa.table({"query_id": np.repeat([f"q{i}" for i in range(queries)], docs),
                             "doc_id": np.tile([f"d{j}" for j in range(docs)], queries),
                             "score": np.round(scores, decimals) if decimals else scores}),
                   path)  # fmt: skip
    return path


def test_auto_measures_the_shape_and_picks_by_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    wide = _full_candidate(tmp_path / "wide.parquet", 4, 3000)  # 12k rows, 3000 per query
    narrow = _full_candidate(tmp_path / "narrow.parquet", 120, 100, decimals=None)
    found = auto.shape(engines.source.run_source(wide).files)
    assert found.rows == 12_000
    assert found.per_query == 3000
    assert found.tied > 0.9  # 2 decimals: nearly every score is shared
    assert auto.shape(engines.source.run_source(narrow).files).tied == 0
    monkeypatch.setattr(auto, "FULL_CANDIDATE_ROWS", 10_000)
    monkeypatch.setattr(auto, "FULL_CANDIDATES", 1000)
    assert engines.choose(wide) == "duckdb"
    assert engines.choose(narrow) == "memory"  # 12k rows, 100 per query, no ties
    assert engines.choose(wide, Options(ties="stable")) == "memory"
    assert engines.choose(wide, Options(diagnostics=True)) == "memory"
    monkeypatch.setattr(auto, "AUTO_ROWS", 11_999)
    assert engines.choose(narrow) == "duckdb"
    text = tmp_path / "run.trec"
    text.write_text("q Q0 a 1 1.0 t\n")
    assert engines.choose(text) == "memory"
    monkeypatch.setattr(auto, "AUTO_TEXT_BYTES", 4)
    assert engines.choose(text) == "duckdb"
    assert engines.choose(tmp_path / "missing.trec") == "memory"  # the loaders name it


# ------------------------------------------------------------------------------ progress


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_shows_after_the_delay_on_a_terminal_only() -> None:
    now = [0.0]
    screen = _Terminal()
    shown = Progress("evaluate", stream=screen, delay=2.0, clock=lambda: now[0])
    shown.plan(10, "passes", 1000)
    shown.advance(1, 100)
    assert screen.getvalue() == ""  # a short run stays silent
    now[0] = 4.0
    shown.advance(1, 100)
    line = screen.getvalue().rsplit("\r\x1b[K", 1)[-1]
    assert line == "evaluate: 2/10 passes, 200 rows, 0:04 elapsed, about 0:16 left"
    shown.close()
    assert screen.getvalue().endswith("\r\x1b[K")  # the line is erased at the end
    piped = io.StringIO()
    silent = Progress("evaluate", stream=piped, delay=0.0, clock=lambda: now[0])
    silent.plan(3, "passes")
    silent.advance()
    silent.close()
    assert piped.getvalue() == ""


def _on_a_terminal(*args: str | Path) -> tuple[int, bytes]:
    """``python -m analysis ARGS`` with stderr on a pseudo-terminal and no progress delay: the
    exit code and what the terminal received."""
    import os
    import pty
    import subprocess
    import sys

    parent, child = pty.openpty()
    env = {**os.environ, "RETRIEVAL_DASHBOARD_PROGRESS_DELAY": "0"}
    proc = subprocess.run(
        [sys.executable, "-m", "analysis", *map(str, args)], stdout=subprocess.PIPE,
        stderr=child, cwd=Path(__file__).resolve().parents[2], env=env, timeout=300,
        check=False,
    )  # fmt: skip
    os.close(child)
    seen = b""
    while True:
        try:
            chunk = os.read(parent, 1 << 16)
        except OSError:
            break
        if not chunk:
            break
        seen += chunk
    os.close(parent)
    return proc.returncode, seen


def test_evaluate_on_a_terminal_shows_passes_and_rows(tmp_path: Path) -> None:
    """The command with stderr on a pseudo-terminal and no delay: the passes and rows show."""
    run, qrels, _, _ = _reference("string", tmp_path)
    folder = _write(run, "string", "parts", tmp_path / "parts")
    qrels_path = tmp_path / "qrels.csv"
    qrels.to_csv(qrels_path, index=False)
    code, seen = _on_a_terminal("evaluate", "--run", folder, "--qrels", qrels_path,
                                "--engine", "duckdb", "--out", tmp_path / "o.csv")  # fmt: skip
    assert code == 0
    assert b"evaluate: " in seen
    assert b"pass" in seen
    assert f"{len(run):,} rows".encode() in seen


def test_import_and_report_on_a_terminal_show_their_steps(tmp_path: Path) -> None:
    """``import`` counts the run files it writes, ``report`` the datasets it evaluates, each
    on the terminal only, the line erased at the end."""
    from tests.bad_input.made import OK_BUNDLE, import_folder

    code, seen = _on_a_terminal("import", "geoglue", "--root", import_folder(tmp_path),
                                "--baselines", "--out", tmp_path / "bundle")  # fmt: skip
    assert code == 0, seen
    assert b"import: " in seen
    assert b"run files written" in seen
    code, seen = _on_a_terminal("report", "--bundle", OK_BUNDLE, "--out", tmp_path / "r.html")
    assert code == 0, seen
    assert b"report: " in seen
    assert b"steps (each dataset evaluated, then the report)" in seen
    assert seen.rstrip(b"\r\n").endswith(b"\r\x1b[K")  # the line is erased at the end


@pytest.mark.parametrize(
    ("column", "values", "message"),
    [
        ("score", [1.0, None, 3.0], "row 2: score None is not a finite number"),
        ("score", [1.0, 2.0, float("inf")], "row 3: score inf is not a finite number"),
        ("query_id", ["q1", None, "q2"], "row 2: query_id is missing"),
        ("doc_id", [None, "b", "c"], "row 1: doc_id is missing"),
    ],
)
def test_a_missing_id_or_a_bad_score_names_the_file_and_row_on_every_engine(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], column: str, values: list, message: str
) -> None:
    data = {"query_id": ["q1", "q1", "q2"], "doc_id": ["a", "b", "c"], "score": [1.0, 2.0, 3.0]}
    run = tmp_path / "run.parquet"
    pq.write_table(pa.table({**data, column: values}), run)
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 a 1\n")
    for engine in engines.ENGINES:
        code, err = _cli(capsys, "evaluate", "--run", run, "--qrels", qrels, "--engine", engine)
        assert (code, err) == (2, f"error: {run}: {message}\n"), engine
