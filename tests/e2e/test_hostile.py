"""Browser: the app under attack, as a browser draws it (what AppTest cannot see: the Markdown,
KaTeX and directives Streamlit's frontend would render, plotly's SVG labels, downloads).

* hostile names (:mod:`tests.hostile`) on every page: no KaTeX, no link to the payload's host,
  no bold, coloured or icon text made from a name, no plotly tag; the payloads are shown
  literally;
* Open data: links leading out of the data roots are neither offered nor read; the 10k-file
  folder says how many files it shows;
* two browser sessions annotating one query: both tags kept, a new tag stored exactly as typed,
  the second note save asks;
* the annotations CSV downloaded and opened as text: no formula cell, and it reads back;
* a 4,000-character ``values=`` link opens; a longer-than-allowed one is ignored with a warning,
  also when its request reaches the server in many pieces (as on a busy machine).

Screenshots: ``test-output/screenshots/hostile-*.png``.
"""

from __future__ import annotations

import csv
import io
import socket
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlencode, urlsplit

import pytest

from analysis.io.annotations import AnnotationStore, database_path, read_export_csv
from tests import hostile
from tests.e2e.conftest import (
    NO_WARM_UP,
    ROOT,
    assert_no_exception,
    screenshot,
    wait_charts_drawn,
    wait_jobs_done,
    wait_ready,
)
from ui import urlstate
from ui.annotations import _key
from ui.launch import free_port, serving

pytestmark = pytest.mark.e2e

DS = hostile.DATASET
LONG = 120_000  # ms: the machine may be busy

#: What a rendered payload would leave in the page (an empty list: nothing).
MARKUP_JS = """() => {
  const out = [];
  const app = document.querySelector('[data-testid=stApp]');
  if (app.querySelector('.katex, .katex-display, math')) out.push('katex');
  for (const a of app.querySelectorAll('a[href*="evil.example"]')) out.push('link');
  for (const el of app.querySelectorAll('strong, b, em')) {
    const t = el.textContent.trim();
    if (t === 'bold' || t === 'b') out.push('bold: ' + el.outerHTML.slice(0, 80));
  }
  for (const el of app.querySelectorAll('span, div, p')) {
    if (el.children.length === 0 && el.textContent.trim() === 'red') out.push('red text');
  }
  for (const el of app.querySelectorAll('[data-testid=stIconMaterial]')) {
    if (el.textContent.trim() === 'home') out.push('icon');
  }
  if (app.querySelector('img[src="x"]')) out.push('img');
  for (const t of app.querySelectorAll('.js-plotly-plot text, .js-plotly-plot tspan')) {
    const bold = (t.getAttribute('style') || '').includes('bold');
    if (bold && t.textContent.trim() === 'b') out.push('plotly bold');
  }
  if (app.querySelector('.js-plotly-plot a')) out.push('plotly link');
  return out;
}"""


@pytest.fixture(scope="module")
def attacked(chromium_path: str, tmp_path_factory) -> Iterator[tuple[str, Path, Path]]:
    """(base URL, data root, notes folder) of a server on the hostile bundle (annotated) and
    the Open data folders of :func:`tests.hostile.make_open_data_tree`."""
    del chromium_path
    base = tmp_path_factory.mktemp("attacked")
    roots, notes = base / "roots", base / "notes"
    roots.mkdir()
    hostile.annotate(hostile.make_hostile_bundle(roots / "h"), notes)
    hostile.make_open_data_tree(roots, base / "outside")
    env = {
        **NO_WARM_UP,
        "RETRIEVAL_DASHBOARD_DATA_ROOTS": str(roots),
        "RETRIEVAL_DASHBOARD_NOTES_DIR": str(notes),
        "RETRIEVAL_DASHBOARD_CACHE_DIR": str(base / "cache"),
    }
    try:
        with serving(ROOT / "app.py", free_port(), env, timeout=LONG / 1000) as url:
            yield url, roots, notes
    except RuntimeError as exc:
        pytest.fail(str(exc))


def _goto(page, url: str) -> None:
    page.goto(url, timeout=LONG)
    wait_ready(page, timeout=LONG)
    assert_no_exception(page)


def _text(page) -> str:
    """The page's text, without the invisible word joiners that keep URLs from being linked."""
    return page.locator("[data-testid=stApp]").inner_text().replace("\u2060", "")


#: the viewport of these tests' tabs (taller than the default, so more of a page is drawn)
TALL = {"width": 1400, "height": 1400}

PAGES = [
    ("home", "/", {"all": "1"}),
    ("slices", "/Slices", {"slice": hostile.SLICE, "min_n": "1"}),
    ("queries", "/Queries", {"q": "q21", "qd": DS}),
    ("compare", "/Compare", {"q": "q21", "qd": DS}),
    ("map", "/Map", {"q": "=1+2"}),
    ("report-slices", "/Report", {"section": "slices"}),
    ("report-compare", "/Report", {"section": "compare"}),
    ("analyses", "/Analyses", {}),
]


@pytest.mark.parametrize(("name", "path", "params"), PAGES, ids=[p[0] for p in PAGES])
def test_hostile_names_are_drawn_as_text(page, attacked, name, path, params) -> None:
    url = attacked[0]
    page.set_viewport_size(TALL)
    _goto(page, url + path + "?" + urlencode({"split": hostile.SPLIT_DEV, **params}))
    wait_jobs_done(page, timeout=LONG)  # the page's every part, not a job's progress bar
    wait_charts_drawn(page, timeout=LONG)
    assert page.evaluate(MARKUP_JS) == []
    text = _text(page)
    assert hostile.RED in text or name == "map"  # names are shown, literally (maps: canvas)
    if name == "slices":
        assert DS in text  # the caption, every payload shown as typed
    if name == "compare":
        plots = page.locator(".js-plotly-plot").all_inner_texts()
        assert any(hostile.HTML_B in t for t in plots)  # an axis title, as text
    screenshot(page, f"hostile-{name}")


def _choose(page, folder: str) -> list[str]:
    """Open the folder box, choose ``folder``; returns every folder offered."""
    page.locator(".st-key-od_folder input").click()
    options = page.get_by_role("option")
    options.first.wait_for(timeout=LONG)
    offered = [t.strip() for t in options.all_inner_texts()]
    page.get_by_role("option", name=folder, exact=True).click()
    wait_ready(page, timeout=LONG)
    assert_no_exception(page)
    return offered


def test_open_data_offers_nothing_outside_the_roots(page, attacked) -> None:
    url = attacked[0]
    page.set_viewport_size(TALL)
    _goto(page, url + "/Open_data")
    offered = _choose(page, "web")
    assert "many" in offered
    assert not any(o.startswith(("out-folder", "web/sub", "stark/split")) for o in offered)
    assert_no_exception(page)
    page.get_by_text("Detected format", exact=False).wait_for(timeout=LONG)
    page.locator("[data-testid=stDataFrame]").first.wait_for(timeout=LONG)
    page.get_by_role("textbox", name="Bundle name").wait_for(timeout=LONG)
    page.get_by_role("button", name="Write bundle").wait_for(timeout=LONG)
    assert hostile.SECRET not in _text(page)
    screenshot(page, "hostile-open-data-links")
    _choose(page, "many")
    page.get_by_text("300 of 10,001 data files shown", exact=False).wait_for(timeout=LONG)
    screenshot(page, "hostile-open-data-10k")


def test_two_sessions_annotate_one_query(browser, attacked) -> None:
    url, roots, notes = attacked
    query = url + "/Queries?" + urlencode({"split": hostile.SPLIT_DEV, "q": "q30", "qd": DS})
    new_tag = f".st-key-{_key('tags', DS, 'q30')}_new input"
    note = f".st-key-{_key('note', DS, 'q30')} textarea"
    sessions = []
    for who in ("Ann", "Bob"):
        context = browser.new_context(viewport={"width": 1400, "height": 2400})
        page = context.new_page()
        _goto(page, query)
        name = page.get_by_role("textbox", name="Your name")
        name.fill(who)
        name.press("Enter")
        wait_ready(page, timeout=LONG)
        sessions.append((context, page))
    (_, ann), (_, bob) = sessions
    for page, tag in ((ann, "tag"), (bob, "from bob")):  # Bob's page predates Ann's tag
        page.locator(new_tag).fill(tag)  # "tag" resembles an existing tag: stored as typed
        page.locator(new_tag).press("Enter")
        wait_ready(page, timeout=LONG)
        assert_no_exception(page)
    store = AnnotationStore(database_path(roots / "h", notes))
    assert set(store.tags(DS, "q30")["tag"]) == {"tag", "from bob"}
    for page, text in ((ann, "ann's note"), (bob, "bob's note")):
        page.locator(note).fill(text)
        page.locator(note).press("Tab")  # the box commits its value on blur
        wait_ready(page, timeout=LONG)
        page.get_by_role("button", name="Save note").click()
        wait_ready(page, timeout=LONG)
    bob.get_by_text("Not saved: Ann saved a newer version", exact=False).wait_for(timeout=LONG)
    assert store.note(DS, "q30") == "ann's note"
    assert bob.locator(note).input_value() == "bob's note"
    screenshot(bob, "hostile-note-conflict")
    bob.get_by_role("button", name="Save mine over it").click()
    wait_ready(bob, timeout=LONG)
    assert store.note(DS, "q30") == "bob's note"
    assert store.history(DS, "q30").query("kind == 'note'")["value"].tolist() == [
        "ann's note",
        "bob's note",
    ]
    for context, _ in sessions:
        context.close()


def test_annotations_csv_download_has_no_formula(page, attacked) -> None:
    url, roots, notes = attacked
    page.set_viewport_size(TALL)
    _goto(page, url + "/Analyses")
    page.get_by_role("tab", name="Amended").click()
    with page.expect_download(timeout=LONG) as info:
        page.get_by_role("button", name="Annotations (CSV)").click()
    text = Path(info.value.path()).read_text(encoding="utf-8")
    cells = [c for row in csv.reader(io.StringIO(text)) for c in row]
    assert cells
    assert not [c for c in cells if c[:1] in ("=", "+", "-", "@", "\t", "\r")]
    assert "'=1+2" in cells  # the formula query id and tag, quoted
    store = AnnotationStore(database_path(roots / "h", notes))
    assert read_export_csv(text).equals(read_export_csv(store.export_csv(DS)))


#: the Queries page's link parameters besides ``values``, and a ``values`` longer than a page reads
LINK = {"split": "all", "slice": hostile.SLICE}
TOO_LONG = "a," * urlstate.MAX_PARAM_CHARS


def test_long_values_link(page, attacked) -> None:
    url = attacked[0]
    values = ",".join(hostile.VALUES)
    long = ",".join([values] * (4000 // len(values) + 1))
    page.set_viewport_size(TALL)
    _goto(page, url + "/Queries?" + urlencode({**LINK, "values": long}))
    chips = page.locator(".st-key-queries_values [data-tag]")
    chips.first.wait_for(timeout=LONG)
    assert chips.count() == len(hostile.VALUES)
    screenshot(page, "hostile-long-values")
    _goto(page, url + "/Queries?" + urlencode({**LINK, "values": TOO_LONG}))
    page.get_by_text("parameter is", exact=False).wait_for(timeout=LONG)
    assert page.locator(".st-key-queries_values [data-tag]").count() == 0


def test_a_long_link_arriving_in_pieces_reaches_the_page(attacked) -> None:
    """A request for a link longer than a page reads (64 KiB of URL), sent in 4 KiB pieces
    with a pause between them, is answered with the page (whose run then warns), not with the
    HTTP parser's "Invalid HTTP request received." (it refused a head over 16 KiB that came
    in more than one read)."""
    address = urlsplit(attacked[0])
    host, port = address.hostname, address.port
    target = "/Queries?" + urlencode({**LINK, "values": TOO_LONG})
    head = f"GET {target} HTTP/1.1\r\nHost: {host}:{port}\r\nConnection: close\r\n\r\n"
    assert len(head) > 4 * 16_384
    with socket.create_connection((host, port), timeout=LONG / 1000) as sock:
        try:
            for start in range(0, len(head), 4096):
                sock.sendall(head[start : start + 4096].encode("ascii"))
                time.sleep(0.005)
        except (BrokenPipeError, ConnectionResetError):  # refused before the end: read why
            pass
        try:
            answer = sock.makefile("rb").read(2000).decode("latin-1")
        except ConnectionResetError:
            answer = "(connection reset)"
    assert answer.split()[1:2] == ["200"], answer
