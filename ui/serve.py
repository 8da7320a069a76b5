"""``python -m ui.serve run app.py [options]``: Streamlit's own ``streamlit run``, with the
analysis library imported first.

A Streamlit app imports its libraries on its first run, that is while the first visitor waits:
for the home page, pandas and the analysis library take about 0.4 s on a 2-core machine, and
scipy.stats about 0.7 s more when the leaderboard is not on disk yet. This
entry point imports them in the server process before Streamlit starts listening, so the page
of the first visitor only runs the page. Only the library is imported early (it never imports
streamlit): the ``ui`` modules create Streamlit caches when imported, and those need
Streamlit's runtime, which exists only once the server starts.

The launcher (:mod:`ui.launch`, ``retrieval-dashboard``), the browser tests and the benchmarks
start the app this way; ``streamlit run app.py`` serves the same app, with a slower first page.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Sequence

#: what the home page's first run imports (its ``ui`` modules aside); scipy.stats (about 0.7 s)
#: for the leaderboard's paired t-tests, which a table computed before does not need
PRELOAD: tuple[str, ...] = (
    "analysis.core.metrics",
    "analysis.io",
    "analysis.io.bundle",
    "analysis.present.export",
    "analysis.present.leaderboard",
    "analysis.stats",
    "analysis.stats.cache",
    "analysis.stats.perquery",
    "scipy.stats",
)


def main(argv: Sequence[str] | None = None) -> None:
    """Import :data:`PRELOAD`, then run Streamlit's command line with ``argv`` (default: this
    process's arguments); exits with Streamlit's exit code."""
    args = list(sys.argv[1:] if argv is None else argv)
    for name in PRELOAD:
        importlib.import_module(name)
    from streamlit.web import cli

    sys.argv = ["streamlit", *args]
    cli.main(prog_name="streamlit")


if __name__ == "__main__":
    main()
