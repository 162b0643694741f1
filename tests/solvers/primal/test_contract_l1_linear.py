"""The solver contract on the L1-regularised linear solvers of
``solvers/primal/l1_linear.py`` (n = 30, d = 5, seed 0), and their agreement."""

import numpy as np
import pytest
import scipy.sparse as sp
from contract import check_contract

from bisvm.losses import Hinge, SquaredHinge
from bisvm.solvers.primal.l1_linear import solve_l1_hinge_lp, solve_l1_squared_hinge
from bisvm.solvers.problems import LinearProblem, augment_intercept

N, D = 30, 5


def _data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(N, D))
    t = np.where(X[:, 0] - X[:, 1] + 0.5 * rng.normal(size=N) > 0, 1.0, -1.0)
    return X, t


def _objective(X, t, coef, intercept, cost, bias, square):
    w = np.r_[coef, intercept / bias] if bias > 0 else coef
    r = np.maximum(0.0, 1.0 - t * (augment_intercept(X, bias) @ w))
    return np.abs(w).sum() + cost @ (r * r if square else r)


@pytest.mark.parametrize("bias", [0.0, 2.0])
@pytest.mark.parametrize("sparse", [False, True])
def test_lp(bias, sparse):
    X, t = _data()
    cost = np.full(N, 0.5)
    res = solve_l1_hinge_lp(LinearProblem(sp.csr_matrix(X) if sparse else X, t, Hinge(),
                                          cost, bias=bias))
    check_contract(res, certificate="lp_optimal", tol=0.0)
    assert res.converged and res.coef.shape == (D,) and res.n_iter == 1
    assert res.objective == pytest.approx(
        _objective(X, t, res.coef, res.intercept, cost, bias, False), rel=1e-9)


@pytest.mark.parametrize("bias", [0.0, 2.0])
def test_l1_squared_hinge(bias):
    X, t = _data()
    cost = np.full(N, 0.5)
    problem = LinearProblem(X, t, SquaredHinge(), cost, bias=bias)
    res = solve_l1_squared_hinge(problem, tol=1e-8, max_iter=5000)
    check_contract(res, certificate="gradient_norm")
    assert res.converged and res.coef.shape == (D,)
    assert res.objective == pytest.approx(
        _objective(X, t, res.coef, res.intercept, cost, bias, True), rel=1e-9)
    w = np.r_[res.coef, res.intercept / bias] if bias > 0 else res.coef
    warm = solve_l1_squared_hinge(problem, w0=w, tol=1e-8, max_iter=5000)
    assert warm.n_iter <= res.n_iter
    assert warm.objective == pytest.approx(res.objective, rel=1e-8)


def test_wrong_loss_is_rejected():
    X, t = _data()
    with pytest.raises(ValueError, match="loss"):
        solve_l1_hinge_lp(LinearProblem(X, t, SquaredHinge(), np.ones(N)))
    with pytest.raises(ValueError, match="loss"):
        solve_l1_squared_hinge(LinearProblem(X, t, Hinge(), np.ones(N)))
