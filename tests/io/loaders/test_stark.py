"""Tests for analysis.io.stark on hand-made files, and on the real STaRK files (marker
``real``): the ada-002 evaluation output must reproduce STaRK's own per-query Hit@1, Hit@5 and
Recall@20."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from analysis.core.errors import InputError
from analysis.core.metrics import evaluate, evaluate_run
from analysis.io import detect_format, load_qrels, load_queries, load_run
from analysis.io.stark import (
    parse_id_list,
    read_metapaths,
    read_query_groups,
    read_split_index,
    read_stark_eval,
    read_stark_qa,
)

QA = (
    "id,query,answer_ids,answer_ids_source\n"  # line 1
    '0,"first line\nsecond line, with a comma","[1, 2]",[1]\n'  # lines 2-3
    '007,"say ""hi""","[\'a\', \'b\']",[]\n'  # line 4
    '2,"multi\nline\ntext","[1, ""a""]",[]\n'  # lines 5-7
    "3,plain,[],[]\n"  # line 8
)


def _write(path: Path, text: str) -> Path:
    path.write_bytes(text.encode())
    return path


def _error(func, *args) -> InputError:
    with pytest.raises(InputError) as info:
        func(*args)
    return info.value


def test_stark_qa(tmp_path: Path) -> None:
    path = _write(tmp_path / "stark_qa.csv", QA)
    queries, qrels = read_stark_qa(path)
    assert queries.to_dict("list") == {
        "query_id": ["0", "007", "2", "3"],
        "text": ["first line\nsecond line, with a comma", 'say "hi"', "multi\nline\ntext", "plain"],
    }
    assert qrels.to_dict("list") == {  # query 3 (answer_ids = []): judged, nothing relevant
        "query_id": ["0", "0", "007", "007", "2", "2", "3"],
        "doc_id": ["1", "2", "a", "b", "1", "a", ""],
        "relevance": [1] * 6 + [0],
    }
    assert str(qrels["relevance"].dtype) == "int64"
    # the generic loaders read the same file as queries and as qrels
    assert detect_format(path) == "stark_qa"
    pd.testing.assert_frame_equal(load_queries(path), queries)
    pd.testing.assert_frame_equal(load_qrels(path), qrels)


def test_stark_qa_with_bom_and_crlf(tmp_path: Path) -> None:
    path = _write(tmp_path / "qa.csv", "\ufeff" + QA.replace("\n", "\r\n"))
    queries, qrels = read_stark_qa(path)
    assert queries["query_id"].tolist() == ["0", "007", "2", "3"]
    assert queries["text"].iloc[2].splitlines() == ["multi", "line", "text"]  # kept whole
    assert len(qrels) == 7


@pytest.mark.parametrize(
    ("cell", "message"),
    [
        ('"{1: 2}"', "answer_ids is not a list: '{1: 2}'"),
        ("7", "answer_ids is not a list: '7'"),
        ('"[1, 2"', "answer_ids is not a list literal: '[1, 2'"),
        ("abc", "answer_ids is not a list literal: 'abc'"),
        ("\"__import__('os')\"", "answer_ids is not a list literal"),
        ('"[1.5]"', "answer_ids holds 1.5, which is not an id"),
        ('"[true]"', "answer_ids holds True, which is not an id"),
        ('"[[1]]"', "answer_ids holds [1], which is not an id"),
    ],
)
def test_bad_answer_ids_name_the_record_start_line(tmp_path: Path, cell: str, message: str):
    # the bad record starts on line 6, after a record spanning lines 2-5
    text = 'id,query,answer_ids\n0,"a\nb\n\nc",[]\n1,"x\ny",' + cell + "\n"
    path = _write(tmp_path / "qa.csv", text)
    error = _error(read_stark_qa, path)
    assert str(error).startswith(f"{path}:6: {message}")


def test_stark_qa_structure_errors(tmp_path: Path) -> None:
    path = _write(tmp_path / "qa.csv", "id,query\n0,q\n")
    assert (
        str(_error(read_stark_qa, path)) == f"{path}:1: missing column(s) answer_ids in the header"
    )
    path = _write(tmp_path / "qa.csv", 'id,query,answer_ids\n0,"q",[]\n1,q,[],extra\n')
    assert str(_error(read_stark_qa, path)) == (
        f"{path}:3: expected 3 fields as in the header, found 4"
    )
    path = _write(tmp_path / "qa.csv", "id,query,answer_ids\n ,q,[]\n")
    assert str(_error(read_stark_qa, path)) == f"{path}:2: empty query id"
    path = _write(tmp_path / "qa.csv", "")
    assert "missing column(s)" in str(_error(read_stark_qa, path))


@pytest.mark.parametrize("text", ["id,query,answer_ids\n", "\ufeffid,query,answer_ids\r\n\r\n"])
def test_stark_qa_header_only_is_an_error(tmp_path: Path, text: str) -> None:
    # a QA file cut after its header is no query set: it would import as a dataset of 0 queries
    path = _write(tmp_path / "stark_qa.csv", text)
    assert str(_error(read_stark_qa, path)) == f"{path}: the file holds no query (only its header)"
    assert str(_error(load_qrels, path)) == f"{path}: the file holds no query (only its header)"


def test_stark_qa_duplicate_query_id_names_both_lines(tmp_path: Path) -> None:
    # a second record of query 7 (id written " 7") would add its answers to the first one's
    text = 'id,query,answer_ids\n7,"a\nb",[1]\n8,c,[2]\n 7,d,"[3, 4]"\n'
    path = _write(tmp_path / "stark_qa.csv", text)
    assert str(_error(read_stark_qa, path)) == f"{path}:5: duplicate query id '7' (first on line 2)"


def test_parse_id_list() -> None:
    assert parse_id_list("[1, 2]", "f", 1, "c") == ["1", "2"]
    assert parse_id_list("['007', 8]", "f", 1, "c") == ["007", "8"]
    assert parse_id_list('[1, "a"]', "f", 1, "c") == ["1", "a"]
    assert parse_id_list(" [] ", "f", 1, "c") == []


EVAL = (
    "idx,query_id,pred_rank,mrr,hit@1,recall@20\n"
    '0,007,"[5, 3, 9]",0.5,0.0,1.0\n'
    "1,8,[],0,,0.0\n"
    "2,9,\"['x']\",1.0,1.0,0.5\n"
)


def test_stark_eval_header_only_is_an_error(tmp_path: Path) -> None:
    # a file cut after its header is no run of 0 documents (every query would score 0)
    path = _write(tmp_path / "eval_results_test.csv", "idx,query_id,pred_rank,hit@1\n")
    assert str(_error(read_stark_eval, path)) == f"{path}: the file holds no rows (only its header)"
    assert str(_error(load_run, path)) == f"{path}: the file holds no rows (only its header)"


def test_stark_eval(tmp_path: Path) -> None:
    path = _write(tmp_path / "eval_results_test.csv", EVAL)
    run, metrics = read_stark_eval(path)
    assert run.to_dict("list") == {
        "query_id": ["007", "007", "007", "9"],
        "doc_id": ["5", "3", "9", "x"],
        "score": [3.0, 2.0, 1.0, 1.0],
        "rank": [1, 2, 3, 1],
    }
    assert list(metrics.columns) == ["query_id", "mrr", "hit@1", "recall@20"]
    assert metrics["query_id"].tolist() == ["007", "8", "9"]
    assert metrics["mrr"].tolist() == [0.5, 0.0, 1.0]
    assert np.isnan(metrics["hit@1"].iloc[1])
    assert detect_format(path) == "stark_eval"
    pd.testing.assert_frame_equal(load_run(path), run)
    # the saved order is kept by both tie policies
    qrels = pd.DataFrame({"query_id": ["007"], "doc_id": ["3"], "relevance": [1]})
    for ties in ("trec_eval", "stable"):
        assert evaluate(run, qrels, ["mrr"], ties=ties)["mrr"].tolist() == [0.5]  # type: ignore[arg-type]


def test_stark_eval_errors(tmp_path: Path) -> None:
    path = _write(tmp_path / "e.csv", "idx,query_id,mrr\n0,1,0.5\n")
    assert "missing column(s) pred_rank" in str(_error(read_stark_eval, path))
    path = _write(tmp_path / "e.csv", 'idx,query_id,pred_rank\n0,1,"[1]"\n1,2,"[1, {}]"\n')
    assert str(_error(read_stark_eval, path)).startswith(f"{path}:3: pred_rank holds {{}}")


def test_split_index(tmp_path: Path) -> None:
    path = _write(tmp_path / "test.index", "\ufeff007\r\n\r\n# note\r\n8\r\n")
    assert read_split_index(path).to_dict("list") == {
        "query_id": ["007", "8"],
        "split": ["test", "test"],
    }
    assert read_split_index(path, "custom")["split"].tolist() == ["custom", "custom"]
    bad = _write(tmp_path / "val.index", "1\n2 3\n")
    assert str(_error(read_split_index, bad)) == f"{bad}:2: expected one query id per line"


def test_query_groups(tmp_path: Path) -> None:
    data = {
        "0": {"pattern": "product -> brand", "query_idx": [1, 2]},
        "g1": {"pattern": "x", "query_idx": ["007"]},
    }
    path = _write(tmp_path / "groups.json", json.dumps(data))
    assert read_query_groups(path).to_dict("list") == {
        "query_id": ["1", "2", "007"],
        "pattern_group": ["0", "0", "g1"],
        "pattern": ["product -> brand", "product -> brand", "x"],
    }
    bad = _write(tmp_path / "bad.json", '{\n  "0": {"pattern": "x",\n  "query_idx": [1,]}\n}')
    assert str(_error(read_query_groups, bad)).startswith(f"{bad}:3: invalid JSON")
    assert "has no query_idx list" in str(
        _error(read_query_groups, _write(tmp_path / "b.json", '{"0": {"pattern": "x"}}'))
    )
    assert "expected an object" in str(
        _error(read_query_groups, _write(tmp_path / "c.json", "[1, 2]"))
    )


def test_metapaths(tmp_path: Path) -> None:
    data = [
        {"q_id": 5, "ans_ids": [1], "rg": {"Metapath": "paper -> author"}},
        {"q_id": "007", "rg": {}},
        {"q_id": 9, "rg": None},
    ]
    path = _write(tmp_path / "test.json", json.dumps(data))
    assert read_metapaths(path).to_dict("list") == {
        "query_id": ["5", "007", "9"],
        "metapath": ["paper -> author", "", ""],
    }
    assert "a record has no q_id" in str(
        _error(read_metapaths, _write(tmp_path / "b.json", '[{"rg": {}}]'))
    )
    assert "expected a list" in str(_error(read_metapaths, _write(tmp_path / "c.json", "{}")))


# --------------------------------------------------------------------------------------------
# real STaRK files

DOMAINS = ("amazon", "mag", "prime")


def _real_eval(real_dir: Path, domain: str) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    folder = real_dir / "stark" / domain
    run, file_metrics = read_stark_eval(
        folder / "runs" / "ada-002" / "eval_results_human_generated_eval.csv"
    )
    qrels = load_qrels(folder / "stark_qa_human_generated_eval.csv")
    ours = evaluate_run(run, qrels, ["hit@1", "hit@5", "recall@20", "mrr"]).per_query
    return ours.set_index("query_id"), file_metrics.set_index("query_id"), run


@pytest.mark.real
@pytest.mark.parametrize("domain", DOMAINS)
def test_real_ada002_reproduces_starks_per_query_metrics(real_dir: Path, domain: str) -> None:
    ours, theirs, run = _real_eval(real_dir, domain)
    assert len(ours) >= 81
    assert set(ours.index) == set(theirs.index)
    assert run.groupby("query_id").size().max() == 1000  # the saved top-1000
    theirs = theirs.loc[ours.index]
    assert (ours["hit@1"] == theirs["hit@1"]).all()
    assert (ours["hit@5"] == theirs["hit@5"]).all()
    np.testing.assert_allclose(ours["recall@20"], theirs["recall@20"], rtol=0, atol=1e-6)
    # STaRK's evaluator scores every candidate of the knowledge base, so the gold beyond the
    # saved top-1000 still gets a (large) rank and a small positive reciprocal rank; we only see
    # the saved list, so our MRR can only be lower, never higher. Where the first gold is inside
    # the saved list the two must agree.
    assert (ours["mrr"] <= theirs["mrr"] + 1e-9).all()
    inside = ours["mrr"] > 0
    np.testing.assert_allclose(ours.loc[inside, "mrr"], theirs.loc[inside, "mrr"], atol=1e-9)
    assert inside.mean() > 0.5


@pytest.mark.real
@pytest.mark.parametrize("domain", ["amazon", "mag"])
def test_real_hit1_mean_equals_the_saved_summary(real_dir: Path, domain: str) -> None:
    ours, _, _ = _real_eval(real_dir, domain)
    summary = real_dir / "stark" / domain / "runs" / "ada-002"
    saved = json.loads((summary / "eval_metrics_human_generated_eval.json").read_text())
    assert abs(ours["hit@1"].mean() - saved["hit@1"]) <= 1e-9


@pytest.mark.real
def test_real_prime_summary_is_a_copy_of_mags(real_dir: Path) -> None:
    # The shared Prime summary JSON is a byte copy of MAG's, so it cannot be compared with
    # Prime's own per-query file; the per-query columns are compared in the tests above.
    name = Path("runs") / "ada-002" / "eval_metrics_human_generated_eval.json"
    prime = (real_dir / "stark" / "prime" / name).read_bytes()
    assert prime == (real_dir / "stark" / "mag" / name).read_bytes()
    ours, _, _ = _real_eval(real_dir, "prime")
    assert abs(ours["hit@1"].mean() - json.loads(prime)["hit@1"]) > 0.05


@pytest.mark.real
@pytest.mark.parametrize("domain", DOMAINS)
def test_real_synthesized_qa_matches_the_splits(real_dir: Path, domain: str) -> None:
    folder = real_dir / "stark" / domain
    queries, qrels = read_stark_qa(folder / "stark_qa.csv")
    assert 9000 <= len(queries) <= 14000
    assert queries["query_id"].is_unique
    # quoted multi-line texts are kept whole: every line of the file is the header, the start of
    # a record, or a line break inside a text (Amazon has 6, Prime 42, MAG none)
    raw = (folder / "stark_qa.csv").read_bytes()
    in_texts = int(queries["text"].str.count("\n").sum())
    assert raw.count(b"\n") == 1 + len(queries) + in_texts
    assert in_texts > 0 or domain == "mag"
    split_ids = pd.concat(
        [read_split_index(folder / "split" / f"{s}.index") for s in ("train", "val", "test")]
    )["query_id"]
    assert len(queries) == len(split_ids)
    assert set(split_ids) <= set(queries["query_id"])
    assert set(qrels["query_id"]) <= set(queries["query_id"])
    assert (qrels["relevance"] == 1).all()
