r"""A kernel expansion in the primal β form of seed 002 §2.2.4, with the same
``value_and_gradient``/``hessian`` interface as :class:`~bisvm.solvers.base.SmoothProblem`,
so that every primal solver of the package (Newton, L-BFGS, BFGS, CG, gradient descent)
trains kernel machines with a differentiable loss (kernel logistic regression, the
kernel L2-SVM, kernel ridge) directly in the primal.

Substituting :math:`w = \sum_j \beta_j \varphi(x_j)` (the labels of seed 002 folded into
β) gives :math:`f(x) = \sum_j \beta_j k(x, x_j) + b` and

.. math::
    F(\beta, b) = \tfrac12 \beta^\top K \beta + C \sum_i s_i\, \ell(y_i, z_i),
    \qquad z = K\beta + b\mathbf 1,

.. math::
    \nabla_\beta F = K(\beta + C\, s \odot \ell'(z)),\qquad
    \partial_b F = C\, s^\top \ell'(z),

.. math::
    \nabla^2 F = \begin{pmatrix} K + C K D K & C K D \mathbf 1 \\
    C \mathbf 1^\top D K & C \mathbf 1^\top D \mathbf 1 \end{pmatrix},
    \qquad D = \operatorname{diag}(s \odot \ell''(z)).

The coefficients are ``theta = [β, b]`` (``b`` only with ``fit_intercept``).
"""

from __future__ import annotations

import numpy as np

from .problems import KernelExpansionProblem

__all__ = ["KernelExpansionProblem", "solve_kernel_newton"]


def solve_kernel_newton(problem, theta0=None, *, tol=1e-8, max_iter=100, c1=1e-4, rho=0.5,
                        max_ls=50, name="kernel Newton", warn=True):
    r"""Damped Newton's method on a :class:`KernelExpansionProblem` with the step of
    :meth:`KernelExpansionProblem.newton_direction` (one :math:`O(n^3)` LU solve per
    iteration) and Armijo backtracking from the unit step.

    Stops when :math:`\|\nabla F\|_2 \le` ``tol``; returns a
    :class:`~bisvm.solvers.base.SolverResult`.
    """
    from ._record import IterationLog as IterLog
    from .base import warn_cap

    theta = np.zeros(problem.n_features) if theta0 is None else np.array(theta0, float)
    f, g = problem.value_and_gradient(theta)
    log = IterLog(f, g)
    n_evals, k = 1, 0
    converged = log.gns[-1] <= tol
    while not converged and k < max_iter:
        p = problem.newton_direction(theta)
        d0 = float(g @ p)
        if not d0 < 0:
            p, d0 = -g, -float(g @ g)
        a = 1.0
        for _ in range(max_ls):
            t_new = theta + a * p
            f_new, g_new = problem.value_and_gradient(t_new)
            n_evals += 1
            if np.isfinite(f_new) and (f_new <= f + c1 * a * d0 or (
                    a == 1.0 and abs(f_new - f) <= 1e-12 * max(abs(f), 1.0)
                    and np.linalg.norm(g_new) < np.linalg.norm(g))):
                break  # (near the optimum Armijo fails on rounding: judge by the gradient)
            a *= rho
        else:
            break
        theta, f, g = t_new, f_new, g_new
        k += 1
        log.add(f, np.linalg.norm(g))
        converged = log.gns[-1] <= tol
    if not converged and k >= max_iter and warn:
        warn_cap(name, max_iter, log.gns[-1], tol)
    return log.result(theta, k, n_evals, converged)
