r"""The bilevel engine for kernel SVMs: C and the RBF widths (one shared, or one per
feature) learned by hypergradient descent of a k-fold validation criterion.

The four roles of :mod:`bisvm.selection.bilevel`, filled for the kernel model:

* **model**: :class:`~bisvm.solvers.dual.kernel_lower_level.KernelL2SVM`, the L2-SVM
  (squared hinge) solved by bisvm's SMO and polished to its exact free-set KKT solution
  (in the solver layer); :class:`KernelHyperModel` maps the outer variables onto
  :math:`(C, \gamma)`;
* **criterion**: the existing validation criteria of :mod:`~bisvm.selection.criteria`
  applied to the validation *outputs* :math:`f_V` (their ``V`` is the identity, so
  ``value_and_grad(f_V)`` returns :math:`J` and :math:`\partial J/\partial f_V`);
* **hypergradient**: :class:`KernelKKTAdjoint`, one adjoint solve with the free-set
  factor per binary problem and fold (Keerthi, Sindhwani & Chapelle 2007);
* **outer optimiser**: on :math:`\log\beta` where :math:`C = C_0\beta_0`,
  :math:`\gamma_j = \gamma_0\beta_j`, with HOAG's tolerance schedule (Pedregosa 2016):
  :class:`~bisvm.selection.kernel_fit.BoxedQuasiNewton` for a shared width (bounds per
  coordinate, a stop on the criterion's standard error; it needs
  :meth:`KernelBilevelObjective.evaluate_se`), :class:`~bisvm.selection.outer.BiSVMLBFGS`
  unchanged for one width per feature.

Multiclass problems are split as ``SVC`` splits them (one-vs-one by default): every fold
holds one :class:`~bisvm.solvers.dual.kernel_lower_level.KernelPair` per binary machine,
all share one set of hyperparameters, and the criterion is the mean over folds and
machines of each machine's criterion on the validation rows of its two classes.

Around the engine: :func:`scan_C` (the start: C from a short warm-started scan at the
median-heuristic width, :func:`median_gamma`) and :func:`width_support` (the
one-standard-error rule that decides which per-feature widths matter).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from ..kernels import squared_distances
from ..solvers.dual.kernel_lower_level import KernelL2SVM, KernelPair
from .bilevel import Evaluation
from .criteria import Criterion, make_criterion
from .hypergradient import Hypergradient
from .model import check_role
from .one_se import weighted_mean_se

__all__ = [
    "KERNEL_CRITERIA",
    "KernelHyperModel",
    "KernelKKTAdjoint",
    "KernelBilevelObjective",
    "kernel_pairs",
    "cross_fold_start",
    "median_gamma",
    "scan_C",
    "width_support",
    "SupportDecision",
    "smo_tolerance",
]

#: Validation criteria of :func:`~bisvm.selection.criteria.make_criterion` that judge
#: classifier outputs (``"squared"`` would also penalise confidently correct outputs).
KERNEL_CRITERIA = ("squared_hinge", "scaled_squared_hinge", "logistic")


def smo_tolerance(tol):
    r"""SMO's stopping gap for the outer loop's lower-level tolerance ``tol`` (HOAG's
    :math:`\epsilon_k`, from 1e-5 down to the run's ``inner_tol``): 100 ε, between
    1e-8 and LIBSVM's default 1e-3."""
    return float(min(1e-3, max(1e-8, 100.0 * tol)))


@dataclass(frozen=True)
class KernelHyperModel:
    r"""Map of the outer variables :math:`\beta > 0` onto :math:`(C, \gamma)`:
    :math:`C = C_0\beta_0`, :math:`\gamma_j = \gamma_0\beta_{1+j}` (one shared entry, or
    one per feature). The references :math:`C_0, \gamma_0` are the start, so that
    BiSVM L-BFGS starts at :math:`\beta = 1` and works on :math:`\log\beta`.
    """

    widths: str
    n_features: int
    C_ref: float
    gamma_ref: float
    names: tuple = ()

    @property
    def n_hyper(self):
        return 1 + (self.n_features if self.widths == "per_feature" else 1)

    def params(self, beta):
        """``(C, gamma)`` at ``beta`` (gamma of shape (1,) or (d,))."""
        beta = np.asarray(beta, dtype=float)
        return self.C_ref * float(beta[0]), self.gamma_ref * beta[1:]

    def beta(self, C, gamma):
        """Inverse of :meth:`params`."""
        g = np.broadcast_to(np.asarray(gamma, float), (self.n_hyper - 1,))
        return np.concatenate([[C / self.C_ref], g / self.gamma_ref])


def median_gamma(X, max_rows=1000, random_state=0):
    r"""The median heuristic :math:`\gamma = 1/\operatorname{median}_{a<b}\lVert x_a -
    x_b\rVert^2` on at most ``max_rows`` rows (Schölkopf & Smola 2002, *Learning with
    Kernels*; Gretton et al. 2012 use it for kernel two-sample tests): a kernel value of
    :math:`e^{-1}` at the typical distance, neither all ones nor the identity."""
    n = X.shape[0]
    if n > max_rows:
        X = X[np.random.default_rng(random_state).choice(n, max_rows, replace=False)]
    D = squared_distances(X, X)
    med = float(np.median(D[np.triu_indices_from(D, k=1)])) if D.shape[0] > 1 else 0.0
    if not med > 0:
        pos = D[D > 0]
        med = float(np.median(pos)) if pos.size else 1.0
    return 1.0 / med


def binary_machines(n_classes, multiclass="ovo"):
    """The binary machines of a classifier as (positive class, negative class or None
    for the rest): one for two classes, one per pair ("ovo") or per class ("ovr")."""
    if n_classes == 2:
        return [(1, 0)]
    if multiclass == "ovo":
        return [(a, b) for a in range(n_classes) for b in range(a + 1, n_classes)]
    return [(a, None) for a in range(n_classes)]


def kernel_pairs(X, y_enc, n_classes, splits, multiclass="ovo", cache_distances=False,
                 row_weight=None):
    """One tuple of :class:`KernelPair` per fold: the binary machines of ``multiclass``
    (one per pair of classes, or one per class against the rest; one for two classes),
    label +1 for the machine's first class, as :class:`~bisvm.estimators.svm.SVC` builds
    them. Machines whose training or validation rows lack a class are left out.

    ``row_weight`` (class weight × sample weight of each row, None: all 1) multiplies
    C on the training rows, as in :class:`~bisvm.estimators.svm.SVC`, and weighs the
    validation rows in the criterion, so that the criterion estimates the weighted risk
    the refit minimises; rows of weight 0 are left out of both."""
    if row_weight is not None:
        row_weight = np.asarray(row_weight, dtype=float)
    machines = binary_machines(n_classes, multiclass)
    folds = []
    for tr, va in splits:
        pairs = []
        for a, b in machines:
            itr = tr if b is None else tr[np.isin(y_enc[tr], (a, b))]
            iva = va if b is None else va[np.isin(y_enc[va], (a, b))]
            cost = wval = None
            if row_weight is not None:
                itr, iva = itr[row_weight[itr] > 0], iva[row_weight[iva] > 0]
                cost, wval = row_weight[itr], row_weight[iva]
            yt = np.where(y_enc[itr] == a, 1.0, -1.0)
            yv = np.where(y_enc[iva] == a, 1.0, -1.0)
            if iva.size == 0 or yt.size == 0 or np.ptp(yt) == 0:
                continue
            pairs.append(KernelPair.build(X[itr], yt, X[iva], yv, cache_distances,
                                          cost_train=cost, weight_val=wval, rows_train=itr))
        if pairs:
            folds.append(tuple(pairs))
    if not folds:
        raise ValueError("no fold has training rows of two classes and validation rows")
    return tuple(folds)


@dataclass(frozen=True)
class KernelKKTAdjoint:
    r"""The *hypergradient* role for the kernel model (the
    :class:`~bisvm.selection.hypergradient.Hypergradient` interface): the adjoint of the
    L2-SVM's free-set KKT system, one Cholesky solve per binary problem and fold for all
    hyperparameters (:func:`~bisvm.solvers.dual.kernel_lower_level.l2svm_hypergradient`).
    ``hyper`` maps the gradient in :math:`(\log C, \log\gamma)` onto β:
    :math:`\partial J/\partial\beta_k = \beta_k^{-1}\,\partial J/\partial\log p_k`."""

    def gradient(self, model, hyper, problem, result, dJ, tol, lam0=None):
        """``(grad in (log C, log gamma), adjoint, factor)`` of one binary problem;
        ``problem`` is the :class:`KernelPair`, ``result`` its solution, ``dJ`` the
        criterion's gradient in the validation outputs. The factor is direct, so neither
        ``tol`` nor the warm start ``lam0`` is needed."""
        _, KVF = model.outputs(problem, result)
        grad, lam = model.hypergradient(problem, result, dJ, KVF)
        return grad, lam, result.factor

    def predict(self, model, problem, w, factor, db, dl2):
        r"""First-order prediction of α after :math:`(\log C, \log\gamma)` move by ``db``
        (``w`` is the solution, ``factor`` unused: the solution carries it; ``dl2``
        must be 0, there is no ridge weight); the previous α where the prediction leaves
        the feasible set :math:`\alpha \ge 0`."""
        da, _ = model.tangent(problem, w, db[0], db[1:])
        a = w.alpha + da
        return a if np.all(a >= 0) else w.alpha


@dataclass(frozen=True)
class KernelBilevelObjective:
    r"""The upper level :math:`\beta \mapsto J(\beta)`, the mean over folds and binary
    machines of the validation criterion of the L2-SVM's outputs, with its hypergradient;
    the object :class:`~bisvm.selection.outer.BiSVMLBFGS` minimises.

    Parameters
    ----------
    folds : tuple of tuple of KernelPair
        Per fold, its binary problems (:func:`kernel_pairs`).
    lower : KernelL2SVM
    hyper : KernelHyperModel
    loss : str
        One of :data:`KERNEL_CRITERIA`.
    hypergradient : Hypergradient

    Notes
    -----
    ``coefs`` of an :class:`~bisvm.selection.bilevel.Evaluation` hold, per fold, the α of
    its binary problems concatenated (the warm start of the next solve); ``factors``
    the per-fold tuples of solutions (each carries its free-set factor).
    """

    folds: tuple
    lower: KernelL2SVM
    hyper: KernelHyperModel
    loss: str = "squared_hinge"
    hypergradient: Hypergradient = field(default_factory=KernelKKTAdjoint)
    _criteria: tuple = field(init=False, repr=False)

    def __post_init__(self):
        if self.loss not in KERNEL_CRITERIA:
            raise ValueError(f"loss must be one of {KERNEL_CRITERIA}, got {self.loss!r}")
        check_role(self.hypergradient, Hypergradient, "hypergradient")
        crits = tuple(tuple(make_criterion(self.loss, sp.identity(p.y_val.size, format="csr"),
                                           p.y_val, p.weight_val) for p in fold)
                      for fold in self.folds)
        for fold in crits:
            for c in fold:
                check_role(c, Criterion, "criterion")
        object.__setattr__(self, "_criteria", crits)

    @property
    def n_problems(self):
        """Binary problems over all folds."""
        return sum(len(f) for f in self.folds)

    def _split(self, warm, i):
        """Per-problem warm starts of fold ``i`` (None, a tuple of per-fold vectors, or a
        list of such tuples from the predictor: the last whose entries are all >= 0)."""
        if warm is None:
            return [None] * len(self.folds[i])
        if isinstance(warm, list):
            cands = [c[i] for c in warm if c is not None and np.all(np.asarray(c[i]) >= 0)]
            if not cands:
                return [None] * len(self.folds[i])
            warm = None
            vec = cands[-1]
        else:
            vec = warm[i]
        sizes = np.cumsum([p.y_train.size for p in self.folds[i]])[:-1]
        return np.split(np.asarray(vec, dtype=float), sizes)

    def solve(self, C, gamma, warm=None, tol=1e-5):
        """Solutions of every binary problem at ``(C, gamma)``: per fold a tuple. Without
        a warm start, every fold after the first starts from the first fold's solution
        of the same machine (:func:`cross_fold_start`): k-fold training sets share all
        but 1/(k-1) of their rows, so that start is nearly optimal."""
        st = smo_tolerance(tol)
        out = []
        for i, fold in enumerate(self.folds):
            starts = self._split(warm, i)
            if warm is None and i > 0 and len(fold) == len(self.folds[0]):
                starts = [cross_fold_start(p0, s0.alpha, p)
                          for p0, s0, p in zip(self.folds[0], out[0], fold)]
            out.append(tuple(self.lower.solve(p, C, gamma, a0, st)
                             for p, a0 in zip(fold, starts)))
        return tuple(out)

    @staticmethod
    def coefs(solutions):
        """Per fold, the concatenated α (the warm start format)."""
        return tuple(np.concatenate([s.alpha for s in fold]) for fold in solutions)

    def terms(self, C, gamma, warm=None, tol=1e-5):
        """Pooled per-row criterion terms and weights (``value = weights @ terms``; each
        binary problem of each fold weighs equally), and the solutions."""
        sols = self.solve(C, gamma, warm, tol)
        ts, ws = [], []
        for fold, crits, fs in zip(self.folds, self._criteria, sols):
            for p, crit, s in zip(fold, crits, fs):
                f, _ = self.lower.outputs(p, s)
                t, w = crit.terms(f)
                ts.append(t)
                ws.append(w / self.n_problems)
        return np.concatenate(ts), np.concatenate(ws), sols

    def error_terms(self, C, gamma, warm=None, tol=1e-5):
        """Pooled per-row misclassification indicators (a zero output counts as an
        error) with the weights of :meth:`terms`, and the solutions."""
        sols = self.solve(C, gamma, warm, tol)
        ts, ws = [], []
        for fold, crits, fs in zip(self.folds, self._criteria, sols):
            for p, crit, s in zip(fold, crits, fs):
                f, _ = self.lower.outputs(p, s)
                ts.append((np.sign(f) != p.y_val).astype(float))
                ws.append(crit.terms(f)[1] / self.n_problems)
        return np.concatenate(ts), np.concatenate(ws), sols

    def value(self, beta, warm=None, tol=1e-5):
        """``(J, coefs)`` at ``beta`` (no hypergradient)."""
        t, w, sols = self.terms(*self.hyper.params(beta), warm, tol)
        return float(w @ t), self.coefs(sols)

    def evaluate(self, beta, warm=None, tol=1e-5, adjoint_warm=None):
        r""":math:`J(\beta)` and :math:`\nabla_\beta J`, means over folds and binary
        problems (``adjoint_warm`` is accepted for the outer loop's interface; the
        adjoint is solved directly)."""
        return self.evaluate_se(beta, warm, tol)[0]

    def evaluate_se(self, beta, warm=None, tol=1e-5):
        r""":meth:`evaluate` and the standard error of :math:`J` over its validation rows
        (:func:`~bisvm.selection.one_se.weighted_mean_se` of the pooled terms): the
        resolution at which two values of the criterion can be told apart."""
        beta = np.asarray(beta, dtype=float)
        C, gamma = self.hyper.params(beta)
        sols = self.solve(C, gamma, warm, tol)
        vals, grads, lams, ts, ws = [], [], [], [], []
        for fold, crits, fs in zip(self.folds, self._criteria, sols):
            fl = []
            for p, crit, s in zip(fold, crits, fs):
                f, _ = self.lower.outputs(p, s)
                J, e = crit.value_and_grad(f)
                g, lam, _ = self.hypergradient.gradient(self.lower, self.hyper, p, s,
                                                        np.asarray(e).ravel(), tol)
                t, w = crit.terms(f)
                ts.append(t)
                ws.append(w / self.n_problems)
                vals.append(J)
                grads.append(g)
                fl.append(lam)
            lams.append(tuple(fl))
        grad_log = np.mean(grads, axis=0)
        ev = Evaluation(
            beta=beta, value=float(np.mean(vals)), grad=grad_log / beta,
            coefs=self.coefs(sols), lower_iterations=sum(s.n_iter for f in sols for s in f),
            lower_solves=self.n_problems, multipliers=tuple(lams), factors=sols,
            problems=self.folds)
        return ev, weighted_mean_se(np.concatenate(ts), np.concatenate(ws))[1]

    def predict_coefs(self, ev, beta):
        """First-order prediction of every fold's α at ``beta`` from the evaluation
        ``ev`` (:meth:`KernelKKTAdjoint.predict`)."""
        db = np.log(np.asarray(beta, float)) - np.log(ev.beta)
        return tuple(
            np.concatenate([self.hypergradient.predict(self.lower, p, s, None, db, 0.0)
                            for p, s in zip(fold, fs)])
            for fold, fs in zip(self.folds, ev.factors))


def cross_fold_start(pair0, alpha0, pair):
    r"""A start for ``pair`` from the solution ``alpha0`` of ``pair0`` (another fold's
    training rows of the same machine): the shared rows keep their α, the others start
    at 0, and each class's α is rescaled to the mean of the two classes' sums so that
    :math:`y^\top\alpha = 0` holds (the L2-SVM's dual has no upper bound, so the
    rescaled point is feasible). None when the rows are unknown or a class gets no α."""
    if pair0.rows_train is None or pair.rows_train is None:
        return None
    order = np.argsort(pair0.rows_train, kind="stable")
    rows0 = pair0.rows_train[order]
    idx = np.minimum(np.searchsorted(rows0, pair.rows_train), rows0.size - 1)
    hit = rows0[idx] == pair.rows_train
    a = np.zeros(pair.y_train.size)
    a[hit] = np.asarray(alpha0, float)[order][idx[hit]]
    pos = pair.y_train > 0
    sp_, sn = float(a[pos].sum()), float(a[~pos].sum())
    if not (sp_ > 0 and sn > 0):
        return None
    m = 0.5 * (sp_ + sn)
    a[pos] *= m / sp_
    a[~pos] *= m / sn
    return a


def scan_C(objective, gamma, Cs, tol=1e-4, from_middle=False):
    """The start of the outer loop: the criterion at C values of ``Cs`` (increasing) at
    the width ``gamma``, each solve warm-started from the previous C's α (feasible for
    any C: the L2-SVM's box has no upper bound). Returns ``(best C, its coefs, values)``,
    the values in the order of ``Cs`` (NaN where not evaluated).

    ``from_middle=False`` evaluates every C in increasing order (cost: ``len(Cs)``
    solves per binary problem and fold). ``from_middle=True`` starts at the middle C,
    moves up while the criterion falls, and, if the first step up did not lower it,
    down while it falls: the scan ends at the first rise in each direction, so a
    criterion that is unimodal along the scan is searched in 2 to ``len(Cs)``
    evaluations and its best C is the one the full scan finds. Going down, the warm
    start is the larger C's α times the ratio of the two C values: a free row's α is
    C times its (slowly changing) slack."""
    Cs = list(Cs)
    vals = np.full(len(Cs), np.nan)
    sols_at = {}

    def at(k, warm):
        t, w, sols = objective.terms(Cs[k], gamma, warm, tol)
        vals[k] = float(w @ t)
        sols_at[k] = objective.coefs(sols)
        return sols_at[k]

    if not from_middle:
        warm = None
        for k in range(len(Cs)):
            warm = at(k, warm)
    else:
        m = len(Cs) // 2
        warm = at(m, None)
        k = m
        while k + 1 < len(Cs):
            warm = at(k + 1, warm)
            if not vals[k + 1] < vals[k]:
                break
            k += 1
        if k == m:
            k, warm = m, sols_at[m]
            while k > 0:
                ratio = Cs[k - 1] / Cs[k]
                warm = at(k - 1, tuple(a * ratio for a in warm))
                if not vals[k - 1] < vals[k]:
                    break
                k -= 1
    best = int(np.nanargmin(vals))
    return Cs[best], sols_at[best], vals


@dataclass(frozen=True)
class SupportDecision:
    """Outcome of :func:`width_support`: the features kept (sorted), the relevance
    threshold, each tested support size with its criterion increase over the full
    model and the full model's standard error, and the criterion evaluations made."""

    support: np.ndarray
    threshold: float
    tested: tuple
    n_solves: int


def width_support(objective, C, gamma, importances, warm=None, tol=1e-5,
                  measure="criterion"):
    r"""Which per-feature widths matter: the smallest top-k set of features (by
    ``importances``) whose model, the others' widths set to 0, has a k-fold criterion
    within one standard error of the full model's.

    The criterion is a weighted mean of one term per validation row (and binary
    machine), :math:`J = \sum_i\omega_it_i`, whose standard error at the full model is
    :math:`s = (\sum_i\omega_i^2(t_i - J)^2)^{1/2}`
    (:func:`~bisvm.selection.one_se.weighted_mean_se`). A support S is accepted when
    :math:`J(S) \le J(\text{all}) + s`: its model is indistinguishable from the full one
    on these rows, the one-standard-error rule of Breiman et al. (1984), as glmnet's
    ``lambda.1se`` and ``BilevelSVC``'s decisions apply it. (The standard error of the
    *paired* differences would not do: it vanishes as the two models coincide, so a
    width of 1e-4 would be judged significant.) The nested supports are searched by
    bisection on k, which assumes the criterion rises as features are removed in
    increasing order of importance.

    ``objective`` should hold folds other than those the widths were tuned on: on the
    tuning folds, weak widths fitted to those validation rows look significant (the
    selection bias of reusing them; Cawley & Talbot 2010, "On over-fitting in model
    selection and subsequent selection bias in performance evaluation").
    ``measure="error"`` applies the rule to the misclassification rate instead of the
    criterion (glmnet's ``type.measure="class"``).

    Cost: :math:`\lceil\log_2 d\rceil + 1` evaluations of the criterion, each one
    warm-started L2-SVM solve per binary problem and fold.

    Returns
    -------
    SupportDecision
    """
    imp = np.asarray(importances, float)
    d = imp.size
    order = np.argsort(-imp, kind="stable")
    if measure not in ("error", "criterion"):
        raise ValueError(f"measure must be 'error' or 'criterion', got {measure!r}")
    terms = objective.error_terms if measure == "error" else objective.terms
    t0, w, sols = terms(C, gamma, warm, tol)
    J0, se = weighted_mean_se(t0, w)
    warm = objective.coefs(sols)
    tested, n = [], 1

    def accepted(k):
        nonlocal n
        g = np.zeros(d)
        g[order[:k]] = gamma[order[:k]]
        t, _, _ = terms(C, g, warm, tol)
        n += 1
        delta = float(w @ t) - J0
        tested.append((k, delta, se))
        return delta <= se

    lo, hi = 1, d
    while lo < hi:
        mid = (lo + hi) // 2
        if accepted(mid):
            hi = mid
        else:
            lo = mid + 1
    keep = np.sort(order[:lo])
    return SupportDecision(keep, float(imp[order[lo - 1]]), tuple(tested), n)
