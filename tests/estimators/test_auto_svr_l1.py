"""AutoSVR's L1 stage: the ε-SVR it keeps is a plain SVR at the chosen hyperparameters
(checked against scikit-learn's LIBSVM SVR in the target's units), kernel ridge is kept
untouched otherwise, and the stage runs only after exact kernel ridge."""

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.svm import SVR as SkSVR

from bisvm import AutoSVR
from bisvm.estimators.svm import SVR
from bisvm.selection.kernel_l1_stage import N_SCAN, WIDTH_FACTORS

pytestmark = pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")


@pytest.fixture(scope="module")
def cauchy():
    """A smooth signal under Cauchy noise, on raw (unscaled) columns and target: the
    robust L1 loss wins the stage's comparison."""
    rng = np.random.default_rng(3)
    X = rng.standard_normal((150, 3)) * np.array([1.0, 5.0, 0.2])
    y = 10 + 4 * np.sin(2 * X[:, 0]) + X[:, 1] + 0.8 * rng.standard_cauchy(150)
    return X, y


@pytest.fixture(scope="module")
def gaussian():
    rng = np.random.default_rng(4)
    X = rng.standard_normal((120, 3))
    return X, np.sin(2 * X[:, 0]) + 0.5 * X[:, 1] ** 2 + 0.05 * rng.standard_normal(120)


@pytest.fixture(scope="module")
def fitted_cauchy(cauchy):
    X, y = cauchy
    return AutoSVR(max_iter=15).fit(X, y)


def test_kept_svr_is_a_plain_svr_at_the_chosen_values(cauchy, fitted_cauchy):
    X, y = cauchy
    est = fitted_cauchy
    assert est.lower_ == "kernel_ridge" and est.final_model_ == "epsilon_svr"
    assert est.stage_values_["epsilon_svr"] < est.stage_values_["kernel_ridge"]
    assert isinstance(est.estimator_, SVR)
    # the widths are the learned ones times a factor of the scan
    factor = est.gamma_ / est.learned_gamma_
    assert min(abs(factor - t) for t in WIDTH_FACTORS) < 1e-12
    # in the user's units: columns divided by their standard deviations, target raw, so
    # C scales with the target's spread (the loss is linear in it, the penalty not)
    Xs = X / X.std(axis=0)
    ref = SkSVR(kernel="rbf", gamma=est.gamma_, C=est.C_ * est.y_scale_,
                epsilon=est.epsilon_, tol=1e-8).fit(Xs, y)
    np.testing.assert_allclose(est.predict(X), ref.predict(Xs), atol=2e-3 * y.std())
    # and exactly bisvm's SVR on the estimator's own rescaled columns
    yz = (y - est.y_mean_) / est.y_scale_
    own = SVR(kernel="rbf", gamma=1.0, C=est.C_, epsilon=est.epsilon_ / est.y_scale_)
    own.fit(X * est.scale_, yz)
    np.testing.assert_allclose(est.predict(X), own.predict(X * est.scale_) * est.y_scale_
                               + est.y_mean_, rtol=1e-12, atol=1e-12)


def test_stage_leaves_the_tuning_alone(cauchy, fitted_cauchy):
    X, y = cauchy
    off = AutoSVR(max_iter=15, l1_stage=False).fit(X, y)
    on = fitted_cauchy
    assert off.final_model_ == "kernel_ridge" and off.stage_values_ is None
    assert off.C_ is None and off.epsilon_ is None
    assert on.ridge_ == off.ridge_ and on.learned_gamma_ == off.learned_gamma_
    assert on.n_solves_ == off.n_solves_ + 5 * (N_SCAN + 1)
    assert on.stage_scan_.shape == (N_SCAN, 4)


def test_kernel_ridge_kept_when_it_validates_better(gaussian):
    X, y = gaussian
    on = AutoSVR(max_iter=15).fit(X, y)
    off = AutoSVR(max_iter=15, l1_stage=False).fit(X, y)
    vals = on.stage_values_
    assert on.final_model_ == ("epsilon_svr" if vals["epsilon_svr"] < vals["kernel_ridge"]
                               else "kernel_ridge")
    # smooth signal, small Gaussian noise: squared loss is the right one
    assert on.final_model_ == "kernel_ridge"
    np.testing.assert_array_equal(on.predict(X), off.predict(X))


@pytest.mark.parametrize("params", [{"lower": "svr"},
                                    {"approximation": "nystroem", "n_components": 20}])
def test_stage_runs_only_after_exact_kernel_ridge(gaussian, params):
    X, y = gaussian
    est = AutoSVR(max_iter=4, random_state=0, **params).fit(X, y)
    assert est.stage_values_ is None and est.stage_scan_ is None
    assert est.final_model_ == est.lower_


def test_sparse_input_and_weights(cauchy, fitted_cauchy):
    X, y = cauchy
    est = AutoSVR(max_iter=15).fit(sp.csr_matrix(X), y)
    assert est.final_model_ == fitted_cauchy.final_model_
    # the sparse Gram matrix differs in the last bits, so SMO may stop at another point
    # within its tolerance
    np.testing.assert_allclose(est.predict(sp.csr_matrix(X)), fitted_cauchy.predict(X),
                               atol=2e-3 * y.std())
    # rows of weight 0 are left out of the stage's folds and fits as of the tuning
    w = np.ones(y.size)
    w[::7] = 0.0
    keep = w > 0
    a = AutoSVR(max_iter=15).fit(X, y, sample_weight=w)
    b = AutoSVR(max_iter=15).fit(X[keep], y[keep])
    assert a.final_model_ == b.final_model_
    np.testing.assert_allclose(a.predict(X), b.predict(X), rtol=1e-9, atol=1e-9)


def test_bad_l1_stage_is_refused(gaussian):
    X, y = gaussian
    with pytest.raises(ValueError, match="l1_stage"):
        AutoSVR(l1_stage="yes").fit(X, y)


def test_model_file_round_trip_of_the_kept_svr(cauchy, fitted_cauchy, tmp_path):
    from bisvm.persistence import check_round_trip

    X, _ = cauchy
    back = check_round_trip(fitted_cauchy, X, tmp_path / "l1.bisvm").estimator
    assert back.final_model_ == "epsilon_svr" and isinstance(back.estimator_, SVR)
    np.testing.assert_array_equal(back.predict(X), fitted_cauchy.predict(X))
    np.testing.assert_array_equal(back.stage_scan_, fitted_cauchy.stage_scan_)
    assert back.stage_values_ == fitted_cauchy.stage_values_


def test_report_surface_follows_the_kernel_ridge_path(cauchy, fitted_cauchy):
    """With the epsilon-SVR kept, the report's surface is still kernel ridge's, over the
    ridge the outer loop learned (the SVR's C was never on the path)."""
    from bisvm.report.kernel import cv_surface

    X, y = cauchy
    assert fitted_cauchy.final_model_ == "epsilon_svr"
    s = cv_surface(fitted_cauchy, X, y, n_points=3, cv=3)
    assert s["first_name"] == "ridge"
    assert s["first"].min() <= fitted_cauchy.ridge_ <= s["first"].max()
    assert np.all(np.isfinite(s["errors"]))
