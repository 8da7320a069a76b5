"""Browser: the audits as a user sees them, with screenshots: Home's data checks (a run saved at
a shallow depth, a published summary copied from another knowledge base's) and the Open data
page importing AvaTaR's Flickr30k-Entities layout with ``import stark``; with the marker
``real``, the real Prime ada-002 summary (a byte copy of MAG's) in the data checks and in the
notes of its import."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from analysis.io.importers import import_stark
from tests.e2e.conftest import assert_no_exception, screenshot, serve_for_module, wait_ready
from tests.io.importers.test_import_stark import audit_collection

pytestmark = pytest.mark.e2e

CHECKS = "[data-testid=stDataFrame]"  # Home's only dataframe: the data checks


@pytest.fixture(scope="module")
def audit_roots(tmp_path_factory) -> Path:
    """A data root with the hand-made collection (``collection/``) and the bundle ``audits``
    imported from its ``toy`` knowledge base."""
    roots = tmp_path_factory.mktemp("audit-roots")
    collection = audit_collection(roots / "collection")
    import_stark(collection / "toy", roots / "audits", name="toy")
    return roots


@pytest.fixture(scope="module")
def audit_server(chromium_path: str, audit_roots: Path) -> Iterator[str]:
    del chromium_path
    yield from serve_for_module({"RETRIEVAL_DASHBOARD_DATA_ROOTS": str(audit_roots)})


def _checks(page, url: str, name: str) -> str:
    """Open ``url`` (a home page) wide enough for the messages; screenshots of the page and of
    its data-check table; the table's cell texts (the data grid draws on a canvas and keeps its
    cells in an accessible table)."""
    page.set_viewport_size({"width": 1900, "height": 1100})
    page.goto(url)
    wait_ready(page)
    assert_no_exception(page)
    page.get_by_text("Data checks").first.wait_for()
    table = page.locator(CHECKS).last
    table.wait_for(timeout=60_000)
    table.scroll_into_view_if_needed()
    shot = screenshot(page, name)
    table.screenshot(path=str(shot.with_name(f"{name}-table.png")))
    return " | ".join(table.locator("td").all_text_contents())


def _import_folder(page, url: str, folder: str) -> str:
    """Choose ``folder`` on the Open data page at ``url`` and click the importer it suggests;
    returns the notes shown."""
    page.goto(url)
    wait_ready(page)
    box = page.locator(".st-key-od_folder input")
    box.click()
    box.fill(folder)
    page.get_by_role("option", name=folder, exact=True).click()
    wait_ready(page)
    page.get_by_text("Import as stark", exact=True).first.wait_for()
    page.get_by_role("button", name="Import as stark").click()
    page.get_by_text("Bundle written:").first.wait_for(timeout=120_000)
    wait_ready(page)
    assert_no_exception(page)
    return " ".join(page.locator("[data-testid=stAlert]").all_inner_texts())


def test_home_data_checks_show_the_saved_depth_and_a_copied_summary(audit_server, page):
    url = f"{audit_server}/?bundle=audits&dataset=toy-synthesized"
    text = _checks(page, url, "audits-home-data-checks")
    assert "summary_mismatch" in text
    assert "its bytes are identical to those of other/runs/m/eval_metrics_test.json" in text
    assert "mrr reads the whole ranking: 1 of 2 queries has no relevant document" in text


def test_open_data_imports_avatars_flickr_layout_and_shows_its_notes(audit_server, page):
    notes = _import_folder(page, f"{audit_server}/Open_data", "collection/flickr30k_entities")
    assert "the published summary matches the means computed on the 3 queries of split test" in (
        notes
    )
    assert "Amazon" not in notes
    screenshot(page, "audits-open-data-flickr-import")


@pytest.fixture(scope="module")
def real_audit_roots(real_dir: Path, tmp_path_factory) -> Path:
    """A writable data root ``local`` holding the bundle ``prime`` imported from the real Prime
    folder."""
    roots = tmp_path_factory.mktemp("real-audit") / "local"
    roots.mkdir()
    import_stark(real_dir / "stark" / "prime", roots / "prime")
    return roots


@pytest.fixture(scope="module")
def real_audit_server(chromium_path: str, real_audit_roots: Path, real_dir: Path) -> Iterator[str]:
    """Two data roots: ``local`` (first, so bundles are written there) and the real folder
    (only read); with two roots, ids start with the root's name (``local/prime``,
    ``real/stark/prime``)."""
    del chromium_path
    roots = os.pathsep.join([str(real_audit_roots), str(real_dir)])
    yield from serve_for_module({"RETRIEVAL_DASHBOARD_DATA_ROOTS": roots})


@pytest.mark.real
def test_real_prime_copied_summary_in_the_data_checks_and_import_notes(
    real_audit_server, real_dir, page
):
    url = f"{real_audit_server}/?bundle=local/prime&dataset=prime-human"
    text = _checks(page, url, "real-prime-home-data-checks")
    assert "hit@1 0.2857 (computed 0.2110)" in text
    assert "mrr reads the whole ranking: 20 of 109 queries" in text
    notes = _import_folder(page, f"{real_audit_server}/Open_data", f"{real_dir.name}/stark/prime")
    assert "hit@1 0.2857 (computed 0.2110)" in notes
    assert "mrr reads the whole ranking: 20 of 109 queries" in notes
    screenshot(page, "real-prime-open-data-import")
