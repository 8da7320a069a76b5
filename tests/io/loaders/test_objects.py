"""Runs and qrels from every kind of object a notebook holds (DataFrames, PyTerrier frames and
files, ranx objects and files, ir_datasets tuples, dicts) give the per-query table of the TREC
files of the same run and qrels; bad values are one error line naming them."""

from __future__ import annotations

import gzip
import sys
import types
from collections import namedtuple
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from analysis.core.errors import InputError, MissingDependency
from analysis.core.metrics import evaluate
from analysis.io import detect_format, dicts, load_qrels, load_run
from analysis.io.objects import as_qrels, as_queries, as_run, from_ranx, to_ranx
from tests.io.loaders.ranx_shaped import Qrels, Run

METRICS = ["hit@1", "hit@5", "recall@10", "mrr", "ndcg@10", "map", "P@5"]
TrecQrel = namedtuple("TrecQrel", "query_id doc_id relevance iteration")  # ir_datasets' shape
GenericScoredDoc = namedtuple("GenericScoredDoc", "query_id doc_id score")
GenericQuery = namedtuple("GenericQuery", "query_id text")


def _each_is_one_line(cases) -> None:
    """Each ``(read, obj, message)``: ``read(obj)`` raises the InputError ``message``."""
    for read, obj, message in cases:
        with pytest.raises(InputError) as err:
            read(obj)
        assert str(err.value) == message


def _collection(seed: int = 3) -> tuple[pd.DataFrame, pd.DataFrame]:
    """A run (no doc twice in a query; scores on a coarse grid, so many ties) and graded
    qrels; ids with leading zeros and non-ASCII text; a query only in the qrels and one only
    in the run."""
    rng = np.random.default_rng(seed)
    queries = ["007", "0", "q-1", "查询", *[f"q{i:03d}" for i in range(20)]]
    docs = ["007", "d0", "文档", "doc\u00a0nbsp", *[f"d{i}" for i in range(1, 61)]]
    rows, gold = [], []
    for q in queries[:-1]:
        picked = rng.choice(len(docs), 25, replace=False)
        rows += [(q, docs[i], float(rng.integers(0, 40)) / 8) for i in picked]
        gold += [
            (q, docs[i], int(rng.integers(0, 3))) for i in rng.choice(len(docs), 6, replace=False)
        ]
    gold.append(("only-in-qrels", "d1", 1))
    rows.append((queries[-1], "d2", 1.0))  # only in the run
    run = pd.DataFrame(rows, columns=["query_id", "doc_id", "score"])
    qrels = pd.DataFrame(gold, columns=["query_id", "doc_id", "relevance"])
    return run, qrels


def _nested(frame: pd.DataFrame, value: str) -> dict:
    out: dict = {}
    for q, d, v in frame[["query_id", "doc_id", value]].itertuples(index=False):
        out.setdefault(q, {})[d] = v
    return out


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> dict[str, Path]:
    run, qrels = _collection()
    folder = tmp_path_factory.mktemp("objects")
    trec, trec_qrels = folder / "run.trec", folder / "qrels.txt"
    trec.write_text(
        "".join(
            f"{q} Q0 {d} {i + 1} {s!r} t\n" for i, (q, d, s) in enumerate(run.itertuples(False))
        )
    )
    trec_qrels.write_text("".join(f"{q} 0 {d} {r}\n" for q, d, r in qrels.itertuples(False)))
    return {"run": trec, "qrels": trec_qrels, "folder": folder}


@pytest.fixture(scope="module")
def reference(files) -> pd.DataFrame:
    return evaluate(load_run(files["run"]), load_qrels(files["qrels"]), METRICS)


def _pyterrier(run: pd.DataFrame) -> pd.DataFrame:
    """A PyTerrier result frame: qid, docid (int), docno, rank (0-based), score, query."""
    frame = run.rename(columns={"query_id": "qid", "doc_id": "docno"})
    frame = frame.sort_values(["qid", "score"], ascending=[True, False], kind="stable")
    frame["rank"] = frame.groupby("qid").cumcount()
    frame["docid"] = np.arange(len(frame))
    frame["query"] = "some words"
    return frame[["qid", "docid", "docno", "rank", "score", "query"]]


def _run_kinds(folder: Path) -> dict[str, object]:
    run, _ = _collection()
    ranx_run = Run(_nested(run, "score"), name="bm25")
    out: dict[str, object] = {
        "dataframe": run.sample(frac=1.0, random_state=0),
        "pyterrier frame": _pyterrier(run),
        "pyarrow table": pa.Table.from_pandas(run, preserve_index=False),
        "dict": _nested(run, "score"),
        "ranx Run": ranx_run,
        "ir_datasets scoreddocs": [GenericScoredDoc(*r) for r in run.itertuples(False)],
    }
    _pyterrier(run).drop(columns=["query", "docid"]).to_csv(folder / "pt.csv", index=False)
    out["pyterrier csv"] = folder / "pt.csv"
    for suffix in ("json", "lz4", "trec", "parquet"):
        ranx_run.save(folder / f"ranx-run.{suffix}")
        out[f"ranx {suffix} file"] = folder / f"ranx-run.{suffix}"
    gz = folder / "ranx-run.json.gz"
    gz.write_bytes(gzip.compress((folder / "ranx-run.json").read_bytes()))
    out["ranx json.gz file"] = gz
    return out


def _qrels_kinds(folder: Path) -> dict[str, object]:
    _, qrels = _collection()
    ranx_qrels = Qrels(_nested(qrels, "relevance"))
    tuples = [TrecQrel(q, d, r, "0") for q, d, r in qrels.itertuples(False)]
    out: dict[str, object] = {
        "dataframe": qrels,
        "pyterrier frame": qrels.rename(
            columns={"query_id": "qid", "doc_id": "docno", "relevance": "label"}
        ),
        "ir_datasets qrels_iter": iter(tuples),
        "ir_datasets frame": pd.DataFrame(tuples),
        "ir_datasets dataset": types.SimpleNamespace(qrels_iter=lambda: iter(tuples)),
        "dict": _nested(qrels, "relevance"),
        "ranx Qrels": ranx_qrels,
    }
    for suffix in ("json", "trec", "parquet"):
        ranx_qrels.save(folder / f"ranx-qrels.{suffix}")
        out[f"ranx {suffix} file"] = folder / f"ranx-qrels.{suffix}"
    return out


RUN_KINDS = [
    "dataframe",
    "pyterrier frame",
    "pyarrow table",
    "dict",
    "ranx Run",
    "ir_datasets scoreddocs",
    "pyterrier csv",
    "ranx json file",
    "ranx lz4 file",
    "ranx trec file",
    "ranx parquet file",
    "ranx json.gz file",
]
QRELS_KINDS = [
    "dataframe",
    "pyterrier frame",
    "ir_datasets qrels_iter",
    "ir_datasets frame",
    "ir_datasets dataset",
    "dict",
    "ranx Qrels",
    "ranx json file",
    "ranx trec file",
    "ranx parquet file",
]


@pytest.mark.parametrize("kind", RUN_KINDS)
def test_every_kind_of_run_gives_the_trec_files_table(kind, files, reference) -> None:
    obj = _run_kinds(files["folder"])[kind]
    got = evaluate(as_run(obj, f"run {kind!r}"), load_qrels(files["qrels"]), METRICS)
    pd.testing.assert_frame_equal(got, reference)


@pytest.mark.parametrize("kind", QRELS_KINDS)
def test_every_kind_of_qrels_gives_the_trec_files_table(kind, files, reference) -> None:
    obj = _qrels_kinds(files["folder"])[kind]
    got = evaluate(load_run(files["run"]), as_qrels(obj, f"qrels {kind!r}"), METRICS)
    pd.testing.assert_frame_equal(got, reference)


def test_ids_stay_strings_and_formats_are_detected_from_the_content(tmp_path, files) -> None:
    folder = files["folder"]
    assert detect_format(folder / "ranx-run.json") == "ranx_json"
    assert detect_format(folder / "ranx-run.lz4") == "ranx_lz4"
    renamed = tmp_path / "run.txt"  # whatever the name: the content decides
    renamed.write_bytes((folder / "ranx-run.json").read_bytes())
    assert detect_format(renamed) == "ranx_json"
    jsonl = tmp_path / "run.jsonl"
    jsonl.write_text('{"query_id": "007", "doc_id": "d1", "score": 1}\n')
    assert detect_format(jsonl) == "table"
    assert load_run(folder / "pt.csv")["query_id"].iloc[0] in {"007", "0", "q-1", "查询"}
    assert set(load_run(folder / "pt.csv")["query_id"]) == set(load_run(files["run"])["query_id"])
    run = as_run({7: {8: 1.5}, "007": {"008": 2}})
    assert run["query_id"].tolist() == ["7", "007"]
    assert run["doc_id"].tolist() == ["8", "008"]


def test_pyterrier_topics_and_ir_datasets_queries() -> None:
    topics = pd.DataFrame({"qid": ["007", "1"], "query": ["black cat", "dog"]})
    got = as_queries(topics)
    assert got[["query_id", "text"]].to_numpy().tolist() == [["007", "black cat"], ["1", "dog"]]
    got = as_queries([GenericQuery("007", "black cat")])
    assert got[["query_id", "text"]].to_numpy().tolist() == [["007", "black cat"]]
    assert as_queries({"007": "black cat"})["query_id"].tolist() == ["007"]


@pytest.mark.parametrize(
    ("obj", "message"),
    [
        (
            {"q1": {"d1": float("nan")}},
            "run: query 'q1', doc 'd1': score nan is not a finite number",
        ),
        ({"q1": {"d1": True}}, "run: query 'q1', doc 'd1': score True is not a number"),
        ({"q1": {"": 1.0}}, "run: query 'q1': empty doc_id"),
        ({"q1": 3.0}, "run: query 'q1': expected a mapping {doc_id: score}, not 3.0"),
        (
            pd.DataFrame({"query_id": [1.0], "doc_id": ["a"], "score": [1.0]}),
            "run: column query_id has type float64; ids must be strings or integers",
        ),
        (
            pd.DataFrame({"qid": ["a"], "docno": ["b"], "score": [np.inf]}, index=["x"]),
            "run: row 'x': score inf is not a finite number",
        ),
        (
            pd.DataFrame({"query_id": ["a"], "doc_id": ["b"]}),
            "run: a run needs a score (or rank) column",
        ),
        (42, "run: cannot read a int as a run"),
    ],
)
def test_bad_runs_are_one_line(obj, message) -> None:
    with pytest.raises(InputError) as err:
        as_run(obj)
    assert str(err.value) == message


def test_bad_qrels_are_one_line() -> None:
    with pytest.raises(
        InputError, match=r"^qrels: query 'q', doc 'd': relevance 0.5 is not an integer$"
    ):
        as_qrels({"q": {"d": 0.5}})
    frame = pd.DataFrame({"qid": ["q"], "docno": ["d"], "label": [1.5]})
    with pytest.raises(InputError, match=r"^qrels: row 0: relevance 1.5 is not an integer"):
        as_qrels(frame)
    with pytest.raises(InputError, match=r"^qrels: rows of int are not records"):
        as_qrels([1, 2])
    graded = pd.DataFrame({"qid": ["q", "q"], "docno": ["d", "e"], "rel": [2, 0]})
    with pytest.raises(InputError, match=r"^qrels: a column 'rel' and no relevance"):
        as_qrels(graded)  # not a list of relevant pairs: e (graded 0) is not relevant


def test_bad_ranx_json_names_the_file_and_line(tmp_path) -> None:
    path = tmp_path / "run.json"
    path.write_text('{\n  "q1": {\n    "d1": 1.5,\n    "d2": "high"\n  }\n}\n')
    with pytest.raises(InputError) as err:
        load_run(path)
    assert str(err.value) == f"{path}:4: query 'q1', doc 'd2': score 'high' is not a number"
    path.write_text('{"q1": {"d1": 1.5}')
    with pytest.raises(InputError, match=r"run.json:1: invalid JSON"):
        load_run(path)
    path.write_text('{"q": ' * 200 + "1" + "}" * 200)
    with pytest.raises(InputError, match="nested deeper than 128 levels"):
        load_run(path)


def test_ranx_lz4_needs_its_packages_and_is_bounded(tmp_path, monkeypatch, files) -> None:
    path = files["folder"] / "ranx-run.lz4"
    monkeypatch.setattr(dicts, "_lz4_modules", lambda: None)
    with pytest.raises(InputError) as err:
        load_run(path)
    assert "needs the lz4 and cbor2 packages (pip install lz4 cbor2" in str(err.value)
    monkeypatch.undo()
    big = Run({"q": {f"d{i:07d}": 1.0 for i in range(20_000)}})
    big.save(tmp_path / "big.lz4")
    monkeypatch.setenv("RETRIEVAL_DASHBOARD_MAX_INPUT_BYTES", "100000")
    with pytest.raises(InputError, match="larger than the input size limit of 100000 bytes"):
        load_run(tmp_path / "big.lz4")


def test_to_ranx_and_from_ranx(monkeypatch, files) -> None:
    monkeypatch.setitem(sys.modules, "ranx", None)  # not installed
    with pytest.raises(MissingDependency, match=r"^to_ranx needs ranx: pip install ranx$"):
        to_ranx(files["run"])
    calls = []
    fake = types.SimpleNamespace(
        Run=types.SimpleNamespace(
            from_dict=lambda d, name=None: calls.append(("run", d, name)) or Run(d, name)
        ),
        Qrels=types.SimpleNamespace(
            from_dict=lambda d: calls.append(("qrels", d, None)) or Qrels(d)
        ),
    )
    monkeypatch.setitem(sys.modules, "ranx", fake)
    run, qrels = load_run(files["run"]), load_qrels(files["qrels"])
    ranx_run = to_ranx(files["run"], name="bm25")
    ranx_qrels = to_ranx(qrels, kind="qrels")
    assert calls[0][0] == "run"
    assert calls[0][2] == "bm25"
    assert calls[0][1]["007"] == _nested(run[run["query_id"] == "007"], "score")["007"]
    assert calls[1][1] == _nested(qrels, "relevance")
    back = evaluate(from_ranx(ranx_run), from_ranx(ranx_qrels), METRICS)
    pd.testing.assert_frame_equal(back, evaluate(run, qrels, METRICS))
    assert list(from_ranx(ranx_qrels).columns) == ["query_id", "doc_id", "relevance"]


# ------------------------------------------------------------------------- hostile objects


class _Raises:
    """An object whose own methods fail, as a half-built notebook object does."""

    def to_pandas(self):
        raise RuntimeError("not materialized")


class _NotAFrame:
    def to_pandas(self):
        return [1, 2]


class _BadDict:
    def to_dict(self):
        raise KeyError("gone")


class _TwoLines:
    def __repr__(self):
        return "first\r\n  second"


def _rows_then_fail():
    yield ("q", "d", 1.0)
    raise ZeroDivisionError("lazy query failed")


class _BadStr(Exception):
    def __str__(self):
        raise RuntimeError


def _raise_bad_str():
    raise _BadStr
    yield  # a generator


@pytest.mark.parametrize(
    ("obj", "message"),
    [
        (pd.DataFrame({"query_id": pd.array([1, None], dtype="Int64"), "doc_id": ["a", "b"],
                       "score": [1.0, 2.0]}), "run: row 1: query_id is missing"),
        (pd.DataFrame({"query_id": ["q", None], "doc_id": ["a", "b"], "score": [1.0, 2.0]}),
         "run: row 1: query_id is missing"),
        ({1: {"d": 1.0}, "1": {"e": 2.0}}, "run: query ids 1 and '1' are both the id '1'; use "
         "one spelling"),
        ({}, "run: holds no data (an empty mapping)"),
        ({"q": {}}, "run: holds no data (every query's mapping is empty)"),
        (pd.DataFrame({"query_id": [], "doc_id": [], "score": []}), "run: no rows (an empty run)"),
        (pa.table({"query_id": pa.array([], pa.string()), "doc_id": pa.array([], pa.string()),
                   "score": pa.array([], pa.float64())}), "run: no rows (an empty run)"),
        (pd.DataFrame([["q", "d", 1.0, 2.0]], columns=["query_id", "doc_id", "score", "score"]),
         "run: column 'score' appears more than once"),
        (pd.DataFrame([["q", "d", 1.0]], columns=pd.MultiIndex.from_tuples(
            [("a", "query_id"), ("a", "doc_id"), ("a", "score")])),
         "run: its columns have several levels; flatten them first"),
        ({"q\ud800": {"d": 1.0}}, r"run: query_id 'q\ud800' is not valid Unicode text"),
        ({"q": {"d\udfff": 1.0}}, r"run: query 'q': doc_id 'd\udfff' is not valid Unicode text"),
        (pd.DataFrame({"query_id": ["q"], "doc_id": pd.Series(["d\ud800"], dtype=object),
                       "score": [1.0]}),
         r"run: row 0: doc_id 'd\ud800' is not valid Unicode text"),
        (_Raises(), "run: _Raises.to_pandas() raised RuntimeError: not materialized"),
        (_NotAFrame(), "run: to_pandas() returned a list, not a DataFrame"),
        (_BadDict(), "run: _BadDict.to_dict() raised KeyError: 'gone'"),
        (_rows_then_fail(), "run: reading its rows raised ZeroDivisionError: lazy query failed"),
        (_raise_bad_str(), "run: reading its rows raised _BadStr"),
        ("runs/a\0b.trec", r"runs/a\0b.trec: a path cannot hold a NUL character"),
        ("", "'': an empty path: name a file"),  # not ".", the current folder
        ({"q": {"d": 10**400}}, "run: query 'q', doc 'd': score 1" + "0" * 58 + "… is not a "
         "finite number"),
        (pd.DataFrame({"query_id": ["q"], "doc_id": ["d"], "score": pd.Series([10**400],
                                                                          dtype=object)}),
         "run: row 0: score 1" + "0" * 58 + "… is not a finite number"),
        (pd.DataFrame({"query_id": ["q"], "doc_id": ["d"], "score": [1 + 2j]}),
         "run: column score has type complex128; expected numbers"),
        (pd.DataFrame({"query_id": ["q"], "doc_id": ["d"], "score": pd.Series([1j],
                                                                          dtype=object)}),
         "run: row 0: score 1j is not a finite number"),
        (pd.DataFrame({"query_id": ["q"], "doc_id": ["d"], "score": pd.Series([np.bool_(True)],
                                                                          dtype=object)}),
         "run: row 0: score True is not a finite number"),
        ([{"query_id": "q", "doc_id": "d", "score": 1.0}, ("q", "e", 1.0)],
         "run: row 1: ('q', 'e', 1.0) is not a mapping as row 0 is"),
        ([("q", "d", 1.0), ("q", "e", 1.0, "tag")], "run: row 1: ('q', 'e', 1.0, 'tag') is not a "
         "tuple of 3 fields (query_id, doc_id, score) as row 0 is"),
        ({"q": _TwoLines()}, "run: query 'q': expected a mapping {doc_id: score}, not first "
         "second"),
        (pd.DataFrame({"query_id": ["q", "q"], "doc_id": ["a", "b"], "rank": [1.5, 2.0]}),
         "run: row 0: rank 1.5 is not a whole number below 2^53 in size"),
        (pd.DataFrame({"query_id": ["q", "q"], "doc_id": ["a", "b"], "rank": [1e30, 2.0]}),
         "run: row 0: rank 1e+30 is not a whole number below 2^53 in size"),
    ],
)  # fmt: skip
def test_hostile_runs_are_one_line(obj, message) -> None:
    """Missing ids, mapping keys that are one id, empty inputs, repeated or multi-level
    columns, text that is no Unicode, objects whose own methods fail or lie, a NUL in a path,
    a value whose text is huge: one line each, never a traceback or a silent row."""
    with pytest.raises(InputError) as err:
        as_run(obj)
    assert str(err.value) == message


def test_texts_that_are_no_unicode_and_qrels_that_are_a_run_are_one_line() -> None:
    """A lone surrogate in a query's or an entity's text crashed the table's construction; a
    float score without relevance made every pair of a run relevant, those scored 0 too."""
    from analysis.io.objects import as_entities

    with pytest.raises(InputError, match=r"^queries: row 0: 'text' '\\ud800' is not valid Unic"):
        as_queries({"q": "\ud800"})
    frame = pd.DataFrame({"doc_id": ["d", "e"], "name": pd.Series(["ok", "x\udc00"], dtype=object)})
    with pytest.raises(InputError, match=r"^entities: row 1: 'name' 'x\\udc00' is not valid"):
        as_entities(frame)
    run = pd.DataFrame({"query_id": ["q", "q"], "doc_id": ["a", "b"], "score": [0.5, 0.0]})
    with pytest.raises(InputError, match=r"^qrels: a score column of type float64 and no rel"):
        as_qrels(run)
    assert as_qrels(run.astype({"score": int}))["relevance"].tolist() == [0, 0]  # ranx's qrels


def test_ids_in_the_index_are_read_as_columns() -> None:
    flat = pd.DataFrame({"query_id": ["q", "q"], "doc_id": ["a", "b"], "score": [2.0, 1.0]})
    indexed = flat.set_index(["query_id", "doc_id"])
    pd.testing.assert_frame_equal(as_run(indexed), as_run(flat))
    assert as_qrels(flat.set_index("query_id").rename(columns={"score": "relevance"}).astype(
        {"relevance": int}))["query_id"].tolist() == ["q", "q"]  # fmt: skip


def test_numbers_of_other_types_are_scores_and_query_texts_may_be_missing() -> None:
    import decimal
    import fractions

    run = as_run({"q": {"a": decimal.Decimal("1.5"), "b": fractions.Fraction(1, 4)}})
    assert run["score"].tolist() == [1.5, 0.25]
    assert as_queries({"q": None, "r": float("nan"), "s": "text"})["text"].tolist() == [
        "", "", "text"
    ]  # fmt: skip
    with pytest.raises(InputError, match=r"^queries: no rows \(an empty mapping\)$"):
        as_queries({})


@pytest.mark.parametrize(
    ("text", "line", "message"),
    [
        ('{\n "q1": {"d1": 1},\n "q1": {"d2": 2}\n}', 3, "query 'q1' is given twice"),
        ('{"q0": {"d1": 1},\n "q1": {"d1": 1,\n  "d1": 2}}', 3,
         "query 'q1': doc 'd1' is given twice"),
        ('{"q1": {}, "q2": {}}', None, "holds no data (every query's mapping is empty)"),
        ('{"q1": {"d1": ' + "9" * 5000 + "}}", None, "invalid JSON: Exceeds the limit (4300 "
         "digits) for integer string conversion: value has 5000 digits"),
        ('{"q1": {"d\\ud800": 1}}', None,
         r"query 'q1': doc_id 'd\ud800' is not valid Unicode text"),
    ],
    ids=["query-twice", "doc-twice", "no-documents", "5000-digits", "surrogate"],
)  # fmt: skip
def test_hostile_ranx_json_is_one_line(tmp_path, text, line, message) -> None:
    """A key given twice (JSON keeps one value: a silent loss), queries without documents, an
    integer beyond Python's conversion limit, an escaped lone surrogate."""
    path = tmp_path / "run.json"
    path.write_text(text)
    with pytest.raises(InputError) as err:
        load_run(path)
    where = f"{path}:{line}" if line else str(path)
    assert str(err.value) == f"{where}: {message}"


def test_a_truncated_lz4_file_says_so(tmp_path) -> None:
    Run({"q": {f"d{i}": 1.0 for i in range(500)}}).save(tmp_path / "run.lz4")
    cut = tmp_path / "cut.lz4"
    cut.write_bytes((tmp_path / "run.lz4").read_bytes()[:-20])
    with pytest.raises(InputError) as err:
        load_run(cut)
    assert str(err.value) == f"{cut}: the LZ4 data is truncated (the file was cut short)"


def test_doc_keys_of_one_query_that_are_one_id_are_one_line() -> None:
    """``{"q": {1: 1.0, "1": 2.0}}`` gave two rows of doc '1' (a duplicate the metric core then
    collapsed to one score); a ranked list may still name a document twice."""
    with pytest.raises(InputError) as err:
        as_run({"q": {1: 1.0, "1": 2.0}})
    assert (
        str(err.value) == "run: query 'q': doc ids 1 and '1' are both the id '1'; use one spelling"
    )
    with pytest.raises(InputError, match=r"^qrels: query 'q': doc ids '7' and 7 are both the id"):
        as_qrels({"q": {"7": 1, 7: 0}})
    assert as_run({"q": {1: 1.0}, "r": {"1": 2.0}})["doc_id"].tolist() == ["1", "1"]
    assert as_run({"q": [1, "1"]})["doc_id"].tolist() == ["1", "1"]


def test_relevance_of_a_table_is_exact_in_the_whole_int64_range() -> None:
    """An int64 column holding 2**63 - 1 was refused as outside the 64-bit range, and Python
    integers of an object column beyond 2^53 were rounded through float64, while the files and
    dicts read both exactly."""
    top, odd = 2**63 - 1, 2**62 + 1

    def qrels(values, dtype=None) -> pd.DataFrame:
        n = len(values)
        return pd.DataFrame({"query_id": ["q"] * n, "doc_id": [f"d{i}" for i in range(n)],
                             "relevance": pd.Series(values, dtype=dtype)})  # fmt: skip

    assert as_qrels(qrels([top, 1]))["relevance"].tolist() == [top, 1]
    assert as_qrels(qrels([odd, 2], object))["relevance"].tolist() == [odd, 2]
    assert as_qrels(qrels([top], "uint64"))["relevance"].tolist() == [top]
    assert as_qrels(qrels([top], pd.ArrowDtype(pa.int64())))["relevance"].tolist() == [top]
    assert as_qrels(qrels([2.0, -1.0]))["relevance"].tolist() == [2, -1]
    for values, dtype, shown in (([2**63], object, "9223372036854775808"),
                                 ([2**63], "uint64", "9223372036854775808"),
                                 ([1, 2.0**63], "float64", "9.223372036854776e+18"),
                                 ([1.5], object, "1.5")):  # fmt: skip
        with pytest.raises(InputError) as err:
            as_qrels(qrels(values, dtype))
        row = len(values) - 1
        assert str(err.value) == (
            f"qrels: row {row}: relevance {shown} is not an integer in the 64-bit range"
        )


def test_from_ranx_refuses_tables_whose_to_dict_maps_columns() -> None:
    """A DataFrame's ``to_dict()`` is ``{column: {row: value}}``: read as a ranx run, a table
    of numbers became a run whose queries were its column names and documents its row labels."""
    numbers = pd.DataFrame({"score": [2.0, 1.0]})
    for obj in (numbers, numbers["score"], pa.table({"score": [1.0]}), {"q": {"d": 1.0}}):
        with pytest.raises(InputError) as err:
            from_ranx(obj)
        name = type(obj).__name__
        assert (
            str(err.value)
            == f"ranx: a {name} is not a ranx Run or Qrels (as_run and as_qrels read it)"
        )


def test_a_signaling_nan_is_one_line() -> None:
    """``Decimal("sNaN")`` raised ValueError (it cannot become a float) from a dict's score or
    relevance and from an object column of a table, instead of one line naming it."""
    import decimal

    snan = decimal.Decimal("sNaN")
    cases = [
        (as_run, {"q": {"d": snan}}, "run: query 'q', doc 'd': score Decimal('sNaN') is not a "
         "finite number"),
        (as_qrels, {"q": {"d": snan}}, "qrels: query 'q', doc 'd': relevance Decimal('sNaN') is "
         "not an integer"),
        (as_run, pd.DataFrame({"query_id": ["q"], "doc_id": ["d"],
                               "score": pd.Series([snan], dtype=object)}),
         "run: row 0: score Decimal('sNaN') is not a finite number"),
        (as_qrels, pd.DataFrame({"query_id": ["q"], "doc_id": ["d"],
                                 "relevance": pd.Series([snan], dtype=object)}),
         "qrels: row 0: relevance Decimal('sNaN') is not a finite number"),
    ]  # fmt: skip
    _each_is_one_line(cases)


def test_a_mapping_of_columns_is_one_line() -> None:
    """``{"query_id": [...], "doc_id": [...], "rank": [...]}`` (the columns a DataFrame is built
    from) was read as ranked lists: a run whose queries were the column names."""
    columns = {"query_id": ["q1", "q1"], "doc_id": ["a", "b"], "rank": [1, 2]}
    qrels = {"query_id": ["q1"], "doc_id": ["a"], "relevance": [1]}
    for read, obj in (
        (as_run, columns),
        (as_run, {"qid": ["q1"], "docno": ["a"]}),
        (as_qrels, qrels),
    ):
        with pytest.raises(InputError) as err:
            read(obj)
        assert str(err.value).endswith(
            "a mapping of columns, not {query_id: {doc_id: value}}: give pd.DataFrame(it)"
        )
    assert as_run({"q1": ["a", "b"], "q2": ["c"]})["query_id"].tolist() == ["q1", "q1", "q2"]


def test_a_ranx_object_of_the_other_kind_is_one_line() -> None:
    """A ranx ``Qrels`` given as a run was read as one (its relevance as scores: a run as good
    as the qrels), and a ranx ``Run`` of whole-number scores as qrels."""
    qrels, run = Qrels({"q": {"a": 2, "b": 1}}), Run({"q": {"a": 3.0, "b": 1.0}})
    with pytest.raises(InputError) as err:
        as_run(qrels)
    assert str(err.value) == "run: a ranx Qrels holds qrels, not a run"
    with pytest.raises(InputError) as err:
        as_qrels(run)
    assert str(err.value) == "qrels: a ranx Run holds a run, not qrels"
    assert as_run(run)["score"].tolist() == [3.0, 1.0]
    assert as_qrels(qrels)["relevance"].tolist() == [2, 1]


def test_a_tables_to_dict_is_one_line() -> None:
    """``DataFrame.to_dict()`` (``{column: {row: value}}``) was read as a run or qrels whose
    queries were the column names and documents the row labels."""
    run = pd.DataFrame({"qid": [1, 1], "docno": [10, 20], "score": [1.5, 2.0]})
    qrels = pd.DataFrame({"query_id": [1], "doc_id": [10], "relevance": [1]})
    for read, obj in ((as_run, run.to_dict()), (as_qrels, qrels.to_dict())):
        with pytest.raises(InputError) as err:
            read(obj)
        assert str(err.value).endswith(
            "a mapping of columns, not {query_id: {doc_id: value}}: give pd.DataFrame(it)"
        )


def test_a_json_file_of_a_tables_columns_says_how_to_write_it(tmp_path) -> None:
    """``DataFrame.to_json()`` writes ``{column: {row: value}}``; its rows
    (``orient="records"``) read as the same run."""
    run = pd.DataFrame({"query_id": ["q1", "q1"], "doc_id": ["a", "b"], "score": [1.0, 0.5]})
    path = tmp_path / "run.json"
    run.to_json(path)
    with pytest.raises(InputError) as err:
        load_run(path)
    assert str(err.value) == (
        f"{path}: a mapping of columns, not {{query_id: {{doc_id: value}}}}: write its rows "
        "(to_json(orient='records')) or a CSV"
    )
    run.to_json(path, orient="records")
    assert load_run(path)[["query_id", "doc_id", "score"]].equals(run)


def test_texts_of_a_mapping_that_are_no_text_are_one_line() -> None:
    """``{"query_id": [...], "text": [...]}`` (a mapping of columns) gave queries named after
    the columns whose texts were the lists' ``repr``; a record or a dict as a text likewise."""
    from analysis.io.objects import as_entities

    cases = [
        (as_queries, {"query_id": ["1", "2"], "text": ["a", "b"]},
         "queries: query_id 'query_id': text ['1', '2'] is a list, not a string"),
        (as_queries, {"1": GenericQuery("1", "a")},
         "queries: query_id '1': text GenericQuery(query_id='1', text='a') is a GenericQuery, "
         "not a string"),
        (as_entities, {"d": {"text": "a"}},
         "entities: doc_id 'd': text {'text': 'a'} is a dict, not a string"),
    ]  # fmt: skip
    _each_is_one_line(cases)
    assert as_queries({"1": 7, 2: "b", 3: pd.NA})["text"].tolist() == ["7", "b", ""]
