r"""Losses of the margin ``z = X w``: value, first and second derivative per sample.

Every loss is a frozen object with three vectorised methods taking the labels ``y`` and
the raw outputs ``z`` (both of shape ``(n,)``), the :class:`Loss` interface:

* ``value(y, z)``             -- :math:`\ell(y_i, z_i)` per sample,
* ``derivative(y, z)``        -- :math:`\partial \ell / \partial z_i`,
* ``second_derivative(y, z)`` -- :math:`\partial^2 \ell / \partial z_i^2` (a generalised
  second derivative for the piecewise-quadratic squared hinge).

Two optional capabilities are declared as interfaces of their own, so that a solver
checks them once when it builds a problem instead of probing the object at every call:
:class:`OnePassLoss` (``value_derivatives``: the three in one pass over the samples) and
:class:`DualBoxLoss` (``dual_box``: the box of the loss's dual, for the dual solvers).
The split follows the datafit interface of skglm (Bertrand et al. 2022, "Beyond L1:
faster and better sparse models with skglm"). Classification losses take ``y`` in
{-1, +1}. Solvers combine a loss with a penalty; they never need to know which loss
they hold.
"""

from __future__ import annotations

from abc import abstractmethod
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np
from scipy.special import expit

from ._numba import njit

__all__ = [
    "provides",
    "Loss",
    "OnePassLoss",
    "DualBoxLoss",
    "Hinge",
    "SquaredHinge",
    "SmoothedHinge",
    "Logistic",
    "Squared",
    "EpsilonInsensitive",
    "SquaredEpsilonInsensitive",
    "SmoothedEpsilonInsensitive",
    "PseudoHuberLoss",
    "ModifiedHuber",
    "MulticlassHinge",
]


#: ``provides`` answers by class: (type, interface) -> bool
_PROVIDED = {}


def provides(obj, interface):
    """Whether ``obj`` provides the runtime-checkable protocol ``interface``.

    Capabilities belong to classes: a class declares an interface by subclassing it,
    and any other class is checked structurally (``isinstance``, which inspects every
    member of the protocol) once, after which the answer for that class is remembered.
    Problems and penalty sums call this when they are built, and are built often (one
    per outer iteration of the bilevel fit), so the answer must cost a lookup.

    Parameters
    ----------
    obj : object
        A loss, a penalty or a problem.
    interface : type
        A protocol of :mod:`bisvm.losses`, :mod:`bisvm.penalties` or
        :mod:`bisvm.solvers.problems`.

    Returns
    -------
    bool
    """
    key = (type(obj), interface)
    found = _PROVIDED.get(key)
    if found is None:
        found = _PROVIDED[key] = isinstance(obj, interface)
    return found


@runtime_checkable
class Loss(Protocol):
    r"""The interface of a per-sample loss :math:`\ell(y, z)` of the margin ``z``.

    The primal solvers need the value and the first two derivatives in ``z``; a loss
    declares the interface by subclassing it (a class that provides the three methods
    satisfies it too). ``second_derivative`` may raise for a loss without one (the
    hinge): such a loss is used through its dual or by path solvers only.
    """

    @abstractmethod
    def value(self, y, z):
        r""":math:`\ell(y_i, z_i)` per sample."""

    @abstractmethod
    def derivative(self, y, z):
        r""":math:`\partial\ell/\partial z_i` per sample (a subgradient at a kink)."""

    @abstractmethod
    def second_derivative(self, y, z):
        r""":math:`\partial^2\ell/\partial z_i^2` per sample (generalised at a kink)."""


@runtime_checkable
class OnePassLoss(Loss, Protocol):
    """A :class:`Loss` that also returns its value and both derivatives in one pass.

    Newton's method needs all three at every trial point; computing them together
    shares the exponentials and the residuals.
    """

    @abstractmethod
    def value_derivatives(self, y, z):
        """``(value, derivative, second_derivative)`` per sample, in one pass."""


@runtime_checkable
class DualBoxLoss(Protocol):
    r"""A loss whose dual is a box: the dual coordinate-descent solvers need it.

    For per-sample costs :math:`c_i` the dual is :math:`\min_\alpha \tfrac12
    \alpha^\top(Q + D)\alpha - e^\top\alpha` over :math:`0 \le \alpha \le U`
    (Hsieh et al. 2008, "A dual coordinate descent method for large-scale linear SVM",
    Table 1).
    """

    @abstractmethod
    def dual_box(self, cost):
        """``(diag, upper)``: the diagonal :math:`D` and the bounds :math:`U`."""


def _l1_box(cost):
    r"""Dual box of a hinge-type (L1) loss: no diagonal shift, :math:`0 \le \alpha_i \le c_i`."""
    cost = np.asarray(cost, dtype=float)
    return np.zeros(cost.shape[0]), cost.copy()


def _l2_box(cost):
    r"""Dual box of a squared (L2) loss: shift :math:`1/(2c_i)`, :math:`\alpha_i \ge 0`
    unbounded; a sample of zero cost is pinned at zero."""
    cost = np.asarray(cost, dtype=float)
    keep = cost > 0
    return (np.where(keep, 0.5 / np.where(keep, cost, 1.0), 0.0),
            np.where(keep, np.inf, 0.0))


def _check_epsilon(epsilon):
    """Raise ValueError unless the tube half-width ``epsilon`` is finite and >= 0."""
    if not (np.isfinite(epsilon) and epsilon >= 0):
        raise ValueError(f"epsilon must be a non-negative float, got {epsilon!r}")


class _HingeDualBox(DualBoxLoss):
    r"""The dual box of a hinge-type (L1) loss (Hsieh et al. 2008, Table 1): no shift of
    :math:`Q_{ii}`, and :math:`0 \le \alpha_i \le c_i`."""

    dual_box = staticmethod(_l1_box)


class _SquaredDualBox(DualBoxLoss):
    r"""The dual box of a squared (L2) loss (Hsieh et al. 2008, Table 1): the shift
    :math:`1/(2c_i)` of :math:`Q_{ii}`, and :math:`\alpha_i \ge 0` unbounded."""

    dual_box = staticmethod(_l2_box)


@dataclass(frozen=True)
class Hinge(Loss, _HingeDualBox):
    r"""Hinge loss :math:`\max(0, 1 - y z)` of the soft-margin SVM (Cortes & Vapnik 1995,
    "Support-vector networks").

    Not differentiable at :math:`yz = 1`; ``derivative`` returns the subgradient
    :math:`-y\,\mathbb{1}[yz < 1]`. Used by dual and path solvers, not by smooth ones.
    """

    smooth = False

    def value(self, y, z):
        return np.maximum(0.0, 1.0 - y * z)

    def derivative(self, y, z):
        return np.where(y * z < 1.0, -y, 0.0)

    def second_derivative(self, y, z):
        raise ValueError("the hinge loss has no second derivative; use SmoothedHinge")


@dataclass(frozen=True)
class SquaredHinge(OnePassLoss, _SquaredDualBox):
    r"""Squared hinge :math:`\max(0, 1 - y z)^2` of the L2-SVM (Keerthi & DeCoste 2005,
    "A modified finite Newton method for fast solution of large scale linear SVMs").

    Once differentiable; ``second_derivative`` is the generalised Hessian
    :math:`2\,\mathbb{1}[yz < 1]` used by the finite Newton method.
    """

    smooth = True

    def value(self, y, z):
        r = np.maximum(0.0, 1.0 - y * z)
        return r * r

    def derivative(self, y, z):
        return -2.0 * y * np.maximum(0.0, 1.0 - y * z)

    def second_derivative(self, y, z):
        return np.where(y * z < 1.0, 2.0, 0.0)

    def value_derivatives(self, y, z):
        """Value, first and (generalised) second derivative in one pass."""
        r = np.maximum(0.0, 1.0 - y * z)
        return r * r, -2.0 * y * r, np.where(y * z < 1.0, 2.0, 0.0)


@dataclass(frozen=True)
class SmoothedHinge(OnePassLoss):
    r"""Softplus-smoothed hinge of the smoothed elastic-net SVM (González Vallejo 2024,
    "Selección de variables a través de máquinas de soporte vectorial dispersas").

    .. math::
        \ell_\mu(u) = \mu \log(1 + e^{u/\mu}),\quad u = 1 - y z,\qquad
        \ell_\mu'(u) = \sigma(u/\mu),\quad
        \ell_\mu''(u) = \sigma(u/\mu)(1-\sigma(u/\mu))/\mu,

    so :math:`\partial\ell/\partial z = -y\,\sigma(u/\mu)` and
    :math:`\partial^2\ell/\partial z^2 = \ell_\mu''(u)` (as :math:`y^2 = 1`).
    :math:`\ell_\mu \to` hinge as :math:`\mu \to 0` (Zhang et al. 2003).

    Parameters
    ----------
    smoothing : float
        The thesis's :math:`\mu > 0` (default 0.25).
    """

    smoothing: float = 0.25
    smooth = True

    def __post_init__(self):
        if not (np.isfinite(self.smoothing) and self.smoothing > 0):
            raise ValueError(f"hinge_smoothing must be a positive float, got {self.smoothing!r}")

    def value(self, y, z):
        mu = self.smoothing
        return mu * np.logaddexp(0.0, (1.0 - y * z) / mu)

    def derivative(self, y, z):
        return -y * expit((1.0 - y * z) / self.smoothing)

    def second_derivative(self, y, z):
        s = expit((1.0 - y * z) / self.smoothing)
        return s * (1.0 - s) / self.smoothing

    def value_derivatives(self, y, z):
        """``(value, derivative, second_derivative)`` in one pass (one exp per sample)."""
        return _softplus_hinge(np.ascontiguousarray(y, dtype=np.float64),
                               np.ascontiguousarray(z, dtype=np.float64),
                               float(self.smoothing))


@njit
def _softplus_hinge(y, z, mu):
    # u = (1 - y z)/mu; value = mu*log(1+e^u), s = sigma(u): stable for either sign of u
    n = y.shape[0]
    val = np.empty(n)
    d1 = np.empty(n)
    d2 = np.empty(n)
    for i in range(n):
        u = (1.0 - y[i] * z[i]) / mu
        if u > 0.0:
            e = np.exp(-u)
            val[i] = mu * (u + np.log1p(e))
            s = 1.0 / (1.0 + e)
        else:
            e = np.exp(u)
            val[i] = mu * np.log1p(e)
            s = e / (1.0 + e)
        d1[i] = -y[i] * s
        d2[i] = s * (1.0 - s) / mu
    return val, d1, d2


@dataclass(frozen=True)
class Logistic(OnePassLoss):
    r"""Logistic loss :math:`\log(1 + e^{-y z})` of (kernel) logistic regression (Zhu & Hastie
    2005, "Kernel logistic regression and the import vector machine").

    :math:`\partial\ell/\partial z = -y\,\sigma(-yz)`,
    :math:`\partial^2\ell/\partial z^2 = \sigma(yz)\,\sigma(-yz)`.
    """

    smooth = True

    def value(self, y, z):
        return np.logaddexp(0.0, -y * z)

    def derivative(self, y, z):
        return -y * expit(-y * z)

    def second_derivative(self, y, z):
        s = expit(y * z)
        return s * (1.0 - s)

    def value_derivatives(self, y, z):
        r"""Value, first and second derivative in one pass, with
        :math:`p = \sigma(-yz)`: :math:`(\ln(1 + e^{-yz}),\ -y p,\ p(1 - p))` (the
        formulas of the selective dual Newton method, Angulo Yauri 2020)."""
        m = y * z
        p = expit(-m)
        return np.logaddexp(0.0, -m), -y * p, p * (1.0 - p)


@dataclass(frozen=True)
class Squared(OnePassLoss):
    r"""Squared error :math:`\tfrac12 (z - y)^2` (ridge, kernel ridge, least-squares SVM)."""

    smooth = True

    def value(self, y, z):
        r = z - y
        return 0.5 * r * r

    def derivative(self, y, z):
        return z - y

    def second_derivative(self, y, z):
        return np.ones_like(np.asarray(z, dtype=float))

    def value_derivatives(self, y, z):
        """Value, first and second derivative in one pass."""
        r = z - y
        return 0.5 * r * r, r, np.ones_like(np.asarray(r, dtype=float))


@dataclass(frozen=True)
class EpsilonInsensitive(Loss, _HingeDualBox):
    r"""Vapnik's :math:`\varepsilon`-insensitive loss :math:`\max(0, |z - y| - \varepsilon)`
    of ε-SVR (Vapnik 1995, "The nature of statistical learning theory"). Not
    differentiable; used through its dual.
    """

    epsilon: float = 0.1
    smooth = False

    def __post_init__(self):
        _check_epsilon(self.epsilon)

    def value(self, y, z):
        return np.maximum(0.0, np.abs(z - y) - self.epsilon)

    def derivative(self, y, z):
        r = z - y
        return np.where(np.abs(r) > self.epsilon, np.sign(r), 0.0)

    def second_derivative(self, y, z):
        raise ValueError("the epsilon-insensitive loss has no second derivative")


@dataclass(frozen=True)
class SquaredEpsilonInsensitive(Loss, _SquaredDualBox):
    r"""Squared :math:`\varepsilon`-insensitive loss :math:`\max(0, |z - y| - \varepsilon)^2`
    of the L2-loss SVR (LIBLINEAR ``-s 11/12``; Ho & Lin 2012). Once differentiable;
    ``second_derivative`` is the generalised Hessian :math:`2\,\mathbb 1[|z-y| > \varepsilon]`.
    """

    epsilon: float = 0.1
    smooth = True

    def __post_init__(self):
        _check_epsilon(self.epsilon)

    def value(self, y, z):
        t = np.maximum(0.0, np.abs(z - y) - self.epsilon)
        return t * t

    def derivative(self, y, z):
        r = z - y
        return 2.0 * np.sign(r) * np.maximum(0.0, np.abs(r) - self.epsilon)

    def second_derivative(self, y, z):
        return np.where(np.abs(z - y) > self.epsilon, 2.0, 0.0)


class _OnePass(OnePassLoss):
    """``value``, ``derivative`` and ``second_derivative`` read from
    ``value_derivatives``, for losses computed in one pass."""

    def value(self, y, z):
        return self.value_derivatives(y, z)[0]

    def derivative(self, y, z):
        return self.value_derivatives(y, z)[1]

    def second_derivative(self, y, z):
        return self.value_derivatives(y, z)[2]


@dataclass(frozen=True)
class SmoothedEpsilonInsensitive(_OnePass):
    r"""The ε-insensitive loss with softplus edges, the regression counterpart of the
    smoothed hinge (Lee, Hsieh & Huang 2005, "ε-SSVR: a smooth support vector machine
    for ε-insensitive regression", smooth the same tube with the same function):

    .. math::
        \ell_\mu(r) = \mu\log(1 + e^{(r-\varepsilon)/\mu})
                    + \mu\log(1 + e^{(-r-\varepsilon)/\mu}),\qquad r = z - y,

    :math:`\ell_\mu' = \sigma((r-\varepsilon)/\mu) - \sigma((-r-\varepsilon)/\mu)`,
    :math:`\ell_\mu'' = [\sigma'(\cdot) + \sigma'(\cdot)]/\mu`. Convex, infinitely
    differentiable, and :math:`\ell_\mu \to \max(0, |r| - \varepsilon)` as
    :math:`\mu \to 0` (each edge is the softplus hinge of :class:`SmoothedHinge`).

    Parameters
    ----------
    epsilon : float
        Half-width ε >= 0 of the tube, in units of y.
    smoothing : float
        μ > 0, the width of the soft edges, in units of y.
    """

    epsilon: float = 0.1
    smoothing: float = 0.1
    smooth = True

    def __post_init__(self):
        _check_epsilon(self.epsilon)
        if not (np.isfinite(self.smoothing) and self.smoothing > 0):
            raise ValueError(f"loss smoothing must be a positive float, got {self.smoothing!r}")

    def value_derivatives(self, y, z):
        """``(value, derivative, second_derivative)`` in one pass."""
        return _softplus_tube(np.ascontiguousarray(y, dtype=np.float64),
                              np.ascontiguousarray(z, dtype=np.float64),
                              float(self.epsilon), float(self.smoothing))


@njit
def _softplus_edge(u):
    # (log(1 + e^u), sigma(u)), stable for either sign of u
    if u > 0.0:
        e = np.exp(-u)
        return u + np.log1p(e), 1.0 / (1.0 + e)
    e = np.exp(u)
    return np.log1p(e), e / (1.0 + e)


@njit
def _softplus_tube(y, z, eps, mu):
    # the two soft edges of the tube, at u = (r - eps)/mu and (-r - eps)/mu
    n = y.shape[0]
    val = np.empty(n)
    d1 = np.empty(n)
    d2 = np.empty(n)
    for i in range(n):
        r = z[i] - y[i]
        vp, sp = _softplus_edge((r - eps) / mu)
        vn, sn = _softplus_edge((-r - eps) / mu)
        val[i] = mu * (vp + vn)
        d1[i] = sp - sn
        d2[i] = (sp * (1.0 - sp) + sn * (1.0 - sn)) / mu
    return val, d1, d2


@dataclass(frozen=True)
class PseudoHuberLoss(_OnePass):
    r"""The Pseudo-Huber loss of the residual :math:`r = z - y`,
    :math:`\delta^2(\sqrt{1 + (r/\delta)^2} - 1)` (Charbonnier et al. 1997; Hartley &
    Zisserman 2003, A6.8): quadratic, :math:`r^2/2`, for :math:`|r| \ll \delta` and
    linear, :math:`\delta|r|`, beyond; the smooth form of Huber's robust loss.
    :math:`\ell' = r/\sqrt{1 + (r/\delta)^2}`, :math:`\ell'' = (1 + (r/\delta)^2)^{-3/2}`.

    Parameters
    ----------
    delta : float
        Transition width δ > 0, in units of y.
    """

    delta: float = 1.0
    smooth = True

    def __post_init__(self):
        if not (np.isfinite(self.delta) and self.delta > 0):
            raise ValueError(f"the Huber width (epsilon) must be a positive float, got "
                             f"{self.delta!r}")

    def value_derivatives(self, y, z):
        """``(value, derivative, second_derivative)`` in one pass."""
        r = np.asarray(z, dtype=float) - np.asarray(y, dtype=float)
        q = np.sqrt(1.0 + (r / self.delta) ** 2)
        return self.delta**2 * (q - 1.0), r / q, 1.0 / q**3


@dataclass(frozen=True)
class ModifiedHuber(_OnePass):
    r"""Modified Huber loss in scikit-learn's convention (``SGDClassifier``):
    :math:`\max(0, 1 - yz)^2` for :math:`yz \ge -1`, else :math:`-4yz` (Zhang 2004): the
    squared hinge continued linearly, so that outliers weigh less. Once differentiable;
    the generalised second derivative is :math:`2\,\mathbb 1[-1 \le yz < 1]`. One of the
    two losses of the Rosset–Zhu path (Rosset & Zhu 2007, "Piecewise linear regularized
    solution paths").
    """

    smooth = True

    def value_derivatives(self, y, z):
        """Value, first and (generalised) second derivative in one pass."""
        xi = 1.0 - y * z
        r = np.clip(xi, 0.0, 2.0)
        lin = xi > 2.0
        return (np.where(lin, 4.0 * (xi - 1.0), r * r), np.where(lin, -4.0 * y, -2.0 * y * r),
                np.where((xi > 0.0) & ~lin, 2.0, 0.0))


@dataclass(frozen=True)
class MulticlassHinge(DualBoxLoss):
    r"""Crammer and Singer's multiclass hinge :math:`\max_m (z_m - z_y + 1 - \delta_{m,y})`
    over the class scores :math:`z \in \mathbb R^k` of a sample with class index
    :math:`y` (Crammer & Singer 2001; LIBLINEAR's ``-s 4``). Used through its dual
    (:func:`~bisvm.solvers.dual.crammer_singer.solve_crammer_singer`).
    """

    smooth = False

    def value(self, y, Z):
        """Per-sample loss for integer classes ``y`` (n,) and scores ``Z`` (n, k)."""
        Z = np.asarray(Z, dtype=float)
        rows = np.arange(Z.shape[0])
        margin = Z - Z[rows, y][:, None] + 1.0
        margin[rows, y] = 0.0
        return margin.max(axis=1)

    def dual_box(self, cost):
        r"""Per-sample bounds of the dual blocks: :math:`\alpha_i^m \le C_i\,\delta_{m,y_i}`
        with :math:`\sum_m \alpha_i^m = 0` (no diagonal shift): ``(zeros, cost)``, the bound
        :math:`C_i` of the true class's variable."""
        return _l1_box(cost)
