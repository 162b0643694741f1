r"""Rosset–Zhu path tracking for the L1-regularised hinge loss: the whole solution path of
the 1-norm SVM (Zhu, Rosset, Hastie & Tibshirani 2004, "1-norm support vector machines";
Rosset & Zhu 2007, "Piecewise linear regularized solution paths").

.. math::
    \min_{\beta, b}\ f_\lambda(\beta, b) = \sum_i \max(0,\ 1 - y_i(x_i^\top\beta + b))
    + \lambda \|\beta\|_1 ,\qquad \lambda \ge 0 .

Rosset–Zhu tracking follows :math:`\beta(\lambda)` for a loss that is piecewise quadratic and
differentiable. The hinge is piecewise *linear*: the problem is then a linear program
whose cost is affine in λ, and the path is traced exactly by the parametric simplex
method. Each pivot is one of the events of the Rosset–Zhu algorithm:

* a coefficient :math:`\beta_j^\pm` enters the basis — variable ``j`` joins the active
  set ``A`` (the event :math:`d_1`, :math:`|g_j| = \lambda`);
* a coefficient leaves the basis — an active :math:`\beta_j` reaches 0 (event
  :math:`d_2`);
* a slack :math:`\xi_i` or surplus :math:`t_i` enters or leaves — sample ``i`` crosses the
  elbow :math:`y_i f(x_i) = 1`, the boundary of a linear piece of the loss (event
  :math:`d_3`).

With the LP in standard form (:math:`\beta = \beta^+ - \beta^-`, :math:`b = b^+ - b^-`,
all variables :math:`\ge 0`)

.. math::
    y_i x_i^\top(\beta^+ - \beta^-) + y_i(b^+ - b^-) + \xi_i - t_i = 1,\qquad
    \text{cost } c_0 + \lambda c_1 = \mathbf 1^\top\xi + \lambda\,\mathbf 1^\top(\beta^+ +
    \beta^-),

a basis ``B`` stays optimal while every reduced cost
:math:`d_j(\lambda) = d^0_j + \lambda d^1_j \ge 0`. Starting from the basis optimal for
:math:`\lambda = \infty` (β = 0, the best constant ``b``), λ decreases to the largest
:math:`-d^0_j/d^1_j` below it, where column ``j`` enters (ratio test for the leaving
column; Bland's smallest-index rule among ties, which excludes cycling at degenerate
breakpoints). In λ the solution is piecewise *constant* — vertex :math:`\beta^{(k)}` is
optimal on :math:`[\lambda_{k+1}, \lambda_k]` — and at each breakpoint the whole segment
between consecutive vertices is optimal; as a function of :math:`s = \|\beta\|_1` (the
constrained form of Zhu et al.) the path is the piecewise-*linear* curve through the
vertices.

Cost per pivot :math:`O(n(n + d))` with an explicit basis inverse (rank-one updates,
refactorised every 25 pivots; :mod:`._simplex`): meant for up to a few thousand samples.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ._simplex import ParametricSimplex
from .base import PathResult

__all__ = ["L1SVMPath", "l1_svm_path", "l1_svm_objective", "solve_l1_hinge_path"]


def l1_svm_objective(X, y, coef, intercept, lam):
    r""":math:`\sum_i \max(0, 1 - y_i(x_i^\top\beta + b)) + \lambda\|\beta\|_1`."""
    z = np.asarray(X) @ coef + intercept
    return float(np.maximum(0.0, 1.0 - y * z).sum() + lam * np.abs(coef).sum())


@dataclass(frozen=True)
class L1SVMPath(PathResult):
    r"""The exact regularisation path of the 1-norm SVM.

    Attributes
    ----------
    breakpoints : ndarray of shape (K,)
        :math:`\lambda_1 > \lambda_2 > \dots > \lambda_K`; :math:`\lambda_1 =
        \lambda_{\max}` (above it β = 0).
    coefs : ndarray of shape (K + 1, d)
        Vertices: ``coefs[k]`` is optimal for :math:`\lambda_{k+1} \le \lambda \le
        \lambda_k` (:math:`\lambda_0 = \infty`, :math:`\lambda_{K+1}` = the end of the path).
    intercepts : ndarray of shape (K + 1,)
    losses : ndarray of shape (K + 1,)
        Hinge loss :math:`\sum_i \xi_i` at each vertex.
    l1_norms : ndarray of shape (K + 1,)
        :math:`s_k = \|\beta^{(k)}\|_1`, increasing along the path.
    lambda_min : float
        Where the tracking stopped.
    n_events : int
        Simplex pivots performed (path events, degenerate ones included); also
        :attr:`n_pivots`.
    events : tuple of str, length K
        ``"pivot"`` at each breakpoint.
    """

    @property
    def n_pivots(self):
        """Simplex pivots performed (:attr:`n_events`)."""
        return self.n_events

    def solution(self, lam):
        """``(coef, intercept)`` optimal at ``lam`` (at a breakpoint, the vertex after it,
        i.e. the one with the larger L1 norm)."""
        if lam < self.lambda_min:
            raise ValueError(f"lam={lam} is below the end of the path {self.lambda_min}")
        k = int(np.sum(self.breakpoints >= lam))
        return self.coefs[k], float(self.intercepts[k])

    def objective_at(self, lam, coef, intercept):
        """:math:`\\sum_i\\xi_i + \\lambda\\|\\beta\\|_1` of the vertex optimal at ``lam``
        (exact: the path is piecewise constant in λ)."""
        k = int(np.sum(self.breakpoints >= lam))
        return float(self.losses[k] + lam * self.l1_norms[k])

    def at_l1_norm(self, s):
        """Coefficients at L1 norm ``s`` by linear interpolation between vertices (the
        constrained form :math:`\\min \\sum\\xi_i` s.t. :math:`\\|\\beta\\|_1 \\le s`)."""
        s = float(np.clip(s, self.l1_norms[0], self.l1_norms[-1]))
        k = int(np.searchsorted(self.l1_norms, s, side="right")) - 1
        k = min(k, len(self.l1_norms) - 2) if len(self.l1_norms) > 1 else 0
        if len(self.l1_norms) == 1 or self.l1_norms[k + 1] == self.l1_norms[k]:
            return self.coefs[k], float(self.intercepts[k])
        t = (s - self.l1_norms[k]) / (self.l1_norms[k + 1] - self.l1_norms[k])
        return ((1 - t) * self.coefs[k] + t * self.coefs[k + 1],
                float((1 - t) * self.intercepts[k] + t * self.intercepts[k + 1]))


def l1_svm_path(X, y, *, lambda_min=None, fit_intercept=True, max_pivots=None,
                tol=1e-9):
    r"""Trace the exact regularisation path of the 1-norm SVM.

    The path runs from :math:`\lambda = \infty`, where every coefficient is zero, down to
    ``lambda_min``, and solves :math:`\min_{\beta, b} \sum_i \max(0, 1 - y_i(x_i^\top\beta
    + b)) + \lambda\|\beta\|_1` exactly at every λ. The problem is a linear program
    whose cost is affine in λ, so the solution is a vertex that changes only at
    breakpoints, each one pivot of the parametric simplex method: the whole path costs
    about as much as one solve (Zhu, Rosset, Hastie & Tibshirani 2004, "1-norm support
    vector machines"; Rosset & Zhu 2007, "Piecewise linear regularized solution
    paths"). The module docstring states the linear program.

    Parameters
    ----------
    X : array-like of shape (n, d)
        Training samples, finite, at least two rows.
    y : array-like of shape (n,)
        Two classes; the larger label (in sorted order) is the positive class.
    lambda_min : float, optional
        End of the path (default :math:`10^{-3}\lambda_{\max}`); the path stops earlier if
        the hinge loss reaches 0 (separable data: below that λ the LP is degenerate).
    fit_intercept : bool
        Unpenalised intercept ``b``.
    max_pivots : int, optional
        Cap on simplex pivots (default ``50 (n + d)``).
    tol : float
        Relative tolerance of the reduced-cost and ratio tests.

    Returns
    -------
    L1SVMPath
        The breakpoints, the optimal vertex (coefficients, intercept, hinge loss and
        L1 norm) between consecutive breakpoints, and ``solution(lam)`` for any λ on
        the path.

    Raises
    ------
    ValueError
        If ``X`` is not a finite 2-D array with two rows or more, ``y`` does not hold
        exactly two classes for the rows of ``X``, or ``lambda_min`` is negative.

    See Also
    --------
    bisvm.l1_sqhinge_path : The path of the L1-regularised squared-hinge SVM.

    Examples
    --------
    >>> from sklearn.datasets import make_classification
    >>> from bisvm import l1_svm_path
    >>> X, y = make_classification(n_samples=40, n_features=5, n_informative=3,
    ...                            random_state=0)
    >>> path = l1_svm_path(X, y)
    >>> bool(path.breakpoints[0] > path.lambda_min)
    True
    >>> coef, intercept = path.solution(0.5 * path.breakpoints[0])
    >>> int((coef != 0).sum())
    2
    """
    X = np.asarray(X, dtype=float)
    if X.ndim != 2 or X.shape[0] < 2:
        raise ValueError(f"X must be a 2-D array with at least 2 rows, got shape {X.shape}")
    if not np.all(np.isfinite(X)):
        raise ValueError("X contains NaN or infinity")
    y = np.asarray(y)
    if y.shape != (X.shape[0],):
        raise ValueError(f"y must have shape ({X.shape[0]},), got {y.shape}")
    classes = np.unique(y)
    if classes.size != 2:
        raise ValueError(f"l1_svm_path needs exactly 2 classes, got {classes.size}")
    ys = np.where(y == classes[1], 1.0, -1.0)
    n, d = X.shape
    if lambda_min is not None and not (np.isfinite(lambda_min) and lambda_min >= 0):
        raise ValueError(f"lambda_min must be a non-negative float, got {lambda_min!r}")
    max_pivots = 50 * (n + d) if max_pivots is None else int(max_pivots)
    return solve_l1_hinge_path(X, ys, lambda_min=lambda_min, fit_intercept=fit_intercept,
                               max_pivots=max_pivots, tol=tol)


def solve_l1_hinge_path(X, t, *, lambda_min=None, fit_intercept=True, max_pivots,
                        tol=1e-9):
    r"""The path of :func:`l1_svm_path` for checked inputs: ``X`` finite (n, d), labels
    ``t`` in ±1.

    Builds the standard-form LP of the module docstring (columns β⁺ | β⁻ | b⁺ | b⁻ | ξ |
    t) and traces it with :class:`~bisvm.solvers.paths._simplex.ParametricSimplex`,
    starting from the basis of all slacks ξ (β = 0, b = 0, ξ = 1).
    """
    n, d = X.shape
    YX = t[:, None] * X
    nb = 2 if fit_intercept else 0
    blocks = [YX, -YX] + ([t[:, None], -t[:, None]] if fit_intercept else []) + [
        np.eye(n), -np.eye(n)]
    A = np.hstack(blocks)
    N = A.shape[1]
    off_xi = 2 * d + nb
    c0 = np.zeros(N)
    c0[off_xi:off_xi + n] = 1.0
    c1 = np.zeros(N)
    c1[:2 * d] = 1.0
    scale = max(1.0, float(np.abs(A).max()))
    lp = ParametricSimplex(A, c0, c1, np.ones(n), np.arange(off_xi, off_xi + n),
                           eps=tol * scale)
    # phase at λ = ∞: minimise the loss over b alone (β columns cost +∞)
    lp.minimise_constant_part(2 * d, max_pivots)

    def vertex(x):
        beta = x[:d] - x[d:2 * d]
        b = float(x[2 * d] - x[2 * d + 1]) if fit_intercept else 0.0
        return beta, b, float(x[off_xi:off_xi + n].sum())

    bps, coefs, bs, losses, end = lp.trace(vertex, lambda_min=lambda_min,
                                           max_pivots=max_pivots)
    coefs = np.array(coefs)
    return L1SVMPath(
        breakpoints=np.array(bps), coefs=coefs, intercepts=np.array(bs),
        losses=np.array(losses), l1_norms=np.abs(coefs).sum(axis=1),
        lambda_min=float(end), n_events=lp.n_piv, events=("pivot",) * len(bps),
    )
