"""The Report page's presentation mode: the slide deck of
:func:`analysis.present.report.build_deck`, one slide per screen.

* No Streamlit chrome: the header, toolbar, decoration, status widget and sidebar are hidden.
* Every slide is laid out for 1280 x 720 px (one headline, one figure or table, one note and
  the navigation row); on larger windows the text, tables and buttons are zoomed (CSS
  ``zoom`` by media query: 1.25 from 1600 x 900, 1.5 from 1900 x 1060). A chart takes the
  height the window leaves: the slide is a flex column of ``100vh`` minus the navigation row
  (:data:`NAV_RESERVE`, per zoom step), the chart's element grows into what the headline and
  the note leave free and plotly draws at that height (``height="stretch"``), so a chart is
  ~450 px high at 1280 x 720 and ~800 px at 1920 x 1080, and no slide scrolls. Charts are not
  zoomed (plotly measures a zoomed container wrongly).
* Keys: → ↓ PageDown Space = next, ← ↑ PageUp = previous. A small script (``st.html`` with
  JavaScript) listens to ``keydown`` on the document and clicks the Previous/Next buttons, so a
  key press is the same rerun as a click; typing in a widget is left alone.
* The slide is in the URL (``present=1&slide=N``, 1-based, clamped to the deck).
"""

from __future__ import annotations

import streamlit as st

from analysis.present import export, report
from ui.urlstate import local_param, write_param

PREVIOUS = "◀ Previous"
NEXT = "Next ▶"
#: Height kept free under a chart slide for the navigation row and the page padding, in px at
#: zoom 1, 1.25 and 1.5 (the slide container is ``100vh`` minus this).
NAV_RESERVE = (110, 125, 145)
#: The smallest chart height (px) on a very low window (the slide then scrolls).
MIN_FIGURE_HEIGHT = 300
PRESENT_CSS = """<style>
[data-testid="stSidebar"], [data-testid="stSidebarCollapsedControl"],
[data-testid="stSidebarNav"], [data-testid="stExpandSidebarButton"], [data-testid="stHeader"],
[data-testid="stToolbar"], [data-testid="stDecoration"], [data-testid="stStatusWidget"],
[data-testid="stAppDeployButton"], [data-testid="stMainMenu"] {display: none !important;}
[data-testid="stMainBlockContainer"] {max-width: 1280px; padding: 1.2rem 2.5rem 0.4rem;}
[data-testid="stAppViewContainer"] [data-testid="stMain"] {overflow: hidden auto;}
.st-key-deck_slide h2 {font-size: 1.85rem; line-height: 1.25; padding: 0 0 0.2rem;}
.st-key-deck_slide [data-testid="stTable"] td, .st-key-deck_slide [data-testid="stTable"] th {
  font-size: 1.05rem; padding: 0.3rem 0.7rem;}
.st-key-deck_nav p {margin: 0;}
.st-key-deck_slide:has([data-testid="stPlotlyChart"]) {flex: 0 0 auto !important;
  height: calc(100vh - RESERVE0px) !important; min-height: MINpx;}
.st-key-deck_slide [data-testid="stElementContainer"]:has([data-testid="stPlotlyChart"]) {
  flex: 1 1 0 !important; min-height: 0;}
.st-key-deck_slide [data-testid="stFullScreenFrame"],
.st-key-deck_slide [data-testid="stPlotlyChart"] {height: 100% !important;}
@media (min-width: 1600px) and (min-height: 900px) {
  [data-testid="stMainBlockContainer"] {max-width: 1560px;}
  .st-key-deck_slide:has([data-testid="stPlotlyChart"]) {
    height: calc(100vh - RESERVE1px) !important;}
  .st-key-deck_slide h2, .st-key-deck_slide [data-testid="stTable"],
  .st-key-deck_slide [data-testid="stCaptionContainer"], .st-key-deck_nav {zoom: 1.25;}}
@media (min-width: 1900px) and (min-height: 1060px) {
  [data-testid="stMainBlockContainer"] {max-width: 1840px;}
  .st-key-deck_slide:has([data-testid="stPlotlyChart"]) {
    height: calc(100vh - RESERVE2px) !important;}
  .st-key-deck_slide h2, .st-key-deck_slide [data-testid="stTable"],
  .st-key-deck_slide [data-testid="stCaptionContainer"], .st-key-deck_nav {zoom: 1.5;}}
</style>"""
for _i, _px in enumerate(NAV_RESERVE):
    PRESENT_CSS = PRESENT_CSS.replace(f"RESERVE{_i}px", f"{_px}px")
PRESENT_CSS = PRESENT_CSS.replace("MINpx", f"{MIN_FIGURE_HEIGHT + 160}px")
KEYS_JS = """<script>
(function () {
  if (window.__deckKeys) return;
  window.__deckKeys = true;
  var next = ['ArrowRight', 'ArrowDown', 'PageDown', ' ', 'Spacebar'];
  var prev = ['ArrowLeft', 'ArrowUp', 'PageUp'];
  document.addEventListener('keydown', function (e) {
    var t = e.target;
    if (t && (t.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(t.tagName))) return;
    if (!document.querySelector('.st-key-deck_nav')) return;
    var label = next.indexOf(e.key) >= 0 ? 'NEXT' : prev.indexOf(e.key) >= 0 ? 'PREV' : null;
    if (!label) return;
    e.preventDefault();
    var buttons = document.querySelectorAll('.st-key-deck_nav button');
    for (var i = 0; i < buttons.length; i++) {
      var b = buttons[i];
      if (b.innerText.trim() === label && !b.disabled) { b.click(); b.blur(); return; }
    }
  }, true);
})();
</script>"""

_DECKS: dict[int, tuple[report.ReportContent, list[report.Slide]]] = {}


def slides_of(content: report.ReportContent) -> list[report.Slide]:
    """The deck of a (cached) content object, built once per object."""
    kept = _DECKS.get(id(content))
    if kept is None or kept[0] is not content:
        if len(_DECKS) >= 8:
            _DECKS.pop(next(iter(_DECKS)))
        kept = (content, report.build_deck(content))
        _DECKS[id(content)] = kept
    return kept[1]


def _go(slide: int) -> None:
    write_param("slide", str(slide))


def _draw(slide: report.Slide, index: int) -> None:
    st.header(export.escape_markdown(slide.headline), anchor=False)
    if slide.kind == "figure" and slide.figure is not None:
        st.plotly_chart(
            slide.figure,
            key=f"deck_fig_{index}",
            width="stretch",
            height="stretch",  # the height the slide leaves (PRESENT_CSS)
            config=export.PLOTLY_CONFIG,
        )
    elif slide.table is not None:
        st.table(export.markdown_frame(slide.table), border="horizontal")
    if slide.note:
        st.caption(export.escape_markdown(slide.note))


def present(content: report.ReportContent, on_exit) -> None:
    """Draw the current slide and the navigation row, then stop the script."""
    st.markdown(PRESENT_CSS, unsafe_allow_html=True)
    slides = slides_of(content)
    try:
        slide = int(local_param("slide") or 1)
    except ValueError:
        slide = 1
    slide = min(max(slide, 1), len(slides))
    write_param("slide", str(slide))
    with st.container(key="deck_slide"):
        _draw(slides[slide - 1], slide)
    with st.container(key="deck_nav", horizontal=True, vertical_alignment="center"):
        st.button(PREVIOUS, key="report_prev", disabled=slide <= 1, on_click=_go, args=(slide - 1,))
        st.caption(f"Slide {slide} of {len(slides)} · keys: ← → PageUp PageDown Space")
        st.button(
            NEXT, key="report_next", disabled=slide >= len(slides), on_click=_go, args=(slide + 1,)
        )
        st.toggle(
            "Presentation mode",
            key="report_present",
            on_change=on_exit,
            help="Leave the slides (back to the report page).",
        )
        st.html(
            KEYS_JS.replace("'NEXT'", repr(NEXT)).replace("'PREV'", repr(PREVIOUS)),
            unsafe_allow_javascript=True,
        )
    st.stop()
