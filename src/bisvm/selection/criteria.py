r"""Upper-level (validation) criteria: value and gradient with respect to the lower-level
solution ``w``, for one validation set ``(V, η)`` whose last column is the bias column.

* :class:`SquaredValidation` -- the criterion of González Vallejo (2024),
  :math:`J(w) = \frac{1}{2m}\|V w - \eta\|_2^2`, the *halved* mean squared error of the raw
  SVM outputs against ±1 labels (not a misclassification rate);
* :class:`LogisticValidation` -- a smoothed misclassification criterion (beyond the
  thesis): the mean logistic loss of the validation margins
  :math:`J(w) = \frac1m \sum_i \log(1 + e^{-\eta_i v_i^\top w})`, which, unlike the squared
  error, does not penalise confidently *correct* outputs beyond ±1.

Every criterion is a weighted mean :math:`J = \sum_i s_i j_i(w) / \sum_i s_i` of per-row
terms (plain mean: all :math:`s_i = 1`). :func:`balanced_weights` gives the class-balanced
weights :math:`s_i = 1/m_{c(i)}` (:math:`m_c` the validation rows of class c), with which
J is the mean over the two classes of their mean terms: on an unbalanced target the
minority class weighs as much as the majority, and a model that predicts the majority
class everywhere no longer looks good (the balanced accuracy's smooth counterpart).

Averaging over k folds is done by the bilevel layer (:mod:`bisvm.selection.bilevel`).

References
----------
C. L. González Vallejo, "Selección de variables a través de máquinas de soporte vectorial
dispersas: un enfoque de optimización binivel", master's thesis, Escuela Politécnica
Nacional, Quito, 2024.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np
from scipy.special import expit

__all__ = [
    "Criterion",
    "SquaredValidation",
    "SmoothedAbsoluteValidation",
    "MAE_SMOOTHING",
    "LogisticValidation",
    "SquaredHingeValidation",
    "make_criterion",
    "balanced_weights",
    "ScaledSquaredHingeValidation",
    "best_scale",
    "SCALE_MAX",
    "misclassification_rate",
    "halved_mse",
]


@runtime_checkable
class Criterion(Protocol):
    """The *criterion* role of the bilevel engine: on one fold's validation rows ``V``
    (bias column last) with targets ``eta``, the value and gradient with respect to the
    lower-level solution ``w``, and the per-row terms with their normalised weights
    (``value = weights @ terms``) that the one-standard-error rules pool."""

    V: object
    eta: object

    def value_and_grad(self, w): ...

    def terms(self, w): ...


@dataclass(frozen=True)
class SquaredValidation:
    r"""Thesis criterion :math:`J = \frac{1}{2m}\|Vw-\eta\|^2`,
    :math:`\nabla_w J = \frac1m V^\top(Vw-\eta)` (González Vallejo 2024)."""

    V: np.ndarray
    eta: np.ndarray
    sample_weight: np.ndarray | None = None

    def value_and_grad(self, w):
        r = self.V @ w - self.eta
        s = _weights(self.sample_weight, r.size)
        return float(s @ r**2) / 2.0, self.V.T @ (s * r)

    def terms(self, w):
        """Per-row terms and normalised weights: ``value = weights @ terms``."""
        r = self.V @ w - self.eta
        return r**2 / 2.0, _weights(self.sample_weight, r.size)


@dataclass(frozen=True)
class LogisticValidation:
    r"""Mean logistic loss of validation margins (not in González Vallejo 2024):
    :math:`J = \frac1m\sum\log(1+e^{-\eta_i v_i^\top w})`,
    :math:`\nabla_w J = -\frac1m V^\top(\eta \odot \sigma(-\eta \odot Vw))`."""

    V: np.ndarray
    eta: np.ndarray
    sample_weight: np.ndarray | None = None

    def value_and_grad(self, w):
        z = self.eta * (self.V @ w)
        s = _weights(self.sample_weight, z.size)
        return float(s @ np.logaddexp(0.0, -z)), -(self.V.T @ (s * self.eta * expit(-z)))

    def terms(self, w):
        """Per-row terms and normalised weights: ``value = weights @ terms``."""
        z = self.eta * (self.V @ w)
        return np.logaddexp(0.0, -z), _weights(self.sample_weight, z.size)


@dataclass(frozen=True)
class SquaredHingeValidation:
    r"""Margin-based criterion (not in González Vallejo 2024):
    :math:`J = \frac{1}{2m}\sum_i\max(0, 1-\eta_i v_i^\top w)^2`, the thesis's squared
    error with the part for confidently correct outputs (:math:`\eta_i v_i^\top w > 1`)
    removed; :math:`\nabla_w J = -\frac1m V^\top(\eta\odot\max(0, 1-\eta\odot Vw))`."""

    V: np.ndarray
    eta: np.ndarray
    sample_weight: np.ndarray | None = None

    def value_and_grad(self, w):
        r = np.maximum(0.0, 1.0 - self.eta * (self.V @ w))
        s = _weights(self.sample_weight, r.size)
        return float(s @ r**2) / 2.0, -(self.V.T @ (s * self.eta * r))

    def terms(self, w):
        """Per-row terms and normalised weights: ``value = weights @ terms``."""
        r = np.maximum(0.0, 1.0 - self.eta * (self.V @ w))
        return r**2 / 2.0, _weights(self.sample_weight, r.size)


#: δ of :class:`SmoothedAbsoluteValidation`, in units of the (standardised) target.
MAE_SMOOTHING = 0.01


@dataclass(frozen=True)
class SmoothedAbsoluteValidation:
    r"""Smoothed mean absolute error of validation outputs (regression):
    :math:`J = \sum_i\omega_i(\sqrt{r_i^2 + \delta^2} - \delta)`, :math:`r = Vw - \eta`,
    :math:`\nabla_w J = V^\top(\omega\odot r/\sqrt{r^2 + \delta^2})`.

    The absolute error is not differentiable where a residual vanishes, and the
    hypergradient needs :math:`\nabla_w J`; the Pseudo-Huber smoothing (Charbonnier et al.
    1997) differs from :math:`|r|` by at most δ and is quadratic only within
    :math:`|r| \lesssim \delta` (:data:`MAE_SMOOTHING` = 0.01 of the target's standard
    deviation, which the regressor standardises to 1). The MAE weighs a large residual
    linearly rather than quadratically: a criterion robust to a few outlying validation
    rows."""

    V: np.ndarray
    eta: np.ndarray
    sample_weight: np.ndarray | None = None
    delta: float = MAE_SMOOTHING

    def value_and_grad(self, w):
        r = self.V @ w - self.eta
        s = _weights(self.sample_weight, r.size)
        q = np.sqrt(r**2 + self.delta**2)
        return float(s @ (q - self.delta)), self.V.T @ (s * r / q)

    def terms(self, w):
        """Per-row terms and normalised weights: ``value = weights @ terms``."""
        r = self.V @ w - self.eta
        return np.sqrt(r**2 + self.delta**2) - self.delta, _weights(self.sample_weight, r.size)


def _weights(sample_weight, m):
    """Normalised row weights (summing to 1): the plain mean when None."""
    if sample_weight is None:
        return np.full(m, 1.0 / m)
    s = np.asarray(sample_weight, dtype=float)
    return s / s.sum()


def balanced_weights(eta, sample_weight=None):
    r"""Class-balanced row weights :math:`s_i = \omega_i/\Omega_{c(i)}`, with
    :math:`\Omega_c` the total weight of class c (its count :math:`m_c` when
    ``sample_weight`` is None): each class's rows together weigh as much as any
    other's. A class of zero total weight keeps weight zero."""
    eta = np.asarray(eta)
    _, inv = np.unique(eta, return_inverse=True)
    om = np.ones(eta.shape[0]) if sample_weight is None else np.asarray(
        sample_weight, dtype=float)
    totals = np.bincount(inv, weights=om)
    safe = np.where(totals > 0, totals, 1.0)
    return om / safe[inv]


@dataclass(frozen=True)
class ScaledSquaredHingeValidation:
    r"""Scale-free margin criterion (not in González Vallejo 2024): the squared hinge of
    the validation margins after the best rescaling of the outputs,

    .. math::
        J(w) = \min_{s \ge 0}\ \tfrac12\sum_i \omega_i\max(0, 1 - s\,m_i)^2,
        \qquad m_i = \eta_i v_i^\top w,

    with :math:`\omega` the normalised row weights. :math:`J(cw) = J(w)` for every
    :math:`c > 0`: the criterion judges the direction of ``w`` (which rows fall on which
    side, how well they are separated), not its length. Why: the plain margin criterion
    is minimised, on noisy data, by outputs shrunk towards 0 (a misclassified row costs
    :math:`(1 + |v^\top w|)^2/2`), and the only knob of the L1 weights that shrinks
    outputs is to zero features, informative ones included, until the model predicts
    the majority class. Rescaling is
    what a calibration step (Platt's) does after training, so nothing is lost by letting
    the criterion do it. By the envelope theorem
    :math:`\nabla_w J = -s^\star V^\top(\omega\odot\eta\odot\max(0, 1 - s^\star m))`.
    :math:`s^\star` is found exactly: the objective is a convex piecewise quadratic in s
    with breakpoints :math:`1/m_i`; it is capped at :data:`SCALE_MAX` when the rows are
    separated (any large s then gives J = 0).
    """

    V: np.ndarray
    eta: np.ndarray
    sample_weight: np.ndarray | None = None

    def value_and_grad(self, w):
        m = self.eta * (self.V @ w)
        om = _weights(self.sample_weight, m.size)
        s = best_scale(m, om)
        r = np.maximum(0.0, 1.0 - s * m)
        return float(om @ r**2) / 2.0, -s * (self.V.T @ (om * self.eta * r))

    def terms(self, w):
        """Per-row terms (at the best scale) and normalised weights."""
        m = self.eta * (self.V @ w)
        om = _weights(self.sample_weight, m.size)
        r = np.maximum(0.0, 1.0 - best_scale(m, om) * m)
        return r**2 / 2.0, om


#: Largest output scale of :class:`ScaledSquaredHingeValidation`.
SCALE_MAX = 1e6


def best_scale(m, om):
    r""":math:`\arg\min_{0 \le s \le S}\ \frac12\sum_i\omega_i\max(0, 1 - s m_i)^2` for
    margins ``m`` and weights ``om``, exactly: on each interval between consecutive
    breakpoints :math:`1/m_i` the active rows (:math:`s m_i < 1`) are fixed and the
    minimiser is :math:`\sum_A\omega m / \sum_A\omega m^2`."""
    m = np.asarray(m, float)
    pos = m > 0
    # rows with m <= 0 are active for every s >= 0
    a1 = float(om[~pos] @ m[~pos])
    a2 = float(om[~pos] @ m[~pos] ** 2)
    bp = 1.0 / m[pos]
    order = np.argsort(bp)
    bp, mp, op = bp[order], m[pos][order], om[pos][order]
    # on [bp[k-1], bp[k]) the positive rows k.. are active (their breakpoint lies above s)
    c1 = a1 + np.concatenate([np.cumsum((op * mp)[::-1])[::-1], [0.0]])
    c2 = a2 + np.concatenate([np.cumsum((op * mp**2)[::-1])[::-1], [0.0]])
    lo = np.concatenate([[0.0], bp])
    hi = np.concatenate([bp, [np.inf]])
    for k in range(lo.size):
        if c2[k] <= 0:  # nothing active: J = 0 on this interval
            return float(min(max(lo[k], 1.0), SCALE_MAX)) if np.isinf(hi[k]) else \
                float(lo[k])
        s = c1[k] / c2[k]
        if s < lo[k]:
            return float(lo[k])
        if s <= hi[k]:
            return float(min(s, SCALE_MAX))
    return SCALE_MAX


_CRITERIA = {
    "scaled_squared_hinge": ScaledSquaredHingeValidation,
    "squared": SquaredValidation,
    "logistic": LogisticValidation,
    "squared_hinge": SquaredHingeValidation,
    "absolute": SmoothedAbsoluteValidation,
}


def make_criterion(kind, V, eta, sample_weight=None):
    """Build the validation criterion ``kind``: ``"squared"`` (thesis; for regression the
    halved MSE), ``"logistic"``, ``"squared_hinge"``, ``"scaled_squared_hinge"`` or
    ``"absolute"`` (the smoothed MAE of regression), a weighted mean of per-row terms
    when ``sample_weight`` is given (e.g. :func:`balanced_weights`)."""
    if sample_weight is not None:
        sample_weight = np.asarray(sample_weight, dtype=float)
        if sample_weight.shape != (V.shape[0],) or not np.all(np.isfinite(sample_weight)) \
                or np.any(sample_weight < 0) or sample_weight.sum() <= 0:
            raise ValueError("sample_weight must be finite, non-negative, not all zero, one "
                             "per validation row")
    try:
        return _CRITERIA[kind](V, eta, sample_weight)
    except KeyError:
        raise ValueError(
            f"unknown validation loss {kind!r}; expected one of {sorted(_CRITERIA)}"
        ) from None


def misclassification_rate(V, eta, w):
    r"""Fraction of validation rows with :math:`\operatorname{sign}(v^\top w) \ne \eta`
    (a zero output counts as an error)."""
    return float(np.mean(np.sign(V @ w) != eta))


def halved_mse(V, eta, w):
    r"""The "validation error" :math:`\frac{1}{2m}\|Vw-\eta\|^2` of González Vallejo (2024)."""
    r = V @ w - eta
    return float(r @ r) / (2.0 * V.shape[0])
