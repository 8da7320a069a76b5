"""Metric cards in the app: every metric name has its card (formula, cutoff, references and the
tool's semantics, :func:`analysis.core.measures.card`) one hover or one click away — as the
``help=`` tooltip of the widget or heading that names it, and in an "About <metric>" popover.

The card's text comes from the library's measure registry (the same text as the CLI's
``--help-metrics`` and the report's Metrics section), Markdown-escaped there.
"""

from __future__ import annotations

import streamlit as st

from analysis.core.measures import card, escape_md, parse_name
from analysis.present.export import escape_markdown


def markdown(metric: str) -> str:
    """The card of ``metric`` as Markdown; ``""`` for a name the registry does not know."""
    try:
        return card(metric).markdown()
    except ValueError:
        return ""


def tooltip(metric: str) -> str:
    """For a ``help=`` tooltip: the measure's definition in one sentence (cutoff written
    ``k``), then the metric's card (``""`` for an unknown name)."""
    try:
        measure, _ = parse_name(metric)
    except ValueError:
        return ""
    return escape_md(measure.help()) + "\n\n" + markdown(metric)


def sentence(metric: str) -> str:
    """One line: the metric's title and formula (``""`` when unknown)."""
    try:
        found = card(metric)
    except ValueError:
        return ""
    return escape_markdown(f"{found.title}: {found.formula}.")


def about(metric: str, *, key: str, sidebar: bool = False) -> None:
    """An "About <metric>" popover holding the metric's card (nothing for an unknown name)."""
    text = markdown(metric)
    if not text:
        return
    where = st.sidebar if sidebar else st
    with where.popover(escape_markdown(f"About {metric}"), key=key):
        st.markdown(text)
