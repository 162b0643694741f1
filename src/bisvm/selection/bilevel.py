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
import warnings
from dataclasses import dataclass, field, replace

import numpy as np
import scipy.sparse as sp
from scipy.special import expit, logit
from sklearn.exceptions import ConvergenceWarning

from ..losses import SmoothedHinge
from ..penalties import L2, GroupPseudoHuber, SumPenalty
from ..solvers.base import SmoothProblem
from ..solvers.lbfgs import minimize_lbfgs, solve_lbfgs
from ..solvers.newton import solve_newton
from ..solvers.primal import choose_newton_method, solve_truncated_newton, solve_woodbury_newton
from ..solvers.primal.exact_l1 import WeightedL1SVMProblem, solve_exact_l1
from .criteria import make_criterion
from .hypergradient import adjoint_hypergradient

__all__ = [
    "LowerLevel",
    "HyperModel",
    "make_hyper_model",
    "Fold",
    "BilevelObjective",
    "Evaluation",
    "HistoryEntry",
    "BilevelResult",
    "GridResult",
    "bisvm_lbfgs",
    "grid_search",
    "THESIS_GRID",
    "LOWER_SOLVERS",
    "resolve_solver",
    "zero_model_penalty",
    "mean_second_moment",
]

#: The thesis's 149-point grid β = 0.01, 0.02, ..., 1.49 (seed-000 §2.11).
THESIS_GRID = np.round(np.arange(1, 150) * 0.01, 2)

_SOLVERS = {"newton": solve_newton, "lbfgs": solve_lbfgs, "woodbury": solve_woodbury_newton,
            "cg": solve_truncated_newton}
#: Lower-level solvers by name; "auto" picks a Newton system by shape and sparsity.
LOWER_SOLVERS = ("auto", "newton", "woodbury", "cg", "lbfgs")
_AUTO = {"dense": "newton", "woodbury": "woodbury", "cg": "cg"}


def resolve_solver(solver, X):
    """The concrete lower-level solver for ``X``: ``solver`` itself, or for ``"auto"`` the
    Newton system :func:`~bisvm.solvers.primal.choose_newton_method` picks (dense
    Cholesky for d <= n, sample-space Woodbury for d > n, truncated Newton-CG for large
    sparse or very large data)."""
    if solver not in LOWER_SOLVERS:
        raise ValueError(f"solver must be one of {LOWER_SOLVERS}, got {solver!r}")
    return _AUTO[choose_newton_method(X)] if solver == "auto" else solver


def zero_model_penalty(X, y, hinge_smoothing):
    r"""The L1 weight at and above which the lasso part zeroes every feature:
    :math:`\beta_{\rm zero} = \max_j |\partial_j L(0)| =
    \sigma(1/\mu)\max_j|\frac1n\sum_i y_i x_{ij}|` for the softplus hinge at
    :math:`w = 0` (glmnet's :math:`\lambda_{\max}`; with the smoothed penalty the
    coefficients above it are :math:`O(\gamma)`, not exactly zero). O(nnz).

    Parameters
    ----------
    X : ndarray or sparse matrix, shape (n, d)
        Features (no bias column).
    y : ndarray, shape (n,)
        ±1 labels.
    hinge_smoothing : float
        μ.
    """
    g = np.asarray(X.T @ np.asarray(y, dtype=float)).ravel() / X.shape[0]
    return float(expit(1.0 / hinge_smoothing) * np.max(np.abs(g))) if g.size else 0.0


def mean_second_moment(X):
    r"""The mean column second moment :math:`\frac{1}{nd}\sum_{ij}x_{ij}^2` of a dense or
    sparse X (1 for standardised features), in O(nnz); 1 for an empty or all-zero X."""
    n, d = X.shape
    if n == 0 or d == 0:
        return 1.0
    if sp.issparse(X):
        Xc = X.tocsr()
        if not Xc.has_canonical_format:
            Xc = Xc.copy()
            Xc.sum_duplicates()
        total = float(np.dot(Xc.data, Xc.data))
    else:
        total = float(np.einsum("ij,ij->", X, X))
    m = total / (n * d)
    return m if m > 0 and np.isfinite(m) else 1.0


@dataclass(frozen=True)
class LowerLevel:
    r"""The smoothed L2L1-SVM lower level (seed-000 (4.21), (4.28), (4.37)).

    Parameters
    ----------
    l2_penalty : float
        The thesis's α > 0 (ridge weight; makes the problem α-strongly convex).
    hinge_smoothing : float
        The thesis's μ > 0 of the softplus hinge ℓ_μ.
    l1_smoothing : float
        The thesis's γ > 0 of the Pseudo-Huber function H_γ.
    penalize_intercept : bool
        Penalise the bias (last coordinate) by α and β as the thesis does.
    solver : {"auto", "newton", "woodbury", "cg", "lbfgs"}
        Newton with a Cholesky solve of the dense d × d Hessian; Newton with the step
        solved in the n × n sample space (Woodbury, for d > n); truncated Newton with
        preconditioned CG on Hessian-vector products (large sparse data); the thesis's
        L-BFGS (Algorithm 7); or ``"auto"``, one of the Newton systems chosen by the
        shape and sparsity of X (:func:`resolve_solver`).
    max_iter : int
        Iteration cap of the lower-level solver.
    """

    l2_penalty: float = 0.01
    hinge_smoothing: float = 0.25
    l1_smoothing: float = 0.01
    penalize_intercept: bool = True
    solver: str = "auto"
    max_iter: int = 500

    def __post_init__(self):
        for name in ("l2_penalty", "hinge_smoothing", "l1_smoothing"):
            v = getattr(self, name)
            if not isinstance(v, (int, float, np.floating, np.integer)) or not (
                np.isfinite(v) and (v > 0 or (v == 0 and name == "l1_smoothing"))
            ):
                raise ValueError(f"{name} must be a positive finite float, got {v!r}"
                                 + (" (0: the exact L1 mode)" if name == "l1_smoothing"
                                    else ""))
        if self.solver not in LOWER_SOLVERS:
            raise ValueError(f"solver must be one of {LOWER_SOLVERS}, got {self.solver!r}")

    @property
    def exact(self):
        """Whether this is the exact weighted-L1 lower level (``l1_smoothing == 0``)."""
        return self.l1_smoothing == 0

    def problem(self, X, y, penalty_groups, weights, l2_penalty=None):
        """The :class:`SmoothProblem` E(·; β) on augmented data ``X`` (bias column last);
        ``l2_penalty`` overrides α when it is learned too. With ``l1_smoothing == 0``,
        the exact weighted (group) L1 problem
        :class:`~bisvm.solvers.primal.exact_l1.WeightedL1SVMProblem`."""
        d = X.shape[1]
        mask = np.ones(d, dtype=bool)
        if not self.penalize_intercept:
            mask[-1] = False
        if self.exact:
            return WeightedL1SVMProblem(
                X, y, self.hinge_smoothing,
                self.l2_penalty if l2_penalty is None else float(l2_penalty), mask,
                np.asarray(weights, dtype=float), penalty_groups)
        pen = SumPenalty(
            (
                L2(self.l2_penalty if l2_penalty is None else float(l2_penalty), mask),
                GroupPseudoHuber(weights, penalty_groups, self.l1_smoothing),
            )
        )
        return SmoothProblem(X, y, SmoothedHinge(self.hinge_smoothing), pen)

    def solve(self, problem, w0=None, tol=1e-9):
        """Solve the lower level from the warm start ``w0``; returns a SolverResult.

        From a cold start the solve goes by continuation, each stage warm-started from
        the previous solution (the reported iterations include every stage):

        * with small smoothing (μ < 0.05 or γ < 0.005) the problem is nearly non-smooth
          and Newton needs hundreds of damped steps: μ and γ go down by 10 per stage;
        * with the truncated Newton-CG solver, the L1 weights go down from 100× and 10×
          their value (glmnet's path idea): a weakly penalised problem from zero takes
          ~100 Newton steps with many CG iterations each on a 20,000 × 50,000 sparse
          problem, through the sparse solutions of the stages ~20."""
        if self.exact:
            return solve_exact_l1(problem, w0=w0, tol=tol, max_iter=self.max_iter)
        mu, gamma = self.hinge_smoothing, self.l1_smoothing
        solver_name = resolve_solver(self.solver, problem.X)
        smooth_stages = not (mu >= 0.05 and gamma >= 0.005)
        if w0 is not None or not (smooth_stages or solver_name == "cg"):
            return self._solve_final(problem, w0, tol)
        ridge, pen = problem.penalty.terms
        stages = []
        m, g = max(mu, 0.25), max(gamma, 0.01)
        while m > mu or g > gamma:
            stages.append((m, g, 1.0))
            m, g = max(mu, m / 10), max(gamma, g / 10)
        if solver_name == "cg":
            stages = [(m, g, 100.0), (m, g, 10.0)] + [(m, g, 1.0) for m, g, _ in stages]
        n_iter, w = 0, None
        solver = _SOLVERS[solver_name]
        for m, g, scale in stages:
            stage = replace(self, hinge_smoothing=m, l1_smoothing=g)
            P = stage.problem(problem.X, problem.y, pen.groups, pen.weights * scale,
                              ridge.strength)
            r = solver(P, w0=w, tol=max(tol, 1e-6), max_iter=self.max_iter)
            n_iter += r.n_iter
            w = r.coef
        r = self._solve_final(problem, w, tol)
        return replace(r, n_iter=r.n_iter + n_iter)

    def _solve_final(self, problem, w0, tol):
        """The solve at the requested (μ, γ); an L-BFGS cap is reported with its cause.

        At small smoothing the curvature of E reaches ~1/μ (condition number ~1/(μα)):
        L-BFGS, whose line search compares function values, then often stalls above a
        gradient tolerance of 1e-8 (measured in docs/reliability.md, bug 11), while
        Newton converges. The warning says so instead of only "increase max_iter"."""
        solver = resolve_solver(self.solver, problem.X)
        if solver != "lbfgs":
            return _SOLVERS[solver](problem, w0=w0, tol=tol, max_iter=self.max_iter)
        r = solve_lbfgs(problem, w0=w0, tol=tol, max_iter=self.max_iter, warn=False)
        if not r.converged and r.n_iter >= self.max_iter:
            hint = ""
            if self.hinge_smoothing < 1e-3 or self.l1_smoothing < 1e-3:
                hint = (f"; at hinge_smoothing={self.hinge_smoothing:g}, "
                        f"l1_smoothing={self.l1_smoothing:g} the curvature reaches "
                        "~1/smoothing and L-BFGS can stall above a tight tol: "
                        "solver='newton' converges there")
            warnings.warn(
                f"L-BFGS lower-level solver stopped after max_iter={self.max_iter} "
                f"iterations with a stopping criterion of {r.grad_norm:.3g} > "
                f"tol={tol:.3g}; increase max_iter or tol{hint}",
                ConvergenceWarning, stacklevel=3)
        return r


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
    """One training/validation pair, both with the bias column of ones appended."""

    X_train: np.ndarray
    y_train: np.ndarray
    X_val: np.ndarray
    y_val: np.ndarray


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
    method: str = ""


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
    loss : {"squared", "logistic"}
        Validation criterion of :mod:`bisvm.selection.criteria`.
    """

    folds: tuple
    lower: LowerLevel
    hyper: HyperModel
    loss: str = "squared"
    _criteria: tuple = field(init=False, repr=False)
    _cache: dict = field(init=False, repr=False, default_factory=dict)

    def __post_init__(self):
        crits = tuple(make_criterion(self.loss, f.X_val, f.y_val) for f in self.folds)
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
                    self.lower.problem(f.X_train, f.y_train, self.hyper.penalty_groups, wts)
                    for f in self.folds]
            return [P.with_weights(wts) for P in base]
        return [
            self.lower.problem(f.X_train, f.y_train, self.hyper.penalty_groups, wts, l2)
            for f in self.folds
        ]

    def solve(self, beta, warm=None, tol=1e-9):
        """Lower-level solutions on every fold; returns (coefs, iterations)."""
        coefs, iters = [], 0
        for i, P in enumerate(self.problems(beta)):
            r = self.lower.solve(P, None if warm is None else warm[i], tol)
            coefs.append(r.coef)
            iters += r.n_iter
        return tuple(coefs), iters

    def value(self, beta, warm=None, tol=1e-9):
        """Upper-level value only (no hypergradient)."""
        coefs, _ = self.solve(beta, warm, tol)
        return float(np.mean([c.value_and_grad(w)[0] for c, w in zip(self._criteria, coefs)]))

    @staticmethod
    def _pick_warm(P, warm, i):
        """Warm start of fold ``i``: ``warm`` is None, a tuple of per-fold starts, or a
        list of such tuples (candidates), of which the one with the smallest
        :math:`\\|\\nabla E\\|` is used."""
        if warm is None:
            return None
        if isinstance(warm, list):
            starts = [c[i] for c in warm]
            if len(starts) == 1:
                return starts[0]
            if hasattr(P, "kkt_violation"):
                return min(starts, key=lambda w0: float(np.max(P.kkt_violation(w0))))
            return min(starts, key=lambda w0: np.linalg.norm(P.gradient(w0)))
        return warm[i]

    def evaluate(self, beta, warm=None, tol=1e-9, adjoint_warm=None):
        r""":math:`J(\beta)` and :math:`\nabla_\beta J` (mean over folds).

        Per fold: one lower-level solve, then one adjoint solve
        :math:`\hat\lambda = -H^{-1}\nabla_w J` with the solver's Newton factor
        (warm-started from ``adjoint_warm``, the previous multipliers, when the factor
        is iterative), and :math:`\nabla_\beta J = (\nabla_{w\beta}E)^\top\hat\lambda`
        as a vector-Jacobian product: the cost does not grow with the number of
        hyperparameters.
        """
        beta = np.asarray(beta, dtype=float)
        vals, grads, coefs, lams, factors, pens = [], [], [], [], [], []
        iters = 0
        method = ""
        for i, P in enumerate(self.problems(beta)):
            r = self.lower.solve(P, self._pick_warm(P, warm, i), tol)
            iters += r.n_iter
            method = r.method or self.lower.solver
            w = r.coef
            J, dJ = self._criteria[i].value_and_grad(w)
            ridge, pen = P.penalty.terms
            factor = r.factor if r.factor is not None else _dense_factor(P, w)
            lam0 = None if adjoint_warm is None else adjoint_warm[i]
            g_w, lam = adjoint_hypergradient(factor, dJ, lambda v, w=w, pen=pen:
                                             pen.weight_vjp(w, v), lam0=lam0)
            if self.hyper.learn_l2:
                # d(grad_w E)/d(alpha) = mask * w
                grads.append(self.hyper.reduce(g_w, float(ridge.gradient(w) @ lam)
                                               / ridge.strength))
            else:
                grads.append(self.hyper.reduce(g_w))
            vals.append(J)
            coefs.append(w)
            lams.append(lam)
            factors.append(factor)
            pens.append(P.penalty)
        return Evaluation(
            beta=beta, value=float(np.mean(vals)), grad=np.mean(grads, axis=0),
            coefs=tuple(coefs), lower_iterations=iters, lower_solves=len(self.folds),
            multipliers=tuple(lams), factors=tuple(factors), penalties=tuple(pens),
            method=method,
        )

    def predict_coefs(self, ev, beta):
        r"""First-order prediction of the lower-level solutions at ``beta`` from an
        evaluation at ``ev.beta``: :math:`\hat w - H^{-1}(\nabla_{wb}E)\,\Delta b`
        (the implicit function theorem, seed-000 (4.7)), one directional solve with the
        evaluation's Newton factor per fold; a predictor step that makes the warm start
        of the next solve second-order accurate in the step."""
        db = self.hyper.weights(beta) - self.hyper.weights(ev.beta)
        dl2 = (self.hyper.l2(beta) - self.hyper.l2(ev.beta)) if self.hyper.learn_l2 else 0.0
        out = []
        for w, F, pen in zip(ev.coefs, ev.factors, ev.penalties):
            ridge, hub = pen.terms
            rhs = hub.weight_jvp(w, db)
            if dl2:
                rhs = rhs + ridge.gradient(w) / ridge.strength * dl2
            out.append(w - F.solve(rhs, rtol=1e-3))
        return tuple(out)


def _dense_factor(P, w):
    """The Newton factor of a solver that returns none (L-BFGS): the dense Hessian."""
    from ..solvers.newton import DenseFactor

    return DenseFactor(P.hessian(w))


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


def _beta_max(objective):
    g = max(float(np.max(np.mean(np.abs(f.X_train), axis=0))) for f in objective.folds)
    return 10.0 * g


def bisvm_lbfgs(objective, beta0=0.01, *, max_iter=100, tol=1e-4, ftol=1e-5, memory=10,
                max_log_step=3.0, inner_tol=1e-9, nonzero_threshold=0.01, beta_max=None,
                predictor=True, warn=True, adaptive_tol=True, monitor=None, patience=5,
                callback=None):
    r"""BiSVM L-BFGS (seed-000 Algorithm 8) in log-scale coordinates
    :math:`\beta = \beta_{\max}\,\sigma(\theta)` (:math:`\theta \approx \log\beta` for
    :math:`\beta \ll \beta_{\max}`).

    Minimises :math:`f(\theta) = J(\beta(\theta))` with gradient
    :math:`\nabla_\theta f = \beta(1 - \beta/\beta_{\max}) \odot \nabla_\beta J`
    (the KKT hypergradient), by the
    L-BFGS of :func:`~bisvm.solvers.lbfgs.minimize_lbfgs` with a strong-Wolfe line search.
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
    callback : callable, optional
        ``callback(entry)`` with each :class:`HistoryEntry` (progress reporting).

    Returns
    -------
    BilevelResult
    """
    t0 = time.perf_counter()
    b0 = np.broadcast_to(np.asarray(beta0, dtype=float), (objective.hyper.n_hyper,)).copy()
    if np.any(b0 <= 0) or not np.all(np.isfinite(b0)):
        raise ValueError("beta0 must be positive and finite (the outer problem is in log beta)")
    bmax = _beta_max(objective) if beta_max is None else float(beta_max)
    if np.any(b0 >= bmax):
        raise ValueError(f"beta0 must be below beta_max={bmax:.4g}")
    state = {"warm": None, "ev": None, "solves": 0, "iters": 0, "evals": {}, "last": None,
             "tol": inner_tol if not adaptive_tol else 1e-5, "best": None, "mwarm": None,
             "since": 0}
    trials = []

    def fun_grad(theta):
        beta = bmax * expit(theta)
        warm = state["warm"]
        if predictor and state["ev"] is not None:
            # the linear prediction is far better for small steps and can be worse than the
            # last solution for large ones: keep, per fold, the start with smaller gradient
            warm = [warm, objective.predict_coefs(state["ev"], beta)]
        lam0 = None if state["ev"] is None else state["ev"].multipliers
        ev = objective.evaluate(beta, warm, state["tol"], adjoint_warm=lam0)
        state["ev"] = ev
        state["warm"] = ev.coefs
        state["solves"] += ev.lower_solves
        state["iters"] += ev.lower_iterations
        state["evals"][theta.tobytes()] = ev
        trials.append((beta.copy(), ev.value))
        return ev.value, beta * (1.0 - beta / bmax) * ev.grad

    history = []

    def on_iteration(k, theta, f, g):
        ev = state["evals"][theta.tobytes()]
        state["last"] = ev
        gn = float(np.linalg.norm(g))
        if adaptive_tol:
            state["tol"] = max(inner_tol, min(1e-5, 1e-3 * gn))
        mval, stop = float("nan"), False
        if monitor is not None:
            mcoefs, mit = monitor.solve(ev.beta, state["mwarm"], state["tol"])
            state["mwarm"] = mcoefs
            state["solves"] += len(monitor.folds)
            state["iters"] += mit
            mval = float(np.mean([c.value_and_grad(w)[0]
                                  for c, w in zip(monitor.criteria, mcoefs)]))
            best = state["best"]
            if best is None or mval < best[0] - 1e-6 * max(abs(best[0]), 1e-12):
                state["best"] = (mval, k, ev, float(f))
                state["since"] = 0
            else:
                state["since"] += 1
                stop = state["since"] >= patience
        entry = HistoryEntry(
            iteration=k, beta=bmax * expit(theta), value=float(f), grad_norm=gn,
            n_nonzero=_n_nonzero(ev.coefs, nonzero_threshold), lower_solves=state["solves"],
            lower_iterations=state["iters"], seconds=time.perf_counter() - t0,
            monitor_value=mval,
        )
        history.append(entry)
        if callback is not None:
            callback(entry)
        state["evals"] = {theta.tobytes(): ev}
        return stop

    res = minimize_lbfgs(
        fun_grad, logit(b0 / bmax), tol=tol, max_iter=max_iter, memory=memory, ftol=ftol,
        first_max_change=1.0, max_step=max_log_step, callback=on_iteration,
        name="BiSVM L-BFGS", warn=warn,
    )
    ev, value = state["last"], float(res.objective)
    if state["best"] is not None:
        _, _, ev, value = state["best"]
    return BilevelResult(
        beta=ev.beta, value=value, coefs=ev.coefs,
        history=tuple(history), n_iter=res.n_iter, lower_solves=state["solves"],
        lower_iterations=state["iters"], trials=tuple(trials), converged=res.converged,
        seconds=time.perf_counter() - t0,
    )


@dataclass(frozen=True)
class GridResult:
    """Outcome of :func:`grid_search`: values and solutions along the grid."""

    grid: np.ndarray
    values: np.ndarray
    coefs: np.ndarray
    best_beta: float
    best_value: float
    lower_solves: int
    lower_iterations: int
    seconds: float


def grid_search(objective, grid=THESIS_GRID, *, inner_tol=1e-9, progress=None):
    """Grid search over a scalar β broadcast to every hyperparameter (seed-000 §4.3),
    warm-starting each solve from the previous grid point's solution.

    Parameters
    ----------
    objective : BilevelObjective
    grid : ndarray
        Increasing β values (the thesis's 149 points 0.01 … 1.49 by default).
    progress : callable, optional
        Called with 1 after each grid point (e.g. a progress bar's ``update``).

    Returns
    -------
    GridResult
        ``coefs`` has shape (len(grid), n_folds, d + 1): the regularisation path.
    """
    t0 = time.perf_counter()
    grid = np.asarray(grid, dtype=float)
    if grid.ndim != 1 or grid.size == 0 or np.any(grid <= 0):
        raise ValueError("grid must be a non-empty 1-D array of positive values")
    if objective.hyper.learn_l2:
        raise ValueError("grid_search scans the L1 weight only; build the objective with "
                         "learn_l2=False")
    warm, vals, coefs, iters = None, [], [], 0
    ones = np.ones(objective.hyper.n_hyper)
    for b in grid:
        ws, it = objective.solve(b * ones, warm, inner_tol)
        warm = ws
        iters += it
        vals.append(np.mean([c.value_and_grad(w)[0] for c, w in zip(objective.criteria, ws)]))
        coefs.append(np.array(ws))
        if progress is not None:
            progress(1)
    vals = np.array(vals)
    k = int(np.argmin(vals))
    return GridResult(
        grid=grid, values=vals, coefs=np.array(coefs), best_beta=float(grid[k]),
        best_value=float(vals[k]), lower_solves=len(grid) * len(objective.folds),
        lower_iterations=iters, seconds=time.perf_counter() - t0,
    )
