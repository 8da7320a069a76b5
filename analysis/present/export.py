"""Exports: tables as CSV, Markdown, LaTeX and HTML; figures as HTML, PNG and SVG.

Tables
    Every writer takes a plain :class:`pandas.DataFrame` or a :class:`StyledTable` (cells plus a
    bold mask, significance marks and footnotes). Cells may hold text, numbers, booleans,
    missing values or an :class:`Estimate` (a mean with its confidence interval). Formatting:

    * floats with ``digits`` decimals (default 3); integers as integers; missing values as
      ``–`` (Markdown, LaTeX, HTML) or an empty field (CSV);
    * an :class:`Estimate` as ``mean ± h``. Bootstrap percentile intervals are not symmetric, so
      ``h`` is the *larger* of ``mean - low`` and ``high - mean``: ``mean ± h`` always contains
      the interval (a slightly conservative display; the CSV keeps ``low`` and ``high``);
    * bold (best value): Markdown ``**0.412** ± 0.041``, LaTeX ``\\textbf{0.412} $\\pm$ 0.041``,
      HTML ``<strong>``; only the mean is bold;
    * a mark (e.g. ``*`` = significant after Holm correction) follows the cell: Markdown
      ``\\*``, LaTeX ``$^{*}$``, HTML ``<sup>*</sup>``.

    Text from data files (model, dataset and slice names, query text) is escaped for each target:
    :func:`escape_markdown` (every ASCII punctuation character backslash-escaped, so nothing is
    read as Markdown, HTML, an entity, math or a Streamlit directive), :func:`escape_latex`
    (the ten LaTeX special characters plus ``<``/``>``) and :func:`html.escape`.
    LaTeX tables use booktabs (``\\toprule``, ``\\midrule``, ``\\bottomrule``; the output starts
    with a comment saying it needs ``\\usepackage{booktabs}``), carry a ``\\caption`` and a
    ``\\label`` when given, and numbers are right-aligned.

Figures
    :func:`figure_html` gives a standalone HTML page with plotly.js inlined (works offline).
    Both writers name :data:`~analysis.present.palette.FONT_FAMILY` (Noto Sans CJK for Chinese
    text) when the figure's layout names no font family; PNGs are at least ``2 x MIN_WIDTH`` =
    1600 px wide by default. :func:`figure_image` renders PNG or SVG with kaleido, which drives
    a Chrome/Chromium (Debian's ``/usr/bin/chromium`` is found by itself; the ``BROWSER_PATH``
    environment variable overrides). One kaleido server is started per process
    (``kaleido.start_sync_server``), so an image takes ~0.15 s after the first (~2-4 s, browser
    start). Without a browser, or when the browser fails, :class:`ImageExportError` is raised
    with a one-line message: the browser is looked up before anything starts, and while
    waiting for an image the server thread is watched (kaleido's server would otherwise wait
    forever for a browser that died), with a timeout as the last resort. After such a failure
    every later call fails fast (restart).

The module never imports streamlit.
"""

from __future__ import annotations

import html
import io
import math
import os
import re
import shutil
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from analysis.present.palette import FONT_FAMILY

__all__ = [
    "IMAGE_FORMATS",
    "PLOTLY_CONFIG",
    "Estimate",
    "ImageExportError",
    "StyledTable",
    "browser_path",
    "display_frame",
    "escape_latex",
    "escape_markdown",
    "figure_html",
    "figure_image",
    "format_p",
    "markdown_frame",
    "plotly_text",
    "results_table",
    "to_csv",
    "to_html",
    "to_latex",
    "to_markdown",
    "with_font",
]

#: Image formats :func:`figure_image` renders.
IMAGE_FORMATS: tuple[str, ...] = ("png", "svg")
#: plotly config for every exported or embedded figure: no "Produced with Plotly" link.
PLOTLY_CONFIG: dict[str, object] = {"displaylogo": False, "responsive": True}
MISSING = "–"
#: Smallest default width (px at scale 1) of an image export: PNGs at 2x are >= 1600 px wide.
MIN_WIDTH = 800
BOOKTABS_NOTE = r"% booktabs table: needs \usepackage{booktabs} in the preamble"
NO_BROWSER_MESSAGE = (
    "PNG/SVG export needs Chrome or Chromium, and none was found (install chromium, e.g. "
    "`apt-get install chromium`, or set BROWSER_PATH to a Chrome binary); "
    "the HTML export works without it."
)

_ASCII_PUNCTUATION = re.compile(r"([!-/:-@\[-`{-~])")
_LATEX_SPECIAL = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    "<": r"\textless{}",
    ">": r"\textgreater{}",
}
_LATEX_RE = re.compile("|".join(re.escape(c) for c in _LATEX_SPECIAL))


class ImageExportError(RuntimeError):
    """A figure could not be rendered to PNG/SVG; the message is one line for the user."""


# --------------------------------------------------------------------------- escaping


def escape_markdown(text: object) -> str:
    """``text`` as Markdown that displays literally.

    Every ASCII punctuation character gets a backslash (CommonMark allows escaping any of them),
    so no character starts emphasis, a link, code, a heading, a list, HTML, an entity (``&``),
    math (``$``) or a Streamlit directive/emoji (``:``); line breaks become spaces. ``None``
    gives ``""``.
    """
    if text is None:
        return ""
    flat = " ".join(str(text).splitlines())
    return _ASCII_PUNCTUATION.sub(r"\\\1", flat)


def escape_latex(text: object) -> str:
    """``text`` for a LaTeX document: ``\\ & % $ # _ { } ~ ^ < >`` replaced by their escaped
    forms; line breaks become spaces. ``None`` gives ``""``."""
    if text is None:
        return ""
    flat = " ".join(str(text).splitlines())
    return _LATEX_RE.sub(lambda m: _LATEX_SPECIAL[m.group(0)], flat)


def plotly_text(text: object) -> str:
    """``text`` for a plotly label or hover: plotly reads a subset of HTML (``<b>``, ``<a>``,
    entities) in every string, so ``&`` and ``<`` are written as ``&amp;`` and ``&lt;``; and
    it expands ``%{...}`` template fields in hover and text templates, so ``%`` is written as
    the entity ``&#37;`` (shown as ``%``, never a field): a slice value ``%{y}`` shows literally.
    """
    return str(text).replace("&", "&amp;").replace("<", "&lt;").replace("%", "&#37;")


# --------------------------------------------------------------------------- cell values


@dataclass(frozen=True)
class Estimate:
    """A mean with its confidence interval (``low``/``high`` may be missing)."""

    mean: float
    low: float | None = None
    high: float | None = None

    @property
    def half_width(self) -> float | None:
        """``max(mean - low, high - mean)``; ``None`` without a (finite) interval."""
        if self.low is None or self.high is None:
            return None
        if not (math.isfinite(self.low) and math.isfinite(self.high)):
            return None
        return max(self.mean - self.low, self.high - self.mean, 0.0)


def _is_missing(value: object) -> bool:
    if value is None or value is pd.NA or value is pd.NaT:
        return True
    return isinstance(value, float | np.floating) and math.isnan(value)


def _format_number(value: object, digits: int) -> str:
    if isinstance(value, bool | np.bool_):
        return "yes" if value else "no"
    if isinstance(value, int | np.integer):
        return str(int(value))
    if isinstance(value, float | np.floating):
        return f"{float(value):.{digits}f}"
    return str(value)


def format_p(p: float) -> str:
    """A p-value for a table: ``<0.001`` below 0.001, else three decimals; missing -> ``–``."""
    if _is_missing(p):
        return MISSING
    return "<0.001" if p < 0.001 else f"{p:.3f}"


@dataclass(frozen=True)
class StyledTable:
    """A table with presentation: ``cells`` (values as described in the module docstring),
    ``bold`` (bool, same shape, True = print bold), ``marks`` (str, same shape, appended to the
    cell) and ``notes`` (footnote sentences, plain text). ``data`` optionally replaces the cells
    in the CSV export with a machine-readable table (e.g. the long numbers with p-values)."""

    cells: pd.DataFrame
    bold: pd.DataFrame | None = None
    marks: pd.DataFrame | None = None
    notes: tuple[str, ...] = ()
    data: pd.DataFrame | None = field(default=None, compare=False)

    def bold_array(self) -> np.ndarray:
        """The bold mask as a bool array of the cells' shape (all False without a mask)."""
        if self.bold is None:
            return np.zeros(self.cells.shape, dtype=bool)
        return self.bold.to_numpy(dtype=bool)

    def mark_array(self) -> np.ndarray:
        """The marks as an object array of strings of the cells' shape ("" = no mark)."""
        if self.marks is None:
            return np.full(self.cells.shape, "", dtype=object)
        marks = self.marks.to_numpy(dtype=object)
        return np.array(
            [["" if _is_missing(m) else str(m) for m in row] for row in marks], dtype=object
        ).reshape(self.cells.shape)


TableLike = pd.DataFrame | StyledTable


def _styled(table: TableLike) -> StyledTable:
    if isinstance(table, StyledTable):
        return table
    if not isinstance(table, pd.DataFrame):
        raise TypeError(f"expected a DataFrame or StyledTable, got {type(table).__name__}")
    return StyledTable(cells=table)


def _numeric_column(series: pd.Series) -> bool:
    values = [v for v in series.tolist() if not _is_missing(v)]
    if not values:
        return False
    return all(
        isinstance(v, Estimate | int | float | np.integer | np.floating)
        and not isinstance(v, bool | np.bool_)
        for v in values
    )


_Target = Literal["markdown", "latex", "html", "text"]


def _cell(value: object, *, bold: bool, mark: str, digits: int, target: _Target) -> str:
    """One formatted cell for ``target`` (data text escaped for it)."""
    if target == "markdown":
        esc: Callable[[object], str] = escape_markdown
    elif target == "latex":
        esc = escape_latex
    elif target == "html":
        esc = html.escape
    else:
        esc = str
    if _is_missing(value):
        body = MISSING
        if target == "latex":
            body = "--"
    elif isinstance(value, Estimate):
        mean = f"{value.mean:.{digits}f}"
        half = value.half_width
        if target == "markdown":
            mean = f"**{mean}**" if bold else mean
            body = mean if half is None else f"{mean} ± {half:.{digits}f}"
        elif target == "latex":
            mean = rf"\textbf{{{mean}}}" if bold else mean
            body = mean if half is None else rf"{mean} $\pm$ {half:.{digits}f}"
        elif target == "html":
            mean = f"<strong>{mean}</strong>" if bold else mean
            body = mean if half is None else f"{mean} ± {half:.{digits}f}"
        else:
            body = mean if half is None else f"{mean} ± {half:.{digits}f}"
        bold = False  # already applied to the mean only
    elif isinstance(value, bool | int | float | np.bool_ | np.integer | np.floating):
        body = _format_number(value, digits)
    else:
        body = esc(value)
    if bold:
        body = {
            "markdown": f"**{body}**",
            "latex": rf"\textbf{{{body}}}",
            "html": f"<strong>{body}</strong>",
            "text": body,
        }[target]
    if mark:
        body += {
            "markdown": escape_markdown(mark),
            "latex": f"$^{{{escape_latex(mark)}}}$",
            "html": f"<sup>{html.escape(mark)}</sup>",
            "text": mark,
        }[target]
    return body


def _rows(table: StyledTable, digits: int, target: _Target) -> list[list[str]]:
    values = table.cells.to_numpy(dtype=object)
    bold = table.bold_array()
    marks = table.mark_array()
    return [
        [
            _cell(value, bold=bool(b), mark=m, digits=digits, target=target)
            for value, b, m in zip(row, brow, mrow, strict=True)
        ]
        for row, brow, mrow in zip(values, bold, marks, strict=True)
    ]


# --------------------------------------------------------------------------- table writers


def to_csv(table: TableLike) -> str:
    """CSV text (``\\n`` line ends, header row, no index). A :class:`StyledTable` writes its
    ``data`` when set; otherwise its cells, each :class:`Estimate` column ``c`` expanded into
    ``c``, ``c_ci_low``, ``c_ci_high``. Bold and marks are not written (the numbers are)."""
    styled = _styled(table)
    if styled.data is not None:
        frame = styled.data
    else:
        frame = pd.DataFrame(index=styled.cells.index)
        for col in styled.cells.columns:
            series = styled.cells[col]
            if any(isinstance(v, Estimate) for v in series.tolist()):
                est = [v if isinstance(v, Estimate) else None for v in series.tolist()]
                frame[str(col)] = [e.mean if e else np.nan for e in est]
                frame[f"{col}_ci_low"] = [e.low if e and e.low is not None else np.nan for e in est]
                frame[f"{col}_ci_high"] = [
                    e.high if e and e.high is not None else np.nan for e in est
                ]
            else:
                frame[str(col)] = series.to_numpy()
    buffer = io.StringIO()
    frame.to_csv(buffer, index=False, lineterminator="\n")
    return buffer.getvalue()


def to_markdown(table: TableLike, *, digits: int = 3) -> str:
    """A GitHub/CommonMark pipe table; numeric columns right-aligned, data text escaped with
    :func:`escape_markdown` (``|`` included), footnotes after the table as plain paragraphs."""
    styled = _styled(table)
    header = [escape_markdown(c) for c in styled.cells.columns]
    align = ["---:" if _numeric_column(styled.cells[c]) else "---" for c in styled.cells.columns]
    lines = ["| " + " | ".join(header) + " |", "| " + " | ".join(align) + " |"]
    lines += ["| " + " | ".join(row) + " |" for row in _rows(styled, digits, "markdown")]
    text = "\n".join(lines) + "\n"
    if styled.notes:
        text += "\n" + "\n\n".join(escape_markdown(n) for n in styled.notes) + "\n"
    return text


def to_latex(
    table: TableLike,
    *,
    digits: int = 3,
    caption: str | None = None,
    label: str | None = None,
    group: str | None = None,
) -> str:
    """A booktabs ``table`` environment: ``\\toprule``, header, ``\\midrule``, rows,
    ``\\bottomrule``, after a first comment line (:data:`BOOKTABS_NOTE`); text columns ``l``,
    numeric columns ``r``. ``group`` names a column whose
    change of value starts a new block (a ``\\midrule`` between datasets). ``caption`` is data
    text (escaped); ``label`` is used as given after removing characters other than
    ``[A-Za-z0-9:_-]``. Footnotes go under the tabular in ``\\footnotesize``."""
    styled = _styled(table)
    cells = styled.cells
    spec = "".join("r" if _numeric_column(cells[c]) else "l" for c in cells.columns)
    out = [BOOKTABS_NOTE, r"\begin{table}[t]", r"\centering"]
    if caption:
        out.append(rf"\caption{{{escape_latex(caption)}}}")
    if label:
        out.append(rf"\label{{{re.sub(r'[^A-Za-z0-9:_-]', '', label)}}}")
    out += [rf"\begin{{tabular}}{{{spec}}}", r"\toprule"]
    out.append(" & ".join(escape_latex(c) for c in cells.columns) + r" \\")
    out.append(r"\midrule")
    groups = cells[group].tolist() if group is not None and group in cells.columns else None
    for i, row in enumerate(_rows(styled, digits, "latex")):
        if groups is not None and i > 0 and groups[i] != groups[i - 1]:
            out.append(r"\midrule")
        out.append(" & ".join(row) + r" \\")
    out += [r"\bottomrule", r"\end{tabular}"]
    if styled.notes:
        notes = " ".join(escape_latex(n) for n in styled.notes)
        out.append(rf"\par\smallskip{{\footnotesize {notes}}}")
    out.append(r"\end{table}")
    return "\n".join(out) + "\n"


def to_html(table: TableLike, *, digits: int = 3, table_id: str | None = None) -> str:
    """An HTML ``<table>`` (every data string through :func:`html.escape`); numeric cells carry
    ``class="num"`` and, for numbers and estimates, ``data-value`` with the full-precision value
    (the mean of an estimate); footnotes follow in ``<p class="notes">``."""
    styled = _styled(table)
    cells = styled.cells
    attrs = f' id="{html.escape(table_id)}"' if table_id else ""
    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in cells.columns)
    numeric = [_numeric_column(cells[c]) for c in cells.columns]
    body = []
    values = cells.to_numpy(dtype=object)
    for i, row in enumerate(_rows(styled, digits, "html")):
        tds = []
        for j, text in enumerate(row):
            value = values[i, j]
            extra = ' class="num"' if numeric[j] else ""
            if isinstance(value, Estimate):
                extra += f' data-value="{value.mean!r}"'
            elif isinstance(value, float | np.floating) and not _is_missing(value):
                extra += f' data-value="{float(value)!r}"'
            tds.append(f"<td{extra}>{text}</td>")
        body.append("<tr>" + "".join(tds) + "</tr>")
    out = f"<table{attrs}><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"
    if styled.notes:
        out += '<p class="notes">' + " ".join(html.escape(n) for n in styled.notes) + "</p>"
    return out


def markdown_frame(table: TableLike, *, digits: int = 3) -> pd.DataFrame:
    """The table as escaped Markdown strings (headers too), for a grid that renders Markdown in
    its cells (``st.table``): bold as ``**…**``, marks escaped, every data string through
    :func:`escape_markdown`."""
    styled = _styled(table)
    rows = _rows(styled, digits, "markdown")
    return pd.DataFrame(rows, columns=[escape_markdown(c) for c in styled.cells.columns])


def display_frame(table: TableLike, *, digits: int = 3) -> pd.DataFrame:
    """The table as plain strings for an on-screen grid (``st.dataframe``): estimates as
    ``mean ± h``, marks appended, missing values as ``–``; plain DataFrames are returned as they
    are. Bold cannot be shown as text; :attr:`StyledTable.bold` holds it."""
    if isinstance(table, pd.DataFrame):
        return table
    rows = _rows(table, digits, "text")
    return pd.DataFrame(rows, columns=[str(c) for c in table.cells.columns])


# --------------------------------------------------------------------------- results tables


def results_table(
    board: pd.DataFrame,
    metrics: Sequence[str],
    *,
    labels: Sequence[str] = ("dataset", "model"),
    group: str = "dataset",
    keep: set[tuple[str, str]] | None = None,
    pvalues: pd.DataFrame | None = None,
    alpha: float = 0.05,
    mark: str = "*",
) -> StyledTable:
    """A leaderboard as a :class:`StyledTable`: one row per ``labels`` combination, one
    :class:`Estimate` column per metric, the best mean of each (``group``, metric) in bold and
    ``mark`` on cells whose ``p_holm < alpha``.

    Args:
        board: a long :func:`analysis.stats.mean_ci` result with columns ``*labels, metric, n,
            mean, ci_low, ci_high`` (higher is better for every metric).
        metrics: the metric columns, in order.
        labels: row label columns; ``group`` must be one of them.
        keep: the (group value, metric) pairs to fill; the others are left missing (e.g. only a
            dataset's own headline metrics). ``None`` keeps everything.
        pvalues: optional ``*labels, metric, p_holm`` (e.g. each model against the best model of
            its group, Holm-corrected over the whole table).
        alpha: significance level of the marks.

    Bold: every row whose mean equals the maximum of its (group, metric) (ties all bold). The
    CSV export (``data``) holds ``*labels, metric, n, mean, ci_low, ci_high, best`` and
    ``p_holm`` when given.
    """
    labels = list(labels)
    if group not in labels:
        raise ValueError(f"group {group!r} must be one of the labels {labels}")
    need = [*labels, "metric", "n", "mean", "ci_low", "ci_high"]
    missing = [c for c in need if c not in board.columns]
    if missing:
        raise ValueError(f"board: column(s) {missing} not found; available {list(board.columns)}")
    long = board.loc[board["metric"].isin(list(metrics)), need].copy()
    if keep is not None:
        pairs = list(zip(long[group].astype(str), long["metric"].astype(str), strict=True))
        long = long.loc[[p in keep for p in pairs]]
    long = long.reset_index(drop=True)
    best = long.groupby([group, "metric"], sort=False)["mean"].transform("max")
    long["best"] = np.isclose(long["mean"], best, rtol=0, atol=1e-12)
    if pvalues is not None:
        long = long.merge(
            pvalues[[*labels, "metric", "p_holm"]], on=[*labels, "metric"], how="left"
        )
    rows = long[labels].drop_duplicates().reset_index(drop=True)
    cells = rows.copy()
    bold = pd.DataFrame(False, index=rows.index, columns=cells.columns)
    marks = pd.DataFrame("", index=rows.index, columns=cells.columns)
    index = {tuple(r): i for i, r in enumerate(rows.itertuples(index=False, name=None))}
    for metric in metrics:
        col: list[object] = [None] * len(rows)
        bcol = [False] * len(rows)
        mcol = [""] * len(rows)
        for rec in long.loc[long["metric"] == metric].to_dict("records"):
            i = index[tuple(rec[c] for c in labels)]
            col[i] = Estimate(float(rec["mean"]), float(rec["ci_low"]), float(rec["ci_high"]))
            bcol[i] = bool(rec["best"])
            p = rec.get("p_holm")
            mcol[i] = mark if p is not None and not _is_missing(p) and p < alpha else ""
        cells[metric] = pd.Series(col, dtype=object)
        bold[metric] = bcol
        marks[metric] = mcol
    notes = [
        "Mean over the queries with ± the half-width of the seeded 95% bootstrap CI "
        "(the larger side, so the interval is covered).",
        f"Bold: best mean per {group} and metric.",
    ]
    if pvalues is not None:
        n_tests = int(pvalues["p_holm"].notna().sum())
        notes.append(
            f"{mark}: significantly below the best model of its {group} (paired randomization "
            f"test, Holm-corrected over {n_tests} comparisons, alpha = {alpha:g})."
        )
    return StyledTable(cells=cells, bold=bold, marks=marks, notes=tuple(notes), data=long)


# --------------------------------------------------------------------------- figures


def with_font(fig: go.Figure) -> go.Figure:
    """``fig`` itself when its layout names a font family, else a copy naming
    :data:`~analysis.present.palette.FONT_FAMILY`."""
    if fig.layout.font.family:
        return fig
    out = go.Figure(fig)
    out.update_layout(font_family=FONT_FAMILY)
    return out


def figure_html(fig: go.Figure, *, title: str | None = None) -> str:
    """A standalone HTML page of ``fig`` with plotly.js inlined (no network needed) and no
    "Produced with Plotly" link, in the shared font stack (:func:`with_font`). ``title`` (data
    text) is escaped."""
    body = with_font(fig).to_html(
        full_html=False, include_plotlyjs=True, config=PLOTLY_CONFIG, div_id="figure"
    )
    head = f"<title>{html.escape(title)}</title>" if title else ""
    return (
        f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">{head}</head>'
        f"<body>{body}</body></html>\n"
    )


def _is_exe(path: str) -> bool:
    return Path(path).is_file() and os.access(path, os.X_OK)


def browser_path() -> str | None:
    """The Chrome/Chromium kaleido will use, or ``None``: ``BROWSER_PATH`` when set (``None``
    if it is not an executable file), else kaleido's own search (choreographer), else
    ``chromium``/``chromium-browser``/``google-chrome`` on the PATH."""
    override = os.environ.get("BROWSER_PATH")
    if override:
        return override if _is_exe(override) else None
    found: str | None = None
    try:
        from choreographer.browsers.chromium import Chromium

        found = Chromium.find_browser(skip_local=False)
    except Exception:  # best effort: fall back to the PATH
        found = None
    if found and _is_exe(found):
        return found
    for name in ("chromium", "chromium-browser", "google-chrome", "chrome"):
        path = shutil.which(name)
        if path and _is_exe(path):
            return path
    return None


_LOCK = threading.Lock()
_state: dict[str, object] = {"started": False, "failed": None}


def _server_alive() -> bool:
    """False when kaleido's server thread has died (it then never answers)."""
    import kaleido

    thread = getattr(getattr(kaleido, "_global_server", None), "_thread", None)
    return thread is None or thread.is_alive()


class _ServerDied(Exception):
    """kaleido's server thread ended (the browser failed to start or crashed)."""


def _call_with_timeout(fn: Callable[[], bytes], timeout: float) -> bytes:
    box: dict[str, object] = {}

    def run() -> None:
        try:
            box["value"] = fn()
        except BaseException as exc:  # handed to the caller below
            box["error"] = exc

    worker = threading.Thread(target=run, daemon=True, name="kaleido-call")
    worker.start()
    deadline = time.monotonic() + timeout
    while worker.is_alive():
        worker.join(0.1)
        if worker.is_alive() and not _server_alive():
            raise _ServerDied
        if time.monotonic() > deadline:
            raise TimeoutError
    if "error" in box:
        raise box["error"]  # type: ignore[misc]
    return box["value"]  # type: ignore[return-value]


def figure_image(
    fig: go.Figure,
    fmt: str = "png",
    *,
    width: int | None = None,
    height: int | None = None,
    scale: float = 2.0,
    timeout: float = 60.0,
) -> bytes:
    """``fig`` rendered as PNG or SVG bytes by kaleido.

    Width defaults to the figure's layout width (else 900 px), at least :data:`MIN_WIDTH`;
    height to the layout height, else 500 px; ``scale`` multiplies the pixel size of a PNG (so
    the default PNG is >= 1600 px wide). The font stack is applied as in :func:`with_font`.
    Calls are serialized (kaleido's server is not thread-safe).

    Raises:
        ValueError: an unknown format.
        ImageExportError: no Chrome/Chromium, the browser failed or did not answer within
            ``timeout`` seconds (one-line message).
    """
    if fmt not in IMAGE_FORMATS:
        raise ValueError(f"image format must be one of {IMAGE_FORMATS}, got {fmt!r}")
    if browser_path() is None:
        raise ImageExportError(NO_BROWSER_MESSAGE)
    import kaleido

    opts = {
        "format": fmt,
        "width": int(width or max(fig.layout.width or 900, MIN_WIDTH)),
        "height": int(height or fig.layout.height or 500),
        "scale": float(scale),
    }
    spec = with_font(fig).to_dict()
    with _LOCK:
        if _state["failed"]:
            raise ImageExportError(str(_state["failed"]))
        if not _state["started"]:
            kaleido.start_sync_server(mathjax=False, silence_warnings=True)
            _state["started"] = True
        if not _server_alive():
            _state["failed"] = "the image renderer (kaleido) stopped; restart the app"
            raise ImageExportError(str(_state["failed"]))
        try:
            return _call_with_timeout(lambda: kaleido.calc_fig_sync(spec, opts=opts), timeout)
        except _ServerDied:
            _state["failed"] = (
                f"the browser used for image export ({browser_path()}) failed to start or "
                "stopped; restart the app"
            )
            raise ImageExportError(str(_state["failed"])) from None
        except TimeoutError:
            _state["failed"] = (
                f"the browser used for image export did not answer within {timeout:g} s; "
                "restart the app"
            )
            raise ImageExportError(str(_state["failed"])) from None
        except Exception as exc:
            message = " ".join(str(exc).split()) or type(exc).__name__
            raise ImageExportError(f"image export failed: {message[:300]}") from None
