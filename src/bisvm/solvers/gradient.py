r"""Gradient descent with a line search (seed 002 §3.1).

The direction is the steepest descent :math:`d_k = -\nabla E(\theta_k)`; the step
:math:`\eta_k` satisfies the strong Wolfe conditions (bracketing and zoom of
:func:`bisvm.solvers._linesearch.wolfe_search`, the same line search as the package's L-BFGS),
starting from twice the previous accepted step so that the step length adapts to the
local curvature. Convergence is linear with rate :math:`1 - 1/\kappa` on a
:math:`\kappa`-conditioned strongly convex function: simple and reliable, but slow — the
baseline of the comparison table of seed 002 §3.5.

:func:`line_search` is shared by the primal methods of this package (gradient descent,
BFGS, nonlinear conjugate gradient), so that they differ only in their direction.
"""

from __future__ import annotations

import numpy as np

from ._linesearch import line_search
from ._record import IterationLog as IterLog
from ._record import check_tol_max_iter as _check_common
from .base import warn_cap

__all__ = ["line_search", "minimize_gradient_descent", "solve_gradient_descent", "IterLog"]


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
