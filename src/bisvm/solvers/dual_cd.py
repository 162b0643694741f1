r"""Dual coordinate descent for the linear L1- and L2-loss SVM (the LIBLINEAR algorithm:
Hsieh, Chang, Lin, Keerthi & Sundararajan, ICML 2008, Algorithm 1 with shrinking; block
coordinate descent with blocks of one variable, seed 002 §3.5).

Primal, with per-sample costs :math:`C_i` (``C`` times sample and class weights):

.. math::
    \min_w \tfrac12\|w\|^2 + \sum_i C_i\,\xi_i(w), \qquad
    \xi_i = \max(0, 1 - y_i w^\top x_i)\ \text{(hinge)}\ \text{or its square}.

Dual:

.. math::
    \min_\alpha \tfrac12 \alpha^\top \bar Q \alpha - e^\top\alpha,\quad
    0 \le \alpha_i \le U_i,\qquad \bar Q = Q + D,\ Q_{ij} = y_i y_j x_i^\top x_j,

with :math:`U_i = C_i, D_{ii} = 0` for the hinge and :math:`U_i = \infty,
D_{ii} = 1/(2C_i)` for the squared hinge — one loop for both losses, the two losses
being data (``diag``, ``upper``) as in LIBLINEAR. ``w = Σ α_i y_i x_i`` is kept up to
date, so each coordinate step costs one sparse dot product and one axpy.

The intercept, when asked for, is LIBLINEAR's: a constant feature of value ``bias``
(scikit-learn's ``intercept_scaling``) appended to every ``x_i``, hence *penalised* like
the other coefficients. Stopping: the spread of the projected gradient
:math:`\max PG - \min PG \le` ``tol`` over the active set, confirmed by one more pass over
all samples after shrinking (as LIBLINEAR).
"""

from __future__ import annotations

import time

import numpy as np
import scipy.sparse as sp

from ._dual_cd_kernels import (
    ALPHA,
    dual_objective,
    epoch_csr,
    epoch_dense,
    pack_state,
    rng_state,
    row_sq_norms_csr,
)
from .base import ConvergenceRecord, SolverResult, warn_cap

__all__ = ["solve_dual_cd", "svm_primal_objective"]

_LOSSES = ("hinge", "squared_hinge")


def _margins(X, w, bias):
    d = X.shape[1]
    z = X @ w[:d]
    if bias > 0:
        z = z + bias * w[d]
    return np.asarray(z).ravel()


def svm_primal_objective(X, y, w, cost, loss, bias=0.0):
    r""":math:`\tfrac12\|w\|^2 + \sum_i C_i\,\xi_i(w)` with the intercept as a feature of
    value ``bias`` (``w`` then has ``d + 1`` entries)."""
    r = np.maximum(0.0, 1.0 - y * _margins(X, w, bias))
    xi = r if loss == "hinge" else r * r
    # ufunc sums, not BLAS dots: a threaded BLAS wake-up costs more than these sums
    return 0.5 * float(np.sum(w * w)) + float(np.sum(cost * xi))


def solve_dual_cd(X, y, *, C=1.0, loss="squared_hinge", sample_weight=None, bias=0.0,
                  tol=1e-4, max_iter=1000, shrinking=True, random_state=0, alpha0=None,
                  warn=True):
    r"""Train a binary linear SVM by dual coordinate descent.

    Parameters
    ----------
    X : ndarray of shape (n, d) or scipy.sparse matrix
        Dense input is used row-major (a copy is made if needed); sparse input as CSR.
    y : ndarray of shape (n,)
        Labels in {-1, +1}.
    C : float
        Cost :math:`C > 0`.
    loss : {"hinge", "squared_hinge"}
    sample_weight : ndarray of shape (n,), optional
        Multiplies ``C`` per sample (:math:`C_i = C s_i`); samples of weight 0 are left out.
    bias : float
        Value of the constant intercept feature; 0 fits no intercept.
    tol : float
        Stop when the projected-gradient spread is at most ``tol``.
    max_iter : int
        Cap on epochs.
    shrinking : bool
    random_state : int
        Seed of the per-epoch permutations.
    alpha0 : ndarray of shape (n,), optional
        Warm start for the dual variables (clipped to the box).

    Returns
    -------
    SolverResult
        ``coef`` is ``w`` (``d + 1`` entries when ``bias > 0``), ``objective`` the primal
        objective, ``grad_norm`` the final projected-gradient spread, ``n_iter`` the
        epochs; ``record.objective`` holds the dual objective per epoch;
        ``extra`` holds ``dual_coef`` (α), ``dual_objective`` and ``n_active``.
    """
    if loss not in _LOSSES:
        raise ValueError(f"loss must be one of {_LOSSES}, got {loss!r}")
    if not (np.isfinite(C) and C > 0):
        raise ValueError(f"C must be a positive float, got {C!r}")
    if not (np.isfinite(tol) and tol > 0):
        raise ValueError(f"tol must be a positive float, got {tol!r}")
    if int(max_iter) != max_iter or max_iter < 1:
        raise ValueError(f"max_iter must be a positive integer, got {max_iter!r}")
    if not (np.isfinite(bias) and bias >= 0):
        raise ValueError(f"bias must be a non-negative float, got {bias!r}")
    t0 = time.perf_counter()
    n, d = X.shape
    y = np.asarray(y, dtype=np.float64)
    if y.shape != (n,) or not np.all(np.abs(y) == 1.0):
        raise ValueError("y must be a vector of -1/+1 labels with one entry per row of X")
    cost = np.full(n, float(C)) if sample_weight is None else (
        float(C) * np.asarray(sample_weight, dtype=np.float64))
    if cost.shape != (n,) or np.any(cost < 0) or not np.all(np.isfinite(cost)):
        raise ValueError("sample_weight must be finite, non-negative, one per sample")
    sparse = sp.issparse(X)
    if sparse:
        # duplicates and unsorted columns are fine: the epochs are linear in the
        # entries and the row norms sum repeated columns first
        X = X.tocsr().astype(np.float64, copy=False)
        # int32 indices when they fit (scipy's own choice): less memory traffic per epoch
        itype = np.int32 if X.nnz < 2**31 and d < 2**31 else np.int64
        indices = X.indices.astype(itype, copy=False)
        indptr = X.indptr.astype(itype, copy=False)
        data = np.ascontiguousarray(X.data)
        sqnorm = row_sq_norms_csr(data, indices, indptr, d)
    else:
        X = np.ascontiguousarray(X, dtype=np.float64)
        sqnorm = np.einsum("ij,ij->i", X, X)
    keep = cost > 0
    if loss == "hinge":
        diag = np.zeros(n)
        upper = cost.copy()
    else:
        diag = np.where(keep, 0.5 / np.where(keep, cost, 1.0), 0.0)
        upper = np.where(keep, np.inf, 0.0)
    QD = diag + sqnorm + bias * bias
    alpha = np.zeros(n) if alpha0 is None else np.clip(
        np.asarray(alpha0, dtype=np.float64), 0.0, upper)
    w = np.zeros(d + (1 if bias > 0 else 0))
    if np.any(alpha):
        ay = alpha * y
        w[:d] = np.asarray(X.T @ ay).ravel()
        if bias > 0:
            w[d] = bias * ay.sum()
    # zero-cost samples never move (α_i = 0 = U_i), and samples with x_i = 0 and no bias
    # have Q_ii = 0: they stay out of the active set
    index = np.flatnonzero(keep & (QD > 0)).astype(np.int64)
    S = pack_state(y, alpha, QD, diag, upper)
    n_act = index.shape[0]
    active_size = n_act
    if not isinstance(random_state, int | np.integer):
        random_state = np.random.RandomState(random_state).randint(0, 2**31 - 1)
    state = rng_state(int(random_state))
    pgmax_old, pgmin_old = np.inf, -np.inf
    dual_objs, gaps, secs = [], [], []
    converged = False
    k = 0
    gap = np.inf
    while k < max_iter:
        if sparse:
            active_size, pgmax, pgmin = epoch_csr(
                data, indices, indptr, d, float(bias), S, w, index, active_size, pgmax_old,
                pgmin_old, bool(shrinking), state)
        else:
            active_size, pgmax, pgmin = epoch_dense(
                X, float(bias), S, w, index, active_size, pgmax_old, pgmin_old,
                bool(shrinking), state)
        k += 1
        gap = pgmax - pgmin if active_size > 0 else 0.0
        dual_objs.append(dual_objective(w, S))
        gaps.append(gap)
        secs.append(time.perf_counter() - t0)
        if gap <= tol:
            if active_size == n_act:
                converged = True
                break
            active_size = n_act  # confirm on the whole set before stopping
            pgmax_old, pgmin_old = np.inf, -np.inf
            continue
        pgmax_old = pgmax if pgmax > 0 else np.inf
        pgmin_old = pgmin if pgmin < 0 else -np.inf
    if not converged and warn:
        warn_cap("dual coordinate descent", max_iter, gap, tol)
    alpha = S[:, ALPHA].copy()
    rec = ConvergenceRecord(np.array(dual_objs), np.array(gaps), np.array(secs))
    primal = svm_primal_objective(X, y, w, cost, loss, bias)
    return SolverResult(
        coef=w, objective=primal, grad_norm=float(gap), n_iter=k, n_evals=k,
        converged=converged, seconds=time.perf_counter() - t0, record=rec,
        extra={"dual_coef": alpha, "dual_objective": dual_objs[-1] if dual_objs else 0.0,
               "n_active": int(active_size)},
    )
