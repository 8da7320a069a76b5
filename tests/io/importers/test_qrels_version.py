"""The qrels-version check (stark_checks.qrels_version): a run made on another version of the
qrels it is evaluated against (Amazon's old or current query ids, Prime's 98- or 109-row human
set) is named, with what to do; runs that match, and other collections, are left alone."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from analysis.cli import main
from analysis.io.importers.stark_checks import amazon_id_map, qrels_version
from analysis.io.stark import read_split_ids, read_stark_eval, read_stark_qa


def _tables(answers: dict[str, list[str]], old_ids: dict[str, str] | None = None) -> tuple:
    queries = pd.DataFrame({"query_id": list(answers), "text": "q"})
    if old_ids is not None:
        queries["old_id"] = queries["query_id"].map(old_ids)
    rows = [(q, d, 1) for q, docs in answers.items() for d in docs]
    return queries, pd.DataFrame(rows, columns=["query_id", "doc_id", "relevance"])


# Amazon before June 2024: a query's id is the seed product, one of its own answers
OLD = {"70": ["70", "1"], "15": ["15"], "42": ["42", "3"], "99": ["99"]}


def test_a_run_keyed_by_amazons_current_ids_against_old_qrels() -> None:
    queries, qrels = _tables(OLD)
    found = qrels_version(["0", "1", "2", "3"], queries, qrels)  # ranks of 15, 42, 70, 99
    assert found is not None
    assert found.code == "qrels_version"
    assert found.count == 4
    assert found.message.startswith(
        "qrels version: the run is keyed by Amazon's current query ids (June 2024: new id = rank "
        "of the old id), the qrels by the old ones: 4 of the run's 4 queries are qrels queries "
        "once re-keyed, 0 as they are."
    )
    assert "`import stark`, which re-keys it" in found.message
    assert qrels_version(list(OLD), queries, qrels) is None  # the run of the qrels' own release


def test_old_amazon_ids_beyond_64_bits_are_ranked_as_integers() -> None:
    # an id of 20 digits ended in an OverflowError; ranks are of the integers (7 < 10 < 2^70)
    big = str(2**70)
    queries, qrels = _tables({big: [big], "10": ["10"], "007": ["007"]})
    found = qrels_version(["0", "1", "2"], queries, qrels)
    assert found is not None
    assert "3 of the run's 3 queries are qrels queries once re-keyed" in found.message
    assert amazon_id_map(queries, "old") == {"0": "007", "1": "10", "2": big}


def test_a_run_keyed_by_amazons_old_ids_against_current_qrels() -> None:
    current = {"0": ["15"], "1": ["42", "3"], "2": ["70", "1"], "3": ["99"]}
    queries, qrels = _tables(current, old_ids={"0": "15", "1": "42", "2": "70", "3": "99"})
    found = qrels_version(["15", "42", "70"], queries, qrels)
    assert found is not None
    assert "keyed by Amazon's old query ids" in found.message
    assert "the qrels by the current ones: 3 of the run's 3 queries" in found.message


def _prime(n_qa: int, n_run: int, name: str = "prime-human") -> object:
    queries, qrels = _tables({str(q): [str(1000 + q)] for q in range(n_qa)})
    return qrels_version([str(q) for q in range(n_run)], queries, qrels, name=name)


def test_prime_runs_of_the_other_human_release() -> None:
    older = _prime(98, 109)
    assert older.message == (
        "qrels version: the run answers 109 queries (98 of them among the 98 of these qrels, 11 "
        "not): it was made on the older 109-row release of Prime's human-generated set, these "
        "qrels are the current 98-row release. Evaluate it against the 109-row "
        "stark_qa_human_generated_eval.csv; numbers on the two releases are not comparable"
    )
    assert older.examples == ("98", "99", "100", "101", "102")
    current = _prime(109, 98)
    assert "(all among the 109 of these qrels): it was made on the current 98-row" in (
        current.message
    )
    assert _prime(109, 109) is None
    assert _prime(109, 60) is None  # a partial run names no release
    assert _prime(98, 109, name="mag-human") is None  # 98 and 109 mean Prime's releases only


def test_queries_that_are_their_own_answer_outside_amazon_are_left_alone() -> None:
    """AvaTaR's Flickr30k-Entities: each caption's answer is its own image; a run keyed by the
    image ids is that collection's own, not Amazon's other convention."""
    flickr = {i: [i] for i in ("2318834690", "3688343105", "273572758", "747093215")}
    queries, qrels = _tables(flickr)
    assert qrels_version(list(flickr), queries, qrels, name="flickr30k_entities") is None
    assert qrels_version([], queries, qrels) is None


def _qa(path: Path, answers: dict[str, list[int]]) -> Path:
    lines = ["id,query,answer_ids"] + [f'{q},"q{q}","{a}"' for q, a in answers.items()]
    path.write_text("\n".join(lines) + "\n")
    return path


def test_evaluate_and_validate_say_it_for_a_stark_qa_file(tmp_path: Path, capsys) -> None:
    qa = _qa(tmp_path / "prime_human.csv", {str(q): [1000 + q] for q in range(98)})
    run = tmp_path / "eval_results_human_generated_eval.csv"
    lines = ["idx,query_id,pred_rank"]
    lines += [f'{q},{q},"{json.dumps([1000 + q])}"' for q in range(109)]
    run.write_text("\n".join(lines) + "\n")
    for command in ("evaluate", "validate"):
        assert main([command, "--run", str(run), "--qrels", str(qa), "--metrics", "hit@1"]) == 0
        out = capsys.readouterr().out
        assert "warning: qrels version: the run answers 109 queries" in out
        assert "11 of 109 queries in the run are not in the qrels" in out


@pytest.mark.real
def test_real_amazon_current_qa_file_and_a_run_on_the_old_ids(real_dir: Path) -> None:
    """The real current-id Amazon QA file (with old_id) and run ids of the old convention (the
    real test split, which STaRK shipped with the old ids)."""
    folder = real_dir / "stark" / "amazon"
    queries, qrels = read_stark_qa(folder / "stark_qa_current_ids.csv")
    table = pd.read_csv(folder / "stark_qa_current_ids.csv", dtype=str, usecols=["id", "old_id"])
    old = dict(zip(table["id"], table["old_id"], strict=True))
    queries["old_id"] = queries["query_id"].map(old)
    old_test = read_split_ids(folder / "split" / "test.index")
    found = qrels_version(old_test, queries, qrels, name="amazon")
    assert found is not None
    assert "keyed by Amazon's old query ids" in found.message
    assert f"{len(old_test)} of the run's {len(old_test)} queries are qrels queries" in (
        found.message
    )


@pytest.mark.real
@pytest.mark.parametrize("domain", ["amazon", "mag", "prime"])
def test_real_ada002_runs_match_their_qrels_version(real_dir: Path, domain: str) -> None:
    folder = real_dir / "stark" / domain
    run, _ = read_stark_eval(folder / "runs/ada-002/eval_results_human_generated_eval.csv")
    queries, qrels = read_stark_qa(folder / "stark_qa_human_generated_eval.csv")
    assert qrels_version(run["query_id"].unique(), queries, qrels, name=domain) is None
