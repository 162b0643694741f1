r"""L-BFGS, as in the bilevel sparse SVM of González Vallejo (2024) (Nocedal & Wright
2006, "Numerical optimization", Alg. 7.4-7.5).

``minimize_lbfgs`` minimises any smooth function given as ``fun_grad(x) -> (f, g)``.
``lbfgs_iterations`` is the same iteration as an ask-and-tell generator, which the bilevel
layer drives for its outer problem: it evaluates each trial point and each
accepted iterate in its own loop, where the warm starts and early stopping live.
``solve_lbfgs`` applies it to a :class:`~bisvm.solvers.base.SmoothProblem` (the thesis's
"SVM L-BFGS").

The two-loop recursion starts from :math:`r = H_k^0 q` with :math:`H_k^0 = (s^\top y /
y^\top y) I` (Nocedal & Wright 2006, eq. 7.20), and the line search runs *while* the
Wolfe conditions fail. Backtracking
alone cannot enforce the curvature condition, so ``line_search="wolfe"`` (default)
brackets and zooms (N&W Alg. 3.5-3.6); ``"backtracking"`` is the thesis's line search read as
Armijo backtracking, skipping the pair update when :math:`s^\top y \le 0`.
"""

from __future__ import annotations

from collections import deque
from typing import NamedTuple

import numpy as np

from .._linesearch import drive, line_search_steps
from .._record import IterationLog
from ._driver import finish, solve_on_problem

__all__ = ["minimize_lbfgs", "solve_lbfgs", "two_loop", "lbfgs_iterations", "Accepted"]


class Accepted(NamedTuple):
    """What :func:`lbfgs_iterations` yields after each accepted iteration (k = 0 is the
    start); the answer it expects is whether to stop there."""

    k: int
    x: np.ndarray
    f: float
    g: np.ndarray


def two_loop(g, s_list, y_list):
    r"""Two-loop recursion (Nocedal & Wright 2006, Alg. 7.4): returns :math:`H_k g`."""
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


def minimize_lbfgs(fun_grad, x0, *, tol=1e-8, max_iter=1000, memory=10, c1=1e-4, c2=0.9,
                   line_search="wolfe", rho=0.5, max_ls=30, first_step=None, max_step=None,
                   first_max_change=None, ftol=0.0, callback=None, name="L-BFGS",
                   warn=True):
    r"""Minimise a smooth function by L-BFGS (Nocedal & Wright 2006, Alg. 7.5).

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
    c1, c2, rho, max_ls : float, float, float, int
        Wolfe constants :math:`0 < c_1 < c_2 < 1`, the backtracking factor of
        the line search and the evaluations per line search at most.
    line_search : {"wolfe", "backtracking"}
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
    def answer(request):
        if isinstance(request, Accepted):
            return callback is not None and bool(callback(*request))
        return fun_grad(request)

    return drive(lbfgs_iterations(x0, tol=tol, max_iter=max_iter, memory=memory, c1=c1,
                                  c2=c2, line_search=line_search, rho=rho, max_ls=max_ls,
                                  first_step=first_step, max_step=max_step,
                                  first_max_change=first_max_change, ftol=ftol, name=name,
                                  warn=warn), answer)


def lbfgs_iterations(x0, *, tol=1e-8, max_iter=1000, memory=10, c1=1e-4, c2=0.9,
                     line_search="wolfe", rho=0.5, max_ls=30, first_step=None,
                     max_step=None, first_max_change=None, ftol=0.0, name="L-BFGS",
                     warn=True):
    """:func:`minimize_lbfgs` as an ask-and-tell generator: it yields each point to
    evaluate (an ndarray; send back ``(f, g)``) and each :class:`Accepted` iterate (send
    back whether to stop: early stopping, reported as converged with
    ``certificate="callback"``); returns the :class:`SolverResult`. Parameters as in
    :func:`minimize_lbfgs`."""
    if not (0 < c1 < c2 < 1):
        raise ValueError(f"need 0 < c1 < c2 < 1, got c1={c1}, c2={c2}")
    if line_search not in ("wolfe", "backtracking"):
        raise ValueError(f"line_search must be 'wolfe' or 'backtracking', got {line_search!r}")
    x = np.array(x0, dtype=float, copy=True)
    f, g = yield x
    n_evals = 1
    s_list, y_list = deque(maxlen=memory), deque(maxlen=memory)
    log = IterationLog(f, g)
    stopped = bool((yield Accepted(0, x, f, g)))
    converged = stopped or log.value <= tol
    k = 0
    while not converged and k < max_iter:
        p = _direction(g, s_list, y_list)
        a1, a_max = _first_trial(g, p, bool(s_list), first_max_change, first_step, max_step)
        a, f_new, x_new, g_new, ev = yield from line_search_steps(
            x, f, g, p, a1, c1=c1, c2=c2, max_ls=max_ls, a_max=a_max, method=line_search,
            rho=rho)
        n_evals += ev
        if a is None:
            break  # no decrease possible along p: stalled at working precision
        small_decrease = f - f_new <= ftol * max(abs(f), abs(f_new), 1.0)
        _store_pair(s_list, y_list, x_new - x, g_new - g)
        x, f, g = x_new, f_new, g_new
        k += 1
        log.add(f, g)
        stopped = bool((yield Accepted(k, x, f, g)))
        converged = stopped or log.value <= tol or (ftol > 0 and small_decrease)
    return finish(log, x, k, n_evals, converged, max_iter=max_iter, tol=tol, name=name,
                  warn=warn, certificate="callback" if stopped else "gradient_norm")


def _direction(g, s_list, y_list):
    r"""The L-BFGS direction :math:`-H_k g`; the steepest descent, with the pairs dropped,
    when rounding made it no descent direction."""
    p = -two_loop(g, list(s_list), list(y_list))
    if not float(g @ p) < 0:
        s_list.clear()
        y_list.clear()
        p = -g
    return p


def _store_pair(s_list, y_list, s, yv):
    r"""Keep the pair when :math:`s^\top y > 0` (the curvature condition; a pair that
    violates it would make :math:`H_k` indefinite)."""
    if float(s @ yv) > 1e-12 * float(yv @ yv):
        s_list.append(s)
        y_list.append(yv)


def _first_trial(g, p, has_pairs, first_max_change, first_step, max_step):
    r"""The first trial step of a line search and the largest step allowed:
    the unit step with curvature pairs, else ``first_max_change`` in the largest
    coordinate, ``first_step``, or :math:`\min(1, 1/\|g\|_\infty)`; every step keeps
    :math:`\|a p\|_\infty \le` ``max_step``."""
    pmax = max(float(np.max(np.abs(p))), 1e-300)
    if has_pairs:
        a1 = 1.0
    elif first_max_change is not None:
        a1 = first_max_change / pmax
    elif first_step is not None:
        a1 = first_step
    else:
        a1 = min(1.0, 1.0 / max(np.max(np.abs(g)), 1e-300))
    a_max = np.inf if max_step is None else max_step / pmax
    return min(a1, a_max), a_max


def solve_lbfgs(problem, *, w0=None, tol=1e-8, max_iter=1000, memory=10, **kwargs):
    """The thesis's "SVM L-BFGS" (González Vallejo 2024): L-BFGS on a :class:`SmoothProblem`.

    Parameters
    ----------
    problem : SmoothProblem
    w0 : ndarray, optional
        Warm start (zeros by default).
    tol, max_iter, memory, **kwargs
        See :func:`minimize_lbfgs`.
    """
    kwargs.setdefault("name", "L-BFGS lower-level solver")
    return solve_on_problem(minimize_lbfgs, problem, w0, tol=tol, max_iter=max_iter,
                            memory=memory, **kwargs)
