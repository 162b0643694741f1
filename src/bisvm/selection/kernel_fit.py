r"""One self-tuning kernel fit, stage by stage (the driver of ``AutoSVC``):

1. **start**: the median-heuristic width :math:`\gamma_0` (:func:`~bisvm.selection.
   kernel_bilevel.median_gamma`) and C from a short warm-started scan at
   :math:`\gamma_0` (:func:`~bisvm.selection.kernel_bilevel.scan_C`);
2. **shared width**: BiSVM L-BFGS on :math:`(\log C, \log\gamma)`;
3. **per-feature widths** (``widths="per_feature"``): BiSVM L-BFGS on
   :math:`(\log C, \log\gamma_1, …, \log\gamma_d)` from the shared optimum, the
   automatic relevance determination of Chapelle, Vapnik, Bousquet & Mukherjee (2002);
   starting from the shared solution is what makes the d-dimensional descent robust:
   it begins where the two-parameter problem, which is well determined, has ended;
4. **support** (per-feature widths): the one-standard-error rule on the nested
   supports (:func:`~bisvm.selection.kernel_bilevel.width_support`), judged on a fresh
   split of the rows into k folds (``support_splits``), not on the folds the widths
   were tuned on; the widths of the features it drops are set to 0.

Every lower-level solve is warm-started from the previous one along the whole path.
"""

from __future__ import annotations

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
from .outer import BiSVMLBFGS

__all__ = ["KernelTuneResult", "tune_kernel_svc", "SCAN_C", "BETA_MAX",
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


@dataclass(frozen=True)
class KernelTuneResult:
    """Outcome of :func:`tune_kernel_svc`.

    Attributes
    ----------
    C : float
    gamma : ndarray
        Learned widths (one entry for a shared width), before the support rule.
    gamma_support : ndarray
        The widths of the final model: ``gamma`` with dropped features set to 0.
    support : ndarray of int or None
        Features kept (per-feature widths only).
    threshold : float
        Relevance at and above which a feature is kept (importance of the weakest kept
        feature; 0 for a shared width).
    value : float
        The k-fold criterion at (C, gamma).
    gamma0, C0 : float
        The start (median heuristic, scan).
    scan_values : ndarray
        Criterion at each C of the scan.
    history : tuple
        The :class:`~bisvm.selection.outer.HistoryEntry` of each outer stage run.
    n_solves : int
        Lower-level solves in total (one per binary problem and fold each).
    support_tests : tuple
        ``(k, increase, standard error)`` of each support size tested.
    """

    C: float
    gamma: np.ndarray
    gamma_support: np.ndarray
    support: np.ndarray | None
    threshold: float
    value: float
    gamma0: float
    C0: float
    scan_values: np.ndarray
    history: tuple
    n_solves: int
    support_tests: tuple = ()


def _outer(obj, warm, max_iter, tol):
    """BiSVM L-BFGS from β = 1 with HOAG's schedule; lower solves polished to exact
    free-set solutions, so the inner tolerance floor is SMO's (1e-6 → gap 1e-4)."""
    opt = BiSVMLBFGS(max_iter=max_iter, tol=tol, ftol=1e-6, beta_max=BETA_MAX,
                     predictor=False, inner_tol=1e-6, warn=False, max_line_search=10)
    return opt.minimize(obj, 1.0, warm0=warm)


def tune_kernel_svc(X, y_enc, n_classes, splits, *, widths="shared", loss="squared_hinge",
                    multiclass="ovo", Cs=SCAN_C, max_iter=50, tol=1e-4, lower=None,
                    support_rule="1se", support_splits=None):
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
    folds = kernel_pairs(X, y_enc, n_classes, splits, multiclass,
                         cache_distances=distance_cache_fits(n, len(splits), n_machines))
    g0 = median_gamma(X)
    # the scan needs values only: SMO's solutions, unpolished, are its warm starts
    shared0 = KernelBilevelObjective(folds, replace(lower, polish=False),
                                     KernelHyperModel("shared", d, 1.0, g0), loss)
    C0, warm, scan_vals = scan_C(shared0, np.array([g0]), sorted(Cs))
    solves = len(Cs) * shared0.n_problems
    hyper = KernelHyperModel("shared", d, C0, g0)
    obj = KernelBilevelObjective(folds, lower, hyper, loss)
    res = _outer(obj, warm, max_iter, tol)
    C, gamma = hyper.params(res.beta)
    value, warm, history = res.value, res.coefs, (res.history,)
    solves += res.lower_solves
    support, threshold, tests = None, 0.0, ()
    if widths == "per_feature":
        g = float(gamma[0])
        hyper = KernelHyperModel("per_feature", d, C, g)
        obj = KernelBilevelObjective(folds, lower, hyper, loss)
        res = _outer(obj, warm, max_iter, tol)
        C, gamma = hyper.params(res.beta)
        value, warm = res.value, res.coefs
        history += (res.history,)
        solves += res.lower_solves
        support = np.arange(d)
        if support_rule == "1se" and d > 1:
            if support_splits is not None:
                obj, warm = KernelBilevelObjective(
                    kernel_pairs(X, y_enc, n_classes, support_splits, multiclass),
                    lower, hyper, loss), None
            dec = width_support(obj, C, gamma, gamma / gamma.sum(), warm)
            support, threshold, tests = dec.support, dec.threshold, dec.tested
            solves += dec.n_solves * obj.n_problems
    gs = np.array(gamma, dtype=float)
    if support is not None:
        mask = np.zeros(d, dtype=bool)
        mask[support] = True
        gs[~mask] = 0.0
    return KernelTuneResult(C=float(C), gamma=np.array(gamma, dtype=float), gamma_support=gs,
                            support=support, threshold=float(threshold), value=float(value),
                            gamma0=float(g0), C0=float(C0), scan_values=scan_vals,
                            history=history, n_solves=int(solves), support_tests=tests)
