"""AppTest: two sessions (two reviewers) annotating one query on the Queries page. Changes are
made by intent: a page drawn before the other reviewer's change never undoes it; a note save
never replaces a note its writer was not shown (it asks); a new tag is stored as typed."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from analysis.io.annotations import AnnotationStore, database_path
from tests.app.conftest import ROOT, no_exception, open_page
from ui.annotations import _key

DATASET, QUERY = "stark-mag", "5"
TAGS = _key("tags", DATASET, QUERY)
NOTE = _key("note", DATASET, QUERY)


@pytest.fixture
def store(tmp_path: Path) -> AnnotationStore:
    """The demo bundle's notes database in the test's notes folder (see conftest)."""
    return AnnotationStore(database_path(ROOT / "data" / "demo", tmp_path / "notes"))


def _session(name: str) -> AppTest:
    at = open_page("2_Queries.py", dataset=DATASET, a="bm25", q=QUERY, qd=DATASET)
    no_exception(at)
    at.text_input(key="ann_author").input(name).run()
    return at


def _tags(store: AnnotationStore) -> set[str]:
    return set(store.tags(DATASET, QUERY)["tag"])


def test_tags_change_by_intent_between_two_sessions(store: AnnotationStore) -> None:
    ann, bob = _session("Ann"), _session("Bob")  # both pages drawn before any tag
    ann.multiselect(key=TAGS).select("label error").run()
    no_exception(ann)
    bob.multiselect(key=TAGS).select("ambiguous query").run()  # Bob's page does not show Ann's
    no_exception(bob)
    assert _tags(store) == {"label error", "ambiguous query"}
    assert bob.multiselect(key=TAGS).value == ["label error", "ambiguous query"]
    ann.multiselect(key=TAGS).unselect("label error").run()  # Ann's page does not show Bob's
    no_exception(ann)
    assert _tags(store) == {"ambiguous query"}
    history = store.history(DATASET, QUERY)
    rows = list(zip(history["value"], history["author"], strict=True))
    assert rows == [("label error", "Ann"), ("ambiguous query", "Bob"), (None, "Ann")]


def test_a_new_tag_is_stored_exactly_as_typed(store: AnnotationStore) -> None:
    ann = _session("Ann")
    ann.multiselect(key=TAGS).select("label error").run()
    for typed in ("label", "Label Error", "  needs   relations "):
        ann.text_input(key=f"{TAGS}_new").input(typed).run()
        no_exception(ann)
        assert ann.text_input(key=f"{TAGS}_new").value == ""  # ready for the next one
    assert _tags(store) == {"label error", "label", "Label Error", "needs relations"}
    assert set(ann.multiselect(key=TAGS).value) == _tags(store)


def test_a_note_save_never_replaces_a_note_it_did_not_show(store: AnnotationStore) -> None:
    ann, bob = _session("Ann"), _session("Bob")
    ann.text_area(key=NOTE).input("gold d3 is wrong").run()
    ann.button(key=f"{NOTE}_button").click().run()
    assert store.note(DATASET, QUERY) == "gold d3 is wrong"

    bob.text_area(key=NOTE).input("query is ambiguous").run()
    bob.button(key=f"{NOTE}_button").click().run()  # Bob was shown no note: he is asked
    no_exception(bob)
    assert store.note(DATASET, QUERY) == "gold d3 is wrong"
    (warning,) = [w.value for w in bob.warning if "Not saved" in w.value]
    assert "Ann saved a newer version" in warning.replace("\\", "")
    assert "gold d3 is wrong" in [t.value for t in bob.text]  # theirs, as text
    assert bob.text_area(key=NOTE).value == "query is ambiguous"  # his draft is kept
    bob.button(key=f"{NOTE}_mine").click().run()
    no_exception(bob)
    assert store.note(DATASET, QUERY) == "query is ambiguous"
    versions = store.history(DATASET, QUERY)
    assert versions["value"].tolist() == ["gold d3 is wrong", "query is ambiguous"]
    assert versions["author"].tolist() == ["Ann", "Bob"]

    ann.run()  # Ann had not edited since her save: she now sees Bob's note
    assert ann.text_area(key=NOTE).value == "query is ambiguous"


def test_a_draft_survives_another_save_and_can_give_way(store: AnnotationStore) -> None:
    ann, bob = _session("Ann"), _session("Bob")
    bob.text_area(key=NOTE).input("my draft").run()  # typed, not saved
    ann.text_area(key=NOTE).input("ann's note").run()
    ann.button(key=f"{NOTE}_button").click().run()
    bob.run()  # any rerun: Bob's draft stays in the box
    assert bob.text_area(key=NOTE).value == "my draft"
    assert any("newer version" in c.value for c in bob.caption)
    bob.button(key=f"{NOTE}_button").click().run()
    assert store.note(DATASET, QUERY) == "ann's note"
    bob.button(key=f"{NOTE}_theirs").click().run()  # keep theirs: the box shows Ann's note
    no_exception(bob)
    assert bob.text_area(key=NOTE).value == "ann's note"
    assert not [w for w in bob.warning if "Not saved" in w.value]
    bob.text_area(key=NOTE).input("ann's note, and d7 too").run()
    bob.button(key=f"{NOTE}_button").click().run()  # now over the version he was shown
    assert store.note(DATASET, QUERY) == "ann's note, and d7 too"
