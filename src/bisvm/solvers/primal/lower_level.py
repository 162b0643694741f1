r"""The lower-level model of the bilevel sparse SVM (González Vallejo 2024, "Selección de
variables a través de máquinas de soporte vectorial dispersas: un enfoque de
optimización binivel"): the smoothed elastic-net SVM as a problem record and its solver
policy.

:class:`LowerLevel` owns everything about the problem E(w; b) that the bilevel layer
must not know: its data loss (the softplus hinge of classification, or a smoothed
regression loss), its penalty (ridge plus weighted Pseudo-Huber), how new penalty weights
re-weight a problem, the solve (the choice of Newton system by the data's shape and
sparsity, continuation from a cold start, the exact weighted-L1 mode
``l1_smoothing=0``) and the derivatives of the optimality condition in the weights that
implicit differentiation needs. The bilevel layer (:mod:`bisvm.selection`) sees it through
the ``LowerModel`` interface of :mod:`bisvm.selection.model`.
"""

from __future__ import annotations

import numbers
import warnings
from dataclasses import dataclass, replace

import numpy as np
import scipy.sparse as sp
from scipy.special import expit
from sklearn.exceptions import ConvergenceWarning

from ...losses import PseudoHuberLoss, SmoothedEpsilonInsensitive, SmoothedHinge, Squared
from ...penalties import L2, GroupPseudoHuber, SumPenalty
from .._linalg import DenseFactor
from ..base import SmoothProblem
from . import choose_newton_method
from .exact_l1 import WeightedL1SVMProblem, solve_exact_l1
from .lbfgs import solve_lbfgs
from .newton import dense_system, newton_loop
from .truncated import cg_system, prepare_cg_data
from .wide import woodbury_system

__all__ = [
    "LowerLevel",
    "LOWER_SOLVERS",
    "resolve_solver",
    "zero_model_penalty",
    "mean_second_moment",
    "add_bias_column",
    "DATA_LOSSES",
    "StackedLowerLevel",
]


def add_bias_column(X):
    """Append the bias column of ones; a sparse X stays sparse (CSR, one copy)."""
    if not sp.issparse(X):
        return np.c_[X, np.ones(X.shape[0])]
    # each row's entries followed by a 1 in the new last column
    X = X.tocsr()
    n, d = X.shape
    indptr = X.indptr.astype(np.int64) + np.arange(n + 1)
    ends = indptr[1:] - 1
    keep = np.ones(indptr[-1], dtype=bool)
    keep[ends] = False
    data = np.empty(indptr[-1])
    indices = np.empty(indptr[-1], dtype=np.int64 if d + 1 > 2**31 - 1 else np.int32)
    data[keep], indices[keep] = X.data, X.indices
    data[ends], indices[ends] = 1.0, d
    return sp.csr_matrix((data, indices, indptr), shape=(n, d + 1))


# below this many entries a float64 product is cheap and mixed precision does not pay
_LOWP_MIN_SIZE = 4_000_000

#: The Newton system of each Newton solver and the ``method`` its result reports.
_SYSTEMS = {"newton": (dense_system, "dense"), "woodbury": (woodbury_system, "woodbury"),
            "cg": (cg_system, "cg")}

#: The data losses of the lower level: name -> loss at smoothing μ and tube or
#: transition width ε (the squared loss ignores both, the hinge ε).
DATA_LOSSES = {
    "smoothed_hinge": lambda mu, eps: SmoothedHinge(mu),
    "epsilon_insensitive": lambda mu, eps: SmoothedEpsilonInsensitive(eps, mu),
    "squared": lambda mu, eps: Squared(),
    "huber": lambda mu, eps: PseudoHuberLoss(eps),
}
#: Lower-level solvers by name; "auto" picks a Newton system by shape and sparsity.
LOWER_SOLVERS = ("auto", "newton", "woodbury", "cg", "lbfgs")
_AUTO = {"dense": "newton", "woodbury": "woodbury", "cg": "cg"}


def resolve_solver(solver, X, *, sparse_cg=False):
    """The concrete lower-level solver for ``X``: ``solver`` itself, or for ``"auto"`` the
    Newton system :func:`~bisvm.solvers.primal.choose_newton_method` picks (dense
    Cholesky for d <= n, sample-space Woodbury for d > n, truncated Newton-CG for large
    sparse or very large data; with ``sparse_cg``, also for sparse wide data whose
    sample-space factor costs more than CG)."""
    if solver not in LOWER_SOLVERS:
        raise ValueError(f"solver must be one of {LOWER_SOLVERS}, got {solver!r}")
    return _AUTO[choose_newton_method(X, sparse_cg=sparse_cg)] if solver == "auto" else solver


def zero_model_penalty(X, y, hinge_smoothing, sample_weight=None):
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
    sample_weight : ndarray, shape (n,), optional
        Row weights of the loss: the mean becomes the weighted mean.
    """
    yw = np.asarray(y, dtype=float)
    if sample_weight is None:
        g = np.asarray(X.T @ yw).ravel() / X.shape[0]
    else:
        sw = np.asarray(sample_weight, dtype=float)
        g = np.asarray(X.T @ (sw * yw)).ravel() / sw.sum()
    return float(expit(1.0 / hinge_smoothing) * np.max(np.abs(g))) if g.size else 0.0


def mean_second_moment(X, sample_weight=None):
    r"""The mean column second moment :math:`\frac{1}{nd}\sum_{ij}x_{ij}^2` of a dense or
    sparse X (1 for standardised features), in O(nnz); 1 for an empty or all-zero X.
    With row weights :math:`s_i`, the weighted mean
    :math:`\frac{1}{d\sum_i s_i}\sum_{ij}s_i x_{ij}^2` (a zero-weight row is absent)."""
    n, d = X.shape
    if n == 0 or d == 0:
        return 1.0
    if sp.issparse(X):
        Xc = X.tocsr()
        if not Xc.has_canonical_format:
            Xc = Xc.copy()
            Xc.sum_duplicates()
        row_sq = np.asarray(Xc.multiply(Xc).sum(axis=1)).ravel()
    else:
        row_sq = np.einsum("ij,ij->i", X, X)
    if sample_weight is None:
        m = float(row_sq.sum()) / (n * d)
    else:
        sw = np.asarray(sample_weight, dtype=float)
        m = float(sw @ row_sq) / (sw.sum() * d)
    return m if m > 0 and np.isfinite(m) else 1.0


@dataclass(frozen=True)
class LowerLevel:
    r"""The smoothed elastic-net lower level of the bilevel sparse SVM (González Vallejo 2024).

    .. math::
        E(w; b, \alpha) = \frac{1}{\sum_i s_i}\sum_i s_i\,\ell(y_i, x_i^\top w)
            + \frac{\alpha}{2}\|w\|^2 + \sum_k b_k\big(\sqrt{\gamma^2 + \|w_k\|^2}
            - \gamma\big),

    with the bias as the last coordinate of ``w`` (penalised, as in the thesis, unless
    ``penalize_intercept=False``) and :math:`\ell` the softplus hinge of the thesis or,
    for regression, a smoothed loss of the residual :math:`x_i^\top w - y_i`.

    Parameters
    ----------
    l2_penalty : float
        The thesis's α > 0 (ridge weight; makes the problem α-strongly convex).
    hinge_smoothing : float
        The smoothing μ > 0 of the data loss: the thesis's μ of the softplus hinge
        :math:`\ell_\mu`, or the width of the soft edges of the ε-tube.
    l1_smoothing : float
        The thesis's γ > 0 of the Pseudo-Huber function H_γ.
    penalize_intercept : bool
        Penalise the bias (last coordinate) by α and β as the thesis does.
    solver : {"auto", "newton", "woodbury", "cg", "lbfgs"}
        Newton with a Cholesky solve of the dense d × d Hessian; Newton with the step
        solved in the n × n sample space (Woodbury, for d > n); truncated Newton with
        preconditioned CG on Hessian-vector products (large sparse data); the thesis's
        SVM L-BFGS; or ``"auto"``, one of the Newton systems chosen by the
        shape and sparsity of X (:func:`resolve_solver`).
    max_iter : int
        Iteration cap of the lower-level solver.
    mixed_precision : {"auto", True, False}
        Hessian-vector products of the truncated Newton-CG solver in float32 inside
        float64 iterative refinement (same results to the tolerance, about half the
        time of a product). ``"auto"``: on for dense X with at least
        ``4e6`` entries solved by CG (tall data, where the products dominate).
    loss : {"smoothed_hinge", "epsilon_insensitive", "squared", "huber"}
        The data loss (:data:`DATA_LOSSES`): the softplus hinge of ±1 labels; the
        smoothed ε-insensitive loss of support vector regression; the squared error;
        the Pseudo-Huber loss with transition width ε.
    epsilon : float
        ε of the regression losses (ignored by the hinge and the squared error).
    """

    l2_penalty: float = 0.01
    hinge_smoothing: float = 0.25
    l1_smoothing: float = 0.01
    penalize_intercept: bool = True
    solver: str = "auto"
    max_iter: int = 500
    mixed_precision: object = "auto"
    loss: str = "smoothed_hinge"
    epsilon: float = 0.1

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
        if self.mixed_precision not in ("auto", True, False):
            raise ValueError("mixed_precision must be 'auto', True or False, got "
                             f"{self.mixed_precision!r}")
        if self.loss not in DATA_LOSSES:
            raise ValueError(f"loss must be one of {tuple(DATA_LOSSES)}, got {self.loss!r}")
        e = self.epsilon
        if not isinstance(e, (int, float, np.floating, np.integer)) or not (
                np.isfinite(e) and e >= 0) or (self.loss == "huber" and e == 0):
            raise ValueError(f"epsilon must be a finite float >= 0 (> 0 for the Huber loss), "
                             f"got {e!r}")
        if self.l1_smoothing == 0 and self.loss != "smoothed_hinge":
            raise ValueError("the exact L1 mode (l1_smoothing=0) solves the smoothed hinge "
                             f"only, not loss={self.loss!r}")

    @property
    def exact(self):
        """Whether this is the exact weighted-L1 lower level (``l1_smoothing == 0``)."""
        return self.l1_smoothing == 0

    def data_loss(self, smoothing=None):
        """The data loss at smoothing ``smoothing`` (default μ)."""
        mu = self.hinge_smoothing if smoothing is None else smoothing
        return DATA_LOSSES[self.loss](mu, self.epsilon)

    def zero_penalty(self, X, y, sample_weight=None):
        r"""The L1 weight at and above which the lasso part zeroes every feature,
        :math:`\max_j|\partial_j L(0)|` (glmnet's :math:`\lambda_{\max}`), for the
        features ``X`` without the bias column: :func:`zero_model_penalty` for the
        hinge; for a regression loss the loss gradient at the zero model,
        :math:`\max_j|\frac{1}{\sum s_i}\sum_i s_i\,\ell'(y_i, 0)\,x_{ij}|` (with a
        centred y, the intercept-only model)."""
        if self.loss == "smoothed_hinge":
            return zero_model_penalty(X, y, self.hinge_smoothing, sample_weight)
        r = self.data_loss().derivative(np.asarray(y, dtype=float), np.zeros(X.shape[0]))
        if sample_weight is None:
            g = np.asarray(X.T @ r).ravel() / X.shape[0]
        else:
            sw = np.asarray(sample_weight, dtype=float)
            g = np.asarray(X.T @ (sw * r)).ravel() / sw.sum()
        return float(np.max(np.abs(g))) if g.size else 0.0

    def problem(self, X, y, penalty_groups, weights, l2_penalty=None, sample_weight=None):
        r"""The :class:`SmoothProblem` E(·; β) on augmented data ``X`` (bias column last);
        ``l2_penalty`` overrides α when it is learned too. With ``l1_smoothing == 0``,
        the exact weighted (group) L1 problem
        :class:`~bisvm.solvers.primal.exact_l1.WeightedL1SVMProblem`.

        ``sample_weight`` (non-negative, validated by the caller) enters the loss as
        :math:`\frac{1}{\sum_i s_i}\sum_i s_i\ell_i` (glmnet's normalisation), so an
        integer weight k is the same problem as k copies of the row, and weights of ones
        are the plain mean."""
        d = X.shape[1]
        if sample_weight is not None:
            sample_weight = np.asarray(sample_weight, dtype=float)
            sample_weight = sample_weight * (sample_weight.size / sample_weight.sum())
        mask = np.ones(d, dtype=bool)
        if not self.penalize_intercept:
            mask[-1] = False
        if self.exact:
            return WeightedL1SVMProblem(
                X, y, self.hinge_smoothing,
                self.l2_penalty if l2_penalty is None else float(l2_penalty), mask,
                np.asarray(weights, dtype=float), penalty_groups, sample_weight)
        pen = SumPenalty(
            (
                L2(self.l2_penalty if l2_penalty is None else float(l2_penalty), mask),
                GroupPseudoHuber(weights, penalty_groups, self.l1_smoothing),
            )
        )
        return SmoothProblem(X, y, self.data_loss(), pen, sample_weight=sample_weight,
                             cg_data=self._cg_data(X))

    def reweighted(self, problem, weights, l2_penalty=None):
        """``problem`` with new L1 weights (and α when given), its data and validated
        penalty groups kept: the exact problem re-weights itself, the smoothed one gets
        a re-weighted Pseudo-Huber term."""
        if self.exact:
            return problem.with_weights(weights)
        ridge, hub = problem.penalty.terms
        if l2_penalty is not None:
            ridge = L2(float(l2_penalty), ridge.mask)
        return replace(problem, penalty=SumPenalty((ridge, hub.with_weights(weights))))

    def weight_vjp(self, problem, w, v):
        r""":math:`(\nabla_{wb}E)^\top v` at ``w``: the derivative of the optimality
        condition in the L1 weights b, applied to v (the implicit-function theorem)."""
        return problem.penalty.terms[1].weight_vjp(w, v)

    def weight_jvp(self, problem, w, db):
        r""":math:`(\nabla_{wb}E)\,\Delta b` at ``w``."""
        return problem.penalty.terms[1].weight_jvp(w, db)

    def l2_vjp(self, problem, w, v):
        r""":math:`(\partial\nabla_w E/\partial\alpha)^\top v` at ``w`` (the derivative of
        the optimality condition in α is the masked ``w``)."""
        ridge = problem.penalty.terms[0]
        return float(ridge.gradient(w) @ v) / ridge.strength

    def l2_jvp(self, problem, w, dl2):
        r""":math:`(\partial\nabla_w E/\partial\alpha)\,\Delta\alpha` at ``w``."""
        ridge = problem.penalty.terms[0]
        return ridge.gradient(w) / ridge.strength * dl2

    def newton_factor(self, problem, result):
        """The Hessian of E at ``result.coef`` as a Newton factor: the solver's own, or a
        dense Cholesky factor when the solver returns none (L-BFGS)."""
        return result.factor if result.factor is not None else DenseFactor(
            problem.hessian(result.coef))

    def _cg_data(self, X):
        # only the CG solver uses it; float32 products pay once a product costs more
        # than the one-off conversion
        if sp.issparse(X) or resolve_solver(self.solver, X) != "cg":
            return None
        lowp = self.mixed_precision is True or (
            self.mixed_precision == "auto" and X.size >= _LOWP_MIN_SIZE)
        return prepare_cg_data(X, mixed_precision=lowp)

    def solve(self, problem, w0=None, tol=1e-9):
        """Solve the lower level from the warm start ``w0``; returns a SolverResult.

        ``w0`` may be a list of candidate starts (the last solution and a predicted
        one, say): the solve starts from the one closest to optimal (smallest gradient
        norm, or KKT violation for the exact L1 mode); the Newton solvers judge them by
        the evaluation they make at their start anyway.

        From a cold start the solve goes by continuation, each stage warm-started from
        the previous solution (the reported iterations include every stage):

        * with small smoothing (μ < 0.05 or γ < 0.005) the problem is nearly non-smooth
          and Newton needs hundreds of damped steps: μ and γ go down by 10 per stage;
        * with the truncated Newton-CG solver, the L1 weights go down from 100× and 10×
          their value (glmnet's path idea; Friedman, Hastie & Tibshirani 2010,
          "Regularization paths for generalized linear models via coordinate descent"):
          from zero, a weakly penalised large sparse problem takes many Newton steps
          with many CG iterations each, while the sparse solutions of the stages are
          cheap and each warm-starts the next.

        An L-BFGS solve stopped by its cap warns with the cause: at small smoothing the
        curvature of E reaches ~1/μ (condition number ~1/(μα)) and L-BFGS, whose line
        search compares function values, can stall above a tight gradient tolerance
        where Newton converges."""
        if isinstance(w0, list):
            w0 = self._start(problem, w0)
        if self.exact:
            return solve_exact_l1(problem, w0=w0, tol=tol, max_iter=self.max_iter)
        mu, gamma = self.hinge_smoothing, self.l1_smoothing
        solver_name = resolve_solver(self.solver, problem.X)
        smooth_stages = not (mu >= 0.05 and gamma >= 0.005)
        n_iter = 0
        if w0 is None and (smooth_stages or solver_name == "cg"):
            w0, n_iter = self._continuation(problem, solver_name, tol)
        if solver_name == "lbfgs":
            r = solve_lbfgs(problem, w0=w0, tol=tol, max_iter=self.max_iter, warn=False)
            if not r.converged and r.n_iter >= self.max_iter:
                self._warn_lbfgs_cap(r, tol)
        else:
            system, method = _SYSTEMS[solver_name]
            r = newton_loop(problem, system, w0=w0, tol=tol, max_iter=self.max_iter,
                            method=method)
        return replace(r, n_iter=r.n_iter + n_iter) if n_iter else r

    def _continuation(self, problem, solver_name, tol):
        """The stages of a cold start (see :meth:`solve`); returns the last stage's
        solution and the iterations of every stage."""
        mu, gamma = self.hinge_smoothing, self.l1_smoothing
        ridge, pen = problem.penalty.terms
        stages = []
        m, g = max(mu, 0.25), max(gamma, 0.01)
        while m > mu or g > gamma:
            stages.append((m, g, 1.0))
            m, g = max(mu, m / 10), max(gamma, g / 10)
        if solver_name == "cg":
            # the weight stages at the first smoothing stage (the target one if none)
            m0, g0 = stages[0][:2] if stages else (mu, gamma)
            stages = [(m0, g0, 100.0), (m0, g0, 10.0)] + stages
        n_iter, w = 0, None
        for m, g, scale in stages:
            # the stage keeps the problem's data (and its float32 copy)
            P = replace(problem, loss=self.data_loss(m), penalty=SumPenalty(
                (ridge, GroupPseudoHuber(pen.weights * scale, pen.groups, g))))
            if solver_name == "lbfgs":
                r = solve_lbfgs(P, w0=w, tol=max(tol, 1e-6), max_iter=self.max_iter)
            else:
                system, method = _SYSTEMS[solver_name]
                r = newton_loop(P, system, w0=w, tol=max(tol, 1e-6), max_iter=self.max_iter,
                                method=method)
            n_iter += r.n_iter
            w = r.coef
        return w, n_iter

    def _warn_lbfgs_cap(self, r, tol):
        hint = ""
        if self.hinge_smoothing < 1e-3 or self.l1_smoothing < 1e-3:
            hint = (f"; at hinge_smoothing={self.hinge_smoothing:g}, "
                    f"l1_smoothing={self.l1_smoothing:g} the curvature reaches "
                    "~1/smoothing and L-BFGS can stall above a tight tol: "
                    "solver='newton' converges there")
        warnings.warn(
            f"L-BFGS lower-level solver stopped after max_iter={self.max_iter} "
            f"iterations with a stopping criterion of {r.certificate_value:.3g} > "
            f"tol={tol:.3g}; increase max_iter or tol{hint}",
            ConvergenceWarning, stacklevel=4)

    def _start(self, problem, starts):
        # the Newton loop picks among candidates itself (no extra pass over the data)
        if len(starts) == 1:
            return starts[0]
        if self.exact:
            return min(starts, key=lambda w: float(np.max(problem.kkt_violation(w))))
        if resolve_solver(self.solver, problem.X) == "lbfgs":
            return min(starts, key=lambda w: float(np.linalg.norm(problem.gradient(w))))
        return list(starts)


@dataclass(frozen=True)
class StackedLowerLevel(LowerLevel):
    r"""The binary lower level on a stacked design whose last ``n_intercepts`` columns
    are intercepts: unless ``penalize_intercept``, the ridge leaves all of them
    unpenalised (the binary lower level exempts the last column only).

    Parameters
    ----------
    n_intercepts : int
        K, the number of trailing intercept columns.
    Other parameters
        As :class:`~bisvm.solvers.primal.lower_level.LowerLevel`.
    """

    n_intercepts: int = 1

    def __post_init__(self):
        super().__post_init__()
        m = self.n_intercepts
        if isinstance(m, bool) or not isinstance(m, numbers.Integral) or m < 1:
            raise ValueError(f"n_intercepts must be a positive int, got {m!r}")

    def problem(self, X, y, penalty_groups, weights, l2_penalty=None, sample_weight=None):
        """The problem of :meth:`LowerLevel.problem` with the ridge mask excluding the
        last ``n_intercepts`` columns (when they are not penalised)."""
        if self.penalize_intercept or self.n_intercepts == 1:
            return super().problem(X, y, penalty_groups, weights, l2_penalty, sample_weight)
        d = X.shape[1]
        if self.n_intercepts > d:
            raise ValueError(f"X has {d} columns for {self.n_intercepts} intercepts")
        mask = np.ones(d, dtype=bool)
        mask[d - self.n_intercepts:] = False
        if self.exact:
            sw = None
            if sample_weight is not None:
                sw = np.asarray(sample_weight, dtype=float)
                sw = sw * (sw.size / sw.sum())
            return WeightedL1SVMProblem(
                X, y, self.hinge_smoothing,
                self.l2_penalty if l2_penalty is None else float(l2_penalty), mask,
                np.asarray(weights, dtype=float), penalty_groups, sw)
        P = super().problem(X, y, penalty_groups, weights, l2_penalty, sample_weight)
        ridge, hub = P.penalty.terms
        return replace(P, penalty=SumPenalty((L2(ridge.strength, mask), hub)))

    def solve(self, problem, w0=None, tol=1e-9):
        r""":meth:`LowerLevel.solve`, continued by L-BFGS from where a Newton solver
        stopped short of the tolerance.

        Why: one-vs-rest problems of well separated classes have a nearly flat valley
        at their optimum (the smoothed hinge's curvature :math:`e^{-m/\mu}/\mu`
        underflows once every margin m is large, and the intercepts are unpenalised),
        so the Cholesky step of the damped Newton loop can point along a direction of
        curvature near 1e-16 where no backtracked step decreases E, and the loop stops
        there without converging. L-BFGS compares function values along its own
        directions and reaches the tolerance from that point (Nocedal & Wright 2006,
        Numerical Optimization, §7.2)."""
        r = super().solve(problem, w0, tol)
        if r.converged or self.exact or resolve_solver(self.solver, problem.X) == "lbfgs":
            return r
        r2 = solve_lbfgs(problem, w0=r.coef, tol=tol, max_iter=max(self.max_iter, 1000),
                         warn=False)
        g1 = float(np.linalg.norm(problem.gradient(r.coef)))
        g2 = float(np.linalg.norm(problem.gradient(r2.coef)))
        if g2 >= g1:
            return r
        return replace(r2, n_iter=r.n_iter + r2.n_iter)
