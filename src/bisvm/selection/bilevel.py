r"""The bilevel engine of the sparse SVM (González Vallejo 2024): four swappable roles, as
sparse-ho separates them (Bertrand et al. 2020, "Implicit differentiation of Lasso-type
models for hyperparameter optimization"):

* the **model** (:mod:`~bisvm.selection.model`): the lower-level problem E(w; b) and its
  solver policy (:class:`~bisvm.solvers.primal.lower_level.LowerLevel`, in the solver
  layer), with the :class:`~bisvm.selection.model.HyperModel` that maps β onto its
  penalty weights;
* the **criterion** (:mod:`~bisvm.selection.criteria`): the validation loss J(w) of each
  fold;
* the **hypergradient** (:mod:`~bisvm.selection.hypergradient`): implicit
  differentiation by an adjoint solve;
* the **outer optimiser** (:mod:`~bisvm.selection.outer`): BiSVM L-BFGS.

:class:`BilevelObjective` composes the first three over the folds,
:math:`\beta \mapsto (J, \nabla_\beta J)` averaged over folds, and checks each role's
interface once when it is built; the outer optimiser minimises it. The names of the
role modules are re-exported here for the callers of the engine.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from ..solvers.primal.lower_level import (
    LOWER_SOLVERS,
    LowerLevel,
    mean_second_moment,
    resolve_solver,
    zero_model_penalty,
)
from .criteria import Criterion, balanced_weights, make_criterion
from .hypergradient import Hypergradient, ImplicitAdjoint
from .model import HyperModel, LowerModel, beta_upper_bound, check_role, make_hyper_model
from .outer import (
    BilevelResult,
    BiSVMLBFGS,
    HistoryEntry,
    OuterOptimiser,
    bisvm_lbfgs,
)
from .search import THESIS_GRID, GridResult, grid_search
from .threads import map_ordered

__all__ = [
    "LowerLevel", "HyperModel", "make_hyper_model", "Fold", "BilevelObjective",
    "Evaluation", "HistoryEntry", "BilevelResult", "GridResult", "bisvm_lbfgs", "BiSVMLBFGS",
    "OuterOptimiser", "grid_search", "THESIS_GRID", "LOWER_SOLVERS", "resolve_solver",
    "zero_model_penalty", "mean_second_moment", "PARALLEL_FOLD_WORK", "beta_upper_bound",
]


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
    problems: tuple = ()


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
    lower : LowerModel
        The model role (:class:`~bisvm.solvers.primal.lower_level.LowerLevel`).
    hyper : HyperModel
    loss : str
        The criterion role: a validation loss of
        :func:`~bisvm.selection.criteria.make_criterion`, built on each fold.
    balanced : bool
        Weigh the validation rows of each fold by the inverse of their class count
        (:func:`~bisvm.selection.criteria.balanced_weights`): the criterion is the mean
        over classes of the per-class means (of the weighted means, with weights).
    n_jobs : int, optional
        Folds worked on at once by :meth:`solve`, :meth:`value`, :meth:`evaluate` and
        :meth:`predict_coefs`: ``None``/``1`` one after the other, else one
        :class:`joblib.Parallel` task per fold (``-1``: all cores), on threads unless a
        surrounding :func:`joblib.parallel_config` names another backend (e.g. Dask).
    hypergradient : Hypergradient
        The hypergradient role (default :class:`~bisvm.selection.hypergradient.
        ImplicitAdjoint`).

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
    hypergradient: Hypergradient = field(default_factory=ImplicitAdjoint)
    _criteria: tuple = field(init=False, repr=False)
    _cache: dict = field(init=False, repr=False, default_factory=dict)

    def __post_init__(self):
        check_role(self.lower, LowerModel, "lower")
        check_role(self.hypergradient, Hypergradient, "hypergradient")
        nj = self.n_jobs
        if nj is not None and (isinstance(nj, bool) or not isinstance(nj, (int, np.integer))
                               or nj == 0):
            raise ValueError(f"n_jobs must be None or a nonzero integer (joblib's convention, "
                             f"-1: all cores), got {nj!r}")
        crits = tuple(make_criterion(self.loss, f.X_val, f.y_val,
                                     balanced_weights(f.y_val, f.w_val) if self.balanced
                                     else f.w_val)
                      for f in self.folds)
        for c in crits:
            check_role(c, Criterion, "criterion")
        object.__setattr__(self, "_criteria", crits)

    @property
    def criteria(self):
        """The validation criterion of every fold (:mod:`~bisvm.selection.criteria`)."""
        return self._criteria

    def problems(self, beta):
        """The lower-level problem of every fold at ``beta``: built once per fold (the
        model validates and converts its data then), re-weighted at each trial point."""
        wts = self.hyper.weights(beta)
        l2 = self.hyper.l2(beta)
        if self.lower.exact and l2 is not None:
            return [self.lower.problem(f.X_train, f.y_train, self.hyper.penalty_groups, wts, l2,
                                       sample_weight=f.w_train)
                    for f in self.folds]
        base = self._cache.get("problems")
        if base is None:
            base = self._cache["problems"] = [
                self.lower.problem(f.X_train, f.y_train, self.hyper.penalty_groups, wts, l2,
                                   sample_weight=f.w_train)
                for f in self.folds]
        return [self.lower.reweighted(P, wts, l2) for P in base]

    @property
    def fold_work(self):
        r"""The Gram product of the largest fold, :math:`n\,d\min(n, d)` flops
        (:math:`\mathrm{nnz}\min(n, d)` for sparse X): the numerical work of one Newton
        step of its lower level."""
        def work(X):
            n, d = X.shape
            return float(X.nnz if sp.issparse(X) else n * d) * min(n, d)
        return max((work(f.X_train) for f in self.folds), default=0.0)

    @property
    def serial(self):
        """Whether the folds run one after the other in this thread (``n_jobs`` None or
        1, or a single fold): the methods then loop over them themselves."""
        return self.n_jobs in (None, 1) or len(self.folds) < 2

    def map_folds(self, func, tasks):
        """``[func(*t) for t in tasks]`` in fold order, on ``n_jobs`` workers
        (:func:`~bisvm.selection.threads.map_ordered`); on threads only when :attr:`fold_work`
        reaches :data:`PARALLEL_FOLD_WORK`."""
        return map_ordered(func, tasks, self.n_jobs,
                           threads=self.fold_work >= PARALLEL_FOLD_WORK)

    def solve(self, beta, warm=None, tol=1e-9):
        """Lower-level solutions on every fold; returns (coefs, iterations)."""
        tasks = [(P, None if warm is None else warm[i], tol)
                 for i, P in enumerate(self.problems(beta))]
        if self.serial:
            rs = []
            for P, w0, t in tasks:
                rs.append(self.lower.solve(P, w0, t))
        else:
            rs = self.map_folds(self.lower.solve, tasks)
        return tuple(r.coef for r in rs), sum(r.n_iter for r in rs)

    def value(self, beta, warm=None, tol=1e-9):
        """Upper-level value only (no hypergradient)."""
        tasks = [(self.lower, P, None if warm is None else warm[i], tol, self._criteria[i])
                 for i, P in enumerate(self.problems(beta))]
        if self.serial:
            vals = []
            for lower, P, w0, t, crit in tasks:
                vals.append(crit.value_and_grad(lower.solve(P, w0, t).coef)[0])
        else:
            vals = self.map_folds(_fold_value, tasks)
        return float(np.mean(vals))

    @staticmethod
    def _pick_warm(P, warm, i):
        r"""Warm start of fold ``i``: ``warm`` is None, a tuple of per-fold starts, or a
        list of such tuples (candidates); the candidates of fold ``i`` go to
        :meth:`LowerLevel.solve` as a list, which starts from the best one (the smallest
        :math:`\|\nabla E\|`, at the cost of the evaluation the solver makes anyway)."""
        if warm is None:
            return None
        if isinstance(warm, list):
            starts = [c[i] for c in warm]
            return starts[0] if len(starts) == 1 else starts
        return warm[i]

    def evaluate(self, beta, warm=None, tol=1e-9, adjoint_warm=None):
        r""":math:`J(\beta)` and :math:`\nabla_\beta J` (mean over folds).

        Per fold: one lower-level solve, then the hypergradient role's adjoint solve
        :math:`\hat\lambda = -H^{-1}\nabla_w J` with the solver's Newton factor
        (warm-started from ``adjoint_warm``, the previous multipliers, when the factor
        is iterative), and :math:`\nabla_\beta J = (\nabla_{w\beta}E)^\top\hat\lambda`
        as a vector-Jacobian product: the cost does not grow with the number of
        hyperparameters.
        """
        beta = np.asarray(beta, dtype=float)
        tasks = [(self, P, self._pick_warm(P, warm, i), tol,
                  None if adjoint_warm is None else adjoint_warm[i], self._criteria[i])
                 for i, P in enumerate(self.problems(beta))]
        if self.serial:
            out = []
            for _, P, w0, t, lam0, crit in tasks:
                out.append(self.fold_gradient(P, self.lower.solve(P, w0, t), t, lam0, crit))
        else:
            out = self.map_folds(_fold_evaluation, tasks)
        vals, grads, coefs, lams, factors, probs, iters = zip(*out)
        return Evaluation(
            beta=beta, value=float(np.mean(vals)), grad=np.mean(grads, axis=0),
            coefs=coefs, lower_iterations=sum(iters), lower_solves=len(self.folds),
            multipliers=lams, factors=factors, problems=probs,
        )

    def fold_gradient(self, P, result, tol, lam0, criterion):
        """One fold's criterion and hypergradient at its solve ``result``; returns
        (J, grad, w, multipliers, factor, problem, iterations)."""
        J, dJ = criterion.value_and_grad(result.coef)
        grad, lam, factor = self.hypergradient.gradient(self.lower, self.hyper, P, result,
                                                        dJ, tol, lam0)
        return J, grad, result.coef, lam, factor, P, result.n_iter

    def predict_coefs(self, ev, beta):
        r"""First-order prediction of the lower-level solutions at ``beta`` from an
        evaluation at ``ev.beta`` (:meth:`ImplicitAdjoint.predict`, one directional
        solve with the evaluation's Newton factor per fold): a predictor step that makes
        the warm start of the next solve second-order accurate in the step."""
        db = self.hyper.weights(beta) - self.hyper.weights(ev.beta)
        dl2 = (self.hyper.l2(beta) - self.hyper.l2(ev.beta)) if self.hyper.learn_l2 else 0.0
        tasks = [(self.lower, P, w, F, db, dl2)
                 for w, F, P in zip(ev.coefs, ev.factors, ev.problems)]
        return tuple(self.map_folds(self.hypergradient.predict, tasks))


def _fold_value(lower, P, w0, tol, criterion):
    """One fold's criterion value at its lower-level solution (a task of
    :meth:`BilevelObjective.value`)."""
    return criterion.value_and_grad(lower.solve(P, w0, tol).coef)[0]


def _fold_evaluation(objective, P, w0, tol, lam0, criterion):
    """One fold's solve, criterion and hypergradient (a task of
    :meth:`BilevelObjective.evaluate`)."""
    return objective.fold_gradient(P, objective.lower.solve(P, w0, tol), tol, lam0, criterion)
