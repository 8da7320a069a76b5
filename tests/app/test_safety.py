"""AppTest: bad input, faults and safety in the app.

* a broken upload (every run-like case of the bad-input corpus) shows ``st.error`` with the
  loader's message (the uploaded file's name and line), no exception, and the leaderboard stays;
* every bundle case of the corpus, opened as a bundle under the data roots, shows its error and
  keeps what can be shown (a bundle with one broken dataset shows the other one);
* text from data files (queries, entity names, slice values, ids, the bundle description) is
  never interpreted as Markdown or HTML on Home, Slices, Queries, Compare and Map;
* URL parameters only select bundles listed under the data roots (no ``../``, absolute paths or
  symlinks leading out);
* a run file deleted or rewritten while the app is open gives a message and a Reload button,
  and works again once restored; every Streamlit cache is bounded (``max_entries``).

Bundles are built in ``tmp_path`` and opened through ``RETRIEVAL_DASHBOARD_DATA_ROOTS``.
"""

from __future__ import annotations

import ast
import html
import json
import re
import shutil
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from tests.app.conftest import (
    ROOT,
    leaderboards,
    no_exception,
    open_directly,
    open_expander,
    open_page,
    share_root,
)
from tests.app.markup import markdown_strings as _markdown_strings
from tests.app.markup import walk as _walk
from tests.bad_input.corpus import GOOD, Case, cases
from ui import data, widgets

PAYLOADS = (
    "<script>alert(1)</script>",
    "<img src=x onerror=alert(1)>",
    "[link](javascript:alert(1))",
    "![img](http://example.invalid/x.png)",
)
MANIFEST = """\
name = "{name}"
description = "{description}"

[datasets.web]
family = "generic"
queries = "web/queries.csv"
qrels = "web/qrels.txt"
runs = "web/runs"
"""
QUERIES = "query_id,text\nq1,first query\nq2,second query\nq3,third query\n"


# ------------------------------------------------------------------------------------ helpers


def _small_bundle(folder: Path, *, name: str = "small", datasets: tuple[str, ...] = ("web",)):
    """A generic bundle: each dataset has the corpus' good qrels and run (model ``bm25``)."""
    manifest = f'name = "{name}"\ndescription = "test bundle"\n'
    for ds in datasets:
        (folder / ds / "runs").mkdir(parents=True)
        (folder / ds / "queries.csv").write_text(QUERIES)
        shutil.copy(GOOD["qrels"], folder / ds / "qrels.txt")
        shutil.copy(GOOD["run"], folder / ds / "runs" / "bm25.run")
        manifest += (
            f'\n[datasets.{ds}]\nfamily = "generic"\nqueries = "{ds}/queries.csv"\n'
            f'qrels = "{ds}/qrels.txt"\nruns = "{ds}/runs"\n'
        )
    (folder / "bundle.toml").write_text(manifest)
    return folder


def _unescape(text: str) -> str:
    """Undo :func:`ui.widgets.escape_markdown` (backslash before punctuation, hard breaks, the
    word joiners that keep URLs from being linked)."""
    return re.sub(r"\\(.)", r"\1", text.replace("  \n", "\n")).replace("\u2060", "")


def _errors(at: AppTest) -> list[str]:
    return [_unescape(e.value) for e in at.error]


def _leaderboard(at: AppTest) -> pd.DataFrame | None:
    return leaderboards(at)


# ----------------------------------------------------------------------------------- uploads


@pytest.fixture(scope="module")
def _small_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A data root holding :func:`_small_bundle` ``small``, written once for the module."""
    root = tmp_path_factory.mktemp("small_root")
    _small_bundle(root / "small")
    return root


@pytest.fixture
def shared_small_root(_small_folder: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The app sees only the small bundle (the tests upload runs: kept in their session)."""
    return share_root(monkeypatch, _small_folder)


UPLOAD_CASES = cases("run", "stark_eval", outcome="error")


def test_broken_uploads_show_the_error_and_keep_the_app(shared_small_root: Path) -> None:
    """The Home page's uploader (``st.file_uploader(key="upload_file")``) driven by AppTest:
    every broken run file of the corpus, uploaded in turn in one session (a refused upload
    adds nothing, so each one meets the session as it was before the first)."""
    at = open_page()
    no_exception(at)
    assert _leaderboard(at) is not None
    for case in UPLOAD_CASES:
        at.file_uploader(key="upload_file").set_value(
            (case.path.name, case.path.read_bytes(), "application/octet-stream")
        )
        at.run()
        assert not at.exception, (case.id, [e.value for e in at.exception])
        errors = _errors(at)
        assert len(errors) == 1, (case.id, errors)
        assert errors[0].startswith(case.expected_prefix(case.path.name)), (case.id, errors[0])
        assert case.message in errors[0], case.id
        assert not at.success, case.id
        board = _leaderboard(at)  # the rest of the app still works
        assert board is not None, case.id
        assert set(board["model"]) == {"bm25"}, case.id
        assert at.selectbox(key="w_model_a").options == ["bm25"], case.id


@pytest.mark.parametrize("case", cases("run", "stark_eval", outcome="ok")[:3], ids=lambda c: c.id)
def test_good_upload_is_added(shared_small_root: Path, case: Case) -> None:
    at = open_page()
    at.file_uploader(key="upload_file").set_value((case.path.name, case.path.read_bytes(), ""))
    at.run()
    no_exception(at)
    assert not at.error
    assert at.success
    model = "upload:" + case.path.name.split(".")[0]
    assert model in at.selectbox(key="w_model_a").options


def test_oversized_upload_is_refused_with_a_clear_message(
    shared_small_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(widgets, "MAX_UPLOAD_BYTES", 100)
    seen: list[str] = []
    monkeypatch.setattr(data, "add_upload", lambda *args: seen.append("parsed") or "x")
    at = open_page()
    content = GOOD["run"].read_bytes()
    assert len(content) > 100
    at.file_uploader(key="upload_file").set_value(("big.run", content, ""))
    at.run()
    no_exception(at)
    (message,) = _errors(at)
    assert message.startswith("big.run: the file is ")
    assert f"larger than the {widgets.MAX_UPLOAD_MB} MB limit for uploads" in message
    assert not seen  # never parsed
    assert _leaderboard(at) is not None


def test_upload_size_limit_is_also_set_for_the_server() -> None:
    """The server refuses bigger uploads before the script sees them (same limit)."""
    import tomllib

    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())
    assert config["server"]["maxUploadSize"] == widgets.MAX_UPLOAD_MB


def test_upload_with_markdown_in_its_name_is_shown_literally(shared_small_root: Path) -> None:
    at = open_page()
    name = "[x](javascript:alert(1)).txt"
    at.file_uploader(key="upload_file").set_value((name, b"q1 Q0 d1 1 nan sys\n", ""))
    at.run()
    no_exception(at)
    (error,) = at.error
    assert "[x](javascript" not in error.value  # escaped for Markdown
    assert _unescape(error.value) == f"{name}:1: score 'nan' is not a finite number"


# ----------------------------------------------------------------------------------- bundles


@pytest.mark.parametrize("case", cases("bundle"), ids=lambda c: c.id)
def test_bundle_cases_in_the_app(roots: Path, case: Case) -> None:
    """Each corpus bundle under the data root: its error in ``st.error``, the rest usable."""
    folder = roots / case.path.name
    shutil.copytree(case.path, folder)
    at = open_page()
    no_exception(at)
    errors = _errors(at)
    if case.outcome == "ok":
        assert not errors
        assert _leaderboard(at) is not None
        return
    if case.path.name == "missing_manifest":  # not a bundle: nothing to open
        assert errors == ["No bundle found under the data roots."]
        assert data.available_bundles() == {}
        return
    if case.error_file is not None:  # one dataset at a time: select the broken one
        at = open_page(dataset=case.error_file.split("/")[0])
        no_exception(at)
        errors = _errors(at)
    copy = case.expected_prefix(folder.resolve() / (case.error_file or "bundle.toml"))
    wrong = [e for e in errors if copy in e and case.message in e]
    assert wrong, (errors, copy)
    if case.error_file is not None:  # a data file: the other dataset is still shown
        board = _leaderboard(open_page())
        assert board is not None
        assert set(board["dataset"]) == {"web"}
        assert at.button(key="reload_data")
    elif case.message.startswith("dataset "):  # one dataset entry left out, the bundle opens
        assert at.selectbox(key="w_dataset").options == []


def test_one_broken_dataset_keeps_the_others_on_every_page(roots: Path) -> None:
    folder = _small_bundle(roots / "two", datasets=("web", "broken", "missing"))
    (folder / "broken" / "runs" / "bm25.run").write_text("q1 Q0 d1 1 1.0 x\nq1 Q0 d2 2 nan x\n")
    manifest = (folder / "bundle.toml").read_text()
    (folder / "bundle.toml").write_text(manifest.replace("missing/qrels.txt", "missing/nope.txt"))
    run_file = (folder / "broken" / "runs" / "bm25.run").resolve()
    expected = f"Dataset broken could not be loaded: {run_file}:2: score 'nan' is not a finite"
    for page in (None, "1_Slices.py", "2_Queries.py", "3_Compare.py", "4_Map.py"):
        at = open_directly(page, dataset="broken")
        no_exception(at)
        errors = _errors(at)
        assert any(e.startswith("Dataset missing is left out: ") for e in errors), errors
        assert any("missing/nope.txt" in e for e in errors)
        assert at.selectbox(key="w_dataset").options == ["web", "broken"]
        if page in (None, "1_Slices.py", "2_Queries.py"):
            assert any(e.startswith(expected) for e in errors), (page, errors)
        ok = open_directly(page)  # the other dataset still works on every page
        no_exception(ok)
        assert not any(e.startswith(expected) for e in _errors(ok)), (page, _errors(ok))
    at = open_page()
    assert set(_leaderboard(at)["dataset"]) == {"web"}


# --------------------------------------------------------------------------------- injection


def _injection_bundle(folder: Path) -> Path:
    """A spatial bundle whose query texts, ids, slice values and entity names/texts are the
    payloads, with two runs (so Compare and the Map draw both)."""
    (folder / "geo" / "runs").mkdir(parents=True)
    qids = ["q0", "q1", "q2", PAYLOADS[1]]
    queries = pd.DataFrame(
        {
            "query_id": qids,
            "text": [f"find {p} here" for p in PAYLOADS],
            "lat": [39.90, 39.91, 39.92, 39.93],
            "lon": [116.40, 116.41, 116.42, 116.43],
            "category": [PAYLOADS[0], PAYLOADS[2], PAYLOADS[3], PAYLOADS[0]],
        }
    )
    docs = [f"d{i}" for i in range(8)]
    entities = pd.DataFrame(
        {
            "doc_id": docs,
            "name": [PAYLOADS[i % 4] for i in range(8)],
            "text": [f"about {PAYLOADS[(i + 1) % 4]}" for i in range(8)],
            "type": "poi",
            "lat": [39.90 + 0.001 * (i // 2) for i in range(8)],  # pairs share a coordinate
            "lon": [116.40 + 0.001 * (i // 2) for i in range(8)],
        }
    )
    qrels = pd.DataFrame({"query_id": qids, "doc_id": docs[:4], "relevance": 1})
    queries.to_parquet(folder / "geo" / "queries.parquet")
    entities.to_parquet(folder / "geo" / "entities.parquet")
    qrels.to_parquet(folder / "geo" / "qrels.parquet")
    for model, shift in (("alpha", 0), ("beta", 1)):
        rows = [
            (q, docs[(j + shift + k) % 8], float(8 - k))
            for j, q in enumerate(qids)
            for k in range(5)
        ]
        pd.DataFrame(rows, columns=["query_id", "doc_id", "score"]).to_parquet(
            folder / "geo" / "runs" / f"{model}.parquet"
        )
    (folder / "bundle.toml").write_text(
        f'name = "inj"\ndescription = "{PAYLOADS[2]} {PAYLOADS[3]}"\n\n[datasets.geo]\n'
        'family = "spatial"\nqueries = "geo/queries.parquet"\nqrels = "geo/qrels.parquet"\n'
        'entities = "geo/entities.parquet"\nruns = "geo/runs"\n'
        'metrics = ["recall@10", "ndcg@10", "mrr"]\n'
    )
    return folder


def _text_strings(node: object) -> list[str]:
    kind = getattr(node, "type", "")
    if kind in ("text", "code"):
        return [str(node.value)]
    if kind == "dataframe":
        return [node.value.to_csv()]
    if kind in ("selectbox", "multiselect"):
        return list(node.proto.options)
    return []


def _check_inert(at: AppTest) -> set[str]:
    """No payload in a Markdown-rendered string; the deck tooltips' fields are HTML-escaped.
    Returns the payloads found as plain text (text/code/dataframe/option elements)."""
    shown: set[str] = set()
    for node in _walk(at._tree):
        for text in _markdown_strings(node):
            for payload in PAYLOADS:
                assert payload not in text, (getattr(node, "type", ""), text)
                assert "javascript:" not in text or "\\:" in text, text
        for text in _text_strings(node):
            shown |= {p for p in PAYLOADS if p in text}
        if getattr(node, "type", "") == "deck_gl_json_chart":
            spec = json.loads(node.proto.json)
            for layer in spec.get("layers", []):
                records = layer.get("data")
                for record in records if isinstance(records, list) else []:
                    for key, value in record.items():
                        if key.startswith("tip_"):
                            assert "<" not in str(value), (key, value)
    return shown


@pytest.fixture(scope="module")
def _injection_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A data root holding :func:`_injection_bundle`, written once for the module."""
    root = tmp_path_factory.mktemp("injection_root")
    _injection_bundle(root / "inj")
    return root


@pytest.fixture
def shared_injection_root(_injection_folder: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The app sees only the injection bundle (the page tests only read it)."""
    return share_root(monkeypatch, _injection_folder)


#: the keys of each page's expanders whose content is drawn only while open
LAZY = {
    "1_Slices.py": ("slices_table_open",),
    "2_Queries.py": ("query_meta_open",),
    "3_Compare.py": ("cmp_transition_open", "cmp_different_open"),
}


@pytest.mark.parametrize(
    ("page", "params"),
    [
        (None, {}),
        ("1_Slices.py", {"slice": "category", "min_n": "1"}),
        ("2_Queries.py", {"q": "q0", "qd": "geo"}),
        ("2_Queries.py", {"q": PAYLOADS[1], "qd": "geo"}),
        ("3_Compare.py", {"q": "q1", "qd": "geo"}),
        ("3_Compare.py", {"q": PAYLOADS[1], "qd": "geo"}),
        ("4_Map.py", {"q": "q0"}),
        ("4_Map.py", {"q": PAYLOADS[1]}),
    ],
    ids=["home", "slices", "queries", "queries-payload-id", "compare", "compare-payload-id",
         "map", "map-payload-id"],
)  # fmt: skip
def test_data_text_is_never_markdown_or_html(
    shared_injection_root: Path, page: str | None, params: dict
) -> None:
    at = open_directly(page, **params)
    for key in LAZY.get(page, ()):  # sections drawn only when opened: checked open
        open_expander(at, key)
    no_exception(at)
    assert not at.error, [e.value for e in at.error]
    shown = _check_inert(at)
    if page is None:  # the leaderboard and the bundle description (escaped caption)
        assert _leaderboard(at) is not None
        caption = next(c.value for c in at.caption if c.value.startswith("Bundle inj"))
        assert _unescape(caption) == f"Bundle inj: {PAYLOADS[2]} {PAYLOADS[3]}"
    elif page == "1_Slices.py":
        assert shown >= {PAYLOADS[0], PAYLOADS[2], PAYLOADS[3]}  # slice values, as text
    else:  # the query's text or the entities are drawn, as plain text
        assert shown, page
    if page == "2_Queries.py" and params["q"] == "q0":
        boxes = [e.proto.body for e in at.get("html") if 'class="query-text"' in e.proto.body]
        assert any(html.escape(PAYLOADS[0]) in body for body in boxes)  # escaped: as text
    if page == "4_Map.py":
        assert at.get("deck_gl_json_chart")


# ----------------------------------------------------------------------------- URL and paths


def _escape_roots(tmp_path: Path, roots: Path) -> tuple[Path, list[str]]:
    """A bundle outside the roots and three ways to point at it from inside."""
    outside = _small_bundle(tmp_path / "outside" / "secret", name="SECRET-OUTSIDE")
    _small_bundle(roots / "good", name="good-bundle")
    (roots / "link").symlink_to(outside, target_is_directory=True)
    (roots / "linkfile").mkdir()
    (roots / "linkfile" / "bundle.toml").symlink_to(outside / "bundle.toml")
    (roots / "nested").mkdir()
    (roots / "nested" / "deeper").symlink_to(tmp_path / "outside", target_is_directory=True)
    attempts = [
        "../..",
        "..",
        "/etc",
        str(outside),
        "link",
        "linkfile",
        "nested/deeper/secret",
        "good/../../outside/secret",
        "%2e%2e%2f%2e%2e",
    ]
    return outside, attempts


def test_available_bundles_lists_only_bundles_inside_the_roots(tmp_path: Path, roots: Path):
    _escape_roots(tmp_path, roots)
    found = data.available_bundles()
    assert list(found) == ["good"]
    assert found["good"] == (roots / "good").resolve()


def test_url_cannot_open_a_path_outside_the_roots(
    tmp_path: Path, roots: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    outside, attempts = _escape_roots(tmp_path, roots)
    read: list[Path] = []
    real = data.read_manifest

    def spy(folder: str | Path, **kwargs: object):
        read.append(Path(folder).resolve())
        return real(folder, **kwargs)

    monkeypatch.setattr(data, "read_manifest", spy)
    for value in attempts:
        at = open_page(bundle=value)
        no_exception(at)
        assert at.selectbox(key="w_bundle").value == "good", value
        assert at.selectbox(key="w_bundle").options == ["good"]
        assert all("SECRET" not in c.value for c in at.caption)
        assert _leaderboard(at) is not None
    assert read
    assert all(p.is_relative_to(roots.resolve()) for p in read), read
    assert not any(p.is_relative_to(outside.resolve()) for p in read)


# ------------------------------------------------------------------------------------ faults


def test_run_file_removed_or_rewritten_whileopen_page(roots: Path) -> None:
    folder = _small_bundle(roots / "small")
    extra = folder / "web" / "runs" / "dense.run"
    good = GOOD["run"].read_text()
    extra.write_text(good.replace("sys", "dense"))
    at = open_page()
    no_exception(at)
    assert set(_leaderboard(at)["model"]) == {"bm25", "dense"}

    extra.unlink()  # removed while the app is open
    at.run()
    no_exception(at)
    (error,) = _errors(at)
    assert error == f"Dataset web could not be loaded: {extra.resolve()}: no such file"
    assert widgets.RELOAD_HINT in [c.value for c in at.caption]
    assert at.button(key="reload_data")

    extra.write_text(good.replace("3.0", "nan", 1))  # rewritten, broken
    at.run()
    no_exception(at)
    (error,) = _errors(at)
    assert error.endswith(f"{extra.resolve()}:1: score 'nan' is not a finite number")

    extra.write_text(good + "q1 Q0 d4 4 0.5 dense\n")  # fixed: works again, no restart
    at.run()
    no_exception(at)
    assert not at.error
    assert set(_leaderboard(at)["model"]) == {"bm25", "dense"}

    extra.unlink()  # removed for good: Reload reads the bundle again and drops the model
    at.run()
    assert at.error
    at.button(key="reload_data").click().run()
    no_exception(at)
    assert not at.error
    assert set(_leaderboard(at)["model"]) == {"bm25"}
    assert at.selectbox(key="w_model_a").options == ["bm25"]


def test_qrels_removed_while_open_on_every_page(roots: Path) -> None:
    folder = _small_bundle(roots / "small", datasets=("web", "other"))
    at = open_page(dataset="other")
    no_exception(at)
    (folder / "other" / "qrels.txt").unlink()
    for page in ("1_Slices.py", "2_Queries.py", "3_Compare.py", "4_Map.py"):
        at.switch_page(f"pages/{page}")
        at.run()
        no_exception(at)
    at.switch_page("app.py")
    at.run()
    no_exception(at)
    assert any("other/qrels.txt: no such file" in e for e in _errors(at))
    at.selectbox(key="w_dataset").select("web").run()
    no_exception(at)
    assert set(_leaderboard(at)["dataset"]) == {"web"}


# ------------------------------------------------------------------------------------ memory


def _cache_decorators(path: Path) -> Iterator[tuple[int, ast.Call]]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef):
            for deco in node.decorator_list:
                call = deco if isinstance(deco, ast.Call) else None
                target = call.func if call else deco
                if isinstance(target, ast.Attribute) and target.attr in (
                    "cache_data",
                    "cache_resource",
                ):
                    yield node.lineno, call  # type: ignore[misc]


def test_every_streamlit_cache_is_bounded() -> None:
    """Every cache has a constant ``max_entries`` of at most 256: the slice caches hold up to
    one small summary table per (slice column, model pair, metric) the warm-up computes; the
    per-query tables and anything as large keep 64 or fewer."""
    files = [ROOT / "app.py", *sorted((ROOT / "pages").glob("*.py")), *(ROOT / "ui").glob("*.py")]
    found = 0
    for path in files:
        for line, call in _cache_decorators(path):
            found += 1
            assert call is not None, f"{path.name}:{line}: bare cache decorator"
            keywords = {k.arg: k.value for k in call.keywords}
            assert "max_entries" in keywords, f"{path.name}:{line}: no max_entries"
            value = keywords["max_entries"]
            assert isinstance(value, ast.Constant)
            assert 1 <= value.value <= 256, f"{path.name}:{line}"
    assert found >= 10
