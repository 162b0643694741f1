r"""The *outer optimiser* role of the bilevel engine: BiSVM L-BFGS (González Vallejo 2024)
on log-scale hyperparameters, with HOAG's inexact inner solves and warm starts
(Pedregosa 2016) and early stopping on held-out rows.

:class:`BiSVMLBFGS` drives the shared L-BFGS iteration
(:func:`~bisvm.solvers.primal.lbfgs.lbfgs_iterations`) by ask and tell: the iteration
proposes points, and this loop evaluates them on the engine
(:class:`~bisvm.selection.bilevel.BilevelObjective`), keeps the warm starts of the lower
level and the adjoint, tightens the inner tolerance, and asks the held-out monitor at
each accepted iterate. Any object with the :class:`OuterOptimiser` interface can take
its place.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np
from scipy.special import expit, logit

from ..solvers.primal.lbfgs import Accepted, lbfgs_iterations
from .early_stopping import HeldOutMonitor
from .model import beta_upper_bound

__all__ = ["OuterOptimiser", "BiSVMLBFGS", "bisvm_lbfgs", "BilevelResult", "HistoryEntry"]


@runtime_checkable
class OuterOptimiser(Protocol):
    """The *outer optimiser* role: minimise the engine's objective over β from
    ``beta0``, warm-starting the first lower-level solves from ``warm0`` (and the
    monitor's from ``monitor_warm0``), optionally judged by a held-out ``monitor``
    objective; returns a :class:`BilevelResult`."""

    def minimize(self, objective, beta0, *, warm0=None, monitor=None, monitor_warm0=None,
                 callback=None): ...


@dataclass(frozen=True)
class HistoryEntry:
    """One outer iteration of BiSVM L-BFGS (k = 0 is the starting point)."""

    iteration: int
    beta: np.ndarray
    value: float
    grad_norm: float
    n_nonzero: int
    lower_solves: int
    lower_iterations: int
    seconds: float
    monitor_value: float = float("nan")


@dataclass(frozen=True)
class BilevelResult:
    """Outcome of :func:`bisvm_lbfgs`.

    Attributes
    ----------
    beta : ndarray
        Learned hyperparameters.
    value : float
        Upper-level criterion at ``beta``.
    coefs : tuple of ndarray
        Lower-level solutions (one per fold) at ``beta``.
    history : tuple of HistoryEntry
    n_iter, lower_solves, lower_iterations : int
        Outer iterations; lower-level solves and solver steps in total (line-search
        trials included).
    trials : tuple of (beta, value)
        Every point at which the upper level was evaluated.
    converged : bool
    seconds : float
    """

    beta: np.ndarray
    value: float
    coefs: tuple
    history: tuple
    n_iter: int
    lower_solves: int
    lower_iterations: int
    trials: tuple
    converged: bool
    seconds: float


def _n_nonzero(coefs, threshold):
    return int(np.max([np.sum(np.abs(w) > threshold) for w in coefs]))


@dataclass(frozen=True)
class BiSVMLBFGS:
    r"""BiSVM L-BFGS (González Vallejo 2024) in log-scale coordinates
    :math:`\beta = \beta_{\max}\,\sigma(\theta)` (:math:`\theta \approx \log\beta` for
    :math:`\beta \ll \beta_{\max}`).

    Minimises :math:`f(\theta) = J(\beta(\theta))` with gradient
    :math:`\nabla_\theta f = \beta(1 - \beta/\beta_{\max}) \odot \nabla_\beta J`
    (the KKT hypergradient), by the
    L-BFGS of :func:`~bisvm.solvers.primal.lbfgs.minimize_lbfgs` with a strong-Wolfe line search.
    Every trial point costs one lower-level solve per fold, warm-started from the last
    solution.

    Why the log parametrisation: the thesis leaves β ≥ 0 unenforced. Bounds
    (L-BFGS-B) or projection would let a weight sit at exactly 0, but β spans orders of
    magnitude (0.01 to > 1) and the natural steps are relative ones: in log space a unit
    step multiplies β by e, the start 0.01 is not a "jump to 1" away from the optimum,
    positivity holds by construction, and ``max_log_step`` bounds how far one trial can
    move (a factor :math:`e^{3} \approx 20` by default), so no trial point lands where the
    warm start is useless. The upper bound :math:`\beta_{\max}` (10 × the largest
    possible loss gradient :math:`\max_j \frac1n\sum_i|x_{ij}|`, beyond which a
    coefficient is already smoothed to :math:`|w_j| \lesssim \gamma/10`) stops a weight
    whose feature the criterion wants removed from running off to infinity, where the
    lower level becomes ill-conditioned and the hypergradient vanishes only slowly.

    Parameters
    ----------
    max_iter : int
        Cap on outer iterations.
    tol : float
        Stop when :math:`\|\nabla_\theta f\|_2 \le` ``tol``.
    ftol : float
        Also stop when an outer iteration decreases J by at most ``ftol`` relatively.
    memory : int
        L-BFGS memory.
    max_log_step : float
        Largest change of any :math:`\log\beta_k` at a unit step.
    inner_tol : float
        Gradient-norm tolerance of the lower-level solves.
    nonzero_threshold : float
        :math:`|w_j|` above which a coefficient counts as nonzero in the history.
    beta_max : float, optional
        Upper bound of every β_k (default: see above).
    predictor : bool
        Warm-start each lower-level solve from the first-order prediction
        :meth:`BilevelObjective.predict_coefs` instead of the last solution.
    adaptive_tol : bool
        HOAG's schedule (Pedregosa 2016): solve the lower level only as accurately as
        the outer progress needs, :math:`\epsilon_k = \max(\text{inner\_tol},
        \min(10^{-5}, 10^{-3}\|\nabla_\theta f_k\|))`, tightening as the outer
        gradient shrinks; ``False`` solves every trial to ``inner_tol``.
    monitor : BilevelObjective, optional
        Early stopping on held-out folds (not in the thesis): its value (the same
        criterion on folds whose validation rows the optimised criterion never sees) is
        computed at every accepted iterate; the run stops when it has not improved for
        ``patience`` iterations and returns the iterate with the best monitor value.
        With thousands of weights learned from n validation rows the optimised
        criterion keeps falling while the held-out one rises (it overfits, as sparse-ho
        reports for the weighted Lasso); this stops it there.
    patience : int
        Iterations without a monitor improvement before stopping.
    monitor_rule : {"min", "1se"}
        Which iterate the monitor returns: the one with the smallest held-out value, or
        (``"1se"``) the best among those whose held-out gain over the *start* exceeds
        one standard error of the paired per-row differences, else the start
        (:class:`~bisvm.selection.early_stopping.HeldOutMonitor`).
    monitor_threshold : float, optional
        The monitor judges its solutions with the coefficients under this support
        threshold set to zero (the model restricted to its support), and its ``"1se"``
        rule then prefers the sparsest iterate within one standard error of the start
        when none gains beyond it; None: as they are, no sparsity preference.
    max_line_search : int
        Cap on trial points per line search (each costs a lower-level solve per fold);
        a search that finds no acceptable step stops the run at the current iterate.
    callback : callable, optional
        ``callback(entry)`` with each :class:`HistoryEntry` (progress reporting).
    warm0, monitor_warm0 : tuple of ndarray, optional
        Warm starts of the first lower-level solves (one per fold of ``objective`` and
        of ``monitor``), e.g. the solutions of a previous stage.

    """

    max_iter: int = 100
    tol: float = 1e-4
    ftol: float = 1e-5
    memory: int = 10
    max_log_step: float = 3.0
    inner_tol: float = 1e-9
    nonzero_threshold: float = 0.01
    beta_max: float | None = None
    predictor: bool = True
    warn: bool = True
    adaptive_tol: bool = True
    patience: int = 5
    monitor_rule: str = "min"
    monitor_threshold: float | None = None
    max_line_search: int = 10

    def minimize(self, objective, beta0=0.01, *, warm0=None, monitor=None,
                 monitor_warm0=None, callback=None):
        """Run BiSVM L-BFGS on ``objective`` from ``beta0`` (the thesis starts every
        component at 0.01); ``monitor``, ``callback``, ``warm0`` and ``monitor_warm0`` as
        in the class docstring. Returns a :class:`BilevelResult`."""
        t0 = time.perf_counter()
        b0 = np.broadcast_to(np.asarray(beta0, dtype=float),
                             (objective.hyper.n_hyper,)).copy()
        mls = self.max_line_search
        if isinstance(mls, bool) or not isinstance(mls, (int, np.integer)) or mls < 1:
            raise ValueError(f"max_line_search must be a positive int, got {mls!r}")
        if np.any(b0 <= 0) or not np.all(np.isfinite(b0)):
            raise ValueError("beta0 must be positive and finite (the outer problem is in "
                             "log beta)")
        bmax = beta_upper_bound(objective.folds) if self.beta_max is None \
            else float(self.beta_max)
        if np.any(b0 >= bmax):
            raise ValueError(f"beta0 must be below beta_max={bmax:.4g}")
        held_out = None if monitor is None else HeldOutMonitor(
            monitor, monitor_warm0, self.patience, self.monitor_rule,
            self.monitor_threshold)
        run = _OuterRun(objective, bmax, self.inner_tol, self.adaptive_tol, self.predictor,
                        self.nonzero_threshold, warm0, callback, t0)
        steps = lbfgs_iterations(
            logit(b0 / bmax), tol=self.tol, max_iter=self.max_iter, memory=self.memory,
            ftol=self.ftol, first_max_change=1.0, max_step=self.max_log_step,
            name="BiSVM L-BFGS", warn=self.warn, max_ls=int(mls))
        # ask and tell: this loop, not the L-BFGS iteration, evaluates the trial points
        # and asks the monitor (the lower-level solves run a few calls from the fit)
        try:
            request = next(steps)
            while True:
                if not isinstance(request, Accepted):
                    request = steps.send(run.fun_grad(request))
                    continue
                ev = run.accept(request)
                mval, stop = float("nan"), False
                if held_out is not None:
                    mval, stop, it = held_out.update(ev, float(request.f), run.tol)
                    run.solves += len(held_out.monitor.folds)
                    run.iters += it
                run.record(request, ev, mval)
                request = steps.send(stop)
        except StopIteration as done:
            res = done.value
        ev, value = run.last, float(res.objective)
        if held_out is not None and held_out.best is not None:
            ev, value = held_out.best
        return BilevelResult(
            beta=ev.beta, value=value, coefs=ev.coefs,
            history=tuple(run.history), n_iter=res.n_iter, lower_solves=run.solves,
            lower_iterations=run.iters, trials=tuple(run.trials), converged=res.converged,
            seconds=time.perf_counter() - t0,
        )


def bisvm_lbfgs(objective, beta0=0.01, *, callback=None, warm0=None, monitor=None,
                monitor_warm0=None, **settings):
    """BiSVM L-BFGS on ``objective`` from ``beta0``: :class:`BiSVMLBFGS` with
    ``settings`` (its fields), then :meth:`BiSVMLBFGS.minimize`.

    Returns
    -------
    BilevelResult
    """
    return BiSVMLBFGS(**settings).minimize(objective, beta0, warm0=warm0, monitor=monitor,
                                           monitor_warm0=monitor_warm0, callback=callback)


class _OuterRun:
    """The state of one :func:`bisvm_lbfgs` run: warm starts of the lower level and the
    adjoint, the inner tolerance schedule, counts, history and trials."""

    def __init__(self, objective, bmax, inner_tol, adaptive_tol, predictor, threshold,
                 warm0, callback, t0):
        self.objective, self.bmax, self.inner_tol = objective, bmax, inner_tol
        self.adaptive_tol, self.predictor, self.threshold = adaptive_tol, predictor, threshold
        self.warm = None if warm0 is None else tuple(warm0)
        self.callback, self.t0 = callback, t0
        self.tol = 1e-5 if adaptive_tol else inner_tol
        self.ev = self.last = None
        self.solves = self.iters = 0
        self.evals, self.history, self.trials = {}, [], []

    def fun_grad(self, theta):
        beta = self.bmax * expit(theta)
        warm = self.warm
        if self.predictor and self.ev is not None:
            # the linear prediction is far better for small steps and can be worse than the
            # last solution for large ones: keep, per fold, the start with smaller gradient
            warm = [warm, self.objective.predict_coefs(self.ev, beta)]
        lam0 = None if self.ev is None else self.ev.multipliers
        ev = self.objective.evaluate(beta, warm, self.tol, adjoint_warm=lam0)
        self.ev, self.warm = ev, ev.coefs
        self.solves += ev.lower_solves
        self.iters += ev.lower_iterations
        self.evals[theta.tobytes()] = ev
        self.trials.append((beta.copy(), ev.value))
        return ev.value, beta * (1.0 - beta / self.bmax) * ev.grad

    def accept(self, it):
        """An accepted iterate: its evaluation, with the inner tolerance tightened."""
        ev = self.last = self.evals[it.x.tobytes()]
        if self.adaptive_tol:
            self.tol = max(self.inner_tol, min(1e-5, 1e-3 * float(np.linalg.norm(it.g))))
        return ev

    def record(self, it, ev, monitor_value):
        """The history entry of an accepted iterate, and the progress callback."""
        entry = HistoryEntry(
            iteration=it.k, beta=self.bmax * expit(it.x), value=float(it.f),
            grad_norm=float(np.linalg.norm(it.g)),
            n_nonzero=_n_nonzero(ev.coefs, self.threshold), lower_solves=self.solves,
            lower_iterations=self.iters, seconds=time.perf_counter() - self.t0,
            monitor_value=monitor_value,
        )
        self.history.append(entry)
        if self.callback is not None:
            self.callback(entry)
        self.evals = {it.x.tobytes(): ev}
