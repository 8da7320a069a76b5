"""What an empty view says: why it is empty and what to do, in one place for every page.

* :func:`no_run_message`: a dataset without a run (an imported STaRK bundle's synthesized
  queries, when the STaRK folder held runs for the human-generated ones only);
* :func:`no_text_note`: an entity without name or text (a STaRK bundle imported without
  ``--skb`` knows its node ids only);
* :func:`cjk_font_message`: Chinese/Japanese/Korean text with no CJK font for the exporters;
* :func:`no_slice_message`: no slice reaches the page's minimum slice size;
* :func:`one_model_message`: a comparison of A and B on a dataset with one run;
* :func:`no_map_message`: the map of a dataset whose entities have no coordinates.

Messages are plain text (names from files as they are: the pages escape them). The module
never imports streamlit.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = [
    "NO_ENTITIES_TEXT",
    "NO_SKB_TEXT",
    "cjk_font_message",
    "no_map_message",
    "no_run_message",
    "no_slice_message",
    "no_text_note",
    "one_model_message",
]

#: Shown in place of a STaRK node's name/text when the bundle was imported without ``--skb``.
NO_SKB_TEXT = "(no text: import with --skb)"
#: Shown in place of a document's name/text when the dataset has no entities file.
NO_ENTITIES_TEXT = "(no text: the dataset has no entities file)"

_ADD_RUN = {
    "stark": "put STaRK's eval_results_<split>.csv in runs/<model>/ of the STaRK folder and "
    "import it again (python -m analysis import stark --root DIR --out BUNDLE)",
    "spatial": "import the folder again with --baselines (BM25, character n-gram and "
    "distance-fusion runs), or name run files in the dataset's runs in bundle.toml",
    "generic": "name run files in the dataset's runs in bundle.toml",
}


def no_run_message(dataset: str, family: str, with_runs: Sequence[str]) -> str:
    """Why ``dataset`` shows no per-query results, where the runs are (``with_runs``: the
    bundle's datasets that have one) and how to add one (the importer's way for the dataset's
    ``family``, or an upload on the Home page)."""
    where = (
        f"The bundle's runs are on {_names(with_runs)}: open it to see per-query results."
        if with_runs
        else "No dataset of this bundle has a run."
    )
    how = _ADD_RUN.get(family, _ADD_RUN["generic"])
    return (
        f"{dataset} has no run, so there are no per-query results to show. {where} "
        f"To evaluate {dataset}, {how}; or upload a run on the Home page (Add a run)."
    )


def _names(names: Sequence[str]) -> str:
    shown = list(names[:4]) + ([f"{len(names) - 4} more"] if len(names) > 4 else [])
    return ", ".join(shown[:-1]) + f" and {shown[-1]}" if len(shown) > 1 else shown[0]


def no_text_note(family: str) -> str:
    """The placeholder of an entity with neither name nor text: a STaRK dataset needs the SKB
    (``import stark --skb DIR``), others an entities file."""
    return NO_SKB_TEXT if family == "stark" else NO_ENTITIES_TEXT


def cjk_font_message(install: str = "apt-get install fonts-noto-cjk") -> str:
    """The warning when the data holds CJK text and no CJK font is installed."""
    return (
        "Chinese, Japanese and Korean text will show as boxes in exported images and slides: "
        f"no CJK font is installed for the exporter. Install one ({install}, or any Noto Sans "
        "CJK / Source Han Sans font) and restart."
    )


def no_slice_message(column: str | None, min_size: int, largest: int) -> str:
    """Why no slice is drawn: none of ``column``'s values (``None``: of any slice column) has
    ``min_size`` queries; ``largest`` is the biggest slice's query count (0: no query), and
    the way out is a smaller minimum (the Minimum slice size field, ``min_n`` in the URL)."""
    of = f"of {column} " if column else ""
    if largest < 1:
        return f"No slice {of}has a query with a result for the selected models."
    return (
        f"No slice {of}has at least {min_size:,} queries (the largest has {largest:,}). "
        f"Set Minimum slice size to {largest:,} or less to see the slices."
    )


def one_model_message(dataset: str, models: Sequence[str], with_two: Sequence[str]) -> str:
    """Why a comparison of model A and model B is empty on ``dataset``: it has the run(s)
    ``models`` (one, or none), and where two are (``with_two``: datasets with two runs or
    more) or how to add a second. With two runs or more, it asks for a model B."""
    if len(models) > 1:
        return f"Choose a model B in the sidebar: {dataset} has {len(models)} runs."
    have = f"only one run ({models[0]})" if models else "no run"
    where = f" The bundle's datasets with two runs or more: {_names(with_two)}." if with_two else ""
    return (
        f"{dataset} has {have}, and this needs two: model A and model B.{where} "
        "To compare on this dataset, add a second run: upload one on the Home page (Add a "
        "run) or name it in the dataset's runs in bundle.toml."
    )


def no_map_message(dataset: str, family: str, spatial: Sequence[str]) -> str:
    """Why the map of ``dataset`` is empty: its entities have no lat/lon (STaRK's knowledge-base
    nodes never do); ``spatial``: the bundle's spatial datasets to open instead, else how to
    get one (an importer of POIs, or the demo)."""
    why = " (STaRK's knowledge-base entities have no location)" if family == "stark" else ""
    where = (
        f"The bundle's spatial datasets: {_names(spatial)}: open one to see its map."
        if spatial
        else "No dataset of this bundle has coordinates: import POIs with their location "
        "(python -m analysis import geoglue|list|geobloom), or open the demo bundle's beijing, "
        "shanghai or geo-glue."
    )
    return (
        f"{dataset}'s entities have no lat/lon coordinates{why}, so there is nothing to draw "
        f"on a map. {where}"
    )
