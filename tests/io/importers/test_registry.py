"""The importer registry: the built-in importers are declared once and read by the command
line, the folder scan and the Open data page; an importer registered elsewhere (a test, a
plugin) appears in all three."""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

import pandas as pd
import pytest

from analysis.cli import main
from analysis.io.importers import ImportResult, registry, suggest_importer, write_bundle
from analysis.io.importers._write import ImportedDataset
from analysis.io.importers.registry import Argument, Importer, register_importer
from tests.app.conftest import no_exception, open_page
from tests.helpers import ROOT


def _toy_run(root, out, *, name=None, crs=None, baselines=False, tag="x"):
    """Import a folder with ``toy.tsv`` (``query<TAB>doc``): one dataset, qrels only."""
    rows = [line.split("\t") for line in (Path(root) / "toy.tsv").read_text().splitlines()]
    qrels = pd.DataFrame(
        {"query_id": [r[0] for r in rows], "doc_id": [r[1] for r in rows], "relevance": 1}
    )
    queries = pd.DataFrame({"query_id": qrels["query_id"].unique(), "text": tag})
    label = name or Path(root).name
    dataset = ImportedDataset(
        name=label, family="generic", queries=queries, qrels=qrels, metrics=("mrr",),
        description=f"crs {crs}, baselines {baselines}",
    )  # fmt: skip
    write_bundle(Path(out), label, [dataset])
    return ImportResult(out=Path(out), datasets=[dataset])


TOY = Importer(
    "toy",
    "a folder with toy.tsv (query, doc)",
    _toy_run,
    lambda folder: 1.0 if (folder / "toy.tsv").is_file() else 0.0,
    crs="required",
    crs_default="EPSG:3857",
    baselines=True,
    arguments=(Argument("--tag", "the queries' text"),),
)


@pytest.fixture
def toy(tmp_path: Path):
    """The toy importer registered, and a folder in its layout."""
    register_importer(TOY)
    folder = tmp_path / "roots" / "mine"
    folder.mkdir(parents=True)
    (folder / "toy.tsv").write_text("q1\td1\nq2\td2\n")
    yield folder
    registry.unregister_importer("toy")


def test_built_in_importers_are_declared_once() -> None:
    found = registry.importers()
    assert list(found) == ["geobloom", "geoglue", "list", "stark"]
    assert found["list"].crs_default == "EPSG:32650"
    assert found["geobloom"].crs_default == "EPSG:2385"
    assert found["geoglue"].crs == "none"
    assert not found["stark"].baselines
    assert found["list"].options({"name": "x", "crs": "c", "baselines": True, "skb": "s"}) == {
        "name": "x", "crs": "c", "baselines": True,
    }  # fmt: skip
    out = io.StringIO()
    with contextlib.redirect_stdout(out), pytest.raises(SystemExit):
        main(["import", "--help"])
    assert "{geobloom,geoglue,list,stark}" in out.getvalue()


def test_a_registered_importer_is_in_the_command_line_and_the_scan(toy: Path) -> None:
    assert suggest_importer(toy) == "toy"
    assert suggest_importer(toy.parent) is None
    out = io.StringIO()
    with contextlib.redirect_stdout(out), pytest.raises(SystemExit):
        main(["import", "--help"])
    assert "toy" in out.getvalue()
    target = toy.parent.parent / "bundle"
    args = ["import", "toy", "--root", str(toy), "--out", str(target), "--crs", "EPSG:3857",
            "--baselines", "--tag", "hello"]  # fmt: skip
    with contextlib.redirect_stdout(io.StringIO()):
        assert main(args) == 0
    written = (target / "bundle.toml").read_text()
    assert 'description = "crs EPSG:3857, baselines True"' in written
    with contextlib.redirect_stderr(io.StringIO()) as err, pytest.raises(SystemExit):
        main(["import", "toy", "--root", str(toy), "--out", str(target)])
    assert "--crs" in err.getvalue()


def test_an_importer_from_a_plugin(tmp_path: Path) -> None:
    """A ``--plugin`` module may register an importer: the command line then offers it."""
    import subprocess
    import sys

    plugin = tmp_path / "toyimport.py"
    plugin.write_text(
        "from analysis.io.importers import Importer, register_importer\n"
        "from tests.io.importers.test_registry import _toy_run\n"
        "register_importer(Importer('toy', 'toy folders', _toy_run,\n"
        "                           lambda f: float((f / 'toy.tsv').is_file())))\n"
    )
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "toy.tsv").write_text("q1\td1\n")
    cmd = [sys.executable, "-m", "analysis", "import", "toy", "--root", str(folder), "--out",
           str(tmp_path / "b"), "--plugin", str(plugin)]  # fmt: skip
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "b" / "bundle.toml").is_file()


def _no_match(folder: Path) -> float:
    return 0.0


@pytest.mark.parametrize(
    ("importer", "message"),
    [
        ({"name": "x"}, "register_importer takes an Importer, not a dict"),
        (Importer("two words", "h", _toy_run, _no_match), "importer name 'two words': use 1-40"),
        (Importer("-x", "h", _toy_run, _no_match), "importer name '-x': use 1-40"),
        (Importer("x", "h", _toy_run, _no_match, arguments=(Argument("--root", "h"),)),
         "importer 'x': option '--root' is not '--word' or is one every importer has"),
        (Importer("x", "h", _toy_run, _no_match, arguments=(Argument("skb", "h"),)),
         "importer 'x': option 'skb' is not '--word'"),
        (Importer("x", "h", _toy_run, _no_match, arguments=(Argument("--a", "h"),) * 2),
         "importer 'x': option --a is given twice"),
        (Importer("x", "h", _toy_run, _no_match, crs="maybe"),  # type: ignore[arg-type]
         "importer 'x': crs is 'none' or 'required', not 'maybe'"),
        (Importer("x", "h", "run", _no_match), "importer 'x': run and detect must be callable"),
    ],
)  # fmt: skip
def test_an_importer_that_would_break_the_command_line_is_refused(importer, message) -> None:
    """A clash with a common option broke ``import`` for every importer (argparse's conflict)."""
    with pytest.raises(ValueError, match=r"^importer|^register_importer") as err:
        register_importer(importer)
    assert str(err.value).startswith(message)
    assert "x" not in registry.importers()
    assert "two words" not in registry.importers()


def test_a_failing_registered_importer_is_one_line(toy: Path, tmp_path: Path) -> None:
    """A registered importer whose detector raises or returns no number in [0, 1] matches no
    folder (the scan goes on); one whose run raises is one error line naming it (exit 2)."""

    def detect_fails(folder: Path) -> float:
        raise RuntimeError("detector bug")

    def run_fails(root, out, **options):
        raise KeyError("run bug")

    for detect in (detect_fails, lambda f: float("nan"), lambda f: "high", lambda f: 7.0):
        register_importer(Importer("broken", "h", run_fails, detect))
        assert suggest_importer(toy) == "toy"
    args = ["import", "broken", "--root", str(toy), "--out", str(tmp_path / "b")]
    try:
        with contextlib.redirect_stderr(io.StringIO()) as err:
            assert main(args) == 2
    finally:
        registry.unregister_importer("broken")
    assert err.getvalue() == (
        f"error: {__file__}:{run_fails.__code__.co_firstlineno + 1}: importer broken: "
        "KeyError: 'run bug'\n"
    )
    assert not (tmp_path / "b").exists()


def test_the_open_data_page_offers_a_registered_importer(
    toy: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RETRIEVAL_DASHBOARD_DATA_ROOTS", str(toy.parent))
    at = open_page("7_Open_data.py")
    at.selectbox(key="od_folder").set_value("mine").run()
    no_exception(at)
    assert any(s.value == "Import as toy" for s in at.subheader)
    assert at.text_input(key="od_crs:mine").value == "EPSG:3857"
    at.checkbox(key="od_baselines:mine").check().run()
    at.button(key="od_import:mine").click().run()
    no_exception(at)
    written = (toy.parent / "_opened" / "mine" / "bundle.toml").read_text()
    assert 'description = "crs EPSG:3857, baselines True"' in written
