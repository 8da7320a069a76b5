"""Page-local URL state: the one helper every page uses for values that belong to the page (the
selected query ``q``, a slice column, a threshold), as opposed to the shared sidebar values of
:mod:`ui.state`.

Pattern: :func:`url_widget` seeds a widget's session-state key from a URL parameter when the
widget has no state yet (first run, back from another page) or when the URL holds a value this
page did not write (a deep link, browser Back/Forward); invalid or absent values give the
default. After drawing the widget, the page calls :func:`write_param` with the value to keep
(``None`` removes the parameter, e.g. for a default), which writes the URL and remembers what
was written. The memory is per page: switching pages starts afresh.

The value is assigned to the widget's key on every run, not only when it is seeded, so every
run that draws the widget sends the browser the value the page holds. Streamlit sends a
widget's value only in a run that assigned it; otherwise a browser that re-creates a control
whose state it dropped (reruns of fragments and of progress placeholders can cause that) builds
it from the widget's own default (an empty multiselect, a number input at its minimum), shows
that, and sends it back on the next click (an export, say) as if the user had chosen it.

Every URL value is bounded: a value longer than :data:`MAX_PARAM_CHARS` characters is ignored
(the page says so once and uses the default), so a crafted link cannot make a page parse
megabytes; the parsers themselves run in linear time (e.g.
:func:`analysis.stats.failures.parse_values`).
"""

from __future__ import annotations

from collections.abc import Callable

import streamlit as st

from ui import _compat

WRITTEN = "_local_url_written"
PAGE = "_local_url_page"
#: The longest URL value a page reads (characters); 60 selected slice values of 100 characters
#: each take about 6,000.
MAX_PARAM_CHARS = 16_384


def _written() -> dict[str, str | None]:
    page = _compat.page_script_hash()
    if st.session_state.get(PAGE) != page:
        st.session_state[PAGE] = page
        st.session_state[WRITTEN] = {}
    return st.session_state.setdefault(WRITTEN, {})


def bounded(name: str) -> str | None:
    """URL parameter ``name``; ``None`` when absent or longer than :data:`MAX_PARAM_CHARS`
    (then a warning names it, once per run)."""
    raw = st.query_params.get(name)
    if raw is None or len(raw) <= MAX_PARAM_CHARS:
        return raw
    st.warning(
        f"The link's {name!r} parameter is {len(raw):,} characters long, more than the "
        f"{MAX_PARAM_CHARS:,} a page reads: it was ignored."
    )
    return None


def local_param(name: str) -> str | None:
    """The page-local URL parameter ``name`` (``None`` when absent or too long)."""
    return bounded(name)


def url_widget(
    key: str,
    name: str,
    parse: Callable[[str | None], object],
    default: object,
    valid: Callable[[object], bool] | None = None,
) -> object:
    """Seed widget ``key`` from URL parameter ``name`` (see the module docstring); ``parse``
    returns ``None`` for an invalid value. A kept value that ``valid`` rejects (the widget's
    options changed) falls back to ``default`` too. Returns the seeded value."""
    raw = local_param(name)
    written = _written()
    if key not in st.session_state or raw != written.get(name):
        value = parse(raw) if raw is not None else None
        value = default if value is None else value
    else:
        value = st.session_state[key]
        if valid is not None and not valid(value):
            value = default  # the options changed under the widget
    st.session_state[key] = value  # every run: the browser is sent the kept value
    return value


def write_param(name: str, value: str | None) -> None:
    """Write page-local URL parameter ``name`` (``None`` removes it) and remember it."""
    if value is None:
        if name in st.query_params:
            del st.query_params[name]
    elif st.query_params.get(name) != value:
        st.query_params[name] = value
    _written()[name] = value


def url_toggle(label: str, key: str, name: str, help: str) -> bool:
    """A toggle (widget ``key``, default off) kept in URL parameter ``name`` as ``1`` while on
    (:func:`url_widget`, then :func:`write_param`); returns whether it is on."""
    url_widget(key, name, lambda raw: raw == "1" or None, False)
    shown = st.toggle(label, key=key, help=help)
    write_param(name, "1" if shown else None)
    return bool(shown)
