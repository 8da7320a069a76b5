"""Figures for papers: any figure of the app or the report as a PNG (2x), an SVG and a LaTeX
caption, with its own title and axis labels, text that fits the canvas and names that stay
readable.

:func:`paper_figure` takes a plotly figure whose text is escaped for plotly
(:func:`~analysis.present.escape.plotly_text`) and returns a :class:`PaperFigure`:

* **title** top left, 20 px from the edges, on one line (a longer title is cut; the caption
  starts with it in full);
* **names that are too long** are cut, never squeezed: a legend entry (model name) longer than
  :data:`LEGEND_CHARS`, an axis title longer than its axis, are cut with "…" and their full
  text goes into the caption. Category labels are cut by the figure builders before they
  escape them (:func:`short_labels`: ``[1] first words…`` with the full text in the caption);
* **widths** count East Asian wide characters (Chinese, Japanese, Korean) twice
  (:func:`display_width`);
* **margins**: the left and bottom margins hold the tick labels and axis titles with 20 px to
  spare (:func:`_margins`; plotly's ``automargin`` still grows them where the estimate falls
  short), the legend stands right of the plot (it grows the right margin);
* **CJK upright**: a y-axis title holding Chinese/Japanese/Korean text is not rotated (a
  rotated Chinese title reads sideways): it is written horizontally above the plot;
* the palette's font stack (Noto Sans CJK for Chinese text) and a white template.

:func:`paper_image` renders PNG (2x) or SVG with kaleido (:func:`~analysis.present.figures.
figure_image`); :func:`caption_latex` writes a ``figure`` environment with the caption (escaped
for LaTeX) and a label. The module never imports streamlit.
"""

from __future__ import annotations

import html
import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import plotly.graph_objects as go

from analysis.present.escape import escape_latex, plotly_text
from analysis.present.figures import MIN_WIDTH, figure_image
from analysis.present.palette import FONT_FAMILY

__all__ = [
    "LABEL_CHARS",
    "LEGEND_CHARS",
    "PaperFigure",
    "caption_latex",
    "display_width",
    "has_cjk",
    "legend_short",
    "paper_figure",
    "paper_image",
    "short_labels",
    "shorten",
]

#: Category labels (slice values) longer than this many columns are cut (CJK counts 2).
LABEL_CHARS = 36
#: Legend entries (model names) longer than this are cut.
LEGEND_CHARS = 28
#: Font sizes of the export: text, title.
FONT_SIZE = 13
TITLE_SIZE = 16
#: Average glyph width as a share of the font size (Latin text of the sans-serif stack).
_GLYPH = 0.62
_TITLE_LINE = 22  # px per title line at TITLE_SIZE
_EDGE = 20  # px between the canvas edge and the title
_CJK = re.compile(r"[\u1100-\u11ff\u2e80-\u9fff\uac00-\ud7af\uf900-\ufaff\uff00-\uffef]")


@dataclass(frozen=True)
class PaperFigure:
    """A figure ready for export: the styled figure, its size in px at scale 1, its title and
    its caption (plain text: the full names of cut labels included)."""

    figure: go.Figure
    title: str
    caption: str
    width: int
    height: int


def has_cjk(text: object) -> bool:
    """True when ``text`` holds a Chinese, Japanese or Korean character."""
    return bool(_CJK.search(str(text)))


def display_width(text: object) -> int:
    """Columns ``text`` takes: 2 for East Asian wide and full-width characters, else 1."""
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in str(text))


def shorten(text: object, width: int) -> str:
    """``text`` (one line: line breaks and runs of spaces become one space) cut to at most
    ``width`` columns, the last one "…" when anything was cut."""
    flat = " ".join(str(text).split())
    if display_width(flat) <= width:
        return flat
    out, used = [], 1
    for char in flat:
        used += display_width(char)
        if used > width:
            break
        out.append(char)
    return "".join(out).rstrip() + "…"


def short_labels(
    values: Iterable[str], *, width: int = LABEL_CHARS, sizes: Mapping[str, int] | None = None
) -> tuple[dict[str, str], list[tuple[str, str]]]:
    """Axis labels for category ``values``, escaped for plotly, and the key of the cut ones.

    A value longer than ``width`` columns becomes ``"[i] <its first columns>…"`` (``i`` = 1, 2,
    … in the order given) and ``("[i]", value)`` joins the key, which the caption spells out;
    so does a value whose one-line form is the label of an earlier value (``a  b`` after
    ``a b``): every value keeps its own category. With ``sizes`` every label ends with
    ``" (n = 1,234)"`` (a slice of 3 queries says so).

    Returns:
        ``({value: label}, [(key, full value), …])``.
    """
    labels: dict[str, str] = {}
    key: list[tuple[str, str]] = []
    taken: set[str] = set()
    for value in dict.fromkeys(map(str, values)):
        short = shorten(value, width)
        if short != " ".join(value.split()) or short in taken:
            short = _keyed(value, width, key, taken)
        taken.add(short)
        if sizes is not None and value in sizes:
            short += f" (n = {int(sizes[value]):,})"
        labels[value] = plotly_text(short)
    return labels, key


def _keyed(value: str, width: int, key: list[tuple[str, str]], taken: set[str]) -> str:
    """``"[i] <value cut to width>"`` with the first ``i`` from ``len(key) + 1`` whose label is
    not ``taken``; ``("[i]", value)`` is appended to ``key``."""
    n = len(key) + 1
    while True:
        mark = f"[{n}]"
        label = f"{mark} {shorten(value, width - len(mark) - 1)}"
        if label not in taken:
            key.append((mark, value))
            return label
        n += 1


def _raw(text: object) -> str:
    """The plain text of a plotly string: ``<br>`` as a space, tags dropped, entities read."""
    flat = re.sub(r"<br\s*/?>", " ", str(text or ""), flags=re.IGNORECASE)
    return html.unescape(re.sub(r"</?[a-zA-Z][^>]*>", "", flat))


def _axes(layout: go.Layout) -> list[str]:
    return [name for name in layout if re.fullmatch(r"[xy]axis\d*", name)]


def _fit_axes(fig: go.Figure, width: int, height: int, notes: list[str]) -> int:
    """Axis titles: cut to their axis (full text in ``notes``), y titles with CJK text written
    upright above the plot; every axis grows its margin. Returns the px the upright titles
    need above the plot."""
    extra = 0
    for name in _axes(fig.layout):
        axis = fig.layout[name]
        axis.automargin = True
        if name[0] == "x" and any(has_cjk(t) for t in _tick_texts(fig, name)):
            axis.tickangle = 0  # plotly slants crowded labels: Chinese would read sideways
        text = _raw(axis.title.text) if axis.title and axis.title.text else ""
        if not text:
            continue
        room = (width if name[0] == "x" else height) - 160
        limit = max(12, int(room / (FONT_SIZE * _GLYPH)))
        short = shorten(text, limit)
        if short != text:
            notes.append(f"Axis: {text}.")
        if name[0] == "y" and has_cjk(text):
            axis.title.text = None
            anchor = axis.anchor if axis.anchor and axis.anchor != "free" else "x"
            domain = fig.layout[f"xaxis{anchor[1:]}"].domain or (0, 1)
            fig.add_annotation(
                text=plotly_text(short), showarrow=False, xref="paper", yref="paper",
                x=domain[0], y=1.0, xanchor="left", yanchor="bottom", yshift=6,
            )  # fmt: skip
            extra = 30
        else:
            axis.title.text = plotly_text(short)
    return extra


def _cut_middle(text: str, width: int) -> str:
    """``text`` (one line) cut to ``width`` columns in the middle: its start, "…", its end."""
    flat = " ".join(text.split())
    tail_room = (width - 1) // 2
    tail: list[str] = []
    for char in reversed(flat):
        if display_width(char) + display_width("".join(tail)) > tail_room:
            break
        tail.insert(0, char)
    head = shorten(flat, width - display_width("".join(tail))).removesuffix("…")
    return f"{head}…{''.join(tail)}"


def legend_short(name: str, taken: set[str]) -> str:
    """``name`` cut to :data:`LEGEND_CHARS` columns, distinct from every label in ``taken``:
    its start with "…"; when another name starts alike, its start and end around "…"; else a
    number ``(2)``, ``(3)``, … after its start."""
    short = shorten(name, LEGEND_CHARS)
    if short in taken:
        short = _cut_middle(name, LEGEND_CHARS)
    n = 2
    while short in taken:
        mark = f" ({n})"
        short = shorten(name, LEGEND_CHARS - len(mark)) + mark
        n += 1
    return short


def _fit_legend(fig: go.Figure, notes: list[str]) -> None:
    """Legend entries longer than :data:`LEGEND_CHARS` cut (full names in ``notes``), each
    model keeping an entry of its own (:func:`legend_short`); the legend stands right of the
    plot, top-aligned."""
    cut: list[tuple[str, str]] = []
    names = [_raw(trace.name) if trace.name else "" for trace in fig.data]
    taken = {name for name in names if name and display_width(name) <= LEGEND_CHARS}
    given: dict[str, str] = {}
    for trace, name in zip(fig.data, names, strict=True):
        if name and display_width(name) > LEGEND_CHARS:
            if name not in given:
                given[name] = legend_short(name, taken)
                taken.add(given[name])
                cut.append((given[name], name))
            trace.name = plotly_text(given[name])
    if cut:
        notes.append("Legend: " + "; ".join(f"{s} = {n}" for s, n in cut) + ".")
    fig.update_layout(
        legend={"orientation": "v", "x": 1.02, "xanchor": "left", "y": 1.0, "yanchor": "top"}
    )


def _tick_texts(fig: go.Figure, name: str) -> list[str]:
    """The tick labels axis ``name`` (``xaxis``, ``yaxis2``, ...) will draw: its category
    array or tick texts, else the string values of its traces (numbers: ``"0.000"``)."""
    axis = fig.layout[name]
    for given in (axis.ticktext, axis.categoryarray):
        if given is not None and len(given):
            return [_raw(t) for t in given]
    ref = name[0] + name[5:]  # "yaxis2" -> "y2"
    found: list[str] = []
    for trace in fig.data:
        if (getattr(trace, f"{name[0]}axis", None) or name[0]) not in (ref, name[0] + "1"):
            continue
        values = getattr(trace, name[0], None)
        if values is not None and len(values) and isinstance(values[0], str):
            found += [_raw(v) for v in values]
    return found or ["0.000"]


def _margins(fig: go.Figure) -> tuple[int, int]:
    """Left and bottom margins (px) that hold the first y and x axes' tick labels and titles
    with :data:`_EDGE` to spare. Plotly's ``automargin`` grows a margin exactly to its labels,
    which leaves a title touching the canvas edge; a margin already wide enough is kept."""
    px = FONT_SIZE * _GLYPH
    y_ticks = max(display_width(t) for t in _tick_texts(fig, "yaxis")) * px
    left = y_ticks + 12 + (FONT_SIZE + 12 if fig.layout.yaxis.title.text else 0) + _EDGE
    x_ticks = _tick_texts(fig, "xaxis")
    widest = max(display_width(t) for t in x_ticks) * px
    slanted = widest * len(x_ticks) > 0.8 * float(fig.layout.width or 900)
    tick_h = (widest * 0.75 if slanted else FONT_SIZE) + 12
    bottom = tick_h + (FONT_SIZE + 14 if fig.layout.xaxis.title.text else 0) + _EDGE
    return int(left), int(bottom)


def paper_figure(
    fig: go.Figure,
    *,
    title: str,
    caption: str = "",
    key: Sequence[tuple[str, str]] = (),
    width: int | None = None,
    height: int | None = None,
) -> PaperFigure:
    """``fig`` styled for a paper (module docstring). ``title`` and ``caption`` are plain text
    (names from files as they are); ``key``: the cut category labels of :func:`short_labels`,
    spelled out in the caption. The figure given is not modified.

    Width defaults to the figure's own (at least :data:`~analysis.present.figures.MIN_WIDTH`),
    height to the figure's own (else 500 px) plus the room the title takes."""
    out = go.Figure(fig)
    width = int(max(width or out.layout.width or 900, MIN_WIDTH))
    base = int(height or out.layout.height or 500)
    notes: list[str] = []
    # one line (plotly misplaces multi-line titles at the top edge): cut, in full in the caption
    line = shorten(title, int((width - 2 * _EDGE) / (TITLE_SIZE * _GLYPH)))
    top = _EDGE + _TITLE_LINE + 16
    top += _fit_axes(out, width, base, notes)
    _fit_legend(out, notes)
    out.update_layout(width=width)
    left, bottom = _margins(out)
    out.update_layout(
        template="plotly_white",
        font={"family": FONT_FAMILY, "size": FONT_SIZE},
        title={
            "text": plotly_text(line),
            "x": 0, "xref": "container", "xanchor": "left", "pad": {"l": _EDGE, "t": _EDGE},
            "y": 1, "yref": "container", "yanchor": "top", "font": {"size": TITLE_SIZE},
        },
        margin={"l": left, "r": _EDGE, "t": top, "b": bottom, "autoexpand": True},
        width=width,
        height=base + top + bottom,
    )  # fmt: skip
    if key:
        notes.insert(0, "Labels: " + "; ".join(f"{mark} {full}" for mark, full in key) + ".")
    text = " ".join(_sentence(x) for x in (str(title), caption, *notes) if x.strip())
    return PaperFigure(out, str(title), text, width, base + top + bottom)


def _sentence(text: str) -> str:
    flat = " ".join(text.split())
    return flat if flat.endswith((".", "!", "?")) else f"{flat}."


def caption_latex(figure: PaperFigure, label: str, image: str = "") -> str:
    """A LaTeX ``figure`` environment: ``\\includegraphics`` of ``image`` (the PNG's file
    name, reduced to ``[A-Za-z0-9._/-]`` and not escaped: ``\\includegraphics`` reads a file
    name verbatim, so ``a_b.png`` must stay ``a_b.png``, not ``a\\_b.png``; left out when
    empty), the caption (every data string escaped for LaTeX) and ``\\label{fig:<label>}``
    (``label`` reduced to ``[A-Za-z0-9:_-]``)."""
    safe = re.sub(r"[^A-Za-z0-9:_-]+", "-", label).strip("-") or "figure"
    body = ["\\begin{figure}[t]", "  \\centering"]
    if image:
        path = re.sub(r"[^A-Za-z0-9._/-]+", "-", image)
        body.append(f"  \\includegraphics[width=\\linewidth]{{{path}}}")
    body += [f"  \\caption{{{escape_latex(figure.caption)}}}", f"  \\label{{fig:{safe}}}"]
    return "\n".join([*body, "\\end{figure}"]) + "\n"


def paper_image(figure: PaperFigure, fmt: str = "png", *, scale: float = 2.0) -> bytes:
    """PNG (at ``scale``, 2x by default) or SVG bytes of ``figure`` at its own size.

    Raises:
        ~analysis.present.figures.ImageExportError: no browser (one-line message)."""
    factor = scale if fmt == "png" else 1.0
    return figure_image(figure.figure, fmt, width=figure.width, height=figure.height, scale=factor)
