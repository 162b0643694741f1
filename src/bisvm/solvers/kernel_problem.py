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

from dataclasses import dataclass

import numpy as np

__all__ = ["KernelExpansionProblem", "solve_kernel_newton"]


@dataclass(frozen=True)
class KernelExpansionProblem:
    r"""Frozen kernel problem :math:`\tfrac12\beta^\top K\beta + C\sum_i s_i\ell(y_i, z_i)`.

    Parameters
    ----------
    K : ndarray of shape (n, n)
        Symmetric positive semi-definite Gram matrix of the training points.
    y : ndarray of shape (n,)
        Targets (±1 for classification losses).
    loss : object with ``value``, ``derivative``, ``second_derivative``
        A smooth loss of :mod:`bisvm.losses`.
    C : float
        Weight of the data term, :math:`C > 0`.
    fit_intercept : bool
        Unpenalised bias ``b`` as the last coefficient.
    sample_weight : ndarray of shape (n,), optional
        :math:`s_i` (ones by default).
    """

    K: np.ndarray
    y: np.ndarray
    loss: object
    C: float = 1.0
    fit_intercept: bool = True
    sample_weight: np.ndarray | None = None

    @property
    def n_features(self):
        return self.K.shape[0] + (1 if self.fit_intercept else 0)

    def _split(self, theta):
        n = self.K.shape[0]
        return theta[:n], (float(theta[n]) if self.fit_intercept else 0.0)

    def _s(self):
        return np.ones(self.K.shape[0]) if self.sample_weight is None else self.sample_weight

    def margins(self, theta):
        """:math:`z = K\\beta + b`."""
        beta, b = self._split(theta)
        return self.K @ beta + b

    def value(self, theta):
        beta, b = self._split(theta)
        Kb = self.K @ beta
        return 0.5 * float(beta @ Kb) + self.C * float(
            self._s() @ self.loss.value(self.y, Kb + b))

    def value_and_gradient(self, theta):
        beta, b = self._split(theta)
        Kb = self.K @ beta
        z = Kb + b
        sdl = self.C * self._s() * self.loss.derivative(self.y, z)
        f = 0.5 * float(beta @ Kb) + self.C * float(self._s() @ self.loss.value(self.y, z))
        g = self.K @ (beta + sdl)
        if self.fit_intercept:
            g = np.r_[g, sdl.sum()]
        return f, g

    def gradient(self, theta):
        return self.value_and_gradient(theta)[1]

    def hessian(self, theta):
        """Dense Hessian (see the module docstring)."""
        z = self.margins(theta)
        h = self.C * self._s() * self.loss.second_derivative(self.y, z)
        KD = self.K * h  # K diag(h)
        H = self.K + KD @ self.K
        if not self.fit_intercept:
            return H
        col = KD.sum(axis=1)
        return np.block([[H, col[:, None]], [col[None, :], np.array([[h.sum()]])]])

    def newton_direction(self, theta):
        r"""The Newton step :math:`p = -\nabla^2 F^{-1}\nabla F` without inverting ``K``.

        :math:`\nabla^2 F = \mathrm{diag}(K, 1)\,A` and :math:`\nabla F =
        \mathrm{diag}(K, 1)\,\tilde g` with :math:`\tilde g = (\beta + C s\odot\ell',\
        C s^\top\ell')`, so :math:`p = -A^{-1}\tilde g` with

        .. math::
            A = \begin{pmatrix} I + C D K & C D\mathbf 1 \\ C\mathbf 1^\top D K &
            C\mathbf 1^\top D \mathbf 1\end{pmatrix},

        which is non-singular even when ``K`` is singular (e.g. a linear kernel with
        ``n > d``): :math:`I + CDK` has the eigenvalues of
        :math:`I + C D^{1/2} K D^{1/2} \succeq I` (Chapelle 2007, "Training a support
        vector machine in the primal", §3).
        """
        n = self.K.shape[0]
        beta, b = self._split(theta)
        z = self.K @ beta + b
        s = self.C * self._s()
        sdl = s * self.loss.derivative(self.y, z)
        h = s * self.loss.second_derivative(self.y, z)
        A = h[:, None] * self.K
        A[np.diag_indices(n)] += 1.0
        gt = beta + sdl
        if self.fit_intercept:
            A = np.block([[A, h[:, None]], [(h @ self.K)[None, :], np.array([[h.sum()]])]])
            gt = np.r_[gt, sdl.sum()]
        return -np.linalg.solve(A, gt)


def solve_kernel_newton(problem, theta0=None, *, tol=1e-8, max_iter=100, c1=1e-4, rho=0.5,
                        max_ls=50, name="kernel Newton", warn=True):
    r"""Damped Newton's method on a :class:`KernelExpansionProblem` with the step of
    :meth:`KernelExpansionProblem.newton_direction` (one :math:`O(n^3)` LU solve per
    iteration) and Armijo backtracking from the unit step.

    Stops when :math:`\|\nabla F\|_2 \le` ``tol``; returns a
    :class:`~bisvm.solvers.base.SolverResult`.
    """
    from .base import warn_cap
    from .gradient import IterLog

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
