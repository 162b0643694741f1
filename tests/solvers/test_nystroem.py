"""The Nyström approximation and kernel ridge on it: landmarks (distinct, seeded,
k-means++ covering separated clusters), the features against the formula
B C^{-1} B^T and the exact Gram matrix, the leave-one-out residuals against refits of
scikit-learn's Ridge on the features without each row, the gradient in log ridge,
log γ and every log γ_j against central finite differences (dense and sparse, weighted,
with and without intercept), and clear errors."""

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.linear_model import Ridge

from bisvm.selection.kernel_ridge_tune import kernel_ridge_loo
from bisvm.solvers.dual.kernel_lower_level import rbf_gram
from bisvm.solvers.nystroem import (
    nystroem_features,
    nystroem_ridge_coef,
    nystroem_ridge_loo,
    nystroem_ridge_loo_grad,
    nystroem_width_grad,
    select_landmarks,
)


def _data(n=60, d=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    y = np.sin(X[:, 0]) + 0.5 * X[:, 1] * X[:, 2] + 0.1 * rng.standard_normal(n)
    return X, y


@pytest.mark.parametrize("method", ["kmeans++", "uniform"])
def test_landmarks_are_distinct_seeded_rows(method):
    X, _ = _data(n=80)
    idx = select_landmarks(X, 20, method, random_state=3)
    assert idx.size == 20 and np.unique(idx).size == 20 and np.all(np.diff(idx) > 0)
    np.testing.assert_array_equal(idx, select_landmarks(X, 20, method, random_state=3))
    assert select_landmarks(X, 500, method, random_state=3).size == 80
    np.testing.assert_array_equal(select_landmarks(sp.csr_matrix(X), 20, method, 3), idx)


def test_kmeans_pp_covers_separated_clusters():
    rng = np.random.default_rng(0)
    centres = np.eye(5) * 50.0
    sizes = [200, 20, 20, 20, 20]  # uniform draws of 5 rows usually miss a small cluster
    X = np.vstack([c + rng.standard_normal((s, 5)) for c, s in zip(centres, sizes)])
    label = np.repeat(np.arange(5), sizes)
    for seed in range(5):
        idx = select_landmarks(X, 5, "kmeans++", random_state=seed)
        assert set(label[idx]) == set(range(5))


@pytest.mark.parametrize("gamma", [0.4, np.array([0.2, 0.6, 0.05])])
def test_features_reproduce_the_nystroem_kernel(gamma):
    X, _ = _data(n=50)
    Z = X[select_landmarks(X, 12, "uniform", random_state=0)]
    Phi = nystroem_features(X, Z, gamma)
    B, C = rbf_gram(X, Z, gamma), rbf_gram(Z, Z, gamma)
    np.testing.assert_allclose(Phi @ Phi.T, B @ np.linalg.solve(C, B.T), atol=1e-6)
    # every row a landmark: the exact Gram matrix
    Phi = nystroem_features(X, X, gamma)
    np.testing.assert_allclose(Phi @ Phi.T, rbf_gram(X, X, gamma), atol=1e-6)


@pytest.mark.parametrize("fit_intercept", [True, False])
def test_loo_residuals_match_ridge_refits_without_each_row(fit_intercept):
    X, y = _data(n=40)
    sw = np.random.default_rng(2).uniform(0.5, 2.0, X.shape[0])
    Z = X[select_landmarks(X, 10, "kmeans++", random_state=0)]
    st = nystroem_ridge_loo(X, Z, y, 0.3, 0.5, sw, fit_intercept)
    Phi = nystroem_features(X, Z, 0.5)
    full = Ridge(alpha=0.3, fit_intercept=fit_intercept, solver="cholesky")
    full.fit(Phi, y, sample_weight=sw)
    a, b = nystroem_ridge_coef(X, Z, y, 0.3, 0.5, sw, fit_intercept)
    np.testing.assert_allclose(rbf_gram(X, Z, 0.5) @ a + b, full.predict(Phi), atol=1e-8)
    for i in range(0, 40, 7):
        keep = np.arange(40) != i
        r = Ridge(alpha=0.3, fit_intercept=fit_intercept, solver="cholesky")
        r.fit(Phi[keep], y[keep], sample_weight=sw[keep])
        assert st.residuals[i] == pytest.approx(y[i] - r.predict(Phi[i:i + 1])[0], rel=1e-7)
    assert st.value == pytest.approx(np.average(st.residuals**2, weights=sw), rel=1e-12)


def test_all_rows_as_landmarks_is_exact_kernel_ridge():
    X, y = _data(n=40)
    st = nystroem_ridge_loo(X, X, y, 0.1, 0.3)
    assert st.value == pytest.approx(kernel_ridge_loo(X, y, 0.1, 0.3).value, rel=1e-6)


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("fit_intercept", [True, False])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("gamma", [0.3, np.array([0.2, 0.5, 0.05])])
def test_gradient_matches_central_differences(gamma, weighted, fit_intercept, sparse):
    X, y = _data()
    Z = X[select_landmarks(X, 15, "kmeans++", random_state=0)]
    Xa = sp.csr_matrix(X) if sparse else X
    sw = np.random.default_rng(1).uniform(0.5, 2.0, X.shape[0]) if weighted else None
    ridge = 0.1
    st = nystroem_ridge_loo(Xa, Z, y, ridge, gamma, sw, fit_intercept)
    grad = nystroem_ridge_loo_grad(Xa, Z, st, ridge, gamma, sw)
    shared = np.size(gamma) == 1
    p = np.log(np.concatenate([[ridge], np.atleast_1d(gamma)]))

    def value(lp):
        g = np.exp(lp[1]) if shared else np.exp(lp[1:])
        return nystroem_ridge_loo(Xa, Z, y, np.exp(lp[0]), g, sw, fit_intercept).value

    h = 1e-5
    fd = np.array([(value(p + h * e) - value(p - h * e)) / (2 * h) for e in np.eye(p.size)])
    np.testing.assert_allclose(grad, fd, rtol=1e-6, atol=1e-10)


def test_bad_arguments_raise():
    X, _ = _data(n=20)
    with pytest.raises(ValueError, match="method"):
        select_landmarks(X, 5, "random")
    with pytest.raises(ValueError, match="n_components"):
        select_landmarks(X, 0)
    with pytest.raises(ValueError, match="n_components"):
        select_landmarks(X, 2.5)


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("gamma", [0.3, np.array([0.2, 0.5, 0.05])])
def test_width_gradient_of_a_feature_criterion(gamma, sparse):
    """J(Φ) = <M, ΦΦ^T> + ‖ΦΦ^T y‖² depends on Φ through ΦΦ^T only; its gradient in the
    widths from ∂J/∂Φ matches central differences."""
    X, y = _data(n=30)
    Z = X[select_landmarks(X, 8, "kmeans++", random_state=0)]
    Xa = sp.csr_matrix(X) if sparse else X
    M = np.random.default_rng(3).standard_normal((30, 30))

    def crit(g):
        K = nystroem_features(Xa, Z, g)
        K = K @ K.T
        return float(np.vdot(M, K) + np.sum((K @ y) ** 2))

    Phi = nystroem_features(Xa, Z, gamma)
    Ky = Phi @ (Phi.T @ y)
    G = (M + M.T) @ Phi + 2.0 * (np.outer(Ky, y) + np.outer(y, Ky)) @ Phi
    grad = nystroem_width_grad(Xa, Z, gamma, G)
    p = np.log(np.atleast_1d(gamma))
    h = 1e-5

    def at(lp):
        return crit(np.exp(lp) if p.size > 1 else float(np.exp(lp[0])))

    fd = [(at(p + h * e) - at(p - h * e)) / (2 * h) for e in np.eye(p.size)]
    np.testing.assert_allclose(grad, fd, rtol=1e-6, atol=1e-8)
