"""Pages of a long list on one page of the app: only the items of the page shown are computed
(e.g. the Home page's "every dataset" leaderboards of a bundle of 2,000 datasets draw and
compute ten leaderboards, not 2,000). The page number is kept in a page-local URL parameter."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

import streamlit as st

from ui.urlstate import url_widget, write_param

T = TypeVar("T")


def page_of(items: Sequence[T], per_page: int, *, key: str, param: str, what: str) -> list[T]:
    """The items of the page chosen in a "Page" number box (1-based, seeded from URL parameter
    ``param``, written back when not 1); a caption says which ones of how many are shown. With
    at most ``per_page`` items there is no box and every item is returned."""
    total = len(items)
    if total <= per_page:
        return list(items)
    pages = -(-total // per_page)

    def parse(raw: str | None) -> int | None:
        try:
            value = int(raw or "")
        except ValueError:
            return None
        return value if 1 <= value <= pages else None

    url_widget(key, param, parse, 1)
    if not 1 <= int(st.session_state[key]) <= pages:  # the list got shorter
        st.session_state[key] = 1
    number = int(
        st.number_input(
            f"Page (of {pages:,})",
            min_value=1,
            max_value=pages,
            key=key,
            help=f"{per_page} {what} per page; only the page shown is computed.",
        )
    )
    write_param(param, None if number == 1 else str(number))
    start = (number - 1) * per_page
    shown = list(items[start : start + per_page])
    st.caption(f"{what.capitalize()} {start + 1:,}–{start + len(shown):,} of {total:,}.")
    return shown
