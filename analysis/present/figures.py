"""Figure exports: standalone HTML pages and PNG/SVG images of plotly figures.

:func:`figure_html` gives a standalone HTML page with plotly.js inlined (works offline) and no
"Produced with Plotly" link (:data:`PLOTLY_CONFIG`, also the config of every figure the app and
the reports embed). Both writers name :data:`~analysis.present.palette.FONT_FAMILY` (Noto Sans CJK
for Chinese text) when the figure's layout names no font family (:func:`with_font`); PNGs are at
least ``2 x MIN_WIDTH`` = 1600 px wide by default.

:func:`figure_image` renders PNG or SVG (:data:`IMAGE_FORMATS`) with kaleido, which drives a
Chrome/Chromium (Debian's ``/usr/bin/chromium`` is found by itself; the ``BROWSER_PATH``
environment variable overrides; :func:`browser_path`). One kaleido server is started per process
(``kaleido.start_sync_server``), so an image takes ~0.15 s after the first (~2-4 s, browser
start). Without a browser, or when the browser fails, :class:`ImageExportError` is raised with a
one-line message: the browser is looked up before anything starts, and while waiting for an
image the server thread is watched (kaleido's server would otherwise wait forever for a browser
that died), with a timeout as the last resort. After such a failure every later call fails fast
(restart).

Tables are written by :mod:`analysis.present.export`. The module never imports streamlit.
"""

from __future__ import annotations

import os
import shutil
import threading
import time
from collections.abc import Callable
from pathlib import Path

import plotly.graph_objects as go

from analysis.present._compat import kaleido_server_alive
from analysis.present.escape import escape_html
from analysis.present.palette import FONT_FAMILY

__all__ = [
    "IMAGE_FORMATS",
    "MIN_WIDTH",
    "NO_BROWSER_MESSAGE",
    "PLOTLY_CONFIG",
    "ImageExportError",
    "browser_path",
    "figure_html",
    "figure_image",
    "with_font",
]

#: Image formats :func:`figure_image` renders.
IMAGE_FORMATS: tuple[str, ...] = ("png", "svg")
#: plotly config for every exported or embedded figure: no "Produced with Plotly" link.
PLOTLY_CONFIG: dict[str, object] = {"displaylogo": False, "responsive": True}
#: Smallest default width (px at scale 1) of an image export: PNGs at 2x are >= 1600 px wide.
MIN_WIDTH = 800
NO_BROWSER_MESSAGE = (
    "PNG/SVG export needs Chrome or Chromium, and none was found (install chromium, e.g. "
    "`apt-get install chromium`, or set BROWSER_PATH to a Chrome binary); "
    "the HTML export works without it."
)


class ImageExportError(RuntimeError):
    """A figure could not be rendered to PNG/SVG; the message is one line for the user."""


def with_font(fig: go.Figure) -> go.Figure:
    """``fig`` itself when its layout names a font family, else a copy naming
    :data:`~analysis.present.palette.FONT_FAMILY`."""
    if fig.layout.font.family:
        return fig
    out = go.Figure(fig)
    out.update_layout(font_family=FONT_FAMILY)
    return out


def figure_html(fig: go.Figure, *, title: str | None = None) -> str:
    """A standalone HTML page of ``fig`` with plotly.js inlined (no network needed) and no
    "Produced with Plotly" link, in the shared font stack (:func:`with_font`). ``title`` (data
    text) is escaped."""
    body = with_font(fig).to_html(
        full_html=False, include_plotlyjs=True, config=PLOTLY_CONFIG, div_id="figure"
    )
    head = f"<title>{escape_html(title)}</title>" if title else ""
    return (
        f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">{head}</head>'
        f"<body>{body}</body></html>\n"
    )


def _is_exe(path: str) -> bool:
    return Path(path).is_file() and os.access(path, os.X_OK)


def browser_path() -> str | None:
    """The Chrome/Chromium kaleido will use, or ``None``: ``BROWSER_PATH`` when set (``None``
    if it is not an executable file), else kaleido's own search (choreographer), else
    ``chromium``/``chromium-browser``/``google-chrome`` on the PATH."""
    override = os.environ.get("BROWSER_PATH")
    if override:
        return override if _is_exe(override) else None
    found: str | None = None
    try:
        from choreographer.browsers.chromium import Chromium

        found = Chromium.find_browser(skip_local=False)
    except Exception:  # best effort: fall back to the PATH
        found = None
    if found and _is_exe(found):
        return found
    for name in ("chromium", "chromium-browser", "google-chrome", "chrome"):
        path = shutil.which(name)
        if path and _is_exe(path):
            return path
    return None


_LOCK = threading.Lock()
_state: dict[str, object] = {"started": False, "failed": None}


def _server_alive() -> bool:
    """False when kaleido's server thread has died (it then never answers)."""
    return kaleido_server_alive()


class _ServerDied(Exception):
    """kaleido's server thread ended (the browser failed to start or crashed)."""


def _call_with_timeout(fn: Callable[[], bytes], timeout: float) -> bytes:
    box: dict[str, object] = {}

    def run() -> None:
        try:
            box["value"] = fn()
        except BaseException as exc:  # handed to the caller below
            box["error"] = exc

    worker = threading.Thread(target=run, daemon=True, name="kaleido-call")
    worker.start()
    deadline = time.monotonic() + timeout
    while worker.is_alive():
        worker.join(0.1)
        if worker.is_alive() and not _server_alive():
            raise _ServerDied
        if time.monotonic() > deadline:
            raise TimeoutError
    if "error" in box:
        raise box["error"]  # type: ignore[misc]
    return box["value"]  # type: ignore[return-value]


def figure_image(
    fig: go.Figure,
    fmt: str = "png",
    *,
    width: int | None = None,
    height: int | None = None,
    scale: float = 2.0,
    timeout: float = 60.0,
) -> bytes:
    """``fig`` rendered as PNG or SVG bytes by kaleido.

    Width defaults to the figure's layout width (else 900 px), at least :data:`MIN_WIDTH`;
    height to the layout height, else 500 px; ``scale`` multiplies the pixel size of a PNG (so
    the default PNG is >= 1600 px wide). The font stack is applied as in :func:`with_font`.
    Calls are serialized (kaleido's server is not thread-safe).

    Raises:
        ValueError: an unknown format.
        ImageExportError: no Chrome/Chromium, the browser failed or did not answer within
            ``timeout`` seconds (one-line message).
    """
    if fmt not in IMAGE_FORMATS:
        raise ValueError(f"image format must be one of {IMAGE_FORMATS}, got {fmt!r}")
    if browser_path() is None:
        raise ImageExportError(NO_BROWSER_MESSAGE)
    import kaleido

    opts = {
        "format": fmt,
        "width": int(width or max(fig.layout.width or 900, MIN_WIDTH)),
        "height": int(height or fig.layout.height or 500),
        "scale": float(scale),
    }
    spec = with_font(fig).to_dict()
    with _LOCK:
        if _state["failed"]:
            raise ImageExportError(str(_state["failed"]))
        if not _state["started"]:
            kaleido.start_sync_server(mathjax=False, silence_warnings=True)
            _state["started"] = True
        if not _server_alive():
            _state["failed"] = "the image renderer (kaleido) stopped; restart the app"
            raise ImageExportError(str(_state["failed"]))
        try:
            return _call_with_timeout(lambda: kaleido.calc_fig_sync(spec, opts=opts), timeout)
        except _ServerDied:
            _state["failed"] = (
                f"the browser used for image export ({browser_path()}) failed to start or "
                "stopped; restart the app"
            )
            raise ImageExportError(str(_state["failed"])) from None
        except TimeoutError:
            _state["failed"] = (
                f"the browser used for image export did not answer within {timeout:g} s; "
                "restart the app"
            )
            raise ImageExportError(str(_state["failed"])) from None
        except Exception as exc:
            message = " ".join(str(exc).split()) or type(exc).__name__
            raise ImageExportError(f"image export failed: {message[:300]}") from None
