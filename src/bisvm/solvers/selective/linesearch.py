r"""Step lengths of Algorithm A on the exact dual :math:`W` along
:math:`\lambda + \tau d` (the thesis's backtracking and golden section, and an exact search), and
the feasible warm start."""

from __future__ import annotations

import numpy as np
from scipy.optimize import brentq

__all__ = ["max_step", "exact_line_search", "face_line_search", "golden_section",
           "feasible_start"]


def max_step(problem, lam, d):
    """Largest step keeping the logistic dual inside its domain (1 for squared loss)."""
    if problem.loss == "squared":
        return 1.0
    u, du = problem._u(lam), problem._u(d)
    with np.errstate(divide="ignore", invalid="ignore"):
        t_lo = np.where(du < 0, -u / du, np.inf)
        t_hi = np.where(du > 0, (1.0 - u) / du, np.inf)
    tmax = float(min(np.min(t_lo, initial=np.inf), np.min(t_hi, initial=np.inf)))
    # fraction-to-the-boundary rule: a point next to u in {0, 1} has a huge curvature
    # there and Newton would crawl back from it geometrically
    return min(1.0, 0.95 * tmax)


def exact_line_search(problem, lam, d, s, ds, free_ok):
    r"""Exact minimiser of the convex piecewise-smooth :math:`w(\tau) = W(\lambda+\tau d)` on
    :math:`[0, \tau_{max}]`. Kink features (``~free_ok``) contribute nothing on the face.

    Returns ``tau`` and the indices of the features whose kink holds the minimum (empty
    if the minimum is at a smooth point or at the end of the segment)."""
    mu = problem.selectivity
    tmax = max_step(problem, lam, d)
    idx = np.flatnonzero(free_ok & (ds != 0))
    si, dsi = s[idx], ds[idx]
    with np.errstate(divide="ignore", invalid="ignore"):
        b1, b2 = (mu - si) / dsi, (-mu - si) / dsi
    bp = np.concatenate([b1, b2])
    owner = np.concatenate([idx, idx])
    keep = (bp > 0) & (bp < tmax)
    order = np.argsort(bp[keep])
    bps, owners = bp[keep][order], owner[keep][order]
    P = np.concatenate([[0.0], bps, [tmax]])
    s_f, ds_f = s[free_ok], ds[free_ok]

    def dw(tau, mid):
        st = s_f + mid * ds_f
        act = np.abs(st) > mu
        lin = float(np.dot((s_f[act] + tau * ds_f[act]), ds_f[act]))
        z, _ = problem.conj_point(lam + tau * d)
        return lin - float(np.dot(z, d))

    def f_end(k):  # left derivative at P[k+1], interval k
        return dw(P[k + 1], 0.5 * (P[k] + P[k + 1]))

    nint = len(P) - 1
    lo, hi = 0, nint  # first interval whose right-end derivative is >= 0
    while lo < hi:
        m = (lo + hi) // 2
        if f_end(m) >= 0:
            hi = m
        else:
            lo = m + 1
    if lo == nint:
        return tmax, np.zeros(0, int)
    k = lo
    mid = 0.5 * (P[k] + P[k + 1])
    f0 = dw(P[k], mid)
    if f0 >= 0:
        if k == 0:
            return 0.0, np.zeros(0, int)
        tb = P[k]
        ties = owners[np.abs(bps - tb) <= 1e-13 * max(tb, 1e-300)]
        return float(tb), np.unique(ties)
    f1 = f_end(k)
    if problem.loss == "squared":  # affine derivative on a smooth piece: exact root
        tau = P[k] - f0 * (P[k + 1] - P[k]) / (f1 - f0) if f1 > f0 else P[k + 1]
    else:
        tau = brentq(lambda t: dw(t, mid), P[k], P[k + 1], xtol=1e-15, rtol=1e-14)
    return float(min(max(tau, P[k]), P[k + 1])), np.zeros(0, int)


def face_line_search(problem, lam, d, s, ds, free, mu):
    r"""Minimise the smooth face function :math:`\tfrac12\sum_{i\in F}(s_i^2-\mu^2) +
    \sum_t\varphi_t` along :math:`\lambda + \tau d`, :math:`\tau \in [0, 1]`."""
    tmax = max_step(problem, lam, d)
    sF, dsF = s[free], ds[free]

    def dw(tau):
        z, _ = problem.conj_point(lam + tau * d)
        return float(np.dot(sF + tau * dsF, dsF)) - float(np.dot(z, d))

    f0 = dw(0.0)
    if f0 >= 0 or (tmax >= 1.0 and dw(1.0) <= 0):
        # full step; f0 >= 0 only when lam is off the guessed face (or already optimal)
        return 1.0 if tmax >= 1.0 else tmax
    if dw(tmax) <= 0:
        return tmax
    if problem.loss == "squared":
        f1 = dw(tmax)
        tau = float(-f0 * tmax / (f1 - f0))
        return 1.0 if tau > 1.0 - 1e-9 else tau  # the model is exact: rounding only
    return float(brentq(dw, 0.0, tmax, xtol=1e-15, rtol=1e-14))


def golden_section(fun, a, b, tol=1e-10):
    """Golden-section minimisation of a unimodal ``fun`` on ``[a, b]`` (Kiefer 1953,
    "Sequential minimax search for a maximum")."""
    g = (np.sqrt(5.0) - 1.0) / 2.0
    c, d = b - g * (b - a), a + g * (b - a)
    fc, fd = fun(c), fun(d)
    while b - a > tol:
        if fc <= fd:
            b, d, fd = d, c, fc
            c = b - g * (b - a)
            fc = fun(c)
        else:
            a, c, fc = c, d, fd
            d = a + g * (b - a)
            fd = fun(d)
    return 0.5 * (a + b)


# --------------------------------------------------------------------------------------
# Algorithm A
# --------------------------------------------------------------------------------------
def feasible_start(problem, lam0):
    """Make a warm start satisfy the intercept constraint and the logistic domain."""
    lam = np.array(lam0, dtype=float, copy=True)
    if problem.loss == "logistic":
        u = problem._u(lam)
        bad = ~((u > 0) & (u < 1))
        if np.any(bad):  # replace by the empty-model value on offending objects
            lam[bad] = problem.r[bad] * problem.y[bad] / (4.0 * problem.ridge)
    if problem.fit_intercept:
        tot = lam.sum()
        if problem.loss == "squared":
            lam -= tot / lam.size
        elif tot != 0.0:
            # rescale the class whose lambdas sum larger in magnitude: u shrinks, stays in (0,1)
            pos, neg = lam > 0, lam < 0
            sp, sn = lam[pos].sum(), -lam[neg].sum()
            if sp > sn and sp > 0:
                lam[pos] *= sn / sp
            elif sn > 0:
                lam[neg] *= sp / sn
    return lam
