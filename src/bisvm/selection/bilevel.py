r"""Bilevel learning of the sparsity weights of the smoothed L2L1-SVM (seed-000 Ch. 4-5).

The pieces follow sparse-ho's cut (model × criterion × hypergradient × outer optimiser):

* :class:`LowerLevel` -- the smoothed elastic-net SVM of seed-000 §1.5,

  .. math::
      E(w;\beta) = \frac1n\sum_i \ell_\mu(1 - y_i x_i^\top w) + \frac{\alpha}{2}\|w\|^2
                   + \sum_k \beta_k\big(\sqrt{\gamma^2 + \|w_k\|^2} - \gamma\big),

  with the bias as the last coordinate of ``w`` (penalised, as in the thesis, unless
  ``penalize_intercept=False``), solved by Newton-Cholesky or the thesis's L-BFGS;
* :class:`HyperModel` -- how the hyperparameter vector β maps onto penalty weights:
  one scalar for every coordinate (4.21), one per coordinate (4.28), or one per group
  (4.37);
* :class:`BilevelObjective` -- β ↦ (J, ∇J): lower-level solves on every fold
  (warm-started), the validation criterion of :mod:`~bisvm.selection.criteria`, and the
  KKT hypergradient of :mod:`~bisvm.selection.hypergradient`, averaged over folds;
* :func:`bisvm_lbfgs` -- Algorithm 8 (BiSVM L-BFGS) on :math:`\theta = \log\beta`;
* :func:`grid_search` -- the thesis's baseline over scalar β, warm-started along the grid.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace

import numpy as np
import scipy.sparse as sp
from scipy.special import expit, logit

from ..penalties import L2, SumPenalty
from ..solvers._linalg import DenseFactor
from ..solvers.primal.lbfgs import minimize_lbfgs
from .criteria import balanced_weights, make_criterion
from .early_stopping import HeldOutMonitor
from .hypergradient import adjoint_hypergradient
from .lower_level import (
    LOWER_SOLVERS,
    LowerLevel,
    beta_upper_bound,
    mean_second_moment,
    resolve_solver,
    zero_model_penalty,
)
from .search import THESIS_GRID, GridResult, grid_search
from .threads import map_ordered

__all__ = [
    "LowerLevel", "HyperModel", "make_hyper_model", "Fold", "BilevelObjective",
    "Evaluation", "HistoryEntry", "BilevelResult", "GridResult", "bisvm_lbfgs",
    "grid_search", "THESIS_GRID", "LOWER_SOLVERS", "resolve_solver", "zero_model_penalty",
    "mean_second_moment", "PARALLEL_FOLD_WORK",
]


@dataclass(frozen=True)
class HyperModel:
    """Map from the hyperparameter vector β to the weights of the penalty groups.

    Attributes
    ----------
    kind : {"scalar", "vector", "group"}
    penalty_groups : ndarray of int, shape (d + 1,)
        Penalty group of each coordinate of the augmented ``w`` (-1: unpenalised).
    hyper_of_group : ndarray of int, shape (n_penalty_groups,)
        Entry of β that weights each penalty group.
    names : tuple of str
        One name per entry of β (features, groups, "intercept", and "l2_penalty" last
        when α is learned).
    group_names : tuple of str
        One name per penalty group (for the scalar model: per coordinate).
    learn_l2 : bool
        Whether the last hyperparameter is the ridge weight α (beyond seed-000, which
        fixes α = 0.01; its Fig. 4.5 searches (α, β) on a grid).
    """

    kind: str
    penalty_groups: np.ndarray
    hyper_of_group: np.ndarray
    names: tuple
    group_names: tuple = ()
    learn_l2: bool = False

    @property
    def n_hyper(self):
        return len(self.names)

    def weights(self, beta):
        """Penalty weight of every group for hyperparameters ``beta``."""
        return np.asarray(beta, dtype=float)[self.hyper_of_group]

    def l2(self, beta):
        """The learned α, or None when α is fixed."""
        return float(np.asarray(beta)[-1]) if self.learn_l2 else None

    def reduce(self, grad_weights, grad_l2=0.0):
        r"""Chain rule :math:`\partial J/\partial\beta = M^\top \partial J/\partial b`
        (plus :math:`\partial J/\partial\alpha` last when α is learned)."""
        g = np.bincount(self.hyper_of_group, weights=grad_weights, minlength=self.n_hyper)
        if self.learn_l2:
            g[-1] = grad_l2
        return g


def make_hyper_model(kind, n_features, *, groups=None, penalize_intercept=True,
                     feature_names=None, learn_l2=False):
    """Build the :class:`HyperModel` of the scalar, vector or group model.

    Parameters
    ----------
    kind : {"scalar", "vector", "group"}
        Scalar β for every coordinate (seed-000 (4.21)); one β_j per coordinate (4.28);
        one β_k per group (4.37). The scalar and vector models both use singleton
        penalty groups (erratum 3): the scalar model is the vector model with all
        entries tied.
    n_features : int
        Number of features ``d`` (the bias is coordinate ``d``).
    groups : dict of str -> list of int, or sequence of lists, optional
        Feature groups for ``kind="group"``; features in no group get a singleton group
        named after the feature.
    penalize_intercept : bool
        Whether the bias has its own β entry (thesis) or no penalty at all.
    feature_names : sequence of str, optional
    learn_l2 : bool
        Append the ridge weight α as a last hyperparameter (beyond seed-000).
    """
    hm = _make_hyper_model(kind, n_features, groups, penalize_intercept, feature_names)
    if not learn_l2:
        return hm
    return HyperModel(hm.kind, hm.penalty_groups, hm.hyper_of_group,
                      hm.names + ("l2_penalty",), hm.group_names, True)


def _make_hyper_model(kind, n_features, groups, penalize_intercept, feature_names):
    d = int(n_features)
    names = list(feature_names) if feature_names is not None else [f"x{j}" for j in range(d)]
    if len(names) != d:
        raise ValueError(f"feature_names has {len(names)} entries for {d} features")
    if kind not in ("scalar", "vector", "group"):
        raise ValueError(f"model must be 'scalar', 'vector' or 'group', got {kind!r}")
    if kind != "group" and groups is not None:
        raise ValueError(f"groups are only used by model='group', not model={kind!r}")
    pg = np.full(d + 1, -1, dtype=np.int64)
    if kind in ("scalar", "vector"):
        pg[:d] = np.arange(d)
        n_pg = d
        if penalize_intercept:
            pg[d] = d
            n_pg += 1
        coord_names = tuple(names + (["intercept"] if penalize_intercept else []))
        if kind == "scalar":
            return HyperModel("scalar", pg, np.zeros(n_pg, dtype=np.int64), ("beta",),
                              coord_names)
        return HyperModel("vector", pg, np.arange(n_pg), coord_names, coord_names)
    if groups is None:
        raise ValueError("model='group' needs groups (a dict name -> feature indices)")
    items = list(groups.items()) if isinstance(groups, dict) else [
        (f"group{k}", g) for k, g in enumerate(groups)
    ]
    hyper_names = []
    for name, idx in items:
        idx = np.asarray(idx)
        if idx.size == 0:
            raise ValueError(f"group {name!r} is empty")
        if not np.issubdtype(idx.dtype, np.integer):
            raise TypeError(f"group {name!r} must list integer feature indices")
        if idx.min() < 0 or idx.max() >= d:
            raise ValueError(f"group {name!r} has a feature index outside 0..{d - 1}")
        if np.any(pg[idx] >= 0) or len(np.unique(idx)) != idx.size:
            raise ValueError(f"group {name!r} overlaps another group or repeats a feature")
        pg[idx] = len(hyper_names)
        hyper_names.append(str(name))
    for j in np.flatnonzero(pg[:d] < 0):
        pg[j] = len(hyper_names)
        hyper_names.append(names[j])
    if penalize_intercept:
        pg[d] = len(hyper_names)
        hyper_names.append("intercept")
    return HyperModel("group", pg, np.arange(len(hyper_names)), tuple(hyper_names),
                      tuple(hyper_names))


@dataclass(frozen=True)
class Fold:
    """One training/validation pair (bias column of ones appended) with optional row
    weights of each side: of the lower-level loss and of the criterion's mean."""

    X_train: np.ndarray
    y_train: np.ndarray
    X_val: np.ndarray
    y_val: np.ndarray
    w_train: np.ndarray | None = None
    w_val: np.ndarray | None = None


@dataclass(frozen=True)
class Evaluation:
    """Value and hypergradient of the upper level at one β, with what it cost."""

    beta: np.ndarray
    value: float
    grad: np.ndarray
    coefs: tuple
    lower_iterations: int
    lower_solves: int
    multipliers: tuple = ()
    factors: tuple = ()
    penalties: tuple = ()


#: Gram flops of a fold (:attr:`BilevelObjective.fold_work`) from which its tasks run on
#: threads: below ~1e7 flops per Newton step the Python bookkeeping of a solve, which
#: holds the GIL, is of the order of its BLAS work, and two fold threads queueing for
#: the GIL take longer than one thread doing both folds.
PARALLEL_FOLD_WORK = 1e7


@dataclass(frozen=True)
class BilevelObjective:
    r"""The upper-level function :math:`\beta \mapsto J(\beta, \hat w(\beta))` averaged
    over folds, with its KKT hypergradient.

    Parameters
    ----------
    folds : tuple of Fold
        One fold = hold-out validation (the thesis); k folds = k-fold cross-validation.
    lower : LowerLevel
    hyper : HyperModel
    loss : {"squared", "logistic", "squared_hinge"}
        Validation criterion of :mod:`bisvm.selection.criteria`.
    balanced : bool
        Weigh the validation rows of each fold by the inverse of their class count
        (:func:`~bisvm.selection.criteria.balanced_weights`): the criterion is the mean
        over classes of the per-class means (of the weighted means, with weights).
    n_jobs : int, optional
        Folds worked on at once by :meth:`solve`, :meth:`value`, :meth:`evaluate` and
        :meth:`predict_coefs`: ``None``/``1`` one after the other, else one
        :class:`joblib.Parallel` task per fold (``-1``: all cores), on threads unless a
        surrounding :func:`joblib.parallel_config` names another backend (e.g. Dask).

    Notes
    -----
    Given β the folds' lower-level problems are independent: k-fold cross-validation
    is a map, then a mean. Each task computes what the serial loop computes for its
    fold and the results are reduced in fold order by the same ``np.mean``, so values,
    hypergradients and solutions are bit-identical for every ``n_jobs`` (at the fixed
    BLAS thread count of a fit). Threads are the default because the per-fold work runs
    outside the GIL (BLAS/LAPACK Gram products and Cholesky solves, loss kernels
    compiled ``nogil``) and shares the fold data instead of copying it to processes at
    every trial point; the caller keeps one BLAS thread per worker so that fold threads
    do not oversubscribe the cores (:mod:`~bisvm.selection.threads`). Folds too small
    for threads to pay (:data:`PARALLEL_FOLD_WORK`) run one after the other.
    """

    folds: tuple
    lower: LowerLevel
    hyper: HyperModel
    loss: str = "squared"
    balanced: bool = False
    n_jobs: int | None = None
    _criteria: tuple = field(init=False, repr=False)
    _cache: dict = field(init=False, repr=False, default_factory=dict)

    def __post_init__(self):
        nj = self.n_jobs
        if nj is not None and (isinstance(nj, bool) or not isinstance(nj, (int, np.integer))
                               or nj == 0):
            raise ValueError(f"n_jobs must be None or a nonzero integer (joblib's convention, "
                             f"-1: all cores), got {nj!r}")
        crits = tuple(make_criterion(self.loss, f.X_val, f.y_val,
                                     balanced_weights(f.y_val, f.w_val) if self.balanced
                                     else f.w_val)
                      for f in self.folds)
        object.__setattr__(self, "_criteria", crits)

    @property
    def criteria(self):
        """The validation criterion of every fold (:mod:`~bisvm.selection.criteria`)."""
        return self._criteria

    def problems(self, beta):
        wts = self.hyper.weights(beta)
        l2 = self.hyper.l2(beta)
        if self.lower.exact and l2 is None:
            # the exact problem converts its data once; new weights reuse it
            base = self._cache.get("exact")
            if base is None:
                base = self._cache["exact"] = [
                    self.lower.problem(f.X_train, f.y_train, self.hyper.penalty_groups, wts,
                                       sample_weight=f.w_train)
                    for f in self.folds]
            return [P.with_weights(wts) for P in base]
        if not self.lower.exact:
            # one validated penalty per fold, re-weighted at each trial point
            base = self._cache.get("smooth")
            if base is None:
                base = self._cache["smooth"] = [
                    self.lower.problem(f.X_train, f.y_train, self.hyper.penalty_groups, wts, l2,
                                       sample_weight=f.w_train)
                    for f in self.folds]
            return [self._reweighted(P, wts, l2) for P in base]
        return [
            self.lower.problem(f.X_train, f.y_train, self.hyper.penalty_groups, wts, l2,
                               sample_weight=f.w_train)
            for f in self.folds
        ]

    def _reweighted(self, P, wts, l2):
        ridge, hub = P.penalty.terms
        if l2 is not None:
            ridge = L2(float(l2), ridge.mask)
        return replace(P, penalty=SumPenalty((ridge, hub.with_weights(wts))))

    @property
    def fold_work(self):
        r"""The Gram product of the largest fold, :math:`n\,d\min(n, d)` flops
        (:math:`\mathrm{nnz}\min(n, d)` for sparse X): the numerical work of one Newton
        step of its lower level."""
        def work(X):
            n, d = X.shape
            return float(X.nnz if sp.issparse(X) else n * d) * min(n, d)
        return max((work(f.X_train) for f in self.folds), default=0.0)

    def map_folds(self, func, tasks):
        """``[func(*t) for t in tasks]`` in fold order, on ``n_jobs`` workers
        (:func:`~bisvm.selection.threads.map_ordered`); on threads only when :attr:`fold_work`
        reaches :data:`PARALLEL_FOLD_WORK`."""
        return map_ordered(func, tasks, self.n_jobs,
                           threads=self.fold_work >= PARALLEL_FOLD_WORK)

    def solve(self, beta, warm=None, tol=1e-9):
        """Lower-level solutions on every fold; returns (coefs, iterations)."""
        rs = self.map_folds(self.lower.solve, ((P, None if warm is None else warm[i], tol)
                                                for i, P in enumerate(self.problems(beta))))
        return tuple(r.coef for r in rs), sum(r.n_iter for r in rs)

    def value(self, beta, warm=None, tol=1e-9):
        """Upper-level value only (no hypergradient)."""
        tasks = ((self.lower, P, None if warm is None else warm[i], tol, self._criteria[i])
                 for i, P in enumerate(self.problems(beta)))
        return float(np.mean(self.map_folds(_fold_value, tasks)))

    @staticmethod
    def _pick_warm(P, warm, i):
        """Warm start of fold ``i``: ``warm`` is None, a tuple of per-fold starts, or a
        list of such tuples (candidates); the candidates of fold ``i`` go to
        :meth:`LowerLevel.solve` as a list, which starts from the best one (the smallest
        :math:`\\|\\nabla E\\|`, at the cost of the evaluation the solver makes anyway)."""
        if warm is None:
            return None
        if isinstance(warm, list):
            starts = [c[i] for c in warm]
            return starts[0] if len(starts) == 1 else starts
        return warm[i]

    def evaluate(self, beta, warm=None, tol=1e-9, adjoint_warm=None):
        r""":math:`J(\beta)` and :math:`\nabla_\beta J` (mean over folds).

        Per fold (one task of :meth:`map_folds`): one lower-level solve, then one
        adjoint solve :math:`\hat\lambda = -H^{-1}\nabla_w J` with the solver's Newton
        factor (warm-started from ``adjoint_warm``, the previous multipliers, when the
        factor is iterative), and :math:`\nabla_\beta J = (\nabla_{w\beta}E)^\top\hat\lambda`
        as a vector-Jacobian product: the cost does not grow with the number of
        hyperparameters.
        """
        beta = np.asarray(beta, dtype=float)
        out = self.map_folds(_fold_evaluation, (
            (self.lower, self.hyper, P, self._pick_warm(P, warm, i), tol,
             None if adjoint_warm is None else adjoint_warm[i], self._criteria[i])
            for i, P in enumerate(self.problems(beta))))
        vals, grads, coefs, lams, factors, pens, iters = zip(*out)
        return Evaluation(
            beta=beta, value=float(np.mean(vals)), grad=np.mean(grads, axis=0),
            coefs=coefs, lower_iterations=sum(iters), lower_solves=len(self.folds),
            multipliers=lams, factors=factors, penalties=pens,
        )

    def predict_coefs(self, ev, beta):
        r"""First-order prediction of the lower-level solutions at ``beta`` from an
        evaluation at ``ev.beta``: :math:`\hat w - H^{-1}(\nabla_{wb}E)\,\Delta b`
        (the implicit function theorem, seed-000 (4.7)), one directional solve with the
        evaluation's Newton factor per fold; a predictor step that makes the warm start
        of the next solve second-order accurate in the step."""
        db = self.hyper.weights(beta) - self.hyper.weights(ev.beta)
        dl2 = (self.hyper.l2(beta) - self.hyper.l2(ev.beta)) if self.hyper.learn_l2 else 0.0
        return tuple(self.map_folds(_fold_prediction, ((w, F, pen, db, dl2) for w, F, pen in
                                                        zip(ev.coefs, ev.factors, ev.penalties))))


def _fold_value(lower, P, w0, tol, criterion):
    """One fold's criterion value at its lower-level solution (a task of
    :meth:`BilevelObjective.value`)."""
    return criterion.value_and_grad(lower.solve(P, w0, tol).coef)[0]


def _fold_evaluation(lower, hyper, P, w0, tol, lam0, criterion):
    """One fold's solve, criterion and adjoint (a task of
    :meth:`BilevelObjective.evaluate`); returns (J, grad, w, lam, factor, penalty,
    iterations)."""
    r = lower.solve(P, w0, tol)
    w = r.coef
    J, dJ = criterion.value_and_grad(w)
    ridge, pen = P.penalty.terms
    # a solver that returns no factor (L-BFGS): the dense Hessian
    factor = r.factor if r.factor is not None else DenseFactor(P.hessian(w))
    # HOAG (Pedregosa 2016): the adjoint residual matches the lower level's gradient
    # tolerance, an absolute bound like the lower level's
    rtol = min(1e-2, max(1e-10, tol / max(float(np.linalg.norm(dJ)), 1e-300)))
    g_w, lam = adjoint_hypergradient(factor, dJ, lambda v: pen.weight_vjp(w, v), lam0=lam0,
                                     rtol=rtol)
    # d(grad_w E)/d(alpha) = mask * w
    grad = hyper.reduce(g_w, float(ridge.gradient(w) @ lam) / ridge.strength) \
        if hyper.learn_l2 else hyper.reduce(g_w)
    return J, grad, w, lam, factor, P.penalty, r.n_iter


def _fold_prediction(w, F, pen, db, dl2):
    """One fold's first-order predicted solution (a task of
    :meth:`BilevelObjective.predict_coefs`)."""
    ridge, hub = pen.terms
    rhs = hub.weight_jvp(w, db)
    if dl2:
        rhs = rhs + ridge.gradient(w) / ridge.strength * dl2
    return w - F.solve(rhs, rtol=1e-3)


@dataclass(frozen=True)
class HistoryEntry:
    """One outer iteration of BiSVM L-BFGS (k = 0 is the starting point)."""

    iteration: int
    beta: np.ndarray
    value: float
    grad_norm: float
    n_nonzero: int
    lower_solves: int
    lower_iterations: int
    seconds: float
    monitor_value: float = float("nan")


@dataclass(frozen=True)
class BilevelResult:
    """Outcome of :func:`bisvm_lbfgs`.

    Attributes
    ----------
    beta : ndarray
        Learned hyperparameters.
    value : float
        Upper-level criterion at ``beta``.
    coefs : tuple of ndarray
        Lower-level solutions (one per fold) at ``beta``.
    history : tuple of HistoryEntry
    n_iter, lower_solves, lower_iterations : int
        Outer iterations; lower-level solves and solver steps in total (line-search
        trials included).
    trials : tuple of (beta, value)
        Every point at which the upper level was evaluated.
    converged : bool
    seconds : float
    """

    beta: np.ndarray
    value: float
    coefs: tuple
    history: tuple
    n_iter: int
    lower_solves: int
    lower_iterations: int
    trials: tuple
    converged: bool
    seconds: float


def _n_nonzero(coefs, threshold):
    return int(np.max([np.sum(np.abs(w) > threshold) for w in coefs]))


def bisvm_lbfgs(objective, beta0=0.01, *, max_iter=100, tol=1e-4, ftol=1e-5, memory=10,
                max_log_step=3.0, inner_tol=1e-9, nonzero_threshold=0.01, beta_max=None,
                predictor=True, warn=True, adaptive_tol=True, monitor=None, patience=5,
                monitor_rule="min", monitor_threshold=None, max_line_search=10,
                callback=None, warm0=None, monitor_warm0=None):
    r"""BiSVM L-BFGS (seed-000 Algorithm 8) in log-scale coordinates
    :math:`\beta = \beta_{\max}\,\sigma(\theta)` (:math:`\theta \approx \log\beta` for
    :math:`\beta \ll \beta_{\max}`).

    Minimises :math:`f(\theta) = J(\beta(\theta))` with gradient
    :math:`\nabla_\theta f = \beta(1 - \beta/\beta_{\max}) \odot \nabla_\beta J`
    (the KKT hypergradient), by the
    L-BFGS of :func:`~bisvm.solvers.primal.lbfgs.minimize_lbfgs` with a strong-Wolfe line search.
    Every trial point costs one lower-level solve per fold, warm-started from the last
    solution.

    Why the log parametrisation: the thesis leaves β ≥ 0 unenforced (erratum 9). Bounds
    (L-BFGS-B) or projection would let a weight sit at exactly 0, but β spans orders of
    magnitude (0.01 to > 1) and the natural steps are relative ones: in log space a unit
    step multiplies β by e, the start 0.01 is not a "jump to 1" away from the optimum,
    positivity holds by construction, and ``max_log_step`` bounds how far one trial can
    move (a factor :math:`e^{3} \approx 20` by default), so no trial point lands where the
    warm start is useless. The upper bound :math:`\beta_{\max}` (10 × the largest
    possible loss gradient :math:`\max_j \frac1n\sum_i|x_{ij}|`, beyond which a
    coefficient is already smoothed to :math:`|w_j| \lesssim \gamma/10`) stops a weight
    whose feature the criterion wants removed from running off to infinity, where the
    lower level becomes ill-conditioned and the hypergradient vanishes only slowly.

    Parameters
    ----------
    objective : BilevelObjective
    beta0 : float or ndarray
        Starting point (the thesis starts every component at 0.01).
    max_iter : int
        Cap on outer iterations.
    tol : float
        Stop when :math:`\|\nabla_\theta f\|_2 \le` ``tol``.
    ftol : float
        Also stop when an outer iteration decreases J by at most ``ftol`` relatively.
    memory : int
        L-BFGS memory.
    max_log_step : float
        Largest change of any :math:`\log\beta_k` at a unit step.
    inner_tol : float
        Gradient-norm tolerance of the lower-level solves.
    nonzero_threshold : float
        :math:`|w_j|` above which a coefficient counts as nonzero in the history.
    beta_max : float, optional
        Upper bound of every β_k (default: see above).
    predictor : bool
        Warm-start each lower-level solve from the first-order prediction
        :meth:`BilevelObjective.predict_coefs` instead of the last solution.
    adaptive_tol : bool
        HOAG's schedule (Pedregosa 2016): solve the lower level only as accurately as
        the outer progress needs, :math:`\epsilon_k = \max(\text{inner\_tol},
        \min(10^{-5}, 10^{-3}\|\nabla_\theta f_k\|))`, tightening as the outer
        gradient shrinks; ``False`` solves every trial to ``inner_tol``.
    monitor : BilevelObjective, optional
        Early stopping on held-out folds (beyond seed-000): its value (the same
        criterion on folds whose validation rows the optimised criterion never sees) is
        computed at every accepted iterate; the run stops when it has not improved for
        ``patience`` iterations and returns the iterate with the best monitor value.
        With thousands of weights learned from n validation rows the optimised
        criterion keeps falling while the held-out one rises (it overfits, as sparse-ho
        reports for the weighted Lasso); this stops it there.
    patience : int
        Iterations without a monitor improvement before stopping.
    monitor_rule : {"min", "1se"}
        Which iterate the monitor returns: the one with the smallest held-out value, or
        (``"1se"``) the best among those whose held-out gain over the *start* exceeds
        one standard error of the paired per-row differences, else the start
        (:class:`~bisvm.selection.early_stopping.HeldOutMonitor`).
    monitor_threshold : float, optional
        The monitor judges its solutions with the coefficients under this support
        threshold set to zero (the model restricted to its support), and its ``"1se"``
        rule then prefers the sparsest iterate within one standard error of the start
        when none gains beyond it; None: as they are, no sparsity preference.
    max_line_search : int
        Cap on trial points per line search (each costs a lower-level solve per fold);
        a search that finds no acceptable step stops the run at the current iterate.
    callback : callable, optional
        ``callback(entry)`` with each :class:`HistoryEntry` (progress reporting).
    warm0, monitor_warm0 : tuple of ndarray, optional
        Warm starts of the first lower-level solves (one per fold of ``objective`` and
        of ``monitor``), e.g. the solutions of a previous stage.

    Returns
    -------
    BilevelResult
    """
    t0 = time.perf_counter()
    b0 = np.broadcast_to(np.asarray(beta0, dtype=float), (objective.hyper.n_hyper,)).copy()
    if isinstance(max_line_search, bool) or not isinstance(max_line_search, (int, np.integer)) \
            or max_line_search < 1:
        raise ValueError(f"max_line_search must be a positive int, got {max_line_search!r}")
    if np.any(b0 <= 0) or not np.all(np.isfinite(b0)):
        raise ValueError("beta0 must be positive and finite (the outer problem is in log beta)")
    bmax = beta_upper_bound(objective.folds) if beta_max is None else float(beta_max)
    if np.any(b0 >= bmax):
        raise ValueError(f"beta0 must be below beta_max={bmax:.4g}")
    run = _OuterRun(objective, bmax, inner_tol, adaptive_tol, predictor, nonzero_threshold,
                    warm0, None if monitor is None else HeldOutMonitor(
                        monitor, monitor_warm0, patience, monitor_rule, monitor_threshold),
                    callback, t0)
    res = minimize_lbfgs(
        run.fun_grad, logit(b0 / bmax), tol=tol, max_iter=max_iter, memory=memory,
        ftol=ftol, first_max_change=1.0, max_step=max_log_step, callback=run.on_iteration,
        name="BiSVM L-BFGS", warn=warn, max_ls=int(max_line_search),
    )
    ev, value = run.last, float(res.objective)
    if run.held_out is not None and run.held_out.best is not None:
        ev, value = run.held_out.best
    return BilevelResult(
        beta=ev.beta, value=value, coefs=ev.coefs,
        history=tuple(run.history), n_iter=res.n_iter, lower_solves=run.solves,
        lower_iterations=run.iters, trials=tuple(run.trials), converged=res.converged,
        seconds=time.perf_counter() - t0,
    )


class _OuterRun:
    """The state of one :func:`bisvm_lbfgs` run: warm starts of the lower level and the
    adjoint, the inner tolerance schedule, counts, history and trials."""

    def __init__(self, objective, bmax, inner_tol, adaptive_tol, predictor, threshold,
                 warm0, held_out, callback, t0):
        self.objective, self.bmax, self.inner_tol = objective, bmax, inner_tol
        self.adaptive_tol, self.predictor, self.threshold = adaptive_tol, predictor, threshold
        self.warm = None if warm0 is None else tuple(warm0)
        self.held_out, self.callback, self.t0 = held_out, callback, t0
        self.tol = 1e-5 if adaptive_tol else inner_tol
        self.ev = self.last = None
        self.solves = self.iters = 0
        self.evals, self.history, self.trials = {}, [], []

    def fun_grad(self, theta):
        beta = self.bmax * expit(theta)
        warm = self.warm
        if self.predictor and self.ev is not None:
            # the linear prediction is far better for small steps and can be worse than the
            # last solution for large ones: keep, per fold, the start with smaller gradient
            warm = [warm, self.objective.predict_coefs(self.ev, beta)]
        lam0 = None if self.ev is None else self.ev.multipliers
        ev = self.objective.evaluate(beta, warm, self.tol, adjoint_warm=lam0)
        self.ev, self.warm = ev, ev.coefs
        self.solves += ev.lower_solves
        self.iters += ev.lower_iterations
        self.evals[theta.tobytes()] = ev
        self.trials.append((beta.copy(), ev.value))
        return ev.value, beta * (1.0 - beta / self.bmax) * ev.grad

    def on_iteration(self, k, theta, f, g):
        ev = self.last = self.evals[theta.tobytes()]
        gn = float(np.linalg.norm(g))
        if self.adaptive_tol:
            self.tol = max(self.inner_tol, min(1e-5, 1e-3 * gn))
        mval, stop = float("nan"), False
        if self.held_out is not None:
            mval, stop, it = self.held_out.update(ev, float(f), self.tol)
            self.solves += len(self.held_out.monitor.folds)
            self.iters += it
        entry = HistoryEntry(
            iteration=k, beta=self.bmax * expit(theta), value=float(f), grad_norm=gn,
            n_nonzero=_n_nonzero(ev.coefs, self.threshold), lower_solves=self.solves,
            lower_iterations=self.iters, seconds=time.perf_counter() - self.t0,
            monitor_value=mval,
        )
        self.history.append(entry)
        if self.callback is not None:
            self.callback(entry)
        self.evals = {theta.tobytes(): ev}
        return stop
