r"""The L1-regularised linear SVMs of LIBLINEAR's table (``penalty="l1"``), solved through
scipy: the 1-norm SVM (hinge loss) as a linear program, and the squared hinge as a smooth
bound-constrained problem.

.. math::
    \min_w\ \|w\|_1 + \sum_i c_i\,\ell(y_i, \tilde x_i^\top w),\qquad
    \tilde x_i = (x_i, \text{bias}),

with :math:`\ell` the hinge :math:`\max(0, 1 - yz)` or its square, and LIBLINEAR's
intercept: a constant feature of value ``bias`` whose weight is penalised like the others
(Fan et al. 2008, LIBLINEAR, Appendix; Zhu, Rosset, Hastie & Tibshirani 2004 for the
1-norm SVM as an LP). Both take a :class:`~bisvm.solvers.problems.LinearProblem`; its
``quadratic`` is ignored (the penalty is the L1 norm).
"""

from __future__ import annotations

import time

import numpy as np
import scipy.optimize as so
import scipy.sparse as sp

from ...losses import Hinge, SquaredHinge
from ..base import ConvergenceRecord, SolverResult
from ..problems import augment_intercept, split_intercept

__all__ = ["solve_l1_hinge_lp", "solve_l1_squared_hinge"]


def _check(problem, loss_type):
    if not isinstance(problem.loss, loss_type):
        raise ValueError(f"loss must be {loss_type.__name__}(), got {problem.loss!r}")
    bias = float(problem.bias)
    if not (np.isfinite(bias) and bias >= 0):
        raise ValueError(f"bias must be a non-negative float, got {problem.bias!r}")
    return augment_intercept(problem.X, bias), bias


def _result(w, d, bias, objective, cert, seconds, **fields):
    """``w`` (with the intercept feature's weight last when ``bias > 0``) split into
    ``coef`` and ``intercept = bias · w[d]``; a one-entry record."""
    coef, intercept = split_intercept(w, d, bias)
    return SolverResult(
        coef=coef, intercept=intercept, objective=objective,
        certificate_value=cert, seconds=seconds,
        record=ConvergenceRecord(np.array([objective]), np.array([cert]),
                                 np.array([seconds])), **fields)


def solve_l1_hinge_lp(problem):
    r"""The L1-regularised hinge-loss SVM as a linear program (HiGHS):

    .. math::
        \min_{u, v, \xi \ge 0} \sum_j (u_j + v_j) + \sum_i c_i \xi_i \quad
        \text{s.t.}\ \ \xi_i \ge 1 - y_i \tilde x_i^\top (u - v),\qquad w = u - v.

    Parameters
    ----------
    problem : LinearProblem
        ``loss`` must be :class:`~bisvm.losses.Hinge`; ``y`` in {-1, +1}.

    Returns
    -------
    SolverResult
        ``coef``, ``intercept`` (``bias · w[d]``), ``objective`` the LP optimum,
        certificate ``"lp_optimal"`` (value 0), ``n_iter`` 1 (one LP solve),
        ``converged`` True, ``stats["simplex_iterations"]`` HiGHS's iteration count.
        Raises ``RuntimeError`` when HiGHS fails.
    """
    t0 = time.perf_counter()
    X, bias = _check(problem, Hinge)
    n, d = X.shape
    Y = sp.diags(np.asarray(problem.y, dtype=float))
    YX = sp.csr_matrix(Y @ X)
    A = sp.hstack([-YX, YX, -sp.eye(n)], format="csc")
    c = np.r_[np.ones(2 * d), np.asarray(problem.cost, dtype=float)]
    res = so.linprog(c, A_ub=A, b_ub=-np.ones(n), bounds=(0, None), method="highs")
    if res.status != 0:
        raise RuntimeError(f"linprog (HiGHS) failed on the L1 hinge SVM: {res.message}")
    w = res.x[:d] - res.x[d:2 * d]
    return _result(w, problem.X.shape[1], bias, float(res.fun), 0.0,
                   time.perf_counter() - t0, certificate="lp_optimal", n_iter=1,
                   converged=True, stats={"simplex_iterations": int(res.nit)})


def solve_l1_squared_hinge(problem, *, w0=None, tol=1e-4, max_iter=1000):
    r"""The L1-regularised squared-hinge SVM,
    :math:`\min_w \|w\|_1 + \sum_i c_i \max(0, 1 - y_i \tilde x_i^\top w)^2`, as the
    smooth bound-constrained problem in :math:`w = u - v`, :math:`u, v \ge 0`, solved by
    scipy's L-BFGS-B (Byrd, Lu, Nocedal & Zhu 1995).

    Parameters
    ----------
    problem : LinearProblem
        ``loss`` must be :class:`~bisvm.losses.SquaredHinge`; ``y`` in {-1, +1}.
    w0 : ndarray of shape (d,) or (d + 1,), optional
        Warm start (with the intercept feature's weight last when ``bias > 0``).
    tol : float
        L-BFGS-B's ``gtol`` (``ftol = 1e-12 tol``).
    max_iter : int

    Returns
    -------
    SolverResult
        ``coef``, ``intercept``, ``objective``; certificate ``"gradient_norm"``: the
        Euclidean norm of the projected gradient in :math:`(u, v)` at the solution;
        ``n_iter``, ``n_evals`` and ``converged`` from L-BFGS-B.
    """
    t0 = time.perf_counter()
    X, bias = _check(problem, SquaredHinge)
    n, d = X.shape
    y = np.asarray(problem.y, dtype=float)
    cost = np.asarray(problem.cost, dtype=float)

    def fg(uv):
        w = uv[:d] - uv[d:]
        r = np.maximum(0.0, 1.0 - y * np.asarray(X @ w).ravel())
        gw = -2.0 * np.asarray(X.T @ (cost * y * r)).ravel()
        return float(uv.sum() + cost @ (r * r)), np.r_[1.0 + gw, 1.0 - gw]

    x0 = np.zeros(2 * d) if w0 is None else np.r_[np.maximum(w0, 0), np.maximum(-w0, 0)]
    res = so.minimize(fg, x0, jac=True, method="L-BFGS-B", bounds=[(0, None)] * (2 * d),
                      options=dict(maxiter=max_iter, gtol=tol, ftol=1e-12 * tol))
    w = res.x[:d] - res.x[d:]
    g = fg(res.x)[1]
    pg = np.where(res.x > 0, g, np.minimum(g, 0.0))  # projected onto the bounds u, v >= 0
    return _result(w, problem.X.shape[1], bias, float(res.fun), float(np.linalg.norm(pg)),
                   time.perf_counter() - t0, certificate="gradient_norm",
                   n_iter=int(res.nit), n_evals=int(res.nfev), converged=bool(res.success))
