r"""Gradient descent with a line search (Nocedal & Wright 2006, chapter 3).

The direction is the steepest descent :math:`d_k = -\nabla E(\theta_k)`; the step
:math:`\eta_k` satisfies the strong Wolfe conditions (bracketing and zoom of
:func:`bisvm.solvers._linesearch.wolfe_search`, the same line search as the package's L-BFGS),
starting from twice the previous accepted step so that the step length adapts to the
local curvature. Convergence is linear with rate :math:`1 - 1/\kappa` on a
:math:`\kappa`-conditioned strongly convex function: simple and reliable, but slow — the
baseline the other primal methods are compared with.

The line search (:func:`~bisvm.solvers._linesearch.line_search`) is shared by the primal
methods of this package (gradient descent, BFGS, nonlinear conjugate gradient), so that
they differ only in their direction.
"""

from __future__ import annotations

import numpy as np

from .._linesearch import line_search
from .._record import check_tol_max_iter
from ._driver import descent_loop, solve_on_problem

__all__ = ["minimize_gradient_descent", "solve_gradient_descent"]


def minimize_gradient_descent(fun_grad, x0, *, tol=1e-8, max_iter=20000, c1=1e-4, c2=0.9,
                              max_ls=40, name="gradient descent", warn=True):
    r"""Minimise a smooth function by steepest descent with a strong-Wolfe line search
    from twice the last accepted step; returns a
    :class:`~bisvm.solvers.base.SolverResult`. The parameters (``fun_grad``, ``x0``,
    ``tol``, ``max_iter``, ``c1``, ``c2``, ``max_ls``, ``name``, ``warn``) are the common
    ones of :mod:`bisvm.solvers.primal._driver`."""
    check_tol_max_iter(tol, max_iter)
    state = {"a_prev": None}

    def step(x, f, g):
        if state["a_prev"] is None:
            state["a_prev"] = min(1.0, 1.0 / max(float(np.max(np.abs(g))), 1e-300)) / 2.0
        a, f, x, g, ev = line_search(fun_grad, x, f, g, -g, 2.0 * state["a_prev"],
                                     c1=c1, c2=c2, max_ls=max_ls)
        if a is None:
            return None, ev
        state["a_prev"] = a
        return (x, f, g), ev

    return descent_loop(fun_grad, x0, step, tol=tol, max_iter=max_iter, name=name,
                        warn=warn)


def solve_gradient_descent(problem, *, w0=None, tol=1e-8, max_iter=20000, **kwargs):
    """Gradient descent on a :class:`~bisvm.solvers.base.SmoothProblem` (warm start ``w0``,
    zeros by default). See :func:`minimize_gradient_descent`."""
    return solve_on_problem(minimize_gradient_descent, problem, w0, tol=tol, max_iter=max_iter,
                            **kwargs)
