"""Keyword-options records: a function with many settings takes them as ``**options`` typed by a
``TypedDict`` (``Unpack[...]``), so its signature stays short while each call still names its
settings. :func:`check_options` keeps Python's own error for a misspelt keyword."""

from __future__ import annotations

from collections.abc import Mapping


def check_options(function: str, options: Mapping[str, object], record: type) -> None:
    """Raise ``TypeError`` (as Python does for an unknown keyword argument) when ``options``
    has a key the ``TypedDict`` ``record`` does not declare."""
    known = record.__required_keys__ | record.__optional_keys__  # type: ignore[attr-defined]
    unknown = sorted(set(options) - known)
    if unknown:
        raise TypeError(f"{function}() got an unexpected keyword argument {unknown[0]!r}")
