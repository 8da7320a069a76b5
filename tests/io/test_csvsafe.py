"""CSV exports neutralize spreadsheet formulas and NUL, and our readers undo it exactly: the
rule itself, every writer (annotations CSV, ``notes --csv``, ``evaluate --out``,
``evaluate --bundle``, ``compare``, the Report's table downloads), each file opened as text."""

from __future__ import annotations

import csv
import io
import random
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pytest

from analysis.io.annotations import AnnotationStore, database_path, read_export_csv, unneutralize
from analysis.io.csvsafe import neutralize, neutralize_arrow, neutralize_frame
from analysis.io.csvsafe import read_csv as read_our_csv
from analysis.present.export import to_csv
from tests import hostile
from tests.helpers import run_main

FORMULAS = ["=1+2", "@SUM(A1:A2)", "+1-2", "-2+3", "\t=1+2", "\r=1+2", '=HYPERLINK("x")']
KEPT = ["-1", "+3", "-0.5", "1e5", "q1", "", "a=b", "'quoted", "名前"]


def test_formula_cells_get_a_quote_and_numbers_stay_numbers() -> None:
    for text in FORMULAS:
        assert neutralize(text) == "'" + text
    for text in KEPT:
        assert neutralize(text) == text
    assert neutralize("'=x") == "''=x"  # an already quoted formula: one more quote
    assert neutralize("a\0b") == "ab"
    assert neutralize("=\0x") == "'=x"
    assert neutralize(7) == 7


def test_unneutralize_undoes_neutralize_exactly() -> None:
    rng = random.Random(0)
    alphabet = ["=", "+", "-", "@", "\t", "\r", "'", "1", ".", "e", "a", " ", "\n", ","]
    texts = FORMULAS + KEPT + ["'", "''", "''-1", "'-1", "-", "--1"]
    texts += ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 6))) for _ in range(5000)]
    for text in texts:
        assert unneutralize(neutralize(text)) == text, repr(text)
        assert not str(neutralize(text)).startswith(("=", "@", "\t", "\r")), repr(text)


def test_frame_and_arrow_versions_agree_with_the_cell_rule() -> None:
    values = FORMULAS + KEPT + ["'=x", "a\0b", None]
    frame = pd.DataFrame(
        {
            "text": pd.Series(values, dtype="object"),
            "ids": pd.Series([str(v) for v in values], dtype="str"),
            "n": range(len(values)),
            "=col": 1.5,
        }
    )
    out = neutralize_frame(frame)
    assert out["text"].tolist() == [neutralize(v) for v in values]
    assert out["ids"].tolist() == [neutralize(str(v)) for v in values]
    assert out["n"].tolist() == list(range(len(values)))
    assert list(out.columns) == ["text", "ids", "n", "'=col"]
    assert frame["text"].tolist() == values  # the input is not modified
    for kind in (pa.string(), pa.large_string()):
        arrow = neutralize_arrow(pa.array(values, type=kind))
        assert arrow.type == kind
        assert arrow.to_pylist() == [neutralize(v) for v in values]
    encoded = neutralize_arrow(pa.array(values).dictionary_encode())
    assert encoded.to_pylist() == [neutralize(v) for v in values]


@pytest.fixture
def annotated(tmp_path: Path) -> tuple[Path, Path]:
    bundle = hostile.make_hostile_bundle(tmp_path / "h")
    notes = tmp_path / "notes"
    hostile.annotate(bundle, notes)
    store = AnnotationStore(database_path(bundle, notes))
    store.set_note(hostile.DATASET, "q1", "-2+3 is what\nthe gold says,\t=too", author="@bob")
    store.add_tag(hostile.DATASET, "q1", "+1-2", author="=cmd|'/c calc'!A1")
    return bundle, notes


def _formula_cells(text: str) -> list[str]:
    cells = [c for row in csv.reader(io.StringIO(text)) for c in row]
    return [c for c in cells if c[:1] in ("=", "+", "-", "@", "\t", "\r")]


def test_frame_version_keeps_categorical_cells() -> None:
    """A categorical text column (slice buckets such as ``-5–-1`` are ordered categoricals)
    is neutralized cell by cell like any text column, never emptied."""
    values = ["-5–-1", "=1+2", "0–3", None]
    frame = pd.DataFrame({"bucket": pd.Categorical(values), "n": range(4)})
    out = neutralize_frame(frame)
    assert out["bucket"].tolist()[:3] == ["'-5–-1", "'=1+2", "0–3"]
    assert pd.isna(out["bucket"].tolist()[3])
    assert frame["bucket"].tolist()[:3] == values[:3]  # the input is left as it was


def test_notes_export_opened_as_text_has_no_formula_and_reads_back(
    annotated: tuple[Path, Path], tmp_path: Path
) -> None:
    bundle, notes = annotated
    out = tmp_path / "notes.csv"
    done = run_main("notes", "--bundle", bundle, "--notes-dir", notes, "--csv", out)
    assert done.returncode == 0, done.stderr
    text = out.read_text(encoding="utf-8")
    assert "\0" not in text
    assert _formula_cells(text) == []  # what a spreadsheet would run
    assert "'=1+2" in text  # the query id and the tag, quoted
    assert "'@bob" in text
    assert "'-2+3 is what\nthe gold says,\t=too" in text  # only the leading character counts
    store = AnnotationStore(database_path(bundle, notes))
    back = read_export_csv(out)
    assert back.equals(read_export_csv(store.export_csv()))
    notes_back = back.loc[back["kind"] == "note"].set_index("query_id")["value"].to_dict()
    assert notes_back == store.notes().set_index("query_id")["note"].to_dict()
    tags = back.loc[back["kind"] == "tag", ["query_id", "value", "author"]]
    stored = store.tags()[["query_id", "tag", "author"]]
    assert tags.to_numpy().tolist() == stored.to_numpy().tolist()
    with pytest.raises(ValueError, match="NUL"):
        store.set_note(hostile.DATASET, "q1", "a\0b")


def test_evaluate_and_compare_csv_neutralize_ids(tmp_path: Path) -> None:
    qrels, run_a, run_b = tmp_path / "qrels.txt", tmp_path / "a.run", tmp_path / "b.run"
    qrels.write_text("=1+2 0 d1 1\n-1 0 d2 1\n@x 0 d3 1\n")
    run_a.write_text("=1+2 Q0 d1 1 2.0 a\n-1 Q0 d9 1 1.0 a\n@x Q0 d3 1 1.0 a\n")
    run_b.write_text("=1+2 Q0 d9 1 2.0 b\n-1 Q0 d2 1 1.0 b\n@x Q0 d3 1 1.0 b\n")
    out = tmp_path / "pq.csv"
    done = run_main("evaluate", "--run", run_a, "--qrels", qrels, "--metrics", "mrr", "--out", out)
    assert done.returncode == 0, done.stderr
    text = out.read_text()
    assert _formula_cells(text) == ["-1"]  # a plain number stays a number
    back = read_our_csv(out)
    assert back["query_id"].tolist() == ["=1+2", "-1", "@x"]
    assert back["mrr"].tolist() == ["1", "0", "1"]
    cmp_out = tmp_path / "cmp.csv"
    done = run_main("compare", "--qrels", qrels, "--run", run_a, "--run", run_b,
                   "--metrics", "mrr", "--resamples", "100", "--out", cmp_out)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert [c for c in _formula_cells(cmp_out.read_text()) if not _number(c)] == []


def _number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def test_evaluate_bundle_csv_neutralizes_models_and_ids(tmp_path: Path) -> None:
    bundle = hostile.make_hostile_bundle(tmp_path / "h")
    out = tmp_path / "pq.csv"
    done = run_main("evaluate", "--bundle", bundle, "--dataset", hostile.DATASET,
                   "--split", "all", "--out", out)  # fmt: skip
    assert done.returncode == 0, done.stderr
    text = out.read_text()
    assert [c for c in _formula_cells(text) if not _number(c)] == []
    back = read_our_csv(out)
    assert "=1+2" in set(back["query_id"])
    assert set(back["model"]) == {hostile.MODEL_A, hostile.MODEL_B}


def test_report_table_csv_neutralizes_text_cells() -> None:
    table = pd.DataFrame({"model": ["=evil()", "bm25"], "slice": ["@x", "-1"], "mean": [0.5, -1]})
    text = to_csv(table)
    assert text.splitlines() == ["model,slice,mean", "'=evil(),'@x,0.5", "bm25,-1,-1.0"]
    assert read_our_csv(io.StringIO(text))["model"].tolist() == ["=evil()", "bm25"]
