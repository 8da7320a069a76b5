"""Hostile input beyond the corpus files: pipes, devices, decompression bombs built on the fly,
the size cap, exact number syntax, empty STaRK answer lists.

Files that git cannot hold (a FIFO, a 1 GiB-output gzip) are made in ``tmp_path``.
"""

from __future__ import annotations

import gzip
import os
import subprocess
import sys
import threading
import zlib
from pathlib import Path

import pytest

from analysis.core.errors import InputError
from analysis.core.metrics import evaluate_run
from analysis.io import load_qrels, load_run
from analysis.io._text import MAX_BYTES_ENV, MAX_DEPTH, parse_json, parse_toml
from analysis.io.trec import c_float, c_int
from tests.bad_input.corpus import GOOD, HERE

ROOT = Path(__file__).resolve().parents[1]


def _cli(*args: str, shell: bool = False, env: dict | None = None) -> subprocess.CompletedProcess:
    command = [sys.executable, "-m", "analysis", *args]
    if shell:  # bash, for process substitution
        command = ["bash", "-c", " ".join(command)]
    return subprocess.run(
        command,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env={**os.environ, **(env or {})},
    )


def _write_later(fifo: Path, data: bytes) -> threading.Thread:
    def write() -> None:
        with fifo.open("wb") as f:
            f.write(data)

    thread = threading.Thread(target=write, daemon=True)
    thread.start()
    return thread


# ------------------------------------------------------------------------ pipes and devices


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this system")
def test_a_fifo_as_run_is_read_once_not_opened_twice(tmp_path: Path) -> None:
    fifo = tmp_path / "run.fifo"
    os.mkfifo(fifo)
    writer = subprocess.Popen(["sh", "-c", f"cat '{GOOD['run']}' > '{fifo}'"])
    try:
        proc = _cli("evaluate", "--run", str(fifo), "--qrels", str(GOOD["qrels"]))
    finally:
        writer.kill()
        writer.wait()
    assert proc.returncode == 0, proc.stderr
    assert "mrr" in proc.stdout


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this system")
def test_the_loaders_read_a_fifo_like_the_file(tmp_path: Path) -> None:
    fifo = tmp_path / "qrels.fifo"
    os.mkfifo(fifo)
    thread = _write_later(fifo, gzip.compress(GOOD["qrels"].read_bytes()))
    from_fifo = load_qrels(fifo)
    thread.join(10)
    assert from_fifo.equals(load_qrels(GOOD["qrels"]))
    assert load_qrels(fifo).equals(from_fifo)  # a second read uses the spool, never blocks


def test_process_substitution_of_a_gzip_stream(tmp_path: Path) -> None:
    packed = tmp_path / "run.gz"
    packed.write_bytes(gzip.compress(GOOD["run"].read_bytes()))
    proc = _cli(
        "evaluate", "--run", f"<(zcat '{packed}')", "--qrels", f"<(cat '{GOOD['qrels']}')",
        shell=True,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    direct = _cli("evaluate", "--run", str(GOOD["run"]), "--qrels", str(GOOD["qrels"]))
    assert proc.stdout == direct.stdout


def test_a_device_is_refused_in_one_line() -> None:
    proc = _cli("evaluate", "--run", "/dev/zero", "--qrels", str(GOOD["qrels"]))
    assert proc.returncode == 2
    assert proc.stderr == (
        "error: /dev/zero: is a device or socket, not a file (only files and pipes)\n"
    )


# ----------------------------------------------------------------------- size and ratio caps


def _bomb(path: Path, gib: int = 1) -> Path:
    """One valid run line, then ``gib`` GiB of zero bytes in ~1 MB of gzip members."""
    member = zlib.compressobj(9, zlib.DEFLATED, 31)
    body = member.compress(b"\0" * (1 << 20)) + member.flush()
    one_mib = gzip.decompress(body)
    assert len(one_mib) == 1 << 20
    with path.open("wb") as f:
        f.write(gzip.compress(b"q1 Q0 d1 1 1.0 run\n"))
        for _ in range(1024 * gib):
            f.write(body)
    return path


def test_a_one_gib_gzip_bomb_fails_with_bounded_memory(tmp_path: Path) -> None:
    bomb = _bomb(tmp_path / "bomb.run.gz")
    assert bomb.stat().st_size < 2 << 20
    code = (
        "import resource, sys\n"
        "from analysis.cli import main\n"
        f"rc = main(['evaluate', '--run', {str(bomb)!r}, '--qrels', {str(GOOD['qrels'])!r}])\n"
        "print(rc, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    rc, peak_kib = proc.stdout.split()
    assert rc == "2"
    assert proc.stderr.startswith(f"error: {bomb}: the gzip data expands more than 200 times")
    assert len(proc.stderr.splitlines()) == 1
    assert int(peak_kib) < 600 * 1024  # far below the 1 GiB the stream holds


def test_the_size_cap_is_configurable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(MAX_BYTES_ENV, "100")
    with pytest.raises(InputError, match="larger than the input size limit of 100 bytes"):
        load_run(GOOD["run"])  # 171 bytes
    packed = tmp_path / "run.gz"
    packed.write_bytes(gzip.compress(GOOD["run"].read_bytes()))
    assert packed.stat().st_size < 100
    with pytest.raises(InputError, match="larger than the input size limit") as info:
        load_run(packed)  # small on disk, over the cap once decompressed
    assert str(info.value).startswith(f"{packed}: ")
    monkeypatch.setenv(MAX_BYTES_ENV, "lots")
    with pytest.raises(InputError, match="must be a positive integer"):
        load_run(GOOD["run"])


# ----------------------------------------------------------------------------- depth limits


def test_json_depth_limit_names_the_line_and_ignores_brackets_in_strings() -> None:
    ok = '{"a": "' + "[" * 1000 + '", "b": [[1]]}'
    assert parse_json(ok, "x.json") == {"a": "[" * 1000, "b": [[1]]}
    escaped = '["\\"' + "[" * 1000 + '"]'  # an escaped quote does not end the string
    assert parse_json(escaped, "x.json") == ['"' + "[" * 1000]
    at_limit = "[" * MAX_DEPTH + "]" * MAX_DEPTH
    assert parse_json(at_limit, "x.json") is not None
    deep = "{\n\n" + '"k": ' + "[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1) + "}"
    with pytest.raises(InputError) as info:
        parse_json(deep, "x.json")
    assert str(info.value) == f"x.json:3: JSON nested deeper than {MAX_DEPTH} levels"


def test_toml_depth_limit_names_the_line() -> None:
    assert parse_toml('a = "' + "[" * 500 + '"\n[t]\nb = [[1]]\n', "b.toml")["t"] == {"b": [[1]]}
    with pytest.raises(InputError) as info:
        parse_toml("a = 1\n# [[[[\nb = " + "[" * 100_000 + "]" * 100_000 + "\n", "b.toml")
    assert str(info.value) == f"b.toml:3: TOML nested deeper than {MAX_DEPTH} levels"


# ---------------------------------------------------------------------------- number syntax


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("1", 1.0), ("-2.5", -2.5), ("+.5", 0.5), ("5.", 5.0), ("1e3", 1000.0),
        ("1E-2", 0.01), ("0x1p3", 8.0), ("-0X.8", -0.5), ("0x1A", 26.0),
    ],
)  # fmt: skip
def test_c_float_reads_what_strtod_reads(text: str, value: float) -> None:
    assert c_float(text) == value


@pytest.mark.parametrize(
    "text",
    ["1_000", "１２", "١٢", "1.5abc", "", ".", "e3", "1e", "1,5", "\u00a01", "--1", "0x", "1e3.5"],
)
def test_c_float_refuses_what_strtod_does_not_read_whole(text: str) -> None:
    assert c_float(text) is None


def test_c_float_special_values_are_read_then_refused_as_non_finite() -> None:
    for text in ("inf", "-Infinity", "NaN", "nan(123)"):
        value = c_float(text)
        assert (value is not None and value != value) or abs(value) == float("inf")


def test_c_int_is_ascii_digits_only() -> None:
    assert [c_int(t) for t in ("1", "+2", "-3", "007")] == [1, 2, -3, 7]
    assert [c_int(t) for t in ("1_0", "１", "١", "1.0", "1e2", " 1", "")] == [None] * 7


def test_a_no_break_space_doc_id_matches_between_run_and_qrels() -> None:
    run = load_run(HERE / "run" / "nbsp_in_doc_id.txt")
    qrels = load_qrels(HERE / "qrels" / "nbsp_in_doc_id.txt")
    assert "d\u00a0one" in set(run["doc_id"])
    assert "d\u00a0one" in set(qrels["doc_id"])
    per_query = evaluate_run(run, qrels, ["hit@1"]).per_query.set_index("query_id")
    assert per_query["hit@1"].to_dict() == {"q1": 1.0, "q2": 1.0, "q3": 1.0}


def test_an_empty_stark_answer_list_is_a_query_scored_zero_and_flagged() -> None:
    qrels = load_qrels(HERE / "stark" / "qa_answer_ids_empty.csv")
    run = load_run(GOOD["stark_eval"])
    result = evaluate_run(run, qrels, ["hit@1", "mrr"], diagnostics=True)
    per_query = result.per_query.set_index("query_id")
    assert list(per_query.index) == ["1", "2"]  # query 2 is evaluated, not dropped
    assert per_query.loc["2", "hit@1"] == 0.0
    assert bool(per_query.loc["2", "no_relevant"])
    assert not bool(per_query.loc["1", "no_relevant"])
    assert {w.code for w in result.warnings} == {"no_relevant"}
