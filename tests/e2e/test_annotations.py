"""Browser: a tag and a judgement added on the Queries page, with the reviewer's name, survive
a server restart (they are in the bundle's SQLite notes database, not in the session)."""

from __future__ import annotations

from pathlib import Path

import pytest

from analysis.io.annotations import AnnotationStore, database_path, default_author
from tests.e2e.conftest import (
    NO_WARM_UP,
    ROOT,
    SERVER_START_S,
    WAIT_MS,
    assert_no_exception,
    screenshot,
    wait_ready,
)
from ui.annotations import _key
from ui.launch import free_port, serving

pytestmark = pytest.mark.e2e

QUERY = "/Queries?datasets=stark-mag&a=bm25&q=5&qd=stark-mag"


def _serving(notes: Path):
    """The app on a free port with its notes database in ``notes`` (no warm-up)."""
    env = {**NO_WARM_UP, "RETRIEVAL_DASHBOARD_NOTES_DIR": str(notes)}
    return serving(ROOT / "app.py", free_port(), env=env, timeout=SERVER_START_S)


#: how long an opened tags box may take to offer its options before the user opens it again
OPEN_WAIT_MS = 30_000
#: as many openings as fill :data:`WAIT_MS` (at least three)
OPENINGS = max(3, -(-WAIT_MS // OPEN_WAIT_MS))


def _pick_tag(page, box: str, tag: str) -> None:
    """Open the tags box and choose ``tag``. The first click on the box after the page loads
    only focuses it (its list stays closed): the list is then opened with the Down arrow, as a
    keyboard user does. (A second click, made before a busy page has marked the list open,
    closed it again, and the test waited for options that never showed.) The dropdown can take
    a moment on a busy machine, and a click may still open nothing, or open a list that stays
    where the box was before the page moved it (outside the window, so its option cannot be
    clicked): close it and open it again, as a user does, when the option does not show or
    cannot be clicked within :data:`OPEN_WAIT_MS` (so a lost opening costs that, not all of
    :data:`WAIT_MS`), up to :data:`OPENINGS` times."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    option = page.get_by_role("option", name=tag, exact=True)
    field = page.locator(f"{box} input")
    for _ in range(OPENINGS):
        field.click()
        if field.get_attribute("aria-expanded") != "true":  # the click only focused the box
            field.press("ArrowDown")  # opens the list; unlike a second click, never closes it
        try:
            option.wait_for(timeout=OPEN_WAIT_MS)
            option.click(timeout=OPEN_WAIT_MS)
        except PlaywrightTimeout:
            page.keyboard.press("Escape")
            continue
        page.keyboard.press("Escape")
        return
    pytest.fail(f"the tags box did not offer {tag!r}")


def test_tag_and_judgement_survive_a_server_restart(browser, tmp_path):
    notes = tmp_path / "notes"
    tags_box = f".st-key-{_key('tags', 'stark-mag', '5')}"
    with _serving(notes) as url:
        context = browser.new_context(viewport={"width": 1400, "height": 2400})
        page = context.new_page()
        page.goto(url + QUERY)
        wait_ready(page)
        assert_no_exception(page)
        name = page.get_by_role("textbox", name="Your name")
        name.fill("E2E Reviewer")
        name.press("Enter")
        wait_ready(page)
        _pick_tag(page, tags_box, "label error")
        wait_ready(page)
        page.get_by_text("0 · not relevant").click()
        wait_ready(page)
        page.get_by_role("button", name="Save judgement").click()
        wait_ready(page)
        assert_no_exception(page)
        page.get_by_text("No document of this query has been judged yet.").wait_for(
            state="detached", timeout=WAIT_MS
        )
        context.close()

    store = AnnotationStore(database_path(ROOT / "data" / "demo", notes))
    assert store.tags("stark-mag", "5")["tag"].tolist() == ["label error"]
    assert store.tags("stark-mag", "5")["author"].tolist() == ["E2E Reviewer"]
    judged = store.judgements("stark-mag", "5")
    assert len(judged) == 1
    assert judged["relevance"].tolist() == [0]
    assert judged["author"].tolist() == ["E2E Reviewer"]

    with _serving(notes) as url:  # a new server process: nothing of the old session is left
        context = browser.new_context(viewport={"width": 1400, "height": 2400})
        page = context.new_page()
        page.goto(url + QUERY)
        wait_ready(page)
        assert_no_exception(page)
        chip = page.locator(f"{tags_box} .react-aria-ComboBox [data-tag]")
        chip.first.wait_for(timeout=WAIT_MS)
        assert chip.count() == 1
        assert "label error" in chip.first.inner_text()
        assert page.get_by_text("No document of this query has been judged yet.").count() == 0
        page.get_by_text("label error: E2E Reviewer,", exact=False).wait_for(timeout=WAIT_MS)
        # a new session starts from the default name again
        assert page.get_by_role("textbox", name="Your name").input_value() == default_author()
        assert screenshot(page, "annotations").stat().st_size > 10_000

        page.goto(url + "/Analyses?datasets=stark-mag&ds=stark-mag&a=bm25")
        wait_ready(page)
        assert_no_exception(page)
        page.get_by_role("tab", name="Amended").click()
        page.get_by_text("1 judgement(s) on this dataset", exact=False).wait_for(timeout=WAIT_MS)
        # the amended metrics are a job of their own: the export comes when they are done
        export = page.get_by_role("button", name="Amended qrels (TREC)")
        export.wait_for(timeout=WAIT_MS)
        assert export.count() == 1
        context.close()
