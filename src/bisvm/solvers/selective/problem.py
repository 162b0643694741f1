r"""The selective-ridge GLM problem of Angulo Yauri (2020), its exact dual, and the μ
grid of its Algorithm B.

Primal problem (objects are the rows of ``X``, shape ``(N, n)``)

.. math::
    J(a, b) = \gamma \sum_{i=1}^n \mathrm{pen}_\mu(a_i) + \sum_{t=1}^N r_t\, q(y_t, x_t^\top a + b),

with :math:`q = (y - z)^2` (regression) or :math:`\ln(1 + e^{-yz})` (``y = ±1``), object
weights :math:`r_t > 0` and an optional unpenalised intercept ``b`` (an extension of the
thesis's problem).

Exact dual (*with* the :math:`-\mu^2` terms, so that it is
continuous and convex), :math:`s = X^\top \lambda`:

.. math::
    W(\lambda) = \tfrac12 \sum_i \max(0, s_i^2 - \mu^2) + \sum_t \varphi_t(\lambda_t),
    \qquad \varphi_t(\lambda) = -\min_z \Big(\frac{r_t}{2\gamma} q(y_t, z) + \lambda z\Big),

subject to :math:`\sum_t \lambda_t = 0` when there is an intercept. Regression:
:math:`\varphi = \gamma\lambda^2/(2r) - y\lambda`; logistic: with
:math:`u = 2\gamma y\lambda / r \in [0, 1]`,
:math:`\varphi = \frac{r}{2\gamma}[u\ln u + (1-u)\ln(1-u)]` (the conjugate of the
logistic loss).
Primal–dual map: :math:`a_i = s_i` where :math:`|s_i| > \mu`, else 0.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import expit, xlogy

from ...losses import Logistic, Squared
from ...penalties import SelectiveRidge

__all__ = [
    "LOSSES",
    "SelectiveProblem",
    "selective_loss",
    "check_magnitude",
    "empty_dual",
    "selectivity_max",
    "selectivity_grid",
    "equal_split_duplicates",
]

LOSSES = ("squared", "logistic")
_SQUARED, _LOGISTIC = Squared(), Logistic()


# --------------------------------------------------------------------------------------
# the two losses of the thesis, at its scale: (y - z)^2 and ln(1 + e^{-yz})
# --------------------------------------------------------------------------------------
def selective_loss(loss, y, z):
    r"""Per-object loss :math:`q(y, z)`, its first and second derivative in ``z``.

    ``"squared"``: :math:`(y-z)^2, -2(y-z), 2` (twice :class:`bisvm.losses.Squared`, the
    thesis's scale; exact, a factor 2); ``"logistic"``:
    :math:`\ln(1+e^{-yz}), -y\sigma(-yz), \sigma(yz)\sigma(-yz)`
    (:meth:`bisvm.losses.Logistic.value_derivatives`).
    """
    if loss == "squared":
        q, d1, d2 = _SQUARED.value_derivatives(y, z)
        return 2.0 * q, 2.0 * d1, 2.0 * d2
    return _LOGISTIC.value_derivatives(y, z)


def check_magnitude(X, y, loss, ridge):
    r"""Refuse data whose dual quantities overflow double precision.

    The solver forms :math:`X_F X_F^\top` (entries up to :math:`n\max|x|^2`) and
    :math:`s_i^2 = (x_i^\top\lambda)^2` with :math:`|\lambda_t| \le |y_t|/\gamma`
    (regression) or :math:`1/(2\gamma)` (logistic). When either exceeds ~1e300 the fit
    would return infinite coefficients or outputs, so a ``ValueError`` asks for
    standardised features instead; NaN or infinite entries are refused as well.
    Rescaling internally is not an option: with :math:`X = cX'` the problem is the same
    one with :math:`\gamma/c^2` and :math:`\mu c`, which underflows for the scales that overflow.
    """
    N, n = X.shape
    xmax = float(np.max(np.abs(X))) if X.size else 0.0
    # NaN propagates through max: one reduction checks finiteness as well
    if not np.isfinite(xmax):
        raise ValueError("X contains NaN or infinity (e.g. 0/0 from standardising a "
                         "constant column); the selective solver needs finite features")
    if y.size and not np.isfinite(float(np.max(np.abs(y)))):
        raise ValueError("y contains NaN or infinity")
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
        :math:`r_t > 0` (ones by default).
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
        r""":math:`J(a, b) = \gamma\sum_i\mathrm{pen}_\mu(a_i) + \sum_t r_t q(y_t, x_t^\top a + b)`
        is :class:`bisvm.penalties.SelectiveRidge` plus the loss."""
        pen = SelectiveRidge(self.selectivity, self.ridge).value(np.asarray(coef))
        q = selective_loss(self.loss, self.y, self.X @ coef + intercept)[0]
        return float(pen + np.sum(self.r * q))

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
        """The exact dual :math:`W(\\lambda)` (with the :math:`-\\mu^2` terms)."""
        s = self.X.T @ lam
        return 0.5 * float(np.sum(np.maximum(0.0, s * s - self.selectivity**2))) + self.conj(lam)

    def duality_gap(self, lam, coef, intercept=0.0):
        r""":math:`J(a,b)/(2\gamma) + W(\lambda) \ge 0`, zero exactly at the optimum."""
        return self.primal_value(coef, intercept) / (2.0 * self.ridge) + self.dual_value(lam)


def empty_dual(X, y, loss, ridge, r, fit_intercept):
    """Closed-form dual solution of the empty model."""
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
    return r * y / (4.0 * ridge), 0.0  # u_t = sigma(0) = 1/2 without an intercept


def selectivity_max(X, y, loss, ridge, sample_weight=None, fit_intercept=False):
    r""":math:`\mu_{max} = \max_i |x_i^\top\lambda^*|` (with the absolute value).

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
    lam, b = empty_dual(X, y, loss, ridge, r, fit_intercept)
    s = X.T @ lam
    return (float(np.max(np.abs(s))) if s.size else 0.0), lam, b


def selectivity_grid(mu_max, n_mu=50, min_ratio=1e-8):
    r"""Log grid of Algorithm B: :math:`\mu_l = 10^{-8l/m}\mu_{max}`,
    :math:`l = 0..m`, largest first; ``n_mu = m + 1`` points, ``min_ratio`` the
    :math:`10^{-8}` of the thesis."""
    if n_mu < 1:
        raise ValueError(f"n_mu must be >= 1, got {n_mu}")
    if not (0 < min_ratio <= 1):
        raise ValueError(f"min_ratio must lie in (0, 1], got {min_ratio}")
    if n_mu == 1:
        return np.array([float(mu_max)])
    return float(mu_max) * np.logspace(0.0, np.log10(min_ratio), n_mu)


def equal_split_duplicates(X, coef):
    r"""Share the coefficients of identical columns of ``X`` equally.

    Columns that are exactly equal (duplicated features, frequent in binary
    fingerprints) enter :math:`J(a, b)` through the sum of their coefficients only in the
    loss, and :math:`\sum_{i\in g}\mathrm{pen}_\mu(a_i)` is convex and symmetric in
    them, so at a fixed sum it is smallest at the equal split (Jensen): replacing every
    group's coefficients by their mean keeps a minimiser a minimiser, and among the
    minimisers that differ only in how a group shares its sum it is the one of minimum
    Euclidean norm (the ridge part already gives duplicates equal coefficients; the
    linear part :math:`2\mu|a|` does not, and coordinate descent would give one member
    everything). All-zero columns are left at 0.

    Returns
    -------
    coef : ndarray, shape (n,)
        A new array where a group was changed, else ``coef`` itself.
    """
    X = np.asarray(X)
    nz = np.flatnonzero(coef)
    if nz.size == 0 or X.shape[1] < 2:
        return coef
    # only columns that could duplicate a non-zero one: equal sums and sums of squares
    s1, s2 = X.sum(axis=0), np.einsum("ti,ti->i", X, X)
    cand = np.flatnonzero(np.isin(s1, s1[nz]) & np.isin(s2, s2[nz]) & (s2 > 0))
    if cand.size < 2:
        return coef
    _, group = np.unique(np.ascontiguousarray(X[:, cand].T), axis=0, return_inverse=True)
    group = np.asarray(group, dtype=np.intp).reshape(-1)
    size = np.bincount(group)
    if np.all(size == 1):
        return coef
    total = np.bincount(group, weights=coef[cand])
    shared = total[group] / size[group]
    dup = size[group] > 1
    if np.array_equal(shared[dup], coef[cand][dup]):
        return coef
    out = coef.copy()
    out[cand[dup]] = shared[dup]
    return out
