"""``import stark``: the real STaRK folders (marker ``real``) and hand-made folders for the
data checks (stale eval.py output, idx vs query_id, Amazon id conventions, Prime's human set)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd
import pytest

from analysis.cli import main
from analysis.core.errors import InputError
from analysis.core.metrics import evaluate
from analysis.io import load_qrels, load_run
from analysis.io.bundle import load_dataset, read_manifest
from analysis.io.importers import import_stark

METRICS = ["hit@1", "hit@5", "recall@20", "mrr"]
SIZES = {"amazon": (9100, 81), "mag": (13323, 84), "prime": (11204, 109)}


def _qa(path: Path, rows: list[tuple[str, str, list]]) -> Path:
    lines = ["id,query,answer_ids"] + [f'{q},"{t}","{json.dumps(a)}"' for q, t, a in rows]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n")
    return path


def _eval(path: Path, rows: list[tuple[str, str, list]]) -> Path:
    lines = ["idx,query_id,pred_rank,hit@1"] + [f'{i},{q},"{json.dumps(p)}",0' for i, q, p in rows]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n")
    return path


def _small(root: Path) -> Path:
    """A tiny domain folder: 4 synthesized queries (split test/train), 2 human queries."""
    _qa(
        root / "stark_qa" / "stark_qa.csv",
        [("0", "a", [5]), ("1", "b", [6, 7]), ("2", "c", [8]), ("3", "d", [9])],
    )
    _qa(root / "stark_qa_human_generated_eval.csv", [("0", "x", [5]), ("1", "y", [7])])
    (root / "split").mkdir()
    (root / "split" / "test.index").write_text("0\n1\n")
    (root / "split" / "train.index").write_text("2\n3\n")
    (root / "split" / "test-0.1.index").write_text("1\n")
    return root


# ------------------------------------------------------------------------------- real data


@pytest.mark.real
@pytest.mark.parametrize("domain", ["amazon", "mag", "prime"])
def test_real_domains_import_with_splits_slices_and_runs(real_dir, tmp_path, domain) -> None:
    src = real_dir / "stark" / domain
    result = import_stark(src, tmp_path / "bundle")
    bundle = read_manifest(tmp_path / "bundle")
    syn, human = bundle.datasets[f"{domain}-synthesized"], bundle.datasets[f"{domain}-human"]
    assert syn.default_split == "test"
    assert set(syn.splits) == {"train", "val", "test"}
    assert syn.metrics == tuple(METRICS)
    assert list(human.runs) == ["ada-002"]
    ds = load_dataset(syn, "all")
    assert len(ds.queries) == SIZES[domain][0]
    assert set(load_dataset(syn).queries["split"]) == {"test"}  # the default split
    test = ds.queries[ds.queries["split"] == "test"]
    # every test query has its AvaTaR pattern and its MoR metapath (Amazon's are re-keyed
    # from the current id convention to the QA file's old ids)
    assert (test["pattern"] != "none").mean() > 0.99
    assert (test["metapath"] != "none").mean() > 0.99
    assert set(test["query_type"]) == {"synthesized"}
    hds = load_dataset(human)
    assert len(hds.queries) == SIZES[domain][1]
    assert set(hds.queries["query_type"]) == {"human"}
    assert (hds.queries["pattern"] != "none").all()
    if domain == "amazon":
        assert any("re-keyed" in n and "group_query_test" in n for n in result.notes)
    if domain == "prime":
        assert any("109-row" in n for n in result.notes)
    if domain == "prime":
        assert "drug -target-> gene/protein" in set(ds.queries["metapath"]) or any(
            "->" in m for m in ds.queries["metapath"]
        )


@pytest.mark.real
@pytest.mark.parametrize("domain", ["amazon", "mag", "prime"])
def test_imported_numbers_equal_evaluate_on_the_source_files(real_dir, tmp_path, domain) -> None:
    src = real_dir / "stark" / domain
    import_stark(src, tmp_path / "bundle")
    out = tmp_path / "source.csv"
    run_file = src / "runs" / "ada-002" / "eval_results_human_generated_eval.csv"
    qrels_file = src / "stark_qa_human_generated_eval.csv"
    code = main(
        [
            "evaluate",
            "--run",
            str(run_file),
            "--qrels",
            str(qrels_file),
            "--metrics",
            ",".join(METRICS),
            "--out",
            str(out),
        ]
    )
    assert code == 0
    source = pd.read_csv(out, dtype={"query_id": str}).set_index("query_id").sort_index()
    spec = read_manifest(tmp_path / "bundle").datasets[f"{domain}-human"]
    ds = load_dataset(spec)
    mine = evaluate(load_run(spec.runs["ada-002"]), ds.qrels, METRICS)
    mine = mine.set_index("query_id").sort_index()
    pd.testing.assert_frame_equal(mine[METRICS], source[METRICS], check_dtype=False)
    # the bundle's qrels are the source's
    assert len(ds.qrels) == len(load_qrels(qrels_file))


@pytest.mark.real
def test_amazon_current_id_file_rekeys_the_old_split(real_dir, tmp_path) -> None:
    """A folder whose QA file uses the current Amazon ids (with old_id) and whose split uses the
    old ones: the split is re-keyed to the current ids, the groups (current ids) are not."""
    src = real_dir / "stark" / "amazon"
    root = tmp_path / "amazon"
    (root / "split").mkdir(parents=True)
    shutil.copy(src / "stark_qa_current_ids.csv", root / "stark_qa.csv")
    shutil.copy(src / "split" / "test.index", root / "split" / "test.index")
    shutil.copytree(src / "query_groups", root / "query_groups")
    result = import_stark(root, tmp_path / "bundle")
    ds = load_dataset(read_manifest(tmp_path / "bundle").datasets["amazon-synthesized"])
    test = ds.queries[ds.queries["split"] == "test"]
    assert len(test) == 1642
    assert (test["pattern"] != "none").all()
    assert any("split/test.index" in n and "re-keyed" in n for n in result.notes)
    assert not any("group_query_test" in n for n in result.notes)


# ------------------------------------------------------------------------------ hand-made


def test_small_folder_datasets_splits_and_models(tmp_path) -> None:
    root = _small(tmp_path / "toy")
    _eval(root / "runs" / "bm25" / "eval_results_test.csv", [("0", "0", [5, 1]), ("1", "1", [7])])
    _eval(
        root / "runs" / "bm25" / "human" / "eval_results_human_generated_eval.csv",
        [("0", "0", [1, 5])],
    )
    (root / "runs" / "dense.trec").write_text("0 Q0 5 1 2.0 d\n1 Q0 6 1 1.0 d\n")
    (root / "runs" / "leaderboard").mkdir()
    (root / "runs" / "leaderboard" / "submission.csv").write_text(  # STaRK's submission format
        'query_id,pred_rank\n0,"[1, 5]"\n1,"[6]"\n'
    )
    (root / "runs" / "bm25" / "eval_metrics_test.json").write_text("{}")
    import_stark(root, tmp_path / "out")
    bundle = read_manifest(tmp_path / "out")
    assert list(bundle.datasets) == ["toy-synthesized", "toy-human"]
    syn = bundle.datasets["toy-synthesized"]
    assert set(syn.runs) == {"bm25", "dense", "leaderboard"}
    assert load_run(syn.runs["leaderboard"])["doc_id"].tolist() == ["1", "5", "6"]
    assert list(bundle.datasets["toy-human"].runs) == ["bm25/human"]
    assert set(syn.splits) == {"test", "train", "test-0.1"}
    assert syn.default_split == "test"
    assert (tmp_path / "out" / "toy-synthesized" / "split" / "test-0.1.index").read_text() == "1\n"
    run = load_run(syn.runs["bm25"])
    assert run["query_id"].tolist() == ["0", "0", "1"]
    assert run["rank"].tolist() == [1, 2, 1]


def test_name_option_and_out_inside_input_refused(tmp_path) -> None:
    root = _small(tmp_path / "toy")
    with pytest.raises(InputError, match="outside the input"):
        import_stark(root, root / "bundle")
    assert not (root / "bundle").exists()
    import_stark(root, tmp_path / "out", name="mine")
    assert set(read_manifest(tmp_path / "out").datasets) == {"mine-synthesized", "mine-human"}


def test_failed_import_leaves_nothing_and_keeps_the_old_bundle(tmp_path) -> None:
    root = _small(tmp_path / "toy")
    import_stark(root, tmp_path / "out")
    before = (tmp_path / "out" / "bundle.toml").read_text()
    (root / "query_groups").mkdir()
    (root / "query_groups" / "group_query_test.json").write_text("{broken")
    with pytest.raises(InputError, match=r"group_query_test\.json:1: invalid JSON"):
        import_stark(root, tmp_path / "out")
    assert (tmp_path / "out" / "bundle.toml").read_text() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out", "toy"]  # no temp folder left


def test_stale_eval_csv_with_conflicting_rows_is_an_error(tmp_path) -> None:
    root = _small(tmp_path / "toy")
    _eval(
        root / "runs" / "m" / "eval_results_test.csv",
        [("0", "0", [5, 1]), ("1", "1", [7]), ("0", "0", [1, 5, 9])],
    )
    with pytest.raises(InputError) as info:
        import_stark(root, tmp_path / "out")
    assert "eval_results_test.csv:4: query_id 0 appears again (first on line 2)" in str(info.value)
    assert "resumes" in str(info.value)
    assert not (tmp_path / "out").exists()


def test_stale_eval_csv_identical_rows_dropped_and_mixed_lengths_noted(tmp_path) -> None:
    root = _small(tmp_path / "toy")
    _eval(
        root / "runs" / "m" / "eval_results_test.csv",
        [("0", "0", [5, 1]), ("1", "1", [7]), ("0", "0", [5, 1])],
    )
    result = import_stark(root, tmp_path / "out")
    notes = " ".join(result.notes)
    assert "1 duplicate rows" in notes
    assert "pred_rank lengths differ (1 ids for 1 queries, 2 ids for 1 queries)" in notes
    run = load_run(read_manifest(tmp_path / "out").datasets["toy-synthesized"].runs["m"])
    assert len(run) == 3


def test_idx_differs_from_query_id_is_noted_and_query_id_used(tmp_path) -> None:
    root = _small(tmp_path / "toy")
    _eval(root / "runs" / "m" / "eval_results_test.csv", [("0", "1", [7]), ("1", "0", [5])])
    result = import_stark(root, tmp_path / "out")
    assert any("idx differs from query_id on 2 rows" in n for n in result.notes)
    spec = read_manifest(tmp_path / "out").datasets["toy-synthesized"]
    per_query = evaluate(load_run(spec.runs["m"]), load_dataset(spec).qrels, ["hit@1"])
    assert per_query.set_index("query_id").loc[["0", "1"], "hit@1"].tolist() == [1.0, 1.0]


def test_query_id_written_from_idx_is_reported(tmp_path) -> None:
    root = tmp_path / "toy"
    _qa(root / "stark_qa.csv", [("10", "a", [5]), ("20", "b", [6]), ("30", "c", [7])])
    _eval(
        root / "runs" / "m" / "eval_results_test.csv",
        [("0", "0", [5]), ("1", "1", [6]), ("2", "2", [7])],
    )
    result = import_stark(root, tmp_path / "out")
    assert any("was query_id written from idx" in n for n in result.notes)


def test_amazon_old_ids_detected_and_current_runs_rekeyed(tmp_path) -> None:
    """Old convention: each query's id is one of its answers; a run keyed by the current ids
    (rank of the old id) is re-keyed, so it scores instead of missing every query."""
    root = tmp_path / "amazon"
    _qa(root / "stark_qa.csv", [("70", "a", [70, 1]), ("15", "b", [15]), ("42", "c", [42, 3])])
    # current ids: rank of the old id: 15 -> 0, 42 -> 1, 70 -> 2
    (root / "runs").mkdir()
    (root / "runs" / "new.trec").write_text("2 Q0 70 1 1.0 t\n0 Q0 15 1 1.0 t\n1 Q0 3 1 1.0 t\n")
    result = import_stark(root, tmp_path / "out")
    notes = " ".join(result.notes)
    assert "old convention" in notes
    assert "new.trec: keyed by the current Amazon query ids" in notes
    spec = read_manifest(tmp_path / "out").datasets["amazon-synthesized"]
    run = load_run(spec.runs["new"])
    assert sorted(run["query_id"]) == ["15", "42", "70"]
    scores = evaluate(run, load_dataset(spec).qrels, ["hit@1"])
    assert scores["hit@1"].tolist() == [1.0, 1.0, 1.0]


def test_prime_human_set_rows_are_named(tmp_path) -> None:
    root = tmp_path / "prime"
    rows = [(str(i), f"q{i}", [i]) for i in range(98)]
    _qa(root / "stark_qa_human_generated_eval.csv", rows)
    result = import_stark(root, tmp_path / "out")
    assert any("current 98-row release (98 queries)" in n for n in result.notes)
    assert list(read_manifest(tmp_path / "out").datasets) == ["prime-human"]


def test_prime_run_made_on_the_other_human_release_is_noted(tmp_path) -> None:
    root = tmp_path / "prime"
    _qa(root / "stark_qa_human_generated_eval.csv", [(str(i), f"q{i}", [i]) for i in range(109)])
    _eval(
        root / "runs" / "m" / "eval_results_human_generated_eval.csv",
        [(str(i), str(i), [i]) for i in range(98)],
    )
    result = import_stark(root, tmp_path / "out")
    notes = " ".join(result.notes)
    assert "older 109-row release (109 queries)" in notes
    assert (
        "qrels version: the run answers 98 queries (all among the 109 of these qrels): it was made "
        "on the current 98-row release of Prime's human-generated set, these qrels are the older "
        "109-row release" in notes
    )


def test_cli_import_stark_prints_summary_and_bad_input_is_one_line(tmp_path, capsys) -> None:
    root = _small(tmp_path / "toy")
    assert main(["import", "stark", "--root", str(root), "--out", str(tmp_path / "out")]) == 0
    out = capsys.readouterr().out
    assert "toy-synthesized: 4 queries" in out
    assert (
        main(
            ["import", "stark", "--root", str(tmp_path / "nothing"), "--out", str(tmp_path / "o2")]
        )
        == 2
    )
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1
    assert err[0].startswith("error: ")
