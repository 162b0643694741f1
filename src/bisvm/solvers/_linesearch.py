r"""The line searches of the package, written once.

* :func:`wolfe_search` / :func:`line_search`: strong-Wolfe bracketing and zoom with cubic
  interpolation (Nocedal & Wright 2006, Alg. 3.5-3.6), used by L-BFGS, BFGS, nonlinear
  CG and gradient descent;
* :func:`armijo`: backtracking :math:`a \leftarrow \rho a` until the sufficient-decrease
  (Armijo) condition :math:`f(a) \le f_0 + c_1 a f'_0` holds (N&W Alg. 3.1), with the
  variants the damped Newton loops, coordinate descent and Platt scaling need
  (a strict inequality, a slack for rounding, an extra acceptance rule);
* :func:`backtracking`: the line search of the thesis's SVM L-BFGS (González Vallejo
  2024) read as Armijo backtracking, for L-BFGS.

A line search sees the objective only through ``phi(a)``, the restriction to the ray
:math:`x + a p`, so every caller keeps its own state (iterates, gradients, margins) in the
payload ``phi`` returns. Each search is written once, as a generator that yields the trial
step and receives ``phi``'s answer (:func:`wolfe_steps`, :func:`armijo_steps`,
:func:`line_search_steps`); the callback forms run it with :func:`drive`. The generator
form lets an outer loop evaluate the trials itself (ask and tell), so that an expensive
``phi`` (a bilevel objective) is called from the loop that owns its state, not from inside
the search.
"""

from __future__ import annotations

import numpy as np

__all__ = ["armijo", "armijo_steps", "backtracking", "cubic_min", "drive", "line_search",
           "line_search_steps", "wolfe_search", "wolfe_steps"]


def drive(steps, func):
    """Run an ask-and-tell generator: send ``func(request)`` for every request it yields;
    returns the generator's return value."""
    try:
        request = next(steps)
        while True:
            request = steps.send(func(request))
    except StopIteration as stop:
        return stop.value


def cubic_min(a0, f0, d0, a1, f1, d1):
    """Minimiser of the cubic through (a0,f0,d0), (a1,f1,d1), or None."""
    d1_ = d0 + d1 - 3.0 * (f0 - f1) / (a0 - a1)
    disc = d1_ * d1_ - d0 * d1
    if disc < 0:
        return None
    d2 = np.sign(a1 - a0) * np.sqrt(disc)
    denom = d1 - d0 + 2.0 * d2
    if denom == 0:
        return None
    return a1 - (a1 - a0) * (d1 + d2 - d1_) / denom


def wolfe_search(phi, f0, d0, a1, c1, c2, max_evals, a_max=np.inf):
    """Strong-Wolfe line search by bracketing and zoom (Nocedal & Wright Alg. 3.5-3.6).

    ``phi(a)`` returns ``(f, directional derivative, payload)``. Returns the accepted
    ``(a, f, payload)`` or the best Armijo point found, and the number of evaluations.
    Extrapolation stops at ``a_max`` (an Armijo point there is accepted).
    """
    return drive(wolfe_steps(f0, d0, a1, c1, c2, max_evals, a_max), phi)


def wolfe_steps(f0, d0, a1, c1, c2, max_evals, a_max=np.inf):
    """:func:`wolfe_search` as a generator: yields each trial step ``a`` and receives
    ``(f, directional derivative, payload)`` there."""
    evals = 0
    best = None
    a_prev, f_prev, d_prev = 0.0, f0, d0
    a = a1
    lo = hi = None
    while evals < max_evals:
        f, d, pay = yield a
        evals += 1
        if np.isfinite(f) and f <= f0 + c1 * a * d0 and (best is None or f < best[1]):
            best = (a, f, pay)
        if not np.isfinite(f) or f > f0 + c1 * a * d0 or (evals > 1 and f >= f_prev):
            lo, hi = (a_prev, f_prev, d_prev), (a, f, d)
            break
        if abs(d) <= -c2 * d0:
            return a, f, pay, evals
        if d >= 0:
            lo, hi = (a, f, d), (a_prev, f_prev, d_prev)
            break
        if a >= a_max:
            return a, f, pay, evals
        a_prev, f_prev, d_prev = a, f, d
        a = min(2.0 * a, a_max)
    else:
        return (*best, evals) if best else (None, None, None, evals)
    while evals < max_evals:
        (alo, flo, dlo), (ahi, fhi, dhi) = lo, hi
        a = None
        if np.isfinite(fhi) and np.isfinite(dhi):
            a = cubic_min(alo, flo, dlo, ahi, fhi, dhi)
        left, right = min(alo, ahi), max(alo, ahi)
        margin = 0.1 * (right - left)
        if a is None or not np.isfinite(a) or a < left + margin or a > right - margin:
            a = 0.5 * (alo + ahi)
        f, d, pay = yield a
        evals += 1
        if np.isfinite(f) and f <= f0 + c1 * a * d0 and (best is None or f < best[1]):
            best = (a, f, pay)
        if not np.isfinite(f) or f > f0 + c1 * a * d0 or f >= flo:
            hi = (a, f, d)
        else:
            if abs(d) <= -c2 * d0:
                return a, f, pay, evals
            if d * (ahi - alo) >= 0:
                hi = lo
            lo = (a, f, d)
        if abs(hi[0] - lo[0]) < 1e-16 * max(1.0, abs(lo[0])):
            break
    return (*best, evals) if best else (None, None, None, evals)


def armijo(phi, f0, d0, *, a1=1.0, c1=1e-4, rho=0.5, max_ls=40, slack=0.0, strict=False,
           accept=None):
    r"""Armijo backtracking along a descent direction (Nocedal & Wright 2006, Alg. 3.1).

    Tries :math:`a = a_1, \rho a_1, \rho^2 a_1, \dots` and accepts the first with a finite
    :math:`f(a) \le f_0 + c_1 a\, d_0 +` ``slack`` (``<`` when ``strict``), or for which
    ``accept(a, out)`` is true (a caller's rule for steps whose decrease is below the
    rounding error of :math:`f`, where the Armijo test only sees noise).

    Parameters
    ----------
    phi : callable
        ``phi(a) -> tuple`` whose first entry is :math:`f(x + a p)`; the rest is the
        caller's payload (the trial point, its gradient, ...).
    f0, d0 : float
        :math:`f(x)` and the directional derivative :math:`\nabla f(x)^\top p < 0`.
    a1, c1, rho : float
        First trial step, sufficient-decrease constant, backtracking factor.
    max_ls : int
        Trials at most.

    Returns
    -------
    a : float or None
        The accepted step, ``None`` when every trial failed.
    out : tuple or None
        What ``phi`` returned at ``a``.
    n_evals : int
        Evaluations of ``phi``.
    """
    return drive(armijo_steps(f0, d0, a1=a1, c1=c1, rho=rho, max_ls=max_ls, slack=slack,
                              strict=strict, accept=accept), phi)


def armijo_steps(f0, d0, *, a1=1.0, c1=1e-4, rho=0.5, max_ls=40, slack=0.0, strict=False,
                 accept=None):
    """:func:`armijo` as a generator: yields each trial step and receives what ``phi``
    returns there."""
    a = a1
    for k in range(1, max_ls + 1):
        out = yield a
        f = out[0]
        bound = f0 + c1 * a * d0 + slack
        if np.isfinite(f) and (f < bound if strict else f <= bound):
            return a, out, k
        if accept is not None and accept(a, out):
            return a, out, k
        a *= rho
    return None, None, max_ls


def backtracking(phi, f0, d0, a1, c1, rho, max_evals):
    """The thesis's L-BFGS line search read as Armijo backtracking ``τ ← ρτ``; ``phi(a)`` returns
    ``(f, directional derivative, payload)``. Returns ``(a, f, payload, evals)``, with
    ``None`` for the first three when no trial decreased enough."""
    a, out, k = armijo(phi, f0, d0, a1=a1, c1=c1, rho=rho, max_ls=max_evals)
    if a is None:
        return None, None, None, k
    return a, out[0], out[2], k


def line_search(fun_grad, x, f, g, p, a1, *, c1=1e-4, c2=0.9, max_ls=40, a_max=np.inf,
                method="wolfe", rho=0.5):
    r"""A line search along ``p`` from ``x`` for a function given as ``fun_grad``.

    ``method="wolfe"`` finds :math:`\eta \le` ``a_max`` with
    :math:`E(x + \eta p) \le E(x) + c_1 \eta\, g^\top p` and
    :math:`|\nabla E(x + \eta p)^\top p| \le c_2 |g^\top p|` (:func:`wolfe_search`);
    ``"backtracking"`` only the first condition, by :func:`backtracking` with factor ``rho``.

    Returns
    -------
    step : float or None
        ``None`` when no decrease was found (stalled at working precision).
    f_new, x_new, g_new : the accepted point, its value and gradient (``f, x, g`` when
        ``step`` is ``None``).
    n_evals : int
    """
    return drive(line_search_steps(x, f, g, p, a1, c1=c1, c2=c2, max_ls=max_ls, a_max=a_max,
                                   method=method, rho=rho), fun_grad)


def line_search_steps(x, f, g, p, a1, *, c1=1e-4, c2=0.9, max_ls=40, a_max=np.inf,
                      method="wolfe", rho=0.5):
    """:func:`line_search` as a generator: yields each trial point ``x + a p`` and
    receives ``(f, g)`` there; returns what :func:`line_search` returns."""
    d0 = float(g @ p)
    cache = {}
    if method == "wolfe":
        search = wolfe_steps(f, d0, a1, c1, c2, max_ls, a_max)
    else:
        search = armijo_steps(f, d0, a1=a1, c1=c1, rho=rho, max_ls=max_ls)
    try:
        a = next(search)
        while True:
            xa = x + a * p
            fa, ga = yield xa
            cache[a] = ga
            a = search.send((fa, (float(ga @ p) if np.all(np.isfinite(ga)) else np.inf), xa))
    except StopIteration as stop:
        found = stop.value
    if method == "wolfe":
        a, f_new, x_new, ev = found
    else:
        a, out, ev = found
        f_new, x_new = (None, None) if a is None else (out[0], out[2])
    if a is None:
        return None, f, x, g, ev
    return a, f_new, x_new, cache[a], ev
