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
from tests.helpers import run_main

ROOT = Path(__file__).resolve().parents[2]


def _cli(*args: str, shell: bool = False, env: dict | None = None) -> subprocess.CompletedProcess:
    """``python -m analysis ARGS`` as a separate process, for what needs one (pipes from
    another process, devices that never end, limits); the rest runs
    :func:`tests.helpers.run_main` in this process."""
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
    direct = run_main("evaluate", "--run", GOOD["run"], "--qrels", GOOD["qrels"])
    assert proc.stdout == direct.stdout


def test_a_device_is_refused_in_one_line() -> None:
    proc = _cli("evaluate", "--run", "/dev/zero", "--qrels", str(GOOD["qrels"]))
    assert proc.returncode == 2
    assert proc.stderr == (
        "error: /dev/zero: is a device or socket, not a file (only files and pipes)\n"
    )


# ----------------------------------------------------------------------- size and ratio caps


# The child's own peak resident memory in KiB: VmHWM of /proc/self/status belongs to the
# process image started by exec (ru_maxrss would also count the parent's peak, inherited
# through vfork/exec).
_PEAK = (
    "peak = next(int(line.split()[1]) for line in open('/proc/self/status') "
    "if line.startswith('VmHWM:'))\n"
)
needs_proc = pytest.mark.skipif(
    not Path("/proc/self/status").exists(), reason="peak memory is read from /proc"
)


def _bomb(path: Path, gib: int = 1) -> Path:
    """One valid run line, then ``gib`` GiB of valid run lines (text, no NUL byte: the ratio
    cap, not the binary-data check, must stop it) in ~1 MB of gzip members."""
    line = b"q1 Q0 d1 1 1.0 run\n"
    member = zlib.compressobj(9, zlib.DEFLATED, 31)
    body = member.compress(line * ((1 << 20) // len(line))) + member.flush()
    assert len(gzip.decompress(body)) > (1 << 20) - len(line)
    with path.open("wb") as f:
        f.write(gzip.compress(b"q1 Q0 d1 1 1.0 run\n"))
        for _ in range(1024 * gib):
            f.write(body)
    return path


@needs_proc
def test_a_one_gib_gzip_bomb_fails_with_bounded_memory(tmp_path: Path) -> None:
    bomb = _bomb(tmp_path / "bomb.run.gz")
    assert bomb.stat().st_size < 4 << 20  # ~400 times smaller than what it expands to
    code = (
        "from analysis.cli import main\n"
        f"rc = main(['evaluate', '--run', {str(bomb)!r}, '--qrels', {str(GOOD['qrels'])!r}])\n"
        + _PEAK
        + "print(rc, peak)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    rc, peak_kib = proc.stdout.split()
    assert rc == "2"
    assert proc.stderr.startswith(f"error: {bomb}: the gzip data expands more than 200 times")
    assert len(proc.stderr.splitlines()) == 1
    assert int(peak_kib) < 400 * 1024  # far below the 1 GiB the stream holds


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


# --------------------------------------------------------------------------- atomic outputs

_SLOW_WRITER = """
import sys, time
import pyarrow.csv as pcsv

def slow(table, path, **kwargs):  # writes part of the table, then hangs until killed
    with open(path, "wb") as f:
        f.write(b"query_id,hit@1\\nq1,1\\n")
        f.flush()
    open(sys.argv[1], "w").write("writing")
    time.sleep(120)

pcsv.write_csv = slow
from analysis.cli import main
main(sys.argv[2:])
"""


@pytest.mark.parametrize("previous", [None, "query_id,hit@1\nold,0\n"])
def test_kill_9_during_a_write_leaves_no_partial_file(tmp_path: Path, previous: str | None):
    import signal
    import time

    out = tmp_path / "per_query.csv"
    if previous is not None:
        out.write_text(previous)
    started = tmp_path / "started"
    args = ["evaluate", "--run", str(GOOD["run"]), "--qrels", str(GOOD["qrels"]), "--out", str(out)]
    child = subprocess.Popen(
        [sys.executable, "-c", _SLOW_WRITER, str(started), *args],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        for _ in range(600):
            if started.exists() or child.poll() is not None:
                break
            time.sleep(0.1)
        assert started.exists(), "the writer never started"
        child.send_signal(signal.SIGKILL)
        child.wait(30)
    finally:
        if child.poll() is None:
            child.kill()
    assert child.returncode == -signal.SIGKILL
    if previous is None:
        assert not out.exists()
    else:
        assert out.read_text() == previous
    partial = [p for p in tmp_path.iterdir() if p.name.startswith(f".{out.name}.")]
    assert len(partial) == 1  # the half-written table went to the temporary file only
    assert partial[0].read_bytes().startswith(b"query_id,hit@1\nq1,1\n")


# The out-of-core engine's plan made endless; "started" once its connection is open.
_ENDLESS_QUERY = """
import signal, sys
signal.signal(signal.SIGINT, signal.default_int_handler)  # as in a terminal, even when the tests
                                                          # run where SIGINT is ignored
from analysis.core.engines import duckdb as outofcore
outofcore._PLAN = "SELECT sum(range % 7) FROM range(10000000000000) -- {scan}{overflow}{flt_max}"
connect = outofcore.connect
def connected(*args):
    con = connect(*args)
    print("started", flush=True)
    return con
outofcore.connect = connected
from analysis.cli import main
sys.exit(main(sys.argv[1:]))
"""


@pytest.mark.parametrize("signame", ["SIGTERM", "SIGINT"])
def test_a_signal_during_a_duckdb_query_stops_it_in_one_line_and_removes_the_spill(
    tmp_path: Path, signame: str
) -> None:
    """``kill`` (or Ctrl-C) while DuckDB computes: the query stops, the command prints one
    line and exits 128 + the signal, and neither the spill folder nor an ``--out`` is left."""
    import signal
    import time

    spill = tmp_path / "tmp"
    spill.mkdir()
    out = tmp_path / "per_query.csv"
    args = ["evaluate", "--engine", "duckdb", "--run", str(GOOD["run"]), "--qrels",
            str(GOOD["qrels"]), "--out", str(out)]  # fmt: skip
    child = subprocess.Popen(
        [sys.executable, "-c", _ENDLESS_QUERY, *args],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "TMPDIR": str(spill)},
        start_new_session=True,  # a signal of its own, as a terminal's Ctrl-C sends
    )
    try:
        assert child.stdout.readline().startswith("started")
        assert [p.name[:7] for p in spill.iterdir()] == ["duckdb-"]  # its spill folder
        time.sleep(0.5)  # inside DuckDB's query, which never ends on its own
        child.send_signal(getattr(signal, signame))
        _, err = child.communicate(timeout=60)
    finally:
        if child.poll() is None:
            child.kill()
    signum = getattr(signal, signame)
    assert child.returncode == 128 + signum
    assert err == ("error: interrupted\n" if signame == "SIGINT" else "error: terminated\n")
    assert list(spill.iterdir()) == []
    assert not out.exists()


def _big_run(path: Path, n: int, score: float) -> Path:
    with path.open("w") as f:
        for i in range(n):
            f.write(f"q{i} Q0 d{i} 1 {score} sys\nq{i} Q0 x{i} 2 {score / 2} sys\n")
    return path


def test_two_concurrent_writers_leave_one_complete_table(tmp_path: Path) -> None:
    n = 60_000
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("".join(f"q{i} 0 {'d' if i % 2 else 'x'}{i} 1\n" for i in range(n)))
    runs = [_big_run(tmp_path / "a.run", n, 2.0), _big_run(tmp_path / "b.run", n, -2.0)]
    # b ranks the same docs; a second metric set makes the two outputs differ
    metric_sets = ["hit@1,mrr", "hit@1,recall@2"]
    refs = []
    for i, run in enumerate(runs):
        ref = tmp_path / f"ref{i}.csv"
        proc = run_main("evaluate", "--run", run, "--qrels", qrels,
                        "--metrics", metric_sets[i], "--out", ref)  # fmt: skip
        assert proc.returncode == 0, proc.stderr
        refs.append(ref.read_bytes())
    assert refs[0] != refs[1]
    out = tmp_path / "shared.csv"
    command = [
        sys.executable,
        "-m",
        "analysis",
        "evaluate",
        "--qrels",
        str(qrels),
        "--out",
        str(out),
    ]
    children = [
        subprocess.Popen(
            [*command, "--run", str(run), "--metrics", metric_sets[i]],
            cwd=ROOT,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        for i, run in enumerate(runs)
    ]
    for child in children:
        assert child.wait(300) == 0, child.stderr.read() if child.stderr else ""
        if child.stderr:
            child.stderr.close()
    assert out.read_bytes() in refs  # one whole table, never rows of both
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".shared.csv.")]


def test_report_refuses_an_out_inside_the_bundle_it_reads(tmp_path: Path) -> None:
    import shutil

    bundle = tmp_path / "b"
    shutil.copytree(HERE / "bundle" / "ok", bundle)
    before = {p: p.read_bytes() for p in bundle.rglob("*") if p.is_file()}
    web = bundle / "web"
    targets = (bundle / "bundle.toml", web / "qrels.txt", web / "runs" / "bm25.run")
    for target in (*targets, web / "queries.csv"):
        proc = run_main("report", "--bundle", str(bundle), "--out", str(target))
        assert proc.returncode == 2
        assert (
            proc.stderr == f"error: {target}: is a file of the bundle: refusing to overwrite it\n"
        )
    link = tmp_path / "link.html"
    link.symlink_to(bundle / "web" / "qrels.txt")
    proc = run_main("report", "--bundle", str(bundle), "--out", str(link))
    assert proc.returncode == 2
    assert {p: p.read_bytes() for p in bundle.rglob("*") if p.is_file()} == before
    ok = bundle / "report.html"  # a new file beside the manifest is fine
    proc = run_main("report", "--bundle", str(bundle), "--out", str(ok))
    assert proc.returncode == 0, proc.stderr
    assert ok.read_text(encoding="utf-8").lstrip().lower().startswith("<!doctype html")
    assert not [p for p in bundle.iterdir() if p.name.startswith(".report.html.")]


# ------------------------------------------------------------------------------ confinement


def _linked_bundle(tmp_path: Path, target: Path) -> Path:
    import shutil

    bundle = tmp_path / "roots" / "b"
    shutil.copytree(HERE / "bundle" / "ok", bundle)
    run = bundle / "web" / "runs" / "bm25.run"
    run.unlink()
    run.symlink_to(target)
    return bundle


def test_a_symlinked_run_leaving_the_bundle_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from analysis.io.bundle import ROOTS_ENV, read_manifest

    monkeypatch.delenv(ROOTS_ENV, raising=False)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "bm25.run").write_bytes(GOOD["run"].read_bytes())
    bundle = _linked_bundle(tmp_path, elsewhere / "bm25.run")
    with pytest.raises(InputError) as info:
        read_manifest(bundle)
    assert str(info.value) == (
        f"{bundle / 'bundle.toml'}: dataset 'web': run 'bm25' resolves to "
        f"{(elsewhere / 'bm25.run').resolve()}, outside the bundle folder and the data roots "
        f"(add its folder to {ROOTS_ENV})"
    )
    proc = run_main("validate", "--bundle", str(bundle))
    assert proc.returncode == 2
    assert proc.stderr == f"error: {info.value}\n"
    # the same file is fine once its folder is a data root (CLI: the environment variable)
    monkeypatch.setenv(ROOTS_ENV, str(elsewhere))
    assert read_manifest(bundle).datasets["web"].runs["bm25"] == (elsewhere / "bm25.run").resolve()
    assert run_main("validate", "--bundle", str(bundle)).returncode == 0
    with pytest.raises(InputError, match="outside the bundle folder and the data roots"):
        read_manifest(bundle, roots=[])  # roots given (the app's) replace the variable


# ------------------------------------------------------------- manifest metrics, geo options


def test_manifest_metric_errors_name_the_metric() -> None:
    from analysis.io.bundle import read_manifest

    with pytest.raises(InputError) as info:
        read_manifest(HERE / "bundle" / "metrics_hit0")
    assert "hit@0" in str(info.value)
    assert str(info.value).startswith(f"{(HERE / 'bundle' / 'metrics_hit0' / 'bundle.toml')}: ")


@pytest.mark.parametrize("value", ["-1", "nan", "inf", "-inf"])
def test_geo_tolerance_must_be_finite_and_not_negative(value: str) -> None:
    pois = HERE / "pois" / "bom_crlf_ok.csv"
    proc = run_main("geo", "--pois", str(pois), f"--tolerance-m={value}")
    assert proc.returncode == 2
    assert proc.stderr.startswith("error: --tolerance-m: must be a finite number of metres >= 0")
    assert len(proc.stderr.splitlines()) == 1


def _components_equal(a, b) -> bool:
    """Same partition (labels may differ)."""
    import numpy as np

    a, b = np.asarray(a), np.asarray(b)
    pairs = set(zip(a.tolist(), b.tolist(), strict=True))
    return len(pairs) == len(set(a.tolist())) == len(set(b.tolist()))


def test_tolerance_stacks_equal_the_all_pairs_answer_on_random_inputs() -> None:
    import numpy as np
    import pandas as pd
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    from analysis.geo.geometry import coordinate_stacks, haversine_m

    rng = np.random.default_rng(12)
    for trial in range(60):
        n = int(rng.integers(2, 120))
        spread = float(rng.choice([1e-5, 1e-4, 1e-3, 1e-2]))  # degrees: metres to a kilometre
        lat = 39.9 + rng.normal(0, spread, n)
        lon = 116.4 + rng.normal(0, spread, n)
        if trial % 5 == 0:  # exact duplicates too
            lat[: n // 2], lon[: n // 2] = lat[0], lon[0]
        tolerance = float(rng.choice([0.5, 5.0, 50.0, 300.0]))
        got = coordinate_stacks(pd.DataFrame({"lat": lat, "lon": lon}), tolerance)["stack_id"]
        # all pairs, by great-circle distance (ties at exactly the tolerance have measure zero)
        i, j = np.triu_indices(n, 1)
        near = haversine_m(lat[i], lon[i], lat[j], lon[j]) <= tolerance
        graph = coo_matrix((np.ones(near.sum()), (i[near], j[near])), shape=(n, n))
        _, want = connected_components(graph, directed=False)
        assert _components_equal(got, want), (trial, n, spread, tolerance)


@needs_proc
def test_twenty_thousand_pois_inside_one_metre_are_one_stack_in_bounded_memory() -> None:
    code = (
        "import numpy as np, pandas as pd\n"
        "from analysis.geo.geometry import coordinate_stacks\n"
        "rng = np.random.default_rng(0)\n"
        "n = 20000\n"
        "lat = 39.9 + rng.uniform(0, 5e-6, n)\n"  # about 0.5 m
        "lon = 116.4 + rng.uniform(0, 5e-6, n)\n"
        + _PEAK.replace("peak =", "before =")
        + "out = coordinate_stacks(pd.DataFrame({'lat': lat, 'lon': lon}), 100.0)\n"
        + _PEAK
        + "print(out['stack_id'].nunique(), out['stack_size'].max(), peak - before)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, proc.stderr
    n_stacks, biggest, grown_kib = map(int, proc.stdout.split())
    assert (n_stacks, biggest) == (1, 20000)
    assert grown_kib < 200 * 1024  # all 2e8 pairs would need gigabytes


# ------------------------------------------------------------------ plotly template fields


def _template_fields(fig) -> list[str]:
    import re

    found: list[str] = []
    for trace in fig.to_plotly_json()["data"]:
        for key in ("hovertemplate", "texttemplate"):
            found += re.findall(r"%\{[^}]*\}", str(trace.get(key) or ""))
    return found


def test_data_text_never_becomes_a_plotly_template_field() -> None:
    import pandas as pd

    from analysis.present.export import plotly_text
    from analysis.present.slicing import slice_bar_figure, slice_heatmap_figure, slice_summary

    assert plotly_text("%{y}") == "&#37;{y}"

    def figures(value: str, column: str, model: str) -> list:
        table = pd.DataFrame(
            {
                "query_id": ["1", "2", "3", "4"] * 2,
                "model": [model] * 4 + ["other"] * 4,
                column: [value, value, "b", "b"] * 2,
                "mrr": [1.0, 0.5, 0.0, 1.0, 0.2, 0.3, 0.4, 0.5],
            }
        )
        summary = slice_summary(table, "mrr", column, n_resamples=200)
        return [
            slice_bar_figure(summary, "mrr", column),
            slice_heatmap_figure(summary, "mrr", column),
        ]

    plain = figures("a", "kind", "bm25")
    hostile = figures("%{y}", "%{x}<br>", "%{fullData.name}")
    for safe, bad in zip(plain, hostile, strict=True):
        assert _template_fields(bad) == _template_fields(safe)  # only the designed fields
        text = str(bad.to_plotly_json())
        assert "&#37;{y}" in text
        assert "&#37;{x}" in text


@pytest.mark.parametrize("codec", ["utf-16-le", "utf-16-be"])
def test_utf16_text_is_told_to_be_saved_as_utf8(tmp_path: Path, codec: str) -> None:
    """Excel's "Unicode text" is UTF-16 with a byte-order mark: its ASCII characters hold NUL
    bytes, so it read as "binary data"; a run, qrels or notes CSV in UTF-16 (gzipped too) now
    says what it is."""
    from analysis.io.annotations_csv import read_annotations_csv

    def utf16(text: str) -> bytes:  # with its byte-order mark, as Excel writes it
        return ("\ufeff" + text).encode(codec)

    data = utf16("q1 Q0 d1 1 1.0 x\n")
    plain, packed = tmp_path / "run.txt", tmp_path / "run.txt.gz"
    plain.write_bytes(data)
    packed.write_bytes(gzip.compress(data))
    notes = tmp_path / "notes.csv"
    notes.write_bytes(utf16("kind,query_id,value\ntag,q1,x\n"))
    for read, path in ((load_run, plain), (load_run, packed), (load_qrels, plain),
                       (lambda p: read_annotations_csv(p, "d"), notes)):  # fmt: skip
        with pytest.raises(InputError) as caught:
            read(path)
        assert str(caught.value) == (
            f"{path}:1: UTF-16 text (it starts with a UTF-16 byte-order mark): save the file as "
            "UTF-8"
        )
