r"""The self-tuning kernel machines on a Nyström approximation of the kernel: the L2-SVM
of :class:`~bisvm.AutoSVC` and the L2-loss ε-SVR of :class:`~bisvm.AutoSVR` beyond the
sizes where their exact lower levels hold n×n Gram matrices.

With m landmark rows Z, the RBF kernel is replaced by :math:`\Phi\Phi^\top`,
:math:`\Phi = K(X, Z)L^{-\top}`, :math:`LL^\top = K(Z, Z)` (Williams & Seeger 2001,
"Using the Nyström method to speed up kernel machines";
:mod:`bisvm.solvers.nystroem`), and the lower level is the *linear* machine on the
features Φ with an unpenalised intercept, solved exactly by the finite Newton method
(:func:`~bisvm.solvers.nystroem.solve_piecewise_l2`). The roles of the bilevel engine:

* **model**: the linear L2-SVM (squared hinge) or L2-loss ε-SVR on Φ, one machine per
  binary problem (one-vs-one or one-vs-rest, as :class:`~bisvm.SVC`) and fold;
* **criterion**: the same validation criteria as the exact machines (a classifier
  criterion of :mod:`~bisvm.selection.criteria` on the outputs, or the validation mean
  squared error);
* **hypergradient**: one adjoint solve with the Newton matrix per machine and fold
  (:func:`~bisvm.solvers.nystroem.piecewise_l2_hypergradient`), giving
  :math:`\partial J/\partial\log C`, :math:`\partial J/\partial\log\varepsilon` and
  :math:`\partial J/\partial\Phi` as low-rank factors; the widths then enter through
  Φ's dependence on them, :math:`\partial\Phi/\partial\log\gamma_j`, by
  :func:`~bisvm.solvers.nystroem.nystroem_width_grad`, once per evaluation for all
  folds and machines (the gradient is linear in :math:`\partial J/\partial\Phi`);
* **outer optimiser**: unchanged (:mod:`~bisvm.selection.kernel_fit`,
  :mod:`~bisvm.selection.kernel_svr_tune`).

**One landmark set for all folds.** The landmarks are drawn from all the rows given,
by their features only (no labels), and the features Φ of all rows are computed once
per width and shared by the folds: the per-evaluation cost is one :math:`O(nm^2)`
feature map and, per machine and fold, a few Newton steps of :math:`O(n_Am^2)` on the
:math:`n_A` active rows. A validation row may be a landmark; its label is never seen by
the fold's machine, so the validation criterion stays an out-of-sample estimate.
The landmarks stay fixed while the widths move: the gradient is that of the criterion
of this approximate machine, exact for it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from ..kernels import squared_distances
from ..solvers.nystroem import (
    nystroem_blocks,
    nystroem_width_grad,
    piecewise_l2_hypergradient,
    solve_piecewise_l2,
)
from .bilevel import Evaluation
from .criteria import make_criterion
from .kernel_bilevel import binary_machines
from .one_se import weighted_mean_se

__all__ = ["NystroemFeatures", "FeatureMachine", "nystroem_pairs", "nystroem_svr_folds",
           "NystroemSVCObjective", "NystroemSVRObjective"]


@dataclass(frozen=True)
class NystroemFeatures:
    """The rows X, the landmarks Z and the squared distances ``(D_XZ, D_ZZ)`` a shared
    width reuses; :meth:`blocks` caches the features of the last width asked for (the
    scan and the support rule evaluate several C, or supports, at one width)."""

    X: object
    Z: np.ndarray
    sqdist: tuple | None = None
    _cache: dict = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def build(cls, X, Z, cache_bytes=np.inf):
        """The features of ``X`` (dense or CSR) on the landmark rows ``Z``; the squared
        distances of a shared width are kept when their n × (m + 1) entries fit
        ``cache_bytes``."""
        Z = np.asarray(Z.toarray() if sp.issparse(Z) else Z, dtype=float)
        fits = 8.0 * X.shape[0] * (Z.shape[0] + 1) <= cache_bytes
        D = (squared_distances(X, Z), squared_distances(Z, Z)) if fits else None
        return cls(X, Z, D)

    def blocks(self, gamma):
        """``(B, C, L, Phi)`` of :func:`~bisvm.solvers.nystroem.nystroem_blocks`."""
        g = np.atleast_1d(np.asarray(gamma, dtype=float))
        key = g.tobytes()
        if self._cache.get("key") != key:
            self._cache.clear()
            self._cache["blocks"] = nystroem_blocks(self.X, self.Z, g,
                                                    self.sqdist if g.size == 1 else None)
            self._cache["key"] = key
        return self._cache["blocks"]

    def width_grad(self, gamma, U, V):
        r""":math:`\partial J/\partial\log\gamma` for :math:`\partial J/\partial\Phi =
        UV^\top`."""
        g = np.atleast_1d(np.asarray(gamma, dtype=float))
        return nystroem_width_grad(self.X, self.Z, g, (U, V),
                                   self.sqdist if g.size == 1 else None, self.blocks(g))


@dataclass(frozen=True)
class FeatureMachine:
    """One machine of one fold: its training rows (indices into the feature rows), their
    targets (±1 labels, or real values for regression) and costs (multipliers of C),
    its validation rows, their targets and weights in the criterion."""

    train: np.ndarray
    y_train: np.ndarray
    cost: np.ndarray
    val: np.ndarray
    y_val: np.ndarray
    weight_val: np.ndarray | None = None

    def pieces(self, epsilon=None):
        """``(rows, sign, offset, cost)`` of the squared hinge (``epsilon`` None) or of
        the squared ε-insensitive loss (two pieces per row)."""
        n = self.train.size
        if epsilon is None:
            return np.arange(n), self.y_train, np.ones(n), self.cost
        return (np.r_[np.arange(n), np.arange(n)], np.r_[np.ones(n), -np.ones(n)],
                np.r_[self.y_train - epsilon, -self.y_train - epsilon],
                np.r_[self.cost, self.cost])


def nystroem_pairs(y_enc, n_classes, splits, multiclass="ovo", row_weight=None):
    """Per fold, a tuple of :class:`FeatureMachine`: the binary machines of
    ``multiclass`` as :func:`~bisvm.selection.kernel_bilevel.kernel_pairs` builds them
    (label +1 for the machine's first class; rows of weight 0 left out; machines whose
    training or validation rows lack a class dropped)."""
    machines = binary_machines(n_classes, multiclass)
    rw = None if row_weight is None else np.asarray(row_weight, dtype=float)
    folds = []
    for tr, va in splits:
        tr, va = np.asarray(tr), np.asarray(va)
        out = []
        for a, b in machines:
            itr = tr if b is None else tr[np.isin(y_enc[tr], (a, b))]
            iva = va if b is None else va[np.isin(y_enc[va], (a, b))]
            if rw is not None:
                itr, iva = itr[rw[itr] > 0], iva[rw[iva] > 0]
            yt = np.where(y_enc[itr] == a, 1.0, -1.0)
            if iva.size == 0 or yt.size == 0 or np.ptp(yt) == 0:
                continue
            out.append(FeatureMachine(
                itr, yt, np.ones(itr.size) if rw is None else rw[itr], iva,
                np.where(y_enc[iva] == a, 1.0, -1.0), None if rw is None else rw[iva]))
        if out:
            folds.append(tuple(out))
    if not folds:
        raise ValueError("no fold has training rows of two classes and validation rows")
    return tuple(folds)


def nystroem_svr_folds(y, splits, sw=None):
    """One regression :class:`FeatureMachine` per ``(train, validation)`` split, as a
    one-machine fold (``sw``: positive sample weights, the training rows' multipliers
    of C and the validation rows' weights)."""
    y = np.asarray(y, dtype=float)
    out = []
    for tr, va in splits:
        tr, va = np.asarray(tr), np.asarray(va)
        out.append((FeatureMachine(tr, y[tr], np.ones(tr.size) if sw is None else sw[tr],
                                   va, y[va], None if sw is None else sw[va]),))
    return tuple(out)


class _FeatureObjective:
    """What the two objectives share: solving every machine at one point, their
    warm-start format, and assembling value and hypergradient."""

    @property
    def n_problems(self):
        return sum(len(f) for f in self.folds)

    def _solve(self, C, gamma, warm, epsilon=None):
        Phi = self.features.blocks(gamma)[3]
        sols = []
        for i, fold in enumerate(self.folds):
            starts = self._split(warm, i, Phi.shape[1] + 1)
            sols.append(tuple(
                solve_piecewise_l2(Phi[mc.train], *mc.pieces(epsilon), C, t0)
                for mc, t0 in zip(fold, starts)))
        return Phi, tuple(sols)

    def _split(self, warm, i, size):
        if warm is None:
            return [None] * len(self.folds[i])
        vec = np.asarray(warm[i], dtype=float)
        return list(vec.reshape(len(self.folds[i]), size))

    @staticmethod
    def coefs(solutions):
        """Per fold, the machines' (b, w) concatenated: the warm start format."""
        return tuple(np.concatenate([s.theta for s in fold]) for fold in solutions)

    def _outputs(self, Phi, mc, sol):
        return Phi[mc.val] @ sol.theta[1:] + sol.theta[0]

    def _assemble(self, beta, C, gamma, epsilon, Phi, sols, value_grad):
        """Value, hypergradient in log-parameters and pooled terms; ``value_grad(mc, k,
        f)`` returns ``(J, dJ/df, terms, weights)`` of machine ``mc`` (``k``-th)."""
        n, P = Phi.shape[0], self.n_problems
        Us, Vs, vals, ts, ws = [], [], [], [], []
        dC = deps = 0.0
        k = 0
        for fold, fs in zip(self.folds, sols):
            for mc, s in zip(fold, fs):
                f = self._outputs(Phi, mc, s)
                J, e, t, w = value_grad(mc, k, f)
                k += 1
                rows, sign, off, cost = mc.pieces(epsilon)
                dlc, dt, (U, V), wv = piecewise_l2_hypergradient(
                    Phi[mc.train], rows, sign, off, cost, s, Phi[mc.val], e)
                dC += dlc / P
                if epsilon is not None:
                    deps += float(dt @ (-epsilon * sign[s.active])) / P
                Ug = np.zeros((n, 3))
                Ug[mc.train, :2] = U
                Ug[mc.val, 2] = e
                Us.append(Ug / P)
                Vs.append(np.column_stack([V, wv]))
                vals.append(J)
                ts.append(t)
                ws.append(w / P)
        gw = self.features.width_grad(gamma, np.hstack(Us), np.hstack(Vs))
        grad_log = np.r_[dC, deps, gw] if epsilon is not None else np.r_[dC, gw]
        ev = Evaluation(beta=beta, value=float(np.mean(vals)), grad=grad_log / beta,
                        coefs=self.coefs(sols),
                        lower_iterations=sum(s.n_iter for f in sols for s in f),
                        lower_solves=P)
        return ev, np.concatenate(ts), np.concatenate(ws)


@dataclass(frozen=True)
class NystroemSVCObjective(_FeatureObjective):
    r"""The upper level of :class:`~bisvm.AutoSVC` on Nyström features: the mean over
    folds and binary machines of the validation criterion ``loss`` of the linear L2-SVM
    on Φ, with its hypergradient in :math:`(\log C, \log\gamma)` (module docstring); the
    interface of :class:`~bisvm.selection.kernel_bilevel.KernelBilevelObjective`
    (``terms``, ``error_terms``, ``evaluate``, ``evaluate_se``, ``coefs``)."""

    features: NystroemFeatures
    folds: tuple
    hyper: object
    loss: str = "scaled_squared_hinge"
    _criteria: tuple = field(init=False, repr=False)

    def __post_init__(self):
        crits = tuple(tuple(make_criterion(self.loss, sp.identity(mc.val.size, format="csr"),
                                           mc.y_val, mc.weight_val) for mc in fold)
                      for fold in self.folds)
        object.__setattr__(self, "_criteria", crits)

    def solve(self, C, gamma, warm=None, tol=None):
        """Per fold, the machines' solutions at ``(C, gamma)`` (exact: ``tol`` unused)."""
        return self._solve(C, gamma, warm)[1]

    def terms(self, C, gamma, warm=None, tol=None):
        """Pooled per-row criterion terms and weights (``value = weights @ terms``)
        and the solutions."""
        return self._pooled(C, gamma, warm, lambda f, mc, crit: crit.terms(f))

    def error_terms(self, C, gamma, warm=None, tol=None):
        """Pooled misclassification indicators with the weights of :meth:`terms`."""
        return self._pooled(C, gamma, warm, lambda f, mc, crit: (
            (np.sign(f) != mc.y_val).astype(float), crit.terms(f)[1]))

    def _pooled(self, C, gamma, warm, per_row):
        """``per_row(outputs, machine, criterion) -> (terms, weights)`` of every machine
        of every fold, pooled (each machine's weights divided by their number)."""
        Phi, sols = self._solve(C, gamma, warm)
        ts, ws = [], []
        crits = iter([c for fold in self._criteria for c in fold])
        for fold, fs in zip(self.folds, sols):
            for mc, s in zip(fold, fs):
                t, w = per_row(self._outputs(Phi, mc, s), mc, next(crits))
                ts.append(t)
                ws.append(w / self.n_problems)
        return np.concatenate(ts), np.concatenate(ws), sols

    def evaluate(self, beta, warm=None, tol=None, adjoint_warm=None):
        r""":math:`J(\beta)` and :math:`\nabla_\beta J`."""
        return self.evaluate_se(beta, warm, tol)[0]

    def evaluate_se(self, beta, warm=None, tol=None):
        """:meth:`evaluate` and the standard error of J over its validation rows."""
        beta = np.asarray(beta, dtype=float)
        C, gamma = self.hyper.params(beta)
        Phi, sols = self._solve(C, gamma, warm)
        crits = [c for fold in self._criteria for c in fold]

        def value_grad(mc, k, f):
            J, e = crits[k].value_and_grad(f)
            t, w = crits[k].terms(f)
            return J, np.asarray(e).ravel(), t, w

        ev, t, w = self._assemble(beta, C, gamma, None, Phi, sols, value_grad)
        return ev, weighted_mean_se(t, w)[1]


@dataclass(frozen=True)
class NystroemSVRObjective(_FeatureObjective):
    r"""The upper level of :class:`~bisvm.AutoSVR`'s ε-SVR on Nyström features: the mean
    over folds of the validation mean squared error (weighted by the validation rows'
    sample weights) of the linear L2-loss ε-SVR on Φ, with its hypergradient in
    :math:`(\log C, \log\varepsilon, \log\gamma)`; the interface of
    :class:`~bisvm.selection.kernel_svr_tune.KernelSVRObjective`. ``epsilon`` fixes ε
    for :meth:`terms` called with ``(C, gamma)`` only (the support rule)."""

    features: NystroemFeatures
    folds: tuple
    hyper: object
    epsilon: float = 0.1

    @staticmethod
    def _weights(mc):
        n = mc.y_val.size
        return np.full(n, 1.0 / n) if mc.weight_val is None else \
            mc.weight_val / mc.weight_val.sum()

    def terms(self, C, gamma, warm=None, tol=None, epsilon=None):
        """Per-row squared validation errors and weights (each fold weighs 1/k), and
        the solutions."""
        eps = self.epsilon if epsilon is None else epsilon
        Phi, sols = self._solve(C, gamma, warm, eps)
        ts, ws = [], []
        for fold, fs in zip(self.folds, sols):
            for mc, s in zip(fold, fs):
                ts.append((mc.y_val - self._outputs(Phi, mc, s)) ** 2)
                ws.append(self._weights(mc) / self.n_problems)
        return np.concatenate(ts), np.concatenate(ws), sols

    def evaluate(self, beta, warm=None, tol=None, adjoint_warm=None):
        r""":math:`J(\beta)` and :math:`\nabla_\beta J`."""
        beta = np.asarray(beta, dtype=float)
        C, eps, gamma = self.hyper.params(beta)
        Phi, sols = self._solve(C, gamma, warm, eps)

        def value_grad(mc, k, f):
            w = self._weights(mc)
            r = mc.y_val - f
            return float(w @ r**2), -2.0 * w * r, r**2, w

        return self._assemble(beta, C, gamma, eps, Phi, sols, value_grad)[0]
