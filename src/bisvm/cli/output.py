"""Output options of the subcommands: --json, --quiet, --verbose, and where progress goes.

Standard library only (``bisvm --help`` must not import numpy).
"""

from __future__ import annotations

import math


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


def to_py(v):
    """JSON-able copy of ``v`` (numpy scalars and arrays, tuples, non-finite floats)."""
    import numpy as np

    if isinstance(v, dict):
        return {str(k): to_py(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [to_py(x) for x in v]
    if isinstance(v, np.ndarray):
        return to_py(v.tolist())
    if isinstance(v, np.generic):
        return to_py(v.item())
    if isinstance(v, float) and not math.isfinite(v):
        return None
    return v


def feature_key(key, names, group_names=()):
    """The user's name for an estimator record key: ``x{j}`` (the estimator's name of
    feature ``j`` when fitted on an array) becomes ``names[j]``; group names and
    ``intercept`` stay."""
    key = str(key)
    if key[:1] == "x" and key[1:].isdigit() and key not in group_names:
        j = int(key[1:])
        if j < len(names):
            return str(names[j])
    return key


def print_notes(notes, warnings_=()):
    """The ``note:`` and ``warning:`` lines of a text report."""
    for n in notes:
        print(f"  note: {n}")
    for w in warnings_:
        print(f"  warning: {w}")
