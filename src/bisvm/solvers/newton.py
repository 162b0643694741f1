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

from ._linalg import DenseFactor, LazyFactor, RefinedFactor, cholesky_solve
from .base import ConvergenceRecord, SolverResult, warn_cap

__all__ = [
    "minimize_newton",
    "solve_newton",
    "newton_loop",
    "dense_system",
    "DenseFactor",
    "cholesky_solve",
]


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


def dense_system(problem, w, d2):
    """The Newton system of a :class:`~bisvm.solvers.base.SmoothProblem` at ``w`` as a
    dense Cholesky factor (``O(n d^2 + d^3)``)."""
    return DenseFactor(problem.hessian_from_curvature(w, d2))


def newton_loop(problem, x0, system=dense_system, *, tol, max_iter, c1=1e-4, rho=0.5,
                max_ls=50, name="Newton lower-level solver", method="dense"):
    r"""The one damped (possibly inexact) Newton loop of the package, for a
    :class:`~bisvm.solvers.base.SmoothProblem` with per-sample curvature.

    At each iterate the step solves :math:`H p = -\nabla F` through
    ``system(problem, w, d2)``, a :class:`~bisvm.solvers.base.NewtonFactor`: a dense
    Cholesky factor, the sample-space (Woodbury) factor of
    :mod:`~bisvm.solvers.primal.wide`, or preconditioned CG
    (:mod:`~bisvm.solvers.primal.truncated`). Iterative systems solve to the relative
    residual :math:`\eta_k = \max(\min(0.5, \sqrt{\|g_k\|/\|g_0\|}, \sqrt{\|g_k\|}),
    0.1\,\mathrm{tol}/\|g_k\|)` (forcing terms of Eisenstat-Walker type and Nocedal &
    Wright (7.3): superlinear convergence, no effort beyond the tolerance; Thm 7.2).
    The absolute :math:`\sqrt{\|g_k\|}` matters for warm starts already close to the
    solution, where the relative term alone would ask only 0.5 of the first step. Armijo
    backtracking from the unit step; the per-sample curvature of the accepted point is
    reused (one pass over the data per trial). ``x0`` may be a list of candidate starts:
    the loop starts from the one with the smallest gradient norm, whose evaluation is
    the loop's first.

    Returns
    -------
    SolverResult
        ``factor`` is the Newton system at the returned point, built on first use.
    """
    t0 = time.perf_counter()
    best = None
    for start in (x0 if isinstance(x0, list) else [x0]):
        x = np.array(start, dtype=float, copy=True)
        f, g, d2 = problem.value_gradient_curvature(x)
        gn = float(np.linalg.norm(g))
        if best is None or gn < best[-1]:
            best = (x, f, g, d2, gn)
    n_evals = 1 if not isinstance(x0, list) else len(x0)
    x, f, g, d2, gn = best
    gn0 = gn
    objs, gns, secs = [f], [gn], [time.perf_counter() - t0]
    k = n_matvec = 0
    converged = gn <= tol
    F = None
    while not converged and k < max_iter:
        F = system(problem, x, d2)
        eta = max(min(0.5, np.sqrt(gn / gn0), np.sqrt(gn)), 0.1 * tol / gn)
        p = -F.solve(g, rtol=eta)
        n_matvec += getattr(F, "n_matvec", 0)
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
            # Near the optimum the decrease c1*a*d0 drops below the rounding error of f
            # and Armijo fails on noise; the full step is then judged by the gradient.
            if a == 1.0 and abs(f_new - f) <= 1e-12 * max(abs(f), 1.0) and np.linalg.norm(
                g_new
            ) < gn:
                break
            a *= rho
        else:
            break  # no decrease along p at working precision
        x, f, g, d2 = x_new, f_new, g_new, d2_new
        gn = float(np.linalg.norm(g))
        k += 1
        objs.append(f)
        gns.append(gn)
        secs.append(time.perf_counter() - t0)
        converged = gn <= tol
    if not converged and k >= max_iter:
        warn_cap(name, max_iter, gn, tol)
    rec = ConvergenceRecord(np.array(objs), np.array(gns), np.array(secs))
    return SolverResult(
        coef=x, objective=float(f), grad_norm=gn, n_iter=k, n_evals=n_evals,
        converged=bool(converged), seconds=time.perf_counter() - t0, record=rec,
        extra={"n_matvec": n_matvec}, certificate="gradient_norm",
        factor=_final_factor(problem, system, x, d2, F), method=method,
    )


def _final_factor(problem, system, x, d2, F_last):
    """The Newton system at the returned point, built on first use: a direct factor of
    the last step reused as CG preconditioner when the problem can apply its Hessian
    (:class:`~bisvm.solvers._linalg.RefinedFactor`), else a new system."""
    def build():
        return system(problem, x, d2)

    if getattr(F_last, "direct", False) and hasattr(problem, "hessian_operator") and hasattr(
            problem.penalty, "structured_hessian"):
        return LazyFactor(lambda: RefinedFactor(problem.hessian_operator(x, d2), F_last,
                                                 build))
    return LazyFactor(build)


def solve_newton(problem, *, w0=None, tol=1e-8, max_iter=100, **kwargs):
    """Newton with Cholesky on a :class:`~bisvm.solvers.base.SmoothProblem`.

    Parameters
    ----------
    problem : SmoothProblem
    w0 : ndarray or list of ndarray, optional
        Warm start (zeros by default), or candidate starts (see :func:`newton_loop`).
    tol, max_iter, **kwargs
        See :func:`minimize_newton`.
    """
    x0 = np.zeros(problem.n_features) if w0 is None else w0
    if hasattr(problem, "value_gradient_curvature"):
        return newton_loop(problem, x0, dense_system, tol=tol, max_iter=max_iter, **kwargs)
    return minimize_newton(
        problem.value_and_gradient, problem.hessian, x0, tol=tol, max_iter=max_iter,
        name="Newton lower-level solver", **kwargs,
    )
