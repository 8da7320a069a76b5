"""AppTest: the app under attack.

* hostile names (:mod:`tests.hostile`: the bundle, dataset, splits, models, slice column and
  values, query ids, entities, tags, note and author are Markdown, KaTeX, Streamlit directives,
  HTML, links and plotly templates) on every page and both splits: nothing is rendered as
  markup, and the names are shown as text;
* the "every dataset" leaderboards of a 1,000-dataset bundle (the most a bundle holds) are
  computed a page at a time;
* long ``values=`` links are parsed in linear time and over-long URL values are ignored.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from tests import hostile
from tests.app.conftest import (
    APP,
    TIMEOUT,
    leaderboards,
    no_exception,
    open_directly,
    share_root,
)
from tests.app.markup import leaks, plain_texts
from ui import data, urlstate

PAGES = [
    ("app.py", {"all": "1"}),
    ("1_Slices.py", {"slice": hostile.SLICE, "min_n": "1"}),
    ("2_Queries.py", {"q": "q21"}),
    ("2_Queries.py", {"q": "=1+2", "slice": hostile.SLICE, "values": ",".join(hostile.VALUES)}),
    ("3_Compare.py", {"q": "q21"}),
    ("4_Map.py", {"q": "=1+2"}),
    *[("5_Report.py", {"section": s}) for s in ("summary", "leaderboard", "slices", "compare",
                                                  "worst-queries", "causes", "analyses")],
    ("5_Report.py", {"present": "1", "slide": "3"}),
    ("6_Analyses.py", {}),
    ("7_Open_data.py", {}),
    ("8_Every_model.py", {}),
]  # fmt: skip


@pytest.fixture(scope="module")
def _hostile_folders(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The hostile bundle under a data root, annotated in a notes folder, and a table cache:
    written once for the module (the page tests only read them)."""
    base = tmp_path_factory.mktemp("hostile")
    hostile.annotate(hostile.make_hostile_bundle(base / "roots" / "h"), base / "notes")
    return {"roots": base / "roots", "notes": base / "notes", "cache": base / "cache"}


@pytest.fixture
def shared_hostile_root(_hostile_folders: dict[str, Path], monkeypatch: pytest.MonkeyPatch) -> Path:
    """The data root holding the hostile bundle (the only root the app sees) and its notes."""
    folders = _hostile_folders
    return share_root(monkeypatch, folders["roots"], NOTES_DIR=folders["notes"],
                      CACHE_DIR=folders["cache"])  # fmt: skip


def _open(page: str, split: str, params: dict[str, str]) -> AppTest:
    """A new session opening ``page`` by a link with ``?split=`` and ``params``."""
    return open_directly(None if page == "app.py" else page, split=split, **params)


@pytest.mark.parametrize("split", [hostile.SPLIT_TEST, hostile.SPLIT_DEV])
@pytest.mark.parametrize(("page", "params"), PAGES, ids=lambda v: str(v)[:24])
def test_hostile_names_never_render_as_markup(
    shared_hostile_root: Path, page: str, params: dict, split: str
) -> None:
    at = _open(page, split, params)
    no_exception(at)
    assert not at.error, [e.value for e in at.error]
    assert at.selectbox(key="w_split").value == split
    found = leaks(at, hostile.ATOMS, hostile.PLOTLY_ATOMS, hostile.HTML_ATOMS, hostile.LINK_ATOMS)
    assert not found, found[:5]
    shown = plain_texts(at)  # the names are there, as text
    assert hostile.DATASET in shown
    assert hostile.MODEL_A in shown
    if page == "1_Slices.py":
        assert {v for v in hostile.VALUES if v in shown} == set(hostile.VALUES)
    if page == "2_Queries.py":
        assert hostile.TAGS[0] in shown  # the tags box's options
        assert hostile.NOTE in [t.value for t in at.text_area]


def test_every_dataset_leaderboards_come_a_page_at_a_time(
    roots: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A bundle of 1,000 datasets, the most a manifest may hold (all reading one small qrels
    and run): the toggle computes the leaderboards of one page of ten, not 1,000."""
    folder = roots / "many"
    (folder / "shared" / "runs").mkdir(parents=True)
    (folder / "shared" / "qrels.txt").write_text("q1 0 d1 1\nq2 0 d2 1\n")
    (folder / "shared" / "runs" / "bm25.run").write_text("q1 Q0 d1 1 2.0 t\nq2 Q0 d3 1 1.0 t\n")
    names = [f"ds{i:04d}" for i in range(1000)]
    (folder / "bundle.toml").write_text(
        'name = "many"\n'
        + "".join(
            f'[datasets.{n}]\nqrels = "shared/qrels.txt"\nruns = "shared/runs"\n' for n in names
        )
    )
    evaluated: list[str] = []
    real = data._compute_per_query

    def spy(spec, *args, **kwargs):
        evaluated.append(spec.name)
        return real(spec, *args, **kwargs)

    monkeypatch.setattr(data, "_compute_per_query", spy)
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.query_params["all"] = "1"
    at.run()
    no_exception(at)
    board = leaderboards(at)
    assert board["dataset"].tolist() == names[:11]  # the selected one, then page 1
    assert "Datasets 1–10 of 999." in [c.value for c in at.caption]
    assert sorted(set(evaluated)) == names[:11]
    box = at.number_input(key="home_all_page")
    assert box.max == 100
    box.set_value(100).run()
    no_exception(at)
    assert leaderboards(at)["dataset"].tolist() == [names[0], *names[991:]]
    assert at.query_params["all_page"] == "100"
    assert len(set(evaluated)) == 11 + 9  # still not 1,000


def test_long_values_link_is_parsed_and_an_overlong_one_ignored(shared_hostile_root: Path) -> None:
    """``?values=`` with every slice value repeated to 4,000+ characters opens at once (the
    parser is linear); a value over the URL limit is ignored with a warning."""
    values = ",".join(hostile.VALUES)
    long = ",".join([values] * (4000 // len(values) + 1))
    assert 4000 < len(long) < urlstate.MAX_PARAM_CHARS
    at = _open("2_Queries.py", "all", {"slice": hostile.SLICE, "values": long})
    no_exception(at)
    assert at.multiselect(key="queries_values").value == list(hostile.VALUES)
    huge = "a," * urlstate.MAX_PARAM_CHARS
    at = _open("2_Queries.py", "all", {"slice": hostile.SLICE, "values": huge})
    no_exception(at)
    assert at.multiselect(key="queries_values").value == []
    (warning,) = [w.value for w in at.warning if "'values'" in w.value]
    assert f"more than the {urlstate.MAX_PARAM_CHARS:,} a page reads" in warning


# --------------------------------------------------------------------------------- Open data

OPEN_DATA = "pages/7_Open_data.py"
SECRET = hostile.SECRET


@pytest.fixture(scope="module")
def _od_folders(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """:func:`tests.hostile.make_open_data_tree` (10,001 files) written once for the module:
    the data root and the folder outside it."""
    base = tmp_path_factory.mktemp("open_data")
    (base / "roots").mkdir()
    hostile.make_open_data_tree(base / "roots", base / "outside")
    return base / "roots", base / "outside"


@pytest.fixture
def od_root(_od_folders: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch) -> Path:
    """The data root of :func:`tests.hostile.make_open_data_tree`, the only one the app sees."""
    monkeypatch.setenv("RETRIEVAL_DASHBOARD_DATA_ROOTS", str(_od_folders[0]))
    return _od_folders[0]


def _od(folder: str | None = None) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.run()
    at.switch_page(OPEN_DATA)
    at.run()
    if folder is not None:
        at.selectbox(key="od_folder").set_value(folder).run()
    no_exception(at)
    return at


def _everything(at: AppTest) -> str:
    from tests.app.markup import markdown_strings, walk

    return plain_texts(at) + "\n".join(s for n in walk(at._tree) for s in markdown_strings(n))


def test_open_data_never_lists_or_reads_outside_the_roots(
    od_root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from analysis.io.confine import OUTSIDE, is_confined
    from analysis.io.importers import scan

    read: list[Path] = []
    real = scan._inspect

    def spy(path: Path, rel: str):
        read.append(path)
        return real(path, rel)

    monkeypatch.setattr(scan, "_inspect", spy)
    at = _od()
    folders = at.selectbox(key="od_folder").options
    assert "web" in folders
    assert "out-folder" not in folders
    assert not any(f.startswith(("web/sub", "out-folder", "stark/split")) for f in folders)
    at.selectbox(key="od_folder").set_value("web").run()
    no_exception(at)
    files = _files(at)
    problems = dict(zip(files["file"], files["problem"], strict=True))
    assert problems["split.index"] == OUTSIDE
    assert problems["leak_qrels.txt"] == OUTSIDE
    assert problems["sub"] == OUTSIDE
    assert problems["inside.run"] == ""
    assert SECRET not in _everything(at)  # no line of a refused file is quoted
    assert read
    assert all(is_confined(p, [od_root]) for p in read), read
    assert "leak_qrels.txt" not in at.multiselect(key="od_qrels:web").options


def test_open_data_does_not_import_a_folder_with_links_out(od_root: Path) -> None:
    at = _od("stark")
    assert not _has_button(at, "od_import:stark")
    (error,) = [e.value for e in at.error]
    assert "lead outside the data roots" in error
    assert "split" in error


def _files(at: AppTest):
    """The page's table of files (``file, format, roles, rows, problem``)."""
    return next(d.value for d in at.dataframe if list(d.value.columns)[:2] == ["file", "format"])


def _has_button(at: AppTest, key: str) -> bool:
    return any(b.key == key for b in at.button)


def test_open_data_deep_json_and_nul_split_are_one_line_each(od_root: Path) -> None:
    at = _od("deep")
    files = _files(at)
    problems = dict(zip(files["file"], files["problem"], strict=True))
    deep = (od_root / "deep").resolve()
    assert (
        problems["entities.json"]
        == f"{deep / 'entities.json'}:1: JSON nested deeper than 128 levels"
    )
    assert (
        problems["test.index"]
        == f"{deep / 'test.index'}:1: a NUL byte: binary data, not a text file"
    )
    assert not at.multiselect(key="od_splits:deep").options


def test_open_data_says_how_many_files_it_shows(od_root: Path) -> None:
    at = _od("many")
    files = _files(at)
    assert len(files) == 300
    assert files["file"].iloc[0] == "f00000.index"
    (warning,) = [w.value for w in at.warning]
    assert warning.startswith("300 of 10,001 data files shown")


def test_open_data_shows_hostile_file_names_as_text(od_root: Path) -> None:
    at = _od(hostile.NAMED_FOLDER)
    found = leaks(at, hostile.ATOMS, hostile.PLOTLY_ATOMS, hostile.HTML_ATOMS, hostile.LINK_ATOMS)
    assert not found, found
    files = _files(at)
    assert set(files["format"]) == {"trec_qrels", "trec_run"}
    shown = plain_texts(at)
    assert hostile.NAMED_FOLDER in shown
    assert hostile.BOLD in shown


@pytest.fixture
def opened_links_out(od_root: Path, _od_folders: tuple[Path, Path]):
    """The root's ``_opened`` folder as a link out of the roots, removed after the test (the
    other tests share the tree)."""
    link = od_root / "_opened"
    link.symlink_to(_od_folders[1], target_is_directory=True)
    yield link
    link.unlink()


def test_open_data_never_writes_through_a_link_out(od_root: Path, opened_links_out: Path) -> None:
    at = _od("web")
    assert any("No data root is writable" in e.value for e in at.error)
    assert not _has_button(at, "od_write:web")
