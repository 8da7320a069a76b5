"""Tests for ui.map_view: the cache keys of the Map page."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from ui import data
from ui import map_view as mv


def test_two_uploads_of_one_name_and_size_get_other_run_keys(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The top k, geo diagnostics and twin-aware metrics are cached by this key: a corrected
    upload with its lines reordered (same name, same size), or another session's upload of that
    name, must not be served the first one's."""
    bundle = SimpleNamespace(datasets={"d": SimpleNamespace(runs={}, groups={})})
    first = {"upload:run": ("run.trec", b"q Q0 a 1 2.0 t\nq Q0 b 2 1.0 t\n")}
    other = {"upload:run": ("run.trec", b"q Q0 b 1 2.0 t\nq Q0 a 2 1.0 t\n")}
    monkeypatch.setattr(data, "uploads", lambda name: first)
    key = mv.run_key(bundle, "d", "upload:run", "trec_eval")  # type: ignore[arg-type]
    assert mv.run_key(bundle, "d", "upload:run", "trec_eval") == key  # type: ignore[arg-type]
    monkeypatch.setattr(data, "uploads", lambda name: other)
    assert mv.run_key(bundle, "d", "upload:run", "trec_eval") != key  # type: ignore[arg-type]
