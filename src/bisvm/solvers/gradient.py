r"""Gradient descent with a line search (seed 002 §3.1).

The direction is the steepest descent :math:`d_k = -\nabla E(\theta_k)`; the step
:math:`\eta_k` satisfies the strong Wolfe conditions (bracketing and zoom of
:func:`bisvm.solvers.lbfgs._wolfe_search`, the same line search as the package's L-BFGS),
starting from twice the previous accepted step so that the step length adapts to the
local curvature. Convergence is linear with rate :math:`1 - 1/\kappa` on a
:math:`\kappa`-conditioned strongly convex function: simple and reliable, but slow — the
baseline of the comparison table of seed 002 §3.5.

:func:`line_search` is shared by the primal methods of this package (gradient descent,
BFGS, nonlinear conjugate gradient), so that they differ only in their direction.
"""

from __future__ import annotations

import time

import numpy as np

from .base import ConvergenceRecord, SolverResult, warn_cap
from .lbfgs import _wolfe_search

__all__ = ["line_search", "minimize_gradient_descent", "solve_gradient_descent", "IterLog"]


def line_search(fun_grad, x, f, g, p, a1, *, c1=1e-4, c2=0.9, max_ls=40):
    r"""Strong-Wolfe line search along ``p`` from ``x``.

    Finds :math:`\eta` with :math:`E(x + \eta p) \le E(x) + c_1 \eta\, g^\top p` and
    :math:`|\nabla E(x + \eta p)^\top p| \le c_2 |g^\top p|`.

    Returns
    -------
    step : float or None
        ``None`` when no decrease was found (stalled at working precision).
    f_new, x_new, g_new : the accepted point, its value and gradient.
    n_evals : int
    """
    d0 = float(g @ p)
    cache = {}

    def phi(a):
        xa = x + a * p
        fa, ga = fun_grad(xa)
        cache[a] = ga
        return fa, (float(ga @ p) if np.all(np.isfinite(ga)) else np.inf), xa

    a, f_new, x_new, ev = _wolfe_search(phi, f, d0, a1, c1, c2, max_ls)
    if a is None:
        return None, f, x, g, ev
    return a, f_new, x_new, cache[a], ev


class IterLog:
    """Per-iteration objective, gradient norm and time, turned into a result at the end."""

    def __init__(self, f, g):
        self.t0 = time.perf_counter()
        self.objs = [float(f)]
        self.gns = [float(np.linalg.norm(g))]
        self.secs = [0.0]
        self.n_flat = 0

    def add(self, f, gnorm):
        # Armijo tests pass on rounding noise once f is flat to working precision; count
        # such steps so that solvers can stop there instead of creeping on to the cap
        drop = self.objs[-1] - float(f)
        self.n_flat = self.n_flat + 1 if drop <= 4 * np.finfo(float).eps * abs(f) else 0
        self.objs.append(float(f))
        self.gns.append(float(gnorm))
        self.secs.append(time.perf_counter() - self.t0)

    @property
    def stalled(self):
        """Twenty steps in a row without decrease beyond rounding."""
        return self.n_flat >= 20

    def result(self, x, n_iter, n_evals, converged, extra=None):
        rec = ConvergenceRecord(np.array(self.objs), np.array(self.gns), np.array(self.secs))
        return SolverResult(
            coef=x, objective=self.objs[-1], grad_norm=self.gns[-1], n_iter=n_iter,
            n_evals=n_evals, converged=bool(converged),
            seconds=time.perf_counter() - self.t0, record=rec, extra=extra or {},
        )


def _check_common(tol, max_iter):
    if not (np.isfinite(tol) and tol > 0):
        raise ValueError(f"tol must be a positive float, got {tol!r}")
    if int(max_iter) != max_iter or max_iter < 1:
        raise ValueError(f"max_iter must be a positive integer, got {max_iter!r}")


def minimize_gradient_descent(fun_grad, x0, *, tol=1e-8, max_iter=20000, c1=1e-4, c2=0.9,
                              max_ls=40, name="gradient descent", warn=True):
    r"""Minimise a smooth function by steepest descent with a strong-Wolfe line search.

    Parameters
    ----------
    fun_grad : callable
        ``fun_grad(x) -> (f, g)``.
    x0 : ndarray
    tol : float
        Stop when :math:`\|\nabla E\|_2 \le` ``tol``.
    max_iter : int
        Iteration cap (:class:`~sklearn.exceptions.ConvergenceWarning` when reached).
    c1, c2 : float
        Wolfe constants.

    Returns
    -------
    SolverResult
    """
    _check_common(tol, max_iter)
    x = np.array(x0, dtype=float, copy=True)
    f, g = fun_grad(x)
    log = IterLog(f, g)
    n_evals, k = 1, 0
    a_prev = min(1.0, 1.0 / max(float(np.max(np.abs(g))), 1e-300)) / 2.0
    converged = log.gns[-1] <= tol
    while not converged and k < max_iter:
        a, f, x, g, ev = line_search(fun_grad, x, f, g, -g, 2.0 * a_prev,
                                     c1=c1, c2=c2, max_ls=max_ls)
        n_evals += ev
        if a is None:
            break
        a_prev = a
        k += 1
        log.add(f, np.linalg.norm(g))
        converged = log.gns[-1] <= tol
        if log.stalled:
            break
    if not converged and k >= max_iter and warn:
        warn_cap(name, max_iter, log.gns[-1], tol)
    return log.result(x, k, n_evals, converged)


def solve_gradient_descent(problem, *, w0=None, tol=1e-8, max_iter=20000, **kwargs):
    """Gradient descent on a :class:`~bisvm.solvers.base.SmoothProblem` (warm start ``w0``,
    zeros by default). See :func:`minimize_gradient_descent`."""
    x0 = np.zeros(problem.n_features) if w0 is None else w0
    return minimize_gradient_descent(problem.value_and_gradient, x0, tol=tol,
                                     max_iter=max_iter, **kwargs)
