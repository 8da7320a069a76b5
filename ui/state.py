"""The shared sidebar: bundle, datasets, model A/B, metric, k and tie policy, kept across pages
and in the URL.

The pattern (see the design notes): every page first calls :func:`sidebar`. Each shared value
has a non-widget copy in ``st.session_state`` (``_sel_<name>``) that survives page switches; the
widget's key (``w_<name>``) is re-seeded from the copy on every run and the copy is updated in the
widget's ``on_change`` callback. The values are written to the URL with
``st.query_params.update``, and what was written is remembered: a valid URL value that this
session did not write (a deep link, browser Back/Forward) wins over the copy; an invalid one is
ignored. Widgets are not bound to the URL (``bind=...``), on purpose.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import streamlit as st

from analysis.core.errors import InputError
from analysis.core.metrics import TIE_POLICIES
from analysis.io.bundle import Bundle
from analysis.stats.perquery import CUTOFFS, MEASURE_HELP, MEASURES, metric_column
from ui import data

WRITTEN = "_url_written"
URL_KEYS = {
    "bundle": "bundle",
    "datasets": "datasets",
    "model_a": "a",
    "model_b": "b",
    "measure": "metric",
    "k": "k",
    "ties": "ties",
}


@dataclass(frozen=True)
class Selection:
    """What the shared sidebar selects. ``model_a``/``model_b`` are ``None`` when the selected
    datasets have no run at all (``model_b`` also when there is a single model)."""

    bundle_id: str
    bundle: Bundle | None
    datasets: list[str]
    model_a: str | None
    model_b: str | None
    measure: str
    k: int
    ties: str

    @property
    def metric(self) -> str:
        """The per-query column of the selected measure at the selected cutoff."""
        return metric_column(self.measure, self.k)

    @property
    def models(self) -> list[str]:
        return [m for m in (self.model_a, self.model_b) if m is not None]

    def url_params(self) -> dict[str, str]:
        """The shared values as URL query parameters (for links that keep the selection)."""
        return {
            key: value
            for key, value in (
                ("bundle", self.bundle_id),
                ("datasets", ",".join(self.datasets)),
                ("a", self.model_a or ""),
                ("b", self.model_b or ""),
                ("metric", self.measure),
                ("k", str(self.k)),
                ("ties", self.ties),
            )
            if value
        }


def _adopt(
    name: str, parse: Callable[[str], object], valid: Callable[[object], bool], default: object
) -> object:
    """The current value of shared ``name``: a URL value we did not write wins, then the copy,
    then ``default``."""
    copy = f"_sel_{name}"
    raw = st.query_params.get(URL_KEYS[name])
    written = st.session_state.get(WRITTEN, {})
    if raw is not None and raw != written.get(URL_KEYS[name]):
        try:
            value = parse(raw)
        except ValueError:
            value = None
        if value is not None and valid(value):
            st.session_state[copy] = value
    if copy not in st.session_state or not valid(st.session_state[copy]):
        st.session_state[copy] = default
    return st.session_state[copy]


def _widget(name: str) -> tuple[str, Callable[[], None]]:
    """The widget key of shared ``name`` (re-seeded from the copy) and its on_change callback."""
    copy, key = f"_sel_{name}", f"w_{name}"
    st.session_state[key] = st.session_state[copy]

    def on_change() -> None:
        st.session_state[copy] = st.session_state[key]

    return key, on_change


def _select(
    label: str,
    name: str,
    options: Sequence[object],
    default: object,
    parse: Callable[[str], object] = str,
    **kwargs: object,
) -> object:
    _adopt(name, parse, lambda v: v in options, default)
    key, on_change = _widget(name)
    return st.sidebar.selectbox(label, options, key=key, on_change=on_change, **kwargs)


def _escape(text: str) -> str:
    from analysis.present.export import escape_markdown

    return escape_markdown(text)


def _parse_list(raw: str) -> list[str]:
    """A comma list from the URL, empty items dropped and repeats removed (first kept), so
    ``?datasets=beijing,beijing`` is one dataset, not twice its queries."""
    return list(dict.fromkeys(item for item in raw.split(",") if item))


def sidebar() -> Selection:
    """Draw the shared sidebar and return the selection (call first on every page)."""
    bundles = data.available_bundles()
    ids = list(bundles)
    bundle_id = str(
        _select(
            "Bundle",
            "bundle",
            ids,
            ids[0] if ids else "",
            help="A folder with a bundle.toml under the configured data roots.",
        )
    )
    bundle: Bundle | None = None
    try:
        bundle = data.load_bundle(bundles[bundle_id]) if bundle_id in bundles else None
    except (InputError, OSError) as exc:
        st.sidebar.error(_escape(f"The bundle could not be read: {exc}"))
    for name, message in (bundle.broken if bundle else {}).items():
        st.sidebar.error(_escape(f"Dataset {name} is left out: {message}"))
    names = list(bundle.datasets) if bundle else []

    _adopt("datasets", _parse_list, lambda v: isinstance(v, list) and set(v) <= set(names), names)
    key, on_change = _widget("datasets")
    datasets = st.sidebar.multiselect(
        "Datasets",
        names,
        key=key,
        on_change=on_change,
        help="Every page shows these datasets.",
    )

    models = data.models_of(bundle, datasets) if bundle else []
    model_a = _select(
        "Model A",
        "model_a",
        models or [None],
        models[0] if models else None,
        help="The model most views show; Compare puts it against model B.",
    )
    others = [m for m in models if m != model_a] or [None]
    model_b = _select("Model B", "model_b", others, others[0], help="The model compared with A.")

    measure = _select(
        "Metric",
        "measure",
        list(MEASURES),
        "hit",
        format_func=lambda m: {"mrr": "MRR", "ndcg": "nDCG"}.get(m, m.capitalize()),
        help=" ".join(MEASURE_HELP.values()),
    )
    k = _select(
        "Cutoff k",
        "k",
        list(CUTOFFS),
        10,
        parse=int,
        disabled=measure == "mrr",
        help="The rank cutoff of the metric (not used by MRR).",
    )
    ties = _select(
        "Ties",
        "ties",
        list(TIE_POLICIES),
        "trec_eval",
        help="Order of equal scores: trec_eval (doc id descending, as trec_eval) "
        "or stable (file order).",
    )

    selection = Selection(
        bundle_id=bundle_id,
        bundle=bundle,
        datasets=list(datasets),
        model_a=model_a,
        model_b=model_b if model_b != model_a else None,
        measure=str(measure),
        k=int(k),
        ties=str(ties),
    )
    write_url(selection.url_params())
    return selection


def write_url(params: dict[str, str]) -> None:
    """Put the shared ``params`` into the URL (page-local keys such as ``q`` stay) and remember
    what was written."""
    shared = set(URL_KEYS.values())
    current = st.query_params.to_dict()
    wanted = {k: v for k, v in current.items() if k not in shared} | params
    if current != wanted:
        st.query_params.from_dict(wanted)
    st.session_state[WRITTEN] = dict(params)


def local_param(name: str) -> str | None:
    """A page-local URL parameter (e.g. the selected query id ``q``)."""
    return st.query_params.get(name)


def set_local_param(name: str, value: str | None) -> None:
    """Set (or remove, with ``None``) a page-local URL parameter."""
    if value is None:
        if name in st.query_params:
            del st.query_params[name]
    elif st.query_params.get(name) != value:
        st.query_params[name] = value
