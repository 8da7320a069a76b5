"""Command line: ``python -m analysis <command> ...``.

Commands:
    evaluate   per-query metrics of a run to CSV/Parquet, means and data checks to stdout
    validate   data checks of a run against qrels, or of a whole bundle (--bundle)
    compare    paired statistics of two or more runs (CSV/Markdown/LaTeX/JSON)
    import     real benchmark layouts (STaRK, GeoBloom, GeoGLUE, LIST) -> a bundle
    bundle     runs + qrels (any format) -> a bundle folder
    geo        duplicate-coordinate and twin report of a POI file, as JSON
    report     one self-contained offline HTML report of a bundle
    demo       regenerate the demo bundle
    disagree   per-query rank overlap of two runs without qrels (Jaccard@k, RBO, tau_AP)
    notes      export annotations (CSV) and a dataset's amended qrels (TREC) of a bundle;
               ``notes import`` loads tags, notes and judgements from a CSV
    coverage   judged@k of every model of a bundle dataset (the Analyses page's coverage)

Bad input exits with code 2 and one line ``error: <file>:<line>: <what is wrong>`` on stderr.

Memory: a 10M-line run needs about 600 MiB, and on a virtual machine the first touch of fresh
memory is a large share of the time (0.5-1.7 s of system time at 10M lines when the host has
just taken the memory back). With glibc, unless the environment says otherwise, the command
line therefore keeps one heap that every step reuses:

* Arrow allocates from the C library (``ARROW_DEFAULT_MEMORY_POOL=system``, read when pyarrow
  first allocates) instead of its own mimalloc, so the buffers of the CSV reader, once freed,
  serve numpy's arrays and the other way round;
* one malloc arena for every thread (``M_ARENA_MAX=1``): the reader's and the core's worker
  threads free and reuse the same heap, not one arena each;
* large blocks come from that heap and stay there once freed (``M_MMAP_MAX=0``, trim above
  1 GiB): glibc otherwise unmaps each freed block of 32 MiB or more, and each new array faults
  its pages in again;
* numpy does not ask for transparent huge pages (``NUMPY_MADVISE_HUGEPAGE=0``): on a virtual
  machine a fresh 2 MiB page costs about four times what its 512 small pages cost (400 MB
  first touched: 0.8-0.95 s against 0.17-0.23 s), and reused heap pages need no new fault.

10M lines, each run right after pytrec_eval's 1.9 GB: 0.5-0.6 s of system time against
1.0-1.7 s, 1.9-2.3 s of wall time against 2.3-3.0 s, 600 against 660-700 MiB of peak memory.
``MALLOC_MMAP_MAX_`` in the environment leaves malloc as it is. Allocation only: no number
depends on it.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import importlib
import os
import signal
import sys
import threading
from collections.abc import Sequence


def _glibc() -> bool:
    """The process runs on glibc (whose malloc the settings above tune)."""
    try:
        return (os.confstr("CS_GNU_LIBC_VERSION") or "").startswith("glibc")
    except (AttributeError, ValueError, OSError):
        return False


_TUNED = _glibc() and "MALLOC_MMAP_MAX_" not in os.environ
if _TUNED:  # before numpy and pyarrow load (see above)
    os.environ.setdefault("ARROW_DEFAULT_MEMORY_POOL", "system")
    os.environ.setdefault("NUMPY_MADVISE_HUGEPAGE", "0")

from analysis.cli._common import _Parser  # noqa: E402 (loads numpy and pyarrow)

#: One module per command (or pair of commands), each with ``NAMES``, ``add_parsers(sub)`` and
#: ``run(args) -> int``. Modules are imported when the parser is built; heavy libraries are
#: imported inside ``run`` so that ``evaluate`` on TREC files stays free of pandas.
COMMAND_MODULES: tuple[str, ...] = (
    "analysis.cli.evaluate",
    "analysis.cli.compare",
    "analysis.cli.geo",
    "analysis.cli.importer",
    "analysis.cli.bundle",
    "analysis.cli.report",
    "analysis.cli.demo",
    "analysis.cli.disagree",
    "analysis.cli.notes",
    "analysis.cli.coverage",
)


def _modules() -> list:
    return [importlib.import_module(name) for name in COMMAND_MODULES]


def build_parser() -> _Parser:
    parser = _Parser(prog="python -m analysis", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    for module in _modules():
        module.add_parsers(sub)
    return parser


def _tune_malloc() -> None:
    """One glibc heap for every thread, large blocks from it, freed memory kept (see above)."""
    if not _TUNED:
        return
    try:
        mallopt = ctypes.CDLL(None).mallopt  # this process's own C library
    except (OSError, AttributeError):
        return
    mallopt(-8, 1)  # M_ARENA_MAX
    mallopt(-4, 0)  # M_MMAP_MAX
    mallopt(-1, 1 << 30)  # M_TRIM_THRESHOLD


#: The signal that stopped the running command (Ctrl-C's SIGINT or SIGTERM), if any.
_STOPPED: list[int] = []


def _stop(signum: int, frame: object) -> None:
    _STOPPED.append(signum)
    raise KeyboardInterrupt


def _catch_stops() -> dict[int, object]:
    """Make SIGINT and SIGTERM raise in the main thread (Python's own Ctrl-C handling, extended
    to SIGTERM) unless something else handles or ignores them; returns the handlers replaced."""
    if threading.current_thread() is not threading.main_thread():
        return {}
    usual = {signal.SIGINT: signal.default_int_handler, signal.SIGTERM: signal.SIG_DFL}
    replaced = {}
    for signum, handler in usual.items():
        if signal.getsignal(signum) is handler:
            replaced[signum] = signal.signal(signum, _stop)
    return replaced


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; returns the exit code (0 ok, 2 bad input, 130 after Ctrl-C, 143 after
    SIGTERM). A stopped command prints one line, leaves no partial ``--out`` (files are written
    beside and renamed when whole) and no spill folder of the out-of-core engine: both signals
    become an exception in the main thread, so that every cleanup runs (the out-of-core engine
    then interrupts its DuckDB query). Standard output that cannot be written (``> /dev/full``,
    a full disk) is an error too (exit code 2), not a success."""
    _tune_malloc()
    args = build_parser().parse_args(argv)
    by_name = {name: module for module in _modules() for name in module.NAMES}
    replaced = _catch_stops()
    try:
        code = _run(by_name[args.command], args)
        return code if code != 0 else _flush_stdout()
    except BaseException:
        if not _STOPPED:
            raise
        what = "interrupted" if _STOPPED[0] == signal.SIGINT else "terminated"
        sys.stderr.write(f"error: {what}\n")
        return 128 + _STOPPED[0]
    finally:
        for signum, handler in replaced.items():
            signal.signal(signum, handler)
        _STOPPED.clear()


def _run(module: object, args: object) -> int:
    """``module.run(args)`` with bad input and unwritable files as one line (exit code 2)."""
    from analysis.core.errors import InputError, missing_extra
    from analysis.core.paths import describe

    try:
        return module.run(args)  # type: ignore[attr-defined]
    except InputError as exc:
        sys.stderr.write(f"error: {exc}\n")
        return 2
    except ImportError as exc:  # an optional package the command needs (one line naming it)
        message = missing_extra(exc)
        if message is None:
            raise
        sys.stderr.write(f"error: {message}\n")
        return 2
    except OSError as exc:  # a file that vanished or cannot be opened between checks and reads
        if exc.filename:
            sys.stderr.write(f"error: {exc.filename}: {describe(exc)}\n")
        elif exc.errno in _WRITE_ERRORS:  # print() to a full disk or a closed pipe
            _silence_stdout()
            sys.stderr.write(f"error: stdout: cannot write: {describe(exc)}\n")
        else:
            sys.stderr.write(f"error: {describe(exc)}\n")
        return 2


_WRITE_ERRORS = {errno.ENOSPC, errno.EPIPE, errno.EIO, errno.EFBIG, errno.EDQUOT}


def _silence_stdout() -> None:
    """Point standard output at the null device once it failed, so that the text still in its
    buffer is dropped instead of failing again when the interpreter exits."""
    with contextlib.suppress(OSError, ValueError, AttributeError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())


def _flush_stdout() -> int:
    """0 when everything printed reached standard output, else 2 with one line on stderr."""
    try:
        sys.stdout.flush()
    except OSError as exc:
        from analysis.core.paths import describe

        _silence_stdout()
        sys.stderr.write(f"error: stdout: cannot write: {describe(exc)}\n")
        return 2
    return 0
