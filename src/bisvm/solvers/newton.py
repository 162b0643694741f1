r"""Damped Newton's method with a Cholesky solve of the exact Hessian (seed 002 §3.2;
used for the smoothed L2L1-SVM of seed-000 §1.5, whose Hessian is at hand).

Step :math:`p = -\nabla^2 F(w)^{-1}\nabla F(w)` by ``scipy.linalg.cho_factor``; Armijo
backtracking from the unit step gives global convergence, the unit step near the optimum
gives quadratic convergence. If the Hessian is not numerically positive definite a
multiple of the identity is added (Levenberg damping) until Cholesky succeeds.
"""

from __future__ import annotations

import time

import numpy as np
from scipy.linalg import LinAlgError, cho_factor, cho_solve

from .base import ConvergenceRecord, SolverResult, warn_cap

__all__ = ["minimize_newton", "solve_newton", "cholesky_solve"]


def cholesky_solve(H, b):
    """Solve ``H x = b`` (``b`` a vector or a matrix of right-hand sides) for symmetric
    positive definite ``H`` by Cholesky, never forming an inverse; a tiny diagonal shift
    is added if ``H`` is numerically singular."""
    shift = 0.0
    scale = max(float(np.max(np.abs(np.diag(H)))), 1e-300)
    for _ in range(12):
        try:
            c = cho_factor(H + shift * np.eye(H.shape[0]) if shift else H, check_finite=False)
            return cho_solve(c, b, check_finite=False)
        except LinAlgError:
            shift = max(shift * 10.0, 1e-12 * scale)
    raise LinAlgError("matrix is not positive definite even after diagonal shifting")


def minimize_newton(fun_grad, hess, x0, *, tol=1e-8, max_iter=100, c1=1e-4, rho=0.5,
                    max_ls=50, name="Newton", warn=True):
    r"""Minimise a smooth strongly convex function by damped Newton steps.

    Parameters
    ----------
    fun_grad : callable
        ``fun_grad(x) -> (f, g)``.
    hess : callable
        ``hess(x) -> H`` (dense, symmetric).
    x0 : ndarray
    tol : float
        Stop when :math:`\|\nabla f\|_2 \le` ``tol``.
    max_iter : int
    c1, rho : float
        Armijo constant and backtracking factor.

    Returns
    -------
    SolverResult
    """
    t0 = time.perf_counter()
    x = np.array(x0, dtype=float, copy=True)
    f, g = fun_grad(x)
    n_evals = 1
    objs, gns, secs = [f], [float(np.linalg.norm(g))], [time.perf_counter() - t0]
    k = 0
    converged = gns[-1] <= tol
    while not converged and k < max_iter:
        p = -cholesky_solve(hess(x), g)
        d0 = float(g @ p)
        if not d0 < 0:
            p, d0 = -g, -float(g @ g)
        a = 1.0
        for _ in range(max_ls):
            x_new = x + a * p
            f_new, g_new = fun_grad(x_new)
            n_evals += 1
            if np.isfinite(f_new) and f_new <= f + c1 * a * d0:
                break
            # Near the optimum the decrease c1*a*d0 drops below the rounding error of f
            # and Armijo fails on noise; the full step is then judged by the gradient.
            if a == 1.0 and abs(f_new - f) <= 1e-12 * max(abs(f), 1.0) and np.linalg.norm(
                g_new
            ) < np.linalg.norm(g):
                break
            a *= rho
        else:
            break  # no decrease along p at working precision
        x, f, g = x_new, f_new, g_new
        k += 1
        objs.append(f)
        gns.append(float(np.linalg.norm(g)))
        secs.append(time.perf_counter() - t0)
        converged = gns[-1] <= tol
    if not converged and k >= max_iter and warn:
        warn_cap(name, max_iter, gns[-1], tol)
    rec = ConvergenceRecord(np.array(objs), np.array(gns), np.array(secs))
    return SolverResult(
        coef=x, objective=float(f), grad_norm=float(gns[-1]), n_iter=k, n_evals=n_evals,
        converged=bool(converged), seconds=time.perf_counter() - t0, record=rec,
    )


def _newton_fused(problem, x0, *, tol, max_iter, c1=1e-4, rho=0.5, max_ls=50):
    """The loop of :func:`minimize_newton` for a SmoothProblem, reusing the per-sample
    curvature computed with the accepted point's gradient (one pass per trial)."""
    t0 = time.perf_counter()
    x = np.array(x0, dtype=float, copy=True)
    f, g, d2 = problem.value_gradient_curvature(x)
    n_evals = 1
    gn = float(np.linalg.norm(g))
    objs, gns, secs = [f], [gn], [time.perf_counter() - t0]
    k = 0
    converged = gn <= tol
    while not converged and k < max_iter:
        p = -cholesky_solve(problem.hessian_from_curvature(x, d2), g)
        d0 = float(g @ p)
        if not d0 < 0:
            p, d0 = -g, -float(g @ g)
        a = 1.0
        for _ in range(max_ls):
            x_new = x + a * p
            f_new, g_new, d2_new = problem.value_gradient_curvature(x_new)
            n_evals += 1
            if np.isfinite(f_new) and f_new <= f + c1 * a * d0:
                break
            if a == 1.0 and abs(f_new - f) <= 1e-12 * max(abs(f), 1.0) and np.linalg.norm(
                g_new
            ) < gn:
                break
            a *= rho
        else:
            break
        x, f, g, d2 = x_new, f_new, g_new, d2_new
        gn = float(np.linalg.norm(g))
        k += 1
        objs.append(f)
        gns.append(gn)
        secs.append(time.perf_counter() - t0)
        converged = gn <= tol
    if not converged and k >= max_iter:
        warn_cap("Newton lower-level solver", max_iter, gn, tol)
    rec = ConvergenceRecord(np.array(objs), np.array(gns), np.array(secs))
    return SolverResult(
        coef=x, objective=float(f), grad_norm=gn, n_iter=k, n_evals=n_evals,
        converged=bool(converged), seconds=time.perf_counter() - t0, record=rec,
    )


def solve_newton(problem, *, w0=None, tol=1e-8, max_iter=100, **kwargs):
    """Newton with Cholesky on a :class:`~bisvm.solvers.base.SmoothProblem`.

    Parameters
    ----------
    problem : SmoothProblem
    w0 : ndarray, optional
        Warm start (zeros by default).
    tol, max_iter, **kwargs
        See :func:`minimize_newton`.
    """
    x0 = np.zeros(problem.n_features) if w0 is None else w0
    if hasattr(problem, "value_gradient_curvature"):
        return _newton_fused(problem, x0, tol=tol, max_iter=max_iter, **kwargs)
    return minimize_newton(
        problem.value_and_gradient, problem.hessian, x0, tol=tol, max_iter=max_iter,
        name="Newton lower-level solver", **kwargs,
    )
