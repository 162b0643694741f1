"""SMO against the active-set QP solver (an independent finite method), KKT conditions,
the XOR example in closed form, warm starts, the cache paths and bad input."""

import warnings
import zlib

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

from bisvm.kernels import make_kernel
from bisvm.solvers.dual.active_set import active_set_qp, solve_active_set
from bisvm.solvers.dual.smo import csvc_dual, dense_hessian, epsilon_svr_dual, solve_smo


def _random_problem(rng, kind, kernel):
    n = int(rng.integers(8, 45))
    X = rng.normal(size=(n, 3))
    y = np.where(rng.normal(size=n) > 0, 1.0, -1.0)
    y[:2] = [1.0, -1.0]
    ker = make_kernel(kernel, gamma=0.5, coef0=1.0, degree=2, X=X)
    C = float(10 ** rng.uniform(-1, 2))
    if kind == "hinge":
        return csvc_dual(X, y, ker, C, weights=rng.uniform(0.5, 2.0, n))
    if kind == "squared_hinge":
        return csvc_dual(X, y, ker, C, loss="squared_hinge")
    return epsilon_svr_dual(X, rng.normal(size=n), ker, C, 0.1)


def _kkt_violation(pb, alpha, rho):
    """max violation of g_t - rho*y_t >= 0 at 0, <= 0 at C, = 0 when free."""
    g = dense_hessian(pb) @ alpha + pb.p
    r = g - rho * pb.y
    at0 = alpha <= 0
    atC = alpha >= pb.upper
    free = ~at0 & ~atC
    v = np.concatenate([np.maximum(-r[at0], 0), np.maximum(r[atC], 0), np.abs(r[free])])
    return float(v.max())


@pytest.mark.parametrize("kind", ["hinge", "squared_hinge", "svr"])
@pytest.mark.parametrize("kernel", ["rbf", "poly", "linear"])
@pytest.mark.parametrize("selection", ["second_order", "max_violating_pair"])
@pytest.mark.parametrize("shrinking", [True, False])
def test_smo_matches_active_set(kind, kernel, selection, shrinking):
    rng = np.random.default_rng(zlib.crc32(f"{kind}-{kernel}".encode()))
    for _ in range(3):
        pb = _random_problem(rng, kind, kernel)
        ref = solve_active_set(pb)
        assert ref.converged
        res = solve_smo(pb, tol=1e-8, selection=selection, shrinking=shrinking)
        assert res.converged
        assert res.objective == pytest.approx(ref.objective, rel=1e-6, abs=1e-9)
        np.testing.assert_allclose(pb.y @ res.dual_coef, 0.0, atol=1e-9)
        assert np.all(res.dual_coef >= 0) and np.all(res.dual_coef <= pb.upper)
        assert _kkt_violation(pb, res.dual_coef, -res.intercept) < 1e-6
        tol = 1e-5 * max(1.0, abs(ref.intercept))
        assert res.intercept == pytest.approx(ref.intercept, abs=tol)


def test_small_lazy_float32_cache_gives_same_solution():
    """A cache of a few columns (float32, LRU evictions, partial columns under shrinking)
    reaches the same optimum as the prefilled float64 Gram matrix."""
    rng = np.random.default_rng(5)
    X = rng.normal(size=(300, 4))
    y = np.where(X[:, 0] + 0.5 * rng.normal(size=300) > 0, 1.0, -1.0)
    pb = csvc_dual(X, y, make_kernel("rbf", gamma=0.5, X=X), C=3.0)
    full = solve_smo(pb, tol=1e-6)
    small = solve_smo(pb, tol=1e-6, cache_size=0.02)  # ~17 columns of 300 float32
    assert small.stats["n_kernel_columns"] > 300  # columns were evicted and recomputed
    assert small.objective == pytest.approx(full.objective, rel=1e-6)
    assert small.intercept == pytest.approx(full.intercept, abs=1e-4)
    np.testing.assert_array_equal(small.dual_coef > 1e-8, full.dual_coef > 1e-8)


def test_hard_margin_separable_matches_active_set():
    rng = np.random.default_rng(7)
    X = rng.normal(size=(40, 2))
    y = np.where(X[:, 0] - X[:, 1] > 0, 1.0, -1.0)
    X += 0.3 * y[:, None] * np.array([1.0, -1.0])  # open a margin
    pb = csvc_dual(X, y, make_kernel("linear"), C=np.inf)
    ref = solve_active_set(pb)
    res = solve_smo(pb, tol=1e-9)
    assert res.objective == pytest.approx(ref.objective, rel=1e-7)
    w = (res.dual_coef * y) @ X
    margins = y * (X @ w + res.intercept)
    assert margins.min() == pytest.approx(1.0, abs=1e-6)  # support vectors on the margin


def test_xor_polynomial_kernel_closed_form():
    """XOR with K = (<x, x'> + 1)^2 (Haykin 1999, "Neural networks", §6.6) gives
    alpha = 1/8 for all four points, b = 0 and D(x) = x1 x2."""
    X = np.array([[1.0, 1.0], [-1.0, 1.0], [-1.0, -1.0], [1.0, -1.0]])
    y = np.array([1.0, -1.0, 1.0, -1.0])
    ker = make_kernel("poly", gamma=1.0, coef0=1.0, degree=2)
    for C in (0.125, 1.0, np.inf):
        res = solve_smo(csvc_dual(X, y, ker, C), tol=1e-12)
        np.testing.assert_allclose(res.dual_coef, 0.125, atol=1e-12)
        assert res.intercept == pytest.approx(0.0, abs=1e-12)
    Z = np.random.default_rng(0).uniform(-2, 2, size=(25, 2))
    D = ker(Z, X) @ (res.dual_coef * y) + res.intercept
    np.testing.assert_allclose(D, Z[:, 0] * Z[:, 1], atol=1e-12)


def test_warm_start_along_C_path():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(200, 3))
    y = np.where(X[:, 0] * X[:, 1] + 0.3 * rng.normal(size=200) > 0, 1.0, -1.0)
    ker = make_kernel("rbf", gamma=1.0, X=X)
    a1 = solve_smo(csvc_dual(X, y, ker, 1.0), tol=1e-6).dual_coef
    pb2 = csvc_dual(X, y, ker, 2.0)
    cold = solve_smo(pb2, tol=1e-6)
    warm = solve_smo(pb2, tol=1e-6, alpha0=a1)
    assert warm.objective == pytest.approx(cold.objective, rel=1e-6)
    assert warm.n_iter < cold.n_iter


def test_max_iter_warns():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(100, 3))
    y = np.where(rng.normal(size=100) > 0, 1.0, -1.0)
    pb = csvc_dual(X, y, make_kernel("rbf", gamma=1.0, X=X), C=10.0)
    with pytest.warns(ConvergenceWarning, match="max_iter=5"):
        res = solve_smo(pb, max_iter=5)
    assert not res.converged and res.n_iter == 5


def test_bad_arguments():
    X = np.eye(3)
    pb = csvc_dual(X, np.array([1.0, -1.0, 1.0]), make_kernel("linear"), 1.0)
    with pytest.raises(ValueError, match="selection"):
        solve_smo(pb, selection="random")
    with pytest.raises(ValueError, match="tol"):
        solve_smo(pb, tol=0)
    with pytest.raises(ValueError, match="cache_size"):
        solve_smo(pb, cache_size=-1)
    with pytest.raises(ValueError, match="alpha0"):
        solve_smo(pb, alpha0=np.full(3, 2.0))
    with pytest.raises(ValueError, match="loss"):
        csvc_dual(X, np.ones(3), make_kernel("linear"), 1.0, loss="log")


def test_active_set_no_warning_and_objective_formula():
    rng = np.random.default_rng(11)
    pb = _random_problem(rng, "hinge", "rbf")
    Q = dense_hessian(pb)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ref = active_set_qp(Q, pb.p, pb.y, pb.upper)
    a = ref.dual_coef
    assert ref.objective == pytest.approx(0.5 * a @ Q @ a + pb.p @ a)
