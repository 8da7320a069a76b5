"""Command line: ``python -m analysis <command> ...``.

Commands:
    evaluate   per-query metrics of a run to CSV/Parquet, means and data checks to stdout
    validate   data checks of a run against qrels, or of a whole bundle (--bundle)
    compare    paired statistics of two or more runs (CSV/Markdown/LaTeX/JSON)
    import     real benchmark layouts (STaRK, GeoBloom, GeoGLUE, LIST) -> a bundle
    geo        duplicate-coordinate and twin report of a POI file, as JSON
    report     one self-contained offline HTML report of a bundle
    demo       regenerate the demo bundle
    disagree   per-query rank overlap of two runs without qrels (Jaccard@k, RBO, tau_AP)
    notes      export annotations (CSV) and a dataset's amended qrels (TREC) of a bundle

Bad input exits with code 2 and one line ``error: <file>:<line>: <what is wrong>`` on stderr.

Memory: unless the environment says otherwise, Arrow's allocator (mimalloc) may back large
buffers with 2 MiB pages where the kernel allows it (``MIMALLOC_ALLOW_LARGE_OS_PAGES=1``, read
when pyarrow loads): a 10M-line run touches about 650 MiB of fresh memory, and with 4 KiB pages
the page faults alone cost 0.4-1.7 s of system time on a virtual machine (numpy already asks
for huge pages for its large arrays). With glibc, large blocks come from the heap and stay
there once freed, for the next step to reuse (``mallopt``: no ``mmap`` for blocks, trim above
1 GiB; unless ``MALLOC_MMAP_MAX_`` is set): glibc otherwise unmaps each freed block of 32 MiB
or more, and each new array faults its pages in again (10M lines: a third fewer page faults,
0.1-0.5 s less). Allocation only: no number depends on it.
"""

from __future__ import annotations

import os

os.environ.setdefault("MIMALLOC_ALLOW_LARGE_OS_PAGES", "1")  # before pyarrow loads (see above)

import ctypes
import importlib
import sys
from collections.abc import Sequence

from analysis.cli._common import _Parser

#: One module per command (or pair of commands), each with ``NAMES``, ``add_parsers(sub)`` and
#: ``run(args) -> int``. Modules are imported when the parser is built; heavy libraries are
#: imported inside ``run`` so that ``evaluate`` on TREC files stays free of pandas.
COMMAND_MODULES: tuple[str, ...] = (
    "analysis.cli.evaluate",
    "analysis.cli.compare",
    "analysis.cli.geo",
    "analysis.cli.importer",
    "analysis.cli.report",
    "analysis.cli.demo",
    "analysis.cli.disagree",
    "analysis.cli.notes",
)


def _modules() -> list:
    return [importlib.import_module(name) for name in COMMAND_MODULES]


def build_parser() -> _Parser:
    parser = _Parser(prog="python -m analysis", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    for module in _modules():
        module.add_parsers(sub)
    return parser


def _keep_freed_memory() -> None:
    """glibc's malloc serves large blocks from the heap and keeps freed memory (see above)."""
    if "MALLOC_MMAP_MAX_" in os.environ or not hasattr(os, "confstr"):
        return
    try:
        if not (os.confstr("CS_GNU_LIBC_VERSION") or "").startswith("glibc"):
            return
        mallopt = ctypes.CDLL(None).mallopt  # this process's own C library
    except (OSError, ValueError, AttributeError):
        return
    mallopt(-4, 0)  # M_MMAP_MAX
    mallopt(-1, 1 << 30)  # M_TRIM_THRESHOLD


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; returns the exit code (0 ok, 2 bad input)."""
    from analysis.core.errors import InputError

    _keep_freed_memory()
    args = build_parser().parse_args(argv)
    by_name = {name: module for module in _modules() for name in module.NAMES}
    try:
        return by_name[args.command].run(args)
    except InputError as exc:
        sys.stderr.write(f"error: {exc}\n")
        return 2
    except OSError as exc:  # a file that vanished or cannot be opened between checks and reads
        where = f"{exc.filename}: " if exc.filename else ""
        sys.stderr.write(f"error: {where}{exc.strerror or exc}\n")
        return 2
