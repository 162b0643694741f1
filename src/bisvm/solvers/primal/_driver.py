"""What the line-search minimisers of :mod:`bisvm.solvers.primal` share around their loops
(gradient descent, BFGS, nonlinear CG, L-BFGS): the descent loop with its record and
stopping rules, the end of a run and the adapter from a
:class:`~bisvm.solvers.base.SmoothProblem` to ``fun_grad``.

Their common parameters, documented once here:

fun_grad : callable
    ``fun_grad(x) -> (f, g)``; ``f`` may be ``inf`` where the function is undefined.
x0 : ndarray
    The start.
tol : float
    Stop when :math:`\\|\\nabla E(x_k)\\|_2 \\le` ``tol``.
max_iter : int
    Iteration cap; a :class:`~sklearn.exceptions.ConvergenceWarning` (with ``warn``) when
    it is reached without convergence.
c1, c2 : float
    Strong-Wolfe constants, :math:`0 < c_1 < c_2 < 1` (Nocedal & Wright 2006, (3.7)).
max_ls : int
    Evaluations per line search at most.
name : str
    The solver's name in that warning.
"""

from __future__ import annotations

import numpy as np

from .._record import IterationLog
from ..base import warn_cap

__all__ = ["descent_loop", "finish", "solve_on_problem"]


def descent_loop(fun_grad, x0, step, *, tol, max_iter, name, warn, stats=None):
    r"""Iterate ``step`` from ``x0`` until :math:`\|\nabla E\|_2 \le` ``tol``, the cap,
    a failed step or twenty steps without decrease beyond rounding
    (:attr:`~bisvm.solvers._record.IterationLog.stalled`).

    ``step(x, f, g) -> ((x_new, f_new, g_new) or None, evaluations)`` is one iteration
    of a method (its direction, line search and update of its own state); ``None`` means
    no decrease was found. ``stats()`` gives the result's ``stats`` at the end.
    """
    x = np.array(x0, dtype=float, copy=True)
    f, g = fun_grad(x)
    log = IterationLog(f, g)
    n_evals, k = 1, 0
    converged = log.value <= tol
    while not converged and k < max_iter:
        new, ev = step(x, f, g)
        n_evals += ev
        if new is None:
            break
        x, f, g = new
        k += 1
        log.add(f, g)
        converged = log.value <= tol
        if log.stalled:
            break
    return finish(log, x, k, n_evals, converged, max_iter=max_iter, tol=tol, name=name,
                  warn=warn, stats={} if stats is None else stats())


def finish(log, x, k, n_evals, converged, *, max_iter, tol, name, warn, **fields):
    """The frozen result of a run that stopped at ``x`` after ``k`` iterations; warns
    only when the cap stopped it (a line search that found no decrease is no cap)."""
    if not converged and k >= max_iter and warn:
        warn_cap(name, max_iter, log.value, tol)
    return log.result(x, k, n_evals, converged, **fields)


def solve_on_problem(minimize, problem, w0, **kwargs):
    """``minimize(problem.value_and_gradient, w0, **kwargs)`` from ``w0`` (zeros by
    default): a minimiser over callables applied to a smooth problem."""
    x0 = np.zeros(problem.n_features) if w0 is None else w0
    return minimize(problem.value_and_gradient, x0, **kwargs)
