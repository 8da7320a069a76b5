"""Tests for analysis.io.detect_format and the generic load_* dispatch."""

from __future__ import annotations

import gzip
from pathlib import Path

import pandas as pd
import pytest

from analysis.core.errors import InputError
from analysis.io import (
    FORMATS,
    detect_format,
    load_qrels,
    load_queries,
    load_run,
)

CASES: dict[str, tuple[str, str]] = {
    "a.run": ("trec_run", "q1 Q0 d1 1 2.5 tag\n"),
    "a.txt": ("trec_run", "# comment\n\nq1\tQ0\td1\t1\t-1e-3\ttag\textra\n"),
    "bom.run": ("trec_run", "\ufeffq1 Q0 d1 1 2.5 tag\r\n"),
    "qrels.txt": ("trec_qrels", "q1 0 d1 1\n"),
    "qrels": ("trec_qrels", "# judged\nq1 0 d1 -1\n"),
    "stark_qa.csv": ("stark_qa", 'id,query,answer_ids\n0,"q",[1]\n'),
    "human.csv": ("stark_qa", 'id,query,answer_ids,answer_ids_source\n0,"q","[1]","[1]"\n'),
    "eval_results_test.csv": ("stark_eval", 'idx,query_id,pred_rank,mrr\n0,0,"[1]",1\n'),
    "test.index": ("split_index", "1\n2\n"),
    "ids.txt": ("split_index", "0001\n0002\n"),
    "run.csv": ("table", "query_id,doc_id,score\n1,a,1\n"),
    "run.tsv": ("table", "query_id\tdoc_id\tscore\n1\ta\t1\n"),
    "pois.csv": ("table", "doc_id,lat,lon\n1,2,3\n"),
    "one_column.csv": ("table", "query_id\n007\n"),
    "q.jsonl": ("table", '{"query_id": "1"}\n'),
    "q.json": ("table", '[{"query_id": "1"}]'),
}


@pytest.mark.parametrize("name", list(CASES))
@pytest.mark.parametrize("gz", [False, True])
def test_detect_format(tmp_path: Path, name: str, gz: bool) -> None:
    expected, text = CASES[name]
    path = tmp_path / (name + (".gz" if gz else ""))
    data = text.encode()
    path.write_bytes(gzip.compress(data) if gz else data)
    assert detect_format(path) == expected
    assert expected in FORMATS


def test_detect_parquet(tmp_path: Path) -> None:
    path = tmp_path / "run.parquet"
    pd.DataFrame({"query_id": ["1"], "doc_id": ["a"], "score": [1.0]}).to_parquet(path)
    assert detect_format(path) == "table"


@pytest.mark.parametrize(
    ("text", "line"),
    [
        ("hello world, how are you\n", 1),
        ("# comment\n\nname,value\nx,1\n", 3),
        ("a b c\n", 1),
        ("q Q0 d 1 notanumber tag\n", 1),
    ],
)
def test_unrecognised_format(tmp_path: Path, text: str, line: int) -> None:
    path = tmp_path / "mystery.dat"
    path.write_text(text)
    with pytest.raises(InputError) as info:
        detect_format(path)
    assert str(info.value).startswith(f"{path}:{line}: unrecognised format")


def test_detect_errors(tmp_path: Path) -> None:
    empty = tmp_path / "empty.run"
    empty.write_text("# only a comment\n\n")
    with pytest.raises(InputError, match="holds no data"):
        detect_format(empty)
    with pytest.raises(InputError, match="no such file"):
        detect_format(tmp_path / "absent.run")
    with pytest.raises(InputError, match="is a folder"):
        detect_format(tmp_path)


def test_load_functions_dispatch_and_refuse_wrong_kinds(tmp_path: Path) -> None:
    run = tmp_path / "a.run"
    run.write_text("007 Q0 d1 1 2.5 tag\n")
    qrels = tmp_path / "a.qrels"
    qrels.write_text("007 0 d1 1\n")
    index = tmp_path / "test.index"
    index.write_text("007\n8\n")
    assert load_run(run)["query_id"].tolist() == ["007"]
    assert load_qrels(qrels)["relevance"].tolist() == [1]
    queries = load_queries(index)
    assert queries.to_dict("list") == {"query_id": ["007", "8"], "split": ["test", "test"]}
    with pytest.raises(InputError, match="a trec_qrels file is not a run"):
        load_run(qrels)
    with pytest.raises(InputError, match="a trec_run file is not a qrels file"):
        load_qrels(run)
    with pytest.raises(InputError, match="a trec_run file is not a queries file"):
        load_queries(run)
    # an explicit format skips detection
    assert load_run(run, fmt="trec_run")["doc_id"].tolist() == ["d1"]


def test_a_first_line_longer_than_detection_reads_says_so(tmp_path: Path) -> None:
    """A TREC line whose id is longer than the bytes format detection reads was an
    "unrecognised format"; a shorter one is read."""
    path = tmp_path / "run.trec"
    path.write_text("q Q0 " + "x" * 60_000 + " 1 1.0 t\nq Q0 b 2 0.5 t\n")
    assert load_run(path)["doc_id"].str.len().tolist() == [60_000, 1]
    path.write_text("q Q0 " + "x" * 70_000 + " 1 1.0 t\nq Q0 b 2 0.5 t\n")
    with pytest.raises(InputError) as info:
        load_run(path)
    assert str(info.value) == (
        f"{path}:1: the first data line is longer than 65,536 bytes, more than format detection "
        "reads (an id or a text of that size?)"
    )
