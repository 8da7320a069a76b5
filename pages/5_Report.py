"""Report: the written summary, leaderboard, slice charts, A vs B, worst queries and failure
causes, with exports (tables as CSV/Markdown/LaTeX, charts as HTML/PNG/SVG), the whole report as
one offline HTML file, and a presentation mode.

Everything shown is computed by :func:`analysis.present.report.build_content` (cached per
selection); the page draws it. The report metric is the sidebar's metric.

Page-local URL parameters: ``present`` (``1`` = presentation mode: no sidebar, large type, one
chart or table per screen), ``slide`` (1-based slide of the presentation), ``section`` (the
section shown in normal mode) and ``ds`` (the dataset of the per-dataset charts and tables in
normal mode). Invalid values fall back to the defaults.

Names from files (models, datasets, slice values, query text) are shown through ``st.text``,
``st.dataframe``, or as Markdown escaped with :func:`analysis.present.export.escape_markdown`.
PNG/SVG are rendered only on request (a button), then offered for download; HTML downloads are
generated when clicked.
"""

from __future__ import annotations

from collections.abc import Callable

import pandas as pd
import streamlit as st

from analysis.io.bundle import Bundle
from analysis.present import export, report
from analysis.stats.perquery import MEASURE_HELP
from ui import data, widgets
from ui.state import local_param, set_local_param, sidebar

st.set_page_config(page_title="Report", layout="wide")
sel = sidebar()

IMAGES = "_report_images"
PRESENT_CSS = """<style>
[data-testid="stSidebar"], [data-testid="stSidebarCollapsedControl"],
[data-testid="stSidebarNav"], [data-testid="stExpandSidebarButton"] {display: none !important;}
[data-testid="stMainBlockContainer"] {max-width: 100%; padding: 4rem 3rem 2rem;}
[data-testid="stMarkdownContainer"] p, [data-testid="stMarkdownContainer"] li {
  font-size: 1.55rem; line-height: 1.5;}
[data-testid="stTable"] td, [data-testid="stTable"] th {font-size: 1.3rem;}
[data-testid="stText"] {font-size: 1.4rem;}
h1 {font-size: 2.8rem !important;} h2 {font-size: 2.3rem !important;}
h3 {font-size: 1.9rem !important;}
</style>"""
SECTION_HELP = (
    "Summary: sentences generated from the numbers. Leaderboard: means with 95% CIs, best in "
    "bold, * = significantly below the best after Holm correction. Slices, A vs B, worst "
    "queries and failure causes as on the other pages, for the whole selection."
)
TABLE_FORMATS = (
    ("CSV", "csv", "text/csv", export.to_csv),
    ("Markdown", "md", "text/markdown", export.to_markdown),
    ("LaTeX", "tex", "application/x-tex", export.to_latex),
)


# --------------------------------------------------------------------------- cached content


def _fingerprint(bundle: Bundle, datasets: tuple[str, ...]) -> tuple:
    """(path, mtime, size) of every file behind the report, and the uploads: part of the cache
    key, so an edited file is evaluated again."""
    out = []
    for name in datasets:
        spec = bundle.datasets[name]
        files = (spec.queries, spec.qrels, spec.entities, spec.query_groups, spec.metapaths,
                 *spec.splits.values(), *spec.runs.values())  # fmt: skip
        ups = tuple((m, f, len(c), hash(c)) for m, (f, c) in data.uploads(name).items())
        out.append((name, data.stamp(*files), ups))
    return tuple(out)


@st.cache_resource(max_entries=8, show_spinner="Computing the report…")
def _content(
    bundle_id: str,
    datasets: tuple[str, ...],
    model_a: str | None,
    model_b: str | None,
    metric: str,
    ties: str,
    fingerprint: tuple,
    _bundle: Bundle,
    _table: pd.DataFrame,
    _warnings: dict,
) -> report.ReportContent:
    del bundle_id, fingerprint  # cache key only

    def dataset(name: str):
        return data.dataset(_bundle, name)

    def ranked(name: str, model: str) -> pd.DataFrame:
        return data.ranked_run(_bundle, name, model, ties)

    return report.build_content(
        _table,
        headline={n: list(_bundle.datasets[n].metrics) for n in datasets},
        model_a=model_a,
        model_b=model_b,
        metric=metric,
        dataset=dataset,
        ranked=ranked,
        warnings=_warnings,
        bundle=_bundle.name,
        ties=ties,
    )


# --------------------------------------------------------------------------- drawing helpers


def _url_callback(key: str, param: str, encode: Callable[[object], str | None]):
    def on_change() -> None:
        set_local_param(param, encode(st.session_state[key]))

    return on_change


def _md(text: str) -> str:
    return export.escape_markdown(text)


def _title(block: report.Block, present: bool) -> None:
    if present:
        st.header(_md(block.title), anchor=False)
    else:
        st.subheader(_md(block.title), anchor=False)
    if block.caption:
        st.caption(_md(block.caption))


def _table_exports(block_key: str, table, name: str, group: str | None = None) -> None:
    with st.popover("Export table", help="CSV, Markdown or LaTeX (booktabs) of this table."):
        for label, ext, mime, writer in TABLE_FORMATS:
            st.download_button(
                label,
                data=export.to_latex(table, group=group) if ext == "tex" else writer(table),
                file_name=f"{name}.{ext}",
                mime=mime,
                key=f"dl_{block_key}_{ext}",
                on_click="ignore",
            )


def _figure_exports(block: report.Block, cache_key: tuple) -> None:
    fig = block.figure
    assert fig is not None
    store = st.session_state.setdefault(IMAGES, {})
    slot = (cache_key, block.key)
    cols = st.columns([1, 2, 1, 1, 2])
    cols[0].download_button(
        "HTML",
        data=lambda: export.figure_html(fig, title=block.title),
        file_name=f"{block.key}.html",
        mime="text/html",
        key=f"dl_{block.key}_html",
        on_click="ignore",
        help="Interactive chart as one HTML file (plotly.js included, works offline).",
    )
    rendered = store.get(slot)
    if rendered is None and cols[1].button(
        "Render PNG/SVG",
        key=f"render_{block.key}",
        help="Render this chart as PNG and SVG (needs Chrome/Chromium), then download.",
    ):
        try:
            store[slot] = {fmt: export.figure_image(fig, fmt) for fmt in export.IMAGE_FORMATS}
        except export.ImageExportError as exc:
            store[slot] = {"error": str(exc)}
        rendered = store[slot]
    if rendered is not None and "error" in rendered:
        st.info(rendered["error"])
    elif rendered is not None:
        for col, fmt, mime in ((cols[1], "png", "image/png"), (cols[2], "svg", "image/svg+xml")):
            col.download_button(
                fmt.upper(),
                data=rendered[fmt],
                file_name=f"{block.key}.{fmt}",
                mime=mime,
                key=f"dl_{block.key}_{fmt}",
                on_click="ignore",
            )


def _draw_table(table, key: str) -> None:
    if isinstance(table, export.StyledTable):
        if table.cells.empty:
            st.info("Nothing to show.")
            return
        st.table(export.markdown_frame(table))
        for note in table.notes:
            st.caption(_md(note))
    elif table is None or table.empty:
        st.info("Nothing to show.")
    else:
        st.dataframe(table, hide_index=True, width="stretch", key=f"df_{key}")


def _draw_block(
    block: report.Block, *, present: bool, cache_key: tuple, section_title: str = ""
) -> None:
    if block.kind == "text":
        if block.title != section_title:
            _title(block, present)
        if block.text:
            st.markdown("\n".join(f"- {_md(t)}" for t in block.text))
        else:
            st.info("Nothing to report for this selection.")
        return
    _title(block, present)
    if block.kind == "figure" and block.figure is not None:
        fig = block.figure
        if present:
            fig = _taller(fig)
        st.plotly_chart(fig, key=f"fig_{block.key}", width="stretch", config=export.PLOTLY_CONFIG)
        if not present:
            _figure_exports(block, cache_key)
    elif block.kind == "table":
        _draw_table(block.table, block.key)
        if not present and block.table is not None:
            _table_exports(block.key, block.table, block.key, block.group)
    elif block.kind == "query" and block.query is not None:
        view = block.query
        st.text(view.text or "(no query text)")
        st.dataframe(view.facts, hide_index=True, width="stretch", key=f"df_{block.key}_facts")
        left, right = st.columns([2, 3])
        with left:
            st.caption("Gold documents")
            st.dataframe(view.gold, hide_index=True, width="stretch", key=f"df_{block.key}_gold")
        with right:
            st.caption("Rankings (top 10)")
            st.dataframe(
                view.rankings, hide_index=True, width="stretch", key=f"df_{block.key}_rank"
            )
        if not present:
            _table_exports(f"{block.key}_rank", view.rankings, f"{block.key}-rankings")


def _taller(fig):
    """A copy of the figure sized for one screen (presentation mode)."""
    out = fig.__class__(fig)
    out.update_layout(height=max(int(fig.layout.height or 500), 620), font={"size": 18})
    return out


# --------------------------------------------------------------------------- page

present = local_param("present") == "1"
if present:
    st.markdown(PRESENT_CSS, unsafe_allow_html=True)
else:
    st.title("Report")

st.session_state["report_present"] = present
st.toggle(
    "Presentation mode",
    key="report_present",
    on_change=_url_callback("report_present", "present", lambda v: "1" if v else None),
    help="Hides the sidebar, enlarges the type and shows one chart or table per screen; "
    "the link keeps the mode and the slide.",
)

widgets.require_datasets(sel)

table, warnings, errors = data.per_query(sel.bundle, sel.datasets, sel.ties)
widgets.show_errors(errors)
if table.empty or sel.metric not in table.columns:
    st.info("No per-query results for the selected datasets and metric.")
    st.stop()
loaded = tuple(d for d in sel.datasets if d not in errors)
key = (
    sel.bundle_id,
    loaded,
    sel.model_a,
    sel.model_b,
    sel.metric,
    sel.ties,
    _fingerprint(sel.bundle, loaded),
)
content = _content(*key, _bundle=sel.bundle, _table=table, _warnings=warnings)
if not content.sections:
    st.info("Nothing to report for the selected datasets.")
    st.stop()

if present:
    slides = content.blocks()
    try:
        slide = int(local_param("slide") or 1)
    except ValueError:
        slide = 1
    slide = min(max(slide, 1), len(slides))
    set_local_param("slide", str(slide))
    prev_col, pos_col, next_col = st.columns([1, 2, 1])
    prev_col.button(
        "◀ Previous",
        key="report_prev",
        disabled=slide <= 1,
        on_click=set_local_param,
        args=("slide", str(slide - 1)),
        width="stretch",
    )
    pos_col.caption(f"Slide {slide} of {len(slides)}")
    next_col.button(
        "Next ▶",
        key="report_next",
        disabled=slide >= len(slides),
        on_click=set_local_param,
        args=("slide", str(slide + 1)),
        width="stretch",
    )
    section, block = slides[slide - 1]
    st.title(_md(section.title), anchor=False)
    _draw_block(block, present=True, cache_key=key, section_title=section.title)
    st.stop()

st.caption(
    f"Report metric: {sel.metric} (the sidebar's metric). " + widgets.metric_help(sel.measure)
)
st.download_button(
    "Download the report (one HTML file, works offline)",
    data=lambda: report.render_html(content),
    file_name="report.html",
    mime="text/html",
    key="dl_report",
    on_click="ignore",
    help="Everything of this page in one self-contained HTML file: plotly.js inlined, no "
    "network requests. Same as `python -m analysis report`.",
)

sections = {s.key: s for s in content.sections}
raw_section = local_param("section")
current = raw_section if raw_section in sections else next(iter(sections))
st.session_state["report_section"] = current
st.radio(
    "Section",
    list(sections),
    format_func=lambda k: sections[k].title,
    key="report_section",
    horizontal=True,
    on_change=_url_callback("report_section", "section", str),
    help=SECTION_HELP,
)
set_local_param("section", current)
section = sections[current]
st.header(section.title, anchor=False, help=" ".join(MEASURE_HELP.values()))
st.caption(section.intro)

per_dataset = [b.dataset for b in section.blocks if b.dataset is not None]
choices = list(dict.fromkeys(per_dataset))
chosen_ds = None
if choices:
    raw_ds = local_param("ds")
    chosen_ds = raw_ds if raw_ds in choices else choices[0]
    st.session_state["report_ds"] = chosen_ds
    st.selectbox(
        "Dataset",
        choices,
        key="report_ds",
        on_change=_url_callback("report_ds", "ds", str),
        help="The per-dataset charts and tables of this section show one dataset at a time "
        "(the downloadable report has all of them).",
    )
    set_local_param("ds", chosen_ds)

for block in section.blocks:
    if block.dataset is not None and block.dataset != chosen_ds:
        continue
    _draw_block(block, present=False, cache_key=key, section_title=section.title)
