"""Progress of long runs on stderr: a tqdm bar on a terminal, one line per step otherwise.

One object, :class:`Progress`, serves the estimators' ``verbose`` parameter and the
command line: it is a callable (``progress(n)`` after ``n`` finished units, the
``progress`` callback of :mod:`bisvm.parallel` and of the grid searches) and a context
manager. Where it draws is its ``mode``:

* ``"bar"`` -- a tqdm bar on stderr, erased when the run ends (the terminal keeps only the
  results);
* ``"lines"`` -- one line per step on stderr (a log file, a CI job, ``--verbose`` in a
  pipe); when the total is known and large, one line per 5 % of it;
* ``None`` -- nothing.

``mode="auto"`` (the estimators' ``verbose=1``) is ``"bar"`` when stderr is a terminal and
``"lines"`` when it is not. stdout is never written: ``--json`` output stays one object.
tqdm is imported only when a bar is drawn.
"""

from __future__ import annotations

import sys
import time

MODES = ("auto", "bar", "lines", None)


def resolve_mode(mode):
    """``"bar"``, ``"lines"`` or ``None`` for a requested ``mode`` (``"auto"``: a bar when
    stderr is a terminal, lines otherwise)."""
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
    if mode == "auto":
        return "bar" if _stderr_is_terminal() else "lines"
    return mode


def _stderr_is_terminal():
    try:
        return bool(sys.stderr.isatty())
    except (AttributeError, ValueError):  # a replaced or closed stderr
        return False


def mode_for_verbose(verbose):
    """The mode of an estimator's ``verbose``: 0 (or False) silent, else ``"auto"``."""
    return "auto" if verbose else None


class Progress:
    """Progress of ``total`` units of work (``None``: unknown) on stderr.

    Parameters
    ----------
    desc : str
        What runs (the bar's label, the lines' prefix).
    total : int or None
        Units of work; ``None`` counts without a bar's end (outer iterations that stop on
        a tolerance).
    mode : {"auto", "bar", "lines", None}
        See the module docstring.
    unit : str
        What one unit is ("fit", "it", "solve").
    min_interval : float
        Seconds between redraws of a bar.
    line_interval : float
        Seconds between lines when the total is unknown (0: a line per call; a solver's
        fast outer iterations take more).
    lazy : bool
        Draw the bar at the first call rather than now (a run that may report nothing).
    """

    def __init__(self, desc, total=None, *, mode="auto", unit="it", min_interval=0.2,
                 line_interval=0.0, lazy=False):
        self.desc = desc
        self.line_interval = float(line_interval)
        self._last_line = float("-inf")
        self.total = total
        self.unit = unit
        self.mode = resolve_mode(mode)
        self.done = 0
        self._t0 = time.perf_counter()
        self._next_line = 0
        self._bar = None
        self._min_interval = min_interval
        if self.mode == "bar" and not lazy:
            self._open_bar()

    def _open_bar(self):
        try:
            from tqdm import tqdm
        except ImportError:  # tqdm is a dependency; a broken install falls back to lines
            self.mode = "lines"
        else:
            self._bar = tqdm(total=self.total, desc=self.desc, unit=self.unit, leave=False,
                             dynamic_ncols=True, file=sys.stderr,
                             mininterval=self._min_interval)

    def __call__(self, n=1, **info):
        """Count ``n`` finished units; ``info`` (name=value) is shown beside the count."""
        self.done += n
        if self.mode == "bar" and self._bar is None:
            self._open_bar()
        if self.mode == "bar":
            if info:
                self._bar.set_postfix(info, refresh=False)
            self._bar.update(n)
        elif self.mode == "lines":
            self._line(info)

    def _line(self, info):
        total = self.total
        last = total is not None and self.done >= total
        if total is not None and total > 20 and not last and self.done < self._next_line:
            return  # a large known total: one line per 5 % of it
        if total is not None and total > 20:
            self._next_line = self.done + max(1, total // 20)
        now = time.perf_counter()
        if total is None and now - self._last_line < self.line_interval:
            return
        self._last_line = now
        count = f"{self.done}/{total}" if total is not None else f"{self.done}"
        extra = "".join(f", {k} {v}" for k, v in info.items())
        print(f"{self.desc}: {count} {self.unit}{extra}, "
              f"{time.perf_counter() - self._t0:.1f} s", file=sys.stderr, flush=True)

    def close(self):
        """End the run: a bar shows its final count, then is erased."""
        if self._bar is not None:
            self._bar.refresh()
            self._bar.close()
            self._bar = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class OuterIterations(Progress):
    """Progress of BiSVM L-BFGS: the ``callback`` of
    :func:`bisvm.selection.bilevel.bisvm_lbfgs`, called with each ``HistoryEntry``.

    The bar counts outer iterations and shows the criterion J and the count of nonzero
    coefficients; a line names the iteration, J, the held-out criterion where there is
    one, the hypergradient norm, the nonzero count, the lower-level solves and the time.
    """

    def __init__(self, desc, *, mode="auto"):
        # an outer iteration costs several lower-level solves: redraw at every one
        super().__init__(desc, None, mode=mode, unit="it", min_interval=0.0)

    def __call__(self, entry):
        held = entry.monitor_value
        if self.mode == "bar":
            info = {"J": f"{entry.value:.5f}", "nonzero": entry.n_nonzero}
            if held == held:  # not NaN
                info["held-out"] = f"{held:.5f}"
            self._bar.set_postfix(info, refresh=False)
            self._bar.update(1)
        elif self.mode == "lines":
            held_text = "" if held != held else f" held-out {held:.5f}"
            print(f"{self.desc} iteration {entry.iteration}: criterion {entry.value:.5f}"
                  f"{held_text}, |grad| {entry.grad_norm:.2e}, {entry.n_nonzero} nonzero, "
                  f"{entry.lower_solves} lower-level solves, {entry.seconds:.1f} s",
                  file=sys.stderr, flush=True)
        self.done += 1
