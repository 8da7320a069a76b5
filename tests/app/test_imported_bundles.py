"""AppTest: bundles written by the importers open in the app, and the Queries page shows the
entity names and text they carry (a STaRK SKB folder built in the processed layout; the real
GeoGLUE-clean subset)."""

from __future__ import annotations

import html
import re
from pathlib import Path

import pytest

from analysis.io.importers import import_geoglue, import_stark
from tests.app.conftest import no_exception, open_page, share_root
from tests.io.importers.test_skb import _amazon_skb, _toy_stark

ROOTS_ENV = "RETRIEVAL_DASHBOARD_DATA_ROOTS"


def _detail(at) -> tuple[str, str]:
    """The Queries page's gold table and ranked list (HTML, every value escaped), with the
    query-term highlights removed and the entities unescaped, so names read as in the data."""
    bodies = [e.proto.body for e in at.get("html") if "<table class='ranking'>" in e.proto.body]
    assert len(bodies) >= 2
    gold, ranking = bodies[-2:]
    plain = [html.unescape(re.sub(r"</?mark>", "", b)) for b in (gold, ranking)]
    return plain[0], plain[1]


def _rows(body: str) -> list[str]:
    return body.split("<tbody>", 1)[1].split("<tr")[1:]


def test_stark_skb_entity_name_and_text_on_the_queries_page(tmp_path, monkeypatch) -> None:
    roots = tmp_path / "roots"
    import_stark(_toy_stark(tmp_path / "amazon"), roots / "stark", skb=_amazon_skb(tmp_path / "s"))
    monkeypatch.setenv(ROOTS_ENV, str(roots))
    at = open_page(
        "2_Queries.py",
        bundle="stark",
        datasets="amazon-human",
        a="bm25",
        metric="hit",
        k="1",
        q="0",
        qd="amazon-human",
    )
    no_exception(at)
    gold, _ = _detail(at)
    (row,) = _rows(gold)
    assert "<code>5</code>" in row
    assert "<b>Trail Shooting Stick</b>" in row
    assert "- product: Trail Shooting Stick" in row


@pytest.mark.real
def test_geoglue_poi_names_and_text_on_the_queries_page(real_dir, tmp_path, monkeypatch) -> None:

    roots = tmp_path / "roots"
    import_geoglue(
        real_dir / "geo" / "geoglue_clean_subset", roots / "geo", name="geoglue", baselines=True
    )
    monkeypatch.setenv(ROOTS_ENV, str(roots))
    at = open_page(
        "2_Queries.py",
        bundle="geo",
        datasets="geoglue",
        a="bm25",
        metric="recall",
        k="10",
        q="test-0",
        qd="geoglue",
    )
    no_exception(at)
    gold, ranking = _detail(at)
    (row,) = _rows(gold)
    assert "<code>4885</code>" in row
    # the POI's name and text, not a bare row number
    name = re.search(r"<b>(.*?)</b>", row)
    assert name is not None
    assert name.group(1).strip()
    assert re.search(r"<br>.*,", row)  # its address text
    listed = _rows(ranking)
    assert len(listed) >= 10
    assert all("<b>" in r for r in listed)  # every retrieved POI shows its name


PAGES = [None, "1_Slices.py", "2_Queries.py", "3_Compare.py", "4_Map.py", "5_Report.py"]


@pytest.fixture(scope="module")
def _prime_folder(real_dir, tmp_path_factory) -> Path:
    """A data root holding STaRK prime as imported, written once for the module."""
    roots = tmp_path_factory.mktemp("prime_roots")
    import_stark(real_dir / "stark" / "prime", roots / "prime")
    return roots


@pytest.fixture
def shared_prime_root(_prime_folder, monkeypatch) -> Path:
    """The app sees only the imported prime bundle (the page tests only read it)."""
    return share_root(monkeypatch, _prime_folder)


@pytest.mark.real
@pytest.mark.parametrize("page", PAGES)
def test_every_page_opens_an_imported_stark_bundle(shared_prime_root, page):
    """Prime as imported: a synthesized dataset without runs beside the human one with ada-002."""
    at = open_page(page, bundle="prime", datasets="prime-synthesized,prime-human")
    no_exception(at)
    assert not at.error, [e.value for e in at.error]
