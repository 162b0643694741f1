"""Every primal entry point keeps the solver contract on a small problem
(n = 30, d = 5, seed 0): a frozen SolverResult with typed fields, a named certificate that
holds at convergence, a read-only ``stats`` and a record ending on the certificate."""

import numpy as np
import pytest
from contract import check_contract

from bisvm.kernels import make_kernel
from bisvm.losses import Logistic, SmoothedHinge, SquaredEpsilonInsensitive, SquaredHinge
from bisvm.penalties import L2, GroupPseudoHuber, SumPenalty
from bisvm.solvers.primal.cg import minimize_nonlinear_cg, solve_nonlinear_cg
from bisvm.solvers.primal.coordinate import solve_block_coordinate_descent
from bisvm.solvers.primal.exact_l1 import WeightedL1SVMProblem, solve_exact_l1
from bisvm.solvers.primal.finite_newton import (
    greedy_kernel_finite_newton,
    solve_finite_newton,
    solve_finite_newton_problem,
)
from bisvm.solvers.primal.gradient import minimize_gradient_descent, solve_gradient_descent
from bisvm.solvers.primal.kernel import KernelExpansionProblem, solve_kernel_newton
from bisvm.solvers.primal.lbfgs import minimize_lbfgs, solve_lbfgs
from bisvm.solvers.primal.newton import minimize_newton, solve_newton
from bisvm.solvers.primal.quasi_newton import minimize_bfgs, solve_bfgs
from bisvm.solvers.primal.svr_finite_newton import solve_svr_finite_newton
from bisvm.solvers.primal.truncated import solve_truncated_newton
from bisvm.solvers.primal.wide import solve_woodbury_newton
from bisvm.solvers.problems import LinearProblem, SmoothProblem

N, D, TOL = 30, 5, 1e-8


def _data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(N, D))
    y = np.where(X @ rng.normal(size=D) + 0.3 * rng.normal(size=N) > 0, 1.0, -1.0)
    return X, y


def _smooth(loss=None):
    X, y = _data()
    return SmoothProblem(np.c_[X, np.ones(N)], y, loss or Logistic(), L2(0.1))


def _structured():
    X, y = _data()
    groups = np.r_[np.arange(D), -1]
    pen = SumPenalty((L2(0.1, groups >= 0), GroupPseudoHuber(np.full(D, 0.05), groups, 0.1)))
    return SmoothProblem(np.c_[X, np.ones(N)], y, SmoothedHinge(0.25), pen)


SMOOTH = {
    "solve_newton": lambda P: solve_newton(P, tol=TOL),
    "solve_gradient_descent": lambda P: solve_gradient_descent(P, tol=TOL),
    "solve_bfgs": lambda P: solve_bfgs(P, tol=TOL),
    "solve_lbfgs": lambda P: solve_lbfgs(P, tol=TOL),
    "solve_nonlinear_cg": lambda P: solve_nonlinear_cg(P, tol=TOL),
    "solve_block_coordinate_descent": lambda P: solve_block_coordinate_descent(
        P, tol=TOL, block_size=2),
    "minimize_newton": lambda P: minimize_newton(P.value_and_gradient, P.hessian,
                                                 np.zeros(D + 1), tol=TOL),
    "minimize_gradient_descent": lambda P: minimize_gradient_descent(
        P.value_and_gradient, np.zeros(D + 1), tol=TOL),
    "minimize_bfgs": lambda P: minimize_bfgs(P.value_and_gradient, np.zeros(D + 1), tol=TOL),
    "minimize_lbfgs": lambda P: minimize_lbfgs(P.value_and_gradient, np.zeros(D + 1),
                                               tol=TOL),
    "minimize_nonlinear_cg": lambda P: minimize_nonlinear_cg(P.value_and_gradient,
                                                             np.zeros(D + 1), tol=TOL),
}


@pytest.mark.parametrize("name", sorted(SMOOTH))
def test_smooth_solvers_keep_the_contract(name):
    P = _smooth()
    res = SMOOTH[name](P)
    check_contract(res, certificate="gradient_norm", tol=TOL)
    assert res.converged and res.coef.shape == (D + 1,)
    assert res.certificate_value == pytest.approx(np.linalg.norm(P.gradient(res.coef)),
                                                  rel=1e-6, abs=1e-14)
    assert res.active_set is None and res.dual_coef is None


@pytest.mark.parametrize("solve", [solve_woodbury_newton, solve_truncated_newton])
def test_structured_newton_solvers_keep_the_contract(solve):
    P = _structured()
    res = solve(P, tol=TOL)
    check_contract(res, certificate="gradient_norm", tol=TOL)
    assert res.converged and res.factor is not None and res.method in ("woodbury", "cg")
    assert res.objective == pytest.approx(solve_newton(P, tol=TOL).objective, rel=1e-10)


def test_lbfgs_stopped_by_its_callback_names_the_callback():
    P = _smooth()
    res = minimize_lbfgs(P.value_and_gradient, np.zeros(D + 1), tol=TOL,
                         callback=lambda k, x, f, g: k == 2)
    check_contract(res, certificate="callback")
    assert res.converged and res.n_iter == 2


def test_kernel_newton_keeps_the_contract():
    X, y = _data()
    P = KernelExpansionProblem(make_kernel("rbf", gamma=0.5)(X, X), y, Logistic(), C=1.0)
    res = solve_kernel_newton(P, w0=np.zeros(P.n_features), tol=TOL)
    check_contract(res, certificate="gradient_norm", tol=TOL)
    assert res.converged and res.coef.shape == (N + 1,)
    with pytest.raises(TypeError):
        solve_kernel_newton(P, np.zeros(P.n_features))  # the warm start is keyword-only


def _sample_indices(idx):
    idx = np.asarray(idx)
    assert np.issubdtype(idx.dtype, np.integer)
    assert idx.size == 0 or (idx.min() >= 0 and idx.max() < N)
    return idx


@pytest.mark.parametrize("bias", [0.0, 1.0])
def test_finite_newton_keeps_the_contract(bias):
    X, y = _data()
    P = LinearProblem(X, y, SquaredHinge(), np.full(N, 0.5), bias=bias)
    res = solve_finite_newton(P, tol=TOL)
    check_contract(res, certificate="relative_gradient_norm", tol=TOL)
    assert res.converged and res.coef.shape == (D,)
    margins = y * (X @ res.coef + res.intercept)
    np.testing.assert_array_equal(_sample_indices(res.active_set), np.flatnonzero(margins < 1))
    assert (res.intercept != 0.0) == (bias > 0)


def test_finite_newton_on_a_smooth_problem_keeps_the_contract():
    P = _smooth(SquaredHinge())
    res = solve_finite_newton_problem(P, tol=TOL)
    check_contract(res, certificate="relative_gradient_norm", tol=TOL)
    assert res.objective == pytest.approx(solve_newton(P, tol=1e-10).objective, rel=1e-9)


def test_svr_finite_newton_keeps_the_contract():
    X, _ = _data()
    t = X @ np.arange(1.0, D + 1) + 0.1
    P = LinearProblem(X, t, SquaredEpsilonInsensitive(0.2), np.ones(N), bias=1.0)
    res = solve_svr_finite_newton(P, tol=TOL)
    check_contract(res, certificate="relative_gradient_norm", tol=TOL)
    resid = np.abs(t - X @ res.coef - res.intercept)
    np.testing.assert_array_equal(_sample_indices(res.active_set), np.flatnonzero(resid > 0.2))


def test_greedy_kernel_finite_newton_keeps_the_contract():
    X, y = _data()
    res = greedy_kernel_finite_newton(make_kernel("rbf", gamma=0.5), X, y, n_basis=6,
                                      random_state=0)
    check_contract(res, certificate="relative_gradient_norm", tol=TOL)
    basis = _sample_indices(res.active_set)
    assert basis.size == res.coef.size == res.n_iter == 6 and np.unique(basis).size == 6
    assert len(res.record.objective) == 6 and res.record.objective[-1] == res.objective


def test_exact_l1_keeps_the_contract():
    X, y = _data()
    P = WeightedL1SVMProblem(np.c_[X, np.ones(N)], y, 0.1, 0.1, np.r_[np.ones(D, bool), False],
                             np.full(D, 0.05), np.r_[np.arange(D), -1])
    res = solve_exact_l1(P, tol=TOL)
    check_contract(res, certificate="kkt_violation", tol=TOL, active_set=True)
    assert res.converged and res.factor is not None
    assert {"n_outer", "continuation", "stopped"} <= set(res.stats)
