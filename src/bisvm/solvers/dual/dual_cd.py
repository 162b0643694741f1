r"""Dual coordinate descent for the linear L1- and L2-loss SVM (the LIBLINEAR algorithm:
Hsieh, Chang, Lin, Keerthi & Sundararajan 2008, "A dual coordinate descent method for
large-scale linear SVM", Algorithm 1 with shrinking: block coordinate descent with blocks
of one variable).

Primal, with per-sample costs :math:`C_i` (``C`` times sample and class weights):

.. math::
    \min_w P(w) = \tfrac12\|w\|^2 + \sum_i C_i\,\xi_i(w), \qquad
    \xi_i = \max(0, 1 - y_i w^\top x_i)\ \text{(hinge)}\ \text{or its square}.

Dual (to be minimised; at the optimum :math:`f(\alpha^*) = -P(w^*)`):

.. math::
    \min_\alpha f(\alpha) = \tfrac12 \alpha^\top \bar Q \alpha - e^\top\alpha,\quad
    0 \le \alpha_i \le U_i,\qquad \bar Q = Q + D,\ Q_{ij} = y_i y_j x_i^\top x_j,

with :math:`U_i = C_i, D_{ii} = 0` for the hinge and :math:`U_i = \infty,
D_{ii} = 1/(2C_i)` for the squared hinge — one loop for both losses, the two losses
being data (``diag``, ``upper``) as in LIBLINEAR. ``w = Σ α_i y_i x_i`` is kept up to
date, so each coordinate step costs one sparse dot product and one axpy.

The intercept, when asked for, is LIBLINEAR's: a constant feature of value ``bias``
(scikit-learn's ``intercept_scaling``) appended to every ``x_i``, hence *penalised* like
the other coefficients; it is handled inside the epochs, never by a copy of ``X``. CSR
input of float64 with int32 or int64 indices is read in place.

Stopping (:mod:`bisvm.solvers.dual._dual_cd_driver`): LIBLINEAR's projected-gradient
spread (``stopping="projected_gradient"``), or the relative duality gap
:math:`(P(w) + f(\alpha))/P(w) \le` ``tol`` (``"duality_gap"``), which bounds the
relative excess of the primal objective over its optimum (less the rounding uncertainty
of :math:`P(w)`: with a large ``C`` a margin wrong in its last bit is worth ``C`` times
that bit). For the squared losses a solve
that stalls (the gap stops falling) or reaches ``max_iter`` finishes with the primal
finite Newton method from the dual's ``w`` (``primal_fallback``), as LIBLINEAR's
``-s 1`` falls back on its primal solver; the dual variables are then recovered from the
primal optimality conditions, :math:`\alpha_i = 2C_i\xi_i(w)`.

:func:`solve_dual_cd_svr` runs the same epochs, state and intercept on LIBLINEAR's
L2-regularised L1- and L2-loss support vector *regression* (Ho & Lin 2012, "Large-scale
linear support vector regression", JMLR 13, Algorithm 4; LIBLINEAR solvers 13 and 12):

.. math::
    \min_w \tfrac12\|w\|^2 + \sum_i C_i\,\xi_i(w),\qquad
    \xi_i = \max(0, |y_i - w^\top x_i| - \epsilon)\ \text{or its square},

whose dual in one signed variable per sample is

.. math::
    \min_\beta \tfrac12 \beta^\top (\tilde Q + D)\beta - y^\top\beta + \epsilon\|\beta\|_1,
    \quad -U_i \le \beta_i \le U_i,\qquad \tilde Q_{ij} = x_i^\top x_j,

with the same table (:math:`U_i = C_i, D_{ii} = 0` for the ε-insensitive loss,
:math:`U_i = \infty, D_{ii} = 1/(2C_i)` for its square) and ``w = Σ β_i x_i``. Each
coordinate step minimises the one-variable piecewise quadratic exactly. LIBLINEAR's rule
for regression is the summed violation of the optimality conditions below ``tol`` times
its value after the first epoch; the duality gap and the primal fallback (recovering
:math:`\beta_i = 2C_i\,\mathrm{sign}(r_i)\,\xi_i`, :math:`r_i = y_i - w^\top x_i`) are
as for classification.
"""

from __future__ import annotations

import time
import warnings

import numpy as np
import scipy.sparse as sp
from sklearn.exceptions import ConvergenceWarning

from ...losses import EpsilonInsensitive, Hinge, SquaredEpsilonInsensitive, SquaredHinge
from .._record import check_tol_max_iter
from ..base import ConvergenceRecord, SolverResult
from ..primal.finite_newton import solve_finite_newton
from ..primal.svr_finite_newton import solve_svr_finite_newton
from ..problems import LinearProblem, split_intercept
from ._dual_cd_driver import relative_gap, run_epochs
from ._dual_cd_kernels import (
    ALPHA,
    dual_objective,
    epoch,
    loss_sum,
    pack_state,
    rng_state,
    row_sq_norms_csr,
    svr_dual_objective,
)
from ._smo_threads import readonly

__all__ = ["solve_dual_cd", "solve_dual_cd_svr", "svm_primal_objective",
           "svr_primal_objective", "LinearDesign", "STOPPING_RULES"]

_LOSSES = (Hinge, SquaredHinge)
_SVR_LOSSES = (EpsilonInsensitive, SquaredEpsilonInsensitive)

#: The stopping rules of the dual solvers (see the module docstring).
STOPPING_RULES = ("projected_gradient", "duality_gap")


def _margins(X, w, bias):
    d = X.shape[1]
    z = X @ w[:d]
    if bias > 0:
        z = z + bias * w[d]
    return np.asarray(z).ravel()


def _l1_loss(loss):
    """The loss (a name or a :mod:`bisvm.losses` object) is the unsquared one."""
    return loss in ("hinge", "epsilon_insensitive") or isinstance(
        loss, Hinge | EpsilonInsensitive)


def svm_primal_objective(X, y, w, cost, loss, bias=0.0):
    r""":math:`\tfrac12\|w\|^2 + \sum_i C_i\,\xi_i(w)` with the intercept as a feature of
    value ``bias`` (``w`` then has ``d + 1`` entries); ``loss`` is ``Hinge()`` /
    ``"hinge"`` or ``SquaredHinge()`` / ``"squared_hinge"``."""
    r = np.maximum(0.0, 1.0 - y * _margins(X, w, bias))
    xi = r if _l1_loss(loss) else r * r
    # ufunc sums, not BLAS dots: a threaded BLAS wake-up costs more than these sums
    return 0.5 * float(np.sum(w * w)) + float(np.sum(cost * xi))


def svr_primal_objective(X, y, w, cost, loss, epsilon=0.0, bias=0.0):
    r""":math:`\tfrac12\|w\|^2 + \sum_i C_i\,\xi_i(w)`, :math:`\xi_i = \max(0,
    |y_i - w^\top x_i| - \epsilon)` (``"epsilon_insensitive"``) or its square, with the
    intercept as a feature of value ``bias`` (``w`` then has ``d + 1`` entries); ``loss`` a
    name or an ``EpsilonInsensitive`` / ``SquaredEpsilonInsensitive`` object."""
    r = np.maximum(0.0, np.abs(y - _margins(X, w, bias)) - epsilon)
    xi = r if _l1_loss(loss) else r * r
    return 0.5 * float(np.sum(w * w)) + float(np.sum(cost * xi))


class LinearDesign:
    """``X`` as the compiled epochs read it (row-major dense, or the CSR arrays as given:
    float64 data, int32 or int64 indices, no copy) and its squared row norms; shared by
    the dual coordinate descent solvers."""

    def __init__(self, X):
        self.n, self.d = X.shape
        self.sparse = sp.issparse(X)
        if self.sparse:
            # duplicates and unsorted columns are fine: the epochs are linear in the
            # entries and the row norms sum repeated columns first
            X = X.tocsr().astype(np.float64, copy=False)
            self.indices = X.indices
            self.indptr = X.indptr
            self.data = np.ascontiguousarray(X.data)
            self.sqnorm = row_sq_norms_csr(self.data, self.indices, self.indptr, self.d)
        else:
            # read-only (a view, no copy) whatever the caller's flag: numba compiles one
            # variant per array type, and the epochs only read X
            X = readonly(np.ascontiguousarray(X, dtype=np.float64))
            self.sqnorm = np.einsum("ij,ij->i", X, X)
        self.X = X

    def arrays(self):
        """``(dense, X, data, indices, indptr)`` with empty placeholders for the unused
        representation (one compiled signature serves both: the dense placeholder is
        read-only like a dense ``X``)."""
        if self.sparse:
            return False, readonly(np.zeros((1, 1))), self.data, self.indices, self.indptr
        e = np.zeros(1, dtype=np.int32)
        return True, self.X, np.zeros(1), e, e

    def start(self, coef, bias):
        """``w = Σ coef_i x_i`` (plus the intercept entry) for a warm start."""
        w = np.zeros(self.d + (1 if bias > 0 else 0))
        if np.any(coef):
            w[:self.d] = np.asarray(self.X.T @ coef).ravel()
            if bias > 0:
                w[self.d] = bias * coef.sum()
        return w

    def loss_sum(self, w, bias, y, cost, *, squared, regression, eps=0.0):
        """``(Σ c_i ξ_i(w), its rounding uncertainty)`` in one sequential pass (see
        :func:`~bisvm.solvers.dual._dual_cd_kernels.loss_sum`)."""
        dense, X, data, indices, indptr = self.arrays()
        return loss_sum(dense, X, data, indices, indptr, self.d, bias, w, y, cost,
                        squared, regression, eps)


def _squared(loss):
    return isinstance(loss, SquaredHinge | SquaredEpsilonInsensitive)


def _seed(random_state):
    if not isinstance(random_state, int | np.integer):
        random_state = np.random.RandomState(random_state).randint(0, 2**31 - 1)
    return rng_state(int(random_state))


def _check_options(tol, max_iter, stopping):
    check_tol_max_iter(tol, max_iter)
    if stopping not in STOPPING_RULES:
        raise ValueError(f"stopping must be one of {STOPPING_RULES}, got {stopping!r}")


def _prepare(problem, alpha0, *, losses, regression):
    """What both solvers start from: the checked labels and costs, the dual box and
    diagonal shift from ``problem.loss.dual_box`` (LIBLINEAR's table), the design, the
    start (α clipped to the box; ``w = Σ α_i y_i x_i``, or ``Σ β_i x_i`` for regression),
    the variables that can move and the packed state of the compiled epochs."""
    loss = problem.loss
    if not isinstance(loss, losses):
        names = tuple(c.__name__ for c in losses)
        raise ValueError(f"loss must be one of {names} (bisvm.losses), got {loss!r}")
    bias = problem.bias
    if not (np.isfinite(bias) and bias >= 0):
        raise ValueError(f"bias must be a non-negative float, got {bias!r}")
    X = problem.X
    n = X.shape[0]
    y = np.asarray(problem.y, dtype=np.float64)
    if regression:
        if y.shape != (n,) or not np.all(np.isfinite(y)):
            raise ValueError("y must be a finite vector with one entry per row of X")
    elif y.shape != (n,) or not np.all(np.abs(y) == 1.0):
        raise ValueError("y must be a vector of -1/+1 labels with one entry per row of X")
    cost = np.asarray(problem.cost, dtype=np.float64)
    if cost.shape != (n,) or np.any(cost < 0) or not np.all(np.isfinite(cost)):
        raise ValueError("cost must be finite, non-negative, one per sample")
    diag, upper = loss.dual_box(cost)
    D = LinearDesign(X)
    QD = diag + D.sqnorm + bias * bias
    lower = -upper if regression else 0.0
    alpha = np.zeros(n) if alpha0 is None else np.clip(
        np.asarray(alpha0, dtype=np.float64), lower, upper)
    if alpha.shape != (n,) or not np.all(np.isfinite(alpha)):
        raise ValueError("alpha0 must be a finite vector with one entry per row of X")
    # a sample with x_i = 0 and no bias (Q_ii = 0, unsquared loss) does not move w: its
    # dual variable sits at the end of the box its linear term points to
    still = (QD == 0) & (cost > 0)
    if np.any(still):
        alpha = alpha.copy() if alpha0 is not None else alpha
        if regression:
            eps = float(loss.epsilon)
            alpha[still] = np.where(np.abs(y[still]) > eps, np.sign(y[still]), 0.0) * upper[still]
        else:
            alpha[still] = upper[still]
    w = D.start(alpha if regression else alpha * y, bias)
    # zero-cost samples never move (α_i = 0 = U_i)
    index = np.flatnonzero((cost > 0) & (QD > 0)).astype(np.int64)
    S = pack_state(y, alpha, QD, diag, upper, _squared(loss))
    return D, y, cost, float(bias), w, index, S


def _finish_in_primal(problem, D, y, cost, bias, w, run, *, tol, max_iter, regression,
                      verbose, name):
    """The primal finite Newton method from the dual's ``w`` (squared losses); returns
    ``(w, α recovered from the primal optimality conditions, Newton result)``."""
    if verbose:
        why = "stalled" if run.status == "stalled" else f"reached max_iter={max_iter}"
        print(f"{name}: {why} at epoch {run.n_iter} (relative duality gap {run.gap:.3e}); "
              "switching to the primal finite Newton solver")
    lp = LinearProblem(problem.X, y, problem.loss, cost, bias=bias)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        if regression:
            r = solve_svr_finite_newton(lp, w0=w, tol=tol, max_iter=max_iter, warn=False,
                                        verbose=verbose)
        else:
            r = solve_finite_newton(lp, w0=w, tol=tol, max_iter=max_iter, warn=False)
    w = np.r_[r.coef, r.intercept / bias] if bias > 0 else np.asarray(r.coef, dtype=float)
    margins = _margins(D.X, w, bias)
    if regression:
        res = y - margins
        alpha = 2.0 * cost * np.sign(res) * np.maximum(np.abs(res) - problem.loss.epsilon, 0.0)
    else:
        alpha = 2.0 * cost * np.maximum(1.0 - y * margins, 0.0)
    if verbose:
        print(f"{name}: primal finite Newton finished, #iter = {r.n_iter}, relative gradient "
              f"norm {r.certificate_value:.3e}, primal objective {r.objective:.10g}")
    return w, alpha, r


def _solve(problem, alpha0, *, tol, max_iter, shrinking, random_state, stopping,
           primal_fallback, warn, verbose, regression):
    """Both solvers: prepare, run the epochs, finish in the primal if stalled, assemble."""
    _check_options(tol, max_iter, stopping)
    t0 = time.perf_counter()
    D, y, cost, bias, w, index, S = _prepare(
        problem, alpha0, losses=_SVR_LOSSES if regression else _LOSSES,
        regression=regression)
    state = _seed(random_state)
    shrink = bool(shrinking)
    squared = _squared(problem.loss)
    eps = float(problem.loss.epsilon) if regression else 0.0
    name = "dual CD (SVR)" if regression else "dual CD"

    def dual_at(v):
        return (svr_dual_objective(v, S, eps, squared) if regression
                else dual_objective(v, S, squared))

    def objective():
        return dual_at(w)

    def measure():
        loss, floor = D.loss_sum(w, bias, y, cost, squared=squared, regression=regression,
                                 eps=eps)
        return 0.5 * float(np.sum(w * w)) + loss, objective(), floor

    epoch = (_svr_epochs if regression else _svm_epochs)(D, bias, S, w, index, state,
                                                         shrink, eps, y, alpha0, squared)
    run = run_epochs(epoch, measure, objective(), n_act=index.shape[0], max_iter=max_iter,
                     tol=tol, stopping=stopping,
                     pg_certificate="relative_violation" if regression
                     else "projected_gradient_spread",
                     watch_stall=squared and primal_fallback, verbose=verbose, name=name,
                     warm=alpha0 is not None)
    alpha = S[:, ALPHA].copy()
    fields = dict(objective=run.primal, dual_objective=run.dual, certificate=run.certificate,
                  certificate_value=run.value, converged=run.status == "converged",
                  record=run.record, n_iter=run.n_iter)
    stats = {"n_active": run.active_size, "relative_gap": run.gap, "dual_epochs": run.n_iter,
             "switched_to_primal": False, "stop": run.status}
    if run.status != "converged" and squared and primal_fallback:
        w, alpha, nr = _finish_in_primal(problem, D, y, cost, bias, w, run, tol=tol,
                                         max_iter=max_iter, regression=regression,
                                         verbose=verbose, name=name)
        wa = D.start(alpha if regression else alpha * y, bias)
        S[:, ALPHA] = alpha
        dual = dual_at(wa)
        rec = nr.record
        fields.update(
            objective=nr.objective, dual_objective=float(dual),
            certificate=nr.certificate, certificate_value=nr.certificate_value,
            converged=nr.converged, n_iter=run.n_iter + nr.n_iter,
            record=ConvergenceRecord(
                np.r_[run.record.objective, rec.objective[1:]],
                np.r_[run.record.grad_norm, rec.grad_norm[1:]],
                np.r_[run.record.seconds, run.record.seconds[-1] + rec.seconds[1:]]))
        stats.update(switched_to_primal=True, newton_iterations=nr.n_iter,
                     relative_gap=relative_gap(nr.objective, dual))
    if warn and not fields["converged"]:
        warnings.warn(
            f"{name} stopped after max_iter={max_iter} epochs at a relative duality gap "
            f"of {stats['relative_gap']:.3g} ({fields['certificate']} "
            f"{fields['certificate_value']:.3g} > tol={tol:.3g}); increase max_iter or tol",
            ConvergenceWarning, stacklevel=3)
    coef, intercept = split_intercept(w, D.d, bias)
    return SolverResult(coef=coef, intercept=intercept, dual_coef=alpha, n_evals=run.n_iter,
                        seconds=time.perf_counter() - t0, stats=stats, **fields)


def _svm_epochs(D, bias, S, w, index, state, shrink, eps, y, alpha0, squared):
    """The classification epoch of :func:`~bisvm.solvers.dual._dual_cd_driver.run_epochs`:
    LIBLINEAR's certificate is the projected-gradient spread, the shrinking thresholds
    the epoch's extreme projected gradients."""
    rows = D.arrays()

    def svm_epoch(active, old):
        hi, lo = (np.inf, -np.inf) if old is None or not shrink else old
        active, pgmax, pgmin, dd, est = epoch(*rows, D.d, bias, 0.0, S, w, index, active, hi,
                                              lo, state, squared, False)
        spread = pgmax - pgmin if active > 0 else 0.0
        return (active, spread, (pgmax if pgmax > 0 else np.inf,
                                 pgmin if pgmin < 0 else -np.inf), dd, est)
    return svm_epoch


def _svr_epochs(D, bias, S, w, index, state, shrink, eps, y, alpha0, squared):
    """The regression epoch: LIBLINEAR's certificate is the summed violation relative to
    that of the first epoch from β = 0; a warm start would make that scale (and the test)
    arbitrarily strict, so it gets the summed violation at β = 0, Σ max(0, |y_i| - ε)."""
    first = [] if alpha0 is None else [float(np.maximum(np.abs(y[index]) - eps, 0.0).sum())]

    rows = D.arrays()

    def svr_epoch(active, old):
        gmax_old = np.inf if old is None or not shrink else old
        active, gmax, gnorm1, dd, est = epoch(*rows, D.d, bias, eps, S, w, index, active,
                                              gmax_old, -np.inf, state, squared, True)
        if not first:
            first.append(gnorm1)
        return active, gnorm1 / first[0] if first[0] > 0 else 0.0, gmax, dd, est
    return svr_epoch


_COMMON_PARAMS = """    tol : float
        Tolerance of the stopping rule.
    max_iter : int
        Cap on epochs (and on the Newton iterations of the primal fallback).
    shrinking : bool
        LIBLINEAR's shrinking of variables that sit at a bound.
    random_state : int
        Seed of the per-epoch permutations.
    stopping : {"projected_gradient", "duality_gap"}
        LIBLINEAR's rule (parity with it), or the relative duality gap
        :math:`(P(w) + f(\\alpha))/P(w) \\le` ``tol`` (the estimators' default), the
        gap taken less its rounding uncertainty (the margins' last bit times the
        costs), which float64 cannot resolve.
    primal_fallback : bool
        For the squared losses, finish with the primal finite Newton method when the
        dual stalls or reaches ``max_iter``.
    warn : bool
        Emit a ``ConvergenceWarning``, stating the relative duality gap reached, when
        stopping short of ``tol``.
    verbose : int
        1 prints a summary line (and the switch to the primal), 2 one line per epoch and
        per exact gap check."""

_COMMON_RETURNS = """``objective`` the primal and ``dual_objective`` the dual objective (to be
        minimised: their sum is the duality gap); ``certificate`` the rule's
        (``"duality_gap"``, LIBLINEAR's, or ``"relative_gradient_norm"`` after a switch
        to the primal); ``n_iter`` epochs plus Newton iterations; ``record`` the dual
        objective and the rule's certificate per epoch (then the primal objective and
        relative gradient norm per Newton iteration); ``stats``: ``n_active`` (final
        active set), ``relative_gap`` (exact, at the end), ``dual_epochs``, ``stop``
        (``"converged"``, ``"stalled"`` or ``"cap"`` for the epochs),
        ``switched_to_primal`` (and ``newton_iterations``)."""


def _entry_point(name, regression, doc):
    """The public solver ``name``: one signature for classification and regression."""
    def solver(problem, *, alpha0=None, tol=1e-4, max_iter=1000, shrinking=True,
               random_state=0, stopping="projected_gradient", primal_fallback=True,
               warn=True, verbose=0):
        return _solve(problem, alpha0, tol=tol, max_iter=max_iter, shrinking=shrinking,
                      random_state=random_state, stopping=stopping,
                      primal_fallback=primal_fallback, warn=warn, verbose=verbose,
                      regression=regression)
    solver.__name__ = solver.__qualname__ = name
    solver.__doc__ = doc
    return solver


solve_dual_cd = _entry_point("solve_dual_cd", False, r"""Train a binary linear SVM by dual
    coordinate descent.

    Parameters
    ----------
    problem : LinearProblem
        ``X`` (dense, used row-major, a copy made if needed; or sparse, used as CSR in
        place when float64), ``y`` in {-1, +1}, ``loss`` :class:`~bisvm.losses.Hinge` or
        :class:`~bisvm.losses.SquaredHinge` (box and shift from its ``dual_box``),
        ``cost`` the :math:`C_i` (samples of cost 0 are left out), ``bias`` the value of
        the constant intercept feature (0 fits no intercept). ``quadratic`` is ignored
        (:math:`R = I`).
    alpha0 : ndarray of shape (n,), optional
        Warm start for the dual variables (clipped to the box).
""" + _COMMON_PARAMS + """

    Returns
    -------
    SolverResult
        ``coef`` is ``w`` over the ``d`` features and ``intercept`` = ``bias · w[d]``;
        ``dual_coef`` α; """ + _COMMON_RETURNS + "\n    ")


solve_dual_cd_svr = _entry_point("solve_dual_cd_svr", True, r"""Train a linear support
    vector regression by dual coordinate descent (Ho & Lin 2012; LIBLINEAR's ``-s 13``
    for the ε-insensitive loss, ``-s 12`` for its square).

    Parameters
    ----------
    problem : LinearProblem
        ``X`` dense or sparse, ``y`` real targets, ``loss``
        :class:`~bisvm.losses.EpsilonInsensitive` or
        :class:`~bisvm.losses.SquaredEpsilonInsensitive` (its ``epsilon`` is the
        half-width of the tube; box and shift from its ``dual_box``), ``cost`` the
        :math:`C_i` (samples of cost 0 are left out), ``bias`` the intercept feature.
    alpha0 : ndarray of shape (n,), optional
        Warm start for the signed dual variables β (clipped to the box).
""" + _COMMON_PARAMS + """
        LIBLINEAR's rule here is the summed violation of the optimality conditions at
        most ``tol`` times its value after the first epoch (with a warm start, times its
        value at β = 0).

    Returns
    -------
    SolverResult
        ``coef`` and ``intercept`` as :func:`solve_dual_cd`; ``dual_coef`` β
        (``w = Σ β_i x_i``); """ + _COMMON_RETURNS + "\n    ")
