"""Tests for analysis.present.escape: data text escaped for Markdown, LaTeX and plotly."""

from __future__ import annotations

import re

import pandas as pd

from analysis.present.escape import escape_latex, escape_markdown, plotly_text


def test_escape_markdown_escapes_every_ascii_punctuation_and_flattens_lines():
    text = "**b** _i_ [x](y) <b>&amp; $x$ :red[z] `c` # h | 1. a\nnext"
    out = escape_markdown(text)
    # every ASCII punctuation character is preceded by a backslash: removing the escaped pairs
    # leaves no punctuation at all
    assert re.search(r"[!-/:-@\[-`{-~]", re.sub(r"\\[!-/:-@\[-`{-~]", "", out)) is None
    assert "\n" not in out
    assert out.startswith(r"\*\*b\*\* \_i\_ \[x\]\(y\) \<b\>\&amp\; \$x\$ \:red\[z\]")
    assert escape_markdown(None) == ""
    assert escape_markdown("plain words 42") == "plain words 42"
    assert escape_markdown("a\\b") == "a\\\\b"


def test_escape_latex_known_strings():
    assert escape_latex("bm25_x & 50% #1 {a} ~ ^ $ \\ <>") == (
        r"bm25\_x \& 50\% \#1 \{a\} \textasciitilde{} \textasciicircum{} \$ \textbackslash{} "
        r"\textless{}\textgreater{}"
    )
    assert escape_latex("two\nlines") == "two lines"
    assert escape_latex("A − B ≥ 0.5 ± 1 × Δ, ≤ ≠ ≈ ∞ → ←, 北京 …") == (
        r"A $-$ B $\geq$ 0.5 $\pm$ 1 $\times$ $\Delta$, $\leq$ $\neq$ $\approx$ $\infty$ "
        r"$\rightarrow$ $\leftarrow$, 北京 …"
    )


def test_plotly_text_neutralizes_tags_and_entities():
    assert plotly_text("<a href='x'>&amp;</a>") == "&lt;a href='x'>&amp;amp;&lt;/a>"


def test_escape_markdown_keeps_urls_and_addresses_from_being_autolinked():
    from analysis.present.escape import WORD_JOINER

    text = "see http://evil.example/x, WWW.evil.example and mail@evil.example; hit@1 stays"
    out = escape_markdown(text)
    bare = out.replace("\\", "")
    assert "http://" not in bare
    assert "WWW.evil" not in bare
    assert "mail@evil" not in bare
    assert "hit@1" in bare  # not an address: no joiner
    assert bare.replace(WORD_JOINER, "") == text  # only invisible joiners were added


def test_escape_latex_drops_control_characters_no_tex_engine_reads():
    """A control character (NUL, ^A, ESC, DEL, C1 controls) in a name or query text made every
    TeX engine stop ("Text line contains an invalid character"); they are dropped, a tab is a
    space."""
    assert escape_latex("nul\x00a\x01b\x1bc\x7fd\x85e\x9f\tf") == "nulabcd e f"
    assert escape_latex("\x01_\x1f") == r"\_"


def test_escape_latex_keeps_tex_ligatures_from_changing_the_text():
    """TeX fonts join ``--`` into an en dash, ``---`` into an em dash, two quotes into curly
    double quotes, ``,,`` into „ and ``!``` / ``?``` into ¡ / ¿: a name "bm25--rm3" printed
    "bm25–rm3". An italic correction now sits between the characters (an empty group would
    not do in LuaTeX)."""
    assert escape_latex("bm25--rm3 a---b") == r"bm25-\/-rm3 a-\/-\/-b"
    assert escape_latex("``q'' ,,x !`y ?`z") == r"`\/`q'\/' ,\/,x !\/`y ?\/`z"
    assert escape_latex("-1 - 2 'a' `b`") == "-1 - 2 'a' `b`"  # single characters unchanged


def test_every_escape_drops_directional_formatting_characters():
    """A right-to-left override (U+202E) in a model name reversed the text after it: in the
    report's summary "with 0.650" read "056.0 htiw". Embeddings, overrides and isolates
    (U+202A-U+202E, U+2066-U+2069) are dropped by every escape; the marks U+200E/U+200F, which
    reorder nothing, and right-to-left letters stay."""
    from analysis.present.escape import escape_html, plotly_texts

    evil = "bm25\u202e\u202a\u202b\u202c\u202d\u2066\u2067\u2068\u2069 \u200f\u05d0"
    assert escape_html(evil + "<") == "bm25 \u200f\u05d0&lt;"
    assert escape_markdown(evil) == "bm25 \u200f\u05d0"
    assert escape_latex(evil) == "bm25 \u200f\u05d0"
    assert plotly_text(evil) == "bm25 \u200f\u05d0"
    assert plotly_texts(pd.Series([evil])).tolist() == ["bm25 \u200f\u05d0"]
