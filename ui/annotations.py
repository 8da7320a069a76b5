"""The annotation panel: tags, a note and per-document judgements of one query, kept in the
bundle's SQLite notes database (:mod:`analysis.io.annotations`), so they survive reloads and
server restarts and are shared by every user of the server.

Every write happens in a widget callback, before the rerun that draws the panel again from the
database, so what is shown is what is stored. Text typed by users is shown as text only.

Every write names its author: the "Your name" field, remembered for the browser session
(a non-widget copy in ``st.session_state``) and starting from
:func:`analysis.io.annotations.default_author` (``RETRIEVAL_DASHBOARD_AUTHOR``, else the OS
user running the server, else "anonymous"). Who wrote each tag, note and judgement, and when,
is shown beside it; the query's history lists every change.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path

import pandas as pd
import streamlit as st

from analysis.core.errors import InputError
from analysis.io.annotations import (
    NOTES_ENV,
    SUGGESTED_TAGS,
    AnnotationStore,
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
        st.session_state[AUTHOR] = default_author()
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

    def on_change() -> None:
        wanted = [str(t) for t in st.session_state[key]]
        before = set(store.tags(dataset, query_id)["tag"])
        try:
            name = author()
            for tag in wanted:
                if tag not in before:
                    store.add_tag(dataset, query_id, tag, author=name)
            for tag in before - set(wanted):
                store.remove_tag(dataset, query_id, tag, author=name)
        except ValueError as exc:
            st.session_state[f"{key}_error"] = str(exc)

    st.multiselect(
        "Tags",
        options,
        key=key,
        on_change=on_change,
        accept_new_options=True,
        placeholder="Choose or type a tag",
        help="Suggested: " + ", ".join(SUGGESTED_TAGS) + ". Type a new tag and press Enter.",
    )
    if current:
        st.caption(escape_markdown("; ".join(
            f"{r.tag}: {who(r.author)}, {utc_text(r.created)}" for r in rows.itertuples()
        )))  # fmt: skip
    error = st.session_state.pop(f"{key}_error", None)
    if error:
        st.warning(escape_markdown(error))


def _note(store: AnnotationStore, dataset: str, query_id: str) -> None:
    key = _key("note", dataset, query_id)
    row = store.notes(dataset, query_id)
    saved = str(row["note"].iloc[0]) if len(row) else ""
    if st.session_state.get(f"{key}_saved") != saved:
        st.session_state[key] = saved  # another user (or a restart) changed it: show theirs
        st.session_state[f"{key}_saved"] = saved

    def save() -> None:
        try:
            store.set_note(dataset, query_id, st.session_state[key], author=author())
        except ValueError as exc:
            st.session_state[f"{key}_error"] = str(exc)

    st.text_area("Note", key=key, height=90, help="Free text about this query (plain text).")
    st.button("Save note", key=f"{key}_button", on_click=save)
    if len(row):
        r = row.iloc[0]
        st.caption(escape_markdown(f"Saved by {who(r['author'])}, {utc_text(r['updated'])}."))
    error = st.session_state.pop(f"{key}_error", None)
    if error:
        st.warning(escape_markdown(error))


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
            store.set_judgement(dataset, query_id, doc, relevance, author=author())

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
