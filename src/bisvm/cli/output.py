"""Output options of the subcommands: --json, --quiet, --verbose, and where progress goes.

Standard library only (``bisvm --help`` must not import numpy).
"""

from __future__ import annotations


def add_output_args(p):
    """--json, --quiet and --verbose (one argparse group, returned for more options)."""
    g = p.add_argument_group("output")
    g.add_argument("--json", action="store_true",
                   help="print exactly one JSON object on stdout (no progress unless "
                   "--verbose)")
    add_progress_args(g)
    return g


def add_progress_args(g):
    """--quiet and --verbose: progress goes to stderr, as a bar on a terminal."""
    q = g.add_mutually_exclusive_group()
    q.add_argument("-q", "--quiet", action="store_true",
                   help="no progress on stderr (a bar is shown when stderr is a terminal)")
    q.add_argument("-v", "--verbose", action="store_true",
                   help="progress as one line per step on stderr when it is not a terminal "
                   "(a log, a pipe)")


def progress_mode(args):
    """Where the progress of a run goes (:mod:`bisvm.progress`): ``None`` under --quiet,
    and under --json unless --verbose; a bar when stderr is a terminal; one line per step
    with --verbose when it is not; else nothing. stdout is never written."""
    from ..progress import resolve_mode

    verbose = getattr(args, "verbose", False)
    if getattr(args, "quiet", False) or (getattr(args, "json", False) and not verbose):
        return None
    mode = resolve_mode("auto")
    return mode if mode == "bar" or verbose else None


def progress(args, desc, total=None, *, unit="it"):
    """A :class:`bisvm.progress.Progress` of the run's :func:`progress_mode` (a callable
    taking finished units, and a context manager that closes it)."""
    from ..progress import Progress

    return Progress(desc, total, mode=progress_mode(args), unit=unit)
