"""``notes import`` (tags, notes and judgements from a CSV, every row checked before anything is
written) and ``coverage`` (judged@k of every model of a bundle dataset) on the command line."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pandas as pd
import pytest

from analysis.core.errors import InputError
from analysis.core.metrics import rank_run
from analysis.io import load_qrels, load_run
from analysis.io.annotations import AnnotationStore
from analysis.io.annotations_csv import ImportProblems, import_annotations_csv
from analysis.stats.coverage import coverage_summary
from tests.bad_input.corpus import HERE
from tests.bad_input.made import run_analysis
from tests.helpers import run_main

OK = HERE / "bundle" / "ok"
NOTES = HERE / "notes"


def _store(tmp_path: Path) -> AnnotationStore:
    return AnnotationStore.for_bundle(OK, tmp_path / "notes")


def _import(tmp_path: Path, csv: Path, *extra: str):
    return run_main("notes", "import", "--bundle", OK, "--dataset", "web", "--csv", csv,
                   "--author", "Ana", "--notes-dir", tmp_path / "notes", *extra)  # fmt: skip


def test_every_bad_row_is_one_line_and_nothing_is_written(tmp_path: Path) -> None:
    csv = tmp_path / "mixed.csv"
    csv.write_text(
        "kind,query_id,doc_id,value\n"
        "tag,q1,,label error\n"  # good
        "judgement,q1,d2,maybe\n"
        "note,q7,,a note\n"
        'note,q2,,"a note\nover two lines"\n'  # good, lines 5-6
        "judgement,q3,,1\n"
    )
    proc = _import(tmp_path, csv)
    assert proc.returncode == 2
    assert proc.stderr.splitlines() == [
        f"error: {csv}:3: relevance 'maybe' is not a non-negative integer",
        f"error: {csv}:4: query_id 'q7' is not a query of the dataset",
        f"error: {csv}:7: a judgement needs a doc_id",
    ]
    store = _store(tmp_path)
    assert store.tags().empty
    assert store.notes().empty
    assert store.judgements().empty
    assert not store.path.exists()  # not even an empty database


def test_the_export_loads_back_as_it_was(tmp_path: Path) -> None:
    proc = _import(tmp_path, NOTES / "export_ok.csv")
    assert proc.returncode == 0, proc.stderr
    assert "1 tag(s), 1 note(s), 2 judgement(s) imported into web" in proc.stdout
    first = tmp_path / "first.csv"
    proc = run_main("notes", "--bundle", OK, "--notes-dir", tmp_path / "notes", "--csv", first)
    assert proc.returncode == 0, proc.stderr
    again = tmp_path / "again"
    proc = run_main("notes", "import", "--bundle", OK, "--dataset", "web", "--csv", first,
                   "--author", "Ana", "--notes-dir", again)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    second = tmp_path / "second.csv"
    proc = run_main("notes", "--bundle", OK, "--notes-dir", again, "--csv", second)
    assert proc.returncode == 0, proc.stderr
    columns = ["kind", "dataset", "query_id", "doc_id", "value", "author"]
    read = {"keep_default_na": False, "dtype": str}
    a, b = pd.read_csv(first, **read)[columns], pd.read_csv(second, **read)[columns]
    pd.testing.assert_frame_equal(a, b)
    assert set(a["author"]) == {"Ana"}  # every row is written as the importing author
    note = a.loc[a["kind"] == "note", "value"].iloc[0]
    assert note == "the gold misses d2,\nsee the paper"


def test_judgements_replace_earlier_ones_and_are_written_by_the_author(tmp_path: Path) -> None:
    store = _store(tmp_path)
    store.set_judgement("web", "q1", "d2", 0, author="Bo")
    counts = import_annotations_csv(
        store, NOTES / "judgements_only_ok.csv", "web", author="Ana", queries={"q1", "q2", "q3"}
    )
    assert counts == {"tag": 0, "note": 0, "judgement": 2, "skipped": 0}
    j = store.judgements("web").set_index(["query_id", "doc_id"])
    assert j.loc[("q1", "d2"), "relevance"] == 2
    assert j.loc[("q1", "d2"), "author"] == "Ana"
    assert j.loc[("q3", "d1"), "relevance"] == 0


def _state(store: AnnotationStore) -> tuple[list, list, list, int]:
    drop = ["created", "updated"]
    return (
        store.tags().drop(columns=drop[:1]).to_numpy().tolist(),
        store.notes().drop(columns=drop[1:]).to_numpy().tolist(),
        store.judgements().drop(columns=drop[1:]).to_numpy().tolist(),
        len(store.history()),
    )


def test_a_write_failing_midway_leaves_the_store_as_it_was(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = _store(tmp_path)
    store.add_tag("web", "q1", "old tag", author="Bo")
    store.set_judgement("web", "q1", "d2", 0, author="Bo")
    before = _state(store)
    real, calls = AnnotationStore._change, []

    def full_on_the_third(con, sql, params, log):
        calls.append(log)
        if len(calls) == 3:
            raise sqlite3.OperationalError("database or disk is full")
        return real(con, sql, params, log)

    monkeypatch.setattr(AnnotationStore, "_change", staticmethod(full_on_the_third))
    with pytest.raises(InputError, match="notes database: database or disk is full"):
        import_annotations_csv(store, NOTES / "export_ok.csv", "web", author="Ana")
    assert len(calls) == 3  # two rows were written in the transaction, then rolled back
    assert _state(store) == before


def test_a_full_disk_is_one_line_and_the_store_is_unchanged(tmp_path: Path) -> None:
    store = _store(tmp_path)
    store.add_tag("web", "q1", "old tag", author="Bo")
    before = _state(store)
    proc = run_analysis(
        ["notes", "import", "--bundle", str(OK), "--dataset", "web",
         "--csv", str(NOTES / "export_ok.csv"), "--author", "Ana",
         "--notes-dir", str(tmp_path / "notes")],
        tmp_path,
        "file_size_limit",
    )  # fmt: skip
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert proc.stderr.startswith(f"error: {store.path}: notes database: "), proc.stderr
    assert len(proc.stderr.splitlines()) == 1
    assert _state(store) == before


def test_a_read_only_database_is_named_not_the_csv(tmp_path: Path) -> None:
    """The rows are good and the database cannot be written: the one error line names the
    database (the CSV is not at fault); the database keeps its rows."""
    store = _store(tmp_path)
    store.add_tag("web", "q1", "old tag", author="Bo")
    before = _state(store)
    store.path.chmod(0o444)
    proc = run_analysis(
        ["notes", "import", "--bundle", str(OK), "--dataset", "web",
         "--csv", str(NOTES / "export_ok.csv"), "--author", "Ana",
         "--notes-dir", str(tmp_path / "notes")],
        tmp_path,
        "readonly_folder",  # without root's permission override
    )  # fmt: skip
    assert proc.returncode == 2
    assert proc.stderr.splitlines() == [
        f"error: {store.path}: notes database: attempt to write a readonly database"
    ]
    store.path.chmod(0o644)
    assert _state(store) == before


def test_write_all_checks_every_row_before_writing(tmp_path: Path) -> None:
    store = _store(tmp_path)
    with pytest.raises(ValueError, match="relevance must be a non-negative integer"):
        store.write_all("web", [("tag", "q1", "", "fine"), ("judgement", "q1", "d1", -1)])
    with pytest.raises(ValueError, match="kind must be tag, note or judgement"):
        store.write_all("web", [("tag", "q1", "", "fine"), ("label", "q1", "", "x")])
    assert not store.path.exists()
    done = store.write_all(
        "web",
        [("tag", "q1", "", "t"), ("tag", "q1", "", "t"), ("note", "q2", "", "n"),
         ("judgement", "q2", "d1", 2), ("judgement", "q2", "d1", None)],
        author="Ana",
    )  # fmt: skip
    assert done == 4  # the repeated tag is no change
    assert store.tags("web")["tag"].tolist() == ["t"]
    assert store.note("web", "q2") == "n"
    assert store.judgements("web").empty
    assert set(store.history("web")["author"]) == {"Ana"}


def test_a_formula_quote_of_the_export_is_removed_and_nothing_else(tmp_path: Path) -> None:
    store = _store(tmp_path)
    csv = tmp_path / "quoted.csv"
    csv.write_text("kind,query_id,doc_id,value\nnote,q1,,'=1+1\nnote,q2,,'quoted text'\n")
    import_annotations_csv(store, csv, "web", author="Ana")
    assert store.note("web", "q1") == "=1+1"
    assert store.note("web", "q2") == "'quoted text'"


def test_texts_that_start_with_quotes_load_back_as_they_were_exported(tmp_path: Path) -> None:
    """A note ``'=x`` is exported as ``''=x`` (one more quote, so the rule can be undone): the
    import removes exactly that one quote, as :func:`read_export_csv` does."""
    store = _store(tmp_path)
    texts = {"q1": "'=x", "q2": "''@y", "q3": "=1+1"}
    for qid, text in texts.items():
        store.set_note("web", qid, text, author="Bo")
    store.add_tag("web", "q1", "'-tag", author="Bo")
    csv = tmp_path / "export.csv"
    csv.write_text(store.export_csv("web"))
    again = AnnotationStore.for_bundle(OK, tmp_path / "again")
    import_annotations_csv(again, csv, "web", author="Ana")
    assert {q: again.note("web", q) for q in texts} == texts
    assert again.tags("web")["tag"].tolist() == ["'-tag"]


def test_a_relevance_past_the_64_bit_range_is_one_line(tmp_path: Path) -> None:
    """The qrels' relevance is a 64-bit integer (as trec_eval's ``atol``): a larger one is a bad
    row with its line, and the store refuses it with a ValueError (SQLite holds no more)."""
    csv = tmp_path / "big.csv"
    csv.write_text("kind,query_id,doc_id,value\njudgement,q1,d1,9223372036854775808\n")
    proc = _import(tmp_path, csv)
    assert proc.returncode == 2
    assert proc.stderr.splitlines() == [
        f"error: {csv}:2: relevance '9223372036854775808' is outside the 64-bit integer range"
    ]
    store = _store(tmp_path)
    with pytest.raises(ValueError, match="64-bit"):
        store.set_judgement("web", "q1", "d1", 1 << 63)
    store.set_judgement("web", "q1", "d1", (1 << 63) - 1)
    assert store.judgements("web")["relevance"].tolist() == [(1 << 63) - 1]


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ('tag,q1,,fine\nnote,q1,,"never closed\ntag,q2,,lost\n',
         '3: a quoted field starts on this line and is not closed by the end of the file'),
        ('tag,q1,,fine\nnote,q1,,"quoted" then more\n', "3: bad CSV: ',' expected after '\"'"),
    ],
)  # fmt: skip
def test_a_broken_quote_is_one_line_and_nothing_is_written(
    tmp_path: Path, body: str, message: str
) -> None:
    """A quote that is never closed would take every later row into one note, and text after a
    closing quote would be joined to it: each is an error naming its line, not a silent
    import."""
    csv = tmp_path / "quotes.csv"
    csv.write_text("kind,query_id,doc_id,value\n" + body)
    proc = _import(tmp_path, csv)
    assert proc.returncode == 2
    assert proc.stderr.splitlines() == [f"error: {csv}:{message}"]
    assert not _store(tmp_path).path.exists()


def test_a_column_named_twice_is_refused(tmp_path: Path) -> None:
    """Two ``value`` columns (a spreadsheet's pasted column): which one is meant is unknown, so
    the header is refused instead of importing one of them."""
    csv = tmp_path / "twice.csv"
    csv.write_text("kind,query_id,doc_id,value, value\ntag,q1,,first,second\n")
    proc = _import(tmp_path, csv)
    assert proc.returncode == 2
    assert proc.stderr.splitlines() == [f"error: {csv}:1: the column 'value' is named twice"]
    assert not _store(tmp_path).path.exists()


def test_the_library_reports_the_problems_and_an_overlong_author(tmp_path: Path) -> None:
    store = _store(tmp_path)
    with pytest.raises(ImportProblems) as info:
        import_annotations_csv(store, NOTES / "bad_relevance.csv", "web", author="Ana")
    assert info.value.problems == [
        f"{NOTES / 'bad_relevance.csv'}:3: relevance 'yes' is not a non-negative integer"
    ]
    assert store.judgements().empty
    with pytest.raises(InputError, match="at most 100 characters"):
        import_annotations_csv(store, NOTES / "export_ok.csv", "web", author="x" * 101)


def test_a_notes_dir_inside_the_bundle_names_the_flag(tmp_path: Path) -> None:
    bundle = tmp_path / "ok"
    shutil.copytree(OK, bundle)
    proc = run_main("notes", "import", "--bundle", bundle, "--dataset", "web",
                   "--csv", NOTES / "export_ok.csv", "--author", "Ana",
                   "--notes-dir", bundle / "notes")  # fmt: skip
    assert proc.returncode == 2
    assert proc.stderr.startswith("error: --notes-dir: ")
    assert "choose a notes folder outside it" in proc.stderr
    assert "RETRIEVAL_DASHBOARD_NOTES_DIR" not in proc.stderr


def test_coverage_writes_the_pages_table_with_the_reviewers_judgements(tmp_path: Path) -> None:
    notes = tmp_path / "notes"
    assert _import(tmp_path, NOTES / "judgements_only_ok.csv").returncode == 0
    out = tmp_path / "coverage.csv"
    proc = run_main("coverage", "--bundle", OK, "--dataset", "web", "--k", "2",
                   "--notes-dir", notes, "--out", out)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "2 reviewer judgement(s)" in proc.stdout
    assert "judged@2" in proc.stdout
    got = pd.read_csv(out, dtype={"query_id": str, "model": str})
    ranked = {"bm25": rank_run(load_run(OK / "web" / "runs" / "bm25.run"), "trec_eval")}
    judged = AnnotationStore.for_bundle(OK, notes).judgements("web")
    want, _ = coverage_summary(ranked, load_qrels(OK / "web" / "qrels.txt"), 2, judged)
    pd.testing.assert_frame_equal(got, want.reset_index(drop=True), check_dtype=False)
    # q1's top 2 is d1 (qrels) and d2 (judged by the import): both judged now
    assert got.set_index("query_id").loc["q1", "judged@2"] == 1.0


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--k", "0"], "error: --k: must be at least 1, got 0"),
        (["--dataset", "nope"], "error: --dataset: no dataset 'nope' (known: web)"),
    ],
)
def test_coverage_bad_arguments_are_one_line(args, message, tmp_path: Path) -> None:
    base = {"--dataset": "web", "--k": "10"}
    base.update(dict(zip(args[::2], args[1::2], strict=True)))
    flat = [x for kv in base.items() for x in kv]
    proc = run_main("coverage", "--bundle", OK, *flat, "--notes-dir", tmp_path / "n",
                   "--out", tmp_path / "c.csv")  # fmt: skip
    assert proc.returncode == 2
    assert proc.stderr == message + "\n"
    assert not (tmp_path / "c.csv").exists()


def test_notes_refuses_csv_and_qrels_naming_the_same_file(tmp_path: Path) -> None:
    out = tmp_path / "same.txt"
    spelt = f"{tmp_path}/./same.txt"
    proc = run_main("notes", "--bundle", OK, "--dataset", "web", "--notes-dir", tmp_path / "n",
                   "--csv", out, "--qrels", spelt)  # fmt: skip
    assert proc.returncode == 2
    assert proc.stderr == f"error: {spelt}: --qrels and --csv name the same file\n"
    assert not out.exists()
