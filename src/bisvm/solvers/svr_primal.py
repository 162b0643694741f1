r"""Finite Newton method for the primal L2-loss linear support vector regression
(LIBLINEAR's ``-s 11`` problem, which LIBLINEAR solves by a trust-region Newton method;
here the finite Newton method with exact line search of :mod:`bisvm.solvers.finite_newton`,
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
one-dimensional piecewise quadratic (:func:`~bisvm.solvers.finite_newton.exact_line_search`
on the ``2n`` one-sided pieces). Once the pieces stop changing the full step is exact.
For large ``d`` the system is solved by CG to 0.1 relative residual only (a truncated
Newton step, as LIBLINEAR's trust-region Newton does); the exact line search keeps every
step a descent step.
The intercept, when wanted, is a column of the caller's ``X`` (LIBLINEAR's bias feature).
"""

from __future__ import annotations

import time

import numpy as np
import scipy.sparse as sp

from .base import ConvergenceRecord, SolverResult, warn_cap
from .cg import conjugate_gradient
from .finite_newton import exact_line_search
from .newton import cholesky_solve

__all__ = ["solve_svr_finite_newton"]


def _pieces(y, z, epsilon):
    """Residuals of the two one-sided hinges: ``a_up = (y - ε) - z``, ``a_dn = z - (y + ε)``."""
    return (y - epsilon) - z, z - (y + epsilon)


def _value_grad(X, y, w, z, c, epsilon):
    up, dn = _pieces(y, z, epsilon)
    r = np.maximum(up, 0.0) - np.maximum(dn, 0.0)  # signed excess over the tube
    f = 0.5 * float(w @ w) + float(c @ (r * r))
    g = w - 2.0 * np.asarray(X.T @ (c * r)).ravel()
    return f, g


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


def solve_svr_finite_newton(X, y, *, cost=1.0, epsilon=0.0, w0=None, tol=1e-4,
                            max_iter=1000, linear_solver="auto", warn=True, verbose=0):
    r"""Minimise :math:`\tfrac12\|w\|^2 + \sum_i c_i \max(0, |y_i - x_i^\top w| -
    \epsilon)^2` by the finite Newton method with exact line search.

    Parameters
    ----------
    X : ndarray of shape (n, d) or scipy.sparse matrix
        Include a constant column to fit an intercept (penalised, as LIBLINEAR).
    y : ndarray of shape (n,)
    cost : float or ndarray of shape (n,)
        :math:`c_i \ge 0` (``C`` times sample weights).
    epsilon : float
        Half-width of the insensitive tube, :math:`\epsilon \ge 0`.
    w0 : ndarray of shape (d,), optional
        Warm start (zeros by default).
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
        ``grad_norm`` is the final gradient norm; ``extra["active_set"]`` the samples
        outside the tube.
    """
    if linear_solver not in ("auto", "cholesky", "cg"):
        raise ValueError(f"linear_solver must be 'auto', 'cholesky' or 'cg', got "
                         f"{linear_solver!r}")
    if not (np.isfinite(tol) and tol > 0):
        raise ValueError(f"tol must be a positive float, got {tol!r}")
    if int(max_iter) != max_iter or max_iter < 1:
        raise ValueError(f"max_iter must be a positive integer, got {max_iter!r}")
    if not (np.isfinite(epsilon) and epsilon >= 0):
        raise ValueError(f"epsilon must be a non-negative float, got {epsilon!r}")
    t0 = time.perf_counter()
    n, d = X.shape
    y = np.asarray(y, dtype=float)
    c = np.broadcast_to(np.asarray(cost, dtype=float), (n,)).copy()
    if np.any(c < 0) or not np.all(np.isfinite(c)):
        raise ValueError("cost must be finite and non-negative")
    if linear_solver == "auto":
        linear_solver = "cholesky" if d <= (5000 if sp.issparse(X) else 2000) else "cg"
    w = np.zeros(d) if w0 is None else np.array(w0, dtype=float, copy=True)
    z = np.asarray(X @ w).ravel()
    f, g = _value_grad(X, y, w, z, c, epsilon)
    gn0 = float(np.linalg.norm(g))
    objs, gns, secs = [f], [gn0], [0.0]
    k = 0
    converged = gn0 == 0.0
    cc = np.r_[c, c]
    while not converged and k < max_iter:
        up, dn = _pieces(y, z, epsilon)
        act = ((up > 0) | (dn > 0)) & (c > 0)
        I = np.flatnonzero(act)
        dvec = _newton_step(X, w, g, I, c, linear_solver)
        q = np.asarray(X @ dvec).ravel()
        delta = exact_line_search(float(w @ dvec), float(dvec @ dvec), np.r_[up, dn],
                                  np.r_[q, -q], cc)
        w = w + delta * dvec
        z = z + delta * q
        k += 1
        up2, dn2 = _pieces(y, z, epsilon)
        same = np.array_equal(((up2 > 0) | (dn2 > 0)) & (c > 0), act)
        f, g = _value_grad(X, y, w, z, c, epsilon)
        objs.append(f)
        gns.append(float(np.linalg.norm(g)))
        secs.append(time.perf_counter() - t0)
        if verbose:
            print(f"SVR finite Newton: iter {k}, objective {f:.10g}, |grad| {gns[-1]:.3e}, "
                  f"step {delta:.3g}, outside the tube {I.size}")
        # a full exact step into unchanged pieces lands on the optimum (finite termination)
        converged = gns[-1] <= tol * gn0 or (
            delta == 1.0 and same and linear_solver == "cholesky")
    if not converged and warn:
        warn_cap("SVR finite Newton", max_iter, gns[-1], tol * gn0)
    rec = ConvergenceRecord(np.array(objs), np.array(gns), np.array(secs))
    up, dn = _pieces(y, z, epsilon)
    return SolverResult(
        coef=w, objective=float(f), grad_norm=gns[-1], n_iter=k, n_evals=k + 1,
        converged=bool(converged), seconds=time.perf_counter() - t0, record=rec,
        extra={"active_set": np.flatnonzero((up > 0) | (dn > 0))},
    )
