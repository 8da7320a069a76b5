"""Tests for analysis.io.tables and the table branches of the generic loaders."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pandas as pd
import pytest

from analysis.core.errors import InputError
from analysis.io import load_entities, load_qrels, load_queries, load_run
from analysis.io.tables import read_table, table_columns

RUN = pd.DataFrame(
    {
        "query_id": ["007", "007", "7", "q,4"],
        "doc_id": ["0042", "d1", "01", "NA"],
        "score": [2.5, 1.0, -0.5, 3.0],
    }
)


def _write(frame: pd.DataFrame, path: Path) -> Path:
    name = path.name.removesuffix(".gz")
    if name.endswith(".parquet"):
        frame.to_parquet(path, index=False)
    elif name.endswith(".jsonl"):
        text = "".join(json.dumps(r) + "\n" for r in frame.to_dict("records"))
        path.write_bytes(
            gzip.compress(text.encode()) if path.name.endswith(".gz") else text.encode()
        )
    else:
        sep = "\t" if name.endswith(".tsv") else ","
        text = frame.to_csv(index=False, sep=sep)
        path.write_bytes(
            gzip.compress(text.encode()) if path.name.endswith(".gz") else text.encode()
        )
    return path


@pytest.mark.parametrize("name", ["run.csv", "run.tsv", "run.parquet", "run.jsonl", "run.csv.gz"])
def test_round_trip_keeps_string_ids(tmp_path: Path, name: str) -> None:
    path = _write(RUN, tmp_path / name)
    frame = read_table(path)
    assert frame["query_id"].tolist() == RUN["query_id"].tolist()
    assert frame["doc_id"].tolist() == RUN["doc_id"].tolist()  # "NA" is not a missing value
    assert frame["score"].tolist() == RUN["score"].tolist()
    assert table_columns(path) == ["query_id", "doc_id", "score"]
    run = load_run(path)
    assert run["query_id"].tolist() == ["007", "007", "7", "q,4"]
    assert run["score"].dtype == "float64"


def test_numeric_ids_in_jsonl_and_parquet_become_strings(tmp_path: Path) -> None:
    frame = pd.DataFrame({"query_id": [7, 8], "doc_id": [1, 2], "relevance": [1, 0]})
    for name in ("q.parquet", "q.jsonl"):
        qrels = load_qrels(_write(frame, tmp_path / name))
        assert qrels["query_id"].tolist() == ["7", "8"]
        assert qrels["doc_id"].tolist() == ["1", "2"]
        assert qrels["relevance"].tolist() == [1, 0]


def test_csv_with_bom_crlf_and_quoted_multiline_text(tmp_path: Path) -> None:
    path = tmp_path / "queries.csv"
    text = 'query_id,text,n_words\r\n007,"two\r\nlines, and a comma",4\r\n8,plain,1\r\n'
    path.write_bytes(("\ufeff" + text).encode())
    frame = load_queries(path)
    assert frame["query_id"].tolist() == ["007", "8"]
    assert frame["text"].tolist()[1] == "plain"
    assert "lines, and a comma" in frame["text"].iloc[0]
    assert frame["n_words"].tolist() == [4, 1]


@pytest.mark.parametrize(
    ("text", "line"),
    [
        ("query_id,doc_id,score\n007,01,1.5\n7,1,2\n8,2,3,4\n", 4),
        ("query_id,doc_id,score\n\n007,01,1.5\n8,2,3,4\n", 4),
        ('query_id,text,score\n007,"multi\nline\ntext",1.5\n7,x,2\n8,2,3,4\n', 6),
    ],
)
def test_malformed_csv_names_the_line(tmp_path: Path, text: str, line: int) -> None:
    path = tmp_path / "bad.csv"
    path.write_text(text)
    with pytest.raises(InputError) as info:
        read_table(path)
    assert str(info.value).startswith(f"{path}:{line}: malformed table")
    assert info.value.line == line


def test_bad_jsonl_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text('{"query_id": "1"}\n\n{oops\n')
    with pytest.raises(InputError, match=r"bad\.jsonl:3: invalid JSON"):
        read_table(path)
    path.write_text('{"query_id": "1"}\n[1, 2]\n')
    with pytest.raises(InputError, match=r"bad\.jsonl:2: expected one JSON object per line"):
        read_table(path)


def test_json_array_of_records(tmp_path: Path) -> None:
    path = tmp_path / "q.json"
    path.write_text(json.dumps([{"query_id": 7, "text": "a"}, {"query_id": "007", "text": "b"}]))
    assert read_table(path)["query_id"].tolist() == ["7", "007"]


@pytest.mark.parametrize("header", ["query_id ,doc_id ,score", " query_id,\tdoc_id, score"])
def test_csv_ids_stay_text_when_the_header_has_spaces(tmp_path: Path, header: str) -> None:
    path = tmp_path / "run.csv"
    path.write_text(f"{header}\n007,0042,1.5\n7,01,2.5\n")
    run = load_run(path)
    assert run["query_id"].tolist() == ["007", "7"]
    assert run["doc_id"].tolist() == ["0042", "01"]
    assert run["score"].tolist() == [1.5, 2.5]


def test_empty_csv(tmp_path: Path) -> None:
    path = tmp_path / "empty.csv"
    path.write_text("")
    with pytest.raises(InputError, match=r"empty\.csv:1: the file is empty"):
        read_table(path)


def test_corrupt_parquet(tmp_path: Path) -> None:
    path = tmp_path / "bad.parquet"
    path.write_bytes(b"PAR1 not really parquet")
    with pytest.raises(InputError, match="cannot read Parquet"):
        read_table(path)


def test_run_table_checks(tmp_path: Path) -> None:
    path = tmp_path / "run.csv"
    path.write_text("query_id,doc_id,score\n1,a,1.0\n1,b,nan\n")
    with pytest.raises(InputError, match=r"run\.csv:3: score 'nan' is not a finite number$"):
        load_run(path)
    path.write_text("query_id,doc_id,score\n1,a,1.0\n1,b,abc\n")
    with pytest.raises(InputError, match=r"run\.csv:3: score 'abc'"):
        load_run(path)
    path.write_text("query_id,doc_id\n1,a\n")
    with pytest.raises(InputError, match="needs the columns query_id, doc_id and score"):
        load_run(path)
    path.write_text("query_id,doc_id,rank\n1,a,2\n1,b,1\n")
    run = load_run(path)
    assert run["score"].tolist() == [-2.0, -1.0]
    assert run["rank"].tolist() == [2, 1]
    # a rank of 1.5 was cut to 1; one of 1e30 wrapped to -2^63 and ranked first
    for rank in ("1.5", "1e30"):
        path.write_text(f"query_id,doc_id,rank\n1,a,2\n1,b,{rank}\n")
        with pytest.raises(InputError) as info:
            load_run(path)
        assert str(info.value) == (
            f"{path}:3: rank {float(rank)!r} is not a whole number below 2^53 in size"
        )


@pytest.mark.parametrize("name", ["run.csv", "run.jsonl", "run.parquet"])
def test_empty_ids_name_the_line(tmp_path: Path, name: str) -> None:
    frame = pd.DataFrame(
        {"query_id": ["1", "1", None], "doc_id": ["a", "b", "c"], "score": [1.0, 2.0, 3.0]}
    )
    path = _write(frame, tmp_path / name)
    line = {"run.csv": ":4", "run.jsonl": ":3", "run.parquet": ""}[name]
    with pytest.raises(InputError) as info:
        load_run(path)
    assert str(info.value) == f"{path}{line}: empty query_id"
    qrels = tmp_path / "qrels.csv"
    qrels.write_text("query_id,doc_id,relevance\n1,a,1\n1, ,1\n")
    with pytest.raises(InputError) as info:
        load_qrels(qrels)
    assert str(info.value) == f"{qrels}:3: empty doc_id"


def test_qrels_table_checks(tmp_path: Path) -> None:
    path = tmp_path / "qrels.csv"
    path.write_text("query_id,doc_id\n007,a\n007,b\n")  # a list of gold pairs
    assert load_qrels(path)["relevance"].tolist() == [1, 1]
    path.write_text("query_id,doc_id,score\n007,a,0.5\n007,b,0.0\n")  # a run, not qrels
    with pytest.raises(InputError, match=r"qrels\.csv:1: a score column of type float64 and no"):
        load_qrels(path)
    path.write_text("query_id,doc_id,Grade\n007,a,2\n007,b,0\n")  # b is not relevant
    with pytest.raises(InputError, match=r"qrels\.csv:1: a column 'Grade' and no relevance"):
        load_qrels(path)
    path.write_text("query_id,doc_id,relevance\n007,a,1\n007,b,1.5\n")
    with pytest.raises(InputError, match=r"qrels\.csv:3: relevance 1\.5 is not an integer"):
        load_qrels(path)
    path.write_text("query_id,relevance\n007,1\n")
    with pytest.raises(InputError, match="needs the columns query_id, doc_id"):
        load_qrels(path)
    jsonl = tmp_path / "qrels.jsonl"
    jsonl.write_text(
        '{"query_id": "1", "doc_id": "a", "relevance": 1}\n{"query_id": "1", '
        '"doc_id": "b", "relevance": "x"}\n'
    )
    with pytest.raises(InputError, match=r"qrels\.jsonl:2: relevance 'x'"):
        load_qrels(jsonl)


def test_entities_and_queries_defaults(tmp_path: Path) -> None:
    path = tmp_path / "entities.csv"
    path.write_text("doc_id,lat,lon\n0001,30.1,120.2\n")
    entities = load_entities(path)
    assert entities["doc_id"].tolist() == ["0001"]
    assert entities["name"].tolist() == [""]
    assert entities["text"].tolist() == [""]
    with pytest.raises(InputError, match="needs a doc_id column"):
        load_entities(_write(pd.DataFrame({"x": [1]}), tmp_path / "x.csv"))
    queries = load_queries(_write(pd.DataFrame({"query_id": ["01"]}), tmp_path / "queries.csv"))
    assert queries["text"].tolist() == [""]
