r"""A kernel expansion in the primal β form (Chapelle 2007, "Training a support vector
machine in the primal"), with the same
``value_and_gradient``/``hessian`` interface as :class:`~bisvm.solvers.base.SmoothProblem`,
so that every primal solver of the package (Newton, L-BFGS, BFGS, CG, gradient descent)
trains kernel machines with a differentiable loss (kernel logistic regression, the
kernel L2-SVM, kernel ridge) directly in the primal.

Substituting :math:`w = \sum_j \beta_j \varphi(x_j)` (the labels folded into
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

from ..problems import KernelExpansionProblem
from .newton import damped_newton

__all__ = ["KernelExpansionProblem", "solve_kernel_newton"]


def solve_kernel_newton(problem, *, w0=None, tol=1e-8, max_iter=100, c1=1e-4, rho=0.5,
                        max_ls=50, name="kernel Newton", warn=True):
    r"""Damped Newton's method (:func:`~bisvm.solvers.primal.newton.damped_newton`) on a
    :class:`KernelExpansionProblem` with the step of
    :meth:`KernelExpansionProblem.newton_direction` (one :math:`O(n^3)` LU solve per
    iteration).

    Parameters
    ----------
    problem : KernelExpansionProblem
    w0 : ndarray, optional
        Warm start ``theta = [β, b]`` (zeros by default).
    tol, max_iter, c1, rho, max_ls, name, warn
        See :func:`~bisvm.solvers.primal.newton.damped_newton`.

    Returns
    -------
    SolverResult
        ``coef`` is ``theta``; certificate ``"gradient_norm"``.
    """
    theta = np.zeros(problem.n_features) if w0 is None else np.array(w0, float)

    def evaluate(theta):
        return (*problem.value_and_gradient(theta), None)

    run = damped_newton(evaluate, lambda theta, g, _: problem.newton_direction(theta), theta,
                        tol=tol, max_iter=max_iter, c1=c1, rho=rho, max_ls=max_ls,
                        name=name, warn=warn)
    return run.result()
