"""Small drawing helpers shared by the pages. Text from data files is shown through
``st.dataframe``/``st.text``/``st.code`` or HTML-escaped in ``st.html`` (never interpreted as
Markdown or HTML)."""

from __future__ import annotations

import html
import json

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from analysis.core.errors import InputError
from analysis.present._compat import figure_unvalidated
from analysis.present.export import escape_markdown
from analysis.present.notices import no_map_message, no_run_message, one_model_message
from ui import _compat, cards, data, visitors
from ui.state import Selection

MAX_UPLOAD_MB = 200
MAX_UPLOAD_BYTES = MAX_UPLOAD_MB * 1024 * 1024
RELOAD_HINT = (
    "The other datasets are shown. Fix or restore the file, then press Reload data (a file "
    "that changed on disk is also read again on the next rerun)."
)


def require_bundle(sel: Selection) -> None:
    """Stop the page with an error when no bundle was found under the data roots."""
    if sel.bundle is None:
        st.error("No bundle found under the data roots.")
        st.stop()


def require_datasets(sel: Selection) -> None:
    """Stop the page with a message when there is no bundle or no dataset is selected (every
    page starts with this after :func:`ui.state.sidebar`)."""
    require_bundle(sel)
    if not sel.datasets:
        st.info("Select at least one dataset in the sidebar.")
        st.stop()


def _open_links(sel: Selection, page: str, datasets: list[str]) -> None:
    """A link "Open <dataset>" to ``page`` on each of the first four ``datasets``."""
    for other in datasets[:4]:
        st.page_link(
            page,
            label=escape_markdown(f"Open {other}"),
            query_params={"bundle": sel.bundle_id, "dataset": other},
        )


def datasets_with_runs(sel: Selection) -> list[str]:
    """The bundle's datasets that have a run (manifest order; uploads count)."""
    if sel.bundle is None:
        return []
    return [n for n in sel.bundle.datasets if data.models_of(sel.bundle, [n])]


def explain_no_run(sel: Selection, page: str, dataset: str | None = None) -> None:
    """Say why ``dataset`` (default: the selected one) has no per-query results and what to
    do, with a link (to ``page``, e.g. ``"pages/1_Slices.py"``) to each dataset with a run."""
    name = dataset or str(sel.dataset)
    assert sel.bundle is not None
    spec = sel.bundle.datasets.get(name)
    others = [n for n in datasets_with_runs(sel) if n != name]
    family = spec.family if spec is not None else "generic"
    st.info(escape_markdown(no_run_message(name, family, others)))
    _open_links(sel, page, others)


def explain_one_model(sel: Selection, page: str) -> None:
    """Say why A vs B is empty (the selected dataset has fewer than two runs), with a link (to
    ``page``) to each dataset with two runs or more."""
    assert sel.bundle is not None
    name = str(sel.dataset)
    models = data.models_of(sel.bundle, [name])
    others = [
        n for n in sel.bundle.datasets if n != name and len(data.models_of(sel.bundle, [n])) > 1
    ]
    st.info(escape_markdown(one_model_message(name, models, others)))
    _open_links(sel, page, others)


def explain_no_map(sel: Selection, page: str) -> None:
    """Say why the selected dataset has no map, with a link (to ``page``) to each dataset of
    the bundle whose manifest family is spatial."""
    assert sel.bundle is not None
    name = str(sel.dataset)
    spec = sel.bundle.datasets.get(name)
    family = spec.family if spec is not None else "generic"
    spatial = [n for n, s in sel.bundle.datasets.items() if n != name and s.family == "spatial"]
    st.info(escape_markdown(no_map_message(name, family, spatial)))
    _open_links(sel, page, spatial)


def require_runs(sel: Selection, page: str) -> None:
    """Stop the page with :func:`explain_no_run` when the selected dataset has no run."""
    if sel.model_a is None:
        explain_no_run(sel, page)
        st.stop()


def metric_help(metric: str) -> str:
    """The metric's definition and card as Markdown, for a ``help=`` tooltip
    (:func:`ui.cards.tooltip`)."""
    return cards.tooltip(metric)


def show_errors(errors: dict[str, str], key: str = "reload_data") -> None:
    """One ``st.error`` per dataset that could not be loaded (the message names file and line),
    then a Reload data button; names and messages come from files, so they are escaped."""
    for name, message in errors.items():
        st.error(escape_markdown(f"Dataset {name} could not be loaded: {message}"))
    if errors:
        st.caption(RELOAD_HINT)
        st.button("Reload data", key=key, on_click=data.reload, help="Read the bundle again.")


def format_ci_table(board: pd.DataFrame, metrics: list[str]) -> pd.DataFrame:
    """A long ``mean_ci`` result (``dataset, model, metric, n, mean, ci_low, ci_high``) as one
    row per (dataset, model) and one text column per metric: ``0.412 [0.371, 0.455]``."""
    if "metric" not in board.columns:
        board = board.assign(metric=metrics[0])
    board = board.copy()
    board["cell"] = [
        f"{m:.3f} [{lo:.3f}, {hi:.3f}]"
        for m, lo, hi in zip(board["mean"], board["ci_low"], board["ci_high"], strict=True)
    ]
    wide = board.pivot_table(
        index=["dataset", "model", "n"], columns="metric", values="cell", aggfunc="first"
    ).reset_index()
    wide.columns.name = None
    return wide[["dataset", "model", "n", *[m for m in metrics if m in wide.columns]]]


class _SharedFigure(go.Figure):
    """A figure built from a cached figure dict whose ``to_dict()`` returns that dict itself
    (read-only) instead of a deep copy. ``st.plotly_chart`` reads a figure through
    ``to_dict()``; the dict is what ``to_dict()`` returned when the figure was built, so the
    chart is the same, without copying every point's arrays on every rerun."""

    def to_dict(self) -> dict:
        return self.__dict__["_shared_spec"]


def plotly_figure(spec: dict) -> go.Figure:
    """The figure of a cached figure dict made by ``go.Figure(...).to_dict()`` (validated when it
    was built), for ``st.plotly_chart``: built once per dict (not validated again) and shared
    read-only between reruns and sessions (:class:`_SharedFigure`), so a rerun neither
    rebuilds nor copies it. ``spec`` must not be modified afterwards (cached dicts never are)."""
    return _shared_figure(id(spec), spec)


@st.cache_resource(max_entries=64, show_spinner=False)
def _shared_figure(key: int, _spec: dict) -> go.Figure:
    """The figure of ``_spec``; ``key`` is ``id(_spec)`` and the entry keeps a reference to
    the dict, so the id cannot be reused by another dict while the entry lives."""
    del key
    figure = figure_unvalidated(_spec, kind=_SharedFigure)
    figure.__dict__["_shared_spec"] = _spec
    return figure


def current_metric_label(sel: Selection) -> str:
    return sel.metric


#: Styles of the leaderboard's HTML table (small CI and baseline counts under the mean).
LEADERBOARD_CSS = """<style>
table.leaderboard {border-collapse: collapse; font-size: 0.92rem; margin-bottom: 0.5rem}
table.leaderboard th, table.leaderboard td {padding: 0.3rem 0.7rem; text-align: right;
  border-bottom: 1px solid rgba(128, 128, 128, 0.25); vertical-align: top}
table.leaderboard td:nth-child(2), table.leaderboard th:nth-child(2) {text-align: left}
table.leaderboard small {opacity: 0.65; font-size: 0.75rem}
table.leaderboard sup {color: #0072B2; font-weight: 600; margin-left: 0.1rem}
</style>"""


#: Style of a query's text (:func:`query_text`).
QUERY_TEXT_CSS = """<style>
div.query-text {background: rgba(128, 128, 128, 0.1); border-radius: 0.5rem;
  padding: 0.6rem 0.9rem; white-space: pre-wrap; overflow-wrap: anywhere; line-height: 1.5}
</style>"""


def query_text(text: str) -> None:
    """A query's text in a grey box, HTML-escaped (shown as text, never as markup). Not
    ``st.code``: its syntax highlighter is a 1.5 MB script the browser fetches and compiles at
    the first query a session opens (~2 s on a loaded machine)."""
    st.html(f'{QUERY_TEXT_CSS}<div class="query-text">{html.escape(str(text))}</div>')


#: Styles of the query-detail tables (gold rows carry their own inline background).
RANKING_CSS = """<style>
table.ranking {border-collapse: collapse; width: 100%; font-size: 0.88rem}
table.ranking th, table.ranking td {padding: 0.25rem 0.5rem; vertical-align: top;
  border-bottom: 1px solid rgba(128, 128, 128, 0.25); text-align: left}
table.ranking mark {background: #F0E442; color: inherit; padding: 0 0.1rem}
table.ranking span[class^=mark-] {font-size: 0.75rem; border-radius: 0.3rem;
  padding: 0 0.3rem; margin-right: 0.2rem; background: rgba(128, 128, 128, 0.18)}
table.ranking span.mark-gold {background: #009E73; color: white}
table.ranking span.mark-twin, table.ranking span.mark-stack {background: #E69F00; color: black}
</style>"""


#: Streamlit's lazily loaded chart components whose code the browser may load ahead
CHART_CHUNKS = {"plotly": "PlotlyChart", "deck": "DeckGlJsonChart"}
#: after the first file, the browser loads the next one only once the visitor has been quiet
#: (no click or key, no busy gap between idle periods) for this many milliseconds
PRELOAD_QUIET_MS = 3000
_PRELOAD_JS = """<script>
(function () {
  if (window.__chartsPreloaded) { return; }
  window.__chartsPreloaded = true;
  var main = document.querySelector('script[type="module"][src*="static/js/index"]');
  if (!main) { return; }
  var idle = window.requestIdleCallback || function (f) { setTimeout(f, 50); };
  var quietSince = performance.now(), last = quietSince;
  var input = function () { quietSince = performance.now(); };
  window.addEventListener('pointerdown', input, true);
  window.addEventListener('keydown', input, true);
  var load = function (i) {
    if (i >= FILES.length) {
      window.removeEventListener('pointerdown', input, true);
      window.removeEventListener('keydown', input, true);
      return;
    }
    var wait = function () {
      var now = performance.now();
      if (now - last > 200) { quietSince = now; }  // the browser was busy in between
      last = now;
      if (i > 0 && now - quietSince < QUIET) { idle(wait); return; }
      import(new URL(FILES[i], main.src).href).catch(function () {}).then(function () {
        quietSince = last = performance.now();
        load(i + 1);
      });
    };
    idle(wait);
  };
  load(0);
})();
</script>"""


def preload_charts(*kinds: str) -> None:
    """Let the browser load the code of the chart components ``kinds`` (keys of
    :data:`CHART_CHUNKS`) in idle time, once per browser tab: Streamlit loads a chart's code
    (plotly.js: 4.7 MB, deck.gl: 3 MB) when the first chart of its kind is drawn, and the
    browser then spends seconds compiling it while the visitor waits for that page. Loaded
    here, the code is shared with Streamlit's own loading (one module per URL). The first file
    once the browser is idle (no deadline): forced in earlier, the compiling would slow down the
    drawing of the page that asked for it. Each next one once it is loaded and the visitor has
    been quiet for :data:`PRELOAD_QUIET_MS` (on any page: the browser keeps the tab's scripts
    from page to page): loaded at once, its compiling would slow down the page a quick visitor
    opens next, which usually needs the first file only (plotly; deck.gl draws the Map page's
    maps alone). Nothing with ``RETRIEVAL_DASHBOARD_WARM_UP=0``
    (:func:`ui.visitors.warm_up_off`)."""
    if visitors.warm_up_off():
        return
    files = _compat.chart_chunks(tuple(CHART_CHUNKS[k] for k in kinds))
    if files:
        files_js = json.dumps([f"./{f}" for f in files])
        js = _PRELOAD_JS.replace("QUIET", str(PRELOAD_QUIET_MS)).replace("FILES", files_js)
        st.html(js, unsafe_allow_javascript=True)


def upload_expander(sel: Selection) -> None:
    """The "Add a run" expander of the home page: an uploaded run joins a dataset for this
    session (errors name the file and line)."""
    if sel.bundle is None:
        return
    with st.expander("Add a run (upload)", expanded=False):
        names = list(sel.bundle.datasets)
        index = names.index(sel.dataset) if sel.dataset in names else 0
        target = st.selectbox("Dataset of the run", names, index=index, key="upload_dataset")
        uploaded = st.file_uploader(
            "Run file (TREC run, ranx JSON, STaRK eval_results CSV, or a query_id/doc_id/score "
            "table; PyTerrier's qid/docno/score too)",
            key="upload_file",
        )
        if uploaded is None or not target:
            return
        if uploaded.size > MAX_UPLOAD_BYTES:
            st.error(
                escape_markdown(
                    f"{uploaded.name}: the file is {uploaded.size / 2**20:.1f} MB, larger than "
                    f"the {MAX_UPLOAD_MB} MB limit for uploads; put large runs in a "
                    "bundle folder instead"
                )
            )
            return
        before = dict(data.uploads(target))
        try:
            model = data.add_upload(target, uploaded.name, uploaded.getvalue())
        except InputError as exc:
            st.error(escape_markdown(str(exc)))
            return
        if before.get(model) != data.uploads(target).get(model):
            st.rerun()  # a new run: draw the sidebar again so it lists the model
        st.success(escape_markdown(f"Added model {model} to {target}."))
