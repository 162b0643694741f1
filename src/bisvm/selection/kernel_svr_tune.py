r"""One self-tuning ε-SVR fit: C, ε and the RBF widths (one shared, or one per feature)
of the L2-loss ε-SVR learned by hypergradient descent of the k-fold validation mean
squared error.

The roles of the bilevel engine, filled for kernel regression (the classification side
is :mod:`~bisvm.selection.kernel_bilevel`):

* **model**: :func:`~bisvm.solvers.dual.kernel_svr_lower_level.solve_l2svr`, exact on
  its free set; :class:`SVRHyperModel` maps the outer variables onto
  :math:`(C, \varepsilon, \gamma)`;
* **criterion**: the validation mean squared error :math:`\frac1{n_V}\lVert y_V -
  f_V\rVert^2` of each fold, folds weighing equally;
* **hypergradient**: one adjoint solve of the free-set KKT system per fold
  (:func:`~bisvm.solvers.dual.kernel_svr_lower_level.l2svr_hypergradient`; Keerthi,
  Sindhwani & Chapelle 2007);
* **outer optimiser**: :class:`~bisvm.selection.outer.BiSVMLBFGS` on :math:`\log\beta`.

The stages mirror :mod:`~bisvm.selection.kernel_fit`: :math:`\varepsilon_0 = 0.1` (a
tenth of the standardised target's spread), C and the width from a short scan (each C
at the median-heuristic width, a tenth and ten times it: the criterion is often bimodal
in the width), BiSVM L-BFGS on :math:`(\log C, \log\varepsilon, \log\gamma)`, then on
:math:`(\log C, \log\varepsilon, \log\gamma_1, …, \log\gamma_d)` from the shared
optimum, then the one-standard-error width support on fresh folds. Every solve is
warm-started from the previous free set of its fold.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from ..solvers.dual.kernel_svr_lower_level import (
    SVRFold,
    l2svr_hypergradient,
    l2svr_outputs,
    solve_l2svr,
)
from .bilevel import Evaluation
from .kernel_bilevel import median_gamma, width_support
from .kernel_fit import DISTANCE_CACHE_BYTES, distance_cache_fits
from .kernel_nystroem import NystroemFeatures, NystroemSVRObjective, nystroem_svr_folds
from .kernel_ridge_tune import GAMMA_FACTORS
from .kernel_tune_common import KernelTuneResult, prune_widths, run_outer

__all__ = ["SVRHyperModel", "KernelSVRObjective", "tune_kernel_svr",
           "svr_folds", "SCAN_C_SVR", "EPSILON0", "SVR_BETA_MAX"]

#: The C values of the starting scan (standardised features and target).
SCAN_C_SVR = (0.1, 1.0, 10.0, 100.0)

#: Starting tube half-width on the standardised target.
EPSILON0 = 0.1

#: Largest factor by which the outer loop may move C, ε or a width from its start.
SVR_BETA_MAX = 1e4


@dataclass(frozen=True)
class SVRHyperModel:
    r""":math:`C = C_0\beta_0`, :math:`\varepsilon = \varepsilon_0\beta_1`,
    :math:`\gamma_j = \gamma_0\beta_{2+j}` (one shared width or one per feature)."""

    widths: str
    n_features: int
    C_ref: float
    epsilon_ref: float
    gamma_ref: float

    @property
    def n_hyper(self):
        return 2 + (self.n_features if self.widths == "per_feature" else 1)

    def params(self, beta):
        """``(C, epsilon, gamma)`` at ``beta``."""
        beta = np.asarray(beta, dtype=float)
        return (self.C_ref * float(beta[0]), self.epsilon_ref * float(beta[1]),
                self.gamma_ref * beta[2:])


def svr_folds(X, y, splits, cache_distances=False, sw=None):
    """One :class:`SVRFold` per ``(train, validation)`` split (``sw``: positive sample
    weights of the rows)."""
    return tuple(SVRFold.build(X[tr], y[tr], X[va], y[va], cache_distances,
                               None if sw is None else sw[tr], None if sw is None else sw[va])
                 for tr, va in splits)


def _val_weights(fold):
    """Weights of the fold's validation rows in its mean squared error (sum 1)."""
    n = fold.y_val.size
    return np.full(n, 1.0 / n) if fold.sw_val is None else fold.sw_val / fold.sw_val.sum()


@dataclass(frozen=True)
class KernelSVRObjective:
    r"""The upper level :math:`\beta\mapsto J`, the mean over folds of the validation mean
    squared error (weighted by the validation rows' sample weights, if any) of the
    L2-loss ε-SVR, with its hypergradient.

    ``coefs`` are the per-fold expansions β (the warm starts of the next solves).
    ``epsilon`` fixes ε for :meth:`terms` called with ``(C, gamma)`` only, the interface
    of :func:`~bisvm.selection.kernel_bilevel.width_support`.
    """

    folds: tuple
    hyper: SVRHyperModel
    epsilon: float = EPSILON0

    def solve(self, C, eps, gamma, warm=None):
        """Per fold, the solution at ``(C, eps, gamma)``."""
        starts = [None] * len(self.folds) if warm is None else warm
        return tuple(solve_l2svr(f, C, eps, gamma, w) for f, w in zip(self.folds, starts))

    @staticmethod
    def coefs(solutions):
        """Per fold, the expansion β."""
        return tuple(s.beta for s in solutions)

    def terms(self, C, gamma, warm=None, tol=None, epsilon=None):
        """Per-row squared validation errors and weights (``value = weights @ terms``;
        each fold weighs 1/k), and the solutions; ``tol`` is accepted for the interface
        (the solves are exact)."""
        eps = self.epsilon if epsilon is None else epsilon
        sols = self.solve(C, eps, np.atleast_1d(gamma), warm)
        ts, ws = [], []
        for f, s in zip(self.folds, sols):
            fv, _ = l2svr_outputs(f, s)
            ts.append((f.y_val - fv) ** 2)
            ws.append(_val_weights(f) / len(self.folds))
        return np.concatenate(ts), np.concatenate(ws), sols

    def evaluate(self, beta, warm=None, tol=None, adjoint_warm=None):
        r""":math:`J(\beta)` and :math:`\nabla_\beta J`."""
        beta = np.asarray(beta, dtype=float)
        C, eps, gamma = self.hyper.params(beta)
        sols = self.solve(C, eps, gamma, warm)
        vals, grads = [], []
        for f, s in zip(self.folds, sols):
            fv, KVF = l2svr_outputs(f, s)
            res = f.y_val - fv
            w = _val_weights(f)
            vals.append(float(w @ res**2))
            grads.append(l2svr_hypergradient(f, s, -2.0 * w * res, KVF))
        return Evaluation(beta=beta, value=float(np.mean(vals)),
                          grad=np.mean(grads, axis=0) / beta, coefs=self.coefs(sols),
                          lower_iterations=sum(s.n_iter for s in sols),
                          lower_solves=len(self.folds))


def tune_kernel_svr(X, y, splits, *, sw=None, widths="shared", Cs=SCAN_C_SVR,
                    epsilon0=EPSILON0, max_iter=50, tol=1e-4, support_rule="1se",
                    support_splits=None, landmarks=None):
    r"""Learn C, ε and the RBF widths of the L2-loss ε-SVR by hypergradient descent of
    the k-fold validation mean squared error (module docstring).

    Parameters
    ----------
    X : ndarray, shape (n, d)
        Training features (already standardised if so wanted); sparse rows are
        densified, as each fold's solves hold dense n×n Gram blocks.
    y : ndarray, shape (n,)
        Target (standardised: ``Cs`` and ``epsilon0`` assume unit spread).
    splits : sequence of (train_idx, val_idx)
    sw : ndarray of shape (n,), optional
        Positive sample weights (a row's C is :math:`Cs_i`; validation errors are
        weighted means).
    widths : {"shared", "per_feature"}
    Cs : sequence of float
        The starting scan.
    epsilon0 : float
        Starting ε (> 0: it is learned on a log scale).
    max_iter, tol
        Outer iterations per stage and gradient-norm tolerance.
    support_rule : {"1se", "none"}
    support_splits : sequence of (train_idx, val_idx), optional
        Folds of the support rule (default: ``splits``).
    landmarks : ndarray of shape (m, d), optional
        Landmark rows: tune the linear L2-loss ε-SVR on their Nyström features
        (:mod:`~bisvm.selection.kernel_nystroem`; X may then stay sparse) instead of the
        exact kernel machine.

    Returns
    -------
    KernelTuneResult
        With ``epsilon`` on the scale of ``y``.
    """
    if widths not in ("shared", "per_feature"):
        raise ValueError(f"widths must be 'shared' or 'per_feature', got {widths!r}")
    if not epsilon0 > 0:
        raise ValueError(f"epsilon0 must be > 0, got {epsilon0!r}")
    if landmarks is None:
        X = X.toarray() if sp.issparse(X) else np.asarray(X, dtype=float)
    y = np.asarray(y, dtype=float)
    sw = None if sw is None else np.asarray(sw, dtype=float)
    n, d = X.shape
    if landmarks is None:
        folds = svr_folds(X, y, splits, distance_cache_fits(n, len(splits)), sw)

        def make(hyper, eps, folds_=folds):
            return KernelSVRObjective(folds_, hyper, eps)

        def support_folds(split):
            return svr_folds(X, y, split, False, sw)
    else:
        feats = NystroemFeatures.build(X, landmarks, DISTANCE_CACHE_BYTES)
        folds = nystroem_svr_folds(y, splits, sw)

        def make(hyper, eps, folds_=folds):
            return NystroemSVRObjective(feats, folds_, hyper, eps)

        def support_folds(split):
            return nystroem_svr_folds(y, split, sw)
    g0 = median_gamma(X)
    scan_obj = make(SVRHyperModel("shared", d, 1.0, epsilon0, g0), epsilon0)
    # the criterion is often bimodal in the width: the scan tries three widths
    best, vals = None, []
    for fac in GAMMA_FACTORS:
        warm = None
        for C in sorted(Cs):
            t, w, sols = scan_obj.terms(C, np.array([g0 * fac]), warm)
            warm = scan_obj.coefs(sols)
            vals.append(float(w @ t))
            if best is None or vals[-1] < best[1]:
                best = (C, vals[-1], warm, g0 * fac)
    C0, warm, g0 = best[0], best[2], best[3]
    vals = np.reshape(vals, (len(GAMMA_FACTORS), len(Cs)))
    solves = vals.size * len(folds)
    hyper = SVRHyperModel("shared", d, C0, epsilon0, g0)
    res = run_outer(make(hyper, epsilon0), warm, max_iter=max_iter, tol=tol,
                    beta_max=SVR_BETA_MAX)
    C, eps, gamma = hyper.params(res.beta)
    value, warm, history = res.value, res.coefs, (res.history,)
    solves += res.lower_solves
    support, threshold, tests = None, 0.0, ()
    if widths == "per_feature":
        hyper = SVRHyperModel("per_feature", d, C, eps, float(gamma[0]))
        obj = make(hyper, eps)
        res = run_outer(obj, warm, max_iter=max_iter, tol=tol, beta_max=SVR_BETA_MAX)
        C, eps, gamma = hyper.params(res.beta)
        value, warm, history = res.value, res.coefs, history + (res.history,)
        solves += res.lower_solves
        support = np.arange(d)
        if support_rule == "1se" and d > 1:
            obj = make(hyper, eps)
            if support_splits is not None:
                obj, warm = make(hyper, eps, support_folds(support_splits)), None
            dec = width_support(obj, C, gamma, gamma / gamma.sum(), warm)
            support, threshold, tests = dec.support, dec.threshold, dec.tested
            solves += dec.n_solves * len(obj.folds)
    return KernelTuneResult(
        C=float(C), epsilon=float(eps), gamma=np.array(gamma, dtype=float),
        gamma_support=prune_widths(gamma, support), support=support,
        threshold=float(threshold), value=float(value), gamma0=float(g0), C0=float(C0),
        scan_values=vals, history=history, n_solves=int(solves), support_tests=tests)
