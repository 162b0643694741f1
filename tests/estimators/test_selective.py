"""Selective-ridge estimators: scikit-learn compatibility, agreement with the solver and
with scikit-learn's ridge at μ = 0, the μ path attributes and bad input."""

import warnings

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression, Ridge
from sklearn.utils._param_validation import InvalidParameterError
from sklearn.utils.estimator_checks import check_estimator, check_param_validation

from bisvm.estimators.selective import (
    EmptyModelWarning,
    SelectiveLogisticRegression,
    SelectiveLogisticRegressionCV,
    SelectiveRegression,
    SelectiveRegressionCV,
)
from bisvm.solvers.base import ConvergenceWarning

pytestmark = pytest.mark.usefixtures("one_blas_thread")


@pytest.mark.parametrize("est", [
    SelectiveRegression(), SelectiveLogisticRegression(),
    SelectiveRegressionCV(n_mu=8), SelectiveLogisticRegressionCV(n_mu=8),
], ids=lambda e: type(e).__name__)
def test_check_estimator(est):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        check_estimator(est)


@pytest.mark.parametrize("cls", [SelectiveRegression, SelectiveLogisticRegression,
                                 SelectiveRegressionCV, SelectiveLogisticRegressionCV])
def test_param_validation(cls):
    # every parameter has a constraint, and a value outside it raises scikit-learn's
    # InvalidParameterError naming the parameter, before the data are looked at
    check_param_validation(cls.__name__, cls())


@pytest.mark.parametrize("cls, params", [
    (SelectiveRegression, dict(selectivity=-1e-3)),
    (SelectiveRegression, dict(selectivity=np.inf)),
    (SelectiveRegression, dict(ridge=True)),
    (SelectiveRegression, dict(max_iter=0)),
    (SelectiveRegression, dict(max_iter=2.0)),
    (SelectiveRegression, dict(tol=np.nan)),
    (SelectiveRegressionCV, dict(n_mu=True)),
    (SelectiveRegressionCV, dict(min_ratio=1.5)),
    (SelectiveRegressionCV, dict(min_ratio=0)),
    (SelectiveRegressionCV, dict(n_splits=1)),
    (SelectiveRegressionCV, dict(selection_rule="median")),
    (SelectiveRegressionCV, dict(scoring="accuracy")),
])
def test_bad_parameter_is_named(cls, params):
    (name, value), = params.items()
    X, y = _reg(N=10, n=3)
    with pytest.raises(InvalidParameterError,
                       match=rf"^The '{name}' parameter of {cls.__name__} must be"):
        cls(**params).fit(X, y)


def test_numeric_spellings_of_parameters_fit_the_same_model():
    # Python and numpy integers where floats are expected, numpy scalars, the bounds
    X, y = _reg(N=30, n=4)
    a = SelectiveRegression(selectivity=np.float32(0.25), ridge=1, max_iter=np.int64(50),
                            tol=np.float64(1e-10)).fit(X, y)
    b = SelectiveRegression(selectivity=0.25, ridge=1.0, max_iter=50).fit(X, y)
    np.testing.assert_array_equal(a.coef_, b.coef_)
    SelectiveRegression(selectivity=0).fit(X, y)
    # min_ratio=1: every grid point is mu_max, the empty model
    with pytest.warns(EmptyModelWarning):
        cv = SelectiveRegressionCV(n_mu=np.int64(4), min_ratio=1, n_splits=np.int32(2),
                                   ridge=np.int64(2)).fit(X, y)
    np.testing.assert_array_equal(cv.selectivity_path_, cv.selectivity_max_)


def _reg(seed=0, N=60, n=20):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(N, n))
    a = np.zeros(n)
    a[:2] = [1.5, -2.0]
    return X, X @ a + 0.3 * rng.normal(size=N) + 1.0


def test_mu_zero_is_ridge_with_doubled_alpha_convention():
    X, y = _reg()
    est = SelectiveRegression(selectivity=0.0, ridge=0.8).fit(X, y)
    # gamma sum a^2 + sum (y - z)^2  ==  sklearn Ridge(alpha=gamma)
    ref = Ridge(alpha=0.8).fit(X, y)
    np.testing.assert_allclose(est.coef_, ref.coef_, rtol=1e-8)
    assert est.intercept_ == pytest.approx(ref.intercept_, rel=1e-8)


def test_logistic_mu_zero_matches_sklearn_l2_logistic():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(80, 5))
    y = np.where(X[:, 0] - X[:, 1] + 0.5 * rng.normal(size=80) > 0, "b", "a")
    est = SelectiveLogisticRegression(selectivity=0.0, ridge=0.5).fit(X, y)
    # gamma ||a||^2 + sum log-loss == C = 1 / (2 gamma)
    ref = LogisticRegression(C=1.0, tol=1e-12, max_iter=10000).fit(X, y)
    np.testing.assert_allclose(est.coef_, ref.coef_.ravel(), rtol=1e-6, atol=1e-8)
    assert list(est.classes_) == ["a", "b"]
    np.testing.assert_allclose(est.predict_proba(X), ref.predict_proba(X), atol=1e-7)
    assert (est.predict(X) == ref.predict(X)).all()


def test_selectivity_gives_exact_zeros_and_support():
    X, y = _reg()
    est = SelectiveRegression(selectivity=2.0, ridge=1.0).fit(X, y)
    assert 0 < est.support_.sum() < 20
    np.testing.assert_array_equal(est.support_, est.coef_ != 0)
    assert est.support_[:2].all()
    assert est.duality_gap_ < 1e-8 and est.n_iter_ >= 1


@pytest.mark.parametrize("criterion", ["alo", "ij", "diffloo", "diffloo_exact", "kfold"])
def test_cv_estimator_path_attributes(criterion):
    X, y = _reg(N=40, n=30)
    est = SelectiveRegressionCV(criterion=criterion, n_mu=12, ridge=1.0).fit(X, y)
    assert est.selectivity_path_.shape == (12,)
    assert np.all(np.diff(est.selectivity_path_) < 0)
    assert est.criterion_path_.shape == (12,) and est.n_active_path_.shape == (12,)
    assert est.selectivity_ == est.selectivity_path_[np.argmin(est.criterion_path_)]
    assert est.n_active_path_[0] == 0
    # the model is the fit at selectivity_
    ref = SelectiveRegression(selectivity=est.selectivity_, ridge=1.0).fit(X, y)
    np.testing.assert_allclose(est.coef_, ref.coef_, atol=1e-9)
    if criterion == "diffloo":
        assert est.support_.sum() == 0  # the trivial minimum of the printed criterion
    elif criterion == "diffloo_exact":
        # with an intercept the empty model keeps leverage 1/N: 2 mean((y - ybar)^2) / N
        assert est.criterion_path_[0] == pytest.approx(2 * np.var(y) / len(y), rel=1e-8)
    else:
        assert est.support_[:2].all()


def test_logistic_cv_recovers_informative_features():
    rng = np.random.default_rng(4)
    X = rng.normal(size=(120, 40))
    y = np.where(X[:, 0] + X[:, 1] + 0.3 * rng.normal(size=120) > 0, 1, 0)
    est = SelectiveLogisticRegressionCV(n_mu=20, ridge=1.0, fit_intercept=False).fit(X, y)
    assert est.support_[:2].all()
    assert est.support_.sum() < 40
    kf = SelectiveLogisticRegressionCV("kfold", n_mu=20, ridge=1.0, fit_intercept=False)
    kf.fit(X, y)
    # ALO reads, from one fit per mu, a curve close to 5-fold cross-validation
    np.testing.assert_allclose(est.criterion_path_, kf.criterion_path_, atol=0.06)


def test_bad_input():
    X, y = _reg(N=10, n=3)
    with pytest.raises(ValueError, match="selectivity"):
        SelectiveRegression(selectivity=-1.0).fit(X, y)
    with pytest.raises(ValueError, match="ridge"):
        SelectiveRegression(ridge=0.0).fit(X, y)
    with pytest.raises(ValueError, match="ridge"):
        SelectiveLogisticRegressionCV(ridge=-1.0).fit(X, y > 1)
    with pytest.raises(ValueError, match="criterion"):
        SelectiveRegressionCV(criterion="aic").fit(X, y)
    Xn = X.copy()
    Xn[0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        SelectiveRegression().fit(Xn, y)
    with pytest.raises(ValueError, match="exactly 2 classes"):
        SelectiveLogisticRegression().fit(X, np.arange(10) % 3)
    with pytest.raises(ValueError, match="Unknown label type"):
        SelectiveLogisticRegression().fit(X, y)
    with pytest.warns(ConvergenceWarning):
        SelectiveRegression(selectivity=0.01, max_iter=1).fit(*_reg())


@pytest.mark.parametrize("cls", [SelectiveRegression, SelectiveLogisticRegression,
                                 SelectiveRegressionCV, SelectiveLogisticRegressionCV])
def test_features_too_large_for_the_dual_are_a_value_error_naming_x(cls):
    # reliability bugs 4/5: features ~1e160 overflow X X^T; before, +-inf outputs or a
    # bare OverflowError
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 4))
    y = X[:, 0] + 0.1 * rng.normal(size=30)
    if cls in (SelectiveLogisticRegression, SelectiveLogisticRegressionCV):
        y = (y > 0).astype(int)
    with pytest.raises(ValueError, match=r"^X has features of magnitude .*bisvm\.Scaler"):
        cls().fit(1e160 * X, y)
    # ordinary large features are not refused
    est = cls().fit(10.0 * X, y)
    assert np.all(np.isfinite(est.predict(10.0 * X)))
