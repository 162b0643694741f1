"""Primal fallback of Algorithm A for the squared loss: cyclic coordinate descent on
:math:`J(a, b)` with an exact face polish."""

from __future__ import annotations

import numpy as np

from ..._numba import njit
from .linalg import min_norm_psd_solve
from .problem import selective_loss

__all__ = ["selective_scalar_min", "dual_from_primal", "polish_face", "primal_fallback"]


def selective_scalar_min(h, z, mu, ridge):
    r"""Exact minimiser of :math:`\tfrac12 h(a - z)^2 + \gamma\,\mathrm{pen}_\mu(a)`.

    With :math:`\mathrm{pen}_\mu(a) = 2\mu|a|` for :math:`|a|\le\mu` and
    :math:`\mu^2 + a^2` beyond (convex, :math:`C^1` away from 0: both pieces have slope
    :math:`2\mu` at :math:`|a| = \mu`), the optimality condition
    :math:`h(z - a) \in \gamma\,\partial\mathrm{pen}_\mu(a)` gives three regions
    (:math:`\kappa = 2\gamma\mu/h`):

    .. math::
        a = \begin{cases} 0, & |z| \le \kappa \\
        \mathrm{sign}(z)(|z| - \kappa), & \kappa < |z| \le \mu + \kappa
        \quad\text{(soft threshold, } 0 < |a| \le \mu) \\
        h z/(h + 2\gamma), & |z| > \mu + \kappa \quad\text{(ridge, } |a| > \mu),
        \end{cases}

    continuous at both boundaries. Vectorised over arrays ``h > 0, z, mu >= 0``.
    """
    h, z = np.asarray(h, float), np.asarray(z, float)
    kappa = 2.0 * ridge * mu / h
    az = np.abs(z)
    return np.where(az <= kappa, 0.0,
                    np.where(az <= mu + kappa, np.sign(z) * (az - kappa),
                             h * z / (h + 2.0 * ridge)))


@njit
def _cd_sweeps(X, r, res, a, hdiag, ridge, mu, fit_intercept, rsum, n_sweeps):
    # cyclic exact coordinate minimisation of J; res = y - X a - b is kept up to date
    # (the intercept, unpenalised, is one more coordinate: b += sum r res / sum r)
    N, n = X.shape
    db_total = 0.0
    for _ in range(n_sweeps):
        for i in range(n):
            h = hdiag[i]
            if h <= 0.0:
                continue
            g = 0.0
            for t in range(N):
                g += r[t] * X[t, i] * res[t]
            z = a[i] + 2.0 * g / h
            kappa = 2.0 * ridge * mu / h
            az = abs(z)
            if az <= kappa:
                new = 0.0
            elif az <= mu + kappa:
                new = az - kappa if z > 0 else kappa - az
            else:
                new = h * z / (h + 2.0 * ridge)
            d = new - a[i]
            if d != 0.0:
                a[i] = new
                for t in range(N):
                    res[t] -= d * X[t, i]
        if fit_intercept:
            s = 0.0
            for t in range(N):
                s += r[t] * res[t]
            db = s / rsum
            db_total += db
            for t in range(N):
                res[t] -= db
    return db_total


def dual_from_primal(problem, coef, intercept):
    r"""λ from the residuals, :math:`\lambda_t = -r_t q'(y_t, z_t)/(2\gamma)` (the
    conjugate point :math:`z_t = -\varphi'_t(\lambda_t)` inverted; regression:
    :math:`r_t(y_t - z_t)/\gamma`), and the stationarity of J makes :math:`a_i =
    x_i^\top\lambda` on the ridge features."""
    z = problem.X @ coef + intercept
    return -problem.r * selective_loss(problem.loss, problem.y, z)[1] / (2.0 * problem.ridge)


def polish_face(problem, coef, intercept):
    r"""Minimise J on the face of ``coef`` (ridge ``F``, kinks ``K`` with their signs):
    :math:`(M^\top R M + \gamma I_F)\theta = M^\top R y - \gamma\mu\sigma_K`,
    :math:`M = [X_F, X_K, \mathbf 1]` -- the primal counterpart of a Newton candidate."""
    X, y, r, g, mu = problem.X, problem.y, problem.r, problem.ridge, problem.selectivity
    aa = np.abs(coef)
    F = np.flatnonzero(aa > mu)
    K = np.flatnonzero((aa > 0) & (aa <= mu))
    cols = [X[:, F], X[:, K]] + ([np.ones((X.shape[0], 1))] if problem.fit_intercept else [])
    if F.size + K.size == 0 or F.size + K.size + problem.fit_intercept > X.shape[0]:
        return None  # more face columns than objects: the face system is singular
    M = np.hstack(cols)
    MR = M * r[:, None]
    G = M.T @ MR
    G[np.arange(F.size), np.arange(F.size)] += g
    rhs = MR.T @ y
    rhs[F.size: F.size + K.size] -= g * mu * np.sign(coef[K])
    if not (np.all(np.isfinite(G)) and np.all(np.isfinite(rhs))):
        return None
    # duplicated kink columns make G singular: the minimum-norm solution shares their
    # coefficient equally (no SVD iteration that could fail to converge)
    theta = min_norm_psd_solve(G, rhs)
    if not np.all(np.isfinite(theta)):
        return None
    new = np.zeros_like(coef)
    new[F] = theta[: F.size]
    new[K] = theta[F.size: F.size + K.size]
    b = float(theta[-1]) if problem.fit_intercept else 0.0
    return new, b


def primal_fallback(problem, starts, max_sweeps, gap_tol):
    r"""Finish a squared-loss problem by cyclic coordinate descent on the primal J.

    Exact coordinate minimisation (:func:`selective_scalar_min`, with
    :math:`h_i = 2\sum_t r_t x_{ti}^2`) on a convex objective whose non-smooth part
    :math:`\gamma\sum_i\mathrm{pen}_\mu(a_i)` is separable converges to the minimum
    (Tseng 2001). After every chunk of sweeps (5, growing to 10% of the sweeps done,
    at most 200) the face of the iterate is solved exactly (:func:`polish_face`, when
    it has at most N columns) and kept if it lowers J, which turns CD's linear rate
    into finite termination once the sets are identified. (When the face has more
    columns than objects, :func:`solve_dual_newton` restarts Newton from the CD point
    and sets instead.) Stops when the duality gap
    :math:`J/(2\gamma) + W(\lambda)`, λ from the residuals, is ``<= gap_tol(W)``.

    Returns ``(coef, intercept, lam, gap, W, sweeps, ok)``.
    """
    X = np.asfortranarray(problem.X, dtype=float)
    y, r = problem.y, problem.r
    best = min(starts, key=lambda s: problem.primal_value(*s))
    a, b = best[0].astype(float, copy=True), float(best[1])
    hdiag = 2.0 * np.einsum("t,ti,ti->i", r, X, X)
    rsum = float(r.sum())
    Jval = problem.primal_value(a, b)
    sweeps = 0
    while True:
        lam = dual_from_primal(problem, a, b)
        W = problem.dual_value(lam)
        gap = Jval / (2.0 * problem.ridge) + W
        if gap <= gap_tol(W):
            return a, b, lam, gap, W, sweeps, True
        if sweeps >= max_sweeps:
            return a, b, lam, gap, W, sweeps, False
        m = min(max(5, sweeps // 10), 200, max_sweeps - sweeps)
        res = np.ascontiguousarray(y - X @ a - b)
        b += _cd_sweeps(X, r, res, a, hdiag, float(problem.ridge), float(problem.selectivity),
                        bool(problem.fit_intercept), rsum, m)
        sweeps += m
        Jval = problem.primal_value(a, b)
        pol = polish_face(problem, a, b)
        if pol is not None:
            Jp = problem.primal_value(*pol)
            if Jp < Jval:
                a, b, Jval = pol[0], pol[1], Jp
