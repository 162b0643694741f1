r"""One self-tuning kernel fit, stage by stage (the driver of ``AutoSVC``):

1. **start**: the median-heuristic width :math:`\gamma_0` (:func:`~bisvm.selection.
   kernel_bilevel.median_gamma`) and C from a short warm-started scan at
   :math:`\gamma_0` (:func:`~bisvm.selection.kernel_bilevel.scan_C`, from the middle
   of :data:`SCAN_C` outwards to the first rise: 2 to 4 evaluations);
2. **shared width**: :class:`BoxedQuasiNewton` on :math:`(\log C, \log\gamma)` within
   :data:`C_BOUNDS` and :data:`GAMMA_RANGE`, with HOAG's tolerance schedule, stopped
   once a step gains less than :data:`SE_FRACTION` of the criterion's standard error;
3. **per-feature widths** (``widths="per_feature"``): BiSVM L-BFGS on
   :math:`(\log C, \log\gamma_1, …, \log\gamma_d)` from the shared optimum, the
   automatic relevance determination of Chapelle, Vapnik, Bousquet & Mukherjee (2002);
   starting from the shared solution is what makes the d-dimensional descent robust:
   it begins where the two-parameter problem, which is well determined, has ended;
4. **support** (per-feature widths): the one-standard-error rule on the nested
   supports (:func:`~bisvm.selection.kernel_bilevel.width_support`), judged on a fresh
   split of the rows into k folds (``support_splits``), not on the folds the widths
   were tuned on; the widths of the features it drops are set to 0.

Every lower-level solve is warm-started from the previous one along the whole path,
and the first solve of every fold but the first from the first fold's solution
(:func:`~bisvm.selection.kernel_bilevel.cross_fold_start`). The squared distances of a
shared width are computed once per fold (:func:`distance_cache_fits`); a new width
costs one exponential per kernel entry.

With ``landmarks`` the same stages run on the linear L2-SVM on the Nyström features of
those rows (:mod:`~bisvm.selection.kernel_nystroem`), the lower level of ``AutoSVC``
beyond its exact sizes.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace

import numpy as np
import scipy.sparse as sp

from ..solvers.dual.kernel_lower_level import KernelL2SVM
from .kernel_bilevel import (
    KernelBilevelObjective,
    KernelHyperModel,
    kernel_pairs,
    median_gamma,
    scan_C,
    width_support,
)
from .kernel_nystroem import NystroemFeatures, NystroemSVCObjective, nystroem_pairs
from .kernel_tune_common import KernelTuneResult, prune_widths, run_outer
from .outer import BilevelResult, HistoryEntry

__all__ = ["KernelTuneResult", "tune_kernel_svc", "SCAN_C", "BETA_MAX", "C_BOUNDS",
           "GAMMA_RANGE", "SE_FRACTION", "BoxedQuasiNewton",
           "distance_cache_fits", "DISTANCE_CACHE_BYTES", "SPARSE_DENSIFY_ENTRIES"]

#: The C values of the starting scan (log-spaced over the range where the L2-SVM on
#: standardised features moves from nearly constant outputs to nearly interpolating).
SCAN_C = (0.1, 1.0, 10.0, 100.0)

#: Largest factor by which the outer loop may move C or a width from its start (the
#: ``beta_max`` of :class:`~bisvm.selection.outer.BiSVMLBFGS`): :math:`10^4` keeps C
#: below the range where the L2-SVM is a hard-margin machine whose free-set system is
#: ill-conditioned, and a width that large makes the kernel the identity on the
#: validation rows.
BETA_MAX = 1e4

#: Range of C in the shared-width stage. On standardised features the RBF Gram matrix
#: has a unit diagonal, and the L2-SVM's dual is the hard-margin dual with the ridge
#: :math:`1/C` added to that diagonal (module docstring of
#: :mod:`~bisvm.solvers.dual.kernel_lower_level`). At :math:`C = 10^4` the ridge is
#: :math:`10^{-4}` of it: every free row's slack :math:`\alpha_i/C` is then
#: :math:`10^{-4}\alpha_i`, the training rows are separated up to that slack (an RBF Gram
#: matrix of distinct rows is positive definite, so the hard-margin limit exists) and
#: the validation criterion has no room left to change beyond its standard error,
#: while SMO's iterations and the free-set system's condition number keep growing in
#: proportion to C. Below :math:`10^{-3}` the ridge dominates every kernel entry and the
#: outputs are a constant plus a vanishing correction. The grids users run stop at
#: :math:`10^3`.
C_BOUNDS = (1e-3, 1e4)

#: Range of the shared width, as multiples of the median-heuristic width: at
#: :math:`10^{-3}` the kernel is :math:`1 - \gamma D` to within :math:`10^{-6}` on
#: typical distances (the machine is linear in the features, the small-width limit), at
#: :math:`10^2` a typical kernel entry is :math:`e^{-100}` (the Gram matrix is the
#: identity: the machine memorises its rows).
GAMMA_RANGE = (1e-3, 1e2)

#: The shared-width stage stops after an iteration that lowers the criterion by less
#: than this fraction of its standard error over the validation rows: such a gain is
#: noise to the selection (a point one standard error away is as good, the
#: one-standard-error rule of Breiman et al. 1984), and pursuing it walks along the flat
#: valley of :math:`C\gamma` = constant towards large C, where every solve is slower.
SE_FRACTION = 0.1

#: Squared-distance caches (shared width) are kept when all folds' blocks fit in this
#: many bytes; beyond, distances are recomputed at each width.
DISTANCE_CACHE_BYTES = 256 * 2**20

#: Sparse training data with at most this many entries (32 MB dense) is tuned on a dense
#: copy: the kernel values are the same, and every outer iteration's weighted products
#: then run in BLAS instead of building several scipy sparse matrices per solve, whose
#: fixed cost dominates on tables of this size. Larger sparse data stays sparse.
SPARSE_DENSIFY_ENTRIES = 2**22


def distance_cache_fits(n_rows, n_folds, n_machines=1):
    """Whether the train and validation distance blocks of every fold and machine fit
    :data:`DISTANCE_CACHE_BYTES` (each fold holds about n² entries)."""
    return float(n_rows) ** 2 * 8.0 * n_folds * n_machines <= DISTANCE_CACHE_BYTES


def _free_coords(u, g, lo, hi):
    """Coordinates not held at a bound by the gradient (projected-gradient convention)."""
    return ~(((u <= lo) & (g > 0)) | ((u >= hi) & (g < 0)))


@dataclass(frozen=True)
class BoxedQuasiNewton:
    r"""An *outer optimiser* for a few hyperparameters in a box: projected BFGS with an
    Armijo backtracking search on :math:`u = \log\beta`,
    :math:`u \in [\log\beta_{lo}, \log\beta_{hi}]`, the interface of
    :class:`~bisvm.selection.outer.BiSVMLBFGS` (``minimize`` returns its
    :class:`~bisvm.selection.outer.BilevelResult`).

    Why not BiSVM L-BFGS for the shared width: its bound is one :math:`\beta_{\max}`
    for every coordinate and its stopping tests are on the gradient norm and the
    relative change of J; on the two coordinates :math:`(\log C, \log\gamma)` of a
    validation criterion that is flat to within its noise along :math:`C\gamma` =
    constant, those tests keep it walking towards the hard margin. Here each coordinate
    has its own bounds, and the run also stops once an accepted step gains less than
    ``se_fraction`` times the criterion's standard error (:data:`SE_FRACTION`).

    Lower-level solves follow HOAG's tolerance schedule (Pedregosa 2016, "Hyperparameter
    optimization with approximate gradient"): :math:`\epsilon_k = \max(\text{inner\_tol},
    \min(10^{-5}, 10^{-3}\lVert g_k\rVert))`, loose while the hypergradient is large, and
    each is warm-started from the last accepted iterate's solutions.

    Parameters
    ----------
    log_lower, log_upper : ndarray
        Bounds of :math:`\log\beta`.
    max_iter : int
    tol : float
        Stop when the projected gradient in :math:`\log\beta` has norm at most ``tol``.
    se_fraction : float
        The flatness stop (above); 0 disables it.
    max_log_step : float
        Largest change of any coordinate per step.
    max_line_search : int
        Trial points per step (each one solve per fold and machine).
    inner_tol : float
        Floor of the schedule.
    """

    log_lower: np.ndarray
    log_upper: np.ndarray
    max_iter: int = 20
    tol: float = 1e-4
    se_fraction: float = SE_FRACTION
    max_log_step: float = 2.0
    max_line_search: int = 4
    inner_tol: float = 1e-6

    def minimize(self, objective, beta0=1.0, *, warm0=None, monitor=None, monitor_warm0=None,
                 callback=None):
        """Minimise ``objective`` (its ``evaluate_se``) from ``beta0``; ``monitor`` is not
        supported (None). Returns a :class:`~bisvm.selection.outer.BilevelResult`."""
        if monitor is not None:
            raise ValueError("BoxedQuasiNewton has no held-out monitor")
        t0 = time.perf_counter()
        lo = np.asarray(self.log_lower, float)
        hi = np.asarray(self.log_upper, float)
        u = np.clip(np.log(np.broadcast_to(np.asarray(beta0, float), lo.shape)), lo, hi)
        tol_in = 1e-5
        ev, se = objective.evaluate_se(np.exp(u), warm0, tol_in)
        g = ev.grad * ev.beta
        solves, iters, trials, history = ev.lower_solves, ev.lower_iterations, [], []
        trials.append((ev.beta.copy(), ev.value))

        def record(k):
            pg = g * _free_coords(u, g, lo, hi)
            entry = HistoryEntry(
                iteration=k, beta=ev.beta.copy(), value=float(ev.value),
                grad_norm=float(np.linalg.norm(pg)),
                n_nonzero=int(max(np.sum(c > 0) for c in ev.coefs)), lower_solves=solves,
                lower_iterations=iters, seconds=time.perf_counter() - t0)
            history.append(entry)
            if callback is not None:
                callback(entry)
            return pg

        pg = record(0)
        H, converged, k = None, False, 0
        for k in range(1, self.max_iter + 1):
            free = _free_coords(u, g, lo, hi)
            if np.linalg.norm(pg) <= self.tol:
                converged = True
                break
            p = -pg if H is None else -(H @ pg)
            p[~free] = 0.0
            if H is None or p @ pg >= 0:
                # first step, or a curvature estimate gone bad: steepest descent scaled
                # to a unit change of the largest coordinate
                H, p = None, -pg / np.abs(pg).max()
            p *= min(1.0, self.max_log_step / np.abs(p).max())
            step, new = 1.0, None
            for _ in range(self.max_line_search):
                u_try = np.clip(u + step * p, lo, hi)
                ev_t, se_t = objective.evaluate_se(np.exp(u_try), ev.coefs, tol_in)
                solves += ev_t.lower_solves
                iters += ev_t.lower_iterations
                trials.append((ev_t.beta.copy(), ev_t.value))
                if ev_t.value <= ev.value + 1e-4 * float(g @ (u_try - u)):
                    new = (u_try, ev_t, se_t)
                    break
                step *= 0.25
            if new is None:  # no decrease along the search direction: a stationary point
                converged = True
                break
            u_new, ev_new, se_new = new
            g_new = ev_new.grad * ev_new.beta
            s_, y_ = u_new - u, g_new - g
            sy = float(s_ @ y_)
            if sy > 1e-12:
                if H is None:
                    H = np.eye(u.size) * sy / float(y_ @ y_)
                rho = 1.0 / sy
                V = np.eye(u.size) - rho * np.outer(s_, y_)
                H = V @ H @ V.T + rho * np.outer(s_, s_)
            gain = ev.value - ev_new.value
            u, ev, g, se = u_new, ev_new, g_new, se_new
            pg = record(k)
            tol_in = max(self.inner_tol, min(1e-5, 1e-3 * float(np.linalg.norm(pg))))
            if gain < self.se_fraction * se:
                converged = True
                break
        return BilevelResult(beta=ev.beta, value=float(ev.value), coefs=ev.coefs,
                             history=tuple(history), n_iter=len(history) - 1,
                             lower_solves=solves, lower_iterations=iters,
                             trials=tuple(trials), converged=converged,
                             seconds=time.perf_counter() - t0)


def _outer(obj, warm, max_iter, tol, callback=None):
    """BiSVM L-BFGS from β = 1 with HOAG's schedule; lower solves polished to exact
    free-set solutions, so the inner tolerance floor is SMO's (1e-6 → gap 1e-4)."""
    return run_outer(obj, warm, max_iter=max_iter, tol=tol, beta_max=BETA_MAX,
                     inner_tol=1e-6, callback=callback)


def _with_progress(progress, stage, run):
    """``run(report)`` with a progress report for ``stage`` (or None), closed however the
    run ends."""
    report = None if progress is None else progress(stage)
    try:
        return run(report)
    finally:
        if report is not None:
            report.close()


def tune_kernel_svc(X, y_enc, n_classes, splits, *, widths="shared", loss="squared_hinge",
                    multiclass="ovo", Cs=SCAN_C, max_iter=50, tol=1e-4, lower=None,
                    support_rule="1se", support_splits=None, row_weight=None,
                    se_fraction=SE_FRACTION, progress=None, landmarks=None):
    r"""Learn C and the RBF widths of an L2-SVM by hypergradient descent of a k-fold
    criterion (the stages of the module docstring).

    Parameters
    ----------
    X : ndarray or sparse matrix, shape (n, d)
        Training features (already standardised if so wanted).
    y_enc : ndarray of int, shape (n,)
        Class indices 0..n_classes-1.
    n_classes : int
    splits : sequence of (train_idx, val_idx)
    widths : {"shared", "per_feature"}
    loss : str
        Validation criterion (:data:`~bisvm.selection.kernel_bilevel.KERNEL_CRITERIA`).
    multiclass : {"ovo", "ovr"}
    Cs : sequence of float
        The starting scan.
    max_iter : int
        Outer iterations per stage.
    tol : float
        Outer gradient-norm tolerance (in log-parameters).
    lower : KernelL2SVM, optional
    support_rule : {"1se", "none"}
        Per-feature widths: the one-standard-error support rule, or keep every feature.
    support_splits : sequence of (train_idx, val_idx), optional
        The folds of the support rule (default: ``splits``, which biases the rule
        towards keeping weak widths).
    row_weight : ndarray of shape (n,), optional
        Class weight × sample weight of each row: multipliers of C in training, weights
        of the rows in the criterion (:func:`~bisvm.selection.kernel_bilevel.kernel_pairs`).
    se_fraction : float
        The shared-width stage's flatness stop (:data:`SE_FRACTION`).
    progress : callable, optional
        ``progress(stage)`` returns the per-iteration callback of that stage (with
        ``close()``), e.g. :class:`bisvm.progress.OuterIterations`.
    landmarks : ndarray of shape (m, d), optional
        Landmark rows: tune the linear L2-SVM on their Nyström features
        (:mod:`~bisvm.selection.kernel_nystroem`) instead of the exact kernel machine;
        ``lower`` is then unused.

    Returns
    -------
    KernelTuneResult
    """
    lower = KernelL2SVM() if lower is None else lower
    n, d = X.shape
    if sp.issparse(X) and n * d <= SPARSE_DENSIFY_ENTRIES:
        X = X.toarray()
    n_machines = 1 if n_classes == 2 else (
        n_classes * (n_classes - 1) // 2 if multiclass == "ovo" else n_classes)
    if landmarks is None:
        folds = kernel_pairs(X, y_enc, n_classes, splits, multiclass,
                             cache_distances=distance_cache_fits(n, len(splits), n_machines),
                             row_weight=row_weight)

        def make(hyper, lower_, folds_=folds):
            return KernelBilevelObjective(folds_, lower_, hyper, loss)

        def support_folds(split):
            return kernel_pairs(X, y_enc, n_classes, split, multiclass, row_weight=row_weight)
    else:
        feats = NystroemFeatures.build(X, landmarks, DISTANCE_CACHE_BYTES)
        folds = nystroem_pairs(y_enc, n_classes, splits, multiclass, row_weight)

        def make(hyper, lower_, folds_=folds):
            return NystroemSVCObjective(feats, folds_, hyper, loss)

        def support_folds(split):
            return nystroem_pairs(y_enc, n_classes, split, multiclass, row_weight)
    # rows of weight 0 take no part in the fit, nor in its start
    g0 = median_gamma(X if row_weight is None else X[np.flatnonzero(row_weight > 0)])
    # the scan needs values only: SMO's solutions, unpolished, are its warm starts
    shared0 = make(KernelHyperModel("shared", d, 1.0, g0), replace(lower, polish=False))
    C0, warm, scan_vals = scan_C(shared0, np.array([g0]), sorted(Cs), from_middle=True)
    solves = int(np.sum(np.isfinite(scan_vals))) * shared0.n_problems
    hyper = KernelHyperModel("shared", d, C0, g0)
    obj = make(hyper, lower)
    box = BoxedQuasiNewton(
        np.log([C_BOUNDS[0] / C0, GAMMA_RANGE[0]]), np.log([C_BOUNDS[1] / C0, GAMMA_RANGE[1]]),
        max_iter=max_iter, tol=tol, se_fraction=se_fraction)
    res = _with_progress(progress, "shared width",
                         lambda report: box.minimize(obj, 1.0, warm0=warm, callback=report))
    C, gamma = hyper.params(res.beta)
    value, warm, history = res.value, res.coefs, (res.history,)
    solves += res.lower_solves
    support, threshold, tests = None, 0.0, ()
    if widths == "per_feature":
        g = float(gamma[0])
        hyper = KernelHyperModel("per_feature", d, C, g)
        obj = make(hyper, lower)
        res = _with_progress(progress, "per-feature widths",
                             lambda report: _outer(obj, warm, max_iter, tol, report))
        C, gamma = hyper.params(res.beta)
        value, warm = res.value, res.coefs
        history += (res.history,)
        solves += res.lower_solves
        support = np.arange(d)
        if support_rule == "1se" and d > 1:
            if support_splits is not None:
                obj, warm = make(hyper, lower, support_folds(support_splits)), None
            dec = width_support(obj, C, gamma, gamma / gamma.sum(), warm)
            support, threshold, tests = dec.support, dec.threshold, dec.tested
            solves += dec.n_solves * obj.n_problems
    return KernelTuneResult(C=float(C), gamma=np.array(gamma, dtype=float),
                            gamma_support=prune_widths(gamma, support),
                            support=support, threshold=float(threshold), value=float(value),
                            gamma0=float(g0), C0=float(C0), scan_values=scan_vals,
                            history=history, n_solves=int(solves), support_tests=tests)
