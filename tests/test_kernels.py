"""Kernels against scikit-learn's pairwise kernels, explicit feature maps of the polynomial
kernel, and validation errors."""

import numpy as np
import pytest
from sklearn.metrics import pairwise

from bisvm import kernels as K


@pytest.fixture
def data():
    rng = np.random.default_rng(0)
    return rng.normal(size=(30, 5)), rng.normal(size=(12, 5))


def test_blocks_match_sklearn(data):
    X, Y = data
    np.testing.assert_allclose(K.linear_kernel(X, Y), pairwise.linear_kernel(X, Y), rtol=1e-12)
    np.testing.assert_allclose(
        K.polynomial_kernel(X, Y, 0.3, 1.5, 3),
        pairwise.polynomial_kernel(X, Y, degree=3, gamma=0.3, coef0=1.5),
        rtol=1e-10,
    )
    np.testing.assert_allclose(
        K.rbf_kernel(X, Y, 0.2), pairwise.rbf_kernel(X, Y, gamma=0.2), rtol=1e-10
    )
    np.testing.assert_allclose(
        K.laplacian_kernel(X, Y, 0.2), pairwise.laplacian_kernel(X, Y, gamma=0.2), rtol=1e-10
    )
    np.testing.assert_allclose(
        K.sigmoid_kernel(X, Y, 0.1, 0.5),
        pairwise.sigmoid_kernel(X, Y, gamma=0.1, coef0=0.5),
        rtol=1e-10,
    )


def test_rbf_self_block_is_exact_on_diagonal(data):
    X, _ = data
    G = K.rbf_kernel(X * 1e3, None, 1e-6)
    np.testing.assert_array_equal(np.diag(G), 1.0)
    np.testing.assert_allclose(G, G.T)


@pytest.mark.parametrize("name", ["linear", "poly", "rbf", "laplacian", "sigmoid"])
def test_diag_matches_block(data, name):
    X, _ = data
    ker = K.make_kernel(name, gamma=0.2, coef0=0.7, degree=2, X=X)
    np.testing.assert_allclose(ker.diag(X), np.diag(ker(X)), rtol=1e-10, atol=1e-12)


def test_homogeneous_quadratic_kernel_is_its_feature_map_inner_product():
    """Φ(x) = (x1², √2 x1 x2, x2²) gives κ(x, y) = (xᵀy)²."""
    rng = np.random.default_rng(1)
    X = rng.normal(size=(20, 2))
    phi = np.c_[X[:, 0] ** 2, np.sqrt(2) * X[:, 0] * X[:, 1], X[:, 1] ** 2]
    np.testing.assert_allclose(phi @ phi.T, K.polynomial_kernel(X, X, 1.0, 0.0, 2), atol=1e-12)


def test_inhomogeneous_quadratic_kernel_is_its_feature_map_inner_product():
    """Φ₂(x) = (1, √2x1, √2x2, √2x1x2, x1², x2²) for (⟨x,x'⟩ + 1)²."""
    X = np.array([[1.0, 1], [-1, 1], [-1, -1], [1, -1]])
    r2 = np.sqrt(2)
    phi = np.c_[np.ones(4), r2 * X[:, 0], r2 * X[:, 1], r2 * X[:, 0] * X[:, 1], X**2]
    np.testing.assert_allclose(phi @ phi.T, K.polynomial_kernel(X, X, 1.0, 1.0, 2))
    np.testing.assert_allclose(K.polynomial_kernel(X, X, 1.0, 1.0, 2), 8 * np.eye(4) + 1)


def test_gamma_conventions():
    rng = np.random.default_rng(2)
    X = rng.normal(scale=3.0, size=(40, 4))
    assert K.resolve_gamma("scale", X) == pytest.approx(1.0 / (4 * X.var()))
    assert K.resolve_gamma("auto", X) == pytest.approx(0.25)
    assert K.resolve_gamma(0.5, X) == 0.5
    assert K.resolve_gamma("scale", np.ones((3, 2))) == 1.0


@pytest.mark.parametrize("gamma", [0.0, -1.0, np.inf, "big"])
def test_bad_gamma(gamma):
    with pytest.raises(ValueError, match="gamma"):
        K.make_kernel("rbf", gamma=gamma, X=np.ones((3, 2)))


def test_bad_kernel_name_and_params():
    with pytest.raises(ValueError, match="kernel"):
        K.make_kernel("gaussian")
    with pytest.raises(ValueError, match="degree"):
        K.make_kernel("poly", degree=-1, gamma=1.0)
    with pytest.raises(ValueError, match="degree"):
        K.make_kernel("poly", degree=2.5, gamma=1.0)
    with pytest.raises(ValueError, match="coef0"):
        K.make_kernel("poly", coef0=np.nan, gamma=1.0)


def test_precomputed_checks():
    G = K.rbf_kernel(np.random.default_rng(3).normal(size=(6, 2)))
    assert K.check_precomputed(G) is not None
    with pytest.raises(ValueError, match="square"):
        K.check_precomputed(G[:, :4])
    bad = G.copy()
    bad[0, 1] += 0.1
    with pytest.raises(ValueError, match="symmetric"):
        K.check_precomputed(bad)
    with pytest.raises(ValueError, match="NaN"):
        K.check_precomputed(np.full((2, 2), np.nan))
    with pytest.raises(ValueError, match="6 columns"):
        K.check_precomputed(G[:3, :5], n_train=6, symmetric=False)


def test_callable_kernel_and_shape_check(data):
    X, Y = data
    ker = K.make_kernel(lambda A, B: A @ B.T)
    np.testing.assert_allclose(ker(X, Y), X @ Y.T)
    bad = K.make_kernel(lambda A, B: np.ones((2, 2)))
    with pytest.raises(ValueError, match="shape"):
        bad(X, Y)


def test_mismatched_features():
    with pytest.raises(ValueError, match="same number of features"):
        K.rbf_kernel(np.ones((3, 2)), np.ones((3, 3)))
