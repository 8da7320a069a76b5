"""Tests for analysis.core.engines.duckdb: the DuckDB engine gives the in-memory core's per-query
output byte for byte (same CSV), and pytrec_eval's values, on random runs with ties, duplicate
documents, variable-length and non-ASCII ids, from Parquet, TREC text and CSV tables."""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from analysis.cli._common import write_table
from analysis.core import engines
from analysis.core.engines import Options, passes
from analysis.core.engines import duckdb as outofcore
from analysis.core.engines.reduce import prepare_gold
from analysis.core.engines.source import run_source
from analysis.core.errors import InputError
from analysis.core.metrics import DEFAULT_METRICS, evaluate_arrays, qrels_arrays, run_arrays
from analysis.io import load_run
from analysis.io.trec import read_trec_run
from tests.helpers import ALL_METRICS, assert_matches_pytrec, random_collection, run_main

UNICODE = np.array(["é", "z", "€", "😀", "Z", "a b", "ab", "a", "doc-ü", "東京"])


def _collection(seed: int, regime: str, long_ids: bool = False) -> tuple[pd.DataFrame, ...]:
    """A random collection whose scores are exact 32-bit floats (so the tie order is the same
    whether scores are compared as float32 or float64), with duplicate documents and some
    non-ASCII doc ids added."""
    run, qrels = random_collection(seed, regime, long_ids=long_ids)
    rng = np.random.default_rng(seed)
    run["score"] = run["score"].astype(np.float32).astype(np.float64)
    odd = rng.random(len(run)) < 0.02
    run.loc[odd, "doc_id"] = rng.choice(UNICODE, int(odd.sum()))
    dup = run.sample(n=40, random_state=seed)  # duplicate docs, some with a lower score
    dup = dup.assign(score=dup["score"] - rng.integers(0, 2, len(dup)))
    run = pd.concat([run, dup], ignore_index=True).sample(frac=1.0, random_state=seed)
    run = run.drop_duplicates(["query_id", "doc_id", "score"]).reset_index(drop=True)
    run["doc_id"] = run["doc_id"].astype("str")
    return run, qrels


def _parquet(run: pd.DataFrame, path: Path) -> Path:
    pq.write_table(pa.Table.from_pandas(run, preserve_index=False), path, row_group_size=997)
    return path


def evaluate_file(
    run: Path, qrels: tuple, metrics: list[str] | tuple = DEFAULT_METRICS, **options: object
) -> tuple:
    """The DuckDB engine through the engines' interface."""
    return engines.evaluate(run, qrels, metrics, "duckdb", Options(**options))  # type: ignore[arg-type]


def _csv_bytes(result: tuple, path: Path) -> bytes:
    write_table(result[0], result[1], path)
    return path.read_bytes()


def _frame(result: tuple) -> pd.DataFrame:
    ids, columns = result[0], result[1]
    return pd.DataFrame({"query_id": pd.Series(ids.to_pylist(), dtype="str"), **columns})


def _codes(warnings: list) -> dict[str, int]:
    return {w.code: w.count for w in warnings}


@pytest.mark.parametrize(
    ("regime", "long_ids"), [("unique", False), ("ties", False), ("ties", True), ("graded", False)]
)
def test_per_query_csv_is_byte_identical_to_the_core(
    tmp_path: Path, regime: str, long_ids: bool
) -> None:
    run, qrels = _collection(5, regime, long_ids)
    core = evaluate_arrays(*run_arrays(run), qrels_arrays(qrels), ALL_METRICS)
    ours = evaluate_file(_parquet(run, tmp_path / "run.parquet"), qrels_arrays(qrels), ALL_METRICS)
    assert _csv_bytes(ours, tmp_path / "a.csv") == _csv_bytes(core, tmp_path / "b.csv")
    assert _codes(ours[2]) == _codes(core[2])
    assert "duplicate_docs" in _codes(ours[2])
    if regime == "ties":
        assert _codes(ours[2])["ties"] > 0


@pytest.mark.parametrize("regime", ["unique", "ties", "graded"])
def test_every_metric_equals_pytrec_eval(tmp_path: Path, regime: str) -> None:
    run, qrels = _collection(6, regime)
    best = run.sort_values("score", ascending=False).drop_duplicates(["query_id", "doc_id"])
    ours = evaluate_file(_parquet(run, tmp_path / "run.parquet"), qrels_arrays(qrels), ALL_METRICS)
    assert_matches_pytrec(_frame(ours), best, qrels)


def test_relevance_threshold_2_equals_pytrec_eval(tmp_path: Path) -> None:
    run, qrels = _collection(7, "graded")
    best = run.sort_values("score", ascending=False).drop_duplicates(["query_id", "doc_id"])
    ours = evaluate_file(
        _parquet(run, tmp_path / "run.parquet"),
        qrels_arrays(qrels),
        ALL_METRICS,
        relevance_threshold=2,
    )
    assert_matches_pytrec(_frame(ours), best, qrels, relevance_level=2)


def test_signed_zeros_and_infinities_rank_as_in_the_core(tmp_path: Path) -> None:
    """-0.0 and 0.0 are one score (a tie, broken by doc id), and float64 values beyond
    float32's range become +-inf (two of them tie): the engine ranks by counting, the core by
    sorting, and both give the same bytes and the same tie warning."""
    run = pd.DataFrame({
        "query_id": ["q1"] * 5 + ["q2"] * 4,
        "doc_id": ["a", "b", "c", "d", "e", "a", "b", "c", "d"],
        "score": [0.0, -0.0, 1e39, -1.0, 0.0, 1e39, 3.5e38, -1e39, 2e39],
    })  # fmt: skip
    qrels = pd.DataFrame({"query_id": ["q1", "q1", "q2", "q2"], "doc_id": ["a", "b", "b", "c"],
                          "relevance": [1, 2, 1, 1]})  # fmt: skip
    core = evaluate_arrays(*run_arrays(run), qrels_arrays(qrels), ALL_METRICS)
    ours = evaluate_file(_parquet(run, tmp_path / "run.parquet"), qrels_arrays(qrels), ALL_METRICS)
    assert _csv_bytes(ours, tmp_path / "a.csv") == _csv_bytes(core, tmp_path / "b.csv")
    assert _codes(ours[2]) == _codes(core[2])
    assert _codes(ours[2])["ties"] == 2


def test_warning_examples_are_the_cores_whatever_order_the_engine_reduces_in(
    tmp_path: Path,
) -> None:
    """300 run queries, half outside the qrels, every one with a tie: the example ids of the
    "not in the qrels" and "ties" warnings are the core's (DuckDB groups queries by hash, in no
    fixed order)."""
    queries = [f"q{i}" for i in range(300)]
    run = pd.DataFrame({
        "query_id": [q for q in queries for _ in range(3)],
        "doc_id": ["a", "b", "c"] * 300,
        "score": [1.0, 1.0, 0.5] * 300,
    })  # fmt: skip
    qrels = pd.DataFrame({"query_id": queries[150:], "doc_id": "a", "relevance": 1})
    core = evaluate_arrays(*run_arrays(run), qrels_arrays(qrels), ["hit@1"])
    ours = evaluate_file(_parquet(run, tmp_path / "run.parquet"), qrels_arrays(qrels), ["hit@1"])
    examples = {w.code: w.examples for w in core[2]}
    assert {w.code: w.examples for w in ours[2]} == examples
    assert examples["not_in_qrels"] == ("q0", "q1", "q10", "q100", "q101")
    assert examples["ties"] == ("q150", "q151", "q152", "q153", "q154")


def test_scores_tie_as_32_bit_floats_and_doc_ids_descend_by_bytes(tmp_path: Path) -> None:
    # 1.0 and 1.0 + 1e-12 differ as doubles but are one float32: trec_eval sees a tie and
    # orders the docs by id descending by bytes ("😀" > "€" > "é" > "z" > "a").
    docs = ["a", "z", "é", "€", "😀"]
    run = pd.DataFrame(
        {
            "query_id": ["q"] * 5 + ["r"] * 5,
            "doc_id": docs + docs,
            "score": [1.0, 1.0 + 1e-12, 1.0, 1.0 - 1e-12, 1.0, 2.0, 1.0, 1.0, 1.0, 0.5],
        }
    )
    qrels = pd.DataFrame(
        {"query_id": ["q", "q", "r"], "doc_id": ["a", "é", "z"], "relevance": [1, 1, 1]}
    )
    ours = _frame(evaluate_file(_parquet(run, tmp_path / "run.parquet"), qrels_arrays(qrels),
                                ["mrr", "hit@5", "ndcg@10"]))  # fmt: skip
    # q: order 😀 € é z a -> first gold é at rank 3; r: a (2.0), then the tie € é z, 😀 (0.5)
    assert ours["mrr"].tolist() == [1 / 3, 1 / 4]
    assert_matches_pytrec(ours, run, qrels, ["mrr", "hit@5", "ndcg@10"])


def test_text_and_csv_sources_give_the_same_bytes(tmp_path: Path) -> None:
    run, qrels = _collection(8, "ties")
    run = run[~run["doc_id"].str.contains(" ")]  # TREC fields cannot hold a space
    expected = _csv_bytes(
        evaluate_file(_parquet(run, tmp_path / "run.parquet"), qrels_arrays(qrels)),
        tmp_path / "p.csv",
    )
    lines = [f"{q} Q0 {d} 0 {s!r} tag" for q, d, s in run.itertuples(index=False)]
    trec = tmp_path / "run.trec"
    trec.write_bytes(("\ufeff# header comment\r\n" + "\r\n".join(lines) + "\r\n").encode())
    table = tmp_path / "run.csv"
    run.to_csv(table, index=False)
    for path in (trec, table):
        got = evaluate_file(path, qrels_arrays(qrels))
        assert _csv_bytes(got, tmp_path / "t.csv") == expected, path.name
    assert run_source(trec).kind == "trec"
    assert run_source(table).kind == "csv"


def test_a_hash_inside_a_trec_field_and_comments_of_any_length_read_as_trec_eval_does(
    tmp_path: Path,
) -> None:
    """trec_eval skips a line whose first field starts with ``#``, whatever its number of
    words, and a line of spaces; a ``#`` anywhere else is part of a field (``doc#1``, a doc id
    ``#x``), and fields after the sixth are ignored, as the in-memory engine reads them."""
    run = pd.DataFrame(
        {
            "query_id": ["q#1", "q#1", "q#1", "r", "r"],
            "doc_id": ["doc#1", "d#", "d2", "#x", "y"],
            "score": [3.0, 2.0, 1.0, 1.0, 2.0],
        }
    )
    qrels = pd.DataFrame({"query_id": ["q#1", "r"], "doc_id": ["d#", "#x"], "relevance": [1, 1]})
    expected = _csv_bytes(
        evaluate_file(_parquet(run, tmp_path / "run.parquet"), qrels_arrays(qrels)),
        tmp_path / "p.csv",
    )
    lines = [f"{q} Q0 {d} 0 {s!r} t" for q, d, s in run.itertuples(index=False)]
    lines[-1] += " extra fields"
    comments = ["# a comment of many more words than a run line has", "#", "#q Q0 d2 1 9.0 t", "  "]
    trec = tmp_path / "run.trec"
    trec.write_text("\n".join([comments[0], *lines[:3], *comments[1:], *lines[3:]]) + "\n")
    got = evaluate_file(trec, qrels_arrays(qrels))
    assert _csv_bytes(got, tmp_path / "t.csv") == expected
    memory = evaluate_arrays(*run_arrays(read_trec_run(trec)), qrels_arrays(qrels), DEFAULT_METRICS)
    assert _csv_bytes(memory, tmp_path / "m.csv") == expected


USAGE = "qid Q0 docno rank score tag"


@pytest.mark.parametrize("rank", [1.5, 2.0**53, float("inf")])
@pytest.mark.parametrize("kind", ["parquet", "csv"])
def test_a_rank_that_is_no_whole_number_below_2_53_is_refused_as_the_memory_engine_does(
    tmp_path: Path, kind: str, rank: float
) -> None:
    """A rank-only run's ranks are whole numbers below 2^53 in size (``1.5`` would sit between
    two ranks, ``2^60`` cannot be told from its neighbours as a double): the memory engine
    refuses any other rank, naming its row, and so do the out-of-core engines."""
    run = pd.DataFrame({"query_id": ["q", "q", "q"], "doc_id": ["a", "b", "c"],
                        "rank": [1.0, rank, 3.0]})  # fmt: skip
    qrels = qrels_arrays(pd.DataFrame({"query_id": ["q"], "doc_id": ["b"], "relevance": [1]}))
    path = tmp_path / f"r.{kind}"
    if kind == "parquet":
        _parquet(run, path)
    else:
        run.to_csv(path, index=False)
    with pytest.raises(InputError) as memory:
        load_run(path)
    with pytest.raises(InputError) as duck:
        evaluate_file(path, qrels)
    assert memory.value.message.startswith("rank ")
    assert duck.value.message.endswith(memory.value.message), duck.value.message
    if kind == "csv":
        assert duck.value.line == 3
        return
    assert duck.value.message.startswith("row 2: ")
    with pytest.raises(InputError) as engine:  # the memory engine's own Parquet reader
        engines.evaluate(path, qrels, ["mrr"], "memory", Options())
    assert str(engine.value) == str(duck.value)


def test_a_table_row_of_another_length_says_what_each_engine_reads(tmp_path: Path) -> None:
    """A CSV row with fewer fields than the header is read by the memory engine (the missing
    cells empty), one with more is refused by both: the refusal points to the memory engine
    for the shorter row only, not for every text run."""
    qrels = qrels_arrays(pd.DataFrame({"query_id": ["q"], "doc_id": ["a"], "relevance": [1]}))
    for text in ("query_id,doc_id,score,extra\nq,a,1.0,e\nq,b,2.0\n",
                 "query_id,doc_id,score\nq,a,1.0\nq,b,2.0,zz\n"):  # fmt: skip
        path = tmp_path / "r.csv"
        path.write_text(text)
        with pytest.raises(InputError) as duck:
            evaluate_file(path, qrels)
        assert duck.value.message.endswith(
            "(this engine reads tables whose rows have the header's number of fields; "
            "--engine memory also reads shorter rows)"
        )


def test_a_hexadecimal_score_says_which_engine_reads_it(tmp_path: Path) -> None:
    """trec_eval's ``atof`` reads ``0x1p3`` as 8; DuckDB does not: the line is named with the
    engine that reads it, not called "not a number"."""
    error = _text_error(tmp_path / "r.trec", "q Q0 a 1 1.0 t\nq Q0 b 2 -0x1.8p1 t\n", "q", "a")
    assert error.line == 2
    assert "hexadecimal float" in error.message
    assert "--engine memory" in error.message
    assert read_trec_run(tmp_path / "r.trec")["score"].tolist() == [1.0, -3.0]


def test_a_trec_line_of_too_few_fields_names_its_line_as_the_memory_engine_does(
    tmp_path: Path,
) -> None:
    """A line of five fields, or of six with an empty one (``q\\t\\ta``: five words, as
    trec_eval splits it)."""
    for text in ("q Q0 a 1 1.0 t\nq Q0 b 2 1.0\n", "q\tQ0\ta\t1\t1.0\tt\nq\t\tb\t2\t1.0\tt\n"):
        error = _text_error(tmp_path / "r.trec", text, "q", "a")
        assert (error.line, error.message) == (2, f"expected 6 fields '{USAGE}', found 5")
        with pytest.raises(InputError) as memory:
            read_trec_run(tmp_path / "r.trec")
        assert (memory.value.line, memory.value.message) == (error.line, error.message)


def test_a_csv_table_reads_quoted_fields_as_csv_does(tmp_path: Path) -> None:
    """A CSV table is read as the in-memory engine's loader (pandas) reads it: quoted fields
    (the header's too) unquoted, a comma or a doubled quote inside; a ``#`` at the start of a
    line is data."""
    run, qrels = _collection(12, "ties")
    odd = {"d1": 'say "hi"', "d2": "a,b", "d3": "#x"}
    for frame in (run, qrels):
        frame["doc_id"] = frame["doc_id"].replace(odd)
    run.loc[run["query_id"] == "q1", "query_id"] = "#q1"
    qrels.loc[qrels["query_id"] == "q1", "query_id"] = "#q1"
    expected = _csv_bytes(
        evaluate_file(_parquet(run, tmp_path / "run.parquet"), qrels_arrays(qrels)),
        tmp_path / "p.csv",
    )
    for quoting in (csv.QUOTE_MINIMAL, csv.QUOTE_NONNUMERIC):  # the header quoted too
        table = tmp_path / "run.csv"
        run.to_csv(table, index=False, quoting=quoting)
        got = evaluate_file(table, qrels_arrays(qrels))
        assert _csv_bytes(got, tmp_path / "t.csv") == expected, quoting


def test_a_folder_of_parquet_files_is_one_run(tmp_path: Path) -> None:
    run, qrels = _collection(9, "unique")
    whole = evaluate_file(_parquet(run, tmp_path / "run.parquet"), qrels_arrays(qrels))
    folder = tmp_path / "parts"
    for i, part in enumerate(np.array_split(np.arange(len(run)), 4)):
        (folder / f"part={i}").mkdir(parents=True)
        _parquet(run.iloc[part], folder / f"part={i}" / "data.parquet")
    parts = evaluate_file(folder, qrels_arrays(qrels))
    assert _csv_bytes(parts, tmp_path / "a.csv") == _csv_bytes(whole, tmp_path / "b.csv")


def test_a_run_with_ranks_and_no_scores(tmp_path: Path) -> None:
    run = pd.DataFrame({"query_id": ["q", "q", "q"], "doc_id": ["a", "b", "c"], "rank": [3, 1, 2]})
    qrels = pd.DataFrame({"query_id": ["q"], "doc_id": ["c"], "relevance": [1]})
    ours = _frame(
        evaluate_file(_parquet(run, tmp_path / "r.parquet"), qrels_arrays(qrels), ["mrr"])
    )
    assert ours["mrr"].tolist() == [0.5]


def test_spilling_under_a_tiny_memory_limit_changes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run, qrels = _collection(10, "ties")
    path = _parquet(run, tmp_path / "run.parquet")
    spill = tmp_path / "spill"
    spill.mkdir()
    monkeypatch.setenv(outofcore.TEMP_ENV, str(spill))
    small = evaluate_file(path, qrels_arrays(qrels), memory_limit="32MB", threads=2)
    monkeypatch.delenv(outofcore.TEMP_ENV)
    default = evaluate_file(path, qrels_arrays(qrels))
    assert _csv_bytes(small, tmp_path / "a.csv") == _csv_bytes(default, tmp_path / "b.csv")


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), None])
def test_a_bad_score_in_parquet_names_its_row(tmp_path: Path, bad: float | None) -> None:
    run = pd.DataFrame({"query_id": ["q", "q", "q"], "doc_id": ["a", "b", "c"],
                        "score": [1.0, bad, 0.5]})  # fmt: skip
    qrels = pd.DataFrame({"query_id": ["q"], "doc_id": ["c"], "relevance": [1]})
    with pytest.raises(InputError, match=r"row 2: score .* is not a finite number"):
        evaluate_file(_parquet(run, tmp_path / "r.parquet"), qrels_arrays(qrels))


def _text_error(path: Path, text: str, query: str, doc: str) -> InputError:
    """The InputError of evaluating the run ``text`` (written to ``path`` as it is) against
    qrels judging ``doc`` relevant to ``query``."""
    path.write_text(text, newline="")
    qrels = pd.DataFrame({"query_id": [query], "doc_id": [doc], "relevance": [1]})
    with pytest.raises(InputError) as info:
        evaluate_file(path, qrels_arrays(qrels))
    return info.value


def test_a_bad_score_in_trec_text_names_its_line(tmp_path: Path) -> None:
    error = _text_error(tmp_path / "r.trec", "# c\nq Q0 a 1 1.0 t\nq Q0 b 2 nan t\n", "q", "a")
    assert error.line == 3
    assert "not a finite number" in error.message


@pytest.mark.parametrize(
    "line",
    [
        "q\tQ0\ta b\t2\t3\tt",
        "q\tQ0\ta\t2 9\t3\tt",
        "q Q0 a\x0b 2 3 t",
        "q Q0\x0cx a 2 3 t",
    ],
)
def test_a_trec_line_split_otherwise_by_trec_eval_names_its_line(tmp_path: Path, line: str):
    """trec_eval splits a run line on any ASCII whitespace: a field holding whitespace other
    than the file's delimiter (``a b`` in a tab-separated file, a vertical tab) or an empty
    field would give other ids or scores than the in-memory engine reads, so it names the
    line instead of being read as one field."""
    delim = "\t" if "\t" in line else " "
    text = delim.join(["q", "Q0", "c", "1", "2", "t"]) + f"\n{line}\n"
    error = _text_error(tmp_path / "r.trec", text, "q", "c")
    assert error.line == 2
    assert "--engine memory" in error.message


@pytest.mark.parametrize("odd", ["\u00a0", "\u2003", "\x1c", "\x85"])
def test_a_first_trec_line_with_non_ascii_whitespace_in_an_id_is_read(
    tmp_path: Path, odd: str
) -> None:
    """trec_eval splits run lines on ASCII whitespace only: a doc id holding a no-break space
    (or another character Python's ``str.split`` takes for whitespace) is one field, on the
    first line as on any other."""
    doc = f"a{odd}b"
    path = tmp_path / "r.trec"
    path.write_text(f"q Q0 {doc} 1 2 t\nq Q0 c 2 1 t\n", encoding="utf-8", newline="")
    assert run_source(path).kind == "trec"
    qrels = pd.DataFrame({"query_id": ["q"], "doc_id": [doc], "relevance": [1]})
    assert _frame(evaluate_file(path, qrels_arrays(qrels), ["mrr"]))["mrr"].tolist() == [1.0]


@pytest.mark.parametrize("line", ["q  Q0 a 1 2 t", "q Q0 a 1 2 t ", "q\tQ0 a 1 2 t"])
def test_a_trec_line_of_several_separators_says_which_engine_reads_it(
    tmp_path: Path, line: str
) -> None:
    """Two spaces, a trailing space or a tab beside spaces between fields: trec_eval and the
    memory engine read the line; the out-of-core engines (one delimiter) called it "not a TREC
    run line"."""
    path = tmp_path / "r.trec"
    path.write_text(f"{line}\n", encoding="utf-8")
    with pytest.raises(InputError) as err:
        run_source(path)
    assert str(err.value) == (
        f"{path}:1: the out-of-core engines read TREC lines whose fields one space or one tab "
        "parts; this line has several spaces, or spaces and tabs: --engine memory reads it"
    )
    path.write_text(f"# a comment\n \n{line}\n", encoding="utf-8")  # named by its own number
    with pytest.raises(InputError) as err:
        run_source(path)
    assert err.value.line == 3


def test_a_first_line_that_is_no_run_line_is_named_by_its_number(tmp_path: Path) -> None:
    path = tmp_path / "r.trec"
    path.write_text(" \r\n# c\r\nq1 Q0 x 0.5 run\r\nq1 Q0 y 2 0.4 run\r\n", encoding="utf-8")
    with pytest.raises(InputError) as err:
        run_source(path)
    assert (err.value.line, err.value.message) == (
        3,
        "not a TREC run line (qid Q0 docno rank score tag) nor a table header",
    )


def test_a_bad_score_in_a_quoted_csv_table_names_its_line(tmp_path: Path) -> None:
    text = '"query_id","doc_id","score"\n"#q","a,b",1.0\n"#q","c",nan\n'
    error = _text_error(tmp_path / "r.csv", text, "#q", "a,b")
    assert error.line == 3
    assert "score 'nan' is not a finite number" in error.message


@pytest.mark.parametrize(("name", "text", "line"), [
    ("r.trec", "q Q0 c 1 2 t\nq Q0 a 2 1_000.5 t\n", 2),
    ("r.csv", "query_id,doc_id,score\nq,c,2\nq,a,1_000.5\n", 3),
])  # fmt: skip
def test_a_score_with_digit_separators_in_text_names_its_line(
    tmp_path: Path, name: str, text: str, line: int
) -> None:
    """``1_000.5`` is no number for trec_eval (``atof`` stops at the ``_``) nor for the
    in-memory engine, which names its line; it is not read as 1000.5 (ranking ``a`` first)."""
    error = _text_error(tmp_path / name, text, "q", "c")
    assert error.line == line
    assert "score '1_000.5' is not a number" in error.message


def test_missing_columns_and_malformed_text_are_one_line_errors(tmp_path: Path) -> None:
    qrels = qrels_arrays(pd.DataFrame({"query_id": ["q"], "doc_id": ["a"], "relevance": [1]}))
    no_doc = _parquet(pd.DataFrame({"query_id": ["q"], "score": [1.0]}), tmp_path / "a.parquet")
    with pytest.raises(InputError, match="missing column"):
        evaluate_file(no_doc, qrels)
    ragged = tmp_path / "r.trec"
    ragged.write_text("q Q0 a 1 1.0 t\nq Q0 b 2\n")
    with pytest.raises(InputError, match="expected 6 fields") as info:
        evaluate_file(ragged, qrels)
    assert info.value.line == 2
    assert "\n" not in str(info.value)


_cli = run_main  # analysis.cli.main in this process, read as a separate process is


def test_cli_engines_write_the_same_file(tmp_path: Path) -> None:
    run, qrels = _collection(11, "ties")
    path = _parquet(run, tmp_path / "run.parquet")
    qrels_path = tmp_path / "qrels.csv"
    qrels.to_csv(qrels_path, index=False)
    outs = {}
    for engine in ("memory", "duckdb"):
        outs[engine] = tmp_path / f"{engine}.csv"
        proc = _cli("evaluate", "--run", path, "--qrels", qrels_path, "--engine", engine,
                    "--out", outs[engine])  # fmt: skip
        assert proc.returncode == 0, proc.stderr
        assert "duplicate documents" in proc.stdout
    assert outs["memory"].read_bytes() == outs["duckdb"].read_bytes()
    proc = _cli("evaluate", "--run", path, "--qrels", qrels_path, "--engine", "duckdb",
                "--ties", "stable")  # fmt: skip
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1
    assert "does not implement --ties stable" in proc.stderr


def _big_run(path: Path, n_queries: int, docs: int, seed: int, step: int) -> pd.DataFrame:
    """``n_queries x docs`` lines in Parquet, written in row groups of ``step`` queries; scores
    with many ties (3 decimals), doc ids of 1-7 digits; returns about 4 gold docs per query as
    qrels."""
    rng = np.random.default_rng(seed)
    names = pa.array(rng.permutation(10_000_000)[: docs * 20].astype(str))
    schema = pa.schema(
        [("query_id", pa.string()), ("doc_id", pa.string()), ("score", pa.float64())]
    )
    gold_q, gold_d = [], []
    with pq.ParquetWriter(path, schema) as writer:
        for lo in range(0, n_queries, step):
            m = min(step, n_queries - lo)
            start = rng.integers(0, len(names), m)[:, None]
            pick = ((start + np.arange(docs) * 7) % len(names)).ravel()
            qids = np.repeat(np.array([f"q{i}" for i in range(lo, lo + m)]), docs)
            score = np.round(rng.random(m * docs), 3).astype(np.float32).astype(np.float64)
            writer.write_table(pa.table({"query_id": qids, "doc_id": names.take(pick),
                                         "score": score}, schema=schema))  # fmt: skip
            judged = rng.random(m * docs) < 4 / docs
            gold_q.append(qids[judged])
            gold_d.append(names.take(pick[judged]).to_numpy(zero_copy_only=False))
    return pd.DataFrame({"query_id": np.concatenate(gold_q), "doc_id": np.concatenate(gold_d),
                         "relevance": 1})  # fmt: skip


def test_half_a_million_lines_in_passes_are_byte_identical_between_the_engines(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """500k run lines (5,000 queries x 100 docs, many ties) in row groups of 50k lines whose
    ``query_id`` ranges overlap as text (q1000 < q999), so the plan scans the column and reads
    passes of 100k lines: the engines' CSVs are equal bytes (the 10M-1B sizes are in bench/)."""
    path = tmp_path / "big.parquet"
    qrels = _big_run(path, 5_000, 100, seed=13, step=500)
    assert pq.ParquetFile(path).metadata.num_rows == 500_000
    table = pq.read_table(path)
    core = evaluate_arrays(
        table["query_id"], table["doc_id"], table["score"].to_numpy(), qrels_arrays(qrels)
    )
    del table
    monkeypatch.setattr(passes, "MAX_ROWS", 100_000)
    job = outofcore.make_job(path, Options(), 1)
    assert len(passes.plan_run(job.layout, 10**9, passes.MAX_ROWS)) == 5
    ours = evaluate_file(path, qrels_arrays(qrels), memory_limit="1GB")
    assert _csv_bytes(ours, tmp_path / "a.csv") == _csv_bytes(core, tmp_path / "b.csv")
    assert _codes(ours[2]) == _codes(core[2])


@pytest.mark.parametrize("layout", ["one file", "queries across files", "whole-query files"])
def test_passes_of_whole_queries_change_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, layout: str
) -> None:
    """A run larger than one pass (here a quarter of its rows) gives the single
    pass's bytes and warnings, whether its queries are split by hash buckets (one file, or
    files sharing queries) or by groups of files."""
    run, qrels = _collection(11, "ties", long_ids=True)
    single = evaluate_file(_parquet(run, tmp_path / "whole.parquet"), qrels_arrays(qrels))
    if layout == "one file":
        path = _parquet(run, tmp_path / "run.parquet")
    else:
        path = tmp_path / "parts"
        path.mkdir()
        if layout == "queries across files":
            groups = np.array_split(np.arange(len(run)), 5)  # rows in random order
        else:
            codes = pd.factorize(run["query_id"], sort=True)[0]
            groups = [np.flatnonzero(codes % 7 == i) for i in range(7)]
        for i, rows in enumerate(groups):
            _parquet(run.iloc[rows], path / f"part-{i}.parquet")
    planned: list[list] = []
    plan = passes.plan_run

    def spy(*args: object, **kwargs: object) -> list:
        parts = plan(*args, **kwargs)  # type: ignore[arg-type]
        planned.append(parts)
        return parts

    monkeypatch.setattr(passes, "plan_run", spy)
    budget = len(run) // 4  # a pass holds a quarter of the run, or one whole-query file
    monkeypatch.setattr(passes, "BYTES_PER_ROW", 32 * 10**6 // budget + 1)
    monkeypatch.setattr(passes, "MAX_ROWS", budget)
    got = evaluate_file(path, qrels_arrays(qrels), memory_limit="32MB")
    n_passes = len(planned[0])
    assert n_passes > 3
    if layout == "whole-query files":
        assert all(p.buckets == 1 for p in planned[0])
    else:
        assert all(p.buckets == n_passes for p in planned[0])
    assert _csv_bytes(got, tmp_path / "a.csv") == _csv_bytes(single, tmp_path / "b.csv")
    assert _codes(got[2]) == _codes(single[2])


def test_pass_planning_reads_files_with_a_filename_column_and_names_a_broken_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Planning passes adds a file-name column of its own (a run may have one called
    ``filename``); a file that is not Parquet gets one line naming it."""
    run, qrels = _collection(12, "unique")
    single = evaluate_file(_parquet(run, tmp_path / "whole.parquet"), qrels_arrays(qrels))
    folder = tmp_path / "parts"
    folder.mkdir()
    for i, rows in enumerate(np.array_split(np.arange(len(run)), 3)):
        _parquet(run.iloc[rows].assign(filename="x"), folder / f"part-{i}.parquet")
    monkeypatch.setattr(passes, "MAX_ROWS", len(run) // 3)
    got = evaluate_file(folder, qrels_arrays(qrels))
    assert _csv_bytes(got, tmp_path / "a.csv") == _csv_bytes(single, tmp_path / "b.csv")
    (folder / "part-9.parquet").write_bytes(b"PAR1 not really")
    with pytest.raises(InputError, match=r"part-9\.parquet.*cannot read Parquet"):
        evaluate_file(folder, qrels_arrays(qrels))


def _largest_intermediate(path: Path, qrels: pd.DataFrame) -> int:
    """The most rows any operator of the engine's plan produces on ``path`` (DuckDB's profile)."""
    import json

    import duckdb

    _, _, gold = prepare_gold(qrels_arrays(qrels), ALL_METRICS, 1)
    sql = outofcore.plan_sql(outofcore.make_job(path, Options(), 2))
    profile = path.with_suffix(".profile.json")
    con = duckdb.connect(config={"threads": 2})
    try:
        con.register("gold", gold)
        con.execute("PRAGMA enable_profiling='json'")
        con.execute(f"PRAGMA profiling_output='{profile}'")
        con.sql(sql).fetchall()
        con.execute("PRAGMA disable_profiling")
    finally:
        con.close()

    def rows(node: dict) -> int:
        own = int(node.get("operator_cardinality", node.get("intermediate_rows", 0)) or 0)
        return max([own, *(rows(c) for c in node.get("children", []))])

    return max(rows(node) for node in json.loads(profile.read_text())["operator"])


def test_text_runs_find_the_judged_pairs_before_comparing_rows(tmp_path: Path) -> None:
    """A text scan has no row count for DuckDB's planner; the plan must still compare each
    judged pair with the rows of its query only (3 x 400 per query here), not join every row of
    the run with every other row of its query (400 x 400 per query)."""
    n_queries, per_query = 40, 400
    q = np.repeat([f"q{i}" for i in range(n_queries)], per_query)
    d = np.array([f"d{j}" for j in range(per_query)] * n_queries)
    s = np.tile(np.arange(per_query, 0, -1), n_queries).tolist()
    trec = tmp_path / "run.trec"
    trec.write_text("".join(f"{a} Q0 {b} 0 {c!r} t\n" for a, b, c in zip(q, d, s, strict=True)))
    gold = np.arange(len(q)) % per_query < 3  # the first 3 docs of each query
    qrels = pd.DataFrame({"query_id": q[gold], "doc_id": d[gold], "relevance": 1})
    table = tmp_path / "run.csv"
    pd.DataFrame({"query_id": q, "doc_id": d, "score": s}).to_csv(table, index=False)
    for path in (trec, table):
        assert _largest_intermediate(path, qrels) <= 4 * len(q), path.name  # bad plan: 400x
