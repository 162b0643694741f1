r"""Crammer–Singer multiclass linear SVM by the sequential dual method (Keerthi, Sundararajan,
Chang, Hsieh & Lin, KDD 2008, "A sequential dual method for large scale multi-class linear
SVMs"; LIBLINEAR's ``-s 4``).

Primal, classes :math:`m = 1..k`, per-sample costs :math:`C_i` (``C`` times the class
weight of :math:`y_i` times the sample weight):

.. math::
    \min_{w_1..w_k} \tfrac12\sum_m \|w_m\|^2
    + \sum_i C_i \max_m \big(w_m^\top x_i - w_{y_i}^\top x_i + 1 - \delta_{m, y_i}\big).

Dual, one block :math:`\alpha_i \in \mathbb R^k` per sample:

.. math::
    \min_\alpha \tfrac12\sum_m \|w_m\|^2 + \sum_i\sum_m e_i^m \alpha_i^m,\quad
    w_m = \sum_i \alpha_i^m x_i,\quad \alpha_i^m \le C_i^m,\ \sum_m \alpha_i^m = 0,

with :math:`e_i^m = 1 - \delta_{m, y_i}`, :math:`C_i^m = C_i\,\delta_{m, y_i}`. The method
visits the samples in random order and minimises the dual exactly over one block (a
``k``-variable problem solved by sorting, :func:`cs_subproblem`), keeping ``W`` up to date.
Shrinking is two-level, as in LIBLINEAR: classes of a sample sit out while at their bound
with a small gradient, and a sample with a single active class leaves the active set; the
shrinking threshold halves from ``max(10 tol, 1)`` to ``tol``, and the method stops when an
epoch over *all* samples and classes has :math:`\max_m G_i^m - \min_m G_i^m \le` ``tol``
on every sample (:math:`G_i^m` the dual gradient, the minimum over classes below their
bound). The intercept is LIBLINEAR's penalised constant feature of value ``bias``.
"""

from __future__ import annotations

import time

import numpy as np

from ...losses import MulticlassHinge
from .._record import check_tol_max_iter
from ..base import ConvergenceRecord, SolverResult, warn_cap
from ._crammer_singer_kernels import cs_dual_objective, cs_run, rng_state
from .dual_cd import LinearDesign

__all__ = ["solve_crammer_singer", "crammer_singer_objective"]


def crammer_singer_objective(X, y, W, cost, bias=0.0):
    r"""Primal objective of the module docstring; ``W`` of shape ``(k, d)`` or
    ``(k, d + 1)`` (last column: the intercept feature's weights, with ``bias > 0``),
    ``y`` integer classes in ``0..k-1``."""
    W = np.asarray(W, dtype=float)
    d = X.shape[1]
    scores = np.asarray(X @ W[:, :d].T)
    if bias > 0:
        scores = scores + bias * W[:, d]
    loss = MulticlassHinge().value(np.asarray(y), scores)
    return 0.5 * float(np.sum(W * W)) + float(np.sum(cost * loss))


def solve_crammer_singer(problem, *, n_classes=None, tol=0.1, max_iter=1000,
                         random_state=0, warn=True, verbose=0):
    r"""Train the Crammer–Singer multiclass linear SVM.

    Parameters
    ----------
    problem : LinearProblem
        ``X`` dense or sparse, ``y`` integer classes in ``0..k-1``, ``cost`` the
        :math:`C_i \ge 0` (samples of cost 0 are left out), ``bias`` the value of the
        constant intercept feature (0 fits no intercept). ``loss`` is
        :class:`~bisvm.losses.MulticlassHinge`; ``quadratic`` is ignored (identity).
    n_classes : int, optional
        ``k >= 2``; ``max(y) + 1`` by default.
    tol : float
        Stopping tolerance on :math:`\max_m G_i^m - \min_m G_i^m` (LIBLINEAR's ``eps``).
    max_iter : int
        Cap on epochs.
    random_state : int
        Seed of the per-epoch permutations.
    warn : bool
    verbose : int
        1 prints a summary, 2 one line per epoch.

    Returns
    -------
    SolverResult
        ``coef`` the weights ``W`` of shape ``(k, d)``, ``intercept`` of shape ``(k,)``
        (``bias`` times the intercept feature's weights); ``objective`` the primal
        objective; certificate ``"max_violation"``: the last epoch's largest violation,
        ``record.grad_norm`` that violation per epoch; ``dual_coef`` of shape ``(n, k)``;
        ``dual_objective`` (to be minimised; primal + dual is the duality gap).
    """
    if not isinstance(problem.loss, MulticlassHinge):
        raise ValueError(f"loss must be MulticlassHinge(), got {problem.loss!r}")
    X, bias = problem.X, float(problem.bias)
    check_tol_max_iter(tol, max_iter)
    n, d = X.shape
    y = np.asarray(problem.y, dtype=np.int64)
    if n_classes is None:
        n_classes = int(y.max(initial=0)) + 1
    if int(n_classes) != n_classes or n_classes < 2:
        raise ValueError(f"n_classes must be an integer >= 2, got {n_classes!r}")
    t0 = time.perf_counter()
    k = int(n_classes)
    if y.shape != (n,) or y.min(initial=0) < 0 or y.max(initial=0) >= k:
        raise ValueError("y must hold one class index in 0..n_classes-1 per row of X")
    cost = np.asarray(problem.cost, dtype=np.float64)
    if cost.shape != (n,) or np.any(cost < 0) or not np.all(np.isfinite(cost)):
        raise ValueError("cost must be finite, non-negative, one per sample")
    design = LinearDesign(X)
    dense, Xd, data, indices, indptr = design.arrays()
    QD = design.sqnorm + bias * bias
    W = np.zeros((d + 1, k))
    alpha = np.zeros((n, k))
    index = np.flatnonzero((cost > 0) & (QD > 0)).astype(np.int64)
    state = rng_state(int(random_state))
    objs = np.empty(int(max_iter))
    certs = np.empty(int(max_iter))
    ticks = np.zeros(int(max_iter) + 1, dtype=np.int64)
    t1 = time.perf_counter()
    it, converged, stopping = cs_run(dense, Xd, data, indices, indptr, d, bias, W,
                                     alpha, QD, y, cost, index, float(tol), int(max_iter),
                                     state, objs, certs, ticks, int(verbose))
    t_loop = time.perf_counter() - t1
    if verbose:
        print(f"Crammer-Singer: optimization finished, #iter = {it}")
    if not converged and warn:
        warn_cap("Crammer-Singer sequential dual", max_iter, stopping, tol)
    Wt = np.ascontiguousarray(W.T if bias > 0 else W[:d].T)
    primal = crammer_singer_objective(design.X, y, Wt, cost, bias)
    dual = float(cs_dual_objective(W, alpha, y))
    objs = objs[:it].copy()
    # the compiled loop records objectives only when verbose > 1 (NaN otherwise; the final
    # value in the last entry) and the cycle counter after each epoch: seconds are the
    # counts scaled to the loop's wall time, plus the set-up before it
    ticks = (ticks[1:it + 1] - ticks[0]).astype(float)
    span = ticks[-1] if it and ticks[-1] > 0 else 1.0
    secs = (t1 - t0) + ticks / span * t_loop
    if it:
        objs[-1] = dual
    rec = ConvergenceRecord(objs, certs[:it].copy(), secs)
    return SolverResult(
        coef=np.ascontiguousarray(Wt[:, :d]),
        intercept=bias * Wt[:, d] if bias > 0 else np.zeros(k),
        dual_coef=alpha, dual_objective=dual, objective=primal,
        certificate_value=float(max(stopping, 0.0)), n_iter=it, n_evals=it, converged=converged,
        seconds=time.perf_counter() - t0, record=rec, certificate="max_violation")
