"""Tests for analysis.io.trec: TREC runs and qrels, fast (Arrow) and slow (line) paths."""

from __future__ import annotations

import gzip
from pathlib import Path

import pandas as pd
import pytest

from analysis.core.errors import InputError
from analysis.io import load_qrels, load_run, trec
from analysis.io.trec import looks_like_trec, read_trec_qrels, read_trec_run

RUN_LINES = [
    ("007", "d1", "2.5"),
    ("007", "d2", "1.5"),
    ("7", "0042", "0.5"),
    ("7", "d1", "-3e-2"),
    ("q3", "é-doc", "1e3"),
]
EXPECTED_RUN = pd.DataFrame(
    {
        "query_id": ["007", "007", "7", "7", "q3"],
        "doc_id": ["d1", "d2", "0042", "d1", "é-doc"],
        "score": [2.5, 1.5, 0.5, -0.03, 1000.0],
    }
)


def _write(path: Path, text: str, *, bom: bool = False, crlf: bool = False) -> Path:
    if crlf:
        text = text.replace("\n", "\r\n")
    data = (("\ufeff" if bom else "") + text).encode("utf-8")
    if path.name.endswith(".gz"):
        path.write_bytes(gzip.compress(data))
    else:
        path.write_bytes(data)
    return path


def _run_text(sep: str = " ", trailing: str = "", extra: str = "") -> str:
    return "".join(
        sep.join([q, "Q0", d, str(i + 1), s, "tag"]) + extra + trailing + "\n"
        for i, (q, d, s) in enumerate(RUN_LINES)
    )


def _assert_run(frame: pd.DataFrame) -> None:
    assert list(frame.columns) == ["query_id", "doc_id", "score"]
    for column in ("query_id", "doc_id"):
        assert frame[column].tolist() == EXPECTED_RUN[column].tolist()
        assert all(isinstance(v, str) for v in frame[column])
    assert frame["score"].tolist() == EXPECTED_RUN["score"].tolist()


def _spy_slow(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    calls: list[Path] = []
    real = trec._slow_run

    def spy(path: Path):
        calls.append(path)
        return real(path)

    monkeypatch.setattr(trec, "_slow_run", spy)
    return calls


def _error(path: Path, reader=read_trec_run) -> InputError:
    with pytest.raises(InputError) as info:
        reader(path)
    return info.value


# --------------------------------------------------------------------------------------------
# runs


def test_single_space_run_uses_the_arrow_fast_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = _spy_slow(monkeypatch)
    frame = read_trec_run(_write(tmp_path / "a.run", _run_text()))
    _assert_run(frame)
    assert calls == []


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("tabs", _run_text(sep="\t", trailing="\t")),
        ("mixed", _run_text(sep=" \t  ")),
        ("trailing", _run_text(trailing="   ")),
        ("extra_columns", _run_text(extra=" x y z")),
        ("comments", "# a comment\n#\n" + _run_text() + "# 1 2 3 4 5\n"),
        ("comment_with_six_fields", "# Q0 d 1 2.0 tag\n" + _run_text()),
        ("blank_lines", "\n" + _run_text().replace("\n", "\n\n", 2) + "\n  \n"),
    ],
)
def test_irregular_whitespace_gives_the_same_table(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, text: str
) -> None:
    fast = read_trec_run(_write(tmp_path / "fast.run", _run_text()))
    calls = _spy_slow(monkeypatch)
    slow = read_trec_run(_write(tmp_path / f"{name}.run", text))
    pd.testing.assert_frame_equal(slow, fast)
    _assert_run(slow)
    if name != "blank_lines":  # Arrow skips blank lines itself
        assert calls, "expected the line-by-line parser"


@pytest.mark.parametrize(("bom", "crlf"), [(True, False), (False, True), (True, True)])
def test_bom_and_crlf(tmp_path: Path, bom: bool, crlf: bool) -> None:
    _assert_run(read_trec_run(_write(tmp_path / "a.run", _run_text(), bom=bom, crlf=crlf)))
    text = "# comment\n\n" + _run_text(sep="\t")
    _assert_run(read_trec_run(_write(tmp_path / "b.run", text, bom=bom, crlf=crlf)))


def test_gzip_run(tmp_path: Path) -> None:
    _assert_run(read_trec_run(_write(tmp_path / "a.run.gz", _run_text())))
    _assert_run(read_trec_run(_write(tmp_path / "b.run.gz", "# c\n" + _run_text(sep="\t"))))
    # gzip content without the .gz name is still recognised by its magic bytes
    plain_name = tmp_path / "c.run"
    plain_name.write_bytes(gzip.compress(_run_text().encode()))
    _assert_run(read_trec_run(plain_name))
    _assert_run(load_run(tmp_path / "a.run.gz"))


def _big_run(n: int = 6000) -> str:
    """More than the 64 KiB head the fast path inspects."""
    return "".join(f"q{i % 40} Q0 doc-{i:06d} {i} {1.0 / (i + 1)!r} run-tag\n" for i in range(n))


def test_mixed_separators_past_the_head_do_not_leak_into_ids(tmp_path: Path) -> None:
    text = _big_run().replace(" ", "\t") + "q1 \tQ0\tx \t1\t1.0\tt\n"
    frame = read_trec_run(_write(tmp_path / "a.run", text))
    assert frame["query_id"].iloc[-1] == "q1"
    assert frame["doc_id"].iloc[-1] == "x"
    assert len(frame) == 6001


def _big_qrels(n: int = 6000) -> str:
    return "".join(f"q{i % 40} 0 doc-{i:06d} {i % 3}\n" for i in range(n))


RUN_USAGE = "expected 6 fields 'qid Q0 docno rank score tag', found 5"


@pytest.mark.parametrize(
    ("sep", "bad"),
    [(" ", "q1  x 1 1.0 t"), ("\t", "q1\tQ0\tx\t1\t1.0\t"), (" ", "q1 Q0 x 1 1.0 \r")],
)
def test_an_empty_field_past_the_head_is_split_as_trec_eval_splits_it(
    tmp_path: Path, sep: str, bad: str
) -> None:
    """Two delimiters in a row, or one at a line's end, leave a field empty where trec_eval
    splits on runs of whitespace: the line has five fields, as the line-by-line reader says,
    not six with an empty Q0 or tag."""
    path = _write(tmp_path / "a.run", _big_run().replace(" ", sep) + bad + "\n")
    error = _error(path)
    assert (error.line, error.message) == (6001, RUN_USAGE)


@pytest.mark.parametrize("rel", ["0x1", "0X10", "-0x2"])
def test_a_hexadecimal_relevance_is_refused_whatever_the_reader(tmp_path: Path, rel: str) -> None:
    """trec_eval's ``atol`` reads ``0x1`` as 0; Arrow's integer parser reads it as 1. It is
    refused, naming the line, in a small file (read line by line) as in a large one (Arrow)."""
    for text in (f"q1 0 a {rel}\n", _big_qrels() + f"q1 0 a {rel}\n"):
        error = _error(_write(tmp_path / "q.txt", text), read_trec_qrels)
        assert error.message == f"relevance {rel!r} is not an integer"
        assert error.line == text.count("\n")


def test_an_empty_field_past_the_head_of_qrels_is_split_as_trec_eval_splits_it(
    tmp_path: Path,
) -> None:
    alone = _error(_write(tmp_path / "s.txt", "q1  x 1\n"), read_trec_qrels)
    assert "found 3" in alone.message
    error = _error(_write(tmp_path / "q.txt", _big_qrels() + "q1  x 1\n"), read_trec_qrels)
    assert (error.line, error.message) == (6001, alone.message)


def test_big_gzip_run_round_trip(tmp_path: Path) -> None:
    text = _big_run()
    assert len(text) > 65536 * 3
    frame = read_trec_run(_write(tmp_path / "big.run.gz", text))
    assert len(frame) == 6000
    assert frame["doc_id"].iloc[-1] == "doc-005999"
    assert frame["score"].iloc[10] == 1.0 / 11


@pytest.mark.parametrize("size", ["small", "big"])
def test_truncated_gzip_raises_input_error(tmp_path: Path, size: str) -> None:
    text = _big_run() if size == "big" else _run_text()
    data = gzip.compress(text.encode())
    path = tmp_path / "cut.run.gz"
    path.write_bytes(data[: len(data) // 2])
    error = _error(path)
    assert type(error) is InputError
    assert str(error) == f"{path}: cannot read the file: the gzip stream is truncated"
    with pytest.raises(InputError):
        load_run(path)


def test_five_columns_is_an_error_naming_the_line(tmp_path: Path) -> None:
    path = _write(tmp_path / "a.run", "q Q0 d1 1 2.0 t\n\n# note\nq Q0 d2 2 1.0\n")
    error = _error(path)
    assert str(error) == f"{path}:4: expected 6 fields 'qid Q0 docno rank score tag', found 5"
    assert (error.source, error.line) == (str(path), 4)


def test_five_columns_far_past_the_head_reports_the_right_line(tmp_path: Path) -> None:
    path = _write(tmp_path / "a.run", _big_run() + "q1 Q0 x 1 1.0\n")
    assert str(_error(path)).startswith(f"{path}:6001: expected 6 fields")


@pytest.mark.parametrize(
    ("score", "message"),
    [
        ("nan", "score 'nan' is not a finite number"),
        ("NaN", "score 'NaN' is not a finite number"),
        ("inf", "score 'inf' is not a finite number"),
        ("-Infinity", "score '-Infinity' is not a finite number"),
        ("abc", "score 'abc' is not a number"),
    ],
)
@pytest.mark.parametrize("prefix", ["", "# header comment\n\n\n", "\ufeff#c\r\n\r\n"])
def test_bad_score_names_the_line(tmp_path: Path, score: str, message: str, prefix: str) -> None:
    body = f"q Q0 d1 1 2.0 t\nq Q0 d2 2 1.0 t\nq Q0 d3 3 {score} t\nq Q0 d4 4 0.0 t\n"
    path = tmp_path / "bad.run"
    path.write_bytes((prefix + body).encode())
    line = 3 + prefix.count("\n")
    assert str(_error(path)) == f"{path}:{line}: {message}"


def test_bad_score_far_past_the_head(tmp_path: Path) -> None:
    path = _write(tmp_path / "a.run.gz", _big_run() + "q1 Q0 x 1 inf t\n")
    assert str(_error(path)).startswith(f"{path}:6001: score 'inf'")


def test_non_utf8_bytes_name_the_line(tmp_path: Path) -> None:
    path = tmp_path / "a.run"
    path.write_bytes(b"q Q0 d1 1 2.0 t\n\nq Q0 d\xff\xfe 2 1.0 t\n")
    assert str(_error(path)) == f"{path}:3: the file is not UTF-8 text"


def test_empty_ids_and_numeric_ids(tmp_path: Path) -> None:
    frame = read_trec_run(_write(tmp_path / "a.run", "007 Q0 0001 1 1 t\n7 Q0 1 1 2 t\n"))
    assert frame["query_id"].tolist() == ["007", "7"]
    assert frame["doc_id"].tolist() == ["0001", "1"]
    assert frame["score"].tolist() == [1.0, 2.0]


def test_empty_file_gives_an_empty_run(tmp_path: Path) -> None:
    frame = read_trec_run(_write(tmp_path / "a.run", "# nothing\n\n"))
    assert len(frame) == 0
    assert list(frame.columns) == ["query_id", "doc_id", "score"]


def test_table_api_matches(tmp_path: Path) -> None:
    path = _write(tmp_path / "a.run", _run_text())
    table = trec.read_trec_run_table(path)
    assert table.column_names == ["query_id", "doc_id", "score"]
    _assert_run(table.to_pandas())


def test_the_file_is_not_modified(tmp_path: Path) -> None:
    path = _write(tmp_path / "a.run", _run_text(sep="\t"), bom=True, crlf=True)
    before = path.read_bytes()
    read_trec_run(path)
    assert path.read_bytes() == before


# --------------------------------------------------------------------------------------------
# qrels

QRELS_TEXT = "007 0 d1 1\n007 0 d2 0\n7 Q0 0042 3\n7 0 d9 -1\n"


def _assert_qrels(frame: pd.DataFrame) -> None:
    assert frame.to_dict("list") == {
        "query_id": ["007", "007", "7", "7"],
        "doc_id": ["d1", "d2", "0042", "d9"],
        "relevance": [1, 0, 3, -1],
    }
    assert str(frame["relevance"].dtype) == "int64"


@pytest.mark.parametrize(
    "text",
    [
        QRELS_TEXT,
        QRELS_TEXT.replace(" ", "\t"),
        "# judgements\n\n" + QRELS_TEXT.replace(" ", "  ") + "\n",
        "\ufeff" + QRELS_TEXT.replace("\n", "\r\n"),
    ],
)
def test_qrels_formats(tmp_path: Path, text: str) -> None:
    _assert_qrels(read_trec_qrels(_write(tmp_path / "q.txt", text)))


def test_qrels_gzip(tmp_path: Path) -> None:
    _assert_qrels(read_trec_qrels(_write(tmp_path / "q.txt.gz", QRELS_TEXT)))
    _assert_qrels(load_qrels(tmp_path / "q.txt.gz"))


@pytest.mark.parametrize("value", ["1.5", "x", "high"])
def test_qrels_non_integer_relevance_names_the_line(tmp_path: Path, value: str) -> None:
    path = _write(tmp_path / "q.txt", f"# c\n007 0 d1 1\n\n007 0 d2 {value}\n")
    error = _error(path, read_trec_qrels)
    assert str(error) == f"{path}:4: relevance {value!r} is not an integer"


def test_qrels_too_few_fields(tmp_path: Path) -> None:
    path = _write(tmp_path / "q.txt", "007 0 d1 1\n007 0 d2\n")
    assert str(_error(path, read_trec_qrels)) == (
        f"{path}:2: expected 4 fields 'qid iter docno rel', found 3"
    )


def test_truncated_gzip_qrels(tmp_path: Path) -> None:
    path = tmp_path / "q.txt.gz"
    path.write_bytes(gzip.compress(QRELS_TEXT.encode() * 2000)[:200])
    assert "truncated" in str(_error(path, read_trec_qrels))


def test_looks_like_trec() -> None:
    assert looks_like_trec("q Q0 d 1 2.5 tag") == "trec_run"
    assert looks_like_trec("q Q0 d 1 2.5 tag extra") == "trec_run"
    assert looks_like_trec("q 0 d 1") == "trec_qrels"
    assert looks_like_trec("q 0 d x") is None
    assert looks_like_trec("q Q0 d 1 abc tag") is None
    assert looks_like_trec("just one") is None


def test_a_file_name_that_is_not_utf8_reads_as_text_and_is_refused_as_parquet(tmp_path) -> None:
    """A name holding bytes of another encoding: a TREC run is read (Arrow's reader gets the
    name's bytes); a Parquet run, which Arrow opens by UTF-8 name only, is one line naming it."""
    import os

    import pyarrow as pa
    import pyarrow.parquet as pq

    from analysis.core.errors import InputError
    from analysis.io import load_run

    odd = os.fsdecode(b"run\xff")
    (tmp_path / f"{odd}.trec").write_text("q Q0 a 1 2.0 x\nq Q0 b 2 1.0 x\n")
    assert load_run(tmp_path / f"{odd}.trec")["doc_id"].tolist() == ["a", "b"]
    with (tmp_path / f"{odd}.parquet").open("wb") as f:
        pq.write_table(pa.table({"query_id": ["q"], "doc_id": ["a"], "score": [1.0]}), f)
    with pytest.raises(InputError, match=r"run\\udcff\.parquet: the name is not UTF-8 text"):
        load_run(tmp_path / f"{odd}.parquet")
