"""Find data text rendered as markup in an AppTest page: every string Streamlit reads as
Markdown (bodies of text elements; labels, help texts and radio options of widgets; tab and
expander labels; column help texts), every string of a plotly figure, the HTML of ``st.html``
and the deck tooltips' fields."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence

from streamlit.testing.v1 import AppTest

MARKDOWN_BODIES = {"markdown", "caption", "title", "header", "subheader", "info", "warning",
                   "error", "success", "toast", "exception", "latex"}  # fmt: skip


def walk(node: object) -> Iterator[object]:
    yield node
    children = getattr(node, "children", None)
    if isinstance(children, dict):
        for child in children.values():
            yield from walk(child)


def markdown_strings(node: object) -> list[str]:
    """The strings of one element that Streamlit renders as Markdown."""
    out: list[str] = []
    kind = getattr(node, "type", "")
    proto = getattr(node, "proto", None)
    if kind in MARKDOWN_BODIES:
        out.append(str(getattr(node, "value", "")))
    if proto is not None:
        for name in ("label", "help", "caption", "delta"):
            value = getattr(proto, name, None)
            if isinstance(value, str):
                out.append(value)
        if kind == "radio":
            out += [*proto.options, *proto.captions]
        columns = getattr(proto, "columns", None)
        if isinstance(columns, str) and columns:  # dataframe column config (JSON)
            out += _json_values(json.loads(columns), "help")
    for name in ("label", "help"):  # expanders, tabs, popovers
        value = getattr(node, name, None)
        if isinstance(value, str):
            out.append(value)
    return out


def _json_values(value: object, key: str | None = None) -> list[str]:
    """Strings in a JSON value (with ``key``: only those somewhere under that key)."""
    if isinstance(value, dict):
        out: list[str] = []
        for k, v in value.items():
            out += _json_values(v, None if k == key else key)
        return out
    if isinstance(value, list):
        return [s for v in value for s in _json_values(v, key)]
    return [value] if isinstance(value, str) and key is None else []


def plotly_strings(spec: dict) -> list[str]:
    """Every string plotly may draw: layout and traces; a trace's ``customdata`` (ids kept raw
    to map a click back) only when one of its templates shows it."""
    out = _json_values(spec.get("layout", {}))
    for trace in spec.get("data", []):
        templates = " ".join(str(trace.get(t, "")) for t in ("hovertemplate", "texttemplate"))
        for key, value in trace.items():
            if key != "customdata" or "customdata" in templates:
                out += _json_values(value)
    return out


def leaks(
    at: AppTest,
    atoms: Sequence[str],
    plotly_atoms: Sequence[str],
    html_atoms: Sequence[str],
    link_atoms: Sequence[str] = (),
) -> list[tuple[str, str, str]]:
    """``(element type, atom, text)`` for every payload rendered as markup on the page;
    ``link_atoms`` (bare URLs and addresses) are looked for with the Markdown escapes removed,
    since GitHub-flavoured Markdown autolinks them after resolving the escapes."""
    found: list[tuple[str, str, str]] = []
    for node in walk(at._tree):
        kind = str(getattr(node, "type", ""))
        for text in markdown_strings(node):
            found += [(kind, a, text) for a in atoms if a in text]
            bare = text.replace("\\", "")
            found += [(kind, a, text) for a in link_atoms if a in bare]
        if kind == "plotly_chart":
            for text in plotly_strings(json.loads(node.proto.spec)):
                found += [(kind, a, text) for a in plotly_atoms if a in text]
        if kind == "html":
            found += [(kind, a, node.proto.body[:200]) for a in html_atoms if a in node.proto.body]
        if kind == "deck_gl_json_chart":
            spec = json.loads(node.proto.json)
            for layer in spec.get("layers", []):
                records = layer.get("data")
                for record in records if isinstance(records, list) else []:
                    for key, value in record.items():
                        if key.startswith("tip_") and "<" in str(value):
                            found.append((kind, key, str(value)))
    return found


def plain_texts(at: AppTest) -> str:
    """Everything shown as plain text (text, code, dataframes, widget options), joined."""
    out: list[str] = []
    for node in walk(at._tree):
        kind = getattr(node, "type", "")
        if kind in ("text", "code"):
            out.append(str(node.value))
        elif kind == "dataframe":
            frame = node.value
            out += [frame.to_csv(), *map(str, frame.columns)]
        elif kind in ("selectbox", "multiselect", "radio"):
            out += list(node.proto.options)
    return "\n".join(out)
