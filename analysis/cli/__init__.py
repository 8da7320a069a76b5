"""Command line: ``python -m analysis <command> ...``.

Commands:
    evaluate   per-query metrics of a run to CSV/Parquet, means and data checks to stdout
    validate   data checks of a run against qrels, or of a whole bundle (--bundle)
    compare    paired statistics of two or more runs (CSV/Markdown/LaTeX/JSON)
    import     a benchmark folder in a known layout (STaRK, GeoBloom, GeoGLUE, LIST, ...)
               -> a bundle
    bundle     runs + qrels (any format) -> a bundle folder
    geo        duplicate-coordinate and twin report of a POI file, as JSON
    report     one self-contained offline HTML report of a bundle
    demo       regenerate the demo bundle
    disagree   per-query rank overlap of two runs without qrels (Jaccard@k, RBO, tau_AP)
    notes      export annotations (CSV) and a dataset's amended qrels (TREC) of a bundle;
               ``notes import`` loads tags, notes and judgements from a CSV
    coverage   judged@k of every model of a bundle dataset (the Analyses page's coverage)

Bad input exits with code 2 and one line ``error: <file>:<line>: <what is wrong>`` on stderr.

Every command takes ``--plugin MODULE`` (repeatable): a module name or a ``.py`` path whose
:func:`analysis.register_measure` calls add measures (:mod:`analysis.core.plugins`), or whose
:func:`analysis.io.importers.register_importer` calls add importers.
``--help-metrics`` prints every metric's card (formula, cutoff, references, semantics), plugins'
measures included.

The console script (:func:`console`) and ``python -m analysis`` tune the process's memory
allocation before numpy and pyarrow load (:mod:`analysis.cli._heap`); :func:`main` does not, so
it can be called inside another program.
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import importlib
import os
import signal
import sys
import threading
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from analysis.cli._common import _Parser

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
    """The command line's parser: every command, each with ``--plugin`` and
    ``--help-metrics``."""
    from analysis.cli._common import _Parser, add_plugin_args  # loads numpy and pyarrow

    parser = _Parser(prog="python -m analysis", description=__doc__.splitlines()[0])
    add_plugin_args(parser)
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    for module in _modules():
        module.add_parsers(sub)
    for leaf in _leaves(sub):
        add_plugin_args(leaf)
    return parser


def _leaves(sub: argparse._SubParsersAction) -> list[argparse.ArgumentParser]:
    """The parsers that run a command (``import stark``, not ``import``; ``notes`` and
    ``notes import`` both, as ``notes`` runs without its optional action)."""
    out = []
    for parser in dict.fromkeys(sub.choices.values()):
        nested = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        if not nested or not all(action.required for action in nested):
            out.append(parser)
        out += [leaf for action in nested for leaf in _leaves(action)]
    return out


def _early(argv: Sequence[str]) -> argparse.Namespace:
    """``--plugin`` and ``--help-metrics`` wherever they are, before the full parse (a plugin's
    measures must exist when ``--metrics`` is read)."""
    early = argparse.ArgumentParser(add_help=False, allow_abbrev=False)
    early.add_argument("--plugin", action="append", default=[])
    early.add_argument("--help-metrics", action="store_true")
    return early.parse_known_args(list(argv))[0]


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
    a full disk, a pipe closed as by ``| head -1``) is an error too (exit code 2), not a
    success; ``--help`` included. The command still runs to its end: its ``--out`` files are
    written."""
    argv = sys.argv[1:] if argv is None else list(argv)
    replaced = _catch_stops()
    stdout = sys.stdout
    guard = sys.stdout = _Stdout(stdout)
    try:
        code = _run(argv)
        return code if code != 0 else _flush_stdout(guard)
    except SystemExit as exc:  # argparse after --help (code 0) or a usage error (code 2)
        if exc.code not in (0, None) or _flush_stdout(guard) == 0:
            raise
        return 2  # the help did not reach standard output
    except BaseException as exc:
        if not _STOPPED and not isinstance(exc, KeyboardInterrupt):
            raise
        signum = _STOPPED[0] if _STOPPED else signal.SIGINT  # or raised by a plugin's code
        what = "interrupted" if signum == signal.SIGINT else "terminated"
        sys.stderr.write(f"error: {what}\n")
        return 128 + signum
    finally:
        if sys.stdout is guard:
            sys.stdout = stdout
        for signum, handler in replaced.items():
            signal.signal(signum, handler)
        _STOPPED.clear()


def _dispatch(argv: list[str]) -> int:
    """Load the plugins, parse ``argv`` and run its command."""
    from analysis.core.plugins import load_plugins

    early = _early(argv)
    load_plugins(early.plugin)
    if early.help_metrics:
        return _help_metrics()
    args = build_parser().parse_args(argv)
    load_plugins(getattr(args, "plugin", ()))  # an abbreviated --plugin
    if getattr(args, "help_metrics", False):
        return _help_metrics()
    by_name = {name: module for module in _modules() for name in module.NAMES}
    return by_name[args.command].run(args)


def _run(argv: list[str]) -> int:
    """:func:`_dispatch` with bad input and unwritable files as one line (exit code 2)."""
    from analysis.core.errors import InputError, missing_extra
    from analysis.core.paths import describe

    try:
        return _dispatch(argv)
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


class _Stdout:
    """Standard output while a command runs: the first write or flush that fails for want of
    room or of a reader (a full disk, ``| head -1``) is kept, standard output is silenced and
    the command goes on, so that its ``--out`` files are still written; :func:`main` then
    reports the failure (exit code 2)."""

    def __init__(self, stream: Any) -> None:
        self.stream = stream
        self.error: OSError | None = None

    def _guarded(self, call: Callable[[], Any], fallback: Any) -> Any:
        if self.error is not None:
            return fallback
        try:
            return call()
        except OSError as exc:
            if exc.errno not in _WRITE_ERRORS:
                raise
            self.error = exc
            _silence_stdout()
            return fallback

    def write(self, text: str) -> int:
        return self._guarded(lambda: self.stream.write(text), len(text))

    def flush(self) -> None:
        self._guarded(self.stream.flush, None)

    def __getattr__(self, name: str) -> object:
        return getattr(self.stream, name)


def _flush_stdout(guard: _Stdout | None = None) -> int:
    """0 when everything printed reached standard output, else 2 with one line on stderr."""
    error = None
    try:
        sys.stdout.flush()
    except OSError as exc:
        _silence_stdout()
        error = exc
    error = error or (guard.error if guard is not None else None)
    if error is None:
        return 0
    from analysis.core.paths import describe

    sys.stderr.write(f"error: stdout: cannot write: {describe(error)}\n")
    return 2


def _help_metrics() -> int:
    from analysis.core.measures import cards_text

    sys.stdout.write(cards_text())
    return 0


def console() -> int:
    """The console script and ``python -m analysis``: tune this new process's allocation
    (:func:`analysis.cli._heap.tune`, before numpy and pyarrow load), let its standard output
    write a character its encoding lacks as a ``\\u`` escape (a Chinese POI name under
    ``PYTHONIOENCODING=ascii``), as standard error does, then :func:`main`."""
    import io

    from analysis.cli import _heap

    _heap.tune()
    if isinstance(sys.stdout, io.TextIOWrapper):
        sys.stdout.reconfigure(errors="backslashreplace")
    return main()
