"""KernelRidge: the primal = dual identity, exact leave-one-out residuals against
refitting, parity with scikit-learn, conformance and bad input."""

import numpy as np
import pytest
import sklearn.kernel_ridge
from sklearn.utils._param_validation import InvalidParameterError
from sklearn.utils.estimator_checks import check_param_validation, parametrize_with_checks

from bisvm.estimators.kernel_ridge import KernelRidge
from bisvm.kernels import polynomial_kernel


@parametrize_with_checks(
    [
        KernelRidge(),
        KernelRidge(kernel="rbf", gamma=0.5, fit_intercept=True),
        KernelRidge(kernel="precomputed"),
    ]
)
def test_sklearn_compatible(estimator, check):
    check(estimator)


@pytest.fixture
def data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3))
    y = X @ [1.0, -2.0, 0.5] + np.sin(2 * X[:, 0]) + 0.2 * rng.normal(size=40)
    return X, y


def test_primal_equals_dual_linear_kernel(data):
    """Seed 001 eq. (8.4): theta = (K + C I)^-1 y reproduces the primal ridge
    w = (X^T X + C I)^-1 X^T y, and the §8.8 dual lambda = 2C theta."""
    X, y = data
    C = 0.7
    m = KernelRidge(C, kernel="linear").fit(X, y)
    w = np.linalg.solve(X.T @ X + C * np.eye(3), X.T @ y)
    np.testing.assert_allclose(X.T @ m.dual_coef_, w, atol=1e-10)
    Z = np.random.default_rng(1).normal(size=(7, 3))
    np.testing.assert_allclose(m.predict(Z), Z @ w, atol=1e-10)
    # the dual of §8.8: maximise l.y - l'Kl/(4C) - l'l/4, whose maximiser is 2C theta
    K = X @ X.T
    lam = 2 * C * m.dual_coef_
    grad = y - K @ lam / (2 * C) - lam / 2
    np.testing.assert_allclose(grad, 0.0, atol=1e-10)


def test_explicit_feature_map_primal_equals_dual(data):
    """With k(x, y) = (x'y)^2 in 2-D (seed 001 Example 8.1) kernel ridge equals ridge on
    the explicit features (x1^2, sqrt2 x1 x2, x2^2)."""
    X, y = data
    X = X[:, :2]
    phi = np.c_[X[:, 0] ** 2, np.sqrt(2) * X[:, 0] * X[:, 1], X[:, 1] ** 2]
    m = KernelRidge(0.5, kernel="precomputed").fit(polynomial_kernel(X, X, 1.0, 0.0, 2), y)
    w = np.linalg.solve(phi.T @ phi + 0.5 * np.eye(3), phi.T @ y)
    np.testing.assert_allclose(phi @ w, polynomial_kernel(X, X, 1.0, 0.0, 2) @ m.dual_coef_)


def test_intercept_block_system_exercise_6(data):
    """Seed 001 exercise 6: [[K + CI, 1], [1'K, N]] [theta; b] = [y; 1'y]."""
    X, y = data
    C = 0.3
    m = KernelRidge(C, kernel="rbf", gamma=0.5, fit_intercept=True).fit(X, y)
    K = m._kernel(X)
    n = len(y)
    M = np.block([[K + C * np.eye(n), np.ones((n, 1))], [np.ones((1, n)) @ K, np.full((1, 1), n)]])
    sol = np.linalg.solve(M, np.r_[y, y.sum()])
    np.testing.assert_allclose(m.dual_coef_, sol[:n], atol=1e-9)
    assert m.intercept_ == pytest.approx(sol[n], abs=1e-9)


@pytest.mark.parametrize("fit_intercept", [False, True])
@pytest.mark.parametrize("weighted", [False, True])
def test_loo_residuals_exact(data, fit_intercept, weighted):
    X, y = data
    n = len(y)
    w = np.random.default_rng(2).uniform(0.3, 3.0, n) if weighted else None
    if weighted:
        w[5] = 0.0
    kw = dict(kernel="rbf", gamma=0.4, fit_intercept=fit_intercept)
    m = KernelRidge(0.2, **kw).fit(X, y, sample_weight=w)
    loo = np.empty(n)
    for i in range(n):
        keep = np.arange(n) != i
        mi = KernelRidge(0.2, **kw).fit(
            X[keep], y[keep], sample_weight=None if w is None else w[keep]
        )
        loo[i] = y[i] - mi.predict(X[i : i + 1])[0]
    np.testing.assert_allclose(m.loo_residuals_, loo, atol=1e-9)
    assert m.loo_mse_ == pytest.approx(np.average(loo**2, weights=w))


def test_matches_sklearn_kernel_ridge(data):
    X, y = data
    w = np.random.default_rng(3).uniform(0.5, 2.0, len(y))
    for kernel, kw in [
        ("rbf", {"gamma": 0.3}),
        ("poly", {"gamma": 0.5, "degree": 2, "coef0": 1.0}),
    ]:
        a = KernelRidge(0.8, kernel=kernel, **kw).fit(X, y, sample_weight=w)
        b = sklearn.kernel_ridge.KernelRidge(alpha=0.8, kernel=kernel, **kw).fit(
            X, y, sample_weight=w
        )
        np.testing.assert_allclose(a.predict(X), b.predict(X), atol=1e-9)


def test_multi_output(data):
    X, y = data
    Y = np.c_[y, 2 * y + 1]
    m = KernelRidge(0.5, kernel="rbf", gamma=0.3, fit_intercept=True).fit(X, Y)
    single = KernelRidge(0.5, kernel="rbf", gamma=0.3, fit_intercept=True).fit(X, Y[:, 1])
    np.testing.assert_allclose(m.predict(X)[:, 1], single.predict(X), atol=1e-10)
    np.testing.assert_allclose(m.loo_residuals_[:, 1], single.loo_residuals_, atol=1e-10)


def test_param_validation():
    check_param_validation("KernelRidge", KernelRidge())


def test_bad_parameters_named_and_numeric_spellings_fit_the_same_model(data):
    X, y = data
    for r in (0, True, np.nan, None):
        with pytest.raises(InvalidParameterError,
                           match=r"^The 'ridge' parameter of KernelRidge must be"):
            KernelRidge(r).fit(X, y)
    with pytest.raises(InvalidParameterError, match="'kernel' parameter of KernelRidge"):
        KernelRidge(kernel=3).fit(X, y)
    a = KernelRidge(np.float64(0.5), kernel="rbf", gamma=0.3).fit(X, y)
    b = KernelRidge(0.5, kernel="rbf", gamma=0.3).fit(X, y)
    np.testing.assert_array_equal(a.dual_coef_, b.dual_coef_)
    c = KernelRidge(2, kernel=lambda A, B: A @ B.T).fit(X, y)
    d = KernelRidge(2.0).fit(X, y)
    np.testing.assert_allclose(c.dual_coef_, d.dual_coef_, rtol=1e-10)


def test_bad_input(data):
    X, y = data
    for r in (0.0, -1.0, np.inf, "a"):
        with pytest.raises(ValueError, match="ridge"):
            KernelRidge(r).fit(X, y)
    with pytest.raises(ValueError, match="kernel"):
        KernelRidge(kernel="spline").fit(X, y)
    with pytest.raises(ValueError, match="gamma"):
        KernelRidge(kernel="rbf", gamma=-1.0).fit(X, y)
    with pytest.raises(ValueError, match="sample_weight"):
        KernelRidge().fit(X, y, sample_weight=np.ones(3))
    with pytest.raises(ValueError, match="sample_weight"):
        KernelRidge().fit(X, y, sample_weight=-np.ones(len(y)))
    with pytest.raises(ValueError, match="square"):
        KernelRidge(kernel="precomputed").fit(X, y)
    Xn = X.copy()
    Xn[0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        KernelRidge().fit(Xn, y)
