"""The L1 stage of AutoSVR (:mod:`bisvm.selection.kernel_l1_stage`): its k-fold errors
against scikit-learn's (LIBSVM's) ε-SVR and a direct solve of kernel ridge's optimality
system, its choice rule, and clear errors."""

import numpy as np
import pytest
from sklearn.model_selection import KFold
from sklearn.svm import SVR as SkSVR

from bisvm.selection.kernel_l1_stage import (
    C_FACTORS,
    EPSILONS,
    N_SCAN,
    WIDTH_FACTORS,
    kernel_ridge_cv_error,
    l1_stage,
    l1_svr_scan,
)
from bisvm.solvers.dual.kernel_lower_level import rbf_gram

GAMMA = 0.3


@pytest.fixture(scope="module")
def problem():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((90, 3))
    y = np.sin(1.5 * X[:, 0]) + 0.5 * X[:, 1] + 0.3 * rng.standard_t(2, 90)
    y = (y - y.mean()) / y.std()
    splits = list(KFold(4, shuffle=True, random_state=0).split(X))
    return X, y, splits, rbf_gram(X * np.sqrt(GAMMA), X * np.sqrt(GAMMA), 1.0)


def _sk_cv_error(X, y, splits, gamma, C, eps, sw):
    err = den = 0.0
    for tr, va in splits:
        m = SkSVR(kernel="rbf", gamma=gamma, C=C, epsilon=eps, tol=1e-8)
        m.fit(X[tr], y[tr], sample_weight=sw[tr])
        err += sw[va] @ (y[va] - m.predict(X[va])) ** 2
        den += sw[va].sum()
    return err / den


@pytest.mark.parametrize("weighted", [False, True])
def test_scan_errors_equal_libsvm_fold_errors(problem, weighted):
    X, y, splits, K = problem
    sw = np.random.default_rng(1).uniform(0.5, 2.0, y.size) if weighted else np.ones(y.size)
    scan = l1_svr_scan(K, y, splits, 2.0, sw if weighted else None)
    assert scan.shape == (N_SCAN, 4)
    # width factors outermost, C rising within each (width, epsilon) chain
    np.testing.assert_allclose(np.unique(scan[:, 0]), sorted(WIDTH_FACTORS))
    np.testing.assert_allclose(np.unique(scan[:, 1]), 2.0 * np.sort(C_FACTORS))
    np.testing.assert_allclose(np.unique(scan[:, 2]), sorted(EPSILONS))
    for row in scan[[0, 4, 13, 17, N_SCAN - 1]]:
        t, C, eps, err = row
        ref = _sk_cv_error(X, y, splits, GAMMA * t, C, eps, sw)
        # bisvm's SMO stops at a dual gap of 1e-3: the held-out error agrees closely
        assert err == pytest.approx(ref, rel=5e-3)


def test_kernel_ridge_cv_error_solves_the_optimality_system(problem):
    X, y, splits, K = problem
    sw = np.random.default_rng(2).uniform(0.5, 2.0, y.size)
    ridge = 0.7
    err = den = 0.0
    for tr, va in splits:
        # stationarity of sum s_i r_i^2 + ridge theta'K theta with an intercept:
        # S(K theta + b - y) + ridge theta = 0 and 1'theta = 0 (K positive definite)
        n = tr.size
        s = sw[tr]
        A = np.zeros((n + 1, n + 1))
        A[:n, :n] = s[:, None] * K[np.ix_(tr, tr)] + ridge * np.eye(n)
        A[:n, n] = s
        A[n, :n] = 1.0
        sol = np.linalg.solve(A, np.r_[s * y[tr], 0.0])
        pred = K[np.ix_(va, tr)] @ sol[:n] + sol[n]
        err += sw[va] @ (y[va] - pred) ** 2
        den += sw[va].sum()
    assert kernel_ridge_cv_error(K, y, splits, ridge, sw) == pytest.approx(err / den,
                                                                           rel=1e-9)


def test_choice_is_the_smaller_fold_error(problem):
    X, y, splits, K = problem
    out = l1_stage(K, y, splits, 0.5, 0.4)
    best = int(np.argmin(out.scan[:, 3]))
    assert (out.width_factor, out.C, out.epsilon, out.value) == tuple(out.scan[best])
    assert out.reference == pytest.approx(kernel_ridge_cv_error(K, y, splits, 0.5))
    assert out.model == ("epsilon_svr" if out.value < out.reference else "kernel_ridge")
    assert out.n_solves == len(splits) * (N_SCAN + 1)
    # the C scan is centred where the two losses pull a typical residual equally
    np.testing.assert_allclose(np.unique(out.scan[:, 1]),
                               np.sqrt(0.4) / 0.5 * np.sort(C_FACTORS))


def test_heavy_tailed_noise_keeps_the_l1_svr():
    """Cauchy noise: squared residuals are dominated by a few outliers, the absolute
    ε-insensitive loss is not, so k-fold validation prefers the ε-SVR."""
    rng = np.random.default_rng(3)
    X = rng.standard_normal((150, 2))
    y = np.sin(2 * X[:, 0]) + 0.2 * rng.standard_cauchy(150)
    y = (y - y.mean()) / y.std()
    K = rbf_gram(X, X, 1.0)
    splits = list(KFold(5, shuffle=True, random_state=0).split(X))
    out = l1_stage(K, y, splits, 1.0, 0.8)
    assert out.model == "epsilon_svr" and out.value < out.reference


@pytest.mark.parametrize("bad", [0.0, -1.0, np.inf, np.nan])
def test_bad_arguments_are_refused(problem, bad):
    X, y, splits, K = problem
    with pytest.raises(ValueError, match="C0"):
        l1_svr_scan(K, y, splits, bad)
    with pytest.raises(ValueError, match="ridge"):
        l1_stage(K, y, splits, bad, 0.5)
    if not bad == 0.0:
        with pytest.raises(ValueError, match="loo_mse"):
            l1_stage(K, y, splits, 1.0, bad)
