"""The slide deck as one offline HTML file (:func:`render_deck`).

Each slide is a 1280 x 720 px stage (:data:`~analysis.present.report.deck.STAGE`), scaled by
the inline script to the window and centred (letterboxed to 16:9), so the same file fits
1280 x 720 and 1920 x 1080. Keys: → ↓ PageDown Space = next, ← ↑ PageUp = previous, Home / End;
a click on the left third goes back, elsewhere forward; the slide number is kept in the address
(``#slide=N``). plotly.js is inlined once, the script is inline, no external URL, no web font
(the font stack names local fonts, Noto Sans CJK for Chinese), data strings escaped with
:func:`~analysis.present.escape.escape_html`.
"""

from __future__ import annotations

from collections.abc import Sequence

import plotly.graph_objects as go

from analysis.present.escape import escape_html
from analysis.present.export import PLOTLY_CONFIG, to_html
from analysis.present.palette import FONT_FAMILY
from analysis.present.report.deck import FIGURE_HEIGHT, STAGE, Slide, build_deck
from analysis.present.report.model import ReportContent

__all__ = ["render_deck"]


_CSS = """
html,body{margin:0;height:100%;overflow:hidden;background:#1b1b1f;font-family:FONTS}
#stage{position:absolute;left:50%;top:50%;width:1280px;height:720px;transform-origin:0 0}
.slide{display:none;box-sizing:border-box;width:1280px;height:720px;padding:36px 56px 24px;
background:#fff;color:#1f1f1f;flex-direction:column;overflow:hidden}
.slide.current{display:flex}
.slide h2{font-size:34px;line-height:1.2;margin:0 0 18px;font-weight:650}
.slide .body{flex:1;min-height:0}
.slide table{border-collapse:collapse;font-size:19px;margin-top:6px}
.slide th,.slide td{border-bottom:1px solid #ddd;padding:6px 14px;text-align:left}
.slide th{border-bottom:2px solid #444}
.slide td.num{text-align:right;font-variant-numeric:tabular-nums}
.slide .note{font-size:15px;color:#555;margin:8px 0 0}
.slide footer{display:flex;justify-content:space-between;font-size:14px;color:#777;margin-top:6px}
"""

_JS = """
(function(){
  var slides = document.querySelectorAll('.slide'), n = slides.length, cur = 0;
  var stage = document.getElementById('stage');
  function fit(){
    var s = Math.min(window.innerWidth / 1280, window.innerHeight / 720);
    stage.style.transform = 'scale(' + s + ') translate(-50%, -50%)';
  }
  function show(i){
    cur = Math.max(0, Math.min(n - 1, i));
    for (var j = 0; j < n; j++) slides[j].classList.toggle('current', j === cur);
    var plots = slides[cur].querySelectorAll('.js-plotly-plot');
    for (var k = 0; k < plots.length; k++) { if (window.Plotly) Plotly.Plots.resize(plots[k]); }
    if (history.replaceState) history.replaceState(null, '', '#slide=' + (cur + 1));
  }
  function fromHash(){
    var m = /slide=(\\d+)/.exec(location.hash);
    return m ? parseInt(m[1], 10) - 1 : 0;
  }
  document.addEventListener('keydown', function(e){
    var next = ['ArrowRight', 'ArrowDown', 'PageDown', ' ', 'Spacebar'];
    var prev = ['ArrowLeft', 'ArrowUp', 'PageUp'];
    if (next.indexOf(e.key) >= 0) { show(cur + 1); e.preventDefault(); }
    else if (prev.indexOf(e.key) >= 0) { show(cur - 1); e.preventDefault(); }
    else if (e.key === 'Home') { show(0); e.preventDefault(); }
    else if (e.key === 'End') { show(n - 1); e.preventDefault(); }
  });
  document.addEventListener('click', function(e){
    if (e.target.closest && e.target.closest('.js-plotly-plot')) return;
    show(cur + (e.clientX < window.innerWidth / 3 ? -1 : 1));
  });
  window.addEventListener('resize', fit);
  window.addEventListener('hashchange', function(){ show(fromHash()); });
  fit(); show(fromHash());
  window.deck = {show: show, current: function(){ return cur + 1; }, count: n};
})();
"""


def render_deck(content: ReportContent, slides: Sequence[Slide] | None = None) -> str:
    """The deck as one self-contained HTML file: plotly.js inlined once, the navigation script
    inline, no external URL; every data string escaped."""
    esc = escape_html
    slides = list(slides) if slides is not None else build_deck(content)
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>Slides — {esc(content.bundle)}</title>",
        f"<style>{_CSS.replace('FONTS', FONT_FAMILY)}</style></head><body>",
        '<div id="stage">',
    ]
    plotly_inlined = False
    for i, slide in enumerate(slides, start=1):
        parts.append(f'<section class="slide" id="slide-{i}" data-key="{esc(slide.key)}">')
        parts.append(f'<h2>{esc(slide.headline)}</h2><div class="body">')
        if slide.kind == "figure" and slide.figure is not None:
            fig = _stage_size(slide.figure)
            parts.append(
                fig.to_html(
                    full_html=False,
                    include_plotlyjs=not plotly_inlined,
                    config={**PLOTLY_CONFIG, "responsive": False},
                    div_id=f"fig-{i}",
                )
            )
            plotly_inlined = True
        elif slide.table is not None:
            parts.append(to_html(slide.table, table_id=f"table-{i}"))
        parts.append("</div>")
        if slide.note:
            parts.append(f'<p class="note">{esc(slide.note)}</p>')
        parts.append(
            f"<footer><span>{esc(content.bundle)}</span><span>{i} / {len(slides)}</span></footer>"
        )
        parts.append("</section>")
    parts += ["</div>", f"<script>{_JS}</script>", "</body></html>\n"]
    return "\n".join(parts)


def _stage_size(fig: go.Figure) -> go.Figure:
    """A copy of a slide figure with the stage's fixed width (1280 px minus the padding)."""
    out = go.Figure(fig)
    out.update_layout(
        width=STAGE[0] - 112, height=min(int(fig.layout.height or FIGURE_HEIGHT), 520)
    )
    return out
