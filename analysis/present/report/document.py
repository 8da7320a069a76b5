"""The report as one self-contained HTML document (:func:`render_html`): plotly.js inlined once
(``include_plotlyjs=True`` for the first figure, ``False`` after), no external URL (no web font:
the font stack names locally installed fonts, Noto Sans CJK first for Chinese text), every data
string through :func:`analysis.present.escape.escape_html`."""

from __future__ import annotations

from analysis.present.escape import escape_html
from analysis.present.export import PLOTLY_CONFIG, to_html
from analysis.present.palette import FONT_FAMILY
from analysis.present.report.metric_cards import card_key
from analysis.present.report.model import N_RESAMPLES, SEED, Block, QueryView, ReportContent

__all__ = ["render_html"]


_CSS = """
body{font-family:FONTS;margin:0;color:#222;
line-height:1.45;background:#fff}
header,section{max-width:1200px;margin:0 auto;padding:1.2rem 2rem}
section{border-top:1px solid #ddd}
h1{font-size:2rem;margin:.2rem 0}h2{font-size:1.6rem}h3{font-size:1.2rem;margin-top:1.6rem}
nav a{margin-right:1rem}
table{border-collapse:collapse;margin:.6rem 0;font-size:.9rem}
th,td{border-bottom:1px solid #ddd;padding:.25rem .6rem;text-align:left;vertical-align:top}
th{border-bottom:2px solid #444}
td.num{text-align:right;font-variant-numeric:tabular-nums}
p.notes,p.caption{font-size:.85rem;color:#555}
.summary li{font-size:1.1rem;margin:.3rem 0}
.query-text{white-space:pre-wrap;background:#f6f6f6;padding:.5rem;border-radius:4px}
.figure{margin:.8rem 0}
@media print{section{page-break-before:always}}
""".replace("FONTS", FONT_FAMILY)


def _text_html(block: Block) -> str:
    items = "".join(f"<li>{escape_html(t)}</li>" for t in block.text)
    return f'<ul class="summary">{items}</ul>'


def _query_html(view: QueryView, key: str) -> str:
    diff = ""
    if view.diff:
        items = "".join(f"<li>{escape_html(t)}</li>" for t in view.diff)
        diff = f'<h4>What changed from A to B</h4><ul class="written-diff">{items}</ul>'
    return (
        f'<p class="query-text">{escape_html(view.text)}</p>'
        + to_html(view.facts, table_id=f"table-{key}-facts")
        + diff
        + "<h4>Gold</h4>"
        + to_html(view.gold, table_id=f"table-{key}-gold")
        + "<h4>Rankings</h4>"
        + to_html(view.rankings, table_id=f"table-{key}-rankings")
    )


def _metric_link(metric: str, cards: set[str]) -> str:
    """The metric name, linked to its card in the Metrics section when there is one."""
    key = card_key(metric)
    name = escape_html(metric)
    return f'<a href="#block-{escape_html(key)}">{name}</a>' if key in cards else name


def render_html(content: ReportContent) -> str:
    """The report as one self-contained HTML document (plotly.js inlined once, no external
    URL; every data string escaped)."""
    esc = escape_html
    nav = "".join(f'<a href="#{s.key}">{esc(s.title)}</a>' for s in content.sections)
    models = ", ".join(
        f"{label} = {esc(m)}" for label, m in (("A", content.model_a), ("B", content.model_b)) if m
    )
    cards = {b.key for s in content.sections if s.key == "metrics" for b in s.blocks}
    metrics = "; ".join(f"{esc(d)}: {_metric_link(m, cards)}" for d, m in content.metrics.items())
    splits = "; ".join(f"{esc(d)}: {esc(s)}" for d, s in content.splits.items())
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>Retrieval error analysis report — {esc(content.bundle)}</title>",
        f"<style>{_CSS}</style></head><body>",
        "<header><h1>Retrieval error analysis report</h1>",
        f'<p id="meta">Bundle: {esc(content.bundle)}. Datasets: '
        f"{esc(', '.join(content.datasets)) or 'none'}. Models: {models or 'none'}. "
        f"Report metric: {metrics or 'none'}. "
        + (f"Split: {splits}. " if splits else "")
        + f"Ties: {esc(content.ties)}. Bootstrap and "
        f"randomization: B = {N_RESAMPLES:,}, seed {SEED}.</p>",
        f"<nav>{nav}</nav></header>",
    ]
    plotly_inlined = False
    for section in content.sections:
        parts.append(f'<section id="{esc(section.key)}"><h2>{esc(section.title)}</h2>')
        parts.append(f'<p class="caption">{esc(section.intro)}</p>')
        for block in section.blocks:
            parts.append(f'<div class="block" id="block-{esc(block.key)}">')
            if block.kind != "text" or block.title != section.title:
                parts.append(f"<h3>{esc(block.title)}</h3>")
            if block.caption:
                parts.append(f'<p class="caption">{esc(block.caption)}</p>')
            if block.kind == "text":
                parts.append(_text_html(block))
            elif block.kind == "figure" and block.figure is not None:
                div = block.figure.to_html(
                    full_html=False,
                    include_plotlyjs=not plotly_inlined,
                    config=PLOTLY_CONFIG,
                    div_id=f"fig-{block.key}",
                )
                plotly_inlined = True
                parts.append(f'<div class="figure">{div}</div>')
            elif block.kind == "table" and block.table is not None:
                parts.append(to_html(block.table, table_id=f"table-{block.key}"))
            elif block.kind == "query" and block.query is not None:
                parts.append(_query_html(block.query, block.key))
            parts.append("</div>")
        parts.append("</section>")
    parts.append("</body></html>\n")
    return "\n".join(parts)
