r"""Damped Newton's method: one loop (:func:`damped_newton`) for every smooth problem of the
package whose Newton direction is at hand (Nocedal & Wright 2006, chapter 3; used for the
smoothed L2L1-SVM of González Vallejo 2024, the kernel expansion in the primal of
Chapelle 2007 and Platt scaling).

The loop takes a direction :math:`p` from a callback (a Cholesky solve of the exact
Hessian, a sample-space or CG Newton system, a problem's own Newton step), falls back to
:math:`-\nabla F` when :math:`p` is not a descent direction, and backtracks from the unit
step until the Armijo condition holds (:func:`~bisvm.solvers._linesearch.armijo`): global
convergence, with the unit step near the optimum giving quadratic convergence
(Nocedal & Wright 2006, §3.5). If the Hessian is not numerically positive definite a
multiple of the identity is added (Levenberg damping, :func:`cholesky_solve`) until
Cholesky succeeds.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ...losses import provides
from .._linalg import DenseFactor, LazyFactor, RefinedFactor, cholesky_solve, euclidean_norm
from .._linesearch import armijo
from .._record import IterationLog
from ..base import warn_cap
from ..problems import CurvatureProblem

__all__ = [
    "damped_newton",
    "NewtonRun",
    "minimize_newton",
    "solve_newton",
    "newton_loop",
    "dense_system",
    "DenseFactor",
    "cholesky_solve",
]


class NewtonRun(NamedTuple):
    """The state :func:`damped_newton` stops in: the iterate ``x`` with its value ``f``,
    gradient ``g`` and the caller's payload ``state`` (what ``evaluate`` returned beside
    them), the counts, and the iteration log that builds the
    :class:`~bisvm.solvers.base.SolverResult` (:meth:`result`)."""

    x: np.ndarray
    f: float
    g: np.ndarray
    state: object
    n_iter: int
    n_evals: int
    converged: bool
    log: IterationLog

    def result(self, **fields):
        """The frozen result at ``x`` with the typed ``fields`` (``stats``, ``method``,
        ``factor``, ...)."""
        return self.log.result(self.x, self.n_iter, self.n_evals, self.converged, **fields)


def _dot(g, p):
    return float(g @ p)


def _flat_unit_step(f, gn):
    """Accept the unit step when the objective is flat to rounding and the gradient
    norm decreases: near the optimum the Armijo decrease falls below the rounding error
    of f and the test only sees noise; the step is then judged by the gradient."""
    def accept(a, out):
        return (a == 1.0 and abs(out[0] - f) <= 1e-12 * max(abs(f), 1.0)
                and euclidean_norm(out[1]) < gn)
    return accept


def damped_newton(evaluate, direction, w0, *, tol=1e-8, max_iter=100, converged=None,
                  c1=1e-4, rho=0.5, max_ls=50, flat_ok=True, strict=False,
                  steepest_fallback=True, slope=_dot, first=None, name="Newton",
                  warn=True, path=None):
    r"""Minimise a smooth function by damped Newton steps along ``direction``.

    Iteration :math:`x_{k+1} = x_k + a_k p_k` with :math:`p_k` = ``direction(x_k, g_k,
    state_k)`` and :math:`a_k` the first of :math:`1, \rho, \rho^2, \dots` that passes
    the Armijo test :math:`F(x_k + a p_k) \le F(x_k) + c_1 a\, \nabla F_k^\top p_k`
    (Nocedal & Wright 2006, Alg. 3.1 with Newton directions, §3.5).

    Parameters
    ----------
    evaluate : callable
        ``evaluate(x) -> (f, g, state)``: value, gradient and whatever ``direction``
        needs at ``x`` (per-sample curvature, ...; ``None`` if nothing).
    direction : callable
        ``direction(x, g, state) -> p``, the (possibly inexact) Newton step.
    w0 : ndarray
        The start.
    tol : float
        Stop when :math:`\|\nabla F\|_2 \le` ``tol`` (the default test).
    max_iter : int
        Newton steps at most; a :class:`~sklearn.exceptions.ConvergenceWarning` (with
        ``warn``) when reached without convergence.
    converged : callable, optional
        ``converged(g) -> bool`` replacing the gradient-norm test.
    c1, rho, max_ls : float, float, int
        Armijo constant, backtracking factor and trials per line search. A line search
        that finds no step ends the run (no decrease at working precision).
    flat_ok : bool
        Accept the unit step when :math:`|F(x+p) - F(x)| \le 10^{-12}\max(|F|, 1)` and
        the gradient norm decreases: near the optimum the decrease
        :math:`c_1 a \nabla F^\top p` falls below the rounding error of :math:`F` and the
        Armijo test only sees noise.
    strict : bool
        Armijo test with ``<`` (LIBSVM's Platt scaling).
    steepest_fallback : bool
        Replace a direction with :math:`\nabla F^\top p \not< 0` by :math:`-\nabla F`.
    slope : callable
        ``slope(g, p)``: the directional derivative :math:`\nabla F^\top p` (a caller
        may need its own summation order to reproduce a reference bit for bit).
    first : tuple, optional
        ``(f, g, state, n_evals)`` at ``w0`` when the caller has evaluated it already
        (candidate starts), counted as ``n_evals`` evaluations.
    name : str
        The solver's name in the warning.
    path : callable, optional
        ``path(x, p, a) -> x_a``, the trial point at step ``a`` (the ray
        :math:`x + a p` by default): a problem may bend the ray where a full step
        would carry a coordinate past a kink of a nearly non-smooth term
        (:meth:`~bisvm.solvers.problems.SmoothProblem.trial_point`). It must reduce
        to the ray for small ``a``, so that backtracking still finds a decrease.

    Returns
    -------
    NewtonRun
    """
    x = np.array(w0, dtype=float, copy=True)
    if first is None:
        f, g, state = evaluate(x)
        n_evals = 1
    else:
        f, g, state, n_evals = first
    log = IterationLog(f, g)
    gn = log.value
    done = converged(g) if converged is not None else gn <= tol
    k = 0
    while not done and k < max_iter:
        p = direction(x, g, state)
        d0 = slope(g, p)
        if steepest_fallback and not d0 < 0:
            p, d0 = -g, -float(g @ g)

        def phi(a, x=x, p=p):
            xa = x + a * p if path is None else path(x, p, a)
            return (*evaluate(xa), xa)

        accept = _flat_unit_step(f, gn) if flat_ok else None
        a, out, ev = armijo(phi, f, d0, c1=c1, rho=rho, max_ls=max_ls, strict=strict,
                            accept=accept)
        n_evals += ev
        if a is None:
            break  # no decrease along p at working precision
        f, g, state, x = out
        k += 1
        log.add(f, g)
        gn = log.value
        done = converged(g) if converged is not None else gn <= tol
    if not done and k >= max_iter and warn:
        warn_cap(name, max_iter, gn, tol)
    return NewtonRun(x, f, g, state, k, n_evals, bool(done), log)


def minimize_newton(fun_grad, hess, x0, *, tol=1e-8, max_iter=100, c1=1e-4, rho=0.5,
                    max_ls=50, name="Newton", warn=True):
    r"""Minimise a smooth strongly convex function by damped Newton steps
    :math:`p = -\nabla^2 f(x)^{-1}\nabla f(x)` (Cholesky, :func:`cholesky_solve`).

    Parameters
    ----------
    fun_grad : callable
        ``fun_grad(x) -> (f, g)``.
    hess : callable
        ``hess(x) -> H`` (dense, symmetric).
    x0 : ndarray
    tol, max_iter, c1, rho, max_ls, name, warn
        See :func:`damped_newton`.

    Returns
    -------
    SolverResult
    """
    def evaluate(x):
        return (*fun_grad(x), None)

    run = damped_newton(evaluate, lambda x, g, _: -cholesky_solve(hess(x), g), x0, tol=tol,
                        max_iter=max_iter, c1=c1, rho=rho, max_ls=max_ls, name=name,
                        warn=warn)
    return run.result()


def dense_system(problem, w, d2):
    """The Newton system of a :class:`~bisvm.solvers.base.SmoothProblem` at ``w`` as a
    dense Cholesky factor (``O(n d^2 + d^3)``)."""
    return DenseFactor(problem.hessian_from_curvature(w, d2))


def newton_loop(problem, system=dense_system, *, w0=None, tol, max_iter, c1=1e-4, rho=0.5,
                max_ls=50, name="Newton lower-level solver", method="dense"):
    r"""The damped (possibly inexact) Newton loop for a
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
    solution, where the relative term alone would ask only 0.5 of the first step. The
    per-sample curvature of the accepted point is reused (one pass over the data per
    trial). ``w0`` is the warm start (zeros by default) or a list of candidate starts:
    the loop starts from the one with the smallest gradient norm, whose evaluation is
    the loop's first.

    Returns
    -------
    SolverResult
        ``factor`` is the Newton system at the returned point, built on first use;
        ``stats["n_matvec"]`` counts the Hessian-vector products of iterative systems.
    """
    best = None
    if w0 is None:
        w0 = np.zeros(problem.n_features)
    starts = w0 if isinstance(w0, list) else [w0]
    for start in starts:
        x = np.array(start, dtype=float, copy=True)
        f, g, d2 = problem.value_gradient_curvature(x)
        gn = euclidean_norm(g)
        if best is None or gn < best[-1]:
            best = (x, f, g, d2, gn)
    x, f, g, d2, gn0 = best
    solves = {"factor": None, "n_matvec": 0}

    def direction(x, g, d2):
        F = solves["factor"] = system(problem, x, d2)
        gn = euclidean_norm(g)
        eta = max(min(0.5, np.sqrt(gn / gn0), np.sqrt(gn)), 0.1 * tol / gn)
        p = -F.solve(g, rtol=eta)
        solves["n_matvec"] += F.n_matvec
        return p

    run = damped_newton(problem.value_gradient_curvature, direction, x, tol=tol,
                        max_iter=max_iter, c1=c1, rho=rho, max_ls=max_ls, name=name,
                        first=(f, g, d2, len(starts)), path=problem.trial_point)
    factor = _final_factor(problem, system, run.x, run.state, solves["factor"])
    return run.result(stats={"n_matvec": solves["n_matvec"]}, factor=factor, method=method)


def _final_factor(problem, system, x, d2, F_last):
    """The Newton system at the returned point, built on first use: a direct factor of
    the last step reused as CG preconditioner when the problem can apply its Hessian
    (:class:`~bisvm.solvers._linalg.RefinedFactor`), else a new system."""
    def build():
        return system(problem, x, d2)

    # no factor when the start already met the tolerance (no Newton step taken)
    if F_last is not None and F_last.direct and problem.has_structured_hessian:
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
        See :func:`damped_newton`.
    """
    if provides(problem, CurvatureProblem):
        return newton_loop(problem, dense_system, w0=w0, tol=tol, max_iter=max_iter,
                           **kwargs)
    x0 = np.zeros(problem.n_features) if w0 is None else w0
    return minimize_newton(
        problem.value_and_gradient, problem.hessian, x0, tol=tol, max_iter=max_iter,
        name="Newton lower-level solver", **kwargs,
    )
