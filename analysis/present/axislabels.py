"""Category labels for plotly axes: data text escaped, wrapped into short lines, kept unique.
The module never imports streamlit."""

from __future__ import annotations

from collections.abc import Sequence

from analysis.present.escape import plotly_text

__all__ = ["axis_labels", "wrap_label"]


def wrap_label(label: str, width: int = 28, max_lines: int = 3) -> str:
    """A slice label for an axis: escaped for plotly, wrapped at spaces into lines of about
    ``width`` characters (``<br>`` between them), at most ``max_lines`` lines, the last one
    ending with "…" when text was cut. Characters count one each (CJK included)."""
    words, lines, line = str(label).split(), [], ""
    for word in words:
        while len(word) > width:  # a long token (CJK text has no spaces): hard break
            room = width - len(line) - (1 if line else 0)
            if room <= 0:
                lines.append(line)
                line, room = "", width
            line = f"{line} {word[:room]}" if line else word[:room]
            word = word[room:]
        if line and len(line) + 1 + len(word) > width:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}" if line else word
    lines.append(line)
    cut = len(lines) > max_lines
    lines = lines[:max_lines]
    if cut:
        lines[-1] = lines[-1][: max(1, width - 1)] + "…"
    return "<br>".join(plotly_text(x) for x in lines)


def axis_labels(values: Sequence[str]) -> list[str]:
    """:func:`wrap_label` of every value, made unique (a cut label that repeats another gets
    ``" (2)"``, ``" (3)"``, ..., the first number no other label holds, so a value that is
    itself ``"x (2)"`` keeps its own category) so plotly keeps them as separate categories."""
    out: list[str] = []
    taken = {wrap_label(value) for value in values}
    seen: dict[str, int] = {}
    for value in values:
        label = wrap_label(value)
        if label in seen:
            n = seen[label]
            while f"{label} ({n + 1})" in taken:
                n += 1
            seen[label] = n + 1
            label = f"{label} ({n + 1})"
            taken.add(label)
        else:
            seen[label] = 1
        out.append(label)
    return out
