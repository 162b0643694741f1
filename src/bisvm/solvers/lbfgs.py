r"""L-BFGS of seed-000 Algorithms 2, 3, 6 and 7 (Nocedal & Wright 2006, Alg. 7.4-7.5).

``minimize_lbfgs`` minimises any smooth function given as ``fun_grad(x) -> (f, g)``; the
bilevel layer reuses it for the outer problem (Algorithm 8). ``solve_lbfgs`` applies it to
a :class:`~bisvm.solvers.base.SmoothProblem` (Algorithm 7, "SVM L-BFGS").

Corrections to the thesis's boxes (seed-000 §7, erratum 8): the two-loop recursion starts
from :math:`r = H_k^0 q` with :math:`H_k^0 = (s^\top y / y^\top y) I`, not from
:math:`r = H_0`; Algorithm 6's loop runs *while* the Wolfe conditions fail. Backtracking
alone cannot enforce the curvature condition, so ``line_search="wolfe"`` (default)
brackets and zooms (N&W Alg. 3.5-3.6); ``"backtracking"`` is Algorithm 6 read as Armijo
backtracking, skipping the pair update when :math:`s^\top y \le 0`.
"""

from __future__ import annotations

import time
from collections import deque

import numpy as np

from ._linesearch import backtracking, wolfe_search
from .base import ConvergenceRecord, SolverResult, warn_cap

__all__ = ["minimize_lbfgs", "solve_lbfgs", "two_loop"]


def two_loop(g, s_list, y_list):
    r"""Two-loop recursion (seed-000 Algorithm 3): returns :math:`H_k g`."""
    q = np.array(g, dtype=float, copy=True)
    alphas = []
    rhos = []
    for s, y in zip(reversed(s_list), reversed(y_list)):
        rho = 1.0 / float(y @ s)
        a = rho * float(s @ q)
        q -= a * y
        alphas.append(a)
        rhos.append(rho)
    if s_list:
        s, y = s_list[-1], y_list[-1]
        q *= float(s @ y) / float(y @ y)
    for (s, y), a, rho in zip(zip(s_list, y_list), reversed(alphas), reversed(rhos)):
        b = rho * float(y @ q)
        q += s * (a - b)
    return q


def minimize_lbfgs(
    fun_grad,
    x0,
    *,
    tol=1e-8,
    max_iter=1000,
    memory=10,
    c1=1e-4,
    c2=0.9,
    line_search="wolfe",
    rho=0.5,
    max_ls=30,
    first_step=None,
    max_step=None,
    first_max_change=None,
    ftol=0.0,
    callback=None,
    name="L-BFGS",
    warn=True,
):
    r"""Minimise a smooth function by L-BFGS (seed-000 Algorithm 2 with Algorithm 3).

    Parameters
    ----------
    fun_grad : callable
        ``fun_grad(x) -> (f, g)``; may return ``f = inf`` where undefined.
    x0 : ndarray
    tol : float
        Stop when :math:`\|\nabla f(x_k)\|_2 \le` ``tol``.
    max_iter : int
        Cap on iterations (a :class:`ConvergenceWarning` is raised when hit).
    memory : int
        Number of stored pairs ``(s_k, y_k)`` (the thesis's m).
    c1, c2 : float
        Wolfe constants, :math:`0 < c_1 < c_2 < 1`.
    line_search : {"wolfe", "backtracking"}
    rho : float
        Backtracking factor of Algorithm 6.
    max_ls : int
        Cap on function evaluations per line search.
    first_step : float, optional
        Trial step of the first iteration (default :math:`1/\|g_0\|_\infty`, capped at 1).
    max_step : float, optional
        Largest change :math:`\|\tau p\|_\infty` of any coordinate in one iteration,
        trial and extrapolated steps included (a safeguard for the outer problem in log
        space).
    first_max_change : float, optional
        Without curvature pairs (first iteration, after a reset) try the step whose
        largest coordinate change is this (overrides ``first_step``): a scale-free start
        when gradients are tiny or huge.
    ftol : float
        Also stop when an iteration decreases f by at most
        ``ftol * max(|f_k|, |f_{k+1}|, 1)`` (as scipy's L-BFGS-B ``factr``); 0 disables it.
    callback : callable, optional
        ``callback(k, x, f, g)`` after every accepted iteration (k = 0 is the start);
        a true return value stops the run (early stopping), reported as converged
        with ``certificate="callback"``.

    Returns
    -------
    SolverResult
    """
    if not (0 < c1 < c2 < 1):
        raise ValueError(f"need 0 < c1 < c2 < 1, got c1={c1}, c2={c2}")
    if line_search not in ("wolfe", "backtracking"):
        raise ValueError(f"line_search must be 'wolfe' or 'backtracking', got {line_search!r}")
    t0 = time.perf_counter()
    x = np.array(x0, dtype=float, copy=True)
    f, g = fun_grad(x)
    n_evals = 1
    s_list, y_list = deque(maxlen=memory), deque(maxlen=memory)
    objs, gns, secs = [f], [np.linalg.norm(g)], [time.perf_counter() - t0]
    stopped = callback is not None and bool(callback(0, x, f, g))
    converged = stopped or gns[-1] <= tol
    k = 0
    while not converged and k < max_iter:
        p = -two_loop(g, list(s_list), list(y_list))
        d0 = float(g @ p)
        if not d0 < 0:
            s_list.clear()
            y_list.clear()
            p = -g
            d0 = float(g @ p)
        pmax = max(float(np.max(np.abs(p))), 1e-300)
        if s_list:
            a1 = 1.0
        elif first_max_change is not None:
            a1 = first_max_change / pmax
        elif first_step is not None:
            a1 = first_step
        else:
            a1 = min(1.0, 1.0 / max(np.max(np.abs(g)), 1e-300))
        a_max = np.inf if max_step is None else max_step / pmax
        a1 = min(a1, a_max)

        cache = {}

        def phi(a, x=x, p=p, cache=cache):
            xa = x + a * p
            fa, ga = fun_grad(xa)
            cache[a] = ga
            return fa, (float(ga @ p) if np.all(np.isfinite(ga)) else np.inf), xa

        if line_search == "wolfe":
            a, f_new, x_new, ev = wolfe_search(phi, f, d0, a1, c1, c2, max_ls, a_max)
        else:
            a, f_new, x_new, ev = backtracking(phi, f, d0, a1, c1, rho, max_ls)
        n_evals += ev
        if a is None:
            break  # no decrease possible along p: stalled at working precision
        g_new = cache[a]
        small_decrease = f - f_new <= ftol * max(abs(f), abs(f_new), 1.0)
        s, yv = x_new - x, g_new - g
        if float(s @ yv) > 1e-12 * float(yv @ yv):
            s_list.append(s)
            y_list.append(yv)
        x, f, g = x_new, f_new, g_new
        k += 1
        objs.append(f)
        gns.append(float(np.linalg.norm(g)))
        secs.append(time.perf_counter() - t0)
        stopped = callback is not None and bool(callback(k, x, f, g))
        converged = stopped or gns[-1] <= tol or (ftol > 0 and small_decrease)
    if not converged and k >= max_iter and warn:
        warn_cap(name, max_iter, gns[-1], tol)
    rec = ConvergenceRecord(np.array(objs), np.array(gns), np.array(secs))
    return SolverResult(
        coef=x, objective=float(f), grad_norm=float(gns[-1]), n_iter=k, n_evals=n_evals,
        converged=bool(converged), seconds=time.perf_counter() - t0, record=rec,
        certificate="callback" if stopped else "gradient_norm",
    )


def solve_lbfgs(problem, *, w0=None, tol=1e-8, max_iter=1000, memory=10, **kwargs):
    """Seed-000 Algorithm 7 ("SVM L-BFGS"): L-BFGS on a :class:`SmoothProblem`.

    Parameters
    ----------
    problem : SmoothProblem
    w0 : ndarray, optional
        Warm start (zeros by default).
    tol, max_iter, memory, **kwargs
        See :func:`minimize_lbfgs`.
    """
    x0 = np.zeros(problem.n_features) if w0 is None else w0
    return minimize_lbfgs(
        problem.value_and_gradient, x0, tol=tol, max_iter=max_iter, memory=memory,
        name="L-BFGS lower-level solver", **kwargs,
    )
