"""Escaping of data text (model, dataset and slice names, query text) for each output target.

* :func:`escape_markdown`: every ASCII punctuation character backslash-escaped, so nothing is
  read as Markdown, HTML, an entity, math or a Streamlit directive, and an invisible word
  joiner (U+2060) inside ``://`` and ``www.`` and before the ``@`` of an e-mail address, so no
  bare URL or address is turned into a link (GitHub-flavoured Markdown links them after the
  escapes are resolved); line breaks become spaces;
* :func:`escape_latex`: the ten LaTeX special characters plus ``<``/``>``, and the math signs
  the tool's own captions and notes use (``− ≥ ≤ ± × Δ ∞`` ...) as math-mode commands, which
  pdflatex's default UTF-8 input does not set up (other text, CJK included, is left as it is:
  it needs XeLaTeX or LuaLaTeX, or a package such as ``CJKutf8``); control characters, which
  no TeX engine reads, are dropped; the font ligatures ``--``, ``---``, two quotes, ``,,``,
  ``!``` and ``?``` are broken by an italic correction ``\\/`` (an empty group does not
  break them in LuaTeX), so the characters print as they are;
* :func:`plotly_text`: labels and hovers of plotly figures (``&``, ``<`` and ``%`` as entities,
  so no tag, entity or ``%{...}`` template field is read); :func:`plotly_texts` does the same
  to a pandas Series of labels at once.

* :func:`escape_html`: :func:`html.escape` for HTML text and attributes.

Every one of them drops Unicode's explicit directional formatting characters (embeddings,
overrides and isolates, U+202A to U+202E and U+2066 to U+2069, :func:`strip_bidi`): one in a
name would reorder the text after it (a right-to-left override in a model name showed the
report's "with 0.650" as "056.0 htiw"). The directional marks U+200E and U+200F, which reverse
nothing, and right-to-left letters are kept. The module never imports streamlit.
"""

from __future__ import annotations

import html
import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "escape_html",
    "escape_latex",
    "escape_markdown",
    "plotly_text",
    "plotly_texts",
    "strip_bidi",
]

#: embeddings, overrides, isolates and their ends (LRE RLE PDF LRO RLO, LRI RLI FSI PDI)
_BIDI_CONTROLS = re.compile("[\u202a-\u202e\u2066-\u2069]")
_ASCII_PUNCTUATION = re.compile(r"([!-/:-@\[-`{-~])")
_AUTOLINK = re.compile(r"(?<=:)(?=//)|(?<=www)(?=\.[-\w])|(?=@[-\w]+\.[-\w])", re.IGNORECASE)
WORD_JOINER = "\u2060"
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
    # math signs pdflatex's UTF-8 input does not know (or knows only in text fonts)
    "\u2212": r"$-$",
    "\u2265": r"$\geq$",
    "\u2264": r"$\leq$",
    "\u2260": r"$\neq$",
    "\u2248": r"$\approx$",
    "\u2192": r"$\rightarrow$",
    "\u2190": r"$\leftarrow$",
    "\u221e": r"$\infty$",
    "\u0394": r"$\Delta$",
    "\u00b1": r"$\pm$",
    "\u00d7": r"$\times$",
}
_LATEX_RE = re.compile("|".join(re.escape(c) for c in _LATEX_SPECIAL))
#: control characters (C0 but tab, DEL, C1): TeX stops at them ("invalid character")
_LATEX_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")
#: the first character of a TeX font ligature (-- --- `` '' ,, !` ?`): ``\/`` follows
_LATEX_LIGATURE = re.compile(r"-(?=-)|`(?=`)|'(?=')|,(?=,)|[!?](?=`)")


def strip_bidi(text: str) -> str:
    """``text`` without the explicit directional formatting characters (U+202A to U+202E,
    U+2066 to U+2069), which reorder the text that follows them up to the end of the paragraph:
    in a sentence or table made from data, a name could otherwise reverse the numbers after
    it."""
    return _BIDI_CONTROLS.sub("", text) if _BIDI_CONTROLS.search(text) else text


def escape_html(text: object) -> str:
    """``text`` (``str`` of it) for HTML text or a quoted attribute: :func:`html.escape`
    (``& < > " '``) after :func:`strip_bidi`."""
    return html.escape(strip_bidi(str(text)))


def escape_markdown(text: object) -> str:
    """``text`` as Markdown that displays literally.

    Every ASCII punctuation character gets a backslash (CommonMark allows escaping any of them),
    so no character starts emphasis, a link, code, a heading, a list, HTML, an entity (``&``),
    math (``$``) or a Streamlit directive/emoji (``:``); a word joiner (U+2060, invisible) goes
    between ``:`` and ``//``, ``www`` and ``.``, and before an ``@`` followed by a dotted domain,
    so no URL or e-mail address is autolinked (``hit@1`` is left alone); line breaks become
    spaces; directional formatting characters are dropped (:func:`strip_bidi`). ``None`` gives
    ``""``.
    """
    if text is None:
        return ""
    flat = _AUTOLINK.sub(WORD_JOINER, " ".join(strip_bidi(str(text)).splitlines()))
    return _ASCII_PUNCTUATION.sub(r"\\\1", flat)


def escape_latex(text: object) -> str:
    """``text`` for a LaTeX document: ``\\ & % $ # _ { } ~ ^ < >`` replaced by their escaped
    forms and the math signs of :data:`_LATEX_SPECIAL` (``−`` U+2212, ``≥``, ``Δ`` ...) by
    math-mode commands; line breaks and tabs become spaces, other control characters (U+0000 to
    U+001F, U+007F to U+009F), which every TeX engine refuses as invalid characters, are
    dropped; an italic correction ``\\/`` goes inside the font ligatures ``--``, ``---``, two
    quotes, ``,,``, ``!``` and ``?``` (``bm25-\\/-rm3``: two hyphens, not an en dash, in
    pdfTeX and LuaTeX alike); directional formatting characters are dropped
    (:func:`strip_bidi`). ``None`` gives ``""``."""
    if text is None:
        return ""
    flat = " ".join(strip_bidi(str(text)).splitlines()).replace("\t", " ")
    flat = _LATEX_CONTROL.sub("", flat)
    escaped = _LATEX_RE.sub(lambda m: _LATEX_SPECIAL[m.group(0)], flat)
    return _LATEX_LIGATURE.sub(lambda m: m.group(0) + "\\/", escaped)


def plotly_text(text: object) -> str:
    """``text`` for a plotly label or hover: plotly reads a subset of HTML (``<b>``, ``<a>``,
    entities) in every string, so ``&`` and ``<`` are written as ``&amp;`` and ``&lt;``; and
    it expands ``%{...}`` template fields in hover and text templates, so ``%`` is written as
    the entity ``&#37;`` (shown as ``%``, never a field): a slice value ``%{y}`` shows literally;
    directional formatting characters are dropped (:func:`strip_bidi`: a hover's name would
    reverse the number after it).
    """
    out = strip_bidi(str(text))
    for char, entity in _PLOTLY:
        out = out.replace(char, entity)
    return out


_PLOTLY = (("&", "&amp;"), ("<", "&lt;"), ("%", "&#37;"))  # "&" first


def plotly_texts(values: pd.Series) -> pd.Series:
    """:func:`plotly_text` of every value of a pandas Series (vectorized; returns a Series of
    text, missing values as ``"nan"``/``"None"`` as ``str`` gives them)."""
    out = values.astype("str").str.replace(_BIDI_CONTROLS.pattern, "", regex=True)
    for char, entity in _PLOTLY:
        out = out.str.replace(char, entity, regex=False)
    return out
