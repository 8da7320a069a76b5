"""One query's documents as the Queries page shows them: text with the query's terms
highlighted, gold rows marked, and for POIs the distance to the query and twin / stack marks.

Safety: every text from data is HTML-escaped (:func:`~analysis.present.escape.escape_html`,
which also drops the directional overrides that would reverse the text after them); the only
markup produced is ``<mark>`` around escaped substrings and the table's own tags, so no HTML,
Markdown or script from a data file can reach the page.

Query terms (:func:`query_terms`): the query's words (:func:`analysis.baselines.retrievers.words`:
NFKC, case-folded, CJK runs kept whole) without English stop words and one-letter Latin words;
a CJK run also contributes its character bigrams, since Chinese text has no spaces (a query
"北京银行" highlights "银行" in a POI name). Matching is case-insensitive and literal.

The module never imports streamlit.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence

import numpy as np
import pandas as pd

from analysis.baselines.retrievers import ENGLISH_STOPWORDS, words
from analysis.geo.geometry import haversine_m, normalize_text
from analysis.present.escape import escape_html
from analysis.present.palette import GOLD_ROW_CSS

__all__ = ["geo_marks", "highlight_html", "query_terms", "ranking_html"]

_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]+")
MAX_TERMS = 64
TEXT_CHARS = 600


def query_terms(text: str) -> list[str]:
    """The terms of a query to highlight (module docstring), longest first, at most 64."""
    out: dict[str, None] = {}
    for word in words(str(text)):
        if word in ENGLISH_STOPWORDS or (len(word) < 2 and not _CJK.fullmatch(word)):
            continue
        out[word] = None
        for run in _CJK.findall(word):
            for i in range(len(run) - 1):
                out[run[i : i + 2]] = None
    return sorted(out, key=lambda t: (-len(t), t))[:MAX_TERMS]


def highlight_html(text: str, terms: Sequence[str], limit: int = TEXT_CHARS) -> str:
    """``text`` (cut to ``limit`` characters with "…") HTML-escaped, with every occurrence of a
    term wrapped in ``<mark>`` (case-insensitive, NFKC-folded; overlapping matches merged)."""
    raw = str(text)
    if len(raw) > limit:
        raw = raw[: limit - 1] + "…"
    if not terms:
        return escape_html(raw)
    folded = unicodedata.normalize("NFKC", raw).casefold()
    if len(folded) != len(raw):  # folding changed lengths: match on the raw text instead
        folded = raw.casefold()
    if len(folded) != len(raw):
        return escape_html(raw)
    pattern = re.compile("|".join(re.escape(t) for t in terms if t))
    spans: list[list[int]] = []
    for match in pattern.finditer(folded):
        if spans and match.start() <= spans[-1][1]:
            spans[-1][1] = max(spans[-1][1], match.end())
        else:
            spans.append([match.start(), match.end()])
    out, last = [], 0
    for start, end in spans:
        out.append(escape_html(raw[last:start]))
        out.append(f"<mark>{escape_html(raw[start:end])}</mark>")
        last = end
    out.append(escape_html(raw[last:]))
    return "".join(out)


def geo_marks(
    listing: pd.DataFrame,
    gold: pd.DataFrame,
    query_lat: float | None,
    query_lon: float | None,
) -> pd.DataFrame:
    """``listing`` (a ranking with ``doc_id, gold`` and POI ``lat, lon``, ``name``/``text``)
    with ``distance_m`` (haversine from the query; NaN without coordinates), ``stack`` (a
    non-gold POI on a gold POI's exact coordinate) and ``twin`` (a non-gold POI with a gold's
    normalized name/text and coordinate: indistinguishable from the gold)."""
    out = listing.copy()
    if not {"lat", "lon"} <= set(out.columns):
        return out
    lat = pd.to_numeric(out["lat"], errors="coerce").to_numpy(dtype=float)
    lon = pd.to_numeric(out["lon"], errors="coerce").to_numpy(dtype=float)
    if query_lat is None or query_lon is None:
        out["distance_m"] = np.nan
    else:
        out["distance_m"] = haversine_m(query_lat, query_lon, lat, lon)
    text_col = "name" if "name" in out.columns else "text" if "text" in out.columns else None
    has = {"lat", "lon"} <= set(gold.columns)
    g_lat = pd.to_numeric(gold["lat"], errors="coerce") if has else pd.Series(dtype=float)
    g_lon = pd.to_numeric(gold["lon"], errors="coerce") if has else pd.Series(dtype=float)
    spots = set(zip(g_lat.round(7), g_lon.round(7), strict=True))
    here = list(zip(np.round(lat, 7), np.round(lon, 7), strict=True))
    stacked = np.array([p in spots for p in here], dtype=bool) & ~out["gold"].to_numpy(bool)
    out["stack"] = stacked
    if text_col is not None and text_col in gold.columns and has:
        names = normalize_text(gold[text_col])
        keys = set(zip(names, g_lat.round(7), g_lon.round(7), strict=True))
        mine = normalize_text(out[text_col])
        twin = [(n, *p) in keys for n, p in zip(mine, here, strict=True)]
        out["twin"] = np.array(twin, dtype=bool) & ~out["gold"].to_numpy(bool)
    else:
        out["twin"] = False
    return out


def _distance(value: object) -> str:
    if value is None or pd.isna(value):
        return ""
    metres = float(value)
    return f"{metres:,.0f} m" if metres < 1000 else f"{metres / 1000:,.2f} km"


def ranking_html(
    listing: pd.DataFrame, terms: Sequence[str], *, text_chars: int = 300, no_text: str = ""
) -> str:
    """A ranking (or gold list) as an HTML table: rank, doc id, score, marks, name and text with
    the query terms highlighted; gold rows get :data:`GOLD_ROW_CSS`. Marks: ``gold``, ``tied``
    (score shared with another listed doc), ``twin``/``stack`` (see :func:`geo_marks`); POIs
    add a distance column. A listing without a ``score`` column (a rank-only run, see
    :func:`analysis.present.rankings.ranking_table`) has no score column; a row with neither
    name nor text shows ``no_text`` (e.g. "(no text: import with --skb)") in grey. Every value
    is escaped (module docstring)."""
    geo = "distance_m" in listing.columns
    scored = "score" in listing.columns
    head = ["rank", "doc id", *(["score"] if scored else []), "marks",
            *(["distance"] if geo else []), "name / text"]  # fmt: skip
    rows = ["<table class='ranking'><thead><tr>"]
    rows += [f"<th>{h}</th>" for h in head]
    rows.append("</tr></thead><tbody>")
    for rec in listing.to_dict("records"):
        gold = bool(rec.get("gold", False))
        marks = [m for m in ("gold", "tied", "twin", "stack") if bool(rec.get(m, False))]
        style = f" style='{GOLD_ROW_CSS}'" if gold else ""
        rank = rec.get("rank")
        score = rec.get("score")
        cells = [
            "" if rank is None or pd.isna(rank) else str(int(rank)),
            f"<code>{escape_html(str(rec.get('doc_id', '')))}</code>",
            *(["" if score is None or pd.isna(score) else f"{float(score):.4f}"] if scored else []),
            " ".join(f"<span class='mark-{m}'>{m}</span>" for m in marks),
            *([_distance(rec.get("distance_m"))] if geo else []),
            _name_text(rec, terms, text_chars, no_text),
        ]
        rows.append(f"<tr{style}>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
    rows.append("</tbody></table>")
    return "".join(rows)


def _name_text(rec: dict, terms: Sequence[str], text_chars: int, no_text: str) -> str:
    """The name (bold) and text of one row, highlighted, or the ``no_text`` placeholder."""
    name = "" if _blank(rec.get("name")) else str(rec.get("name"))
    text = "" if _blank(rec.get("text")) else str(rec.get("text"))
    body = ""
    if name:
        body += f"<b>{highlight_html(name, terms, 200)}</b>"
    if text and text != name:
        body += ("<br>" if body else "") + highlight_html(text, terms, text_chars)
    if not body and no_text:
        body = f"<span style='opacity:0.6'>{escape_html(no_text)}</span>"
    return body


def _blank(value: object) -> bool:
    return value is None or (not isinstance(value, str) and pd.isna(value)) or not str(value)
