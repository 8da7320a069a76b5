"""The Map page's building blocks: pydeck decks, the point table of one query, stack tables,
and the offline context layer.

Pure functions over pandas tables (no Streamlit); :mod:`analysis.geo` does the geometry
(stacks, twins, per-query diagnostics), this module shapes it for display.

Display conventions:

* **Maps work offline.** The basemap is ``"none"`` by default: ``pdk.Deck(map_provider=None)``
  and no ``map_style``, so nothing needs the internet. ``"carto"`` draws CARTO's positron tiles,
  which the *browser* downloads from cartocdn.com.
* **Every layer has an ``id`` and ``pickable=True``**, and every row of a POI layer carries its
  ``doc_id``, so a click (Streamlit's ``on_select="rerun"``) tells the page which POI was chosen
  (:func:`selected_doc`). A click on a stack column selects the column's first POI.
* **Tooltips** use one HTML template over three fields per row, ``tip_title``, ``tip_name`` and
  ``tip_detail``. Everything that comes from data (POI names, query text, ids, model names) is
  passed through :func:`html.escape` into these fields, braces ``{ }`` included
  (:func:`escape_text`), so a POI called ``<img src=x onerror=alert(1)>`` or ``{tip_detail}``
  is shown as text by any renderer of the template. (Streamlit 1.67's own tooltip code escapes
  interpolated values once more, so ``&``, ``<``, ``>``, quotes and braces in a name appear
  as entities there: safe, slightly ugly.)
* **Jitter only in display.** Points that share a coordinate (a stack; or the same POI as gold,
  in A's and in B's list) are spread on a small sunflower spiral (:func:`jitter`, a few metres)
  in the *display* columns ``x_lat``/``x_lon``; ``lat``/``lon`` keep the true coordinates, and
  distances and stacks are always computed from those.
* **Colours**: the query is purple; gold POIs are large amber discs; model A's retrieved POIs are
  blue, model B's orange, dark for a hit (the POI is relevant) and pale for a miss; arcs from the
  query take the colour of the point they end at; stack columns are grey, height = stack size.
"""

from analysis.geo.mapdata.base import (
    BASEMAPS,
    GOLD_COLOR,
    JITTER_STEP_M,
    KEEP_RANKS,
    MAX_K,
    MODEL_COLORS,
    TOLERANCES,
    TOOLTIP,
    StaticDeck,
    default_query,
    escape_text,
    has_coordinates,
    jitter,
    parse_basemap,
    parse_tolerance,
)
from analysis.geo.mapdata.query import query_deck, query_points, query_ranking, topk_index
from analysis.geo.mapdata.stacks import (
    dataset_deck,
    histogram_figure,
    largest_stacks_table,
    poi_index,
    stack_members,
)
from analysis.geo.mapdata.tables import (
    DIAGNOSTIC_LABELS,
    query_diagnostics_table,
    selected_doc,
    strict_vs_twin_aware,
    twin_aware_table,
)

__all__ = [
    "BASEMAPS",
    "DIAGNOSTIC_LABELS",
    "GOLD_COLOR",
    "JITTER_STEP_M",
    "KEEP_RANKS",
    "MAX_K",
    "MODEL_COLORS",
    "TOLERANCES",
    "TOOLTIP",
    "StaticDeck",
    "dataset_deck",
    "default_query",
    "escape_text",
    "has_coordinates",
    "histogram_figure",
    "jitter",
    "largest_stacks_table",
    "parse_basemap",
    "parse_tolerance",
    "poi_index",
    "query_deck",
    "query_diagnostics_table",
    "query_points",
    "query_ranking",
    "selected_doc",
    "stack_members",
    "strict_vs_twin_aware",
    "topk_index",
    "twin_aware_table",
]
