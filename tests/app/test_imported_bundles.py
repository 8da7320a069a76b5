"""AppTest: bundles written by the importers open in the app, and the Queries page shows the
entity names and text they carry (a STaRK SKB folder built in the processed layout; the real
GeoGLUE-clean subset)."""

from __future__ import annotations

import pandas as pd
import pytest

from analysis.io.importers import import_geoglue, import_stark
from tests.app.conftest import no_exception, open_page
from tests.importers.test_skb import _amazon_skb, _toy_stark

ROOTS_ENV = "RETRIEVAL_DASHBOARD_DATA_ROOTS"


def _gold(at) -> pd.DataFrame:
    found = [
        d.value
        for d in at.dataframe
        if list(d.value.columns)[:3] == ["doc_id", "rank", "relevance"]
    ]
    assert len(found) == 1
    return found[0].set_index("doc_id")


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
    row = _gold(at).loc["5"]
    assert row["name"] == "Trail Shooting Stick"
    assert str(row["text"]).startswith("- product: Trail Shooting Stick")


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
    gold = _gold(at)
    assert list(gold.index) == ["4885"]
    assert gold.loc["4885", "name"]  # the POI's name and text, not a bare row number
    assert "," in str(gold.loc["4885", "text"])
    ranking = [d.value for d in at.dataframe if list(d.value.columns)[:2] == ["rank", "gold"]]
    assert len(ranking) == 1
    assert ranking[0]["name"].astype(str).str.len().gt(0).all()


PAGES = [None, "1_Slices.py", "2_Queries.py", "3_Compare.py", "4_Map.py", "5_Report.py"]


@pytest.mark.real
@pytest.mark.parametrize("page", PAGES)
def test_every_page_opens_an_imported_stark_bundle(real_dir, tmp_path, monkeypatch, page):
    """Prime as imported: a synthesized dataset without runs beside the human one with ada-002."""
    roots = tmp_path / "roots"
    import_stark(real_dir / "stark" / "prime", roots / "prime")
    monkeypatch.setenv(ROOTS_ENV, str(roots))
    at = open_page(page, bundle="prime", datasets="prime-synthesized,prime-human")
    no_exception(at)
    assert not at.error, [e.value for e in at.error]
