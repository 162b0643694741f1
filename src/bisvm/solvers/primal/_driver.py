"""What the line-search minimisers of :mod:`bisvm.solvers.primal` share around their loops
(gradient descent, BFGS, nonlinear CG, L-BFGS): the end of a run and the adapter from a
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
name : str
    The solver's name in that warning.
"""

from __future__ import annotations

import numpy as np

from ..base import warn_cap

__all__ = ["finish", "solve_on_problem"]


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
