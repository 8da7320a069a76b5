"""Streamlit glue of the figures for papers: the export control under every figure, the
bundle's model colours and the one-time CJK font warning.

:func:`export_control` draws an expander "Export for a paper" with one button: it builds the
figure's paper version (:mod:`analysis.present.paper_figures`), renders PNG (2x) and SVG with
kaleido and writes the LaTeX caption, then offers the three downloads and shows the caption.
The expander's content is drawn only while it is open (a closed control is one element of the
page). Nothing is rendered before the click; a rendering is kept for the session, keyed by the
figure's ``signature`` (what it shows), so a changed selection never offers a stale file.
"""

from __future__ import annotations

import contextlib
import hashlib
import re
from collections.abc import Callable, Hashable

import streamlit as st

from analysis.core.errors import InputError
from analysis.io.bundle import Bundle
from analysis.present.escape import escape_markdown
from analysis.present.figures import ImageExportError
from analysis.present.fonts import cjk_font_available, needs_cjk_warning
from analysis.present.notices import cjk_font_message
from analysis.present.palette import model_colours
from analysis.present.paper import PaperFigure, caption_latex, paper_image
from ui import data
from ui.lazy import lazy_expander

STORE = "_paper_exports"
WARNED = "_cjk_font_warned"
MAX_KEPT = 12


def bundle_colours(bundle: Bundle | None, models: list[str]) -> dict[str, str]:
    """``{model: colour}`` of ``models``, assigned over every model of the bundle (uploads
    included), so a model has one colour on every dataset and in every export."""
    everyone = data.models_of(bundle, list(bundle.datasets)) if bundle is not None else []
    return model_colours(models, everyone)


def _part(text: object) -> str:
    """``text`` as a part of a file name: each run of characters other than ``[A-Za-z0-9._-]``
    becomes ``-``; a text with characters outside ASCII (``北京``) also gets the first 6 hex
    digits of its SHA-1, so that two such names (``北京``, ``上海``) do not both become ``x``."""
    raw = str(text)
    part = re.sub(r"[^A-Za-z0-9._-]+", "-", raw).strip("-.")
    if not raw.isascii():
        digest = hashlib.sha1(raw.encode("utf-8", "surrogatepass")).hexdigest()[:6]
        part = f"{part}-{digest}" if part else digest
    return part or "x"


def file_stem(*parts: object) -> str:
    """``bundle_dataset_metric_figure``: parts reduced to ``[A-Za-z0-9._-]`` (:func:`_part`),
    joined by ``_``; parts that are ``None`` or empty are left out."""
    return "_".join(_part(p) for p in parts if p is not None and str(p) != "")


def _render(build: Callable[[], PaperFigure], stem: str) -> dict[str, object]:
    try:
        figure = build()
        png, svg = paper_image(figure, "png"), paper_image(figure, "svg")
    except ImageExportError as exc:
        return {"error": str(exc)}
    tex = caption_latex(figure, stem, image=f"{stem}.png")
    return {"png": png, "svg": svg, "tex": tex, "caption": figure.caption, "figure": figure}


def export_control(key: str, signature: Hashable, stem: str, build: Callable[[], PaperFigure]):
    """The export expander of one figure (module docstring). ``key``: unique on the page;
    ``signature``: what the figure shows (a hashable of its inputs); ``stem``: the file name
    without extension; ``build``: makes the :class:`PaperFigure` (called on the click)."""
    store: dict = st.session_state.setdefault(STORE, {})
    slot = (key, signature)
    box = lazy_expander("Export for a paper (PNG, SVG, LaTeX caption)", f"paper_open_{key}",
                        expanded=slot in store)  # fmt: skip
    if box is None:
        return
    with box:
        if slot not in store:
            st.caption(
                "The figure with its title, axis labels and caption, long labels cut (full "
                "text in the caption), the page's slices only; PNG at 2x and SVG need Chromium."
            )
            if not st.button("Render PNG, SVG and caption", key=f"paper_{key}"):
                return
            with st.spinner("Rendering…"):
                store[slot] = _render(build, stem)
            while len(store) > MAX_KEPT:
                store.pop(next(iter(store)))
        done = store[slot]
        if "error" in done:
            st.info(escape_markdown(str(done["error"])))
            return
        cols = st.columns(3)
        for col, (label, ext, mime) in zip(
            cols,
            (("PNG (2x)", "png", "image/png"), ("SVG", "svg", "image/svg+xml"),
             ("LaTeX caption", "tex", "application/x-tex")),
            strict=True,
        ):  # fmt: skip
            col.download_button(
                label, data=done[ext], file_name=f"{stem}.{ext}", mime=mime,
                key=f"paper_{key}_{ext}", on_click="ignore",
            )  # fmt: skip
        st.text(str(done["caption"]))
        if needs_cjk_warning([done["caption"]]):
            st.warning(escape_markdown(cjk_font_message()))


def cjk_font_warning(bundle: Bundle | None, dataset: str | None) -> None:
    """Once per session and bundle: warn (in the sidebar) when the bundle's names or the
    selected dataset's query text hold Chinese/Japanese/Korean characters and no CJK font is
    installed for the exporters. On a machine with a CJK font nothing is read."""
    if bundle is None or cjk_font_available():
        return
    warned = st.session_state.setdefault(WARNED, set())
    if str(bundle.root) in warned:
        return
    names = [*bundle.datasets, *bundle.models]
    texts: list[object] = list(names)
    if dataset is not None and dataset in bundle.datasets:
        with contextlib.suppress(InputError, OSError):  # a broken dataset: the page says so
            texts += data.dataset(bundle, dataset).queries["text"].head(2000).tolist()
    if needs_cjk_warning(texts):
        warned.add(str(bundle.root))
        st.sidebar.warning(escape_markdown(cjk_font_message()))
