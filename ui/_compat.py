"""Every private Streamlit attribute the app uses, in one place.

Each use degrades to doing nothing when a newer Streamlit drops the attribute; the tests
(``tests/test_third_party.py``) fail instead, so that a Streamlit upgrade that removes one is
noticed and this module adapted:

* ``streamlit.delta_generator._use_warning_has_been_displayed``: Streamlit checks once per
  process, at the first element, whether it runs in a Python REPL to print a hint, with
  ``inspect.stack()``, which reads the source of every frame (0.2-0.5 s of the first page after
  a start). Under ``streamlit run`` there is no REPL: :func:`skip_repl_check` marks the hint as
  shown. Nothing else reads the flag.
* ``streamlit.runtime.scriptrunner.get_script_run_ctx().page_script_hash``: the page the
  current script run draws (:func:`page_script_hash`), which page-local URL state is kept per.
"""

from __future__ import annotations

#: The private names this module reads: (module, attribute).
REPL_FLAG = ("streamlit.delta_generator", "_use_warning_has_been_displayed")
RUN_CONTEXT = ("streamlit.runtime.scriptrunner", "get_script_run_ctx")


def skip_repl_check() -> None:
    """Mark Streamlit's "running in a REPL" hint as shown (see the module docstring)."""
    import streamlit.delta_generator as dg

    if hasattr(dg, REPL_FLAG[1]):
        setattr(dg, REPL_FLAG[1], True)


def page_script_hash() -> str:
    """The hash of the page the current script run draws (``""`` outside a script run or when
    Streamlit no longer offers it)."""
    try:
        from streamlit.runtime.scriptrunner import get_script_run_ctx
    except ImportError:  # pragma: no cover - streamlit internals moved
        return ""
    ctx = get_script_run_ctx()
    return str(getattr(ctx, "page_script_hash", "")) if ctx is not None else ""
