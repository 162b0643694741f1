r"""Dual Newton active-set solver for selective-ridge linear and logistic regression
(seed 004, Algorithm A, §2.5–2.6) and the μ path with warm starts (Algorithm B, §3).

Primal problem (seed 004 (9)/(13), objects are the rows of ``X``, shape ``(N, n)``)

.. math::
    J(a, b) = \gamma \sum_{i=1}^n \mathrm{pen}_\mu(a_i) + \sum_{t=1}^N r_t\, q(y_t, x_t^\top a + b),

with :math:`q = (y - z)^2` (regression) or :math:`\ln(1 + e^{-yz})` (``y = ±1``), object
weights :math:`r_t > 0` and an optional unpenalised intercept ``b`` (beyond the document).

Exact dual (errata 1 of the extraction: *with* the :math:`-\mu^2` terms, so that it is
continuous and convex), :math:`s = X^\top \lambda`:

.. math::
    W(\lambda) = \tfrac12 \sum_i \max(0, s_i^2 - \mu^2) + \sum_t \varphi_t(\lambda_t),
    \qquad \varphi_t(\lambda) = -\min_z \Big(\frac{r_t}{2\gamma} q(y_t, z) + \lambda z\Big),

subject to :math:`\sum_t \lambda_t = 0` when there is an intercept. Regression:
:math:`\varphi = \gamma\lambda^2/(2r) - y\lambda`; logistic: with
:math:`u = 2\gamma y\lambda / r \in [0, 1]`,
:math:`\varphi = \frac{r}{2\gamma}[u\ln u + (1-u)\ln(1-u)]` (Theorem 1, (21)–(22)).
Primal–dual map (25): :math:`a_i = s_i` where :math:`|s_i| > \mu`, else 0.

**What this module adds to Algorithm A, and why.** :math:`W` is not differentiable where
:math:`|s_i| = \mu` and its minimiser generically sits on such *kinks*: they are exactly
the features whose primal coefficient lies in :math:`0 < |a_i| \le \mu` (the linear part
of :math:`\mathrm{pen}_\mu`; e.g. :math:`n = N = 1` gives
:math:`a = (xy - \gamma\mu)/x^2`). The strict active set :math:`\{|s_i| > \mu\}` of the
thesis cannot represent them, so the printed iteration alternates forever (this is the
non-convergence observed in erratum 8). We keep a third set ``K`` of kink features,
pinned by the equality constraints :math:`x_i^\top\lambda = \mu\sigma_i` whose Lagrange
multipliers *are* their primal coefficients; the intercept is one more such constraint
(:math:`\mathbf 1^\top\lambda = 0`, multiplier ``b``). The sets are guessed by a
primal–dual active-set (semismooth Newton) rule: after every full Newton step the sets
the candidate asks for are adopted at once (a kink feature whose multiplier left
:math:`\sigma_i[0, \mu]` is released, a ridge feature whose :math:`|s_i|` fell below μ
or a zero feature whose :math:`|s_i|` rose above it is pinned), so that near the solution
each set change costs one Newton step; after a bounded number of such switches the faces
are solved exactly before switching. The exact :math:`W` at successive face solutions is
*not* monotone (a degenerate feature sitting at :math:`|s_i| = \mu` with multiplier 0 or
μ can raise it slightly), so only a revisited face counts as cycling; then a safe mode
takes exact line searches on :math:`W` and pins a feature when the search stops on its
kink. Everything else is Algorithm A:

1. ``F = {i ∉ K : |s_i| > μ}``; Newton model of :math:`W` on the face, curvature
   :math:`V_F + \gamma \tilde G^{-1}` (seed 004 (38)–(43), :math:`\tilde g_t =
   r_t q''_t/2 + \varepsilon`, working response
   :math:`\tilde y_t = z_t - r_t q'_t / (2\tilde g_t)`, which reduces to the thesis's
   :math:`z - q'/q''` at :math:`\varepsilon = 0` but, unlike it, keeps the fixed point
   exact when the curvature floor ε of (34) is active).
   The :math:`N\times N` system, or its Woodbury form (48) through an
   :math:`n_F\times n_F` Cholesky factor when :math:`n_F < N`.
2. Step length: ``line_search="exact"`` minimises the exact :math:`W` along the segment
   (piecewise smooth and convex; breakpoints where a feature crosses its kink),
   ``"golden"`` is the thesis's rule (44)–(46) (full step if :math:`W` does not
   increase, else golden section on :math:`(0, 1)`, with the corrected combination
   :math:`(1-\tau)\lambda^k + \tau\tilde\lambda`) and no kink set -- kept to reproduce
   the document, it may cycle (reported by a ``ConvergenceWarning``).
3. Stop (47)/(50): sets unchanged and a full step, plus
   :math:`\|\lambda^{k+1}-\lambda^k\|_\infty \le` ``tol`` for the logistic loss; the
   duality gap :math:`J/(2\gamma) + W` is reported as an independent certificate.

The curvature is that of :math:`\varphi` at :math:`\lambda^k` (the quadratic Taylor model
of :math:`W` itself, seed 004 (28)): :math:`z_t` in :math:`\tilde g, \tilde y` is the
conjugate point :math:`z_t(\lambda_t) = -\varphi'_t(\lambda_t)`, which coincides with the
thesis's :math:`V_I\lambda^k` at the solution and makes every candidate a descent direction.
"""

from __future__ import annotations

import dataclasses
import time
import warnings
from dataclasses import dataclass

import numpy as np
from scipy.linalg import LinAlgError, cho_factor, cho_solve, solve_triangular
from scipy.linalg.lapack import dtrtri
from scipy.optimize import brentq
from scipy.special import expit, xlogy

from .._numba import njit
from .base import ConvergenceRecord, ConvergenceWarning, SolverResult

__all__ = [
    "SelectiveProblem",
    "selectivity_max",
    "selectivity_grid",
    "solve_dual_newton",
    "solve_selectivity_path",
    "selective_loss",
    "check_magnitude",
    "selective_scalar_min",
]

LOSSES = ("squared", "logistic")


# --------------------------------------------------------------------------------------
# the two losses of seed 004 (4)-(5), thesis scale: (y - z)^2 and ln(1 + e^{-yz})
# --------------------------------------------------------------------------------------
def selective_loss(loss, y, z):
    r"""Per-object loss :math:`q(y, z)`, its first and second derivative in ``z``.

    ``"squared"``: :math:`(y-z)^2, -2(y-z), 2`; ``"logistic"``:
    :math:`\ln(1+e^{-yz}), -y\sigma(-yz), \sigma(yz)\sigma(-yz)` (seed 004 (31)–(32)).
    """
    if loss == "squared":
        r = y - z
        return r * r, -2.0 * r, np.full_like(r, 2.0)
    m = y * z
    p = expit(-m)
    return np.logaddexp(0.0, -m), -y * p, p * (1.0 - p)


def check_magnitude(X, y, loss, ridge):
    r"""Refuse data whose dual quantities overflow double precision.

    The solver forms :math:`X_F X_F^\top` (entries up to :math:`n\max|x|^2`) and
    :math:`s_i^2 = (x_i^\top\lambda)^2` with :math:`|\lambda_t| \le |y_t|/\gamma`
    (regression) or :math:`1/(2\gamma)` (logistic). When either exceeds ~1e300 the fit
    would return infinite coefficients or outputs, so a ``ValueError`` asks for
    standardised features instead. Rescaling internally is not an option: with
    :math:`X = cX'` the problem is the same one with :math:`\gamma/c^2` and
    :math:`\mu c`, which underflows for the scales that overflow.
    """
    N, n = X.shape
    xmax = float(np.max(np.abs(X))) if X.size else 0.0
    if xmax == 0.0:
        return
    lx = np.log10(xmax)
    if np.log10(max(n, 1)) + 2.0 * lx > 300.0:
        raise ValueError(
            f"X has features of magnitude {xmax:.3g}: X X^T overflows double precision "
            "in the dual Newton solver; standardise the features first (e.g. with "
            "bisvm.Scaler)")
    lam = (float(np.max(np.abs(y))) if loss == "squared" else 0.5) / ridge
    if lam > 0 and 2.0 * (np.log10(N) + lx + np.log10(lam)) > 300.0:
        raise ValueError(
            f"X (magnitude {xmax:.3g}) and y/ridge (magnitude {lam:.3g}) are too large "
            "together: the dual products X^T lambda overflow double precision; "
            "standardise the features (e.g. with bisvm.Scaler), scale y or raise ridge")


@dataclass(frozen=True)
class SelectiveProblem:
    r"""Frozen selective-ridge GLM problem :math:`J(a, b)` of the module docstring.

    Parameters
    ----------
    X : ndarray, shape (N, n)
        Objects in rows (the thesis's :math:`X^\top`).
    y : ndarray, shape (N,)
        Real targets (``"squared"``) or labels ±1 (``"logistic"``).
    loss : {"squared", "logistic"}
    ridge : float
        :math:`\gamma > 0`.
    selectivity : float
        :math:`\mu \ge 0`.
    sample_weight : ndarray, shape (N,), optional
        :math:`r_t > 0` (ones by default; seed 004 (13)).
    fit_intercept : bool
        Unpenalised intercept (dual constraint :math:`\mathbf 1^\top\lambda = 0`).
    """

    X: np.ndarray
    y: np.ndarray
    loss: str
    ridge: float
    selectivity: float
    sample_weight: np.ndarray | None = None
    fit_intercept: bool = False

    def __post_init__(self):
        if self.loss not in LOSSES:
            raise ValueError(f"loss must be one of {LOSSES}, got {self.loss!r}")
        if not (np.isfinite(self.ridge) and self.ridge > 0):
            raise ValueError(f"ridge (gamma) must be a finite float > 0, got {self.ridge!r}")
        if not (np.isfinite(self.selectivity) and self.selectivity >= 0):
            raise ValueError(
                f"selectivity (mu) must be a finite float >= 0, got {self.selectivity!r}"
            )
        check_magnitude(self.X, self.y, self.loss, self.ridge)
        if self.sample_weight is not None:
            r = np.asarray(self.sample_weight, float)
            if r.shape != (self.X.shape[0],) or not np.all(np.isfinite(r)) or np.any(r <= 0):
                raise ValueError("sample_weight must be finite and > 0, one per object")

    @property
    def r(self):
        if self.sample_weight is None:
            return np.ones(self.X.shape[0])
        return np.asarray(self.sample_weight, float)

    def with_selectivity(self, mu):
        return SelectiveProblem(self.X, self.y, self.loss, self.ridge, float(mu),
                                self.sample_weight, self.fit_intercept)

    # ---- primal -------------------------------------------------------------------
    def primal_value(self, coef, intercept=0.0):
        """:math:`J(a, b)` (seed 004 (9)/(13))."""
        mu, a = self.selectivity, np.abs(coef)
        pen = np.sum(np.where(a <= mu, 2.0 * mu * a, mu * mu + a * a))
        q = selective_loss(self.loss, self.y, self.X @ coef + intercept)[0]
        return float(self.ridge * pen + np.sum(self.r * q))

    # ---- dual ---------------------------------------------------------------------
    def _u(self, lam):
        return 2.0 * self.ridge * self.y * lam / self.r

    def conj(self, lam):
        r""":math:`\sum_t\varphi_t(\lambda_t)` (``inf`` outside the logistic domain)."""
        r, g = self.r, self.ridge
        if self.loss == "squared":
            return float(np.sum(g * lam * lam / (2.0 * r) - self.y * lam))
        u = self._u(lam)
        if np.any(u < 0) or np.any(u > 1):
            return np.inf
        return float(np.sum(r / (2.0 * g) * (xlogy(u, u) + xlogy(1.0 - u, 1.0 - u))))

    def conj_point(self, lam):
        r""":math:`z_t(\lambda) = -\varphi'_t(\lambda_t)` and
        :math:`\varphi''_t(\lambda_t)` (``inf`` on the logistic boundary)."""
        r, g = self.r, self.ridge
        if self.loss == "squared":
            return self.y - g * lam / r, np.full_like(lam, g) / r
        # the open domain (0, 1): a point on its boundary (u = 0 is an object with zero
        # dual weight) gets a large finite output instead of an infinite one
        u = np.clip(self._u(lam), 1e-300, 1.0 - 1e-16)
        with np.errstate(divide="ignore"):
            z = self.y * (np.log1p(-u) - np.log(u))
            curv = 2.0 * g / (r * u * (1.0 - u))
        return z, curv

    def dual_value(self, lam):
        """The exact dual :math:`W(\\lambda)` (erratum 1: with the :math:`-\\mu^2` terms)."""
        s = self.X.T @ lam
        return 0.5 * float(np.sum(np.maximum(0.0, s * s - self.selectivity**2))) + self.conj(lam)

    def duality_gap(self, lam, coef, intercept=0.0):
        r""":math:`J(a,b)/(2\gamma) + W(\lambda) \ge 0`, zero exactly at the optimum."""
        return self.primal_value(coef, intercept) / (2.0 * self.ridge) + self.dual_value(lam)


def _empty_dual(X, y, loss, ridge, r, fit_intercept):
    """Closed-form dual solution of the empty model (seed 004 (68)–(70) and notes)."""
    if loss == "squared":
        if fit_intercept:
            b = float(np.sum(r * y) / np.sum(r))
            return r * (y - b) / ridge, b
        return r * y / ridge, 0.0
    if fit_intercept:
        # sum_t lambda_t = 0 with u_t = sigma(-y_t b) and lambda_t = r_t y_t u_t / (2 gamma):
        # b = log(R+/R-), the weighted class log-odds
        wp, wm = np.sum(r[y > 0]), np.sum(r[y < 0])
        b = float(np.log(wp / wm))
        return r * y * expit(-y * b) / (2.0 * ridge), b
    return r * y / (4.0 * ridge), 0.0  # 2 gamma y lambda = 1/2, the analysis note of (70)


def selectivity_max(X, y, loss, ridge, sample_weight=None, fit_intercept=False):
    r""":math:`\mu_{max} = \max_i |x_i^\top\lambda^*|` (seed 004 (71), with the absolute value).

    :math:`\lambda^*` is the dual solution of the empty model: :math:`y/\gamma`
    (regression) and :math:`y/(4\gamma)` (logistic); with an intercept,
    :math:`(y - \bar y)/\gamma` and :math:`y\sigma(-yb)/(2\gamma)`, :math:`b` the class
    log-odds. At :math:`\mu \ge \mu_{max}` the solution is :math:`a = 0`.

    Returns
    -------
    mu_max : float
    lam_star : ndarray, shape (N,)
    intercept : float
        The empty model's intercept (0 without one).
    """
    check_magnitude(X, y, loss, ridge)
    r = np.ones(X.shape[0]) if sample_weight is None else np.asarray(sample_weight, float)
    lam, b = _empty_dual(X, y, loss, ridge, r, fit_intercept)
    s = X.T @ lam
    return (float(np.max(np.abs(s))) if s.size else 0.0), lam, b


def selectivity_grid(mu_max, n_mu=50, min_ratio=1e-8):
    r"""Log grid of Algorithm B (72)–(73): :math:`\mu_l = 10^{-8l/m}\mu_{max}`,
    :math:`l = 0..m`, largest first; ``n_mu = m + 1`` points, ``min_ratio`` the
    :math:`10^{-8}` of the thesis."""
    if n_mu < 1:
        raise ValueError(f"n_mu must be >= 1, got {n_mu}")
    if not (0 < min_ratio <= 1):
        raise ValueError(f"min_ratio must lie in (0, 1], got {min_ratio}")
    if n_mu == 1:
        return np.array([float(mu_max)])
    return float(mu_max) * np.logspace(0.0, np.log10(min_ratio), n_mu)


# --------------------------------------------------------------------------------------
# linear algebra of one Newton candidate
# --------------------------------------------------------------------------------------
def _chol(M):
    shift, scale = 0.0, max(float(np.max(np.abs(np.diag(M)))), 1e-300)
    for _ in range(12):
        try:
            return cho_factor(M + shift * np.eye(M.shape[0]) if shift else M,
                              check_finite=False, lower=True)
        except LinAlgError:
            shift = max(shift * 10.0, 1e-13 * scale)
    raise LinAlgError("Newton matrix is not positive definite")


class _NewtonMatrix:
    r"""Applies :math:`A^{-1}`, :math:`A = X_F X_F^\top + \mathrm{diag}(c)` (the thesis's
    :math:`V_F + \gamma\tilde G^{-1}`), directly (``n_F >= N``) or by Woodbury (48)."""

    def __init__(self, XF, c):
        self.c = c
        N, nF = XF.shape
        self.woodbury = nF < N
        if self.woodbury:
            self.XF = XF
            Xd = XF / c[:, None]
            self.fac = _chol(np.eye(nF) + XF.T @ Xd) if nF else None
        else:
            M = XF @ XF.T
            M[np.diag_indices_from(M)] += c
            self.fac = _chol(M)

    def inv_diag(self):
        r"""Diagonal of :math:`A^{-1}` (``O(N^3/3)`` direct, ``O(N n_F^2)`` Woodbury)."""
        if not self.woodbury:
            # LAPACK trtri: the triangular inverse in N^3/3 flops (a solve with the
            # identity would take N^3)
            Linv, info = dtrtri(np.tril(self.fac[0]), lower=1)
            if info != 0:
                raise LinAlgError("singular Cholesky factor")
            return np.einsum("ij,ij->j", Linv, Linv)
        if self.fac is None:
            return 1.0 / self.c
        T = solve_triangular(np.tril(self.fac[0]), (self.XF / self.c[:, None]).T,
                             lower=True, check_finite=False)
        return 1.0 / self.c - np.einsum("ij,ij->j", T, T)

    def solve(self, v):
        if not self.woodbury:
            return cho_solve(self.fac, v, check_finite=False)
        dv = v / (self.c if v.ndim == 1 else self.c[:, None])
        if self.fac is None:
            return dv
        corr = self.XF @ cho_solve(self.fac, self.XF.T @ dv, check_finite=False)
        return dv - (corr / (self.c if v.ndim == 1 else self.c[:, None]))


def _candidate(X, F, Kidx, sigma, mu, c, ytil, fit_intercept):
    r"""Minimiser of :math:`\tfrac12\lambda^\top A\lambda - \tilde y^\top\lambda` subject to
    :math:`x_i^\top\lambda = \mu\sigma_i` (i in K) and :math:`\mathbf 1^\top\lambda = 0`;
    returns it and the multipliers (the K coefficients, then the intercept)."""
    A = _NewtonMatrix(X[:, F], c)
    cols = [X[:, Kidx]] if Kidx.size else []
    target = [mu * sigma] if Kidx.size else []
    if fit_intercept:
        cols.append(np.ones((X.shape[0], 1)))
        target.append(np.zeros(1))
    if not cols:
        return A.solve(ytil), np.zeros(0), A
    C = np.hstack(cols)
    tgt = np.concatenate(target)
    sol = A.solve(np.column_stack([ytil, C]))
    Ay, AC = sol[:, 0], sol[:, 1:]
    S = C.T @ AC
    rhs = C.T @ Ay - tgt
    try:
        theta = cho_solve(cho_factor(S, check_finite=False, lower=True), rhs,
                          check_finite=False)
    except LinAlgError:  # more constraints than the data can meet (|K| + 1 > rank)
        theta = np.linalg.lstsq(S, rhs, rcond=None)[0]
    lam = Ay - AC @ theta
    resid = np.max(np.abs(C.T @ lam - tgt))
    if not resid <= 1e-8 * max(1.0, float(np.max(np.abs(tgt)))):
        return None, None, A
    return lam, theta, A


# --------------------------------------------------------------------------------------
# line searches on the exact dual W along lam + tau d
# --------------------------------------------------------------------------------------
def _max_step(problem, lam, d):
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


def _exact_line_search(problem, lam, d, s, ds, free_ok):
    r"""Exact minimiser of the convex piecewise-smooth :math:`w(\tau) = W(\lambda+\tau d)` on
    :math:`[0, \tau_{max}]`. Kink features (``~free_ok``) contribute nothing on the face.

    Returns ``tau`` and the indices of the features whose kink holds the minimum (empty
    if the minimum is at a smooth point or at the end of the segment)."""
    mu = problem.selectivity
    tmax = _max_step(problem, lam, d)
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


def _face_line_search(problem, lam, d, s, ds, free, mu):
    r"""Minimise the smooth face function :math:`\tfrac12\sum_{i\in F}(s_i^2-\mu^2) +
    \sum_t\varphi_t` along :math:`\lambda + \tau d`, :math:`\tau \in [0, 1]`."""
    tmax = _max_step(problem, lam, d)
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


def _golden(fun, a, b, tol=1e-10):
    """Golden-section minimisation of a unimodal ``fun`` on ``[a, b]`` (seed 004 (46))."""
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
def _feasible_start(problem, lam0):
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


# --------------------------------------------------------------------------------------
# primal fallback (squared loss): cyclic coordinate descent + exact face polish
# --------------------------------------------------------------------------------------
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


def _dual_from_primal(problem, coef, intercept):
    r"""λ from the residuals, :math:`\lambda_t = -r_t q'(y_t, z_t)/(2\gamma)` (the
    conjugate point :math:`z_t = -\varphi'_t(\lambda_t)` inverted; regression:
    :math:`r_t(y_t - z_t)/\gamma`), and the stationarity of J makes :math:`a_i =
    x_i^\top\lambda` on the ridge features."""
    z = problem.X @ coef + intercept
    return -problem.r * selective_loss(problem.loss, problem.y, z)[1] / (2.0 * problem.ridge)


def _polish_face(problem, coef, intercept):
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
    try:
        theta = cho_solve(cho_factor(G, lower=True, check_finite=False), rhs,
                          check_finite=False)
    except LinAlgError:
        theta = np.linalg.lstsq(G, rhs, rcond=None)[0]
    if not np.all(np.isfinite(theta)):
        return None
    new = np.zeros_like(coef)
    new[F] = theta[: F.size]
    new[K] = theta[F.size: F.size + K.size]
    b = float(theta[-1]) if problem.fit_intercept else 0.0
    return new, b


def _primal_fallback(problem, starts, max_sweeps, gap_tol):
    r"""Finish a squared-loss problem by cyclic coordinate descent on the primal J.

    Exact coordinate minimisation (:func:`selective_scalar_min`, with
    :math:`h_i = 2\sum_t r_t x_{ti}^2`) on a convex objective whose non-smooth part
    :math:`\gamma\sum_i\mathrm{pen}_\mu(a_i)` is separable converges to the minimum
    (Tseng 2001). After every chunk of sweeps (5, growing to 10% of the sweeps done,
    at most 200) the face of the iterate is solved exactly (:func:`_polish_face`, when
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
        lam = _dual_from_primal(problem, a, b)
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
        pol = _polish_face(problem, a, b)
        if pol is not None:
            Jp = problem.primal_value(*pol)
            if Jp < Jval:
                a, b, Jval = pol[0], pol[1], Jp


def solve_dual_newton(problem, *, lam0=None, sets0=None, tol=1e-10, max_iter=500,
                      line_search="exact", curvature_floor=1e-12, fallback=True,
                      primal0=None):
    r"""Algorithm A of seed 004: Newton's method on the exact dual with active sets.

    Parameters
    ----------
    problem : SelectiveProblem
    lam0 : ndarray, shape (N,), optional
        Warm start :math:`\lambda^0` (the empty-model dual :math:`\lambda^*` by default).
    sets0 : tuple (free, kink, kink_sign) of ndarrays, optional
        Warm start of the sets (``extra["sets"]`` of a previous result): along a path
        the kink features of the previous μ mostly stay kinks, while the strict rule
        :math:`|s_i| > \mu` would call them all ridge features.
    tol : float
        The ε of (50): stop when the sets are unchanged after a full step and
        :math:`\|\lambda^{k+1}-\lambda^k\|_\infty \le` ``tol`` :math:`\max(1, \|\lambda\|_\infty)`
        (the logistic rule; for the squared loss a full step on unchanged sets is exact).
    max_iter : int
    line_search : {"exact", "golden"}
        See the module docstring; ``"golden"`` is the thesis as printed (no kink set).
    curvature_floor : float
        The ε of seed 004 (34) added to :math:`\tilde g_t` (logistic), relative to
        :math:`\max_t r_t`.
    primal0 : tuple (coef, intercept), optional
        A primal warm start for the fallback only (the path passes the previous μ's fit).
    fallback : bool or int
        ``True``, or the sweep cap of the fallback (``max_iter`` for ``True``; one sweep
        costs about :math:`Nn` flops against up to :math:`N^3` for a Newton candidate,
        :func:`solve_selectivity_path` passes ``20 * max_iter``).
        Squared loss, ``line_search="exact"``: when the Newton iteration stops without
        convergence (its cap, or no descent at working precision -- the set guesses of
        a lasso-like problem can oscillate), finish with :func:`_primal_fallback`
        (cyclic coordinate descent on the primal J, warm started from the lowest-J of
        ``primal0``, the final and the best dual iterate's primal coefficients) until
        the duality gap meets the solver's acceptance rule
        :math:`J/(2\gamma) + W \le 10^{-9}\max(1, |W|)`. The result then has the same
        form as a converged Newton solve (λ from the residuals, the sets from
        :math:`|a_i|`), ``extra["newton"] = None`` and ``extra["fallback"]`` the number
        of sweeps. If CD does not reach the gap within its cap, Newton is restarted once
        from the CD point and its sets (CD identifies the sets long before the gap);
        a ``ConvergenceWarning`` is issued only if that fails too.
        The logistic loss has no fallback yet.

    Returns
    -------
    SolverResult
        ``coef`` (the :math:`\hat a`), ``n_iter`` (Newton candidates), ``converged``,
        ``grad_norm`` (the final duality gap); ``extra``: ``dual_coef`` (λ),
        ``intercept``, ``free`` (F), ``kink`` (K), ``support``, ``decision`` (in-sample
        :math:`\hat z`), ``duality_gap``, ``dual_objective``, ``cycled``.
    """
    if line_search not in ("exact", "golden"):
        raise ValueError(f"line_search must be 'exact' or 'golden', got {line_search!r}")
    t0 = time.perf_counter()
    X, mu = problem.X, problem.selectivity
    N, n = X.shape
    if lam0 is None:
        lam = _empty_dual(X, problem.y, problem.loss, problem.ridge, problem.r,
                          problem.fit_intercept)[0]
    else:
        lam0 = np.asarray(lam0, float)
        if lam0.shape != (N,):
            raise ValueError(f"lam0 must have shape ({N},), got {lam0.shape}")
        lam = _feasible_start(problem, lam0)
    eps = curvature_floor * float(np.max(problem.r))
    s = X.T @ lam
    W = problem.dual_value(lam)
    objs, secs = [W], [0.0]
    # guessed sets for the next Newton candidate: F (ridge part), K (kinks, sign sigma)
    free = np.abs(s) > mu
    kink = np.zeros(n, bool)
    sigma = np.zeros(n)
    if sets0 is not None and line_search == "exact":
        free = np.array(sets0[0], bool, copy=True)
        kink = np.array(sets0[1], bool, copy=True)
        sigma = np.array(sets0[2], float, copy=True)
        if free.shape != (n,) or kink.shape != (n,) or sigma.shape != (n,):
            raise ValueError(f"sets0 must hold three arrays of shape ({n},)")
        free &= ~kink
    theta = np.zeros(0)
    safe = line_search == "golden"  # the thesis's iteration never guesses sets
    converged = cycled = False
    seen = {}
    trace = []
    best = None  # (W, lam, s) at the lowest solved face: where the safe mode restarts
    n_inexact, max_inexact = 0, 30
    newton = None
    k = 0
    tau = 1.0

    def pinned_kinks():
        return kink & (np.abs(np.abs(s) - mu) <= 1e-9 * max(mu, 1e-300))

    while k < max_iter:
        k += 1
        z, curv = problem.conj_point(lam)
        if problem.loss == "logistic":
            g = problem.ridge / curv + eps  # r q''/2 + eps (curv = 2 gamma / (r q''))
            c = problem.ridge / g
        else:
            c = curv
        ytil = z + c * lam
        Kidx = np.flatnonzero(kink)
        Fidx = np.flatnonzero(free)
        lam_c, theta_c, A_k = _candidate(X, Fidx, Kidx, sigma[Kidx], mu, c, ytil,
                                         problem.fit_intercept)
        if lam_c is None:
            # the guessed kink constraints cannot all hold: restart from the last solved
            # face with the kinks pinned there
            if best is not None:
                W, lam, s = best
            pk = pinned_kinks()
            kink[:] = pk if not (safe and np.array_equal(pk, kink)) else False
            free = (np.abs(s) > mu) & ~kink
            safe = True
            continue
        d = lam_c - lam
        ds = X.T @ d
        s_c = s + ds
        # sets the candidate asks for (primal-dual active-set rule)
        # (a relative margin of 1e-12 keeps a coefficient sitting at |a| = mu from
        # bouncing between F and K on rounding)
        aK = theta_c[: Kidx.size] * sigma[Kidx]
        k_to_z, k_to_f = Kidx[aK < -1e-12 * mu], Kidx[aK > mu * (1 + 1e-12)]
        zero = ~free & ~kink
        f_to_k = np.flatnonzero(free & (np.abs(s_c) < mu * (1 - 1e-12)))
        z_to_k = np.flatnonzero(zero & (np.abs(s_c) > mu * (1 + 1e-12)))
        if line_search == "golden":
            f_to_k = z_to_k = np.zeros(0, int)
        consistent = not (k_to_z.size or k_to_f.size or f_to_k.size or z_to_k.size)
        if safe and (k_to_z.size or k_to_f.size):
            # release kink features whose multiplier left sigma*[0, mu]; re-solve
            kink[k_to_z] = kink[k_to_f] = False
            free[k_to_f] = True
            continue
        newk = np.zeros(0, int)
        if not safe:
            # damped Newton on the guessed face: W restricted to the sets (smooth); a
            # point off the face (new kink constraints) goes straight onto it
            off = Kidx.size and np.max(np.abs(s[Kidx] - mu * sigma[Kidx])) > 1e-9 * mu
            if off or (problem.fit_intercept and abs(lam.sum()) > 1e-9 * np.abs(lam).sum()):
                tau = _max_step(problem, lam, d)
            else:
                tau = _face_line_search(problem, lam, d, s, ds, free, mu)
        elif problem.dual_value(lam_c) <= W:
            tau = 1.0
        elif line_search == "golden":
            tmax = _max_step(problem, lam, d)
            tau = _golden(lambda t_, l0=lam, d0=d: problem.dual_value(l0 + t_ * d0), 0.0, tmax)
        else:
            tau, newk = _exact_line_search(problem, lam, d, s, ds, ~pinned_kinks())
        if tau == 1.0:
            lam_new, s_new = lam_c, s_c
        else:
            lam_new = lam + tau * d
            s_new = X.T @ lam_new
        step = float(np.max(np.abs(lam_new - lam))) if N else 0.0
        scale = max(1.0, float(np.max(np.abs(lam_new)))) if N else 1.0
        lam, s, theta = lam_new, s_new, theta_c
        W = problem.dual_value(lam)
        objs.append(W)
        secs.append(time.perf_counter() - t0)
        trace.append((tau, int(free.sum()), int(kink.sum()), bool(consistent), newk.size,
                      step, W, safe))
        dnorm = float(np.max(np.abs(d))) if N else 0.0
        if problem.loss == "squared":
            face_solved = tau == 1.0 or dnorm <= tol * scale
        else:
            face_solved = dnorm <= tol * scale or (tau == 1.0 and step <= tol * scale)
        if line_search == "golden":
            # the thesis's stopping rule (47)/(50): I(lambda^{k+1}) = I^k (+ small step)
            free_new = np.abs(s) > mu
            same = np.array_equal(free_new, free)
            if same and (step <= tol * scale or (problem.loss == "squared" and tau == 1.0)):
                converged = True
                break
            key = free_new.tobytes()
            if key in seen and not same and objs[-2] - W <= 1e-14 * max(1.0, abs(W)):
                cycled = True
                break
            seen[key] = k
            free = free_new
            continue
        if consistent and face_solved:
            converged = True
            newton = (A_k, Fidx)  # factor of the final face (criteria reuse it)
            break
        if not safe:
            # semismooth-Newton switching: after a full Newton step the candidate's sets
            # are adopted at once (one step per set change near the solution, instead of
            # a face solved to tol before each change); limited, so that a pathological
            # sequence still ends in the exactly solved faces guarded below
            inexact = tau == 1.0 and not consistent and n_inexact < max_inexact
            if not face_solved and not inexact:
                continue  # more Newton steps on this face
            if inexact and not face_solved:
                n_inexact += 1
            else:
                # W at successive face solutions is not monotone (a face's solution
                # can sit above the previous one when a degenerate feature changes
                # set), so only a revisited face counts as failure
                key = (free.tobytes(), kink.tobytes())
                if key in seen:  # the set guesses cycle: finish in safe mode
                    if best is not None and best[0] < W:
                        W, lam, s = best
                    kink[:] = pinned_kinks()
                    free = (np.abs(s) > mu) & ~kink
                    safe = True
                    continue
                seen[key] = k
                if best is None or W <= best[0]:
                    best = (W, lam, s)
        elif tau != 1.0:
            # damped safe step: the sets of the current point (pinned kinks, plus those
            # where the exact line search stopped)
            kink[:] = pinned_kinks()
            if newk.size:
                kink[newk] = True
                sigma[newk] = np.sign(s[newk])
                s[newk] = mu * sigma[newk]
            free = (np.abs(s) > mu) & ~kink
            if tau == 0.0 and not newk.size:
                break  # no descent at working precision; the gap below decides
            continue
        # a face is solved (or a full safe step was taken): adopt the sets it asks for
        kink[k_to_z] = kink[k_to_f] = False
        free[k_to_f] = True
        free[f_to_k] = False
        kink[f_to_k] = True
        sigma[f_to_k] = np.sign(s[f_to_k] - ds[f_to_k])
        kink[z_to_k] = True
        sigma[z_to_k] = np.sign(s_c[z_to_k])
        safe = False
        if best is None or W <= best[0]:
            best = (W, lam, s)
    # primal solution from the dual (25) plus the kink multipliers
    if line_search == "golden":
        kink[:] = False
    Kidx = np.flatnonzero(kink)
    coef = np.zeros(n)
    free = free & ~kink
    coef[free] = s[free]
    nK = Kidx.size
    if nK and theta.size >= nK:
        coef[Kidx] = theta[:nK]
    intercept = float(theta[nK]) if problem.fit_intercept and theta.size > nK else 0.0
    gap = problem.duality_gap(lam, coef, intercept)
    def gap_tol(W_):
        return 1e-9 * max(1.0, abs(W_))

    if not converged and line_search == "exact" and k < max_iter:
        converged = bool(gap <= gap_tol(W))
    n_sweeps = None
    if not isinstance(fallback, (bool, int, np.integer)) or fallback < 0:
        raise ValueError(f"fallback must be a bool or an int >= 0, got {fallback!r}")
    if not converged and fallback and line_search == "exact" and problem.loss == "squared":
        starts = [(coef, intercept)]
        if primal0 is not None:
            starts.append((np.asarray(primal0[0], float), float(primal0[1])))
        if best is not None:
            # the primal point of the lowest solved face: a = s on |s| > mu (25), the
            # outputs z = y - gamma lam / r of the conjugate point fix the intercept
            s_b = best[2]
            a_b = np.where(np.abs(s_b) > mu, s_b, 0.0)
            b_b = 0.0
            if problem.fit_intercept:
                z_b = problem.y - problem.ridge * best[1] / problem.r
                b_b = float(np.sum(problem.r * (z_b - X @ a_b)) / np.sum(problem.r))
            starts.append((a_b, b_b))
        a_f, b_f, lam_f, gap_f, W_f, n_sweeps, ok = _primal_fallback(
            problem, starts, max_iter if fallback is True else int(fallback), gap_tol)
        if not ok:
            # CD identifies the sets long before it reaches the gap: Newton restarted
            # from its point and sets converges locally in a few steps
            af = np.abs(a_f)
            kf = (af > 0) & (af <= mu)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ConvergenceWarning)
                again = solve_dual_newton(problem, lam0=lam_f,
                                          sets0=(af > mu, kf, np.where(kf, np.sign(a_f), 0.0)),
                                          tol=tol, max_iter=max_iter,
                                          curvature_floor=curvature_floor, fallback=False)
            if again.converged:
                again.extra["fallback"] = n_sweeps
                again.extra["newton"] = None
                n_all = k + n_sweeps + again.n_iter
                return dataclasses.replace(again, n_iter=n_all, n_evals=n_all,
                                           seconds=time.perf_counter() - t0)
        if ok or gap_f < gap:
            coef, intercept, lam, gap, W = a_f, b_f, lam_f, gap_f, W_f
            aa = np.abs(coef)
            free = aa > mu
            kink = (aa > 0) & ~free
            sigma = np.sign(coef)
            newton = None  # no Newton factor of this face: criteria form their own
        converged = bool(ok)
        k += n_sweeps
    if not converged:
        msg = ("Algorithm A (dual Newton) cycled between active sets" if cycled else
               f"Algorithm A (dual Newton) stopped after max_iter={max_iter} iterations")
        if n_sweeps is not None:
            msg += f" and its coordinate-descent fallback after {n_sweeps} sweeps"
        warnings.warn(f"{msg} at selectivity={mu:.4g}; duality gap {gap:.3g}",
                      ConvergenceWarning, stacklevel=2)
    rec = ConvergenceRecord(np.array(objs), np.array([gap] * len(objs)), np.array(secs))
    decision = X @ coef + intercept
    return SolverResult(
        coef=coef, objective=problem.primal_value(coef, intercept), grad_norm=float(gap),
        n_iter=k, n_evals=k, converged=bool(converged), seconds=time.perf_counter() - t0,
        record=rec,
        extra=dict(dual_coef=lam, intercept=intercept, free=free, kink=kink.copy(),
                   support=coef != 0, decision=decision, duality_gap=float(gap),
                   dual_objective=float(W), cycled=cycled, trace=trace,
                   sets=(free.copy(), kink.copy(), np.where(kink, sigma, 0.0)),
                   newton=newton, fallback=n_sweeps),
    )


def solve_selectivity_path(X, y, loss, ridge, *, selectivities=None, n_mu=50, min_ratio=1e-8,
                           sample_weight=None, fit_intercept=False, tol=1e-10, max_iter=500,
                           line_search="exact", callback=None, max_step_ratio=1.5):
    r"""Algorithm B of seed 004: Algorithm A on a decreasing μ grid with warm starts.

    Parameters
    ----------
    X, y, loss, ridge, sample_weight, fit_intercept
        As in :class:`SelectiveProblem`.
    selectivities : array-like, optional
        The μ values (sorted decreasingly here); by default :func:`selectivity_grid`
        from :func:`selectivity_max` with ``n_mu`` and ``min_ratio``.
    callback : callable, optional
        ``callback(l, mu, problem, result)`` after each fit (criteria hook in here, so
        that the factorisations of the fit are reused while they are at hand).
    max_step_ratio : float
        Continuation: where two consecutive μ (or μ_max and the first μ) are further
        apart than this factor, Algorithm A is first run at geometric intermediate values
        (not returned) so that every warm start is a short step away. The default grid of
        50 points has a ratio of 1.46 and needs none.

    Returns
    -------
    mus : ndarray, shape (n_mu,)
    results : list of SolverResult
    mu_max : float
    """
    if not (np.isfinite(max_step_ratio) and max_step_ratio > 1):
        raise ValueError(f"max_step_ratio must be a finite number > 1, got {max_step_ratio!r}")
    mu_max, lam, _ = selectivity_max(X, y, loss, ridge, sample_weight, fit_intercept)
    if selectivities is None:
        mus = selectivity_grid(mu_max, n_mu, min_ratio)
    else:
        mus = np.sort(np.asarray(selectivities, float).ravel())[::-1]
        if mus.size == 0 or np.any(~np.isfinite(mus)) or np.any(mus < 0):
            raise ValueError("selectivities must be finite and >= 0")
    results = []
    sets = None
    base = SelectiveProblem(X, y, loss, ridge, float(mus[0]), sample_weight, fit_intercept)
    prev = mu_max
    for l, mu in enumerate(mus):
        # continuation: a warm start is only reliable a small step away (from the empty
        # model, or across a coarse grid, the first guessed face can ask for more kink
        # constraints than objects); intermediate μ, not reported, keep the steps short
        if mu > 0 and prev > mu * max_step_ratio:
            for mid in np.geomspace(prev, mu, int(np.ceil(np.log(prev / mu)
                                                         / np.log(max_step_ratio))) + 1)[1:-1]:
                r_mid = solve_dual_newton(base.with_selectivity(mid), lam0=lam, sets0=sets,
                                          tol=tol, max_iter=max_iter, line_search=line_search)
                lam, sets = r_mid.extra["dual_coef"], r_mid.extra["sets"]
        prev = mu
        prob = base.with_selectivity(mu)
        res = solve_dual_newton(prob, lam0=lam, sets0=sets, tol=tol, max_iter=max_iter,
                                line_search=line_search, fallback=20 * max_iter,
                                primal0=(results[-1].coef, results[-1].extra["intercept"])
                                if results else None)
        lam, sets = res.extra["dual_coef"], res.extra["sets"]
        results.append(res)
        if callback is not None:
            callback(l, mu, prob, res)
        # the final Newton factor is N x N: kept for the callback only, not along the path
        res.extra["newton"] = None
    return mus, results, mu_max
