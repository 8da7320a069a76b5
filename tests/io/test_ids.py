"""One rule for TREC-safe ids (:func:`analysis.io.trec.trec_safe`): an id is safe exactly when
a TREC file written with it reads back the same id, and the readers and writers use it, so a
no-break space kept by the reader is written by the notes' amended qrels and read back by
``evaluate``."""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd
import pytest

from analysis.io.amended import qrels_trec_text
from analysis.io.trec import read_trec_qrels, trec_safe, trec_unsafe
from tests.helpers import run_main

SPACES = [chr(c) for c in range(sys.maxunicode + 1) if chr(c).isspace()]
OTHERS = ["#", "\x00", "\x01", "\x7f", "é", "猫", "\u200b", "'", '"', ","]


@pytest.mark.parametrize("char", SPACES + OTHERS, ids=lambda c: f"U+{ord(c):04X}")
@pytest.mark.parametrize("column", ["query_id", "doc_id"])
@pytest.mark.parametrize("where", ["start", "inside", "end"])
def test_safe_exactly_when_a_written_id_reads_back(
    char: str, column: str, where: str, tmp_path: Path
) -> None:
    value = {"start": f"{char}x1", "inside": f"x{char}1", "end": f"x1{char}"}[where]
    ids = {"query_id": "q1", "doc_id": "d1", column: value}
    path = tmp_path / "qrels.txt"
    path.write_text(f"q0 0 d0 1\n{ids['query_id']} 0 {ids['doc_id']} 1\n", encoding="utf-8")
    try:
        back = read_trec_qrels(path)
        kept = len(back) == 2 and back[column].iloc[1] == value
    except ValueError:  # the line no longer has four fields
        kept = False
    assert trec_safe(value, column) is kept
    frame = pd.Series([value, "plain"])
    assert trec_unsafe(frame, column).tolist() == [not kept, False]


def test_empty_ids_are_not_safe() -> None:
    assert not trec_safe("")
    assert not trec_safe("", "query_id")
    with pytest.raises(ValueError, match="query_id or doc_id"):
        trec_safe("x", "relevance")


def test_the_amended_qrels_writer_refuses_exactly_the_unsafe_ids() -> None:
    ok = pd.DataFrame({"query_id": ["q1"], "doc_id": ["d\u00a01"], "relevance": [1]})
    assert qrels_trec_text(ok) == "q1 0 d\u00a01 1\n"
    with pytest.raises(ValueError, match="holds ASCII whitespace"):
        qrels_trec_text(ok.assign(doc_id=["d 1"]))
    with pytest.raises(ValueError, match="starts with '#'"):
        qrels_trec_text(ok.assign(query_id=["#q"]))


def _bundle(folder: Path) -> Path:
    """q1's gold is d1; the run ranks 'd\\u00a07' (no-break space) first, unjudged."""
    (folder / "web" / "runs").mkdir(parents=True)
    (folder / "web" / "qrels.txt").write_text("q1 0 d1 1\nq2 0 d\u00a02 1\n", encoding="utf-8")
    run = "q1 Q0 d\u00a07 1 2.0 m\nq1 Q0 d1 2 1.0 m\nq2 Q0 d\u00a02 1 1.0 m\n"
    (folder / "web" / "runs" / "bm25.run").write_text(run, encoding="utf-8")
    (folder / "bundle.toml").write_text("[datasets.web]\n")
    return folder


def test_a_no_break_space_round_trips_run_notes_amended_qrels_evaluate(tmp_path: Path) -> None:
    bundle = _bundle(tmp_path / "bundle")
    notes = tmp_path / "notes"
    strict = tmp_path / "strict.txt"
    proc = run_main("notes", "--bundle", bundle, "--dataset", "web", "--notes-dir", notes,
                   "--qrels", strict)  # fmt: skip
    assert proc.returncode == 0, proc.stderr  # no judgement yet: the strict qrels, as read
    assert strict.read_text(encoding="utf-8") == "q1 0 d1 1\nq2 0 d\u00a02 1\n"
    judged = tmp_path / "judged.csv"
    judged.write_text("kind,query_id,doc_id,value\njudgement,q1,d\u00a07,1\n", encoding="utf-8")
    proc = run_main("notes", "import", "--bundle", bundle, "--dataset", "web", "--csv", judged,
                   "--author", "reviewer", "--notes-dir", notes)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    amended = tmp_path / "amended.txt"
    proc = run_main("notes", "--bundle", bundle, "--dataset", "web", "--notes-dir", notes,
                   "--qrels", amended)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "q1 0 d\u00a07 1\n" in amended.read_text(encoding="utf-8")
    run = bundle / "web" / "runs" / "bm25.run"
    scores = {}
    for name, qrels in (("strict", strict), ("amended", amended)):
        out = tmp_path / f"{name}.csv"
        proc = run_main("evaluate", "--run", run, "--qrels", qrels, "--metrics", "hit@1",
                       "--out", out)  # fmt: skip
        assert proc.returncode == 0, proc.stderr
        scores[name] = pd.read_csv(out, dtype={"query_id": str}).set_index("query_id")["hit@1"]
    assert scores["strict"].to_dict() == {"q1": 0.0, "q2": 1.0}
    assert scores["amended"].to_dict() == {"q1": 1.0, "q2": 1.0}  # the judged nbsp id counts
