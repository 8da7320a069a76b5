"""Layer 0 — ids, ranking, metrics and errors: the CLI's fast path (numpy and pyarrow, no pandas).

Imports nothing from the other layers of :mod:`analysis`.
"""
