"""The report's "Metrics" section: the card of every metric the report shows (formula, cutoff,
references, the tool's semantics), from the measure registry
(:func:`analysis.core.measures.card`), so that a reader of the report finds what each metric
name means in the report itself."""

from __future__ import annotations

from collections.abc import Iterable

from analysis.core.measures import card
from analysis.present.report.model import Block, Section, slug

INTRO = (
    "What each metric of this report means: its formula, its cutoff, the names it has in "
    "trec_eval, ir_measures, STaRK's evaluator and LIST, and what this tool does with ties, "
    "queries missing from a run, queries without relevant documents and rankings saved to a "
    "limited depth."
)


def card_key(metric: str) -> str:
    """The block key of a metric's card (``metric-recall-20``): the HTML report's anchor is
    ``block-<key>``."""
    return f"metric-{slug(metric)}"


def metrics_section(metrics: Iterable[str]) -> Section | None:
    """One text block per metric name (in order, repeats dropped; names the registry does not
    know are left out); ``None`` when none is left."""
    blocks = []
    for name in dict.fromkeys(metrics):
        try:
            found = card(name)
        except ValueError:
            continue
        lines = tuple(f"{label}: {text}" for label, text in found.lines())
        title = found.name if found.title == found.name else f"{found.name} — {found.title}"
        blocks.append(Block(card_key(found.name), "text", title, text=lines))
    return Section("metrics", "Metrics", INTRO, tuple(blocks)) if blocks else None
