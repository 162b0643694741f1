r"""The kernel lower level of hyperparameter learning: the L2-SVM (squared hinge) with an
RBF kernel of one width per feature, its exact KKT solution on the free support vectors,
and the hypergradient of a validation function of its outputs by one adjoint solve.

Problem (one binary machine, labels :math:`y_i = \pm1`)

.. math::
    \min_{w,b}\ \tfrac12\lVert w\rVert^2 + \tfrac C2\sum_i\max(0, 1 - y_if(x_i))^2,
    \qquad k(x, x') = \exp\Bigl(-\sum_j\gamma_j(x_j - x'_j)^2\Bigr),

whose dual :math:`\min_\alpha \tfrac12\alpha^\top(Q + I/C)\alpha - e^\top\alpha`,
:math:`y^\top\alpha = 0`, :math:`\alpha \ge 0`, :math:`Q_{ik} = y_iy_kK_{ik}`, is
:func:`~bisvm.solvers.dual.smo.csvc_dual` with ``loss="squared_hinge"`` solved by
:func:`~bisvm.solvers.dual.smo.solve_smo` on the Gram matrix (warm-started from the
previous α: the box has no upper bound, so any α ≥ 0 with :math:`y^\top\alpha = 0` is
feasible). A shared width is the case :math:`\gamma_j = \gamma`. Class and sample
weights make the cost per row, :math:`C c_i` (LIBSVM's weighted C): the loss term is
:math:`\tfrac C2\sum_ic_i\max(0, 1 - y_if(x_i))^2` and every :math:`I/C` below becomes
:math:`\mathrm{diag}(1/(Cc_i))`.

Why the L2-SVM (Keerthi, Sindhwani & Chapelle 2007, "An efficient method for
gradient-based adaptation of hyperparameters in SVM models"): there is no upper bound, so
the only non-free variables are those at 0, and on the free set
:math:`F = \{i: \alpha_i > 0\}` the solution with its bias solves a *linear* system

.. math::
    M\begin{bmatrix}\alpha_F\\ b\end{bmatrix} = \begin{bmatrix}e_F\\ 0\end{bmatrix},\qquad
    M = \begin{bmatrix}A & y_F\\ y_F^\top & 0\end{bmatrix},\quad A = Q_{FF} + I/C,

which is differentiable in (C, γ) wherever F does not change. :func:`solve_l2svm` uses it
twice: it *polishes* SMO's α to the exact solution of this system (an active-set
correction on F until :math:`\alpha_F > 0` and :math:`y_if_i \ge 1` off F), so that
the hypergradient is that of the solution actually returned, and it keeps the factor
of M for the adjoint. M is solved through the Cholesky factor of the positive definite
A and the scalar Schur complement :math:`s = y_F^\top A^{-1}y_F` of the bias border;
no inverse is formed.

Hypergradient (:func:`l2svm_hypergradient`) of a validation function
:math:`E(f_V)`, :math:`f_V = K_{VF}(\alpha_F\circ y_F) + b`, :math:`e = \partial E/\partial f_V`:
one adjoint solve :math:`M\lambda = [Y_FK_{FV}e;\ e^\top 1]` serves every hyperparameter,

.. math::
    \frac{dE}{d\theta} = -\lambda^\top\frac{\partial M}{\partial\theta}
    \begin{bmatrix}\alpha_F\\ b\end{bmatrix}
    + e^\top\frac{\partial K_{VF}}{\partial\theta}(\alpha_F\circ y_F),

with :math:`\partial M/\partial\log C = -\mathrm{diag}(I_F/C, 0)` and
:math:`\partial K_{ab}/\partial\log\gamma_j = -\gamma_j(x_{aj}-x_{bj})^2K_{ab}`. With
:math:`u = \lambda_F\circ y_F`, :math:`w = \alpha_F\circ y_F` and
:math:`W = K_{FF}\circ uw^\top`, the implicit terms of all d widths are
:math:`\gamma\circ[(W1 + W^\top1)^\top X_F^{\circ2} - 2\,1^\top(X_F\circ WX_F)]`, one
:math:`|F|\times|F|` by :math:`|F|\times d` product (the explicit term likewise with
:math:`K_{VF}\circ ew^\top`); Chapelle, Vapnik, Bousquet & Mukherjee (2002), "Choosing
multiple parameters for support vector machines", differentiate the same kernel in its
feature scalings.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from scipy.linalg import LinAlgError

from ...kernels import Kernel, squared_distances
from .._linalg import cholesky_factor, cholesky_factor_solve
from .smo import csvc_dual, solve_smo

__all__ = [
    "weighted_sq_distances",
    "rbf_gram",
    "KernelPair",
    "FreeBlockFactor",
    "L2SVMSolution",
    "solve_l2svm",
    "decision_values",
    "l2svm_hypergradient",
    "l2svm_tangent",
    "KernelL2SVM",
]

_PRECOMPUTED = Kernel("precomputed")

#: Active-set rounds tried from a warm start's free set before SMO is run: each round is
#: one Cholesky factorisation of the free block.
WARM_ROUNDS = 3


def _sq(X):
    """Elementwise square (dense or sparse)."""
    return X.multiply(X).tocsr() if sp.issparse(X) else X * X


def _scale_cols(X, c):
    """``X @ diag(c)`` (dense or sparse, sparse stays CSR)."""
    return (X @ sp.diags(c)).tocsr() if sp.issparse(X) else X * c


def _dense(A):
    return A.toarray() if sp.issparse(A) else np.asarray(A)


def weighted_sq_distances(X, Y, weights):
    r""":math:`D_{ab} = \sum_j c_j(x_{aj} - y_{bj})^2` for feature weights ``c``.

    Dense rows with non-negative weights go through
    :func:`~bisvm.kernels.squared_distances` on the rescaled rows (exact zeros for
    equal rows); sparse rows and signed weights (a direction of the widths,
    :func:`l2svm_tangent`) through the expansion :math:`x^\top Cx + y^\top Cy -
    2x^\top Cy`, clipped at 0 for non-negative weights (sparse products keep the
    cost proportional to the non-zeros; the rows that near-zero widths make nearly
    equal would otherwise each be recomputed one sparse row at a time).
    """
    c = np.asarray(weights, dtype=float)
    nonneg = bool(np.all(c >= 0))
    if nonneg and not (sp.issparse(X) or sp.issparse(Y)):
        s = np.sqrt(c)
        Xs = _scale_cols(X, s)
        return squared_distances(Xs, Xs if Y is X else _scale_cols(Y, s))
    xx = np.asarray(_sq(X) @ c).ravel()
    yy = xx if Y is X else np.asarray(_sq(Y) @ c).ravel()
    D = _dense(_scale_cols(X, c) @ Y.T)
    D *= -2.0
    D += xx[:, None]
    D += yy[None, :]
    if nonneg:
        np.maximum(D, 0.0, out=D)
        if Y is X:
            np.fill_diagonal(D, 0.0)
    return D


def rbf_gram(X, Y, gamma, sqdist=None):
    r"""RBF block :math:`\exp(-\sum_j\gamma_j(x_j - y_j)^2)`; ``gamma`` a scalar (shared
    width) or one per feature; ``sqdist`` the cached unweighted squared distances, which
    a shared width reuses (one exponential, no product)."""
    g = np.asarray(gamma, dtype=float)
    if g.ndim == 0 or g.size == 1:
        D = squared_distances(X, Y) if sqdist is None else sqdist
        out = np.multiply(D, -float(g.ravel()[0]))
    else:
        out = weighted_sq_distances(X, Y, g)
        np.negative(out, out=out)
    # in place: the Gram matrix is recomputed at every width the outer loop tries
    return np.exp(out, out=out)


@dataclass(frozen=True)
class KernelPair:
    """One binary problem of one fold: training rows and ±1 labels, validation rows and
    ±1 labels, and (optionally) the cached squared distances that a shared width reuses
    at every outer iteration.

    ``cost_train`` are the training rows' multipliers of C (class weight × sample
    weight; None: all 1), ``weight_val`` the validation rows' weights in the criterion
    (None: equal), and ``rows_train`` the training rows' positions in the full table
    (what lets one fold's solution warm-start another's)."""

    X_train: object
    y_train: np.ndarray
    X_val: object
    y_val: np.ndarray
    sqdist_train: np.ndarray | None = None
    sqdist_val: np.ndarray | None = None
    cost_train: np.ndarray | None = None
    weight_val: np.ndarray | None = None
    rows_train: np.ndarray | None = None

    @classmethod
    def build(cls, X_train, y_train, X_val, y_val, cache_distances=False, *,
              cost_train=None, weight_val=None, rows_train=None):
        """The pair with labels mapped to ±1 (``> 0`` is +1) and, when asked, the
        squared distances train-train and validation-train computed once."""
        yt = np.where(np.asarray(y_train) > 0, 1.0, -1.0)
        yv = np.where(np.asarray(y_val) > 0, 1.0, -1.0)
        if cost_train is not None:
            cost_train = np.asarray(cost_train, dtype=float)
            if cost_train.shape != yt.shape or not np.all(cost_train > 0) \
                    or not np.all(np.isfinite(cost_train)):
                raise ValueError("cost_train must hold one positive finite multiplier of C "
                                 "per training row")
        if weight_val is not None:
            weight_val = np.asarray(weight_val, dtype=float)
        Dt = Dv = None
        if cache_distances:
            Dt = squared_distances(X_train, X_train)
            Dv = squared_distances(X_val, X_train)
        return cls(X_train, yt, X_val, yv, Dt, Dv, cost_train, weight_val,
                   None if rows_train is None else np.asarray(rows_train))

    def costs(self, C):
        """Per-row costs :math:`C c_i` of the training rows."""
        return C if self.cost_train is None else C * self.cost_train

    def gram(self, gamma):
        """Training Gram matrix at ``gamma``."""
        return rbf_gram(self.X_train, self.X_train, gamma, self.sqdist_train)


class FreeBlockFactor:
    r"""Solves with the bordered KKT matrix :math:`M = [[A, y],[y^\top, 0]]`,
    :math:`A = Y K_{FF} Y + I/C` positive definite: Cholesky of A, then the bias border
    by its Schur complement :math:`s = y^\top A^{-1}y` (block elimination)."""

    def __init__(self, A, y):
        self.y = y
        self.chol = cholesky_factor(A)
        self.Ainv_y = cholesky_factor_solve(self.chol, y)
        self.schur = float(y @ self.Ainv_y)

    def solve(self, r_free, r_bias):
        r"""``(x_F, x_b)`` with :math:`M[x_F; x_b] = [r_F; r_b]`."""
        Ainv_r = cholesky_factor_solve(self.chol, r_free)
        xb = (float(self.y @ Ainv_r) - r_bias) / self.schur
        return Ainv_r - self.Ainv_y * xb, xb


@dataclass(frozen=True)
class L2SVMSolution:
    """The L2-SVM's solution on one :class:`KernelPair`.

    Attributes
    ----------
    alpha : ndarray, shape (n_train,)
        Dual variables (0 off the free set).
    bias : float
        :math:`b` of :math:`f(x) = \\sum_i\\alpha_iy_ik(x, x_i) + b`.
    free : ndarray of int
        The free set F.
    C : float
    gamma : ndarray
        Widths (one entry: shared).
    gram : ndarray
        Training Gram matrix at ``gamma``.
    factor : FreeBlockFactor or None
        Factor of M on F (None when F is empty or M is singular).
    n_iter : int
        SMO iterations (0 when the warm start's free set was corrected directly).
    polished : bool
        Whether α is the exact KKT solution on F (else SMO's, to its tolerance).
    """

    alpha: np.ndarray
    bias: float
    free: np.ndarray
    C: float
    gamma: np.ndarray
    gram: np.ndarray
    factor: FreeBlockFactor | None
    n_iter: int
    polished: bool


def _free_system(K, y, F, C):
    """The factor of M on ``F`` and its solution ``(alpha_F, b)``; ``C`` a scalar or the
    per-row costs."""
    yF = y[F]
    A = K[np.ix_(F, F)]
    A *= yF[:, None]
    A *= yF[None, :]
    A[np.diag_indices_from(A)] += 1.0 / (C[F] if np.ndim(C) else C)
    fac = FreeBlockFactor(A, yF)
    aF, b = fac.solve(np.ones(F.size), 0.0)
    return fac, aF, b


def _polish(K, y, alpha, C, tol, max_rounds=8):
    r"""Exact KKT solution from SMO's free set by an active-set correction: solve M on F,
    move to the bound set the variables that came out non-positive, bring in the bound
    rows with :math:`y_if_i < 1 - \text{tol}`, until neither happens. Returns
    ``(alpha, b, F, factor)`` or None if it does not settle in ``max_rounds``."""
    F = np.flatnonzero(alpha > 0)
    n = y.size
    for _ in range(max_rounds):
        if F.size == 0 or np.all(y[F] == y[F[0]]):
            return None
        try:
            fac, aF, b = _free_system(K, y, F, C)
        except (LinAlgError, ValueError):
            return None
        neg = aF <= 0
        if np.any(neg):
            F = F[~neg]
            continue
        a = np.zeros(n)
        a[F] = aF
        # one product with the whole Gram matrix: slicing its F columns would copy them
        margin = y * (K @ (a * y) + b)
        bound = np.ones(n, dtype=bool)
        bound[F] = False
        viol = np.flatnonzero(bound & (margin < 1.0 - tol))
        if viol.size == 0:
            return a, b, F, fac
        F = np.union1d(F, viol)
    return None


def solve_l2svm(pair, C, gamma, *, alpha0=None, tol=1e-3, shrinking=True, cache_size=200.0,
                n_jobs=None, polish=True):
    r"""Solve the L2-SVM on ``pair`` at (C, γ) by SMO, then polish on the free set.

    Parameters
    ----------
    pair : KernelPair
    C : float > 0
    gamma : float or ndarray of shape (d,)
        Shared width or one per feature (≥ 0).
    alpha0 : ndarray, shape (n_train,), optional
        Warm start (α ≥ 0; its :math:`y^\top\alpha`, ≈ 0 for a previous solution, is kept).
    tol : float
        SMO's stopping gap :math:`m(\alpha) - M(\alpha)`; also the KKT tolerance of the
        polish on the bound rows.
    shrinking, cache_size, n_jobs
        Passed to :func:`~bisvm.solvers.dual.smo.solve_smo`.
    polish : bool
        Replace SMO's α by the exact solution of the free-set system when the active-set
        correction settles (the normal case); otherwise keep SMO's. With a warm start,
        the correction is first tried from the warm start's free set
        (:data:`WARM_ROUNDS` rounds), and SMO runs only if it does not settle there; a
        settled correction satisfies every KKT condition of the convex dual (within
        ``tol`` on the bound rows), so it is the solution SMO would approach.

    Returns
    -------
    L2SVMSolution
    """
    if not (np.isfinite(C) and C > 0):
        raise ValueError(f"C must be positive and finite, got {C!r}")
    g = np.atleast_1d(np.asarray(gamma, dtype=float))
    if np.any(g < 0) or not np.all(np.isfinite(g)):
        raise ValueError("gamma must be finite and non-negative")
    K = pair.gram(g)
    y = pair.y_train
    Cs = pair.costs(float(C))
    if alpha0 is not None:
        alpha0 = np.maximum(np.asarray(alpha0, dtype=float), 0.0)
        if polish:
            # along an outer path the free set rarely changes much: the active-set
            # correction from the warm start's free set certifies the exact optimum
            # (KKT on every row) without an SMO pass
            out = _polish(K, y, alpha0, Cs, tol, max_rounds=WARM_ROUNDS)
            if out is not None:
                alpha, b, F, fac = out
                return L2SVMSolution(alpha, b, F, float(C), g, K, fac, 0, True)
    problem = csvc_dual(K, y, _PRECOMPUTED, float(C), weights=pair.cost_train,
                        loss="squared_hinge")
    res = solve_smo(problem, alpha0=alpha0, tol=tol, shrinking=shrinking,
                    cache_size=cache_size, n_jobs=n_jobs)
    alpha, b = np.asarray(res.dual_coef, dtype=float), float(res.intercept)
    out = _polish(K, y, alpha, Cs, tol) if polish else None
    if out is not None:
        alpha, b, F, fac = out
        return L2SVMSolution(alpha, b, F, float(C), g, K, fac, int(res.n_iter), True)
    F = np.flatnonzero(alpha > 0)
    try:
        fac = _free_system(K, y, F, Cs)[0] if F.size and np.ptp(y[F]) > 0 else None
    except (LinAlgError, ValueError):
        fac = None
    return L2SVMSolution(alpha, b, F, float(C), g, K, fac, int(res.n_iter), False)


def _val_block(pair, sol):
    """:math:`K_{VF}` at the solution's widths (from the cached distances when shared)."""
    F = sol.free
    if sol.gamma.size == 1 and pair.sqdist_val is not None:
        return np.exp(-float(sol.gamma[0]) * pair.sqdist_val[:, F])
    return rbf_gram(pair.X_val, pair.X_train[F], sol.gamma)


def decision_values(pair, sol):
    r"""Validation outputs :math:`f_V = K_{VF}(\alpha_F\circ y_F) + b` and the block
    :math:`K_{VF}` (reused by :func:`l2svm_hypergradient`)."""
    KVF = _val_block(pair, sol)
    F = sol.free
    return KVF @ (sol.alpha[F] * pair.y_train[F]) + sol.bias, KVF


def _width_terms(XA, XB, W):
    r""":math:`\sum_{ab}W_{ab}(x_{aj} - x_{bj})^2` for every feature j, by
    :math:`(W1)^\top X_A^{\circ2} + (W^\top1)^\top X_B^{\circ2} - 2\,1^\top(X_A\circ WX_B)`."""
    t = np.asarray(_sq(XA).T @ W.sum(axis=1)).ravel()
    t += np.asarray(_sq(XB).T @ W.sum(axis=0)).ravel()
    WXB = W @ XB if not sp.issparse(XB) else np.asarray((XB.T @ W.T).T)
    cross = XA.multiply(WXB).sum(axis=0) if sp.issparse(XA) else np.einsum(
        "ij,ij->j", XA, WXB)
    return t - 2.0 * np.asarray(cross).ravel()


def _shared_terms(D, W):
    """:math:`\\sum_{ab}W_{ab}D_{ab}`: the width term summed over features."""
    return np.array([float(np.vdot(W, D))])


def l2svm_hypergradient(pair, sol, e, KVF):
    r"""Gradient of a validation function :math:`E(f_V)` with respect to
    :math:`(\log C, \log\gamma)` (shared) or :math:`(\log C, \log\gamma_1, …,
    \log\gamma_d)`, by one adjoint solve with the free-set factor (module docstring).

    Parameters
    ----------
    pair : KernelPair
        The training and validation rows the solution was fitted and is evaluated on.
    sol : L2SVMSolution
        The lower-level solution: its free set ``F``, dual coefficients and factor.
    e : ndarray, shape (n_val,)
        :math:`\partial E/\partial f_V`, the validation function's derivative with
        respect to the decision values.
    KVF : ndarray, shape (n_val, |F|)
        Kernel between the validation rows and the free training rows, from
        :func:`decision_values`.

    Returns
    -------
    grad : ndarray, shape (1 + n_widths,)
    lam : ndarray, shape (|F| + 1,)
        The adjoint :math:`\lambda` (bias entry last).
    """
    F, y = sol.free, pair.y_train
    n_w = sol.gamma.size
    if sol.factor is None or F.size == 0:
        return np.zeros(1 + n_w), np.zeros(F.size + 1)
    yF, aF = y[F], sol.alpha[F]
    lamF, lamb = sol.factor.solve(yF * (KVF.T @ e), float(e.sum()))
    grad = np.empty(1 + n_w)
    grad[0] = float(lamF @ (aF / pair.costs(sol.C)[F])) if pair.cost_train is not None \
        else float(lamF @ aF) / sol.C
    w = aF * yF
    W = sol.gram[np.ix_(F, F)] * np.outer(lamF * yF, w)
    Aval = KVF * np.outer(e, w)
    if n_w == 1 and pair.sqdist_train is not None and pair.sqdist_val is not None:
        imp = _shared_terms(pair.sqdist_train[np.ix_(F, F)], W)
        exp_ = _shared_terms(pair.sqdist_val[:, F], Aval)
    else:
        XF = pair.X_train[F]
        imp = _width_terms(XF, XF, W)
        exp_ = _width_terms(pair.X_val, XF, Aval)
        if n_w == 1:
            imp, exp_ = np.array([imp.sum()]), np.array([exp_.sum()])
    grad[1:] = sol.gamma * (imp - exp_)
    return grad, np.append(lamF, lamb)


def l2svm_tangent(pair, sol, dlog_C, dlog_gamma):
    r"""First-order change of :math:`(\alpha, b)` when :math:`(\log C, \log\gamma)` move
    by ``(dlog_C, dlog_gamma)`` with F fixed: :math:`\delta z = -M^{-1}(\delta M)z`,
    one solve with the free-set factor (the implicit function theorem; a predictor for
    the next warm start). Returns ``(dalpha, dbias)`` (zeros off F)."""
    F, y = sol.free, pair.y_train
    da = np.zeros(y.size)
    if sol.factor is None or F.size == 0:
        return da, 0.0
    yF, aF = y[F], sol.alpha[F]
    XF = pair.X_train[F]
    c = sol.gamma * np.broadcast_to(np.asarray(dlog_gamma, float), sol.gamma.shape)
    if sol.gamma.size == 1:
        D = pair.sqdist_train[np.ix_(F, F)] if pair.sqdist_train is not None \
            else squared_distances(XF, XF)
        dK = -sol.gram[np.ix_(F, F)] * (float(c[0]) * D)
    else:
        dK = -sol.gram[np.ix_(F, F)] * weighted_sq_distances(XF, XF, c)
    cF = pair.costs(sol.C)[F] if pair.cost_train is not None else sol.C
    rhs = yF * (dK @ (aF * yF)) - aF * (float(dlog_C) / cF)
    dF, db = sol.factor.solve(-rhs, 0.0)
    da[F] = dF
    return da, float(db)


@dataclass(frozen=True)
class KernelL2SVM:
    """The *model* role of kernel hyperparameter learning: the L2-SVM lower level with its
    solver policy (SMO settings, polishing), applied to a :class:`KernelPair`.

    Parameters
    ----------
    shrinking : bool
        SMO's shrinking heuristic.
    cache_size : float
        SMO's kernel cache (MB).
    n_jobs : int or None
        Threads of SMO's kernel engine (the model does not depend on it).
    polish : bool
        Exact free-set solution after SMO (:func:`solve_l2svm`).
    """

    shrinking: bool = True
    cache_size: float = 200.0
    n_jobs: int | None = None
    polish: bool = True

    def solve(self, pair, C, gamma, alpha0=None, tol=1e-3):
        """:func:`solve_l2svm` with this policy."""
        return solve_l2svm(pair, C, gamma, alpha0=alpha0, tol=tol, shrinking=self.shrinking,
                           cache_size=self.cache_size, n_jobs=self.n_jobs,
                           polish=self.polish)

    def outputs(self, pair, sol):
        """Validation outputs and :math:`K_{VF}` (:func:`decision_values`)."""
        return decision_values(pair, sol)

    def hypergradient(self, pair, sol, e, KVF):
        """:func:`l2svm_hypergradient`."""
        return l2svm_hypergradient(pair, sol, e, KVF)

    def tangent(self, pair, sol, dlog_C, dlog_gamma):
        """:func:`l2svm_tangent`."""
        return l2svm_tangent(pair, sol, dlog_C, dlog_gamma)
