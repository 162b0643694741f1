r"""Finite Newton method for the primal L2-loss linear support vector regression
(LIBLINEAR's ``-s 11`` problem, which LIBLINEAR solves by a trust-region Newton method;
here the finite Newton method with exact line search of
:mod:`bisvm.solvers.primal.finite_newton`,
seed 002 §7.1, carried over to the two-sided loss).

Problem:

.. math::
    \min_w f(w) = \tfrac12\|w\|^2 + \sum_i c_i \max(0,\ |y_i - x_i^\top w| - \epsilon)^2 .

Each sample contributes two one-sided squared hinges, :math:`\max(0, (y_i - \epsilon) -
x_i^\top w)^2` and :math:`\max(0, x_i^\top w - (y_i + \epsilon))^2`, at most one of which
is positive, so :math:`f` is piecewise quadratic, convex and differentiable. With
:math:`I^\pm` the samples above / below the tube at :math:`w^k` and :math:`t_i = y_i \mp
\epsilon` the tube edge they face, :math:`\bar w` solves

.. math::
    (I + 2 X_I^\top C_I X_I)\,\bar w = 2 X_I^\top C_I\, t_I ,

and :math:`w^{k+1} = w^k + \delta(\bar w - w^k)` with the exact minimiser ``δ`` of the
one-dimensional piecewise quadratic (:func:`~bisvm.solvers.primal.finite_newton.exact_line_search`
on the ``2n`` one-sided pieces). Once the pieces stop changing the full step is exact.
For large ``d`` the system is solved by CG to 0.1 relative residual only (a truncated
Newton step, as LIBLINEAR's trust-region Newton does); the exact line search keeps every
step a descent step.
The intercept, when wanted, is a column of the caller's ``X`` (LIBLINEAR's bias feature).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ...losses import SquaredEpsilonInsensitive
from .._linalg import cholesky_solve
from .cg import conjugate_gradient
from .finite_newton import (
    check_linear_problem,
    exact_line_search,
    finite_newton_loop,
    with_intercept,
)

__all__ = ["solve_svr_finite_newton"]


def _pieces(y, z, epsilon):
    """Residuals of the two one-sided hinges: ``a_up = (y - ε) - z``, ``a_dn = z - (y + ε)``."""
    return (y - epsilon) - z, z - (y + epsilon)


def _newton_step(X, w, g, I, c, linear_solver):
    r"""Step to the minimiser of the quadratic with the pieces ``I`` active,
    :math:`(I + 2X_I^\top C_I X_I)\,s = -\nabla f(w)`: exact by Cholesky, or inexact by
    CG to 0.1 relative residual (a truncated Newton step, as LIBLINEAR's trust-region
    Newton solves its systems: the line search makes up for the inexactness, and the
    first iterations need no exact solve)."""
    d = X.shape[1]
    XI, cI = X[I], c[I]
    if linear_solver == "cholesky":
        XtCX = (np.asarray((XI.T @ sp.diags(cI) @ XI).todense()) if sp.issparse(XI)
                else (XI.T * cI) @ XI)
        return cholesky_solve(np.eye(d) + 2.0 * XtCX, -g)

    def matvec(v):
        return v + 2.0 * np.asarray(XI.T @ (cI * (XI @ v))).ravel()
    return conjugate_gradient(matvec, -g, None, tol=0.1, max_iter=10 * d)[0]


def solve_svr_finite_newton(problem, *, w0=None, tol=1e-4, max_iter=1000,
                            linear_solver="auto", warn=True, verbose=0):
    r"""Minimise :math:`\tfrac12\|w\|^2 + \sum_i c_i \max(0, |y_i - x_i^\top w| -
    \epsilon)^2` by the finite Newton method with exact line search.

    Parameters
    ----------
    problem : LinearProblem
        With the :class:`~bisvm.losses.SquaredEpsilonInsensitive` loss (its ``epsilon``
        is the half-width of the tube), real targets ``y``, costs :math:`c_i \ge 0`
        (``C`` times sample weights) and no ``quadratic`` (:math:`R = I`). With
        ``bias > 0`` the intercept feature is appended (penalised, as LIBLINEAR).
    w0 : ndarray, optional
        Warm start over the columns (the intercept feature's weight last; zeros by
        default).
    tol : float
        Stop when :math:`\|\nabla f(w)\| \le` ``tol`` :math:`\cdot \|\nabla f(w_0)\|`
        (LIBLINEAR's primal rule), or when a full step leaves the active pieces unchanged.
    max_iter : int
    linear_solver : {"auto", "cholesky", "cg"}
        "auto" uses Cholesky up to ``d = 2000`` dense (5000 sparse), CG beyond; the CG
        steps are inexact (0.1 relative residual), so "cg" stops on the gradient test only.
    warn : bool
    verbose : int
        Prints one line per Newton iteration when positive.

    Returns
    -------
    SolverResult
        ``coef``, ``intercept`` (``bias`` times the intercept feature's weight),
        ``active_set`` the samples outside the tube; certificate
        ``"relative_gradient_norm"``, :math:`\|\nabla f(w)\|/\|\nabla f(w_0)\|`.
    """
    X, y, c, linear_solver = check_linear_problem(
        problem, SquaredEpsilonInsensitive, linear_solver=linear_solver, tol=tol,
        max_iter=max_iter)
    if problem.quadratic is not None:
        raise ValueError("the SVR finite Newton method solves R = I only (quadratic=None)")
    epsilon = float(problem.loss.epsilon)
    d = X.shape[1]
    w = np.zeros(d) if w0 is None else np.array(w0, dtype=float, copy=True)
    z = np.asarray(X @ w).ravel()
    cc = np.r_[c, c]
    n_active = [0]

    def value_grad(w, z):
        # the loss's value max(0, |z - y| - ε)² rounds differently from the pieces
        # (y - ε) - z below; the pieces are kept so that the iterates stay the same
        up, dn = _pieces(y, z, epsilon)
        r = np.maximum(up, 0.0) - np.maximum(dn, 0.0)  # signed excess over the tube
        return (0.5 * float(w @ w) + float(c @ (r * r)),
                w - 2.0 * np.asarray(X.T @ (c * r)).ravel())

    def step(w, z, g):
        up, dn = _pieces(y, z, epsilon)
        act = ((up > 0) | (dn > 0)) & (c > 0)
        I = np.flatnonzero(act)
        n_active[0] = I.size
        dvec = _newton_step(X, w, g, I, c, linear_solver)
        q = np.asarray(X @ dvec).ravel()
        delta = exact_line_search(float(w @ dvec), float(dvec @ dvec), np.r_[up, dn],
                                  np.r_[q, -q], cc)
        w, z = w + delta * dvec, z + delta * q
        up2, dn2 = _pieces(y, z, epsilon)
        same = np.array_equal(((up2 > 0) | (dn2 > 0)) & (c > 0), act)
        # a full exact step into unchanged pieces lands on the optimum (finite termination)
        return w, z, delta, delta == 1.0 and same and linear_solver == "cholesky"

    def report(k, f, gn, delta):
        print(f"SVR finite Newton: iter {k}, objective {f:.10g}, |grad| {gn:.3e}, "
              f"step {delta:.3g}, outside the tube {n_active[0]}")

    res, z = finite_newton_loop(value_grad, step, w, z, scale=lambda gn: gn, tol=tol,
                                max_iter=max_iter, start_tol=0.0, name="SVR finite Newton",
                                warn=warn, report=report if verbose else None)
    up, dn = _pieces(y, z, epsilon)
    return with_intercept(res, problem.bias,
                           active_set=np.flatnonzero((up > 0) | (dn > 0)))
