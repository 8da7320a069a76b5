"""Report: the written summary, leaderboard, slice charts, A vs B, worst queries and failure
causes, with exports (tables as CSV/Markdown/LaTeX, charts as HTML/PNG/SVG), the whole report as
one offline HTML file, and a presentation mode (the slide deck of :mod:`ui.deck`).

Everything shown is computed by :func:`analysis.present.report.build_content` (cached per
selection); the page draws it. The report metric is the sidebar's metric.

Page-local URL parameters: ``present`` (``1`` = presentation mode: the slide deck, no Streamlit
chrome, keyboard navigation), ``slide`` (1-based slide of the presentation), ``section`` (the
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
from analysis.present import report
from ui import cards, data, deck, jobs, report_view, widgets
from ui.state import sidebar
from ui.urlstate import local_param, write_param

st.set_page_config(page_title="Report", layout="wide")
sel = sidebar()

SECTION_HELP = (
    "Summary: sentences generated from the numbers. Leaderboard: means with 95% CIs, best in "
    "bold, * = significantly below the best after Holm correction. Slices, A vs B, worst "
    "queries and failure causes as on the other pages, for the whole selection."
)


# --------------------------------------------------------------------------- cached content


@st.cache_resource(max_entries=32, show_spinner="Computing the report…")
def _content(
    bundle_id: str,
    datasets: tuple[str, ...],
    model_a: str | None,
    model_b: str | None,
    metric: str,
    ties: str,
    fingerprint: tuple,
    split: str | None,
    _bundle: Bundle,
    _table: pd.DataFrame,
    _warnings: dict,
) -> report.ReportContent:
    del fingerprint  # cache key only
    stamps = dict(zip(datasets, report_view.fingerprint(_bundle, datasets), strict=True))

    def dataset(name: str):
        return data.dataset(_bundle, name)

    def ranked(name: str, model: str) -> pd.DataFrame:
        return data.ranked_run(_bundle, name, model, ties)

    sources = report.ReportSources(
        dataset=dataset,
        ranked=ranked,
        warnings=_warnings,
        costs=report_view.costs(_bundle, datasets),
        numbers=lambda name, rows, m, shown: report_view.dataset_numbers(
            bundle_id, name, (stamps[name], split), m, tuple(shown), model_a, model_b, ties, rows
        ),
    )
    settings = report.ReportSettings(
        bundle=_bundle.name,
        ties=ties,
        splits=dict.fromkeys(datasets, split) if split else None,
        model_names=data.models_of(_bundle, list(_bundle.datasets)),
    )
    return report.build_content(
        _table,
        headline={n: list(_bundle.datasets[n].metrics) for n in datasets},
        model_a=model_a,
        model_b=model_b,
        metric=metric,
        sources=sources,
        settings=settings,
    )


def _url_callback(key: str, param: str, encode: Callable[[object], str | None]):
    def on_change() -> None:
        write_param(param, encode(st.session_state[key]))

    return on_change


# --------------------------------------------------------------------------- page

present = local_param("present") == "1"
st.session_state["report_present"] = present
on_present = _url_callback("report_present", "present", lambda v: "1" if v else None)
if not present:
    st.title("Report")
    st.toggle(
        "Presentation mode",
        key="report_present",
        on_change=on_present,
        help="The slide deck: at most 12 slides of one headline and one chart or table each, "
        "16:9, no sidebar; arrow keys, PageUp/PageDown and Space move; the link keeps the "
        "mode and the slide.",
    )

widgets.require_datasets(sel)
widgets.require_runs(sel, "pages/5_Report.py")

table, warnings, errors = jobs.need(
    "Computing the per-query table", data.per_query, sel.bundle, sel.datasets, sel.ties,
    sel.split,
)  # fmt: skip
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
    report_view.fingerprint(sel.bundle, loaded),
    sel.split,  # the per-query table is the split's: part of the key
)
content = jobs.need("Computing the report (statistics, charts, tables)", _content, *key,
                    _bundle=sel.bundle, _table=table, _warnings=warnings)  # fmt: skip
if not content.sections:
    st.info("Nothing to report for the selected datasets.")
    st.stop()

if present:
    deck.present(content, on_present)

st.caption(f"Report metric: {sel.metric} (the sidebar's metric). " + cards.sentence(sel.metric))
stem = report_view.file_stem(sel.bundle.name, report.Block("report", "text", ""), sel.metric)
dl_report, dl_deck = st.columns(2)
dl_report.download_button(
    "Download the report (one HTML file, works offline)",
    data=lambda: report.render_html(content),
    file_name=f"{stem}.html",
    mime="text/html",
    key="dl_report",
    on_click="ignore",
    help="Everything of this page in one self-contained HTML file: plotly.js inlined, no "
    "network requests. Same as `python -m analysis report`.",
)
dl_deck.download_button(
    "Download the slides (one HTML file, works offline)",
    data=lambda: report.render_deck(content, deck.slides_of(content)),
    file_name=f"{stem.removesuffix('_report')}_slides.html",
    mime="text/html",
    key="dl_deck",
    on_click="ignore",
    help="The presentation-mode deck as one HTML file with its own keyboard navigation "
    "(arrows, PageUp/PageDown, Space). Same as `python -m analysis report --deck`.",
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
write_param("section", current)
section = sections[current]
st.header(section.title, anchor=False, help=widgets.metric_help(sel.metric))
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
    write_param("ds", chosen_ds)

for block in section.blocks:
    if block.dataset is not None and block.dataset != chosen_ds:
        continue
    report_view.draw_block(
        block,
        cache_key=key,
        bundle=sel.bundle.name,
        metric=sel.metric,
        section_title=section.title,
    )
