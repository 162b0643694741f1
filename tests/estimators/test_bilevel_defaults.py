"""BilevelSVC's defaults: model="auto", scalar_rule="auto", the null-model test
and the calibrated threshold."""

import numpy as np
import pytest
from sklearn.datasets import load_iris, make_classification
from sklearn.preprocessing import StandardScaler

from bisvm import BilevelSVC


def _informative(n=240, d=12, seed=0):
    """Gaussian features, the first three informative: y = 1 when x0 + x1 + x2 plus
    noise exceeds 1 (about 30 % of the rows)."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    y = (X[:, :3].sum(axis=1) + 0.5 * rng.standard_normal(n) > 1.0).astype(int)
    return X, y


@pytest.mark.parametrize("param, value", [("null_test", "yes"), ("threshold", "half"),
                                          ("threshold", "1se"), ("null_test", "balance"),
                                          ("model", "both"), ("scalar_rule", "2se")])
def test_invalid_values_name_the_parameter(param, value):
    X, y = _informative()
    with pytest.raises(ValueError, match=param):
        BilevelSVC(**{param: value}).fit(X, y)


def test_pure_noise_gives_the_intercept_only_model_with_a_warning():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((300, 15))
    y = (rng.random(300) < 0.3).astype(int)
    with pytest.warns(UserWarning, match="majority class.*null_test"):
        est = BilevelSVC(random_state=0).fit(X, y)
    assert est.null_model_ is True or est.null_model_ == np.True_
    assert not est.support_.any() and np.all(est.coef_ == 0)
    # the majority class everywhere
    assert np.all(est.predict(X) == 0)
    assert est.intercept_shift_ == 0.0


def test_null_test_keeps_an_informative_model_bit_for_bit():
    X, y = _informative()
    a = BilevelSVC(random_state=0).fit(X, y)
    b = BilevelSVC(random_state=0, null_test=False).fit(X, y)
    assert not a.null_model_
    np.testing.assert_array_equal(a.coef_, b.coef_)
    np.testing.assert_array_equal(a.intercept_, b.intercept_)
    # the three informative columns are kept
    assert a.support_[:3].all()


def test_calibrated_threshold_moves_only_the_intercept():
    X, y = _informative(seed=3)
    cal = BilevelSVC(random_state=0, null_test=False).fit(X, y)
    zero = BilevelSVC(random_state=0, null_test=False, threshold="zero").fit(X, y)
    np.testing.assert_array_equal(cal.coef_, zero.coef_)
    np.testing.assert_array_equal(cal.support_, zero.support_)
    assert zero.intercept_shift_ == 0.0
    assert cal.intercept_shift_ != 0.0
    np.testing.assert_allclose(cal.intercept_ - zero.intercept_, cal.intercept_shift_,
                               rtol=0, atol=1e-12)


def test_auto_model_is_vector_when_rows_outnumber_features():
    X, y = _informative()
    auto = BilevelSVC(random_state=0).fit(X, y)
    vec = BilevelSVC(model="vector", random_state=0).fit(X, y)
    assert auto.model_ == "vector"
    np.testing.assert_array_equal(auto.coef_, vec.coef_)
    np.testing.assert_array_equal(auto.penalty_weights_, vec.penalty_weights_)


def test_auto_model_is_scalar_when_features_outnumber_fold_rows():
    # 60 rows, 5 folds: 48 training rows a fold, 50 features
    X, y = make_classification(n_samples=60, n_features=50, n_informative=3,
                               n_redundant=0, class_sep=2.0, random_state=1)
    X = StandardScaler().fit_transform(X)
    auto = BilevelSVC(random_state=0, null_test=False).fit(X, y)
    sca = BilevelSVC(model="scalar", random_state=0, null_test=False).fit(X, y)
    assert auto.model_ == "scalar"
    assert auto.penalty_weights_.shape == (1,)
    np.testing.assert_array_equal(auto.coef_, sca.coef_)


def test_auto_scalar_rule_is_min_when_rows_outnumber_features():
    X, y = _informative(seed=5)
    a = BilevelSVC(model="scalar", random_state=0).fit(X, y)
    b = BilevelSVC(model="scalar", scalar_rule="min", random_state=0).fit(X, y)
    np.testing.assert_array_equal(a.penalty_weights_, b.penalty_weights_)
    np.testing.assert_array_equal(a.coef_, b.coef_)


def test_multiclass_attributes_per_class():
    X, y = load_iris(return_X_y=True)
    est = BilevelSVC(random_state=0).fit(StandardScaler().fit_transform(X), y)
    assert est.null_model_.shape == (3,) and est.intercept_shift_.shape == (3,)
    assert est.score(StandardScaler().fit_transform(X), y) > 0.85


def test_auto_model_is_group_when_groups_are_given():
    X, y = _informative()
    groups = {"signal": [0, 1, 2], "rest": list(range(3, 12))}
    auto = BilevelSVC(feature_groups=groups, random_state=0).fit(X, y)
    grp = BilevelSVC(model="group", feature_groups=groups, random_state=0).fit(X, y)
    assert auto.model_ == "group"
    assert auto.penalty_weight_names_ == grp.penalty_weight_names_
    np.testing.assert_array_equal(auto.coef_, grp.coef_)


@pytest.mark.parametrize("threshold", ["1se_balanced", "1se_gated"])
def test_one_se_thresholds_move_only_the_intercept(threshold):
    X, y = _informative(seed=3)
    cal = BilevelSVC(random_state=0, null_test=False).fit(X, y)
    est = BilevelSVC(random_state=0, null_test=False, threshold=threshold).fit(X, y)
    # the same model as "calibrated" (the threshold is chosen after it) ...
    np.testing.assert_array_equal(est.coef_, cal.coef_)
    np.testing.assert_allclose(est.intercept_ - est.intercept_shift_,
                               cal.intercept_ - cal.intercept_shift_, rtol=0, atol=1e-12)
    # ... and no fewer positive predictions on a minority-positive target (30 %): the
    # threshold only moves from P > 1/2 towards P > prior
    assert np.mean(y) < 0.5
    assert np.sum(est.predict(X) == 1) >= np.sum(cal.predict(X) == 1)


def test_balanced_null_test_keeps_what_the_accuracy_test_keeps():
    X, y = _informative()
    a = BilevelSVC(random_state=0).fit(X, y)
    b = BilevelSVC(random_state=0, null_test="balanced").fit(X, y)
    assert not a.null_model_ and not b.null_model_
    np.testing.assert_array_equal(a.coef_, b.coef_)
    np.testing.assert_array_equal(a.intercept_, b.intercept_)


def test_balanced_null_test_still_empties_pure_noise():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((300, 15))
    y = (rng.random(300) < 0.3).astype(int)
    with pytest.warns(UserWarning, match="majority class"):
        est = BilevelSVC(random_state=0, null_test="balanced").fit(X, y)
    assert est.null_model_ and not est.support_.any()
