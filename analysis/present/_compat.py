"""Every private attribute of a third-party library the presentation layer uses, in one place.

Each use degrades gracefully when a newer version drops the attribute; the tests
(``tests/ui/test_third_party.py``) fail instead, so that an upgrade that removes one is noticed:

* plotly's ``go.Figure(spec, _validate=False)`` (:func:`figure_unvalidated`): builds a figure
  from a dict made by ``go.Figure(...).to_dict()`` (validated when it was built) without
  validating it again, which skips a deep copy and checks of every trace (20-90 ms per chart);
* kaleido's ``_global_server._thread`` (:func:`kaleido_server_alive`): the thread of the one
  image server per process; once it has died (the browser failed to start or crashed) it never
  answers, and waiting for it would hang.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import plotly.graph_objects as go

#: The private names this module reads: (module, attribute path).
KALEIDO_SERVER = ("kaleido", "_global_server")
KALEIDO_THREAD = "_thread"
PLOTLY_NO_VALIDATION = "_validate"


def figure_unvalidated(spec: dict, kind: type[go.Figure] | None = None) -> go.Figure:
    """``go.Figure(spec)`` (or ``kind(spec)``, a subclass of ``go.Figure``) without validating
    ``spec`` again (see the module docstring); the dict is not modified."""
    import plotly.graph_objects as go

    make = kind or go.Figure
    try:
        return make(spec, **{PLOTLY_NO_VALIDATION: False})
    except TypeError:  # pragma: no cover - a plotly without the argument
        return make(spec)


def kaleido_server_alive() -> bool:
    """False when kaleido's server thread has died (it then never answers); True when there is
    no such thread (not started yet, or a kaleido without it)."""
    import kaleido

    server = getattr(kaleido, KALEIDO_SERVER[1], None)
    thread = getattr(server, KALEIDO_THREAD, None)
    return thread is None or thread.is_alive()
