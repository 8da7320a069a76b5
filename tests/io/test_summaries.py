"""Published summaries (analysis.io.summaries) and their audit against the run beside them
(analysis.io.summary_audit): hand-made files for each cause (a copied summary, a different
split, the saved depth, another evaluator, a qrels version), a matching summary's one line, and
the real ada-002 summaries (marker ``real``)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pandas as pd
import pytest

from analysis.cli import main
from analysis.core.metrics import evaluate
from analysis.io.importers.stark_checks import qrels_version
from analysis.io.stark import read_stark_eval, read_stark_qa
from analysis.io.summaries import (
    nearby_summaries,
    read_summary,
    search_root,
    summaries_beside,
    wrapped,
)
from analysis.io.summary_audit import AuditContext, audit_summary, tolerance

METRICS = ["hit@1", "mrr"]


def _qa(path: Path, answers: dict[str, list[int]]) -> Path:
    lines = ["id,query,answer_ids"] + [f'{q},"query {q}","{a}"' for q, a in answers.items()]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n")
    return path


def _eval(path: Path, ranked: dict[str, list[int]], qa: Path, columns: bool = True) -> Path:
    """STaRK's eval_results CSV, with its own per-query hit@1 and mrr computed here."""
    rows = [(q, str(d), float(len(docs) - i)) for q, docs in ranked.items()
            for i, d in enumerate(docs)]  # fmt: skip
    run = pd.DataFrame(rows, columns=["query_id", "doc_id", "score"])
    own = evaluate(run, read_stark_qa(qa)[1], METRICS).set_index("query_id")
    header = "idx,query_id,pred_rank" + (",hit@1,mrr" if columns else "")
    lines = [header]
    for i, (q, docs) in enumerate(ranked.items()):
        extra = f",{own.loc[q, 'hit@1']},{own.loc[q, 'mrr']}" if columns else ""
        lines.append(f'{i},{q},"{json.dumps(docs)}"{extra}')
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n")
    return path


def _summary(path: Path, values: dict[str, float], text: str | None = None) -> Path:
    path.write_text(text if text is not None else json.dumps(values, indent=4))
    return path


def _audit(run_file: Path, qa: Path, **context) -> list:
    run, file_metrics = read_stark_eval(run_file)
    _, qrels = read_stark_qa(qa)
    (summary,) = summaries_beside(run_file)
    context.setdefault("run_file_metrics", file_metrics)
    context.setdefault("nearby", nearby_summaries(run_file, exclude=summary.path))
    ctx = AuditContext(qrels=qrels, **context)
    return audit_summary(summary, run, ctx)


def _domain(root: Path, answers: dict, ranked: dict) -> tuple[Path, Path]:
    qa = _qa(root / "stark_qa_human_generated_eval.csv", answers)
    run = _eval(root / "runs" / "m" / "eval_results_human_generated_eval.csv", ranked, qa)
    return qa, run


def _means(run_file: Path, qa: Path) -> dict[str, float]:
    run, _ = read_stark_eval(run_file)
    return evaluate(run, read_stark_qa(qa)[1], METRICS)[METRICS].mean().to_dict()


# 4 queries saved at depth 3: q0 gold at 1, q1 gold at 2, q2 gold beyond the list, q3 at 3
ANSWERS = {"0": [10], "1": [11], "2": [12], "3": [13]}
RANKED = {"0": [10, 1, 2], "1": [1, 11, 2], "2": [1, 2, 3], "3": [1, 2, 13]}


def test_a_matching_summary_gets_one_line(tmp_path: Path) -> None:
    qa, run = _domain(tmp_path / "kb", ANSWERS, RANKED)
    means = _means(run, qa)  # hit@1 0.25, mrr (1 + 1/2 + 0 + 1/3) / 4
    _summary(run.parent / "eval_metrics_human_generated_eval.json", {**means, "loss": 3})
    (line,) = _audit(run, qa)
    assert line.code == "summary_matches"
    assert line.level == "info"
    assert line.message.endswith(
        "eval_metrics_human_generated_eval.json: the published summary matches the means "
        "computed on the 4 queries (hit@1, mrr); not compared: loss"
    )


def test_printed_precision_and_float32_rounding_count_as_equal(tmp_path: Path) -> None:
    qa, run = _domain(tmp_path / "kb", ANSWERS, RANKED)
    text = '{"Hit@1": 0.25, "MRR": 0.4583}'  # mrr = 0.458333...: 4 decimals printed
    _summary(run.parent / "eval_metrics_human_generated_eval.json", {}, text)
    assert _audit(run, qa)[0].code == "summary_matches"
    assert tolerance(0.5, 0.5, 100) == pytest.approx(2**-24 * (6.643856 + 2) * 0.5, rel=1e-6)
    text = '{"Hit@1": 0.25, "MRR": 0.4584}'  # 0.458333 is outside [0.45835, 0.45845]
    _summary(run.parent / "eval_metrics_human_generated_eval.json", {}, text)
    assert _audit(run, qa)[0].code == "summary_mismatch"


def test_an_integer_fraction_is_exact_not_anything_within_a_half(tmp_path: Path) -> None:
    """A mean in [0, 1] printed without decimals is 0 or 1: every query missed or every query
    hit, not a rounded value. Read as standing for [-0.5, 0.5] or [0.5, 1.5], it would let
    any hit@1 up to 0.5 (from 0.5) pass as matching."""
    answers = {"0": [10], "1": [11], "2": [12], "3": [13]}
    ranked = {"0": [1, 2, 3], "1": [11, 1, 2], "2": [12, 1, 2], "3": [1, 2, 13]}
    qa, run = _domain(tmp_path / "kb", answers, ranked)  # hit@1 0.5
    path = run.parent / "eval_metrics_human_generated_eval.json"
    for text in ('{"hit@1": 1}', '{"hit@1": 0}'):
        _summary(path, {}, text)
        assert _audit(run, qa)[0].code == "summary_mismatch", text
    exact = read_summary(_summary(path, {}, '{"hit@1": 1, "mrr": 0}'))
    assert exact is not None
    assert exact.means == {"hit@1": (1.0, 0.0), "mrr": (0.0, 0.0)}
    kept = _summary(tmp_path / "m.metrics.json", wrapped(exact, "kb", (), {}))  # import stark
    assert read_summary(kept).means == exact.means
    percent = read_summary(_summary(path, {}, '{"hit@1": 50, "mrr": 58.33}'))
    assert percent is not None
    assert percent.means["hit@1"] == (0.5, 0.005)  # a rounded percentage: 50 stands for 49.5-50.5


def test_a_copied_summary_is_named_with_the_file_it_copies(tmp_path: Path) -> None:
    """Two knowledge bases of one collection: B's summary is a byte copy of A's. A's own file
    agrees with its summary; B's per-query columns average to B's computed values."""
    qa_a, run_a = _domain(tmp_path / "coll" / "a", ANSWERS, RANKED)
    ranked_b = {"0": [1, 10, 2], "1": [11, 1, 2], "2": [12, 2, 3], "3": [13, 2, 1]}
    qa_b, run_b = _domain(tmp_path / "coll" / "b", ANSWERS, ranked_b)
    original = _summary(
        run_a.parent / "eval_metrics_human_generated_eval.json", _means(run_a, qa_a)
    )
    copy = run_b.parent / "eval_metrics_human_generated_eval.json"
    copy.write_bytes(original.read_bytes())
    assert search_root(run_b) == tmp_path / "coll"
    (found,) = _audit(run_b, qa_b)
    assert found.code == "summary_mismatch"
    assert found.count == 2
    assert found.message == (
        f"{copy}: the published summary differs from the means computed on the 4 queries: "
        "hit@1 0.2500 (computed 0.7500), mrr 0.4583 (computed 0.8750); likely cause: a copied "
        "file: the run file's own per-query hit@1 averages to 0.7500 (as computed here), not to "
        f"the summary's 0.2500, and its bytes are identical to those of {original}"
    )
    assert [w.code for w in _audit(run_a, qa_a)] == ["summary_matches"]  # the original


def test_identical_summaries_without_per_query_columns_are_a_question(tmp_path: Path) -> None:
    qa_a, run_a = _domain(tmp_path / "coll" / "a", ANSWERS, RANKED)
    qa_b = _qa(tmp_path / "coll" / "b" / "stark_qa_human_generated_eval.csv", ANSWERS)
    run_b = _eval(tmp_path / "coll" / "b" / "runs" / "m" / "eval_results_human_generated_eval.csv",
                  {"0": [1, 10], "1": [11], "2": [12], "3": [13]}, qa_b, columns=False)  # fmt: skip
    values = _means(run_a, qa_a)
    _summary(run_a.parent / "eval_metrics_human_generated_eval.json", values)
    _summary(run_b.parent / "eval_metrics_human_generated_eval.json", values)
    (found,) = _audit(run_b, qa_b)
    assert "likely cause: a copied file? its bytes are identical to those of" in found.message
    assert "one of the two is not its run's summary" in found.message


def test_a_summary_of_another_split_is_named(tmp_path: Path) -> None:
    answers = {str(q): [100 + q] for q in range(8)}
    ranked = {str(q): ([100 + q, 1] if q < 4 else [1, 2]) for q in range(8)}  # test: 0-3 hit
    qa = _qa(tmp_path / "kb" / "stark_qa.csv", answers)
    run = _eval(tmp_path / "kb" / "runs" / "m" / "eval_results_test.csv", ranked, qa)
    splits = {"test": ["0", "1", "2", "3"], "val": ["4", "5", "6", "7"]}
    _summary(run.parent / "eval_metrics_test.json", {"hit@1": 0.0, "mrr": 0.0})  # val's means
    (found,) = _audit(run, qa, splits=splits)
    assert "differs from the means computed on the 4 queries of split test" in found.message
    assert found.message.endswith(
        "likely cause: a different split: the summary equals the means over split val (4 queries)"
    )


def test_the_saved_depth_explains_a_slightly_higher_mrr_with_its_bound(tmp_path: Path) -> None:
    qa, run = _domain(tmp_path / "kb", ANSWERS, RANKED)
    means = _means(run, qa)
    # q2's gold is beyond the 3 saved ranks: an evaluator scoring every candidate could put it
    # at rank 4 at best, adding at most 1/4 / 4 queries = 0.0625 to the mean
    published = means["mrr"] + 0.01
    _summary(run.parent / "eval_metrics_human_generated_eval.json", {**means, "mrr": published})
    (found,) = _audit(run, qa, run_file_metrics=None)
    assert found.message.endswith(
        "(its other 1 metric matches); likely cause: the saved depth: 1 of 4 queries has no "
        "relevant document within the saved depth 3 (others may miss part of theirs); an "
        "evaluator that scores every candidate could raise the mean mrr by at most 0.062500 "
        "(the summary is 0.010000 higher)"
    )
    # beyond that bound the saved depth cannot explain it
    _summary(run.parent / "eval_metrics_human_generated_eval.json", {**means, "mrr": 0.6})
    (found,) = _audit(run, qa, run_file_metrics=None)
    assert "likely cause: unknown" in found.message


def test_rows_the_run_file_repeats_count_once_in_its_own_means(tmp_path: Path) -> None:
    # the file's own mrr credits q2's gold beyond the saved list (1/25), and the summary is
    # their mean; eval.py wrote q0's row twice (a resumed file): the saved depth still
    # explains the mrr, not "not this run's summary"
    qa, run = _domain(tmp_path / "kb", ANSWERS, RANKED)
    means = _means(run, qa)
    text = run.read_text().replace('"[1, 2, 3]",0.0,0.0', '"[1, 2, 3]",0.0,0.04')
    run.write_text(text + text.splitlines()[1] + "\n")
    _summary(
        run.parent / "eval_metrics_human_generated_eval.json",
        {**means, "mrr": means["mrr"] + 0.01},
    )
    (found,) = _audit(run, qa)
    assert "likely cause: the saved depth: 1 of 4 queries has no relevant document" in (
        found.message
    )


def test_another_evaluator_is_named_with_the_queries_it_differs_on(tmp_path: Path) -> None:
    qa, run = _domain(tmp_path / "kb", ANSWERS, RANKED)
    text = run.read_text().replace('"[10, 1, 2]",1.0,1.0', '"[10, 1, 2]",0.0,0.5')
    run.write_text(text)  # the file's own columns: q0 scored as if its gold were at rank 2
    own = read_stark_eval(run)[1][METRICS].mean().to_dict()
    _summary(run.parent / "eval_metrics_human_generated_eval.json", own)
    (found,) = _audit(run, qa)
    assert "likely cause: another evaluator or qrels: the run file's own per-query columns " in (
        found.message
    )
    assert "hit@1 on 1 query (0), mrr on 1 query (0)" in found.message
    assert found.message.endswith("(STaRK's evaluator drops gold ids that are not candidates: "
                                  "try --compat stark)")  # fmt: skip


def test_a_qrels_version_is_the_cause_when_nothing_else_is(tmp_path: Path) -> None:
    answers = {str(q): [1000 + q] for q in range(98)}
    qa = _qa(tmp_path / "prime" / "stark_qa_human_generated_eval.csv", answers)
    ranked = {str(q): [1000 + q if q < 50 else 5] for q in range(109)}
    run_file = _eval(tmp_path / "prime" / "runs" / "m" / "eval_results_human_generated_eval.csv",
                     ranked, _qa(tmp_path / "old.csv", {str(q): [1000 + q] for q in range(109)}),
                     columns=False)  # fmt: skip
    _summary(run_file.parent / "eval_metrics_human_generated_eval.json", {"hit@1": 0.45})
    queries, qrels = read_stark_qa(qa)
    run, _ = read_stark_eval(run_file)
    version = qrels_version(run["query_id"].unique(), queries, qrels, name="prime")
    assert version is not None
    (found,) = _audit(run_file, qa, run_file_metrics=None, version=version)
    assert "likely cause: a different qrels version: the run answers 109 queries" in found.message


def test_summary_files_beside_a_run(tmp_path: Path) -> None:
    folder = tmp_path / "runs"
    folder.mkdir()
    (folder / "bm25.trec").write_text("q 0 d 1 1.0 t\n")
    assert summaries_beside(folder / "bm25.trec") == []
    (folder / "metrics.json").write_text('{"nDCG@10": 0.5, "n_queries": 3}')
    (found,) = summaries_beside(folder / "bm25.trec")
    assert found.means == {"ndcg@10": (0.5, 0.05)}
    assert found.ignored == ("n_queries",)
    (folder / "dense.trec").write_text("q 0 d 1 1.0 t\n")  # metrics.json: whose is it now?
    assert summaries_beside(folder / "bm25.trec") == []
    (folder / "bm25.metrics.json").write_text('{"Recall@20": 45.5}')
    (found,) = summaries_beside(folder / "bm25.trec")
    assert found.percent
    assert found.means["recall@20"] == pytest.approx((0.455, 0.0005))
    (tmp_path / "leaderboard.csv").write_text("Model,Hit@1,MRR\nBM25,30.1,41.2\ndense,1,2\n")
    assert [s.row for s in summaries_beside(folder / "bm25.trec")] == [None, "BM25"]
    board = summaries_beside(folder / "bm25.trec")[1]
    assert board.means["hit@1"] == pytest.approx((0.301, 0.0005))
    assert board.name == f"{tmp_path / 'leaderboard.csv'} (row BM25)"
    for bad in ("[1, 2]", "{broken", '{"a": "b"}', '{"hit@1": true}'):
        (folder / "x.metrics.json").write_text(bad)
        assert read_summary(folder / "x.metrics.json") is None


def test_a_dotted_run_name_finds_its_own_summary_not_a_shorter_namesakes(tmp_path) -> None:
    folder = tmp_path / "runs"
    folder.mkdir()
    for name in ("gpt-3.5.parquet", "gpt-3.parquet", "bm25.run.gz"):
        (folder / name).write_bytes(b"")
    (folder / "gpt-3.metrics.json").write_text('{"mrr": 0.3}')
    # gpt-3.metrics.json is gpt-3.parquet's: gpt-3.5.parquet has none
    assert [s.path.name for s in summaries_beside(folder / "gpt-3.parquet")] == [
        "gpt-3.metrics.json"
    ]
    assert summaries_beside(folder / "gpt-3.5.parquet") == []
    (folder / "gpt-3.5.metrics.json").write_text('{"mrr": 0.5}')  # as import stark keeps it
    (found,) = summaries_beside(folder / "gpt-3.5.parquet")
    assert found.path.name == "gpt-3.5.metrics.json"
    assert found.means == {"mrr": (0.5, 0.05)}
    (folder / "bm25.metrics.json").write_text('{"mrr": 0.25}')  # up to the first dot
    assert [s.path.name for s in summaries_beside(folder / "bm25.run.gz")] == ["bm25.metrics.json"]


def test_a_dotted_run_name_takes_its_own_leaderboard_row(tmp_path) -> None:
    folder = tmp_path / "runs"
    folder.mkdir()
    for name in ("gpt-3.5.trec", "gpt-3.trec", "bge-1.5.trec", "bm25.run.gz"):
        (folder / name).write_text("q 0 d 1 1.0 t\n")
    (folder / "leaderboard.csv").write_text("model,mrr\ngpt-3,0.3\ngpt-3.5,0.5\nbm25,0.2\n")
    (found,) = summaries_beside(folder / "gpt-3.5.trec")  # was gpt-3's row
    assert (found.row, found.means) == ("gpt-3.5", {"mrr": (0.5, 0.05)})
    (found,) = summaries_beside(folder / "gpt-3.trec")
    assert found.row == "gpt-3"
    assert [s.row for s in summaries_beside(folder / "bm25.run.gz")] == ["bm25"]
    assert summaries_beside(folder / "bge-1.5.trec") == []  # no row bge-1.5


def test_validate_run_prints_the_audit_and_the_split_option_picks_the_queries(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    answers = {str(q): [100 + q] for q in range(8)}
    ranked = {str(q): ([100 + q, 1] if q < 4 else [1, 2]) for q in range(4)}  # test split only
    qa = _qa(tmp_path / "kb" / "stark_qa.csv", answers)
    run = _eval(tmp_path / "kb" / "runs" / "m" / "eval_results_test.csv", ranked, qa)
    _summary(run.parent / "eval_metrics_test.json", {"hit@1": 1.0, "mrr": 1.0})
    split = tmp_path / "kb" / "split" / "test.index"
    split.parent.mkdir()
    split.write_text("0\n1\n2\n3\n")
    args = ["validate", "--run", str(run), "--qrels", str(qa), "--metrics", "hit@1"]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "differs from the means computed on the 8 queries: hit@1 1.0000 (computed 0.5000)" in out
    assert "a different split: the summary equals the means over the queries the run answers" in out
    assert main([*args, "--split", str(split)]) == 0
    out = capsys.readouterr().out
    assert "matches the means computed on the 4 queries of split test (hit@1, mrr)" in out
    assert "warning: " not in out.split("run lines")[1].replace("matches", "")


# ---------------------------------------------------------------------------- hostile files


@pytest.mark.parametrize(
    ("text", "means", "ignored", "percent"),
    [
        ('{"hit@1": NaN, "mrr": 0.5}', {"mrr": 0.5}, ("hit@1",), False),
        (
            '{"hit@1": Infinity, "mrr": -Infinity, "ndcg": 0.5}',
            {"ndcg": 0.5},
            ("hit@1", "mrr"),
            False,
        ),
        ('{"hit@1": ' + "9" * 5000 + ', "mrr": 0.5}', {"mrr": 0.5}, ("hit@1",), False),
        ('{"hit@1": 1e999, "mrr": 0.5}', {"mrr": 0.5}, ("hit@1",), False),
        (
            '{"hit@1": "0.5", "mrr": true, "map": null, "ndcg": 0.5}',
            {"ndcg": 0.5},
            ("hit@1", "mrr", "map"),
            False,
        ),
        ('{"hit@1": 0.5, "hit@1": 0.25, "mrr": 0.5}', {"mrr": 0.5}, ("hit@1", "hit@1"), False),
        ('{"hit@1": 0.5, "Hit@1": 0.5, "mrr": 0.5}', {"hit@1": 0.5, "mrr": 0.5}, (), False),
        ('{"hit@1": 0.5, "success@1": 0.75}', None, ("hit@1", "success@1"), False),
        ('{"hit@1": 50, "mrr": 62.5}', {"hit@1": 0.5, "mrr": 0.625}, (), True),
        ('{"hit@1": 150, "mrr": 0.5}', {"hit@1": 150.0, "mrr": 0.5}, (), False),
        ('{"foo": 0.5, "hit@0": 0.5, "rprec@5": 0.5}', None, (), False),
    ],
)
def test_values_that_are_not_one_finite_number_per_metric_are_not_compared(
    tmp_path: Path, text: str, means: dict | None, ignored: tuple, percent: bool
) -> None:
    """NaN, infinities, numbers beyond a float, text, booleans and null are no metric values;
    two keys giving one metric different values leave it out; percentages only when no value
    exceeds 100."""
    path = tmp_path / "m.metrics.json"
    path.write_text(text)
    found = read_summary(path)
    if means is None:
        assert found is None
        return
    assert found is not None
    assert {k: v for k, (v, _) in found.means.items()} == pytest.approx(means)
    assert found.ignored == ignored
    assert found.percent is percent


def test_only_a_regular_file_of_its_own_folder_is_read_and_never_blocks(tmp_path: Path) -> None:
    """A FIFO named like a summary or a leaderboard (a read would wait for a writer forever), a
    folder, a symbolic link to a file outside the folder and a link loop are no summaries; a
    link within the folder is one."""
    outside = tmp_path / "secret.json"
    outside.write_text('{"hit@1": 0.5}')
    folder = tmp_path / "coll" / "kb" / "runs"
    folder.mkdir(parents=True)
    run = folder / "eval_results_test.csv"
    run.write_text("idx,query_id,pred_rank\n0,1,[1]\n")
    os.mkfifo(folder / "eval_metrics_test.json")
    os.mkfifo(folder / "leaderboard.csv")
    (folder / "metrics.json").mkdir()
    (folder / "eval_results_test.metrics.json").symlink_to(outside)
    (folder.parent / "leaderboard_loop.csv").symlink_to(folder.parent / "leaderboard_loop.csv")
    (folder.parent / "eval_metrics_x.json").symlink_to(outside)
    assert summaries_beside(run, "m") == []
    assert nearby_summaries(run) == []
    (folder / "kept.json").write_text('{"hit@1": 0.5}')
    (folder / "eval_results_test.metrics.json").unlink()
    (folder / "eval_results_test.metrics.json").symlink_to("kept.json")
    assert [s.means for s in summaries_beside(run, "m")] == [{"hit@1": (0.5, 0.05)}]


def test_a_leaderboard_row_is_the_models_own_or_none(tmp_path: Path) -> None:
    run = tmp_path / "bm25.trec"
    run.write_text("q 0 d 1 1.0 t\n")
    board = tmp_path / "leaderboard.csv"
    board.write_text("model,hit@1\nBM25,0.25\nbm25,0.5\n")
    (found,) = summaries_beside(run, "bm25")
    assert (found.row, found.means["hit@1"][0]) == ("bm25", 0.5)  # the exact name
    board.write_text("model,hit@1\nBM25,0.25\nBm25,0.5\n")
    assert summaries_beside(run, "bm25") == []  # two rows in other cases: ambiguous
    board.write_text("model,hit@1,hit@1,mrr\nbm25,0.5,0.25,=1+1\n")
    assert summaries_beside(run, "bm25") == []  # a formula is no number; hit@1 given twice
    board.write_text("model,hit@1,mrr\nbm25,nan,0.5\n")
    (found,) = summaries_beside(run, "bm25")
    assert (list(found.means), found.ignored) == (["mrr"], ("hit@1",))


def test_a_malformed_wrapped_summary_keeps_its_means_and_drops_the_rest(tmp_path: Path) -> None:
    """The keys ``import stark`` writes around the means, hand-edited into other types, are
    left out one by one (a bad copy anywhere in the collection must not stop every audit)."""
    path = tmp_path / "m.metrics.json"
    path.write_text(
        json.dumps(
            {
                "metrics": {"hit@1": 0.5},
                "run_file_means": {"hit@1": "x", "mrr": None, "map": 0.25},
                "identical_to": "a.json",
                "split": ["test"],
                "source": "<b>x</b>\nsecond line",
                "digest": {"a": 1},
            }
        )
    )
    found = read_summary(path)
    assert found is not None
    assert found.run_file_means == {"map": 0.25}
    assert (found.identical_to, found.split, found.source, found.digest) == ((), None, None, "")
    assert found.name == str(path)


def test_a_percent_summary_kept_by_import_keeps_its_printed_precision(tmp_path: Path) -> None:
    """``import stark`` writes a percent summary back as percentages: 58.33 / 100 * 100 is
    58.32999999999999 in floating point, which read again would stand for that value alone
    instead of anything in [58.325, 58.335], and the kept summary would no longer match."""
    answers = {"0": [10], "1": [11], "2": [12], "3": [13]}
    ranked = {"0": [1, 2, 3], "1": [11, 1, 2], "2": [12, 1, 2], "3": [1, 2, 13]}
    qa, run = _domain(tmp_path / "kb", answers, ranked)  # hit@1 0.5, mrr 0.58333...
    text = '{"Hit@1": 50, "MRR": 58.33}'
    original = _summary(run.parent / "eval_metrics_human_generated_eval.json", {}, text)
    assert _audit(run, qa)[0].code == "summary_matches"
    summary = read_summary(original)
    assert summary is not None
    assert summary.percent
    kept = tmp_path / "bundle" / "m.metrics.json"
    kept.parent.mkdir()
    kept.write_text(json.dumps(wrapped(summary, "kb/eval_metrics.json", (), {}), indent=2))
    again = read_summary(kept)
    assert again is not None
    for metric, (value, printed) in summary.means.items():
        assert again.means[metric][0] == pytest.approx(value, rel=1e-12)
        assert again.means[metric][1] == pytest.approx(printed, rel=1e-9)
    ctx = AuditContext(qrels=read_stark_qa(qa)[1])
    assert audit_summary(again, read_stark_eval(run)[0], ctx)[0].code == "summary_matches"


def test_a_mismatch_message_stays_one_bounded_line(tmp_path: Path) -> None:
    qa, run = _domain(tmp_path / "kb", ANSWERS, RANKED)
    means = _means(run, qa)
    keys = {f"key\n{i}": i for i in range(5000)}
    _summary(run.parent / "eval_metrics_human_generated_eval.json", {**means, **keys})
    (line,) = _audit(run, qa)
    assert line.code == "summary_matches"
    assert "\n" not in line.message
    assert line.message.endswith("'key\\n9' and 4,990 more")
    _summary(run.parent / "eval_metrics_human_generated_eval.json", {"hit@1": 1e308})
    (line,) = _audit(run, qa)
    assert "hit@1 1e+308 (computed 0.25)" in line.message


def test_a_summary_of_many_metrics_is_one_bounded_line_each_way(tmp_path: Path) -> None:
    """Every metric of the summary named in the line would make it as long as the file (1 MiB
    of ``"hit@k": v`` keys): the first twenty are named, then how many more."""
    qa, run = _domain(tmp_path / "kb", ANSWERS, RANKED)
    run_table, _ = read_stark_eval(run)
    names = [f"hit@{k}" for k in range(1, 301)]
    means = evaluate(run_table, read_stark_qa(qa)[1], names)[names].mean().to_dict()
    path = run.parent / "eval_metrics_human_generated_eval.json"
    _summary(path, means)
    (line,) = _audit(run, qa)
    assert line.code == "summary_matches"
    listed = ", ".join(f"hit@{k}" for k in range(1, 21))
    assert line.message.endswith(f"({listed} and 280 more)")
    _summary(path, dict.fromkeys(names, 0.9))
    (line,) = _audit(run, qa)
    assert line.code == "summary_mismatch"
    assert len(line.message) < 1500
    assert "hit@20 0.9000 (computed 0.7500) and 280 more;" in line.message


# ------------------------------------------------------------------------------- real files


def _real_audit(real_dir: Path, domain: str) -> list:
    folder = real_dir / "stark" / domain
    run_file = folder / "runs/ada-002/eval_results_human_generated_eval.csv"
    return _audit(run_file, folder / "stark_qa_human_generated_eval.csv")


@pytest.mark.real
def test_real_prime_summary_is_a_copy_of_mags(real_dir: Path) -> None:
    (found,) = _real_audit(real_dir, "prime")
    assert found.code == "summary_mismatch"
    assert found.count == 14  # every metric of the file
    assert "hit@1 0.2857 (computed 0.2110)" in found.message
    assert (
        "likely cause: a copied file: the run file's own per-query hit@1 averages to 0.2110 (as "
        "computed here), not to the summary's 0.2857, and its bytes are identical to those of "
    ) in found.message
    assert found.message.endswith("mag/runs/ada-002/eval_metrics_human_generated_eval.json")


@pytest.mark.real
def test_real_amazon_summary_matches_but_mrr_and_map_by_the_saved_depth(real_dir: Path) -> None:
    (found,) = _real_audit(real_dir, "amazon")
    assert "mrr 0.526489 (computed 0.526472), map 0.370748 (computed 0.370711) (its other 12 " in (
        found.message
    )
    assert "the saved depth: 5 of 81 queries have no relevant document within the saved depth " in (
        found.message
    )
    assert "mrr by at most 0.000062 (the summary is 0.000017 higher)" in found.message
    assert "map by at most 0.000148 (the summary is 0.000036 higher)" in found.message


@pytest.mark.real
def test_real_mag_summary_matches_but_for_the_depth_and_a_gold_id_that_is_no_paper(
    real_dir: Path,
) -> None:
    depth, evaluator = _real_audit(real_dir, "mag")
    assert "mrr 0.359785 (computed 0.359764), map 0.25895 (computed 0.25875)" in depth.message
    assert "28 of 84 queries have no relevant document within the saved depth 1000" in (
        depth.message
    )
    assert "recall@50 0.4665 (computed 0.4605), recall@100 0.5427 (computed 0.5367)" in (
        evaluator.message
    )
    assert "recall@50 on 1 query (50), recall@100 on 1 query (50)" in evaluator.message
    assert "its bytes are identical" not in depth.message + evaluator.message
