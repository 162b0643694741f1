"""Self-tuning kernel ridge: the exact leave-one-out residuals against refits without
each row, their closed-form gradient in log ridge, log γ and every log γ_j against
central finite differences (with and without intercept and sample weights), and the
outer loop (improves on its start, drops noise features, clear errors)."""

import numpy as np
import pytest

from bisvm.estimators.kernel_ridge import KernelRidge
from bisvm.selection.kernel_ridge_tune import (
    RIDGE_FLOOR,
    KernelRidgeLOOObjective,
    RidgeHyperModel,
    kernel_ridge_loo,
    kernel_ridge_loo_grad,
    tune_kernel_ridge,
)


def _data(n=40, d=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    y = np.sin(X[:, 0]) + 0.5 * X[:, 1] * X[:, 2] + 0.1 * rng.standard_normal(n)
    return X, y


def _loo_value(X, y, logp, shared, sw, fit_intercept):
    g = np.exp(logp[1]) if shared else np.exp(logp[1:])
    return kernel_ridge_loo(X, y, np.exp(logp[0]), g, sw, fit_intercept).value


@pytest.mark.parametrize("fit_intercept", [True, False])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("gamma", [0.3, np.array([0.2, 0.5, 0.05])])
def test_gradient_matches_central_differences(gamma, weighted, fit_intercept):
    X, y = _data()
    sw = np.random.default_rng(1).uniform(0.5, 2.0, X.shape[0]) if weighted else None
    ridge = 0.1
    st = kernel_ridge_loo(X, y, ridge, gamma, sw, fit_intercept)
    grad = kernel_ridge_loo_grad(X, st, ridge, gamma, sw)
    shared = np.size(gamma) == 1
    p = np.log(np.concatenate([[ridge], np.atleast_1d(gamma)]))
    h = 1e-5
    fd = np.array([(_loo_value(X, y, p + h * e, shared, sw, fit_intercept)
                    - _loo_value(X, y, p - h * e, shared, sw, fit_intercept)) / (2 * h)
                   for e in np.eye(p.size)])
    np.testing.assert_allclose(grad, fd, rtol=1e-6, atol=1e-9)


def test_shared_gradient_with_cached_distances_equals_uncached():
    X, y = _data()
    D = ((X[:, None, :] - X[None, :, :]) ** 2).sum(axis=2)
    st = kernel_ridge_loo(X, y, 0.05, 0.4, None, True, D)
    np.testing.assert_allclose(kernel_ridge_loo_grad(X, st, 0.05, 0.4, None, D),
                               kernel_ridge_loo_grad(X, st, 0.05, 0.4), rtol=1e-10)


@pytest.mark.parametrize("fit_intercept", [True, False])
def test_loo_residuals_match_refits_without_each_row(fit_intercept):
    X, y = _data(n=25)
    sw = np.random.default_rng(2).uniform(0.5, 2.0, X.shape[0])
    st = kernel_ridge_loo(X, y, 0.2, 0.5, sw, fit_intercept)
    for i in range(0, 25, 6):
        keep = np.arange(25) != i
        kr = KernelRidge(ridge=0.2, kernel="rbf", gamma=0.5, fit_intercept=fit_intercept)
        kr.fit(X[keep], y[keep], sample_weight=sw[keep])
        assert st.residuals[i] == pytest.approx(y[i] - kr.predict(X[i:i + 1])[0], rel=1e-8)
    assert st.value == pytest.approx(np.average(st.residuals**2, weights=sw))


def test_objective_gradient_is_in_beta_and_singular_point_is_infinite():
    X, y = _data()
    hyper = RidgeHyperModel("per_feature", 3, 0.1, 0.3)
    obj = KernelRidgeLOOObjective(X, y, hyper)
    beta = np.array([1.0, 2.0, 0.5, 1.0])
    ev = obj.evaluate(beta)
    h = 1e-6
    fd = [(obj.evaluate(beta + h * e).value - obj.evaluate(beta - h * e).value) / (2 * h)
          for e in np.eye(4)]
    np.testing.assert_allclose(ev.grad, fd, rtol=1e-5, atol=1e-9)
    # the ridge never falls below its floor
    assert hyper.params(np.array([1e-300, 1.0, 1.0, 1.0]))[0] == pytest.approx(RIDGE_FLOOR)
    # two identical rows and no ridge (no floor): A is singular
    Xd = np.vstack([X, X[:1]])
    sing = KernelRidgeLOOObjective(Xd, np.append(y, y[0]),
                                   RidgeHyperModel("shared", 3, 1e-300, 1e-12, floor=0.0))
    assert sing.evaluate(np.ones(2)).value == np.inf


def test_tuning_improves_on_its_start_and_finds_the_relevant_features():
    rng = np.random.default_rng(3)
    n, d = 200, 6
    X = rng.standard_normal((n, d))
    y = np.sin(2 * X[:, 0]) + X[:, 1] * X[:, 2] + 0.1 * rng.standard_normal(n)
    y = (y - y.mean()) / y.std()
    shared = tune_kernel_ridge(X, y)
    assert shared.value <= shared.scan_values.min() + 1e-12
    assert shared.gamma.shape == (1,) and shared.support is None
    per = tune_kernel_ridge(X, y, widths="per_feature")
    assert per.value < shared.value
    assert set(per.support) == {0, 1, 2}
    assert np.all(per.gamma_support[3:] == 0)
    # the value reported is the LOO error at the learned point
    st = kernel_ridge_loo(X, y, per.ridge, per.gamma, None, True)
    assert per.value == pytest.approx(st.value, rel=1e-8)


def test_bad_options_raise():
    X, y = _data()
    with pytest.raises(ValueError, match="widths"):
        tune_kernel_ridge(X, y, widths="ard")
    with pytest.raises(ValueError, match="support_rule"):
        tune_kernel_ridge(X, y, support_rule="2se")


def test_nystroem_objective_gradient_is_in_beta():
    X, y = _data(n=50)
    Z = X[::4]
    obj = KernelRidgeLOOObjective(X, y, RidgeHyperModel("per_feature", 3, 0.1, 0.3),
                                  landmarks=Z)
    beta = np.array([1.0, 2.0, 0.5, 1.0])
    ev = obj.evaluate(beta)
    h = 1e-6
    fd = [(obj.evaluate(beta + h * e).value - obj.evaluate(beta - h * e).value) / (2 * h)
          for e in np.eye(4)]
    np.testing.assert_allclose(ev.grad, fd, rtol=1e-5, atol=1e-9)


def test_tuning_on_every_row_as_landmark_is_the_exact_tuning():
    X, y = _data(n=60)
    exact = tune_kernel_ridge(X, y, max_iter=15)
    nys = tune_kernel_ridge(X, y, max_iter=15, landmarks=X)
    assert nys.ridge == pytest.approx(exact.ridge, rel=1e-3)
    np.testing.assert_allclose(nys.gamma, exact.gamma, rtol=1e-3)
    assert nys.value == pytest.approx(exact.value, rel=1e-5)
    assert nys.C is None and nys.ridge0 == exact.ridge0
