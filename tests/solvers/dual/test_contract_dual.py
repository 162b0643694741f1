"""The solver contract on every entry point of the dual family: a frozen
SolverResult with typed fields, a named certificate within its tolerance when converged,
and the record's last certificate equal to the result's. Small problems (n = 30, d = 5,
seed 0); each solver's own tests check its mathematics."""

import numpy as np
import pytest
from contract import check_contract

from bisvm.kernels import make_kernel
from bisvm.losses import (
    EpsilonInsensitive,
    Hinge,
    MulticlassHinge,
    SquaredEpsilonInsensitive,
    SquaredHinge,
)
from bisvm.solvers.dual.active_set import active_set_qp, solve_active_set
from bisvm.solvers.dual.crammer_singer import solve_crammer_singer
from bisvm.solvers.dual.dual_cd import solve_dual_cd, solve_dual_cd_svr
from bisvm.solvers.dual.nu_smo import nu_svc_dual, nu_svr_dual, one_class_dual
from bisvm.solvers.dual.smo import csvc_dual, dense_hessian, epsilon_svr_dual, solve_smo
from bisvm.solvers.problems import LinearProblem

N, D = 30, 5


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(N, D))
    t = np.where(X[:, 0] + 0.5 * rng.normal(size=N) > 0, 1.0, -1.0)
    z = X @ rng.normal(size=D) + 0.1 * rng.normal(size=N)
    k = np.argmax(X[:, :3], axis=1)  # three classes
    return X, t, z, k


def _dual_problems(X, t, z):
    rbf = make_kernel("rbf", gamma=0.5)
    return {
        "csvc": csvc_dual(X, t, rbf, 1.0),
        "l2svc": csvc_dual(X, t, rbf, 1.0, loss=SquaredHinge()),
        "svr": epsilon_svr_dual(X, z, rbf, 1.0, 0.1),
        "nusvc": nu_svc_dual(X, t, rbf, 0.4),
        "nusvr": nu_svr_dual(X, z, rbf, 1.0, 0.4),
        "oneclass": one_class_dual(X, rbf, 0.3),
    }


@pytest.mark.parametrize("kind", ["csvc", "l2svc", "svr", "nusvc", "nusvr", "oneclass"])
def test_smo(data, kind):
    X, t, z, _ = data
    pb = _dual_problems(X, t, z)[kind]
    res = solve_smo(pb, tol=1e-6)
    check_contract(res, certificate="max_violating_pair", tol=1e-6, dual=True,
                   active_set=True)
    assert res.converged
    # coef is the kernel expansion over the training samples; the intercept is -rho
    np.testing.assert_allclose(
        res.coef, np.bincount(pb.sample_index, pb.y * res.dual_coef, minlength=N))
    assert np.array_equal(res.active_set, np.flatnonzero(res.dual_coef > 0))
    assert set(res.stats) >= {"dual_gradient", "n_kernel_columns", "mean_active_size",
                              "nu_multiplier", "profile"}
    Q = dense_hessian(pb)
    np.testing.assert_allclose(res.stats["dual_gradient"], Q @ res.dual_coef + pb.p,
                               atol=1e-10)


@pytest.mark.parametrize("kind", ["csvc", "svr"])
def test_active_set(data, kind):
    X, t, z, _ = data
    pb = _dual_problems(X, t, z)[kind]
    res = solve_active_set(pb)
    g = dense_hessian(pb) @ res.dual_coef + pb.p
    check_contract(res, certificate="kkt_violation", tol=1e-10,
                   scale=max(1.0, float(np.abs(g).max())), dual=True, active_set=True)
    assert res.converged
    smo = solve_smo(pb, tol=1e-9)
    assert res.intercept == pytest.approx(smo.intercept, abs=1e-5)
    np.testing.assert_allclose(res.coef, smo.coef, atol=1e-5)
    raw = active_set_qp(dense_hessian(pb), pb.p, pb.y, pb.upper)
    check_contract(raw, certificate="kkt_violation", dual=True, active_set=True)
    np.testing.assert_array_equal(raw.coef, pb.y * raw.dual_coef)


@pytest.mark.parametrize("loss", [Hinge(), SquaredHinge()])
@pytest.mark.parametrize("bias", [0.0, 1.0])
def test_dual_cd(data, loss, bias):
    X, t, _, _ = data
    res = solve_dual_cd(LinearProblem(X, t, loss, np.ones(N), bias=bias), tol=1e-8,
                        max_iter=10000)
    check_contract(res, certificate="projected_gradient_spread", tol=1e-8, dual=True)
    assert res.converged and res.coef.shape == (D,)
    # w = Σ α_i y_i x̃_i, split into the feature weights and bias · w[d]
    a = res.dual_coef
    np.testing.assert_allclose(res.coef, X.T @ (a * t), atol=1e-12)
    assert res.intercept == pytest.approx(bias * bias * (a * t).sum(), abs=1e-12)
    assert res.objective + res.dual_objective == pytest.approx(0.0, abs=1e-6)


@pytest.mark.parametrize("loss", [EpsilonInsensitive(0.1), SquaredEpsilonInsensitive(0.1)])
def test_dual_cd_svr(data, loss):
    X, _, z, _ = data
    res = solve_dual_cd_svr(LinearProblem(X, z, loss, np.ones(N), bias=1.0), tol=1e-8,
                            max_iter=10000)
    check_contract(res, certificate="relative_violation", tol=1e-8, dual=True)
    assert res.converged and res.coef.shape == (D,)
    np.testing.assert_allclose(res.coef, X.T @ res.dual_coef, atol=1e-12)
    warm = solve_dual_cd_svr(LinearProblem(X, z, loss, np.ones(N), bias=1.0), tol=1e-8,
                             max_iter=10000, alpha0=res.dual_coef)
    assert warm.n_iter <= res.n_iter


def test_crammer_singer(data):
    X, _, _, k = data
    problem = LinearProblem(X, k, MulticlassHinge(), np.ones(N), bias=1.0)
    res = solve_crammer_singer(problem, tol=1e-8, max_iter=100000)
    check_contract(res, certificate="max_violation", tol=1e-8, dual=True)
    assert res.converged and res.coef.shape == (3, D) and res.intercept.shape == (3,)
    assert res.dual_coef.shape == (N, 3)
    np.testing.assert_allclose(res.coef, res.dual_coef.T @ X, atol=1e-10)
    np.testing.assert_allclose(res.intercept, res.dual_coef.sum(axis=0), atol=1e-10)
    assert np.all(np.isfinite(res.record.seconds))


def test_dual_losses_are_rejected_where_they_do_not_belong(data):
    X, t, z, _ = data
    with pytest.raises(ValueError, match="loss"):
        solve_dual_cd(LinearProblem(X, t, EpsilonInsensitive(), np.ones(N)))
    with pytest.raises(ValueError, match="loss"):
        solve_dual_cd_svr(LinearProblem(X, z, Hinge(), np.ones(N)))
