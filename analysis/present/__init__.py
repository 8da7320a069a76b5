"""Layer 5 — presentation: figures, tables, the comparison and slice views, the report, exports.

Exports: :mod:`~analysis.present.export` (tables as CSV, Markdown, LaTeX, HTML; the leaderboard as
a styled table), :mod:`~analysis.present.figures` (figures as offline HTML, PNG, SVG) and
:mod:`~analysis.present.escape` (data text escaped for Markdown, LaTeX and plotly);
``export`` re-exports the names of the other two. Shared look: :mod:`~analysis.present.palette`.
Page views: ``leaderboard``, ``slicing`` (with ``axislabels``), ``compare`` and
``compare_figures``, ``overlap``, ``rankings``, ``querydetail``; the report and the slide deck:
:mod:`analysis.present.report` (with ``analyses_report``).

May import every lower layer (:mod:`analysis.core`, :mod:`analysis.geo`,
:mod:`analysis.baselines`, :mod:`analysis.io`, :mod:`analysis.stats`).
"""
