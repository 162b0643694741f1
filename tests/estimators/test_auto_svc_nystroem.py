"""AutoSVC on the Nyström approximation: test accuracy close to the exact AutoSVC on a
3,000-row problem, the switch of approximation="auto" and its warning, the fitted
attributes saying what ran, the refit equal to the L2-SVM on all rows' features at the
learned values, multiclass and sparse input, and scikit-learn's estimator checks."""

import warnings

import numpy as np
import pytest
import scipy.linalg
import scipy.sparse as sp
from sklearn.datasets import make_classification
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils.estimator_checks import parametrize_with_checks

from bisvm.estimators import auto_svc
from bisvm.estimators.auto_svc import AutoSVC
from bisvm.persistence import check_round_trip
from bisvm.solvers.nystroem import nystroem_blocks, solve_piecewise_l2


def _problem(n, d=6, seed=0, n_classes=2):
    X, y = make_classification(n, d, n_informative=4, n_redundant=0, n_classes=n_classes,
                               n_clusters_per_class=2 if n_classes == 2 else 1,
                               flip_y=0.03, random_state=seed)
    return X * np.exp(np.random.default_rng(seed).uniform(-1, 1, d)), y


def test_accuracy_close_to_exact_on_3000_rows():
    X, y = _problem(4000)
    Xt, yt, X, y = X[3000:], y[3000:], X[:3000], y[:3000]
    exact = AutoSVC(approximation=None).fit(X, y)
    nys = AutoSVC(approximation="nystroem", n_components=150, random_state=0).fit(X, y)
    assert exact.approximation_ is None and nys.approximation_ == "nystroem"
    assert exact.lower_ == nys.lower_ == "l2svm"
    assert nys.score(Xt, yt) >= exact.score(Xt, yt) - 0.015
    assert nys.X_fit_.shape == (150, 6) and nys.estimator_ is None


def test_auto_switches_beyond_the_documented_size_with_a_warning(monkeypatch):
    X, y = _problem(200)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        m = AutoSVC(max_iter=3).fit(X, y)
    assert m.approximation_ is None and m.estimator_ is not None
    monkeypatch.setattr(auto_svc, "EXACT_MAX_ROWS", 150)
    with pytest.warns(UserWarning, match="Nyström approximation of rank 40"):
        m = AutoSVC(max_iter=3, n_components=40, random_state=0).fit(X, y)
    assert m.approximation_ == "nystroem" and m.landmark_indices_.size == 40
    # rows of weight 0 do not count towards the size
    sw = np.r_[np.ones(140), np.zeros(60)]
    assert AutoSVC(max_iter=3).fit(X, y, sample_weight=sw).approximation_ is None
    with pytest.raises(ValueError, match="probability=True needs the exact kernel"):
        AutoSVC(max_iter=3, probability=True).fit(X, y)


def test_refit_is_the_l2svm_on_all_rows_features():
    X, y = _problem(300)
    m = AutoSVC(approximation="nystroem", n_components=50, random_state=0).fit(X, y)
    Xr = X * m.scale_
    Z = Xr[m.landmark_indices_]
    _, _, L, Phi = nystroem_blocks(Xr, Z, 1.0)
    s = np.where(y == m.classes_[1], 1.0, -1.0)
    sol = solve_piecewise_l2(Phi, np.arange(300), s, np.ones(300), np.ones(300), m.C_)
    a = scipy.linalg.solve_triangular(L, sol.theta[1:], lower=True, trans="T")
    np.testing.assert_allclose(m.decision_function(X), sol.f, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(m.dual_coef_[:, 0], a, rtol=1e-6, atol=1e-8)
    np.testing.assert_array_equal(m.predict(X), m.classes_[(sol.f > 0).astype(int)])


@pytest.mark.parametrize("multiclass", ["ovo", "ovr"])
def test_multiclass_and_sparse(multiclass):
    X, y = _problem(450, n_classes=3)
    kw = dict(approximation="nystroem", n_components=60, multiclass=multiclass,
              random_state=0, max_iter=5)
    m = AutoSVC(**kw).fit(X[:300], y[:300])
    assert m.dual_coef_.shape == (60, 3) and m.decision_function(X[300:]).shape == (150, 3)
    assert m.score(X[300:], y[300:]) > 0.7
    ms = AutoSVC(**kw).fit(sp.csr_matrix(X[:300]), y[:300])
    np.testing.assert_allclose(ms.decision_function(sp.csr_matrix(X[300:])),
                               m.decision_function(X[300:]), rtol=1e-6, atol=1e-8)


def test_per_feature_widths_drop_noise_on_the_features():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((400, 6))
    y = (X[:, 0] * X[:, 1] > 0).astype(int)
    m = AutoSVC(widths="per_feature", approximation="nystroem", n_components=80,
                random_state=0).fit(X, y)
    assert set(np.argsort(-m.feature_importances_)[:2]) == {0, 1}
    assert m.support_[:2].all() and m.support_.sum() <= 3


@parametrize_with_checks(
    [AutoSVC(approximation="nystroem", n_components=10, max_iter=2)],
    expected_failed_checks=lambda est: {
        "check_sample_weight_equivalence_on_dense_data": "a k-fold tuner's folds split a "
        "repeated row from its copy; a weighted row is never split",
        "check_sample_weight_equivalence_on_sparse_data": "as on dense data",
    })
def test_sklearn_estimator_checks(estimator, check):
    """Every check passes but the two on sample-weight equivalence (as for the exact
    AutoSVC); two outer iterations keep the checks' many small fits quick."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        check(estimator)


def test_model_file_round_trip():
    X, y = _problem(200, n_classes=3)
    m = AutoSVC(approximation="nystroem", n_components=30, random_state=0,
                max_iter=3).fit(X, y)
    check_round_trip(m, X)
