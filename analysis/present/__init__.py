"""Layer 5 — presentation: figures, tables, the comparison and slice views, the report, exports.

May import every lower layer (:mod:`analysis.core`, :mod:`analysis.geo`,
:mod:`analysis.baselines`, :mod:`analysis.io`, :mod:`analysis.stats`).
"""
