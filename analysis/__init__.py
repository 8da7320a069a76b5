"""Retrieval error analysis: loaders, exact per-query metrics, statistics and geo diagnostics.

This package never imports streamlit; the app's pages call it.
"""
