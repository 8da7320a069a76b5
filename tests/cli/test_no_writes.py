"""No input file is ever written: every file the CLI and the app read (the demo bundle, the
bad-input corpus, copies of real STaRK and GeoGLUE samples) is hashed before and after a full
run of the CLI commands and of every page, and must be byte-for-byte unchanged, with no file
added or removed beside it.

The real samples are copied into ``tmp_path`` at test time (never into the project) and made
writable there, so that a write would succeed and be caught.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
from pathlib import Path

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from tests.bad_input.corpus import FILE_KINDS, GOOD, HERE, Case, cases
from tests.helpers import run_main

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "data" / "demo"
APP = str(ROOT / "app.py")
ROOTS_ENV = "RETRIEVAL_DASHBOARD_DATA_ROOTS"
REAL_FILES = (
    "stark/prime/stark_qa_human_generated_eval.csv",
    "stark/prime/runs/ada-002/eval_results_human_generated_eval.csv",
    "stark/prime/query_groups/group_query_human_generated_eval.json",
    "stark/prime/split/test.index",
    "geo/geoglue_clean_subset/poi.txt",
    "geo/geoglue_clean_subset/geoglue_clean_subset_queries_dev.csv",
    "geo/mgeo_demo/mgeo_text_location_pairs.csv",
)


def snapshot(*folders: Path) -> dict[Path, str]:
    """sha256 of every file under the folders (also tells added/removed files apart)."""
    out = {}
    for folder in folders:
        for path in sorted(folder.rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts:
                out[path] = hashlib.sha256(path.read_bytes()).hexdigest()
    return out


_cli = run_main  # analysis.cli.main in this process, read as a separate process is


def _pages() -> list[str | None]:
    return [None, *(f"pages/{p.name}" for p in sorted((ROOT / "pages").glob("*.py")))]


def _run_every_page(upload: Path | None = None) -> None:
    """Open the app, then switch to every page (one session, as a user would)."""
    st.cache_data.clear()
    st.cache_resource.clear()
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    if upload is not None:
        at.file_uploader(key="upload_file").set_value((upload.name, upload.read_bytes(), ""))
        at.run()
        assert not at.exception
    for page in _pages()[1:]:
        at.switch_page(page)
        at.run()
        assert not at.exception, (page, [e.value for e in at.exception])


def _cli_args(case: Case) -> list[str]:
    path = str(case.path)
    if case.kind in ("run", "stark_eval"):
        return ["validate", "--run", path, "--qrels", str(case.companion())]
    if case.kind in ("qrels", "stark_qa"):
        return ["validate", "--run", str(case.companion()), "--qrels", path]
    if case.kind == "bundle":
        return ["validate", "--bundle", path]
    return ["geo", "--pois", path, *(["--crs", case.crs] if case.crs else [])]


def test_demo_and_corpus_are_never_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ROOTS_ENV, raising=False)
    before = snapshot(DEMO, HERE)
    assert len(before) > 40
    out = tmp_path / "out"
    out.mkdir()

    # the CLI on the demo bundle: evaluate (CSV and Parquet), validate, validate --bundle
    run = DEMO / "beijing" / "runs" / "bm25.parquet"
    qrels = DEMO / "beijing" / "qrels.parquet"
    for args in (
        ["evaluate", "--run", run, "--qrels", qrels, "--out", out / "a.csv", "--diagnostics"],
        ["evaluate", "--run", run, "--qrels", qrels, "--out", out / "a.parquet"],
        ["validate", "--run", run, "--qrels", qrels],
        ["validate", "--bundle", DEMO],
    ):
        proc = _cli(*args)
        assert proc.returncode == 0, proc.stderr
    # the whole corpus through the CLI (in process: the same main(); errors exit 2)
    for case in cases(*FILE_KINDS):
        code = _cli(*_cli_args(case)).returncode
        assert code == (2 if case.outcome == "error" else 0), case.file
    # every page of the app on the demo, with an upload of a corpus run
    _run_every_page(upload=GOOD["run"])
    # the corpus bundles as data roots (broken ones included), every page
    monkeypatch.setenv(ROOTS_ENV, str(HERE / "bundle"))
    _run_every_page(upload=HERE / "run" / "score_nan.txt")

    assert snapshot(DEMO, HERE) == before
    assert sorted(p.name for p in out.iterdir()) == ["a.csv", "a.parquet"]


@pytest.mark.real
def test_real_samples_are_never_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, real_dir: Path
) -> None:
    copies = tmp_path / "real"
    for rel in REAL_FILES:
        target = copies / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(real_dir / rel, target)
        target.chmod(target.stat().st_mode | stat.S_IWUSR)  # a write would succeed: and show
    stark = copies / "stark" / "prime"
    geo = copies / "geo"
    # a bundle whose manifest points at the copies (the manifest lives in its own folder)
    bundle = tmp_path / "roots" / "real"
    bundle.mkdir(parents=True)
    (bundle / "bundle.toml").write_text(
        'name = "real"\n\n[datasets.prime-human]\nfamily = "stark"\n'
        f'queries = "{stark / "stark_qa_human_generated_eval.csv"}"\n'
        f'qrels = "{stark / "stark_qa_human_generated_eval.csv"}"\n'
        f'runs = {{ ada-002 = "{stark / "runs/ada-002/eval_results_human_generated_eval.csv"}" }}\n'
        f'query_groups = "{stark / "query_groups/group_query_human_generated_eval.json"}"\n'
        'query_type = "human"\n'
    )
    before = snapshot(copies, bundle)
    assert len(before) == len(REAL_FILES) + 1
    # the manifest names files outside its folder: their folder is a configured data root
    monkeypatch.setenv(ROOTS_ENV, os.pathsep.join([str(bundle.parent), str(copies)]))
    out = tmp_path / "out"
    out.mkdir()

    eval_csv = stark / "runs" / "ada-002" / "eval_results_human_generated_eval.csv"
    qa_csv = stark / "stark_qa_human_generated_eval.csv"
    for args, code in (
        (["evaluate", "--run", eval_csv, "--qrels", qa_csv, "--out", out / "p.csv"], 0),
        (["validate", "--run", eval_csv, "--qrels", qa_csv], 0),
        (["validate", "--bundle", bundle], 0),
        (["geo", "--pois", geo / "geoglue_clean_subset" / "poi.txt", "--crs", "EPSG:2385"], 0),
        (  # a query file given as POIs: an error, and still only read
            ["geo", "--pois", geo / "geoglue_clean_subset" / Path(REAL_FILES[5]).name],
            2,
        ),
        (["geo", "--pois", geo / "mgeo_demo" / "mgeo_text_location_pairs.csv"], 2),
        (["evaluate", "--run", qa_csv, "--qrels", qa_csv], 2),  # a QA file is not a run
    ):
        proc = _cli(*args)
        assert proc.returncode == code, (args, proc.stderr)
        assert "Traceback" not in proc.stderr

    _run_every_page(upload=eval_csv)

    assert snapshot(copies, bundle) == before
    assert [p.name for p in out.iterdir()] == ["p.csv"]


@pytest.mark.parametrize("target", ["run", "qrels", "link"])
def test_evaluate_refuses_to_write_over_an_input_file(tmp_path: Path, target: str) -> None:
    """``--out`` naming the run or the qrels (also through a symlink) is refused, exit 2."""
    run = tmp_path / "a.run"
    qrels = tmp_path / "a.qrels"
    shutil.copyfile(GOOD["run"], run)
    shutil.copyfile(GOOD["qrels"], qrels)
    (tmp_path / "link.csv").symlink_to(qrels)
    out = {"run": run, "qrels": qrels, "link": tmp_path / "link.csv"}[target]
    before = snapshot(tmp_path)
    proc = _cli("evaluate", "--run", run, "--qrels", qrels, "--out", out)
    assert proc.returncode == 2
    assert proc.stderr == f"error: {out}: is an input file: refusing to overwrite it\n"
    assert snapshot(tmp_path) == before


def test_outputs_of_a_bundle_command_refuse_the_published_summary_beside_a_run(
    tmp_path: Path,
) -> None:
    """A summary beside a bundle's run (``runs/<model>.metrics.json``, a leaderboard) is read by
    the audits of ``evaluate --bundle``, ``validate --bundle`` and the report: ``--out`` naming
    it is refused, exit 2, and it is left as it was."""
    bundle = tmp_path / "b"
    made = _cli("bundle", "--run", f"m={GOOD['run']}", "--qrels", GOOD["qrels"], "--out", bundle)
    assert made.returncode == 0, made.stderr
    summary = bundle / "adhoc" / "runs" / "m.metrics.json"
    summary.write_text('{"hit@1": 0.5}\n')
    board = bundle / "adhoc" / "leaderboard.csv"
    board.write_text("model,hit@1\nm,0.5\n")
    before = snapshot(tmp_path)
    for out in (summary, board):
        for args in (
            ["evaluate", "--bundle", bundle, "--dataset", "adhoc", "--out", out],
            ["report", "--bundle", bundle, "--out", out],
        ):
            proc = _cli(*args)
            assert proc.returncode == 2, (args, proc.stderr)
            assert (
                proc.stderr == f"error: {out}: is a file of the bundle: refusing to overwrite it\n"
            )
    assert snapshot(tmp_path) == before


@pytest.mark.parametrize("engine", ["memory", "duckdb"])
@pytest.mark.parametrize("given", ["folder", "glob"])
def test_evaluate_refuses_to_write_over_a_file_of_a_folder_or_glob_run(
    tmp_path: Path, given: str, engine: str
) -> None:
    """A run given as a folder or a glob of Parquet files: ``--out`` naming one of them is
    refused, exit 2, and the run is left whole."""
    import pandas as pd

    parts = tmp_path / "run"
    parts.mkdir()
    run = pd.DataFrame({"query_id": ["q1", "q1"], "doc_id": ["a", "b"], "score": [2.0, 1.0]})
    run.iloc[:1].to_parquet(parts / "part-0.parquet", index=False)
    run.iloc[1:].to_parquet(parts / "part-1.parquet", index=False)
    shutil.copyfile(GOOD["qrels"], tmp_path / "a.qrels")
    out = parts / "part-1.parquet"
    path = parts if given == "folder" else parts / "*.parquet"
    before = snapshot(tmp_path)
    proc = _cli("evaluate", "--run", path, "--qrels", tmp_path / "a.qrels", "--engine", engine,
                "--out", out)  # fmt: skip
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr == f"error: {out}: is an input file: refusing to overwrite it\n"
    assert snapshot(tmp_path) == before


def test_bundle_commands_refuse_a_new_output_in_a_runs_folder(tmp_path: Path) -> None:
    """Every file of a bundle's runs folder is read as a run (or as the summary of one): a new
    ``--out`` there would leave a bundle no command reads. It is refused, exit 2; a new file
    beside ``bundle.toml`` is not."""
    bundle = tmp_path / "b"
    shutil.copytree(ROOT / "tests" / "bad_input" / "bundle" / "ok", bundle)
    runs = bundle / "web" / "runs"
    notes = str(tmp_path / "notes")
    before = snapshot(tmp_path)
    for args in (
        ["evaluate", "--bundle", bundle, "--dataset", "web", "--out", runs / "pq.csv"],
        ["coverage", "--bundle", bundle, "--dataset", "web", "--notes-dir", notes,
         "--out", runs / "cov.csv"],
        ["report", "--bundle", bundle, "--out", runs / "report.html"],
        ["notes", "--bundle", bundle, "--notes-dir", notes, "--csv", runs / "notes.csv"],
    ):  # fmt: skip
        proc = _cli(*args)
        assert proc.returncode == 2, (args, proc.stderr)
        assert proc.stderr == (
            f"error: {args[-1]}: lies in {runs}, whose files are read as input: refusing to "
            "write there\n"
        )
    assert snapshot(tmp_path) == before
    proc = _cli("evaluate", "--bundle", bundle, "--dataset", "web", "--out", bundle / "pq.csv")
    assert proc.returncode == 0, proc.stderr


def test_evaluate_refuses_a_new_parquet_output_in_a_folder_run(tmp_path: Path) -> None:
    """A run given as a folder is every ``.parquet`` file under it: a new Parquet ``--out``
    there would be read as part of the run next time. It is refused, exit 2; a CSV is not."""
    import pandas as pd

    parts = tmp_path / "run"
    (parts / "sub").mkdir(parents=True)
    run = pd.DataFrame({"query_id": ["q1"], "doc_id": ["a"], "score": [1.0]})
    run.to_parquet(parts / "part-0.parquet", index=False)
    shutil.copyfile(GOOD["qrels"], tmp_path / "a.qrels")
    before = snapshot(tmp_path)
    for out in (parts / "new.parquet", parts / "sub" / "new.PARQUET"):
        proc = _cli("evaluate", "--run", parts, "--qrels", tmp_path / "a.qrels", "--out", out)
        assert proc.returncode == 2, proc.stderr
        assert proc.stderr == (
            f"error: {out}: lies in the run folder {parts}, whose .parquet files are read as the "
            "run: refusing to write there\n"
        )
    assert snapshot(tmp_path) == before
    proc = _cli("evaluate", "--run", parts, "--qrels", tmp_path / "a.qrels", "--out",
                parts / "pq.csv")  # fmt: skip
    assert proc.returncode == 0, proc.stderr


def test_report_refuses_to_write_over_the_notes_database(tmp_path: Path) -> None:
    """The report reads the bundle's notes database (its "Annotations" section): ``--out``
    naming it is refused, exit 2, and the annotations stay readable."""
    from analysis.io.annotations import NOTES_ENV, AnnotationStore, database_path
    from tests import hostile

    bundle = hostile.make_hostile_bundle(tmp_path / "b")
    notes = tmp_path / "notes"
    notes.mkdir()
    hostile.annotate(bundle, notes)
    database = database_path(bundle, notes)
    before = snapshot(tmp_path)
    for deck in ([], ["--deck"]):
        proc = _cli("report", "--bundle", bundle, *deck, "--out", database,
                    env={NOTES_ENV: str(notes)})  # fmt: skip
        assert proc.returncode == 2, proc.stderr
        assert proc.stderr == (
            f"error: {database}: is the bundle's notes database: refusing to overwrite it\n"
        )
    assert snapshot(tmp_path) == before
    assert not AnnotationStore(database).notes(hostile.DATASET).empty
