"""The bad-input corpus (``tests/bad_input/cases.toml``) through the loaders and the CLI.

Every case has one expected outcome and every entry point must give it:

* ``error``: the loader raises :class:`InputError` whose text is ``<file>:<line>: <message>``
  (``<file>: <message>`` when no line applies); the CLI exits with code 2 and prints exactly one
  line, ``error: <the same text>``, on stderr, and no traceback anywhere;
* ``warning``: the data loads, the data checks report exactly the case's warning codes, and the
  CLI exits 0 printing one ``warning: ...`` line per code;
* ``ok``: the data loads without any warning; the CLI exits 0.

The app side (upload and bundle cases) is in ``tests/app/test_safety.py``.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from analysis.cli import main
from analysis.core.errors import DataWarning, InputError
from analysis.core.metrics import evaluate_run
from analysis.io import load_qrels, load_queries, load_run
from analysis.io.bundle import load_dataset, load_model_run, read_manifest
from analysis.io.spatial import load_pois
from tests.bad_input.corpus import (
    CASES,
    COMMAND_KINDS,
    FILE_KINDS,
    GOOD,
    HERE,
    KINDS,
    MADE_KINDS,
    OUTCOMES,
    OUTPUT_COMMANDS,
    PATH_INPUTS,
    RECIPES,
    WARNING_TEXT,
    Case,
    cases,
)
from tests.bad_input.made import run_case

ROOT = Path(__file__).resolve().parents[2]
RUN_LIKE = ("run", "qrels", "stark_qa", "stark_eval")


def _ids(case: Case) -> str:
    return case.id


# ------------------------------------------------------------------------------ the manifest


def test_corpus_is_large_and_covers_every_kind_and_outcome() -> None:
    assert len(CASES) >= 40
    assert {c.kind for c in CASES} == set(KINDS)
    for kind in KINDS:
        assert {c.outcome for c in cases(kind)} >= {"error", "ok"}, kind
    assert len({c.file for c in CASES}) == len(CASES), "one case per file"


@pytest.mark.parametrize("case", CASES, ids=_ids)
def test_case_is_well_formed(case: Case) -> None:
    assert case.kind in KINDS
    assert case.outcome in OUTCOMES
    assert case.description
    assert "\n" not in case.description
    if case.kind in MADE_KINDS:  # made at test time by its recipe
        assert case.make in RECIPES
        assert case.command in (OUTPUT_COMMANDS if case.kind == "output" else PATH_INPUTS)
        assert not case.path.exists()
    else:
        assert case.path.is_dir() if case.kind in ("bundle", "report") else case.path.is_file()
    if case.outcome == "error":
        assert case.message, "an error case names a substring of its message"
        assert not case.warnings
    else:
        assert case.line is None
        assert not case.message
        assert bool(case.warnings) == (case.outcome == "warning")
        assert set(case.warnings) <= set(WARNING_TEXT)
    if case.kind in RUN_LIKE:
        assert case.companion().is_file()
    if case.kind in FILE_KINDS:
        assert case.error_path().exists() or case.error_path().name == "bundle.toml"


def test_every_corpus_file_belongs_to_a_case() -> None:
    named = {c.path for c in CASES} | {c.companion() for c in CASES if c.kind in RUN_LIKE}
    named |= set(GOOD.values())
    bundles = [c.path for c in cases("bundle", "report")]
    for path in HERE.rglob("*"):
        if path.is_dir() or path.parent == HERE:  # the manifest and the helper module
            continue
        if "__pycache__" in path.parts:
            continue
        assert path in named or any(path.is_relative_to(b) for b in bundles), path


# ------------------------------------------------------------------------------- the loaders


def _codes(warnings: tuple[DataWarning, ...] | list[DataWarning]) -> set[str]:
    """The warning codes, without the saved-depth ones: the corpus's runs save 3 documents per
    query and the companion qrels give q1 a gold (d4) that no run holds, so recall@20 and
    ndcg@10 read beyond every list (:func:`test_the_corpus_pair_gets_its_saved_depth_warnings`);
    the corpus is about what the loaders report."""
    return {w.code for w in warnings if not w.code.startswith("saved_depth:")}


DEPTH_LINE = re.compile(r"^warning: \S+ reads (ranks up to|the whole ranking)")


def _load(case: Case) -> set[str] | pd.DataFrame:
    """Load the case the way the app does; for runs and qrels, evaluate against the companion
    and return the data-check codes."""
    path = case.path
    if case.kind in ("run", "stark_eval"):
        run = load_run(path)
        return _codes(evaluate_run(run, load_qrels(case.companion())).warnings)
    if case.kind in ("qrels", "stark_qa"):
        qrels = load_qrels(path)
        if case.kind == "stark_qa":
            queries = load_queries(path)
            assert set(qrels["query_id"]) <= set(queries["query_id"])
        return _codes(evaluate_run(load_run(case.companion()), qrels).warnings)
    if case.kind == "bundle":
        bundle = read_manifest(path)
        found: set[str] = set()
        for spec in bundle.datasets.values():
            ds = load_dataset(spec)
            for model in spec.runs:
                run = load_model_run(spec, model)
                found |= _codes(evaluate_run(run, ds.qrels, spec.metrics).warnings)
        return found
    return load_pois(path, crs=case.crs)


@pytest.mark.parametrize("case", cases(*FILE_KINDS, outcome="error"), ids=_ids)
def test_loader_error_names_file_line_and_problem(case: Case) -> None:
    with pytest.raises(InputError) as info:
        _load(case)
    text = str(info.value)
    assert text.startswith(case.expected_prefix()), text
    assert case.message in text
    assert "\n" not in text
    assert info.value.line == case.line


@pytest.mark.parametrize(
    "case", cases(*FILE_KINDS, outcome="warning") + cases(*FILE_KINDS, outcome="ok"), ids=_ids
)
def test_loader_loads_and_reports_exactly_the_expected_warnings(case: Case) -> None:
    result = _load(case)
    if case.kind == "pois":
        assert isinstance(result, pd.DataFrame)
        assert len(result) > 0
        assert result["lat"].between(-90, 90).all()
        assert result["lon"].between(-180, 180).all()
        assert all(isinstance(v, str) for v in result["doc_id"])
    else:
        assert result == set(case.warnings)


def test_ids_stay_strings_across_run_and_qrels() -> None:
    run = load_run(HERE / "run" / "ids_007.txt")
    qrels = load_qrels(HERE / "qrels" / "ids_7.txt")
    assert set(run["query_id"]) == {"007", "008", "009"}
    assert set(qrels["query_id"]) == {"7", "8", "9"}
    result = evaluate_run(run, qrels)
    assert result.per_query["hit@1"].sum() == 0  # nothing matches: 007 is not 7
    assert _codes(result.warnings) == {"not_in_qrels", "missing_from_run"}


def test_python_expression_in_answer_ids_is_never_evaluated(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import builtins

    def trap(*args: object, **kwargs: object) -> None:
        raise AssertionError("eval/exec must never be called on file content")

    monkeypatch.setattr(builtins, "eval", trap)
    monkeypatch.setattr(builtins, "exec", trap)
    with pytest.raises(InputError, match="not a list literal"):
        load_qrels(HERE / "stark" / "qa_python_expression.csv")


def test_a_bundle_with_one_broken_dataset_keeps_the_others() -> None:
    path = HERE / "bundle" / "one_broken_dataset"
    bundle = read_manifest(path)
    assert list(bundle.datasets) == ["web", "broken"]
    web = bundle.datasets["web"]
    assert len(load_model_run(web, "bm25")) == 9
    with pytest.raises(InputError, match="score 'nan'"):
        load_model_run(bundle.datasets["broken"], "bm25")


@pytest.mark.parametrize("case", cases("bundle", outcome="error"), ids=_ids)
def test_skip_broken_keeps_a_manifest_with_broken_dataset_entries(case: Case) -> None:
    """The app reads manifests with ``skip_broken=True``: a dataset entry that is wrong is left
    out with its error; a manifest that cannot be read at all still raises."""
    if case.error_file is None and not case.message.startswith("dataset "):
        with pytest.raises(InputError) as info:  # the manifest itself cannot be read
            read_manifest(case.path, skip_broken=True)
        assert str(info.value).startswith(case.expected_prefix())
        return
    bundle = read_manifest(case.path, skip_broken=True)
    if case.error_file is None:  # a dataset entry error: the dataset is listed as broken
        assert set(bundle.broken) == {"web"}
        assert case.message in bundle.broken["web"]
        assert bundle.broken["web"].startswith(case.expected_prefix())
    else:  # a data-file error: the manifest itself is fine
        assert not bundle.broken


# ------------------------------------------------------------------------------------ the CLI


def _cli_args(case: Case) -> list[str]:
    path = str(case.path)
    if case.kind in ("run", "stark_eval"):
        return ["evaluate", "--run", path, "--qrels", str(case.companion())]
    if case.kind in ("qrels", "stark_qa"):
        return ["evaluate", "--run", str(case.companion()), "--qrels", path]
    if case.kind == "bundle":
        return ["validate", "--bundle", path]
    return ["geo", "--pois", path, *(["--crs", case.crs] if case.crs else [])]


def _run_cli(args: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "analysis", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def _check_cli(case: Case, code: int, out: str, err: str, named: Path | None = None) -> None:
    assert "Traceback" not in out
    assert "Traceback" not in err
    if case.outcome == "error":
        assert code == 2, (out, err)
        lines = err.splitlines()
        assert len(lines) == 1, err
        assert lines[0].startswith("error: " + case.expected_prefix(named)), lines[0]
        assert case.message in lines[0]
        return
    assert code == 0, (out, err)
    assert err == ""
    printed = [
        line
        for line in out.splitlines()
        if line.startswith("warning: ") and not DEPTH_LINE.match(line)
    ]
    assert len(printed) == len(case.warnings), out
    for code_name in case.warnings:
        assert WARNING_TEXT[code_name] in out
    if case.kind == "pois":
        assert json.loads(out)["n_pois"] > 0


@pytest.mark.parametrize("case", cases(*FILE_KINDS), ids=_ids)
def test_cli_gives_the_expected_outcome(case: Case) -> None:
    """``evaluate`` (runs, qrels, STaRK), ``validate --bundle`` (bundles), ``geo`` (POIs), as a
    separate process: exit code, the one stderr line, the warnings on stdout."""
    proc = _run_cli(_cli_args(case))
    _check_cli(case, proc.returncode, proc.stdout, proc.stderr)


@pytest.mark.parametrize("case", cases(*COMMAND_KINDS, *MADE_KINDS), ids=_ids)
def test_command_cases_give_the_expected_outcome(case: Case, tmp_path: Path) -> None:
    """Outputs (a full device, a pipe, a read-only folder, a full disk, ... as ``--out`` of a
    command), input paths (a symlink loop, a name too long, an unreadable file, ...), tiny
    bundles reported, huge ``disagree --k``, annotation CSVs: exit code, the one stderr line
    naming the path (or flag), no traceback."""
    proc, named = run_case(case, tmp_path)
    _check_cli(case, proc.returncode, proc.stdout, proc.stderr, named)


@pytest.mark.parametrize("case", cases(*RUN_LIKE), ids=_ids)
def test_cli_validate_gives_the_same_outcome(
    case: Case, capsys: pytest.CaptureFixture[str]
) -> None:
    """``validate`` of the same run and qrels (in process: the same ``main`` the module runs)."""
    args = _cli_args(case)
    args[0] = "validate"
    code = main(args)
    captured = capsys.readouterr()
    _check_cli(case, code, captured.out, captured.err)
    if case.outcome == "ok":  # nothing but the saved-depth checks of the companion pair
        warned = [line for line in captured.out.splitlines() if line.startswith("warning: ")]
        assert all(DEPTH_LINE.match(line) for line in warned), captured.out


def test_cli_missing_file_is_one_line(tmp_path: Path) -> None:
    missing = tmp_path / "gone.run"
    proc = _run_cli(["evaluate", "--run", str(missing), "--qrels", str(GOOD["qrels"])])
    assert proc.returncode == 2
    assert proc.stderr == f"error: {missing}: no such file\n"


def test_cli_validate_needs_run_and_qrels_or_bundle() -> None:
    proc = _run_cli(["validate", "--run", str(GOOD["run"])])
    assert proc.returncode == 2
    assert proc.stderr.startswith("error: ")
    assert len(proc.stderr.splitlines()) == 1
    assert "Traceback" not in proc.stderr


def test_cli_validate_bundle_prints_checks_per_model() -> None:
    proc = _run_cli(["validate", "--bundle", str(HERE / "bundle" / "ok")])
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0] == "web / bm25: 3 queries, 9 run lines"
    assert [line.split(" reads ")[0] for line in lines[1:]] == [
        "warning: recall@20",
        "warning: ndcg@10",
    ]


def test_the_corpus_pair_gets_its_saved_depth_warnings() -> None:
    """The good run saves 3 documents per query and misses q1's second gold (d4): the
    default metrics that read beyond rank 3 (recall@20, ndcg@10) say so; hit@1, hit@5 and mrr
    (q1's first gold is at rank 1) do not."""
    result = evaluate_run(load_run(GOOD["run"]), load_qrels(GOOD["qrels"]))
    depth = {w.code: w for w in result.warnings if w.code.startswith("saved_depth:")}
    assert set(depth) == {"saved_depth:recall@20", "saved_depth:ndcg@10"}
    assert depth["saved_depth:recall@20"].examples == ("q1",)
    assert "the run saved 3 < 20 for 3 of 3 queries" in depth["saved_depth:recall@20"].message
