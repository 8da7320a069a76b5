"""``import stark``: the real STaRK folders (marker ``real``) and hand-made folders for the
data checks (stale eval.py output, idx vs query_id, Amazon id conventions, Prime's human set)."""

from __future__ import annotations

import gzip
import json
import os
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


@pytest.mark.parametrize("name", ["stark_qa.csv", "stark_qa.csv.gz"])
def test_a_current_id_qa_file_rekeys_an_old_split_gzipped_or_not(tmp_path, name) -> None:
    # the old_id column of a gzipped QA file was looked for in the compressed bytes
    rows = [("0", "15"), ("1", "42"), ("2", "70"), ("3", "99")]  # current id = rank of old id
    text = "id,query,answer_ids,old_id\n" + "".join(
        f'{new},q{new},"[{old}]",{old}\n' for new, old in rows
    )
    root = tmp_path / "amazon"
    (root / "split").mkdir(parents=True)
    data = text.encode()
    (root / name).write_bytes(gzip.compress(data) if name.endswith(".gz") else data)
    (root / "split" / "test.index").write_text("70\n15\n")  # old ids
    result = import_stark(root, tmp_path / "out")
    assert any("split/test.index: keyed by the old Amazon query ids" in n for n in result.notes)
    spec = read_manifest(tmp_path / "out").datasets["amazon-synthesized"]
    assert sorted(load_dataset(spec).queries["query_id"]) == ["0", "2"]


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


# ------------------------------------------------------------ other knowledge bases, audits


def _avatar_flickr(root: Path) -> Path:
    """AvaTaR's Flickr30k-Entities layout: ``qa.csv`` (a caption per image, the image its own
    answer), ``split/*.index`` and ``runs/<model>/eval_results_test.csv`` with its
    ``eval_metrics_test.json``. 6 images; test = 3 of them; the run finds 2 at rank 1."""
    images = ["2318834690", "3688343105", "273572758", "747093215", "5091113794", "4918525947"]
    rows = [(i, f"caption of {i}", [int(i)]) for i in images]
    _qa(root / "qa.csv", rows)
    (root / "split").mkdir()
    (root / "split" / "train.index").write_text("\n".join(images[:2]) + "\n")
    (root / "split" / "val.index").write_text(images[2] + "\n")
    (root / "split" / "test.index").write_text("\n".join(images[3:]) + "\n")
    test = images[3:]
    ranked = [
        ("0", test[0], [int(test[0]), int(images[0])]),
        ("1", test[1], [int(images[1]), int(test[1])]),
        ("2", test[2], [int(test[2])]),
    ]
    _eval(root / "runs" / "vss" / "eval_results_test.csv", ranked)
    summary = {"hit@1": 2 / 3, "hit@5": 1.0, "recall@20": 1.0, "mrr": (1 + 0.5 + 1) / 3}
    (root / "runs" / "vss" / "eval_metrics_test.json").write_text(json.dumps(summary))
    return root


def test_avatar_flickr_layout_is_imported_evaluated_and_its_summary_audited(
    tmp_path: Path, capsys
) -> None:
    from analysis.io.audits import run_audits
    from analysis.io.importers.scan import suggest_importer

    root = _avatar_flickr(tmp_path / "flickr30k_entities")
    assert suggest_importer(root) == "stark"  # what the Open data page offers
    result = import_stark(root, tmp_path / "bundle")
    assert [d.name for d in result.datasets] == ["flickr30k_entities"]
    notes = " ".join(result.notes)
    assert "Amazon" not in notes  # captions owning their image id: no id convention re-keyed
    assert (
        "eval_metrics_test.json: the published summary matches the means computed on the 3 "
        "queries of split test (hit@1, hit@5, recall@20, mrr)"
    ) in notes
    spec = read_manifest(tmp_path / "bundle").datasets["flickr30k_entities"]
    assert spec.family == "stark"
    assert set(spec.splits) == {"train", "val", "test"}
    assert spec.default_split == "test"
    ds = load_dataset(spec)
    assert len(ds.queries) == 3
    assert set(ds.queries["query_type"]) == {"all"}
    out = tmp_path / "pq.csv"
    assert main(["evaluate", "--bundle", str(tmp_path / "bundle"), "--dataset",
                 "flickr30k_entities", "--out", str(out)]) == 0  # fmt: skip
    printed = capsys.readouterr().out
    assert "dataset flickr30k_entities, split test: 3 queries" in printed
    assert (
        "vss: flickr30k_entities/runs/vss/eval_metrics_test.json: the published summary matches "
        "the means computed on the 3 queries of split test"
    ) in printed
    table = pd.read_csv(out, dtype={"query_id": str}).set_index("query_id")
    assert table["hit@1"].mean() == pytest.approx(2 / 3)
    assert table["mrr"].mean() == pytest.approx(2.5 / 3)
    # the bundle keeps the summary beside the run: the app audits it again
    assert (tmp_path / "bundle" / "flickr30k_entities" / "runs" / "vss.metrics.json").is_file()
    runs = {"vss": load_run(spec.runs["vss"])}
    (line,) = run_audits(spec, runs, dataset=ds)["vss"]
    assert line.code == "summary_matches"
    assert line.message.startswith("flickr30k_entities/runs/vss/eval_metrics_test.json: ")


def test_prefix_qa_files_name_the_datasets_after_the_collection(tmp_path: Path) -> None:
    root = tmp_path / "mykb"
    _qa(root / "mykb_qa.csv", [("1", "a", [5]), ("2", "b", [6])])
    _qa(root / "mykb_qa_human_generated_eval.csv", [("9", "h", [5])])
    (root / "notes_qa.csv").write_text("id,question\n1,x\n")  # no STaRK columns: not a QA file
    result = import_stark(root, tmp_path / "out", name="kb")
    assert [d.name for d in result.datasets] == ["kb", "kb-human"]
    assert set(result.datasets[1].queries["query_type"]) == {"human"}
    _qa(root / "qa.csv", [("1", "a", [5])])  # qa.csv wins over a prefixed file
    result = import_stark(root, tmp_path / "out2")
    assert result.datasets[0].description.endswith("(qa.csv)")
    assert any("mykb_qa.csv: also a QA file of the synthesized queries; qa.csv is imported" in n
               for n in result.notes)  # fmt: skip


@pytest.mark.parametrize("folder", ["query_groups", "metapaths"])
def test_deeply_nested_group_or_metapath_json_is_one_line(tmp_path: Path, folder: str) -> None:
    root = _small(tmp_path / "toy")
    path = root / folder / "group_query_test.json"
    path.parent.mkdir(exist_ok=True)
    path.write_text("[" * 100_000 + "]" * 100_000)  # json.loads: RecursionError
    with pytest.raises(InputError) as info:
        import_stark(root, tmp_path / "out")
    assert str(info.value).startswith(f"{path}:1: JSON nested deeper than ")
    assert not (tmp_path / "out").exists()


def test_run_files_of_one_stem_are_two_models(tmp_path: Path) -> None:
    root = _small(tmp_path / "toy")
    (root / "runs" / "m").mkdir(parents=True)
    (root / "runs" / "bm25.trec").write_text("0 Q0 5 1 2.0 x\n1 Q0 6 1 2.0 x\n")
    (root / "runs" / "bm25.tsv").write_text("query_id\tdoc_id\tscore\n0\t9\t1.0\n")
    (root / "runs" / "m" / "x.trec").write_text("0 Q0 5 1 2.0 x\n")
    (root / "runs" / "m" / "x.tsv").write_text("query_id\tdoc_id\tscore\n0\t9\t1.0\n")
    (root / "runs" / "m" / "y.trec").write_text("0 Q0 9 1 2.0 x\n")
    import_stark(root, tmp_path / "out")
    spec = read_manifest(tmp_path / "out").datasets["toy-synthesized"]
    assert sorted(spec.runs) == ["bm25.trec", "bm25.tsv", "m/x.trec", "m/x.tsv", "m/y"]
    assert load_run(spec.runs["bm25.trec"])["doc_id"].tolist() == ["5", "6"]
    assert load_run(spec.runs["bm25.tsv"])["doc_id"].tolist() == ["9"]
    assert load_run(spec.runs["m/x.trec"])["doc_id"].tolist() == ["5"]


def test_a_table_of_per_query_metrics_in_runs_is_skipped_as_no_run(tmp_path: Path) -> None:
    root = _small(tmp_path / "toy")
    _eval(root / "runs" / "m" / "eval_results_test.csv", [("0", "0", [5]), ("1", "1", [6])])
    per_query = root / "runs" / "m" / "per_query.csv"
    per_query.write_text("query_id,hit@1,mrr\n0,1,1\n1,0,0.5\n")
    (root / "runs" / "pt.csv").write_text("qid,docno,score\n0,5,1.5\n")  # a run (PyTerrier)
    result = import_stark(root, tmp_path / "out")
    assert f"{per_query}: skipped (a table without a doc_id column, not a run)" in result.notes
    spec = read_manifest(tmp_path / "out").datasets["toy-synthesized"]
    assert sorted(spec.runs) == ["m/eval_results_test", "pt"]


def test_split_ids_that_are_no_query_are_a_note(tmp_path: Path) -> None:
    root = _small(tmp_path / "toy")
    split = root / "split" / "test.index"
    split.write_text("0\n01\n 9\n")  # 01 is not query 1
    result = import_stark(root, tmp_path / "out")
    assert (
        f"{split}: 2 of 3 query ids are not queries of stark_qa.csv (e.g. '01'): the split "
        "leaves them out"
    ) in result.notes
    assert not any("train.index" in n for n in result.notes)


def test_a_run_folder_name_that_is_not_utf8_is_read_with_a_replacement(tmp_path: Path) -> None:
    # the name (a surrogate escape in Python) ended in a UnicodeEncodeError writing the manifest
    root = _small(tmp_path / "toy")
    folder = root / "runs" / os.fsdecode(b"m\xff")
    _eval(folder / "eval_results_test.csv", [("0", "0", [5]), ("1", "1", [6])])
    import_stark(root, tmp_path / "out")
    spec = read_manifest(tmp_path / "out").datasets["toy-synthesized"]
    assert list(spec.runs) == ["m\ufffd"]
    assert load_run(spec.runs["m\ufffd"])["doc_id"].tolist() == ["5", "6"]


def test_no_qa_file_is_one_line_naming_the_names_looked_for(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    with pytest.raises(InputError, match=r"no QA file with STaRK's columns id,query,answer_ids"):
        import_stark(tmp_path / "empty", tmp_path / "out")


def test_a_depth_limited_run_and_a_copied_summary_are_import_notes(tmp_path: Path) -> None:
    root = _small(tmp_path / "coll" / "toy")
    _eval(root / "runs" / "m" / "eval_results_test.csv", [("0", "0", [1, 2]), ("1", "1", [7])])
    other = tmp_path / "coll" / "other" / "runs" / "m"
    other.mkdir(parents=True)
    (other / "eval_metrics_test.json").write_text('{"hit@1": 0.9, "mrr": 0.95}')
    shutil.copy(other / "eval_metrics_test.json", root / "runs" / "m" / "eval_metrics_test.json")
    result = import_stark(root, tmp_path / "out")
    notes = "\n".join(result.notes)
    assert (
        "eval_results_test.csv: mrr reads the whole ranking: 1 of 2 queries has no relevant "
        "document within the saved depth 2"
    ) in notes
    assert (
        "eval_metrics_test.json: the published summary differs from the means computed on the "
        "2 queries of split test: hit@1 0.9000 (computed 0.5000), mrr 0.9500 (computed "
    ) in notes
    assert (
        "likely cause: a copied file: the run file's own per-query hit@1 averages to 0.0000 "
        "(computed here: 0.5000), not to the summary's 0.9000, and its bytes are identical to "
        "those of "
    ) in notes
    kept = json.loads(
        (tmp_path / "out" / "toy-synthesized" / "runs" / "m.metrics.json").read_text()
    )
    assert kept["source"] == "toy/runs/m/eval_metrics_test.json"
    assert kept["identical_to"] == ["other/runs/m/eval_metrics_test.json"]
    assert kept["split"] == "test"


def test_the_kept_summary_counts_a_repeated_row_of_the_run_file_once(tmp_path: Path) -> None:
    root = _small(tmp_path / "toy")
    run = root / "runs" / "m" / "eval_results_test.csv"
    run.parent.mkdir(parents=True)
    # q0's row written twice (eval.py resumed): its own hit@1 averages to 0.5, not 2/3
    rows = ['0,0,"[5]",1.0', '1,1,"[9]",0.0', '0,0,"[5]",1.0']
    run.write_text("idx,query_id,pred_rank,hit@1\n" + "\n".join(rows) + "\n")
    (run.parent / "eval_metrics_test.json").write_text('{"hit@1": 0.5}')
    result = import_stark(root, tmp_path / "out")
    assert any("1 duplicate rows (same query_id and ranking) dropped" in n for n in result.notes)
    kept = json.loads(
        (tmp_path / "out" / "toy-synthesized" / "runs" / "m.metrics.json").read_text()
    )
    assert kept["run_file_means"] == {"hit@1": 0.5}


@pytest.mark.real
def test_real_prime_bundle_keeps_the_copied_summary_for_the_app(real_dir, tmp_path) -> None:
    from analysis.io.audits import run_audits

    result = import_stark(real_dir / "stark" / "prime", tmp_path / "bundle")
    assert any("hit@1 0.2857 (computed 0.2110)" in n for n in result.notes)
    spec = read_manifest(tmp_path / "bundle").datasets["prime-human"]
    (found,) = run_audits(spec, {"ada-002": load_run(spec.runs["ada-002"])})["ada-002"]
    assert found.code == "summary_mismatch"
    assert found.message.startswith(
        "prime/runs/ada-002/eval_metrics_human_generated_eval.json: the published summary differs"
    )
    assert "hit@1 0.2857 (computed 0.2110)" in found.message
    assert found.message.endswith(
        "likely cause: a copied file: the run file's own per-query hit@1 averages to 0.2110 (as "
        "computed here), not to the summary's 0.2857, and its bytes are identical to those of "
        "mag/runs/ada-002/eval_metrics_human_generated_eval.json"
    )


def audit_collection(base: Path) -> Path:
    """A collection folder ``base`` of STaRK-format knowledge bases for the audits: ``toy``
    (4 synthesized queries, a run saved at depth 2 on the test split, and a summary that is a
    byte copy of ``other``'s), ``other`` (its summary only) and ``flickr30k_entities``
    (AvaTaR's layout, its summary matching). Returns ``base``."""
    root = _small(base / "toy")
    _eval(root / "runs" / "m" / "eval_results_test.csv", [("0", "0", [1, 2]), ("1", "1", [7, 3])])
    other = base / "other" / "runs" / "m"
    other.mkdir(parents=True)
    (other / "eval_metrics_test.json").write_text('{"hit@1": 0.9, "mrr": 0.95}')
    shutil.copy(other / "eval_metrics_test.json", root / "runs" / "m" / "eval_metrics_test.json")
    _avatar_flickr(base / "flickr30k_entities")
    return base
