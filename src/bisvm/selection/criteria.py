r"""Upper-level (validation) criteria: value and gradient with respect to the lower-level
solution ``w``, for one validation set ``(V, η)`` whose last column is the bias column.

* :class:`SquaredValidation` -- the thesis's criterion (seed-000 (1.2)/(4.23))
  :math:`J(w) = \frac{1}{2m}\|V w - \eta\|_2^2`, the *halved* mean squared error of the raw
  SVM outputs against ±1 labels (not a misclassification rate; seed-000 erratum 11);
* :class:`LogisticValidation` -- a smoothed misclassification criterion (beyond the
  thesis): the mean logistic loss of the validation margins
  :math:`J(w) = \frac1m \sum_i \log(1 + e^{-\eta_i v_i^\top w})`, which, unlike the squared
  error, does not penalise confidently *correct* outputs beyond ±1.

Averaging over k folds is done by the bilevel layer (:mod:`bisvm.selection.bilevel`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import expit

__all__ = [
    "SquaredValidation",
    "LogisticValidation",
    "SquaredHingeValidation",
    "make_criterion",
    "misclassification_rate",
    "halved_mse",
]


@dataclass(frozen=True)
class SquaredValidation:
    r"""Thesis criterion :math:`J = \frac{1}{2m}\|Vw-\eta\|^2`,
    :math:`\nabla_w J = \frac1m V^\top(Vw-\eta)` (seed-000 §2.2)."""

    V: np.ndarray
    eta: np.ndarray

    def value_and_grad(self, w):
        r = self.V @ w - self.eta
        m = self.V.shape[0]
        return float(r @ r) / (2.0 * m), self.V.T @ r / m


@dataclass(frozen=True)
class LogisticValidation:
    r"""Mean logistic loss of validation margins (beyond seed-000):
    :math:`J = \frac1m\sum\log(1+e^{-\eta_i v_i^\top w})`,
    :math:`\nabla_w J = -\frac1m V^\top(\eta \odot \sigma(-\eta \odot Vw))`."""

    V: np.ndarray
    eta: np.ndarray

    def value_and_grad(self, w):
        z = self.eta * (self.V @ w)
        m = self.V.shape[0]
        return float(np.mean(np.logaddexp(0.0, -z))), -(self.V.T @ (self.eta * expit(-z))) / m


@dataclass(frozen=True)
class SquaredHingeValidation:
    r"""Margin-based criterion (beyond seed-000):
    :math:`J = \frac{1}{2m}\sum_i\max(0, 1-\eta_i v_i^\top w)^2`, the thesis's squared
    error with the part for confidently correct outputs (:math:`\eta_i v_i^\top w > 1`)
    removed; :math:`\nabla_w J = -\frac1m V^\top(\eta\odot\max(0, 1-\eta\odot Vw))`."""

    V: np.ndarray
    eta: np.ndarray

    def value_and_grad(self, w):
        r = np.maximum(0.0, 1.0 - self.eta * (self.V @ w))
        m = self.V.shape[0]
        return float(r @ r) / (2.0 * m), -(self.V.T @ (self.eta * r)) / m


_CRITERIA = {
    "squared": SquaredValidation,
    "logistic": LogisticValidation,
    "squared_hinge": SquaredHingeValidation,
}


def make_criterion(kind, V, eta):
    """Build the validation criterion ``kind``: ``"squared"`` (thesis), ``"logistic"`` or
    ``"squared_hinge"``."""
    try:
        return _CRITERIA[kind](V, eta)
    except KeyError:
        raise ValueError(
            f"unknown validation loss {kind!r}; expected one of {sorted(_CRITERIA)}"
        ) from None


def misclassification_rate(V, eta, w):
    """Fraction of validation rows with :math:`\\operatorname{sign}(v^\\top w) \\ne \\eta`
    (a zero output counts as an error)."""
    return float(np.mean(np.sign(V @ w) != eta))


def halved_mse(V, eta, w):
    r"""The thesis's "validation error" :math:`\frac{1}{2m}\|Vw-\eta\|^2` (seed-000 (1.2))."""
    r = V @ w - eta
    return float(r @ r) / (2.0 * V.shape[0])
