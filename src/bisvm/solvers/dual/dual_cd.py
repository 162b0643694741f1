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

:func:`solve_dual_cd_svr` runs the same epochs, state and intercept on LIBLINEAR's
L2-regularised L1- and L2-loss support vector *regression* (Ho & Lin 2012, "Large-scale
linear support vector regression", JMLR 13, Algorithm 4; LIBLINEAR solvers 13 and 12):

.. math::
    \min_w \tfrac12\|w\|^2 + \sum_i C_i\,\xi_i(w),\qquad
    \xi_i = \max(0, |y_i - w^\top x_i| - \epsilon)\ \text{or its square},

whose dual in one signed variable per sample is

.. math::
    \min_\beta \tfrac12 \beta^\top (\tilde Q + D)\beta - y^\top\beta + \epsilon\|\beta\|_1,
    \quad -U_i \le \beta_i \le U_i,\qquad \tilde Q_{ij} = x_i^\top x_j,

with the same table (:math:`U_i = C_i, D_{ii} = 0` for the ε-insensitive loss,
:math:`U_i = \infty, D_{ii} = 1/(2C_i)` for its square) and ``w = Σ β_i x_i``. Each
coordinate step minimises the one-variable piecewise quadratic exactly. Stopping is
LIBLINEAR's for regression: the summed violation of the optimality conditions falls below
``tol`` times its value after the first epoch.
"""

from __future__ import annotations

import time

import numpy as np
import scipy.sparse as sp

from ...losses import EpsilonInsensitive, Hinge, SquaredEpsilonInsensitive, SquaredHinge
from .._record import IterationLog, check_tol_max_iter
from ..base import SolverResult, warn_cap
from ..problems import split_intercept
from ._dual_cd_kernels import (
    ALPHA,
    dual_objective,
    epoch_csr,
    epoch_dense,
    pack_state,
    rng_state,
    row_sq_norms_csr,
    svr_dual_objective,
    svr_epoch_csr,
    svr_epoch_dense,
)

__all__ = ["solve_dual_cd", "solve_dual_cd_svr", "svm_primal_objective",
           "svr_primal_objective", "LinearDesign"]

_LOSSES = (Hinge, SquaredHinge)
_SVR_LOSSES = (EpsilonInsensitive, SquaredEpsilonInsensitive)


def _margins(X, w, bias):
    d = X.shape[1]
    z = X @ w[:d]
    if bias > 0:
        z = z + bias * w[d]
    return np.asarray(z).ravel()


def _l1_loss(loss):
    """The loss (a name or a :mod:`bisvm.losses` object) is the unsquared one."""
    return loss in ("hinge", "epsilon_insensitive") or isinstance(
        loss, Hinge | EpsilonInsensitive)


def svm_primal_objective(X, y, w, cost, loss, bias=0.0):
    r""":math:`\tfrac12\|w\|^2 + \sum_i C_i\,\xi_i(w)` with the intercept as a feature of
    value ``bias`` (``w`` then has ``d + 1`` entries); ``loss`` is ``Hinge()`` /
    ``"hinge"`` or ``SquaredHinge()`` / ``"squared_hinge"``."""
    r = np.maximum(0.0, 1.0 - y * _margins(X, w, bias))
    xi = r if _l1_loss(loss) else r * r
    # ufunc sums, not BLAS dots: a threaded BLAS wake-up costs more than these sums
    return 0.5 * float(np.sum(w * w)) + float(np.sum(cost * xi))


def svr_primal_objective(X, y, w, cost, loss, epsilon=0.0, bias=0.0):
    r""":math:`\tfrac12\|w\|^2 + \sum_i C_i\,\xi_i(w)`, :math:`\xi_i = \max(0,
    |y_i - w^\top x_i| - \epsilon)` (``"epsilon_insensitive"``) or its square, with the
    intercept as a feature of value ``bias`` (``w`` then has ``d + 1`` entries); ``loss`` a
    name or an ``EpsilonInsensitive`` / ``SquaredEpsilonInsensitive`` object."""
    r = np.maximum(0.0, np.abs(y - _margins(X, w, bias)) - epsilon)
    xi = r if _l1_loss(loss) else r * r
    return 0.5 * float(np.sum(w * w)) + float(np.sum(cost * xi))


class LinearDesign:
    """``X`` as the compiled epochs read it (row-major dense, or CSR arrays) and its
    squared row norms; shared by the dual coordinate descent solvers."""

    def __init__(self, X):
        self.n, self.d = X.shape
        self.sparse = sp.issparse(X)
        if self.sparse:
            # duplicates and unsorted columns are fine: the epochs are linear in the
            # entries and the row norms sum repeated columns first
            X = X.tocsr().astype(np.float64, copy=False)
            # int32 indices when they fit (scipy's own choice): less memory traffic
            itype = np.int32 if X.nnz < 2**31 and self.d < 2**31 else np.int64
            self.indices = X.indices.astype(itype, copy=False)
            self.indptr = X.indptr.astype(itype, copy=False)
            self.data = np.ascontiguousarray(X.data)
            self.sqnorm = row_sq_norms_csr(self.data, self.indices, self.indptr, self.d)
        else:
            X = np.ascontiguousarray(X, dtype=np.float64)
            self.sqnorm = np.einsum("ij,ij->i", X, X)
        self.X = X

    def arrays(self):
        """``(dense, X, data, indices, indptr)`` with empty placeholders for the unused
        representation (one compiled signature serves both)."""
        if self.sparse:
            return False, np.zeros((1, 1)), self.data, self.indices, self.indptr
        e = np.zeros(1, dtype=np.int32)
        return True, self.X, np.zeros(1), e, e

    def start(self, coef, bias):
        """``w = Σ coef_i x_i`` (plus the intercept entry) for a warm start."""
        w = np.zeros(self.d + (1 if bias > 0 else 0))
        if np.any(coef):
            w[:self.d] = np.asarray(self.X.T @ coef).ravel()
            if bias > 0:
                w[self.d] = bias * coef.sum()
        return w


def _seed(random_state):
    if not isinstance(random_state, int | np.integer):
        random_state = np.random.RandomState(random_state).randint(0, 2**31 - 1)
    return rng_state(int(random_state))


def _drive(epoch, stop, n_act, max_iter, objective, verbose, name, certificate):
    """The outer loop shared by classification and regression: epochs until ``stop``
    accepts the certificate on the whole active set (shrinking undone once before
    stopping, as LIBLINEAR), or ``max_iter`` epochs. ``epoch(active_size, old)`` returns
    ``(active_size, certificate, old_next)``; ``old`` carries the shrinking thresholds
    (``None``: no shrinking yet). The record starts at the initial point (its
    certificate, measured only by an epoch, is NaN there) and has one entry per epoch."""
    log = IterationLog(objective(), np.nan, certificate=certificate)
    active_size, old = n_act, None
    converged, k, cert = False, 0, np.inf
    while k < max_iter:
        active_size, cert, old_next = epoch(active_size, old)
        k += 1
        log.add(objective(), cert)
        if verbose > 1:
            print(f"{name}: epoch {k}, certificate {cert:.3e}, dual objective "
                  f"{log.objs[-1]:.10g}, active {active_size}")
        if stop(cert):
            if active_size == n_act:
                converged = True
                break
            active_size, old = n_act, None  # confirm on the whole set before stopping
            continue
        old = old_next
    if verbose:
        print(f"{name}: optimization finished, #iter = {k}, certificate {cert:.3e}, "
              f"dual objective {log.objs[-1]:.10g}")
    return k, converged, cert, active_size, log.record()


def _prepare(problem, alpha0, *, losses, regression):
    """What both solvers start from: the checked labels and costs, the dual box and
    diagonal shift from ``problem.loss.dual_box`` (LIBLINEAR's table), the design, the
    start (α clipped to the box; ``w = Σ α_i y_i x_i``, or ``Σ β_i x_i`` for regression),
    the variables that can move and the packed state of the compiled epochs."""
    loss = problem.loss
    if not isinstance(loss, losses):
        names = tuple(c.__name__ for c in losses)
        raise ValueError(f"loss must be one of {names} (bisvm.losses), got {loss!r}")
    bias = problem.bias
    if not (np.isfinite(bias) and bias >= 0):
        raise ValueError(f"bias must be a non-negative float, got {bias!r}")
    X = problem.X
    n = X.shape[0]
    y = np.asarray(problem.y, dtype=np.float64)
    if regression:
        if y.shape != (n,) or not np.all(np.isfinite(y)):
            raise ValueError("y must be a finite vector with one entry per row of X")
    elif y.shape != (n,) or not np.all(np.abs(y) == 1.0):
        raise ValueError("y must be a vector of -1/+1 labels with one entry per row of X")
    cost = np.asarray(problem.cost, dtype=np.float64)
    if cost.shape != (n,) or np.any(cost < 0) or not np.all(np.isfinite(cost)):
        raise ValueError("cost must be finite, non-negative, one per sample")
    diag, upper = loss.dual_box(cost)
    D = LinearDesign(X)
    QD = diag + D.sqnorm + bias * bias
    alpha = np.zeros(n) if alpha0 is None else np.clip(
        np.asarray(alpha0, dtype=np.float64), -upper if regression else 0.0, upper)
    w = D.start(alpha if regression else alpha * y, bias)
    # zero-cost samples never move (α_i = 0 = U_i), and samples with x_i = 0 and no bias
    # have Q_ii = 0: they stay out of the active set
    index = np.flatnonzero((cost > 0) & (QD > 0)).astype(np.int64)
    S = pack_state(y, alpha, QD, diag, upper)
    return D, y, cost, float(bias), w, index, S


def _result(D, bias, w, S, primal, run, t0, certificate):
    """The frozen result: ``w`` split into ``coef`` and the intercept ``bias · w[d]``."""
    k, converged, cert, active_size, rec = run
    coef, intercept = split_intercept(w, D.d, bias)
    return SolverResult(
        coef=coef, intercept=intercept,
        dual_coef=S[:, ALPHA].copy(), dual_objective=float(rec.objective[-1]),
        objective=primal, certificate_value=float(cert), n_iter=k, n_evals=k, converged=converged,
        seconds=time.perf_counter() - t0, record=rec, certificate=certificate,
        stats={"n_active": int(active_size)})


def solve_dual_cd(problem, *, alpha0=None, tol=1e-4, max_iter=1000, shrinking=True,
                  random_state=0, warn=True, verbose=0):
    r"""Train a binary linear SVM by dual coordinate descent.

    Parameters
    ----------
    problem : LinearProblem
        ``X`` (dense, used row-major, a copy made if needed; or sparse, used as CSR),
        ``y`` in {-1, +1}, ``loss`` :class:`~bisvm.losses.Hinge` or
        :class:`~bisvm.losses.SquaredHinge` (the box and shift come from its
        ``dual_box``), ``cost`` the :math:`C_i` (samples of cost 0 are left out), ``bias``
        the value of the constant intercept feature (0 fits no intercept). ``quadratic``
        is ignored (:math:`R = I`).
    alpha0 : ndarray of shape (n,), optional
        Warm start for the dual variables (clipped to the box).
    tol : float
        Stop when the projected-gradient spread is at most ``tol``.
    max_iter : int
        Cap on epochs.
    shrinking : bool
    random_state : int
        Seed of the per-epoch permutations.
    warn : bool
        Emit a ``ConvergenceWarning`` when stopping on ``max_iter``.
    verbose : int
        1 prints a summary line, 2 one line per epoch.

    Returns
    -------
    SolverResult
        ``coef`` is ``w`` over the ``d`` features and ``intercept`` = ``bias · w[d]``;
        ``objective`` the primal objective; certificate ``"projected_gradient_spread"``
        (the final spread); ``n_iter`` the epochs; ``record.objective`` the dual objective
        per epoch; ``dual_coef`` α, ``dual_objective`` (to be minimised: primal + dual is
        the duality gap); ``stats["n_active"]`` the final active-set size.
    """
    check_tol_max_iter(tol, max_iter)
    t0 = time.perf_counter()
    D, y, cost, bias, w, index, S = _prepare(problem, alpha0, losses=_LOSSES,
                                             regression=False)
    state = _seed(random_state)
    shrink = bool(shrinking)

    def epoch(active_size, old):
        pgmax_old, pgmin_old = (np.inf, -np.inf) if old is None else old
        if D.sparse:
            active_size, pgmax, pgmin = epoch_csr(
                D.data, D.indices, D.indptr, D.d, bias, S, w, index, active_size,
                pgmax_old, pgmin_old, shrink, state)
        else:
            active_size, pgmax, pgmin = epoch_dense(
                D.X, bias, S, w, index, active_size, pgmax_old, pgmin_old, shrink, state)
        gap = pgmax - pgmin if active_size > 0 else 0.0
        return active_size, gap, (pgmax if pgmax > 0 else np.inf,
                                  pgmin if pgmin < 0 else -np.inf)

    run = _drive(epoch, lambda g: g <= tol, index.shape[0], max_iter,
                 lambda: dual_objective(w, S), verbose, "dual CD", "projected_gradient_spread")
    if not run[1] and warn:
        warn_cap("dual coordinate descent", max_iter, run[2], tol)
    primal = svm_primal_objective(D.X, y, w, cost, problem.loss, bias)
    return _result(D, bias, w, S, primal, run, t0, "projected_gradient_spread")


def solve_dual_cd_svr(problem, *, alpha0=None, tol=1e-4, max_iter=1000, shrinking=True,
                      random_state=0, warn=True, verbose=0):
    r"""Train a linear support vector regression by dual coordinate descent (Ho & Lin
    2012; LIBLINEAR's ``-s 13`` for the ε-insensitive loss, ``-s 12`` for its square).

    Parameters
    ----------
    problem : LinearProblem
        ``X`` dense or sparse, ``y`` real targets, ``loss``
        :class:`~bisvm.losses.EpsilonInsensitive` or
        :class:`~bisvm.losses.SquaredEpsilonInsensitive` (its ``epsilon`` is the
        half-width of the tube; box and shift from its ``dual_box``), ``cost`` the
        :math:`C_i` (samples of cost 0 are left out), ``bias`` the intercept feature.
    alpha0 : ndarray of shape (n,), optional
        Warm start for the signed dual variables β (clipped to the box).
    tol : float
        Stop when the summed violation of the optimality conditions is at most ``tol``
        times its value after the first epoch (LIBLINEAR's rule for regression; with a
        warm start, times its value at β = 0).
    max_iter, shrinking, random_state, warn, verbose
        As in :func:`solve_dual_cd`.

    Returns
    -------
    SolverResult
        ``coef`` and ``intercept`` as :func:`solve_dual_cd`; ``objective`` the primal
        objective; certificate ``"relative_violation"``; ``dual_coef`` β
        (``w = Σ β_i x_i``), ``dual_objective`` (to be minimised: primal + dual is the
        duality gap); ``stats["n_active"]``.
    """
    check_tol_max_iter(tol, max_iter)
    t0 = time.perf_counter()
    D, y, cost, bias, w, index, S = _prepare(problem, alpha0, losses=_SVR_LOSSES,
                                             regression=True)
    state = _seed(random_state)
    shrink = bool(shrinking)
    eps = float(problem.loss.epsilon)
    # the scale of the relative test: LIBLINEAR's summed violation of the first epoch from
    # β = 0; a warm start would make that scale (and the test) arbitrarily strict, so it
    # gets the summed violation at β = 0 instead, Σ max(0, |y_i| - ε)
    first = [] if alpha0 is None else [float(np.maximum(np.abs(y[index]) - eps, 0.0).sum())]

    def epoch(active_size, old):
        gmax_old = np.inf if old is None else old
        if D.sparse:
            active_size, gmax, gnorm1 = svr_epoch_csr(
                D.data, D.indices, D.indptr, D.d, bias, eps, S, w, index,
                active_size, gmax_old, shrink, state)
        else:
            active_size, gmax, gnorm1 = svr_epoch_dense(
                D.X, bias, eps, S, w, index, active_size, gmax_old, shrink, state)
        if not first:
            first.append(gnorm1)
        return active_size, gnorm1 / first[0] if first[0] > 0 else 0.0, gmax

    run = _drive(epoch, lambda c: c <= tol, index.shape[0], max_iter,
                 lambda: svr_dual_objective(w, S, eps), verbose, "dual CD (SVR)",
                 "relative_violation")
    if not run[1] and warn:
        warn_cap("dual coordinate descent (SVR)", max_iter, run[2], tol)
    primal = svr_primal_objective(D.X, y, w, cost, problem.loss, eps, bias)
    return _result(D, bias, w, S, primal, run, t0, "relative_violation")
