"""The AppTest harness of this folder: what ``tests/app/conftest.py`` changes in Streamlit's
test runner still has the effect it is there for."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest


def test_each_apptest_scans_components_through_the_function_the_conftest_caches(monkeypatch):
    """The conftest answers Streamlit's component scan from one scan per process; if AppTest
    stopped calling ``manifest_scanner.scan_component_manifests``, that cache would silently
    do nothing (and each AppTest would read every installed package's metadata again)."""
    from streamlit.components.v2 import manifest_scanner

    calls: list[int] = []
    cached = manifest_scanner.scan_component_manifests

    def counted(max_workers=None):
        calls.append(1)
        return cached(max_workers)

    monkeypatch.setattr(manifest_scanner, "scan_component_manifests", counted)
    for _ in range(2):
        AppTest.from_string("import streamlit as st\nst.write('ok')").run()
    assert calls == [1, 1]
