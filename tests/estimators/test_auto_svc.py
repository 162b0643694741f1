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


def _interaction(n=300, d=8, seed=0):
    """y = 1[x0 x1 + x2 x3 > 0] with 5 % of the labels flipped; features 4.. are noise,
    and every column has its own scale, which the relevances must see through."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    y = (X[:, 0] * X[:, 1] + X[:, 2] * X[:, 3] > 0).astype(int)
    flip = rng.random(n) < 0.05
    y[flip] = 1 - y[flip]
    return X * np.exp(rng.uniform(-1.5, 1.5, d)), y


@pytest.fixture(scope="module")
def per_feature_fit():
    X, y = _interaction()
    return X, y, AutoSVC(widths="per_feature", random_state=0).fit(X, y)


def test_noise_widths_go_to_zero(per_feature_fit):
    X, y, m = per_feature_fit
    imp = m.feature_importances_
    assert np.isclose(imp.sum(), 1.0)
    assert set(np.argsort(-imp)[:4]) == {0, 1, 2, 3}
    assert imp[4:].max() < 0.2 * imp[:4].min()
    assert list(np.flatnonzero(m.support_)) == [0, 1, 2, 3]
    np.testing.assert_array_equal(m.gamma_[4:], 0.0)
    assert m.threshold_ <= imp[:4].min()


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
    # the same kernel values up to rounding (γ on X/σ against 1 on X·sqrt(γ)/σ): SMO's
    # iterates may part within its tolerance 1e-3
    f_ref = ref.decision_function(Xs)
    np.testing.assert_allclose(m.decision_function(X), f_ref, atol=2e-3)
    clear = np.abs(f_ref) > 2e-3
    np.testing.assert_array_equal(m.predict(X)[clear], ref.predict(Xs)[clear])
    assert m.support_.all() and np.allclose(m.feature_importances_, 1.0 / X.shape[1])
    assert m.n_solves_ > 0 and np.isfinite(m.cv_value_)


def test_learned_hyperparameters_beat_the_start():
    """The outer loop lowers the k-fold criterion below its starting scan's best."""
    X, y = _interaction(n=160)
    m = AutoSVC(widths="per_feature", select="none").fit(X, y)
    assert m.cv_value_ < np.nanmin(m.tuning_.scan_values)
    assert m.support_.all()


def test_sparse_matches_dense():
    """Sparse input (tuned on a dense copy at this size, refitted sparse)."""
    X, y = _interaction(n=120)
    X[np.abs(X) < 0.3] = 0.0
    dense = AutoSVC().fit(X, y)
    sparse = AutoSVC().fit(sp.csr_matrix(X), y)
    np.testing.assert_allclose(sparse.learned_gamma_, dense.learned_gamma_, rtol=1e-6)
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


def test_zero_weight_rows_are_removed_rows():
    """Rows of weight 0 take no part in the folds, the standardisation or the refit: the
    fit is the fit without them."""
    X, y = _interaction(n=150)
    sw = np.ones(150)
    sw[::7] = 0.0
    keep = sw > 0
    a = AutoSVC().fit(X, y, sample_weight=sw)
    b = AutoSVC().fit(X[keep], y[keep])
    assert a.C_ == pytest.approx(b.C_, rel=1e-10)
    assert a.gamma_ == pytest.approx(b.gamma_, rel=1e-10)
    np.testing.assert_allclose(a.decision_function(X), b.decision_function(X), atol=1e-8)


def test_refit_uses_the_weights():
    """The refit is SVC at the learned values with the same class and sample weights;
    the weights change what is learned."""
    X, y = _interaction(n=150)
    sw = np.random.default_rng(3).uniform(0.2, 3.0, 150)
    m = AutoSVC(class_weight="balanced").fit(X, y, sample_weight=sw)
    counts = np.bincount(y)
    np.testing.assert_allclose(m.class_weight_, y.size / (2 * counts))
    ref = SVC(C=m.C_, gamma=1.0, loss="squared_hinge", class_weight="balanced")
    ref.fit(X * m.scale_, y, sample_weight=sw)
    np.testing.assert_allclose(m.decision_function(X), ref.decision_function(X * m.scale_),
                               atol=1e-8)
    plain = AutoSVC().fit(X, y)
    assert (plain.C_, plain.gamma_) != (m.C_, m.gamma_)


def test_class_weight_dict_multiclass():
    X, y = load_iris(return_X_y=True)
    m = AutoSVC(class_weight={0: 1.0, 1: 5.0, 2: 1.0}, multiclass="ovr").fit(X, y)
    np.testing.assert_allclose(m.class_weight_, [1.0, 5.0, 1.0])
    assert m.score(X, y) > 0.9 and m.decision_function(X).shape == (150, 3)


def test_weights_are_checked():
    X, y = _interaction(n=40)
    with pytest.raises(ValueError, match="sample_weight must have shape"):
        AutoSVC().fit(X, y, sample_weight=np.ones(39))
    with pytest.raises(ValueError, match="finite"):
        AutoSVC().fit(X, y, sample_weight=np.full(40, np.nan))
    with pytest.raises(ValueError, match="no sample of positive weight"):
        AutoSVC().fit(X, y, sample_weight=np.where(y == 1, 0.0, 1.0))
    with pytest.raises(ValueError, match="zero"):
        AutoSVC().fit(X, y, sample_weight=np.zeros(40))


def test_learned_values_stay_in_the_box():
    from bisvm.selection.kernel_fit import C_BOUNDS, GAMMA_RANGE

    X, y = _interaction(n=200)
    m = AutoSVC().fit(X, y)
    assert C_BOUNDS[0] <= m.C_ <= C_BOUNDS[1]
    g0 = m.tuning_.gamma0
    assert GAMMA_RANGE[0] * g0 <= m.gamma_ <= GAMMA_RANGE[1] * g0


def test_n_jobs_gives_the_same_model():
    X, y = _interaction(n=200)
    a = AutoSVC(n_jobs=1).fit(X, y)
    b = AutoSVC(n_jobs=2).fit(X, y)
    assert a.C_ == pytest.approx(b.C_, rel=1e-8)
    np.testing.assert_allclose(a.decision_function(X), b.decision_function(X), atol=1e-6)


def test_verbose_reports_the_outer_iterations(capsys):
    X, y = _interaction(n=100)
    AutoSVC(verbose=1).fit(X, y)
    err = capsys.readouterr().err
    assert "AutoSVC shared width iteration 0: criterion" in err


def test_selector_in_a_pipeline(per_feature_fit):
    X, y, m = per_feature_fit
    np.testing.assert_array_equal(m.transform(X), X[:, m.support_])
    names = m.get_feature_names_out([f"f{j}" for j in range(X.shape[1])])
    assert list(names) == ["f0", "f1", "f2", "f3"]
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


# A weight of 2 is not a repeated row for a k-fold tuner: a repeated row can sit in a
# training fold and, as its copy, in the validation fold, which a weighted row cannot;
# the folds of the two data sets differ, and so can the hyperparameters they choose.
# At fixed hyperparameters the weighted machine is the repeated one
# (test_weighted_lower_level_equals_repeated_rows, test_refit_uses_the_weights).
_WEIGHTS_ARE_NOT_REPEATS = ("a k-fold tuner's folds split a repeated row from its copy; "
                            "a weighted row is never split")


@parametrize_with_checks(
    [AutoSVC(widths="per_feature", max_iter=2)],
    expected_failed_checks=lambda est: {
        "check_sample_weight_equivalence_on_dense_data": _WEIGHTS_ARE_NOT_REPEATS,
        "check_sample_weight_equivalence_on_sparse_data": _WEIGHTS_ARE_NOT_REPEATS,
    })
def test_sklearn_estimator_checks(estimator, check):
    """Every check passes but the two on sample-weight equivalence (above). The
    per-feature model runs every stage of the shared one and then its own, so one
    instance covers both; two outer iterations keep the checks' many small fits quick."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        check(estimator)
