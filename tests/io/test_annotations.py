"""Annotations in SQLite: tags, notes, judgements, exports, amended qrels and metrics, and
several concurrent writers (threads and processes) losing nothing."""

from __future__ import annotations

import csv
import io
import sqlite3
import subprocess
import sys
import threading
from pathlib import Path

import pandas as pd
import pytest

from analysis.core.errors import InputError
from analysis.io.amended import amended_qrels, qrels_trec_text, write_trec_qrels
from analysis.io.annotations import (
    ANONYMOUS,
    AUTHOR_ENV,
    NOTES_ENV,
    SCHEMA_VERSION,
    AnnotationStore,
    clean_author,
    database_path,
    default_author,
    notes_dir,
)
from analysis.io.bundle import load_dataset, read_manifest
from analysis.io.trec import read_trec_qrels
from analysis.stats.coverage import strict_and_amended
from tests.helpers import run_main

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def store(tmp_path) -> AnnotationStore:
    return AnnotationStore(tmp_path / "notes" / "b.sqlite3")


def test_tags_notes_and_judgements_round_trip(store):
    store.add_tag("d", "q1", "label error", author="ann")
    store.add_tag("d", "q1", "  label   error ")  # same tag after whitespace folding
    store.add_tag("d", "q1", "需要关系")  # free text, any script
    store.add_tag("e", "q1", "ambiguous query")
    assert store.tags("d", "q1")["tag"].tolist() == ["label error", "需要关系"]
    assert len(store.tags()) == 3
    store.remove_tag("d", "q1", "label error")
    assert store.tags("d", "q1")["tag"].tolist() == ["需要关系"]
    with pytest.raises(ValueError, match="empty"):
        store.add_tag("d", "q1", "   ")

    store.set_note("d", "007", "line one\nline, two <b>not html</b>")
    assert store.note("d", "007") == "line one\nline, two <b>not html</b>"
    assert store.note("d", "7") == ""  # ids are strings: "007" is not "7"
    store.set_note("d", "007", "replaced")
    assert store.note("d", "007") == "replaced"
    store.set_note("d", "007", "  ")
    assert store.note("d", "007") == ""

    store.set_judgement("d", "q1", "doc9", 1)
    store.set_judgement("d", "q1", "doc9", 0)  # a change of mind overrides
    store.set_judgement("d", "q1", "doc8", 2)
    got = store.judgements("d", "q1")
    assert dict(zip(got["doc_id"], got["relevance"], strict=True)) == {"doc8": 2, "doc9": 0}
    store.set_judgement("d", "q1", "doc8", None)
    assert store.judgements("d")["doc_id"].tolist() == ["doc9"]
    with pytest.raises(ValueError, match="relevance"):
        store.set_judgement("d", "q1", "doc8", -1)

    # a new store object on the same file sees everything (nothing cached)
    again = AnnotationStore(store.path)
    assert again.tags("d", "q1")["tag"].tolist() == ["需要关系"]
    with sqlite3.connect(store.path) as con:
        assert con.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_csv_export_keeps_text_as_text(store):
    store.add_tag("d", "1", "label error")
    store.set_note("d", "1", 'a "quoted", multi\nline note')
    store.set_judgement("d", "1", "x", 1)
    rows = list(csv.DictReader(io.StringIO(store.export_csv())))
    assert [r["kind"] for r in rows] == ["tag", "note", "judgement"]
    assert rows[1]["value"] == 'a "quoted", multi\nline note'
    assert rows[2]["doc_id"] == "x"
    assert rows[2]["value"] == "1"
    assert rows[0]["updated"].endswith("Z")
    assert len(list(csv.DictReader(io.StringIO(store.export_csv("other"))))) == 0


def test_database_location_is_per_bundle_and_never_inside_it(tmp_path, monkeypatch):
    bundle_a, bundle_b = tmp_path / "x" / "demo", tmp_path / "y" / "demo"
    bundle_a.mkdir(parents=True)
    bundle_b.mkdir(parents=True)
    notes = tmp_path / "notes"
    pa, pb = database_path(bundle_a, notes), database_path(bundle_b, notes)
    assert pa != pb
    assert pa.parent == notes
    assert pa.name.startswith("demo-")
    assert database_path(bundle_a, notes) == pa  # stable
    with pytest.raises(InputError, match="inside the bundle"):
        database_path(bundle_a, bundle_a / "notes")
    monkeypatch.setenv(NOTES_ENV, str(notes))
    assert notes_dir() == notes
    monkeypatch.delenv(NOTES_ENV)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    assert notes_dir() == tmp_path / "xdg" / "retrieval-dashboard"


def test_a_bundle_folder_with_a_long_name_gets_a_database_file_name_that_fits(tmp_path):
    """A folder name may have 255 bytes, as a file name: the database's name (folder name,
    ``-``, 16 hex digits, ``.sqlite3``, and SQLite's ``-journal`` beside it) is cut to fit, the
    digest keeps it unique, and names that fitted are unchanged."""
    notes = tmp_path / "notes"
    long_a, long_b = tmp_path / ("b" * 250), tmp_path / ("b" * 249 + "c")
    long_a.mkdir()
    long_b.mkdir()
    path = database_path(long_a, notes)
    assert len(path.name.encode()) <= 255
    assert path != database_path(long_b, notes)
    store = AnnotationStore(path)
    store.add_tag("d", "q", "t")
    assert store.tags("d")["tag"].tolist() == ["t"]
    fits = tmp_path / ("f" * 222)
    fits.mkdir()
    assert database_path(fits, notes).name.startswith("f" * 222 + "-")
    AnnotationStore.for_bundle(fits, notes).set_note("d", "q", "n")  # and it can be written
    assert AnnotationStore.for_bundle(fits, notes).note("d", "q") == "n"


def test_a_file_that_is_not_a_database_is_one_clear_error(tmp_path):
    bad = tmp_path / "bad.sqlite3"
    bad.write_text("this is not sqlite\n" * 100)
    with pytest.raises(InputError, match=r"bad\.sqlite3"):
        AnnotationStore(bad)
    assert bad.read_text().startswith("this is not sqlite")  # left as it was


def test_amended_qrels_and_metrics_beside_the_strict_ones(tmp_path):
    qrels = pd.DataFrame(
        {"query_id": ["1", "1", "2"], "doc_id": ["a", "b", "c"], "relevance": [1, 1, 1]}
    )
    before = qrels.copy()
    judgements = pd.DataFrame(
        {"query_id": ["1", "2"], "doc_id": ["b", "z"], "relevance": [0, 1]}  # b wrong, z missed
    )
    amended = amended_qrels(qrels, judgements)
    pd.testing.assert_frame_equal(qrels, before)  # the strict qrels are untouched
    rel = {(q, d): r for q, d, r in amended.itertuples(index=False)}
    assert rel == {("1", "a"): 1, ("1", "b"): 0, ("2", "c"): 1, ("2", "z"): 1}

    run = pd.DataFrame(
        {"query_id": ["1", "1", "2", "2"], "doc_id": ["b", "a", "z", "c"], "score": [2, 1, 2, 1]}
    )
    table = strict_and_amended({"m": run}, qrels, judgements, ["hit@1", "recall@1"])
    hit = table[table["metric"] == "hit@1"].iloc[0]
    assert hit["strict"] == pytest.approx(0.5)  # q1: b is gold at rank 1; q2: z not gold
    assert hit["amended"] == pytest.approx(0.5)  # q1 loses b, q2 gains z
    assert hit["queries_changed"] == 2
    recall = table[table["metric"] == "recall@1"].iloc[0]
    assert recall["strict"] == pytest.approx(0.25)
    assert recall["amended"] == pytest.approx(0.25)
    assert recall["delta"] == pytest.approx(0.0)

    out = tmp_path / "amended.qrels"
    write_trec_qrels(amended, out)
    back = read_trec_qrels(out)
    assert len(back) == 4
    assert set(back["doc_id"]) == {"a", "b", "c", "z"}
    assert not list(tmp_path.glob(".amended.qrels.*"))  # no temporary file left
    with pytest.raises(InputError, match="whitespace"):
        write_trec_qrels(
            pd.DataFrame({"query_id": ["a b"], "doc_id": ["x"], "relevance": [1]}), out
        )


N_WORKERS = 6
N_WRITES = 40


def _writer(path: str, worker: int) -> None:
    s = AnnotationStore(path)
    who = f"worker {worker}"
    for i in range(N_WRITES):
        q = f"w{worker}-q{i}"
        s.add_tag("d", q, "label error", author=who)
        s.set_note("d", q, f"note {worker} {i}", author=who)
        s.set_judgement("d", q, f"doc{i}", i % 3, author=who)
        s.add_tag("d", "shared", f"tag-{worker}-{i}", author=who)  # one hot query for all


def _check_nothing_lost(s: AnnotationStore) -> None:
    tags = s.tags("d")
    assert len(tags) == N_WORKERS * N_WRITES * 2
    assert (tags["query_id"] == "shared").sum() == N_WORKERS * N_WRITES
    assert len(s.notes("d")) == N_WORKERS * N_WRITES
    judged = s.judgements("d")
    assert len(judged) == N_WORKERS * N_WRITES
    assert judged["relevance"].tolist() == [
        int(d.removeprefix("doc")) % 3 for d in judged["doc_id"]
    ]
    # every row names its writer, and the history holds every change exactly once
    owner = judged["query_id"].str.extract(r"^w(\d+)-")[0]
    assert (judged["author"] == "worker " + owner).all()
    assert (tags["author"] == "worker " + tags["tag"].str.extract(r"^tag-(\d+)-")[0]).sum() == (
        N_WORKERS * N_WRITES
    )
    history = s.history("d")
    assert len(history) == N_WORKERS * N_WRITES * 4
    assert history["author"].value_counts().tolist() == [N_WRITES * 4] * N_WORKERS


def test_concurrent_threads_lose_nothing(tmp_path):
    path = str(tmp_path / "threads.sqlite3")
    threads = [threading.Thread(target=_writer, args=(path, w)) for w in range(N_WORKERS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    _check_nothing_lost(AnnotationStore(path))


def test_concurrent_processes_lose_nothing(tmp_path):
    # separate interpreters (not multiprocessing: its "spawn" re-imports the parent's __main__,
    # which an AppTest earlier in the same pytest process may have replaced by app.py)
    path = str(tmp_path / "processes.sqlite3")
    code = (
        "import sys; from tests.io.test_annotations import _writer; "
        "_writer(sys.argv[1], int(sys.argv[2]))"
    )
    procs = [
        subprocess.Popen([sys.executable, "-c", code, path, str(w)], cwd=ROOT)
        for w in range(N_WORKERS)
    ]
    assert [p.wait(timeout=300) for p in procs] == [0] * N_WORKERS
    _check_nothing_lost(AnnotationStore(path))


def test_reading_creates_nothing_and_the_first_write_creates_the_file(tmp_path):
    path = tmp_path / "notes" / "new.sqlite3"
    s = AnnotationStore(path)
    assert s.tags("d").empty
    assert s.note("d", "1") == ""
    assert s.judgements().empty
    assert "judgement" not in s.export_csv()
    assert not path.parent.exists()
    s.add_tag("d", "1", "needs relations")
    assert path.exists()
    assert s.tags("d")["tag"].tolist() == ["needs relations"]


def test_every_write_names_its_author_and_the_history_keeps_each_change(store):
    store.add_tag("d", "q1", "label error", author="  Ann   Lee ")
    store.add_tag("d", "q1", "label error", author="bob")  # already there: the first author stays
    store.set_note("d", "q1", "first", author="ann")
    store.set_note("d", "q1", "second", author="bob")
    store.set_judgement("d", "q1", "x", 1, author="ann")
    store.set_judgement("d", "q1", "x", 0, author="bob")
    store.remove_tag("d", "q1", "label error", author="bob")
    store.remove_tag("d", "q1", "never set", author="bob")  # no change: nothing logged
    store.set_judgement("d", "q1", "y", 2)  # no name given
    assert store.tags("d", "q1").empty
    assert store.notes("d")[["note", "author"]].to_numpy().tolist() == [["second", "bob"]]
    judged = store.judgements("d").set_index("doc_id")
    assert judged.loc["x", "author"] == "bob"
    assert judged.loc["y", "author"] == ANONYMOUS
    history = store.history("d", "q1")
    assert history[["kind", "doc_id", "value", "author"]].to_numpy().tolist() == [
        ["tag", "", "label error", "Ann Lee"],
        ["note", "", "first", "ann"],
        ["note", "", "second", "bob"],
        ["judgement", "x", "1", "ann"],
        ["judgement", "x", "0", "bob"],
        ["tag", "", None, "bob"],
        ["judgement", "y", "2", ANONYMOUS],
    ]
    assert history["at"].is_monotonic_increasing
    rows = list(csv.DictReader(io.StringIO(store.export_csv("d"))))
    assert [(r["kind"], r["value"], r["author"]) for r in rows] == [
        ("note", "second", "bob"),
        ("judgement", "0", "bob"),
        ("judgement", "2", ANONYMOUS),
    ]
    who = store.authors("d").set_index("author")
    assert who.index.tolist() == ["bob", "ann", "Ann Lee", ANONYMOUS]  # most changes first
    assert who.loc["bob", ["tags", "notes", "judgements", "changes"]].tolist() == [0, 1, 1, 3]
    assert who.loc["ann", ["notes", "judgements", "changes"]].tolist() == [0, 0, 2]
    assert who.loc[ANONYMOUS, "judgements"] == 1
    assert who["last"].str.endswith("Z").all()
    assert store.authors("other").empty
    with pytest.raises(ValueError, match="author"):
        store.set_note("d", "q1", "x", author="n" * 101)
    assert clean_author("") == ANONYMOUS


def test_default_author_from_the_environment_or_the_os_user(monkeypatch):
    import getpass

    monkeypatch.setenv(AUTHOR_ENV, "  Reviewer   One ")
    assert default_author() == "Reviewer One"
    monkeypatch.delenv(AUTHOR_ENV)
    assert default_author() == clean_author(getpass.getuser())

    def nobody() -> str:
        raise OSError("no user name")

    monkeypatch.setattr(getpass, "getuser", nobody)
    assert default_author() == ANONYMOUS


# the schema of version 1, as its writers created it (kept here verbatim, not imported)
V1_SCHEMA = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE tags (
    dataset TEXT NOT NULL, query_id TEXT NOT NULL, tag TEXT NOT NULL,
    author TEXT NOT NULL DEFAULT '', created REAL NOT NULL,
    PRIMARY KEY (dataset, query_id, tag));
CREATE TABLE notes (
    dataset TEXT NOT NULL, query_id TEXT NOT NULL, note TEXT NOT NULL,
    author TEXT NOT NULL DEFAULT '', updated REAL NOT NULL,
    PRIMARY KEY (dataset, query_id));
CREATE TABLE judgements (
    dataset TEXT NOT NULL, query_id TEXT NOT NULL, doc_id TEXT NOT NULL,
    relevance INTEGER NOT NULL, author TEXT NOT NULL DEFAULT '', updated REAL NOT NULL,
    PRIMARY KEY (dataset, query_id, doc_id));
INSERT INTO meta VALUES ('schema', '1');
"""


def _old_database(path: Path, schema: str) -> None:
    con = sqlite3.connect(path)
    con.execute("PRAGMA journal_mode = WAL")
    con.executescript(schema)
    author = ", author" if "author TEXT" in schema else ""
    blank = ", ''" if author else ""
    con.execute(
        f"INSERT INTO tags (dataset, query_id, tag{author}, created) "
        f"VALUES ('d', '007', 'label error'{blank}, 100.0)"
    )
    con.execute(
        f"INSERT INTO notes (dataset, query_id, note{author}, updated) "
        f"VALUES ('d', '007', 'old note'{blank}, 200.0)"
    )
    con.executemany(
        f"INSERT INTO judgements (dataset, query_id, doc_id, relevance{author}, updated) "
        f"VALUES ('d', '007', ?, ?{blank}, ?)",
        [("a", 1, 300.0), ("b", 0, 400.0)],
    )
    con.commit()
    con.close()


@pytest.mark.parametrize("schema", ["v1", "draft without author"])
def test_a_database_of_an_older_schema_opens_and_keeps_its_rows(tmp_path, schema):
    path = tmp_path / "old.sqlite3"
    sql = (
        V1_SCHEMA
        if schema == "v1"
        else V1_SCHEMA.replace("author TEXT NOT NULL DEFAULT '', ", "").replace(
            "INSERT INTO meta VALUES ('schema', '1');", ""
        )
    )
    _old_database(path, sql)
    s = AnnotationStore(path)
    assert s.tags("d", "007")[["tag", "author", "created"]].to_numpy().tolist() == [
        ["label error", "", 100.0]
    ]
    assert s.note("d", "007") == "old note"
    judged = s.judgements("d", "007")
    assert judged[["doc_id", "relevance", "author"]].to_numpy().tolist() == [
        ["a", 1, ""],
        ["b", 0, ""],
    ]
    # the history starts with the rows that were there, oldest first, author unknown
    history = s.history("d")
    assert history[["kind", "value", "author", "at"]].to_numpy().tolist() == [
        ["tag", "label error", "", 100.0],
        ["note", "old note", "", 200.0],
        ["judgement", "1", "", 300.0],
        ["judgement", "0", "", 400.0],
    ]
    with sqlite3.connect(path) as con:
        assert con.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone() == (
            str(SCHEMA_VERSION),
        )
    # new writes carry their author beside the old rows; opening again migrates nothing twice
    s.set_judgement("d", "007", "b", 1, author="ann")
    again = AnnotationStore(path)
    assert len(again.history("d")) == 5
    assert again.judgements("d", "007")["author"].tolist() == ["", "ann"]
    rows = list(csv.DictReader(io.StringIO(again.export_csv("d"))))
    assert [r["author"] for r in rows] == ["", "", "", "ann"]


def test_concurrent_openers_of_an_old_database_migrate_it_once(tmp_path):
    path = tmp_path / "old.sqlite3"
    _old_database(path, V1_SCHEMA)
    errors: list[BaseException] = []

    def open_and_write(worker: int) -> None:
        try:
            AnnotationStore(path).add_tag("d", "007", f"t{worker}", author=f"w{worker}")
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=open_and_write, args=(w,)) for w in range(N_WORKERS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    s = AnnotationStore(path)
    assert len(s.history("d")) == 4 + N_WORKERS  # seeded once, then one row per writer
    assert len(s.tags("d")) == 1 + N_WORKERS


def test_a_database_of_a_newer_schema_is_refused_and_left_alone(tmp_path):
    path = tmp_path / "new.sqlite3"
    _old_database(path, V1_SCHEMA.replace("('schema', '1')", "('schema', '99')"))
    before = path.read_bytes()
    with pytest.raises(InputError, match=r"newer version \(schema 99"):
        AnnotationStore(path)
    assert path.read_bytes() == before


def test_trec_text_refuses_ids_it_cannot_carry():
    ok = pd.DataFrame({"query_id": ["1"], "doc_id": ["a"], "relevance": [2]})
    assert qrels_trec_text(ok) == "1 0 a 2\n"
    with pytest.raises(ValueError, match="whitespace"):
        qrels_trec_text(ok.assign(doc_id=["a b"]))
    nul = r"^doc_id 'a\\x00b' is empty or holds ASCII whitespace or a NUL"
    with pytest.raises(ValueError, match=nul):
        qrels_trec_text(ok.assign(doc_id=["a\0b"]))  # trec_eval would read the id 'a'


def test_notes_command_exports_annotations_and_amended_qrels(tmp_path):
    bundle = ROOT / "data" / "demo"
    notes = tmp_path / "notes"
    s = AnnotationStore(database_path(bundle, notes))
    s.set_judgement("stark-mag", "5", "zz-new", 1, author="ann")
    s.add_tag("stark-mag", "5", "label error", author="bob")
    s.set_note("geo-glue", "1", "other dataset", author="bob")
    env = {NOTES_ENV: str(notes)}
    csv_out, qrels_out = tmp_path / "notes.csv", tmp_path / "amended.qrels"
    cmd = ["notes", "--bundle", str(bundle)]
    done = run_main(
        *cmd, "--dataset", "stark-mag", "--csv", str(csv_out), "--qrels", str(qrels_out), env=env
    )
    assert done.returncode == 0, done.stderr
    rows = list(csv.DictReader(io.StringIO(csv_out.read_text(encoding="utf-8"))))
    assert [(r["kind"], r["author"]) for r in rows] == [("tag", "bob"), ("judgement", "ann")]
    amended = read_trec_qrels(qrels_out)
    strict = load_dataset(read_manifest(bundle).datasets["stark-mag"], "all").qrels
    assert len(amended) == len(strict.drop_duplicates(["query_id", "doc_id"])) + 1
    assert ((amended["query_id"] == "5") & (amended["doc_id"] == "zz-new")).sum() == 1
    # every dataset's annotations when no dataset is named; --notes-dir instead of the variable
    done = run_main(*cmd, "--notes-dir", str(notes), "--csv", str(csv_out))
    assert done.returncode == 0, done.stderr
    assert len(list(csv.DictReader(io.StringIO(csv_out.read_text(encoding="utf-8"))))) == 3
    # bad calls: one line, exit 2, nothing written
    qrels_file = read_manifest(bundle).datasets["stark-mag"].qrels
    for extra in (
        ["--qrels", str(tmp_path / "x.qrels")],  # no --dataset
        ["--dataset", "nope", "--csv", str(tmp_path / "x.csv")],
        ["--dataset", "stark-mag", "--qrels", str(qrels_file)],  # over an input
        [],
    ):
        bad = run_main(*cmd, *extra, env=env)
        assert bad.returncode == 2, extra
        assert bad.stderr.startswith("error: ")
        assert bad.stderr.count("\n") == 1, bad.stderr
    assert not (tmp_path / "x.qrels").exists()
    assert not (tmp_path / "x.csv").exists()


def test_note_versions_refuse_a_save_over_an_unseen_note(store):
    from analysis.io.annotations import NoteConflict

    assert store.note_state("d", "q1").version == 0  # no database yet
    v1 = store.set_note("d", "q1", "first", author="ann", expected_version=0)
    state = store.note_state("d", "q1")
    assert (state.note, state.author, state.version) == ("first", "ann", v1)
    with pytest.raises(NoteConflict) as caught:  # bob was shown no note
        store.set_note("d", "q1", "bob's", author="bob", expected_version=0)
    assert caught.value.current.note == "first"
    assert caught.value.current.author == "ann"
    assert store.note("d", "q1") == "first"
    v2 = store.set_note("d", "q1", "bob's", author="bob", expected_version=v1)
    assert v2 > v1
    with pytest.raises(NoteConflict):  # deleting over an unseen version is refused too
        store.set_note("d", "q1", "", author="ann", expected_version=v1)
    assert store.set_note("d", "q1", "", author="ann", expected_version=v2) > v2
    assert store.note_state("d", "q1").note == ""
    assert store.set_note("d", "q1", "last", author="cy") > 0  # no version: unconditional
    values = store.history("d", "q1")["value"].tolist()
    assert values == ["first", "bob's", None, "last"]  # every version is kept


def test_text_with_nul_is_refused(store):
    for write in (
        lambda: store.add_tag("d", "q1", "a\0b"),
        lambda: store.set_note("d", "q1", "a\0b"),
        lambda: store.add_tag("d", "q1", "ok", author="a\0b"),
    ):
        with pytest.raises(ValueError, match="NUL"):
            write()
    assert store.tags().empty
