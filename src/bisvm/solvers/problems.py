r"""The frozen problem records every solver takes, and the contract between them.

* :class:`SmoothProblem`: :math:`F(w) = \frac1n\sum_i s_i\,\ell(y_i, x_i^\top w) + P(w)`
  with a smooth loss and penalty (the smoothed elastic-net SVM of González Vallejo 2024,
  among others), for the primal methods;
* :class:`KernelExpansionProblem`: the kernel expansion in the primal β form (Chapelle
  2007), for Newton on kernel machines with a differentiable loss;
* :class:`DualProblem`: LIBSVM's generic dual :math:`\min_\alpha \tfrac12\alpha^\top
  Q\alpha + p^\top\alpha` under a box and :math:`y^\top\alpha = \Delta` (Fan, Chen & Lin
  2005), for SMO and the active-set method;
* :class:`LinearProblem`: LIBLINEAR's form :math:`\tfrac12\|w\|^2 + \sum_i c_i
  \ell(y_i, x_i^\top w)` with an optional bias feature (Hsieh et al. 2008), for dual
  coordinate descent, Crammer–Singer and finite Newton.

A solver takes one of these and explicit keyword warm starts (``w0`` for primal,
``alpha0`` for dual variables) and returns a :class:`~bisvm.solvers.base.SolverResult`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import partial
from typing import Protocol, runtime_checkable

import numpy as np
import scipy.sparse as sp

from bisvm.kernels import Kernel
from bisvm.losses import Loss, OnePassLoss, provides
from bisvm.penalties import (
    InPlaceHessianPenalty,
    OnePassPenalty,
    SmoothPenalty,
    StopAtZeroPenalty,
    StructuredHessianPenalty,
)

from ._linalg import structured_hessian_matvec

__all__ = [
    "CurvatureProblem",
    "SmoothProblem",
    "KernelExpansionProblem",
    "DualProblem",
    "LinearProblem",
    "augment_intercept",
    "split_intercept",
    "check_interface",
]


@runtime_checkable
class CurvatureProblem(Protocol):
    """A smooth problem that Newton's method drives through its per-sample curvature.

    :func:`~bisvm.solvers.primal.newton.newton_loop` evaluates value, gradient and the
    loss's second derivatives in one pass, builds its Newton systems from them, and
    takes its trial points from the problem (which may stop groups at zero).
    ``has_structured_hessian`` says whether the penalty's Hessian is available as a
    :class:`~bisvm.penalties.BlockDiagonalHessian` (then the Hessian can be applied
    without forming it).
    """

    has_structured_hessian: bool

    def value_gradient_curvature(self, w):
        """``(F(w), ∇F(w), ℓ''(y, Xw))``."""

    def hessian_from_curvature(self, w, d2):
        """The dense Hessian at ``w`` given the per-sample second derivatives."""

    def trial_point(self, w, p, a):
        """The line search's trial point from ``w`` along ``p`` at step ``a``."""


@dataclass(frozen=True)
class SmoothProblem(CurvatureProblem):
    r"""A frozen smooth, convex primal problem :math:`F(w) = \frac1n\sum s_i \ell_i + P(w)`.

    Parameters
    ----------
    X : ndarray or scipy.sparse matrix, shape (n, d)
        Design matrix (include a column of ones to fit a bias inside ``w``); a sparse
        matrix is used as it is (products only), never densified by the scalable solvers.
    y : ndarray, shape (n,)
        Targets (±1 for classification losses).
    loss : Loss
        A loss with ``value``, ``derivative`` and ``second_derivative``
        (:class:`~bisvm.losses.Loss`); one with ``value_derivatives``
        (:class:`~bisvm.losses.OnePassLoss`) is evaluated in one pass.
    penalty : SmoothPenalty
        A penalty with ``value``, ``gradient`` and ``hessian``
        (:class:`~bisvm.penalties.SmoothPenalty`). Its optional capabilities
        (:class:`~bisvm.penalties.OnePassPenalty`,
        :class:`~bisvm.penalties.InPlaceHessianPenalty`,
        :class:`~bisvm.penalties.StopAtZeroPenalty`,
        :class:`~bisvm.penalties.StructuredHessianPenalty`) are read once, here.
    sample_weight : ndarray, shape (n,), optional
        ``s_i`` (ones by default).
    cg_data : CGData, optional
        What the truncated Newton-CG solver precomputes once from a dense ``X`` and
        reuses in every Newton system on it (a float32 copy for mixed-precision
        Hessian-vector products, a sketched feature correlation for the
        preconditioner; :func:`~bisvm.solvers.primal.truncated.prepare_cg_data`).
        Values, gradients and curvatures always use ``X`` itself.

    Attributes
    ----------
    has_structured_hessian : bool
        Whether the penalty's Hessian is available as a
        :class:`~bisvm.penalties.BlockDiagonalHessian`.

    Raises
    ------
    TypeError
        If ``loss`` or ``penalty`` lacks a method of its interface (named in the message).
    """

    X: np.ndarray
    y: np.ndarray
    loss: Loss
    penalty: SmoothPenalty
    sample_weight: np.ndarray | None = None
    cg_data: object = None
    has_structured_hessian: bool = field(init=False, repr=False, compare=False)
    _one_pass_loss: bool = field(init=False, repr=False, compare=False)
    _one_pass_penalty: bool = field(init=False, repr=False, compare=False)
    _in_place_hessian: bool = field(init=False, repr=False, compare=False)
    _stops_at_zero: bool = field(init=False, repr=False, compare=False)

    def __post_init__(self):
        # the capabilities are read once: the solvers evaluate the problem thousands of
        # times and must not probe the loss and penalty at each call
        check_interface("loss", self.loss, Loss)
        check_interface("penalty", self.penalty, SmoothPenalty)
        for name, value in (
                ("has_structured_hessian", provides(self.penalty, StructuredHessianPenalty)),
                ("_one_pass_loss", provides(self.loss, OnePassLoss)),
                ("_one_pass_penalty", provides(self.penalty, OnePassPenalty)),
                ("_in_place_hessian", provides(self.penalty, InPlaceHessianPenalty)),
                ("_stops_at_zero", provides(self.penalty, StopAtZeroPenalty))):
            object.__setattr__(self, name, value)

    @property
    def n_features(self):
        return self.X.shape[1]

    def sample_scale(self):
        """The per-sample factors :math:`s_i/n` of the loss term."""
        n = self.X.shape[0]
        return (1.0 / n) if self.sample_weight is None else self.sample_weight / n

    def value(self, w):
        z = self.X @ w
        loss = self.loss.value(self.y, z)
        return float(np.sum(self.sample_scale() * loss)) + self.penalty.value(w)

    def value_and_gradient(self, w):
        z = self.X @ w
        s = self.sample_scale()
        f = float(np.sum(s * self.loss.value(self.y, z))) + self.penalty.value(w)
        g = self.X.T @ (s * self.loss.derivative(self.y, z)) + self.penalty.gradient(w)
        return f, g

    def gradient(self, w):
        return self.value_and_gradient(w)[1]

    def hessian(self, w):
        r""":math:`\frac1n X^\top \mathrm{diag}(s\,\ell'') X + \nabla^2 P(w)` (dense)."""
        z = self.X @ w
        return self.hessian_from_curvature(w, self.loss.second_derivative(self.y, z))

    def hessian_from_curvature(self, w, d2):
        """The dense Hessian at ``w`` given the per-sample second derivatives ``d2`` there
        (a sparse ``X`` gives a dense ``(d, d)`` result: for small problems only)."""
        c = self.sample_scale() * d2
        if sp.issparse(self.X):
            H = np.asarray((self.X.T @ self.X.multiply(c[:, None])).todense())
        else:
            # in row blocks: no n x d temporary for tall data
            X = self.X
            if X.shape[0] <= 8192:
                H = X.T @ (X * c[:, None])
            else:
                H = np.zeros((X.shape[1], X.shape[1]))
                for s in range(0, X.shape[0], 8192):
                    Xb = X[s:s + 8192]
                    H += Xb.T @ (Xb * c[s:s + 8192, None])
        if self._in_place_hessian:
            self.penalty.add_hessian(H, w)
        else:
            H += self.penalty.hessian(w)
        return H

    def value_gradient_curvature(self, w):
        """``(F(w), ∇F(w), ℓ''(y, Xw))`` in one pass over the samples (for Newton)."""
        z = self.X @ w
        s = self.sample_scale()
        if self._one_pass_loss:
            v, d1, d2 = self.loss.value_derivatives(self.y, z)
        else:
            v = self.loss.value(self.y, z)
            d1 = self.loss.derivative(self.y, z)
            d2 = self.loss.second_derivative(self.y, z)
        fp, gp = self._penalty_value_and_gradient(w)
        return float(np.sum(s * v)) + fp, self.X.T @ (s * d1) + gp, d2

    def trial_point(self, w, p, a):
        """The line search's trial point from ``w`` along ``p`` at step ``a``: the ray
        :math:`w + a p`, with the groups the penalty stops at zero
        (:meth:`~bisvm.penalties.GroupPseudoHuber.stop_at_zero`)."""
        v = w + a * p
        if self._stops_at_zero:
            v = self.penalty.stop_at_zero(w, v)
        return v

    def sample_curvature(self, d2):
        r"""Per-sample weights :math:`c_i = s_i\ell''_i/n` of the loss Hessian
        :math:`X^\top\mathrm{diag}(c)X`."""
        return self.sample_scale() * d2

    def hessian_operator(self, w, d2):
        r"""The Hessian at ``w`` as a product :math:`v \mapsto X^\top(c\odot Xv) + Dv`
        (``c`` from ``d2``, :math:`D` the penalty's structured Hessian): O(nnz) per
        product, nothing d × d."""
        c = self.sample_curvature(d2)
        D = self.penalty_hessian(w)
        return partial(structured_hessian_matvec, self.X, c, D)

    def penalty_hessian(self, w):
        """The penalty's Hessian at ``w`` as a structured
        :class:`~bisvm.penalties.BlockDiagonalHessian` (nothing d × d)."""
        return self.penalty.structured_hessian(w)

    def _penalty_value_and_gradient(self, w):
        if self._one_pass_penalty:
            return self.penalty.value_and_gradient(w)
        return self.penalty.value(w), self.penalty.gradient(w)


@dataclass(frozen=True)
class KernelExpansionProblem:
    r"""Frozen kernel problem :math:`\tfrac12\beta^\top K\beta + C\sum_i s_i\ell(y_i, z_i)`.

    Parameters
    ----------
    K : ndarray of shape (n, n)
        Symmetric positive semi-definite Gram matrix of the training points.
    y : ndarray of shape (n,)
        Targets (±1 for classification losses).
    loss : Loss
        A smooth loss of :mod:`bisvm.losses` (:class:`~bisvm.losses.Loss`).
    C : float
        Weight of the data term, :math:`C > 0`.
    fit_intercept : bool
        Unpenalised bias ``b`` as the last coefficient.
    sample_weight : ndarray of shape (n,), optional
        :math:`s_i` (ones by default).
    """

    K: np.ndarray
    y: np.ndarray
    loss: object
    C: float = 1.0
    fit_intercept: bool = True
    sample_weight: np.ndarray | None = None

    def __post_init__(self):
        check_interface("loss", self.loss, Loss)

    @property
    def n_features(self):
        return self.K.shape[0] + (1 if self.fit_intercept else 0)

    def _split(self, theta):
        n = self.K.shape[0]
        return theta[:n], (float(theta[n]) if self.fit_intercept else 0.0)

    def sample_scale(self):
        """The per-sample weights :math:`s_i` (ones by default)."""
        return np.ones(self.K.shape[0]) if self.sample_weight is None else self.sample_weight

    def margins(self, theta):
        """:math:`z = K\\beta + b`."""
        beta, b = self._split(theta)
        return self.K @ beta + b

    def value(self, theta):
        beta, b = self._split(theta)
        Kb = self.K @ beta
        return 0.5 * float(beta @ Kb) + self.C * float(
            self.sample_scale() @ self.loss.value(self.y, Kb + b))

    def value_and_gradient(self, theta):
        beta, b = self._split(theta)
        Kb = self.K @ beta
        z = Kb + b
        sdl = self.C * self.sample_scale() * self.loss.derivative(self.y, z)
        loss = self.loss.value(self.y, z)
        f = 0.5 * float(beta @ Kb) + self.C * float(self.sample_scale() @ loss)
        g = self.K @ (beta + sdl)
        if self.fit_intercept:
            g = np.r_[g, sdl.sum()]
        return f, g

    def gradient(self, theta):
        return self.value_and_gradient(theta)[1]

    def hessian(self, theta):
        """Dense Hessian (see the module docstring)."""
        z = self.margins(theta)
        h = self.C * self.sample_scale() * self.loss.second_derivative(self.y, z)
        KD = self.K * h  # K diag(h)
        H = self.K + KD @ self.K
        if not self.fit_intercept:
            return H
        col = KD.sum(axis=1)
        return np.block([[H, col[:, None]], [col[None, :], np.array([[h.sum()]])]])

    def newton_direction(self, theta):
        r"""The Newton step :math:`p = -\nabla^2 F^{-1}\nabla F` without inverting ``K``.

        :math:`\nabla^2 F = \mathrm{diag}(K, 1)\,A` and :math:`\nabla F =
        \mathrm{diag}(K, 1)\,\tilde g` with :math:`\tilde g = (\beta + C s\odot\ell',\
        C s^\top\ell')`, so :math:`p = -A^{-1}\tilde g` with

        .. math::
            A = \begin{pmatrix} I + C D K & C D\mathbf 1 \\ C\mathbf 1^\top D K &
            C\mathbf 1^\top D \mathbf 1\end{pmatrix},

        which is non-singular even when ``K`` is singular (e.g. a linear kernel with
        ``n > d``): :math:`I + CDK` has the eigenvalues of
        :math:`I + C D^{1/2} K D^{1/2} \succeq I` (Chapelle 2007, "Training a support
        vector machine in the primal", §3).
        """
        n = self.K.shape[0]
        beta, b = self._split(theta)
        z = self.K @ beta + b
        s = self.C * self.sample_scale()
        sdl = s * self.loss.derivative(self.y, z)
        h = s * self.loss.second_derivative(self.y, z)
        A = h[:, None] * self.K
        A[np.diag_indices(n)] += 1.0
        gt = beta + sdl
        if self.fit_intercept:
            A = np.block([[A, h[:, None]], [(h @ self.K)[None, :], np.array([[h.sum()]])]])
            gt = np.r_[gt, sdl.sum()]
        return -np.linalg.solve(A, gt)


@dataclass(frozen=True)
class DualProblem:
    r"""A frozen instance of the generic dual (see the module docstring).

    Attributes
    ----------
    X : ndarray, shape (n, d)
        Training samples, or the ``(n, n)`` Gram matrix when ``kernel.code`` is
        ``precomputed`` (also used for callable kernels).
    kernel : Kernel
    sample_index : ndarray of int, shape (l,)
        Sample :math:`s_t` of each dual variable.
    y : ndarray, shape (l,)
        Signs :math:`\pm1`.
    p : ndarray, shape (l,)
        Linear term.
    upper : ndarray, shape (l,)
        Upper bounds :math:`C_t` (``inf`` allowed).
    shift : ndarray, shape (l,)
        Added to the diagonal of :math:`Q` (``1/C`` for the L2-SVM).
    nu : bool
        The ν formulations: a second equality constraint :math:`e^\top\alpha =`
        const, kept by choosing each working pair within one sign class (``Solver_NU``).
    alpha_start : ndarray, shape (l,), optional
        Feasible start fixing the right-hand sides of the equality constraints (the ν
        formulations and one-class SVM need one); zero when ``None``.
    """

    X: object
    kernel: Kernel
    sample_index: np.ndarray
    y: np.ndarray
    p: np.ndarray
    upper: np.ndarray
    shift: np.ndarray
    nu: bool = False
    alpha_start: np.ndarray | None = None

    @property
    def n_variables(self):
        return self.y.shape[0]



@dataclass(frozen=True)
class LinearProblem:
    r"""A frozen linear SVM problem in LIBLINEAR's form (Hsieh et al. 2008, eq. (1)):

    .. math::
        \min_w\ \tfrac12\,w^\top R\,w + \sum_{i=1}^n c_i\,\ell(y_i, \tilde x_i^\top w),
        \qquad \tilde x_i = (x_i, \text{bias}),

    where the last weight multiplies the constant feature ``bias`` when ``bias > 0``
    (LIBLINEAR's ``-B``: the intercept is then ``bias · w[d]`` and is regularised).

    Parameters
    ----------
    X : ndarray or scipy.sparse matrix, shape (n, d)
    y : ndarray, shape (n,)
        ±1 for classification losses, real targets for regression, class indices
        ``0..k-1`` for Crammer–Singer.
    loss : object
        A loss of :mod:`bisvm.losses` (``Hinge``, ``SquaredHinge``,
        ``EpsilonInsensitive``, ``SquaredEpsilonInsensitive``); dual solvers take their box
        and diagonal shift from its ``dual_box(cost)``.
    cost : ndarray, shape (n,)
        Per-sample :math:`c_i` (``C`` times class and sample weights).
    bias : float
        Value of the constant feature (0: no intercept).
    quadratic : None, float, ndarray (d,) or (d, d)
        :math:`R`: the identity by default, a scalar, a diagonal or a full matrix
        (finite Newton and the greedy kernel method use a kernel matrix here).
    """

    X: object
    y: np.ndarray
    loss: object
    cost: np.ndarray
    bias: float = 0.0
    quadratic: object = None

    def dual_box(self):
        r"""``(diag, upper)`` of the dual: the diagonal shift and the upper bound of each
        :math:`\alpha_i` (LIBLINEAR's ``D_ii`` and ``U``), from the loss."""
        return self.loss.dual_box(self.cost)


def augment_intercept(X, bias):
    """``[X, bias]``: LIBLINEAR's intercept feature, a constant column of value ``bias``
    appended to ``X`` (dense or CSR); ``X`` unchanged when ``bias <= 0``."""
    if bias <= 0:
        return X
    ones = np.full((X.shape[0], 1), float(bias))
    return sp.hstack([X, sp.csr_matrix(ones)], format="csr") if sp.issparse(X) else np.hstack(
        [X, ones])


def split_intercept(w, d, bias):
    """``(coef, intercept)`` of weights ``w`` over ``[X, bias]`` (:func:`augment_intercept`):
    the first ``d`` weights, and ``bias`` times the intercept feature's weight ``w[d]`` (0
    when ``bias <= 0``)."""
    return w[:d], (float(bias * w[d]) if bias > 0 else 0.0)


def check_interface(name, obj, interface):
    """Raise ``TypeError`` naming the methods of ``interface`` that ``obj`` lacks.

    Parameters
    ----------
    name : str
        The parameter's name, for the message.
    obj : object
        The loss or penalty handed to a problem.
    interface : type
        A runtime-checkable protocol of :mod:`bisvm.losses` or :mod:`bisvm.penalties`.
    """
    if provides(obj, interface):
        return
    missing = [m for m in dir(interface) if not m.startswith("_")
               and callable(getattr(interface, m)) and not callable(getattr(obj, m, None))]
    raise TypeError(f"{name} must provide {', '.join(missing)} (the "
                    f"{interface.__module__}.{interface.__name__} interface); "
                    f"{type(obj).__name__} does not")
