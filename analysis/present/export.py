"""Table exports: CSV, Markdown, LaTeX and HTML, and the leaderboard as a styled table.

Every writer takes a plain :class:`pandas.DataFrame` or a :class:`StyledTable` (cells plus a
bold mask, significance marks and footnotes). Cells may hold text, numbers, booleans, missing
values or an :class:`Estimate` (a mean with its confidence interval). Formatting:

* floats with ``digits`` decimals (default 3); integers as integers; missing values as ``–``
  (Markdown, LaTeX, HTML) or an empty field (CSV);
* an :class:`Estimate` as ``mean ± h``. Bootstrap percentile intervals are not symmetric, so
  ``h`` is the *larger* of ``mean - low`` and ``high - mean``: ``mean ± h`` always contains the
  interval (a slightly conservative display; the CSV keeps ``low`` and ``high``);
* bold (best value): Markdown ``**0.412** ± 0.041``, LaTeX ``\\textbf{0.412} $\\pm$ 0.041``,
  HTML ``<strong>``; only the mean is bold;
* a mark (e.g. ``*`` = significant after Holm correction) follows the cell: Markdown ``\\*``,
  LaTeX ``$^{*}$``, HTML ``<sup>*</sup>``.

Text from data files (model, dataset and slice names, query text) is escaped for each target
with the helpers of :mod:`analysis.present.escape` (:func:`escape_markdown`,
:func:`escape_latex`) and :func:`escape_html`. LaTeX tables use booktabs (``\\toprule``,
``\\midrule``, ``\\bottomrule``; the output starts with a comment saying it needs
``\\usepackage{booktabs}``), carry a ``\\caption`` and a ``\\label`` when given, and numbers are
right-aligned.

Figure exports (HTML, PNG, SVG) live in :mod:`analysis.present.figures`; their names, and the
escaping helpers, are re-exported here so ``from analysis.present.export import figure_image``
keeps working. The module never imports streamlit.
"""

from __future__ import annotations

import io
import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
import pandas as pd

from analysis.io.csvsafe import neutralize_frame
from analysis.present.escape import (
    escape_html,
    escape_latex,
    escape_markdown,
    plotly_text,
    plotly_texts,
    strip_bidi,
)
from analysis.present.figures import (
    IMAGE_FORMATS,
    MIN_WIDTH,
    NO_BROWSER_MESSAGE,
    PLOTLY_CONFIG,
    ImageExportError,
    browser_path,
    figure_html,
    figure_image,
    with_font,
)

__all__ = [
    "IMAGE_FORMATS",
    "MIN_WIDTH",
    "NO_BROWSER_MESSAGE",
    "PLOTLY_CONFIG",
    "Estimate",
    "ImageExportError",
    "StyledTable",
    "browser_path",
    "display_frame",
    "escape_html",
    "escape_latex",
    "escape_markdown",
    "figure_html",
    "figure_image",
    "format_p",
    "markdown_frame",
    "plotly_text",
    "plotly_texts",
    "results_table",
    "strip_bidi",
    "to_csv",
    "to_html",
    "to_latex",
    "to_markdown",
    "with_font",
]

MISSING = "–"
BOOKTABS_NOTE = r"% booktabs table: needs \usepackage{booktabs} in the preamble"


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
        esc = escape_html
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
            "html": f"<sup>{escape_html(mark)}</sup>",
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
    ``c``, ``c_ci_low``, ``c_ci_high``. Bold and marks are not written (the numbers are). Text
    cells a spreadsheet would run as a formula get a ``'`` in front
    (:func:`analysis.io.csvsafe.neutralize_frame`)."""
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
    neutralize_frame(frame).to_csv(buffer, index=False, lineterminator="\n")
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
    ``[A-Za-z0-9:_-]``. Footnotes go under the tabular in ``\\footnotesize``. A row whose first
    cell starts with ``[`` or ``*`` starts with ``{}`` (:func:`_latex_row`)."""
    styled = _styled(table)
    cells = styled.cells
    spec = "".join("r" if _numeric_column(cells[c]) else "l" for c in cells.columns)
    out = [BOOKTABS_NOTE, r"\begin{table}[t]", r"\centering"]
    if caption:
        out.append(rf"\caption{{{escape_latex(caption)}}}")
    if label:
        out.append(rf"\label{{{re.sub(r'[^A-Za-z0-9:_-]', '', label)}}}")
    out += [rf"\begin{{tabular}}{{{spec}}}", r"\toprule"]
    out.append(_latex_row([escape_latex(c) for c in cells.columns]))
    out.append(r"\midrule")
    groups = cells[group].tolist() if group is not None and group in cells.columns else None
    for i, row in enumerate(_rows(styled, digits, "latex")):
        if groups is not None and i > 0 and groups[i] != groups[i - 1]:
            out.append(r"\midrule")
        out.append(_latex_row(row))
    out += [r"\bottomrule", r"\end{tabular}"]
    if styled.notes:
        notes = " ".join(escape_latex(n) for n in styled.notes)
        out.append(rf"\par\smallskip{{\footnotesize {notes}}}")
    out.append(r"\end{table}")
    return "\n".join(out) + "\n"


def _latex_row(cells: Sequence[str]) -> str:
    """One tabular row (cells already LaTeX) ending in ``\\\\``. The ``\\\\`` or rule on the line
    before reads a ``[...]`` (and ``\\\\`` a ``*``) at the start of the next line as its optional
    argument, so a row starting with ``[`` or ``*`` (a name such as ``[ablation] bm25``) starts
    with ``{}``."""
    text = " & ".join(cells) + r" \\"
    return "{}" + text if text.startswith(("[", "*")) else text


def to_html(table: TableLike, *, digits: int = 3, table_id: str | None = None) -> str:
    """An HTML ``<table>`` (every data string through :func:`escape_html`); numeric cells carry
    ``class="num"`` and, for numbers and estimates, ``data-value`` with the full-precision value
    (the mean of an estimate); footnotes follow in ``<p class="notes">``."""
    styled = _styled(table)
    cells = styled.cells
    attrs = f' id="{escape_html(table_id)}"' if table_id else ""
    head = "".join(f"<th>{escape_html(c)}</th>" for c in cells.columns)
    numeric = [_numeric_column(cells[c]) for c in cells.columns]
    body = []
    values = cells.to_numpy(dtype=object)
    for i, row in enumerate(_rows(styled, digits, "html")):
        tds = []
        for j, text in enumerate(row):
            value = values[i, j]
            extra = ' class="num"' if numeric[j] else ""
            if isinstance(value, Estimate):
                extra += f' data-value="{float(value.mean)!r}"'
            elif isinstance(value, float | np.floating) and not _is_missing(value):
                extra += f' data-value="{float(value)!r}"'
            tds.append(f"<td{extra}>{text}</td>")
        body.append("<tr>" + "".join(tds) + "</tr>")
    out = f"<table{attrs}><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"
    if styled.notes:
        out += '<p class="notes">' + " ".join(escape_html(n) for n in styled.notes) + "</p>"
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
