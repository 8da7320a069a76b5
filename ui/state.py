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

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import streamlit as st

from analysis.core.errors import InputError
from analysis.core.measures import REGISTRY
from analysis.core.metrics import TIE_POLICIES, parse_metrics
from analysis.core.plugins import env_plugins, load_plugins
from analysis.io.bundle import Bundle, DatasetSpec
from ui import _compat, cards, data, visitors
from ui.urlstate import bounded

ROOT = Path(__file__).resolve().parents[1]
WRITTEN = "_url_written"


_compat.skip_repl_check()
URL_KEYS = {
    "bundle": "bundle",
    "dataset": "dataset",
    "split": "split",
    "model_a": "a",
    "model_b": "b",
    "metric": "metric",
    "ties": "ties",
}
#: URL keys of earlier links, read once and then replaced: ``datasets`` (a list; its first known
#: dataset is taken) and ``k`` (with ``metric=hit`` it means ``hit@k``).
LEGACY_KEYS = ("datasets", "k")
ALL_SPLITS = "all"
DEFAULT_K = 10


@dataclass(frozen=True)
class Selection:
    """What the shared sidebar selects: one bundle, ONE dataset (and split), model A/B among the
    models with a run on that dataset, one of the dataset's headline metrics and the tie policy.

    ``model_a``/``model_b`` are ``None`` when the dataset has no run (``model_b`` also when it
    has a single model). ``datasets`` is ``[dataset]`` (empty without a bundle), for views that
    take a list. ``measure``/``k`` split the metric name (``k`` is 10 for MRR without cutoff).
    ``split`` is ``None`` when the dataset has no splits, else a split name or ``"all"``."""

    bundle_id: str
    bundle: Bundle | None
    datasets: list[str]
    model_a: str | None
    model_b: str | None
    metric: str
    ties: str
    split: str | None = None

    @property
    def dataset(self) -> str | None:
        return self.datasets[0] if self.datasets else None

    @property
    def measure(self) -> str:
        return parse_metrics([self.metric])[0].measure

    @property
    def k(self) -> int:
        return parse_metrics([self.metric])[0].k or DEFAULT_K

    @property
    def models(self) -> list[str]:
        return [m for m in (self.model_a, self.model_b) if m is not None]

    def url_params(self) -> dict[str, str]:
        """The shared values as URL query parameters (for links that keep the selection)."""
        return {
            key: value
            for key, value in (
                ("bundle", self.bundle_id),
                ("dataset", self.dataset or ""),
                ("split", self.split or ""),
                ("a", self.model_a or ""),
                ("b", self.model_b or ""),
                ("metric", self.metric),
                ("ties", self.ties),
            )
            if value
        }


def headline_metrics(spec: DatasetSpec | None) -> list[str]:
    """The dataset's headline metrics (the manifest's ``metrics`` list), canonical names, in
    manifest order, then the user measures (plugins) at cutoff :data:`DEFAULT_K` (bare when
    they take none); names the metric parser rejects are left out."""
    out: list[str] = []
    users = [m.name if m.dashboard == "bare" else f"{m.name}@{DEFAULT_K}"
             for m in REGISTRY.values() if m.user]  # fmt: skip
    for label in [*(spec.metrics if spec is not None else ()), *users]:
        try:
            name = parse_metrics([label])[0].name
        except ValueError:
            continue
        if name not in out:
            out.append(name)
    return out or ["mrr"]


def splits_of(spec: DatasetSpec | None) -> tuple[list[str], str | None]:
    """The split choices of a dataset (its split names, then ``"all"``) and the default (the
    manifest's default split, else ``"all"``); ``([], None)`` without splits."""
    names = list(getattr(spec, "splits", None) or {}) if spec is not None else []
    if not names:
        return [], None
    default = getattr(spec, "default_split", None)
    return [*names, ALL_SPLITS], default if default in names else ALL_SPLITS


def _adopt(
    name: str, parse: Callable[[str], object], valid: Callable[[object], bool], default: object
) -> object:
    """The current value of shared ``name``: a URL value we did not write wins, then the copy,
    then ``default``."""
    copy = f"_sel_{name}"
    raw = bounded(URL_KEYS[name])
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


def page_label(path: Path) -> str:
    """Navigation label of a page file: ``3_Compare.py`` -> ``Compare``, ``7_Open_data.py`` ->
    ``Open data`` (Streamlit's own rule for the pages/ directory)."""
    return re.sub(r"^\d+[_ -]*", "", path.stem).replace("_", " ") or path.stem


def navigation() -> None:
    """The page links at the top of the sidebar: "Home" (the entry script) first, then every
    file of ``pages/`` in name order. Streamlit's own list is off
    (``client.showSidebarNavigation = false``) because it labels the entry script by its file
    name."""
    st.sidebar.page_link("app.py", label="Home")
    for path in sorted((ROOT / "pages").glob("*.py")):
        st.sidebar.page_link(f"pages/{path.name}", label=page_label(path))
    st.sidebar.divider()


def sidebar() -> Selection:
    """Draw the shared sidebar and return the selection (call first on every page)."""
    visitors.note_run()
    navigation()
    _plugins()
    bundle_id, bundle = _bundle()
    dataset = _dataset(bundle)
    spec = bundle.datasets.get(str(dataset)) if bundle else None
    split = _split(spec)
    model_a, model_b = _models(bundle, dataset)
    metric = _metric(spec)
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
        datasets=[str(dataset)] if dataset else [],
        model_a=model_a,  # type: ignore[arg-type]
        model_b=model_b if model_b != model_a else None,  # type: ignore[arg-type]
        metric=str(metric),
        ties=str(ties),
        split=split,
    )
    write_url(selection.url_params())
    from ui.paper import cjk_font_warning

    cjk_font_warning(bundle, selection.dataset)
    return selection


def _bundle() -> tuple[str, Bundle | None]:
    """The bundle selector and the bundle read (``None``: none, or unreadable, said in the
    sidebar with each dataset the manifest had to leave out)."""
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
    return bundle_id, bundle


def _dataset(bundle: Bundle | None) -> str | None:
    """The dataset selector; it opens on the first dataset with a run."""
    names = list(bundle.datasets) if bundle else []
    _adopt_legacy_dataset(names)
    with_runs = [n for n in names if bundle and data.models_of(bundle, [n])]
    return _select(
        "Dataset",
        "dataset",
        names,
        (with_runs or names or [None])[0],  # open on the first dataset with a run
        help="Every page shows this dataset (one benchmark dataset at a time: no statistic "
        "pools queries of different datasets). The home page lists every dataset's leaderboard.",
    )


def _split(spec: DatasetSpec | None) -> str | None:
    """The split selector, when the dataset has splits (the manifest's default first)."""
    split_names, split_default = splits_of(spec)
    if not split_names:
        return None
    return str(
        _select(
            "Split",
            "split",
            split_names,
            split_default,
            help="The queries of one split of the dataset (the manifest's default split "
            "first); 'all' = every query.",
        )
    )


def _models(bundle: Bundle | None, dataset: str | None) -> tuple[str | None, str | None]:
    """The model A and model B selectors: the models with a run on the dataset (B: the
    others)."""
    models = data.models_of(bundle, [str(dataset)]) if bundle and dataset else []
    model_a = _select(
        "Model A",
        "model_a",
        models or [None],
        models[0] if models else None,
        help="The model most views show; Compare puts it against model B. Only models with a "
        "run on the selected dataset are offered.",
    )
    others = [m for m in models if m != model_a] or [None]
    model_b = _select("Model B", "model_b", others, others[0], help="The model compared with A.")
    return model_a, model_b


def _metric(spec: DatasetSpec | None) -> str:
    """The metric selector (its help and an "About" popover hold the selected metric's card)."""
    metrics = headline_metrics(spec)
    _adopt_legacy_metric(metrics)
    current = _adopt("metric", str, lambda v: v in metrics, metrics[0])
    key, on_change = _widget("metric")  # as _select, without reading the URL a second time
    metric = st.sidebar.selectbox(
        "Metric",
        metrics,
        key=key,
        on_change=on_change,
        help="The dataset's headline metrics (the bundle manifest's metrics list) and the "
        "measures of metric plugins.\n\n" + cards.markdown(str(current)),
    )
    cards.about(str(metric), key="about_metric_sidebar", sidebar=True)
    return str(metric)


def _plugins() -> None:
    """Load the metric plugins named by ``RETRIEVAL_DASHBOARD_PLUGINS`` (once per process;
    :mod:`analysis.core.plugins`); one error line in the sidebar for a plugin that fails."""
    try:
        load_plugins(env_plugins())
    except InputError as exc:
        st.sidebar.error(_escape(f"A metric plugin could not be loaded: {exc}"))


def _adopt_legacy_dataset(names: list[str]) -> None:
    """A link of the earlier layout (``datasets=a,b``) selects its first known dataset."""
    raw = st.query_params.get("datasets")
    if raw is None or st.query_params.get("dataset") is not None:
        return
    known = [n for n in _parse_list(raw) if n in names]
    if known:
        st.query_params["dataset"] = known[0]


def _adopt_legacy_metric(metrics: list[str]) -> None:
    """A link of the earlier layout (``metric=hit&k=5``) means ``metric=hit@5``."""
    raw, k = st.query_params.get("metric"), st.query_params.get("k")
    if raw is None or k is None or "@" in raw or raw == "mrr":
        return
    name = f"{raw}@{k}"
    if name in metrics:
        st.query_params["metric"] = name


def write_url(params: dict[str, str]) -> None:
    """Put the shared ``params`` into the URL (page-local keys such as ``q`` stay) and remember
    what was written."""
    shared = set(URL_KEYS.values()) | set(LEGACY_KEYS)
    current = st.query_params.to_dict()
    wanted = {k: v for k, v in current.items() if k not in shared} | params
    if current != wanted:
        st.query_params.from_dict(wanted)
    st.session_state[WRITTEN] = dict(params)
