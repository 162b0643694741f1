"""AutoSVC: learned widths drop noise features, the refit is a plain SVC at the learned
hyperparameters, sparse and dense agree, the selector interface works, and
scikit-learn's estimator checks pass."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import load_iris
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.utils.estimator_checks import parametrize_with_checks

from bisvm import SVC
from bisvm.estimators.auto_svc import AutoSVC


def _interaction(n=240, d=6, seed=0):
    """y = 1[x0 x1 > 0] with label noise; features 2.. are noise (and of varied scale,
    which the relevances must see through)."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    y = (X[:, 0] * X[:, 1] > 0).astype(int)
    flip = rng.random(n) < 0.05
    y[flip] = 1 - y[flip]
    X = X * np.array([1.0, 3.0] + [0.5, 2.0, 1.0, 10.0][: d - 2])
    return X, y


@pytest.fixture(scope="module")
def per_feature_fit():
    X, y = _interaction()
    return X, y, AutoSVC(widths="per_feature").fit(X, y)


def test_noise_widths_go_to_zero(per_feature_fit):
    X, y, m = per_feature_fit
    imp = m.feature_importances_
    assert np.isclose(imp.sum(), 1.0)
    assert set(np.argsort(-imp)[:2]) == {0, 1}
    assert imp[2:].max() < 0.05 * imp[:2].min()
    assert list(np.flatnonzero(m.support_)) == [0, 1]
    np.testing.assert_array_equal(m.gamma_[2:], 0.0)
    assert m.threshold_ <= imp[:2].min()


def test_refit_equals_plain_svc_per_feature(per_feature_fit):
    X, y, m = per_feature_fit
    ref = SVC(C=m.C_, gamma=1.0, loss="squared_hinge").fit(X * m.scale_, y)
    np.testing.assert_allclose(m.decision_function(X), ref.decision_function(X * m.scale_),
                               atol=1e-8)
    # the scale is sqrt(gamma_j) / std_j: the width gamma_j on the standardised column
    np.testing.assert_allclose(m.scale_, np.sqrt(m.gamma_) / X.std(axis=0))


def test_refit_equals_plain_svc_shared():
    X, y = _interaction(n=160)
    m = AutoSVC().fit(X, y)
    Xs = X / X.std(axis=0)
    ref = SVC(C=m.C_, gamma=m.gamma_, loss="squared_hinge").fit(Xs, y)
    np.testing.assert_allclose(m.decision_function(X), ref.decision_function(Xs), atol=1e-6)
    np.testing.assert_array_equal(m.predict(X), ref.predict(Xs))
    assert m.support_.all() and np.allclose(m.feature_importances_, 1.0 / X.shape[1])
    assert m.n_solves_ > 0 and np.isfinite(m.cv_value_)


def test_learned_hyperparameters_beat_the_start():
    """The outer loop lowers the k-fold criterion below its starting scan's best."""
    X, y = _interaction(n=160)
    m = AutoSVC(widths="per_feature", select="none").fit(X, y)
    assert m.cv_value_ < m.tuning_.scan_values.min()
    assert m.support_.all()


def test_sparse_matches_dense():
    X, y = _interaction(n=120)
    X[np.abs(X) < 0.3] = 0.0
    dense = AutoSVC(widths="per_feature").fit(X, y)
    sparse = AutoSVC(widths="per_feature").fit(sp.csr_matrix(X), y)
    np.testing.assert_allclose(sparse.learned_gamma_, dense.learned_gamma_, rtol=1e-4,
                               atol=1e-6 * dense.learned_gamma_.max())
    np.testing.assert_allclose(sparse.decision_function(sp.csr_matrix(X)),
                               dense.decision_function(X), atol=2e-3)


def test_multiclass_one_vs_one_and_probabilities():
    X, y = load_iris(return_X_y=True)
    m = AutoSVC(probability=True, random_state=0).fit(X, y)
    assert m.score(X, y) > 0.95
    P = m.predict_proba(X)
    np.testing.assert_allclose(P.sum(axis=1), 1.0)
    assert m.decision_function(X).shape == (150, 3)
    assert not hasattr(AutoSVC(), "predict_proba")


def test_selector_in_a_pipeline(per_feature_fit):
    X, y, m = per_feature_fit
    np.testing.assert_array_equal(m.transform(X), X[:, m.support_])
    names = m.get_feature_names_out([f"f{j}" for j in range(X.shape[1])])
    assert list(names) == ["f0", "f1"]
    pipe = make_pipeline(AutoSVC(widths="per_feature", max_iter=20), LogisticRegression())
    pipe.fit(X, y)
    assert pipe[0].transform(X).shape[1] == int(pipe[0].support_.sum())


def test_clear_errors():
    X, y = _interaction(n=40)
    with pytest.raises(ValueError, match="widths"):
        AutoSVC(widths="ard").fit(X, y)
    with pytest.raises(ValueError, match="at least 2 classes"):
        AutoSVC().fit(X, np.zeros(40))
    y1 = y.copy()
    y1[:] = 0
    y1[0] = 1
    with pytest.raises(ValueError, match="at least 2 samples of every class"):
        AutoSVC().fit(X, y1)
    with pytest.raises(ValueError, match="NaN"):
        AutoSVC().fit(np.where(X > 1, np.nan, X), y)


@parametrize_with_checks([AutoSVC(widths="per_feature", max_iter=2, cv=3)])
def test_sklearn_estimator_checks(estimator, check):
    """Every check passes (none skipped). The per-feature model runs every stage of the
    shared one and then its own, so one instance covers both; two outer iterations and
    three folds keep the checks' many small fits quick."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        check(estimator)
