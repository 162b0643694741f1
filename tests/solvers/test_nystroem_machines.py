"""The linear machines on Nyström features: the finite Newton solution of the L2-SVM and
of the L2-loss ε-SVR against scipy's L-BFGS on the same smooth objective and against
the exact kernel solvers when every row is a landmark, their KKT conditions, warm
starts, the adjoint derivatives in log C and log ε against central finite differences,
and the low-rank form of the width gradient against the dense one."""

import numpy as np
import pytest
import scipy.optimize

from bisvm.solvers.dual.kernel_lower_level import KernelPair, rbf_gram, solve_l2svm
from bisvm.solvers.dual.kernel_svr_lower_level import SVRFold, solve_l2svr
from bisvm.solvers.nystroem import (
    nystroem_blocks,
    nystroem_width_grad,
    piecewise_l2_hypergradient,
    select_landmarks,
    solve_piecewise_l2,
)


def _data(n=120, d=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    y_reg = np.sin(X[:, 0]) + 0.4 * X[:, 1] * X[:, 2] + 0.1 * rng.standard_normal(n)
    y_cls = np.where(X[:, 0] * X[:, 1] + 0.3 * rng.standard_normal(n) > 0, 1.0, -1.0)
    return X, y_reg, y_cls


def _svm_pieces(y, cost=None):
    n = y.size
    return np.arange(n), y, np.ones(n), np.ones(n) if cost is None else cost


def _svr_pieces(y, eps, cost=None):
    n = y.size
    c = np.ones(n) if cost is None else cost
    return (np.r_[np.arange(n), np.arange(n)], np.r_[np.ones(n), -np.ones(n)],
            np.r_[y - eps, -y - eps], np.r_[c, c])


def _objective(theta, Phi, rows, sign, offset, cost, C):
    f = Phi @ theta[1:] + theta[0]
    a = np.maximum(offset - sign * f[rows], 0.0)
    val = 0.5 * theta[1:] @ theta[1:] + 0.5 * C * cost @ a**2
    g_f = np.zeros(Phi.shape[0])
    np.add.at(g_f, rows, -C * cost * a * sign)
    return val, np.r_[g_f.sum(), theta[1:] + Phi.T @ g_f]


@pytest.mark.parametrize("kind", ["svm", "svr"])
def test_solution_is_the_minimiser_of_the_smooth_objective(kind):
    X, yr, yc = _data()
    Phi = nystroem_blocks(X, X[:25], 0.5)[3]
    cost = np.random.default_rng(1).uniform(0.5, 2.0, X.shape[0])
    pieces = _svm_pieces(yc, cost) if kind == "svm" else _svr_pieces(yr, 0.1, cost)
    sol = solve_piecewise_l2(Phi, *pieces, 5.0)
    ref = scipy.optimize.minimize(_objective, np.zeros(Phi.shape[1] + 1), jac=True,
                                  args=(Phi, *pieces, 5.0), method="L-BFGS-B",
                                  options={"gtol": 1e-11, "ftol": 1e-15, "maxiter": 20000})
    np.testing.assert_allclose(sol.theta, ref.x, atol=1e-5)
    # exact stationarity and a consistent active set at the returned point
    g = _objective(sol.theta, Phi, *pieces, 5.0)[1]
    assert np.abs(g).max() < 1e-8
    rows, sign, offset, _ = pieces
    np.testing.assert_array_equal(sol.active, np.flatnonzero(offset - sign * sol.f[rows] > 0))


def test_every_row_a_landmark_is_the_exact_l2svm():
    X, _, yc = _data(n=60)
    Phi = nystroem_blocks(X, X, 0.4)[3]
    sol = solve_piecewise_l2(Phi, *_svm_pieces(yc), 3.0)
    ex = solve_l2svm(KernelPair.build(X, yc, X[:5], yc[:5]), 3.0, 0.4, tol=1e-10)
    f_exact = rbf_gram(X, X, 0.4) @ (ex.alpha * yc) + ex.bias
    np.testing.assert_allclose(sol.f, f_exact, atol=1e-5)


def test_every_row_a_landmark_is_the_exact_l2svr():
    X, yr, _ = _data(n=60)
    Phi = nystroem_blocks(X, X, 0.4)[3]
    sol = solve_piecewise_l2(Phi, *_svr_pieces(yr, 0.1), 3.0)
    ex = solve_l2svr(SVRFold.build(X, yr, X[:5], yr[:5]), 3.0, 0.1, np.array([0.4]))
    f_exact = ex.gram @ ex.beta + ex.bias
    np.testing.assert_allclose(sol.f, f_exact, atol=1e-5)


def test_warm_start_reaches_the_same_solution_in_fewer_steps():
    X, yr, _ = _data(n=200)
    Phi = nystroem_blocks(X, X[select_landmarks(X, 30, "uniform", 0)], 0.5)[3]
    pieces = _svr_pieces(yr, 0.05)
    cold = solve_piecewise_l2(Phi, *pieces, 50.0)
    near = solve_piecewise_l2(Phi, *pieces, 40.0)
    warm = solve_piecewise_l2(Phi, *pieces, 50.0, theta0=near.theta)
    np.testing.assert_allclose(warm.theta, cold.theta, atol=1e-8)
    assert warm.n_iter <= cold.n_iter


@pytest.mark.parametrize("kind", ["svm", "svr"])
def test_log_c_and_log_epsilon_derivatives_match_central_differences(kind):
    X, yr, yc = _data()
    tr, va = np.arange(80), np.arange(80, 120)
    Phi = nystroem_blocks(X, X[select_landmarks(X, 20, "kmeans++", 0)], 0.5)[3]
    y = yc if kind == "svm" else yr

    def pieces(eps):
        return _svm_pieces(y[tr]) if kind == "svm" else _svr_pieces(y[tr], eps)

    def value(C, eps, grad=False):
        sol = solve_piecewise_l2(Phi[tr], *pieces(eps), C)
        r = y[va] - (Phi[va] @ sol.theta[1:] + sol.theta[0])
        if not grad:
            return np.mean(r**2)
        dC, dt, _, _ = piecewise_l2_hypergradient(Phi[tr], *pieces(eps), sol, Phi[va],
                                                  -2.0 * r / r.size)
        return dC, float(dt @ (-eps * pieces(eps)[1][sol.active]))

    h = 1e-5
    dC, deps = value(4.0, 0.1, grad=True)
    fdC = (value(4.0 * np.exp(h), 0.1) - value(4.0 * np.exp(-h), 0.1)) / (2 * h)
    assert dC == pytest.approx(fdC, rel=1e-5, abs=1e-10)
    if kind == "svr":
        fde = (value(4.0, 0.1 * np.exp(h)) - value(4.0, 0.1 * np.exp(-h))) / (2 * h)
        assert deps == pytest.approx(fde, rel=1e-5, abs=1e-10)


@pytest.mark.parametrize("gamma", [0.5, np.array([0.3, 0.8, 0.1])])
def test_low_rank_width_gradient_equals_the_dense_one(gamma):
    X, _, _ = _data(n=50)
    Z = X[:12]
    rng = np.random.default_rng(2)
    U, V = rng.standard_normal((50, 4)), rng.standard_normal((12, 4))
    blocks = nystroem_blocks(X, Z, gamma)
    np.testing.assert_allclose(nystroem_width_grad(X, Z, gamma, (U, V), blocks=blocks),
                               nystroem_width_grad(X, Z, gamma, U @ V.T), rtol=1e-10)
