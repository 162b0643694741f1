"""StabilitySelection: frequencies against an independent recomputation, the pairs it
drew, the bound as Shah & Samworth state it, n_jobs invariance, the selector interface,
model files, clear errors and scikit-learn's estimator checks."""

import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.base import BaseEstimator, clone
from sklearn.linear_model import LinearRegression, LogisticRegression
from sklearn.pipeline import Pipeline
from sklearn.utils._param_validation import InvalidParameterError
from sklearn.utils.estimator_checks import check_estimator, check_param_validation

from bisvm.estimators.sparse import BilevelSVC, ElasticNetSVC
from bisvm.estimators.stability import MeanRegressor, PriorClassifier, StabilitySelection
from bisvm.persistence import check_round_trip

pytestmark = pytest.mark.usefixtures("one_blas_thread")


def _logistic(seed, n=60, p=10, informative=(0, 1), scale=2.5):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p))
    z = scale * (X[:, informative[0]] - X[:, informative[1]])
    y = (rng.random(n) < 1 / (1 + np.exp(-z))).astype(int)
    return X, y


def _l1_logistic(C=0.3):
    # a fixed random_state: the estimator's own seed is kept, so a refit outside
    # StabilitySelection is the same fit
    return LogisticRegression(l1_ratio=1.0, solver="liblinear", C=C, random_state=0)


def _quiet_fit(est, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return est.fit(*args, **kwargs)


def test_frequencies_equal_an_independent_recomputation():
    X, y = _logistic(0, n=41, informative=(2, 7))
    base = _l1_logistic()
    ss = StabilitySelection(base, n_pairs=6, threshold=0.7, random_state=3).fit(X, y)
    assert len(ss.subsamples_) == 12
    masks = []
    for rows in ss.subsamples_:
        coef = clone(base).fit(X[rows], y[rows]).coef_.ravel()
        masks.append(coef != 0)
    masks = np.array(masks)
    assert np.array_equal(ss.subsample_supports_, masks)
    np.testing.assert_array_equal(ss.selection_frequency_, masks.mean(axis=0))
    np.testing.assert_array_equal(ss.support_, masks.mean(axis=0) >= 0.7)
    assert ss.average_selected_ == pytest.approx(masks.sum(axis=1).mean())
    # the refit: the same estimator on all rows of the stable columns
    ref = clone(base).fit(X[:, ss.support_], y)
    np.testing.assert_array_equal(ss.estimator_.coef_, ref.coef_)
    np.testing.assert_array_equal(ss.predict(X), ref.predict(X[:, ss.support_]))
    np.testing.assert_array_equal(ss.predict_proba(X), ref.predict_proba(X[:, ss.support_]))
    assert ss.score(X, y) == ref.score(X[:, ss.support_], y)
    np.testing.assert_array_equal(ss.classes_, [0, 1])


def test_pairs_are_complementary_stratified_halves():
    X, y = _logistic(1, n=41)
    ss = StabilitySelection(_l1_logistic(), n_pairs=8, random_state=0).fit(X, y)
    n1 = int(y.sum())
    for j in range(8):
        a, b = ss.subsamples_[2 * j], ss.subsamples_[2 * j + 1]
        assert a.size == b.size == 41 // 2
        assert np.intersect1d(a, b).size == 0
        assert np.union1d(a, b).size == 40
        for half in (a, b):
            assert abs(y[half].sum() - n1 / 2) <= 1


def test_bound_is_shah_samworth_on_a_constructed_selector():
    # a selector whose choice is known on every subsample: features 0 and 1 always,
    # feature 2 exactly when row 0 is in the subsample (one half of every pair, n even)
    class Known(BaseEstimator):
        def fit(self, X, y):
            self.support_ = np.zeros(X.shape[1], bool)
            self.support_[:2] = True
            if X.shape[1] > 2:  # the refit sees the two stable columns only
                self.support_[2] = np.any(X[:, -1] == 0)
            return self

    p = 10
    X = np.random.default_rng(0).normal(size=(30, p))
    X[:, -1] = np.arange(30)  # the row number, to find row 0
    y = np.arange(30) % 2
    for tau, B in [(0.6, 7), (0.5 + 1e-9, 3), (1.0, 5)]:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ss = StabilitySelection(Known(), n_pairs=B, threshold=tau, random_state=0)
            ss.fit(X, y)
        np.testing.assert_array_equal(ss.selection_frequency_[:3], [1.0, 1.0, 0.5])
        assert ss.average_selected_ == 2.5
        # q^2 / ((2 tau - 1) p) (Shah & Samworth's Theorem 1 with theta = q/p)
        assert ss.false_selection_bound_ == pytest.approx(2.5**2 / ((2 * tau - 1) * p))
        np.testing.assert_array_equal(ss.get_support(indices=True), [0, 1])


def test_identical_for_every_n_jobs_with_seeded_estimator():
    # saga's shuffling depends on its seed, which the selector draws for each fit
    X, y = _logistic(2, n=50, p=8)
    base = LogisticRegression(solver="saga", l1_ratio=1.0, C=0.5, max_iter=30)
    fits = [_quiet_fit(StabilitySelection(base, n_pairs=4, random_state=1, n_jobs=j), X, y)
            for j in (1, 2)]
    a, b = fits
    assert np.array_equal(a.subsample_supports_, b.subsample_supports_)
    assert a.estimator_.coef_.tobytes() == b.estimator_.coef_.tobytes()
    # the seeds matter: another random_state draws other pairs and seeds
    c = _quiet_fit(StabilitySelection(base, n_pairs=4, random_state=2), X, y)
    assert not np.array_equal(a.subsample_supports_, c.subsample_supports_)


def test_identical_for_every_n_jobs():
    X, y = _logistic(2, n=50, p=8)
    base = BilevelSVC(model="scalar", cv=3)  # random_state None: seeds from the selector
    fits = [_quiet_fit(StabilitySelection(base, n_pairs=3, random_state=5, n_jobs=j), X, y)
            for j in (1, 2)]
    a, b = fits
    assert np.array_equal(a.subsample_supports_, b.subsample_supports_)
    assert np.array_equal(a.selection_frequency_, b.selection_frequency_)
    assert a.estimator_.random_state == b.estimator_.random_state is not None
    assert a.estimator_.coef_.tobytes() == b.estimator_.coef_.tobytes()
    assert a.decision_function(X).tobytes() == b.decision_function(X).tobytes()


def test_selector_interface_and_pipeline():
    X, y = _logistic(3, n=60, p=6, informative=(1, 4))
    names = [f"f{i}" for i in range(6)]
    df = pd.DataFrame(X, columns=names)
    ss = StabilitySelection(_l1_logistic(0.3), n_pairs=10, threshold=0.9, random_state=0)
    ss.fit(df, y)
    np.testing.assert_array_equal(ss.feature_names_in_, names)
    assert ss.n_features_in_ == 6
    support = ss.get_support()
    assert support.tolist() == [False, True, False, False, True, False]
    assert support.tolist() == (ss.selection_frequency_ >= 0.9).tolist()
    np.testing.assert_array_equal(ss.transform(X), X[:, support])
    np.testing.assert_array_equal(ss.get_feature_names_out(), np.array(names)[support])
    back = ss.inverse_transform(ss.transform(X))
    np.testing.assert_array_equal(back[:, support], X[:, support])
    assert np.all(back[:, ~support] == 0)
    out = clone(ss).set_output(transform="pandas").fit(df, y).transform(df)
    assert isinstance(out, pd.DataFrame)
    assert list(out.columns) == list(np.array(names)[support])
    # the selector as the first step of a Pipeline, with pandas output
    pipe = Pipeline([("select", clone(ss)), ("clf", LogisticRegression())])
    pipe.set_output(transform="pandas").fit(df, y)
    kept = pipe.named_steps["select"].get_feature_names_out()
    ref = LogisticRegression().fit(df[kept], y)
    np.testing.assert_allclose(pipe.predict_proba(df), ref.predict_proba(df[kept]))


def test_sample_groups_and_weights_reach_the_estimator():
    class Recorder(BaseEstimator):
        def fit(self, X, y, sample_weight=None, groups=None):
            self.sample_weight_ = sample_weight
            self.groups_ = groups
            self.support_ = np.ones(X.shape[1], bool)
            self.rows_ = X.shape[0]
            return self

    X, y = _logistic(4, n=40, p=3)
    groups = np.repeat(np.arange(10), 4)
    sw = np.linspace(0.5, 2.0, 40)
    sw[[0, 5]] = 0.0
    ss = StabilitySelection(Recorder(), n_pairs=4, random_state=0)
    ss.fit(X, y, sample_weight=sw, groups=groups)
    for rows in ss.subsamples_:
        assert not np.isin([0, 5], rows).any()  # zero weights are left out
    for j in range(4):
        a, b = ss.subsamples_[2 * j], ss.subsamples_[2 * j + 1]
        assert np.intersect1d(groups[a], groups[b]).size == 0
    keep = sw > 0
    np.testing.assert_array_equal(ss.estimator_.sample_weight_, sw[keep])
    np.testing.assert_array_equal(ss.estimator_.groups_, groups[keep])
    assert ss.estimator_.rows_ == 38
    with pytest.raises(TypeError, match="does not accept sample_weight"):
        StabilitySelection(LinearRegressionNoWeight(), n_pairs=2).fit(X, y, sample_weight=sw)


class LinearRegressionNoWeight(BaseEstimator):
    def fit(self, X, y):
        self.coef_ = np.ones(X.shape[1])
        return self


def test_no_stable_feature_gives_the_model_without_features(tmp_path):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 5))
    y = np.array(["a"] * 26 + ["b"] * 14)
    ss = StabilitySelection(_l1_logistic(0.01), n_pairs=3, random_state=0)
    with pytest.warns(UserWarning, match="no feature was selected"):
        ss.fit(X, y)
    assert isinstance(ss.estimator_, PriorClassifier) and not ss.support_.any()
    assert ss.transform(X).shape == (40, 0)
    assert np.all(ss.predict(X) == "a")
    np.testing.assert_allclose(ss.predict_proba(X), np.tile([26 / 40, 14 / 40], (40, 1)))
    # a regressor falls back on the mean
    yr = rng.normal(size=40)
    from sklearn.linear_model import Lasso
    with pytest.warns(UserWarning, match="no feature was selected"):
        ssr = StabilitySelection(Lasso(alpha=10.0), n_pairs=2, random_state=0).fit(X, yr)
    assert isinstance(ssr.estimator_, MeanRegressor)
    np.testing.assert_allclose(ssr.predict(X), yr.mean())


def test_saves_and_loads_as_a_model_file(tmp_path):
    X, y = _logistic(5, n=60, p=8)
    ss = _quiet_fit(StabilitySelection(BilevelSVC(model="scalar", cv=3), n_pairs=3,
                                       random_state=0), X, y)
    loaded = check_round_trip(ss, X, tmp_path / "ss.bisvm").estimator
    np.testing.assert_array_equal(loaded.support_, ss.support_)
    np.testing.assert_array_equal(loaded.predict(X), ss.predict(X))
    assert loaded.false_selection_bound_ == ss.false_selection_bound_
    # column names and a sparse-input estimator round-trip too
    df = pd.DataFrame(X, columns=[f"c{i}" for i in range(8)])
    named = _quiet_fit(StabilitySelection(ElasticNetSVC(0.02, l1_smoothing=0.0), n_pairs=2,
                                          random_state=0), df, y)
    back = check_round_trip(named, df, tmp_path / "named.bisvm").estimator
    np.testing.assert_array_equal(back.get_feature_names_out(), named.get_feature_names_out())
    # the fallback model is a bisvm class too
    empty = _quiet_fit(StabilitySelection(ElasticNetSVC(50.0, l1_smoothing=0.0), n_pairs=2,
                                          random_state=0), X, y)
    assert isinstance(empty.estimator_, PriorClassifier)
    check_round_trip(empty, X, tmp_path / "empty.bisvm")


@pytest.mark.parametrize("params, match", [
    (dict(threshold=0.5), "threshold"),
    (dict(threshold=1.2), "threshold"),
    (dict(threshold="0.7"), "threshold"),
    (dict(n_pairs=0), "n_pairs"),
    (dict(n_pairs=2.5), "n_pairs"),
    (dict(n_pairs=True), "n_pairs"),
    (dict(sample_fraction=0.0), "sample_fraction"),
    (dict(sample_fraction=0.75), "sample_fraction"),
    (dict(estimator="lasso"), "estimator"),
])
def test_bad_parameters_are_named(params, match):
    X, y = _logistic(6, n=20, p=3)
    with pytest.raises(InvalidParameterError, match=match):
        StabilitySelection(**params).fit(X, y)


def test_bad_input_is_named():
    X, y = _logistic(6, n=20, p=3)
    ss = StabilitySelection(_l1_logistic(), n_pairs=2)
    with pytest.raises(ValueError, match="groups must have shape"):
        ss.fit(X, y, groups=np.arange(19))
    with pytest.raises(ValueError, match="sample_weight must be non-negative"):
        ss.fit(X, y, sample_weight=-np.ones(20))
    with pytest.raises(ValueError, match="at least 2 samples"):
        ss.fit(X[:1], y[:1])
    with pytest.raises(TypeError, match="exposes no selection"):
        StabilitySelection(BaseEstimatorThatFits(), n_pairs=2).fit(X, y)


class BaseEstimatorThatFits(BaseEstimator):
    def fit(self, X, y):
        return self


def test_subsample_warnings_are_summarised():
    class Noisy(BaseEstimator):
        def fit(self, X, y):
            warnings.warn("half-sample warning", RuntimeWarning, stacklevel=2)
            self.support_ = np.ones(X.shape[1], bool)
            return self

    X, y = _logistic(7, n=20, p=3)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        StabilitySelection(Noisy(), n_pairs=4, random_state=0).fit(X, y)
    runtime = [w for w in caught if issubclass(w.category, RuntimeWarning)]
    # one for the 8 subsample fits, one from the refit
    assert len(runtime) == 2
    assert "8 warnings from the 8 subsample fits" in str(runtime[0].message)


def test_param_validation():
    check_param_validation("StabilitySelection", StabilitySelection())


def test_default_estimator_is_bilevel_svc():
    tags = StabilitySelection().__sklearn_tags__()
    assert tags.estimator_type == "classifier" and tags.input_tags.sparse
    assert StabilitySelection(LinearRegression()).__sklearn_tags__().estimator_type == \
        "regressor"


#: scikit-learn's checks that cannot hold, with the reason
EXPECTED_FAILED = {
    "check_sample_weight_equivalence_on_dense_data": (
        "a weight of 2 is not two copies of a row under subsampling: the copies fall into "
        "different halves and change the pairs drawn"),
    "check_sample_weight_equivalence_on_sparse_data": (
        "a weight of 2 is not two copies of a row under subsampling: the copies fall into "
        "different halves and change the pairs drawn"),
}


def test_check_estimator():
    # a fast selecting estimator (bisvm's exact L1 SVM at a fixed weight) and one pair
    # keep the checks' hundred fits short; BilevelSVC(model="scalar", cv=3) with three
    # pairs passes the same checks
    est = StabilitySelection(ElasticNetSVC(0.05, l1_smoothing=0.0), n_pairs=1, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_estimator(est, expected_failed_checks=EXPECTED_FAILED)


def test_verbose_prints_the_stages_and_pairs(capsys):
    X, y = _logistic(8, n=30, p=4)
    StabilitySelection(_l1_logistic(), n_pairs=3, random_state=0, verbose=2).fit(X, y)
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("StabilitySelection: 6 fits of LogisticRegression")
    assert [line for line in out if "pair" in line and "fitted" in line] == [
        f"StabilitySelection: pair {j}/3 fitted" for j in (1, 2, 3)]
    assert "expected false selections <=" in out[-1]
    StabilitySelection(_l1_logistic(), n_pairs=3, random_state=0).fit(X, y)
    assert capsys.readouterr().out == ""
