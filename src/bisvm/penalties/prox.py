r"""The non-smooth penalties used through their proximal operators: the weighted lasso
:class:`WeightedL1` and the selective ridge :class:`SelectiveRidge` of the selective
family (Angulo Yauri 2020).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .interfaces import ProxPenalty

__all__ = ["WeightedL1", "SelectiveRidge"]


@dataclass(frozen=True)
class WeightedL1(ProxPenalty):
    r"""Weighted lasso :math:`\sum_j \beta_j |w_j|` (Zou 2006, "The adaptive lasso and
    its oracle properties"); non-smooth.

    Provides the proximal operator
    :math:`\operatorname{prox}_{t P}(v)_j = \operatorname{sign}(v_j)\max(|v_j| - t\beta_j, 0)`.

    Parameters
    ----------
    weights : float or ndarray, shape (d,)
        :math:`\beta_j \ge 0`; a scalar applies to every coefficient.
    """

    weights: float | np.ndarray = 1.0

    def __post_init__(self):
        wts = np.asarray(self.weights, dtype=float)
        if not np.all(np.isfinite(wts)) or np.any(wts < 0):
            raise ValueError("L1 weights must be finite and non-negative")

    def value(self, w):
        return float(np.sum(np.asarray(self.weights) * np.abs(w)))

    def prox(self, v, step):
        t = step * np.asarray(self.weights)
        return np.sign(v) * np.maximum(np.abs(v) - t, 0.0)

    def subdiff_distance(self, w, grad):
        """Distance of ``-grad`` to the subdifferential at ``w`` (0 at an optimum)."""
        b = np.broadcast_to(np.asarray(self.weights, float), w.shape)
        nz = w != 0
        out = np.empty_like(w, dtype=float)
        out[nz] = np.abs(grad[nz] + b[nz] * np.sign(w[nz]))
        out[~nz] = np.maximum(np.abs(grad[~nz]) - b[~nz], 0.0)
        return out


@dataclass(frozen=True)
class SelectiveRidge(ProxPenalty):
    r"""Selective-ridge ("reverse Huber") penalty, times the ridge weight (Angulo Yauri 2020,
    "A method of differential cross-validation for choosing the complexity level of
    generalized linear dependence models").

    .. math::
        \gamma \sum_i \mathrm{pen}_\mu(w_i),\qquad
        \mathrm{pen}_\mu(a) = \begin{cases} 2\mu|a| & |a| \le \mu \\
                                             \mu^2 + a^2 & |a| > \mu, \end{cases}

    i.e. :math:`\mathrm{pen}_\mu = 2\mu\,\mathrm{berhu}_\mu`, the reverse Huber of Owen
    (2007, "A robust hybrid of lasso and ridge regression"): L1-like near zero (exact
    zeros), ridge-like for large coefficients. Convex, C¹ except at 0, not C² at
    :math:`|a| = \mu`. ``mu = 0`` is ordinary ridge :math:`\gamma\|w\|^2`.

    Non-smooth at 0, so it provides ``prox`` (closed form: soft-threshold by
    :math:`2t\gamma\mu` while the result stays in :math:`[-\mu, \mu]`, otherwise the
    ridge shrinkage :math:`v/(1 + 2t\gamma)`).

    Parameters
    ----------
    selectivity : float
        The thesis's :math:`\mu \ge 0`.
    ridge : float
        The thesis's :math:`\gamma > 0`.
    mask : ndarray of bool, shape (d,), optional
        Which coefficients are penalised (all by default; ``False`` for an intercept).
    """

    selectivity: float
    ridge: float = 1.0
    mask: np.ndarray | None = None

    def __post_init__(self):
        if not (np.isfinite(self.selectivity) and self.selectivity >= 0):
            raise ValueError(f"selectivity must be a finite float >= 0, got {self.selectivity!r}")
        if not (np.isfinite(self.ridge) and self.ridge > 0):
            raise ValueError(f"ridge must be a finite float > 0, got {self.ridge!r}")

    def _m(self, w):
        return np.ones(w.shape, bool) if self.mask is None else np.asarray(self.mask, bool)

    def value(self, w):
        mu, a = self.selectivity, np.abs(w[self._m(w)])
        return self.ridge * float(np.sum(np.where(a <= mu, 2.0 * mu * a, mu * mu + a * a)))

    def gradient(self, w):
        """Gradient where it exists; the minimal-norm subgradient 0 at ``w_i = 0``."""
        mu, m = self.selectivity, self._m(w)
        a = np.abs(w)
        g = np.where(a <= mu, 2.0 * mu * np.sign(w), 2.0 * w) * self.ridge
        return np.where(m, g, 0.0)

    def prox(self, v, step):
        r""":math:`\arg\min_a t\gamma\,\mathrm{pen}_\mu(a) + \tfrac12 (a - v)^2` per entry."""
        mu, c = self.selectivity, step * self.ridge
        soft = np.sign(v) * np.maximum(np.abs(v) - 2.0 * c * mu, 0.0)
        out = np.where(np.abs(soft) <= mu, soft, v / (1.0 + 2.0 * c))
        return np.where(self._m(v), out, v)

    def subdiff_distance(self, w, grad):
        """Distance of ``-grad`` (loss gradient) to the penalty's subdifferential at ``w``."""
        m = self._m(w)
        nz = w != 0
        out = np.abs(grad + self.gradient(w))
        zero = (~nz) & m
        out[zero] = np.maximum(np.abs(grad[zero]) - 2.0 * self.ridge * self.selectivity, 0.0)
        return out
