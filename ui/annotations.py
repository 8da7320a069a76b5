"""The annotation panel: tags, a note and per-document judgements of one query, kept in the
bundle's SQLite notes database (:mod:`analysis.io.annotations`), so they survive reloads and
server restarts and are shared by every user of the server.

Every write happens in a widget callback, before the rerun that draws the panel again from the
database, so what is shown is what is stored. Text typed by users is shown as text only.

Changes happen by intent, never by replaying a whole widget's value over the database:

* **tags**: the tags box diffs its new value against what *this* session was shown, so choosing a
  tag adds that tag and removing one removes that one; a tag another reviewer added meanwhile is
  kept. New tags are typed in their own field and stored exactly as typed (whitespace folded),
  never replaced by an existing tag that resembles them.
* **notes**: a save carries the note's version this session was shown
  (:meth:`analysis.io.annotations.AnnotationStore.set_note`); when someone saved a newer note
  meanwhile, nothing is replaced: the page shows their note beside the draft and asks (save
  mine over it, or keep theirs). Every version stays in the query's history. A draft being
  typed is never overwritten by another reviewer's save.

Every write names its author: the "Your name" field, remembered for the browser session
(a non-widget copy in ``st.session_state``) and starting from
:func:`analysis.io.annotations.default_author` (``RETRIEVAL_DASHBOARD_AUTHOR``, else the OS
user running the server, else "anonymous"). Who wrote each tag, note and judgement, and when,
is shown beside it; the query's history lists every change.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from pathlib import Path

import pandas as pd
import streamlit as st

from analysis.core.errors import InputError
from analysis.io.annotations import (
    ANONYMOUS,
    NOTES_ENV,
    SUGGESTED_TAGS,
    AnnotationStore,
    NoteConflict,
    NoteState,
    clean_author,
    database_path,
    default_author,
    utc_text,
)
from analysis.present.export import escape_markdown
from ui.state import Selection

RELEVANCE_LABELS = {0: "0 · not relevant", 1: "1 · relevant", 2: "2 · highly relevant"}
CLEAR = "clear"
AUTHOR = "_ann_author"  # the session's name (non-widget copy)
AUTHOR_WIDGET = "ann_author"
UNKNOWN = "unknown"  # rows written before authors were recorded
WRITE_ERROR = "_ann_write_error"  # why a judgement's save failed, shown by the next draw


def author() -> str:
    """The name this session writes with (what the field holds now, even before the field's
    own change callback ran)."""
    typed = st.session_state.get(AUTHOR_WIDGET, st.session_state.get(AUTHOR))
    try:
        return clean_author(typed)
    except ValueError:
        return clean_author(st.session_state.get(AUTHOR))


def who(name: object) -> str:
    """An author as shown ("unknown" for rows older than authors)."""
    return str(name) if name else UNKNOWN


def with_authors(frame: pd.DataFrame, time_column: str) -> pd.DataFrame:
    """``frame`` with ``author`` shown as text and ``time_column`` as ISO 8601 UTC."""
    return frame.assign(
        author=[who(a) for a in frame["author"]],
        **{time_column: [utc_text(t) for t in frame[time_column]]},
    )


def _author_field() -> None:
    if AUTHOR not in st.session_state:
        try:
            st.session_state[AUTHOR] = default_author()
        except InputError as exc:  # the configured name is too long
            st.warning(escape_markdown(f"{exc}: writing as {ANONYMOUS} until a name is typed."))
            st.session_state[AUTHOR] = ANONYMOUS
    st.session_state[AUTHOR_WIDGET] = st.session_state[AUTHOR]

    def keep() -> None:
        st.session_state[AUTHOR] = author()

    st.text_input(
        "Your name",
        key=AUTHOR_WIDGET,
        on_change=keep,
        max_chars=100,
        help="Written with every tag, note and judgement you make in this browser session.",
    )


@st.cache_resource(max_entries=16, show_spinner=False)
def _store(path: str) -> AnnotationStore:
    return AnnotationStore(path)


def store_for(sel: Selection) -> AnnotationStore | None:
    """The notes database of the selected bundle (``None``, with a warning, when it cannot be
    opened: e.g. the notes folder is inside the bundle or not writable)."""
    if sel.bundle is None:
        return None
    try:
        return _store(str(database_path(Path(sel.bundle.root))))
    except InputError as exc:
        st.warning(escape_markdown(f"Notes are not available: {exc}"))
        return None


def _key(prefix: str, dataset: str, query_id: str) -> str:
    digest = hashlib.sha1(f"{dataset}\0{query_id}".encode(), usedforsecurity=False).hexdigest()
    return f"ann_{prefix}_{digest[:12]}"


def annotation_panel(
    sel: Selection, dataset: str, query_id: str, doc_ids: Sequence[str]
) -> AnnotationStore | None:
    """Draw tags, note and judgements of ``query_id`` of ``dataset``; ``doc_ids`` are the
    documents offered for judging (e.g. the ranked list shown). Returns the store used."""
    store = store_for(sel)
    if store is None:
        return None
    dataset, query_id = str(dataset), str(query_id)
    st.subheader("Notes and judgements")
    st.caption(
        "Kept for this bundle in a notes database outside the data folder; shared by every "
        "user of this server. Judgements amend the qrels only on the Analyses page, beside the "
        "strict metrics.",
        help=escape_markdown(f"Database: {store.path} (folder: ${NOTES_ENV})."),
    )
    error = st.session_state.pop(WRITE_ERROR, None)  # of a write callback of this run
    if error:
        st.error(escape_markdown(error))
    try:
        _author_field()
        _tags(store, dataset, query_id)
        _note(store, dataset, query_id)
        _judgements(store, dataset, query_id, [str(d) for d in doc_ids])
        _history(store, dataset, query_id)
    except InputError as exc:
        st.error(escape_markdown(f"The notes database could not be used: {exc}"))
    return store


def _tags(store: AnnotationStore, dataset: str, query_id: str) -> None:
    key = _key("tags", dataset, query_id)
    rows = store.tags(dataset, query_id)
    current = rows["tag"].tolist()
    known = store.tags(dataset)["tag"].drop_duplicates().tolist()
    options = list(dict.fromkeys([*SUGGESTED_TAGS, *known, *current]))
    st.session_state[key] = current
    st.session_state[f"{key}_shown"] = current  # what this session is shown: the diff's base

    def write(action: str, tag: str) -> None:
        try:
            getattr(store, action)(dataset, query_id, tag, author=author())
        except ValueError as exc:
            st.session_state[f"{key}_error"] = str(exc)

    def on_change() -> None:
        shown = st.session_state.get(f"{key}_shown", [])
        wanted = [str(t) for t in st.session_state[key]]
        for tag in [t for t in wanted if t not in shown]:
            write("add_tag", tag)
        for tag in [t for t in shown if t not in wanted]:
            write("remove_tag", tag)

    def add_new() -> None:
        typed = str(st.session_state.get(f"{key}_new", ""))
        st.session_state[f"{key}_new"] = ""
        if typed.strip():
            write("add_tag", typed)

    c_tags, c_new = st.columns([3, 2], vertical_alignment="bottom")
    c_tags.multiselect(
        "Tags", options, key=key, on_change=on_change, filter_mode="contains",
        placeholder="Choose a tag",
        help="Suggested: " + ", ".join(SUGGESTED_TAGS) + ". Choosing a tag adds it, removing "
        "one removes it; tags others add meanwhile stay.",
    )  # fmt: skip
    c_new.text_input(
        "New tag", key=f"{key}_new", on_change=add_new, max_chars=100,
        placeholder="Type a new tag, press Enter",
        help="Stored exactly as typed (spaces folded): never matched to an existing tag.",
    )  # fmt: skip
    if current:
        st.caption(escape_markdown("; ".join(
            f"{r.tag}: {who(r.author)}, {utc_text(r.created)}" for r in rows.itertuples()
        )))  # fmt: skip
    error = st.session_state.pop(f"{key}_error", None)
    if error:
        st.warning(escape_markdown(error))


def _shown_note(key: str, state: NoteState) -> None:
    """Keep the note box in step with the database without losing a draft: the stored note is
    shown when this session has not seen the current version yet and its box holds no edit."""
    seen = st.session_state.get(f"{key}_version")
    untouched = st.session_state.get(key, "") == st.session_state.get(f"{key}_saved", "")
    if seen is None or (seen != state.version and untouched):
        st.session_state[key] = state.note
        st.session_state[f"{key}_saved"] = state.note
        st.session_state[f"{key}_version"] = state.version


def _note(store: AnnotationStore, dataset: str, query_id: str) -> None:
    key = _key("note", dataset, query_id)
    state = store.note_state(dataset, query_id)
    _shown_note(key, state)

    def save(over: int | None = None) -> None:
        text = str(st.session_state[key])
        expected = st.session_state[f"{key}_version"] if over is None else over
        try:
            version = store.set_note(
                dataset, query_id, text, author=author(), expected_version=expected
            )
        except NoteConflict as exc:
            st.session_state[f"{key}_conflict"] = exc.current
            return
        except ValueError as exc:
            st.session_state[f"{key}_error"] = str(exc)
            return
        st.session_state.pop(f"{key}_conflict", None)
        st.session_state[f"{key}_saved"] = text
        st.session_state[f"{key}_version"] = version

    st.text_area("Note", key=key, height=90, help="Free text about this query (plain text).")
    st.button("Save note", key=f"{key}_button", on_click=save)
    conflict = st.session_state.get(f"{key}_conflict")
    if conflict is not None:
        _conflict(key, conflict, save)
    elif state.version != st.session_state[f"{key}_version"]:
        st.caption(escape_markdown(
            f"{who(state.author)} saved a newer version of this note at "
            f"{utc_text(state.updated or 0)} while you were editing; Save note will ask before "
            "replacing it."
        ))  # fmt: skip
    if state.note:
        st.caption(
            escape_markdown(f"Saved by {who(state.author)}, {utc_text(state.updated or 0)}.")
        )
    error = st.session_state.pop(f"{key}_error", None)
    if error:
        st.warning(escape_markdown(error))


def _conflict(key: str, theirs: NoteState, save: Callable[..., None]) -> None:
    """A save met a newer note: show it (as text) and ask what to keep."""
    what = "deleted the note" if not theirs.note else "saved a newer version of this note"
    when = utc_text(theirs.updated) if theirs.updated is not None else "meanwhile"
    st.warning(escape_markdown(
        f"Not saved: {who(theirs.author)} {what} ({when}) after this page showed it. Your text "
        "is still in the box; theirs is below. Keep one:"
    ))  # fmt: skip
    st.text(theirs.note or "(no note)")

    def keep_theirs() -> None:
        st.session_state[key] = theirs.note
        st.session_state[f"{key}_saved"] = theirs.note
        st.session_state[f"{key}_version"] = theirs.version
        st.session_state.pop(f"{key}_conflict", None)

    c_mine, c_theirs = st.columns(2)
    c_mine.button("Save mine over it", key=f"{key}_mine", on_click=save,
                  args=(theirs.version,), type="primary")  # fmt: skip
    c_theirs.button("Keep theirs (drop mine)", key=f"{key}_theirs", on_click=keep_theirs)


def _judgements(store: AnnotationStore, dataset: str, query_id: str, doc_ids: list[str]) -> None:
    key = _key("judge", dataset, query_id)
    judged = store.judgements(dataset, query_id)
    if doc_ids:
        c_doc, c_rel, c_button = st.columns([3, 4, 2], vertical_alignment="bottom")
        c_doc.selectbox(
            "Document", doc_ids, key=f"{key}_doc", help="A document of the list shown above."
        )
        c_rel.radio(
            "Judgement",
            [*RELEVANCE_LABELS, CLEAR],
            format_func=lambda v: RELEVANCE_LABELS.get(v, "clear the judgement"),
            key=f"{key}_rel",
            horizontal=True,
            index=1,
        )

        def save() -> None:
            doc = st.session_state[f"{key}_doc"]
            value = st.session_state[f"{key}_rel"]
            relevance = None if value == CLEAR else int(value)
            try:
                store.set_judgement(dataset, query_id, doc, relevance, author=author())
            except ValueError as exc:  # InputError: the database cannot be written
                st.session_state[WRITE_ERROR] = f"The judgement was not saved: {exc}"

        c_button.button("Save judgement", key=f"{key}_button", on_click=save)
    if judged.empty:
        st.caption("No document of this query has been judged yet.")
    else:
        st.dataframe(
            with_authors(judged[["doc_id", "relevance", "author", "updated"]], "updated"),
            hide_index=True,
            width="stretch",
            key=f"{key}_table",
            column_config={
                "relevance": st.column_config.NumberColumn(
                    "relevance", help="The reviewer's relevance (0 = not relevant)."
                )
            },
        )


def _history(store: AnnotationStore, dataset: str, query_id: str) -> None:
    changes = store.history(dataset, query_id)
    if changes.empty:
        return
    with st.expander(f"History of this query ({len(changes)} changes)"):
        shown = with_authors(changes[["kind", "doc_id", "value", "author", "at"]], "at")
        shown["value"] = [("(removed)" if v is None else v) for v in shown["value"]]
        st.dataframe(
            shown, hide_index=True, width="stretch", key=_key("history", dataset, query_id)
        )
